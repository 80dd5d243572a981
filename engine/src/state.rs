//! Where rftune keeps things between runs: snapshots, the audit log and known_hosts under the
//! state directory (`$XDG_STATE_HOME/rftune`), the registry cache under the cache directory
//! (`$XDG_CACHE_HOME/rftune`). `--state-dir` puts both under one directory.

use crate::error::{Context, Result};
use std::path::{Path, PathBuf};

/// The resolved directories for this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDirs {
    /// Snapshots, audit log, known_hosts.
    pub state: PathBuf,
    /// Registry cache.
    pub cache: PathBuf,
    /// `--refresh-registry`: fetch registries from the BMCs and replace the cached copies.
    pub refresh_registry: bool,
}

impl StateDirs {
    /// `--state-dir` if given, else the XDG locations.
    pub fn resolve(state_dir: Option<&Path>) -> Result<Self> {
        if let Some(dir) = state_dir {
            return Ok(Self {
                state: dir.to_owned(),
                cache: dir.join("cache"),
                refresh_registry: false,
            });
        }
        let home = || {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .ok_or_else(|| crate::Error::bad_input("HOME is not set; pass --state-dir"))
        };
        let xdg = |var: &str, fallback: &str| -> Result<PathBuf> {
            match std::env::var_os(var).filter(|v| !v.is_empty()) {
                Some(v) => Ok(PathBuf::from(v).join("rftune")),
                None => Ok(home()?.join(fallback).join("rftune")),
            }
        };
        Ok(Self {
            state: xdg("XDG_STATE_HOME", ".local/state")?,
            cache: xdg("XDG_CACHE_HOME", ".cache")?,
            refresh_registry: false,
        })
    }

    /// The known_hosts file of certificate fingerprints.
    pub fn known_hosts(&self) -> PathBuf {
        self.state.join("known_hosts")
    }
}

/// Text safe as one path component: ASCII letters, digits, `-` and `.` kept, anything else `_`
/// (host and profile names become file names).
pub fn path_component(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.chars().all(|c| c == '.') {
        format!("_{out}")
    } else {
        out
    }
}

/// Largest inventory file accepted (32 MiB: ~150,000 hosts).
pub(crate) const MAX_INVENTORY_BYTES: u64 = 32 << 20;
/// Largest credentials file accepted.
pub(crate) const MAX_CREDENTIALS_BYTES: u64 = 64 << 10;
/// Largest JSON document rftune reads back (snapshots, bench results, registries).
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// Reads `what` at `path` as text, refusing a file over `limit` bytes before reading it.
pub fn read_capped(path: &Path, limit: u64, what: &str) -> Result<String> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("reading {what} {}", path.display()))?
        .len();
    if size > limit {
        crate::error::bad_input!(
            "{what} {} is {size} bytes; the limit is {limit} bytes (is this the right file?)",
            path.display()
        );
    }
    std::fs::read_to_string(path).with_context(|| format!("reading {what} {}", path.display()))
}

/// Creates `dir` (and missing parents) readable only by the user. A directory that already
/// exists is left as it is: `--state-dir /shared` must not change a directory the user gave
/// (a sticky 1777 directory stays one); what rftune creates inside it is private.
pub fn ensure_private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))
}

/// Opens rftune's own file `path` for appending, creating it readable only by the user, and
/// tightening it to 0600 if an older run left it wider (audit log, known_hosts).
pub(crate) fn open_private_append(path: &Path) -> Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        ensure_private_dir(dir)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let file = opts.open(path).with_context(|| format!("opening {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map(|m| m.permissions().mode() & 0o777).unwrap_or(0o600);
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .with_context(|| format!("restricting {}", path.display()))?;
        }
    }
    Ok(file)
}

/// Writes a file readable only by the user, atomically (temp file + rename).
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    // A unique temporary name: concurrent writers of the same file must not share one.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp.{}.{n}", std::process::id()));
    {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_given_directory_keeps_its_mode_and_rftunes_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let shared_tmp = tempfile::tempdir().unwrap();
        let shared = shared_tmp.path().to_path_buf();
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        ensure_private_dir(&shared).unwrap();
        assert_eq!(mode(&shared), 0o1777, "the given directory is not changed");
        let inner = shared.join("snapshots/host");
        ensure_private_dir(&inner).unwrap();
        assert_eq!(mode(&shared.join("snapshots")), 0o700);
        assert_eq!(mode(&inner), 0o700);
        let log = shared.join("audit.log");
        std::fs::write(&log, "old\n").unwrap();
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
        open_private_append(&log).unwrap();
        assert_eq!(mode(&log), 0o600, "tightened");
        open_private_append(&shared.join("known_hosts")).unwrap();
        assert_eq!(mode(&shared.join("known_hosts")), 0o600, "created private");
        std::fs::remove_dir_all(&shared).ok();
    }

    #[test]
    fn an_oversized_file_is_refused_before_it_is_read() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("fleet.toml");
        // Sparse: no disk is used, and the size alone must refuse it.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_INVENTORY_BYTES + 1)
            .unwrap();
        let err = read_capped(&big, MAX_INVENTORY_BYTES, "inventory")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is 33554433 bytes; the limit is 33554432"), "{err}");
        std::fs::write(&big, "[[bmc]]\n").unwrap();
        assert_eq!(
            read_capped(&big, MAX_INVENTORY_BYTES, "inventory").unwrap(),
            "[[bmc]]\n"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn path_components_are_safe() {
        assert_eq!(path_component("r7625/0001 a"), "r7625_0001_a");
        assert_eq!(path_component(".."), "_..");
        assert_eq!(path_component(""), "_");
    }

    #[test]
    fn state_dir_overrides_both() {
        let d = StateDirs::resolve(Some(Path::new("/tmp/x"))).unwrap();
        assert_eq!(d.state, Path::new("/tmp/x"));
        assert_eq!(d.cache, Path::new("/tmp/x/cache"));
        assert_eq!(d.known_hosts(), Path::new("/tmp/x/known_hosts"));
    }
}
