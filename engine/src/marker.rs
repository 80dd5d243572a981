//! rftune's record of BIOS values it is staging on a host (`state/staged/<host>-<tag>.json`),
//! written before the PATCH and removed once the values are applied or gone, so that a run
//! killed at any point is recognised by the next: it adopts exactly those values instead of
//! staging again, and powers the host on if the killed run left it off mid-reboot.

use crate::error::Result;
use redfish_client::resources::bios::Attributes;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What rftune staged on a host, for adoption by a later run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Marker {
    /// The profile.
    pub profile: String,
    /// The run that staged.
    pub run: String,
    /// The values staged.
    pub bios: Attributes,
    /// The job created, once known.
    pub job: Option<String>,
    /// rftune is rebooting the host (and may have powered it off): a run that finds this and
    /// the host off powers it on.
    #[serde(default)]
    pub rebooting: bool,
}

/// Where the marker of `host` (with this service tag) lives under `state_dir`.
pub(crate) fn path(state_dir: &Path, host: &str, service_tag: Option<&str>) -> PathBuf {
    state_dir.join("staged").join(format!(
        "{}-{}.json",
        crate::state::path_component(host),
        crate::state::path_component(service_tag.unwrap_or("unknown"))
    ))
}

/// Whether an earlier run left `host` mid-apply (a staging marker), which the next apply
/// recovers from before it reads the host.
pub fn interrupted(state_dir: &Path, host: &str) -> bool {
    !files(state_dir, host).is_empty()
}

/// The marker files earlier runs left for `host` (any service tag), readable or not.
pub(crate) fn files(state_dir: &Path, host: &str) -> Vec<PathBuf> {
    let probe = path(state_dir, host, Some("x"));
    let prefix = probe
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches("x.json").to_owned())
        .unwrap_or_default();
    let Ok(dir) = std::fs::read_dir(state_dir.join("staged")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// The marker at `path`, if it is there and readable.
pub(crate) fn read(path: &Path) -> Option<Marker> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Writes the marker, privately and atomically.
pub(crate) fn write(path: &Path, marker: &Marker) -> Result<()> {
    if let Some(dir) = path.parent() {
        crate::state::ensure_private_dir(dir)?;
    }
    crate::state::write_private(path, &serde_json::to_vec_pretty(marker)?)
}

/// Records in the host's marker whether rftune is in the middle of rebooting it.
pub(crate) fn set_rebooting(path: &Path, rebooting: bool) {
    if let Some(mut m) = read(path)
        && m.rebooting != rebooting
    {
        m.rebooting = rebooting;
        if let Err(e) = write(path, &m) {
            tracing::warn!("could not update {}: {}", path.display(), crate::error::report(&e));
        }
    }
}

/// Removes the marker: its values were applied, or are gone.
pub(crate) fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}
