//! Redfish messages: the `error` body and `@Message.ExtendedInfo` entries services attach to
//! responses (DMTF `Message` schema), with iDRAC MessageIds such as `IDRAC.2.9.SYS011`. A
//! service may send only the MessageId and its arguments (HPE's iLO does); the text and
//! resolution are then its message registry's ([`Message::fill_from`]).

use super::message_registry::{self, RegistryMessage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// One entry of `@Message.ExtendedInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Message {
    /// Registry-qualified id, e.g. `IDRAC.2.9.SYS011` or `Base.1.12.PropertyValueNotInList`.
    #[serde(default)]
    pub message_id: String,
    /// Human-readable text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Arguments substituted into the message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_args: Vec<Value>,
    /// JSON pointers to the properties the message is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_properties: Vec<String>,
    /// What the service suggests doing about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
    /// `OK`, `Warning` or `Critical` (older services use `Severity`, newer `MessageSeverity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// The DMTF 1.x replacement for `Severity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_severity: Option<String>,
}

impl Message {
    /// The trailing code of the MessageId: `SYS011` for `IDRAC.2.9.SYS011`,
    /// `PropertyValueNotInList` for `Base.1.12.PropertyValueNotInList`. Registry versions vary by
    /// firmware, so callers match on this, never on the full id.
    pub fn code(&self) -> &str {
        message_code(&self.message_id)
    }

    /// Whether the service left the text out (iLO sends ids and arguments only).
    pub fn lacks_text(&self) -> bool {
        self.message.as_deref().is_none_or(|m| m.trim().is_empty())
    }

    /// Fills in what the service left out from the registry's `entry`: the text with this
    /// message's arguments in place, the resolution (a placeholder there takes its argument
    /// too) and the severity. What the service sent is kept.
    pub fn fill_from(&mut self, entry: &RegistryMessage) {
        if self.lacks_text() {
            self.message = entry.text_with(&self.message_args).or(self.message.take());
        }
        if self.resolution.as_deref().is_none_or(|r| r.trim().is_empty()) {
            let resolution = entry
                .resolution
                .as_deref()
                .map(|r| message_registry::substitute(r, &self.message_args));
            self.resolution = resolution.or(self.resolution.take());
        }
        if self.severity.is_none() && self.message_severity.is_none() {
            self.message_severity = entry.message_severity.clone().or_else(|| entry.severity.clone());
        }
    }
}

/// The trailing code of a MessageId (see [`Message::code`]).
pub fn message_code(message_id: &str) -> &str {
    message_id.rsplit('.').next().unwrap_or(message_id)
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.code())?;
        if let Some(m) = &self.message {
            write!(f, " {}", m.trim())?;
        }
        let resolution = self.resolution.as_deref().map(str::trim).filter(|r| {
            !r.is_empty()
                && !r.eq_ignore_ascii_case("none")
                && !r.eq_ignore_ascii_case("no response action is required.")
        });
        if let Some(r) = resolution {
            write!(f, " Resolution: {r}")?;
        }
        Ok(())
    }
}

/// The decoded `{"error": {...}}` body of a failed Redfish request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RedfishError {
    /// A MessageId-like code summarising the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// A summary message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The detailed messages; iDRAC puts its own MessageIds here.
    #[serde(rename = "@Message.ExtendedInfo", default)]
    pub extended_info: Vec<Message>,
}

#[derive(Deserialize)]
struct ErrorEnvelope {
    error: Option<RedfishError>,
    #[serde(rename = "@Message.ExtendedInfo", default)]
    extended_info: Vec<Message>,
}

impl RedfishError {
    /// Decodes an error response body, tolerating what services actually send: the standard
    /// `{"error": {...}}` envelope or a bare top-level `@Message.ExtendedInfo`. Returns `None`
    /// when the body carries neither.
    pub fn from_body(body: &[u8]) -> Option<Self> {
        let env: ErrorEnvelope = serde_json::from_slice(body).ok()?;
        match env.error {
            Some(e) => Some(e),
            None if !env.extended_info.is_empty() => Some(Self {
                code: None,
                message: None,
                extended_info: env.extended_info,
            }),
            None => None,
        }
    }

    /// Whether any message carries the trailing `code` (e.g. `SYS011`), or the summary code ends in it.
    pub fn has_code(&self, code: &str) -> bool {
        self.extended_info.iter().any(|m| m.code() == code) || self.code.as_deref().map(message_code) == Some(code)
    }

    /// The trailing codes of every message, in order (e.g. `["SYS426", "PropertyValueNotInList"]`).
    pub fn codes(&self) -> Vec<&str> {
        self.extended_info.iter().map(Message::code).collect()
    }
}

impl fmt::Display for RedfishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.extended_info.is_empty() {
            let text = self.message.as_deref().or(self.code.as_deref()).unwrap_or("no detail");
            return f.write_str(text.trim());
        }
        for (i, m) in self.extended_info.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{m}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYS011: &str = r#"{"error":{"@Message.ExtendedInfo":[{"Message":"Pending configuration values are already committed.","MessageArgs":[],"MessageId":"IDRAC.2.9.SYS011","RelatedProperties":[],"Resolution":"Delete the existing job or wait for it to complete.","Severity":"Warning"}],"code":"Base.1.12.GeneralError","message":"A general error has occurred. See ExtendedInfo for more information"}}"#;

    #[test]
    fn decodes_idrac_error_and_matches_trailing_code() {
        let e = RedfishError::from_body(SYS011.as_bytes()).unwrap();
        assert!(e.has_code("SYS011"));
        assert!(!e.has_code("SYS01"));
        assert_eq!(e.codes(), vec!["SYS011"]);
        assert_eq!(
            e.to_string(),
            "[SYS011] Pending configuration values are already committed. Resolution: Delete the existing job or wait for it to complete."
        );
    }

    #[test]
    fn bare_extended_info_and_garbage() {
        let e = RedfishError::from_body(br#"{"@Message.ExtendedInfo":[{"MessageId":"Base.1.8.Success"}]}"#).unwrap();
        assert!(e.has_code("Success"));
        assert!(RedfishError::from_body(b"<html>503</html>").is_none());
        assert!(RedfishError::from_body(br#"{"a":1}"#).is_none());
    }

    #[test]
    fn an_ilo_message_takes_its_text_and_resolution_from_the_registry() {
        let mut e = RedfishError::from_body(
            br#"{"error":{"code":"iLO.0.10.ExtendedInfo","message":"See @Message.ExtendedInfo for more information.","@Message.ExtendedInfo":[{"MessageId":"Base.1.4.PropertyValueNotInList","MessageArgs":["Sometimes","ProcSMT"]}]}}"#,
        )
        .unwrap();
        assert!(e.extended_info[0].lacks_text());
        assert_eq!(e.to_string(), "[PropertyValueNotInList]");
        let entry = RegistryMessage {
            message: Some("%1 is not a value %2 takes.".into()),
            number_of_args: Some(2),
            resolution: Some("Send one it lists.".into()),
            severity: Some("Warning".into()),
            ..RegistryMessage::default()
        };
        e.extended_info[0].fill_from(&entry);
        assert!(!e.extended_info[0].lacks_text());
        assert_eq!(
            e.to_string(),
            "[PropertyValueNotInList] Sometimes is not a value ProcSMT takes. Resolution: Send one it lists."
        );
        assert_eq!(e.extended_info[0].message_severity.as_deref(), Some("Warning"));
        // What the service sent stays.
        let mut sent = Message {
            message_id: "Base.1.4.Success".into(),
            message: Some("Done.".into()),
            message_args: Vec::new(),
            related_properties: Vec::new(),
            resolution: None,
            severity: Some("OK".into()),
            message_severity: None,
        };
        sent.fill_from(&entry);
        assert_eq!(sent.message.as_deref(), Some("Done."));
        assert_eq!(sent.resolution.as_deref(), Some("Send one it lists."));
        assert_eq!(
            (sent.severity.as_deref(), sent.message_severity.as_deref()),
            (Some("OK"), None)
        );
    }

    #[test]
    fn summary_only_error_displays_its_message() {
        let e = RedfishError::from_body(br#"{"error":{"code":"Base.1.0.GeneralError","message":"boom"}}"#).unwrap();
        assert_eq!(e.to_string(), "boom");
        assert!(e.has_code("GeneralError"));
    }
}
