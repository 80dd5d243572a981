//! Pure builders for request paths and bodies. No IO, so every shape is unit-tested here.

use crate::auth::Password;
use crate::resources::bios::{Attributes, SettingsApplyTime};
use crate::resources::boot::{BootSource, OverrideEnabled};
use crate::resources::computer_system::ResetType;
use crate::resources::secure_boot::ResetKeysType;
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

/// The `PATCH` of a system that sets its boot override: only `BootSourceOverrideTarget` and
/// `BootSourceOverrideEnabled` (with `UefiTargetBootSourceOverride` for a `UefiTarget`), never
/// `BootSourceOverrideMode`: on iDRAC9 a mode in the request is a staged setting that queues a
/// BIOS job and costs a second reboot (and collides with a job already staged).
pub fn boot_override_body(target: BootSource, enabled: OverrideEnabled, uefi_path: Option<&str>) -> Value {
    let mut boot = Map::new();
    boot.insert("BootSourceOverrideTarget".into(), json!(target));
    boot.insert("BootSourceOverrideEnabled".into(), json!(enabled));
    if let Some(path) = uefi_path {
        boot.insert("UefiTargetBootSourceOverride".into(), json!(path));
    }
    json!({ "Boot": boot })
}

/// The `PATCH` that cancels a boot override: target `None`, `Disabled`.
pub fn boot_override_clear_body() -> Value {
    boot_override_body(BootSource::None, OverrideEnabled::Disabled, None)
}

/// `Bios.ChangePassword {"PasswordName", "OldPassword", "NewPassword"}`: an empty old password
/// sets one where none is set, an empty new one clears it.
pub fn change_password_body(name: &str, old: &Password, new: &Password) -> Value {
    json!({ "PasswordName": name, "OldPassword": old.expose(), "NewPassword": new.expose() })
}

/// `SecureBoot.ResetKeys {"ResetKeysType": ...}`.
pub fn reset_keys_body(kind: ResetKeysType) -> Value {
    json!({ "ResetKeysType": kind })
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
    fn a_boot_override_never_carries_a_mode() {
        assert_eq!(
            boot_override_body(BootSource::Pxe, OverrideEnabled::Once, None),
            json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}})
        );
        let uefi = boot_override_body(BootSource::UefiTarget, OverrideEnabled::Once, Some("VenHw(986D)"));
        assert_eq!(uefi["Boot"]["UefiTargetBootSourceOverride"], "VenHw(986D)");
        assert_eq!(uefi["Boot"]["BootSourceOverrideTarget"], "UefiTarget");
        assert!(uefi["Boot"].get("BootSourceOverrideMode").is_none());
        assert_eq!(
            boot_override_clear_body(),
            json!({"Boot": {"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"}})
        );
    }

    #[test]
    fn password_and_key_bodies_use_the_action_parameters() {
        let body = change_password_body("SetupPassword", &Password::new(""), &Password::new("n3w"));
        assert_eq!(
            body,
            json!({"PasswordName": "SetupPassword", "OldPassword": "", "NewPassword": "n3w"})
        );
        assert_eq!(
            reset_keys_body(ResetKeysType::ResetAllKeysToDefault),
            json!({"ResetKeysType": "ResetAllKeysToDefault"})
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
