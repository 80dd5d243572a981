//! The Dell and Base messages an attribute write is refused with (an unknown attribute, one
//! read-only or hidden under the current and requested settings, a value of the wrong type,
//! outside the list or range, or excluded by a rule), shared by every operation that writes
//! attributes: BIOS staging, iDRAC attributes, accounts and Server Configuration Profile imports.

use crate::messages::{base, idrac};
use redfish_client::dependencies::{Allowed, Conditions};
use redfish_client::resources::attribute_registry::ValueProblem;
use redfish_client::resources::bios::AttributeValue;
use serde_json::Value;

pub(crate) fn unknown_attribute(name: &str) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    vec![
        idrac(
            "SYS429",
            &format!("The attribute {name} is not supported on this system."),
            &[name],
            "Remove the attribute from the request body and retry the operation.",
            Some(&related),
        ),
        crate::messages::property_unknown(name, &related),
    ]
}

pub(crate) fn read_only(name: &str) -> Vec<Value> {
    not_writable(name, "read-only")
}

/// A PATCH to an attribute hidden in the planned state. What a real iDRAC answers is not
/// documented; SYS427 with Base PropertyNotWritable is assumed (idrac-sim/README.md).
pub(crate) fn hidden(name: &str) -> Vec<Value> {
    not_writable(name, "hidden")
}

/// SYS427 (`why`: read-only or hidden under the current and requested settings) with Base
/// PropertyNotWritable.
fn not_writable(name: &str, why: &str) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    vec![
        idrac(
            "SYS427",
            &format!(
                "Unable to modify the attribute {name} because it is {why} under the current and requested settings."
            ),
            &[name],
            "Change the attributes it depends on (see the attribute registry Dependencies) and retry the operation.",
            Some(&related),
        ),
        base(
            "PropertyNotWritable",
            &format!("The property {name} is a read only property and cannot be assigned a value."),
            &[name],
            "Remove the property from the request body and resubmit the request if the operation failed.",
            Some(&related),
        ),
    ]
}

/// A value an iDRAC 7.x `Value` rule excludes in the planned state: SYS426, as for a value not
/// in the registry's list, naming the values still allowed and why (assumed wording).
pub(crate) fn not_allowed_now(name: &str, value: &AttributeValue, allowed: &Allowed<'_>) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    let shown = value.to_string();
    let because: Vec<String> = allowed
        .rules
        .iter()
        .map(|r| Conditions(&r.map_from).to_string())
        .collect();
    vec![
        idrac(
            "SYS426",
            &format!(
                "The value {value} for {name} is not in the list of acceptable values while {}.",
                because.join(" and ")
            ),
            &[&shown, name],
            &format!(
                "Enter one of the values {} and retry the operation.",
                allowed.values.join(", ")
            ),
            Some(&related),
        ),
        base(
            "PropertyValueNotInList",
            &format!("The value {value} for the property {name} is not in the list of acceptable values."),
            &[&shown, name],
            "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.",
            Some(&related),
        ),
    ]
}

pub(crate) fn value_problem(name: &str, value: &AttributeValue, problem: &ValueProblem) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    let r = Some(related.as_str());
    let shown = value.to_string();
    let args = [shown.as_str(), name];
    match problem {
        ValueProblem::WrongType { expected, found } => vec![
            idrac(
                "SYS424",
                &format!("The value {value} for {name} is of type {found}, but {expected} is required."),
                &args,
                "Enter a value of the correct type and retry the operation.",
                r,
            ),
            base(
                "PropertyValueTypeError",
                &format!(
                    "The value {value} for the property {name} is of a different type than the property can accept."
                ),
                &args,
                "Correct the value for the property in the request body and resubmit the request if the operation failed.",
                r,
            ),
        ],
        ValueProblem::NotInList { allowed } => vec![
            idrac(
                "SYS426",
                &format!("The value {value} for {name} is not in the list of acceptable values."),
                &args,
                &format!(
                    "Enter one of the values {} and retry the operation.",
                    allowed.join(", ")
                ),
                r,
            ),
            base(
                "PropertyValueNotInList",
                &format!("The value {value} for the property {name} is not in the list of acceptable values."),
                &args,
                "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.",
                r,
            ),
        ],
        ValueProblem::OutOfRange { .. } | ValueProblem::NotOnIncrement { .. } | ValueProblem::BadLength { .. } => vec![
            idrac(
                "SYS417",
                &format!("The value {value} for {name} is out of range: it {problem}."),
                &args,
                "Enter a value within the range and retry the operation.",
                r,
            ),
            base(
                "PropertyValueOutOfRange",
                &format!(
                    "The value {value} for the property {name} is not in the supported range of acceptable values."
                ),
                &args,
                "Correct the value for the property in the request body and resubmit the request if the operation failed.",
                r,
            ),
        ],
    }
}
