//! The profile file format (TOML) and its in-memory form: a profile's settings (see
//! [`crate::setting`]), iDRAC settings, platform overrides, boot section and parameters.
//!
//! ```toml
//! name = "performance"
//! description = "Throughput first"
//! extends = "base"                          # optional
//! generations = ["genoa", "siena"]          # optional; empty or absent = every generation
//! models = []                               # optional; empty = any model
//! cpu = "amd-epyc"                          # optional: amd-epyc (default, inherited) | any
//!
//! [bios.SysProfile]
//! value = "PerfOptimized"                   # string, integer or boolean, as the registry types it
//! why = "one line"
//! source = "dell-c6615-note"                # an id from sources.toml
//! confidence = "stated"                     # stated | used | inferred
//! quote = "words of the source"             # required with stated
//! generations = ["genoa"]                   # optional: only on these generations
//! when = { sockets = 2 }                    # optional: sockets, models, cpus, min_cores, max_cores,
//!                                           # memory, min_threads, max_threads
//!
//! [bios.NumaNodesPerSocket]
//! prefer = ["4", "2", "1"]                  # instead of value: the first one the host offers
//!
//! [bios.DeterminismSlider]
//! intent = "performance determinism"       # instead of value: one intent, several spellings;
//! accept = ["PerfDeterminism", "PerformanceDeterminism"]  # the host's registry picks one
//!
//! [bios.AssetTagLength]
//! derive = "lower_bound"                    # instead of value: from the registry's bounds
//!
//! [bios.CpuMinSevAsid]
//! sev_asids = { plain_sev = 8 }             # instead of value: the SEV ASID split, from the
//!                                           # CPU's maximum (tables.toml or [parameters])
//!
//! [parameters]
//! cpu_max_sev_asids = 509                   # facts the host does not report, from the operator
//!
//! [idrac."ServerPwr.1.PowerCapSetting"]
//! group = "System"                          # System | iDRAC | LifecycleController; default System
//! value = "Disabled"
//! why = "..."
//! source = "dell-c6615-note"
//! confidence = "stated"
//! quote = "..."
//!
//! [boot.order]                              # the boot order (see `crate::boot`): device
//! devices = ["pxe", "disk"]                 # classes or FQDDs, first boots first
//! why = "..."                               # also [boot.mode] (value = "Uefi") and
//! source = "..."                            # [boot.disabled] (devices = ["optical"])
//! confidence = "inferred"
//!
//! [platform.c6615]                          # applied when the host matches
//! models = ["PowerEdge C6615"]              # and/or any other condition of `when` (cpus, sockets, memory, ...)
//!                                           # or `generations = ["rome"]`
//! [platform.c6615.bios.NumaNodesPerSocket]
//! value = "1"
//! why = "..."
//! source = "dell-c6615-note"
//! confidence = "inferred"
//! [platform.c6615.unsupported.NumaNodesPerSocket]
//! values = ["4"]                            # what this platform cannot do, whichever profile asks
//! why = "..."
//! source = "dell-c6615-note"
//! confidence = "inferred"
//! ```

use crate::boot::{BootEntry, BootSection, DeviceRef};
use crate::error::{Error, Position, Result};
use crate::host::{self, Generation, HostFacts};
use crate::setting::{Bound, Confidence, ConfidenceCounts, MemoryCondition, Parameters, Setting, Wanted, When};
use crate::sources::Sources;
use crate::suggest;
use crate::verdict::Target;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::AttributeValue;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

/// A setting of a `DellAttributes` resource on the iDRAC.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdracSetting {
    /// Which resource holds the attribute.
    pub group: AttributeGroup,
    /// The attribute and its value; iDRAC enumerations are display strings.
    #[serde(flatten)]
    pub setting: Setting,
}

impl IdracSetting {
    /// The value to write. iDRAC settings always have a fixed value (the format refuses the
    /// other forms); `None` only for a hand-built setting that breaks that rule.
    pub fn value(&self) -> Option<&AttributeValue> {
        self.setting.wanted.fixed()
    }
}

/// A knob a profile leaves as the host has it (`leave = true`): whatever a profile it extends
/// sets for the attribute is dropped, and rftune neither writes nor judges it. The way to keep
/// one value of a shipped profile as each host has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Left {
    /// Where the attribute lives.
    #[serde(flatten)]
    pub target: Target,
    /// The attribute.
    pub attribute: String,
    /// Why it is left alone, in one line.
    pub why: String,
    /// The id of a source behind that, when one is cited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Which profile (and platform override) leaves it.
    pub origin: String,
}

/// Values an attribute cannot take on a platform, whichever profile asks for them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unsupported {
    /// The attribute.
    pub attribute: String,
    /// The values ruled out.
    pub values: Vec<AttributeValue>,
    /// Why, in one line.
    pub why: String,
    /// The id of the source that backs it.
    pub source: String,
    /// How sure we are.
    pub confidence: Confidence,
    /// The source's words (required when stated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// Which profile's platform override says so: `base [platform c6615]`.
    pub origin: String,
}

/// Settings and limits that apply only on some PowerEdge models, CPUs or memory populations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Platform {
    /// The key in the file (`c6615`).
    pub name: String,
    /// What it applies to: every condition must be known for the host and hold
    /// ([`When::holds_for`]).
    #[serde(flatten)]
    pub when: When,
    /// The CPU generations it applies to (a generation that inherits one of them included);
    /// empty: any. The host's generation must be known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub generations: Vec<Generation>,
    /// BIOS settings, by attribute.
    pub bios: BTreeMap<String, Setting>,
    /// iDRAC settings, by attribute.
    pub idrac: BTreeMap<String, IdracSetting>,
    /// Knobs this override leaves as the host has them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<Left>,
    /// BIOS values this platform cannot take, by attribute.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unsupported: BTreeMap<String, Unsupported>,
}

impl Platform {
    /// Whether this override applies to `host`: every condition it names is known and holds.
    /// Unknown facts match nothing.
    pub fn matches(&self, host: &HostFacts) -> bool {
        self.matches_with(host, crate::tables::shipped())
    }

    /// [`Platform::matches`] with `tables`' generation rules.
    pub(crate) fn matches_with(&self, host: &HostFacts, tables: &crate::tables::Tables) -> bool {
        let generation = self.generations.is_empty()
            || host
                .generation
                .is_some_and(|g| self.generations.iter().any(|&l| tables.counts_as(g, l)));
        generation && self.when.holds_for(host)
    }

    /// What it matches, for messages: `PowerEdge C6615`, `EPYC 7552`, `unbalanced memory`,
    /// `rome`.
    pub fn describe(&self) -> String {
        let when = self.when.describe();
        match (self.generations.is_empty(), when.is_empty()) {
            (true, _) => when,
            (false, true) => host::list(&self.generations),
            (false, false) => format!("{} with {when}", host::list(&self.generations)),
        }
    }
}

/// The CPUs a profile is written for. BIOS attribute names and values differ between CPU
/// vendors, so a profile for AMD EPYC must not be judged against an Intel host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cpu {
    /// AMD EPYC of a generation this project knows (Rome and later).
    AmdEpyc,
    /// Any CPU: the profile sets only iDRAC or vendor-neutral attributes.
    Any,
}

impl Cpu {
    /// The spelling in profile files (`amd-epyc`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AmdEpyc => "amd-epyc",
            Self::Any => "any",
        }
    }
}

/// A profile as written in one file, before `extends` and host filters are applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// Its name (`performance`).
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The profile it builds on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// Where `extends` is written, for messages.
    #[serde(skip)]
    pub extends_at: Option<Position>,
    /// The generations it targets; empty means all.
    pub generations: Vec<Generation>,
    /// The models it targets; empty means any.
    pub models: Vec<String>,
    /// The CPUs it is written for, when the file says (else inherited, else AMD EPYC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    /// BIOS settings, by attribute.
    pub bios: BTreeMap<String, Setting>,
    /// iDRAC settings, by attribute.
    pub idrac: BTreeMap<String, IdracSetting>,
    /// Knobs it leaves as the host has them (`leave = true`), whatever a profile it extends
    /// sets.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<Left>,
    /// Per-model or per-CPU overrides, by key.
    pub platforms: BTreeMap<String, Platform>,
    /// The file it came from, as named when loading.
    pub file: String,
    /// Documents the file declares itself (`[sources.ID]`), beside the shipped ones.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<crate::sources::Source>,
    /// Facts the operator gives for settings that need one the host does not report
    /// (`[parameters]`); a child's beat its parent's.
    #[serde(skip_serializing_if = "Parameters::is_empty")]
    pub parameters: Parameters,
    /// The boot mode, order and disabled devices (`[boot]`), resolved per host against its
    /// boot devices ([`crate::boot`]).
    #[serde(skip_serializing_if = "BootSection::is_empty")]
    pub boot: BootSection,
}

impl Profile {
    /// Parses one profile file. `file` names it in errors; every `source` must be in `sources`.
    /// A file may declare sources of its own (`[sources.ID]` with `title`, `publisher` and
    /// optional `note` and `url`) and cite them; an id the library already has is refused.
    pub fn from_toml(text: &str, file: &str, sources: &Sources) -> Result<Self> {
        let mut raw: RawProfile = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        let mut own = Vec::new();
        for (id, spanned) in std::mem::take(&mut raw.sources) {
            if sources.contains(&id) {
                return Err(Parser { text, file, sources }.error(
                    spanned.span().start,
                    format!("source `{id}` is already a shipped source: cite it without declaring it, or give yours another id"),
                ));
            }
            let mut source = spanned.into_inner();
            source.id = id;
            own.push(source);
        }
        let merged = sources.with(own.iter().cloned());
        let mut profile = Parser {
            text,
            file,
            sources: &merged,
        }
        .profile(raw)?;
        profile.sources = own;
        Ok(profile)
    }

    /// Every setting the file writes, including iDRAC settings and platform overrides.
    pub fn settings(&self) -> impl Iterator<Item = &Setting> {
        let own = self.bios.values().chain(self.idrac.values().map(|s| &s.setting));
        let platforms = self
            .platforms
            .values()
            .flat_map(|p| p.bios.values().chain(p.idrac.values().map(|s| &s.setting)));
        own.chain(platforms)
    }

    /// How many of the file's settings are stated, used and inferred.
    pub fn confidence_counts(&self) -> ConfidenceCounts {
        ConfidenceCounts::of(self.settings())
    }

    /// Whether the profile targets `host` (unknown facts never exclude it). A generation that
    /// inherits another's settings (Bergamo from Genoa, by the shipped generation table) is
    /// targeted by a profile that names the one it inherits from.
    pub fn targets_host(&self, host: &HostFacts) -> bool {
        self.targets_host_with(host, crate::tables::shipped())
    }

    /// [`Profile::targets_host`] judged with `tables`' generation rules.
    pub(crate) fn targets_host_with(&self, host: &HostFacts, tables: &crate::tables::Tables) -> bool {
        let generation = match host.generation {
            Some(g) => self.generations.is_empty() || self.generations.iter().any(|&l| tables.counts_as(g, l)),
            None => true,
        };
        let model = host.model.is_none() || self.models.is_empty() || self.models.iter().any(|m| host.is_model(m));
        generation && model
    }

    /// What the profile targets, for listings: `all EPYC generations; any model; overrides
    /// for PowerEdge C6615`.
    pub fn targets(&self) -> String {
        let generations = if self.generations.is_empty() || Generation::ALL.iter().all(|g| self.generations.contains(g))
        {
            "all EPYC generations".to_owned()
        } else {
            host::list(&self.generations)
        };
        let models = if self.models.is_empty() {
            "any model".to_owned()
        } else {
            self.models.join(", ")
        };
        let mut out = format!("{generations}; {models}");
        let mut overrides: Vec<String> = Vec::new();
        for described in self.platforms.values().map(Platform::describe) {
            if !overrides.contains(&described) {
                overrides.push(described);
            }
        }
        if !overrides.is_empty() {
            out.push_str("; overrides for ");
            out.push_str(&overrides.join("; "));
        }
        out
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: Spanned<String>,
    description: String,
    #[serde(default)]
    extends: Option<Spanned<String>>,
    #[serde(default)]
    generations: Vec<Generation>,
    #[serde(default)]
    models: Vec<String>,
    #[serde(default)]
    cpu: Option<Cpu>,
    #[serde(default)]
    bios: BTreeMap<String, Spanned<RawSetting>>,
    #[serde(default)]
    idrac: BTreeMap<String, Spanned<RawIdracSetting>>,
    #[serde(default)]
    platform: BTreeMap<String, Spanned<RawPlatform>>,
    #[serde(default)]
    sources: BTreeMap<String, Spanned<crate::sources::Source>>,
    #[serde(default)]
    parameters: Option<Spanned<Parameters>>,
    #[serde(default)]
    boot: Option<RawBoot>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoot {
    #[serde(default)]
    mode: Option<Spanned<RawBootMode>>,
    #[serde(default)]
    order: Option<Spanned<RawBootList>>,
    #[serde(default)]
    disabled: Option<Spanned<RawBootList>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBootMode {
    value: Spanned<String>,
    why: Spanned<String>,
    source: Spanned<String>,
    confidence: Spanned<Confidence>,
    #[serde(default)]
    quote: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBootList {
    devices: Spanned<Vec<String>>,
    why: Spanned<String>,
    source: Spanned<String>,
    confidence: Spanned<Confidence>,
    #[serde(default)]
    quote: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatform {
    // The conditions of a `When`, spelled out: serde cannot deny unknown fields through a
    // flattened struct.
    #[serde(default)]
    models: Vec<String>,
    #[serde(default)]
    cpus: Vec<String>,
    #[serde(default)]
    sockets: Option<u32>,
    #[serde(default)]
    min_cores: Option<u32>,
    #[serde(default)]
    max_cores: Option<u32>,
    #[serde(default)]
    memory: Option<MemoryCondition>,
    #[serde(default)]
    min_threads: Option<u32>,
    #[serde(default)]
    max_threads: Option<u32>,
    #[serde(default)]
    generations: Vec<Generation>,
    #[serde(default)]
    bios: BTreeMap<String, Spanned<RawSetting>>,
    #[serde(default)]
    idrac: BTreeMap<String, Spanned<RawIdracSetting>>,
    #[serde(default)]
    unsupported: BTreeMap<String, Spanned<RawUnsupported>>,
}

/// What every setting and limit carries: the reason and its evidence (`at`: where the entry
/// starts, for a missing field).
struct RawBacking {
    at: usize,
    why: Option<Spanned<String>>,
    source: Option<Spanned<String>>,
    confidence: Option<Spanned<Confidence>>,
    quote: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetting {
    #[serde(default)]
    value: Option<RawValue>,
    #[serde(default)]
    prefer: Option<Vec<RawValue>>,
    #[serde(default)]
    accept: Option<Vec<String>>,
    #[serde(default)]
    intent: Option<String>,
    #[serde(default)]
    derive: Option<Bound>,
    #[serde(default)]
    sev_asids: Option<RawSevAsids>,
    #[serde(default)]
    leave: Option<bool>,
    // Optional here so that every missing one is reported in one run (`missing_fields`).
    #[serde(default)]
    why: Option<Spanned<String>>,
    #[serde(default)]
    source: Option<Spanned<String>>,
    #[serde(default)]
    confidence: Option<Spanned<Confidence>>,
    #[serde(default)]
    quote: Option<Spanned<String>>,
    #[serde(default)]
    generations: Vec<Generation>,
    #[serde(default)]
    when: When,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSevAsids {
    plain_sev: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIdracSetting {
    #[serde(default = "system_group")]
    group: AttributeGroup,
    #[serde(default)]
    value: Option<RawValue>,
    #[serde(default)]
    leave: Option<bool>,
    #[serde(default)]
    why: Option<Spanned<String>>,
    #[serde(default)]
    source: Option<Spanned<String>>,
    #[serde(default)]
    confidence: Option<Spanned<Confidence>>,
    #[serde(default)]
    quote: Option<Spanned<String>>,
    #[serde(default)]
    generations: Vec<Generation>,
    #[serde(default)]
    when: When,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUnsupported {
    #[serde(default)]
    values: Option<Vec<RawValue>>,
    #[serde(default)]
    why: Option<Spanned<String>>,
    #[serde(default)]
    source: Option<Spanned<String>>,
    #[serde(default)]
    confidence: Option<Spanned<Confidence>>,
    #[serde(default)]
    quote: Option<Spanned<String>>,
}

fn system_group() -> AttributeGroup {
    AttributeGroup::System
}

/// A TOML value that can be an attribute value: string, integer or boolean.
#[derive(Clone)]
struct RawValue(AttributeValue);

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawValue;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, an integer or a boolean")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValue, E> {
                Ok(RawValue(AttributeValue::String(v.to_owned())))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawValue, E> {
                Ok(RawValue(AttributeValue::Integer(v)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawValue, E> {
                i64::try_from(v)
                    .map(|i| RawValue(AttributeValue::Integer(i)))
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawValue, E> {
                Ok(RawValue(AttributeValue::Bool(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// The checked reason and evidence of a setting or limit.
struct Backing {
    why: String,
    source: String,
    confidence: Confidence,
    quote: Option<String>,
}

struct Parser<'a> {
    text: &'a str,
    file: &'a str,
    sources: &'a Sources,
}

impl Parser<'_> {
    fn error(&self, at: usize, message: String) -> Error {
        Error::Format {
            file: self.file.to_owned(),
            position: Some(Position::of(self.text, at)),
            message,
        }
    }

    fn profile(&self, raw: RawProfile) -> Result<Profile> {
        let missing = missing_fields(&raw);
        if !missing.is_empty() {
            return Err(Error::problems(
                self.file,
                missing
                    .into_iter()
                    .map(|(at, message)| (Some(Position::of(self.text, at)), message))
                    .collect(),
            ));
        }
        let name = raw.name.get_ref().trim().to_owned();
        let valid_name = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !valid_name {
            return Err(self.error(
                raw.name.span().start,
                format!(
                    "profile name `{name}` must be letters, digits, `.`, `_` or `-`, starting with a letter or digit"
                ),
            ));
        }
        let parameters = match raw.parameters {
            Some(spanned) => {
                let at = spanned.span().start;
                let parameters = spanned.into_inner();
                if parameters.cpu_max_sev_asids == Some(0) {
                    return Err(self.error(at, "`cpu_max_sev_asids` must be at least 1".to_owned()));
                }
                parameters
            }
            None => Parameters::default(),
        };
        let extends = raw.extends.as_ref().map(|e| e.get_ref().trim().to_owned());
        let extends_at = raw.extends.as_ref().map(|e| Position::of(self.text, e.span().start));
        let mut platforms = BTreeMap::new();
        for (key, spanned) in raw.platform {
            let span = spanned.span();
            let p = spanned.into_inner();
            let named = |list: &[String]| {
                list.iter()
                    .filter(|m| !m.trim().is_empty())
                    .cloned()
                    .collect::<Vec<_>>()
            };
            let when = When {
                models: named(&p.models),
                cpus: named(&p.cpus),
                sockets: p.sockets,
                min_cores: p.min_cores,
                max_cores: p.max_cores,
                memory: p.memory,
                min_threads: p.min_threads,
                max_threads: p.max_threads,
            };
            if when.is_empty() && p.generations.is_empty() {
                return Err(self.error(
                    span.start,
                    format!(
                        "platform `{key}` needs at least one condition: models, cpus, sockets, min_cores, max_cores, memory, min_threads, max_threads or generations (e.g. models = [\"PowerEdge C6615\"], cpus = [\"7552\"] or min_threads = 256)"
                    ),
                ));
            }
            let origin = format!("{name} [platform {key}]");
            let mut unsupported = BTreeMap::new();
            for (attribute, raw) in p.unsupported {
                let at = raw.span().start;
                let raw = raw.into_inner();
                let values = raw.values.unwrap_or_default();
                if values.is_empty() {
                    return Err(self.error(at, format!("unsupported {attribute} needs at least one value")));
                }
                let backing = self.backing(
                    &attribute,
                    RawBacking {
                        at,
                        why: raw.why,
                        source: raw.source,
                        confidence: raw.confidence,
                        quote: raw.quote,
                    },
                )?;
                unsupported.insert(
                    attribute.clone(),
                    Unsupported {
                        values: values.into_iter().map(|v| v.0).collect(),
                        why: backing.why,
                        source: backing.source,
                        confidence: backing.confidence,
                        quote: backing.quote,
                        origin: origin.clone(),
                        attribute,
                    },
                );
            }
            let (bios, mut left) = self.bios(p.bios, &origin)?;
            let (idrac, idrac_left) = self.idrac(p.idrac, &origin)?;
            left.extend(idrac_left);
            platforms.insert(
                key.clone(),
                Platform {
                    name: key,
                    when,
                    generations: p.generations,
                    bios,
                    idrac,
                    left,
                    unsupported,
                },
            );
        }
        let boot = match raw.boot {
            Some(b) => self.boot(b, &name)?,
            None => BootSection::default(),
        };
        let (bios, mut left) = self.bios(raw.bios, &name)?;
        let (idrac, idrac_left) = self.idrac(raw.idrac, &name)?;
        left.extend(idrac_left);
        Ok(Profile {
            boot,
            bios,
            idrac,
            left,
            name,
            description: raw.description.trim().to_owned(),
            extends,
            extends_at,
            generations: raw.generations,
            models: raw.models,
            cpu: raw.cpu,
            platforms,
            file: self.file.to_owned(),
            sources: Vec::new(),
            parameters,
        })
    }

    fn bios(
        &self,
        raw: BTreeMap<String, Spanned<RawSetting>>,
        origin: &str,
    ) -> Result<(BTreeMap<String, Setting>, Vec<Left>)> {
        let mut settings = BTreeMap::new();
        let mut left = Vec::new();
        for (attribute, s) in raw {
            let at = s.span().start;
            if redfish_client::oem::dell::is_secret_bios_attribute(&attribute) {
                return Err(self.error(
                    at,
                    format!(
                        "{attribute} is a BIOS password or its hash: a profile never holds one (set BIOS passwords with `rftune bios password`, which reads them from a private file, standard input, the environment or a prompt)"
                    ),
                ));
            }
            let s = s.into_inner();
            if self.leaves(&attribute, at, s.leave)? {
                let given = [
                    s.value.is_some(),
                    s.prefer.is_some(),
                    s.accept.is_some(),
                    s.intent.is_some(),
                    s.derive.is_some(),
                    s.sev_asids.is_some(),
                    s.confidence.is_some(),
                    s.quote.is_some(),
                    !s.generations.is_empty(),
                    !s.when.is_empty(),
                ];
                left.push(self.left(
                    Target::Bios,
                    attribute,
                    at,
                    s.why,
                    s.source,
                    given.contains(&true),
                    origin,
                )?);
                continue;
            }
            let wanted = self.wanted(&attribute, at, &s)?;
            let backing = self.backing(
                &attribute,
                RawBacking {
                    at,
                    why: s.why,
                    source: s.source,
                    confidence: s.confidence,
                    quote: s.quote,
                },
            )?;
            let setting = setting(attribute.clone(), wanted, backing, s.generations, s.when, origin);
            settings.insert(attribute, setting);
        }
        Ok((settings, left))
    }

    fn idrac(
        &self,
        raw: BTreeMap<String, Spanned<RawIdracSetting>>,
        origin: &str,
    ) -> Result<(BTreeMap<String, IdracSetting>, Vec<Left>)> {
        let mut settings = BTreeMap::new();
        let mut left = Vec::new();
        for (attribute, s) in raw {
            let at = s.span().start;
            let s = s.into_inner();
            if self.leaves(&attribute, at, s.leave)? {
                let given = [
                    s.value.is_some(),
                    s.confidence.is_some(),
                    s.quote.is_some(),
                    !s.generations.is_empty(),
                    !s.when.is_empty(),
                ];
                let target = Target::Idrac(s.group);
                left.push(self.left(target, attribute, at, s.why, s.source, given.contains(&true), origin)?);
                continue;
            }
            let Some(value) = s.value else {
                return Err(self.error(at, format!("{attribute} has no `value` (or `leave = true`)")));
            };
            let backing = self.backing(
                &attribute,
                RawBacking {
                    at,
                    why: s.why,
                    source: s.source,
                    confidence: s.confidence,
                    quote: s.quote,
                },
            )?;
            let setting = setting(
                attribute.clone(),
                Wanted::Value(value.0),
                backing,
                s.generations,
                s.when,
                origin,
            );
            settings.insert(
                attribute,
                IdracSetting {
                    group: s.group,
                    setting,
                },
            );
        }
        Ok((settings, left))
    }

    /// Whether an entry is `leave = true` (`leave = false` is refused: leave the key out).
    fn leaves(&self, attribute: &str, at: usize, leave: Option<bool>) -> Result<bool> {
        match leave {
            Some(false) => Err(self.error(at, format!("`leave` of {attribute} is `true` or absent"))),
            Some(true) => Ok(true),
            None => Ok(false),
        }
    }

    /// A `leave = true` entry: a `why`, optionally a `source`, and nothing that gives a value.
    #[allow(clippy::too_many_arguments)]
    fn left(
        &self,
        target: Target,
        attribute: String,
        at: usize,
        why: Option<Spanned<String>>,
        source: Option<Spanned<String>>,
        gives_more: bool,
        origin: &str,
    ) -> Result<Left> {
        if gives_more {
            return Err(self.error(
                at,
                format!(
                    "{attribute} is left alone (`leave = true`), so it takes only `why` and an optional `source`: no value, confidence, quote, generations or when"
                ),
            ));
        }
        let why = self.why(&attribute, at, why)?;
        let source = match source {
            Some(id) => Some(self.source_id(&attribute, &id)?),
            None => None,
        };
        Ok(Left {
            target,
            attribute,
            why,
            source,
            origin: origin.to_owned(),
        })
    }

    /// `[boot]`: the mode as a BIOS value, the order and the disabled devices as device
    /// references in the one grammar of [`crate::boot`].
    fn boot(&self, raw: RawBoot, profile: &str) -> Result<BootSection> {
        let origin = format!("{profile} [boot]");
        let mode = match raw.mode {
            Some(m) => {
                let m = m.into_inner();
                let value = m.value.get_ref().trim().to_owned();
                if value.is_empty() {
                    return Err(self.error(m.value.span().start, "`boot.mode` needs a value (e.g. \"Uefi\")".into()));
                }
                let backing = self.backing(
                    "boot.mode",
                    RawBacking {
                        at: m.value.span().start,
                        why: Some(m.why),
                        source: Some(m.source),
                        confidence: Some(m.confidence),
                        quote: m.quote,
                    },
                )?;
                Some(boot_entry(value, backing, &origin))
            }
            None => None,
        };
        let list = |raw: Option<Spanned<RawBootList>>, label: &str| -> Result<Option<BootEntry<Vec<DeviceRef>>>> {
            let Some(raw) = raw else { return Ok(None) };
            let raw = raw.into_inner();
            let at = raw.devices.span().start;
            let texts = raw.devices.into_inner();
            if texts.is_empty() {
                return Err(self.error(at, format!("`{label}` lists no device")));
            }
            let mut devices = Vec::new();
            for text in &texts {
                let device = DeviceRef::parse(text).map_err(|e| self.error(at, format!("{label}: {e}")))?;
                if devices.contains(&device) {
                    return Err(self.error(at, format!("{label} lists `{device}` twice")));
                }
                devices.push(device);
            }
            let backing = self.backing(
                label,
                RawBacking {
                    at,
                    why: Some(raw.why),
                    source: Some(raw.source),
                    confidence: Some(raw.confidence),
                    quote: raw.quote,
                },
            )?;
            Ok(Some(boot_entry(devices, backing, &origin)))
        };
        Ok(BootSection {
            mode,
            order: list(raw.order, "boot.order")?,
            disabled: list(raw.disabled, "boot.disabled")?,
        })
    }

    /// Exactly one of `value`, `prefer`, `accept` (with `intent`) and `derive`.
    fn wanted(&self, attribute: &str, at: usize, s: &RawSetting) -> Result<Wanted> {
        let given = [
            s.value.is_some(),
            s.prefer.is_some(),
            s.accept.is_some(),
            s.derive.is_some(),
            s.sev_asids.is_some(),
        ]
        .iter()
        .filter(|g| **g)
        .count();
        if given != 1 {
            return Err(self.error(
                at,
                format!(
                    "{attribute} needs exactly one of `value`, `prefer`, `accept` (with `intent`), `derive` or `sev_asids`"
                ),
            ));
        }
        if let Some(split) = &s.sev_asids {
            if split.plain_sev == 0 {
                return Err(self.error(
                    at,
                    format!("`sev_asids` of {attribute} must keep at least one plain-SEV ASID (`plain_sev` ≥ 1)"),
                ));
            }
            return Ok(Wanted::SevAsids {
                plain_sev: split.plain_sev,
            });
        }
        if s.intent.is_some() && s.accept.is_none() {
            return Err(self.error(at, format!("`intent` of {attribute} goes with `accept`")));
        }
        if let Some(v) = &s.value {
            return Ok(Wanted::Value(v.0.clone()));
        }
        if let Some(values) = &s.prefer {
            let values: Vec<AttributeValue> = values.iter().map(|v| v.0.clone()).collect();
            let Some(first) = values.first() else {
                return Err(self.error(at, format!("`prefer` of {attribute} lists no value")));
            };
            if values.iter().any(|v| v.type_name() != first.type_name()) {
                return Err(self.error(at, format!("`prefer` of {attribute} mixes value types")));
            }
            if let Some(dup) = values.iter().enumerate().find(|(i, v)| values[..*i].contains(v)) {
                return Err(self.error(at, format!("`prefer` of {attribute} lists {} twice", dup.1)));
            }
            return Ok(Wanted::Prefer(values));
        }
        if let Some(tokens) = &s.accept {
            let tokens: Vec<String> = tokens.iter().map(|t| t.trim().to_owned()).collect();
            if tokens.is_empty() || tokens.iter().any(String::is_empty) {
                return Err(self.error(at, format!("`accept` of {attribute} needs non-empty tokens")));
            }
            let intent = s.intent.as_deref().map(str::trim).unwrap_or_default();
            if intent.is_empty() || intent.contains('\n') {
                return Err(self.error(
                    at,
                    format!("`accept` of {attribute} needs an `intent`: one line saying what the tokens mean"),
                ));
            }
            return Ok(Wanted::Accept {
                intent: intent.to_owned(),
                tokens,
            });
        }
        match s.derive {
            Some(bound) => Ok(Wanted::Derive(bound)),
            None => Err(self.error(at, format!("{attribute} has no value"))),
        }
    }

    /// Checks `why`, the source id, and that a stated setting quotes its source.
    fn backing(&self, attribute: &str, raw: RawBacking) -> Result<Backing> {
        let why = self.why(attribute, raw.at, raw.why)?;
        let Some(source) = raw.source else {
            return Err(self.error(raw.at, missing(attribute, "source")));
        };
        let id = self.source_id(attribute, &source)?;
        let Some(confidence) = raw.confidence else {
            return Err(self.error(raw.at, missing(attribute, "confidence")));
        };
        let quote = raw
            .quote
            .as_ref()
            .map(|q| q.get_ref().split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|q| !q.is_empty());
        if *confidence.get_ref() == Confidence::Stated && quote.is_none() {
            return Err(self.error(
                confidence.span().start,
                format!("{attribute} is stated, so it needs a `quote`: the words of `{id}` that say so"),
            ));
        }
        Ok(Backing {
            why,
            source: id,
            confidence: *confidence.get_ref(),
            quote,
        })
    }

    /// A `why`: present, one non-empty line.
    fn why(&self, attribute: &str, at: usize, why: Option<Spanned<String>>) -> Result<String> {
        let Some(why) = why else {
            return Err(self.error(at, missing(attribute, "why")));
        };
        let text = why.get_ref().trim();
        if text.is_empty() || text.contains('\n') {
            return Err(self.error(
                why.span().start,
                format!("`why` of {attribute} must be one non-empty line"),
            ));
        }
        Ok(text.to_owned())
    }

    /// A source id this file may cite.
    fn source_id(&self, attribute: &str, source: &Spanned<String>) -> Result<String> {
        let id = source.get_ref().trim();
        if !self.sources.contains(id) {
            let suggestions = suggest::closest(id, self.sources.ids());
            let hint = if suggestions.is_empty() {
                format!("known sources: {}", self.sources.ids().collect::<Vec<_>>().join(", "))
            } else {
                format!("did you mean {}?", suggestions.join(", "))
            };
            return Err(self.error(
                source.span().start,
                format!("{attribute} cites unknown source `{id}`; {hint}"),
            ));
        }
        Ok(id.to_owned())
    }
}

/// `NumaNodesPerSocket has no `why``: one missing field, as every report of them spells it.
fn missing(attribute: &str, field: &str) -> String {
    format!("{attribute} has no `{field}`")
}

/// Every field the format requires that the file leaves out, with where its entry starts: all
/// of them at once, so that a file is fixed in one pass rather than one error at a time.
fn missing_fields(raw: &RawProfile) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut setting = |attribute: &str, at: usize, s: &RawSetting| {
        if s.leave == Some(false) {
            out.push((at, format!("`leave` of {attribute} is `true` or absent")));
            return;
        }
        if s.leave == Some(true) {
            if s.why.is_none() {
                out.push((at, missing(attribute, "why")));
            }
            return;
        }
        let forms = [
            s.value.is_some(),
            s.prefer.is_some(),
            s.accept.is_some(),
            s.derive.is_some(),
            s.sev_asids.is_some(),
        ];
        if !forms.contains(&true) {
            out.push((
                at,
                format!("{attribute} has no value: give one of `value`, `prefer`, `accept` (with `intent`), `derive` or `sev_asids` (or `leave = true`)"),
            ));
        }
        for (field, absent) in [
            ("why", s.why.is_none()),
            ("source", s.source.is_none()),
            ("confidence", s.confidence.is_none()),
        ] {
            if absent {
                out.push((at, missing(attribute, field)));
            }
        }
    };
    let settings = raw
        .bios
        .iter()
        .chain(raw.platform.values().flat_map(|p| p.get_ref().bios.iter()));
    for (attribute, s) in settings {
        setting(attribute, s.span().start, s.get_ref());
    }
    let idrac = raw
        .idrac
        .iter()
        .chain(raw.platform.values().flat_map(|p| p.get_ref().idrac.iter()));
    for (attribute, s) in idrac {
        let (at, s) = (s.span().start, s.get_ref());
        let needed: &[(&str, bool)] = if s.leave == Some(true) {
            &[("why", s.why.is_none())]
        } else {
            &[
                ("value", s.value.is_none()),
                ("why", s.why.is_none()),
                ("source", s.source.is_none()),
                ("confidence", s.confidence.is_none()),
            ]
        };
        for (field, absent) in needed {
            if *absent {
                out.push((at, missing(attribute, field)));
            }
        }
    }
    for (attribute, u) in raw.platform.values().flat_map(|p| p.get_ref().unsupported.iter()) {
        let (at, u) = (u.span().start, u.get_ref());
        for (field, absent) in [
            ("values", u.values.is_none()),
            ("why", u.why.is_none()),
            ("source", u.source.is_none()),
            ("confidence", u.confidence.is_none()),
        ] {
            if absent {
                out.push((at, format!("unsupported {}", missing(attribute, field))));
            }
        }
    }
    out.sort_by_key(|(at, _)| *at);
    out
}

fn boot_entry<T>(value: T, backing: Backing, origin: &str) -> BootEntry<T> {
    BootEntry {
        value,
        why: backing.why,
        source: backing.source,
        confidence: backing.confidence,
        quote: backing.quote,
        origin: origin.to_owned(),
    }
}

fn setting(
    attribute: String,
    wanted: Wanted,
    backing: Backing,
    generations: Vec<Generation>,
    when: When,
    origin: &str,
) -> Setting {
    Setting {
        attribute,
        wanted,
        why: backing.why,
        source: backing.source,
        confidence: backing.confidence,
        quote: backing.quote,
        generations,
        when,
        origin: origin.to_owned(),
        excluded: Vec::new(),
        decisions: Vec::new(),
        asid_split: None,
        confidence_note: None,
        bound_from: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources() -> Sources {
        Sources::from_toml("[s]\ntitle = \"T\"\npublisher = \"P\"\n", "sources.toml").unwrap()
    }

    const MINIMAL: &str = r#"
name = "p"
description = "d"
[bios.NumaNodesPerSocket]
value = "1"
why = "w"
source = "s"
confidence = "stated"
quote = "one node"
[bios.CpuMinSevAsid]
value = 100
why = "w"
source = "s"
confidence = "inferred"
generations = ["milan"]
[bios.Flag]
value = true
why = "w"
source = "s"
confidence = "used"
[idrac."ServerPwr.1.PowerCapSetting"]
value = "Disabled"
why = "w"
source = "s"
confidence = "stated"
quote = "remove   capping"
[idrac."Lockdown.1.SystemLockdown"]
group = "iDRAC"
value = "Disabled"
why = "w"
source = "s"
confidence = "inferred"
[platform.c]
models = ["PowerEdge C6615"]
[platform.c.bios.NumaNodesPerSocket]
value = "2"
why = "w"
source = "s"
confidence = "inferred"
"#;

    #[test]
    fn values_keep_their_toml_types() {
        let p = Profile::from_toml(MINIMAL, "p.toml", &sources()).unwrap();
        assert_eq!(p.bios["NumaNodesPerSocket"].wanted, Wanted::Value("1".into()));
        assert_eq!(
            p.bios["CpuMinSevAsid"].wanted,
            Wanted::Value(AttributeValue::Integer(100))
        );
        assert_eq!(p.bios["Flag"].wanted, Wanted::Value(AttributeValue::Bool(true)));
        assert_eq!(p.bios["CpuMinSevAsid"].generations, [Generation::Milan]);
        assert_eq!(p.idrac["ServerPwr.1.PowerCapSetting"].group, AttributeGroup::System);
        assert_eq!(p.idrac["Lockdown.1.SystemLockdown"].group, AttributeGroup::Idrac);
        assert_eq!(p.platforms["c"].bios["NumaNodesPerSocket"].origin, "p [platform c]");
        assert_eq!(p.bios["Flag"].origin, "p");
        // Quotes keep their words, not their line breaks or runs of spaces.
        assert_eq!(
            p.idrac["ServerPwr.1.PowerCapSetting"].setting.quote.as_deref(),
            Some("remove capping")
        );
        let counts = p.confidence_counts();
        assert_eq!((counts.stated, counts.used, counts.inferred), (2, 1, 3));
        assert_eq!(
            p.targets(),
            "all EPYC generations; any model; overrides for PowerEdge C6615"
        );
    }

    #[test]
    fn semantic_errors_carry_positions() {
        let bad_why = MINIMAL.replacen("why = \"w\"", "why = \"\"", 1);
        let err = Profile::from_toml(&bad_why, "p.toml", &sources()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.toml:6:7: `why` of NumaNodesPerSocket must be one non-empty line"
        );
        let bad_name = MINIMAL.replacen("name = \"p\"", "name = \"a b\"", 1);
        let err = Profile::from_toml(&bad_name, "p.toml", &sources()).unwrap_err();
        assert!(err.to_string().starts_with("p.toml:2:8: profile name `a b`"), "{err}");
        let no_models = MINIMAL.replacen("models = [\"PowerEdge C6615\"]", "models = []", 1);
        let err = Profile::from_toml(&no_models, "p.toml", &sources()).unwrap_err();
        assert!(
            err.to_string()
                .contains("platform `c` needs at least one condition: models, cpus, sockets"),
            "{err}"
        );
    }

    #[test]
    fn a_stated_setting_without_a_quote_is_refused_where_its_confidence_is() {
        let unquoted = MINIMAL.replacen("quote = \"one node\"\n", "", 1);
        let err = Profile::from_toml(&unquoted, "p.toml", &sources()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "p.toml:8:14: NumaNodesPerSocket is stated, so it needs a `quote`: the words of `s` that say so"
        );
        let empty = MINIMAL.replacen("quote = \"one node\"", "quote = \"  \"", 1);
        assert!(Profile::from_toml(&empty, "p.toml", &sources()).is_err());
    }

    #[test]
    fn a_profile_never_holds_a_bios_password_or_its_hash() {
        for name in ["SetupPassword", "SHA256SetupPassword", "SHA256SystemPasswordSalt"] {
            let text = MINIMAL.replacen("[bios.Flag]", &format!("[bios.{name}]"), 1);
            let err = Profile::from_toml(&text, "p.toml", &sources()).unwrap_err().to_string();
            assert!(err.contains(&format!("{name} is a BIOS password or its hash")), "{err}");
        }
    }

    #[test]
    fn floats_and_tables_are_not_values() {
        let float = MINIMAL.replacen("value = 100", "value = 1.5", 1);
        let err = Profile::from_toml(&float, "p.toml", &sources()).unwrap_err();
        assert!(
            err.to_string().contains("expected a string, an integer or a boolean"),
            "{err}"
        );
    }

    const CHOICES: &str = r#"
name = "c"
description = "d"
[bios.NumaNodesPerSocket]
prefer = ["4", "2", "1"]
why = "w"
source = "s"
confidence = "inferred"
when = { sockets = 2, cpus = ["7552"] }
[bios.DeterminismSlider]
accept = ["PerfDeterminism", "PerformanceDeterminism"]
intent = "performance determinism"
why = "w"
source = "s"
confidence = "inferred"
[bios.CpuMinSevAsid]
derive = "upper_bound"
why = "w"
source = "s"
confidence = "inferred"
[platform.rome48]
cpus = ["7552"]
[platform.rome48.unsupported.NumaNodesPerSocket]
values = ["4"]
why = "six dies"
source = "s"
confidence = "inferred"
"#;

    #[test]
    fn choices_accepted_tokens_derivations_conditions_and_limits_parse() {
        let p = Profile::from_toml(CHOICES, "c.toml", &sources()).unwrap();
        let nps = &p.bios["NumaNodesPerSocket"];
        assert_eq!(nps.wanted, Wanted::Prefer(vec!["4".into(), "2".into(), "1".into()]));
        assert_eq!(nps.wanted.to_string(), "4 | 2 | 1");
        assert_eq!(nps.when.sockets, Some(2));
        assert_eq!(nps.when.to_string(), "sockets = 2, CPUs 7552");
        let det = &p.bios["DeterminismSlider"];
        assert_eq!(
            det.wanted.to_string(),
            "PerfDeterminism | PerformanceDeterminism (performance determinism)"
        );
        assert_eq!(det.wanted.first(), Some("PerfDeterminism".into()));
        assert_eq!(p.bios["CpuMinSevAsid"].wanted, Wanted::Derive(Bound::UpperBound));
        assert_eq!(p.bios["CpuMinSevAsid"].wanted.first(), None);
        let limit = &p.platforms["rome48"].unsupported["NumaNodesPerSocket"];
        assert_eq!(limit.values, ["4".into()]);
        assert_eq!(limit.origin, "c [platform rome48]");
        assert_eq!(p.targets(), "all EPYC generations; any model; overrides for EPYC 7552");
        // JSON: the first choice stays under "value", the alternatives come beside it.
        let json = serde_json::to_value(nps).unwrap();
        assert_eq!(json["value"], "4");
        assert_eq!(json["prefer"], serde_json::json!(["4", "2", "1"]));
        assert_eq!(json["when"]["sockets"], 2);
        let json = serde_json::to_value(det).unwrap();
        assert_eq!(json["intent"], "performance determinism");
        assert!(json.get("value").is_none());
    }

    #[test]
    fn a_setting_needs_exactly_one_way_of_giving_its_value() {
        let cases = [
            (
                CHOICES.replacen("prefer = [\"4\", \"2\", \"1\"]", "prefer = [\"4\"]\nvalue = \"1\"", 1),
                "NumaNodesPerSocket needs exactly one of `value`, `prefer`, `accept` (with `intent`), `derive` or `sev_asids`",
            ),
            (
                CHOICES.replacen("prefer = [\"4\", \"2\", \"1\"]", "prefer = []", 1),
                "`prefer` of NumaNodesPerSocket lists no value",
            ),
            (
                CHOICES.replacen("prefer = [\"4\", \"2\", \"1\"]", "prefer = [\"4\", 2]", 1),
                "`prefer` of NumaNodesPerSocket mixes value types",
            ),
            (
                CHOICES.replacen("prefer = [\"4\", \"2\", \"1\"]", "prefer = [\"4\", \"4\"]", 1),
                "`prefer` of NumaNodesPerSocket lists 4 twice",
            ),
            (
                CHOICES.replacen("intent = \"performance determinism\"\n", "", 1),
                "`accept` of DeterminismSlider needs an `intent`",
            ),
            (
                CHOICES.replacen(
                    "derive = \"upper_bound\"",
                    "derive = \"upper_bound\"\nintent = \"x\"",
                    1,
                ),
                "`intent` of CpuMinSevAsid goes with `accept`",
            ),
            (
                CHOICES.replacen("sockets = 2", "socket = 2", 1),
                "unknown field `socket`",
            ),
            (
                CHOICES.replacen("values = [\"4\"]", "values = []", 1),
                "unsupported NumaNodesPerSocket needs at least one value",
            ),
        ];
        for (text, want) in cases {
            let err = Profile::from_toml(&text, "c.toml", &sources()).unwrap_err().to_string();
            assert!(err.starts_with("c.toml:") && err.contains(want), "{want}: {err}");
        }
    }

    const BOOT: &str = r#"
name = "b"
description = "d"
[boot.mode]
value = "Uefi"
why = "w"
source = "s"
confidence = "inferred"
[boot.order]
devices = ["pxe", "disk:2", "NIC.HttpDevice.1-1"]
why = "w"
source = "s"
confidence = "inferred"
[boot.disabled]
devices = ["optical"]
why = "w"
source = "s"
confidence = "stated"
quote = "no optical boot"
"#;

    #[test]
    fn a_boot_section_parses_with_its_evidence_and_refuses_what_it_does_not_know() {
        let p = Profile::from_toml(BOOT, "b.toml", &sources()).unwrap();
        let mode = p.boot.mode.as_ref().unwrap();
        assert_eq!((mode.value.as_str(), mode.origin.as_str()), ("Uefi", "b [boot]"));
        let order: Vec<String> = p
            .boot
            .order
            .as_ref()
            .unwrap()
            .value
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(order, ["pxe", "disk:2", "NIC.HttpDevice.1-1"]);
        assert_eq!(
            p.boot.disabled.as_ref().unwrap().quote.as_deref(),
            Some("no optical boot")
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json["boot"]["order"]["value"],
            serde_json::json!(["pxe", "disk:2", "NIC.HttpDevice.1-1"])
        );
        let cases = [
            (
                BOOT.replacen("devices = [\"optical\"]", "devices = [\"optcal\"]", 1),
                "boot.disabled: `optcal` is neither a device class",
            ),
            (
                BOOT.replacen("devices = [\"optical\"]", "devices = []", 1),
                "`boot.disabled` lists no device",
            ),
            (
                BOOT.replacen("\"disk:2\"", "\"pxe:1\"", 1),
                "boot.order lists `pxe` twice",
            ),
            (
                BOOT.replacen("[boot.mode]", "[boot.mode]\nfirst = true", 1),
                "unknown field `first`",
            ),
            (
                BOOT.replacen("[boot.mode]", "[boot.once]\nvalue = \"Pxe\"\n[boot.mode]", 1),
                "unknown field `once`",
            ),
            (
                BOOT.replacen("quote = \"no optical boot\"\n", "", 1),
                "boot.disabled is stated, so it needs a `quote`",
            ),
            (
                BOOT.replacen("source = \"s\"", "source = \"nope\"", 1),
                "boot.mode cites unknown source `nope`",
            ),
        ];
        for (text, want) in cases {
            let err = Profile::from_toml(&text, "b.toml", &sources()).unwrap_err().to_string();
            assert!(err.starts_with("b.toml:") && err.contains(want), "{want}: {err}");
        }
    }

    #[test]
    fn a_knob_left_alone_takes_a_why_and_an_optional_source_only() {
        let text = "name = \"l\"\ndescription = \"d\"\n[bios.LogicalProc]\nleave = true\nwhy = \"site\"\n[idrac.\"ServerPwr.1.PowerCapSetting\"]\nleave = true\nwhy = \"site\"\nsource = \"s\"\n";
        let p = Profile::from_toml(text, "l.toml", &sources()).unwrap();
        assert!(p.bios.is_empty() && p.idrac.is_empty());
        let left: Vec<(&str, Target, Option<&str>)> = p
            .left
            .iter()
            .map(|l| (l.attribute.as_str(), l.target, l.source.as_deref()))
            .collect();
        assert_eq!(
            left,
            [
                ("LogicalProc", Target::Bios, None),
                (
                    "ServerPwr.1.PowerCapSetting",
                    Target::Idrac(AttributeGroup::System),
                    Some("s")
                )
            ]
        );
        for (bad, want) in [
            (
                text.replacen("leave = true\nwhy", "leave = true\nvalue = \"Enabled\"\nwhy", 1),
                "takes only `why`",
            ),
            (
                text.replacen("leave = true", "leave = false", 1),
                "`leave` of LogicalProc is `true` or absent",
            ),
            (
                text.replacen("why = \"site\"\n[idrac", "[idrac", 1),
                "LogicalProc has no `why`",
            ),
        ] {
            let err = Profile::from_toml(&bad, "l.toml", &sources()).unwrap_err().to_string();
            assert!(err.contains(want), "{want}: {err}");
        }
    }

    #[test]
    fn idrac_settings_take_a_fixed_value_only() {
        let text = MINIMAL.replacen(
            "group = \"iDRAC\"\nvalue = \"Disabled\"",
            "group = \"iDRAC\"\nprefer = [\"Disabled\"]",
            1,
        );
        let err = Profile::from_toml(&text, "p.toml", &sources()).unwrap_err();
        assert!(err.to_string().contains("unknown field `prefer`"), "{err}");
    }

    #[test]
    fn conditions_exclude_only_hosts_whose_facts_contradict_them() {
        let when = When {
            sockets: Some(2),
            cpus: vec!["7552".into()],
            min_cores: Some(32),
            ..When::default()
        };
        assert_eq!(when.excludes(&HostFacts::default()), None);
        let host = HostFacts {
            cpu: Some("AMD EPYC 8534P 64-Core Processor".into()),
            sockets: Some(1),
            cores: Some(64),
            ..HostFacts::default()
        };
        assert_eq!(
            when.excludes(&host).as_deref(),
            Some("applies when sockets = 2; this host has 1 and CPUs 7552; this host has an EPYC 8534P")
        );
        let small = HostFacts {
            cores: Some(16),
            ..HostFacts::default()
        };
        assert_eq!(
            when.excludes(&small).as_deref(),
            Some("applies when at least 32 cores per CPU; this host has 16")
        );
    }

    /// One condition language, two readings: a setting's `when` stands unless a known fact
    /// contradicts it; a platform applies only when every fact it names is known and holds.
    #[test]
    fn a_platform_needs_every_condition_known_where_a_setting_only_needs_none_contradicted() {
        let two_sockets_unbalanced = When {
            sockets: Some(2),
            memory: Some(MemoryCondition::Unbalanced),
            ..When::default()
        };
        let unknown = HostFacts::default();
        assert_eq!(two_sockets_unbalanced.excludes(&unknown), None);
        assert!(!two_sockets_unbalanced.holds_for(&unknown));
        let two_sockets = HostFacts {
            sockets: Some(2),
            ..HostFacts::default()
        };
        // Memory not read: a setting still applies, a platform does not.
        assert_eq!(two_sockets_unbalanced.excludes(&two_sockets), None);
        assert!(!two_sockets_unbalanced.holds_for(&two_sockets));
        assert!(When::default().holds_for(&unknown));
        assert_eq!(two_sockets_unbalanced.describe(), "2 socket(s), unbalanced memory");
        // A platform may now name sockets or core counts, not only models, CPUs and memory.
        let text = MINIMAL.replacen("models = [\"PowerEdge C6615\"]", "sockets = 1", 1);
        let p = Profile::from_toml(&text, "p.toml", &sources()).unwrap();
        assert!(p.platforms["c"].matches(&HostFacts {
            sockets: Some(1),
            ..HostFacts::default()
        }));
        assert!(!p.platforms["c"].matches(&two_sockets));
    }

    #[test]
    fn targeting_follows_generations_and_models() {
        let mut p = Profile::from_toml(MINIMAL, "p.toml", &sources()).unwrap();
        p.generations = vec![Generation::Genoa];
        p.models = vec!["PowerEdge R7625".into()];
        let host = |model: Option<&str>, generation| HostFacts {
            model: model.map(str::to_owned),
            generation,
            ..HostFacts::default()
        };
        assert!(p.targets_host(&host(Some("PowerEdge R7625"), Some(Generation::Genoa))));
        assert!(p.targets_host(&host(None, None)));
        assert!(!p.targets_host(&host(None, Some(Generation::Milan))));
        assert!(!p.targets_host(&host(Some("PowerEdge R7525"), None)));
        assert_eq!(p.targets(), "genoa; PowerEdge R7625; overrides for PowerEdge C6615");
    }

    #[test]
    fn platforms_match_models_and_cpus_and_unknown_facts_match_nothing() {
        let p = Profile::from_toml(CHOICES, "c.toml", &sources()).unwrap();
        let platform = &p.platforms["rome48"];
        let host = |cpu: Option<&str>| HostFacts {
            cpu: cpu.map(str::to_owned),
            ..HostFacts::default()
        };
        assert!(platform.matches(&host(Some("AMD EPYC 7552 48-Core Processor"))));
        assert!(!platform.matches(&host(Some("AMD EPYC 7642 48-Core Processor"))));
        assert!(!platform.matches(&host(None)));
    }
}
