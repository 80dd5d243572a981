//! DMTF `LogEntry`: one record of a log service (an event log, the SEL, a BMC's audit log).

use super::message::message_code;
use crate::odata::ODataId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A log entry, in the properties every log service fills.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LogEntry {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// Identifier (a sequence number on most services).
    #[serde(default)]
    pub id: String,
    /// When it was written (ISO 8601 with the BMC's offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// `OK`, `Warning`, `Critical`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// `Event`, `SEL`, `Oem`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_type: Option<String>,
    /// The text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The registry message (`IDRAC.2.9.USR0030`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The message's arguments, in the registry's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_args: Vec<String>,
    /// Vendor properties, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oem: Option<Value>,
}

impl LogEntry {
    /// The trailing code of the MessageId (`USR0030`), if it has one.
    pub fn code(&self) -> Option<&str> {
        self.message_id.as_deref().map(message_code)
    }

    /// Argument `i` (0-based), if present and not blank.
    pub fn arg(&self, i: usize) -> Option<&str> {
        self.message_args.get(i).map(|a| a.trim()).filter(|a| !a.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_decodes_with_only_its_link_and_blank_arguments_are_absent() {
        let e: LogEntry = serde_json::from_str(
            r#"{"@odata.id":"/redfish/v1/x/1","MessageId":"IDRAC.2.7.USR0030","MessageArgs":["root"," "]}"#,
        )
        .unwrap();
        assert_eq!(e.code(), Some("USR0030"));
        assert_eq!(e.arg(0), Some("root"));
        assert_eq!(e.arg(1), None);
        assert_eq!(e.arg(5), None);
        let bare: LogEntry = serde_json::from_str(r#"{"@odata.id":"/redfish/v1/x/2"}"#).unwrap();
        assert_eq!(bare.code(), None);
    }
}
