//! What an earlier run learnt of a host that is not laid out as an iDRAC (an HPE iLO): its
//! backend and where its system, BIOS and settings object are, kept per host in the cache
//! directory. A later run starts from it instead of trying the iDRAC's fixed places first and
//! following the links again, which on an iLO costs a warm diff nine requests more than it
//! needs. It is a starting point, not a verdict: a write still reads the service root
//! ([`super::Bmc::writable`]), and a read that fails there recognises the host afresh.

use crate::backend::{Backend, Kind};
use redfish_client::ODataId;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One host's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Remembered {
    /// The iLO generation (5 for iLO 5).
    pub generation: Option<u32>,
    /// The iLO firmware.
    pub firmware: Option<String>,
    /// The first system.
    pub system: String,
    /// Its BIOS resource.
    pub bios: String,
    /// The BIOS's settings object.
    pub settings: String,
}

impl Remembered {
    /// The record of `backend` with these places, where it is one worth keeping (an iLO's).
    pub(super) fn of(backend: &Backend, system: &ODataId, bios: &ODataId, settings: &ODataId) -> Option<Self> {
        let Kind::Ilo { generation, firmware } = backend.kind() else {
            return None;
        };
        Some(Self {
            generation: *generation,
            firmware: firmware.clone(),
            system: system.path().to_owned(),
            bios: bios.path().to_owned(),
            settings: settings.path().to_owned(),
        })
    }

    /// The backend it names.
    pub(super) fn backend(&self) -> Backend {
        Backend::ilo(self.generation, self.firmware.clone())
    }
}

/// Where the record of the host at `key` (`host:port`) is kept under the cache directory.
pub(crate) fn path(cache: &Path, key: &str) -> PathBuf {
    cache
        .join("backends")
        .join(format!("{}.json", crate::state::path_component(key)))
}

/// The record at `path`, if one was kept and still reads (anything else is as if none was).
pub(crate) fn load(path: &Path) -> Option<Remembered> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Keeps `record` at `path`, replacing the file whole (written beside it, then renamed), so a
/// concurrent reader never sees half of it. A failure only costs the next run its shortcut.
pub(crate) fn store(path: &Path, record: &Remembered) {
    let Some(dir) = path.parent() else { return };
    if load(path).as_ref() == Some(record) {
        return;
    }
    let Ok(text) = serde_json::to_string(record) else {
        return;
    };
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    let kept = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, text))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = kept {
        let _ = std::fs::remove_file(&tmp);
        tracing::debug!("could not keep {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ilo_s_places_are_kept_and_read_back_and_an_idrac_s_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let at = path(dir.path(), "10.0.0.5:443");
        let ilo = Backend::ilo(Some(5), Some("2.72".into()));
        let (system, bios, settings) = (
            ODataId::new("/redfish/v1/Systems/1"),
            ODataId::new("/redfish/v1/systems/1/bios"),
            ODataId::new("/redfish/v1/systems/1/bios/settings/"),
        );
        let record = Remembered::of(&ilo, &system, &bios, &settings).unwrap();
        store(&at, &record);
        let read = load(&at).unwrap();
        assert_eq!(read, record);
        assert_eq!(read.backend().kind(), ilo.kind());
        assert!(Remembered::of(&Backend::idrac9(), &system, &bios, &settings).is_none());
        std::fs::write(&at, "not json").unwrap();
        assert!(load(&at).is_none(), "an unreadable record is as if none was kept");
    }
}
