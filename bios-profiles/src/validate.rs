//! Validation of a resolved profile against what a host shows: its attribute registry and
//! current values.
//!
//! Locks are judged on the planned state (dependencies re-evaluated), and every problem is
//! reported at once.

use crate::analysis::{self, Analysis};
use crate::binding::Binding;
use crate::catalog;
use crate::choose::{self, Choice};
use crate::host::{Generation, HostView};
use crate::library::ResolvedProfile;
use crate::setting::{Confidence, DataTable, Decision, Outcome};
use crate::setting::{Excluded, Setting};
use crate::suggest;
use crate::verdict::{Severity, Target, Verdict, Violation, ViolationKind};
use redfish_client::dependencies::{DependencyEvaluator, Flag};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::attribute_registry::{Attribute, AttributeRegistry, ValueProblem};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use std::collections::BTreeMap;

/// How strict validation is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Attributes absent on the host are errors instead of warnings.
    pub strict: bool,
}

/// Validates the BIOS settings of `profile` against the `host`'s registry and current values.
///
/// Every problem is reported, sorted by attribute. Read-only, hidden and forced values are
/// judged on the planned state: current values overlaid with the profile's values and the
/// plan's automatic unlocks, with the registry's dependencies re-evaluated. Setting an
/// attribute to the value it already has, or would be forced to, is never a problem.
pub fn validate(profile: &ResolvedProfile, host: &HostView<'_>, options: &ValidateOptions) -> Vec<Violation> {
    check_bios(profile, host, options).violations
}

/// Validates the iDRAC settings of `profile` against the iDRAC's own attribute registry
/// (`manager_registry`, not the host's BIOS registry) and the `host`'s `DellAttributes`, by
/// group. Same rules as [`validate`]; the groups' values are judged together, since their names
/// do not overlap.
pub fn validate_idrac(
    profile: &ResolvedProfile,
    host: &HostView<'_>,
    manager_registry: &AttributeRegistry,
    options: &ValidateOptions,
) -> Vec<Violation> {
    let registry = manager_registry;
    let current = host.idrac;
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
    let analysis = analysis::analyse(&evaluator, &merged, &desired, &reserved, false);
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

pub(crate) fn check_bios(profile: &ResolvedProfile, host: &HostView<'_>, options: &ValidateOptions) -> Checked {
    let (registry, current) = (host.registry, host.bios);
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
    let planned = evaluator.evaluate(&analysis::overlaid(current, &fixed));
    let mut violations = Vec::new();
    let mut desired = Attributes::new();
    let mut choices = BTreeMap::new();
    for (name, s) in &profile.bios {
        let Some(definition) = evaluator.attribute(name) else {
            violations.push(absent(Target::Bios, s, profile.host.generation, registry, options));
            continue;
        };
        let (excluded, decisions) = fit_layout(s, evaluator.attribute("ProcCcds"));
        let value = match s.wanted.fixed() {
            Some(v) => {
                // A fixed value keeps a record only where a table warned or split ASIDs.
                let warned = decisions.iter().any(|d| d.outcome == Outcome::Warning);
                if warned || s.asid_split.is_some() {
                    let reason = match &s.asid_split {
                        Some(split) => split.reason.clone(),
                        None => "fixed value".to_owned(),
                    };
                    choices.insert(
                        name.clone(),
                        Choice {
                            candidates: vec![v.clone()],
                            chosen: Some(v.clone()),
                            reason,
                            decisions: decisions.clone(),
                            asid_split: s.asid_split.clone(),
                            confidence: s.confidence,
                        },
                    );
                }
                v.clone()
            }
            None => {
                let mut choice = choose::choose(name, &s.wanted, &excluded, definition, &planned, s.confidence);
                choice.decisions = decisions;
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
    let mut analysis = analysis::analyse(&evaluator, current, &desired, &reserved, true);
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
                let confidence = profile.bios.get(&name).map_or(Confidence::Inferred, |s| s.confidence);
                choices.insert(
                    name,
                    Choice {
                        candidates: vec![value],
                        chosen: None,
                        reason,
                        decisions: Vec::new(),
                        asid_split: None,
                        confidence,
                    },
                );
            }
        }
        analysis = analysis::analyse(&evaluator, current, &desired, &reserved, true);
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

/// The exclusions and decisions of `setting` on a host whose `ProcCcds` definition is
/// `proc_ccds`: a layout row assumes a CCD count, and a host whose `ProcCcds` list offers more
/// CCDs than that does not have that layout, so the row's exclusions are dropped, with a
/// warning.
fn fit_layout(setting: &Setting, proc_ccds: Option<&Attribute>) -> (Vec<Excluded>, Vec<Decision>) {
    let mut excluded = setting.excluded.clone();
    let mut decisions = setting.decisions.clone();
    let offered = proc_ccds.map(|a| a.allowed_values().filter_map(|v| v.parse::<u32>().ok()).max());
    let assumed = decisions
        .iter()
        .find(|d| d.table == DataTable::NpsLayout)
        .and_then(|d| d.ccds);
    if let (Some(Some(most)), Some(ccds)) = (offered, assumed)
        && most > ccds
    {
        excluded.retain(|e| e.table != Some(DataTable::NpsLayout));
        for d in decisions.iter_mut().filter(|d| d.table == DataTable::NpsLayout) {
            d.outcome = Outcome::Warning;
            d.rules_out.clear();
            d.reason = format!(
                "this host's ProcCcds offers {most} CCDs where the CPU layout table gives {ccds}: the table's layout does not fit this host, so Dell's per-layout row is not applied ({})",
                d.reason
            );
        }
    }
    (excluded, decisions)
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
    if expected_on.is_none() && (catalog::knows_attribute(name) || Binding::shipped_writes(name)) {
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
