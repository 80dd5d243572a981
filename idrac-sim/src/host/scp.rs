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

use super::attributes::{hidden, not_allowed_now, read_only, unknown_attribute, value_problem};
use super::jobs::{Job, JobKind, ScpKind};
use super::{Caller, Host, Reply, State};
use crate::clock::{self, wall};
use crate::messages::{self, idrac};
use crate::route::{Route, exact, member};
use crate::served::SCP_TARGETS;
use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::oem::dell::scp::{
    BIOS_FQDD, Component, ComponentKind, Format, ScpAttribute, ScpDocument, attribute_name, scp_name, value_text,
};
use redfish_client::oem::dell::{AttributeGroup, JobState};
use redfish_client::resources::attribute_registry::{AttributeRegistry, AttributeType};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

/// The task collection.
pub const TASKS: &str = "/redfish/v1/TaskService/Tasks";

/// The Manager's three SCP actions (at the target iDRAC 9 lists, `EID_674_Manager.<action>`,
/// and where Dell's scripts post on iDRAC 10, `OemManager.<action>`), and the tasks.
pub(crate) fn routes() -> Vec<Route> {
    let actions: [(&str, crate::route::Handler); 3] = [
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
    let mut routes = Vec::new();
    for (action, handler) in actions {
        for oem in ["EID_674_Manager", "OemManager"] {
            let path = format!("{}/Actions/Oem/{oem}.{action}", redfish_client::oem::dell::MANAGER);
            routes.push(Route::post(exact(path), handler));
        }
    }
    routes.push(Route::get(exact(TASKS), |h, r| Reply::ok(h.scp_tasks(r.recorded(h)))));
    routes.push(Route::get(member(TASKS), |h, r| h.scp_task(r.id())).when(|h, r| h.scp_task_exists(r.path)));
    routes
}

/// The message a `NoReboot` import's job shows while it waits for a reboot: the text an
/// earlier revision of Dell's PowerShell import script compares the job's message with (the
/// Python scripts look for "No reboot Server" in it). Its MessageId is assumed.
const NO_REBOOT: &str =
    "No reboot Server Configuration Profile Import job scheduled, Waiting for System Reboot to complete the operation.";

/// The `Users.N.*` fields the emulated accounts have.
const ACCOUNT_FIELDS: [&str; 4] = ["UserName", "Password", "Enable", "Privilege"];

/// How an import gets the reboot its BIOS attributes need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shutdown {
    Graceful,
    Forced,
    NoReboot,
}

/// An SCP job's own state, beside its entry in the queue.
#[derive(Debug, Clone)]
pub(super) struct Task {
    kind: ScpKind,
    /// When its next step is due: the export written, the profile analysed.
    pub(super) due: Option<Instant>,
    format: Format,
    targets: Vec<String>,
    include_read_only: bool,
    /// An export's profile, once written.
    document: Option<String>,
    /// The profile to preview or import, or why it could not be read.
    profile: Result<ScpDocument, String>,
    shutdown: Shutdown,
    power_off_after: bool,
    caller: Caller,
    /// The task's messages: one result per attribute, then notes.
    messages: Vec<Value>,
    /// Staged for the next POST.
    staged: Staged,
    /// Waiting for a POST to apply what is staged.
    waiting_for_post: bool,
}

/// What an analysis found to change, and what it could not.
#[derive(Debug, Clone, Default)]
struct Staged {
    bios: Attributes,
    dell: BTreeMap<AttributeGroup, Attributes>,
    users: Vec<(String, AttributeValue)>,
    results: Vec<Value>,
    changes: usize,
    failures: usize,
}

impl Staged {
    fn is_empty(&self) -> bool {
        self.bios.is_empty() && self.dell.values().all(Attributes::is_empty) && self.users.is_empty()
    }
}

/// One attribute's result, as a task message (`ServerConfigurationProfileResults`).
fn result(name: &str, old: Option<&str>, new: &str, problem: Option<&Value>) -> Value {
    let (message, id) = match problem {
        Some(p) => (
            p["Message"]
                .as_str()
                .unwrap_or("The value cannot be applied.")
                .to_owned(),
            p["MessageId"].as_str().unwrap_or_default().to_owned(),
        ),
        None => (
            "Successfully Completed Request".to_owned(),
            format!("{}.Success", messages::BASE),
        ),
    };
    let mut dell = json!({
        "@odata.type": "#DellManager.v1_0_0.ServerConfigurationProfileResults",
        "DisplayValue": name,
        "ErrCode": if problem.is_some() { "1" } else { "0" },
        "Name": name,
        "NewValue": new,
        "Severity": if problem.is_some() { "Critical" } else { "OK" },
        "Status": if problem.is_some() { "Failure" } else { "Success" },
    });
    if let Some(old) = old {
        dell["OldValue"] = json!(old);
    }
    json!({
        "Message": message,
        "MessageArgs": [],
        "MessageArgs@odata.count": 0,
        "MessageId": id,
        "Oem": {"Dell": dell},
    })
}

/// A note of the task (`SYS087`, `SYS088`, ...).
fn note(code: &str, text: &str, args: &[&str]) -> Value {
    json!({
        "Message": text,
        "MessageArgs": args,
        "MessageArgs@odata.count": args.len(),
        "MessageId": format!("{}.{code}", messages::IDRAC),
    })
}

/// `Target` as a list of strings (Dell's scripts) or one comma-joined string (Ansible, sushy).
fn targets(body: &Value) -> Result<Vec<String>, Value> {
    let raw = body.pointer("/ShareParameters/Target");
    let list: Vec<String> = match raw {
        None => vec!["ALL".to_owned()],
        Some(Value::String(s)) => s.split(',').map(|t| t.trim().to_owned()).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .flat_map(|s| s.split(','))
            .map(|t| t.trim().to_owned())
            .collect(),
        Some(other) => {
            return Err(messages::action_parameter(
                "ShareParameters",
                "Target",
                Some(&other.to_string()),
                &SCP_TARGETS,
            ));
        }
    };
    for t in &list {
        if !SCP_TARGETS.iter().any(|k| k.eq_ignore_ascii_case(t)) {
            return Err(messages::action_parameter(
                "ShareParameters",
                "Target",
                Some(t),
                &SCP_TARGETS,
            ));
        }
    }
    Ok(list)
}

/// Whether the targets cover a component of `kind`.
fn covers(targets: &[String], kind: ComponentKind) -> bool {
    let named = |n: &str| {
        targets
            .iter()
            .any(|t| t.eq_ignore_ascii_case(n) || t.eq_ignore_ascii_case("ALL"))
    };
    match kind {
        ComponentKind::Bios => named("BIOS"),
        ComponentKind::Manager(AttributeGroup::Idrac) => named("IDRAC"),
        ComponentKind::Manager(AttributeGroup::System) => named("System"),
        ComponentKind::Manager(AttributeGroup::LifecycleController) => named("LifecycleController"),
        ComponentKind::Nic => named("NIC") || named("FC") || named("InfiniBand"),
        ComponentKind::Storage => named("RAID") || named("AHCI") || named("PCIeSSD"),
        ComponentKind::EventFilters => named("EventFilters"),
        ComponentKind::Other => named("SupportAssist") || named("ALL"),
    }
}

/// Only local buffers: a share of another type is not emulated.
fn local_only(action: &str, body: &Value) -> Result<(), Value> {
    match body.pointer("/ShareParameters/ShareType").and_then(Value::as_str) {
        None => Ok(()),
        Some(t) if t.eq_ignore_ascii_case("LOCAL") => Ok(()),
        Some(other) => Err(messages::action_parameter(
            action,
            "ShareParameters/ShareType",
            Some(other),
            &["LOCAL"],
        )),
    }
}

/// A string parameter, checked against its allowed values (case as given by the Manager).
fn choice<'a>(action: &str, body: &'a Value, name: &str, allowed: &[&'a str]) -> Result<Option<&'a str>, Value> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => allowed
            .iter()
            .find(|a| a.eq_ignore_ascii_case(s))
            .copied()
            .map(Some)
            .ok_or_else(|| messages::action_parameter(action, name, Some(s), allowed)),
        Some(other) => Err(messages::action_parameter(
            action,
            name,
            Some(&other.to_string()),
            allowed,
        )),
    }
}

/// `IncludeInExport` as a string (Ansible, sushy: comma-joined) or a list (Dell's scripts).
fn include_list(body: &Value) -> Vec<String> {
    match body.get("IncludeInExport") {
        Some(Value::String(s)) => s.split(',').map(|t| t.trim().to_owned()).collect(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// An SCP text value as the registry types the attribute.
fn typed(kind: AttributeType, text: &str) -> AttributeValue {
    match kind {
        AttributeType::Integer => text
            .trim()
            .parse::<i64>()
            .map_or_else(|_| AttributeValue::from(text), AttributeValue::from),
        AttributeType::Boolean if text.eq_ignore_ascii_case("true") => AttributeValue::Bool(true),
        AttributeType::Boolean if text.eq_ignore_ascii_case("false") => AttributeValue::Bool(false),
        _ => AttributeValue::from(text),
    }
}

/// A current value as SCP text.
fn text_of(v: &AttributeValue) -> String {
    value_text(&v.to_json())
}

impl Host {
    /// How long an export or a preview runs, and how long an import analyses: a tenth of a
    /// POST (real exports take tens of seconds; the proportion to POST is assumed).
    fn scp_step(&self) -> std::time::Duration {
        self.config.boot_time / 10
    }

    /// Queues an SCP job and its task; returns the `Location` reply.
    fn queue_scp(&self, s: &mut State, kind: ScpKind, task: Task, message: (&'static str, &'static str)) -> Reply {
        let id = self.new_scp_id(s);
        let now = SystemTime::now();
        s.jobs.insert(
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
        s.scp.insert(id.clone(), task);
        self.stats.count_job();
        Reply::with_body(202, None).header("Location", format!("{TASKS}/{id}"))
    }

    fn new_scp_id(&self, s: &mut State) -> String {
        s.job_seq += 1;
        format!("JID_{:06}{:06}", 100_000 + self.index % 900_000, s.job_seq)
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
            shutdown: Shutdown::Graceful,
            power_off_after: false,
            caller: caller.clone(),
            messages: Vec::new(),
            staged: Staged::default(),
            waiting_for_post: false,
        }
    }

    /// `…ExportSystemConfiguration` with a local share: `ExportFormat` (XML unless JSON),
    /// `ShareParameters.Target`, `IncludeInExport` (`IncludeReadOnly` adds the read-only
    /// attributes), `ExportUse` (accepted; what Clone and Replace leave out is not emulated).
    pub fn scp_export(&self, caller: &Caller, body: &Value) -> Reply {
        let action = "ExportSystemConfiguration";
        let checked = (|| {
            local_only(action, body)?;
            let format = match choice(action, body, "ExportFormat", &["XML", "JSON"])? {
                Some("JSON") => Format::Json,
                _ => Format::Xml,
            };
            choice(action, body, "ExportUse", &["Default", "Clone", "Replace"])?;
            let include = include_list(body);
            let allowed = [
                "Default",
                "IncludeReadOnly",
                "IncludePasswordHashValues",
                "IncludeCustomTelemetry",
            ];
            if let Some(bad) = include
                .iter()
                .find(|i| !allowed.iter().any(|a| a.eq_ignore_ascii_case(i)))
            {
                return Err(messages::action_parameter(
                    action,
                    "IncludeInExport",
                    Some(bad),
                    &allowed,
                ));
            }
            Ok((format, targets(body)?, include))
        })();
        let (format, targets, include) = match checked {
            Ok(c) => c,
            Err(problem) => return Reply::error(400, vec![problem]),
        };
        let mut s = self.change();
        let mut task = self.new_task(ScpKind::Export, caller);
        task.format = format;
        task.targets = targets;
        task.include_read_only = include.iter().any(|i| i.eq_ignore_ascii_case("IncludeReadOnly"));
        self.queue_scp(
            &mut s,
            ScpKind::Export,
            task,
            ("SYS057", "Exporting Server Configuration Profile."),
        )
    }

    /// The profile in `ImportBuffer`, read, or why not.
    fn buffer(action: &str, body: &Value) -> Result<Result<ScpDocument, String>, Value> {
        let Some(text) = body.get("ImportBuffer").and_then(Value::as_str) else {
            return Err(messages::action_parameter(
                action,
                "ImportBuffer",
                None,
                &["the profile, as XML or JSON text"],
            ));
        };
        if Format::of(text).is_none() {
            return Err(idrac(
                "SYS433",
                "Unable to upload the server configuration profile data because the file type used for the data file is not in the JSON or XML format.",
                &[],
                "Make sure that the file format used is of JSON or XML format, and then retry the operation.",
                Some("#/ImportBuffer"),
            ));
        }
        Ok(ScpDocument::parse(text).map(|(d, _)| d).map_err(|e| e.to_string()))
    }

    /// `…ImportSystemConfigurationPreview` of a local buffer (`ShareParameters.Target` ALL,
    /// the only value a real Manager lists for it).
    pub fn scp_preview(&self, caller: &Caller, body: &Value) -> Reply {
        let action = "ImportSystemConfigurationPreview";
        let checked = (|| {
            local_only(action, body)?;
            let t = targets(body)?;
            if t.iter().any(|t| !t.eq_ignore_ascii_case("ALL")) {
                return Err(messages::action_parameter(
                    action,
                    "ShareParameters/Target",
                    Some(&t.join(",")),
                    &["ALL"],
                ));
            }
            Self::buffer(action, body)
        })();
        let profile = match checked {
            Ok(p) => p,
            Err(problem) => return Reply::error(400, vec![problem]),
        };
        let mut s = self.change();
        let mut task = self.new_task(ScpKind::Preview, caller);
        task.profile = profile;
        self.queue_scp(
            &mut s,
            ScpKind::Preview,
            task,
            ("SYS192", "Previewing Server Configuration Profile."),
        )
    }

    /// `…ImportSystemConfiguration` of a local buffer: `ShareParameters.Target`,
    /// `ShutdownType` (Graceful by default), `HostPowerState` (On by default; Off powers the
    /// host off once the job is done). `TimeToWait` and `ExecutionMode` are accepted and not
    /// emulated, and so is Ansible's `EndHostPowerState`, which no Manager lists.
    pub fn scp_import(&self, caller: &Caller, body: &Value) -> Reply {
        let action = "ImportSystemConfiguration";
        let checked = (|| {
            local_only(action, body)?;
            let t = targets(body)?;
            let shutdown = match choice(action, body, "ShutdownType", &["Graceful", "Forced", "NoReboot"])? {
                Some("Forced") => Shutdown::Forced,
                Some("NoReboot") => Shutdown::NoReboot,
                _ => Shutdown::Graceful,
            };
            let off = choice(action, body, "HostPowerState", &["On", "Off"])? == Some("Off");
            choice(
                action,
                body,
                "ExecutionMode",
                &["Default", "DeployOnSledInsert", "InstantDeploy"],
            )?;
            Ok((t, shutdown, off, Self::buffer(action, body)?))
        })();
        let (targets, shutdown, off, profile) = match checked {
            Ok(c) => c,
            Err(problem) => return Reply::error(400, vec![problem]),
        };
        let mut s = self.change();
        if Self::lockdown(&s) {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let mut task = self.new_task(ScpKind::Import, caller);
        task.targets = targets;
        task.shutdown = shutdown;
        task.power_off_after = off;
        task.profile = profile;
        self.queue_scp(
            &mut s,
            ScpKind::Import,
            task,
            ("SYS191", "Importing Server Configuration Profile."),
        )
    }

    /// `GET TaskService/Tasks/<JID>`: 202 with the task while its job runs; an export's profile
    /// once it is written; else 200 with the task.
    pub fn scp_task(&self, id: &str) -> Reply {
        let s = self.now();
        let (Some(job), Some(task)) = (s.jobs.get(id), s.scp.get(id)) else {
            return Reply::error(404, vec![messages::not_found(&format!("{TASKS}/{id}"))]);
        };
        if let Some(doc) = &task.document {
            return match task.format {
                // As written: an export's attributes keep their order (Name, Value, ...).
                Format::Json => Reply::ok_text(
                    doc.clone().into(),
                    "application/json;odata.metadata=minimal;charset=utf-8",
                ),
                Format::Xml => Reply::ok_text(doc.clone().into(), "application/xml;charset=utf-8"),
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
        self.lock().scp.contains_key(id)
    }

    /// `GET TaskService/Tasks`: the SCP tasks, as links.
    pub fn scp_tasks(&self, doc: Option<&Value>) -> Value {
        let s = self.now();
        let members: Vec<Value> = s
            .scp
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

    /// The step of SCP job `id` due now: an export or a preview ends, an import is analysed.
    pub(super) fn scp_due(&self, s: &mut State, id: &str, at: Instant) {
        let Some(mut task) = s.scp.remove(id) else { return };
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
        s.scp.insert(id.to_owned(), task);
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
        if let Some(job) = s.jobs.get_mut(id) {
            job.state = state;
            job.message_id = code;
            job.message = text;
            job.percent = 100;
            job.actual_stop = Some(wall(at));
        }
    }

    fn set_job(s: &mut State, id: &str, state: JobState, code: &'static str, text: &'static str) {
        if let Some(job) = s.jobs.get_mut(id) {
            job.state = state;
            job.message_id = code;
            job.message = text;
        }
    }

    fn preview_now(&self, s: &mut State, id: &str, task: &mut Task, at: Instant) {
        let profile = match &task.profile {
            Ok(p) => p.clone(),
            Err(why) => {
                task.messages.push(note("SYS079", &format!("The Preview operation indicates the input file for Server Configuration Profile is not compliant with the configuration profile schema: {why}"), &[]));
                return self.finish_scp(s, id, JobState::Failed, "SYS079", "The Preview operation indicates the input file for Server Configuration Profile is not compliant with the configuration profile schema.", at);
            }
        };
        let staged = self.analyse(s, &profile, &task.targets);
        task.messages = staged.results.clone();
        if !staged.bios.is_empty() {
            task.messages.push(note(
                "SYS087",
                "A system reboot will occur when the previewed configuration XML file is imported to the system.",
                &[],
            ));
            let secs = self.config.boot_time.as_secs().max(1).to_string();
            task.messages.push(note(
                "SYS088",
                &format!("Estimated time for applying configuration changes is {secs} seconds."),
                &[&secs],
            ));
        }
        let (state, code, text) = match (staged.changes, staged.failures) {
            (0, 0) => (
                JobState::Completed,
                "SYS069",
                "No changes were applied since the current component configuration matched the requested configuration.",
            ),
            (0, _) => (
                JobState::Failed,
                "SYS080",
                "Preview of Server Configuration Profile import operation indicated that no configuration changes will be successful.",
            ),
            (_, 0) => (
                JobState::Completed,
                "SYS081",
                "Successfully previewed Server Configuration Profile import operation.",
            ),
            _ => (
                JobState::Completed,
                "SYS082",
                "Completed the preview of Server Configuration Profile import operation. Some changes specified in the configuration profile will not be successfully applied in an import operation.",
            ),
        };
        self.finish_scp(s, id, state, code, text, at);
    }

    fn import_now(&self, s: &mut State, id: &str, task: &mut Task, at: Instant) {
        let profile = match &task.profile {
            Ok(p) => p.clone(),
            Err(why) => {
                task.messages.push(note(
                    "SYS047",
                    &format!(
                        "Input file for import configuration is not compliant with the configuration schema: {why}"
                    ),
                    &[],
                ));
                return self.finish_scp(
                    s,
                    id,
                    JobState::Failed,
                    "SYS047",
                    "Input file for import configuration is not compliant with the configuration schema.",
                    at,
                );
            }
        };
        let busy = s.jobs.values().any(|j| {
            j.id != id
                && (j.is_open_bios()
                    || (j.kind == JobKind::Scp(ScpKind::Import)
                        && matches!(j.state, JobState::Running | JobState::Paused)))
        });
        if busy {
            return self.finish_scp(
                s,
                id,
                JobState::Failed,
                "SYS074",
                "Unable to apply configuration changes because another configuration job is in progress.",
                at,
            );
        }
        task.staged = self.analyse(s, &profile, &task.targets);
        task.messages = task.staged.results.clone();
        if task.staged.is_empty() {
            let (state, code, text) = if task.staged.failures == 0 {
                (
                    JobState::Completed,
                    "SYS069",
                    "No changes were applied since the current component configuration matched the requested configuration.",
                )
            } else {
                (
                    JobState::Failed,
                    "SYS067",
                    "Unable to complete application of configuration profile values.",
                )
            };
            return self.finish_scp(s, id, state, code, text, at);
        }
        if task.shutdown == Shutdown::NoReboot {
            // The whole job waits for a reboot, iDRAC attributes included (Dell's Ansible
            // documentation: the job pauses until the server is rebooted manually).
            task.waiting_for_post = true;
            Self::set_job(s, id, JobState::Paused, "SYS296", NO_REBOOT);
            return;
        }
        self.apply_manager(s, task);
        if task.staged.bios.is_empty() {
            task.messages.push(note(
                "SYS054",
                "No configuration changes requiring a system restart need to be applied.",
                &[],
            ));
            return self.end_import(s, id, task, at);
        }
        task.waiting_for_post = true;
        Self::set_job(
            s,
            id,
            JobState::Running,
            "SYS056",
            "Waiting for the system to shut down.",
        );
        if !s.on {
            self.start_boot(s, at);
        } else if task.shutdown == Shutdown::Forced {
            s.shutdown = None;
            self.start_boot(s, at);
        } else if self.config.graceful_os {
            s.shutdown = Some(super::Shutdown {
                at: at + self.config.boot_time.mul_f64(0.3),
                then_boot: true,
            });
        } else {
            // The OS did not shut down: nothing of the BIOS part is applied.
            task.waiting_for_post = false;
            task.staged.bios.clear();
            self.finish_scp(
                s,
                id,
                JobState::Failed,
                "SYS051",
                "The system could not be shut down within the specified time.",
                at,
            );
        }
    }

    /// The iDRAC, System and Lifecycle Controller attributes and the accounts, applied now.
    fn apply_manager(&self, s: &mut State, task: &mut Task) {
        for (group, attrs) in std::mem::take(&mut task.staged.dell) {
            let entry = s.dell.entry(group).or_default();
            entry.extend(attrs);
            if group == AttributeGroup::Idrac {
                s.view = None;
            }
        }
        let users = std::mem::take(&mut task.staged.users);
        if !users.is_empty()
            && let Err(problems) = self.patch_users_attributes(s, &task.caller, &users)
        {
            task.staged.failures += users.len();
            task.staged.changes = task.staged.changes.saturating_sub(users.len());
            for (key, value) in &users {
                let name = scp_name(key).unwrap_or_else(|| key.clone());
                task.messages
                    .push(result(&name, None, &text_of(value), problems.first()));
            }
        }
    }

    /// The end of an import: its state from what was applied and what failed.
    fn end_import(&self, s: &mut State, id: &str, task: &mut Task, at: Instant) {
        task.waiting_for_post = false;
        let (state, code, text) = match (task.staged.changes, task.staged.failures) {
            (_, 0) => (
                JobState::Completed,
                "SYS053",
                "Successfully imported and applied Server Configuration Profile.",
            ),
            (0, _) => (
                JobState::Failed,
                "SYS067",
                "Unable to complete application of configuration profile values.",
            ),
            _ => (
                JobState::CompletedWithErrors,
                "SYS055",
                "Import of Server Configuration Profile operation completed with errors.",
            ),
        };
        self.finish_scp(s, id, state, code, text, at);
        Self::lc_log_at(s, wall(at), "JCP037", &[id], "Configuration", Some(super::MANAGER));
    }

    /// Early in POST: an import waiting for it starts applying.
    pub(super) fn scp_post_starts(&self, s: &mut State, at: Instant) {
        let waiting: Vec<String> = s
            .scp
            .iter()
            .filter(|(_, t)| t.waiting_for_post)
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            if let Some(job) = s.jobs.get_mut(&id)
                && matches!(job.state, JobState::Running | JobState::Paused)
            {
                job.state = JobState::Running;
                job.message_id = "SYS058";
                job.message = "Applying configuration changes.";
                job.percent = 10;
                job.actual_start = Some(wall(at));
            }
        }
    }

    /// Later in POST: the running import applies its BIOS attributes (with every value the
    /// registry's presets force) and, after `NoReboot`, the rest.
    pub(super) fn scp_post_ends(&self, s: &mut State, at: Instant) {
        let running: Vec<String> = s
            .scp
            .iter()
            .filter(|(id, t)| t.waiting_for_post && s.jobs.get(*id).is_some_and(|j| j.message_id == "SYS058"))
            .map(|(id, _)| id.clone())
            .collect();
        for id in running {
            let Some(mut task) = s.scp.remove(&id) else { continue };
            if self.faults.job_fails {
                task.waiting_for_post = false;
                self.finish_scp(
                    s,
                    &id,
                    JobState::Failed,
                    "SYS067",
                    "Unable to complete application of configuration profile values.",
                    at,
                );
                s.scp.insert(id, task);
                continue;
            }
            self.apply_manager(s, &mut task);
            let bios = std::mem::take(&mut task.staged.bios);
            if !bios.is_empty() {
                let mut candidate = Self::known(s);
                candidate.extend(bios);
                let evaluation = self.evaluate(&candidate);
                for (name, value) in evaluation.values() {
                    s.inferred.remove(name);
                    s.bios.insert(name.clone(), value.clone());
                }
                s.view = None;
            }
            self.end_import(s, &id, &mut task, at);
            if task.power_off_after {
                s.on = false;
                s.boot = None;
            }
            s.scp.insert(id, task);
        }
    }

    /// What importing `profile` (the components `targets` cover) would change and what it
    /// could not, checked as the iDRAC checks a PATCH of the same values: iDRAC, System and
    /// Lifecycle Controller components first, then the BIOS, then the rest (which the emulator
    /// has no devices for).
    fn analyse(&self, s: &State, profile: &ScpDocument, targets: &[String]) -> Staged {
        let mut staged = Staged::default();
        let mut rest: Vec<&Component> = Vec::new();
        for c in &profile.components {
            match c.kind() {
                ComponentKind::Manager(g) if covers(targets, c.kind()) => {
                    for a in c.attributes.iter().filter(|a| a.set_on_import) {
                        self.check_manager(s, g, a, &mut staged);
                    }
                }
                ComponentKind::Manager(_) | ComponentKind::Bios => {}
                _ if covers(targets, c.kind()) => rest.push(c),
                _ => {}
            }
        }
        if let Some(bios) = profile
            .components
            .iter()
            .find(|c| c.fqdd == BIOS_FQDD && covers(targets, ComponentKind::Bios))
        {
            self.check_bios(s, &bios.attributes, &mut staged);
        }
        for c in rest {
            for (fqdd, a) in c.all_attributes().into_iter().filter(|(_, a)| a.set_on_import) {
                let problem = idrac(
                    "SYS076",
                    &format!("Invalid or unsupported component specified in the input configuration profile: {fqdd}."),
                    &[fqdd],
                    "Make sure the input configuration profile only specifies supported component.",
                    None,
                );
                staged.results.push(result(&a.name, None, &a.value, Some(&problem)));
                staged.failures += 1;
            }
        }
        staged
    }

    fn check_bios(&self, s: &State, attrs: &[ScpAttribute], staged: &mut Staged) {
        let registry = self.registry();
        let requested: Vec<(&ScpAttribute, Option<AttributeValue>)> = attrs
            .iter()
            .filter(|a| a.set_on_import)
            .map(|a| (a, registry.attribute(&a.name).map(|r| typed(r.kind, &a.value))))
            .collect();
        let mut candidate = Self::known(s);
        candidate.extend(s.pending.clone());
        for (a, v) in &requested {
            if let Some(v) = v {
                candidate.insert(a.name.clone(), v.clone());
            }
        }
        let evaluation = self.evaluate(&candidate);
        for (a, value) in requested {
            let current = s.bios.get(&a.name).map(text_of);
            let problem = match (registry.attribute(&a.name), &value) {
                (Some(attr), Some(v)) => match attr.check(v) {
                    Err(p) => value_problem(&a.name, v, &p).into_iter().next(),
                    Ok(()) if current.as_deref() == Some(a.value.as_str()) => {
                        // Already so: nothing to do and nothing reported.
                        continue;
                    }
                    Ok(()) if evaluation.is_hidden(&a.name) => hidden(&a.name).into_iter().next(),
                    Ok(()) if evaluation.is_read_only(&a.name) => read_only(&a.name).into_iter().next(),
                    Ok(()) => evaluation.allowed(&a.name).and_then(|allowed| {
                        (!allowed.values.iter().any(|x| Some(x.as_str()) == v.as_str()))
                            .then(|| not_allowed_now(&a.name, v, allowed).into_iter().next())
                            .flatten()
                    }),
                },
                _ => unknown_attribute(&a.name).into_iter().next(),
            };
            staged
                .results
                .push(result(&a.name, current.as_deref(), &a.value, problem.as_ref()));
            match (problem, value) {
                (None, Some(v)) => {
                    staged.bios.insert(a.name.clone(), v);
                    staged.changes += 1;
                }
                _ => staged.failures += 1,
            }
        }
    }

    fn check_manager(&self, s: &State, group: AttributeGroup, a: &ScpAttribute, staged: &mut Staged) {
        let Some(name) = attribute_name(&a.name) else {
            let problem = unknown_attribute(&a.name).into_iter().next();
            staged.results.push(result(&a.name, None, &a.value, problem.as_ref()));
            staged.failures += 1;
            return;
        };
        let mut current_values = s.dell.get(&group).cloned().unwrap_or_default();
        if group == AttributeGroup::Idrac {
            Self::users_attributes(s, &mut current_values);
        }
        let current = current_values.get(&name).map(text_of);
        if current.as_deref() == Some(a.value.as_str()) {
            return;
        }
        let account_field = super::accounts::users_key(&name).map(|(_, f)| f);
        if group == AttributeGroup::Idrac && account_field.is_some_and(|f| !ACCOUNT_FIELDS.contains(&f)) {
            // The emulated accounts have these four fields and no others.
            let problem = unknown_attribute(&name).into_iter().next();
            staged
                .results
                .push(result(&a.name, current.as_deref(), &a.value, problem.as_ref()));
            staged.failures += 1;
            return;
        }
        if group == AttributeGroup::Idrac && account_field.is_some() {
            // Checked when applied, with the account rules.
            staged.users.push((name, AttributeValue::from(a.value.as_str())));
            staged.results.push(result(&a.name, current.as_deref(), &a.value, None));
            staged.changes += 1;
            return;
        }
        let registry: Option<&AttributeRegistry> = self.fixture.manager_registry.as_ref();
        let evaluator = registry.map(DependencyEvaluator::new);
        let entry = evaluator.as_ref().and_then(|e| e.attribute(&name));
        let (value, problem) = match (entry, registry) {
            (None, Some(_)) => (None, unknown_attribute(&name).into_iter().next()),
            (None, None) if current.is_none() => (None, unknown_attribute(&name).into_iter().next()),
            (None, None) => (Some(AttributeValue::from(a.value.as_str())), None),
            (Some(attr), _) => {
                // Enumerations are shown by their display strings; a ValueName is taken too.
                let shown = attr
                    .values
                    .iter()
                    .find(|v| v.value_name == a.value || v.value_display_name.as_deref() == Some(a.value.as_str()))
                    .map(|v| v.value_display_name.clone().unwrap_or_else(|| v.value_name.clone()));
                let v = match shown {
                    Some(display) => AttributeValue::from(display),
                    None => typed(attr.kind, &a.value),
                };
                let by_display = attr.kind == AttributeType::Enumeration
                    && v.as_str()
                        .is_some_and(|t| attr.values.iter().any(|x| x.value_display_name.as_deref() == Some(t)));
                let checked = if by_display { Ok(()) } else { attr.check(&v) };
                match checked {
                    Err(p) => (None, value_problem(&name, &v, &p).into_iter().next()),
                    Ok(()) if attr.is_read_only() => (None, read_only(&name).into_iter().next()),
                    Ok(()) => (Some(v), None),
                }
            }
        };
        staged
            .results
            .push(result(&a.name, current.as_deref(), &a.value, problem.as_ref()));
        match value {
            Some(v) if problem.is_none() => {
                staged.dell.entry(group).or_default().insert(name, v);
                staged.changes += 1;
            }
            _ => staged.failures += 1,
        }
    }

    /// The export's profile, from the current values of the components its targets cover.
    fn export_text(&self, s: &mut State, task: &Task) -> String {
        let selective = !task.targets.iter().any(|t| t.eq_ignore_ascii_case("ALL"));
        let mut kind = String::from("Normal");
        if task.include_read_only {
            kind.push_str(",RO");
        }
        kind.push(',');
        kind.push_str(task.format.as_str());
        if selective {
            kind.push_str(",Selective");
        }
        let mut doc = ScpDocument {
            model: Some(self.fixture.model.clone()),
            service_tag: Some(self.service_tag.clone()),
            timestamp: Some(clock::asctime(SystemTime::now())),
            comments: vec![
                format!("Export type is {kind}"),
                "Exported configuration may contain commented attributes: an import skips them.".to_owned(),
            ],
            components: Vec::new(),
        };
        for (label, kind) in [("NIC", ComponentKind::Nic), ("RAID", ComponentKind::Storage)] {
            if covers(&task.targets, kind) {
                doc.comments.push(format!(
                    "Exported configuration does not contain {label} data as the presence of the appropriate cards could not be detected!"
                ));
            }
        }
        for group in [
            AttributeGroup::LifecycleController,
            AttributeGroup::System,
            AttributeGroup::Idrac,
        ] {
            if covers(&task.targets, ComponentKind::Manager(group)) {
                doc.components
                    .push(self.manager_component(s, group, task.include_read_only));
            }
        }
        if covers(&task.targets, ComponentKind::Bios) {
            doc.components.push(self.bios_component(s, task.include_read_only));
        }
        doc.to_text(task.format)
    }

    /// The BIOS component: every attribute the current values leave visible; those they make
    /// read-only are written but skipped on import, passwords masked, and attributes the
    /// registry always makes read-only left out unless `read_only` (IncludeReadOnly).
    fn bios_component(&self, s: &mut State, include_read_only: bool) -> Component {
        self.view(s);
        let registry = self.registry();
        let ruled: std::collections::BTreeSet<&str> = registry
            .registry_entries
            .dependencies
            .iter()
            .map(|d| d.dependency_for.as_str())
            .collect();
        let view = s.view.as_ref();
        let mut attributes = Vec::new();
        for (name, value) in &s.bios {
            let Some(attr) = registry.attribute(name) else { continue };
            if view.is_some_and(|v| v.hidden.contains(name)) {
                continue;
            }
            let static_read_only = attr.is_read_only() && !ruled.contains(name.as_str());
            if static_read_only && !include_read_only {
                continue;
            }
            let read_only_now = static_read_only || view.is_some_and(|v| v.read_only.contains(name));
            let password = attr.kind == AttributeType::Password;
            attributes.push(ScpAttribute {
                name: name.clone(),
                value: if password { "******".to_owned() } else { text_of(value) },
                set_on_import: !read_only_now && !password,
                comment: Some(
                    if static_read_only {
                        "Read Only"
                    } else {
                        "Read and Write"
                    }
                    .to_owned(),
                ),
            });
        }
        Component {
            fqdd: BIOS_FQDD.to_owned(),
            attributes,
            components: Vec::new(),
        }
    }

    /// A `DellAttributes` group as its component (`Group.N#Attr` names): passwords masked and
    /// skipped on import, read-only attributes only with `read_only` (IncludeReadOnly), and the
    /// addresses and names that make the host itself skipped on import ("preserving server
    /// identity", as real exports do with `IPv4Static.1#Address` and `NIC.1#DNSRacName`).
    fn manager_component(&self, s: &State, group: AttributeGroup, include_read_only: bool) -> Component {
        let mut values = s.dell.get(&group).cloned().unwrap_or_default();
        if group == AttributeGroup::Idrac {
            Self::users_attributes(s, &mut values);
        }
        let registry = self.fixture.manager_registry.as_ref();
        let mut attributes = Vec::new();
        for (name, value) in &values {
            let Some(scp) = scp_name(name) else { continue };
            let entry = registry.and_then(|r| r.attribute(name));
            let read_only = entry.is_some_and(|e| e.is_read_only());
            if read_only && !include_read_only {
                continue;
            }
            let password = entry.is_some_and(|e| e.kind == AttributeType::Password) || name.ends_with(".Password");
            let field = name.rsplit('.').next().unwrap_or_default();
            let identity = matches!(field, "Address" | "DNSRacName" | "HostName" | "MACAddress");
            attributes.push(ScpAttribute {
                name: scp,
                value: if password { "******".to_owned() } else { text_of(value) },
                set_on_import: !read_only && !password && !identity,
                comment: Some(if read_only { "Read Only" } else { "Read and Write" }.to_owned()),
            });
        }
        Component {
            fqdd: group.resource_id().to_owned(),
            attributes,
            components: Vec::new(),
        }
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
    let mut dell = job.dell_json(super::jobs::DMTF_JOBS);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_come_as_a_list_or_a_comma_joined_string_and_are_checked() {
        assert_eq!(
            targets(&json!({"ShareParameters": {"Target": ["IDRAC,BIOS"]}})).unwrap(),
            ["IDRAC", "BIOS"]
        );
        assert_eq!(
            targets(&json!({"ShareParameters": {"Target": "IDRAC, BIOS"}})).unwrap(),
            ["IDRAC", "BIOS"]
        );
        assert_eq!(targets(&json!({})).unwrap(), ["ALL"]);
        assert!(targets(&json!({"ShareParameters": {"Target": "Everything"}})).is_err());
        let t = vec!["BIOS".to_owned()];
        assert!(covers(&t, ComponentKind::Bios));
        assert!(!covers(&t, ComponentKind::Manager(AttributeGroup::Idrac)));
        assert!(covers(&["ALL".to_owned()], ComponentKind::Nic));
    }

    #[test]
    fn scp_values_take_the_registry_type() {
        assert_eq!(typed(AttributeType::Integer, "42"), AttributeValue::from(42));
        assert_eq!(typed(AttributeType::Integer, "x"), AttributeValue::from("x"));
        assert_eq!(typed(AttributeType::Enumeration, "1"), AttributeValue::from("1"));
        assert_eq!(typed(AttributeType::Boolean, "True"), AttributeValue::Bool(true));
    }
}
