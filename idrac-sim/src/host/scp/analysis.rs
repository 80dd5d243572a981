//! What importing a profile would change and what it could not, checked as the iDRAC checks a
//! PATCH of the same values, with one result message per attribute: shared by the preview and
//! the import.

use super::parameters::covers;
use super::state::Staged;
use super::values::{text_of, typed};
use crate::host::accounts::state::users_key;
use crate::host::core::{Host, State};
use crate::host::refusals::{hidden, not_allowed_now, read_only, unknown_attribute, value_problem};
use crate::messages::{self, idrac};
use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::oem::dell::scp::{BIOS_FQDD, Component, ComponentKind, ScpAttribute, ScpDocument, attribute_name};
use redfish_client::resources::attribute_registry::{AttributeRegistry, AttributeType};
use redfish_client::resources::bios::AttributeValue;
use serde_json::{Value, json};

/// The `Users.N.*` fields the emulated accounts have.
const ACCOUNT_FIELDS: [&str; 4] = ["UserName", "Password", "Enable", "Privilege"];

/// One attribute's result, as a task message (`ServerConfigurationProfileResults`).
pub(crate) fn result(name: &str, old: Option<&str>, new: &str, problem: Option<&Value>) -> Value {
    let (message, id) = match problem {
        Some(p) => (
            p["Message"]
                .as_str()
                .unwrap_or("The value cannot be applied.")
                .to_owned(),
            p["MessageId"].as_str().unwrap_or_default().to_owned(),
        ),
        None => (
            "Successfully Completed Request".to_owned(),
            format!("{}.Success", messages::BASE),
        ),
    };
    let mut dell = json!({
        "@odata.type": "#DellManager.v1_0_0.ServerConfigurationProfileResults",
        "DisplayValue": name,
        "ErrCode": if problem.is_some() { "1" } else { "0" },
        "Name": name,
        "NewValue": new,
        "Severity": if problem.is_some() { "Critical" } else { "OK" },
        "Status": if problem.is_some() { "Failure" } else { "Success" },
    });
    if let Some(old) = old {
        dell["OldValue"] = json!(old);
    }
    json!({
        "Message": message,
        "MessageArgs": [],
        "MessageArgs@odata.count": 0,
        "MessageId": id,
        "Oem": {"Dell": dell},
    })
}

/// A note of the task (`SYS087`, `SYS088`, ...).
pub(crate) fn note(code: &str, text: &str, args: &[&str]) -> Value {
    json!({
        "Message": text,
        "MessageArgs": args,
        "MessageArgs@odata.count": args.len(),
        "MessageId": format!("{}.{code}", messages::IDRAC),
    })
}

impl Host {
    /// What importing `profile` (the components `targets` cover) would change and what it
    /// could not, checked as the iDRAC checks a PATCH of the same values: iDRAC, System and
    /// Lifecycle Controller components first, then the BIOS, then the rest (which the emulator
    /// has no devices for).
    pub(crate) fn analyse(&self, s: &State, profile: &ScpDocument, targets: &[String]) -> Staged {
        let mut staged = Staged::default();
        let mut rest: Vec<&Component> = Vec::new();
        for c in &profile.components {
            match c.kind() {
                ComponentKind::Manager(g) if covers(targets, c.kind()) => {
                    for a in c.attributes.iter().filter(|a| a.set_on_import) {
                        self.check_manager(s, g, a, &mut staged);
                    }
                }
                ComponentKind::Manager(_) | ComponentKind::Bios => {}
                _ if covers(targets, c.kind()) => rest.push(c),
                _ => {}
            }
        }
        if let Some(bios) = profile
            .components
            .iter()
            .find(|c| c.fqdd == BIOS_FQDD && covers(targets, ComponentKind::Bios))
        {
            self.check_bios(s, &bios.attributes, &mut staged);
        }
        for c in rest {
            for (fqdd, a) in c.all_attributes().into_iter().filter(|(_, a)| a.set_on_import) {
                let problem = idrac(
                    "SYS076",
                    &format!("Invalid or unsupported component specified in the input configuration profile: {fqdd}."),
                    &[fqdd],
                    "Make sure the input configuration profile only specifies supported component.",
                    None,
                );
                staged.results.push(result(&a.name, None, &a.value, Some(&problem)));
                staged.failures += 1;
            }
        }
        staged
    }

    fn check_bios(&self, s: &State, attrs: &[ScpAttribute], staged: &mut Staged) {
        let registry = self.registry();
        let requested: Vec<(&ScpAttribute, Option<AttributeValue>)> = attrs
            .iter()
            .filter(|a| a.set_on_import)
            .map(|a| (a, registry.attribute(&a.name).map(|r| typed(r.kind, &a.value))))
            .collect();
        let mut candidate = s.bios.known();
        candidate.extend(s.bios.pending.clone());
        for (a, v) in &requested {
            if let Some(v) = v {
                candidate.insert(a.name.clone(), v.clone());
            }
        }
        let evaluation = self.evaluate(&candidate);
        for (a, value) in requested {
            let current = s.bios.values.get(&a.name).map(text_of);
            let problem = match (registry.attribute(&a.name), &value) {
                (Some(attr), Some(v)) => match attr.check(v) {
                    Err(p) => value_problem(&a.name, v, &p).into_iter().next(),
                    Ok(()) if current.as_deref() == Some(a.value.as_str()) => {
                        // Already so: nothing to do and nothing reported.
                        continue;
                    }
                    Ok(()) if evaluation.is_hidden(&a.name) => hidden(&a.name).into_iter().next(),
                    Ok(()) if evaluation.is_read_only(&a.name) => read_only(&a.name).into_iter().next(),
                    Ok(()) => evaluation.allowed(&a.name).and_then(|allowed| {
                        (!allowed.values.iter().any(|x| Some(x.as_str()) == v.as_str()))
                            .then(|| not_allowed_now(&a.name, v, allowed).into_iter().next())
                            .flatten()
                    }),
                },
                _ => unknown_attribute(&a.name).into_iter().next(),
            };
            staged
                .results
                .push(result(&a.name, current.as_deref(), &a.value, problem.as_ref()));
            match (problem, value) {
                (None, Some(v)) => {
                    staged.bios.insert(a.name.clone(), v);
                    staged.changes += 1;
                }
                _ => staged.failures += 1,
            }
        }
    }

    fn check_manager(&self, s: &State, group: AttributeGroup, a: &ScpAttribute, staged: &mut Staged) {
        let Some(name) = attribute_name(&a.name) else {
            let problem = unknown_attribute(&a.name).into_iter().next();
            staged.results.push(result(&a.name, None, &a.value, problem.as_ref()));
            staged.failures += 1;
            return;
        };
        let mut current_values = s.dell_attributes.groups.get(&group).cloned().unwrap_or_default();
        if group == AttributeGroup::Idrac {
            Self::users_attributes(s, &mut current_values);
        }
        let current = current_values.get(&name).map(text_of);
        if current.as_deref() == Some(a.value.as_str()) {
            return;
        }
        let account_field = users_key(&name).map(|(_, f)| f);
        if group == AttributeGroup::Idrac && account_field.is_some_and(|f| !ACCOUNT_FIELDS.contains(&f)) {
            // The emulated accounts have these four fields and no others.
            let problem = unknown_attribute(&name).into_iter().next();
            staged
                .results
                .push(result(&a.name, current.as_deref(), &a.value, problem.as_ref()));
            staged.failures += 1;
            return;
        }
        if group == AttributeGroup::Idrac && account_field.is_some() {
            // Checked when applied, with the account rules.
            staged.users.push((name, AttributeValue::from(a.value.as_str())));
            staged.results.push(result(&a.name, current.as_deref(), &a.value, None));
            staged.changes += 1;
            return;
        }
        let registry: Option<&AttributeRegistry> = self.fixture.manager_registry.as_ref();
        let evaluator = registry.map(DependencyEvaluator::new);
        let entry = evaluator.as_ref().and_then(|e| e.attribute(&name));
        let (value, problem) = match (entry, registry) {
            (None, Some(_)) => (None, unknown_attribute(&name).into_iter().next()),
            (None, None) if current.is_none() => (None, unknown_attribute(&name).into_iter().next()),
            (None, None) => (Some(AttributeValue::from(a.value.as_str())), None),
            (Some(attr), _) => {
                // Enumerations are shown by their display strings; a ValueName is taken too.
                let shown = attr
                    .values
                    .iter()
                    .find(|v| v.value_name == a.value || v.value_display_name.as_deref() == Some(a.value.as_str()))
                    .map(|v| v.value_display_name.clone().unwrap_or_else(|| v.value_name.clone()));
                let v = match shown {
                    Some(display) => AttributeValue::from(display),
                    None => typed(attr.kind, &a.value),
                };
                let by_display = attr.kind == AttributeType::Enumeration
                    && v.as_str()
                        .is_some_and(|t| attr.values.iter().any(|x| x.value_display_name.as_deref() == Some(t)));
                let checked = if by_display { Ok(()) } else { attr.check(&v) };
                match checked {
                    Err(p) => (None, value_problem(&name, &v, &p).into_iter().next()),
                    Ok(()) if attr.is_read_only() => (None, read_only(&name).into_iter().next()),
                    Ok(()) => (Some(v), None),
                }
            }
        };
        staged
            .results
            .push(result(&a.name, current.as_deref(), &a.value, problem.as_ref()));
        match value {
            Some(v) if problem.is_none() => {
                staged.dell_attributes.entry(group).or_default().insert(name, v);
                staged.changes += 1;
            }
            _ => staged.failures += 1,
        }
    }
}
