//! What the host keeps of its Server Configuration Profile jobs, beside their entries in the
//! queue: each job's task (the request, the profile, its messages, what an import staged).

use crate::host::caller::Caller;
use crate::host::jobs::state::ScpKind;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::oem::dell::scp::{Format, ScpDocument};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Instant;

/// The SCP jobs' tasks, by job id.
#[derive(Debug, Default)]
pub(crate) struct ScpTasks {
    pub(crate) tasks: BTreeMap<String, Task>,
}

/// How an import gets the reboot its BIOS attributes need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShutdownType {
    Graceful,
    Forced,
    NoReboot,
}

/// An SCP job's own state, beside its entry in the queue.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub(crate) kind: ScpKind,
    /// When its next step is due: the export written, the profile analysed.
    pub(crate) due: Option<Instant>,
    pub(crate) format: Format,
    pub(crate) targets: Vec<String>,
    pub(crate) include_read_only: bool,
    /// An export's profile, once written.
    pub(crate) document: Option<String>,
    /// The profile to preview or import, or why it could not be read.
    pub(crate) profile: Result<ScpDocument, String>,
    pub(crate) shutdown: ShutdownType,
    pub(crate) power_off_after: bool,
    pub(crate) caller: Caller,
    /// The task's messages: one result per attribute, then notes.
    pub(crate) messages: Vec<Value>,
    /// Staged for the next POST.
    pub(crate) staged: Staged,
    /// Waiting for a POST to apply what is staged.
    pub(crate) waiting_for_post: bool,
}

/// What an analysis found to change, and what it could not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Staged {
    pub(crate) bios: Attributes,
    pub(crate) dell_attributes: BTreeMap<AttributeGroup, Attributes>,
    pub(crate) users: Vec<(String, AttributeValue)>,
    pub(crate) results: Vec<Value>,
    pub(crate) changes: usize,
    pub(crate) failures: usize,
}

impl Staged {
    pub(crate) fn is_empty(&self) -> bool {
        self.bios.is_empty() && self.dell_attributes.values().all(Attributes::is_empty) && self.users.is_empty()
    }
}
