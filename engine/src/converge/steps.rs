//! The steps of one host's apply, in the order [`apply_host`](super::apply_host) runs them,
//! over one context ([`Host`]): each reads what the steps before it decided and writes its own
//! audit records.

use super::decide::{self, PendingAction, RebootStep};
use super::{ApplyOutcome, ApplyRun, HostApply};
use crate::assess::{Assessment, Blocked};
use crate::audit::Step;
use crate::connect::Bmc;
use crate::control::{self, RebootPolicy};
use crate::error::{HostError, HostErrorKind, Result};
use crate::interrupt::{self, Interrupted};
use crate::marker;
use crate::observe::{Event, Observer, Phase};
use crate::snapshot::Snapshot;
use bios_profiles::Plan;
use redfish_client::oem::dell::{DellJob, JobOutcome, JobQueueClear};
use redfish_client::resources::bios::{Attributes, Bios};
use redfish_client::resources::computer_system::{PowerState, ResetType};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One host's apply: the run it belongs to, the BMC, and who hears of progress.
pub(super) struct Host<'a> {
    pub(super) run: &'a ApplyRun,
    pub(super) bmc: &'a Bmc,
    pub(super) observer: &'a dyn Observer,
}

/// What judging the host found: the assessment it was planned from, the plan, the open BIOS
/// jobs, and where the host's staging marker lives.
pub(super) struct Judged {
    pub(super) assessment: Assessment,
    pub(super) plan: Plan,
    pub(super) open_jobs: Vec<DellJob>,
    pub(super) marker: PathBuf,
}

/// After the pending work is dealt with: stop here, or write.
pub(super) enum Next {
    /// The result is final (in sync, or a dry run's plan).
    Done,
    /// Go on writing.
    Write(Go),
}

/// What the writing steps need from the pending step.
pub(super) struct Go {
    /// The open job of values adopted from an earlier run.
    pub(super) adopted_job: Option<String>,
    /// Whether a BIOS job has to run (values to stage, or adopted ones).
    pub(super) bios_work: bool,
    /// How that job gets to run.
    pub(super) step: RebootStep,
    /// The reboot slot, held from before the first write until the host is back.
    pub(super) slot: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// How the reboot step ended.
pub(super) enum Rebooted {
    /// No BIOS job to run.
    NotNeeded,
    /// The job was left to run later (maintenance window, next reboot): the result is final.
    Left,
    /// The host is back; its BIOS resource as read last.
    Back(Box<Bios>),
}

impl Judged {
    /// The result as planned, before anything is written.
    pub(super) fn planned(&self) -> HostApply {
        let plan = &self.plan;
        HostApply {
            outcome: ApplyOutcome::Planned,
            service_tag: self.assessment.state.service_tag.clone(),
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
            readback: BTreeMap::new(),
            defaults: None,
            password: None,
            in_force: profile_values(&self.assessment.profile, &self.assessment.state.bios),
            summary: String::new(),
            hooks: Vec::new(),
            planned: None,
        }
    }
}

impl<'a> Host<'a> {
    pub(super) fn new(run: &'a ApplyRun, bmc: &'a Bmc, observer: &'a dyn Observer) -> Self {
        Self { run, bmc, observer }
    }

    pub(super) fn name(&self) -> &str {
        &self.bmc.name
    }

    pub(super) fn audit(&self, step: Step, request: Value, outcome: &str, detail: Value) -> Result<()> {
        self.run.audit.record(self.name(), step, request, outcome, detail)
    }

    fn phase(&self, phase: Phase) {
        self.observer.event(&Event::phase(self.name(), phase));
    }

    pub(super) fn url(&self) -> String {
        self.bmc.client.base_url().as_str().trim_end_matches('/').to_owned()
    }

    /// A stop request, while the host is at `during`.
    fn stopped(&self, during: String) -> Interrupted {
        Interrupted {
            host: self.name().to_owned(),
            signal: interrupt::received().unwrap_or(0),
            during,
        }
    }

    /// Recovers from a run interrupted on this host: powers it on if that run left it off
    /// mid-reboot, and waits for it to settle (a host in POST changes its job queue and pending
    /// values under our feet). Returns the BIOS resource read while waiting, if any.
    pub(super) async fn recover(&self) -> Result<Option<Bios>> {
        let earlier = marker::files(&self.run.state_dir, self.name());
        if earlier.is_empty() {
            return Ok(None);
        }
        if earlier.iter().filter_map(|f| marker::read(f)).any(|m| m.rebooting)
            && control::power_state(self.bmc).await == Some(PowerState::Off)
        {
            self.phase(Phase::RecoveringPower);
            let on = control::power_on(self.bmc).await;
            let (outcome, detail) = match &on {
                Ok(()) => ("ok", json!("powered on after an interrupted reboot")),
                Err(e) => ("error", json!(crate::error::report(e))),
            };
            self.audit(Step::PowerOn, Value::Null, outcome, detail)?;
            on?;
        }
        self.phase(Phase::Settling);
        let back = crate::wait::wait_until_back(self.bmc, self.run.options.boot_timeout, self.observer).await?;
        Ok(Some(back))
    }

    /// Reads the host and judges it against the profile: refused under System Lockdown or
    /// when the profile cannot be applied as written; else the plan, recorded.
    pub(super) async fn judge(&self, settled: Option<Bios>) -> Result<Judged> {
        self.phase(Phase::Reading);
        let run = self.run;
        let a =
            crate::assess::assess_with(self.bmc, &run.profile, &run.cache, true, run.options.strict, settled).await?;
        match a.blocked() {
            Some(Blocked::Lockdown) => {
                let reason = crate::read::lockdown_reason();
                let detail = json!(format!("{}: {reason}", self.name()));
                self.audit(Step::Lockdown, Value::Null, "refused", detail)?;
                return Err(HostError::new(self.name(), HostErrorKind::Lockdown, reason).into());
            }
            Some(Blocked::NotApplicable(errors)) => {
                self.audit(Step::Validate, Value::Null, "error", json!(errors))?;
                let message = format!(
                    "profile {} cannot be applied as written:\n  {}",
                    run.profile.name(),
                    errors.join("\n  ")
                );
                return Err(HostError::new(self.name(), HostErrorKind::ProfileNotApplicable, message).into());
            }
            None => {}
        }
        let plan = bios_profiles::plan(&a.profile, &a.state.view())
            .map_err(|e| crate::Error::from(e).context(format!("{}: planning", self.name())))?;
        let request = json!({"profile": run.profile.name(), "bios": plan.bios, "idrac": plan.idrac});
        self.audit(Step::Plan, request, "ok", Value::Null)?;
        Ok(Judged {
            marker: marker::path(&run.state_dir, self.name(), a.state.service_tag.as_deref()),
            open_jobs: a.state.open_bios_jobs().cloned().collect(),
            assessment: a,
            plan,
        })
    }

    /// Deals with work already staged on the host — adopts rftune's own, replaces it on
    /// request, refuses it otherwise — after taking the host's reboot slot when it will
    /// reboot. Ends the apply when nothing is left to write, or for a dry run.
    pub(super) async fn pending(&self, judged: &Judged, result: &mut HostApply) -> Result<Next> {
        let opts = &self.run.options;
        let state = &judged.assessment.state;
        let staged = decide::Staged {
            values: &state.pending,
            open_job: judged.open_jobs.first().map(|j| j.id.as_str()),
            stuck: judged.open_jobs.iter().any(|j| j.outcome() == JobOutcome::Stuck),
        };
        let marker = marker::read(&judged.marker);
        let plan = &judged.plan;
        let decision = decide::decide(
            &staged,
            &plan.bios,
            plan.is_empty(),
            marker.as_ref(),
            self.run.profile.name(),
            opts.replace_pending,
        );
        let password = opts.password.is_some();
        let bios_work = !plan.bios.is_empty() || matches!(decision.pending, PendingAction::Adopt { .. }) || password;
        let step = decide::reboot_step(opts.apply_time.apply_time, opts.reboot != RebootPolicy::None);
        // A host that will reboot waits for its slot before anything is written (pending work
        // replaced included), so a fleet touches only as many hosts as may reboot at once, and a
        // run stopped while waiting leaves the hosts not yet granted a slot untouched.
        let refused = matches!(decision.pending, PendingAction::Refuse(_));
        let slot = if bios_work && step == RebootStep::Reboot && !opts.dry_run && !refused {
            Some(self.reboot_slot().await?)
        } else {
            None
        };
        let adopted_job = self.settle_pending(judged, decision.pending, result).await?;
        if decision.in_sync && !password {
            result.outcome = ApplyOutcome::InSync;
            result.summary = "nothing to change, no reboot".into();
            if result.replaced.is_some() {
                result.summary.push_str(" (pending work was discarded)");
            }
            self.audit(Step::Done, Value::Null, "in_sync", Value::Null)?;
            return Ok(Next::Done);
        }
        if opts.dry_run {
            let reboot = match step {
                _ if !bios_work => "no reboot (iDRAC values apply at once)".to_owned(),
                RebootStep::Reboot => format!("would reboot the host once ({:?})", opts.reboot).to_lowercase(),
                RebootStep::LeaveForWindow => "no reboot: the job would run in the maintenance window".to_owned(),
                RebootStep::LeaveForNextReboot => "no reboot: the job would wait for the host's next reboot".to_owned(),
            };
            result.summary = format!("{}; {reboot}", plan_sentence(plan, result.adopted));
            if let Some(p) = &opts.password {
                result.summary.push_str(&format!(
                    "; would {} the {} password in the same job",
                    p.action(),
                    p.which.as_str()
                ));
            }
            return Ok(Next::Done);
        }
        Ok(Next::Write(Go {
            adopted_job,
            bios_work,
            step,
            slot,
        }))
    }

    /// One of the run's reboot slots; a stop request while waiting leaves the host untouched.
    async fn reboot_slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit> {
        tokio::select! {
            permit = self.run.reboots.clone().acquire_owned() => Ok(permit.expect("the run holds its reboot semaphore open")),
            _ = interrupt::wait() => {
                Err(self.stopped("while waiting for a reboot slot; nothing was sent".into()).into())
            }
        }
    }

    /// Carries out the decision about pending work; returns the job of adopted values.
    async fn settle_pending(
        &self,
        judged: &Judged,
        action: PendingAction,
        result: &mut HostApply,
    ) -> Result<Option<String>> {
        let state = &judged.assessment.state;
        let desc = crate::read::describe_pending(state).unwrap_or_default();
        match action {
            // Nothing pending: an earlier run's job has run (or was deleted); its marker is stale.
            PendingAction::None => marker::remove(&judged.marker),
            PendingAction::Adopt { job } => {
                let job = match job {
                    Some(j) => Some(j),
                    // Our values are staged but their job was never created (an earlier run lost
                    // the answer to its PATCH): create the one job now.
                    None if self.run.options.dry_run => None,
                    None => {
                        let id = crate::jobs::create_bios_job(self.bmc).await?;
                        let detail = json!({"created_for": "adopted values", "job": id});
                        self.audit(Step::Job, Value::Null, "ok", detail)?;
                        Some(id)
                    }
                };
                result.adopted = true;
                self.audit(
                    Step::Adopt,
                    Value::Null,
                    "ok",
                    json!({"pending": state.pending, "job": job}),
                )?;
                return Ok(job);
            }
            PendingAction::Replace => {
                if !self.run.options.dry_run {
                    self.replace_pending(judged).await?;
                }
                result.replaced = Some(desc);
            }
            PendingAction::Refuse(refusal) => {
                self.audit(Step::Pending, Value::Null, "refused", json!(desc))?;
                let message = format!(
                    "{desc} already staged{}; rftune does not stack changes on pending work. Inspect it with `rftune jobs list --bmc {url}`, then rerun this apply with --replace-pending to delete it",
                    refusal.why(),
                    url = self.url()
                );
                return Err(HostError::new(self.name(), HostErrorKind::PendingWork, message).into());
            }
        }
        Ok(None)
    }

    /// Deletes the open BIOS jobs (and with them their values), or the pending values alone.
    async fn replace_pending(&self, judged: &Judged) -> Result<()> {
        self.replace_pending_work(&judged.open_jobs, &judged.assessment.state.pending)
            .await
    }

    /// [`Host::replace_pending`] of these jobs and pending values (also for an SCP import).
    pub(super) async fn replace_pending_work(&self, open_jobs: &[DellJob], pending: &Attributes) -> Result<()> {
        for j in open_jobs {
            if j.outcome() == JobOutcome::Running {
                let message = format!(
                    "BIOS job {} is running; wait for it to finish before replacing it",
                    j.id
                );
                return Err(HostError::new(self.name(), HostErrorKind::PendingWork, message).into());
            }
            let idrac = self.bmc.client.dell();
            let deleted = match idrac.delete_job(&j.id).await {
                Ok(_) => Ok(()),
                // A stuck job some firmware will not delete directly: through the job service.
                Err(first) => idrac
                    .clear_job_queue(&JobQueueClear::Job(j.id.clone()))
                    .await
                    .map(|_| ())
                    .map_err(|_| first),
            };
            if let Err(e) = deleted {
                self.audit(
                    Step::Replace,
                    json!({"delete_job": j.id}),
                    "error",
                    json!(e.to_string()),
                )?;
                let hint = format!(
                    "if the job will not go, `rftune jobs clear-queue --bmc {}` clears the whole queue",
                    self.url()
                );
                return Err(self.bmc.explain(e, &format!("deleting job {}", j.id)).context(hint));
            }
            self.audit(Step::Replace, json!({"delete_job": j.id}), "ok", Value::Null)?;
            let code = j.message_code().map(|c| format!(", {c}")).unwrap_or_default();
            let text = format!(
                "deleted BIOS job {} ({}{code}) and its pending values (--replace-pending)",
                j.id, j.job_state
            );
            self.observer.event(&Event::notice(self.name(), text));
        }
        if open_jobs.is_empty() && !pending.is_empty() {
            self.bmc
                .client
                .dell()
                .clear_pending()
                .await
                .map_err(|e| self.bmc.explain(e, "clearing pending BIOS values"))?;
            self.audit(Step::Replace, json!({"clear_pending": pending}), "ok", Value::Null)?;
            let text = format!("cleared {} pending BIOS value(s) (--replace-pending)", pending.len());
            self.observer.event(&Event::notice(self.name(), text));
        }
        Ok(())
    }

    /// Saves every current value before any change.
    pub(super) fn snapshot(&self, judged: &Judged, result: &mut HostApply) -> Result<()> {
        interrupt::check(self.name(), "the snapshot")?;
        let reason = format!("before apply of {}", self.run.profile.name());
        let snap = Snapshot::of(self.name(), &self.url(), &judged.assessment.state, reason);
        let path = snap.save(&self.run.state_dir)?;
        self.audit(Step::Snapshot, Value::Null, "ok", json!(path))?;
        result.snapshot = Some(path);
        Ok(())
    }

    /// Writes the iDRAC attributes, which apply at once.
    pub(super) async fn write_idrac(&self, plan: &Plan) -> Result<()> {
        for (group, attrs) in plan.idrac.iter().filter(|(_, a)| !a.is_empty()) {
            interrupt::check(self.name(), &format!("setting iDRAC attributes {group}"))?;
            self.phase(Phase::SettingIdrac(*group));
            let body = json!({"Attributes": attrs});
            match self.bmc.client.dell().set_attributes(*group, attrs).await {
                Ok(_) => self.audit(Step::Idrac, body, "ok", json!(group.to_string()))?,
                Err(e) => {
                    let e = self.bmc.explain(e, &format!("setting iDRAC attributes {group}"));
                    self.audit(Step::Idrac, body, "error", json!(crate::error::report(&e)))?;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Gets the BIOS job run: leaves it for the maintenance window or the next reboot, or
    /// reboots the host (unless it is already rebooting into an adopted job), then waits for
    /// the job and for the host to come back.
    pub(super) async fn reboot(
        &self,
        judged: &Judged,
        go: Go,
        job: Option<String>,
        result: &mut HostApply,
    ) -> Result<Rebooted> {
        if !go.bios_work {
            return Ok(Rebooted::NotNeeded);
        }
        let job_label = job.clone().unwrap_or_else(|| "(no job id)".into());
        let left_for = match go.step {
            RebootStep::LeaveForWindow => Some("runs in the maintenance window"),
            RebootStep::LeaveForNextReboot => Some("is scheduled and applies at the next reboot"),
            RebootStep::Reboot => None,
        };
        if let Some(when) = left_for {
            result.outcome = ApplyOutcome::NotConverged;
            result.summary = format!(
                "{}; job {job_label} {when}",
                plan_sentence(&judged.plan, result.adopted)
            );
            self.audit(Step::Reboot, Value::Null, "skipped", json!(result.summary))?;
            return Ok(Rebooted::Left);
        }
        let left = |what: &str| {
            self.stopped(format!(
                "{what}; the values stay staged with job {} and apply at the host's next reboot (rerun apply to finish)",
                job.as_deref().unwrap_or("(unknown)")
            ))
        };
        interrupt::check(self.name(), "rebooting").map_err(|_| left("before rebooting"))?;
        // Held (from before staging) until the host is back.
        let _slot = go.slot;
        self.restart(judged, result).await?;
        if let Some(j) = &job {
            self.wait_for_job(j).await?;
        }
        let back = tokio::select! {
            back = crate::wait::wait_until_back(self.bmc, self.run.options.boot_timeout, self.observer) => back,
            _ = interrupt::wait() => {
                let e = self.stopped("while waiting for the host to come back; the job continues on the BMC: rerun apply to verify".into());
                self.audit(Step::Boot, Value::Null, "unknown", json!(e.to_string()))?;
                return Err(e.into());
            }
        }
        .inspect_err(|e| {
            let _ = self.audit(Step::Boot, Value::Null, "error", json!(crate::error::report(e)));
        })?;
        self.audit(Step::Boot, Value::Null, "ok", Value::Null)?;
        Ok(Rebooted::Back(Box::new(back)))
    }

    /// Resets the host into the job, unless adopted values are already on their way in.
    async fn restart(&self, judged: &Judged, result: &mut HostApply) -> Result<()> {
        let opts = &self.run.options;
        // Only adopted values may already be on their way in: ask the iDRAC only then.
        let running = judged.open_jobs.iter().any(|j| j.outcome() == JobOutcome::Running);
        let in_post = result.adopted && self.bmc.client.dell().lc_status().await.is_ok_and(|lc| lc.in_post());
        if decide::already_rebooting(result.adopted, in_post, running) {
            let detail = json!("the host is already rebooting into the job");
            return self.audit(Step::Reboot, Value::Null, "skipped", detail);
        }
        let lost = |kind: ResetType, happened: bool| {
            let detail = if happened {
                "the answer was lost; the host showed the reset happened"
            } else {
                "the answer was lost and the host showed no reset; sending it once more"
            };
            let outcome = if happened { "ok" } else { "unknown" };
            let _ = self.audit(
                Step::Reboot,
                json!({"reset": format!("{kind:?}")}),
                outcome,
                json!(detail),
            );
        };
        marker::set_rebooting(&judged.marker, true);
        // Not interruptible: a reboot rftune started is finished, so the host is not left off.
        control::reboot(self.bmc, opts.reboot, opts.graceful_timeout, self.observer, &lost)
            .await
            .inspect_err(|e| {
                let _ = self.audit(Step::Reboot, Value::Null, "error", json!(crate::error::report(e)));
            })?;
        marker::set_rebooting(&judged.marker, false);
        result.rebooted = true;
        self.audit(
            Step::Reboot,
            json!({"policy": format!("{:?}", opts.reboot)}),
            "ok",
            Value::Null,
        )
    }

    /// Waits for the BIOS job to end; a stop request leaves it running on the BMC.
    async fn wait_for_job(&self, job: &str) -> Result<()> {
        let done = tokio::select! {
            done = crate::wait::wait_for_job(self.bmc, job, self.run.options.job_timeout, self.observer) => done,
            _ = interrupt::wait() => {
                let e = self.stopped(format!("while waiting for job {job}; the job continues on the BMC: rerun apply to verify"));
                self.audit(Step::Job, Value::Null, "unknown", json!(e.to_string()))?;
                return Err(e.into());
            }
        }
        .inspect_err(|e| {
            let _ = self.audit(Step::Job, Value::Null, "error", json!(crate::error::report(e)));
        })?;
        let detail = json!({"job": done.id, "state": done.job_state.to_string(), "message_id": done.message_id});
        self.audit(Step::Job, Value::Null, "ok", detail)
    }

    /// Reads the host back and compares it with the profile: converged only if it is clean.
    pub(super) async fn verify(&self, judged: &Judged, settled: Option<Bios>, result: &mut HostApply) -> Result<()> {
        self.phase(Phase::Verifying);
        let run = self.run;
        let after =
            crate::assess::assess_with(self.bmc, &run.profile, &run.cache, false, run.options.strict, settled).await?;
        result.in_force = profile_values(&after.profile, &after.state.bios);
        let counts = after.diff.counts();
        result.verify = Some(counts);
        let clean = after.diff.is_clean();
        let outcome = if clean { "in_sync" } else { "drift" };
        self.audit(Step::Verify, Value::Null, outcome, json!(counts))?;
        result.outcome = if clean {
            ApplyOutcome::Converged
        } else {
            ApplyOutcome::NotConverged
        };
        result.summary = if clean {
            let rebooted = if result.rebooted { "rebooted once, " } else { "" };
            format!(
                "{}; {rebooted}verified in sync",
                plan_sentence(&judged.plan, result.adopted)
            )
        } else {
            result.readback = readback_notes(&after, &result.bios);
            let left: Vec<String> = after
                .diff
                .changes
                .iter()
                .filter(|c| !c.status.is_clean())
                .map(|c| {
                    let has = c.current.as_ref().map_or_else(|| "-".to_owned(), ToString::to_string);
                    let why = result
                        .readback
                        .get(&c.attribute)
                        .map(|n| format!(": {n}"))
                        .unwrap_or_default();
                    format!("{} ({}: wanted {}, has {has}{why})", c.attribute, c.status, c.desired)
                })
                .collect();
            format!("not converged after the change: {}", left.join(", "))
        };
        Ok(())
    }
}

/// For each BIOS attribute that reads back another value than `written` holds for it, what the
/// profile says that means (an NPS the BIOS replaced at POST), where it says anything.
fn readback_notes(after: &Assessment, written: &Attributes) -> BTreeMap<String, String> {
    written
        .iter()
        .filter_map(|(name, sent)| {
            let read = after.state.bios.get(name)?;
            let note = after.profile.bios.get(name)?.readback_note(sent, read)?;
            Some((name.clone(), note))
        })
        .collect()
}

/// The BIOS values of the attributes the profile sets.
fn profile_values(profile: &bios_profiles::ResolvedProfile, bios: &Attributes) -> Attributes {
    profile
        .bios
        .keys()
        .filter_map(|k| Some((k.clone(), bios.get(k)?.clone())))
        .collect()
}

/// `3 BIOS value(s) (incl. 1 unlock) and 2 iDRAC value(s)`: what the plan writes.
pub(super) fn plan_sentence(plan: &Plan, adopted: bool) -> String {
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
