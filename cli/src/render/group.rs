//! A fleet's hosts grouped by what they have in common: hosts whose results read the same
//! share one block, and failures group by their text once the host's own (its name, its URL)
//! is set aside, so fifty identical hosts say it once.

use rftune_engine::fleet::HostResult;
use std::collections::HashMap;
use std::hash::Hash;

/// How a fleet's table lays out its hosts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Blocks {
    /// Hosts whose blocks read the same share one; failures share a line per cause.
    #[default]
    Grouped,
    /// One block (or line) per host, in inventory order (`--per-host`).
    PerHost,
}

impl Blocks {
    /// `--per-host` given or not.
    pub fn per_host(given: bool) -> Self {
        if given { Self::PerHost } else { Self::Grouped }
    }
}

/// The positions of `keys` grouped by equal key, each group in the order its first member came
/// and its members in order.
pub fn by<K: Eq + Hash + Clone>(keys: impl IntoIterator<Item = K>) -> Vec<(K, Vec<usize>)> {
    let mut groups: Vec<(K, Vec<usize>)> = Vec::new();
    let mut at: HashMap<K, usize> = HashMap::new();
    for (i, key) in keys.into_iter().enumerate() {
        if let Some(&g) = at.get(&key) {
            groups[g].1.push(i);
        } else {
            at.insert(key.clone(), groups.len());
            groups.push((key, vec![i]));
        }
    }
    groups
}

/// Up to five of `hosts`, then how many more: `a, b, c, d, e and 45 more`.
pub fn names(hosts: &[&str]) -> String {
    const SHOWN: usize = 5;
    if hosts.len() <= SHOWN {
        return hosts.join(", ");
    }
    format!("{} and {} more", hosts[..SHOWN].join(", "), hosts.len() - SHOWN)
}

/// `text`, something said about the host `name` at `url` (its error), with the host's own text
/// set aside: the leading `name: ` dropped, the URL and its `host:port` read `<BMC>`, and how
/// many attempts its retries took and for how long (`gave up after 3 attempts in 1.0s`) read
/// `gave up after retrying`. Hosts that failed for the same reason then have the same text.
pub fn set_aside(name: &str, url: Option<&str>, text: &str) -> String {
    let mut text = retries_aside(rftune_engine::error::without_host(name, text));
    if let Some(parsed) = url.and_then(|u| url::Url::parse(u).ok()) {
        let key = rftune_engine::fleet::host_key(&parsed);
        text = text.replace(url.unwrap_or_default(), "<BMC>").replace(&key, "<BMC>");
    }
    text
}

/// `text` with each `gave up after N attempts in T.Ts` (the client's retries) read `gave up
/// after retrying`: the count and the time vary from host to host for one cause.
fn retries_aside(text: &str) -> String {
    const GAVE_UP: &str = "gave up after ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(GAVE_UP) {
        let (before, after) = rest.split_at(at + GAVE_UP.len());
        out.push_str(before);
        let digits = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
        let tail = after[digits..].strip_prefix(" attempts in ").filter(|_| digits > 0);
        let time = tail.map(|t| t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len()));
        match (tail, time) {
            (Some(t), Some(n)) if n > 0 && t[n..].starts_with('s') => {
                out.push_str("retrying");
                rest = &t[n + 1..];
            }
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// A host that failed: its name, its BMC's URL where known, and what went wrong.
#[derive(Debug, Clone)]
pub struct Failed<'a> {
    /// The host's name.
    pub host: &'a str,
    /// Its BMC's URL, set aside from the text with its name.
    pub url: Option<&'a str>,
    /// What went wrong.
    pub text: String,
}

/// What went wrong on the hosts of `failed`, one line per cause once each host's own text is
/// set aside: `a: LABEL: TEXT` for a host alone in its cause (its own text, URL and all),
/// `LABEL on 3 hosts (a, b, c): TEXT` for more.
pub fn causes(label: &str, failed: &[Failed<'_>]) -> String {
    let keys = failed.iter().map(|f| set_aside(f.host, f.url, &f.text));
    by(keys)
        .into_iter()
        .map(|(text, members)| match members.as_slice() {
            [one] => {
                let Failed { host, text: own, .. } = &failed[*one];
                format!("{host}: {label}: {}\n", rftune_engine::error::without_host(host, own))
            }
            many => {
                let hosts: Vec<&str> = many.iter().map(|&i| failed[i].host).collect();
                format!("{label} on {} hosts ({}): {text}\n", hosts.len(), names(&hosts))
            }
        })
        .collect()
}

/// The failed hosts of `results` as [`causes`] of `error`. Empty when no host failed.
pub fn failures<T>(results: &[HostResult<T>]) -> String {
    let failed: Vec<Failed<'_>> = results
        .iter()
        .filter_map(|r| {
            let e = r.result.as_ref().err()?;
            Some(Failed {
                host: &r.entry.name,
                url: Some(&r.entry.url),
                text: format!("{e:#}"),
            })
        })
        .collect();
    causes("error", &failed)
}

/// The line under a shared block's heading that names its hosts.
pub fn members(hosts: &[&str]) -> String {
    format!("  hosts: {}\n", names(hosts))
}

/// The distinct values of `values` (`None`s left out) in first-seen order, joined with ` or `:
/// what a group of hosts shares, or the few ways it differs where the rest of its block is the
/// same.
pub fn distinct<'a>(values: impl IntoIterator<Item = Option<&'a str>>) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for v in values.into_iter().flatten() {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    (!seen.is_empty()).then(|| seen.join(" or "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_the_order_their_first_host_came_in() {
        let groups = by(["b", "a", "b", "c", "a"]);
        assert_eq!(groups, vec![("b", vec![0, 2]), ("a", vec![1, 4]), ("c", vec![3])]);
    }

    #[test]
    fn a_hosts_own_name_and_address_are_set_aside_from_its_error() {
        let text = "r1: connecting: gave up after 3 attempts in 1.0s: CONNECT https://10.0.0.1:443/redfish/v1: 10.0.0.1:443 refused";
        assert_eq!(
            set_aside("r1", Some("https://10.0.0.1:443"), text),
            "connecting: gave up after retrying: CONNECT <BMC>/redfish/v1: <BMC> refused"
        );
        let unlike = "gave up after many attempts in 1.0s; gave up after 2 attempts in soon";
        assert_eq!(set_aside("r1", None, unlike), unlike, "left as it is");
        let failed: Vec<Failed<'_>> = ["a", "b", "c", "d", "e", "f", "g"]
            .into_iter()
            .map(|host| Failed {
                host,
                url: Some("https://10.0.0.9"),
                text: format!("{host}: refused by https://10.0.0.9"),
            })
            .chain([Failed {
                host: "z",
                url: None,
                text: "z: timed out".to_owned(),
            }])
            .collect();
        assert_eq!(
            causes("error", &failed),
            "error on 7 hosts (a, b, c, d, e and 2 more): refused by <BMC>\nz: error: timed out\n"
        );
        assert_eq!(
            causes("stale", &failed[..1]),
            "a: stale: refused by https://10.0.0.9\n",
            "a host alone keeps its own text"
        );
    }
}
