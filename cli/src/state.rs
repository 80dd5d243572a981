//! Where rftune keeps things between runs: snapshots, the audit log and known_hosts under the
//! state directory, the registry cache under the cache directory (product.md, "State
//! directories"). `--state-dir` puts both under one directory.

use anyhow::{Context, Result};
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
                .context("HOME is not set; pass --state-dir")
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

    /// The registry cache for this run (honouring `--refresh-registry`).
    pub fn registry_cache(&self) -> crate::cache::RegistryCache {
        crate::cache::RegistryCache::new(&self.cache, self.refresh_registry)
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

/// Creates `dir` (and parents) readable only by the user.
pub fn ensure_private_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("restricting {}", dir.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
