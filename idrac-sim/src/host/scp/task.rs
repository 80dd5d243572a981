//! An SCP job's task at `TaskService/Tasks/<JID>`: 202 while the job runs, an export's profile
//! once written, else the task document (the DMTF state mapped from the job's, the job under
//! `Oem.Dell`, the messages); and the task collection.

use super::state::Task;
use crate::host::core::Host;
use crate::host::jobs::state::{DMTF_JOBS, Job};
use crate::host::reply::{JSON, Reply, XML};
use crate::messages;
use redfish_client::oem::dell::JobState;
use redfish_client::oem::dell::scp::Format;
use serde_json::{Value, json};

/// The task collection.
pub(crate) const TASKS: &str = "/redfish/v1/TaskService/Tasks";

impl Host {
    /// `GET TaskService/Tasks/<JID>`: 202 with the task while its job runs; an export's profile
    /// once it is written; else 200 with the task.
    pub fn scp_task(&self, id: &str) -> Reply {
        let s = self.now();
        let (Some(job), Some(task)) = (s.jobs.queue.get(id), s.scp.tasks.get(id)) else {
            return Reply::error(404, vec![messages::not_found(&format!("{TASKS}/{id}"))]);
        };
        if let Some(doc) = &task.document {
            return match task.format {
                // As written: an export's attributes keep their order (Name, Value, ...).
                Format::Json => Reply::ok_text(doc.clone().into(), JSON),
                Format::Xml => Reply::ok_text(doc.clone().into(), XML),
            };
        }
        let running = matches!(job.state, JobState::Running | JobState::Scheduled | JobState::New);
        Reply::with_body(if running { 202 } else { 200 }, Some(task_json(job, task)))
    }

    /// Whether `path` is a task of this host.
    pub fn scp_task_exists(&self, path: &str) -> bool {
        let id = path
            .strip_prefix(TASKS)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or_default();
        self.lock().scp.tasks.contains_key(id)
    }

    /// `GET TaskService/Tasks`: the SCP tasks, as links.
    pub fn scp_tasks(&self, doc: Option<&Value>) -> Value {
        let s = self.now();
        let members: Vec<Value> = s
            .scp
            .tasks
            .keys()
            .map(|id| json!({"@odata.id": format!("{TASKS}/{id}")}))
            .collect();
        let mut out = doc.cloned().unwrap_or_else(
            || json!({"@odata.id": TASKS, "@odata.type": "#TaskCollection.TaskCollection", "Name": "Task Collection"}),
        );
        out["Members@odata.count"] = json!(members.len());
        out["Members"] = Value::Array(members);
        out
    }
}

/// The task document of an SCP job: the DMTF state mapped from the DellJob's (as a real R750
/// maps its jobs: CompletedWithErrors and Failed are exceptions), the job under `Oem.Dell`, and
/// the messages (the latest first, then each attribute's result and the notes).
fn task_json(job: &Job, task: &Task) -> Value {
    let (state, status) = match job.state {
        JobState::Completed => ("Completed", "OK"),
        JobState::CompletedWithErrors => ("Exception", "Warning"),
        JobState::Failed => ("Exception", "Critical"),
        JobState::Paused => ("Suspended", "OK"),
        _ => ("Running", "OK"),
    };
    let mut dell = job.dell_json(DMTF_JOBS);
    if let Some(map) = dell.as_object_mut() {
        map.remove("@odata.id");
        map.remove("@odata.context");
        map.insert("@odata.type".into(), json!("#DellJob.v1_5_0.DellJob"));
    }
    let mut messages = vec![json!({
        "Message": job.message,
        "MessageArgs": [],
        "MessageArgs@odata.count": 0,
        "MessageId": format!("{}.{}", messages::IDRAC, job.message_id),
    })];
    messages.extend(task.messages.iter().cloned());
    json!({
        "@odata.context": "/redfish/v1/$metadata#Task.Task",
        "@odata.id": format!("{TASKS}/{}", job.id),
        "@odata.type": "#Task.v1_4_3.Task",
        "Description": "Server Configuration and other Tasks running on iDRAC are listed here",
        "Id": job.id,
        "Name": task.kind.name(),
        "Messages@odata.count": messages.len(),
        "Messages": messages,
        "Oem": {"Dell": dell},
        "PercentComplete": job.percent,
        "TaskState": state,
        "TaskStatus": status,
    })
}
