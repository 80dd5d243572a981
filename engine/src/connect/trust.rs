//! Trust on first use: a known_hosts file mapping `host:port` to the SHA-256 fingerprint of the
//! BMC's certificate, consulted like ssh's. One line per host: `host:port sha256:HEX`.

use crate::error::{Context, Result};
use redfish_client::Fingerprint;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The known_hosts file.
#[derive(Debug, Clone)]
pub(crate) struct KnownHosts {
    path: PathBuf,
}

impl KnownHosts {
    /// The file at `path` (it need not exist yet).
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// Where the file is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The recorded fingerprint of `host` (`host:port`), if any.
    pub(crate) fn lookup(&self, host: &str) -> Result<Option<Fingerprint>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", self.path.display())),
        };
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut fields = line.split_whitespace();
            let (Some(h), Some(fp)) = (fields.next(), fields.next()) else {
                crate::error::bad_input!("{}:{}: expected `host:port sha256:HEX`", self.path.display(), n + 1);
            };
            if h == host {
                let fp = fp
                    .parse()
                    .with_context(|| format!("{}:{}: bad fingerprint", self.path.display(), n + 1))?;
                return Ok(Some(fp));
            }
        }
        Ok(None)
    }

    /// Records `host` → `fingerprint` (appends; callers check [`KnownHosts::lookup`] first).
    pub(crate) fn record(&self, host: &str, fingerprint: Fingerprint) -> Result<()> {
        let mut f = crate::state::open_private_append(&self.path)?;
        writeln!(f, "{host} {fingerprint}").with_context(|| format!("writing {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_then_lookup() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        let kh = KnownHosts::new(dir.join("known_hosts"));
        assert_eq!(kh.lookup("127.0.0.1:9001").unwrap(), None);
        let fp = Fingerprint::of_der(b"cert");
        kh.record("127.0.0.1:9001", fp).unwrap();
        kh.record("127.0.0.1:9002", Fingerprint::of_der(b"other")).unwrap();
        assert_eq!(kh.lookup("127.0.0.1:9001").unwrap(), Some(fp));
        assert_eq!(kh.lookup("127.0.0.1:9003").unwrap(), None);
        std::fs::write(kh.path(), "garbage\n").unwrap();
        assert!(kh.lookup("x").is_err());
        std::fs::remove_dir_all(dir).ok();
    }
}
