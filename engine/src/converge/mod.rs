//! The apply state machine for one host: plan → (adopt | replace | refuse pending work) →
//! snapshot → iDRAC attributes → one BIOS PATCH with an apply time → reboot → wait for the job
//! and the host → verify. Every step is written to the audit log before the next starts.
//!
//! Interruption safety: before staging, rftune writes a marker (`state/staged/<host>.json`)
//! naming the values it is about to stage. A later run that finds exactly those values pending
//! with a BIOS job still open adopts them instead of staging again, and skips the reset when
//! the host is already in POST — so a run killed at any point converges without a second
//! reboot where none is needed.

pub mod decide;

use crate::assess::{self, Chosen};
use crate::audit::AuditLog;
use crate::bmc::{self, RebootPolicy};
use crate::cache::RegistryCache;
use crate::error::{Context, HostError, HostErrorKind, Result};
use crate::interrupt;
use crate::observe::{Event, Observer, Phase};
use crate::snapshot::Snapshot;
use crate::target::Target;
use bios_profiles::{Plan, StatusCounts};
use decide::{PendingAction, RebootStep};
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, AttributeGroup, JobOutcome};
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How to apply.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// How to reboot.
    pub reboot: RebootPolicy,
    /// How long the OS gets to shut down before power is forced off.
    pub graceful_timeout: Duration,
    /// How long the BIOS job may take.
    pub job_timeout: Duration,
    /// How long the host may take to come back after the job.
    pub boot_timeout: Duration,
    /// Delete existing pending values and jobs instead of refusing.
    pub replace_pending: bool,
    /// Plan only.
    pub dry_run: bool,
    /// Unknown attributes are errors.
    pub strict: bool,
    /// When the BIOS values apply.
    pub apply_time: SettingsApplyTime,
}

impl Default for ApplyOptions {
    /// A graceful reboot (10 min for the OS, then forced), 30 min for the BIOS job, 20 min for
    /// the host to come back, values applied at that reboot; pending work refused.
    fn default() -> Self {
        Self {
            reboot: RebootPolicy::Graceful,
            graceful_timeout: Duration::from_secs(600),
            job_timeout: Duration::from_secs(1800),
            boot_timeout: Duration::from_secs(1200),
            replace_pending: false,
            dry_run: false,
            strict: false,
            apply_time: SettingsApplyTime::on_reset(),
        }
    }
}

/// What happened on one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Already matched the profile: nothing written, no reboot.
    InSync,
    /// Changed, rebooted where needed, and verified clean.
    Converged,
    /// Changes are staged but not applied yet (`--reboot none`, maintenance window), or the
    /// verification found differences.
    NotConverged,
    /// `--dry-run`: the plan only.
    Planned,
}

/// The per-host part of the `rftune.apply/v1` document.
#[derive(Debug, Clone, Serialize)]
pub struct HostApply {
    /// Outcome.
    pub outcome: Outcome,
    /// Service tag.
    pub service_tag: Option<String>,
    /// BIOS attributes written (unlocks included).
    pub bios: Attributes,
    /// iDRAC attributes written, by group.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// Unlocks the plan added, one line each.
    pub unlocks: Vec<String>,
    /// How this host's values were chosen for settings its registry decides (ordered choices,
    /// accepted tokens, derived bounds), by attribute; also those it offers nothing for.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub choices: BTreeMap<String, bios_profiles::Choice>,
    /// Pending values rftune adopted from an earlier run instead of staging again.
    pub adopted: bool,
    /// Pending work that was discarded (`--replace-pending`).
    pub replaced: Option<String>,
    /// The snapshot taken before any change.
    pub snapshot: Option<PathBuf>,
    /// The BIOS job.
    pub job: Option<String>,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// The diff after the change.
    pub verify: Option<StatusCounts>,
    /// The profile's attributes as the BIOS reports them at the end (from the last read;
    /// for callers such as experiments, not part of the JSON document).
    #[serde(skip)]
    pub in_force: Attributes,
    /// A sentence for people.
    pub summary: String,
}

/// What one `rftune apply` run shares across hosts.
#[derive(Debug)]
pub struct Run {
    /// The profile.
    pub chosen: Chosen,
    /// Registry cache.
    pub cache: RegistryCache,
    /// The audit log.
    pub audit: AuditLog,
    /// State directory (snapshots, markers).
    pub state_dir: PathBuf,
    /// Options.
    pub options: ApplyOptions,
    /// Hosts allowed to be rebooting at once.
    pub reboots: Arc<tokio::sync::Semaphore>,
}

impl Run {
    /// A run of `chosen` with the state directories of `dirs` (registry cache, audit log,
    /// snapshots and markers), letting at most `max_rebooting` hosts reboot at once.
    pub fn new(
        chosen: Chosen,
        dirs: &crate::state::StateDirs,
        options: ApplyOptions,
        max_rebooting: usize,
    ) -> Result<Self> {
        let cache = dirs.registry_cache();
        cache.prefetch_newest();
        Ok(Self {
            chosen,
            cache,
            audit: AuditLog::open(&dirs.state)?,
            state_dir: dirs.state.clone(),
            options,
            reboots: Arc::new(tokio::sync::Semaphore::new(max_rebooting.max(1))),
        })
    }
}

/// rftune's record of values it staged, for adoption by a later run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    /// The profile.
    pub profile: String,
    /// The run that staged.
    pub run: String,
    /// The values staged.
    pub bios: Attributes,
    /// The job created, once known.
    pub job: Option<String>,
    /// rftune is rebooting the host (and may have powered it off): a run that finds this and
    /// the host off powers it on.
    #[serde(default)]
    pub rebooting: bool,
}

fn marker_path(state_dir: &Path, host: &str, service_tag: Option<&str>) -> PathBuf {
    state_dir.join("staged").join(format!(
        "{}-{}.json",
        crate::state::path_component(host),
        crate::state::path_component(service_tag.unwrap_or("unknown"))
    ))
}

/// Whether an earlier run left `host` mid-apply (a staging marker), which the next apply
/// recovers from before it reads the host.
pub(crate) fn interrupted(state_dir: &Path, host: &str) -> bool {
    !marker_files(state_dir, host).is_empty()
}

/// The staging marker files earlier runs left for `host` (any service tag), readable or not.
fn marker_files(state_dir: &Path, host: &str) -> Vec<PathBuf> {
    let probe = marker_path(state_dir, host, Some("x"));
    let prefix = probe
        .file_name()
        .map(|n| n.to_string_lossy().trim_end_matches("x.json").to_owned())
        .unwrap_or_default();
    let Ok(dir) = std::fs::read_dir(state_dir.join("staged")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

fn read_marker(path: &Path) -> Option<Marker> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Records in the host's marker whether rftune is in the middle of rebooting it.
fn set_rebooting(path: &Path, rebooting: bool) {
    if let Some(mut m) = read_marker(path)
        && m.rebooting != rebooting
    {
        m.rebooting = rebooting;
        if let Err(e) = write_marker(path, &m) {
            tracing::warn!("could not update {}: {}", path.display(), crate::error::report(&e));
        }
    }
}

fn write_marker(path: &Path, marker: &Marker) -> Result<()> {
    if let Some(dir) = path.parent() {
        crate::state::ensure_private_dir(dir)?;
    }
    crate::state::write_private(path, &serde_json::to_vec_pretty(marker)?)
}

/// The audit steps that write to the host: power on, job creation, deleting pending work,
/// iDRAC attributes, the BIOS PATCH, the reboot.
const WRITES: [&str; 6] = ["power-on", "job", "replace", "idrac", "stage", "reboot"];

/// Applies the profile to one connected host. Whether it wrote to the host before a failure is
/// [`AuditLog::wrote`](crate::audit::AuditLog::wrote) of the run's audit log.
pub async fn apply_host(ctx: &Run, target: &Target, observer: &dyn Observer) -> Result<HostApply> {
    let opts = &ctx.options;
    let host = target.name.as_str();
    let audit = |step: &str, request: Value, outcome: &str, detail: Value| {
        // The steps that change the host, when they did (a reboot that failed part way may
        // have): what `AuditLog::wrote` answers for a host that then failed.
        if WRITES.contains(&step) && (outcome == "ok" || (step == "reboot" && outcome == "error")) {
            ctx.audit.note_write(host);
        }
        ctx.audit.record(host, step, request, outcome, detail)
    };
    // A run interrupted after its reset may have left the host in POST, where the job queue
    // and the pending values change under our feet: wait for it before judging pending work.
    let earlier = marker_files(&ctx.state_dir, host);
    // The BIOS resource read while waiting for the host: the next read takes it from here.
    let mut settled = None;
    if !earlier.is_empty() {
        // An earlier run rebooting this host was stopped: if it left the host off, power it on.
        if earlier.iter().filter_map(|f| read_marker(f)).any(|m| m.rebooting)
            && bmc::power_state(target).await == Some(redfish_client::resources::computer_system::PowerState::Off)
        {
            observer.event(&Event::phase(host, Phase::RecoveringPower));
            let on = bmc::power_on(target).await;
            audit(
                "power-on",
                Value::Null,
                if on.is_ok() { "ok" } else { "error" },
                json!(
                    on.as_ref()
                        .err()
                        .map(|e| crate::error::report(e))
                        .unwrap_or_else(|| "powered on after an interrupted reboot".into())
                ),
            )?;
            on?;
        }
        observer.event(&Event::phase(host, Phase::Settling));
        settled = Some(bmc::wait_until_back(target, opts.boot_timeout, observer).await?);
    }
    observer.event(&Event::phase(host, Phase::Reading));
    let a = assess::assess_with(target, &ctx.chosen, &ctx.cache, true, opts.strict, settled.take()).await?;
    // Under System Lockdown the iDRAC refuses every write, and its registry calls everything
    // read-only: say so once, before any snapshot or write.
    if a.state.in_lockdown() {
        audit(
            "lockdown",
            Value::Null,
            "refused",
            json!(format!("{host}: {}", bmc::lockdown_reason())),
        )?;
        return Err(HostError::new(host, HostErrorKind::Lockdown, bmc::lockdown_reason()).into());
    }
    let errors: Vec<String> = a.errors().map(ToString::to_string).collect();
    if !errors.is_empty() {
        audit("validate", Value::Null, "error", json!(errors))?;
        return Err(HostError::new(
            host,
            HostErrorKind::ProfileNotApplicable,
            format!(
                "profile {} cannot be applied as written:\n  {}",
                ctx.chosen.name(),
                errors.join("\n  ")
            ),
        )
        .into());
    }
    let plan = bios_profiles::plan(&a.profile, &a.state.view()).with_context(|| format!("{host}: planning"))?;
    audit(
        "plan",
        json!({"profile": ctx.chosen.name(), "bios": plan.bios, "idrac": plan.idrac}),
        "ok",
        Value::Null,
    )?;
    let marker_file = marker_path(&ctx.state_dir, host, a.state.service_tag.as_deref());
    let mut result = HostApply {
        outcome: Outcome::Planned,
        service_tag: a.state.service_tag.clone(),
        bios: plan.bios.clone(),
        idrac: plan.idrac.clone(),
        unlocks: plan
            .unlocks
            .iter()
            .map(|u| format!("{} = {} ({})", u.attribute, u.value, u.reason))
            .collect(),
        choices: plan.choices.clone(),
        adopted: false,
        replaced: None,
        snapshot: None,
        job: None,
        rebooted: false,
        verify: None,
        in_force: profile_values(&a.profile, &a.state.bios),
        summary: String::new(),
    };

    // Pending work: adopt our own, replace on request, refuse otherwise.
    let open_jobs: Vec<_> = a.state.open_bios_jobs().cloned().collect();
    let staged = decide::Staged {
        values: &a.state.pending,
        open_job: open_jobs.first().map(|j| j.id.as_str()),
        stuck: open_jobs.iter().any(|j| j.outcome() == JobOutcome::Stuck),
    };
    let marker = read_marker(&marker_file);
    let decision = decide::decide(
        &staged,
        &plan.bios,
        plan.is_empty(),
        marker.as_ref(),
        ctx.chosen.name(),
        opts.replace_pending,
    );
    let desc = bmc::describe_pending(&a.state).unwrap_or_default();
    // How the BIOS job will run: decided once, before anything is written.
    let bios_work = !plan.bios.is_empty() || matches!(decision.pending, PendingAction::Adopt { .. });
    let step = decide::reboot_step(opts.apply_time.apply_time, opts.reboot != RebootPolicy::None);
    // A host that will reboot waits for its reboot slot before anything is written (pending
    // work replaced included), so a fleet touches only as many hosts as may reboot at once,
    // and a run stopped while waiting leaves the hosts not yet granted a slot untouched.
    let refused = matches!(decision.pending, PendingAction::Refuse(_));
    let slot = if bios_work && step == RebootStep::Reboot && !opts.dry_run && !refused {
        tokio::select! {
            permit = ctx.reboots.clone().acquire_owned() => Some(permit.context("the reboot limiter closed")?),
            _ = interrupt::wait() => {
                return Err(interrupt::Interrupted {
                    host: host.to_owned(),
                    signal: interrupt::received().unwrap_or(0),
                    during: "while waiting for a reboot slot; nothing was sent".into(),
                }
                .into());
            }
        }
    } else {
        None
    };
    let mut adopted_job = None;
    match decision.pending {
        PendingAction::None => {
            // Nothing pending: an earlier run's job has run (or was deleted); its marker is stale.
            if marker_file.exists() {
                let _ = std::fs::remove_file(&marker_file);
            }
        }
        PendingAction::Adopt { job } => {
            adopted_job = match job {
                Some(j) => Some(j),
                // Our values are staged but their job was never created (an earlier run lost the
                // answer to its PATCH): create the one job now.
                None if opts.dry_run => None,
                None => {
                    let id = create_job(target).await?;
                    audit(
                        "job",
                        Value::Null,
                        "ok",
                        json!({"created_for": "adopted values", "job": id}),
                    )?;
                    Some(id)
                }
            };
            result.adopted = true;
            audit(
                "adopt",
                Value::Null,
                "ok",
                json!({"pending": a.state.pending, "job": adopted_job}),
            )?;
        }
        PendingAction::Replace => {
            if !opts.dry_run {
                replace_pending(target, &a.state, &open_jobs, &audit, observer).await?;
            }
            result.replaced = Some(desc);
        }
        PendingAction::Refuse(refusal) => {
            audit("pending", Value::Null, "refused", json!(desc))?;
            return Err(HostError::new(
                host,
                HostErrorKind::PendingWork,
                format!(
                    "{desc} already staged{}; rftune does not stack changes on pending work. Inspect it with `rftune jobs list --bmc {url}`, then rerun this apply with --replace-pending to delete it",
                    refusal.why(),
                    url = target_url(target)
                ),
            )
            .into());
        }
    }

    if decision.in_sync {
        result.outcome = Outcome::InSync;
        result.summary = "nothing to change, no reboot".into();
        if result.replaced.is_some() {
            result.summary.push_str(" (pending work was discarded)");
        }
        audit("done", Value::Null, "in_sync", Value::Null)?;
        return Ok(result);
    }
    if opts.dry_run {
        let reboot = match step {
            _ if !bios_work => "no reboot (iDRAC values apply at once)".to_owned(),
            RebootStep::Reboot => format!("would reboot the host once ({:?})", opts.reboot).to_lowercase(),
            RebootStep::LeaveForWindow => "no reboot: the job would run in the maintenance window".to_owned(),
            RebootStep::LeaveForNextReboot => "no reboot: the job would wait for the host's next reboot".to_owned(),
        };
        result.summary = format!("{}; {reboot}", plan_sentence(&plan, result.adopted));
        return Ok(result);
    }

    interrupt::check(host, "the snapshot")?;
    // Snapshot before any change.
    let url = target.client.base_url().as_str().trim_end_matches('/');
    let snap = Snapshot::of(host, url, &a.state, format!("before apply of {}", ctx.chosen.name()));
    let snap_path = snap.save(&ctx.state_dir)?;
    audit("snapshot", Value::Null, "ok", json!(snap_path))?;
    result.snapshot = Some(snap_path);

    // iDRAC attributes apply immediately.
    for (group, attrs) in plan.idrac.iter().filter(|(_, a)| !a.is_empty()) {
        interrupt::check(host, &format!("setting iDRAC attributes {group}"))?;
        observer.event(&Event::phase(host, Phase::SettingIdrac(*group)));
        let body = json!({"Attributes": attrs});
        match target.client.dell().set_attributes(*group, attrs).await {
            Ok(_) => audit("idrac", body, "ok", json!(group.to_string()))?,
            Err(e) => {
                let e = target.explain(e, &format!("setting iDRAC attributes {group}"));
                audit("idrac", body, "error", json!(crate::error::report(&e)))?;
                return Err(e);
            }
        }
    }

    // One BIOS PATCH with an apply time; never a second job.
    let mut job = adopted_job;
    if !plan.bios.is_empty() && !result.adopted {
        let mut marker = Marker {
            profile: ctx.chosen.name().to_owned(),
            run: ctx.audit.run().to_owned(),
            bios: plan.bios.clone(),
            job: None,
            rebooting: false,
        };
        interrupt::check(host, "staging BIOS values")?;
        write_marker(&marker_file, &marker)?;
        let body = redfish_client::request::settings_body(&plan.bios, Some(&opts.apply_time));
        // At most two PATCHes, and the second only once a read-back proved the first staged
        // nothing: never a duplicate.
        for attempt in 1..=2 {
            observer.event(&Event::phase(host, Phase::Staging(plan.bios.len())));
            audit(
                "stage",
                body.clone(),
                "unknown",
                json!({"attempt": attempt, "phase": "sending"}),
            )?;
            let staged = target
                .client
                .stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &plan.bios, Some(&opts.apply_time))
                .await;
            let err = match staged {
                Ok(s) => {
                    job = match s.job {
                        Some(j) => Some(j.last_segment().to_owned()),
                        // Some firmware stages without creating a job: find the one it queued.
                        None => open_bios_job(target).await,
                    };
                    marker.job = job.clone();
                    write_marker(&marker_file, &marker)?;
                    audit("stage", Value::Null, "ok", json!({"job": job}))?;
                    break;
                }
                Err(e) => e,
            };
            if !err.write_outcome_unknown() {
                // The iDRAC answered no (or nothing reached it): nothing is staged.
                let _ = std::fs::remove_file(&marker_file);
                let e = target.explain(err, "staging BIOS values");
                audit("stage", Value::Null, "error", json!(crate::error::report(&e)))?;
                return Err(e);
            }
            // The PATCH may have been applied, but its answer was lost: keep the marker and look.
            let err = target.explain(err, "staging BIOS values");
            audit("stage", Value::Null, "unknown", json!(crate::error::report(&err)))?;
            observer.event(&Event::phase(host, Phase::ReadingBack));
            match staged_state(target, &plan.bios).await {
                Ok(ReadBack::Ours(j)) => {
                    job = j;
                    marker.job = job.clone();
                    write_marker(&marker_file, &marker)?;
                    audit(
                        "stage",
                        Value::Null,
                        "ok",
                        json!({"job": job, "confirmed": "read back"}),
                    )?;
                    break;
                }
                Ok(ReadBack::Nothing) if attempt == 1 => {
                    audit("stage", Value::Null, "error", json!("read back: nothing was staged"))?;
                }
                Ok(ReadBack::Nothing) => {
                    let _ = std::fs::remove_file(&marker_file);
                    return Err(err.context("the read-back shows nothing staged; no further attempt"));
                }
                Ok(ReadBack::Other(desc)) => {
                    let _ = std::fs::remove_file(&marker_file);
                    audit("stage", Value::Null, "error", json!(format!("read back: {desc}")))?;
                    return Err(HostError::new(
                        host,
                        HostErrorKind::OutcomeUnknown,
                        format!(
                            "after a lost answer to the BIOS PATCH, {desc} is pending, which is not what rftune sent; inspect it with `rftune jobs list --bmc {}`",
                            target_url(target)
                        ),
                    )
                    .into());
                }
                Err(read) => {
                    ctx.audit.note_write(host);
                    return Err(err.context(format!(
                        "the iDRAC may have staged the values, and reading back failed too ({}); rerun `rftune apply`: it adopts the values if they were staged and stages them otherwise",
                        crate::error::report(&read)
                    )));
                }
            }
        }
    }
    result.job.clone_from(&job);

    if bios_work {
        let job_label = job.clone().unwrap_or_else(|| "(no job id)".into());
        let left_for = match step {
            RebootStep::LeaveForWindow => Some("runs in the maintenance window"),
            RebootStep::LeaveForNextReboot => Some("is scheduled and applies at the next reboot"),
            RebootStep::Reboot => None,
        };
        if let Some(when) = left_for {
            result.outcome = Outcome::NotConverged;
            result.summary = format!("{}; job {job_label} {when}", plan_sentence(&plan, result.adopted));
            audit("reboot", Value::Null, "skipped", json!(result.summary))?;
            return Ok(result);
        }
        let left = |what: &str| interrupt::Interrupted {
            host: host.to_owned(),
            signal: interrupt::received().unwrap_or(0),
            during: format!(
                "{what}; the values stay staged with job {} and apply at the host's next reboot (rerun apply to finish)",
                job.as_deref().unwrap_or("(unknown)")
            ),
        };
        interrupt::check(host, "rebooting").map_err(|_| left("before rebooting"))?;
        // Held (from before staging) until the host is back.
        let _slot = slot;
        // Only adopted values may already be on their way in: ask the iDRAC only then.
        let running = open_jobs.iter().any(|j| j.outcome() == JobOutcome::Running);
        let in_post = result.adopted && target.client.dell().lc_status().await.is_ok_and(|lc| lc.in_post());
        if decide::already_rebooting(result.adopted, in_post, running) {
            audit(
                "reboot",
                Value::Null,
                "skipped",
                json!("the host is already rebooting into the job"),
            )?;
        } else {
            let lost = |kind: redfish_client::resources::computer_system::ResetType, happened: bool| {
                let _ = audit(
                    "reboot",
                    json!({"reset": format!("{kind:?}")}),
                    if happened { "ok" } else { "unknown" },
                    json!(if happened {
                        "the answer was lost; the host showed the reset happened"
                    } else {
                        "the answer was lost and the host showed no reset; sending it once more"
                    }),
                );
            };
            set_rebooting(&marker_file, true);
            // Not interruptible: a reboot rftune started is finished, so the host is not left off.
            bmc::reboot(target, opts.reboot, opts.graceful_timeout, observer, &lost)
                .await
                .inspect_err(|e| {
                    let _ = audit("reboot", Value::Null, "error", json!(crate::error::report(e)));
                })?;
            set_rebooting(&marker_file, false);
            result.rebooted = true;
            audit(
                "reboot",
                json!({"policy": format!("{:?}", opts.reboot)}),
                "ok",
                Value::Null,
            )?;
        }
        let waiting = |what: String| interrupt::Interrupted {
            host: host.to_owned(),
            signal: interrupt::received().unwrap_or(0),
            during: format!("{what}; the job continues on the BMC: rerun apply to verify"),
        };
        if let Some(j) = &job {
            let done = tokio::select! {
                done = bmc::wait_for_job(target, j, opts.job_timeout, observer) => done,
                _ = interrupt::wait() => {
                    let e = waiting(format!("while waiting for job {j}"));
                    audit("job", Value::Null, "unknown", json!(e.to_string()))?;
                    return Err(e.into());
                }
            }
            .inspect_err(|e| {
                let _ = audit("job", Value::Null, "error", json!(crate::error::report(e)));
            })?;
            audit(
                "job",
                Value::Null,
                "ok",
                json!({"job": done.id, "state": done.job_state.to_string(), "message_id": done.message_id}),
            )?;
        }
        let back = tokio::select! {
            back = bmc::wait_until_back(target, opts.boot_timeout, observer) => back,
            _ = interrupt::wait() => {
                let e = waiting("while waiting for the host to come back".into());
                audit("boot", Value::Null, "unknown", json!(e.to_string()))?;
                return Err(e.into());
            }
        }
        .inspect_err(|e| {
            let _ = audit("boot", Value::Null, "error", json!(crate::error::report(e)));
        })?;
        audit("boot", Value::Null, "ok", Value::Null)?;
        settled = Some(back);
    }
    let _ = std::fs::remove_file(&marker_file);

    // Verify: read back and diff.
    observer.event(&Event::phase(host, Phase::Verifying));
    let after = assess::assess_with(target, &ctx.chosen, &ctx.cache, false, opts.strict, settled).await?;
    result.in_force = profile_values(&after.profile, &after.state.bios);
    let counts = after.diff.counts();
    result.verify = Some(counts);
    let clean = after.diff.is_clean();
    audit(
        "verify",
        Value::Null,
        if clean { "in_sync" } else { "drift" },
        json!(counts),
    )?;
    result.outcome = if clean {
        Outcome::Converged
    } else {
        Outcome::NotConverged
    };
    result.summary = if clean {
        format!(
            "{}; {}verified in sync",
            plan_sentence(&plan, result.adopted),
            if result.rebooted { "rebooted once, " } else { "" }
        )
    } else {
        let left: Vec<String> = after
            .diff
            .changes
            .iter()
            .filter(|c| !c.status.is_clean())
            .map(|c| {
                format!(
                    "{} ({}: wanted {}, has {})",
                    c.attribute,
                    c.status,
                    c.desired,
                    c.current.as_ref().map_or_else(|| "-".to_owned(), ToString::to_string)
                )
            })
            .collect();
        format!("not converged after the change: {}", left.join(", "))
    };
    Ok(result)
}

/// The open BIOS configuration job, if any (firmware that stages without naming the job).
async fn open_bios_job(target: &Target) -> Option<String> {
    let jobs = target.client.dell().jobs().await.ok()?;
    jobs.into_iter().find(|j| j.is_open_bios_job()).map(|j| j.id)
}

/// What a read-back found after a BIOS PATCH whose answer was lost.
#[derive(Debug)]
enum ReadBack {
    /// Exactly rftune's values are pending, with this job (created if the PATCH did not).
    Ours(Option<String>),
    /// Nothing is pending and no BIOS job is open: the PATCH was not applied.
    Nothing,
    /// Something else is pending.
    Other(String),
}

/// Reads pending BIOS values and jobs to learn whether a PATCH whose answer was lost staged
/// `sent`.
async fn staged_state(target: &Target, sent: &Attributes) -> Result<ReadBack> {
    let pending = target
        .client
        .get::<redfish_client::resources::bios::BiosSettings>(dell::BIOS_SETTINGS)
        .await
        .map_err(|e| target.explain(e, "reading back pending BIOS values"))?
        .attributes;
    let jobs = target
        .client
        .dell()
        .jobs()
        .await
        .map_err(|e| target.explain(e, "reading back the job queue"))?;
    let open: Vec<&redfish_client::oem::dell::DellJob> = jobs.iter().filter(|j| j.is_open_bios_job()).collect();
    if pending.is_empty() && open.is_empty() {
        return Ok(ReadBack::Nothing);
    }
    if pending != *sent {
        return Ok(ReadBack::Other(format!("{} BIOS value(s)", pending.len())));
    }
    match open.first() {
        Some(j) => Ok(ReadBack::Ours(Some(j.id.clone()))),
        // Staged without its job: create the one job the PATCH should have created.
        None => Ok(ReadBack::Ours(Some(create_job(target).await?))),
    }
}

/// `POST Jobs` for values staged without a job.
async fn create_job(target: &Target) -> Result<String> {
    let link = target
        .client
        .dell()
        .create_bios_job()
        .await
        .map_err(|e| target.explain(e, "creating the BIOS job for the staged values"))?;
    Ok(link.last_segment().to_owned())
}

fn target_url(target: &Target) -> String {
    target.client.base_url().as_str().trim_end_matches('/').to_owned()
}

async fn replace_pending(
    target: &Target,
    state: &bmc::HostState,
    open_jobs: &[redfish_client::oem::dell::DellJob],
    audit: &impl Fn(&str, Value, &str, Value) -> Result<()>,
    observer: &dyn Observer,
) -> Result<()> {
    for j in open_jobs {
        if j.outcome() == JobOutcome::Running {
            return Err(HostError::new(
                &target.name,
                HostErrorKind::PendingWork,
                format!(
                    "BIOS job {} is running; wait for it to finish before replacing it",
                    j.id
                ),
            )
            .into());
        }
        let idrac = target.client.dell();
        let deleted = match idrac.delete_job(&j.id).await {
            Ok(_) => Ok(()),
            // A stuck job some firmware will not delete directly: through the job service.
            Err(first) => idrac
                .clear_job_queue(&redfish_client::oem::dell::JobQueueClear::Job(j.id.clone()))
                .await
                .map(|_| ())
                .map_err(|_| first),
        };
        if let Err(e) = deleted {
            audit("replace", json!({"delete_job": j.id}), "error", json!(e.to_string()))?;
            return Err(target.explain(e, &format!("deleting job {}", j.id)).context(format!(
                "if the job will not go, `rftune jobs clear-queue --bmc {}` clears the whole queue",
                target_url(target)
            )));
        }
        audit("replace", json!({"delete_job": j.id}), "ok", Value::Null)?;
        observer.event(&Event::notice(
            &target.name,
            format!(
                "deleted BIOS job {} ({}{}) and its pending values (--replace-pending)",
                j.id,
                j.job_state,
                j.message_code().map(|c| format!(", {c}")).unwrap_or_default()
            ),
        ));
    }
    if open_jobs.is_empty() && !state.pending.is_empty() {
        target
            .client
            .dell()
            .clear_pending()
            .await
            .map_err(|e| target.explain(e, "clearing pending BIOS values"))?;
        audit("replace", json!({"clear_pending": state.pending}), "ok", Value::Null)?;
        observer.event(&Event::notice(
            &target.name,
            format!(
                "cleared {} pending BIOS value(s) (--replace-pending)",
                state.pending.len()
            ),
        ));
    }
    Ok(())
}

/// The BIOS values of the attributes the profile sets.
fn profile_values(profile: &bios_profiles::ResolvedProfile, bios: &Attributes) -> Attributes {
    profile
        .bios
        .keys()
        .filter_map(|k| Some((k.clone(), bios.get(k)?.clone())))
        .collect()
}

fn plan_sentence(plan: &Plan, adopted: bool) -> String {
    let idrac: usize = plan.idrac.values().map(Attributes::len).sum();
    let mut parts = Vec::new();
    if adopted {
        parts.push(format!(
            "adopted {} pending BIOS value(s) staged by an earlier run",
            plan.bios.len()
        ));
    } else if !plan.bios.is_empty() {
        let unlocks = if plan.unlocks.is_empty() {
            String::new()
        } else {
            format!(" (incl. {} unlock)", plan.unlocks.len())
        };
        parts.push(format!("{} BIOS value(s){unlocks}", plan.bios.len()));
    }
    if idrac > 0 {
        parts.push(format!("{idrac} iDRAC value(s)"));
    }
    parts.join(" and ")
}
