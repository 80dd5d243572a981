//! iDRAC-shaped messages and error bodies. Dell MessageIds carry the registry prefix
//! `IDRAC.2.9.`; Base registry ids come alongside, as real iDRACs send them. Ids not listed in
//! idrac-redfish.md are marked in the emulator's docs as assumed.

use serde_json::{Value, json};

/// The Dell message registry prefix the emulator answers with.
pub const IDRAC: &str = "IDRAC.2.9";
/// The DMTF Base registry prefix.
pub const BASE: &str = "Base.1.12";

/// One `@Message.ExtendedInfo` entry.
pub fn message(id: &str, text: &str, resolution: &str, severity: &str, related: Option<&str>) -> Value {
    json!({
        "@odata.type": "#Message.v1_1_1.Message",
        "MessageId": id,
        "Message": text,
        "MessageArgs": [],
        "RelatedProperties": related.map(|r| vec![r.to_owned()]).unwrap_or_default(),
        "Resolution": resolution,
        "Severity": severity,
    })
}

/// A Dell (`IDRAC.2.9.<code>`) critical message.
pub fn idrac(code: &str, text: &str, resolution: &str, related: Option<&str>) -> Value {
    message(&format!("{IDRAC}.{code}"), text, resolution, "Critical", related)
}

/// A Base registry (`Base.1.12.<code>`) message.
pub fn base(code: &str, text: &str, resolution: &str, related: Option<&str>) -> Value {
    message(&format!("{BASE}.{code}"), text, resolution, "Warning", related)
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

/// `SYS413`: the operation completed.
pub fn sys413() -> Value {
    message(
        &format!("{IDRAC}.SYS413"),
        "The operation successfully completed.",
        "No response action is required.",
        "Informational",
        None,
    )
}

/// `SYS011`: values already committed (a job exists).
pub fn sys011() -> Value {
    idrac(
        "SYS011",
        "Pending configuration values are already committed.",
        "Delete the existing configuration job, or wait for it to complete, and retry the operation.",
        None,
    )
}

/// `SYS406`: System Lockdown is on.
pub fn sys406() -> Value {
    idrac(
        "SYS406",
        "Unable to complete the operation because the System Lockdown mode is enabled.",
        "Disable System Lockdown (Lockdown.1.SystemLockdown) and retry the operation.",
        None,
    )
}

/// `SWC0700`: the iDRAC is not ready (after a reset).
pub fn swc0700() -> Value {
    idrac(
        "SWC0700",
        "The iDRAC is not ready. The configuration values cannot be accessed.",
        "Wait for a few minutes and retry the operation.",
        None,
    )
}

/// A 401 body for bad credentials (`SYS415`).
pub fn sys415() -> Value {
    idrac(
        "SYS415",
        "Unable to complete the operation because an invalid username and/or password is entered, and therefore authentication failed.",
        "Enter valid user name and password and retry the operation.",
        None,
    )
}

/// A 401 body for a missing or expired session.
pub fn no_valid_session() -> Value {
    base(
        "NoValidSession",
        "There is no valid session established with the implementation.",
        "Establish a session before attempting any operations.",
        None,
    )
}

/// `Base.ResourceMissingAtURI`.
pub fn not_found(uri: &str) -> Value {
    base(
        "ResourceMissingAtURI",
        &format!("The resource at the URI {uri} was not found."),
        "Place a valid resource at the URI or correct the URI and resubmit the request.",
        None,
    )
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
}
