//! Previewing and importing an SCP. A preview asks the iDRAC what it would change
//! (`…ImportSystemConfigurationPreview`) and reports, per component, each attribute's result
//! and the iDRAC's notes. An import is a writer like any other (`crate::write`): the host's
//! lock, refused under System Lockdown and on pending work (unless `--replace-pending`), the
//! reboot slot taken before anything is written when the import will reboot, a snapshot, the
//! hooks around the reboot, every step in the audit log. The import itself runs with
//! `ShutdownType: NoReboot`, so the iDRAC never reboots the host on its own: rftune reboots it
//! in its slot by the run's policy, waits for the job and for the host, and reports each
//! component's result. An import that applied only part of the profile is an error listing
//! what failed.

use super::{ComponentKind, ScpDocument, ScpFile};
use crate::audit::Step;
use crate::backend::{AttributeGroup, JobKind};
use crate::cache::RegistryCache;
use crate::connect::Bmc;
use crate::control::RebootPolicy;
use crate::error::{HostError, HostErrorKind, Result};
use crate::lifecycle::Operation;
use crate::observe::{Event, Observer, Phase};
use crate::read::HostState;
use crate::snapshot::Snapshot;
use crate::wait::{Look, watch};
use crate::write::{Own, Pending, Writer, Writes};
use redfish_client::oem::dell::JobState;
use redfish_client::oem::dell::scp::task::ScpTask;
use redfish_client::oem::dell::scp::{self as dell_scp, Polled};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// One attribute's result, as the iDRAC gave it.
#[derive(Debug, Clone, Serialize)]
pub struct AttributeResult {
    /// The SCP name.
    pub name: String,
    /// The value before, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The value asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
    /// Whether it was (or would be) set.
    pub ok: bool,
    /// The iDRAC's status and message.
    pub status: String,
    /// The message's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One component's results.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentResult {
    /// The FQDD (as the profile holds the attribute; `unknown` for a result the profile does
    /// not name).
    pub fqdd: String,
    /// What it configures (`BIOS`, `iDRAC`, `NIC`, ...).
    pub kind: &'static str,
    /// Attributes set (or that a preview says would be).
    pub applied: usize,
    /// Attributes that failed (or would).
    pub failed: usize,
    /// Each result.
    pub attributes: Vec<AttributeResult>,
}

/// What the task says, grouped by component.
#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    /// The job.
    pub job: String,
    /// Its final state.
    pub state: String,
    /// Its MessageId's code (`SYS053`, `SYS081`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Its message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The results, per component in the profile's order.
    pub components: Vec<ComponentResult>,
    /// The iDRAC's notes (`SYS087 A system reboot will occur …`).
    pub notes: Vec<String>,
}

impl TaskReport {
    /// The attributes that failed, as `FQDD Name = value (message)`.
    pub fn failures(&self) -> Vec<String> {
        self.components
            .iter()
            .flat_map(|c| {
                c.attributes.iter().filter(|a| !a.ok).map(move |a| {
                    format!(
                        "{} {} = {} ({})",
                        c.fqdd,
                        a.name,
                        a.new.as_deref().unwrap_or("?"),
                        a.message.as_deref().unwrap_or(&a.status)
                    )
                })
            })
            .collect()
    }
}

/// Groups the task's results by the component of `doc` that names each attribute.
fn report(job: &str, task: &ScpTask, doc: &ScpDocument) -> TaskReport {
    let mut owner: BTreeMap<&str, (&str, ComponentKind)> = BTreeMap::new();
    for c in &doc.components {
        for (fqdd, a) in c.all_attributes() {
            owner.entry(a.name.as_str()).or_insert((fqdd, c.kind()));
        }
    }
    let order: Vec<&str> = doc.components.iter().map(|c| c.fqdd.as_str()).collect();
    let mut by: BTreeMap<String, ComponentResult> = BTreeMap::new();
    for (message, r) in task
        .messages
        .iter()
        .filter_map(|m| Some((m, m.oem.as_ref()?.dell.as_ref()?)))
    {
        let name = r.name.clone().unwrap_or_default();
        let (fqdd, kind) = owner
            .get(name.as_str())
            .map_or(("unknown", ComponentKind::Other), |(f, k)| (*f, *k));
        let entry = by.entry(fqdd.to_owned()).or_insert_with(|| ComponentResult {
            fqdd: fqdd.to_owned(),
            kind: kind.label(),
            applied: 0,
            failed: 0,
            attributes: Vec::new(),
        });
        let ok = r.succeeded();
        if ok {
            entry.applied += 1;
        } else {
            entry.failed += 1;
        }
        entry.attributes.push(AttributeResult {
            name,
            old: r.old_value.clone(),
            new: r.new_value.clone(),
            ok,
            status: r.status.clone().unwrap_or_default(),
            message: message.message.clone(),
        });
    }
    let mut components: Vec<ComponentResult> = Vec::new();
    for fqdd in order {
        if let Some(c) = by.remove(fqdd) {
            components.push(c);
        }
    }
    // Nested components and results the profile does not name, after.
    components.extend(by.into_values());
    TaskReport {
        job: job.to_owned(),
        state: task.job_state().map_or_else(|| "Unknown".to_owned(), |s| s.to_string()),
        message_id: task.message_code().map(str::to_owned),
        message: task.message().map(str::to_owned),
        components,
        notes: task
            .notes()
            .filter(|(code, _)| *code != task.message_code())
            .map(|(code, text)| format!("{} {text}", code.unwrap_or("")).trim().to_owned())
            .collect(),
    }
}

/// Polls the task until its job reaches a state in `until` (or ends), within `timeout`.
async fn wait_task(
    bmc: &Bmc,
    task: &str,
    job: &str,
    until: &[JobState],
    timeout: Duration,
    observer: &dyn Observer,
) -> Result<ScpTask> {
    let looked = watch(timeout, || async {
        match dell_scp::poll(&bmc.client, task).await {
            Ok(Polled::Task(t)) => {
                let state = t.job_state();
                observer.event(&Event::phase(
                    &bmc.name,
                    Phase::Job {
                        id: job.to_owned(),
                        state: state.map_or_else(|| "Running".to_owned(), |s| s.to_string()),
                        percent: u32::from(t.percent_complete.unwrap_or(0)),
                    },
                ));
                let ended = matches!(
                    state,
                    Some(JobState::Completed | JobState::CompletedWithErrors | JobState::Failed)
                );
                if ended || state.is_some_and(|s| until.contains(&s)) {
                    Look::Done(Ok(*t))
                } else {
                    Look::NotYet(t.percent_complete)
                }
            }
            Ok(Polled::Profile(_)) => Look::Done(Err(crate::Error::from(HostError::new(
                &bmc.name,
                HostErrorKind::Redfish,
                format!("task {job} answered a profile, not the task of a preview or import"),
            )))),
            // The iDRAC may be briefly unavailable while the host reboots; keep asking.
            Err(e) => Look::Unreadable(e.to_string()),
        }
    })
    .await;
    looked.unwrap_or_else(|last| {
        let why = last.map(|e| format!(" (last error: {e})")).unwrap_or_default();
        Err(HostError::new(
            &bmc.name,
            HostErrorKind::Timeout,
            format!("job {job} did not get there within {timeout:?}{why}"),
        )
        .into())
    })
}

/// The action's target, or the error saying this iDRAC has none.
async fn action(bmc: &Bmc, which: fn(&dell_scp::Actions) -> Option<&String>, name: &str) -> Result<String> {
    let actions = super::manager_actions(bmc).await?;
    which(&actions).cloned().ok_or_else(|| {
        HostError::new(
            &bmc.name,
            HostErrorKind::Unsupported,
            format!("this iDRAC lists no {name} action (iDRAC 9 firmware 3.30 or later has it)"),
        )
        .into()
    })
}

/// The result of a preview on one host.
pub type Previewed = TaskReport;

/// Previewing as a fleet [`Operation`]: read-only for the host's settings (the iDRAC runs a
/// preview job).
#[derive(Debug, Clone)]
pub struct Preview {
    /// The profile.
    pub file: Arc<ScpFile>,
    /// How long the preview may take.
    pub timeout: Duration,
}

impl Operation for Preview {
    type Output = Previewed;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Previewed> {
        let target = action(bmc, |a| a.preview.as_ref(), "ImportSystemConfigurationPreview").await?;
        let share = super::share_target(bmc, &["ALL".to_owned()])?;
        let body = json!({"ImportBuffer": self.file.text, "ShareParameters": {"Target": share}});
        let task = dell_scp::start(&bmc.client, &target, &body)
            .await
            .map_err(|e| bmc.explain(e, "starting the configuration preview"))?;
        let job = task.rsplit('/').next().unwrap_or(&task).to_owned();
        let done = wait_task(bmc, &task, &job, &[], self.timeout, observer).await?;
        Ok(report(&job, &done, &self.file.document))
    }
}

/// What an import shares across its hosts: the profile and its targets, the registry cache,
/// and the writes (options, audit log, state directory, reboot slots, hooks).
#[derive(Debug)]
pub struct ImportRun {
    /// The profile.
    pub file: Arc<ScpFile>,
    /// `ShareParameters.Target`.
    pub targets: Vec<String>,
    /// Registry cache (the snapshot reads the host's state with its registry).
    pub cache: RegistryCache,
    /// How its hosts are written to.
    pub writes: Writes,
}

impl ImportRun {
    /// An import of `file` with `writes` (reboot policy, timeouts, pending work, hooks, the
    /// lock), its hosts' registries cached in `cache`.
    pub fn new(file: ScpFile, targets: Vec<String>, cache: RegistryCache, writes: Writes) -> Self {
        let writes = writes.labelled(file.name.clone());
        Self {
            file: Arc::new(file),
            targets,
            cache,
            writes,
        }
    }
}

/// How one host's import ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportOutcome {
    /// Nothing to change (SYS069).
    InSync,
    /// Imported (rebooted where the BIOS part needed it).
    Imported,
    /// The job waits for the host's next reboot (`--reboot none`).
    NotConverged,
}

/// One host's import.
#[derive(Debug, Clone, Serialize)]
pub struct HostImport {
    /// How it ended.
    pub outcome: ImportOutcome,
    /// Service tag.
    pub service_tag: Option<String>,
    /// The snapshot taken before the import.
    pub snapshot: Option<std::path::PathBuf>,
    /// Pending work discarded (`--replace-pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// What the iDRAC reported.
    pub report: TaskReport,
    /// The hooks that ran around its reboot, `before-reboot: ok` (only when hooks are set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// A sentence for people.
    pub summary: String,
}

/// Importing as a fleet [`Operation`]: the import under the host's lock, and the hooks after
/// its reboot.
impl Operation for ImportRun {
    type Output = HostImport;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<HostImport> {
        let w = self.writes.begin(bmc, observer).await?;
        let done = import_host(self, &w).await;
        let ok = done.as_ref().is_ok_and(|d| d.outcome != ImportOutcome::NotConverged);
        let why = done.as_ref().map_or_else(|_| String::new(), |d| d.summary.clone());
        w.after_reboot(&done, ok, &why).await?;
        let mut done = done?;
        done.hooks = w.hooks_ran();
        Ok(done)
    }
}

/// Whether importing `doc` needs a reboot on this host: a BIOS value that differs from the
/// current one, or settings for devices (NIC, RAID, ...), which the iDRAC applies in POST.
fn needs_reboot(doc: &ScpDocument, targets: &[String], bios: &redfish_client::resources::bios::Attributes) -> bool {
    let all = targets.iter().any(|t| t == "ALL");
    let wants = |t: &str| all || targets.iter().any(|x| x == t);
    doc.components.iter().any(|c| match c.kind() {
        ComponentKind::Bios => {
            wants("BIOS")
                && c.attributes.iter().filter(|a| a.set_on_import).any(|a| {
                    bios.get(&a.name)
                        .is_none_or(|v| redfish_client::oem::dell::scp::value_text(&v.to_json()) != a.value)
                })
        }
        ComponentKind::Nic | ComponentKind::Storage => {
            (wants("NIC") || wants("RAID") || wants("FC") || wants("AHCI") || wants("PCIeSSD") || wants("InfiniBand"))
                && c.all_attributes().iter().any(|(_, a)| a.set_on_import)
        }
        _ => false,
    })
}

/// One host's import, step by step, under its writer.
struct Importing<'a> {
    run: &'a ImportRun,
    w: &'a Writer<'a>,
}

/// A started import: its task and job.
struct Started {
    task: String,
    job: String,
}

/// Imports the run's profile on the host of `w`: read → refusals and pending work → reboot
/// slot → snapshot → start (no reboot by the iDRAC) → the analysis → the reboot it pauses for
/// (hooks, reset, job, host back) → the task's report.
pub async fn import_host(run: &ImportRun, w: &Writer<'_>) -> Result<HostImport> {
    let host = Importing { run, w };
    let state = host.read().await?;
    w.set_service_tag(state.service_tag.as_deref());
    let replaced = host.pending(&state).await?;
    let slot = host.slot(&state).await?;
    let snapshot = Some(host.snapshot(&state)?);
    let started = host.start().await?;
    let opts = w.options();
    let analysed = wait_task(
        w.bmc,
        &started.task,
        &started.job,
        &[JobState::Paused],
        opts.job_timeout,
        w.observer,
    )
    .await?;
    let mut out = HostImport {
        outcome: ImportOutcome::Imported,
        service_tag: state.service_tag.clone(),
        snapshot,
        replaced,
        rebooted: false,
        report: report(&started.job, &analysed, &run.file.document),
        hooks: Vec::new(),
        summary: String::new(),
    };
    let done = if analysed.job_state() == Some(JobState::Paused) {
        if opts.reboot == RebootPolicy::None {
            out.outcome = ImportOutcome::NotConverged;
            out.summary = format!("import job {} waits, paused, for the host's next reboot", started.job);
            w.audit(Step::Reboot, Value::Null, "skipped", json!(out.summary))?;
            return Ok(out);
        }
        host.reboot(&started, slot).await?;
        out.rebooted = true;
        wait_task(w.bmc, &started.task, &started.job, &[], opts.job_timeout, w.observer).await?
    } else {
        analysed
    };
    host.finish(&started, &done, out)
}

impl Importing<'_> {
    /// Reads the host (every iDRAC group, the job queue): the refusals and the snapshot need
    /// it; refuses a locked-down host and a backend rftune does not write to.
    async fn read(&self) -> Result<HostState> {
        let w = self.w;
        w.phase(Phase::Reading);
        let groups = AttributeGroup::ALL.into_iter().collect();
        let state = crate::read::read_state(w.bmc, &self.run.cache, &groups, true).await?;
        w.writable().await?;
        w.refuse_lockdown(state.lockdown)?;
        Ok(state)
    }

    /// Pending work, by every writer's rule: open BIOS jobs and configuration-profile imports
    /// count; refused, or deleted with `--replace-pending`.
    async fn pending(&self, state: &HostState) -> Result<Option<String>> {
        let open = state
            .jobs
            .iter()
            .filter(|j| j.is_open_bios_job() || (j.kind == JobKind::ConfigurationImport && j.holds_queue()))
            .cloned()
            .collect();
        let pending = Pending {
            values: state.pending.clone(),
            jobs: open,
            ours: false,
            bios: None,
        };
        self.w.settle(&pending, Own::Refuse, "an import").await
    }

    /// The reboot slot, taken before anything is written when the import will reboot.
    async fn slot(&self, state: &HostState) -> Result<Option<tokio::sync::OwnedSemaphorePermit>> {
        if needs_reboot(&self.run.file.document, &self.run.targets, &state.bios) {
            self.w.slot().await
        } else {
            Ok(None)
        }
    }

    /// Every current value, saved before the import.
    fn snapshot(&self, state: &HostState) -> Result<std::path::PathBuf> {
        let w = self.w;
        let reason = format!("before scp import of {}", self.run.file.name);
        w.snapshot(&Snapshot::of(w.name(), &w.bmc.url, state, reason))
    }

    /// Starts the import, telling the iDRAC never to reboot on its own (rftune does, in its
    /// slot); the buffer may hold secrets, so the log records what was sent, not the text.
    async fn start(&self) -> Result<Started> {
        let (w, run) = (self.w, self.run);
        w.check("importing")?;
        let target = action(w.bmc, |a| a.import.as_ref(), "ImportSystemConfiguration").await?;
        let share = super::share_target(w.bmc, &run.targets)?;
        let body = json!({
            "ImportBuffer": run.file.text,
            "ShareParameters": {"Target": share},
            "ShutdownType": "NoReboot",
            "HostPowerState": "On",
        });
        let request = json!({
            "file": run.file.name,
            "sha256": format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(run.file.text.as_bytes())),
            "bytes": run.file.text.len(),
            "target": run.targets.join(","),
            "shutdown_type": "NoReboot",
        });
        let task = match dell_scp::start(&w.bmc.client, &target, &body).await {
            Ok(t) => t,
            Err(e) => {
                let e = w.bmc.explain(e, "starting the configuration import");
                w.audit(Step::ScpImport, request, "error", json!(crate::error::report(&e)))?;
                return Err(e);
            }
        };
        let job = task.rsplit('/').next().unwrap_or(&task).to_owned();
        w.audit(Step::ScpImport, request, "ok", json!({"job": job}))?;
        Ok(Started { task, job })
    }

    /// The reboot a paused import waits for: a NoReboot job pauses for a reboot whatever it
    /// changes (Dell's Ansible documentation: it waits until the server is rebooted), iDRAC
    /// attributes alone included, so such an import takes its slot now if it had none. Then the
    /// before-reboot hook (a failing one deletes the import job unless `--keep-staged`), the
    /// reset, the job's end (a failed job is reported from its task afterwards) and the host.
    async fn reboot(&self, started: &Started, slot: Option<tokio::sync::OwnedSemaphorePermit>) -> Result<()> {
        let w = self.w;
        let _slot = match slot {
            Some(s) => s,
            None => {
                w.take_slot("while waiting for a reboot slot; the paused import job waits for the host's next reboot")
                    .await?
            }
        };
        let left = format!(
            "import job {} stays paused and applies at its next reboot (--keep-staged)",
            started.job
        );
        let undo = || async {
            let deleted = match w.bmc.backend().jobs() {
                Some(queue) => queue.delete(&w.bmc.client, &started.job).await.map(drop),
                None => Ok(()),
            };
            match deleted {
                Ok(()) => {
                    let _ = w.audit(Step::Unstage, json!({"job": started.job}), "ok", Value::Null);
                    format!("its import job {} was deleted", started.job)
                }
                Err(e) => {
                    let e = w.bmc.explain(e, "deleting the import job");
                    let _ = w.audit(
                        Step::Unstage,
                        json!({"job": started.job}),
                        "error",
                        json!(crate::error::report(&e)),
                    );
                    format!(
                        "deleting its import job failed too ({}): it stays paused with job {}; delete it with `rftune jobs delete`",
                        crate::error::report(&e),
                        started.job
                    )
                }
            }
        };
        w.before_reboot(undo, &left).await?;
        w.check("rebooting")?;
        w.reset(None).await?;
        match w.wait_for_job(&started.job).await {
            // A failed job is reported from its task, with what failed.
            Err(crate::Error::Host(h)) if h.kind == HostErrorKind::JobFailed => {}
            other => {
                other?;
            }
        }
        w.wait_back().await.map(drop)
    }

    /// The task's report: an import that applied only part of the profile is an error listing
    /// what failed; else imported (or in sync: nothing to change).
    fn finish(&self, started: &Started, done: &ScpTask, mut out: HostImport) -> Result<HostImport> {
        let (w, run) = (self.w, self.run);
        let report = report(&started.job, done, &run.file.document);
        let failures = report.failures();
        let state_name = report.state.clone();
        let detail =
            json!({"job": started.job, "state": state_name, "message_id": report.message_id, "failed": failures.len()});
        let ok = done.job_state() == Some(JobState::Completed) && failures.is_empty();
        w.audit(Step::Job, Value::Null, if ok { "ok" } else { "error" }, detail)?;
        if !ok {
            let what = if failures.is_empty() {
                report.message.clone().unwrap_or_default()
            } else {
                failures.join("\n  ")
            };
            let message = format!(
                "the import of {} ended {state_name}{}; what failed:\n  {what}",
                run.file.name,
                report
                    .message_id
                    .as_deref()
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default()
            );
            return Err(HostError::new(w.name(), HostErrorKind::JobFailed, message).into());
        }
        let applied: usize = report.components.iter().map(|c| c.applied).sum();
        if report.message_id.as_deref() == Some("SYS069") || applied == 0 {
            out.outcome = ImportOutcome::InSync;
            out.summary = "nothing to change, no reboot".to_owned();
        } else {
            let rebooted_text = if out.rebooted { ", rebooted once" } else { "" };
            out.outcome = ImportOutcome::Imported;
            out.summary = format!(
                "imported {applied} attribute(s) in {} component(s){rebooted_text}",
                report.components.len()
            );
        }
        w.audit(Step::Done, Value::Null, "ok", json!(out.summary))?;
        out.report = report;
        Ok(out)
    }
}
