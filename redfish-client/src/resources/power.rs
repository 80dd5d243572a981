//! Power readings: the classic `Power` resource (`PowerControl`, `PowerMetrics`) and the newer
//! `EnvironmentMetrics` (iDRAC 7.x), plus `Sensor` for the readings they point at.

use crate::odata::ODataId;
use serde::{Deserialize, Serialize};

/// `Chassis/<id>/Power` (deprecated by DMTF, still what most iDRACs serve).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Power {
    /// Where it lives.
    #[serde(rename = "@odata.id", default, skip_serializing_if = "Option::is_none")]
    pub odata_id: Option<ODataId>,
    /// Usually one entry, the whole system.
    #[serde(default)]
    pub power_control: Vec<PowerControl>,
    /// Power supplies.
    #[serde(default)]
    pub power_supplies: Vec<PowerSupply>,
}

impl Power {
    /// The system-level instantaneous reading, when the service gives one.
    pub fn consumed_watts(&self) -> Option<f64> {
        self.power_control.iter().find_map(|c| c.power_consumed_watts)
    }
}

/// `PowerControl[]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PowerControl {
    /// e.g. `0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_id: Option<String>,
    /// e.g. `System Power Control`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Instantaneous draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_consumed_watts: Option<f64>,
    /// What the supplies can deliver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_capacity_watts: Option<f64>,
    /// The cap, shown even when capping is disabled on iDRAC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit: Option<PowerLimit>,
    /// Statistics over `IntervalInMin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_metrics: Option<PowerMetrics>,
}

/// `PowerControl[].PowerLimit`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PowerLimit {
    /// The cap value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_in_watts: Option<f64>,
    /// What happens when exceeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_exception: Option<String>,
}

/// `PowerControl[].PowerMetrics`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PowerMetrics {
    /// Averaging window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_in_min: Option<f64>,
    /// Minimum in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_consumed_watts: Option<f64>,
    /// Maximum in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_consumed_watts: Option<f64>,
    /// Average over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_consumed_watts: Option<f64>,
}

/// `PowerSupplies[]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PowerSupply {
    /// e.g. `PSU.Slot.1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_id: Option<String>,
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Rated capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_capacity_watts: Option<f64>,
    /// Input voltage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_input_voltage: Option<f64>,
}

/// `Chassis/<id>/EnvironmentMetrics`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EnvironmentMetrics {
    /// Where it lives.
    #[serde(rename = "@odata.id", default, skip_serializing_if = "Option::is_none")]
    pub odata_id: Option<ODataId>,
    /// Input power of the whole system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_watts: Option<SensorReading>,
    /// Energy since the counter was reset.
    #[serde(rename = "EnergykWh", default, skip_serializing_if = "Option::is_none")]
    pub energy_kwh: Option<SensorReading>,
    /// Temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_celsius: Option<SensorReading>,
}

/// An excerpt of a sensor embedded in a metrics resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SensorReading {
    /// The value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<f64>,
    /// The sensor it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_source_uri: Option<String>,
}

/// A `Sensor` resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Sensor {
    /// e.g. `SystemBoardPwrConsumption`.
    #[serde(default)]
    pub id: String,
    /// The value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<f64>,
    /// e.g. `W`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading_units: Option<String>,
}
