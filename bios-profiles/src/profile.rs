//! The profile file format (TOML) and its in-memory form: settings with value, reason, source and confidence.
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
//! source = "dell-omsa-sysprofile"           # an id from sources.toml
//! confidence = "stated"                     # stated | used | inferred
//! generations = ["genoa"]                   # optional: only on these generations
//!
//! [idrac."ServerPwr.1.PowerCapSetting"]
//! group = "System"                          # System | iDRAC | LifecycleController; default System
//! value = "Disabled"
//! why = "..."
//! source = "dell-c6615-note"
//! confidence = "stated"
//!
//! [platform.c6615]                          # applied when the host model matches
//! models = ["PowerEdge C6615"]
//! [platform.c6615.bios.NumaNodesPerSocket]
//! value = "1"
//! why = "..."
//! source = "dell-c6615-note"
//! confidence = "inferred"
//! ```

use crate::error::{Error, Position, Result};
use crate::host::{self, Generation, HostFacts};
use crate::sources::Sources;
use crate::suggest;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::AttributeValue;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

/// How sure we are of a recommended value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// A cited source says so.
    Stated,
    /// Dell or AMD shipped it in a published configuration.
    Used,
    /// Our own reasoning.
    Inferred,
}

impl Confidence {
    /// The name used in files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stated => "stated",
            Self::Used => "used",
            Self::Inferred => "inferred",
        }
    }
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an attribute lives: the BIOS, or one of the iDRAC's `DellAttributes` resources.
///
/// Serialises (flattened into its parent) as `"target": "bios"` or
/// `"target": "idrac", "group": "System"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "target", content = "group", rename_all = "snake_case")]
pub enum Target {
    /// `Systems/System.Embedded.1/Bios`.
    Bios,
    /// `Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/<group>`.
    Idrac(AttributeGroup),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bios => f.write_str("BIOS"),
            Self::Idrac(group) => write!(f, "iDRAC {group}"),
        }
    }
}

/// One recommended attribute value with its justification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The attribute name (`ProcCStates`, `ServerPwr.1.PowerCapSetting`).
    pub attribute: String,
    /// The value to set.
    pub value: AttributeValue,
    /// Why, in one line.
    pub why: String,
    /// The id of the source that backs it.
    pub source: String,
    /// How sure we are.
    pub confidence: Confidence,
    /// The generations it applies to; empty means all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub generations: Vec<Generation>,
    /// Which profile (and platform override) wrote it: `base`, `base [platform c6615]`.
    pub origin: String,
}

impl Setting {
    /// Whether it applies to a host of generation `generation` (unknown generations: yes).
    pub fn applies_to(&self, generation: Option<Generation>) -> bool {
        match generation {
            Some(g) => self.generations.is_empty() || self.generations.contains(&g),
            None => true,
        }
    }
}

/// A setting of a `DellAttributes` resource on the iDRAC.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdracSetting {
    /// Which resource holds the attribute.
    pub group: AttributeGroup,
    /// The attribute and its value; iDRAC enumerations are display strings.
    #[serde(flatten)]
    pub setting: Setting,
}

/// Settings that apply only on some PowerEdge models.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Platform {
    /// The key in the file (`c6615`).
    pub name: String,
    /// The models it applies to (`PowerEdge C6615`), compared case-insensitively.
    pub models: Vec<String>,
    /// BIOS settings, by attribute.
    pub bios: BTreeMap<String, Setting>,
    /// iDRAC settings, by attribute.
    pub idrac: BTreeMap<String, IdracSetting>,
}

impl Platform {
    /// Whether this override applies to `host`.
    pub fn matches(&self, host: &HostFacts) -> bool {
        self.models.iter().any(|m| host.is_model(m))
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
    /// Per-model overrides, by key.
    pub platforms: BTreeMap<String, Platform>,
    /// The file it came from, as named when loading.
    pub file: String,
}

/// How many settings carry each confidence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConfidenceCounts {
    /// `stated`.
    pub stated: usize,
    /// `used`.
    pub used: usize,
    /// `inferred`.
    pub inferred: usize,
}

impl ConfidenceCounts {
    /// Counts `settings`.
    pub fn of<'a>(settings: impl IntoIterator<Item = &'a Setting>) -> Self {
        let mut counts = Self::default();
        for s in settings {
            match s.confidence {
                Confidence::Stated => counts.stated += 1,
                Confidence::Used => counts.used += 1,
                Confidence::Inferred => counts.inferred += 1,
            }
        }
        counts
    }

    /// All settings.
    pub fn total(&self) -> usize {
        self.stated + self.used + self.inferred
    }
}

impl Profile {
    /// Parses one profile file. `file` names it in errors; every `source` must be in `sources`.
    pub fn from_toml(text: &str, file: &str, sources: &Sources) -> Result<Self> {
        let raw: RawProfile = toml::from_str(text).map_err(|e| Error::Format {
            file: file.to_owned(),
            position: e.span().map(|s| Position::of(text, s.start)),
            message: one_line(e.message()),
        })?;
        Parser { text, file, sources }.profile(raw)
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

    /// Whether the profile targets `host` (unknown facts never exclude it).
    pub fn targets_host(&self, host: &HostFacts) -> bool {
        let generation = match host.generation {
            Some(g) => self.generations.is_empty() || self.generations.contains(&g),
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
        let overrides: Vec<&str> = self
            .platforms
            .values()
            .flat_map(|p| p.models.iter().map(String::as_str))
            .collect();
        if !overrides.is_empty() {
            out.push_str("; overrides for ");
            out.push_str(&overrides.join(", "));
        }
        out
    }
}

/// Collapses a multi-line parser message into one line.
pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
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
    bios: BTreeMap<String, RawSetting>,
    #[serde(default)]
    idrac: BTreeMap<String, RawIdracSetting>,
    #[serde(default)]
    platform: BTreeMap<String, Spanned<RawPlatform>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlatform {
    models: Vec<String>,
    #[serde(default)]
    bios: BTreeMap<String, RawSetting>,
    #[serde(default)]
    idrac: BTreeMap<String, RawIdracSetting>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSetting {
    value: RawValue,
    why: Spanned<String>,
    source: Spanned<String>,
    confidence: Confidence,
    #[serde(default)]
    generations: Vec<Generation>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIdracSetting {
    #[serde(default = "system_group")]
    group: AttributeGroup,
    value: RawValue,
    why: Spanned<String>,
    source: Spanned<String>,
    confidence: Confidence,
    #[serde(default)]
    generations: Vec<Generation>,
}

fn system_group() -> AttributeGroup {
    AttributeGroup::System
}

/// A TOML value that can be an attribute value: string, integer or boolean.
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
        let extends = raw.extends.as_ref().map(|e| e.get_ref().trim().to_owned());
        let extends_at = raw.extends.as_ref().map(|e| Position::of(self.text, e.span().start));
        let mut platforms = BTreeMap::new();
        for (key, spanned) in raw.platform {
            let span = spanned.span();
            let p = spanned.into_inner();
            if p.models.iter().all(|m| m.trim().is_empty()) {
                return Err(self.error(
                    span.start,
                    format!("platform `{key}` needs at least one model (e.g. models = [\"PowerEdge C6615\"])"),
                ));
            }
            let origin = format!("{name} [platform {key}]");
            platforms.insert(
                key.clone(),
                Platform {
                    name: key,
                    models: p.models,
                    bios: self.bios(p.bios, &origin)?,
                    idrac: self.idrac(p.idrac, &origin)?,
                },
            );
        }
        Ok(Profile {
            bios: self.bios(raw.bios, &name)?,
            idrac: self.idrac(raw.idrac, &name)?,
            name,
            description: raw.description.trim().to_owned(),
            extends,
            extends_at,
            generations: raw.generations,
            models: raw.models,
            cpu: raw.cpu,
            platforms,
            file: self.file.to_owned(),
        })
    }

    fn bios(&self, raw: BTreeMap<String, RawSetting>, origin: &str) -> Result<BTreeMap<String, Setting>> {
        raw.into_iter()
            .map(|(attribute, s)| {
                let setting = self.setting(
                    attribute.clone(),
                    s.value,
                    s.why,
                    s.source,
                    s.confidence,
                    s.generations,
                    origin,
                )?;
                Ok((attribute, setting))
            })
            .collect()
    }

    fn idrac(&self, raw: BTreeMap<String, RawIdracSetting>, origin: &str) -> Result<BTreeMap<String, IdracSetting>> {
        raw.into_iter()
            .map(|(attribute, s)| {
                let setting = self.setting(
                    attribute.clone(),
                    s.value,
                    s.why,
                    s.source,
                    s.confidence,
                    s.generations,
                    origin,
                )?;
                Ok((
                    attribute,
                    IdracSetting {
                        group: s.group,
                        setting,
                    },
                ))
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn setting(
        &self,
        attribute: String,
        value: RawValue,
        why: Spanned<String>,
        source: Spanned<String>,
        confidence: Confidence,
        generations: Vec<Generation>,
        origin: &str,
    ) -> Result<Setting> {
        let why_text = why.get_ref().trim();
        if why_text.is_empty() || why_text.contains('\n') {
            return Err(self.error(
                why.span().start,
                format!("`why` of {attribute} must be one non-empty line"),
            ));
        }
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
        Ok(Setting {
            value: value.0,
            why: why_text.to_owned(),
            source: id.to_owned(),
            confidence,
            generations,
            origin: origin.to_owned(),
            attribute,
        })
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
[idrac."Lockdown.1.SystemLockdown"]
group = "iDRAC"
value = "Disabled"
why = "w"
source = "s"
confidence = "stated"
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
        assert_eq!(p.bios["NumaNodesPerSocket"].value, AttributeValue::String("1".into()));
        assert_eq!(p.bios["CpuMinSevAsid"].value, AttributeValue::Integer(100));
        assert_eq!(p.bios["Flag"].value, AttributeValue::Bool(true));
        assert_eq!(p.bios["CpuMinSevAsid"].generations, [Generation::Milan]);
        assert_eq!(p.idrac["ServerPwr.1.PowerCapSetting"].group, AttributeGroup::System);
        assert_eq!(p.idrac["Lockdown.1.SystemLockdown"].group, AttributeGroup::Idrac);
        assert_eq!(p.platforms["c"].bios["NumaNodesPerSocket"].origin, "p [platform c]");
        assert_eq!(p.bios["Flag"].origin, "p");
        let counts = p.confidence_counts();
        assert_eq!((counts.stated, counts.used, counts.inferred), (3, 1, 2));
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
            err.to_string().contains("platform `c` needs at least one model"),
            "{err}"
        );
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
}
