//! `ComputerSystem.Boot` (the boot order and the one-time override) and `BootOption` (one
//! entry of the `BootOptions` collection).

use crate::odata::{Link, ODataId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// `ComputerSystem.Boot`: the persistent order by `BootNNNN` reference and the override used
/// for the next boot(s).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Boot {
    /// The boot order, as `BootOptionReference`s (`Boot0000`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boot_order: Vec<String>,
    /// The `BootOptions` collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_options: Option<Link>,
    /// The device of the override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_source_override_target: Option<BootSource>,
    /// Whether the override applies once, always, or not at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_source_override_enabled: Option<OverrideEnabled>,
    /// UEFI or legacy BIOS for the override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_source_override_mode: Option<OverrideMode>,
    /// The UEFI device path booted when the target is `UefiTarget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uefi_target_boot_source_override: Option<String>,
    /// The targets the service accepts.
    #[serde(
        rename = "BootSourceOverrideTarget@Redfish.AllowableValues",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub allowed_targets: Vec<BootSource>,
}

impl Boot {
    /// Whether an override is set for the next boot(s).
    pub fn override_active(&self) -> bool {
        matches!(
            self.boot_source_override_enabled,
            Some(OverrideEnabled::Once | OverrideEnabled::Continuous)
        ) && !matches!(self.boot_source_override_target, None | Some(BootSource::None))
    }

    /// Whether the service accepts `target` (a service that lists nothing accepts anything).
    pub fn accepts(&self, target: BootSource) -> bool {
        self.allowed_targets.is_empty() || self.allowed_targets.contains(&target)
    }
}

/// DMTF `BootSource`: the devices an override can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum BootSource {
    /// No override.
    None,
    /// The network (PXE).
    Pxe,
    Floppy,
    /// CD or DVD.
    Cd,
    Usb,
    /// The hard disk.
    Hdd,
    /// The BIOS setup utility.
    BiosSetup,
    Utilities,
    Diags,
    UefiShell,
    /// The UEFI device path in `UefiTargetBootSourceOverride`.
    UefiTarget,
    SDCard,
    /// UEFI HTTP boot.
    UefiHttp,
    RemoteDrive,
    UefiBootNext,
    Recovery,
    /// A value this client does not know.
    #[serde(other)]
    Unknown,
}

impl BootSource {
    /// Every named value, in the schema's order.
    pub const ALL: [Self; 16] = [
        Self::None,
        Self::Pxe,
        Self::Floppy,
        Self::Cd,
        Self::Usb,
        Self::Hdd,
        Self::BiosSetup,
        Self::Utilities,
        Self::Diags,
        Self::UefiShell,
        Self::UefiTarget,
        Self::SDCard,
        Self::UefiHttp,
        Self::RemoteDrive,
        Self::UefiBootNext,
        Self::Recovery,
    ];

    /// As the schema spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Pxe => "Pxe",
            Self::Floppy => "Floppy",
            Self::Cd => "Cd",
            Self::Usb => "Usb",
            Self::Hdd => "Hdd",
            Self::BiosSetup => "BiosSetup",
            Self::Utilities => "Utilities",
            Self::Diags => "Diags",
            Self::UefiShell => "UefiShell",
            Self::UefiTarget => "UefiTarget",
            Self::SDCard => "SDCard",
            Self::UefiHttp => "UefiHttp",
            Self::RemoteDrive => "RemoteDrive",
            Self::UefiBootNext => "UefiBootNext",
            Self::Recovery => "Recovery",
            Self::Unknown => "Unknown",
        }
    }

    /// The value named `name`, ignoring case (`pxe`, `UefiHttp`).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for BootSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// DMTF `BootSourceOverrideEnabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OverrideEnabled {
    /// No override.
    Disabled,
    /// The next boot only.
    Once,
    /// Every boot until changed.
    Continuous,
    /// A value this client does not know.
    #[serde(other)]
    Unknown,
}

impl OverrideEnabled {
    /// As the schema spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "Disabled",
            Self::Once => "Once",
            Self::Continuous => "Continuous",
            Self::Unknown => "Unknown",
        }
    }
}

/// DMTF `BootSourceOverrideMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OverrideMode {
    /// Legacy BIOS boot.
    Legacy,
    /// UEFI boot.
    #[serde(rename = "UEFI")]
    Uefi,
    /// A value this client does not know.
    #[serde(other)]
    Unknown,
}

/// One entry of `Systems/<id>/BootOptions` (`BootOption` schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BootOption {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// e.g. `Boot0000`.
    #[serde(default)]
    pub id: String,
    /// What `Boot.BootOrder` calls it (`Boot0000`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_option_reference: Option<String>,
    /// What people call it (`PXE Device 1: Integrated NIC 1 Port 1 Partition 1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The UEFI device path (`VenHw(...)`, `PciRoot(0x1)/...`, `HD(1,GPT,...)/\EFI\...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uefi_device_path: Option<String>,
    /// Whether the firmware may boot it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_option_enabled: Option<bool>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Resources it boots from (a NIC's device function on iDRAC 7.x).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_item: Vec<Link>,
}

impl BootOption {
    /// The reference `Boot.BootOrder` uses: `BootOptionReference`, else the `Id`.
    pub fn reference(&self) -> &str {
        self.boot_option_reference.as_deref().unwrap_or(&self.id)
    }

    /// Whether `name` is this option's `BootNNNN` reference, ignoring case.
    pub fn is(&self, name: &str) -> bool {
        self.reference().eq_ignore_ascii_case(name) || self.id.eq_ignore_ascii_case(name)
    }
}

/// Whether `name` looks like a UEFI boot option reference: `Boot` and four hex digits.
pub fn is_boot_reference(name: &str) -> bool {
    name.len() == 8 && name[..4].eq_ignore_ascii_case("boot") && name[4..].chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `Boot` object of a real R750 on iDRAC 7.10 (the public Mockup Creator capture),
    /// trimmed to what this model reads.
    #[test]
    fn the_boot_object_of_a_real_idrac_decodes() {
        let boot: Boot = serde_json::from_value(serde_json::json!({
            "BootOptions": {"@odata.id": "/redfish/v1/Systems/System.Embedded.1/BootOptions"},
            "BootOrder": ["Boot0000", "Boot0001"], "BootOrder@odata.count": 2,
            "BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideMode": "UEFI",
            "BootSourceOverrideTarget": "None", "UefiTargetBootSourceOverride": null,
            "BootSourceOverrideTarget@Redfish.AllowableValues":
                ["None", "Pxe", "Floppy", "Cd", "Hdd", "BiosSetup", "Utilities", "UefiTarget", "SDCard", "UefiHttp"],
            "StopBootOnFault": "Never"
        }))
        .unwrap();
        assert_eq!(boot.boot_order, ["Boot0000", "Boot0001"]);
        assert_eq!(boot.boot_source_override_mode, Some(OverrideMode::Uefi));
        assert!(!boot.override_active());
        assert!(boot.accepts(BootSource::UefiHttp) && !boot.accepts(BootSource::Usb));
        assert_eq!(boot.uefi_target_boot_source_override, None);
    }

    #[test]
    fn targets_parse_ignoring_case_and_unknown_ones_decode() {
        assert_eq!(BootSource::parse("pxe"), Some(BootSource::Pxe));
        assert_eq!(BootSource::parse("UEFIHTTP"), Some(BootSource::UefiHttp));
        assert_eq!(BootSource::parse("floppy-ish"), None);
        let s: BootSource = serde_json::from_str("\"Teleport\"").unwrap();
        assert_eq!(s, BootSource::Unknown);
        assert!(is_boot_reference("Boot000A") && is_boot_reference("boot0001"));
        assert!(!is_boot_reference("Boot00") && !is_boot_reference("NIC.PxeDevice.1-1"));
    }
}
