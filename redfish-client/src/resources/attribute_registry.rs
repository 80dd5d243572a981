//! `AttributeRegistry`: the definitions behind BIOS (and iDRAC) attributes — types, allowed
//! values, bounds, flags — and the `Dependencies` that lock, hide or force them.
//!
//! The flags in a registry describe the **current** values. To judge a candidate set of values,
//! re-evaluate the dependencies with [`crate::dependencies::DependencyEvaluator`].

use super::bios::AttributeValue;
use crate::odata::ODataId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;

/// An attribute registry document (`Bios/BiosRegistry` on iDRAC).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AttributeRegistry {
    /// Where it lives.
    #[serde(rename = "@odata.id", default, skip_serializing_if = "Option::is_none")]
    pub odata_id: Option<ODataId>,
    /// e.g. `BiosAttributeRegistry.v1_0_3`.
    #[serde(default)]
    pub id: String,
    /// e.g. `en`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// e.g. `Dell`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owning_entity: Option<String>,
    /// e.g. `1.0.3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_version: Option<String>,
    /// The platforms and firmware the registry describes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_systems: Vec<SupportedSystem>,
    /// Attributes, dependencies and menus.
    #[serde(default)]
    pub registry_entries: RegistryEntries,
}

/// `SupportedSystems[]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SupportedSystem {
    /// e.g. `PowerEdge R7625`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_name: Option<String>,
    /// Platform id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_id: Option<String>,
    /// BIOS version the registry belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_version: Option<String>,
}

/// `RegistryEntries`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RegistryEntries {
    /// Attribute definitions.
    #[serde(default)]
    pub attributes: Vec<Attribute>,
    /// Rules that change flags or values of attributes depending on others.
    #[serde(default)]
    pub dependencies: Vec<Dependency>,
    /// The setup menu tree.
    #[serde(default)]
    pub menus: Vec<Menu>,
}

/// One attribute definition.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Attribute {
    /// The name used in `Bios.Attributes`.
    #[serde(default)]
    pub attribute_name: String,
    /// What setup shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help_text: Option<String>,
    /// Menu location, e.g. `./SysProfileSettingsRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub menu_path: Option<String>,
    /// Value type.
    #[serde(rename = "Type", default)]
    pub kind: AttributeType,
    /// Read-only given the current values. Dell's manager attribute registry spells it
    /// `Readonly`.
    #[serde(default, alias = "Readonly", skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Hidden given the current values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// Never changeable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    /// Can be written but never read back (passwords).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_only: Option<bool>,
    /// A reset is needed for a change to take effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_required: Option<bool>,
    /// Always null on Dell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_value: Option<AttributeValue>,
    /// The default, where the registry states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_value: Option<AttributeValue>,
    /// Allowed values of an enumeration.
    #[serde(rename = "Value", default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<AllowedValue>,
    /// Smallest allowed integer. Bounds take any JSON number: real Dell registries carry
    /// `18446744073709551615` (u64::MAX) on Intel SGX attributes.
    #[serde(
        default,
        deserialize_with = "lenient::integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub lower_bound: Option<i128>,
    /// Largest allowed integer.
    #[serde(
        default,
        deserialize_with = "lenient::integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub upper_bound: Option<i128>,
    /// Integer step from the lower bound.
    #[serde(
        default,
        deserialize_with = "lenient::integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub scalar_increment: Option<i128>,
    /// Shortest allowed string.
    #[serde(
        default,
        deserialize_with = "lenient::integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_length: Option<i128>,
    /// Longest allowed string.
    #[serde(
        default,
        deserialize_with = "lenient::integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_length: Option<i128>,
    /// A regular expression strings must match (not checked by this crate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_expression: Option<String>,
}

/// `Type` of an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum AttributeType {
    /// One of a list of strings.
    Enumeration,
    /// Free text.
    String,
    /// An integer within bounds.
    Integer,
    /// `true`/`false`.
    Boolean,
    /// A write-only secret.
    Password,
    /// A type this client does not know; values are not checked.
    #[default]
    #[serde(other)]
    Unknown,
}

impl fmt::Display for AttributeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::Enumeration => "enumeration",
            Self::String => "string",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Password => "password",
            Self::Unknown => "unknown",
        };
        f.write_str(s)
    }
}

/// One allowed value of an enumeration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AllowedValue {
    /// The value to send.
    #[serde(default)]
    pub value_name: String,
    /// What setup shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_display_name: Option<String>,
}

/// Why a value does not fit an attribute's definition (flags and dependencies aside).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueProblem {
    /// The JSON type does not match the attribute type.
    WrongType {
        /// What the registry declares.
        expected: AttributeType,
        /// What was given (`string`, `integer`, ...).
        found: &'static str,
    },
    /// An enumeration value that is not in the list.
    NotInList {
        /// The allowed values, in registry order.
        allowed: Vec<String>,
    },
    /// An integer outside `[lower, upper]`.
    OutOfRange {
        /// Lower bound, when declared.
        lower: Option<i128>,
        /// Upper bound, when declared.
        upper: Option<i128>,
    },
    /// An integer not reachable from the lower bound in steps of the increment.
    NotOnIncrement {
        /// The step.
        increment: i128,
    },
    /// A string outside `[min, max]` length.
    BadLength {
        /// Minimum length, when declared.
        min: Option<i128>,
        /// Maximum length, when declared.
        max: Option<i128>,
    },
}

impl fmt::Display for ValueProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongType { expected, found } => write!(f, "expects {expected}, got {found}"),
            Self::NotInList { allowed } => write!(f, "allowed values are {}", allowed.join(", ")),
            Self::OutOfRange { lower, upper } => write!(f, "must be within {}", range(*lower, *upper)),
            Self::NotOnIncrement { increment } => write!(f, "must be a multiple of {increment} from the lower bound"),
            Self::BadLength { min, max } => write!(f, "length must be within {}", range(*min, *max)),
        }
    }
}

/// `lower..=upper`, with `-∞`/`∞` for a missing bound.
pub fn range(lower: Option<i128>, upper: Option<i128>) -> String {
    let l = lower.map_or_else(|| "-∞".to_owned(), |v| v.to_string());
    let u = upper.map_or_else(|| "∞".to_owned(), |v| v.to_string());
    format!("{l}..={u}")
}

impl Attribute {
    /// Whether the registry marks it read-only or immutable (as of the current values).
    pub fn is_read_only(&self) -> bool {
        self.read_only.unwrap_or(false) || self.immutable.unwrap_or(false)
    }

    /// Whether the registry marks it hidden (as of the current values).
    pub fn is_hidden(&self) -> bool {
        self.hidden.unwrap_or(false)
    }

    /// The allowed enumeration values.
    pub fn allowed_values(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|v| v.value_name.as_str())
    }

    /// Checks that `value` fits the type, list, bounds and length of this attribute.
    pub fn check(&self, value: &AttributeValue) -> Result<(), ValueProblem> {
        let wrong = || ValueProblem::WrongType {
            expected: self.kind,
            found: value.type_name(),
        };
        match self.kind {
            AttributeType::Enumeration => {
                let s = value.as_str().ok_or_else(wrong)?;
                if self.values.is_empty() || self.values.iter().any(|v| v.value_name == s) {
                    Ok(())
                } else {
                    Err(ValueProblem::NotInList {
                        allowed: self.allowed_values().map(str::to_owned).collect(),
                    })
                }
            }
            AttributeType::Integer => {
                let i = value.as_integer().ok_or_else(wrong)?;
                if self.lower_bound.is_some_and(|l| i < l) || self.upper_bound.is_some_and(|u| i > u) {
                    return Err(ValueProblem::OutOfRange {
                        lower: self.lower_bound,
                        upper: self.upper_bound,
                    });
                }
                let off_step = |step: i128| {
                    i.checked_sub(self.lower_bound.unwrap_or(0))
                        .is_some_and(|d| d % step != 0)
                };
                match self.scalar_increment {
                    Some(step) if step > 1 && off_step(step) => Err(ValueProblem::NotOnIncrement { increment: step }),
                    _ => Ok(()),
                }
            }
            AttributeType::String | AttributeType::Password => {
                let s = value.as_str().ok_or_else(wrong)?;
                let len = i128::try_from(s.chars().count()).unwrap_or(i128::MAX);
                if self.min_length.is_some_and(|m| len < m) || self.max_length.is_some_and(|m| len > m) {
                    Err(ValueProblem::BadLength {
                        min: self.min_length,
                        max: self.max_length,
                    })
                } else {
                    Ok(())
                }
            }
            AttributeType::Boolean => match value {
                AttributeValue::Bool(_) => Ok(()),
                _ => Err(wrong()),
            },
            AttributeType::Unknown => Ok(()),
        }
    }
}

/// One entry of `Dependencies[]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Dependency {
    /// The attribute this rule affects.
    #[serde(default)]
    pub dependency_for: String,
    /// Only `Map` is defined by DMTF.
    #[serde(rename = "Type", default)]
    pub kind: DependencyType,
    /// The rule; absent on malformed entries, which are then ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency: Option<MapDependency>,
}

/// `Dependencies[].Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum DependencyType {
    /// A map from conditions to a property value.
    Map,
    /// A type this client does not know; ignored by evaluation.
    #[default]
    #[serde(other)]
    Unknown,
}

/// A `Map` rule: when the `MapFrom` conditions hold, `MapToAttribute.MapToProperty = MapToValue`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MapDependency {
    /// The conditions.
    #[serde(default)]
    pub map_from: Vec<MapFrom>,
    /// The attribute changed.
    #[serde(default)]
    pub map_to_attribute: String,
    /// The property changed.
    #[serde(default)]
    pub map_to_property: AttributeProperty,
    /// The value it takes.
    #[serde(default)]
    pub map_to_value: Value,
}

impl MapDependency {
    /// For a `Value` rule, the value names it allows: `MapToValue` as a list of
    /// `{ValueName, ValueDisplayName}` objects (or of plain strings). `None` for other rules
    /// or a `MapToValue` of another shape.
    pub fn allowed_values(&self) -> Option<Vec<String>> {
        if self.map_to_property != AttributeProperty::Value {
            return None;
        }
        let list = self.map_to_value.as_array()?;
        list.iter()
            .map(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => o.get("ValueName").and_then(Value::as_str).map(str::to_owned),
                _ => None,
            })
            .collect()
    }
}

/// One condition of a `Map` rule.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MapFrom {
    /// The attribute tested.
    #[serde(default)]
    pub map_from_attribute: String,
    /// The comparison.
    #[serde(default)]
    pub map_from_condition: MapCondition,
    /// The property tested (almost always `CurrentValue`).
    #[serde(default)]
    pub map_from_property: AttributeProperty,
    /// The value compared against.
    #[serde(default)]
    pub map_from_value: Value,
    /// How this condition combines with its neighbour (`AND`/`OR`); Dell never sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_terms: Option<MapTerms>,
}

/// `MapFromCondition`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MapCondition {
    /// Equal.
    #[serde(rename = "EQU")]
    Equ,
    /// Not equal.
    #[serde(rename = "NEQ")]
    Neq,
    /// Greater than.
    #[serde(rename = "GTR")]
    Gtr,
    /// Greater than or equal.
    #[serde(rename = "GEQ")]
    Geq,
    /// Less than.
    #[serde(rename = "LSS")]
    Lss,
    /// Less than or equal.
    #[serde(rename = "LEQ")]
    Leq,
    /// A condition this client does not know; it never holds.
    #[default]
    #[serde(other)]
    Unknown,
}

impl fmt::Display for MapCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Self::Equ => "=",
            Self::Neq => "≠",
            Self::Gtr => ">",
            Self::Geq => "≥",
            Self::Lss => "<",
            Self::Leq => "≤",
            Self::Unknown => "?",
        };
        f.write_str(s)
    }
}

/// `MapTerms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MapTerms {
    /// Both must hold.
    #[serde(rename = "AND")]
    And,
    /// Either may hold.
    #[serde(rename = "OR")]
    Or,
    /// Unknown; treated as AND.
    #[serde(other)]
    Unknown,
}

/// An attribute property a dependency reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum AttributeProperty {
    /// The value.
    #[default]
    CurrentValue,
    /// The read-only flag (Dell's manager attribute registry spells it `Readonly`).
    #[serde(alias = "Readonly")]
    ReadOnly,
    /// The hidden flag.
    Hidden,
    /// The grayed-out flag (shown but not editable in setup; treated as read-only).
    GrayOut,
    /// The write-only flag.
    WriteOnly,
    /// The default value.
    DefaultValue,
    /// Integer lower bound.
    LowerBound,
    /// Integer upper bound.
    UpperBound,
    /// Shortest string.
    MinLength,
    /// Longest string.
    MaxLength,
    /// Integer step.
    ScalarIncrement,
    /// The list of allowed enumeration values (iDRAC 7.x registries): while the conditions
    /// hold, `MapToValue` lists the only values the attribute accepts.
    Value,
    /// A property this client does not know; such rules are ignored.
    #[serde(other)]
    Unknown,
}

/// A setup menu.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Menu {
    /// Menu id.
    #[serde(default)]
    pub menu_name: String,
    /// Title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub menu_path: Option<String>,
}

impl AttributeRegistry {
    /// Looks an attribute up by name (linear; build [`AttributeRegistry::index`] for many lookups).
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.registry_entries
            .attributes
            .iter()
            .find(|a| a.attribute_name == name)
    }

    /// Name → definition, for repeated lookups.
    pub fn index(&self) -> HashMap<&str, &Attribute> {
        self.registry_entries
            .attributes
            .iter()
            .map(|a| (a.attribute_name.as_str(), a))
            .collect()
    }

    /// The product names the registry declares support for.
    pub fn product_names(&self) -> impl Iterator<Item = &str> {
        self.supported_systems.iter().filter_map(|s| s.product_name.as_deref())
    }
}

/// Lenient decoding of registry numbers: a valid registry must never fail to decode because of
/// a number's size or spelling.
mod lenient {
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    /// Any JSON number (integers of any size up to `i128`, saturating beyond; integral floats;
    /// numeric strings) as an integer. `null` and other shapes decode as absent, with a debug
    /// log, rather than failing the whole registry.
    pub(super) fn integer<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i128>, D::Error> {
        let value = Value::deserialize(d)?;
        Ok(to_integer(&value))
    }

    pub(super) fn to_integer(value: &Value) -> Option<i128> {
        let parsed = match value {
            Value::Null => return None,
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .or_else(|| n.as_f64().and_then(from_float)),
            Value::String(s) => s
                .trim()
                .parse::<i128>()
                .ok()
                .or_else(|| s.trim().parse::<f64>().ok().and_then(from_float)),
            _ => None,
        };
        if parsed.is_none() {
            tracing::debug!("ignoring a registry bound that is not a number: {value}");
        }
        parsed
    }

    #[allow(clippy::cast_possible_truncation)]
    fn from_float(f: f64) -> Option<i128> {
        // `as` saturates at the i128 range; fractions round toward zero.
        f.is_finite().then(|| f.trunc() as i128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_attr() -> Attribute {
        Attribute {
            attribute_name: "CpuAcpiCstC2Latency".into(),
            kind: AttributeType::Integer,
            lower_bound: Some(18),
            upper_bound: Some(1000),
            scalar_increment: Some(1),
            ..Attribute::default()
        }
    }

    #[test]
    fn integer_bounds_and_types() {
        let a = int_attr();
        assert_eq!(a.check(&800.into()), Ok(()));
        assert_eq!(
            a.check(&17.into()),
            Err(ValueProblem::OutOfRange {
                lower: Some(18),
                upper: Some(1000)
            })
        );
        assert_eq!(
            a.check(&"800".into()),
            Err(ValueProblem::WrongType {
                expected: AttributeType::Integer,
                found: "string"
            })
        );
        let stepped = Attribute {
            scalar_increment: Some(10),
            ..int_attr()
        };
        assert_eq!(stepped.check(&28.into()), Ok(()));
        assert_eq!(
            stepped.check(&30.into()),
            Err(ValueProblem::NotOnIncrement { increment: 10 })
        );
    }

    #[test]
    fn enumeration_lists_allowed_values() {
        let a: Attribute = serde_json::from_str(
            r#"{"AttributeName":"ApbDis","Type":"Enumeration","Value":[{"ValueName":"Enabled"},{"ValueName":"Disabled"}]}"#,
        )
        .unwrap();
        assert_eq!(a.check(&"Enabled".into()), Ok(()));
        let err = a.check(&"enabled".into()).unwrap_err();
        assert_eq!(err.to_string(), "allowed values are Enabled, Disabled");
    }

    #[test]
    fn unknown_types_and_conditions_decode() {
        let d: Dependency = serde_json::from_str(
            r#"{"DependencyFor":"X","Type":"Fancy","Dependency":{"MapFrom":[{"MapFromAttribute":"Y","MapFromCondition":"LIKE","MapFromProperty":"Colour","MapFromValue":1}],"MapToAttribute":"X","MapToProperty":"ReadOnly","MapToValue":true}}"#,
        )
        .unwrap();
        assert_eq!(d.kind, DependencyType::Unknown);
        let m = d.dependency.unwrap();
        assert_eq!(m.map_from[0].map_from_condition, MapCondition::Unknown);
        assert_eq!(m.map_from[0].map_from_property, AttributeProperty::Unknown);
    }

    /// Real Dell registries bound SGX hash registers by u64::MAX; nothing a valid registry
    /// carries may fail decode: any number size, floats, unknown properties and rule kinds.
    #[test]
    fn registries_with_u64_bounds_floats_and_unknown_properties_decode() {
        let r: AttributeRegistry = serde_json::from_str(
            r#"{"Id": "BiosAttributeRegistry.v1_0_3", "NewTopLevel": {"x": 1},
                "RegistryEntries": {"Attributes": [
                  {"AttributeName": "SgxLePubKeyHash0", "Type": "Integer", "Hidden": true,
                   "LowerBound": 0, "UpperBound": 18446744073709551615, "DisplayOrder": 1, "WarningText": null},
                  {"AttributeName": "Ratio", "Type": "Integer", "LowerBound": -1e3, "UpperBound": 1.0e2,
                   "ScalarIncrement": "5"},
                  {"AttributeName": "Huge", "Type": "Integer", "UpperBound": 1e40, "LowerBound": null,
                   "ScalarIncrement": {"odd": true}},
                  {"AttributeName": "Name", "Type": "String", "MaxLength": 18446744073709551615, "MinLength": 0},
                  {"AttributeName": "Lock", "Type": "Enumeration", "Readonly": true}],
                 "Dependencies": [
                  {"DependencyFor": "Lock", "Type": "Script", "Dependency": {"Code": "x"}},
                  {"DependencyFor": "Lock", "Type": "Map", "Dependency": {"MapFrom": [], "MapToAttribute": "Lock",
                   "MapToProperty": "Readonly", "MapToValue": true, "Extra": [1]}}]}}"#,
        )
        .unwrap();
        let sgx = r.attribute("SgxLePubKeyHash0").unwrap();
        assert_eq!(sgx.upper_bound, Some(i128::from(u64::MAX)));
        assert_eq!(
            sgx.check(&AttributeValue::from(serde_json::json!(18446744073709551615u64))),
            Ok(())
        );
        assert!(sgx.check(&(-1).into()).is_err());
        let ratio = r.attribute("Ratio").unwrap();
        assert_eq!((ratio.lower_bound, ratio.upper_bound), (Some(-1000), Some(100)));
        assert_eq!(ratio.scalar_increment, Some(5));
        let huge = r.attribute("Huge").unwrap();
        assert_eq!(huge.upper_bound, Some(i128::MAX), "saturates");
        assert_eq!((huge.lower_bound, huge.scalar_increment), (None, None));
        assert_eq!(r.attribute("Name").unwrap().max_length, Some(i128::from(u64::MAX)));
        assert!(
            r.attribute("Lock").unwrap().is_read_only(),
            "Dell's `Readonly` spelling"
        );
        let deps = &r.registry_entries.dependencies;
        assert_eq!(deps[0].kind, DependencyType::Unknown);
        assert_eq!(
            deps[1].dependency.as_ref().unwrap().map_to_property,
            AttributeProperty::ReadOnly
        );
    }

    #[test]
    fn value_rules_list_their_allowed_names() {
        let d: Dependency = serde_json::from_str(
            r#"{"DependencyFor":"ProcAts","Type":"Map","Dependency":{"MapFrom":[{"MapFromAttribute":"ProcVirtualization",
               "MapFromCondition":"EQU","MapFromProperty":"CurrentValue","MapFromValue":"Disabled"}],
               "MapToAttribute":"ProcAts","MapToProperty":"Value",
               "MapToValue":[{"ValueDisplayName":"Disabled","ValueName":"Disabled"}]}}"#,
        )
        .unwrap();
        let rule = d.dependency.unwrap();
        assert_eq!(rule.map_to_property, AttributeProperty::Value);
        assert_eq!(rule.allowed_values(), Some(vec!["Disabled".to_owned()]));
    }

    #[test]
    fn string_length_is_checked() {
        let a = Attribute {
            kind: AttributeType::String,
            max_length: Some(3),
            ..Attribute::default()
        };
        assert!(a.check(&"abcd".into()).is_err());
        assert!(a.check(&"abc".into()).is_ok());
    }
}
