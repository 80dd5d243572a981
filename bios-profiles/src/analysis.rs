//! The dependency-aware analysis of a set of desired values, shared by validation, diff and plan.
//!
//! It computes the planned state for a set of desired values, the automatic unlocks it needs,
//! and why a desired value cannot be reached.
//!
//! The planned state is the host's current values overlaid with the desired values and the
//! unlocks, with every `CurrentValue` dependency applied by the evaluator. A desired value is
//! *blocked* when, in that state, a rule forces a different value, a `Value` rule does not
//! allow it, or when it differs from the current value and the attribute is read-only or
//! hidden. An attribute the registry defines but the host's `Bios` does not list is hidden
//! (real iDRACs list only visible attributes) unless a rule unhides it in the planned state. A blocked attribute is *freed* by a
//! change that leaves it neither forced, read-only nor hidden. When exactly one value of one
//! attribute the profile does not set frees it (`SysProfile = Custom`), that value becomes an
//! unlock and the analysis starts over; otherwise the block stays, for validation to report.

use crate::verdict::{Condition, Fix, Unlock, ValueOrigin, Verdict, render_conditions};
use redfish_client::dependencies::{DependencyEvaluator, Evaluation, Flag};
use redfish_client::resources::attribute_registry::{AttributeProperty, AttributeType, MapDependency};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use std::collections::{BTreeMap, BTreeSet};

/// The analysis of one set of desired values.
pub(crate) struct Analysis {
    /// The unlocks added, in the order found.
    pub(crate) unlocks: Vec<Unlock>,
    /// One verdict per desired attribute.
    pub(crate) verdicts: BTreeMap<String, Verdict>,
    /// Unlocks that ended up blocked themselves (rare: a later unlock locked an earlier one).
    pub(crate) blocked_unlocks: BTreeMap<String, Verdict>,
}

enum Block<'r> {
    Forced(&'r MapDependency, AttributeValue),
    Restricted(Vec<&'r MapDependency>, Vec<String>),
    Locked(Flag),
}

/// `current` overlaid with `overlay`.
pub(crate) fn overlaid(current: &Attributes, overlay: &Attributes) -> Attributes {
    let mut out = current.clone();
    out.extend(overlay.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// Analyses `desired` (attributes the registry defines, with values that fit their definitions).
/// `reserved` names attributes the profile sets even when their values were rejected: they are
/// never unlocked. With `unlock` false, blocked attributes stay blocked (for writes that cannot
/// carry unlocks).
pub(crate) fn analyse(
    evaluator: &DependencyEvaluator<'_>,
    current: &Attributes,
    desired: &Attributes,
    reserved: &BTreeSet<&str>,
    unlock: bool,
) -> Analysis {
    let mut overlay = desired.clone();
    let mut unlocks: Vec<Unlock> = Vec::new();
    let mut candidate = overlaid(current, &overlay);
    let mut evaluation = evaluator.evaluate(&candidate);
    // Each round adds one unlock of an attribute not yet in the overlay, so this terminates.
    let rounds = if unlock { desired.len() + 1 } else { 0 };
    for _ in 0..rounds {
        let blocked: Vec<(&str, &AttributeValue)> = desired
            .iter()
            .filter(|(n, v)| block(&evaluation, current, n, v).is_some())
            .map(|(n, v)| (n.as_str(), v))
            .collect();
        let free_to_change = |name: &str| !overlay.contains_key(name) && !reserved.contains(name);
        let mut chosen = None;
        for &(name, value) in &blocked {
            let fixes = fixes(evaluator, &evaluation, &candidate, name, value, free_to_change);
            if let [fix] = fixes.as_slice()
                && let [only] = fix.values.as_slice()
            {
                let reason = describe_block(&evaluation, current, desired, &unlocks, name, value);
                chosen = Some((fix.attribute.clone(), only.clone(), reason));
                break;
            }
        }
        let Some((attribute, value, reason)) = chosen else {
            break;
        };
        overlay.insert(attribute.clone(), value.clone());
        candidate = overlaid(current, &overlay);
        evaluation = evaluator.evaluate(&candidate);
        let frees = blocked
            .iter()
            .filter(|(n, v)| block(&evaluation, current, n, v).is_none())
            .map(|(n, _)| (*n).to_owned())
            .collect();
        unlocks.push(Unlock {
            attribute,
            value,
            frees,
            reason,
        });
    }
    let verdicts = desired
        .iter()
        .map(|(name, value)| {
            let v = verdict(
                evaluator,
                &evaluation,
                &candidate,
                current,
                desired,
                &unlocks,
                name,
                value,
            );
            (name.clone(), v)
        })
        .collect();
    let blocked_unlocks = unlocks
        .iter()
        .filter_map(|u| {
            let v = verdict(
                evaluator,
                &evaluation,
                &candidate,
                current,
                desired,
                &unlocks,
                &u.attribute,
                &u.value,
            );
            matches!(
                v,
                Verdict::Conflict { .. } | Verdict::Locked { .. } | Verdict::Restricted { .. }
            )
            .then(|| (u.attribute.clone(), v))
        })
        .collect();
    Analysis {
        unlocks,
        verdicts,
        blocked_unlocks,
    }
}

fn block<'r>(
    evaluation: &Evaluation<'r>,
    current: &Attributes,
    name: &str,
    value: &AttributeValue,
) -> Option<Block<'r>> {
    if let Some(forced) = evaluation.forced(name) {
        return (forced.value != *value).then(|| Block::Forced(forced.rule, forced.value.clone()));
    }
    if let Some(allowed) = evaluation.allowed(name)
        && !value.as_str().is_some_and(|v| allowed.values.iter().any(|a| a == v))
    {
        return Some(Block::Restricted(allowed.rules.clone(), allowed.values.clone()));
    }
    if current.get(name) == Some(value) {
        return None;
    }
    if evaluation.is_hidden(name) {
        Some(Block::Locked(Flag::Hidden))
    } else if evaluation.is_read_only(name) {
        Some(Block::Locked(Flag::ReadOnly))
    } else {
        None
    }
}

/// Whether `name` can be set to `value` in `evaluation`'s state.
fn is_free(evaluation: &Evaluation<'_>, name: &str, value: &AttributeValue) -> bool {
    let allowed = evaluation
        .allowed(name)
        .is_none_or(|a| value.as_str().is_some_and(|v| a.values.iter().any(|x| x == v)));
    allowed && evaluation.forced(name).is_none() && !evaluation.is_read_only(name) && !evaluation.is_hidden(name)
}

/// The rules that force, restrict, lock or hide `name` in `evaluation`'s state.
fn blocking_rules<'r>(evaluation: &Evaluation<'r>, name: &str) -> Vec<&'r MapDependency> {
    let mut rules: Vec<&MapDependency> = evaluation.forced(name).map(|f| f.rule).into_iter().collect();
    if let Some(allowed) = evaluation.allowed(name) {
        rules.extend(allowed.rules.iter().copied());
    }
    rules.extend(evaluation.causes(name, Flag::Hidden));
    rules.extend(evaluation.causes(name, Flag::ReadOnly));
    rules
}

/// The attributes (other than `name`) whose value the conditions of `rules` read, in order.
fn condition_attributes<'r>(rules: &[&'r MapDependency], name: &str) -> Vec<&'r str> {
    let mut out: Vec<&str> = Vec::new();
    for rule in rules {
        for c in &rule.map_from {
            let a = c.map_from_attribute.as_str();
            if c.map_from_property == AttributeProperty::CurrentValue && a != name && !out.contains(&a) {
                out.push(a);
            }
        }
    }
    out
}

/// For each enumeration the blocking rules read (and `may_change` allows), the values that
/// would free `name` to take `value`.
fn fixes(
    evaluator: &DependencyEvaluator<'_>,
    evaluation: &Evaluation<'_>,
    candidate: &Attributes,
    name: &str,
    value: &AttributeValue,
    may_change: impl Fn(&str) -> bool,
) -> Vec<Fix> {
    let rules = blocking_rules(evaluation, name);
    let mut out = Vec::new();
    for attribute in condition_attributes(&rules, name) {
        if !may_change(attribute) || evaluation.is_read_only(attribute) || evaluation.is_hidden(attribute) {
            continue;
        }
        let Some(definition) = evaluator.attribute(attribute) else {
            continue;
        };
        if definition.kind != AttributeType::Enumeration {
            continue;
        }
        let now = candidate.get(attribute).and_then(AttributeValue::as_str);
        let values: Vec<AttributeValue> = definition
            .allowed_values()
            .filter(|v| Some(*v) != now)
            .filter(|v| {
                let mut trial = candidate.clone();
                trial.insert(attribute.to_owned(), AttributeValue::from(*v));
                is_free(&evaluator.evaluate(&trial), name, value)
            })
            .map(AttributeValue::from)
            .collect();
        if !values.is_empty() {
            out.push(Fix {
                attribute: attribute.to_owned(),
                values,
            });
        }
    }
    out
}

fn conditions(
    evaluation: &Evaluation<'_>,
    rules: &[&MapDependency],
    name: &str,
    desired: &Attributes,
    unlocks: &[Unlock],
) -> Vec<Condition> {
    // Dell's conditions join with OR: the reason a rule fires is the conditions that hold.
    let holding: Vec<&str> = rules
        .iter()
        .flat_map(|r| r.map_from.iter())
        .filter(|c| c.map_from_attribute != name && evaluation.holds(c) == Some(true))
        .map(|c| c.map_from_attribute.as_str())
        .collect();
    condition_attributes(rules, name)
        .into_iter()
        .filter(|a| holding.is_empty() || holding.contains(a))
        .map(|attribute| Condition {
            attribute: attribute.to_owned(),
            value: evaluation.values().get(attribute).cloned(),
            origin: if desired.contains_key(attribute) {
                ValueOrigin::Profile
            } else if unlocks.iter().any(|u| u.attribute == attribute) {
                ValueOrigin::Unlock
            } else {
                ValueOrigin::Host
            },
        })
        .collect()
}

fn describe_block(
    evaluation: &Evaluation<'_>,
    current: &Attributes,
    desired: &Attributes,
    unlocks: &[Unlock],
    name: &str,
    value: &AttributeValue,
) -> String {
    let rules = blocking_rules(evaluation, name);
    let because = render_conditions(&conditions(evaluation, &rules, name, desired, unlocks));
    match block(evaluation, current, name, value) {
        Some(Block::Forced(_, forced)) => format!("{because} forces {name} = {forced}"),
        Some(Block::Restricted(_, allowed)) => {
            format!("{name} may only be {} while {because}", allowed.join(", "))
        }
        Some(Block::Locked(Flag::Hidden)) => format!("{name} is hidden while {because}"),
        _ => format!("{name} is read-only while {because}"),
    }
}

#[allow(clippy::too_many_arguments)]
fn verdict(
    evaluator: &DependencyEvaluator<'_>,
    evaluation: &Evaluation<'_>,
    candidate: &Attributes,
    current: &Attributes,
    desired: &Attributes,
    unlocks: &[Unlock],
    name: &str,
    value: &AttributeValue,
) -> Verdict {
    let everything = |_: &str| true;
    match block(evaluation, current, name, value) {
        None => match evaluation.forced(name) {
            Some(f) if current.get(name) != Some(value) => Verdict::Forced {
                because: conditions(evaluation, &[f.rule], name, desired, unlocks),
            },
            _ if current.get(name) == Some(value) => Verdict::InSync,
            _ => Verdict::Write,
        },
        Some(Block::Forced(rule, forced)) => Verdict::Conflict {
            forced,
            because: conditions(evaluation, &[rule], name, desired, unlocks),
            fixes: fixes(evaluator, evaluation, candidate, name, value, everything),
        },
        Some(Block::Restricted(rules, allowed)) => Verdict::Restricted {
            allowed,
            because: conditions(evaluation, &rules, name, desired, unlocks),
            fixes: fixes(evaluator, evaluation, candidate, name, value, everything),
        },
        Some(Block::Locked(flag)) => Verdict::Locked {
            flag,
            because: conditions(evaluation, evaluation.causes(name, flag), name, desired, unlocks),
            fixes: fixes(evaluator, evaluation, candidate, name, value, everything),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redfish_client::resources::attribute_registry::AttributeRegistry;
    use serde_json::{Value, json};

    fn registry(attributes: Value, dependencies: Value) -> AttributeRegistry {
        serde_json::from_value(
            json!({"Id": "T", "RegistryEntries": {"Attributes": attributes, "Dependencies": dependencies}}),
        )
        .unwrap()
    }

    fn enumeration(name: &str, values: &[&str]) -> Value {
        let values: Vec<Value> = values.iter().map(|v| json!({"ValueName": v})).collect();
        json!({"AttributeName": name, "Type": "Enumeration", "Value": values})
    }

    fn rule(target: &str, property: &str, to: Value, from: &[(&str, &str, &str)]) -> Value {
        let from: Vec<Value> = from
            .iter()
            .map(|(a, op, v)| json!({"MapFromAttribute": a, "MapFromCondition": op, "MapFromProperty": "CurrentValue", "MapFromValue": v}))
            .collect();
        json!({"DependencyFor": target, "Type": "Map", "Dependency": {"MapFrom": from, "MapToAttribute": target, "MapToProperty": property, "MapToValue": to}})
    }

    fn attrs(pairs: &[(&str, &str)]) -> Attributes {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect()
    }

    /// Two attributes that each free T (Dell OR: "writable when A = off or B = off"): either
    /// would do, so the choice is ambiguous and no unlock is made.
    #[test]
    fn two_ways_out_means_no_automatic_unlock() {
        let reg = registry(
            json!([
                enumeration("A", &["on", "off"]),
                enumeration("B", &["on", "off"]),
                {"AttributeName": "T", "Type": "Enumeration", "ReadOnly": true,
                 "Value": [{"ValueName": "x"}, {"ValueName": "y"}]}
            ]),
            json!([rule(
                "T",
                "ReadOnly",
                json!(false),
                &[("A", "EQU", "off"), ("B", "EQU", "off")]
            )]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let current = attrs(&[("A", "on"), ("B", "on"), ("T", "x")]);
        let analysis = analyse(&ev, &current, &attrs(&[("T", "y")]), &BTreeSet::new(), true);
        assert!(analysis.unlocks.is_empty());
        let Verdict::Locked { flag, fixes, .. } = &analysis.verdicts["T"] else {
            panic!("{:?}", analysis.verdicts["T"])
        };
        assert_eq!(*flag, Flag::ReadOnly);
        assert_eq!(fixes.len(), 2);
        // With B set by the profile, only A remains free to change: one way out, unlocked.
        let analysis = analyse(
            &ev,
            &current,
            &attrs(&[("T", "y"), ("B", "on")]),
            &BTreeSet::new(),
            true,
        );
        assert_eq!(analysis.unlocks.len(), 1);
        assert_eq!(analysis.unlocks[0].attribute, "A");
        assert_eq!(analysis.unlocks[0].value, "off".into());
        assert_eq!(analysis.unlocks[0].frees, ["T"]);
        assert_eq!(analysis.verdicts["T"], Verdict::Write);
    }

    /// Dell OR the other way round: "read-only when A = on or B = on". Both hold, so no single
    /// change frees T, and the reason names both conditions.
    #[test]
    fn a_lock_held_by_two_conditions_has_no_single_fix() {
        let reg = registry(
            json!([
                enumeration("A", &["on", "off"]),
                enumeration("B", &["on", "off"]),
                enumeration("T", &["x", "y"])
            ]),
            json!([rule(
                "T",
                "ReadOnly",
                json!(true),
                &[("A", "EQU", "on"), ("B", "EQU", "on")]
            )]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let current = attrs(&[("A", "on"), ("B", "on"), ("T", "x")]);
        let analysis = analyse(&ev, &current, &attrs(&[("T", "y")]), &BTreeSet::new(), true);
        assert!(analysis.unlocks.is_empty());
        let Verdict::Locked { because, fixes, .. } = &analysis.verdicts["T"] else {
            panic!("{:?}", analysis.verdicts["T"])
        };
        assert_eq!(because.len(), 2);
        assert!(fixes.is_empty());
        // With B already off, only A's condition holds: A is the reason and A = off the fix.
        let current = attrs(&[("A", "on"), ("B", "off"), ("T", "x")]);
        let analysis = analyse(&ev, &current, &attrs(&[("T", "y")]), &BTreeSet::new(), true);
        assert_eq!(analysis.unlocks.len(), 1);
        assert_eq!(analysis.unlocks[0].attribute, "A");
        assert_eq!(analysis.verdicts["T"], Verdict::Write);
    }

    /// Unlocks chain: T needs U = open, and U itself is locked until V = free.
    #[test]
    fn unlocks_chain_until_nothing_is_blocked() {
        let reg = registry(
            json!([
                enumeration("V", &["locked", "free"]),
                enumeration("U", &["shut", "open"]),
                enumeration("T", &["x", "y"])
            ]),
            json!([
                rule("T", "ReadOnly", json!(true), &[("U", "NEQ", "open")]),
                rule("U", "ReadOnly", json!(true), &[("V", "EQU", "locked")]),
            ]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let current = attrs(&[("V", "locked"), ("U", "shut"), ("T", "x")]);
        // U is read-only now, so it cannot be the unlock: T stays blocked.
        let analysis = analyse(&ev, &current, &attrs(&[("T", "y")]), &BTreeSet::new(), true);
        assert!(analysis.unlocks.is_empty());
        // If the profile opens U, U needs V = free first; then T is writable.
        let analysis = analyse(
            &ev,
            &current,
            &attrs(&[("T", "y"), ("U", "open")]),
            &BTreeSet::new(),
            true,
        );
        assert_eq!(analysis.unlocks.len(), 1);
        assert_eq!(analysis.unlocks[0].attribute, "V");
        assert_eq!(analysis.verdicts["U"], Verdict::Write);
        assert_eq!(analysis.verdicts["T"], Verdict::Write);
    }
}
