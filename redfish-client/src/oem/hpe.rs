//! HPE iLO specifics: what an iLO's service root and computer system say in their `Oem.Hpe`
//! blocks — which iLO it is, and whether the host is in POST — and its boot order, which HPE
//! keeps in a settings object of its own beside the BIOS ([`BootSettings`], linked from the
//! BIOS's `Oem.Hpe.Links.Boot`). Everything else an iLO serves is standard Redfish (BIOS,
//! settings object, registries, reset), read through the generic models.
//!
//! The shapes follow a real ProLiant DL385 Gen10 Plus v2 on iLO 5 2.72 (the Redfish Mockup
//! Creator capture in NVIDIA's libredfish, `tests/mockups/hpe`) and HPE's iLO 5/6/7 Redfish
//! documentation (HPEDevCom/redfishdocs).

use crate::ODataId;
use crate::resources::bios::{Bios, Settings};
use crate::resources::computer_system::ComputerSystem;
use crate::resources::service_root::ServiceRoot;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The boot order's name in HPE's boot settings (`HpeServerBootSettings`): the boot devices'
/// structured boot strings (`NIC.Slot.1.1.IPv4`, `NVMe.DriveBay.2.5`), first to last.
pub const BOOT_ORDER: &str = "PersistentBootConfigOrder";

/// HPE's boot settings (`…/bios/oem/hpe/boot/`, and its settings object `…/boot/settings/`):
/// the boot devices the BIOS found and the persistent boot order. Like the BIOS's own
/// settings object, the settings object holds the whole order and is processed at the next
/// POST, which records the outcome in the current resource's `@Redfish.Settings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BootSettings {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// The boot devices, as the last POST found them.
    #[serde(default)]
    pub boot_sources: Vec<BootSource>,
    /// The boot order, by structured boot string.
    #[serde(default)]
    pub persistent_boot_config_order: Vec<String>,
    /// Where the order is staged, and what the last POST made of it (on the current
    /// resource).
    #[serde(rename = "@Redfish.Settings", default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
}

impl BootSettings {
    /// The settings object the order is staged in, as the resource names it.
    pub fn settings_object(&self) -> Option<ODataId> {
        self.settings
            .as_ref()
            .and_then(|s| s.settings_object.as_ref())
            .map(|l| l.odata_id.clone())
    }
}

/// One boot device of [`BootSettings`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BootSource {
    /// The device's name in the boot order (`NIC.LOM.1.1.IPv4`).
    #[serde(default)]
    pub structured_boot_string: String,
    /// What setup shows (`Embedded LOM 1 Port 1 : … (PXE IPv4)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_string: Option<String>,
    /// The UEFI boot option's number (`0011`, the standard boot option `Boot0011`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_option_number: Option<String>,
    /// The UEFI device path.
    #[serde(rename = "UEFIDevicePath", default, skip_serializing_if = "Option::is_none")]
    pub uefi_device_path: Option<String>,
}

impl BootSource {
    /// The standard boot option it is (`Boot0011`), where it names its number.
    pub fn option_reference(&self) -> Option<String> {
        let n = self.boot_option_number.as_deref()?.trim();
        (!n.is_empty()).then(|| format!("Boot{n}"))
    }
}

/// Where a BIOS links HPE's boot settings: `Oem.Hpe.Links.Boot`.
pub fn boot_link(bios: &Bios) -> Option<ODataId> {
    bios.oem
        .as_ref()?
        .get("Hpe")?
        .pointer("/Links/Boot/@odata.id")
        .and_then(Value::as_str)
        .map(ODataId::new)
}

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
    fn the_boot_settings_read_as_the_recorded_dl385_shapes_them() {
        let bios: Bios = serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/systems/1/bios/", "Attributes": {},
            "Oem": {"Hpe": {"Links": {"Boot": {"@odata.id": "/redfish/v1/systems/1/bios/oem/hpe/boot/"}}}}
        }))
        .unwrap();
        assert_eq!(
            boot_link(&bios).unwrap().path(),
            "/redfish/v1/systems/1/bios/oem/hpe/boot"
        );
        let boot: BootSettings = serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/systems/1/bios/oem/hpe/boot/",
            "@Redfish.Settings": {"SettingsObject": {"@odata.id": "/redfish/v1/systems/1/bios/oem/hpe/boot/settings/"},
                                  "Time": "2024-06-10T20:01:29+00:00", "Messages": [{"MessageId": "Base.1.0.Success"}]},
            "BootSources": [{"BootOptionNumber": "0021", "BootString": "Slot 5 Port 1 : Mellanox (PXE IPv4)",
                             "StructuredBootString": "NIC.Slot.5.1.IPv4", "UEFIDevicePath": "PciRoot(0x7)/MAC(0,0x1)/IPv4(0.0.0.0)"},
                            {"BootString": "no structured name"}],
            "PersistentBootConfigOrder": ["NIC.Slot.5.1.IPv4"]
        }))
        .unwrap();
        assert_eq!(boot.persistent_boot_config_order, ["NIC.Slot.5.1.IPv4"]);
        assert_eq!(boot.boot_sources[0].option_reference().as_deref(), Some("Boot0021"));
        assert_eq!(boot.boot_sources[1].option_reference(), None);
        assert_eq!(
            boot.settings_object().unwrap().path(),
            "/redfish/v1/systems/1/bios/oem/hpe/boot/settings"
        );
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
