//! Reading a host and judging it against a profile: the shared first half of `diff` and
//! `apply`. The profile is parsed once per run and resolved per host (generation, model).

use crate::backend::AttributeGroup;
use crate::cache::RegistryCache;
use crate::connect::Bmc;
use crate::error::{Context, Result};
use crate::read::{self, HostState};
use bios_profiles::{
    Diff, HostFacts, Library, Profile, ProfileRef, ResolvedProfile, Severity, ValidateOptions, Vendor, Violation,
};
use redfish_client::resources::bios::Bios;
use redfish_client::resources::computer_system::Memory;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A profile loaded for a run (shipped, or from a file), with the library it may extend, ready
/// to be resolved for each host (resolutions shared by hosts with the same facts).
#[derive(Debug)]
pub struct LoadedProfile {
    library: Library,
    profile: Profile,
    /// The `DellAttributes` groups the profile may touch, known once it is loaded.
    groups: BTreeSet<AttributeGroup>,
    /// Whether its choice depends on the host's memory population.
    needs_memory: bool,
    /// Whether it has a `[boot]` order (so the host's boot options are read).
    needs_boot: bool,
    /// The profile resolved (and bound to a vendor's names) for the facts and vendors seen so
    /// far: a fleet's hosts share a handful.
    resolved: std::sync::Mutex<Vec<Resolution>>,
}

/// A profile resolved for a host's facts and bound to its vendor's names.
type Resolution = ((HostFacts, Vendor), Arc<ResolvedProfile>);

/// Resolutions kept at once (by distinct host facts: model, CPU, sockets, cores, memory).
const MAX_RESOLVED: usize = 64;

impl LoadedProfile {
    /// A shipped profile by name, or a profile file by path. Only the profiles it needs are
    /// parsed: it and those it extends.
    pub fn load(name_or_path: &str) -> Result<Self> {
        let loading = "loading the shipped profiles";
        let mut library = Library::shipped_sources().context(loading)?;
        if let ProfileRef::File(path) = ProfileRef::parse(name_or_path) {
            let profile = library.parse_file(&path)?;
            return Self::with_parents(library, profile);
        }
        if !library.add_shipped(name_or_path).context(loading)? {
            // Let the whole library phrase the error (with suggestions).
            Library::shipped()
                .context(loading)?
                .resolve(name_or_path, &HostFacts::default())?;
            crate::error::bad_input!("no profile named {name_or_path}");
        }
        let Some(profile) = library.get(name_or_path).cloned() else {
            crate::error::bad_input!("no profile named {name_or_path}");
        };
        Self::checked(library, profile)
    }

    /// A profile given as TOML text (a derived profile); `file` names it in messages.
    pub fn from_toml(text: &str, file: &str) -> Result<Self> {
        let library = Library::shipped_sources().context("loading the shipped profiles")?;
        let profile = Profile::from_toml(text, file, library.sources())?;
        Self::with_parents(library, profile)
    }

    /// `profile` (not shipped) with the shipped profiles it extends; with every shipped profile
    /// when a parent is not shipped, so the error names the ones that are.
    fn with_parents(mut library: Library, profile: Profile) -> Result<Self> {
        let loading = "loading the shipped profiles";
        if let Some(parent) = &profile.extends
            && !library.add_shipped(parent).context(loading)?
        {
            library = Library::shipped().context(loading)?;
        }
        Self::checked(library, profile)
    }

    /// Reports what is wrong with the profile whatever the host (`extends` cycles, unknown
    /// parents) once, before any host is contacted.
    fn checked(library: Library, profile: Profile) -> Result<Self> {
        let resolved = library.resolve_profile(&profile, &HostFacts::default())?;
        let groups = resolved.idrac.keys().map(|(g, _)| *g).collect();
        let needs_memory = library.needs_memory(&profile);
        let needs_boot = resolved.boot.needs_devices();
        Ok(Self {
            library,
            profile,
            groups,
            needs_memory,
            needs_boot,
            resolved: std::sync::Mutex::default(),
        })
    }

    /// The library the profile was loaded with (its sources, the profiles it may extend).
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// The profile as written in its file, before `extends` and host filters are applied.
    pub fn definition(&self) -> &Profile {
        &self.profile
    }

    /// The profile's name.
    pub fn name(&self) -> &str {
        &self.profile.name
    }

    /// The `DellAttributes` groups the profile may touch (read with the host's state).
    pub fn groups(&self) -> &BTreeSet<AttributeGroup> {
        &self.groups
    }

    /// Whether the profile's choice depends on the host's memory population (so the DIMMs
    /// are read: one more request, only for such profiles).
    pub fn needs_memory(&self) -> bool {
        self.needs_memory
    }

    /// Whether the profile orders boot devices (so each host's `BootOptions` are read: one more
    /// request, only for such profiles).
    pub fn needs_boot(&self) -> bool {
        self.needs_boot
    }

    /// The profile resolved for a host.
    pub fn resolve(&self, facts: &HostFacts) -> Result<ResolvedProfile> {
        Ok(self.library.resolve_profile(&self.profile, facts)?)
    }

    /// [`LoadedProfile::resolve`] bound to `vendor`'s attribute names and tokens (a Dell
    /// host's profile as written; an HPE host's through the HPE binding), shared by every host
    /// with the same facts and vendor (resolution depends on nothing else).
    pub fn resolve_shared(&self, facts: &HostFacts, vendor: Vendor) -> Result<Arc<ResolvedProfile>> {
        let lock = || self.resolved.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, profile)) = lock().iter().find(|((f, v), _)| f == facts && *v == vendor) {
            return Ok(profile.clone());
        }
        let resolved = self.resolve(facts)?;
        let profile = Arc::new(match vendor {
            Vendor::Dell => resolved,
            other => bios_profiles::bind(&resolved, other)?.profile,
        });
        let mut resolved = lock();
        if resolved.len() >= MAX_RESOLVED {
            resolved.remove(0);
        }
        resolved.push(((facts.clone(), vendor), profile.clone()));
        Ok(profile)
    }
}

/// A host read and compared with the profile.
#[derive(Debug)]
pub struct Assessment {
    /// What was read.
    pub state: HostState,
    /// The profile as it applies to this host (shared with the hosts of the same facts).
    pub profile: Arc<ResolvedProfile>,
    /// Desired vs current vs pending.
    pub diff: Diff,
    /// Validation findings (errors stop an apply; warnings are informational).
    pub violations: Vec<Violation>,
}

impl Assessment {
    /// Validation errors (the profile cannot be applied to this host as written).
    pub fn errors(&self) -> impl Iterator<Item = &Violation> {
        self.violations.iter().filter(|v| v.severity == Severity::Error)
    }

    /// Why the profile must not be applied to this host as read, if it must not: the rule
    /// apply and a check of every host before a multi-step run both follow.
    pub fn blocked(&self) -> Option<Blocked> {
        if self.state.in_lockdown() {
            // The iDRAC refuses every write, and its registry calls everything read-only.
            return Some(Blocked::Lockdown);
        }
        let errors: Vec<String> = self.errors().map(ToString::to_string).collect();
        (!errors.is_empty()).then_some(Blocked::NotApplicable(errors))
    }
}

/// Why a profile must not be applied to a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// System Lockdown is on: the iDRAC refuses every BIOS and iDRAC change.
    Lockdown,
    /// The profile cannot be applied as written: its validation errors, one line each.
    NotApplicable(Vec<String>),
}

/// What an assessment reads besides the values, and how it judges them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AssessOptions {
    /// Read the job queue too (apply and the exporter need it; diff does not).
    pub jobs: bool,
    /// Attributes the profile names that the host lacks are errors, not warnings.
    pub strict: bool,
}

/// Reads the BMC (with its job queue when `jobs`) and compares it with the profile.
///
/// The profile is resolved for the host as soon as its BIOS values are in, before the
/// registry is fetched: a host the profile does not target (an Intel host for an AMD
/// profile, another EPYC generation) is refused up front, saying what it has.
pub async fn assess(
    bmc: &Bmc,
    profile: &LoadedProfile,
    cache: &RegistryCache,
    options: AssessOptions,
) -> Result<Assessment> {
    assess_with(bmc, profile, cache, options.jobs, options.strict, None).await
}

/// [`assess`] for a caller that is done with the host once it is read (a drift check): the
/// logout is sent on every outcome ([`Bmc::begin_close`]) as soon as the values are in, and is
/// under way while they are judged; [`Bmc::close`] waits for its answer. The assessment comes
/// back without that wait, so a fleet hands it over (and lets its values go) a round trip
/// sooner.
pub async fn assess_and_close(
    bmc: &Bmc,
    loaded: &LoadedProfile,
    cache: &RegistryCache,
    strict: bool,
) -> Result<Assessment> {
    let read = read(bmc, loaded, cache, false, None).await;
    bmc.begin_close();
    let (state, profile) = read?;
    // The logout's task may have been queued on this thread: let it send before the judging
    // holds the thread.
    tokio::task::yield_now().await;
    Ok(judge(cache, state, profile, strict))
}

/// [`assess`], with the BIOS resource taken from `bios` when the caller has just read it (an
/// apply after the host came back): the rest is read and judged the same way.
pub(crate) async fn assess_with(
    bmc: &Bmc,
    loaded: &LoadedProfile,
    cache: &RegistryCache,
    jobs: bool,
    strict: bool,
    bios: Option<Bios>,
) -> Result<Assessment> {
    let (state, profile) = read(bmc, loaded, cache, jobs, bios).await?;
    Ok(judge(cache, state, profile, strict))
}

/// Everything an assessment reads: the host's state (with its registry and every iDRAC group
/// the profile names) and the profile resolved for it.
async fn read(
    bmc: &Bmc,
    loaded: &LoadedProfile,
    cache: &RegistryCache,
    jobs: bool,
    bios: Option<Bios>,
) -> Result<(HostState, Arc<ResolvedProfile>)> {
    let groups = loaded.groups();
    let dimms_read = async {
        if !loaded.needs_memory() {
            return Ok(None);
        }
        read_dimms(bmc).await.map(Some)
    };
    // A Dell BIOS lists its boot devices among its values, named after the boot options read
    // beside them; a backend that keeps the order apart (an iLO) is read once the BIOS that
    // links it is.
    let read_boot = async {
        if loaded.needs_boot() && bmc.backend().places().is_some() {
            crate::boot::boot_options(bmc, None).await
        } else {
            Ok(None)
        }
    };
    let (values, dimms, boot_options) =
        tokio::join!(read::read_values_with(bmc, groups, jobs, bios), dimms_read, read_boot);
    let values = values?;
    let dimms = match dimms {
        // Read where the presumed backend keeps them, on a service read by its links after all.
        Err(_) if bmc.backend().places().is_none() => Some(read_dimms(bmc).await?),
        other => other?,
    };
    let mut facts = HostFacts::from_bios(&values.bios);
    if let Some(system) = &values.system {
        facts = with_system(facts, system);
    }
    if let Some(dimms) = dimms {
        facts = facts.with_memory(&dimms);
    }
    let profile = loaded
        .resolve_shared(&facts, values.backend.vendor())
        .with_context(|| format!("{}: resolving profile {}", bmc.name, loaded.name()))?;
    // The order a backend keeps apart is read for a `[boot]` order, and for a profile that
    // names it directly (one restored from a snapshot).
    let order_setting = bmc.backend().boot().and_then(|b| b.order_setting());
    let names_order = order_setting.is_some_and(|n| profile.bios.contains_key(n));
    // Through the BIOS just read, where the backend reads one by its links (an iLO).
    let order = match &values.linked {
        Some(bios) if loaded.needs_boot() || names_order => crate::write::order::read(bmc, Some(bios)).await?,
        _ => None,
    };
    let devices = match &order {
        Some(order) => Some(order.devices.clone()),
        None => crate::boot::devices(&values.bios, boot_options?.as_deref()),
    };
    let profile = crate::boot::with_boot(bmc, profile, &values.bios, devices.as_ref())?;
    let mut state = read::with_registry(bmc, cache, values).await?;
    if let Some(order) = &order {
        crate::boot::carry_order(bmc, &mut state, order);
    }
    // A platform override may name a group the generic resolution did not.
    let backend = bmc.backend();
    for (group, _) in profile.idrac.keys() {
        if !state.idrac.contains_key(group) {
            let attrs = match backend.settings() {
                Some(settings) => settings
                    .read(&bmc.client, *group)
                    .await
                    .map_err(|e| bmc.explain(e, &format!("reading iDRAC attributes {group}")))?,
                None => Default::default(),
            };
            state.idrac.insert(*group, attrs);
        }
    }
    Ok((state, profile))
}

/// `facts` completed from the system, for what a BIOS read by its links does not say of its
/// host (HPE's names no CPU): the model, and the CPU, sockets and cores per socket from
/// `ProcessorSummary` (whose `CoreCount` counts every socket's cores).
fn with_system(mut facts: HostFacts, system: &redfish_client::resources::computer_system::ComputerSystem) -> HostFacts {
    let text = |v: Option<&String>| v.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    if facts.model.is_none() {
        facts.model = text(system.model.as_ref());
    }
    if facts.cpu.is_none()
        && let Some(summary) = &system.processor_summary
        && let Some(cpu) = text(summary.model.as_ref())
    {
        facts.generation = bios_profiles::Generation::from_cpu_model(&cpu);
        facts.cpu = Some(cpu);
        facts.sockets = summary.count.filter(|n| *n > 0);
        facts.cores = match (summary.core_count, facts.sockets) {
            (Some(cores), Some(sockets)) if cores % sockets == 0 => Some(cores / sockets),
            _ => None,
        };
    }
    facts
}

/// The host's DIMMs: at the backend's fixed place, or where its first system links them.
async fn read_dimms(bmc: &Bmc) -> Result<Vec<Memory>> {
    let read = match bmc.backend().places() {
        Some(places) => {
            let collection = places.system.join("Memory");
            bmc.client.expanded_members::<Memory>(collection.path()).await
        }
        // Beside the system, as DMTF's schema places it (the system itself is being read at
        // the same time, for the BIOS).
        None => {
            let collection = bmc.system_id().await?.join("Memory");
            bmc.client.expanded_members::<Memory>(collection.path()).await
        }
    };
    read.map_err(|e| bmc.explain(e, "reading the DIMMs (the profile's NUMA choice depends on them)"))
}

/// The profile's verdict on a host's state: its violations and its diff, made once per
/// distinct check by the run's [`CheckMemo`](bios_profiles::CheckMemo).
pub(crate) fn judge(
    cache: &RegistryCache,
    state: HostState,
    profile: Arc<ResolvedProfile>,
    strict: bool,
) -> Assessment {
    let options = ValidateOptions { strict };
    let (violations, diff) = cache
        .checks()
        .assess(&state.registry, &profile, &state.view(), &options);
    Assessment {
        state,
        profile,
        diff,
        violations,
    }
}

/// Diff as a fleet [`Operation`](crate::lifecycle::Operation): each host read and judged
/// against the profile, its logout under way while it is judged ([`assess_and_close`]).
#[derive(Debug, Clone)]
pub struct Assess {
    /// The profile hosts are judged against.
    pub profile: Arc<LoadedProfile>,
    /// The run's registry cache (and its memo of checks).
    pub cache: Arc<RegistryCache>,
    /// Attributes the host lacks are errors.
    pub strict: bool,
}

impl crate::lifecycle::Operation for Assess {
    type Output = Assessment;

    async fn run(&self, bmc: &mut Bmc, _: &dyn crate::observe::Observer) -> Result<Assessment> {
        assess_and_close(bmc, &self.profile, &self.cache, self.strict).await
    }
}
