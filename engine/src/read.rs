//! Reading what diff and apply need from one BMC, in as few round trips as its backend allows:
//! current and pending BIOS values, the registry (from the cache when possible), the BMC
//! attribute groups a profile touches, its lockdown and the job queue — and describing what is
//! pending. A backend with fixed places (an iDRAC) is read at them, all at once; any other
//! service by following its links.

use crate::backend::{AttributeGroup, Backend, Job, Places};
use crate::cache::{HostRegistryInfo, RegistryCache, RegistrySource};
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::lifecycle::Operation;
use crate::observe::Observer;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{ApplyTime, Attributes, Bios, BiosSettings};
use redfish_client::resources::computer_system::ComputerSystem;
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
    pub jobs: Vec<Job>,
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
    /// When the BIOS last processed staged values (`@Redfish.Settings.Time`), where it says.
    pub settings_time: Option<String>,
    /// The `ETag` the BMC sent with the pending values (`Bios/Settings`), if it sends one: a
    /// PATCH of the settings carries it as `If-Match`.
    pub settings_etag: Option<String>,
    /// The backend the host was read through.
    pub backend: Backend,
    /// When staged BIOS values may apply, as the BIOS resource lists it (empty: none listed).
    pub apply_times: Vec<ApplyTime>,
    /// What the last POST made of a boot order kept apart from the BIOS (an iLO's boot
    /// settings' `@Redfish.Settings`), where one was read.
    pub order_outcome: Option<redfish_client::resources::bios::Settings>,
}

/// Everything [`HostState`] holds but the registry: what a host says about itself, read in one
/// round of concurrent requests.
#[derive(Debug, Clone)]
pub struct HostValues {
    /// Current BIOS values.
    pub bios: Attributes,
    /// `Bios.AttributeRegistry`, the registry the BIOS names.
    pub registry_id: Option<String>,
    /// When the BIOS last processed staged values (`@Redfish.Settings.Time`), where it says:
    /// a BMC without jobs is judged by this time moving past the reboot.
    pub settings_time: Option<String>,
    /// Pending BIOS values.
    pub pending: Attributes,
    /// iDRAC attributes of the groups asked for.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// The job queue, when asked for.
    pub jobs: Vec<Job>,
    /// Whether System Lockdown is on (`None`: the iDRAC does not say).
    pub lockdown: Option<bool>,
    /// The `ETag` of the pending values, if the BMC sends one.
    pub settings_etag: Option<String>,
    /// The BIOS resource, where the backend has no fixed place for the registry and its link
    /// leads there.
    pub(crate) linked: Option<Bios>,
    /// The system, where the backend reads it by its links: what such a BIOS does not say of
    /// itself (model, serial number, ROM version, CPUs) is read from it.
    pub system: Option<ComputerSystem>,
    /// The backend the host was read through.
    pub backend: Backend,
    /// When staged BIOS values may apply, as the BIOS resource lists it (empty: none listed).
    pub apply_times: Vec<ApplyTime>,
}

impl HostValues {
    fn text(&self, name: &str) -> Option<String> {
        self.bios.get(name).and_then(|v| v.as_str()).map(str::to_owned)
    }

    /// `from_system` of the system read by its links, where the BIOS attribute `name` (Dell's)
    /// is absent.
    fn text_or(&self, name: &str, from_system: impl FnOnce(&ComputerSystem) -> Option<&String>) -> Option<String> {
        self.text(name).or_else(|| {
            self.system
                .as_ref()
                .and_then(from_system)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        })
    }

    /// The server's model: the BIOS's `SystemModelName` (Dell), else the system's `Model`.
    pub fn model(&self) -> Option<String> {
        self.text_or("SystemModelName", |s| s.model.as_ref())
    }

    /// The BIOS version: `SystemBiosVersion` (Dell), else the system's `BiosVersion` (HPE's
    /// ROM, `A42 v2.60 (08/11/2022)`).
    pub fn bios_version(&self) -> Option<String> {
        self.text_or("SystemBiosVersion", |s| s.bios_version.as_ref())
    }

    /// The service tag: `SystemServiceTag` (Dell), else the system's `SerialNumber`.
    pub fn service_tag(&self) -> Option<String> {
        self.text_or("SystemServiceTag", |s| s.serial_number.as_ref())
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
    pub fn open_bios_jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.iter().filter(|j| j.is_open_bios_job())
    }

    /// Whether System Lockdown is on.
    pub fn in_lockdown(&self) -> bool {
        self.lockdown == Some(true)
    }
}

/// Why nothing can be changed on a host in System Lockdown, and how to end it.
pub fn lockdown_reason(backend: &Backend) -> String {
    backend.settings().map_or_else(
        || "the BMC refuses configuration changes".to_owned(),
        |s| s.lockdown_reason(),
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

/// Reads what the host says about itself: BIOS values, pending values, its lockdown, the BMC
/// attribute groups in `groups`, and the job queue when `jobs` is set. A backend with fixed
/// places is read there, concurrently, without discovery.
pub async fn read_values(bmc: &Bmc, groups: &BTreeSet<AttributeGroup>, jobs: bool) -> Result<HostValues> {
    read_values_with(bmc, groups, jobs, None).await
}

/// [`read_values`], taking the BIOS resource from `bios` when the caller has just read it
/// (after a reboot, [`wait_until_back`](crate::wait::wait_until_back) has): one GET fewer.
/// On a host whose backend is not recognised yet, the iDRAC's places are read first; a service
/// without a BIOS there has its service root read, and is read as its backend says.
pub(crate) async fn read_values_with(
    bmc: &Bmc,
    groups: &BTreeSet<AttributeGroup>,
    jobs: bool,
    bios: Option<Bios>,
) -> Result<HostValues> {
    let backend = bmc.backend();
    let Some(places) = backend.places() else {
        return read_by_links(bmc, &backend, groups, jobs).await;
    };
    match read_at(bmc, &backend, places, groups, jobs, bios).await? {
        Some(mut values) => {
            bmc.confirm_backend();
            bmc.note_model(values.text("SystemModelName").as_deref());
            values.backend = bmc.backend();
            Ok(values)
        }
        None => {
            let recognised = bmc.recognise().await?;
            match recognised.places() {
                None => read_by_links(bmc, &recognised, groups, jobs).await,
                Some(places) => Err(HostError::new(
                    &bmc.name,
                    HostErrorKind::Unsupported,
                    format!(
                        "no BIOS resource at {}, where {} serves it",
                        places.bios.path(),
                        recognised.kind()
                    ),
                )
                .into()),
            }
        }
    }
}

/// Reads the host at the backend's fixed `places`, concurrently; `None` when the BIOS is not
/// there (404).
async fn read_at(
    bmc: &Bmc,
    backend: &Backend,
    places: &Places,
    groups: &BTreeSet<AttributeGroup>,
    jobs: bool,
    bios: Option<Bios>,
) -> Result<Option<HostValues>> {
    let client = &bmc.client;
    let settings = backend.settings();
    // Every group at once, like the other reads.
    let read_groups = futures_util::future::try_join_all(groups.iter().map(|g| async move {
        let attrs = match settings {
            Some(s) => s
                .read(client, *g)
                .await
                .map_err(|e| bmc.explain(e, &format!("reading iDRAC attributes {g}")))?,
            None => Attributes::new(),
        };
        Ok::<_, crate::Error>((*g, attrs))
    }));
    let read_jobs = async {
        match backend.jobs() {
            Some(queue) if jobs => queue
                .list(client)
                .await
                .map_err(|e| bmc.explain(e, "reading the job queue")),
            _ => Ok(Vec::new()),
        }
    };
    let read_lockdown = async {
        // A group that holds it, when read anyway, costs no extra request.
        let Some(settings) = settings else { return Ok(None) };
        if groups.contains(&AttributeGroup::Idrac) {
            return Ok(None);
        }
        match settings.lockdown(client).await {
            Ok(v) => Ok(v),
            // Too old to know lockdown: nothing to refuse on.
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(bmc.explain(e, "reading System Lockdown")),
        }
    };
    let read_bios = async {
        match bios {
            Some(bios) => Ok(bios),
            None => client.bios(&places.bios).await,
        }
    };
    // The BIOS values go out last: the requests take turns on the host's connection, and its
    // decoded values, the largest document of the read, are then held the shortest.
    let (pending, groups, jobs, lockdown, bios) = tokio::join!(
        client.get_answer::<BiosSettings>(places.bios_settings.path()),
        read_groups,
        read_jobs,
        read_lockdown,
        read_bios
    );
    let bios = match bios {
        Ok(b) => b,
        Err(e) if e.status() == Some(404) => return Ok(None),
        Err(e) => return Err(bmc.explain(e, "reading BIOS values")),
    };
    let pending = pending.map_err(|e| bmc.explain(e, "reading pending BIOS values"))?;
    let idrac: BTreeMap<_, _> = groups?.into_iter().collect();
    let lockdown = match lockdown? {
        Some(v) => Some(v),
        None => settings.and_then(|s| idrac.iter().find_map(|(g, a)| s.lockdown_in(*g, a))),
    };
    let settings_etag = pending.etag();
    Ok(Some(HostValues {
        apply_times: bios.apply_times(),
        registry_id: bios.attribute_registry.clone(),
        settings_time: bios.settings.as_ref().and_then(|s| s.time.clone()),
        pending: backend.pending().pending(&bios.attributes, pending.value.attributes),
        bios: bios.attributes,
        settings_etag,
        idrac,
        jobs: jobs?,
        lockdown,
        linked: None,
        system: None,
        backend: backend.clone(),
    }))
}

/// Reads a service whose backend has no fixed places by following its links: the first
/// system, its BIOS, the BIOS's settings object. Such a service has no BMC attribute groups
/// rftune knows (a profile's `[idrac]` settings are then not applicable), no lockdown and no
/// job queue it reads.
async fn read_by_links(
    bmc: &Bmc,
    backend: &Backend,
    groups: &BTreeSet<AttributeGroup>,
    _jobs: bool,
) -> Result<HostValues> {
    let system = bmc.linked_system().await?;
    let bios_id = system.bios_link();
    let bios = bmc
        .client
        .bios(&bios_id)
        .await
        .map_err(|e| bmc.explain(e, "reading BIOS values"))?;
    bmc.note_settings_at(bios.settings_object());
    let settings = bmc
        .client
        .pending_bios(&bios)
        .await
        .map_err(|e| bmc.explain(e, "reading pending BIOS values"))?;
    bmc.remember();
    Ok(HostValues {
        apply_times: bios.apply_times(),
        registry_id: bios.attribute_registry.clone(),
        settings_time: bios.settings.as_ref().and_then(|s| s.time.clone()),
        pending: backend.pending().pending(&bios.attributes, settings.attributes),
        bios: bios.attributes.clone(),
        settings_etag: None,
        idrac: groups.iter().map(|g| (*g, Attributes::new())).collect(),
        jobs: Vec::new(),
        lockdown: None,
        linked: Some(bios),
        system: Some(system),
        backend: backend.clone(),
    })
}

/// Completes `values` with the host's BIOS attribute registry: from `cache` when a copy fits
/// this host, else from the host.
pub async fn with_registry(bmc: &Bmc, cache: &RegistryCache, values: HostValues) -> Result<HostState> {
    let model = values.model();
    let bios_version = values.bios_version();
    let backend = &values.backend;
    let fetch = || async {
        let registry = match (backend.places(), &values.linked) {
            (Some(places), _) => bmc.client.get(places.bios_registry.path()).await,
            (None, Some(bios)) => bmc.client.attribute_registry(bios).await,
            (None, None) => {
                let bios = bmc
                    .client
                    .bios(&bmc.bios_id().await?)
                    .await
                    .map_err(|e| bmc.explain(e, "reading BIOS values"))?;
                bmc.client.attribute_registry(&bios).await
            }
        };
        registry.map_err(|e| bmc.explain(e, "reading the BIOS attribute registry"))
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
        service_tag: values.service_tag(),
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
        settings_time: values.settings_time,
        settings_etag: values.settings_etag,
        backend: values.backend,
        apply_times: values.apply_times,
        order_outcome: None,
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
/// staged to apply at the next reboot — from the backend's fixed place, or where a generic
/// service's system links its BIOS.
pub async fn bios_values(bmc: &Bmc, pending: bool) -> Result<(Bios, Option<Attributes>)> {
    let backend = bmc.recognise().await?;
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
    let pending = backend.pending().pending(&bios.attributes, settings.attributes);
    Ok((bios, Some(pending)))
}

/// [`bios_values`] as an [`Operation`] (the backend comes from the service root, read first).
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
