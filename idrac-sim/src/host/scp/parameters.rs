//! The parameters of the Manager's SCP actions as clients send them: the targets (a list or one
//! comma-joined string), the share (a local buffer only), the choices each action lists, what
//! an export includes, and the profile an import carries.

use crate::messages::{self, idrac};
use crate::served::SCP_TARGETS;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::oem::dell::scp::{ComponentKind, Format, ScpDocument};
use serde_json::Value;

/// `Target` as a list of strings (Dell's scripts) or one comma-joined string (Ansible, sushy).
pub(crate) fn targets(body: &Value) -> Result<Vec<String>, Value> {
    let raw = body.pointer("/ShareParameters/Target");
    let list: Vec<String> = match raw {
        None => vec!["ALL".to_owned()],
        Some(Value::String(s)) => s.split(',').map(|t| t.trim().to_owned()).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .flat_map(|s| s.split(','))
            .map(|t| t.trim().to_owned())
            .collect(),
        Some(other) => {
            return Err(messages::action_parameter(
                "ShareParameters",
                "Target",
                Some(&other.to_string()),
                &SCP_TARGETS,
            ));
        }
    };
    for t in &list {
        if !SCP_TARGETS.iter().any(|k| k.eq_ignore_ascii_case(t)) {
            return Err(messages::action_parameter(
                "ShareParameters",
                "Target",
                Some(t),
                &SCP_TARGETS,
            ));
        }
    }
    Ok(list)
}

/// iDRAC10's rule: `Target`, when given, is a list (each entry may still join several
/// components with commas, as Dell's own scripts send `["IDRAC,BIOS"]` on iDRAC10).
pub(crate) fn listed_targets(body: &Value) -> Result<(), Value> {
    match body.pointer("/ShareParameters/Target") {
        None | Some(Value::Array(_)) => Ok(()),
        Some(other) => {
            let shown = other.to_string();
            Err(messages::base(
                "ActionParameterValueTypeError",
                &format!(
                    "The value {shown} for the parameter ShareParameters/Target is of a different type than the parameter can accept: this iDRAC takes a list of components."
                ),
                &[&shown, "ShareParameters/Target"],
                "Send the targets as a list of strings, such as [\"BIOS\", \"IDRAC\"], and resubmit the request.",
                Some("#/ShareParameters/Target"),
            ))
        }
    }
}

/// Whether the targets cover a component of `kind`.
pub(crate) fn covers(targets: &[String], kind: ComponentKind) -> bool {
    let named = |n: &str| {
        targets
            .iter()
            .any(|t| t.eq_ignore_ascii_case(n) || t.eq_ignore_ascii_case("ALL"))
    };
    match kind {
        ComponentKind::Bios => named("BIOS"),
        ComponentKind::Manager(AttributeGroup::Idrac) => named("IDRAC"),
        ComponentKind::Manager(AttributeGroup::System) => named("System"),
        ComponentKind::Manager(AttributeGroup::LifecycleController) => named("LifecycleController"),
        ComponentKind::Nic => named("NIC") || named("FC") || named("InfiniBand"),
        ComponentKind::Storage => named("RAID") || named("AHCI") || named("PCIeSSD"),
        ComponentKind::EventFilters => named("EventFilters"),
        ComponentKind::Other => named("SupportAssist") || named("ALL"),
    }
}

/// Only local buffers: a share of another type is not emulated.
pub(crate) fn local_only(action: &str, body: &Value) -> Result<(), Value> {
    match body.pointer("/ShareParameters/ShareType").and_then(Value::as_str) {
        None => Ok(()),
        Some(t) if t.eq_ignore_ascii_case("LOCAL") => Ok(()),
        Some(other) => Err(messages::action_parameter(
            action,
            "ShareParameters/ShareType",
            Some(other),
            &["LOCAL"],
        )),
    }
}

/// A string parameter, checked against its allowed values (case as given by the Manager).
pub(crate) fn choice<'a>(
    action: &str,
    body: &'a Value,
    name: &str,
    allowed: &[&'a str],
) -> Result<Option<&'a str>, Value> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => allowed
            .iter()
            .find(|a| a.eq_ignore_ascii_case(s))
            .copied()
            .map(Some)
            .ok_or_else(|| messages::action_parameter(action, name, Some(s), allowed)),
        Some(other) => Err(messages::action_parameter(
            action,
            name,
            Some(&other.to_string()),
            allowed,
        )),
    }
}

/// `IncludeInExport` as a string (Ansible, sushy: comma-joined) or a list (Dell's scripts).
pub(crate) fn include_list(body: &Value) -> Vec<String> {
    match body.get("IncludeInExport") {
        Some(Value::String(s)) => s.split(',').map(|t| t.trim().to_owned()).collect(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// The profile in `ImportBuffer`, read, or why not.
pub(crate) fn buffer(action: &str, body: &Value) -> Result<Result<ScpDocument, String>, Value> {
    let Some(text) = body.get("ImportBuffer").and_then(Value::as_str) else {
        return Err(messages::action_parameter(
            action,
            "ImportBuffer",
            None,
            &["the profile, as XML or JSON text"],
        ));
    };
    if Format::of(text).is_none() {
        return Err(idrac(
            "SYS433",
            "Unable to upload the server configuration profile data because the file type used for the data file is not in the JSON or XML format.",
            &[],
            "Make sure that the file format used is of JSON or XML format, and then retry the operation.",
            Some("#/ImportBuffer"),
        ));
    }
    Ok(ScpDocument::parse(text).map(|(d, _)| d).map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn targets_come_as_a_list_or_a_comma_joined_string_and_are_checked() {
        assert_eq!(
            targets(&json!({"ShareParameters": {"Target": ["IDRAC,BIOS"]}})).unwrap(),
            ["IDRAC", "BIOS"]
        );
        assert_eq!(
            targets(&json!({"ShareParameters": {"Target": "IDRAC, BIOS"}})).unwrap(),
            ["IDRAC", "BIOS"]
        );
        assert_eq!(targets(&json!({})).unwrap(), ["ALL"]);
        assert!(targets(&json!({"ShareParameters": {"Target": "Everything"}})).is_err());
        let t = vec!["BIOS".to_owned()];
        assert!(covers(&t, ComponentKind::Bios));
        assert!(!covers(&t, ComponentKind::Manager(AttributeGroup::Idrac)));
        assert!(covers(&["ALL".to_owned()], ComponentKind::Nic));
    }

    #[test]
    fn idrac10_takes_targets_as_a_list_and_refuses_a_string() {
        assert!(listed_targets(&json!({"ShareParameters": {"Target": ["IDRAC,BIOS"]}})).is_ok());
        assert!(listed_targets(&json!({"ExportFormat": "XML"})).is_ok());
        let refused = listed_targets(&json!({"ShareParameters": {"Target": "IDRAC,BIOS"}})).unwrap_err();
        assert!(
            refused["MessageId"]
                .as_str()
                .unwrap()
                .ends_with("ActionParameterValueTypeError")
        );
        assert!(refused["Message"].as_str().unwrap().contains("list"), "{refused}");
    }
}
