//! The profile library: the shipped profiles and sources, user files, and resolution for a host.

use crate::boot::{BootDevices, BootSection};
use crate::error::{Error, Result};
use crate::host::HostFacts;
use crate::profile::{Cpu, IdracSetting, Left, Profile, Unsupported};
use crate::setting::Unchecked;
use crate::setting::{ConfidenceCounts, Excluded, Parameters, Setting, Wanted};
use crate::sources::Sources;
use crate::suggest;
use crate::tables::{self, Tables};
use crate::verdict::Target;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::path::Path;

/// The shipped profile files, embedded at build time (path relative to the crate, text).
pub const SHIPPED_PROFILES: &[(&str, &str)] = &[
    ("profiles/dell/base.toml", include_str!("../profiles/dell/base.toml")),
    (
        "profiles/dell/performance.toml",
        include_str!("../profiles/dell/performance.toml"),
    ),
    ("profiles/dell/hpc.toml", include_str!("../profiles/dell/hpc.toml")),
    (
        "profiles/dell/database.toml",
        include_str!("../profiles/dell/database.toml"),
    ),
    (
        "profiles/dell/ai-gpu.toml",
        include_str!("../profiles/dell/ai-gpu.toml"),
    ),
    (
        "profiles/dell/low-latency.toml",
        include_str!("../profiles/dell/low-latency.toml"),
    ),
    (
        "profiles/dell/virtualization.toml",
        include_str!("../profiles/dell/virtualization.toml"),
    ),
    (
        "profiles/dell/virtualization-power.toml",
        include_str!("../profiles/dell/virtualization-power.toml"),
    ),
    (
        "profiles/dell/confidential-computing.toml",
        include_str!("../profiles/dell/confidential-computing.toml"),
    ),
    (
        "profiles/dell/power-efficiency.toml",
        include_str!("../profiles/dell/power-efficiency.toml"),
    ),
    (
        "profiles/dell/storage-io.toml",
        include_str!("../profiles/dell/storage-io.toml"),
    ),
    (
        "profiles/dell/power-efficiency-gpu.toml",
        include_str!("../profiles/dell/power-efficiency-gpu.toml"),
    ),
    (
        "profiles/dell/thermally-challenged.toml",
        include_str!("../profiles/dell/thermally-challenged.toml"),
    ),
    (
        "profiles/dell/minimum-power-cooling.toml",
        include_str!("../profiles/dell/minimum-power-cooling.toml"),
    ),
];

/// Whether `profile` is one of the shipped profiles (its file is one of theirs), whose
/// recommendations need evidence for the host's generation.
fn is_shipped(profile: &Profile) -> bool {
    SHIPPED_PROFILES.iter().any(|(file, _)| *file == profile.file)
}

/// The profile a shipped file holds, by its file name: `profiles/dell/hpc.toml` holds `hpc`.
fn shipped_name(file: &str) -> &str {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.strip_suffix(".toml").unwrap_or(base)
}

/// The shipped sources file.
pub const SHIPPED_SOURCES: &str = include_str!("../profiles/dell/sources.toml");

/// Named profiles, the sources they cite and the data tables resolution reads.
#[derive(Debug, Clone, Default)]
pub struct Library {
    profiles: BTreeMap<String, Profile>,
    sources: Sources,
    /// `None`: the shipped tables.
    tables: Option<std::sync::Arc<Tables>>,
}

/// A setting left out for this host, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// Where the attribute lives.
    #[serde(flatten)]
    pub target: Target,
    /// The setting as written.
    #[serde(flatten)]
    pub setting: Setting,
    /// Why it does not apply (`applies to rome, milan only; this host is genoa`).
    pub reason: String,
    /// Which kind of reason: no evidence for the host's generation, or left out on purpose.
    pub kind: Unchecked,
}

/// The largest profile file accepted (1 MiB): shipped profiles are about 10 KB.
pub const MAX_PROFILE_BYTES: u64 = 1024 * 1024;

/// A profile with `extends`, generation filters and platform overrides applied for one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvedProfile {
    /// The profile's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The `extends` chain, root first, ending with this profile.
    pub chain: Vec<String>,
    /// The CPUs it is written for (its own `cpu`, else its nearest ancestor's, else AMD EPYC).
    pub cpu: Cpu,
    /// The platform overrides that matched the host (`base [platform c6615]`).
    pub platforms: Vec<String>,
    /// What those platforms cannot do: values taken out of every setting's choices.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<Unsupported>,
    /// The host it was resolved for, with SMT as the profile leaves it (the `LogicalProc` the
    /// chain writes, else the host's own).
    pub host: HostFacts,
    /// The operator's parameters the chain gives (a child's beat its parent's).
    #[serde(skip_serializing_if = "Parameters::is_empty")]
    pub parameters: Parameters,
    /// BIOS settings by attribute (a JSON list in attribute order).
    #[serde(serialize_with = "values_as_list")]
    pub bios: BTreeMap<String, Setting>,
    /// iDRAC settings by (group, attribute) (a JSON list in that order).
    #[serde(serialize_with = "values_as_list")]
    pub idrac: BTreeMap<(AttributeGroup, String), IdracSetting>,
    /// Settings left out because they do not apply to the host's generation or facts, or
    /// because a matching platform cannot take any of their values.
    pub skipped: Vec<Skipped>,
    /// Knobs the chain leaves as the host has them (`leave = true`), overriding what a parent
    /// sets: never written, never judged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<Left>,
    /// Sources the chain's own files declare (shipped sources are the library's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub own_sources: Vec<crate::sources::Source>,
    /// The chain's `[boot]` section (a child's entry replaces its parent's), turned into BIOS
    /// settings per host by [`ResolvedProfile::with_boot`].
    #[serde(skip_serializing_if = "BootSection::is_empty")]
    pub boot: BootSection,
}

/// A document cited by a resolved profile, with what it backs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Citation {
    /// The id settings cite.
    pub id: String,
    /// The document's title (absent only for an id no source list knows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Who published it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// What it covers and what kind of evidence it gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Where to read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Whether a profile file declares it (rather than the shipped list).
    pub declared_by_profile: bool,
    /// The settings and limits citing it.
    pub cited_by: Vec<String>,
    /// The source's words, per setting that quotes it.
    pub quotes: Vec<Quote>,
}

/// The words one setting takes from its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quote {
    /// The setting (or `limit ATTRIBUTE`).
    pub setting: String,
    /// The words.
    pub quote: String,
}

fn values_as_list<S: Serializer, K, V: Serialize>(map: &BTreeMap<K, V>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(map.values())
}

impl ResolvedProfile {
    /// This profile for one host, its `[boot]` section resolved against the host's BIOS values
    /// `bios` and boot devices `devices` ([`BootDevices::from_bios`], labelled from the host's
    /// boot options; [`BootDevices::from_hpe`]) into settings — `BootMode`, `SetBootOrderEn`,
    /// `SetBootOrderDis`; an HPE host's `PersistentBootConfigOrder` — that validate, diff, plan
    /// and verify like every other setting, and stage with the profile's other values. Without a `[boot]` section, the profile as it is. An attribute the section sets
    /// that the profile also sets under `[bios]` is refused.
    pub fn with_boot(&self, bios: &Attributes, devices: Option<&BootDevices>) -> Result<Self> {
        if self.boot.is_empty() {
            return Ok(self.clone());
        }
        let problem = |message: String| Error::Boot {
            profile: self.name.clone(),
            message,
        };
        let settings = crate::boot::resolve(&self.boot, bios, devices, &self.name).map_err(|p| problem(p.0))?;
        let mut out = self.clone();
        for setting in settings {
            if let Some(other) = out.bios.get(&setting.attribute) {
                return Err(problem(format!(
                    "{} is set both in [bios] ({}) and by [boot]: keep one",
                    setting.attribute, other.origin
                )));
            }
            out.bios.insert(setting.attribute.clone(), setting);
        }
        Ok(out)
    }

    /// Every applicable setting: BIOS by attribute, then iDRAC by group and attribute.
    pub fn settings(&self) -> impl Iterator<Item = &Setting> {
        self.bios.values().chain(self.idrac.values().map(|s| &s.setting))
    }

    /// How many applicable settings are stated, used and inferred.
    pub fn confidence_counts(&self) -> ConfidenceCounts {
        ConfidenceCounts::of(self.settings())
    }

    /// Every source the applicable settings, limits and deciding data-table rows cite, by id,
    /// with title, scope, the settings citing it and the words each quotes; `shipped` holds the
    /// library's sources, the profile's own come with it.
    pub fn citations(&self, shipped: &crate::sources::Sources) -> Vec<Citation> {
        let mut by_id: BTreeMap<String, Citation> = BTreeMap::new();
        let mut cite = |id: &str, label: String, quote: Option<&String>| {
            let c = by_id.entry(id.to_owned()).or_insert_with(|| {
                let own = self.own_sources.iter().find(|s| s.id == id);
                let source = own.or_else(|| shipped.get(id));
                Citation {
                    id: id.to_owned(),
                    title: source.map(|s| s.title.clone()),
                    publisher: source.map(|s| s.publisher.clone()),
                    scope: source.and_then(|s| s.note.clone()),
                    url: source.and_then(|s| s.url.clone()),
                    declared_by_profile: own.is_some(),
                    cited_by: Vec::new(),
                    quotes: Vec::new(),
                }
            });
            if let Some(q) = quote {
                c.quotes.push(Quote {
                    setting: label.clone(),
                    quote: q.clone(),
                });
            }
            c.cited_by.push(label);
        };
        for s in self.bios.values() {
            let label = match &s.bound_from {
                Some(knob) => format!("{} (bound from {knob})", s.attribute),
                None => s.attribute.clone(),
            };
            cite(&s.source, label, s.quote.as_ref());
        }
        for ((group, name), s) in &self.idrac {
            cite(
                &s.setting.source,
                format!("{name} (iDRAC {group})"),
                s.setting.quote.as_ref(),
            );
        }
        for l in &self.limits {
            cite(&l.source, format!("limit {}", l.attribute), l.quote.as_ref());
        }
        for (label, e) in self.boot.entries() {
            cite(&e.source, label.to_owned(), e.quote.as_ref());
        }
        // The data-table rows that ruled values out or warned are evidence too.
        for s in self.bios.values() {
            for d in s.decisions.iter().filter(|d| {
                matches!(
                    d.outcome,
                    crate::setting::Outcome::RulesOut | crate::setting::Outcome::Warning
                )
            }) {
                cite(
                    &d.source,
                    format!("{} ({}: {})", s.attribute, d.table, d.row),
                    d.quote.as_ref(),
                );
            }
        }
        by_id.into_values().collect()
    }
}

impl Library {
    /// The shipped profiles (`profiles/dell/*.toml`) and sources, embedded in the binary.
    pub fn shipped() -> Result<Self> {
        let mut library = Self::shipped_sources()?;
        for (file, text) in SHIPPED_PROFILES {
            library.add_toml(text, file)?;
        }
        Ok(library)
    }

    /// The shipped sources, with no profile parsed yet: [`Library::add_shipped`] adds the
    /// profiles a run needs. A command naming one profile parses that profile and the ones it
    /// extends instead of all of them (parsing every shipped profile was a seventh of a
    /// single-host `diff`'s CPU).
    pub fn shipped_sources() -> Result<Self> {
        Ok(Self::with_sources(Sources::from_toml(
            SHIPPED_SOURCES,
            "profiles/dell/sources.toml",
        )?))
    }

    /// Adds the shipped profile `name` and the shipped profiles it extends, those not added
    /// yet. False when `name`, or a profile it extends, is not shipped: the caller takes
    /// [`Library::shipped`] instead, whose errors can suggest the names it has.
    pub fn add_shipped(&mut self, name: &str) -> Result<bool> {
        let mut next = Some(name.to_owned());
        while let Some(name) = next.take() {
            if self.profiles.contains_key(&name) {
                break;
            }
            // A shipped profile's file is named after it (test `every_shipped_file_is_named_after_its_profile`).
            let Some((file, text)) = SHIPPED_PROFILES.iter().find(|(file, _)| shipped_name(file) == name) else {
                return Ok(false);
            };
            next = self.add_toml(text, file)?.extends.clone();
        }
        Ok(true)
    }

    /// An empty library citing `sources`, with the shipped data tables.
    pub fn with_sources(sources: Sources) -> Self {
        Self {
            profiles: BTreeMap::new(),
            sources,
            tables: None,
        }
    }

    /// This library resolving with `tables` instead of the shipped ones.
    #[must_use]
    pub fn with_tables(mut self, tables: Tables) -> Self {
        self.tables = Some(std::sync::Arc::new(tables));
        self
    }

    /// The data tables resolution reads.
    pub fn tables(&self) -> &Tables {
        self.tables.as_deref().unwrap_or_else(|| tables::shipped())
    }

    /// Parses a profile and adds it. Names must be unique.
    pub fn add_toml(&mut self, text: &str, file: &str) -> Result<&Profile> {
        let profile = Profile::from_toml(text, file, &self.sources)?;
        self.add(profile)
    }

    /// Reads, parses and adds a profile file. Names must be unique: to change a shipped profile,
    /// give yours another name and `extends` the shipped one.
    pub fn load_file(&mut self, path: &Path) -> Result<&Profile> {
        let profile = self.parse_file(path)?;
        self.add(profile)
    }

    /// Reads and parses a profile file without adding it.
    pub fn parse_file(&self, path: &Path) -> Result<Profile> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        // Refuse an oversized file before reading it: a shipped profile is ~10 KB.
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_PROFILE_BYTES {
            return Err(Error::TooLarge {
                path: path.to_owned(),
                size,
                limit: MAX_PROFILE_BYTES,
            });
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        Profile::from_toml(&text, &path.display().to_string(), &self.sources)
    }

    fn add(&mut self, profile: Profile) -> Result<&Profile> {
        if let Some(existing) = self.profiles.get(&profile.name) {
            return Err(Error::DuplicateProfile {
                name: profile.name,
                file: profile.file,
                existing: existing.file.clone(),
            });
        }
        let name = profile.name.clone();
        Ok(self.profiles.entry(name).or_insert(profile))
    }

    /// The profile named `name`.
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// Every profile, by name.
    pub fn list(&self) -> Vec<&Profile> {
        self.profiles.values().collect()
    }

    /// The sources profiles may cite.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// Resolves a profile by name, or a profile file by path (anything containing a path
    /// separator or ending in `.toml`), for `host`. A file's `extends` names profiles of this
    /// library.
    pub fn resolve(&self, name_or_path: &str, host: &HostFacts) -> Result<ResolvedProfile> {
        if let crate::ProfileRef::File(path) = crate::ProfileRef::parse(name_or_path) {
            let profile = self.parse_file(&path)?;
            return self.resolve_profile(&profile, host);
        }
        match self.profiles.get(name_or_path) {
            Some(profile) => self.resolve_profile(profile, host),
            None => Err(Error::UnknownProfile {
                name: name_or_path.to_owned(),
                suggestions: self.suggest(name_or_path),
            }),
        }
    }

    /// Resolves `profile` for `host`: follows `extends` (the child wins), applies each
    /// profile's matching platform overrides right after its own settings, sets aside settings
    /// restricted to other generations or to other host facts (`when`), and then takes the
    /// values that a matching platform cannot do out of every setting, whichever profile of
    /// the chain wrote it (so a platform's limit beats a workload's wish).
    pub fn resolve_profile(&self, profile: &Profile, host: &HostFacts) -> Result<ResolvedProfile> {
        let chain = self.chain(profile)?;
        let cpu = chain.iter().find_map(|p| p.cpu).unwrap_or(Cpu::AmdEpyc);
        if cpu == Cpu::AmdEpyc && host.is_other_cpu() {
            return Err(Error::NotTargeted {
                profile: profile.name.clone(),
                targets: format!("AMD EPYC ({})", profile.targets()),
                host: host.to_string(),
            });
        }
        let tables = self.tables();
        if !profile.targets_host_with(host, tables) {
            return Err(Error::NotTargeted {
                profile: profile.name.clone(),
                targets: profile.targets(),
                host: host.to_string(),
            });
        }
        let host = &planned_facts(host, &chain, tables);
        let mut merged = Merge {
            host,
            tables,
            bios: BTreeMap::new(),
            idrac: BTreeMap::new(),
            skipped: BTreeMap::new(),
            left: BTreeMap::new(),
        };
        let mut platforms = Vec::new();
        let mut limits: Vec<Unsupported> = Vec::new();
        for p in chain.iter().rev() {
            let shipped = is_shipped(p);
            merged.add(&p.bios, &p.idrac, shipped);
            merged.leave(&p.left);
            for platform in p.platforms.values().filter(|pl| pl.matches_with(host, tables)) {
                platforms.push(format!("{} [platform {}]", p.name, platform.name));
                merged.add(&platform.bios, &platform.idrac, shipped);
                merged.leave(&platform.left);
                limits.extend(platform.unsupported.values().cloned());
            }
        }
        let mut dropped = Vec::new();
        for limit in &limits {
            if let Some(setting) = merged.bios.get_mut(&limit.attribute)
                && !limit_setting(setting, limit)
            {
                dropped.push(setting.attribute.clone());
            }
        }
        // The data tables: NPS by CPU layout and memory population, the SEV ASID split.
        let layout_settings = snapshot(&merged.bios);
        if let Some(setting) = merged.bios.get_mut(&tables.nps.attribute)
            && !tables.decide_nps(setting, host, &layout_settings)
        {
            dropped.push(setting.attribute.clone());
        }
        let parameters = chain
            .iter()
            .rev()
            .fold(Parameters::default(), |acc, p| acc.overlaid_with(p.parameters));
        let given_by = chain
            .iter()
            .find(|p| p.parameters.cpu_max_sev_asids.is_some())
            .map(|p| p.name.as_str());
        let mut unresolved = Vec::new();
        for setting in merged.bios.values_mut() {
            if let Wanted::SevAsids { plain_sev } = setting.wanted {
                match tables.asid_split(plain_sev, host, &parameters, given_by) {
                    Ok(split) => {
                        setting.wanted = Wanted::Value(AttributeValue::Integer(i64::from(split.min_sev_asid)));
                        setting.asid_split = Some(split);
                    }
                    Err(reason) => unresolved.push((setting.attribute.clone(), reason)),
                }
            }
        }
        for (name, reason) in unresolved {
            if let Some(setting) = merged.bios.remove(&name) {
                merged.skipped.insert(
                    (Target::Bios, name),
                    Skipped {
                        target: Target::Bios,
                        setting,
                        reason,
                        kind: Unchecked::Excluded,
                    },
                );
            }
        }
        for name in dropped {
            if let Some(setting) = merged.bios.remove(&name) {
                let reason = setting
                    .excluded
                    .iter()
                    .map(|e| e.reason.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                merged.skipped.insert(
                    (Target::Bios, name),
                    Skipped {
                        target: Target::Bios,
                        setting,
                        reason,
                        kind: Unchecked::Excluded,
                    },
                );
            }
        }
        let Merge {
            mut bios,
            idrac,
            skipped,
            left,
            ..
        } = merged;
        for setting in bios.values_mut() {
            lower_confidence(setting, host, &self.sources, &chain);
        }
        let skipped = skipped
            .into_iter()
            .filter(|((target, name), _)| match target {
                Target::Bios => !bios.contains_key(name),
                Target::Idrac(group) => !idrac.contains_key(&(*group, name.clone())),
            })
            .map(|(_, s)| s)
            .collect();
        let boot = chain
            .iter()
            .rev()
            .fold(BootSection::default(), |acc, p| acc.overlaid_with(&p.boot));
        Ok(ResolvedProfile {
            boot,
            cpu,
            name: profile.name.clone(),
            description: profile.description.clone(),
            chain: chain.iter().rev().map(|p| p.name.clone()).collect(),
            platforms,
            limits,
            host: host.clone(),
            parameters,
            bios,
            idrac,
            skipped,
            left: left.into_values().collect(),
            own_sources: chain.iter().flat_map(|p| p.sources.iter().cloned()).collect(),
        })
    }

    /// Whether resolving `profile` depends on the host's memory population, so the caller
    /// must read the DIMMs first: a setting of its chain has a `memory` condition, a platform
    /// with one has settings of its own, or it rules out a value some setting of the chain may write (`hpc` prefers NPS 4, which unbalanced memory
    /// rules out; `performance` writes NPS 1 and needs no DIMM read).
    pub fn needs_memory(&self, profile: &Profile) -> bool {
        let Ok(chain) = self.chain(profile) else {
            return false;
        };
        let platforms = || chain.iter().flat_map(|p| p.platforms.values());
        let settings = || {
            chain
                .iter()
                .flat_map(|p| p.bios.values())
                .chain(platforms().flat_map(|pl| pl.bios.values()))
        };
        let memory_platforms = || platforms().filter(|pl| pl.when.memory.is_some());
        // A memory platform's own settings, and a setting with a memory condition, need the
        // population to apply at all.
        if memory_platforms().any(|pl| !pl.bios.is_empty() || !pl.idrac.is_empty()) {
            return true;
        }
        if chain.iter().flat_map(|p| p.settings()).any(|s| s.when.memory.is_some()) {
            return true;
        }
        let tables = self.tables();
        if settings().any(|s| tables.population_may_rule_out(s)) {
            return true;
        }
        memory_platforms().flat_map(|pl| pl.unsupported.values()).any(|limit| {
            settings().any(|s| {
                s.attribute == limit.attribute
                    && s.wanted
                        .candidates()
                        .is_some_and(|values| values.iter().any(|v| limit.values.contains(v)))
            })
        })
    }

    /// `profile` and its ancestors, leaf first.
    fn chain<'a>(&'a self, profile: &'a Profile) -> Result<Vec<&'a Profile>> {
        let mut chain = vec![profile];
        let mut current = profile;
        while let Some(parent) = &current.extends {
            if let Some(i) = chain.iter().position(|p| &p.name == parent) {
                let mut cycle: Vec<String> = chain[i..].iter().map(|p| p.name.clone()).collect();
                cycle.push(parent.clone());
                return Err(Error::ExtendsCycle { cycle });
            }
            let Some(next) = self.profiles.get(parent) else {
                return Err(Error::UnknownParent {
                    file: current.file.clone(),
                    position: current.extends_at,
                    profile: current.name.clone(),
                    parent: parent.clone(),
                    suggestions: self.suggest(parent),
                });
            };
            chain.push(next);
            current = next;
        }
        Ok(chain)
    }

    fn suggest(&self, name: &str) -> Vec<String> {
        suggest::closest(name, self.profiles.keys().map(String::as_str))
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

struct Merge<'h> {
    host: &'h HostFacts,
    tables: &'h Tables,
    bios: BTreeMap<String, Setting>,
    idrac: BTreeMap<(AttributeGroup, String), IdracSetting>,
    skipped: BTreeMap<(Target, String), Skipped>,
    left: BTreeMap<(Target, String), Left>,
}

impl Merge<'_> {
    /// Takes a profile's settings (`shipped`: one of the shipped profiles') where they apply.
    fn add(&mut self, bios: &BTreeMap<String, Setting>, idrac: &BTreeMap<String, IdracSetting>, shipped: bool) {
        for (name, s) in bios {
            match self.exclusion(s, true, shipped) {
                None => {
                    self.left.remove(&(Target::Bios, name.clone()));
                    self.bios.insert(name.clone(), s.clone());
                }
                Some((reason, kind)) => self.skip(Target::Bios, s, reason, kind),
            }
        }
        for (name, s) in idrac {
            // The BMC's own settings (power cap, cooling) do not depend on the CPU: a generation
            // without BIOS evidence still takes them, unless the setting names generations.
            match self.exclusion(&s.setting, !s.setting.generations.is_empty(), shipped) {
                None => {
                    self.left.remove(&(Target::Idrac(s.group), name.clone()));
                    self.idrac.insert((s.group, name.clone()), s.clone());
                }
                Some((reason, kind)) => self.skip(Target::Idrac(s.group), &s.setting, reason, kind),
            }
        }
    }

    /// Drops what an earlier layer set for each knob `left` leaves alone, and records it.
    fn leave(&mut self, left: &[Left]) {
        for l in left {
            match l.target {
                Target::Bios => {
                    self.bios.remove(&l.attribute);
                }
                Target::Idrac(group) => {
                    self.idrac.remove(&(group, l.attribute.clone()));
                }
            }
            self.skipped.remove(&(l.target, l.attribute.clone()));
            self.left.insert((l.target, l.attribute.clone()), l.clone());
        }
    }

    /// Why `setting` does not apply to the host, and which kind of reason that is: no
    /// evidence for the host's generation, or another generation or host facts its `when`
    /// rules out. `by_cpu`: whether the CPU generation decides for it at all. Want of evidence
    /// holds back the shipped recommendations only: a setting the operator wrote (their own
    /// profile, a snapshot being restored) is theirs to vouch for, on any generation it names
    /// or does not restrict.
    fn exclusion(&self, setting: &Setting, by_cpu: bool, shipped: bool) -> Option<(String, Unchecked)> {
        let generation = by_cpu.then_some(self.host.generation).flatten();
        if !shipped {
            let listed = generation.and_then(|g| self.tables.listed_exclusion(setting, g));
            return match listed {
                Some(reason) => Some((reason, Unchecked::Excluded)),
                None => setting.when.excludes(self.host).map(|r| (r, Unchecked::Excluded)),
            };
        }
        let unproven = generation.and_then(|g| self.tables.unproven(g));
        match self.tables.generation_exclusion(setting, generation) {
            Some(reason) if unproven.as_ref() == Some(&reason) => Some((reason, Unchecked::NoEvidence)),
            Some(reason) => Some((reason, Unchecked::Excluded)),
            None => setting.when.excludes(self.host).map(|r| (r, Unchecked::Excluded)),
        }
    }

    fn skip(&mut self, target: Target, setting: &Setting, reason: String, kind: Unchecked) {
        self.skipped.insert(
            (target, setting.attribute.clone()),
            Skipped {
                target,
                setting: setting.clone(),
                reason,
                kind,
            },
        );
    }
}

/// Records which of `setting`'s choices `limit` rules out (the choices stay as written, so
/// the reason can name them in order). Returns whether a choice is left; a derived value is
/// never limited.
fn limit_setting(setting: &mut Setting, limit: &Unsupported) -> bool {
    let ruled_out = |v: &AttributeValue| limit.values.contains(v);
    let Some(candidates) = setting.wanted.candidates() else {
        return true;
    };
    for value in candidates.iter().filter(|v| ruled_out(v)) {
        if !setting.excluded.iter().any(|e| &e.value == value) {
            setting.excluded.push(Excluded {
                reason: format!(
                    "{value} is not possible on this platform ({}): {}",
                    limit.origin, limit.why
                ),
                value: value.clone(),
                table: None,
            });
        }
    }
    candidates
        .iter()
        .any(|v| !setting.excluded.iter().any(|e| &e.value == v))
}

/// Makes `setting` `inferred` where its evidence does not reach `host`: its source covers other
/// generations (a preset observed on a real Genoa host, applied to Milan), or the first of its
/// choices is ruled out here (the value written is then a fallback of our own, not what the
/// source names). Says why in `confidence_note`.
fn lower_confidence(setting: &mut Setting, host: &HostFacts, shipped: &Sources, chain: &[&Profile]) {
    if setting.confidence == crate::setting::Confidence::Inferred {
        return;
    }
    let own = chain
        .iter()
        .flat_map(|p| p.sources.iter())
        .find(|s| s.id == setting.source);
    if let (Some(generation), Some(source)) = (host.generation, own.or_else(|| shipped.get(&setting.source)))
        && !source.covers(generation)
    {
        setting.infer_here(format!(
            "{} on {}, the generations its source ({}) covers; inferred on {generation}",
            setting.confidence,
            crate::host::list(&source.generations),
            setting.source
        ));
        return;
    }
    if let Some(first) = setting.wanted.first()
        && let Some(e) = setting.excluded.iter().find(|e| e.value == first)
    {
        let why = format!(
            "{} for {first}, which is ruled out here ({}); the value taken in its place is our fallback",
            setting.confidence, e.reason
        );
        setting.infer_here(why);
    }
}

/// `host` with SMT as `chain` leaves it: the last fixed `LogicalProc` the chain writes for the
/// host's generation (a platform override's included), else the host's own value. Conditions on
/// threads judge the host as it will be after the job.
fn planned_facts(host: &HostFacts, chain: &[&Profile], tables: &Tables) -> HostFacts {
    let mut facts = host.clone();
    for p in chain.iter().rev() {
        let own = p.bios.get("LogicalProc").into_iter();
        let platforms = p
            .platforms
            .values()
            .filter(|pl| pl.matches_with(host, tables))
            .filter_map(|pl| pl.bios.get("LogicalProc"));
        for s in own.chain(platforms) {
            if tables.generation_exclusion(s, host.generation).is_some() {
                continue;
            }
            match s.wanted.fixed().and_then(AttributeValue::as_str) {
                Some("Enabled") => facts.smt = Some(true),
                Some("Disabled") => facts.smt = Some(false),
                _ => {}
            }
        }
    }
    facts
}

/// The settings as resolved so far, for tables that read other settings (the layout is known
/// only when the profile keeps every CCD and core enabled).
fn snapshot(bios: &BTreeMap<String, Setting>) -> BTreeMap<String, Setting> {
    ["ProcCcds", "CcdCores"]
        .into_iter()
        .filter_map(|n| bios.get(n).map(|s| (n.to_owned(), s.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_file_is_named_after_its_profile() {
        let library = Library::shipped().unwrap();
        for (file, _) in SHIPPED_PROFILES {
            let name = shipped_name(file);
            assert_eq!(library.get(name).map(|p| p.file.as_str()), Some(*file), "{file}");
        }
        assert_eq!(library.list().len(), SHIPPED_PROFILES.len());
    }

    /// A run naming one profile parses only it and its parents, and resolves it exactly as the
    /// whole library does.
    #[test]
    fn adding_one_shipped_profile_adds_its_parents_and_resolves_alike() {
        let whole = Library::shipped().unwrap();
        let host = HostFacts::default();
        for (file, _) in SHIPPED_PROFILES {
            let name = shipped_name(file);
            let mut some = Library::shipped_sources().unwrap();
            assert!(some.add_shipped(name).unwrap(), "{name}");
            let mut chain = vec![name.to_owned()];
            while let Some(parent) = some.get(chain.last().unwrap()).unwrap().extends.clone() {
                chain.push(parent);
            }
            let mut loaded: Vec<String> = some.list().iter().map(|p| p.name.clone()).collect();
            loaded.sort();
            chain.sort();
            assert_eq!(loaded, chain, "only {name} and its parents are parsed");
            assert_eq!(
                format!("{:?}", some.resolve(name, &host)),
                format!("{:?}", whole.resolve(name, &host)),
                "{name}"
            );
        }
        let mut some = Library::shipped_sources().unwrap();
        assert!(!some.add_shipped("perfromance").unwrap());
        assert!(some.list().is_empty());
    }
}
