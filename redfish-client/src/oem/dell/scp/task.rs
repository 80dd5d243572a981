//! The task an export, preview or import runs as (`/redfish/v1/TaskService/Tasks/<JID>`): its
//! DMTF state, its Dell job (`Oem.Dell`: `JobState`, `Message`, `MessageId`,
//! `PercentComplete`) and its messages, which after a preview or an import carry one
//! `ServerConfigurationProfileResults` per attribute (`Name`, `OldValue`, `NewValue`, `Status`,
//! `ErrCode`, `Severity`), as Dell's scripts print them. Decoded leniently: every field is
//! optional, so a firmware that leaves one out still reads.

use crate::oem::dell::JobState;
use crate::resources::message::message_code;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A task document.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScpTask {
    /// `JID_...`.
    #[serde(default)]
    pub id: String,
    /// DMTF `TaskState` (`Running`, `Completed`, `Exception`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<String>,
    /// DMTF `TaskStatus` (`OK`, `Warning`, `Critical`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_status: Option<String>,
    /// Progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_complete: Option<u8>,
    /// The messages, results included.
    #[serde(default)]
    pub messages: Vec<TaskMessage>,
    /// `Oem`, where the Dell job lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oem: Option<TaskOem>,
}

/// `Oem` of a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskOem {
    /// The Dell job.
    #[serde(rename = "Dell", default, skip_serializing_if = "Option::is_none")]
    pub dell: Option<TaskJob>,
}

/// The Dell job behind a task (`Oem.Dell`, a `DellJob`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TaskJob {
    /// Where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_state: Option<JobState>,
    /// `ExportConfiguration`, `ImportConfiguration`, `PreviewConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_type: Option<String>,
    /// The latest message (`Successfully imported and applied Server Configuration Profile.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Its MessageId (`SYS053`, possibly prefixed with the registry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_complete: Option<u8>,
}

/// One message of a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TaskMessage {
    /// The text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The MessageId.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_args: Vec<Value>,
    /// `Oem.Dell`: one attribute's result, after a preview or an import.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oem: Option<ResultOem>,
}

/// `Oem` of a message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResultOem {
    /// The result.
    #[serde(rename = "Dell", default, skip_serializing_if = "Option::is_none")]
    pub dell: Option<ProfileResult>,
}

/// `ServerConfigurationProfileResults`: what an import did to one attribute, or what a
/// preview says it would do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ProfileResult {
    /// The SCP name of the attribute (`LDAP.1#Enable`, `LogicalProc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_value: Option<String>,
    /// The value before.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "text")]
    pub old_value: Option<String>,
    /// The value asked for.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "text")]
    pub new_value: Option<String>,
    /// `Success`, or what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `0`, or the error's code.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "text")]
    pub err_code: Option<String>,
    /// `OK`, `Warning`, `Critical`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
}

/// A value that may come as a string or a number.
fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(v.filter(|v| !v.is_null()).map(|v| super::document::value_text(&v)))
}

impl ProfileResult {
    /// Whether the attribute was (or would be) set: `Status` is `Success` and `ErrCode`, when
    /// given, is 0.
    pub fn succeeded(&self) -> bool {
        let status_ok = self.status.as_deref().is_none_or(|s| s.eq_ignore_ascii_case("success"));
        let code_ok = self.err_code.as_deref().is_none_or(|c| c.trim() == "0");
        status_ok && code_ok
    }
}

impl ScpTask {
    /// The Dell job, when the task carries one.
    pub fn job(&self) -> Option<&TaskJob> {
        self.oem.as_ref()?.dell.as_ref()
    }

    /// The job's state (`Oem.Dell.JobState`: the DMTF `TaskState` has no failed state).
    pub fn job_state(&self) -> Option<JobState> {
        self.job()?.job_state
    }

    /// The trailing code of the job's MessageId (`SYS053`).
    pub fn message_code(&self) -> Option<&str> {
        self.job()?.message_id.as_deref().map(message_code)
    }

    /// The job's latest message.
    pub fn message(&self) -> Option<&str> {
        self.job()?.message.as_deref()
    }

    /// Every per-attribute result, in order.
    pub fn results(&self) -> impl Iterator<Item = &ProfileResult> {
        self.messages.iter().filter_map(|m| m.oem.as_ref()?.dell.as_ref())
    }

    /// The messages that are not attribute results (`SYS087`, `SYS088`, ...), as `(code, text)`.
    pub fn notes(&self) -> impl Iterator<Item = (Option<&str>, &str)> {
        self.messages
            .iter()
            .filter(|m| m.oem.as_ref().and_then(|o| o.dell.as_ref()).is_none())
            .filter_map(|m| Some((m.message_id.as_deref().map(message_code), m.message.as_deref()?)))
    }
}
