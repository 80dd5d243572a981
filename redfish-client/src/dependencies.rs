//! Pure evaluation of an [`AttributeRegistry`]'s `Dependencies` against a candidate set of
//! values: which attributes end up read-only or hidden, which values presets force, and which
//! values `Value` rules still allow.
//!
//! A registry's own `ReadOnly`/`Hidden` flags describe the service's **current** values. A
//! change that unlocks an attribute in the same request (`SysProfile: Custom` together with
//! `ProcCStates: Disabled`) is only judged correctly by re-evaluating the rules against the
//! values the request would produce, which is what [`DependencyEvaluator::evaluate`] does.
//!
//! # Semantics
//! - Only `Map` rules are evaluated. `MapToProperty` `CurrentValue` forces a value;
//!   `ReadOnly`, `Hidden` and `GrayOut` set flags (`GrayOut` counts as read-only); `Value`
//!   (iDRAC 7.x) lists the only values the attribute accepts while its conditions hold. Rules
//!   of other kinds or on other properties are skipped (a debug log counts them).
//! - A condition compares the candidate value of `MapFromAttribute` (or its evaluated
//!   `ReadOnly`/`Hidden` flag) with `MapFromValue`: `EQU`/`NEQ` compare strings exactly and
//!   numbers numerically; `GTR`, `GEQ`, `LSS`, `LEQ` compare numbers (numeric strings count)
//!   and never hold otherwise.
//! - A condition on an attribute absent from the values (a hidden attribute, whose value only
//!   the BMC knows) is *unknown*, and rules combine with three-valued logic: `true or unknown`
//!   holds, `false or unknown` is unknown. An unknown rule neither fires nor clears its flag,
//!   so the flag keeps the registry's value, which the BMC computed knowing the hidden value.
//!   Forcing and `Value` rules act only when they hold.
//! - Combining conditions: **when no rule of the registry carries `MapTerms` (Dell), all
//!   conditions of a rule join with OR**, across different attributes too. This is what real
//!   iDRAC registries mean: on two R750 registries (iDRAC 6.00 and 7.10) every decidable rule
//!   whose conditions name different attributes fits OR and none fits AND, e.g. `HttpDev1Ip` is
//!   read-only when `HttpDev1EnDis = Disabled` *or* `HttpDev1DhcpEnDis = Enabled`. When the
//!   registry uses `MapTerms`, a rule's conditions fold left to right as DMTF describes, each
//!   step joined by the term on the later condition (or else on the earlier one), AND when
//!   neither carries one.
//! - A flag targeted by rules takes the `MapToValue` of the first rule that holds. When none
//!   holds it takes the opposite of the rules' common `MapToValue` (a rule "read-only when X"
//!   means writable otherwise); rules that disagree fall back to the registry's flag. Flags no
//!   rule targets keep the registry's value; `Immutable` is always read-only.
//! - Hidden attributes are absent from a real iDRAC's `GET …/Bios`. Given that listing
//!   ([`DependencyEvaluator::with_listing`]), an attribute the registry defines but the listing
//!   omits is hidden unless a `Hidden` rule says otherwise for the candidate values.
//! - `Value` rules: the allowed list is the intersection of the lists of every rule on the
//!   attribute that holds; the registry's own list still applies.
//! - Forced values can enable further rules, so evaluation repeats until nothing changes. Rules
//!   that keep flipping a value are reported through [`Evaluation::converged`].

use crate::resources::attribute_registry::{
    Attribute, AttributeProperty, AttributeRegistry, DependencyType, MapCondition, MapDependency, MapFrom, MapTerms,
};
use crate::resources::bios::{AttributeValue, Attributes};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A flag a rule can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flag {
    /// Cannot be changed (registry `ReadOnly`, `GrayOut` or `Immutable`).
    ReadOnly,
    /// Not shown, and not settable.
    Hidden,
}

/// Evaluates a registry's dependencies; build once per registry, evaluate many candidates.
#[derive(Debug, Clone)]
pub struct DependencyEvaluator<'r> {
    // Fx hashing: the evaluator looks names up thousands of times per evaluation, and SipHash
    // (DoS resistance the registry's own names do not need) was a fifth of its time.
    attributes: FxHashMap<&'r str, &'r Attribute>,
    value_rules: Vec<&'r MapDependency>,
    flag_rules: BTreeMap<(&'r str, Flag), Vec<&'r MapDependency>>,
    allow_rules: BTreeMap<&'r str, Vec<&'r MapDependency>>,
    explicit_terms: bool,
    listed: Option<FxHashSet<String>>,
}

/// A `Value` rule's restriction in force: the values an attribute still accepts.
#[derive(Debug, Clone, PartialEq)]
pub struct Allowed<'r> {
    /// The value names every holding rule allows (their intersection), in the first rule's order.
    pub values: Vec<String>,
    /// The rules that hold.
    pub rules: Vec<&'r MapDependency>,
}

/// A value a rule forces.
#[derive(Debug, Clone, PartialEq)]
pub struct Forced<'r> {
    /// The value the attribute takes.
    pub value: AttributeValue,
    /// The rule that forces it.
    pub rule: &'r MapDependency,
}

/// The outcome of evaluating the rules against one candidate set of values.
#[derive(Debug, Clone)]
pub struct Evaluation<'r> {
    values: Attributes,
    read_only: BTreeSet<&'r str>,
    hidden: BTreeSet<&'r str>,
    causes: BTreeMap<(String, Flag), Vec<&'r MapDependency>>,
    forced: BTreeMap<String, Forced<'r>>,
    allowed: BTreeMap<String, Allowed<'r>>,
    converged: bool,
}

impl<'r> DependencyEvaluator<'r> {
    /// Indexes the registry's attributes and rules.
    pub fn new(registry: &'r AttributeRegistry) -> Self {
        let entries = &registry.registry_entries;
        let mut value_rules = Vec::new();
        let mut flag_rules: BTreeMap<(&str, Flag), Vec<&MapDependency>> = BTreeMap::new();
        let mut allow_rules: BTreeMap<&str, Vec<&MapDependency>> = BTreeMap::new();
        let mut skipped = 0usize;
        for dep in &entries.dependencies {
            let Some(rule) = dep.dependency.as_ref() else {
                skipped += 1;
                continue;
            };
            if dep.kind != DependencyType::Map || rule.map_from.is_empty() {
                skipped += 1;
                continue;
            }
            let target = rule.map_to_attribute.as_str();
            match rule.map_to_property {
                AttributeProperty::CurrentValue => value_rules.push(rule),
                AttributeProperty::ReadOnly | AttributeProperty::GrayOut => {
                    flag_rules.entry((target, Flag::ReadOnly)).or_default().push(rule);
                }
                AttributeProperty::Hidden => flag_rules.entry((target, Flag::Hidden)).or_default().push(rule),
                AttributeProperty::Value if rule.allowed_values().is_some() => {
                    allow_rules.entry(target).or_default().push(rule);
                }
                _ => skipped += 1,
            }
        }
        if skipped > 0 {
            tracing::debug!(
                "registry {}: skipped {skipped} dependency rule(s) of a kind or on a property this evaluator does not model",
                registry.id
            );
        }
        let explicit_terms = entries
            .dependencies
            .iter()
            .filter_map(|d| d.dependency.as_ref())
            .any(|r| r.map_from.iter().any(|c| c.map_terms.is_some()));
        Self {
            attributes: entries
                .attributes
                .iter()
                .map(|a| (a.attribute_name.as_str(), a))
                .collect(),
            value_rules,
            flag_rules,
            allow_rules,
            explicit_terms,
            listed: None,
        }
    }

    /// Declares which attributes the service lists in its current values (`GET …/Bios`). Real
    /// iDRACs omit hidden attributes there, so an attribute the registry defines but the
    /// listing lacks is hidden, unless `Hidden` rules decide otherwise for a candidate.
    #[must_use]
    pub fn with_listing<'a>(mut self, listed: impl IntoIterator<Item = &'a String>) -> Self {
        self.listed = Some(listed.into_iter().cloned().collect());
        self
    }

    /// Whether the registry joins conditions with explicit `MapTerms` (DMTF) rather than
    /// Dell's implicit OR.
    pub fn uses_map_terms(&self) -> bool {
        self.explicit_terms
    }

    /// The definition of `name`, if the registry has it.
    pub fn attribute(&self, name: &str) -> Option<&'r Attribute> {
        self.attributes.get(name).copied()
    }

    /// Evaluates the rules against `candidate` (typically current values overlaid with the
    /// values to be set) until forced values stop changing.
    pub fn evaluate(&self, candidate: &Attributes) -> Evaluation<'r> {
        let mut values = candidate.clone();
        let mut flags = FlagState::default();
        let mut forced = BTreeMap::new();
        let mut converged = false;
        // Each round either changes no value (done) or applies at least one forced value; more
        // rounds than rules means rules keep undoing each other.
        for _ in 0..=self.value_rules.len() + 1 {
            flags = self.settle_flags(&values, flags);
            forced.clear();
            let mut changed = false;
            for rule in &self.value_rules {
                let target = rule.map_to_attribute.as_str();
                if !self.attributes.contains_key(target)
                    || self.conditions_hold(&rule.map_from, &values, &flags) != Some(true)
                {
                    continue;
                }
                let value = AttributeValue::from(rule.map_to_value.clone());
                if values.get(target) != Some(&value) {
                    values.insert(target.to_owned(), value.clone());
                    changed = true;
                }
                forced.insert(target.to_owned(), Forced { value, rule });
            }
            if !changed {
                converged = true;
                break;
            }
        }
        let flags = self.settle_flags(&values, flags);
        let mut read_only = Vec::new();
        let mut hidden = Vec::new();
        for (name, attr) in &self.attributes {
            let dynamic_ro = flags.get(name, Flag::ReadOnly);
            let dynamic_hidden = flags.get(name, Flag::Hidden);
            if dynamic_ro.unwrap_or_else(|| attr.read_only.unwrap_or(false)) || attr.immutable.unwrap_or(false) {
                read_only.push(*name);
            }
            let unlisted = self.listed.as_ref().is_some_and(|l| !l.contains(*name));
            if dynamic_hidden.unwrap_or_else(|| attr.is_hidden() || unlisted) {
                hidden.push(*name);
            }
        }
        // Sorted first, the sets are built in one pass rather than name by name.
        read_only.sort_unstable();
        hidden.sort_unstable();
        let mut allowed = BTreeMap::new();
        for (&target, rules) in &self.allow_rules {
            let holding: Vec<&MapDependency> = rules
                .iter()
                .copied()
                .filter(|r| self.conditions_hold(&r.map_from, &values, &flags) == Some(true))
                .collect();
            let Some(first) = holding.first() else { continue };
            let mut list = first.allowed_values().unwrap_or_default();
            for rule in &holding[1..] {
                let other = rule.allowed_values().unwrap_or_default();
                list.retain(|v| other.contains(v));
            }
            allowed.insert(
                target.to_owned(),
                Allowed {
                    values: list,
                    rules: holding,
                },
            );
        }
        Evaluation {
            values,
            read_only: read_only.into_iter().collect(),
            hidden: hidden.into_iter().collect(),
            causes: flags
                .causes
                .into_iter()
                .map(|((name, flag), rules)| ((name.to_owned(), flag), rules))
                .collect(),
            forced,
            allowed,
            converged,
        }
    }

    /// Recomputes flags until they stop changing: a condition may read another attribute's flag.
    fn settle_flags(&self, values: &Attributes, mut state: FlagState<'r>) -> FlagState<'r> {
        // The values stay put while flags settle: index them once for the many lookups.
        let values: FxHashMap<&str, &AttributeValue> = values.iter().map(|(k, v)| (k.as_str(), v)).collect();
        for _ in 0..=self.flag_rules.len() {
            let next = self.flags(&values, &state);
            let stable = next.flags == state.flags;
            state = next;
            if stable {
                break;
            }
        }
        state
    }

    fn flags(&self, values: &impl Values, previous: &FlagState<'r>) -> FlagState<'r> {
        let mut next = FlagState {
            flags: FxHashMap::with_capacity_and_hasher(previous.flags.len(), Default::default()),
            causes: Vec::with_capacity(previous.causes.len()),
        };
        for (&(target, flag), rules) in &self.flag_rules {
            let mut firing: Vec<&MapDependency> = Vec::new();
            let mut unknown = false;
            for rule in rules {
                match self.conditions_hold(&rule.map_from, values, previous) {
                    Some(true) => firing.push(rule),
                    Some(false) => {}
                    None => unknown = true,
                }
            }
            let value = match firing.first() {
                Some(rule) => rule.map_to_value.as_bool(),
                // A rule that may hold for all we know: the registry's flag stands.
                None if unknown => None,
                None => {
                    let first = rules[0].map_to_value.as_bool();
                    if rules.iter().all(|r| r.map_to_value.as_bool() == first) {
                        first.map(|v| !v)
                    } else {
                        None
                    }
                }
            };
            if let Some(v) = value {
                next.flags.insert((target, flag), v);
            }
            if value == Some(true) {
                // Set by rules that fire, or (none firing) by rules that would clear it.
                let causes = if firing.is_empty() { rules.clone() } else { firing };
                next.causes.push(((target, flag), causes));
            }
        }
        next
    }
}

#[derive(Debug, Default, Clone)]
struct FlagState<'r> {
    /// Keyed by names borrowed from the registry: a lookup allocates nothing.
    flags: FxHashMap<(&'r str, Flag), bool>,
    /// In the order of the flag rules' keys, so sorted: the evaluation's map is built from it
    /// in one pass.
    causes: Vec<((&'r str, Flag), Vec<&'r MapDependency>)>,
}

impl FlagState<'_> {
    fn get(&self, name: &str, flag: Flag) -> Option<bool> {
        self.flags.get(&(name, flag)).copied()
    }
}

impl DependencyEvaluator<'_> {
    /// Whether a rule's conditions hold: `None` when that depends on values not known.
    fn conditions_hold(&self, conditions: &[MapFrom], values: &impl Values, flags: &FlagState<'_>) -> Option<bool> {
        let holds = |c: &MapFrom| self.condition_holds(c, values, flags);
        if !self.explicit_terms {
            // Dell: every condition of a rule joins with OR.
            return kleene_or(conditions.iter().map(holds));
        }
        let mut iter = conditions.iter();
        let first = iter.next()?;
        let mut result = holds(first);
        let mut previous = first;
        for c in iter {
            result = match c.map_terms.or(previous.map_terms) {
                Some(MapTerms::Or) => kleene_or([result, holds(c)]),
                _ => kleene_and([result, holds(c)]),
            };
            previous = c;
        }
        result
    }

    fn condition_holds(&self, c: &MapFrom, values: &impl Values, flags: &FlagState<'_>) -> Option<bool> {
        let name = c.map_from_attribute.as_str();
        let static_flag = |flag: Flag| {
            let a = self.attributes.get(name)?;
            Some(match flag {
                Flag::ReadOnly => a.is_read_only(),
                Flag::Hidden => a.is_hidden(),
            })
        };
        let flag = |flag: Flag| {
            flags
                .get(name, flag)
                .or_else(|| static_flag(flag))
                .map(AttributeValue::Bool)
        };
        let actual = match c.map_from_property {
            AttributeProperty::CurrentValue => Cow::Borrowed(values.value(name)?),
            AttributeProperty::ReadOnly | AttributeProperty::GrayOut => Cow::Owned(flag(Flag::ReadOnly)?),
            AttributeProperty::Hidden => Cow::Owned(flag(Flag::Hidden)?),
            _ => return Some(false),
        };
        Some(compare(c.map_from_condition, &actual, &c.map_from_value))
    }
}

/// Values by attribute name, as conditions read them: the candidate map itself, or an index of
/// it while flags settle.
trait Values {
    fn value(&self, name: &str) -> Option<&AttributeValue>;
}

impl Values for Attributes {
    fn value(&self, name: &str) -> Option<&AttributeValue> {
        self.get(name)
    }
}

impl Values for FxHashMap<&str, &AttributeValue> {
    fn value(&self, name: &str) -> Option<&AttributeValue> {
        self.get(name).copied()
    }
}

/// Three-valued OR: true if any is true, false if all are false, else unknown.
fn kleene_or(items: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    let mut unknown = false;
    for item in items {
        match item {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    (!unknown).then_some(false)
}

/// Three-valued AND: false if any is false, true if all are true, else unknown.
fn kleene_and(items: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    kleene_or(items.into_iter().map(|i| i.map(|b| !b))).map(|b| !b)
}

/// Compares a value with a rule's `MapFromValue` as if that were decoded as an
/// [`AttributeValue`] (strings, integers, anything else verbatim), without copying it: rules are
/// compared thousands of times per evaluation.
fn compare(condition: MapCondition, actual: &AttributeValue, expected: &Value) -> bool {
    let expected_integer = expected.as_i64();
    let numeric = matches!(actual, AttributeValue::Integer(_)) || expected_integer.is_some();
    let expected_number = || match expected {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    let ordered = || actual.as_number()?.partial_cmp(&expected_number()?);
    let equal = || {
        if numeric && let Some(o) = ordered() {
            return o.is_eq();
        }
        match (actual, expected) {
            (AttributeValue::Null, Value::Null) => true,
            (AttributeValue::Bool(a), Value::Bool(b)) => a == b,
            (AttributeValue::String(a), Value::String(b)) => a == b,
            (AttributeValue::Integer(a), _) => expected_integer == Some(*a),
            // What decodes as `Other`: numbers beyond i64, arrays, objects.
            (AttributeValue::Other(a), Value::Number(_) | Value::Array(_) | Value::Object(_)) => {
                expected_integer.is_none() && a == expected
            }
            _ => false,
        }
    };
    verdict(condition, equal, ordered)
}

/// What `condition` says, given how the two sides compare: equality, and their order when both
/// are numbers.
fn verdict(
    condition: MapCondition,
    equal: impl FnOnce() -> bool,
    ordered: impl FnOnce() -> Option<std::cmp::Ordering>,
) -> bool {
    match condition {
        MapCondition::Equ => equal(),
        MapCondition::Neq => !equal(),
        MapCondition::Gtr => ordered().is_some_and(|o| o.is_gt()),
        MapCondition::Geq => ordered().is_some_and(|o| o.is_ge()),
        MapCondition::Lss => ordered().is_some_and(|o| o.is_lt()),
        MapCondition::Leq => ordered().is_some_and(|o| o.is_le()),
        MapCondition::Unknown => false,
    }
}

impl<'r> Evaluation<'r> {
    /// The candidate values with every forced value applied.
    pub fn values(&self) -> &Attributes {
        &self.values
    }

    /// Whether `name` is read-only under the candidate values.
    pub fn is_read_only(&self, name: &str) -> bool {
        self.read_only.contains(name)
    }

    /// Whether `name` is hidden under the candidate values.
    pub fn is_hidden(&self, name: &str) -> bool {
        self.hidden.contains(name)
    }

    /// The rules that make `name` read-only or hidden: those that fire, or, when the flag is set
    /// because none of its "cleared when …" rules holds, those rules. Empty when the flag is
    /// static (or unset).
    pub fn causes(&self, name: &str, flag: Flag) -> &[&'r MapDependency] {
        self.causes.get(&(name.to_owned(), flag)).map_or(&[], Vec::as_slice)
    }

    /// The value a rule forces on `name`, if any.
    pub fn forced(&self, name: &str) -> Option<&Forced<'r>> {
        self.forced.get(name)
    }

    /// Every forced value, by attribute name.
    pub fn forced_values(&self) -> &BTreeMap<String, Forced<'r>> {
        &self.forced
    }

    /// Whether one condition holds in this state (`None` when its attribute's value is not
    /// known): to say which conditions of a rule are the reason it fires.
    pub fn holds(&self, condition: &MapFrom) -> Option<bool> {
        let name = condition.map_from_attribute.as_str();
        let actual = match condition.map_from_property {
            AttributeProperty::CurrentValue => Cow::Borrowed(self.values.get(name)?),
            AttributeProperty::ReadOnly | AttributeProperty::GrayOut => {
                Cow::Owned(AttributeValue::Bool(self.is_read_only(name)))
            }
            AttributeProperty::Hidden => Cow::Owned(AttributeValue::Bool(self.is_hidden(name))),
            _ => return Some(false),
        };
        Some(compare(
            condition.map_from_condition,
            &actual,
            &condition.map_from_value,
        ))
    }

    /// The values `Value` rules still allow for `name`, when such a rule holds.
    pub fn allowed(&self, name: &str) -> Option<&Allowed<'r>> {
        self.allowed.get(name)
    }

    /// False when rules kept changing values and evaluation stopped at its bound.
    pub fn converged(&self) -> bool {
        self.converged
    }
}

/// Renders a rule's conditions for messages: `SysProfile ≠ Custom`, `A = x or B = y`.
/// Without `MapTerms` (Dell) conditions join with "or"; with them, as the terms say.
pub struct Conditions<'a>(pub &'a [MapFrom]);

impl fmt::Display for Conditions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let explicit = self.0.iter().any(|c| c.map_terms.is_some());
        let mut previous: Option<&MapFrom> = None;
        for c in self.0 {
            if let Some(p) = previous {
                let or = !explicit || matches!(c.map_terms.or(p.map_terms), Some(MapTerms::Or));
                f.write_str(if or { " or " } else { " and " })?;
            }
            let value = AttributeValue::from(c.map_from_value.clone());
            match c.map_from_property {
                AttributeProperty::CurrentValue => {
                    write!(f, "{} {} {value}", c.map_from_attribute, c.map_from_condition)?;
                }
                prop => write!(f, "{}.{prop:?} {} {value}", c.map_from_attribute, c.map_from_condition)?,
            }
            previous = Some(c);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compare` reads `MapFromValue` as `AttributeValue::from` would decode it, without the
    /// copy: the same verdict as comparing with the decoded value, for every pair and condition.
    #[test]
    fn comparing_with_a_rule_value_is_comparing_with_it_decoded() {
        fn decoded(condition: MapCondition, actual: &AttributeValue, expected: &Value) -> bool {
            let expected = AttributeValue::from(expected.clone());
            let numeric =
                matches!(actual, AttributeValue::Integer(_)) || matches!(expected, AttributeValue::Integer(_));
            let ordered = || actual.as_number()?.partial_cmp(&expected.as_number()?);
            let equal = || {
                if numeric && let Some(o) = ordered() {
                    return o.is_eq();
                }
                *actual == expected
            };
            verdict(condition, equal, ordered)
        }
        let json = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(7),
            json!(-7),
            json!(7.0),
            json!(7.5),
            json!(u64::MAX),
            json!("7"),
            json!(" 7 "),
            json!("Enabled"),
            json!("enabled"),
            json!(""),
            json!([1]),
            json!({"a": 1}),
        ];
        let conditions = [
            MapCondition::Equ,
            MapCondition::Neq,
            MapCondition::Gtr,
            MapCondition::Geq,
            MapCondition::Lss,
            MapCondition::Leq,
            MapCondition::Unknown,
        ];
        for a in &json {
            let actual = AttributeValue::from(a.clone());
            for expected in &json {
                for c in conditions {
                    assert_eq!(
                        compare(c, &actual, expected),
                        decoded(c, &actual, expected),
                        "{actual:?} {c:?} {expected}"
                    );
                }
            }
        }
    }
    use serde_json::json;

    /// A registry in Dell's JSON shape, built from compact rule specs.
    fn registry(attributes: Value, dependencies: Value) -> AttributeRegistry {
        serde_json::from_value(json!({
            "Id": "Synthetic",
            "RegistryEntries": {"Attributes": attributes, "Dependencies": dependencies}
        }))
        .unwrap()
    }

    fn map(target: &str, property: &str, value: Value, from: Value) -> Value {
        json!({"DependencyFor": target, "Type": "Map", "Dependency": {
            "MapFrom": from, "MapToAttribute": target, "MapToProperty": property, "MapToValue": value}})
    }

    fn cond(attr: &str, op: &str, value: Value) -> Value {
        json!({"MapFromAttribute": attr, "MapFromCondition": op, "MapFromProperty": "CurrentValue", "MapFromValue": value})
    }

    fn enum_attr(name: &str, read_only: bool) -> Value {
        json!({"AttributeName": name, "Type": "Enumeration", "ReadOnly": read_only, "Hidden": false})
    }

    fn values(pairs: &[(&str, AttributeValue)]) -> Attributes {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    }

    /// SysProfile with two sub-settings: ProcCStates locked by NEQ Custom, ProcPwrPerf locked by
    /// Dell's repeated-EQU list; PerfOptimized forces both. The registry flags reflect a host at
    /// PerfOptimized (both read-only).
    fn sysprofile_registry() -> AttributeRegistry {
        registry(
            json!([
                enum_attr("SysProfile", false),
                enum_attr("ProcCStates", true),
                enum_attr("ProcPwrPerf", true)
            ]),
            json!([
                map(
                    "ProcCStates",
                    "ReadOnly",
                    json!(true),
                    json!([cond("SysProfile", "NEQ", json!("Custom"))])
                ),
                map(
                    "ProcPwrPerf",
                    "ReadOnly",
                    json!(true),
                    json!([
                        cond("SysProfile", "EQU", json!("PerfOptimized")),
                        cond("SysProfile", "EQU", json!("PerfPerWattOptimizedDapc")),
                    ])
                ),
                map(
                    "ProcCStates",
                    "CurrentValue",
                    json!("Disabled"),
                    json!([cond("SysProfile", "EQU", json!("PerfOptimized"))])
                ),
                map(
                    "ProcPwrPerf",
                    "CurrentValue",
                    json!("MaxPerf"),
                    json!([cond("SysProfile", "EQU", json!("PerfOptimized"))])
                ),
                map(
                    "ProcPwrPerf",
                    "CurrentValue",
                    json!("SysDbpm"),
                    json!([cond("SysProfile", "EQU", json!("PerfPerWattOptimizedDapc"))])
                ),
            ]),
        )
    }

    #[test]
    fn custom_unlocks_sub_settings_the_registry_marks_read_only() {
        let reg = sysprofile_registry();
        let ev = DependencyEvaluator::new(&reg);
        let custom = ev.evaluate(&values(&[
            ("SysProfile", "Custom".into()),
            ("ProcCStates", "Enabled".into()),
            ("ProcPwrPerf", "OsDbpm".into()),
        ]));
        assert!(!custom.is_read_only("ProcCStates"));
        assert!(!custom.is_read_only("ProcPwrPerf"));
        assert!(custom.forced_values().is_empty());
        assert_eq!(custom.values()["ProcCStates"], "Enabled".into());
        assert!(custom.converged());
    }

    #[test]
    fn preset_locks_and_forces_with_or_list() {
        let reg = sysprofile_registry();
        let ev = DependencyEvaluator::new(&reg);
        let perf = ev.evaluate(&values(&[
            ("SysProfile", "PerfOptimized".into()),
            ("ProcCStates", "Enabled".into()),
            ("ProcPwrPerf", "OsDbpm".into()),
        ]));
        assert!(perf.is_read_only("ProcCStates") && perf.is_read_only("ProcPwrPerf"));
        assert_eq!(perf.values()["ProcCStates"], "Disabled".into());
        assert_eq!(perf.values()["ProcPwrPerf"], "MaxPerf".into());
        assert_eq!(perf.forced("ProcCStates").unwrap().value, "Disabled".into());
        assert_eq!(
            Conditions(&perf.causes("ProcPwrPerf", Flag::ReadOnly)[0].map_from).to_string(),
            "SysProfile = PerfOptimized or SysProfile = PerfPerWattOptimizedDapc"
        );
        // The second preset of the OR list locks too and forces its own value.
        let dapc = ev.evaluate(&values(&[
            ("SysProfile", "PerfPerWattOptimizedDapc".into()),
            ("ProcPwrPerf", "MaxPerf".into()),
        ]));
        assert!(dapc.is_read_only("ProcPwrPerf"));
        assert_eq!(dapc.values()["ProcPwrPerf"], "SysDbpm".into());
        // A preset missing from the OR list leaves ProcPwrPerf writable, ProcCStates locked.
        let os = ev.evaluate(&values(&[("SysProfile", "PerfPerWattOptimizedOs".into())]));
        assert!(!os.is_read_only("ProcPwrPerf"));
        assert!(os.is_read_only("ProcCStates"));
        assert_eq!(
            Conditions(&os.causes("ProcCStates", Flag::ReadOnly)[0].map_from).to_string(),
            "SysProfile ≠ Custom"
        );
    }

    /// Dell's real shape (R750 registries): `HttpDev1Ip` is read-only when the device is
    /// disabled **or** DHCP is on. Four combinations, answers worked out by hand.
    #[test]
    fn conditions_on_different_attributes_join_with_or_when_no_rule_has_map_terms() {
        let reg = registry(
            json!([
                enum_attr("HttpDev1EnDis", false),
                enum_attr("HttpDev1DhcpEnDis", false),
                {"AttributeName": "HttpDev1Ip", "Type": "String", "ReadOnly": true}
            ]),
            json!([map(
                "HttpDev1Ip",
                "ReadOnly",
                json!(true),
                json!([
                    cond("HttpDev1EnDis", "EQU", json!("Disabled")),
                    cond("HttpDev1DhcpEnDis", "EQU", json!("Enabled"))
                ])
            )]),
        );
        let ev = DependencyEvaluator::new(&reg);
        assert!(!ev.uses_map_terms());
        let cases = [
            ("Disabled", "Enabled", true),
            ("Disabled", "Disabled", true),
            ("Enabled", "Enabled", true),
            ("Enabled", "Disabled", false),
        ];
        for (device, dhcp, read_only) in cases {
            let e = ev.evaluate(&values(&[
                ("HttpDev1EnDis", device.into()),
                ("HttpDev1DhcpEnDis", dhcp.into()),
            ]));
            assert_eq!(e.is_read_only("HttpDev1Ip"), read_only, "EnDis={device} Dhcp={dhcp}");
        }
        let e = ev.evaluate(&values(&[
            ("HttpDev1EnDis", "Enabled".into()),
            ("HttpDev1DhcpEnDis", "Enabled".into()),
        ]));
        assert_eq!(
            Conditions(&e.causes("HttpDev1Ip", Flag::ReadOnly)[0].map_from).to_string(),
            "HttpDev1EnDis = Disabled or HttpDev1DhcpEnDis = Enabled"
        );
    }

    /// A rule "PerfPerWattOptimizedOs forces ControlledTurbo off" listed next to another
    /// attribute's condition fires on either; under the old AND reading it never could.
    #[test]
    fn a_forcing_rule_fires_on_any_of_its_conditions() {
        let reg = registry(
            json!([
                enum_attr("SysProfile", false),
                enum_attr("ProcTurboMode", false),
                enum_attr("ControlledTurbo", false)
            ]),
            json!([map(
                "ControlledTurbo",
                "CurrentValue",
                json!("Disabled"),
                json!([
                    cond("SysProfile", "EQU", json!("PerfPerWattOptimizedOs")),
                    cond("ProcTurboMode", "EQU", json!("Disabled"))
                ])
            )]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let e = ev.evaluate(&values(&[
            ("SysProfile", "PerfPerWattOptimizedOs".into()),
            ("ProcTurboMode", "Enabled".into()),
            ("ControlledTurbo", "Enabled".into()),
        ]));
        assert_eq!(e.values()["ControlledTurbo"], "Disabled".into());
        let e = ev.evaluate(&values(&[
            ("SysProfile", "Custom".into()),
            ("ProcTurboMode", "Enabled".into()),
            ("ControlledTurbo", "Enabled".into()),
        ]));
        assert_eq!(e.values()["ControlledTurbo"], "Enabled".into());
        assert!(e.forced_values().is_empty());
    }

    #[test]
    fn a_hidden_rule_unhides_on_either_condition() {
        let reg = registry(
            json!([enum_attr("ApbDis", false), enum_attr("Mode", false),
                   {"AttributeName": "FixedSocPstate", "Type": "Enumeration", "Hidden": true, "ReadOnly": true}]),
            json!([map(
                "FixedSocPstate",
                "Hidden",
                json!(false),
                json!([
                    cond("ApbDis", "EQU", json!("Enabled")),
                    cond("Mode", "EQU", json!("Manual"))
                ])
            )]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let one = ev.evaluate(&values(&[("ApbDis", "Enabled".into()), ("Mode", "Auto".into())]));
        assert!(!one.is_hidden("FixedSocPstate"));
        let neither = ev.evaluate(&values(&[("ApbDis", "Disabled".into()), ("Mode", "Auto".into())]));
        // No rule holds, so the flag is the opposite of the rule's MapToValue (false): hidden.
        assert!(neither.is_hidden("FixedSocPstate"));
        // ReadOnly is untargeted: the registry's static flag stays.
        assert!(one.is_read_only("FixedSocPstate"));
    }

    /// iDRAC 7.10's third rule kind: `ProcAts` may only be `Disabled` while virtualization is
    /// off. Two rules that hold at once allow only what both allow.
    #[test]
    fn value_rules_restrict_the_allowed_list_while_they_hold() {
        let list = |names: &[&str]| -> Value {
            names
                .iter()
                .map(|n| json!({"ValueName": n, "ValueDisplayName": n}))
                .collect()
        };
        let reg = registry(
            json!([enum_attr("ProcVirtualization", false), enum_attr("Sriov", false),
                   {"AttributeName": "ProcAts", "Type": "Enumeration",
                    "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}, {"ValueName": "Auto"}]}]),
            json!([
                map(
                    "ProcAts",
                    "Value",
                    list(&["Disabled"]),
                    json!([cond("ProcVirtualization", "EQU", json!("Disabled"))])
                ),
                map(
                    "ProcAts",
                    "Value",
                    list(&["Disabled", "Auto"]),
                    json!([cond("Sriov", "EQU", json!("Disabled"))])
                ),
            ]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let free = ev.evaluate(&values(&[
            ("ProcVirtualization", "Enabled".into()),
            ("Sriov", "Enabled".into()),
        ]));
        assert!(free.allowed("ProcAts").is_none());
        let one = ev.evaluate(&values(&[
            ("ProcVirtualization", "Enabled".into()),
            ("Sriov", "Disabled".into()),
        ]));
        assert_eq!(one.allowed("ProcAts").unwrap().values, ["Disabled", "Auto"]);
        let both = ev.evaluate(&values(&[
            ("ProcVirtualization", "Disabled".into()),
            ("Sriov", "Disabled".into()),
        ]));
        let allowed = both.allowed("ProcAts").unwrap();
        assert_eq!(allowed.values, ["Disabled"]);
        assert_eq!(allowed.rules.len(), 2);
    }

    /// Real R750 registry: `PxeDev13Protocol` is read-only when `PxeDev13EnDis = Disabled`, but
    /// `PxeDev13EnDis` is hidden, so its value is unknown to a client. Such a rule neither fires
    /// nor clears the flag: the registry's flag (computed by the BMC) stands. A known true
    /// condition in the same OR still decides.
    #[test]
    fn rules_on_unknown_values_keep_the_registry_flag() {
        let reg = registry(
            json!([enum_attr("Known", false),
                   {"AttributeName": "Locked", "Type": "Enumeration", "ReadOnly": true},
                   {"AttributeName": "Open", "Type": "Enumeration", "ReadOnly": false}]),
            json!([
                map(
                    "Locked",
                    "ReadOnly",
                    json!(true),
                    json!([cond("HiddenSwitch", "EQU", json!("Disabled"))])
                ),
                map(
                    "Open",
                    "ReadOnly",
                    json!(true),
                    json!([
                        cond("HiddenSwitch", "EQU", json!("Disabled")),
                        cond("Known", "EQU", json!("lock"))
                    ])
                ),
            ]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let e = ev.evaluate(&values(&[("Known", "free".into())]));
        assert!(e.is_read_only("Locked"), "unknown: registry says read-only");
        assert!(!e.is_read_only("Open"), "unknown: registry says writable");
        let e = ev.evaluate(&values(&[("Known", "lock".into())]));
        assert!(e.is_read_only("Open"), "true or unknown holds");
    }

    /// Real iDRACs omit hidden attributes from `GET …/Bios`: an attribute the listing lacks is
    /// hidden unless a rule unhides it for the candidate values.
    #[test]
    fn attributes_missing_from_the_listing_are_hidden_unless_a_rule_unhides_them() {
        let reg = registry(
            json!([
                enum_attr("ApbDis", false),
                enum_attr("Shown", false),
                enum_attr("Secret", false),
                enum_attr("FixedSocPstate", false)
            ]),
            json!([map(
                "FixedSocPstate",
                "Hidden",
                json!(true),
                json!([cond("ApbDis", "EQU", json!("Disabled"))])
            )]),
        );
        let listing = values(&[("ApbDis", "Disabled".into()), ("Shown", "a".into())]);
        let ev = DependencyEvaluator::new(&reg).with_listing(listing.keys());
        let now = ev.evaluate(&listing);
        assert!(now.is_hidden("Secret") && now.is_hidden("FixedSocPstate"));
        assert!(!now.is_hidden("Shown"));
        let mut candidate = listing.clone();
        candidate.insert("ApbDis".into(), "Enabled".into());
        let after = ev.evaluate(&candidate);
        assert!(!after.is_hidden("FixedSocPstate"), "the rule decides, not the listing");
        assert!(after.is_hidden("Secret"), "no rule: stays hidden");
        // Without a listing, the registry's flags alone decide.
        assert!(!DependencyEvaluator::new(&reg).evaluate(&listing).is_hidden("Secret"));
    }

    #[test]
    fn ordered_conditions_compare_numbers_and_numeric_strings() {
        let reg = registry(
            json!([{"AttributeName": "Delay", "Type": "Integer"}, enum_attr("Nps", false),
                   enum_attr("A", false), enum_attr("B", false), enum_attr("C", false), enum_attr("D", false)]),
            json!([
                map("A", "ReadOnly", json!(true), json!([cond("Delay", "GTR", json!(100))])),
                map("B", "ReadOnly", json!(true), json!([cond("Delay", "LEQ", json!(100))])),
                map("C", "ReadOnly", json!(true), json!([cond("Nps", "GEQ", json!("2"))])),
                map("D", "ReadOnly", json!(true), json!([cond("Nps", "LSS", json!(1))])),
            ]),
        );
        let ev = DependencyEvaluator::new(&reg);
        let e = ev.evaluate(&values(&[("Delay", 100.into()), ("Nps", "4".into())]));
        assert_eq!(
            [
                e.is_read_only("A"),
                e.is_read_only("B"),
                e.is_read_only("C"),
                e.is_read_only("D")
            ],
            [false, true, true, false]
        );
        let e = ev.evaluate(&values(&[("Delay", 101.into()), ("Nps", "0".into())]));
        assert_eq!(
            [
                e.is_read_only("A"),
                e.is_read_only("B"),
                e.is_read_only("C"),
                e.is_read_only("D")
            ],
            [true, false, false, true]
        );
        // A non-numeric string never satisfies an ordered comparison.
        let e = ev.evaluate(&values(&[("Delay", 5.into()), ("Nps", "Auto".into())]));
        assert!(!e.is_read_only("C") && !e.is_read_only("D"));
        // EQU compares an integer with a numeric JSON value numerically.
        let reg2 = registry(
            json!([{"AttributeName": "N", "Type": "Integer"}, enum_attr("X", false)]),
            json!([map("X", "Hidden", json!(true), json!([cond("N", "EQU", json!(1))]))]),
        );
        let e = DependencyEvaluator::new(&reg2).evaluate(&values(&[("N", 1.into())]));
        assert!(e.is_hidden("X"));
    }

    #[test]
    fn explicit_map_terms_override_the_dell_reading() {
        let mut or = cond("B", "EQU", json!("y"));
        or["MapTerms"] = json!("OR");
        let reg = registry(
            json!([enum_attr("A", false), enum_attr("B", false), enum_attr("T", false)]),
            json!([map(
                "T",
                "ReadOnly",
                json!(true),
                json!([cond("A", "EQU", json!("x")), or])
            )]),
        );
        let ev = DependencyEvaluator::new(&reg);
        // A = x fails, B = y holds: OR across different attributes because the rule says so.
        let e = ev.evaluate(&values(&[("A", "z".into()), ("B", "y".into())]));
        assert!(e.is_read_only("T"));
        let e = ev.evaluate(&values(&[("A", "z".into()), ("B", "n".into())]));
        assert!(!e.is_read_only("T"));
    }

    #[test]
    fn forced_values_chain_until_stable() {
        // Profile=P forces Mode=Fast; Mode=Fast forces Level=3 (a two-step chain).
        let reg = registry(
            json!([enum_attr("Profile", false), enum_attr("Mode", false), {"AttributeName": "Level", "Type": "Integer"}]),
            json!([
                map(
                    "Level",
                    "CurrentValue",
                    json!(3),
                    json!([cond("Mode", "EQU", json!("Fast"))])
                ),
                map(
                    "Mode",
                    "CurrentValue",
                    json!("Fast"),
                    json!([cond("Profile", "EQU", json!("P"))])
                ),
            ]),
        );
        let e = DependencyEvaluator::new(&reg).evaluate(&values(&[
            ("Profile", "P".into()),
            ("Mode", "Slow".into()),
            ("Level", 1.into()),
        ]));
        assert_eq!(e.values()["Mode"], "Fast".into());
        assert_eq!(e.values()["Level"], AttributeValue::Integer(3));
        assert_eq!(e.forced_values().len(), 2);
        assert!(e.converged());
    }

    #[test]
    fn oscillating_rules_report_no_convergence() {
        let reg = registry(
            json!([enum_attr("A", false)]),
            json!([
                map("A", "CurrentValue", json!("x"), json!([cond("A", "EQU", json!("y"))])),
                map("A", "CurrentValue", json!("y"), json!([cond("A", "EQU", json!("x"))])),
            ]),
        );
        let e = DependencyEvaluator::new(&reg).evaluate(&values(&[("A", "x".into())]));
        assert!(!e.converged());
    }

    #[test]
    fn absent_attributes_unknown_rules_and_immutable() {
        let reg = registry(
            json!([enum_attr("T", false), {"AttributeName": "Ver", "Type": "String", "ReadOnly": false, "Immutable": true},
                   enum_attr("Forced", false)]),
            json!([
                map(
                    "T",
                    "ReadOnly",
                    json!(true),
                    json!([cond("Missing", "NEQ", json!("x"))])
                ),
                map("T", "LowerBound", json!(3), json!([cond("Missing", "NEQ", json!("x"))])),
                map("Ghost", "CurrentValue", json!("v"), json!([])),
                map(
                    "NotInRegistry",
                    "CurrentValue",
                    json!("v"),
                    json!([cond("T", "EQU", json!("a"))])
                ),
            ]),
        );
        let e = DependencyEvaluator::new(&reg).evaluate(&values(&[("T", "a".into())]));
        assert!(!e.is_read_only("T"), "a condition on an absent attribute never holds");
        assert!(e.is_read_only("Ver"));
        assert!(!e.values().contains_key("Ghost") && !e.values().contains_key("NotInRegistry"));
    }

    #[test]
    fn disagreeing_rules_fall_back_to_registry_flag() {
        let reg = registry(
            json!([enum_attr("A", false), {"AttributeName": "T", "Type": "Enumeration", "ReadOnly": true}]),
            json!([
                map("T", "ReadOnly", json!(true), json!([cond("A", "EQU", json!("x"))])),
                map("T", "ReadOnly", json!(false), json!([cond("A", "EQU", json!("y"))])),
            ]),
        );
        let ev = DependencyEvaluator::new(&reg);
        assert!(!ev.evaluate(&values(&[("A", "y".into())])).is_read_only("T"));
        assert!(ev.evaluate(&values(&[("A", "x".into())])).is_read_only("T"));
        assert!(
            ev.evaluate(&values(&[("A", "z".into())])).is_read_only("T"),
            "registry flag"
        );
    }

    #[test]
    fn conditions_on_flags_of_other_attributes() {
        let reg = registry(
            json!([enum_attr("P", false), enum_attr("S", false), enum_attr("T", false)]),
            json!([
                map("S", "ReadOnly", json!(true), json!([cond("P", "EQU", json!("lock"))])),
                map(
                    "T",
                    "Hidden",
                    json!(true),
                    json!([{"MapFromAttribute": "S", "MapFromCondition": "EQU",
                    "MapFromProperty": "ReadOnly", "MapFromValue": true}])
                ),
            ]),
        );
        let ev = DependencyEvaluator::new(&reg);
        assert!(ev.evaluate(&values(&[("P", "lock".into())])).is_hidden("T"));
        assert!(!ev.evaluate(&values(&[("P", "free".into())])).is_hidden("T"));
    }
}
