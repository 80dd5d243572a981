//! One run per host: an exclusive lock per BMC in the state directory
//! (`locks/<host:port>.lock`, keyed on the normalised BMC address so two names or schemes for
//! one BMC share it), taken before the read that precedes a run's first write and held to its
//! last read-back. Every writer takes it (see `crate::write`): a second apply, import, reset,
//! power action or housekeeping write on the same host waits for it (`--lock-wait`) or fails
//! naming the holder: its pid, command and since when.
//!
//! The lock is the operating system's advisory file lock (`flock` on Linux, through the
//! standard library's `File::try_lock`): the kernel releases it when its holder exits, however
//! it ends, so a lock left by a killed run is free at once. The file keeps the holder's
//! description; a run that takes a lock whose last holder is no longer running says it took
//! over a stale lock. Runs with different state directories do not see each other's locks;
//! for them the BMC-side rule holds (pending work rftune did not stage is refused).

use crate::error::{HostError, HostErrorKind, Result};
use crate::observe::{Event, Observer, Phase};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Who holds (or held) a host's lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// Its command line (rftune keeps no secret in its arguments).
    pub command: String,
    /// When it took the lock (RFC 3339, UTC).
    pub since: String,
    /// The BMC address it locked.
    pub bmc: String,
}

impl Holder {
    /// This process, locking `bmc` now.
    fn this(bmc: &str) -> Self {
        Self {
            pid: std::process::id(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            since: host_bench::utc_now_seconds(),
            bmc: bmc.to_owned(),
        }
    }

    /// Whether the holder is gone, as `alive` tells for a pid: a lock it left is stale.
    pub fn is_stale(&self, alive: impl Fn(u32) -> bool) -> bool {
        !alive(self.pid)
    }
}

/// `pid 4242 (rftune apply --inventory fleet.toml -p performance), since 2026-03-01T10:00:00Z`.
impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} ({}), since {}", self.pid, self.command, self.since)
    }
}

/// Whether a process with this pid runs on this machine (`kill(pid, 0)`).
pub fn pid_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        // It exists but belongs to someone else.
        Err(e) => e == rustix::io::Errno::PERM,
    }
}

/// The normalised address a BMC is locked by: `host:port` of its URL, lower case, with the
/// scheme's default port (`https://iDRAC-1.example` → `idrac-1.example:443`).
pub fn key(url: &str) -> Result<String> {
    let parsed = url::Url::parse(url).map_err(|e| crate::Error::bad_input(format!("{url:?} is not a URL: {e}")))?;
    Ok(crate::fleet::host_key(&parsed).to_ascii_lowercase())
}

/// Where the lock of BMC address `key` lives under `state_dir`.
pub fn path(state_dir: &Path, key: &str) -> PathBuf {
    state_dir
        .join("locks")
        .join(format!("{}.lock", crate::state::path_component(key)))
}

/// A host's lock, held until dropped.
#[derive(Debug)]
pub struct HostLock {
    file: File,
    path: PathBuf,
    /// The holder before this run, when it had left the lock behind (it is gone).
    pub took_over: Option<Holder>,
}

impl HostLock {
    /// Where the lock file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for HostLock {
    /// Leaves the file empty (no holder) before the lock goes with the file handle.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// Takes the lock of the BMC at `url` for host `name` in `state_dir`, waiting up to `wait` for
/// another run to release it (polling: the wait must stay interruptible and async). A wait
/// that begins is told to `observer` once, naming the holder, so a run that waits says why.
pub async fn acquire(
    state_dir: &Path,
    name: &str,
    url: &str,
    wait: Duration,
    observer: &dyn Observer,
) -> Result<HostLock> {
    let key = key(url)?;
    let path = path(state_dir, &key);
    if let Some(dir) = path.parent() {
        crate::state::ensure_private_dir(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(&path)
        .map_err(|e| crate::Error::from(e).context(format!("opening the host lock {}", path.display())))?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(50);
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(std::fs::TryLockError::WouldBlock) => {
                if start.elapsed() >= wait {
                    let holder = describe_holder(&mut file).await;
                    return Err(held(name, &key, &path, holder, wait).into());
                }
                if !told {
                    told = true;
                    let holder = describe_holder(&mut file).await;
                    let who = holder.map_or_else(|| "it has not said who it is yet".to_owned(), |h| h.to_string());
                    observer.event(&Event::phase(name, Phase::WaitingForLock(who)));
                }
                crate::interrupt::check(name, "waiting for another run's lock on this host")?;
                tokio::time::sleep(pause.min(wait.saturating_sub(start.elapsed()))).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(crate::Error::from(e).context(format!("locking {}", path.display())));
            }
        }
    }
    let took_over = read_holder(&mut file).filter(|h| h.is_stale(pid_alive));
    let me = serde_json::to_vec(&Holder::this(&key))?;
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(&me)?;
    file.flush()?;
    Ok(HostLock { file, path, took_over })
}

/// The holder of a lock another run took: it writes who it is right after taking the lock, so
/// one that has not yet is given a moment (up to 250 ms) before it is reported as undescribed.
async fn describe_holder(file: &mut File) -> Option<Holder> {
    for _ in 0..10 {
        if let Some(h) = read_holder(file) {
            return Some(h);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    read_holder(file)
}

fn read_holder(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(64 << 10).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// The refusal of a host whose lock another run holds.
fn held(name: &str, key: &str, path: &Path, holder: Option<Holder>, wait: Duration) -> HostError {
    let waited = if wait.is_zero() {
        String::new()
    } else {
        format!(" (waited {})", humantime::format_duration(wait))
    };
    let who = match &holder {
        Some(h) if h.is_stale(pid_alive) => format!(
            "{h} — a process this machine does not show running (another PID namespace?); if no rftune runs with this state directory, delete {}",
            path.display()
        ),
        Some(h) => h.to_string(),
        None => "a run that has not described itself yet".to_owned(),
    };
    HostError::new(
        name,
        HostErrorKind::Locked,
        format!("another rftune run holds the lock of {key}{waited}: {who}"),
    )
    .with_hint("let it finish, or give --lock-wait DURATION to wait for it")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Silent;

    #[test]
    fn the_lock_key_is_the_normalised_address() {
        assert_eq!(key("https://iDRAC-1.Example").unwrap(), "idrac-1.example:443");
        assert_eq!(key("http://127.0.0.1:9001/redfish/v1").unwrap(), "127.0.0.1:9001");
        assert_eq!(
            key("https://127.0.0.1:9001").unwrap(),
            "127.0.0.1:9001",
            "one key for both schemes"
        );
        assert_eq!(key("https://[::1]:9001").unwrap(), "[::1]:9001");
        assert!(key("not a url").is_err());
    }

    #[test]
    fn a_holder_whose_process_is_gone_is_stale() {
        let h = Holder {
            pid: 4242,
            command: "rftune apply --bmc https://idrac -p performance".into(),
            since: "2026-03-01T10:00:00Z".into(),
            bmc: "idrac:443".into(),
        };
        assert!(h.is_stale(|_| false));
        assert!(!h.is_stale(|pid| pid == 4242));
        assert_eq!(
            h.to_string(),
            "pid 4242 (rftune apply --bmc https://idrac -p performance), since 2026-03-01T10:00:00Z"
        );
        assert!(pid_alive(std::process::id()), "this process runs");
    }

    /// The phases an acquire told, as text.
    #[derive(Default)]
    struct Told(std::sync::Mutex<Vec<String>>);

    impl Observer for Told {
        fn event(&self, event: &Event) {
            if let Event::Phase { phase, .. } = event {
                self.0.lock().unwrap().push(phase.to_string());
            }
        }
    }

    #[tokio::test]
    async fn a_second_run_is_refused_naming_the_holder_and_a_dead_holders_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path(), "r1", "https://127.0.0.1:9001", Duration::ZERO, &Silent)
            .await
            .unwrap();
        assert!(first.took_over.is_none());
        // Another name and scheme for the same BMC: the same lock; the wait is told, once.
        let told = Told::default();
        let err = acquire(
            dir.path(),
            "other",
            "http://127.0.0.1:9001",
            Duration::from_millis(120),
            &told,
        )
        .await
        .unwrap_err();
        let phases = told.0.lock().unwrap().clone();
        assert_eq!(phases.len(), 1, "{phases:?}");
        assert!(
            phases[0].starts_with("waiting for another rftune run's lock on this host: pid ")
                && phases[0].contains(&std::process::id().to_string()),
            "{phases:?}"
        );
        assert_eq!(err.kind(), Some(HostErrorKind::Locked));
        let text = err.to_string();
        assert!(
            text.contains(&format!("pid {}", std::process::id())) && text.contains("waited 120ms"),
            "{text}"
        );
        drop(first);
        // A run killed while holding the lock: the kernel released it, its description stays.
        let path = path(dir.path(), "127.0.0.1:9001");
        let dead = Holder {
            pid: u32::MAX - 1,
            command: "rftune apply".into(),
            since: "2026-03-01T10:00:00Z".into(),
            bmc: "127.0.0.1:9001".into(),
        };
        std::fs::write(&path, serde_json::to_vec(&dead).unwrap()).unwrap();
        let next = acquire(dir.path(), "r1", "https://127.0.0.1:9001", Duration::ZERO, &Silent)
            .await
            .unwrap();
        assert_eq!(next.took_over, Some(dead), "recognised as stale");
    }
}
