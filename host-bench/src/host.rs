//! What the OS shows about this host: identity, kernel, CPU model and topology, SMT, NUMA
//! nodes, idle states and the last-level caches. Read from /etc, /proc and /sys; a missing
//! file leaves the field empty rather than failing a benchmark.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// The host as the OS sees it, recorded with every benchmark result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostInfo {
    /// /etc/hostname.
    pub hostname: Option<String>,
    /// `uname -r` (/proc/sys/kernel/osrelease).
    pub kernel: Option<String>,
    /// /proc/cpuinfo `model name`.
    pub cpu_model: Option<String>,
    /// Online logical CPUs.
    pub logical_cpus: usize,
    /// Physical cores (distinct package/core pairs).
    pub cores: usize,
    /// /sys/devices/system/cpu/smt/active.
    pub smt_active: Option<bool>,
    /// /sys/devices/system/node/node*.
    pub numa_nodes: usize,
    /// /sys/devices/system/cpu/cpu0/cpuidle/state*/name, in order.
    pub cpuidle_states: Vec<String>,
    /// Sum of the distinct level-3 caches, bytes.
    pub llc_bytes: Option<u64>,
}

fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// Numbered entries `prefix<N>` in `dir`, sorted by N.
fn numbered(dir: &str, prefix: &str) -> Vec<(u32, std::path::PathBuf)> {
    let mut v: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some((name.strip_prefix(prefix)?.parse().ok()?, e.path()))
        })
        .collect();
    v.sort();
    v
}

impl HostInfo {
    /// Reads everything it can.
    pub fn collect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpus = online_cpus();
        let cores = cores(&cpus).len();
        Self {
            hostname: read_trim("/etc/hostname"),
            kernel: read_trim("/proc/sys/kernel/osrelease"),
            cpu_model: cpuinfo.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, v)| v.trim().to_owned())
            }),
            logical_cpus: cpus.len(),
            cores,
            smt_active: read_trim("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
            numa_nodes: numbered("/sys/devices/system/node", "node").len(),
            cpuidle_states: numbered("/sys/devices/system/cpu/cpu0/cpuidle", "state")
                .into_iter()
                .filter_map(|(_, p)| read_trim(p.join("name")))
                .collect(),
            llc_bytes: llc_bytes(&cpus),
        }
    }
}

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.trim().parse::<usize>().ok()),
        }
    }
    out
}

/// Parses a cache size such as `32768K` or `1M` into bytes.
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'K') => (&s[..i], 1024),
        (i, 'M') => (&s[..i], 1024 * 1024),
        (i, 'G') => (&s[..i], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// Online logical CPUs this process may use.
pub fn online_cpus() -> Vec<usize> {
    let online = read_trim("/sys/devices/system/cpu/online").map(|s| parse_cpu_list(&s));
    let allowed = crate::sys::allowed_cpus().unwrap_or_default();
    match online {
        Some(on) if !allowed.is_empty() => on.into_iter().filter(|c| allowed.contains(c)).collect(),
        Some(on) => on,
        None => allowed,
    }
}

/// One logical CPU per physical core among `cpus` (the lowest-numbered sibling), in order.
pub fn cores(cpus: &[usize]) -> Vec<usize> {
    let mut seen = BTreeSet::new();
    cpus.iter()
        .copied()
        .filter(|c| {
            let topo = format!("/sys/devices/system/cpu/cpu{c}/topology");
            let pkg = read_trim(format!("{topo}/physical_package_id"));
            let core = read_trim(format!("{topo}/core_id"));
            match (pkg, core) {
                (Some(p), Some(k)) => seen.insert((p, k)),
                _ => true,
            }
        })
        .collect()
}

/// Total last-level (L3) cache: each distinct cache (by its `shared_cpu_list`) counted once.
pub fn llc_bytes(cpus: &[usize]) -> Option<u64> {
    let mut caches = std::collections::BTreeMap::new();
    for c in cpus {
        for (_, dir) in numbered(&format!("/sys/devices/system/cpu/cpu{c}/cache"), "index") {
            if read_trim(dir.join("level")).as_deref() != Some("3") {
                continue;
            }
            if let (Some(shared), Some(size)) = (
                read_trim(dir.join("shared_cpu_list")),
                read_trim(dir.join("size")).and_then(|s| parse_cache_size(&s)),
            ) {
                caches.insert(shared, size);
            }
        }
    }
    (!caches.is_empty()).then(|| caches.values().sum())
}

/// Memory the kernel says is available for new allocations without swapping (`MemAvailable`
/// in /proc/meminfo), bytes.
pub fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_cache_sizes_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_cache_size("32768K"), Some(32 * 1024 * 1024));
        assert_eq!(parse_cache_size("1M"), Some(1 << 20));
        assert_eq!(parse_cache_size("x"), None);
    }

    #[test]
    fn collect_reads_this_host() {
        let h = HostInfo::collect();
        assert!(
            h.logical_cpus >= 1 && h.cores >= 1 && h.cores <= h.logical_cpus,
            "{h:?}"
        );
    }
}
