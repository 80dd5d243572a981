//! `Manager`: the BMC itself (iDRAC).

use super::Status;
use crate::odata::ODataId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A management controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Manager {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// e.g. `iDRAC.Embedded.1`.
    #[serde(default)]
    pub id: String,
    /// e.g. `BMC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manager_type: Option<String>,
    /// e.g. `16G Monolithic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The BMC firmware version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_version: Option<String>,
    /// Health.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Vendor extensions, raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oem: Option<Map<String, Value>>,
}
