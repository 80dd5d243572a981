//! One recommended value and its vocabulary: the setting, what it asks for, when it applies, how
//! sure we are, the operator's parameters, and what resolution recorded on it (the data-table
//! decisions, the values ruled out, the SEV ASID split).

use crate::host::{Generation, HostFacts};
use redfish_client::resources::bios::AttributeValue;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// How sure we are of a recommended value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// A cited source says so, in the words the setting quotes.
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

/// Which end of an integer attribute's range a derived value takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The registry's `UpperBound` (on the increment grid from the lower bound).
    UpperBound,
    /// The registry's `LowerBound`.
    LowerBound,
}

impl Bound {
    /// The spelling in files (`upper_bound`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UpperBound => "upper_bound",
            Self::LowerBound => "lower_bound",
        }
    }
}

/// What a setting asks for. Only [`Wanted::Value`] is known before the host's registry is:
/// the others are resolved per host by [`crate::choose`].
///
/// Serialises flattened into the setting: `"value"`; `"value"` (the first choice) and
/// `"prefer"`; `"intent"` and `"accept"`; or `"derive"`.
#[derive(Debug, Clone, PartialEq)]
pub enum Wanted {
    /// One value, whatever the host offers (`value = "Disabled"`).
    Value(AttributeValue),
    /// Ordered choices; the first one the host offers and allows wins (`prefer = ["4", "2"]`).
    Prefer(Vec<AttributeValue>),
    /// One intent spelled several ways; the host's registry picks the spelling it offers, by
    /// `ValueName`, then by `ValueDisplayName`.
    Accept {
        /// What the tokens mean (`performance determinism`).
        intent: String,
        /// The accepted spellings, in order.
        tokens: Vec<String>,
    },
    /// An integer taken from the registry's bounds.
    Derive(Bound),
    /// `CpuMinSevAsid` for a fixed number of plain-SEV ASIDs (`sev_asids = { plain_sev = 8 }`):
    /// ASIDs from the value up to the CPU's maximum serve plain SEV guests, those below it
    /// SEV-ES and SEV-SNP guests. Resolution turns it into a value, with the split, where the
    /// CPU's maximum is known ([`crate::tables`]); never the registry's bound.
    SevAsids {
        /// How many ASIDs stay for plain SEV guests.
        plain_sev: u32,
    },
}

impl Wanted {
    /// The values it may end up writing, in order; `None` for a value derived from the
    /// registry.
    pub fn candidates(&self) -> Option<Vec<AttributeValue>> {
        match self {
            Self::Value(v) => Some(vec![v.clone()]),
            Self::Prefer(values) => Some(values.clone()),
            Self::Accept { tokens, .. } => Some(tokens.iter().map(|t| AttributeValue::String(t.clone())).collect()),
            Self::Derive(_) | Self::SevAsids { .. } => None,
        }
    }

    /// The value when it is fixed.
    pub fn fixed(&self) -> Option<&AttributeValue> {
        match self {
            Self::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The value to show before a registry has chosen: the value, the first preference or the
    /// first accepted token; `None` for a derived value.
    pub fn first(&self) -> Option<AttributeValue> {
        match self {
            Self::Value(v) => Some(v.clone()),
            Self::Prefer(values) => values.first().cloned(),
            Self::Accept { tokens, .. } => tokens.first().map(|t| AttributeValue::String(t.clone())),
            Self::Derive(_) | Self::SevAsids { .. } => None,
        }
    }

    /// Whether the host's registry decides the value (everything but a fixed value).
    pub fn is_chosen_per_host(&self) -> bool {
        !matches!(self, Self::Value(_))
    }
}

impl fmt::Display for Wanted {
    /// `Disabled`; `4 | 2 | 1`; `PerfDeterminism | PerformanceDeterminism (performance
    /// determinism)`; `upper_bound of the registry`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Value(v) => write!(f, "{v}"),
            Self::Prefer(values) => {
                let list: Vec<String> = values.iter().map(ToString::to_string).collect();
                f.write_str(&list.join(" | "))
            }
            Self::Accept { intent, tokens } => write!(f, "{} ({intent})", tokens.join(" | ")),
            Self::Derive(bound) => write!(f, "{} of the registry", bound.as_str()),
            Self::SevAsids { plain_sev } => {
                write!(
                    f,
                    "the CPU's maximum ASID less {plain_sev} for plain SEV (the rest SEV-ES/SNP)"
                )
            }
        }
    }
}

impl Serialize for Wanted {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self {
            Self::Value(v) => map.serialize_entry("value", v)?,
            Self::Prefer(values) => {
                if let Some(first) = values.first() {
                    map.serialize_entry("value", first)?;
                }
                map.serialize_entry("prefer", values)?;
            }
            Self::Accept { intent, tokens } => {
                map.serialize_entry("intent", intent)?;
                map.serialize_entry("accept", tokens)?;
            }
            Self::Derive(bound) => map.serialize_entry("derive", bound)?,
            Self::SevAsids { plain_sev } => {
                let mut inner = BTreeMap::new();
                inner.insert("plain_sev", *plain_sev);
                map.serialize_entry("sev_asids", &inner)?;
            }
        }
        map.end()
    }
}

/// Conditions on host facts: a setting's `when = { sockets = 2 }`, and what a platform override
/// (`[platform.c6615]`) applies to. One language with two readings: a setting applies unless a
/// fact the host reports contradicts it ([`When::excludes`]; the registry still decides whether
/// the attribute exists), while an override applies only when every fact it names is known and
/// holds ([`When::holds_for`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// Populated sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    /// PowerEdge models (case-insensitive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// CPU model numbers (`7552`, `9654`; case-insensitive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<String>,
    /// At least this many cores per processor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cores: Option<u32>,
    /// At most this many cores per processor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cores: Option<u32>,
    /// The memory population (`"balanced"` or `"unbalanced"`). A profile that names it makes
    /// rftune read the host's DIMMs (one more request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryCondition>,
    /// At least this many hardware threads in the system (sockets × cores × threads per core,
    /// with SMT as the profile leaves it; see [`HostFacts::threads`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_threads: Option<u32>,
    /// At most this many hardware threads in the system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_threads: Option<u32>,
}

/// One condition judged against a host: `Some(None)` holds, `Some(Some(why))` fails, `None`
/// the host does not report the fact.
type Judged = Option<Option<String>>;

impl When {
    /// No condition.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Each condition given, judged against `host`.
    fn judge(&self, host: &HostFacts) -> Vec<Judged> {
        let check =
            |known: bool, holds: bool, why: &dyn Fn() -> String| -> Judged { known.then(|| (!holds).then(why)) };
        let mut out = Vec::new();
        if let Some(want) = self.sockets {
            let have = host.sockets;
            out.push(check(have.is_some(), have == Some(want), &|| {
                format!("sockets = {want}; this host has {}", have.unwrap_or_default())
            }));
        }
        if !self.models.is_empty() {
            out.push(check(
                host.model.is_some(),
                self.models.iter().any(|m| host.is_model(m)),
                &|| {
                    format!(
                        "models {}; this host is {}",
                        self.models.join(", "),
                        host.model.as_deref().unwrap_or_default()
                    )
                },
            ));
        }
        if !self.cpus.is_empty() {
            let number = host.cpu_model_number();
            out.push(check(
                number.is_some(),
                self.cpus.iter().any(|c| host.is_cpu(c)),
                &|| {
                    format!(
                        "CPUs {}; this host has an EPYC {}",
                        self.cpus.join(", "),
                        number.unwrap_or_default()
                    )
                },
            ));
        }
        if let Some(min) = self.min_cores {
            let have = host.cores.unwrap_or_default();
            out.push(check(host.cores.is_some(), have >= min, &|| {
                format!("at least {min} cores per CPU; this host has {have}")
            }));
        }
        if let Some(max) = self.max_cores {
            let have = host.cores.unwrap_or_default();
            out.push(check(host.cores.is_some(), have <= max, &|| {
                format!("at most {max} cores per CPU; this host has {have}")
            }));
        }
        if let Some(want) = self.memory {
            let balanced = host.memory_balanced();
            out.push(check(
                balanced.is_some(),
                balanced == Some(want == MemoryCondition::Balanced),
                &|| format!("{} memory; this host's is not", want.as_str()),
            ));
        }
        let threads = host.threads();
        let have = threads.unwrap_or_default();
        if let Some(min) = self.min_threads {
            out.push(check(threads.is_some(), have >= min, &|| {
                format!("at least {min} hardware threads; this host has {have}")
            }));
        }
        if let Some(max) = self.max_threads {
            out.push(check(threads.is_some(), have <= max, &|| {
                format!("at most {max} hardware threads; this host has {have}")
            }));
        }
        out
    }

    /// Why the conditions exclude `host` (`applies when sockets = 2; this host has 1`), or
    /// `None` when they hold or the host does not report the facts they read.
    pub fn excludes(&self, host: &HostFacts) -> Option<String> {
        let reasons: Vec<String> = self.judge(host).into_iter().flatten().flatten().collect();
        (!reasons.is_empty()).then(|| format!("applies when {}", reasons.join(" and ")))
    }

    /// Whether every condition given is known for `host` and holds (no condition: true).
    pub fn holds_for(&self, host: &HostFacts) -> bool {
        self.judge(host).into_iter().all(|j| j == Some(None))
    }

    /// What the conditions pick out, for listings: `PowerEdge C6615, EPYC 7552, unbalanced
    /// memory`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.models.clone();
        parts.extend(self.cpus.iter().map(|c| format!("EPYC {c}")));
        parts.extend(self.sockets.map(|n| format!("{n} socket(s)")));
        parts.extend(self.min_cores.map(|n| format!("at least {n} cores")));
        parts.extend(self.max_cores.map(|n| format!("at most {n} cores")));
        parts.extend(self.memory.map(|m| format!("{} memory", m.as_str())));
        parts.extend(self.min_threads.map(|n| format!("at least {n} threads")));
        parts.extend(self.max_threads.map(|n| format!("at most {n} threads")));
        parts.join(", ")
    }
}

impl fmt::Display for When {
    /// `sockets = 2, cpus 7552`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(n) = self.sockets {
            parts.push(format!("sockets = {n}"));
        }
        if !self.models.is_empty() {
            parts.push(format!("models {}", self.models.join(", ")));
        }
        if !self.cpus.is_empty() {
            parts.push(format!("CPUs {}", self.cpus.join(", ")));
        }
        if let Some(n) = self.min_cores {
            parts.push(format!("at least {n} cores"));
        }
        if let Some(n) = self.max_cores {
            parts.push(format!("at most {n} cores"));
        }
        if let Some(m) = self.memory {
            parts.push(format!("memory {}", m.as_str()));
        }
        if let Some(n) = self.min_threads {
            parts.push(format!("at least {n} threads"));
        }
        if let Some(n) = self.max_threads {
            parts.push(format!("at most {n} threads"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// A value a platform override or a data table rules out for an attribute, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excluded {
    /// The value taken out of the setting's choices.
    pub value: AttributeValue,
    /// Why (`not possible on PowerEdge C6615: ...`).
    pub reason: String,
    /// The data table that ruled it out, when one did (a platform override otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<DataTable>,
}

/// One recommended attribute value with its justification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// The attribute name (`ProcCStates`, `ServerPwr.1.PowerCapSetting`).
    pub attribute: String,
    /// What the profile asks for: a value, ordered choices, accepted tokens or a derivation.
    #[serde(flatten)]
    pub wanted: Wanted,
    /// Why, in one line.
    pub why: String,
    /// The id of the source that backs it.
    pub source: String,
    /// How sure we are: as written, or, on a resolved setting, as sure as the evidence is for
    /// this host (see [`Setting::confidence_note`]).
    pub confidence: Confidence,
    /// Why a resolved setting is less sure here than its file says: its source does not cover
    /// the host's generation (a preset observed only on Genoa, applied to Milan), or the first
    /// of its choices is ruled out here, so the value written is a fallback of our own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence_note: Option<String>,
    /// The source's words that back it (required when stated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// The generations it applies to; empty means all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub generations: Vec<Generation>,
    /// Host facts it needs.
    #[serde(skip_serializing_if = "When::is_empty")]
    pub when: When,
    /// Which profile (and platform override) wrote it: `base`, `base [platform c6615]`.
    pub origin: String,
    /// Choices a matching platform override or a data table rules out on this host (set by
    /// resolution).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
    /// The rows of the shipped data tables consulted for this setting on this host and what
    /// each decided (set by resolution): the NPS rows by CPU layout and memory population.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
    /// The SEV ASID split a `sev_asids` setting resolved to (set by resolution).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asid_split: Option<AsidSplit>,
}

impl Setting {
    /// Lowers the confidence to `inferred` for the reason given (kept with the first reason).
    pub(crate) fn infer_here(&mut self, why: String) {
        if self.confidence != Confidence::Inferred {
            self.confidence_note.get_or_insert(why);
            self.confidence = Confidence::Inferred;
        }
    }

    /// What it means when the BIOS reads back `read` after `written` was applied: the
    /// explanation a data table gives for that value (an NPS the memory population cannot
    /// take comes back as NPS 1, with UEFI0391 at POST), or `None` when the values agree or no
    /// table explains the difference.
    pub fn readback_note(&self, written: &AttributeValue, read: &AttributeValue) -> Option<String> {
        if written == read {
            return None;
        }
        let notes: Vec<&str> = self
            .decisions
            .iter()
            .filter(|d| d.fallback.as_ref() == Some(read))
            .filter_map(|d| d.readback.as_deref())
            .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}

impl Confidence {
    /// The less sure of two confidences: a row that combines two sources is as sure as the
    /// weaker one.
    pub fn weaker(self, other: Self) -> Self {
        self.max(other)
    }
}

/// A condition on the memory population (`memory = "unbalanced"`); see
/// [`crate::host::MemoryPopulation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryCondition {
    /// Every channel of every populated socket holds the same number of DIMMs.
    Balanced,
    /// Some channel is empty or sockets differ.
    Unbalanced,
}

impl MemoryCondition {
    /// The spelling in profile files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Balanced => "balanced",
            Self::Unbalanced => "unbalanced",
        }
    }
}

/// Facts an operator gives a profile (`[parameters]`) for settings that need one the host does
/// not report. Unknown names are refused like every other key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameters {
    /// The CPU's maximum SEV ASID count: what Linux reports as `SEV supported: N ASIDs` while
    /// `CpuMinSevAsid` is 1. It depends on the CPU and on the memory configuration, and no BIOS
    /// attribute reports it (the registry's `CpuMinSevAsid` bound is the same on every CPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max_sev_asids: Option<u32>,
}

impl Parameters {
    /// No parameter given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// These parameters with `child`'s given ones on top.
    #[must_use]
    pub fn overlaid_with(self, child: Self) -> Self {
        Self {
            cpu_max_sev_asids: child.cpu_max_sev_asids.or(self.cpu_max_sev_asids),
        }
    }
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

/// Which data table decided something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataTable {
    /// CPU model → CCDs and cores per CCD (`[[cpu]]`).
    CpuLayout,
    /// NPS options per CPU layout (`[[nps.layout]]`, Dell's per-SKU table).
    NpsLayout,
    /// NPS per enabled DIMMs per socket (`[[nps.population]]`, Dell's interleaving rules).
    NpsPopulation,
    /// The CPU's maximum SEV ASID count (`[sev]`).
    SevAsids,
}

impl DataTable {
    /// The name used in output (`nps-layout`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CpuLayout => "cpu-layout",
            Self::NpsLayout => "nps-layout",
            Self::NpsPopulation => "nps-population",
            Self::SevAsids => "sev-asids",
        }
    }
}

impl fmt::Display for DataTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a table row decided for a setting on one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The row rules values out (listed in [`Decision::rules_out`]).
    RulesOut,
    /// The row matched and allows every value the setting may write.
    Allows,
    /// No row covers the host: the registry decides, and nothing is ruled out.
    NoRow,
    /// The row explains what reading back its [`Decision::fallback`] means; it decides nothing.
    Readback,
    /// The host's rules are not documented, or a fact the row needs is unknown: a warning,
    /// nothing is ruled out.
    Warning,
}

/// One table row consulted for a setting on one host, and what it decided, in data and words:
/// what `rftune profiles show` and `diff` print as the reason for an NPS or an ASID split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The table.
    pub table: DataTable,
    /// The row, in words (`48 cores, 6x2x4 (CCDs x CCXs x cores per CCX)`).
    pub row: String,
    /// What it decided here.
    pub outcome: Outcome,
    /// The values it rules out on this host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules_out: Vec<AttributeValue>,
    /// Why, in one line a person can act on.
    pub reason: String,
    /// The id of the source behind the row.
    pub source: String,
    /// How sure the row is.
    pub confidence: Confidence,
    /// The source's words, where the row quotes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// The value the BIOS falls back to when it cannot apply what was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<AttributeValue>,
    /// What reading back [`Decision::fallback`] after another value was written means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readback: Option<String>,
    /// The CCD count a layout row assumes, checked against the host's `ProcCcds` value list
    /// when the registry is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ccds: Option<u32>,
}

/// The SEV ASID split a `sev_asids` setting resolved to: the data `profiles show` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AsidSplit {
    /// The CPU's maximum ASID count.
    pub max_asids: u32,
    /// Where that maximum comes from (`parameter cpu_max_sev_asids of my-cc`, a table row).
    pub max_from: String,
    /// ASIDs for plain SEV guests: from [`AsidSplit::min_sev_asid`] to the maximum.
    pub plain_sev: u32,
    /// ASIDs for SEV-ES and SEV-SNP guests: 1 to `min_sev_asid - 1`.
    pub sev_es_snp: u32,
    /// The value written to `CpuMinSevAsid`.
    pub min_sev_asid: u32,
    /// The split in words, with its consequence for plain SEV guests.
    pub reason: String,
}

/// Why a setting is not applicable on a host: the three reasons are kept apart because they mean
/// different things for the host's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unchecked {
    /// No source or payload covers this host's CPU generation: the setting could not be
    /// checked, and the host is not proven in sync (`unverified`).
    NoEvidence,
    /// The host's BIOS or BMC has no such attribute (an error under `--strict`).
    NotOnHost,
    /// Left out on purpose: a rule for other generations, host facts the setting is not for, a
    /// platform that cannot take any of its values, a value the host cannot derive.
    Excluded,
}
