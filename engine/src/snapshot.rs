//! Snapshots (`rftune.snapshot/v1`): every current BIOS value and the iDRAC attributes rftune
//! may touch, saved before any change and usable by `rftune restore`.

use crate::backend::AttributeGroup;
use crate::connect::Bmc;
use crate::error::{Context, Result, bad_input};
use crate::lifecycle::Operation;
use crate::observe::Observer;
use redfish_client::resources::bios::Attributes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The schema id.
pub const SCHEMA: &str = "rftune.snapshot/v1";

/// A saved host state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The host's name at the time.
    pub host: String,
    /// The BMC URL.
    pub url: String,
    /// Service tag.
    pub service_tag: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// BIOS version.
    pub bios_version: Option<String>,
    /// UTC time taken.
    pub taken_at: String,
    /// Why it was taken (`apply`, `manual`).
    pub reason: String,
    /// Every current BIOS value.
    pub bios: Attributes,
    /// Pending BIOS values at the time.
    #[serde(default)]
    pub pending: Attributes,
    /// iDRAC attributes, by `DellAttributes` group.
    #[serde(default)]
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
}

impl Snapshot {
    /// A snapshot of what `state` holds, taken now, for the host called `host` at `url`.
    pub fn of(host: &str, url: &str, state: &crate::read::HostState, reason: impl Into<String>) -> Self {
        Self {
            schema: SCHEMA.into(),
            host: host.to_owned(),
            url: url.to_owned(),
            service_tag: state.service_tag.clone(),
            model: state.model.clone(),
            bios_version: state.bios_version.clone(),
            taken_at: host_bench::utc_now_seconds(),
            reason: reason.into(),
            bios: without_secrets(&state.bios),
            pending: without_secrets(&state.pending),
            idrac: state.idrac.clone(),
        }
    }

    /// A snapshot of what `values` hold (no registry needed), taken now, for the host called
    /// `host` at `url`.
    pub fn of_values(host: &str, url: &str, values: &crate::read::HostValues, reason: impl Into<String>) -> Self {
        let text = |name: &str| values.bios.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        Self {
            schema: SCHEMA.into(),
            host: host.to_owned(),
            url: url.to_owned(),
            service_tag: text("SystemServiceTag"),
            model: text("SystemModelName"),
            bios_version: text("SystemBiosVersion"),
            taken_at: host_bench::utc_now_seconds(),
            reason: reason.into(),
            bios: without_secrets(&values.bios),
            pending: without_secrets(&values.pending),
            idrac: values.idrac.clone(),
        }
    }

    /// Writes it under `dir/snapshots/` (never a BIOS password or its hash) as `<host>-<service tag>-<time>.json` (0600) and returns the path.
    pub fn save(&self, state_dir: &Path) -> Result<PathBuf> {
        let dir = state_dir.join("snapshots");
        crate::state::ensure_private_dir(&dir)?;
        let stamp = self.taken_at.replace(':', "");
        let stem = format!(
            "{}-{}-{}",
            crate::state::path_component(&self.host),
            crate::state::path_component(self.service_tag.as_deref().unwrap_or("unknown")),
            crate::state::path_component(&stamp)
        );
        // Never overwrite an earlier snapshot taken in the same second.
        let path = (0..)
            .map(|n| {
                dir.join(if n == 0 {
                    format!("{stem}.json")
                } else {
                    format!("{stem}-{n}.json")
                })
            })
            .find(|p| !p.exists())
            .unwrap_or_else(|| dir.join(format!("{stem}.json")));
        let mut kept = self.clone();
        kept.bios = without_secrets(&self.bios);
        kept.pending = without_secrets(&self.pending);
        let text = serde_json::to_string_pretty(&kept)?;
        crate::state::write_private(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Reads and checks a snapshot file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::state::read_capped(path, crate::state::MAX_DOCUMENT_BYTES, "snapshot")?;
        let snap: Self = serde_json::from_str(&text)
            .with_context(|| format!("snapshot {} is not a {SCHEMA} document", path.display()))?;
        if snap.schema != SCHEMA {
            bad_input!(
                "snapshot {} has schema {:?}; this rftune reads {SCHEMA}",
                path.display(),
                snap.schema
            );
        }
        Ok(snap)
    }
}

/// `attributes` without the BIOS passwords and the password hashes and salts real iDRACs list
/// in `GET Bios` ([`crate::backend::is_secret_bios_attribute`]).
pub fn without_secrets(attributes: &Attributes) -> Attributes {
    attributes
        .iter()
        .filter(|(k, _)| !crate::backend::is_secret_bios_attribute(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Taking snapshots as a fleet [`Operation`]: each host's BIOS values, pending values and the
/// iDRAC groups rftune manages, saved under the state directory.
#[derive(Debug, Clone)]
pub struct Take {
    /// The run's registry cache.
    pub cache: std::sync::Arc<crate::cache::RegistryCache>,
    /// Where snapshots are saved (`snapshots/` below it).
    pub state_dir: PathBuf,
}

impl Operation for Take {
    type Output = (Snapshot, PathBuf);

    async fn run(&self, bmc: &mut Bmc, _: &dyn Observer) -> Result<Self::Output> {
        let groups = [AttributeGroup::System, AttributeGroup::Idrac].into_iter().collect();
        let state = crate::read::read_state(bmc, &self.cache, &groups, false).await;
        bmc.close().await;
        let snap = Snapshot::of(&bmc.name, &bmc.url, &state?, "rftune snapshot");
        let path = snap.save(&self.state_dir)?;
        Ok((snap, path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_and_load_round_trip() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        let mut idrac = BTreeMap::new();
        idrac.insert(
            AttributeGroup::System,
            [("ServerPwr.1.PowerCapSetting".to_owned(), "Disabled".into())]
                .into_iter()
                .collect(),
        );
        let s = Snapshot {
            schema: SCHEMA.into(),
            host: "r7625-0001".into(),
            url: "https://127.0.0.1:9001".into(),
            service_tag: Some("R760000".into()),
            model: Some("PowerEdge R7625".into()),
            bios_version: Some("1.6.10".into()),
            taken_at: "2026-11-30T02:00:00Z".into(),
            reason: "apply".into(),
            bios: [
                ("SysProfile".to_owned(), "PerfOptimized".into()),
                ("CpuMinSevAsid".to_owned(), 1.into()),
            ]
            .into_iter()
            .collect(),
            pending: Attributes::new(),
            idrac,
        };
        let p = s.save(&dir).unwrap();
        assert!(
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("r7625-0001-R760000-2026-11-30T020000Z")
        );
        assert_eq!(Snapshot::load(&p).unwrap(), s);
        let mut secret = s.clone();
        secret.bios.insert("SHA256SetupPassword".into(), "19D2AB".into());
        secret.bios.insert("SHA256SetupPasswordSalt".into(), "4EB3CD".into());
        let kept = secret.save(&dir).unwrap();
        assert_eq!(
            Snapshot::load(&kept).unwrap().bios,
            s.bios,
            "password hashes are never saved"
        );
        let second = s.save(&dir).unwrap();
        assert_ne!(second, p, "a second snapshot in the same second gets its own file");
        std::fs::write(&p, "{\"schema\": \"other/v9\"}").unwrap();
        assert!(Snapshot::load(&p).is_err());
        std::fs::remove_dir_all(dir).ok();
    }
}
