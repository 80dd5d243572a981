//! Checking a profile file without a host: its attribute names and value tokens against the
//! shipped catalog and a set of known registries (the emulator's fixture trees), for
//! `rftune profiles validate FILE` with no BMC. A real host's registry may still differ, so
//! only what no known registry or real host shows is reported, and a token that merely is not
//! known is a warning.

use crate::catalog::Catalog;
use crate::profile::Profile;
use crate::setting::{Setting, Wanted};
use crate::suggest;
use crate::verdict::{Severity, Target, Violation, ViolationKind};
use redfish_client::resources::attribute_registry::{Attribute, AttributeRegistry, AttributeType};
use redfish_client::resources::bios::AttributeValue;
use std::collections::BTreeSet;

/// Registries a profile is checked against without a host: BIOS and iDRAC ones, each named
/// (`r7625`).
#[derive(Debug, Clone, Copy)]
pub struct Known<'a> {
    /// BIOS attribute registries, by name.
    pub bios: &'a [(&'a str, &'a AttributeRegistry)],
    /// iDRAC (manager) attribute registries, by name.
    pub idrac: &'a [(&'a str, &'a AttributeRegistry)],
    /// The settings catalog.
    pub catalog: &'a Catalog,
}

/// Every problem of `profile`'s own settings (its platform overrides included) that the known
/// registries and the catalog can tell without a host, sorted by attribute: a name none of
/// them has (an error, with the closest names), a value of the wrong type (an error), a token
/// none of them offers or a real host showed (an error when it is close to one they do —
/// `Enabeld` — else a warning: a host's registry may still offer it).
pub fn check(profile: &Profile, known: &Known<'_>) -> Vec<Violation> {
    let bios = profile
        .bios
        .values()
        .chain(profile.platforms.values().flat_map(|p| p.bios.values()))
        .map(|s| (Target::Bios, s));
    let idrac = profile
        .idrac
        .values()
        .chain(profile.platforms.values().flat_map(|p| p.idrac.values()))
        .map(|s| (Target::Idrac(s.group), &s.setting));
    let mut out: Vec<Violation> = Vec::new();
    for (target, setting) in bios.chain(idrac) {
        let registries = match target {
            Target::Bios => known.bios,
            Target::Idrac(_) => known.idrac,
        };
        if let Some(v) = check_setting(target, setting, registries, known.catalog)
            && !out.contains(&v)
        {
            out.push(v);
        }
    }
    out.sort_by(|a, b| a.attribute.cmp(&b.attribute).then(a.severity.cmp(&b.severity)));
    out
}

fn check_setting(
    target: Target,
    setting: &Setting,
    registries: &[(&str, &AttributeRegistry)],
    catalog: &Catalog,
) -> Option<Violation> {
    let name = &setting.attribute;
    let definitions: Vec<&Attribute> = registries.iter().filter_map(|(_, r)| r.attribute(name)).collect();
    let violation = |severity, kind| Violation {
        target,
        attribute: name.clone(),
        severity,
        kind,
    };
    if definitions.is_empty() {
        if catalog.by_attribute(name).is_some() {
            // Catalogued from a real host, just not in these registries: nothing to check it by.
            return None;
        }
        let names: BTreeSet<&str> = registries
            .iter()
            .flat_map(|(_, r)| r.registry_entries.attributes.iter().map(|a| a.attribute_name.as_str()))
            .chain(
                catalog
                    .entries
                    .iter()
                    .flat_map(|e| e.attributes.iter().map(String::as_str)),
            )
            .collect();
        let checked = registries.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
        return Some(violation(
            Severity::Error,
            ViolationKind::UnknownOffline {
                checked: format!("the shipped catalog or the registries of {checked}"),
                suggestions: suggest::closest(name, names.iter().copied())
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            },
        ));
    }
    let kind = definitions[0].kind;
    if definitions.iter().any(|d| d.kind != kind) {
        return None;
    }
    let values: Vec<AttributeValue> = match &setting.wanted {
        Wanted::Value(v) => vec![v.clone()],
        Wanted::Prefer(values) => values.clone(),
        // Spellings of one intent: one offered anywhere is enough (checked below as a set).
        Wanted::Accept { tokens, .. } => {
            return accept_offered(tokens, &definitions, catalog, name).map(|kind| violation(Severity::Warning, kind));
        }
        Wanted::Derive(_) | Wanted::SevAsids { .. } => return None,
    };
    for value in &values {
        let typed_right = match kind {
            AttributeType::Enumeration | AttributeType::String | AttributeType::Password => {
                matches!(value, AttributeValue::String(_))
            }
            AttributeType::Integer => matches!(value, AttributeValue::Integer(_)),
            AttributeType::Boolean => matches!(value, AttributeValue::Bool(_)),
            AttributeType::Unknown => true,
        };
        if !typed_right {
            return Some(violation(
                Severity::Error,
                ViolationKind::WrongType {
                    value: value.clone(),
                    expected: kind,
                },
            ));
        }
        if kind == AttributeType::Enumeration
            && let Some(token) = value.as_str()
        {
            let offered = offered(&definitions, catalog, name);
            if !offered.iter().any(|o| o == token) {
                let suggestion = suggest::closest(token, offered.iter().map(String::as_str))
                    .first()
                    .map(|s| (*s).to_owned());
                let severity = if suggestion.is_some() {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                return Some(violation(
                    severity,
                    ViolationKind::TokenNotKnown {
                        value: value.clone(),
                        offered,
                        suggestion,
                    },
                ));
            }
        } else if kind == AttributeType::Integer && definitions.iter().all(|d| d.check(value).is_err()) {
            return Some(violation(
                Severity::Error,
                ViolationKind::TokenNotKnown {
                    value: value.clone(),
                    offered: Vec::new(),
                    suggestion: None,
                },
            ));
        }
    }
    None
}

/// Every token the registries defining `name` list, then every token a real host showed.
fn offered(definitions: &[&Attribute], catalog: &Catalog, name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let tokens = definitions
        .iter()
        .flat_map(|d| d.allowed_values().map(str::to_owned))
        .chain(catalog.seen(name).map(|t| t.token.clone()));
    for token in tokens {
        if !out.contains(&token) {
            out.push(token);
        }
    }
    out
}

/// A warning when none of an `accept` list's spellings is offered by a known registry (by
/// value or display name) or was seen on a real host.
fn accept_offered(
    tokens: &[String],
    definitions: &[&Attribute],
    catalog: &Catalog,
    name: &str,
) -> Option<ViolationKind> {
    let squash = |s: &str| s.split_whitespace().collect::<String>().to_ascii_lowercase();
    let any = tokens.iter().any(|t| {
        definitions.iter().any(|d| {
            d.values.iter().any(|v| {
                v.value_name == *t
                    || v.value_display_name
                        .as_deref()
                        .is_some_and(|dn| squash(dn) == squash(t))
            })
        }) || catalog.seen(name).any(|s| s.token == *t)
    });
    (!any).then(|| ViolationKind::TokenNotKnown {
        value: AttributeValue::String(tokens.join(" | ")),
        offered: offered(definitions, catalog, name),
        suggestion: None,
    })
}
