//! Reading what diff and apply need from one iDRAC, in as few round trips as it allows: current
//! and pending BIOS values, the registry (from the cache when possible), the iDRAC attribute
//! groups a profile touches, System Lockdown and the job queue — and describing what is pending.

use crate::cache::{HostRegistryInfo, RegistryCache, RegistrySource};
use crate::connect::Bmc;
use crate::connect::Layout;
use crate::error::{HostError, HostErrorKind, Result};
use crate::lifecycle::Operation;
use crate::observe::Observer;
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, AttributeGroup, DellJob};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{Attributes, Bios, BiosSettings};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A host's BIOS and iDRAC state as read for one diff or apply.
#[derive(Debug, Clone)]
pub struct HostState {
    /// Current BIOS values.
    pub bios: Attributes,
    /// Pending BIOS values.
    pub pending: Attributes,
    /// The BIOS attribute registry (shared by every host of the same model and BIOS version).
    pub registry: std::sync::Arc<AttributeRegistry>,
    /// iDRAC attributes of the groups asked for.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// The job queue, when asked for.
    pub jobs: Vec<DellJob>,
    /// `SystemModelName`.
    pub model: Option<String>,
    /// `SystemBiosVersion`.
    pub bios_version: Option<String>,
    /// `SystemServiceTag`.
    pub service_tag: Option<String>,
    /// Whether System Lockdown is on (`None`: the iDRAC does not say).
    pub lockdown: Option<bool>,
    /// Whether the registry came from the cache.
    pub registry_cached: bool,
    /// `Bios.AttributeRegistry`, the registry the BIOS names.
    pub registry_id: Option<String>,
    /// The `ETag` the BMC sent with the pending values (`Bios/Settings`), if it sends one: a
    /// PATCH of the settings carries it as `If-Match`.
    pub settings_etag: Option<String>,
}

/// Everything [`HostState`] holds but the registry: what a host says about itself, read in one
/// round of concurrent requests.
#[derive(Debug, Clone)]
pub struct HostValues {
    /// Current BIOS values.
    pub bios: Attributes,
    /// `Bios.AttributeRegistry`, the registry the BIOS names.
    pub registry_id: Option<String>,
    /// Pending BIOS values.
    pub pending: Attributes,
    /// iDRAC attributes of the groups asked for.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// The job queue, when asked for.
    pub jobs: Vec<DellJob>,
    /// Whether System Lockdown is on (`None`: the iDRAC does not say).
    pub lockdown: Option<bool>,
    /// The `ETag` of the pending values, if the BMC sends one.
    pub settings_etag: Option<String>,
}

impl HostValues {
    fn text(&self, name: &str) -> Option<String> {
        self.bios.get(name).and_then(|v| v.as_str()).map(str::to_owned)
    }
}

impl HostState {
    /// The part bios-profiles judges a profile against (validate, diff, plan), borrowed.
    pub fn view(&self) -> bios_profiles::HostView<'_> {
        bios_profiles::HostView {
            registry: &self.registry,
            bios: &self.bios,
            pending: &self.pending,
            idrac: &self.idrac,
        }
    }

    /// Open BIOS configuration jobs: scheduled, running, or stuck at PR30 (which blocks the
    /// queue until deleted).
    pub fn open_bios_jobs(&self) -> impl Iterator<Item = &DellJob> {
        self.jobs.iter().filter(|j| j.is_open_bios_job())
    }

    /// Whether System Lockdown is on.
    pub fn in_lockdown(&self) -> bool {
        self.lockdown == Some(true)
    }
}

/// Why nothing can be changed on a host in System Lockdown, and how to end it.
pub fn lockdown_reason() -> String {
    format!(
        "System Lockdown is on (iDRAC attribute {}): the iDRAC refuses every BIOS and iDRAC change until an administrator turns it off (e.g. `racadm set iDRAC.Lockdown.SystemLockdown Disabled`, or in the iDRAC web interface)",
        dell::SYSTEM_LOCKDOWN
    )
}

/// Reads a host's state: [`read_values`], then its registry from `cache` when it holds a
/// copy that fits this host, else from the host.
pub async fn read_state(
    bmc: &Bmc,
    cache: &RegistryCache,
    groups: &BTreeSet<AttributeGroup>,
    jobs: bool,
) -> Result<HostState> {
    let values = read_values(bmc, groups, jobs).await?;
    with_registry(bmc, cache, values).await
}

/// Reads what the host says about itself, concurrently: BIOS values, pending values, System
/// Lockdown, the iDRAC groups in `groups`, and the job queue when `jobs` is set. Targets iDRAC
/// paths directly: no discovery round trips.
pub async fn read_values(bmc: &Bmc, groups: &BTreeSet<AttributeGroup>, jobs: bool) -> Result<HostValues> {
    read_values_with(bmc, groups, jobs, None).await
}

/// [`read_values`], taking the BIOS resource from `bios` when the caller has just read it
/// (after a reboot, [`wait_until_back`](crate::wait::wait_until_back) has): one GET fewer.
pub(crate) async fn read_values_with(
    bmc: &Bmc,
    groups: &BTreeSet<AttributeGroup>,
    jobs: bool,
    bios: Option<Bios>,
) -> Result<HostValues> {
    let client = &bmc.client;
    let bios_id = ODataId::new(dell::BIOS);
    let idrac = client.dell();
    // Every group at once, like the other reads.
    let read_groups = futures_util::future::try_join_all(groups.iter().map(|g| async move {
        let attrs = idrac
            .attributes(*g)
            .await
            .map_err(|e| bmc.explain(e, &format!("reading iDRAC attributes {g}")))?;
        Ok::<_, crate::Error>((*g, attrs.attributes))
    }));
    let read_jobs = async {
        if jobs {
            idrac.jobs().await.map_err(|e| bmc.explain(e, "reading the job queue"))
        } else {
            Ok(Vec::new())
        }
    };
    let read_lockdown = async {
        // The iDRAC group holds it; when it is read anyway, no extra request.
        if groups.contains(&AttributeGroup::Idrac) {
            return Ok(None);
        }
        match idrac.system_lockdown().await {
            Ok(v) => Ok(v),
            // Not a Dell iDRAC, or too old to know lockdown: nothing to refuse on.
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(bmc.explain(e, "reading System Lockdown")),
        }
    };
    let read_bios = async {
        match bios {
            Some(bios) => Ok(bios),
            None => client.bios(&bios_id).await,
        }
    };
    let (bios, pending, groups, jobs, lockdown) = tokio::join!(
        read_bios,
        client.get_answer::<BiosSettings>(dell::BIOS_SETTINGS),
        read_groups,
        read_jobs,
        read_lockdown
    );
    let bios = bios.map_err(|e| {
        if e.status() == Some(404) {
            HostError::new(
                &bmc.name,
                HostErrorKind::Unsupported,
                format!(
                    "no BIOS resource at {}: rftune's profiles need a Dell iDRAC (iDRAC9 or later)",
                    dell::BIOS
                ),
            )
            .into()
        } else {
            bmc.explain(e, "reading BIOS values")
        }
    })?;
    let pending = pending.map_err(|e| bmc.explain(e, "reading pending BIOS values"))?;
    let idrac: BTreeMap<_, _> = groups?.into_iter().collect();
    let lockdown = match lockdown? {
        Some(v) => Some(v),
        None => idrac
            .get(&AttributeGroup::Idrac)
            .and_then(|a| a.get(dell::SYSTEM_LOCKDOWN))
            .and_then(|v| v.as_str())
            .map(|v| v.eq_ignore_ascii_case("Enabled")),
    };
    Ok(HostValues {
        registry_id: bios.attribute_registry.clone(),
        bios: bios.attributes,
        settings_etag: pending.etag(),
        pending: pending.value.attributes,
        idrac,
        jobs: jobs?,
        lockdown,
    })
}

/// Completes `values` with the host's BIOS attribute registry: from `cache` when a copy fits
/// this host, else from the host.
pub async fn with_registry(bmc: &Bmc, cache: &RegistryCache, values: HostValues) -> Result<HostState> {
    let model = values.text("SystemModelName");
    let bios_version = values.text("SystemBiosVersion");
    let fetch = || async {
        bmc.client
            .dell()
            .bios_registry()
            .await
            .map_err(|e| bmc.explain(e, "reading the BIOS attribute registry"))
    };
    let (registry, registry_cached) = match (&model, &bios_version) {
        (Some(m), Some(v)) => {
            let info = HostRegistryInfo {
                model: m,
                bios_version: v,
                registry_id: values.registry_id.as_deref(),
                values: &values.bios,
                lockdown: values.lockdown == Some(true),
            };
            let (r, source) = cache.get_or_fetch(info, fetch).await?;
            (r, source == RegistrySource::Cache)
        }
        _ => (std::sync::Arc::new(fetch().await?), false),
    };
    Ok(HostState {
        service_tag: values.text("SystemServiceTag"),
        model,
        bios_version,
        bios: values.bios,
        pending: values.pending,
        registry,
        idrac: values.idrac,
        jobs: values.jobs,
        lockdown: values.lockdown,
        registry_cached,
        registry_id: values.registry_id,
        settings_etag: values.settings_etag,
    })
}

/// Pending values or open jobs that an apply must not stack on, described for the user.
pub fn describe_pending(state: &HostState) -> Option<String> {
    let jobs: Vec<String> = state
        .open_bios_jobs()
        .map(|j| {
            format!(
                "{} ({}{})",
                j.id,
                j.job_state,
                j.message_code().map(|c| format!(", {c}")).unwrap_or_default()
            )
        })
        .collect();
    match (state.pending.is_empty(), jobs.is_empty()) {
        (true, true) => None,
        (false, true) => Some(format!(
            "{} pending BIOS value(s): {}",
            state.pending.len(),
            names(&state.pending)
        )),
        (true, false) => Some(format!("BIOS job {}", jobs.join(", "))),
        (false, false) => Some(format!(
            "BIOS job {} with pending value(s) {}",
            jobs.join(", "),
            names(&state.pending)
        )),
    }
}

fn names(a: &Attributes) -> String {
    a.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

/// The BIOS values `rftune bios get` shows: the current ones and, with `pending`, what is
/// staged to apply at the next reboot — from an iDRAC's fixed paths, or where a generic
/// service's system links its BIOS.
pub async fn bios_values(bmc: &mut Bmc, pending: bool) -> Result<(Bios, Option<Attributes>)> {
    let layout = bmc.layout().await?;
    let bios_id = bmc.bios_id().await?;
    let bios = bmc
        .client
        .bios(&bios_id)
        .await
        .map_err(|e| bmc.explain(e, "reading BIOS values"))?;
    if !pending {
        return Ok((bios, None));
    }
    let settings = bmc
        .client
        .pending_bios(&bios)
        .await
        .map_err(|e| bmc.explain(e, "reading pending BIOS values"))?;
    let pending = match layout {
        // iDRAC lists only what is staged; a staged value equal to the current one still rides
        // on the pending job.
        Layout::Dell => settings.attributes,
        Layout::Generic => pending_changes(&bios.attributes, settings.attributes),
    };
    Ok((bios, Some(pending)))
}

/// The entries of a settings object that differ from the current values. Generic services
/// often mirror every attribute in their settings object; only a different value is pending.
pub fn pending_changes(current: &Attributes, settings: Attributes) -> Attributes {
    settings
        .into_iter()
        .filter(|(k, v)| current.get(k) != Some(v))
        .collect()
}

/// [`bios_values`] as an [`Operation`] (the layout comes from the service root, read first).
#[derive(Debug, Clone, Copy)]
pub struct BiosValues {
    /// Read the pending values too.
    pub pending: bool,
}

impl Operation for BiosValues {
    type Output = (Bios, Option<Attributes>);

    fn reads_service_root_first(&self) -> bool {
        true
    }

    async fn run(&self, bmc: &mut Bmc, _: &dyn Observer) -> Result<Self::Output> {
        bios_values(bmc, self.pending).await
    }
}

/// [`read_state`] as an [`Operation`]: a host's state with the iDRAC groups in `groups` (and
/// the job queue with `jobs`), its session closed as soon as it is read.
#[derive(Debug, Clone)]
pub struct ReadState {
    /// The registry cache of the run.
    pub cache: Arc<RegistryCache>,
    /// The `DellAttributes` groups to read.
    pub groups: BTreeSet<AttributeGroup>,
    /// Read the job queue too.
    pub jobs: bool,
}

impl Operation for ReadState {
    type Output = HostState;

    async fn run(&self, bmc: &mut Bmc, _: &dyn Observer) -> Result<HostState> {
        read_state(bmc, &self.cache, &self.groups, self.jobs).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_object_mirroring_current_values_has_nothing_pending() {
        let current: Attributes = [("A".to_owned(), "x".into()), ("B".to_owned(), 1.into())]
            .into_iter()
            .collect();
        let mirror = current.clone();
        assert!(pending_changes(&current, mirror).is_empty());
        let mut changed = current.clone();
        changed.insert("B".into(), 2.into());
        changed.insert("New".into(), "y".into());
        let pending = pending_changes(&current, changed);
        assert_eq!(pending.keys().collect::<Vec<_>>(), ["B", "New"]);
    }
}
