//! `Chassis`: the enclosure, and the links to its power and environment resources.

use super::computer_system::PowerState;
use crate::odata::{Link, ODataId};
use serde::{Deserialize, Serialize};

/// A chassis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Chassis {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// e.g. `System.Embedded.1`.
    #[serde(default)]
    pub id: String,
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Power state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_state: Option<PowerState>,
    /// The classic power resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<Link>,
    /// The newer metrics resource (iDRAC 7.x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_metrics: Option<Link>,
    /// The newer power subsystem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_subsystem: Option<Link>,
}
