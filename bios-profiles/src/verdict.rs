//! The words of a judgement of a profile on a host, below every module that judges: where an
//! attribute lives, the verdict on each desired value with the conditions and fixes behind it,
//! the unlocks a plan adds, and the violations validation reports.

use crate::host::Generation;
use redfish_client::dependencies::Flag;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::attribute_registry::{AttributeType, range};
use redfish_client::resources::bios::AttributeValue;
use serde::{Serialize, Serializer};
use std::fmt;

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

/// How bad a violation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The profile cannot be applied to this host as written.
    Error,
    /// Worth knowing; does not block a plan.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// Where the value of a locking attribute comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueOrigin {
    /// The profile sets it.
    Profile,
    /// The plan sets it automatically to unlock another attribute.
    Unlock,
    /// The host's current value, which the profile leaves alone.
    Host,
}

/// One condition of a dependency that holds in the planned state: `SysProfile = PerfOptimized`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Condition {
    /// The attribute the rule reads.
    pub attribute: String,
    /// Its value in the planned state.
    pub value: Option<AttributeValue>,
    /// Who sets that value.
    pub origin: ValueOrigin,
}

/// A change that would free a blocked attribute: `SysProfile = Custom`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fix {
    /// The attribute to change.
    pub attribute: String,
    /// Each of these values would do.
    pub values: Vec<AttributeValue>,
}

/// An attribute the profile does not set that the plan changes so that others become
/// writable (`SysProfile = Custom` to change `ProcCStates`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unlock {
    /// The attribute changed.
    pub attribute: String,
    /// Its new value.
    pub value: AttributeValue,
    /// The profile's attributes it frees.
    pub frees: Vec<String>,
    /// Why: `ProcCStates is read-only while SysProfile = PerfOptimized (current value)`.
    pub reason: String,
}

/// The outcome for one desired attribute.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// The host already has the value and nothing in the planned state moves it.
    InSync,
    /// The host differs, and a rule in the planned state forces the desired value: no write.
    Forced { because: Vec<Condition> },
    /// The host differs and the attribute is writable in the planned state: write it.
    Write,
    /// `Value` rules in the planned state allow only other values.
    Restricted {
        allowed: Vec<String>,
        because: Vec<Condition>,
        fixes: Vec<Fix>,
    },
    /// A rule in the planned state forces another value.
    Conflict {
        forced: AttributeValue,
        because: Vec<Condition>,
        fixes: Vec<Fix>,
    },
    /// The host differs, but the attribute is read-only or hidden in the planned state.
    /// `because` is empty when no rule is responsible (a static flag).
    Locked {
        flag: Flag,
        because: Vec<Condition>,
        fixes: Vec<Fix>,
    },
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ViolationKind {
    /// The registry has no such attribute, and it is not a known attribute absent on this
    /// generation (likely a typo).
    UnknownAttribute {
        /// The closest names in the registry.
        suggestions: Vec<String>,
        /// Set when the setting explicitly names the host's generation.
        expected_on: Option<Generation>,
    },
    /// Checked without a host: neither the catalog nor any known registry has the attribute
    /// (likely a typo).
    UnknownOffline {
        /// What was checked (`the shipped catalog or the registries of r7625, r7525, c6615`).
        checked: String,
        /// The closest names there.
        suggestions: Vec<String>,
    },
    /// Checked without a host: no known registry offers the value and no real host showed it.
    TokenNotKnown {
        /// The value the profile gives.
        value: AttributeValue,
        /// What the known registries offer and real hosts showed.
        offered: Vec<String>,
        /// A known value that looks like the intended one (then the value is an error).
        suggestion: Option<String>,
    },
    /// A known attribute this host does not have; the setting is skipped.
    NotApplicable,
    /// The host offers none of the setting's choices or accepted tokens (or no bound to derive
    /// from); the setting is skipped rather than guessed.
    Unavailable {
        /// Why, naming what was passed over and what the host offers.
        reason: String,
    },
    /// The registry defines the attribute but the host's BIOS does not show it (real iDRACs
    /// list only visible attributes), and nothing in the profile makes it visible: the setting
    /// is skipped.
    HiddenOnHost,
    /// An iDRAC attribute listed under the wrong `DellAttributes` resource.
    WrongGroup {
        /// The group the profile gives.
        given: AttributeGroup,
        /// The group that holds it on the host.
        actual: AttributeGroup,
    },
    /// The value's type does not match the attribute's (`1` for an enumeration).
    WrongType {
        /// The value the profile gives.
        value: AttributeValue,
        /// The attribute's type.
        expected: AttributeType,
    },
    /// An enumeration value the registry does not list.
    NotInList {
        /// The value the profile gives.
        value: AttributeValue,
        /// The allowed values, in registry order.
        allowed: Vec<String>,
        /// An allowed value that looks like the intended one.
        suggestion: Option<String>,
    },
    /// An integer outside the bounds.
    OutOfRange {
        /// The value the profile gives.
        value: AttributeValue,
        /// Lower bound.
        lower: Option<i128>,
        /// Upper bound.
        upper: Option<i128>,
    },
    /// An integer off the registry's step.
    NotOnIncrement {
        /// The value the profile gives.
        value: AttributeValue,
        /// The step.
        increment: i128,
    },
    /// A string of the wrong length.
    BadLength {
        /// The value the profile gives.
        value: AttributeValue,
        /// Minimum length.
        min: Option<i128>,
        /// Maximum length.
        max: Option<i128>,
    },
    /// A `Value` rule (iDRAC 7.x) allows only other values while its conditions hold.
    NotAllowedNow {
        /// The value the profile gives.
        value: AttributeValue,
        /// The values the rules allow in the planned state.
        allowed: Vec<String>,
        /// The conditions that restrict it.
        because: Vec<Condition>,
        /// Changes that would allow the value.
        fixes: Vec<Fix>,
    },
    /// Read-only in the planned state because of other attributes' values.
    ReadOnly {
        /// The value the profile gives.
        value: AttributeValue,
        /// The conditions that lock it.
        because: Vec<Condition>,
        /// Changes that would free it.
        fixes: Vec<Fix>,
    },
    /// Hidden in the planned state because of other attributes' values.
    Hidden {
        /// The value the profile gives.
        value: AttributeValue,
        /// The conditions that hide it.
        because: Vec<Condition>,
        /// Changes that would free it.
        fixes: Vec<Fix>,
    },
    /// Read-only on this host whatever else is set (`AgesaVersion`), and the value differs.
    StaticReadOnly {
        /// The value the profile gives.
        value: AttributeValue,
        /// What the host has.
        current: Option<AttributeValue>,
    },
    /// A dependency (typically a System Profile preset) forces a different value.
    PresetConflict {
        /// The value the profile gives.
        value: AttributeValue,
        /// The value the rule forces.
        forced: AttributeValue,
        /// The conditions of the forcing rule.
        because: Vec<Condition>,
        /// Changes that would free it.
        fixes: Vec<Fix>,
    },
}

/// One problem with one setting.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Where the attribute lives.
    pub target: Target,
    /// The attribute.
    pub attribute: String,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub kind: ViolationKind,
}

impl Violation {
    /// The message without the attribute prefix.
    pub fn message(&self) -> String {
        let registry = match self.target {
            Target::Bios => "BIOS",
            Target::Idrac(_) => "iDRAC",
        };
        let name = &self.attribute;
        match &self.kind {
            ViolationKind::UnknownAttribute {
                suggestions,
                expected_on,
            } => {
                let expected = expected_on
                    .map(|g| format!(", although the profile applies it to {g} hosts"))
                    .unwrap_or_default();
                let closest = if suggestions.is_empty() {
                    "no similar names".to_owned()
                } else {
                    format!("closest: {}", suggestions.join(", "))
                };
                format!("not in this host's {registry} attribute registry{expected}; {closest}")
            }
            ViolationKind::UnknownOffline { checked, suggestions } => {
                let closest = if suggestions.is_empty() {
                    "no similar names".to_owned()
                } else {
                    format!("did you mean {}?", suggestions.join(", "))
                };
                format!("not an attribute of {checked}; {closest}")
            }
            ViolationKind::TokenNotKnown {
                value,
                offered,
                suggestion,
            } => {
                let known = if offered.is_empty() {
                    String::new()
                } else {
                    format!(" (they offer {})", offered.join(", "))
                };
                match suggestion {
                    Some(s) => format!(
                        "{} is offered by no known registry and was seen on no real host{known}; did you mean {s}?",
                        quoted(value)
                    ),
                    None => format!(
                        "{} is offered by no known registry and was seen on no real host{known}; a host's own registry may still offer it: check with --registry FILE or --bmc URL",
                        quoted(value)
                    ),
                }
            }
            ViolationKind::NotApplicable => {
                format!("not on this host (absent from its {registry} attribute registry); left as is")
            }
            ViolationKind::Unavailable { reason } => format!("unavailable on this host: {reason}"),
            ViolationKind::HiddenOnHost => format!(
                "hidden on this host: its {registry} attribute registry defines it but the {registry} does not show it; left as is"
            ),
            ViolationKind::WrongGroup { given, actual } => {
                format!("lives in {actual}, not {given}; set group = \"{}\"", group_key(*actual))
            }
            ViolationKind::WrongType { value, expected } => {
                let hint = match (expected, value) {
                    (
                        AttributeType::Enumeration | AttributeType::String,
                        AttributeValue::Integer(_) | AttributeValue::Bool(_),
                    ) => {
                        format!("; write \"{value}\"")
                    }
                    (AttributeType::Integer, AttributeValue::String(s)) if s.trim().parse::<i64>().is_ok() => {
                        format!("; write {} without quotes", s.trim())
                    }
                    _ => String::new(),
                };
                format!(
                    "expects {} value, but the profile gives {} {}{hint}",
                    type_phrase(*expected),
                    value.type_name(),
                    quoted(value)
                )
            }
            ViolationKind::NotInList {
                value,
                allowed,
                suggestion,
            } => {
                let hint = suggestion
                    .as_ref()
                    .map(|s| format!("; did you mean {s}?"))
                    .unwrap_or_default();
                format!(
                    "{} is not allowed here; allowed: {}{hint}",
                    quoted(value),
                    allowed.join(", ")
                )
            }
            ViolationKind::OutOfRange { value, lower, upper } => {
                format!("{value} is out of range {}", range(*lower, *upper))
            }
            ViolationKind::NotOnIncrement { value, increment } => {
                format!("{value} is not on the registry's step of {increment} from the lower bound")
            }
            ViolationKind::BadLength { value, min, max } => {
                let len = value.as_str().map_or(0, |s| s.chars().count());
                format!(
                    "{} has {len} characters; allowed lengths {}",
                    quoted(value),
                    range(min.or(Some(0)), *max)
                )
            }
            ViolationKind::NotAllowedNow {
                value,
                allowed,
                because,
                fixes,
            } => format!(
                "{} is not allowed while {}: the registry's rules allow only {}; {}",
                quoted(value),
                render_conditions(because),
                if allowed.is_empty() {
                    "no value".to_owned()
                } else {
                    allowed.join(", ")
                },
                advice(fixes)
            ),
            ViolationKind::ReadOnly { because, fixes, .. } => {
                format!("read-only while {}; {}", render_conditions(because), advice(fixes))
            }
            ViolationKind::Hidden { because, fixes, .. } => {
                format!("hidden while {}; {}", render_conditions(because), advice(fixes))
            }
            ViolationKind::StaticReadOnly { value, current } => format!(
                "read-only on this host whatever else is set; the profile asks for {}, the host has {}",
                quoted(value),
                current.as_ref().map_or_else(|| "no value".to_owned(), quoted)
            ),
            ViolationKind::PresetConflict {
                value,
                forced,
                because,
                fixes,
            } => format!(
                "{} forces {name} = {forced}, but the profile asks for {value}; {}",
                render_conditions(because),
                advice(fixes)
            ),
        }
    }
}

impl fmt::Display for Violation {
    /// `ProcCStates: read-only while SysProfile = PerfOptimized; set SysProfile = Custom in the profile`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target {
            Target::Bios => write!(f, "{}: {}", self.attribute, self.message()),
            Target::Idrac(group) => write!(f, "{} ({group}): {}", self.attribute, self.message()),
        }
    }
}

impl Serialize for Violation {
    /// `{"target": "bios", "attribute", "severity", "kind": "read_only", ...fields, "message"}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(flatten)]
            target: &'a Target,
            attribute: &'a str,
            severity: Severity,
            #[serde(flatten)]
            kind: &'a ViolationKind,
            message: String,
        }
        Out {
            target: &self.target,
            attribute: &self.attribute,
            severity: self.severity,
            kind: &self.kind,
            message: self.message(),
        }
        .serialize(s)
    }
}

/// The key that selects `group` in a profile file (`group = "iDRAC"`).
fn group_key(group: AttributeGroup) -> &'static str {
    match group {
        AttributeGroup::System => "System",
        AttributeGroup::Idrac => "iDRAC",
        AttributeGroup::LifecycleController => "LifecycleController",
    }
}

fn type_phrase(t: AttributeType) -> &'static str {
    match t {
        AttributeType::Enumeration => "an enumeration (string)",
        AttributeType::String => "a string",
        AttributeType::Integer => "an integer",
        AttributeType::Boolean => "a boolean",
        AttributeType::Password => "a password (string)",
        AttributeType::Unknown => "an untyped",
    }
}

fn quoted(value: &AttributeValue) -> String {
    match value {
        AttributeValue::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

/// `SysProfile = PerfOptimized (current value) and ProcCcds = All`.
pub(crate) fn render_conditions(conditions: &[Condition]) -> String {
    if conditions.is_empty() {
        return "other settings have their current values".to_owned();
    }
    conditions
        .iter()
        .map(|c| {
            let value = c
                .value
                .as_ref()
                .map_or_else(|| "(absent)".to_owned(), ToString::to_string);
            let origin = match c.origin {
                ValueOrigin::Profile => "",
                ValueOrigin::Unlock => " (set automatically)",
                ValueOrigin::Host => " (current value)",
            };
            format!("{} = {value}{origin}", c.attribute)
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

/// `set SysProfile = Custom in the profile`.
fn advice(fixes: &[Fix]) -> String {
    if fixes.is_empty() {
        return "no single change frees it; set it in a separate step first, or drop it from the profile".to_owned();
    }
    let options: Vec<String> = fixes
        .iter()
        .map(|f| match f.values.as_slice() {
            [one] => format!("{} = {one}", f.attribute),
            many => format!(
                "{} to one of {}",
                f.attribute,
                many.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ),
        })
        .collect();
    format!("set {} in the profile", options.join(", or "))
}
