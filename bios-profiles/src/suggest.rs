//! "Did you mean": the closest names to a misspelt one, by edit distance and containment.

/// At most this many suggestions.
const MAX: usize = 3;

/// The (up to three) candidates closest to `name`, best first.
///
/// Comparison ignores case. A candidate qualifies when one name contains the other (for names
/// of at least three characters) or when its edit distance is small for the length (at most
/// a third of the name, and at least 2). Ranking: case-only differences first, then
/// containment, then edit distance, then the candidate's name for a stable order.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let query = name.trim().to_lowercase();
    if query.is_empty() {
        return Vec::new();
    }
    let threshold = (query.chars().count() / 3).max(2);
    let mut scored: Vec<((u8, usize), &'a str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let c = candidate.to_lowercase();
            let distance = levenshtein(&query, &c);
            let contains = query.chars().count() >= 3 && (c.contains(&query) || query.contains(&c));
            let rank = if c == query {
                0
            } else if contains {
                1
            } else if distance <= threshold {
                2
            } else {
                return None;
            };
            Some(((rank, distance), candidate))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(MAX).map(|(_, c)| c).collect()
}

/// Levenshtein distance in characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            row[j + 1] = substitute.min(previous[j + 1] + 1).min(row[j] + 1);
        }
        std::mem::swap(&mut previous, &mut row);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 8] = [
        "ProcCStates",
        "ProcCcds",
        "CcdCores",
        "NumaNodesPerSocket",
        "DfCState",
        "ProcPwrPerf",
        "SysProfile",
        "ProcTurboMode",
    ];

    #[test]
    fn distances() {
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
        assert_eq!(levenshtein("é", "e"), 1);
    }

    #[test]
    fn typos_find_the_intended_name_first() {
        assert_eq!(closest("ProcCState", NAMES), ["ProcCStates"]);
        assert_eq!(closest("NumaNodePerSocket", NAMES)[0], "NumaNodesPerSocket");
        assert_eq!(closest("sysprofile", NAMES), ["SysProfile"]);
        assert_eq!(closest("SysProfiel", NAMES), ["SysProfile"]);
    }

    #[test]
    fn containment_matches_short_fragments() {
        assert_eq!(closest("cstate", NAMES), ["DfCState", "ProcCStates"]);
        assert_eq!(closest("turbo", NAMES), ["ProcTurboMode"]);
    }

    #[test]
    fn unrelated_names_give_nothing_and_at_most_three_come_back() {
        assert!(closest("Completely", NAMES).is_empty());
        assert!(closest("", NAMES).is_empty());
        assert!(closest("Proc", NAMES).len() <= MAX);
    }
}
