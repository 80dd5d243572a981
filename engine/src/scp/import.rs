//! Previewing and importing an SCP. A preview asks the iDRAC what it would change
//! (`…ImportSystemConfigurationPreview`) and reports, per component, each attribute's result
//! and the iDRAC's notes. An import follows apply's rules: refused under System Lockdown and
//! on pending work (unless `--replace-pending`, apply's deletion), the reboot slot taken before
//! anything is written when the import will reboot, a snapshot, every step in the audit log.
//! The import itself runs with `ShutdownType: NoReboot`, so the iDRAC never reboots the host
//! on its own: rftune reboots it in its slot with apply's reboot policy, waits for the job and
//! for the host, and reports each component's result. An import that applied only part of the
//! profile is an error listing what failed.

use super::{ComponentKind, ScpDocument, ScpFile};
use crate::audit::Step;
use crate::connect::Bmc;
use crate::control::{self, RebootPolicy};
use crate::converge::{ApplyOptions, ApplyRun};
use crate::error::{HostError, HostErrorKind, Result};
use crate::interrupt;
use crate::lifecycle::Operation;
use crate::observe::{Event, Observer, Phase};
use crate::snapshot::Snapshot;
use redfish_client::oem::dell::scp::task::ScpTask;
use redfish_client::oem::dell::scp::{self as dell_scp, Polled};
use redfish_client::oem::dell::{AttributeGroup, JobState};
use redfish_client::resources::computer_system::ResetType;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    let deadline = Instant::now() + timeout;
    let mut wait = Duration::from_millis(100);
    let mut last_error = None;
    loop {
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
                    return Ok(*t);
                }
            }
            Ok(Polled::Profile(_)) => {
                return Err(HostError::new(
                    &bmc.name,
                    HostErrorKind::Redfish,
                    format!("task {job} answered a profile, not the task of a preview or import"),
                )
                .into());
            }
            // The iDRAC may be briefly unavailable while the host reboots; keep asking.
            Err(e) => last_error = Some(e),
        }
        if Instant::now() >= deadline {
            let why = last_error.map(|e| format!(" (last error: {e})")).unwrap_or_default();
            return Err(HostError::new(
                &bmc.name,
                HostErrorKind::Timeout,
                format!("job {job} did not get there within {timeout:?}{why}"),
            )
            .into());
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 3 / 2).min(Duration::from_secs(2));
    }
}

/// The action's target, or the error saying this iDRAC has none.
async fn action(bmc: &Bmc, which: fn(&dell_scp::Actions) -> Option<&String>, name: &str) -> Result<String> {
    let actions = dell_scp::get_actions(&bmc.client)
        .await
        .map_err(|e| bmc.explain(e, "reading the Manager's configuration profile actions"))?;
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
        let body = json!({"ImportBuffer": self.file.text, "ShareParameters": {"Target": "ALL"}});
        let task = dell_scp::start(&bmc.client, &target, &body)
            .await
            .map_err(|e| bmc.explain(e, "starting the configuration preview"))?;
        let job = task.rsplit('/').next().unwrap_or(&task).to_owned();
        let done = wait_task(bmc, &task, &job, &[], self.timeout, observer).await?;
        Ok(report(&job, &done, &self.file.document))
    }
}

/// What an import shares across its hosts: apply's run (audit log, reboot slots, options,
/// state directory, registry cache), the profile, and its targets.
#[derive(Debug)]
pub struct ImportRun {
    /// Apply's run; its profile is named after the file and holds no setting.
    pub apply: ApplyRun,
    /// The profile.
    pub file: Arc<ScpFile>,
    /// `ShareParameters.Target`.
    pub targets: Vec<String>,
}

impl ImportRun {
    /// An import of `file` with `options` (reboot policy, timeouts, `replace_pending`),
    /// letting at most `max_rebooting` hosts reboot at once.
    pub fn new(
        file: ScpFile,
        targets: Vec<String>,
        dirs: &crate::state::StateDirs,
        options: ApplyOptions,
        max_rebooting: usize,
    ) -> Result<Self> {
        let name = super::profile::profile_name(&file.name);
        let text = format!(
            "name = {}\ndescription = {}\n",
            crate::derive::toml_string(&name),
            crate::derive::toml_string(&format!("the Server Configuration Profile {}", file.name))
        );
        let profile = crate::assess::LoadedProfile::from_toml(&text, &file.name)?;
        Ok(Self {
            apply: ApplyRun::new(profile, dirs, options, max_rebooting)?,
            file: Arc::new(file),
            targets,
        })
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
    /// A sentence for people.
    pub summary: String,
}

/// Importing as a fleet [`Operation`].
#[derive(Debug, Clone)]
pub struct Import(pub Arc<ImportRun>);

impl Operation for Import {
    type Output = HostImport;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<HostImport> {
        import_host(&self.0, bmc, observer).await
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

/// Imports the run's profile on one connected host.
pub async fn import_host(run: &ImportRun, bmc: &Bmc, observer: &dyn Observer) -> Result<HostImport> {
    let apply = &run.apply;
    let audit = |step: Step, request: Value, outcome: &str, detail: Value| {
        apply.audit.record(&bmc.name, step, request, outcome, detail)
    };
    observer.event(&Event::phase(&bmc.name, Phase::Reading));
    let groups = AttributeGroup::ALL.into_iter().collect();
    let state = crate::read::read_state(bmc, &apply.cache, &groups, true).await?;
    if state.in_lockdown() {
        let reason = crate::read::lockdown_reason();
        audit(Step::Lockdown, Value::Null, "refused", json!(reason))?;
        return Err(HostError::new(&bmc.name, HostErrorKind::Lockdown, reason).into());
    }
    // Pending work: apply's rule. Open BIOS jobs and configuration-profile imports count.
    let open: Vec<redfish_client::oem::dell::DellJob> = state
        .jobs
        .iter()
        .filter(|j| j.is_open_bios_job() || (j.job_type.as_deref() == Some("ImportConfiguration") && j.holds_queue()))
        .cloned()
        .collect();
    let mut replaced = None;
    if !open.is_empty() || !state.pending.is_empty() {
        let desc = crate::read::describe_pending(&state).unwrap_or_else(|| {
            let ids: Vec<&str> = open.iter().map(|j| j.id.as_str()).collect();
            format!("configuration jobs {}", ids.join(", "))
        });
        if !apply.options.replace_pending {
            audit(Step::Pending, Value::Null, "refused", json!(desc))?;
            let message = format!(
                "{desc} already staged; rftune does not stack an import on pending work. Inspect it with `rftune jobs list --bmc {}`, then rerun with --replace-pending to delete it",
                bmc.url
            );
            return Err(HostError::new(&bmc.name, HostErrorKind::PendingWork, message).into());
        }
        crate::converge::replace_pending_work(apply, bmc, observer, &open, &state.pending).await?;
        replaced = Some(desc);
    }
    let reboot = needs_reboot(&run.file.document, &run.targets, &state.bios);
    let may_reboot = apply.options.reboot != RebootPolicy::None;
    let take_slot = |nothing: &'static str| async move {
        tokio::select! {
            permit = apply.reboots.clone().acquire_owned() => Ok(permit.expect("the run holds its reboot semaphore open")),
            _ = interrupt::wait() => Err(crate::Error::from(stopped(bmc, nothing))),
        }
    };
    // A host that will reboot waits for its slot before anything is written.
    let slot = if reboot && may_reboot {
        Some(take_slot("while waiting for a reboot slot; nothing was sent").await?)
    } else {
        None
    };
    interrupt::check(&bmc.name, "the snapshot")?;
    let snap = Snapshot::of(
        &bmc.name,
        &bmc.url,
        &state,
        format!("before scp import of {}", run.file.name),
    );
    let snapshot = snap.save(&apply.state_dir)?;
    audit(Step::Snapshot, Value::Null, "ok", json!(snapshot))?;
    interrupt::check(&bmc.name, "importing")?;
    let target = action(bmc, |a| a.import.as_ref(), "ImportSystemConfiguration").await?;
    // The iDRAC never reboots on its own: rftune does, in its slot.
    let body = json!({
        "ImportBuffer": run.file.text,
        "ShareParameters": {"Target": run.targets.join(",")},
        "ShutdownType": "NoReboot",
        "HostPowerState": "On",
    });
    // The buffer may hold secrets: the log records what was sent, not the text.
    let request = json!({
        "file": run.file.name,
        "sha256": format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(run.file.text.as_bytes())),
        "bytes": run.file.text.len(),
        "target": run.targets.join(","),
        "shutdown_type": "NoReboot",
    });
    let task = match dell_scp::start(&bmc.client, &target, &body).await {
        Ok(t) => t,
        Err(e) => {
            let e = bmc.explain(e, "starting the configuration import");
            audit(Step::ScpImport, request, "error", json!(crate::error::report(&e)))?;
            return Err(e);
        }
    };
    let job = task.rsplit('/').next().unwrap_or(&task).to_owned();
    audit(Step::ScpImport, request, "ok", json!({"job": job}))?;
    let opts = &apply.options;
    let analysed = wait_task(bmc, &task, &job, &[JobState::Paused], opts.job_timeout, observer).await?;
    let mut rebooted = false;
    let done = if analysed.job_state() == Some(JobState::Paused) {
        if !may_reboot {
            let summary = format!("import job {job} waits, paused, for the host's next reboot");
            audit(Step::Reboot, Value::Null, "skipped", json!(summary))?;
            return Ok(HostImport {
                outcome: ImportOutcome::NotConverged,
                service_tag: state.service_tag.clone(),
                snapshot: Some(snapshot),
                replaced,
                rebooted: false,
                report: report(&job, &analysed, &run.file.document),
                summary,
            });
        }
        // A NoReboot job pauses for a reboot whatever it changes (Dell's Ansible documentation:
        // it waits until the server is rebooted), iDRAC attributes alone included: such an
        // import takes its slot now, before the reboot; nothing of it is applied yet.
        let _slot = match slot {
            Some(s) => s,
            None => {
                take_slot("while waiting for a reboot slot; the paused import job waits for the host's next reboot")
                    .await?
            }
        };
        let lost = |kind: ResetType, happened: bool| {
            let outcome = if happened { "ok" } else { "unknown" };
            let _ = apply.audit.record(
                &bmc.name,
                Step::Reboot,
                json!({"reset": format!("{kind:?}")}),
                outcome,
                json!("the answer was lost"),
            );
        };
        // Not interruptible: a reboot rftune started is finished, so the host is not left off.
        control::reboot(bmc, opts.reboot, opts.graceful_timeout, observer, &lost)
            .await
            .inspect_err(|e| {
                let _ = audit(Step::Reboot, Value::Null, "error", json!(crate::error::report(e)));
            })?;
        rebooted = true;
        audit(
            Step::Reboot,
            json!({"policy": format!("{:?}", opts.reboot)}),
            "ok",
            Value::Null,
        )?;
        // The job's own end; a failed job is reported from its task below.
        let waited = crate::wait::wait_for_job(bmc, &job, opts.job_timeout, observer).await;
        if let Err(e) = &waited
            && !matches!(e, crate::Error::Host(h) if h.kind == HostErrorKind::JobFailed)
        {
            let _ = audit(Step::Job, Value::Null, "error", json!(crate::error::report(e)));
            return Err(waited
                .err()
                .unwrap_or(crate::Error::Interrupted(stopped(bmc, "waiting for the job"))));
        }
        let back = crate::wait::wait_until_back(bmc, opts.boot_timeout, observer).await;
        audit(
            Step::Boot,
            Value::Null,
            if back.is_ok() { "ok" } else { "error" },
            Value::Null,
        )?;
        back?;
        wait_task(bmc, &task, &job, &[], opts.job_timeout, observer).await?
    } else {
        analysed
    };
    let report = report(&job, &done, &run.file.document);
    let failures = report.failures();
    let state_name = report.state.clone();
    let detail = json!({"job": job, "state": state_name, "message_id": report.message_id, "failed": failures.len()});
    let ok = done.job_state() == Some(JobState::Completed) && failures.is_empty();
    audit(Step::Job, Value::Null, if ok { "ok" } else { "error" }, detail)?;
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
        return Err(HostError::new(&bmc.name, HostErrorKind::JobFailed, message).into());
    }
    let applied: usize = report.components.iter().map(|c| c.applied).sum();
    let (outcome, summary) = if report.message_id.as_deref() == Some("SYS069") || applied == 0 {
        (ImportOutcome::InSync, "nothing to change, no reboot".to_owned())
    } else {
        let rebooted_text = if rebooted { ", rebooted once" } else { "" };
        (
            ImportOutcome::Imported,
            format!(
                "imported {applied} attribute(s) in {} component(s){rebooted_text}",
                report.components.len()
            ),
        )
    };
    audit(Step::Done, Value::Null, "ok", json!(summary))?;
    Ok(HostImport {
        outcome,
        service_tag: state.service_tag.clone(),
        snapshot: Some(snapshot),
        replaced,
        rebooted,
        report,
        summary,
    })
}

fn stopped(bmc: &Bmc, during: &str) -> interrupt::Interrupted {
    interrupt::Interrupted {
        host: bmc.name.clone(),
        signal: interrupt::received().unwrap_or(0),
        during: during.to_owned(),
    }
}
