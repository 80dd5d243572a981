//! iDRAC attributes: `PATCH` on the `DellAttributes` resources (and the legacy
//! `Managers/<id>/Attributes` paths that serve them), validated against the manager attribute
//! registry and applied at once.

pub(crate) mod state;

use super::accounts::state::users_key;
use super::caller::Caller;
use super::core::Host;
use super::json::set;
use super::refusals::{read_only, unknown_attribute, value_problem};
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Route, exact};
use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::Value;

/// The `DellAttributes` resources, at their path and at the legacy `Managers/<id>/Attributes`.
pub(crate) fn routes() -> Vec<Route> {
    routes_at(AttributeGroup::ALL.into_iter().flat_map(|g| [g.path(), legacy_path(g)]))
}

/// iDRAC10's: at their path only. `Managers/iDRAC.Embedded.1/Attributes` answers 404 there
/// (dsx-ai-factory/libredfish PR 28 falls back to `DellAttributes` on that 404 for iDRAC10; Dell's
/// scripts and Ansible collection moved every attribute call to `DellAttributes`).
pub(crate) fn idrac10_routes() -> Vec<Route> {
    routes_at(AttributeGroup::ALL.into_iter().map(|g| g.path()))
}

/// Reading and writing each group at `paths`.
fn routes_at(paths: impl Iterator<Item = String>) -> Vec<Route> {
    let mut routes = Vec::new();
    for path in paths {
        routes.push(Route::get(exact(path.clone()), |h, r| {
            let group = group_at(r.path).unwrap_or(AttributeGroup::System);
            let recorded = h.fixture.doc(&group.path()).unwrap_or(&Value::Null);
            h.cached(r.path, || Reply::ok(h.dell_attributes(group, recorded)))
        }));
        routes.push(Route::patch(exact(path), |h, r| {
            let group = group_at(r.path).unwrap_or(AttributeGroup::System);
            r.with_json(|b| h.patch_dell_attributes(r.caller, group, b))
        }));
    }
    routes
}

/// The legacy `Managers/<id>/Attributes` path of a group: iDRAC.Embedded.1 is on a real R750
/// (serving the DellAttributes document); Dell says System.Embedded.1 and
/// LifecycleController.Embedded.1 answered there too.
fn legacy_path(group: AttributeGroup) -> String {
    format!("/redfish/v1/Managers/{}/Attributes", group.resource_id())
}

/// The group whose attributes `path` reads or writes, at either path.
pub(crate) fn group_at(path: &str) -> Option<AttributeGroup> {
    AttributeGroup::ALL
        .into_iter()
        .find(|g| g.path() == path || legacy_path(*g) == path)
}

impl Host {
    /// Whether the iDRAC takes HTTP Basic credentials (`Redfish.1.BasicAuthState`).
    pub fn basic_auth_enabled(&self) -> bool {
        self.lock().dell_attributes.basic_auth()
    }

    /// A `DellAttributes` resource with live values.
    pub fn dell_attributes(&self, group: AttributeGroup, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        let mut values = s.dell_attributes.groups.get(&group).cloned().unwrap_or_default();
        if group == AttributeGroup::Idrac {
            Self::users_attributes(&s, &mut values);
        }
        let values = serde_json::to_value(values).unwrap_or_default();
        set(&mut doc, &["Attributes"], values);
        doc
    }

    /// `PATCH DellAttributes/<group>`: validated against the manager registry, applied now.
    /// Enumerations take the registry's `ValueName` or its `ValueDisplayName` (real registries
    /// name values "0"/"1" while `GET` shows and Dell's tools send the display strings); the
    /// display string is stored.
    pub fn patch_dell_attributes(&self, caller: &Caller, group: AttributeGroup, body: &Value) -> Reply {
        let mut s = self.change();
        let Some(requested) = body.get("Attributes").and_then(Value::as_object) else {
            return Reply::error(400, vec![messages::property_missing("Attributes")]);
        };
        // The account attributes are the accounts themselves (`accounts`).
        type Entries<'a> = Vec<(&'a String, &'a Value)>;
        let (users, requested): (Entries<'_>, Entries<'_>) = requested
            .iter()
            .partition(|(k, _)| group == AttributeGroup::Idrac && users_key(k).is_some());
        let registry = self.fixture.manager_registry.as_ref();
        // One index over the registry (the real manager registry has 7,043 attributes).
        let evaluator = registry.map(DependencyEvaluator::new);
        let patch: Attributes = requested
            .into_iter()
            .map(|(k, v)| {
                let value = AttributeValue::from(v.clone());
                let shown = evaluator
                    .as_ref()
                    .and_then(|e| e.attribute(k))
                    .and_then(|a| {
                        let text = value.as_str()?;
                        a.values
                            .iter()
                            .find(|allowed| allowed.value_name == text)
                            .and_then(|allowed| allowed.value_display_name.clone())
                    })
                    .map_or(value, AttributeValue::from);
                (k.clone(), shown)
            })
            .collect();
        let unlocking = patch.len() == 1
            && users.is_empty()
            && patch
                .get(redfish_client::oem::dell::SYSTEM_LOCKDOWN)
                .and_then(AttributeValue::as_str)
                == Some("Disabled");
        if s.dell_attributes.lockdown() && !unlocking {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let users: Vec<(String, AttributeValue)> = users
            .into_iter()
            .map(|(k, v)| (k.clone(), AttributeValue::from(v.clone())))
            .collect();
        let mut candidate = s.dell_attributes.groups.get(&group).cloned().unwrap_or_default();
        let mut problems = Vec::new();
        if registry.is_none() {
            // Nothing to validate against (public mockups lack the registry): only attributes
            // the resource lists exist.
            for name in patch.keys().filter(|n| !candidate.contains_key(*n)) {
                problems.extend(unknown_attribute(name));
            }
        }
        candidate.extend(patch.clone());
        if let Some(evaluator) = &evaluator {
            let evaluation = evaluator.evaluate(&candidate);
            for (name, value) in &patch {
                let Some(attr) = evaluator.attribute(name) else {
                    problems.extend(unknown_attribute(name));
                    continue;
                };
                let by_display = value.as_str().is_some_and(|text| {
                    attr.values
                        .iter()
                        .any(|v| v.value_display_name.as_deref() == Some(text))
                });
                let checked = if by_display { Ok(()) } else { attr.check(value) };
                if let Err(p) = checked {
                    problems.extend(value_problem(name, value, &p));
                } else if name == "ServerPwr.1.PowerCapValue"
                    && candidate
                        .get("ServerPwr.1.PowerCapSetting")
                        .and_then(AttributeValue::as_str)
                        != Some("Enabled")
                {
                    problems.push(idrac(
                        "SYS432",
                        "Unable to set the power cap value because power capping is disabled.",
                        &[name],
                        "Enable power capping (ServerPwr.1.PowerCapSetting) and retry the operation.",
                        Some(&format!("#/Attributes/{name}")),
                    ));
                } else if evaluation.is_read_only(name) {
                    problems.extend(read_only(name));
                }
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        if !users.is_empty()
            && let Err(refused) = self.patch_users_attributes(&mut s, caller, &users)
        {
            return Reply::error(400, refused);
        }
        s.dell_attributes.groups.insert(group, candidate);
        if group == AttributeGroup::Idrac {
            // Lockdown shows in the BIOS registry's flags.
            s.bios.view = None;
        }
        Reply::ok(messages::success_body(vec![messages::sys413()]))
    }
}
