//! HPE iLO specifics: what an iLO's service root and computer system say in their `Oem.Hpe`
//! blocks — which iLO it is, and whether the host is in POST. Everything else an iLO serves is
//! standard Redfish (BIOS, settings object, registries, reset), read through the generic models.
//!
//! The shapes follow a real ProLiant DL385 Gen10 Plus v2 on iLO 5 2.72 (the Redfish Mockup
//! Creator capture in NVIDIA's libredfish, `tests/mockups/hpe`) and HPE's iLO 5/6/7 Redfish
//! documentation (HPEDevCom/redfishdocs).

use crate::resources::bios::Bios;
use crate::resources::computer_system::ComputerSystem;
use crate::resources::service_root::ServiceRoot;
use serde_json::Value;

/// Whether a service root is an HPE iLO's: its `Oem.Hpe` block, else `Vendor` `HPE`.
pub fn is_ilo(root: &ServiceRoot) -> bool {
    let oem = root.oem.as_ref().is_some_and(|o| o.contains_key("Hpe"));
    oem || root.vendor.as_deref().is_some_and(|v| v.eq_ignore_ascii_case("hpe"))
}

/// The iLO generation a service root names: `Oem.Hpe.Manager[0].ManagerType` (`"iLO 5"`), as
/// HPE's own Python library reads it, else `Oem.Hpe.Moniker.PRODGEN`.
pub fn ilo_generation(root: &ServiceRoot) -> Option<u32> {
    let hpe = root.oem.as_ref()?.get("Hpe")?;
    let named = hpe
        .pointer("/Manager/0/ManagerType")
        .or_else(|| hpe.pointer("/Moniker/PRODGEN"))
        .and_then(Value::as_str)?;
    named.trim().strip_prefix("iLO").and_then(|n| n.trim().parse().ok())
}

/// The iLO firmware a service root names (`Oem.Hpe.Manager[0].ManagerFirmwareVersion`, `2.72`).
pub fn ilo_firmware(root: &ServiceRoot) -> Option<String> {
    root.oem
        .as_ref()?
        .get("Hpe")?
        .pointer("/Manager/0/ManagerFirmwareVersion")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Whether the host is in POST, from the system's `Oem.Hpe.PostState`: `Some(true)` while it
/// resets or runs POST up to discovery, `Some(false)` from `InPostDiscoveryComplete` on (the
/// point HPE's schema calls safe to read and write the BIOS configuration) and while off;
/// `None` when the system does not say.
pub fn in_post(system: &ComputerSystem) -> Option<bool> {
    match post_state(system)?.as_str() {
        "Reset" | "InPost" | "InPostDiscoveryStart" => Some(true),
        "InPostDiscoveryComplete" | "FinishedPost" | "PowerOff" => Some(false),
        _ => None,
    }
}

/// The system's `Oem.Hpe.PostState` as it says it (`FinishedPost`).
pub fn post_state(system: &ComputerSystem) -> Option<String> {
    system
        .oem
        .as_ref()?
        .get("Hpe")?
        .get("PostState")?
        .as_str()
        .map(str::to_owned)
}

/// The BIOS (system ROM) family a system runs, `Oem.Hpe.Bios.Current.Family` (`A42`): with the
/// ROM version it names the BIOS attribute registry (`BiosAttributeRegistryA42.v1_2_60`).
pub fn rom_family(system: &ComputerSystem) -> Option<String> {
    system
        .oem
        .as_ref()?
        .get("Hpe")?
        .pointer("/Bios/Current/Family")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The tag the BIOS settings object had when the BIOS last processed it,
/// `Oem.Hpe.SettingsObject.UnmodifiedETag` of the BIOS resource: while the settings object's
/// own `@odata.etag` is the same, nothing was written to it since (HPE's "BIOS data model").
pub fn unmodified_etag(bios: &Bios) -> Option<String> {
    bios.oem
        .as_ref()?
        .get("Hpe")?
        .pointer("/SettingsObject/UnmodifiedETag")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ilo_is_told_by_its_oem_block_and_its_generation_by_the_manager_type() {
        let root: ServiceRoot = serde_json::from_str(
            r#"{"Vendor":"HPE","Oem":{"Hpe":{"Manager":[{"ManagerType":"iLO 5","ManagerFirmwareVersion":"2.72"}]}}}"#,
        )
        .unwrap();
        assert!(is_ilo(&root));
        assert_eq!(ilo_generation(&root), Some(5));
        assert_eq!(ilo_firmware(&root).as_deref(), Some("2.72"));
        let moniker: ServiceRoot = serde_json::from_str(r#"{"Oem":{"Hpe":{"Moniker":{"PRODGEN":"iLO 7"}}}}"#).unwrap();
        assert_eq!(ilo_generation(&moniker), Some(7));
        let dell: ServiceRoot = serde_json::from_str(r#"{"Vendor":"Dell","Oem":{"Dell":{}}}"#).unwrap();
        assert!(!is_ilo(&dell));
        assert_eq!(ilo_generation(&dell), None);
    }

    #[test]
    fn the_post_state_says_when_the_bios_can_be_read_and_written() {
        let system = |state: &str| -> ComputerSystem {
            serde_json::from_value(serde_json::json!({
                "@odata.id": "/redfish/v1/Systems/1",
                "Oem": {"Hpe": {"PostState": state, "Bios": {"Current": {"Family": "A42"}}}}
            }))
            .unwrap()
        };
        assert_eq!(in_post(&system("InPost")), Some(true));
        assert_eq!(in_post(&system("InPostDiscoveryComplete")), Some(false));
        assert_eq!(in_post(&system("FinishedPost")), Some(false));
        assert_eq!(in_post(&system("Unknown")), None);
        assert_eq!(rom_family(&system("FinishedPost")).as_deref(), Some("A42"));
    }

    #[test]
    fn the_bios_names_its_settings_objects_unmodified_tag_and_its_action_targets() {
        // As the recorded DL385 Gen10 Plus v2 shapes them: the password action's target is
        // plural, and the tag sits under `Oem.Hpe.SettingsObject`.
        let bios: Bios = serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/systems/1/bios/",
            "Attributes": {},
            "Actions": {
                "#Bios.ChangePassword": {"target": "/redfish/v1/systems/1/bios/settings/Actions/Bios.ChangePasswords/"},
                "#Bios.ResetBios": {"target": "/redfish/v1/systems/1/bios/settings/Actions/Bios.ResetBios/"}
            },
            "Oem": {"Hpe": {"SettingsObject": {"UnmodifiedETag": "W/\"A1B2\""}}}
        }))
        .unwrap();
        assert_eq!(unmodified_etag(&bios).as_deref(), Some("W/\"A1B2\""));
        assert_eq!(
            bios.action_target("#Bios.ChangePassword").unwrap().path(),
            "/redfish/v1/systems/1/bios/settings/Actions/Bios.ChangePasswords"
        );
        assert_eq!(bios.action_target("#Bios.Other"), None);
    }
}
