//! What the OS shows about a host: identity, kernel, CPU model and topology, SMT, NUMA nodes,
//! idle states and the last-level caches ([`HostInfo`], read here), and the processor
//! configuration a BIOS decides ([`OsView`], read here or through a shell script on a remote
//! host). Read from /etc, /proc and /sys; a missing
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
    /// Installed memory the kernel manages (`MemTotal` in /proc/meminfo), bytes.
    pub memory_bytes: Option<u64>,
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
            memory_bytes: meminfo("MemTotal:"),
        }
    }
}

/// What the OS reports about the processor configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OsView {
    /// `/sys/devices/system/cpu/smt/active`.
    pub smt_active: Option<bool>,
    /// NUMA nodes (`/sys/devices/system/node/node*`).
    pub numa_nodes: Option<usize>,
    /// Distinct `physical_package_id`s.
    pub sockets: Option<usize>,
    /// Logical CPUs.
    pub logical_cpus: Option<usize>,
    /// CPU 0's idle state names (`POLL`, `C1`, `C2`, …).
    pub idle_states: Vec<String>,
}

impl OsView {
    /// A POSIX shell script that prints the sections [`OsView::parse`] reads, separated by
    /// `--` lines, for a host reached only through commands (ssh); every read tolerates a
    /// missing file (older kernels, containers).
    pub const SCRIPT: &str = "cat /sys/devices/system/cpu/smt/active 2>/dev/null; echo --; \
     ls /sys/devices/system/node 2>/dev/null; echo --; \
     cat /sys/devices/system/cpu/cpu0/cpuidle/state*/name 2>/dev/null; echo --; \
     cat /sys/devices/system/cpu/cpu*/topology/physical_package_id 2>/dev/null | sort -u; echo --; \
     ls -d /sys/devices/system/cpu/cpu[0-9]* 2>/dev/null | wc -l";

    /// Parses the output of [`OsView::SCRIPT`].
    pub fn parse(text: &str) -> Self {
        let mut sections = vec![Vec::new()];
        for line in text.lines().map(str::trim) {
            if line == "--" {
                sections.push(Vec::new());
            } else if !line.is_empty()
                && let Some(s) = sections.last_mut()
            {
                s.push(line);
            }
        }
        let section = |i: usize| sections.get(i).map_or(&[][..], Vec::as_slice);
        let nodes = section(1)
            .iter()
            .filter(|l| l.strip_prefix("node").is_some_and(|n| n.parse::<u32>().is_ok()))
            .count();
        let sockets = section(3).iter().filter(|l| l.parse::<i64>().is_ok()).count();
        Self {
            smt_active: section(0).first().and_then(|l| match *l {
                "1" => Some(true),
                "0" => Some(false),
                _ => None,
            }),
            numa_nodes: (nodes > 0).then_some(nodes),
            sockets: (sockets > 0).then_some(sockets),
            logical_cpus: section(4).first().and_then(|l| l.parse().ok()).filter(|n| *n > 0),
            idle_states: section(2).iter().map(|s| (*s).to_owned()).collect(),
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
    meminfo("MemAvailable:")
}

/// A kB figure of /proc/meminfo (`field` with its colon), bytes.
fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(field))?
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
    fn parses_what_the_os_shows() {
        let text = "1\n--\nhas_cpu\nhas_memory\nnode0\nnode1\nonline\npossible\n--\nPOLL\nC1\nC2\n--\n0\n1\n--\n256\n";
        let v = OsView::parse(text);
        assert_eq!(
            v,
            OsView {
                smt_active: Some(true),
                numa_nodes: Some(2),
                sockets: Some(2),
                logical_cpus: Some(256),
                idle_states: vec!["POLL".into(), "C1".into(), "C2".into()],
            }
        );
        // A container without sysfs entries: nothing known, nothing judged.
        let v = OsView::parse("--\n--\n--\n--\n0\n");
        assert_eq!(v, OsView::default());
    }

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

/// Who a machine is, as SMBIOS says it (`/sys/class/dmi/id`) or as its BMC does (Redfish
/// `ComputerSystem.SKU`, Dell's service tag, and `UUID`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineId {
    /// SMBIOS system serial number; on a Dell server, its service tag.
    pub serial: Option<String>,
    /// SMBIOS system UUID.
    pub uuid: Option<String>,
}

/// Whether a BMC belongs to the machine a benchmark runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SameMachine {
    /// An identifier both sides report matches (which one).
    Yes(String),
    /// The identifiers both sides report differ (which, with both values).
    No(String),
    /// No identifier can be compared (why).
    Unknown(String),
}

impl MachineId {
    /// This machine's identity from `/sys/class/dmi/id` (its serial and UUID are readable by
    /// root only).
    pub fn local() -> Self {
        Self::read(Path::new("/sys/class/dmi/id"))
    }

    /// The identity in a `/sys/class/dmi/id`-shaped directory. Placeholder values firmware
    /// leaves in unset fields ("To Be Filled By O.E.M.", all-zero UUIDs) count as unknown.
    pub fn read(dir: &Path) -> Self {
        let real = |s: String| {
            let lower = s.to_ascii_lowercase();
            let placeholder = lower.contains("o.e.m")
                || lower.contains("default string")
                || lower.contains("not specified")
                || s.chars()
                    .all(|c| c == '0' || c == '-' || c == 'f' || c == 'F' || c == ' ');
            (!placeholder).then_some(s)
        };
        Self {
            serial: read_trim(dir.join("product_serial")).and_then(real),
            uuid: read_trim(dir.join("product_uuid")).and_then(real),
        }
    }

    /// Whether `bmc` describes this machine: the UUIDs (also with the first three fields
    /// byte-swapped, as older SMBIOS readers print them) or else the serial and the service tag,
    /// compared without regard to case.
    pub fn same_machine(&self, bmc: &MachineId) -> SameMachine {
        let norm = |s: &str| s.trim().to_ascii_lowercase();
        if let (Some(a), Some(b)) = (&self.uuid, &bmc.uuid) {
            let (a, b) = (norm(a), norm(b));
            return if a == b || swapped_uuid(&a).is_some_and(|s| s == b) {
                SameMachine::Yes(format!("system UUID {a}"))
            } else {
                SameMachine::No(format!("this host's system UUID is {a}, the BMC's {b}"))
            };
        }
        if let (Some(a), Some(b)) = (&self.serial, &bmc.serial) {
            return if norm(a) == norm(b) {
                SameMachine::Yes(format!("service tag {}", a.trim()))
            } else {
                SameMachine::No(format!(
                    "this host's service tag (SMBIOS serial) is {}, the BMC's {}",
                    a.trim(),
                    b.trim()
                ))
            };
        }
        SameMachine::Unknown(if self.uuid.is_none() && self.serial.is_none() {
            "this host's SMBIOS serial and UUID cannot be read (/sys/class/dmi/id: not there, or readable by root only)"
                .to_owned()
        } else {
            "the BMC reports neither a service tag (SKU) nor a UUID to compare with this host's".to_owned()
        })
    }
}

/// A UUID with its first three fields byte-swapped (mixed-endian SMBIOS encoding), when it is
/// one.
fn swapped_uuid(uuid: &str) -> Option<String> {
    let parts: Vec<&str> = uuid.split('-').collect();
    if parts.len() != 5 || parts.iter().any(|p| !p.chars().all(|c| c.is_ascii_hexdigit())) {
        return None;
    }
    let swap = |p: &str| -> Option<String> {
        if !p.len().is_multiple_of(2) {
            return None;
        }
        Some(
            p.as_bytes()
                .chunks(2)
                .rev()
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect(),
        )
    };
    Some(format!(
        "{}-{}-{}-{}-{}",
        swap(parts[0])?,
        swap(parts[1])?,
        swap(parts[2])?,
        parts[3],
        parts[4]
    ))
}

#[cfg(test)]
mod machine_tests {
    use super::*;

    fn id(serial: Option<&str>, uuid: Option<&str>) -> MachineId {
        MachineId {
            serial: serial.map(str::to_owned),
            uuid: uuid.map(str::to_owned),
        }
    }

    #[test]
    fn a_bmc_matches_by_uuid_or_service_tag_and_a_stranger_does_not() {
        let host = id(Some("7XK2Q73"), Some("4C4C4544-0037-5810-804B-B7C04F513733"));
        let same = id(Some("7xk2q73"), Some("4c4c4544-0037-5810-804b-b7c04f513733"));
        assert!(matches!(host.same_machine(&same), SameMachine::Yes(w) if w.contains("UUID")));
        let swapped = id(None, Some("44454c4c-3700-1058-804b-b7c04f513733"));
        assert!(matches!(host.same_machine(&swapped), SameMachine::Yes(_)));
        let tag_only = id(Some("7XK2Q73"), None);
        assert!(matches!(host.same_machine(&tag_only), SameMachine::Yes(w) if w.contains("7XK2Q73")));
        let other = id(Some("R7625A1"), Some("4c4c4544-b742-558a-b864-d56bd27e65a6"));
        assert!(
            matches!(host.same_machine(&other), SameMachine::No(w) if w.contains("b864-d56bd27e65a6")),
            "{:?}",
            host.same_machine(&other)
        );
        let vm = MachineId::default();
        assert!(matches!(vm.same_machine(&other), SameMachine::Unknown(w) if w.contains("root")));
    }

    #[test]
    fn smbios_placeholders_are_not_identities() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("product_serial"), "To Be Filled By O.E.M.\n").unwrap();
        std::fs::write(dir.join("product_uuid"), "00000000-0000-0000-0000-000000000000\n").unwrap();
        assert_eq!(MachineId::read(&dir), MachineId::default());
        std::fs::write(dir.join("product_serial"), "7XK2Q73\n").unwrap();
        assert_eq!(MachineId::read(&dir).serial.as_deref(), Some("7XK2Q73"));
        std::fs::remove_dir_all(dir).ok();
    }
}
