//! `SecureBoot`: whether UEFI Secure Boot is on and enforced, its mode, and the key reset
//! action.

use crate::odata::ODataId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// `Systems/<id>/SecureBoot`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SecureBoot {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// Whether Secure Boot is enabled for the next boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_boot_enable: Option<bool>,
    /// Whether the current boot was verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_boot_current_boot: Option<CurrentBoot>,
    /// `DeployedMode`, `UserMode`, `SetupMode`, `AuditMode`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_boot_mode: Option<String>,
    /// Actions, raw (`#SecureBoot.ResetKeys`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Map<String, Value>>,
}

impl SecureBoot {
    /// The `ResetKeys` target, falling back to the conventional path.
    pub fn reset_keys_target(&self) -> ODataId {
        self.reset_keys()
            .and_then(|a| a.get("target"))
            .and_then(Value::as_str)
            .map(ODataId::new)
            .unwrap_or_else(|| self.odata_id.join("Actions/SecureBoot.ResetKeys"))
    }

    /// The key resets the service lists (`ResetKeysType@Redfish.AllowableValues`); empty when
    /// it lists none.
    pub fn allowed_resets(&self) -> Vec<ResetKeysType> {
        self.reset_keys()
            .and_then(|a| a.get("ResetKeysType@Redfish.AllowableValues"))
            .and_then(Value::as_array)
            .map(|values| {
                values
                    .iter()
                    .filter_map(|v| v.as_str().and_then(ResetKeysType::parse))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn reset_keys(&self) -> Option<&Value> {
        self.actions.as_ref()?.get("#SecureBoot.ResetKeys")
    }
}

/// `SecureBootCurrentBoot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CurrentBoot {
    /// The running system was booted with Secure Boot enforced.
    Enabled,
    /// It was not.
    Disabled,
    /// A value this client does not know.
    #[serde(other)]
    Unknown,
}

/// `ResetKeysType`: what `SecureBoot.ResetKeys` does to the UEFI key databases. The first three
/// are DMTF's; iDRAC also lists resets of each database to its default (seen on a real R750's
/// allowable values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResetKeysType {
    /// Every key database back to the firmware's defaults.
    ResetAllKeysToDefault,
    /// Every key deleted: Secure Boot cannot verify anything until keys are enrolled.
    DeleteAllKeys,
    /// The platform key deleted: the firmware enters Setup Mode.
    #[serde(rename = "DeletePK")]
    DeletePk,
    /// The platform key back to its default.
    #[serde(rename = "ResetPK")]
    ResetPk,
    /// The key exchange keys back to their defaults.
    #[serde(rename = "ResetKEK")]
    ResetKek,
    /// The allowed-signatures database back to its default.
    #[serde(rename = "ResetDB")]
    ResetDb,
    /// The forbidden-signatures database back to its default.
    #[serde(rename = "ResetDBX")]
    ResetDbx,
}

impl ResetKeysType {
    /// Every value, in the order a real iDRAC lists them.
    pub const ALL: [Self; 7] = [
        Self::ResetAllKeysToDefault,
        Self::DeleteAllKeys,
        Self::DeletePk,
        Self::ResetPk,
        Self::ResetKek,
        Self::ResetDb,
        Self::ResetDbx,
    ];

    /// As the action spells it (`DeletePK`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ResetAllKeysToDefault => "ResetAllKeysToDefault",
            Self::DeleteAllKeys => "DeleteAllKeys",
            Self::DeletePk => "DeletePK",
            Self::ResetPk => "ResetPK",
            Self::ResetKek => "ResetKEK",
            Self::ResetDb => "ResetDB",
            Self::ResetDbx => "ResetDBX",
        }
    }

    /// The value spelled `name`, exactly (the iDRAC compares case-sensitively).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Whether it deletes keys (Secure Boot can then verify nothing until keys are enrolled
    /// again), rather than restoring defaults.
    pub fn deletes_keys(self) -> bool {
        matches!(self, Self::DeleteAllKeys | Self::DeletePk)
    }
}

impl fmt::Display for ResetKeysType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SecureBoot resource of a real R750 on iDRAC 7.10 (public Mockup Creator capture),
    /// trimmed to what this model reads.
    #[test]
    fn a_real_secure_boot_resource_decodes_with_its_key_resets() {
        let sb: SecureBoot = serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/Systems/System.Embedded.1/SecureBoot",
            "@odata.type": "#SecureBoot.v1_1_0.SecureBoot",
            "Actions": {"#SecureBoot.ResetKeys": {
                "ResetKeysType@Redfish.AllowableValues":
                    ["ResetAllKeysToDefault", "DeleteAllKeys", "DeletePK", "ResetPK", "ResetKEK", "ResetDB", "ResetDBX"],
                "target": "/redfish/v1/Systems/System.Embedded.1/SecureBoot/Actions/SecureBoot.ResetKeys"}, "Oem": {}},
            "SecureBootCurrentBoot": "Disabled", "SecureBootEnable": false, "SecureBootMode": "DeployedMode"
        }))
        .unwrap();
        assert_eq!(sb.secure_boot_enable, Some(false));
        assert_eq!(sb.secure_boot_current_boot, Some(CurrentBoot::Disabled));
        assert_eq!(sb.allowed_resets(), ResetKeysType::ALL);
        assert_eq!(
            sb.reset_keys_target().path(),
            "/redfish/v1/Systems/System.Embedded.1/SecureBoot/Actions/SecureBoot.ResetKeys"
        );
        assert_eq!(serde_json::to_value(ResetKeysType::DeletePk).unwrap(), "DeletePK");
        assert_eq!(ResetKeysType::parse("deletepk"), None, "the iDRAC compares exactly");
        assert!(ResetKeysType::DeleteAllKeys.deletes_keys() && !ResetKeysType::ResetDb.deletes_keys());
    }
}
