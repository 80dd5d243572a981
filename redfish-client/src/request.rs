//! Pure builders for request paths and bodies. No IO, so every shape is unit-tested here.

use crate::resources::bios::{Attributes, SettingsApplyTime};
use crate::resources::computer_system::ResetType;
use serde_json::{Map, Value, json};

/// The well-known login collection (Redfish ≥ 1.6).
pub const SESSIONS: &str = "/redfish/v1/SessionService/Sessions";

/// The service root.
pub const SERVICE_ROOT: &str = "/redfish/v1";

/// `path?$expand=*($levels=N)`: members inline instead of links.
pub fn expand(path: &str, levels: u8) -> String {
    format!("{}{}$expand=*($levels={levels})", path, separator(path))
}

/// `path?$select=A,B`: only the named properties.
pub fn select(path: &str, properties: &[&str]) -> String {
    format!("{}{}$select={}", path, separator(path), properties.join(","))
}

/// `path?$top=N`: at most the first `n` members of a collection.
pub fn top(path: &str, n: usize) -> String {
    format!("{}{}$top={n}", path, separator(path))
}

fn separator(path: &str) -> char {
    if path.contains('?') { '&' } else { '?' }
}

/// The body that stages settings: `{"Attributes": {...}}` plus `@Redfish.SettingsApplyTime`
/// when an apply time is given (on iDRAC that also creates the configuration job).
pub fn settings_body(attributes: &Attributes, apply_time: Option<&SettingsApplyTime>) -> Value {
    let mut body = Map::new();
    if let Some(at) = apply_time {
        body.insert(
            "@Redfish.SettingsApplyTime".into(),
            serde_json::to_value(at).unwrap_or(Value::Null),
        );
    }
    body.insert(
        "Attributes".into(),
        Value::Object(attributes.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
    );
    Value::Object(body)
}

/// `{"ResetType": "..."}`.
pub fn reset_body(reset: ResetType) -> Value {
    json!({ "ResetType": reset })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::bios::{ApplyTime, AttributeValue};

    #[test]
    fn query_builders() {
        assert_eq!(
            expand("/redfish/v1/Managers/iDRAC.Embedded.1/Jobs", 1),
            "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs?$expand=*($levels=1)"
        );
        assert_eq!(select("/a?x=1", &["Id", "JobState"]), "/a?x=1&$select=Id,JobState");
    }

    #[test]
    fn settings_body_with_and_without_apply_time() {
        let mut attrs = Attributes::new();
        attrs.insert("SysProfile".into(), "Custom".into());
        attrs.insert("CpuMinSevAsid".into(), AttributeValue::Integer(100));
        assert_eq!(
            settings_body(&attrs, None),
            json!({"Attributes": {"SysProfile": "Custom", "CpuMinSevAsid": 100}})
        );
        let window = SettingsApplyTime {
            apply_time: ApplyTime::AtMaintenanceWindowStart,
            maintenance_window_start_time: Some("2026-12-01T02:00:00-06:00".into()),
            maintenance_window_duration_in_seconds: Some(3600),
        };
        assert_eq!(
            settings_body(&attrs, Some(&window))["@Redfish.SettingsApplyTime"],
            json!({"ApplyTime": "AtMaintenanceWindowStart", "MaintenanceWindowStartTime": "2026-12-01T02:00:00-06:00", "MaintenanceWindowDurationInSeconds": 3600})
        );
        assert_eq!(
            settings_body(&attrs, Some(&SettingsApplyTime::on_reset()))["@Redfish.SettingsApplyTime"],
            json!({"ApplyTime": "OnReset"})
        );
    }

    #[test]
    fn reset_body_uses_dmtf_names() {
        assert_eq!(
            reset_body(ResetType::GracefulShutdown),
            json!({"ResetType": "GracefulShutdown"})
        );
    }
}
