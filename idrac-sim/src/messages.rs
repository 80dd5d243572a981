//! iDRAC-shaped messages and error bodies. Dell MessageIds carry the registry prefix
//! `IDRAC.2.9.`; Base registry ids come alongside, as real iDRACs send them. Every message
//! carries its `MessageArgs` (the values its text names) with the `@odata.count` annotations
//! real iDRACs add, and a severity per id: the DMTF Base registry's for Base ids, Dell's where a
//! real answer showed it (PSU501 Informational, RAC0679 and LC068 Warning), assumed otherwise.
//! Ids no real payload or Dell document shows are marked in the emulator's README as assumed.

use serde_json::{Value, json};

/// The Dell message registry prefix the emulator answers with.
pub const IDRAC: &str = "IDRAC.2.9";
/// The DMTF Base registry prefix.
pub const BASE: &str = "Base.1.12";

/// One `@Message.ExtendedInfo` entry.
pub fn message(id: &str, text: &str, args: &[&str], resolution: &str, severity: &str, related: Option<&str>) -> Value {
    let related: Vec<String> = related.map(|r| vec![r.to_owned()]).unwrap_or_default();
    json!({
        "@odata.type": "#Message.v1_1_1.Message",
        "MessageId": id,
        "Message": text,
        "MessageArgs": args,
        "MessageArgs@odata.count": args.len(),
        "RelatedProperties@odata.count": related.len(),
        "RelatedProperties": related,
        "Resolution": resolution,
        "Severity": severity,
    })
}

/// A Dell (`IDRAC.2.9.<code>`) message; its severity comes from [`dell_severity`].
pub fn idrac(code: &str, text: &str, args: &[&str], resolution: &str, related: Option<&str>) -> Value {
    message(
        &format!("{IDRAC}.{code}"),
        text,
        args,
        resolution,
        dell_severity(code),
        related,
    )
}

/// A Base registry (`Base.1.12.<code>`) message with the severity the DMTF registry gives it.
pub fn base(code: &str, text: &str, args: &[&str], resolution: &str, related: Option<&str>) -> Value {
    message(
        &format!("{BASE}.{code}"),
        text,
        args,
        resolution,
        base_severity(code),
        related,
    )
}

/// The severity of a Dell message: Informational for successes and "already so" answers,
/// Critical for a failed job, Warning for refusals of a request.
pub fn dell_severity(code: &str) -> &'static str {
    match code {
        "SYS413" | "SYS414" | "JCP000" | "JCP001" | "LC061" | "PSU501" | "PSU502" | "SUP020" | "PR19" | "PR20"
        | "RED001" | "RED023" | "RED030" => "Informational",
        "SYS051" | "PR30" | "PR31" => "Critical",
        _ => "Warning",
    }
}

/// The severity the DMTF Base registry gives a message.
pub fn base_severity(code: &str) -> &'static str {
    match code {
        "Success" | "Created" | "AccountRemoved" => "OK",
        "PropertyValueNotInList"
        | "PropertyUnknown"
        | "PropertyNotWritable"
        | "PropertyValueTypeError"
        | "PropertyValueOutOfRange"
        | "PropertyMissing"
        | "ActionParameterUnknown"
        | "ActionParameterMissing"
        | "ActionParameterValueError"
        | "ActionParameterNotSupported"
        | "ActionParameterValueTypeError"
        | "PropertyValueFormatError" => "Warning",
        _ => "Critical",
    }
}

/// The `{"error": ...}` envelope around messages.
pub fn error_body(messages: Vec<Value>) -> Value {
    json!({"error": {
        "code": format!("{BASE}.GeneralError"),
        "message": "A general error has occurred. See ExtendedInfo for more information",
        "@Message.ExtendedInfo": messages,
    }})
}

/// A success body carrying messages.
pub fn success_body(messages: Vec<Value>) -> Value {
    json!({ "@Message.ExtendedInfo": messages })
}

/// `Base.Success`.
pub fn success() -> Value {
    base("Success", "Successfully Completed Request", &[], "None", None)
}

/// `SYS413`: the operation completed.
pub fn sys413() -> Value {
    idrac(
        "SYS413",
        "The operation successfully completed.",
        &[],
        "No response action is required.",
        None,
    )
}

/// `SYS011`: values already committed (a job exists).
pub fn sys011() -> Value {
    idrac(
        "SYS011",
        "Pending configuration values are already committed.",
        &[],
        "Delete the existing configuration job, or wait for it to complete, and retry the operation.",
        None,
    )
}

/// `SYS406`: System Lockdown is on.
pub fn sys406() -> Value {
    idrac(
        "SYS406",
        "Unable to complete the operation because the System Lockdown mode is enabled.",
        &[],
        "Disable System Lockdown (Lockdown.1.SystemLockdown) and retry the operation.",
        None,
    )
}

/// `SWC0700`: the iDRAC's configuration services are not ready (after an iDRAC reset or a
/// Lifecycle Controller restart). Wording as a real iDRAC answered it.
pub fn swc0700() -> Value {
    idrac(
        "SWC0700",
        "iDRAC is not ready. The configuration values cannot be accessed. Please retry after a few minutes.",
        &[],
        "Wait for a few minutes and retry the operation.",
        None,
    )
}

/// A 401 body for bad credentials (`SYS415`).
pub fn sys415() -> Value {
    idrac(
        "SYS415",
        "Unable to complete the operation because an invalid username and/or password is entered, and therefore authentication failed.",
        &[],
        "Enter valid user name and password and retry the operation.",
        None,
    )
}

/// A 401 body for a missing or expired session.
pub fn no_valid_session() -> Value {
    base(
        "NoValidSession",
        "There is no valid session established with the implementation.",
        &[],
        "Establish a session before attempting any operations.",
        None,
    )
}

/// `Base.ResourceMissingAtURI`.
pub fn not_found(uri: &str) -> Value {
    base(
        "ResourceMissingAtURI",
        &format!("The resource at the URI {uri} was not found."),
        &[uri],
        "Place a valid resource at the URI or correct the URI and resubmit the request.",
        None,
    )
}

/// `Base.PropertyMissing` for a required request property.
pub fn property_missing(name: &str) -> Value {
    base(
        "PropertyMissing",
        &format!("The property {name} is a required property and must be included in the request."),
        &[name],
        &format!("Include the {name} property in the request body."),
        Some(&format!("#/{name}")),
    )
}

/// `Base.PropertyUnknown`: the resource has no property `name` (at `pointer`, `#/Boot/X`).
pub fn property_unknown(name: &str, pointer: &str) -> Value {
    base(
        "PropertyUnknown",
        &format!("The property {name} is not in the list of valid properties for the resource."),
        &[name],
        "Remove the unknown property from the request body and resubmit the request if the operation failed.",
        Some(pointer),
    )
}

/// A property this request cannot change: `Base.PropertyNotWritable` where the resource has it,
/// `Base.PropertyUnknown` where it does not (`known`), with the same text.
pub fn property_not_changeable(name: &str, known: bool, pointer: &str) -> Value {
    base(
        if known {
            "PropertyNotWritable"
        } else {
            "PropertyUnknown"
        },
        &format!("The property {name} cannot be changed through this request."),
        &[name],
        "Remove the property from the request body and resubmit the request.",
        Some(pointer),
    )
}

/// `Base.PropertyValueFormatError`: `name`'s value is not of the type or shape it takes.
pub fn property_value_format_error(name: &str, pointer: &str) -> Value {
    base(
        "PropertyValueFormatError",
        &format!("The value for the property {name} is of a different format than the property can accept."),
        &[name],
        "Correct the value for the property in the request body and resubmit the request if the operation failed.",
        Some(pointer),
    )
}

/// `Base.ActionParameterMissing` / `ActionParameterNotSupported`-style refusals of an action
/// parameter: `value` is `None` when the parameter is missing.
pub fn action_parameter(action: &str, name: &str, value: Option<&str>, allowed: &[&str]) -> Value {
    match value {
        None => base(
            "ActionParameterMissing",
            &format!("The action {action} requires the parameter {name} to be present in the request body."),
            &[action, name],
            &format!(
                "Supply the action with the required parameter {name}: {}.",
                allowed.join(", ")
            ),
            Some(&format!("#/{name}")),
        ),
        Some(v) => base(
            "ActionParameterValueError",
            &format!("The value {v} for the parameter {name} in the action {action} is invalid."),
            &[v, name, action],
            &format!("Use one of {}.", allowed.join(", ")),
            Some(&format!("#/{name}")),
        ),
    }
}

/// iDRAC10's answers that public reports quote whole: registry versions and words exactly as
/// the real BMC sent them (`Base.1.18`, `IDRAC.2.14`), without the `@odata.type` the emulator's
/// other messages carry.
pub mod idrac10 {
    use serde_json::{Value, json};

    /// The envelope a real iDRAC10 puts around its messages.
    fn envelope(message: Value) -> Value {
        json!({"error": {
            "@Message.ExtendedInfo": [message],
            "code": "Base.1.18.GeneralError",
            "message": "A general error has occurred. See ExtendedInfo for more information",
        }})
    }

    /// HTTP 400 to a `PATCH` of `Boot` on the ComputerSystem: the body a real iDRAC10 returned,
    /// quoted verbatim in dsx-ai-factory/libredfish PR 33 (community.general issue 11297 reports
    /// the same words from an R570).
    pub fn boot_not_writable() -> Value {
        envelope(json!({
            "Message": "The property Boot is a read-only property and cannot be assigned a value.",
            "MessageArgs": ["Boot"],
            "MessageArgs@odata.count": 1,
            "MessageId": "Base.1.18.PropertyNotWritable",
            "RelatedProperties": ["#/Boot"],
            "RelatedProperties@odata.count": 1,
            "Resolution": "Remove the property from the request body and resubmit the request if the operation failed.",
            "Severity": "Warning",
        }))
    }

    /// HTTP 400 to a BIOS write while the job a SecureBoot PATCH created holds the pending values,
    /// naming the attribute written: the body a real iDRAC10 (an R6715) returned, as bmclib PR 467
    /// keeps it.
    pub fn sys011(attribute: &str) -> Value {
        envelope(json!({
            "Message": "Pending configuration values are already committed, unable to perform another set operation.",
            "MessageArgs": [attribute],
            "MessageArgs@odata.count": 1,
            "MessageId": "IDRAC.2.14.SYS011",
            "RelatedProperties": [format!("#/Attributes/{attribute}")],
            "RelatedProperties@odata.count": 1,
            "Resolution": "Wait for the scheduled job to complete or delete the configuration jobs before attempting more set attribute operations.",
            "Severity": "Warning",
        }))
    }

    /// HTTP 401 to Basic credentials while Basic authentication is not Enabled: the MessageId and
    /// Message dell/iDRAC-Redfish-Scripting issue 371 quotes from firmware 1.30.10.50; the
    /// resolution and severity are the DMTF Base registry's (assumed).
    pub fn access_denied() -> Value {
        envelope(json!({
            "Message": "The authentication credentials included with this request are missing or invalid.",
            "MessageArgs": [],
            "MessageArgs@odata.count": 0,
            "MessageId": "Base.1.18.AccessDenied",
            "RelatedProperties": [],
            "RelatedProperties@odata.count": 0,
            "Resolution": "Attempt to ensure that the URI is correct and that the service has the appropriate credentials.",
            "Severity": "Critical",
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_decode_with_the_client() {
        let body = serde_json::to_vec(&error_body(vec![sys011()])).unwrap();
        let e = redfish_client::resources::message::RedfishError::from_body(&body).unwrap();
        assert!(e.has_code("SYS011"));
    }

    #[test]
    fn messages_carry_their_arguments_and_a_severity_per_id() {
        let m = not_found("/redfish/v1/Nowhere");
        assert_eq!(m["MessageArgs"], json!(["/redfish/v1/Nowhere"]));
        assert_eq!(m["MessageArgs@odata.count"], 1);
        assert_eq!(m["Severity"], "Critical");
        assert_eq!(sys413()["Severity"], "Informational");
        assert_eq!(sys011()["Severity"], "Warning");
        assert_eq!(success()["Severity"], "OK");
        assert_eq!(
            property_missing("Attributes")["RelatedProperties"],
            json!(["#/Attributes"])
        );
        assert_eq!(property_missing("Attributes")["RelatedProperties@odata.count"], 1);
    }
}

/// HPE iLO's messages and their envelope, as iLO 5 2.72 sends them (NVIDIA libredfish
/// tests/mockups/hpe; HPE redfishdocs "Error responses"): an `@Message.ExtendedInfo` entry
/// carries only `MessageId` and, when it has any, `MessageArgs` (the text, severity and
/// resolution are the registries'), and every body wraps its messages in `error` with the code
/// `iLO.0.10.ExtendedInfo`, a success included.
pub mod ilo {
    use serde_json::{Value, json};

    /// The iLO registry of iLO 5 2.72 (`iLO.json`, RegistryVersion 2.15.0).
    pub const ILO: &str = "iLO.2.15";
    /// The Base registry iLO 5 2.72 serves (RegistryVersion 1.4.0).
    pub const BASE: &str = "Base.1.4";
    /// The registry version the BIOS's own outcome messages carry in `@Redfish.Settings`
    /// (`Base.1.0.Success`, `Base.1.0.PropertyUnknown`, whatever Base the service serves).
    pub const OUTCOME: &str = "Base.1.0";

    /// One entry: the id, and the arguments when there are any.
    pub fn message(id: &str, args: &[&str]) -> Value {
        if args.is_empty() {
            json!({"MessageId": id})
        } else {
            json!({"MessageId": id, "MessageArgs": args})
        }
    }

    /// An outcome entry of `@Redfish.Settings.Messages` about `attribute`, with the
    /// `RelatedProperties` HPE's BIOS data model shows on a partial apply.
    pub fn about(id: &str, args: &[&str], attribute: &str) -> Value {
        let mut m = message(id, args);
        m["RelatedProperties"] = json!([format!("#/{attribute}")]);
        m
    }

    /// The envelope around `messages`.
    pub fn body(messages: Vec<Value>) -> Value {
        json!({"error": {
            "code": "iLO.0.10.ExtendedInfo",
            "message": "See @Message.ExtendedInfo for more information.",
            "@Message.ExtendedInfo": messages,
        }})
    }

    /// `iLO.2.15.SystemResetRequired`: staged, applied at the next system reset.
    pub fn system_reset_required() -> Value {
        message(&format!("{ILO}.SystemResetRequired"), &[])
    }

    /// `Base.1.4.Success`.
    pub fn success() -> Value {
        message(&format!("{BASE}.Success"), &[])
    }

    /// What an iLO answers where the emulator's shared code answers with an id of another
    /// registry (an iDRAC's, or a Base key iLO 5's Base 1.4 lacks): the code, the iLO key in its
    /// stead, and how many of the arguments it keeps. The iLO keys are HPE's (its iLO 5 message
    /// registry, as HPE's "iLO RESTful API" documentation lists it); that a real iLO answers
    /// these cases with them is assumed.
    pub const TRANSLATED: [(&str, &str, usize); 5] = [
        // Basic credentials refused: as a refused login.
        ("SYS415", "UnauthorizedLoginAttempt", 0),
        // A reset to the power state the host is in.
        ("PSU501", "InvalidOperationForSystemState", 0),
        ("PSU502", "InvalidOperationForSystemState", 0),
        // A boot device path the system does not have.
        ("BOOT016", "PropertyValueBadParam", 0),
        // A value an action's parameter does not take: the value and the parameter.
        ("ActionParameterValueError", "ActionParameterValueNotInList", 2),
    ];

    /// Messages in iLO's shape: ids only (a Base id at iLO's Base version), arguments kept; an
    /// id [`TRANSLATED`] names becomes iLO's, and any other id of a registry an iLO does not
    /// serve (an iDRAC's) becomes Base's `GeneralError`: an iLO names no other vendor's
    /// registry.
    pub fn reshape(messages: &[Value]) -> Vec<Value> {
        messages
            .iter()
            .map(|m| {
                let id = m["MessageId"].as_str().unwrap_or_default();
                let code = id.rsplit('.').next().unwrap_or(id);
                let args: Vec<&str> = m["MessageArgs"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some((_, key, kept)) = TRANSLATED.iter().find(|(from, ..)| *from == code) {
                    return message(&format!("{ILO}.{key}"), &args[..args.len().min(*kept)]);
                }
                if id.starts_with("Base.") {
                    message(&format!("{BASE}.{code}"), &args)
                } else if id.starts_with(&format!("{ILO}.")) {
                    message(id, &args)
                } else {
                    message(&format!("{BASE}.GeneralError"), &[])
                }
            })
            .collect()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn ids_an_ilo_does_not_know_become_its_own_and_base_ids_take_its_version() {
            let shaped = reshape(&[
                crate::messages::sys415(),
                crate::messages::not_found("/redfish/v1/Nowhere"),
                crate::messages::action_parameter("ComputerSystem.Reset", "ResetType", Some("Off"), &["On"]),
                crate::messages::sys011(),
                message(&format!("{ILO}.SystemResetRequired"), &[]),
            ]);
            assert_eq!(
                shaped,
                vec![
                    json!({"MessageId": "iLO.2.15.UnauthorizedLoginAttempt"}),
                    json!({"MessageId": "Base.1.4.ResourceMissingAtURI", "MessageArgs": ["/redfish/v1/Nowhere"]}),
                    json!({"MessageId": "iLO.2.15.ActionParameterValueNotInList", "MessageArgs": ["Off", "ResetType"]}),
                    json!({"MessageId": "Base.1.4.GeneralError"}),
                    json!({"MessageId": "iLO.2.15.SystemResetRequired"}),
                ]
            );
        }
    }
}
