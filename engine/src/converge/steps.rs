//! The steps of one host's apply, in the order [`apply_host`](super::apply_host) runs them,
//! over one context ([`Host`]): each reads what the steps before it decided and writes its own
//! audit records.

use super::decide::{self, PendingAction, RebootStep};
use super::run::{ApplyOutcome, ApplyRun, HostApply};
use crate::assess::{Assessment, Blocked};
use crate::audit::Step;
use crate::backend::{Job, JobOutcome};
use crate::connect::Bmc;
use crate::control::{self, RebootPolicy};
use crate::error::{HostError, HostErrorKind, Result};
use crate::interrupt;
use crate::marker;
use crate::observe::{Observer, Phase};
use crate::snapshot::Snapshot;
use crate::write::Writer;
use bios_profiles::Plan;
use redfish_client::resources::bios::{Attributes, Bios};
use redfish_client::resources::computer_system::PowerState;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One host's apply: the run it belongs to, the host's writer (the BMC, its lock, who hears
/// of progress).
pub(super) struct Host<'a> {
    pub(super) run: &'a ApplyRun,
    pub(super) w: &'a Writer<'a>,
    pub(super) bmc: &'a Bmc,
    pub(super) observer: &'a dyn Observer,
}

/// What judging the host found: the assessment it was planned from, the plan, the open BIOS
/// jobs, and where the host's staging marker lives.
pub(super) struct Judged {
    pub(super) assessment: Assessment,
    pub(super) plan: Plan,
    pub(super) open_jobs: Vec<Job>,
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
    pub(super) fn new(run: &'a ApplyRun, w: &'a Writer<'a>) -> Self {
        Self {
            run,
            w,
            bmc: w.bmc,
            observer: w.observer,
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.bmc.name
    }

    pub(super) fn audit(&self, step: Step, request: Value, outcome: &str, detail: Value) -> Result<()> {
        self.w.audit(step, request, outcome, detail)
    }

    fn phase(&self, phase: Phase) {
        self.w.phase(phase);
    }

    pub(super) fn url(&self) -> String {
        self.w.url()
    }

    /// Recovers from a run interrupted on this host: powers it on if that run left it off
    /// mid-reboot, and waits for it to settle (a host in POST changes its job queue and pending
    /// values under our feet). Returns the BIOS resource read while waiting, if any.
    pub(super) async fn recover(&self) -> Result<Option<Bios>> {
        let earlier = marker::files(&self.run.writes.state_dir, self.name());
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
                let reason = crate::read::lockdown_reason(&self.bmc.backend());
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
        let wanted = run.options.apply_time.apply_time;
        if !redfish_client::resources::bios::supports(&a.state.apply_times, wanted) {
            let listed: Vec<String> = a.state.apply_times.iter().map(ToString::to_string).collect();
            let offers = if listed.is_empty() {
                "lists no apply time (so only OnReset is taken for granted)".to_owned()
            } else {
                format!("offers {}", listed.join(", "))
            };
            let message = format!(
                "this host's BIOS ({}) {offers} for staged values, not {wanted}: the maintenance window cannot be kept, so nothing was sent; apply with --apply-time on-reset",
                a.state.backend.kind()
            );
            self.audit(Step::Validate, Value::Null, "refused", json!(message))?;
            return Err(HostError::new(self.name(), HostErrorKind::Unsupported, message).into());
        }
        let plan = bios_profiles::plan(&a.profile, &a.state.view())
            .map_err(|e| crate::Error::from(e).context(format!("{}: planning", self.name())))?;
        let request = json!({"profile": run.profile.name(), "bios": plan.bios, "idrac": plan.idrac});
        self.audit(Step::Plan, request, "ok", Value::Null)?;
        Ok(Judged {
            marker: marker::path(&run.writes.state_dir, self.name(), a.state.service_tag.as_deref()),
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
        let staged = decide::PendingWork {
            values: &state.pending,
            open_job: judged.open_jobs.first().map(|j| j.id.as_str()),
            stuck: judged.open_jobs.iter().any(|j| j.outcome == JobOutcome::Stuck),
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
            Some(
                self.w
                    .take_slot("while waiting for a reboot slot; nothing was sent")
                    .await?,
            )
        } else {
            None
        };
        let adopted_job = self.settle_pending(judged, decision.pending, result).await?;
        if decision.in_sync && !password {
            let counts = judged.assessment.diff.counts();
            result.outcome = ApplyOutcome::InSync;
            result.verify = Some(counts);
            result.summary = "nothing to change, no reboot".into();
            if result.replaced.is_some() {
                result.summary.push_str(" (pending work was discarded)");
            }
            result.summary.push_str(&unchecked_note(counts));
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
                    // A BMC without jobs (an iLO) applies staged values at the next reset.
                    None if self.bmc.backend().jobs().is_none() => None,
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
                // A BMC without a job queue (an iLO) shows its staged values in `diff`.
                let inspect = crate::write::inspect_pending(&self.bmc.backend(), &self.url());
                let message = format!(
                    "{desc} already staged{}; rftune does not stack changes on pending work. Inspect it with {inspect}, then rerun this apply with --replace-pending to delete it",
                    refusal.why(),
                );
                return Err(HostError::new(self.name(), HostErrorKind::PendingWork, message).into());
            }
        }
        Ok(None)
    }

    /// Deletes the open BIOS jobs (and with them their values), or the pending values alone.
    async fn replace_pending(&self, judged: &Judged) -> Result<()> {
        self.w
            .discard(&judged.open_jobs, &judged.assessment.state.pending)
            .await
    }

    /// Saves every current value before any change.
    pub(super) fn snapshot(&self, judged: &Judged, result: &mut HostApply) -> Result<()> {
        let reason = format!("before apply of {}", self.run.profile.name());
        let snap = Snapshot::of(self.name(), &self.url(), &judged.assessment.state, reason);
        result.snapshot = Some(self.w.snapshot(&snap)?);
        Ok(())
    }

    /// Writes the iDRAC attributes, which apply at once.
    pub(super) async fn write_idrac(&self, plan: &Plan) -> Result<()> {
        let backend = self.bmc.backend();
        for (group, attrs) in plan.idrac.iter().filter(|(_, a)| !a.is_empty()) {
            interrupt::check(self.name(), &format!("setting iDRAC attributes {group}"))?;
            self.phase(Phase::SettingIdrac(*group));
            let body = json!({"Attributes": attrs});
            let settings = self
                .bmc
                .require(&backend, crate::backend::Backend::settings, "BMC attribute groups")?;
            match settings.write(&self.bmc.client, *group, attrs).await {
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
            let what = if job.is_none() && self.bmc.backend().jobs().is_none() {
                // A BMC without jobs (an iLO) processes staged values at the next POST itself.
                "the values stay staged and apply at the host's next reboot (this BMC runs no job)".to_owned()
            } else {
                format!("job {job_label} {when}")
            };
            result.summary = format!("{}; {what}", plan_sentence(&judged.plan, result.adopted));
            self.audit(Step::Reboot, Value::Null, "skipped", json!(result.summary))?;
            return Ok(Rebooted::Left);
        }
        let left = |what: &str| {
            self.w.stopped(format!(
                "{what}; the values stay staged with job {} and apply at the host's next reboot (rerun apply to finish)",
                job.as_deref().unwrap_or("(unknown)")
            ))
        };
        interrupt::check(self.name(), "rebooting").map_err(|_| left("before rebooting"))?;
        // Held (from before staging) until the host is back.
        let _slot = go.slot;
        self.restart(judged, result).await?;
        if let Some(j) = &job {
            self.w.wait_for_job(j).await?;
        }
        let back = self.w.wait_back().await?;
        Ok(Rebooted::Back(Box::new(back)))
    }

    /// Resets the host into the job, unless adopted values are already on their way in.
    async fn restart(&self, judged: &Judged, result: &mut HostApply) -> Result<()> {
        // Only adopted values may already be on their way in: ask the BMC only then.
        let running = judged.open_jobs.iter().any(|j| j.outcome == JobOutcome::Running);
        let in_post = result.adopted
            && match self.bmc.backend().readiness() {
                Some(readiness) => readiness.in_post(&self.bmc.client, None).await.unwrap_or(false),
                None => false,
            };
        if decide::already_rebooting(result.adopted, in_post, running) {
            let detail = json!("the host is already rebooting into the job");
            return self.audit(Step::Reboot, Value::Null, "skipped", detail);
        }
        marker::set_rebooting(&judged.marker, true);
        self.w.reset(None).await?;
        marker::set_rebooting(&judged.marker, false);
        result.rebooted = true;
        Ok(())
    }

    /// Reads the host back and compares it with the profile: converged only if it is clean.
    pub(super) async fn verify(&self, judged: &Judged, settled: Option<Bios>, result: &mut HostApply) -> Result<()> {
        self.phase(Phase::Verifying);
        let settled_settings = settled.as_ref().and_then(|b| b.settings.clone());
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
                "{}; {rebooted}verified in sync{}",
                plan_sentence(&judged.plan, result.adopted),
                unchecked_note(counts)
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
        // Each settings object that was written says what its POST made of it: the BIOS's, and
        // the boot settings of a boot order kept apart (an iLO's), which has its own time.
        let (values, order) = crate::write::order::split(&self.bmc.backend(), &judged.plan.bios);
        if !clean && result.rebooted && self.bmc.backend().jobs().is_none() {
            if !values.is_empty() {
                let before = judged.assessment.state.settings_time.as_deref();
                self.judge_jobless(before, settled_settings, "values", result).await?;
            }
            if order.is_some() {
                let before = judged.assessment.state.order_outcome.as_ref();
                let before = before.and_then(|s| s.time.as_deref());
                let settings = after.state.order_outcome.clone();
                self.judge_jobless(before, settings, "boot order", result).await?;
            }
        }
        Ok(())
    }

    /// On a BMC without jobs (an HPE iLO), what the BIOS made of the staged values at the POST
    /// says why a host is not clean: values it refused are `not_applied`, named with the
    /// BIOS's message; a settings time that did not move means the values were not processed at
    /// all, and what happened cannot be told from here.
    ///
    /// `before`: the settings object's time when `what` (`values`, `boot order`) was staged;
    /// `settings`: its `@Redfish.Settings` after the reboot, whose MessageIds an iLO sends
    /// without words: its registries give them.
    async fn judge_jobless(
        &self,
        before: Option<&str>,
        mut settings: Option<redfish_client::resources::bios::Settings>,
        what: &str,
        result: &mut HostApply,
    ) -> Result<()> {
        if let Some(s) = settings.as_mut() {
            self.bmc.client.fill_messages(&mut s.messages).await;
        }
        match crate::backend::SettingsOutcome::read(before, settings.as_ref()) {
            crate::backend::SettingsOutcome::Processed(refused) if !refused.is_empty() => {
                let named: Vec<String> = refused.iter().map(|(a, m)| format!("{a} ({m})")).collect();
                result.outcome = ApplyOutcome::NotApplied;
                result.summary = format!(
                    "accepted but not applied: the BIOS refused {} at POST; {}",
                    named.join(", "),
                    result.summary
                );
                self.audit(Step::Verify, Value::Null, "not_applied", json!(named))
            }
            crate::backend::SettingsOutcome::Processed(_) => Ok(()),
            crate::backend::SettingsOutcome::NotProcessed => {
                let message = format!(
                    "the BIOS did not process the staged {what} at the reboot (its settings time stayed {}), so whether they apply later cannot be told; they stay staged: check with `rftune diff` after the host's next reboot",
                    before.unwrap_or("unset")
                );
                self.audit(Step::Verify, Value::Null, "unknown", json!(message))?;
                Err(HostError::new(self.name(), HostErrorKind::OutcomeUnknown, message).into())
            }
        }
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

/// What a clean result leaves unproven: the settings not checked for lack of evidence for the
/// host's CPU generation (a Turin host's, today), said after the summary so that "nothing to
/// change" never reads as "in sync" when it compared little.
fn unchecked_note(counts: bios_profiles::StatusCounts) -> String {
    match counts.unverified {
        0 => String::new(),
        n => format!(
            "; {n} setting(s) not checked (no evidence for this host's CPU generation): unverified, not proven in sync"
        ),
    }
}
