//! Validation of a resolved profile against a host's attribute registry and current values.
//!
//! Locks are judged on the planned state (dependencies re-evaluated), and every problem is
//! reported at once.

use crate::catalog;
use crate::choose::{self, Choice};
use crate::engine::{self, Analysis, Verdict};
use crate::host::Generation;
use crate::library::ResolvedProfile;
use crate::profile::{Setting, Target};
use crate::suggest;
use redfish_client::dependencies::{DependencyEvaluator, Flag};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::attribute_registry::{Attribute, AttributeRegistry, AttributeType, ValueProblem, range};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// How strict validation is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Attributes absent on the host are errors instead of warnings.
    pub strict: bool,
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

/// Validates the BIOS settings of `profile` against `registry` and the host's `current` values.
///
/// Every problem is reported, sorted by attribute. Read-only, hidden and forced values are
/// judged on the planned state: current values overlaid with the profile's values and the
/// plan's automatic unlocks, with the registry's dependencies re-evaluated. Setting an
/// attribute to the value it already has, or would be forced to, is never a problem.
pub fn validate(
    profile: &ResolvedProfile,
    registry: &AttributeRegistry,
    current: &Attributes,
    options: &ValidateOptions,
) -> Vec<Violation> {
    check_bios(profile, registry, current, options).violations
}

/// Validates the iDRAC settings of `profile` against the manager attribute `registry` and the
/// host's `current` `DellAttributes`, by group. Same rules as [`validate`]; the groups' values
/// are judged together, since their names do not overlap.
pub fn validate_idrac(
    profile: &ResolvedProfile,
    registry: &AttributeRegistry,
    current: &BTreeMap<AttributeGroup, Attributes>,
    options: &ValidateOptions,
) -> Vec<Violation> {
    let evaluator = DependencyEvaluator::new(registry);
    let mut merged = Attributes::new();
    for attributes in current.values() {
        for (k, v) in attributes {
            merged.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    let mut violations = Vec::new();
    let mut desired = Attributes::new();
    let mut targets = BTreeMap::new();
    for ((group, name), s) in &profile.idrac {
        let target = Target::Idrac(*group);
        let Some(definition) = evaluator.attribute(name) else {
            violations.push(absent(target, &s.setting, profile.host.generation, registry, options));
            continue;
        };
        let in_group = current.get(group).is_some_and(|a| a.contains_key(name));
        if !in_group {
            let elsewhere = current
                .iter()
                .find(|(g, a)| *g != group && a.contains_key(name))
                .map(|(g, _)| *g);
            violations.push(match elsewhere {
                Some(actual) => Violation {
                    target,
                    attribute: name.clone(),
                    severity: Severity::Error,
                    kind: ViolationKind::WrongGroup { given: *group, actual },
                },
                None => not_applicable(target, name, options),
            });
            continue;
        }
        let Some(value) = s.value() else { continue };
        if let Err(kind) = check_value(definition, value) {
            violations.push(error(target, name, kind));
            continue;
        }
        desired.insert(name.clone(), value.clone());
        targets.insert(name.clone(), target);
    }
    // The iDRAC plan has no registry to find unlocks with, so none are assumed here.
    let reserved = profile.idrac.keys().map(|(_, n)| n.as_str()).collect();
    let analysis = engine::analyse(&evaluator, &merged, &desired, &reserved, false);
    violations.extend(verdict_violations(&analysis, &desired, &merged, options, |name| {
        targets
            .get(name)
            .copied()
            .unwrap_or(Target::Idrac(AttributeGroup::System))
    }));
    sort(&mut violations);
    violations
}

/// The result of checking a profile's BIOS settings, shared with diff and plan.
pub(crate) struct Checked {
    pub(crate) violations: Vec<Violation>,
    pub(crate) analysis: Analysis,
    /// The value each usable setting wants on this host: fixed values as written, the others
    /// as chosen from the registry.
    pub(crate) desired: Attributes,
    /// How the values of settings that are not fixed were chosen (or why none was).
    pub(crate) choices: BTreeMap<String, Choice>,
}

pub(crate) fn check_bios(
    profile: &ResolvedProfile,
    registry: &AttributeRegistry,
    current: &Attributes,
    options: &ValidateOptions,
) -> Checked {
    let mut evaluator = DependencyEvaluator::new(registry);
    if !current.is_empty() {
        evaluator = evaluator.with_listing(current.keys());
    }
    // Choices are judged against the Value rules that hold once the profile's fixed values
    // are in place: the state the plan is heading for, as far as it is known before choosing.
    let fixed: Attributes = profile
        .bios
        .iter()
        .filter(|(name, _)| evaluator.attribute(name).is_some())
        .filter_map(|(name, s)| Some((name.clone(), s.wanted.fixed()?.clone())))
        .collect();
    let planned = evaluator.evaluate(&engine::overlaid(current, &fixed));
    let mut violations = Vec::new();
    let mut desired = Attributes::new();
    let mut choices = BTreeMap::new();
    for (name, s) in &profile.bios {
        let Some(definition) = evaluator.attribute(name) else {
            violations.push(absent(Target::Bios, s, profile.host.generation, registry, options));
            continue;
        };
        let value = match s.wanted.fixed() {
            Some(v) => v.clone(),
            None => {
                let choice = choose::choose(name, &s.wanted, &s.excluded, definition, &planned);
                let chosen = choice.chosen.clone();
                let reason = choice.reason.clone();
                choices.insert(name.clone(), choice);
                match chosen {
                    Some(v) => v,
                    None => {
                        violations.push(skipped(
                            Target::Bios,
                            name,
                            options,
                            ViolationKind::Unavailable { reason },
                        ));
                        continue;
                    }
                }
            }
        };
        if let Err(kind) = check_value(definition, &value) {
            violations.push(error(Target::Bios, name, kind));
            continue;
        }
        desired.insert(name.clone(), value);
    }
    let reserved = profile.bios.keys().map(String::as_str).collect();
    let mut analysis = engine::analyse(&evaluator, current, &desired, &reserved, true);
    // A setting that only a value this host does not offer would free (the width of a link
    // mode the host cannot force) is unavailable too, not an error.
    let dependents = dependents_of_unavailable(&analysis, &choices);
    if !dependents.is_empty() {
        for (name, reason) in dependents {
            if let Some(value) = desired.remove(&name) {
                violations.push(skipped(
                    Target::Bios,
                    &name,
                    options,
                    ViolationKind::Unavailable { reason: reason.clone() },
                ));
                choices.insert(
                    name,
                    Choice {
                        candidates: vec![value],
                        chosen: None,
                        reason,
                    },
                );
            }
        }
        analysis = engine::analyse(&evaluator, current, &desired, &reserved, true);
    }
    violations.extend(verdict_violations(&analysis, &desired, current, options, |_| {
        Target::Bios
    }));
    sort(&mut violations);
    Checked {
        violations,
        analysis,
        desired,
        choices,
    }
}

/// The desired attributes blocked by a rule whose conditions read an attribute the host offers
/// none of the profile's choices for, with the reason.
fn dependents_of_unavailable(analysis: &Analysis, choices: &BTreeMap<String, Choice>) -> Vec<(String, String)> {
    let unavailable = |name: &str| choices.get(name).is_some_and(|c| c.chosen.is_none());
    analysis
        .verdicts
        .iter()
        .filter_map(|(name, verdict)| {
            let because = match verdict {
                Verdict::Locked { because, .. }
                | Verdict::Restricted { because, .. }
                | Verdict::Conflict { because, .. } => because,
                Verdict::InSync | Verdict::Forced { .. } | Verdict::Write => return None,
            };
            let on: Vec<&str> = because
                .iter()
                .map(|c| c.attribute.as_str())
                .filter(|a| unavailable(a))
                .collect();
            (!on.is_empty()).then(|| {
                (
                    name.clone(),
                    format!(
                        "it depends on {}, which is unavailable on this host; left as is",
                        on.join(", ")
                    ),
                )
            })
        })
        .collect()
}

fn sort(violations: &mut [Violation]) {
    violations.sort_by(|a, b| (a.target, &a.attribute).cmp(&(b.target, &b.attribute)));
}

fn error(target: Target, attribute: &str, kind: ViolationKind) -> Violation {
    Violation {
        target,
        attribute: attribute.to_owned(),
        severity: Severity::Error,
        kind,
    }
}

fn not_applicable(target: Target, attribute: &str, options: &ValidateOptions) -> Violation {
    skipped(target, attribute, options, ViolationKind::NotApplicable)
}

/// A setting left as is on this host: a warning, or an error under `--strict`.
fn skipped(target: Target, attribute: &str, options: &ValidateOptions, kind: ViolationKind) -> Violation {
    Violation {
        target,
        attribute: attribute.to_owned(),
        severity: if options.strict {
            Severity::Error
        } else {
            Severity::Warning
        },
        kind,
    }
}

/// A setting whose attribute the registry lacks: a typo (unknown) or a known attribute this
/// host does not have (not applicable).
fn absent(
    target: Target,
    setting: &Setting,
    generation: Option<Generation>,
    registry: &AttributeRegistry,
    options: &ValidateOptions,
) -> Violation {
    let name = &setting.attribute;
    let expected_on = generation.filter(|g| setting.generations.contains(g));
    if expected_on.is_none() && catalog::knows_attribute(name) {
        return not_applicable(target, name, options);
    }
    let names = registry
        .registry_entries
        .attributes
        .iter()
        .map(|a| a.attribute_name.as_str());
    let suggestions = suggest::closest(name, names).into_iter().map(str::to_owned).collect();
    error(
        target,
        name,
        ViolationKind::UnknownAttribute {
            suggestions,
            expected_on,
        },
    )
}

fn check_value(definition: &Attribute, value: &AttributeValue) -> Result<(), ViolationKind> {
    let value = value.clone();
    definition.check(&value).map_err(|problem| match problem {
        ValueProblem::WrongType { expected, .. } => ViolationKind::WrongType { value, expected },
        ValueProblem::NotInList { allowed } => {
            let text = value.to_string();
            let suggestion = suggest::closest(&text, allowed.iter().map(String::as_str))
                .first()
                .map(|s| (*s).to_owned());
            ViolationKind::NotInList {
                value,
                allowed,
                suggestion,
            }
        }
        ValueProblem::OutOfRange { lower, upper } => ViolationKind::OutOfRange { value, lower, upper },
        ValueProblem::NotOnIncrement { increment } => ViolationKind::NotOnIncrement { value, increment },
        ValueProblem::BadLength { min, max } => ViolationKind::BadLength { value, min, max },
    })
}

fn verdict_violations(
    analysis: &Analysis,
    desired: &Attributes,
    current: &Attributes,
    options: &ValidateOptions,
    target_of: impl Fn(&str) -> Target,
) -> Vec<Violation> {
    let unlock_values: Attributes = analysis
        .unlocks
        .iter()
        .map(|u| (u.attribute.clone(), u.value.clone()))
        .collect();
    let all = analysis.verdicts.iter().map(|(n, v)| (n, v, desired.get(n))).chain(
        analysis
            .blocked_unlocks
            .iter()
            .map(|(n, v)| (n, v, unlock_values.get(n))),
    );
    let mut out = Vec::new();
    for (name, verdict, value) in all {
        let Some(value) = value.cloned() else { continue };
        let kind = match verdict {
            Verdict::InSync | Verdict::Forced { .. } | Verdict::Write => continue,
            Verdict::Conflict { forced, because, fixes } => ViolationKind::PresetConflict {
                value,
                forced: forced.clone(),
                because: because.clone(),
                fixes: fixes.clone(),
            },
            Verdict::Locked {
                flag: Flag::Hidden,
                because,
                ..
            } if because.is_empty() && !current.contains_key(name) => {
                out.push(skipped(target_of(name), name, options, ViolationKind::HiddenOnHost));
                continue;
            }
            Verdict::Locked { because, .. } if because.is_empty() => ViolationKind::StaticReadOnly {
                value,
                current: current.get(name).cloned(),
            },
            Verdict::Restricted {
                allowed,
                because,
                fixes,
            } => ViolationKind::NotAllowedNow {
                value,
                allowed: allowed.clone(),
                because: because.clone(),
                fixes: fixes.clone(),
            },
            Verdict::Locked {
                flag: Flag::Hidden,
                because,
                fixes,
            } => ViolationKind::Hidden {
                value,
                because: because.clone(),
                fixes: fixes.clone(),
            },
            Verdict::Locked { because, fixes, .. } => ViolationKind::ReadOnly {
                value,
                because: because.clone(),
                fixes: fixes.clone(),
            },
        };
        out.push(error(target_of(name), name, kind));
    }
    out
}
