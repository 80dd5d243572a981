//! A BMC's job, as every backend reports it to the engine: which job, what it configures, where
//! it is, and what its state means for someone waiting on it. Dell's OEM job queue and DMTF's
//! `JobService` both read into this one shape; it serialises with the field names of the job
//! resources rftune has always shown (`Id`, `JobType`, `JobState`, `MessageId`, ...).

use redfish_client::ODataId;
pub use redfish_client::resources::task::JobOutcome;
use serde::Serialize;

/// One job of a BMC's queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Job {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// `JID_xxxxxxxxxxxx` on an iDRAC.
    pub id: String,
    /// e.g. `Configure: BIOS.Setup.1-1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// e.g. `BIOSConfiguration`, as the BMC names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_type: Option<String>,
    /// The state as the BMC names it (`Scheduled`, `Completed`, ...).
    pub job_state: String,
    /// Latest message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Latest MessageId (`PR19`, `JCP001`, `PR30`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Progress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percent_complete: Option<u8>,
    /// Start time as the BMC reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// Completion time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<String>,
    /// The settings object the job applies, when reported.
    #[serde(rename = "TargetSettingsURI", skip_serializing_if = "Option::is_none")]
    pub target_settings_uri: Option<String>,
    /// What the job does, as the backend read it from its type.
    #[serde(skip)]
    pub kind: JobKind,
    /// What its state means for a waiter, as the backend read it.
    #[serde(skip)]
    pub outcome: JobOutcome,
}

/// What a job does, as far as rftune cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// Applies staged BIOS values (an iDRAC's `BIOSConfiguration`).
    BiosConfiguration,
    /// Imports a Server Configuration Profile.
    ConfigurationImport,
    /// Anything else (firmware updates, exports, ...).
    Other,
}

/// What a job queue clear removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueClear {
    /// One job.
    Job(String),
    /// Every job.
    All,
    /// Every job, restarting the BMC's job services: a last resort.
    AllForce,
}

impl Job {
    /// The trailing code of the MessageId, e.g. `PR19`.
    pub fn message_code(&self) -> Option<&str> {
        self.message_id
            .as_deref()
            .map(redfish_client::resources::message::message_code)
    }

    /// Whether the job still occupies the queue: waiting, running, or stuck. A stuck job never
    /// runs but blocks new configuration jobs until it is deleted, so it counts as open.
    pub fn holds_queue(&self) -> bool {
        matches!(
            self.outcome,
            JobOutcome::Waiting | JobOutcome::Running | JobOutcome::Stuck
        )
    }

    /// Whether this is a BIOS configuration job.
    pub fn is_bios_config(&self) -> bool {
        self.kind == JobKind::BiosConfiguration
    }

    /// A BIOS configuration job that still holds the queue (an apply must not stack on it).
    pub fn is_open_bios_job(&self) -> bool {
        self.is_bios_config() && self.holds_queue()
    }

    /// A bad outcome as an error naming the job, its state and MessageId.
    pub fn failure(&self) -> Option<redfish_client::Error> {
        let state = match self.outcome {
            JobOutcome::Failed => self.job_state.clone(),
            JobOutcome::Stuck => format!("{} (stuck: will never run)", self.job_state),
            _ => return None,
        };
        Some(redfish_client::Error::JobFailed {
            job_id: self.id.clone(),
            state,
            message_id: self.message_id.clone(),
            message: self.message.clone(),
        })
    }
}
