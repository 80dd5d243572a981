//! Picking a setting's value on one host: ordered preferences, accepted tokens and derived
//! integers, resolved against the host's attribute registry.
//!
//! A profile states what it wants; the host's registry says what this BIOS offers. Preferences
//! (`prefer = ["4", "2", "1"]`) take the first candidate the registry lists for the attribute
//! and that its iDRAC 7.x `Value` rules allow in the state being planned. Accepted tokens
//! (`accept = ["PerfDeterminism", "PerformanceDeterminism"]`) are spellings of one intent: the
//! first token that is a `ValueName` wins, then the first that matches a `ValueDisplayName`
//! (ignoring case and spacing), whose `ValueName` is then sent. Derived integers take a bound of
//! the registry's range. When nothing fits, the setting is unavailable on that host and is left
//! as is: a guessed token would make iDRAC refuse the whole PATCH (SYS426).

use crate::setting::{AsidSplit, Bound, Confidence, Decision, Excluded, Wanted};
use redfish_client::dependencies::Evaluation;
use redfish_client::resources::attribute_registry::{AllowedValue, Attribute, AttributeType};
use redfish_client::resources::bios::AttributeValue;
use serde::Serialize;

/// How the value of one setting was chosen on a host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    /// What the profile asked for, in order, after platform limits (`["4", "2", "1"]`); for a
    /// derived value, empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<AttributeValue>,
    /// The value picked; `None` when the host offers none of the candidates.
    pub chosen: Option<AttributeValue>,
    /// Why, in one line: `4 is not offered by this host (it offers 0, 1, 2); using 2`.
    pub reason: String,
    /// The data-table rows that ruled values out or warned (the NPS rows by CPU layout and
    /// memory population), as the resolved setting carries them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
    /// The SEV ASID split, for a `sev_asids` setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asid_split: Option<AsidSplit>,
    /// How sure the value chosen is: the setting's confidence for its first choice (a quote
    /// backs the value it names), `inferred` for a later preference taken in its place (the
    /// fallback is our reasoning, not the source's).
    pub confidence: Confidence,
}

impl Choice {
    /// Whether the first candidate was taken as it is (nothing to explain beyond the pick).
    pub fn is_first_choice(&self) -> bool {
        self.chosen.is_some() && self.chosen.as_ref() == self.candidates.first()
    }
}

/// Chooses the value of `name` (`wanted`, not a fixed value) from `definition` and the
/// `Value` rules that hold in `evaluation`. `excluded` are the choices a matching platform
/// rules out; they are passed over with their reasons. `confidence` is the setting's: the
/// choice keeps it for the first preference (and for any accepted spelling of the one intent),
/// and is `inferred` for a later preference.
pub(crate) fn choose(
    name: &str,
    wanted: &Wanted,
    excluded: &[Excluded],
    definition: &Attribute,
    evaluation: &Evaluation<'_>,
    confidence: Confidence,
) -> Choice {
    let (candidates, chosen, reason) = match wanted {
        Wanted::Value(v) => (vec![v.clone()], Some(v.clone()), "fixed value".to_owned()),
        Wanted::Prefer(values) => prefer(name, values, excluded, definition, evaluation),
        Wanted::Accept { intent, tokens } => accept(name, intent, tokens, excluded, definition, evaluation),
        Wanted::Derive(bound) => derive(name, *bound, definition),
        Wanted::SevAsids { .. } => (
            Vec::new(),
            None,
            "the ASID split was not resolved for this host; left as is".to_owned(),
        ),
    };
    let fallback = matches!(wanted, Wanted::Prefer(_)) && chosen.is_some() && chosen.as_ref() != candidates.first();
    Choice {
        candidates,
        chosen,
        reason,
        decisions: Vec::new(),
        asid_split: None,
        confidence: if fallback { Confidence::Inferred } else { confidence },
    }
}

/// The platform's reason for ruling `value` out, if it does.
fn ruled_out<'a>(excluded: &'a [Excluded], value: &AttributeValue) -> Option<&'a str> {
    excluded.iter().find(|e| &e.value == value).map(|e| e.reason.as_str())
}

/// Why `token` cannot be used, or `None` when it can.
fn refusal(name: &str, token: &str, evaluation: &Evaluation<'_>) -> Option<String> {
    let allowed = evaluation.allowed(name)?;
    if allowed.values.iter().any(|v| v == token) {
        return None;
    }
    let values = if allowed.values.is_empty() {
        "no value".to_owned()
    } else {
        allowed.values.join(", ")
    };
    Some(format!(
        "{token} is not allowed by this host's rules in the planned state (they allow {values})"
    ))
}

/// The `ValueName` whose name is `token`.
fn by_value_name<'a>(definition: &'a Attribute, token: &str) -> Option<&'a AllowedValue> {
    definition.values.iter().find(|v| v.value_name == token)
}

/// The `ValueName` whose display name is `token`, ignoring case and spacing.
fn by_display_name<'a>(definition: &'a Attribute, token: &str) -> Option<&'a AllowedValue> {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
    let wanted = squash(token);
    definition
        .values
        .iter()
        .find(|v| v.value_display_name.as_deref().is_some_and(|d| squash(d) == wanted))
}

/// `0, 1, 2`: what the registry lists.
fn offers(definition: &Attribute) -> String {
    let names: Vec<&str> = definition.allowed_values().collect();
    if names.is_empty() {
        "nothing".to_owned()
    } else {
        names.join(", ")
    }
}

fn prefer(
    name: &str,
    values: &[AttributeValue],
    excluded: &[Excluded],
    definition: &Attribute,
    evaluation: &Evaluation<'_>,
) -> (Vec<AttributeValue>, Option<AttributeValue>, String) {
    let mut passed: Vec<String> = Vec::new();
    let mut not_offered = false;
    for (i, value) in values.iter().enumerate() {
        let usable = if let Some(reason) = ruled_out(excluded, value) {
            Err(reason.to_owned())
        } else if definition.kind == AttributeType::Enumeration {
            let found = value
                .as_str()
                .and_then(|t| by_value_name(definition, t).or_else(|| by_display_name(definition, t)));
            match found {
                None => {
                    not_offered = true;
                    Err(format!("{value} is not offered by this host"))
                }
                Some(v) => match refusal(name, &v.value_name, evaluation) {
                    Some(why) => Err(why),
                    None => Ok(AttributeValue::String(v.value_name.clone())),
                },
            }
        } else {
            definition
                .check(value)
                .map(|()| value.clone())
                .map_err(|_| format!("{value} is outside what this host allows"))
        };
        match usable {
            Ok(chosen) => {
                let detail = if i == 0 {
                    "first choice, offered by this host".to_owned()
                } else {
                    let offered = if not_offered {
                        format!(" (it offers {})", offers(definition))
                    } else {
                        String::new()
                    };
                    format!("{}{offered}; using {chosen}", passed.join("; "))
                };
                return (values.to_vec(), Some(chosen), detail);
            }
            Err(why) => passed.push(why),
        }
    }
    let offered = if not_offered {
        format!(" (it offers {})", offers(definition))
    } else {
        String::new()
    };
    (
        values.to_vec(),
        None,
        format!("{}{offered}; no choice is left, so it is left as is", passed.join("; ")),
    )
}

fn accept(
    name: &str,
    intent: &str,
    tokens: &[String],
    excluded: &[Excluded],
    definition: &Attribute,
    evaluation: &Evaluation<'_>,
) -> (Vec<AttributeValue>, Option<AttributeValue>, String) {
    let candidates: Vec<AttributeValue> = tokens.iter().map(|t| AttributeValue::String(t.clone())).collect();
    let mut refused: Vec<String> = Vec::new();
    let allowed = |t: &&String| ruled_out(excluded, &AttributeValue::String((*t).clone())).is_none();
    refused.extend(
        tokens
            .iter()
            .filter_map(|t| ruled_out(excluded, &AttributeValue::String(t.clone())).map(str::to_owned)),
    );
    // ValueNames first, in the profile's order; display names only when no ValueName matches.
    let by_name = tokens
        .iter()
        .filter(allowed)
        .filter_map(|t| by_value_name(definition, t).map(|v| (v, format!("token {t}"))));
    let by_display = tokens.iter().filter(allowed).filter_map(|t| {
        by_display_name(definition, t).map(|v| (v, format!("display name \"{t}\" is token {}", v.value_name)))
    });
    for (value, how) in by_name.chain(by_display) {
        match refusal(name, &value.value_name, evaluation) {
            None => {
                return (
                    candidates,
                    Some(AttributeValue::String(value.value_name.clone())),
                    format!("{how}: this host's name for {intent}"),
                );
            }
            Some(why) => refused.push(why),
        }
    }
    let detail = if refused.is_empty() {
        format!(
            "none of {} ({intent}) is offered by this host (it offers {}); left as is",
            tokens.join(", "),
            offers(definition)
        )
    } else {
        format!(
            "{}; no other token for {intent} is offered by this host (it offers {}); left as is",
            refused.join("; "),
            offers(definition)
        )
    };
    (candidates, None, detail)
}

fn derive(name: &str, bound: Bound, definition: &Attribute) -> (Vec<AttributeValue>, Option<AttributeValue>, String) {
    if definition.kind != AttributeType::Integer {
        return (
            Vec::new(),
            None,
            format!("{name} is not an integer on this host, so no bound applies; left as is"),
        );
    }
    let value = match bound {
        Bound::LowerBound => definition.lower_bound,
        Bound::UpperBound => definition.upper_bound.map(|upper| {
            // The largest value on the step from the lower bound.
            match (definition.lower_bound, definition.scalar_increment) {
                (Some(lower), Some(step)) if step > 0 && upper >= lower => upper - (upper - lower) % step,
                _ => upper,
            }
        }),
    };
    let word = match bound {
        Bound::LowerBound => "lower",
        Bound::UpperBound => "upper",
    };
    match value.map(i64::try_from) {
        Some(Ok(v)) => {
            let registry = match bound {
                Bound::UpperBound => definition.upper_bound,
                Bound::LowerBound => definition.lower_bound,
            };
            let detail = if registry == Some(i128::from(v)) {
                format!("the {word} bound of this host's registry, {v}")
            } else {
                format!("{v}, the last value on the registry's step before its {word} bound")
            };
            (Vec::new(), Some(AttributeValue::Integer(v)), detail)
        }
        Some(Err(_)) => (
            Vec::new(),
            None,
            format!("the {word} bound of {name} does not fit a 64-bit integer; left as is"),
        ),
        None => (
            Vec::new(),
            None,
            format!("this host's registry gives no {word} bound for {name}; left as is"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redfish_client::dependencies::DependencyEvaluator;
    use redfish_client::resources::attribute_registry::AttributeRegistry;
    use redfish_client::resources::bios::Attributes;
    use serde_json::{Value, json};

    fn registry(attributes: Value, dependencies: Value) -> AttributeRegistry {
        serde_json::from_value(
            json!({"Id": "T", "RegistryEntries": {"Attributes": attributes, "Dependencies": dependencies}}),
        )
        .unwrap()
    }

    fn pick(reg: &AttributeRegistry, current: &Attributes, name: &str, wanted: &Wanted) -> Choice {
        let evaluator = DependencyEvaluator::new(reg);
        let evaluation = evaluator.evaluate(current);
        choose(
            name,
            wanted,
            &[],
            evaluator.attribute(name).unwrap(),
            &evaluation,
            Confidence::Stated,
        )
    }

    fn nps(values: &[&str]) -> AttributeRegistry {
        let values: Vec<Value> = values
            .iter()
            .map(|v| json!({"ValueName": v, "ValueDisplayName": v}))
            .collect();
        registry(
            json!([{"AttributeName": "NumaNodesPerSocket", "Type": "Enumeration", "Value": values}]),
            json!([]),
        )
    }

    fn four_two_one() -> Wanted {
        Wanted::Prefer(vec!["4".into(), "2".into(), "1".into()])
    }

    #[test]
    fn the_first_preference_the_host_offers_wins_and_the_reason_names_the_ones_passed_over() {
        let c = pick(
            &nps(&["0", "1", "2", "4"]),
            &Attributes::new(),
            "NumaNodesPerSocket",
            &four_two_one(),
        );
        assert_eq!(c.chosen, Some("4".into()));
        assert!(c.is_first_choice());
        assert_eq!(c.reason, "first choice, offered by this host");
        // The 48-core EPYC 7552 on two sockets: Dell's manual lists NPS 2, 1 and 0 only.
        let c = pick(
            &nps(&["0", "1", "2"]),
            &Attributes::new(),
            "NumaNodesPerSocket",
            &four_two_one(),
        );
        assert_eq!(c.chosen, Some("2".into()));
        assert!(!c.is_first_choice());
        assert_eq!(c.reason, "4 is not offered by this host (it offers 0, 1, 2); using 2");
        let c = pick(&nps(&["0"]), &Attributes::new(), "NumaNodesPerSocket", &four_two_one());
        assert_eq!(c.chosen, None);
        assert_eq!(
            c.reason,
            "4 is not offered by this host; 2 is not offered by this host; 1 is not offered by this host (it offers 0); no choice is left, so it is left as is"
        );
    }

    #[test]
    fn value_rules_in_the_planned_state_pass_over_a_listed_value() {
        // NPS may only be 1 while SncMode = On (a made-up Value rule in Dell's 7.x shape).
        let reg = registry(
            json!([
                {"AttributeName": "SncMode", "Type": "Enumeration", "Value": [{"ValueName": "On"}, {"ValueName": "Off"}]},
                {"AttributeName": "NumaNodesPerSocket", "Type": "Enumeration",
                 "Value": [{"ValueName": "1"}, {"ValueName": "2"}, {"ValueName": "4"}]}
            ]),
            json!([{"DependencyFor": "NumaNodesPerSocket", "Type": "Map", "Dependency": {
                "MapFrom": [{"MapFromAttribute": "SncMode", "MapFromCondition": "EQU",
                             "MapFromProperty": "CurrentValue", "MapFromValue": "On"}],
                "MapToAttribute": "NumaNodesPerSocket", "MapToProperty": "Value",
                "MapToValue": [{"ValueName": "1", "ValueDisplayName": "1"}]}}]),
        );
        let on: Attributes = [("SncMode".to_owned(), "On".into())].into_iter().collect();
        let c = pick(&reg, &on, "NumaNodesPerSocket", &four_two_one());
        assert_eq!(c.chosen, Some("1".into()));
        assert_eq!(
            c.reason,
            "4 is not allowed by this host's rules in the planned state (they allow 1); 2 is not allowed by this host's rules in the planned state (they allow 1); using 1"
        );
        let off: Attributes = [("SncMode".to_owned(), "Off".into())].into_iter().collect();
        assert_eq!(
            pick(&reg, &off, "NumaNodesPerSocket", &four_two_one()).chosen,
            Some("4".into())
        );
    }

    fn dlwm(values: &[(&str, &str)]) -> AttributeRegistry {
        let values: Vec<Value> = values
            .iter()
            .map(|(n, d)| json!({"ValueName": n, "ValueDisplayName": d}))
            .collect();
        registry(
            json!([{"AttributeName": "DynamicLinkWidthManagement", "Type": "Enumeration", "Value": values}]),
            json!([]),
        )
    }

    fn fixed_width() -> Wanted {
        Wanted::Accept {
            intent: "links held at a fixed width".into(),
            tokens: vec!["Force".into(), "Forced".into()],
        }
    }

    #[test]
    fn accepted_tokens_match_value_names_before_display_names() {
        // `Forced` is a display name here and `Force` the value to send.
        let reg = dlwm(&[("Unforced", "Unforced"), ("Force", "Forced")]);
        let c = pick(&reg, &Attributes::new(), "DynamicLinkWidthManagement", &fixed_width());
        assert_eq!(c.chosen, Some("Force".into()));
        assert_eq!(
            c.reason,
            "token Force: this host's name for links held at a fixed width"
        );
        // A registry that names the value `Forced` gets `Forced`.
        let reg = dlwm(&[("Unforced", "Unforced"), ("Forced", "Forced")]);
        let c = pick(&reg, &Attributes::new(), "DynamicLinkWidthManagement", &fixed_width());
        assert_eq!(c.chosen, Some("Forced".into()));
        // Only a display name matches: its ValueName is what gets sent.
        let reg = dlwm(&[("Unforced", "Unforced"), ("FixedWidth", " forced ")]);
        let c = pick(&reg, &Attributes::new(), "DynamicLinkWidthManagement", &fixed_width());
        assert_eq!(c.chosen, Some("FixedWidth".into()));
        assert_eq!(
            c.reason,
            "display name \"Forced\" is token FixedWidth: this host's name for links held at a fixed width"
        );
        // Nothing matches: unavailable, with what the host offers.
        let reg = dlwm(&[("Unforced", "Unforced")]);
        let c = pick(&reg, &Attributes::new(), "DynamicLinkWidthManagement", &fixed_width());
        assert_eq!(c.chosen, None);
        assert_eq!(
            c.reason,
            "none of Force, Forced (links held at a fixed width) is offered by this host (it offers Unforced); left as is"
        );
    }

    fn asid(lower: i64, upper: Value, step: Option<i64>) -> AttributeRegistry {
        let mut attribute = json!({"AttributeName": "CpuMinSevAsid", "Type": "Integer",
                                   "LowerBound": lower, "UpperBound": upper});
        if let Some(step) = step {
            attribute["ScalarIncrement"] = json!(step);
        }
        registry(json!([attribute]), json!([]))
    }

    #[test]
    fn derived_values_follow_the_registry_bounds_of_each_host() {
        let up = Wanted::Derive(Bound::UpperBound);
        for (max, want) in [(15, 15), (253, 253), (509, 509)] {
            let c = pick(&asid(1, json!(max), None), &Attributes::new(), "CpuMinSevAsid", &up);
            assert_eq!(c.chosen, Some(AttributeValue::Integer(want)));
            assert_eq!(c.reason, format!("the upper bound of this host's registry, {want}"));
        }
        let c = pick(&asid(1, json!(10), Some(4)), &Attributes::new(), "CpuMinSevAsid", &up);
        assert_eq!(c.chosen, Some(AttributeValue::Integer(9)));
        assert_eq!(
            c.reason,
            "9, the last value on the registry's step before its upper bound"
        );
        let c = pick(
            &asid(1, json!(18446744073709551615_u64), None),
            &Attributes::new(),
            "CpuMinSevAsid",
            &up,
        );
        assert_eq!(c.chosen, None);
        let low = pick(
            &asid(1, json!(509), None),
            &Attributes::new(),
            "CpuMinSevAsid",
            &Wanted::Derive(Bound::LowerBound),
        );
        assert_eq!(low.chosen, Some(AttributeValue::Integer(1)));
        let unbounded = registry(
            json!([{"AttributeName": "CpuMinSevAsid", "Type": "Integer"}]),
            json!([]),
        );
        let c = pick(&unbounded, &Attributes::new(), "CpuMinSevAsid", &up);
        assert_eq!(c.chosen, None);
        assert_eq!(
            c.reason,
            "this host's registry gives no upper bound for CpuMinSevAsid; left as is"
        );
    }

    #[test]
    fn platform_exclusions_are_passed_over_with_their_reason() {
        let evaluator_registry = nps(&["1", "2", "4"]);
        let evaluator = DependencyEvaluator::new(&evaluator_registry);
        let evaluation = evaluator.evaluate(&Attributes::new());
        let excluded = [Excluded {
            value: "4".into(),
            reason: "4 is not possible on this platform (base [platform c6615]): six channels".into(),
            table: None,
        }];
        let c = choose(
            "NumaNodesPerSocket",
            &four_two_one(),
            &excluded,
            evaluator.attribute("NumaNodesPerSocket").unwrap(),
            &evaluation,
            Confidence::Stated,
        );
        assert_eq!(c.chosen, Some("2".into()));
        assert!(!c.is_first_choice());
        // The source backs its first choice; the fallback taken here is ours.
        assert_eq!(c.confidence, Confidence::Inferred);
        assert_eq!(
            c.reason,
            "4 is not possible on this platform (base [platform c6615]): six channels; using 2"
        );
    }
}
