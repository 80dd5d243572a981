//! Choosing hosts by hand: `--limit` patterns, globs over inventory names and BMC addresses,
//! `!` to exclude.

use super::BmcEntry;
use crate::error::{Result, bad_input};
use globset::{Glob, GlobMatcher};

/// Which hosts `--limit` keeps: those matching any inclusion pattern (every host when there is
/// none) and no exclusion (`!PATTERN`). A pattern is a glob (`*`, `?`, `[0-9]`, `{a,b}`)
/// matched against a host's inventory name, its BMC's host and its `host:port`.
#[derive(Debug, Clone, Default)]
pub struct Limit {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    text: String,
    glob: GlobMatcher,
}

impl Pattern {
    fn matches(&self, entry: &BmcEntry) -> bool {
        keys(entry).iter().any(|k| self.glob.is_match(k))
    }
}

/// What a pattern is matched against: the inventory name, the URL's host and its `host:port`.
fn keys(entry: &BmcEntry) -> Vec<String> {
    let mut keys = vec![entry.name.clone()];
    if let Ok(url) = url::Url::parse(&entry.url)
        && let Some(host) = url.host_str()
    {
        keys.push(host.trim_start_matches('[').trim_end_matches(']').to_owned());
        keys.push(super::host_key(&url));
    }
    keys
}

/// Splits `spec` at the commas outside `{…}` and `[…]` (a glob's alternatives and classes).
fn split(spec: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in spec.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&spec[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&spec[start..]);
    parts
}

impl Limit {
    /// The patterns of `specs` (each one or more, separated by commas).
    pub fn parse(specs: &[String]) -> Result<Self> {
        let mut limit = Self::default();
        for part in specs.iter().flat_map(|s| split(s)) {
            let part = part.trim();
            let (exclude, text) = match part.strip_prefix('!') {
                Some(rest) => (true, rest.trim()),
                None => (false, part),
            };
            if text.is_empty() {
                bad_input!(
                    "--limit {part:?}: an empty pattern (write NAME, a glob such as r7625-*, or !PATTERN to exclude)"
                );
            }
            let glob = Glob::new(text)
                .map_err(|e| crate::Error::bad_input(format!("--limit {part:?} is not a glob: {e}")))?
                .compile_matcher();
            let pattern = Pattern {
                text: text.to_owned(),
                glob,
            };
            if exclude {
                limit.exclude.push(pattern);
            } else {
                limit.include.push(pattern);
            }
        }
        Ok(limit)
    }

    /// Whether no pattern was given.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Whether `entry` is kept.
    pub fn admits(&self, entry: &BmcEntry) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(entry)))
            && !self.exclude.iter().any(|p| p.matches(entry))
    }

    /// The entries of `entries` this limit keeps, in their order. A pattern that matches none
    /// of `all` (the whole inventory) is refused: a mistyped exclusion would otherwise keep
    /// the very hosts it was meant to leave out. `source` names where `all` came from.
    pub fn select(&self, all: &[BmcEntry], entries: Vec<BmcEntry>, source: &str) -> Result<Vec<BmcEntry>> {
        for p in self.include.iter().chain(&self.exclude) {
            if !all.iter().any(|e| p.matches(e)) {
                let near = closest(&p.text, all);
                bad_input!(
                    "--limit: {:?} matches no host of {source}{}",
                    p.text,
                    if near.is_empty() {
                        String::new()
                    } else {
                        format!("; did you mean {}?", near.join(", "))
                    }
                );
            }
        }
        Ok(entries.into_iter().filter(|e| self.admits(e)).collect())
    }
}

/// Up to three names of `all` that look like `text`.
fn closest(text: &str, all: &[BmcEntry]) -> Vec<String> {
    bios_profiles::suggest::closest(text, all.iter().map(|e| e.name.as_str()))
        .into_iter()
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, url: &str) -> BmcEntry {
        BmcEntry {
            name: name.into(),
            ..BmcEntry::from_url(url).unwrap()
        }
    }

    fn fleet() -> Vec<BmcEntry> {
        vec![
            entry("r7625-0001", "https://10.0.0.1"),
            entry("r7625-0002", "https://10.0.0.2:8443"),
            entry("r7625-0003", "https://[fd00::3]"),
            entry("c6615-0001", "https://idrac-c1.example"),
        ]
    }

    fn names(limit: &[&str]) -> Result<Vec<String>> {
        let specs: Vec<String> = limit.iter().map(|s| (*s).to_owned()).collect();
        let all = fleet();
        let kept = Limit::parse(&specs)?.select(&all, all.clone(), "the inventory")?;
        Ok(kept.into_iter().map(|e| e.name).collect())
    }

    #[test]
    fn globs_include_and_exclusions_leave_out() {
        assert_eq!(names(&["r7625-*"]).unwrap(), ["r7625-0001", "r7625-0002", "r7625-0003"]);
        assert_eq!(names(&["r7625-*,!r7625-0002"]).unwrap(), ["r7625-0001", "r7625-0003"]);
        assert_eq!(names(&["!r7625-000[12]"]).unwrap(), ["r7625-0003", "c6615-0001"]);
        assert_eq!(
            names(&["{c6615,r7625}-0001"]).unwrap(),
            ["r7625-0001", "c6615-0001"],
            "a comma inside braces is the glob's"
        );
        assert_eq!(names(&["r7625-0001", "c6615-*"]).unwrap(), ["r7625-0001", "c6615-0001"]);
    }

    #[test]
    fn addresses_match_too() {
        assert_eq!(names(&["10.0.0.*"]).unwrap(), ["r7625-0001", "r7625-0002"]);
        assert_eq!(names(&["*:8443"]).unwrap(), ["r7625-0002"]);
        assert_eq!(names(&["fd00::3"]).unwrap(), ["r7625-0003"]);
        assert_eq!(names(&["idrac-c1.example"]).unwrap(), ["c6615-0001"]);
    }

    #[test]
    fn a_pattern_that_matches_nothing_is_refused_with_a_suggestion() {
        let e = names(&["r7625-*,!r7625-00002"]).unwrap_err().to_string();
        assert!(
            e.contains("\"r7625-00002\" matches no host") && e.contains("r7625-0002"),
            "{e}"
        );
        assert!(names(&["!"]).unwrap_err().to_string().contains("empty pattern"));
        assert!(names(&["r7625-[0"]).unwrap_err().to_string().contains("not a glob"));
    }
}
