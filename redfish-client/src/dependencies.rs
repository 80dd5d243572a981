//! Pure evaluation of an [`AttributeRegistry`]'s `Dependencies` against a candidate set of
//! values: which attributes end up read-only or hidden, and which values presets force.
//!
//! A registry's own `ReadOnly`/`Hidden` flags describe the service's **current** values. A
//! change that unlocks an attribute in the same request (`SysProfile: Custom` together with
//! `ProcCStates: Disabled`) is only judged correctly by re-evaluating the rules against the
//! values the request would produce, which is what [`DependencyEvaluator::evaluate`] does.
//!
//! # Semantics
//! - Only `Map` rules are evaluated. `MapToProperty` `CurrentValue` forces a value;
//!   `ReadOnly`, `Hidden` and `GrayOut` set flags (`GrayOut` counts as read-only). Rules on
//!   other properties are ignored.
//! - A condition compares the candidate value of `MapFromAttribute` (or its evaluated
//!   `ReadOnly`/`Hidden` flag) with `MapFromValue`: `EQU`/`NEQ` compare strings exactly and
//!   numbers numerically; `GTR`, `GEQ`, `LSS`, `LEQ` compare numbers (numeric strings count)
//!   and never hold otherwise. A condition on an attribute absent from the values never holds.
//! - Combining conditions: when any condition carries `MapTerms`, the list folds left, each
//!   step joined by the term on the later condition (or else on the earlier one; `AND` when
//!   neither has one). Dell sends no `MapTerms`; there, conditions naming the **same**
//!   attribute are joined with OR and the groups with AND. The OR reading is an inference: a
//!   list such as `SysProfile = A, SysProfile = B` can only ever hold under OR, and Dell emits
//!   such lists for "any preset".
//! - A flag targeted by rules takes the `MapToValue` of the first rule that holds. When none
//!   holds it takes the opposite of the rules' common `MapToValue` (a rule "read-only when X"
//!   means writable otherwise); rules that disagree fall back to the registry's flag. Flags no
//!   rule targets keep the registry's value; `Immutable` is always read-only.
//! - Forced values can enable further rules, so evaluation repeats until nothing changes. Rules
//!   that keep flipping a value are reported through [`Evaluation::converged`].

use crate::resources::attribute_registry::{
    Attribute, AttributeProperty, AttributeRegistry, DependencyType, MapCondition, MapDependency, MapFrom, MapTerms,
};
use crate::resources::bios::{AttributeValue, Attributes};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
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
#[derive(Debug)]
pub struct DependencyEvaluator<'r> {
    attributes: HashMap<&'r str, &'r Attribute>,
    value_rules: Vec<&'r MapDependency>,
    flag_rules: BTreeMap<(&'r str, Flag), Vec<&'r MapDependency>>,
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
    read_only: BTreeSet<String>,
    hidden: BTreeSet<String>,
    causes: BTreeMap<(String, Flag), Vec<&'r MapDependency>>,
    forced: BTreeMap<String, Forced<'r>>,
    converged: bool,
}

impl<'r> DependencyEvaluator<'r> {
    /// Indexes the registry's attributes and rules.
    pub fn new(registry: &'r AttributeRegistry) -> Self {
        let entries = &registry.registry_entries;
        let mut value_rules = Vec::new();
        let mut flag_rules: BTreeMap<(&str, Flag), Vec<&MapDependency>> = BTreeMap::new();
        for dep in &entries.dependencies {
            let Some(rule) = dep.dependency.as_ref() else { continue };
            if dep.kind != DependencyType::Map || rule.map_from.is_empty() {
                continue;
            }
            let target = rule.map_to_attribute.as_str();
            match rule.map_to_property {
                AttributeProperty::CurrentValue => value_rules.push(rule),
                AttributeProperty::ReadOnly | AttributeProperty::GrayOut => {
                    flag_rules.entry((target, Flag::ReadOnly)).or_default().push(rule);
                }
                AttributeProperty::Hidden => flag_rules.entry((target, Flag::Hidden)).or_default().push(rule),
                _ => {}
            }
        }
        Self {
            attributes: entries
                .attributes
                .iter()
                .map(|a| (a.attribute_name.as_str(), a))
                .collect(),
            value_rules,
            flag_rules,
        }
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
                if !self.attributes.contains_key(target) || !conditions_hold(&rule.map_from, &values, &flags) {
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
        let mut read_only = BTreeSet::new();
        let mut hidden = BTreeSet::new();
        for (name, attr) in &self.attributes {
            let dynamic_ro = flags.get(name, Flag::ReadOnly);
            let dynamic_hidden = flags.get(name, Flag::Hidden);
            if dynamic_ro.unwrap_or_else(|| attr.read_only.unwrap_or(false)) || attr.immutable.unwrap_or(false) {
                read_only.insert((*name).to_owned());
            }
            if dynamic_hidden.unwrap_or_else(|| attr.is_hidden()) {
                hidden.insert((*name).to_owned());
            }
        }
        Evaluation {
            values,
            read_only,
            hidden,
            causes: flags.causes,
            forced,
            converged,
        }
    }

    /// Recomputes flags until they stop changing: a condition may read another attribute's flag.
    fn settle_flags(&self, values: &Attributes, mut state: FlagState<'r>) -> FlagState<'r> {
        for _ in 0..=self.flag_rules.len() {
            let next = self.flags(values, &state);
            let stable = next.flags == state.flags;
            state = next;
            if stable {
                break;
            }
        }
        state
    }

    fn flags(&self, values: &Attributes, previous: &FlagState<'r>) -> FlagState<'r> {
        let mut next = FlagState::default();
        for (&(target, flag), rules) in &self.flag_rules {
            let firing: Vec<&MapDependency> = rules
                .iter()
                .copied()
                .filter(|r| conditions_hold(&r.map_from, values, previous))
                .collect();
            let value = match firing.first() {
                Some(rule) => rule.map_to_value.as_bool(),
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
                next.flags.insert((target.to_owned(), flag), v);
            }
            if value == Some(true) && !firing.is_empty() {
                next.causes.insert((target.to_owned(), flag), firing);
            }
        }
        next
    }
}

#[derive(Debug, Default, Clone)]
struct FlagState<'r> {
    flags: HashMap<(String, Flag), bool>,
    causes: BTreeMap<(String, Flag), Vec<&'r MapDependency>>,
}

impl FlagState<'_> {
    fn get(&self, name: &str, flag: Flag) -> Option<bool> {
        self.flags.get(&(name.to_owned(), flag)).copied()
    }
}

fn conditions_hold(conditions: &[MapFrom], values: &Attributes, flags: &FlagState<'_>) -> bool {
    let holds = |c: &MapFrom| condition_holds(c, values, flags);
    if conditions.iter().any(|c| c.map_terms.is_some()) {
        let mut iter = conditions.iter();
        let Some(first) = iter.next() else { return false };
        let mut result = holds(first);
        let mut previous = first;
        for c in iter {
            result = match c.map_terms.or(previous.map_terms) {
                Some(MapTerms::Or) => result || holds(c),
                _ => result && holds(c),
            };
            previous = c;
        }
        return result;
    }
    // Dell style: OR within an attribute, AND across attributes.
    let mut groups: BTreeMap<&str, bool> = BTreeMap::new();
    for c in conditions {
        let entry = groups.entry(c.map_from_attribute.as_str()).or_insert(false);
        *entry = *entry || holds(c);
    }
    !groups.is_empty() && groups.values().all(|&g| g)
}

fn condition_holds(c: &MapFrom, values: &Attributes, flags: &FlagState<'_>) -> bool {
    let name = c.map_from_attribute.as_str();
    let actual = match c.map_from_property {
        AttributeProperty::CurrentValue => match values.get(name) {
            Some(v) => v.clone(),
            None => return false,
        },
        AttributeProperty::ReadOnly | AttributeProperty::GrayOut => match flags.get(name, Flag::ReadOnly) {
            Some(b) => AttributeValue::Bool(b),
            None => return false,
        },
        AttributeProperty::Hidden => match flags.get(name, Flag::Hidden) {
            Some(b) => AttributeValue::Bool(b),
            None => return false,
        },
        _ => return false,
    };
    compare(c.map_from_condition, &actual, &c.map_from_value)
}

fn compare(condition: MapCondition, actual: &AttributeValue, expected: &Value) -> bool {
    let expected = AttributeValue::from(expected.clone());
    let numeric = matches!(actual, AttributeValue::Integer(_)) || matches!(expected, AttributeValue::Integer(_));
    let ordered = || actual.as_number()?.partial_cmp(&expected.as_number()?);
    let equal = || {
        if numeric && let Some(o) = ordered() {
            return o.is_eq();
        }
        *actual == expected
    };
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

    /// The rules that make `name` read-only or hidden; empty when the flag is static (or unset).
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

    /// False when rules kept changing values and evaluation stopped at its bound.
    pub fn converged(&self) -> bool {
        self.converged
    }
}

/// Renders a rule's conditions for messages: `SysProfile ≠ Custom`, `A = x or A = y`.
pub struct Conditions<'a>(pub &'a [MapFrom]);

impl fmt::Display for Conditions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let explicit = self.0.iter().any(|c| c.map_terms.is_some());
        let mut previous: Option<&MapFrom> = None;
        for c in self.0 {
            if let Some(p) = previous {
                let or = if explicit {
                    matches!(c.map_terms.or(p.map_terms), Some(MapTerms::Or))
                } else {
                    p.map_from_attribute == c.map_from_attribute
                };
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

    #[test]
    fn different_attributes_combine_with_and_and_hide() {
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
        let both = ev.evaluate(&values(&[("ApbDis", "Enabled".into()), ("Mode", "Manual".into())]));
        assert!(!both.is_hidden("FixedSocPstate"));
        let one = ev.evaluate(&values(&[("ApbDis", "Enabled".into()), ("Mode", "Auto".into())]));
        // No rule holds, so the flag is the opposite of the rule's MapToValue (false): hidden.
        assert!(one.is_hidden("FixedSocPstate"));
        // ReadOnly is untargeted: the registry's static flag stays.
        assert!(both.is_read_only("FixedSocPstate"));
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
