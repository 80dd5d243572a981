//! Server Configuration Profiles: the Manager's `ExportSystemConfiguration`,
//! `ImportSystemConfigurationPreview` and `ImportSystemConfiguration` with a local buffer (no
//! share), each run as a job of the queue (`ExportConfiguration`, `PreviewConfiguration`,
//! `ImportConfiguration`) and a task at `/redfish/v1/TaskService/Tasks/<JID>`.
//!
//! The flow follows Dell's scripts and Ansible collection: the POST answers 202 with the task in
//! `Location`; the task answers 202 while the job runs and, when an export is done, 200 with the
//! profile itself (JSON, or XML as `application/xml`). An import applies the iDRAC, System and
//! Lifecycle Controller attributes at once and the BIOS attributes in the next POST: it restarts
//! the host itself (`ShutdownType` Graceful, the default, or Forced), or with `NoReboot` the
//! whole job waits, `Paused`, for a reboot someone else makes. Each attribute's result is a
//! `ServerConfigurationProfileResults` message of the task. What no public payload shows is
//! marked assumed in `idrac-sim/README.md`.
//!
//! Here: the actions' routes and each job's step on the clock. `parameters` reads the actions'
//! bodies, `export` writes the profile, `import` previews and imports one through `analysis`
//! (what it would change, attribute by attribute), `values` turns SCP text into attribute
//! values, `task` is the task document, `state` what a job keeps.

mod analysis;
mod export;
mod import;
mod parameters;
pub(crate) mod state;
mod task;
mod values;

pub(crate) use task::TASKS;

use crate::clock::wall;
use crate::host::caller::Caller;
use crate::host::core::{Host, State};
use crate::host::jobs::state::{Job, JobKind, ScpKind};
use crate::host::reply::Reply;
use crate::route::{Route, exact, member};
use redfish_client::oem::dell::JobState;
use redfish_client::oem::dell::scp::Format;
use state::{ShutdownType, Staged, Task};
use std::time::{Instant, SystemTime};

/// The Manager's three SCP actions (at the target iDRAC 9 lists, `EID_674_Manager.<action>`,
/// and where Dell's scripts post on iDRAC 10, `OemManager.<action>`), and the tasks.
pub(crate) fn routes() -> Vec<Route> {
    action_routes(&["EID_674_Manager", "OemManager"], ACTIONS)
}

/// iDRAC10's: the actions at the `OemManager.<action>` targets its Manager lists (Dell's
/// scripts and Ansible collection post there on 17G), taking `ShareParameters.Target` as a list
/// only ("made mandatory since 17G", the comment of `process_scp_target` in Dell's Ansible
/// collection; a comma-joined string is refused with a 400; the refusal's words assumed).
pub(crate) fn idrac10_routes() -> Vec<Route> {
    const LISTED: [(&str, crate::route::Handler); 3] = [
        ("ExportSystemConfiguration", |h, r| {
            r.with_json(|b| listed(b, || h.scp_export(r.caller, b)))
        }),
        ("ImportSystemConfigurationPreview", |h, r| {
            r.with_json(|b| listed(b, || h.scp_preview(r.caller, b)))
        }),
        ("ImportSystemConfiguration", |h, r| {
            r.with_json(|b| listed(b, || h.scp_import(r.caller, b)))
        }),
    ];
    action_routes(&["OemManager"], LISTED)
}

/// The answer of `then`, for a body whose targets are a list; the refusal otherwise.
fn listed(body: &serde_json::Value, then: impl FnOnce() -> Reply) -> Reply {
    match parameters::listed_targets(body) {
        Ok(()) => then(),
        Err(refused) => Reply::error(400, vec![refused]),
    }
}

/// The three actions, each answered by its handler.
const ACTIONS: [(&str, crate::route::Handler); 3] = [
    ("ExportSystemConfiguration", |h, r| {
        r.with_json(|b| h.scp_export(r.caller, b))
    }),
    ("ImportSystemConfigurationPreview", |h, r| {
        r.with_json(|b| h.scp_preview(r.caller, b))
    }),
    ("ImportSystemConfiguration", |h, r| {
        r.with_json(|b| h.scp_import(r.caller, b))
    }),
];

/// The actions at the targets of `prefixes` (`EID_674_Manager`, `OemManager`), and the tasks.
fn action_routes(prefixes: &[&str], actions: [(&str, crate::route::Handler); 3]) -> Vec<Route> {
    let mut routes = Vec::new();
    for (action, handler) in actions {
        for oem in prefixes {
            let path = format!("{}/Actions/Oem/{oem}.{action}", redfish_client::oem::dell::MANAGER);
            routes.push(Route::post(exact(path), handler));
        }
    }
    routes.push(Route::get(exact(task::TASKS), |h, r| {
        Reply::ok(h.scp_tasks(r.recorded(h)))
    }));
    routes.push(Route::get(member(task::TASKS), |h, r| h.scp_task(r.id())).when(|h, r| h.scp_task_exists(r.path)));
    routes
}

impl Host {
    /// How long an export or a preview runs, and how long an import analyses: a tenth of a
    /// POST (real exports take tens of seconds; the proportion to POST is assumed).
    fn scp_step(&self) -> std::time::Duration {
        self.config.boot_time / 10
    }

    /// Queues an SCP job and its task; returns the `Location` reply.
    fn queue_scp(&self, s: &mut State, kind: ScpKind, task: Task, message: (&'static str, &'static str)) -> Reply {
        let id = s.jobs.next_id("JID", self.index);
        let now = SystemTime::now();
        s.jobs.queue.insert(
            id.clone(),
            Job {
                id: id.clone(),
                kind: JobKind::Scp(kind),
                state: JobState::Running,
                message_id: message.0,
                message: message.1,
                percent: 0,
                start_time: "TIME_NOW".into(),
                end_time: "TIME_NA".into(),
                created: now,
                window: None,
                run_at: None,
                actual_start: Some(now),
                actual_stop: None,
            },
        );
        s.scp.tasks.insert(id.clone(), task);
        self.stats.count_job();
        Reply::with_body(202, None).header("Location", format!("{TASKS}/{id}"))
    }

    fn new_task(&self, kind: ScpKind, caller: &Caller) -> Task {
        Task {
            kind,
            due: Some(Instant::now() + self.scp_step()),
            format: Format::Xml,
            targets: vec!["ALL".to_owned()],
            include_read_only: false,
            document: None,
            profile: Err(String::new()),
            shutdown: ShutdownType::Graceful,
            power_off_after: false,
            caller: caller.clone(),
            messages: Vec::new(),
            staged: Staged::default(),
            waiting_for_post: false,
        }
    }

    /// The step of SCP job `id` due now: an export or a preview ends, an import is analysed.
    pub(crate) fn scp_due(&self, s: &mut State, id: &str, at: Instant) {
        let Some(mut task) = s.scp.tasks.remove(id) else { return };
        task.due = None;
        match task.kind {
            ScpKind::Export => {
                task.document = Some(self.export_text(s, &task));
                self.finish_scp(
                    s,
                    id,
                    JobState::Completed,
                    "SYS043",
                    "Successfully exported Server Configuration Profile.",
                    at,
                );
            }
            ScpKind::Preview => self.preview_now(s, id, &mut task, at),
            ScpKind::Import => self.import_now(s, id, &mut task, at),
        }
        s.scp.tasks.insert(id.to_owned(), task);
    }

    fn finish_scp(
        &self,
        s: &mut State,
        id: &str,
        state: JobState,
        code: &'static str,
        text: &'static str,
        at: Instant,
    ) {
        if let Some(job) = s.jobs.queue.get_mut(id) {
            job.state = state;
            job.message_id = code;
            job.message = text;
            job.percent = 100;
            job.actual_stop = Some(wall(at));
        }
    }

    fn set_job(s: &mut State, id: &str, state: JobState, code: &'static str, text: &'static str) {
        if let Some(job) = s.jobs.queue.get_mut(id) {
            job.state = state;
            job.message_id = code;
            job.message = text;
        }
    }
}
