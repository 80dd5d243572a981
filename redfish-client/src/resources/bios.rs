//! `Bios`: current attribute values, the `@Redfish.Settings` object holding pending values, and
//! the `ApplyTime` that decides when staged values take effect.

use crate::odata::{Link, ODataId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// A BIOS (or iDRAC) attribute value as the service sends it. Enumerations and strings are
/// strings, integers are numbers; anything else is kept verbatim rather than rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeValue {
    /// JSON `null` (e.g. write-only password attributes).
    Null,
    /// A boolean (rare in BIOS registries, common in OEM ones).
    Bool(bool),
    /// An integer.
    Integer(i64),
    /// An enumeration value or a string.
    String(String),
    /// Any other JSON (floats, arrays, objects), kept as received.
    Other(Value),
}

impl AttributeValue {
    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, when this is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The integer, of any size a JSON number can carry (BIOS values above `i64::MAX`, such as
    /// u64 hash registers, arrive as [`AttributeValue::Other`]).
    pub fn as_integer(&self) -> Option<i128> {
        match self {
            Self::Integer(i) => Some(i128::from(*i)),
            Self::Other(Value::Number(n)) => n.as_u64().map(i128::from),
            _ => None,
        }
    }

    /// A number for ordered comparisons: integers, floats and numeric strings.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            // Precision loss above 2^53 is irrelevant for BIOS bounds.
            #[allow(clippy::cast_precision_loss)]
            Self::Integer(i) => Some(*i as f64),
            Self::String(s) => s.trim().parse().ok(),
            Self::Other(v) => v.as_f64(),
            _ => None,
        }
    }

    /// The JSON form.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(*b),
            Self::Integer(i) => Value::from(*i),
            Self::String(s) => Value::String(s.clone()),
            Self::Other(v) => v.clone(),
        }
    }

    /// The JSON type name, for messages (`string`, `integer`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool(_) => "boolean",
            Self::Integer(_) => "integer",
            Self::String(_) => "string",
            Self::Other(Value::Number(_)) => "number",
            Self::Other(Value::Array(_)) => "array",
            Self::Other(_) => "object",
        }
    }
}

impl From<Value> for AttributeValue {
    fn from(v: Value) -> Self {
        match v {
            Value::Null => Self::Null,
            Value::Bool(b) => Self::Bool(b),
            Value::String(s) => Self::String(s),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Self::Integer(i),
                None => Self::Other(Value::Number(n)),
            },
            other => Self::Other(other),
        }
    }
}

impl From<&str> for AttributeValue {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl From<String> for AttributeValue {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl From<i64> for AttributeValue {
    fn from(i: i64) -> Self {
        Self::Integer(i)
    }
}

impl From<bool> for AttributeValue {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl fmt::Display for AttributeValue {
    /// Strings print bare (`Custom`), everything else as JSON (`800`, `null`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => f.write_str(s),
            other => write!(f, "{}", other.to_json()),
        }
    }
}

impl Serialize for AttributeValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for AttributeValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Self::from)
    }
}

/// Attribute name → value, ordered by name so diffs and snapshots are stable.
pub type Attributes = BTreeMap<String, AttributeValue>;

/// The `Bios` resource of a system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Bios {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// Usually `Bios`.
    #[serde(default)]
    pub id: String,
    /// The registry id that defines the attributes (`BiosAttributeRegistry.v1_0_3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute_registry: Option<String>,
    /// Current values. Required: a `Bios` without them is a decode error, not an empty BIOS.
    pub attributes: Attributes,
    /// Where pending values live and which apply times the service supports.
    #[serde(rename = "@Redfish.Settings", default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    /// Whether a reset to defaults is queued for the next boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_bios_to_defaults_pending: Option<bool>,
    /// Actions, raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Map<String, Value>>,
    /// The vendor's own block, raw (an iLO keeps its settings object's unmodified tag here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oem: Option<Map<String, Value>>,
}

impl Bios {
    /// Where the resource advertises `action` (`#Bios.ResetBios`): the `target` of its entry in
    /// `Actions`, which is where the action is POSTed, whatever its name says; `None` when the
    /// resource does not advertise it.
    pub fn action_target(&self, action: &str) -> Option<ODataId> {
        self.actions
            .as_ref()?
            .get(action)?
            .get("target")?
            .as_str()
            .map(ODataId::new)
    }

    /// The settings object (pending values); falls back to `<Bios>/Settings`.
    pub fn settings_object(&self) -> ODataId {
        self.settings
            .as_ref()
            .and_then(|s| s.settings_object.as_ref())
            .map(|l| l.odata_id.clone())
            .unwrap_or_else(|| self.odata_id.join("Settings"))
    }

    /// The apply times the service lists for staged values (empty when it lists none).
    pub fn apply_times(&self) -> Vec<ApplyTime> {
        self.settings
            .as_ref()
            .map(|s| s.supported_apply_times.clone())
            .unwrap_or_default()
    }

    /// Whether the service accepts `apply_time` for staged values: one it lists, or, where it
    /// lists none, `OnReset` alone (staged settings apply at a reset on every BMC; a
    /// maintenance window is a promise only a service that advertises it keeps).
    pub fn supports_apply_time(&self, apply_time: ApplyTime) -> bool {
        supports(&self.apply_times(), apply_time)
    }
}

/// Whether `listed` apply times (empty: none listed) allow `apply_time`, as
/// [`Bios::supports_apply_time`] judges it.
pub fn supports(listed: &[ApplyTime], apply_time: ApplyTime) -> bool {
    if listed.is_empty() {
        apply_time == ApplyTime::OnReset
    } else {
        listed.contains(&apply_time)
    }
}

/// The `@Redfish.Settings` annotation (DMTF `Settings` schema).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Settings {
    /// The resource to PATCH to stage values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_object: Option<Link>,
    /// When staged values may be applied.
    #[serde(default)]
    pub supported_apply_times: Vec<ApplyTime>,
    /// When the settings object was last applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Messages from the last application.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<super::message::Message>,
}

/// The settings object of `Bios` (`Bios/Settings` on iDRAC): the pending values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BiosSettings {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// Values that will apply at the next opportunity; empty when nothing is pending.
    /// Required: without them, "nothing pending" could not be told from "not reported".
    pub attributes: Attributes,
    /// Actions, raw (Dell puts `#DellManager.ClearPending` under `Oem`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Map<String, Value>>,
    /// Its entity tag, where the service puts one in the document (an iLO does).
    #[serde(rename = "@odata.etag", default, skip_serializing_if = "Option::is_none")]
    pub odata_etag: Option<String>,
}

/// DMTF `ApplyTime`: when staged settings take effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ApplyTime {
    /// Now (not offered for BIOS on iDRAC).
    Immediate,
    /// At the next reset of the system.
    OnReset,
    /// When the maintenance window opens.
    AtMaintenanceWindowStart,
    /// At a reset that happens inside the maintenance window.
    InMaintenanceWindowOnReset,
    /// A value this client does not know.
    #[serde(other)]
    Unknown,
}

impl fmt::Display for ApplyTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::Immediate => "Immediate",
            Self::OnReset => "OnReset",
            Self::AtMaintenanceWindowStart => "AtMaintenanceWindowStart",
            Self::InMaintenanceWindowOnReset => "InMaintenanceWindowOnReset",
            Self::Unknown => "Unknown",
        };
        f.write_str(s)
    }
}

/// The `@Redfish.SettingsApplyTime` annotation sent with staged values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SettingsApplyTime {
    /// When to apply.
    pub apply_time: ApplyTime,
    /// Window start (ISO 8601, in the BMC's offset), for the maintenance-window apply times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_window_start_time: Option<String>,
    /// Window length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_window_duration_in_seconds: Option<u64>,
}

impl SettingsApplyTime {
    /// Apply at the next reset.
    pub fn on_reset() -> Self {
        Self {
            apply_time: ApplyTime::OnReset,
            maintenance_window_start_time: None,
            maintenance_window_duration_in_seconds: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_values_keep_their_json_types() {
        let a: Attributes = serde_json::from_str(
            r#"{"SysProfile":"Custom","CpuMinSevAsid":1,"NumaNodesPerSocket":"1","SetupPassword":null,"X":1.5,"B":true}"#,
        )
        .unwrap();
        assert_eq!(a["SysProfile"], AttributeValue::from("Custom"));
        assert_eq!(a["CpuMinSevAsid"], AttributeValue::Integer(1));
        assert_eq!(a["NumaNodesPerSocket"].as_str(), Some("1"));
        assert_eq!(a["SetupPassword"], AttributeValue::Null);
        assert_eq!(a["X"].type_name(), "number");
        assert_eq!(a["B"], AttributeValue::Bool(true));
        let back = serde_json::to_string(&a).unwrap();
        assert!(back.contains(r#""CpuMinSevAsid":1"#) && back.contains(r#""NumaNodesPerSocket":"1""#));
    }

    #[test]
    fn settings_object_falls_back_to_convention() {
        let b: Bios = serde_json::from_str(r#"{"@odata.id":"/redfish/v1/Systems/1/Bios","Attributes":{}}"#).unwrap();
        assert_eq!(b.settings_object().as_str(), "/redfish/v1/Systems/1/Bios/Settings");
        assert!(
            b.supports_apply_time(ApplyTime::OnReset),
            "a reset applies staged values everywhere"
        );
        assert!(
            !b.supports_apply_time(ApplyTime::AtMaintenanceWindowStart),
            "a maintenance window only where it is advertised"
        );
    }

    #[test]
    fn unknown_apply_time_decodes() {
        let s: Settings = serde_json::from_str(r#"{"SupportedApplyTimes":["OnReset","Someday"]}"#).unwrap();
        assert_eq!(s.supported_apply_times, vec![ApplyTime::OnReset, ApplyTime::Unknown]);
    }
}
