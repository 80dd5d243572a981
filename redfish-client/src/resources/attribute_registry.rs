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
    /// Read-only given the current values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    /// Smallest allowed integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<i64>,
    /// Largest allowed integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_bound: Option<i64>,
    /// Integer step from the lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalar_increment: Option<i64>,
    /// Shortest allowed string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Longest allowed string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
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
        lower: Option<i64>,
        /// Upper bound, when declared.
        upper: Option<i64>,
    },
    /// An integer not reachable from the lower bound in steps of the increment.
    NotOnIncrement {
        /// The step.
        increment: i64,
    },
    /// A string outside `[min, max]` length.
    BadLength {
        /// Minimum length, when declared.
        min: Option<u64>,
        /// Maximum length, when declared.
        max: Option<u64>,
    },
}

impl fmt::Display for ValueProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongType { expected, found } => write!(f, "expects {expected}, got {found}"),
            Self::NotInList { allowed } => write!(f, "allowed values are {}", allowed.join(", ")),
            Self::OutOfRange { lower, upper } => write!(f, "must be within {}", range(*lower, *upper)),
            Self::NotOnIncrement { increment } => write!(f, "must be a multiple of {increment} from the lower bound"),
            Self::BadLength { min, max } => write!(
                f,
                "length must be within {}",
                range(min.map(|v| v as i64), max.map(|v| v as i64))
            ),
        }
    }
}

fn range(lower: Option<i64>, upper: Option<i64>) -> String {
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
                let i = value.as_i64().ok_or_else(wrong)?;
                if self.lower_bound.is_some_and(|l| i < l) || self.upper_bound.is_some_and(|u| i > u) {
                    return Err(ValueProblem::OutOfRange {
                        lower: self.lower_bound,
                        upper: self.upper_bound,
                    });
                }
                match self.scalar_increment {
                    Some(step) if step > 1 && (i - self.lower_bound.unwrap_or(0)) % step != 0 => {
                        Err(ValueProblem::NotOnIncrement { increment: step })
                    }
                    _ => Ok(()),
                }
            }
            AttributeType::String | AttributeType::Password => {
                let s = value.as_str().ok_or_else(wrong)?;
                let len = s.chars().count() as u64;
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
    /// The read-only flag.
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
