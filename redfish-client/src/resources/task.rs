//! DMTF `Task` and `Job`: long-running work a service reports on.

use super::message::Message;
use crate::odata::ODataId;
use serde::{Deserialize, Serialize};

/// A task or job, in the fields DMTF's `Task` and `Job` schemas share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Task {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// Identifier.
    #[serde(default)]
    pub id: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `TaskState` (Task schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_state: Option<TaskState>,
    /// `JobState` (Job schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_state: Option<TaskState>,
    /// Progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_complete: Option<u8>,
    /// Start time (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// End time (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    /// Messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

impl Task {
    /// The state from whichever schema the service used.
    pub fn state(&self) -> TaskState {
        self.task_state.or(self.job_state).unwrap_or(TaskState::Unknown)
    }
}

/// `TaskState` / `JobState` values of the DMTF schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum TaskState {
    New,
    Starting,
    Running,
    Suspended,
    Interrupted,
    Pending,
    Stopping,
    Completed,
    Killed,
    Exception,
    Service,
    Cancelling,
    Cancelled,
    Continue,
    UserIntervention,
    /// A value this client does not know.
    #[serde(other)]
    Unknown,
}

impl TaskState {
    /// Whether the work has ended, successfully or not.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Killed | Self::Exception | Self::Cancelled)
    }
}

/// What a job's state means for someone waiting on it, whichever queue (DMTF's `JobService`,
/// a vendor's own) reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    /// Done.
    Succeeded,
    /// Done, with warnings (an iDRAC's `CompletedWithErrors`).
    SucceededWithErrors,
    /// Ended badly.
    Failed,
    /// Will never run, yet holds the queue until deleted (an iDRAC job stuck with `PR30`,
    /// "Job processing initialization failure").
    Stuck,
    /// Waiting for a reboot or its turn.
    Waiting,
    /// In progress.
    Running,
}

impl JobOutcome {
    /// Whether waiting longer cannot change anything.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Self::Succeeded | Self::SucceededWithErrors | Self::Failed | Self::Stuck
        )
    }
}
