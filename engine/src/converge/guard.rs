//! The guards around an apply's writes: the host's lock (one run per host), the check of a
//! re-read host against its plan (`apply --plan`) before the first write, the plan entry a
//! dry run describes (`rftune plan`), and the hooks around the reboot (`before-reboot` once the
//! host holds its reboot slot and its values are staged; `after-verify` or `on-failure` after).

use super::decide::{self, RebootStep};
use super::steps::{Go, Host, Judged};
use super::{ApplyOutcome, HostApply};
use crate::audit::Step;
use crate::control::RebootPolicy;
use crate::error::{HostError, HostErrorKind, Result};
use crate::hooks::{self, Phase as HookPhase, Ran};
use crate::lock::HostLock;
use crate::marker;
use crate::observe::{Event, Phase};
use crate::plan::{self, Basis, PlanStatus};
use redfish_client::resources::bios::Attributes;
use serde_json::{Value, json};

impl Host<'_> {
    /// Takes the host's lock, unless this is a dry run (which writes nothing).
    pub(super) async fn lock(&self) -> Result<Option<HostLock>> {
        let opts = &self.run.options;
        if opts.dry_run {
            return Ok(None);
        }
        let lock = crate::lock::acquire(
            &self.run.state_dir,
            self.name(),
            &self.bmc.url,
            opts.lock_wait,
            self.observer,
        )
        .await
        .inspect_err(|e| {
            let _ = self.audit(Step::Lock, Value::Null, "refused", json!(crate::error::report(e)));
        })?;
        if let Some(gone) = &lock.took_over {
            let text = format!("took over the host's lock from a run that is gone: {gone}");
            self.audit(Step::Lock, Value::Null, "ok", json!(text))?;
            self.observer.event(&Event::notice(self.name(), text));
        }
        Ok(Some(lock))
    }

    /// With `apply --plan`: holds the host, as re-read, to its plan entry. `Some` (in sync) when
    /// it already has the plan's values; an error of kind [`HostErrorKind::Stale`] when its
    /// state differs from the one the plan was made from; `None` to go on writing exactly the
    /// plan.
    pub(super) fn hold_to_plan(&self, judged: &mut Judged) -> Result<Option<HostApply>> {
        let Some(doc) = &self.run.plan else {
            return Ok(None);
        };
        let stale = |why: String| -> crate::Error {
            let _ = self.audit(Step::PlanCheck, Value::Null, "stale", json!(why));
            HostError::new(self.name(), HostErrorKind::Stale, why).into()
        };
        let Some(entry) = doc.host(self.name()) else {
            return Err(stale(format!(
                "plan is stale for {}: the plan has no entry for it; run `rftune plan` again",
                self.name()
            )));
        };
        if entry.status == PlanStatus::Error {
            return Err(stale(format!(
                "plan is stale for {}: it could not be planned ({}); run `rftune plan` again",
                self.name(),
                entry.error.as_deref().unwrap_or("no reason recorded")
            )));
        }
        let a = &judged.assessment;
        let (bios, idrac) = (entry.bios_values(), entry.idrac_values());
        let has = |want: &Attributes, current: Option<&Attributes>| {
            want.iter().all(|(k, v)| current.and_then(|c| c.get(k)) == Some(v))
        };
        let at_plan = judged.plan.is_empty()
            && a.state.pending.is_empty()
            && judged.open_jobs.is_empty()
            && has(&bios, Some(&a.state.bios))
            && idrac.iter().all(|(g, want)| has(want, a.state.idrac.get(g)));
        if at_plan {
            self.audit(Step::PlanCheck, Value::Null, "in_sync", Value::Null)?;
            self.audit(Step::Done, Value::Null, "in_sync", Value::Null)?;
            let mut result = judged.planned();
            result.outcome = ApplyOutcome::InSync;
            result.summary = "has the plan's values already: nothing to change, no reboot".into();
            return Ok(Some(result));
        }
        let names = entry
            .basis
            .as_ref()
            .map(|b| b.bios.keys().cloned().collect())
            .unwrap_or_default();
        let now = Basis::of(a, &names);
        if let Some(why) = plan::staleness(self.name(), entry, &now, &plan::resolved_digest(&a.profile)) {
            return Err(stale(why));
        }
        let same_idrac = |x: &std::collections::BTreeMap<_, Attributes>,
                          y: &std::collections::BTreeMap<_, Attributes>| {
            x.iter()
                .filter(|(_, v)| !v.is_empty())
                .eq(y.iter().filter(|(_, v)| !v.is_empty()))
        };
        if judged.plan.bios != bios || !same_idrac(&judged.plan.idrac, &idrac) {
            return Err(stale(format!(
                "plan is stale for {}: from the same state this rftune now plans other writes ({} BIOS value(s) instead of the plan's {}); run `rftune plan` again",
                self.name(),
                judged.plan.bios.len(),
                bios.len()
            )));
        }
        let detail = json!({"state_digest": entry.state_digest});
        self.audit(Step::PlanCheck, Value::Null, "ok", detail)?;
        Ok(None)
    }

    /// For a dry run (`rftune plan`, `apply --dry-run`): the host's plan entry, as the result's
    /// [`HostApply::planned`].
    pub(super) fn describe(&self, judged: &Judged, result: &mut HostApply) {
        let opts = &self.run.options;
        if !opts.dry_run {
            return;
        }
        let bios_work = !judged.plan.bios.is_empty() || result.adopted;
        let reboots = bios_work
            && decide::reboot_step(opts.apply_time.apply_time, opts.reboot != RebootPolicy::None) == RebootStep::Reboot;
        result.planned = Some(Box::new(plan::planned_host(
            self.name(),
            &self.bmc.url,
            &judged.assessment,
            &judged.plan,
            &opts.apply_time,
            reboots,
            result.adopted,
            result.replaced.clone(),
            result.summary.clone(),
        )));
    }

    /// Runs the before-reboot hook once the host holds its reboot slot and its values are
    /// staged; returns whether the host reached that point (so its after-verify or on-failure
    /// hook runs). A host that rftune does not reboot runs no hooks. A failing hook stops the
    /// host here: its staged values are cleared again (unless `keep_staged`), its on-failure
    /// hook runs, and the error says what happened.
    pub(super) async fn before_reboot(
        &self,
        judged: &Judged,
        go: &Go,
        job: Option<&str>,
        result: &mut HostApply,
    ) -> Result<bool> {
        let opts = &self.run.options;
        if !go.bios_work || go.step != RebootStep::Reboot || !opts.hooks.any() {
            return Ok(false);
        }
        let Some(command) = opts.hooks.before_reboot.clone() else {
            return Ok(true);
        };
        crate::interrupt::check(self.name(), "the before-reboot hook")?;
        let ran = self.hook(HookPhase::BeforeReboot, &command, None, result).await?;
        if ran.ok() {
            return Ok(true);
        }
        let left = if opts.keep_staged {
            format!(
                "its staged values stay pending with job {} and apply at its next reboot (--keep-staged)",
                job.unwrap_or("(unknown)")
            )
        } else {
            self.unstage(judged, job).await
        };
        let message = format!(
            "the before-reboot hook failed ({}); the host was not rebooted, and {left}",
            ran.failure(opts.hooks.timeout)
        );
        self.on_failure(&message, result).await;
        Err(HostError::new(self.name(), HostErrorKind::HookFailed, message).into())
    }

    /// After the reboot and verification of a host whose before-reboot point was reached:
    /// its after-verify hook when it converged (a failing one fails the host), else its
    /// on-failure hook.
    pub(super) async fn after_reboot(
        &self,
        reached: bool,
        finished: &Result<()>,
        result: &mut HostApply,
    ) -> Result<()> {
        if !reached {
            return Ok(());
        }
        let hooks = &self.run.options.hooks;
        match finished {
            Ok(()) if result.outcome == ApplyOutcome::Converged => {
                let Some(command) = hooks.after_verify.clone() else {
                    return Ok(());
                };
                let ran = self.hook(HookPhase::AfterVerify, &command, None, result).await?;
                if ran.ok() {
                    return Ok(());
                }
                let message = format!(
                    "the host converged, but the after-verify hook failed ({})",
                    ran.failure(hooks.timeout)
                );
                Err(HostError::new(self.name(), HostErrorKind::HookFailed, message).into())
            }
            Ok(()) => {
                let why = result.summary.clone();
                self.on_failure(&why, result).await;
                Ok(())
            }
            Err(e) => {
                self.on_failure(&crate::error::report(e), result).await;
                Ok(())
            }
        }
    }

    /// The on-failure hook, if set; its own failure is recorded, not returned (the host's
    /// failure is what the caller reports).
    async fn on_failure(&self, error: &str, result: &mut HostApply) {
        if let Some(command) = self.run.options.hooks.on_failure.clone() {
            let _ = self.hook(HookPhase::OnFailure, &command, Some(error), result).await;
        }
    }

    /// Runs one hook, recorded in the audit log with its exit and output.
    async fn hook(&self, phase: HookPhase, command: &str, error: Option<&str>, result: &mut HostApply) -> Result<Ran> {
        self.observer
            .event(&Event::phase(self.name(), Phase::Hook(phase.as_str().to_owned())));
        let tag = result.service_tag.clone();
        let ctx = hooks::Context {
            host: self.name(),
            bmc: &self.bmc.url,
            service_tag: tag.as_deref(),
            profile: self.run.profile.name(),
            node: self.bmc.node.as_deref(),
            error,
        };
        let timeout = self.run.options.hooks.timeout;
        let ran = hooks::run(command, phase, &ctx, timeout).await.unwrap_or_else(|e| Ran {
            phase: phase.as_str(),
            exit: None,
            timed_out: false,
            seconds: 0.0,
            stdout: String::new(),
            stderr: crate::error::report(&e),
        });
        let outcome = if ran.ok() { "ok" } else { "error" };
        let request = json!({"phase": phase.as_str(), "command": command});
        self.audit(Step::Hook, request, outcome, serde_json::to_value(&ran)?)?;
        result.hooks.push(format!(
            "{}: {}",
            phase.as_str(),
            if ran.ok() {
                "ok".to_owned()
            } else {
                ran.failure(timeout)
            }
        ));
        Ok(ran)
    }

    /// Clears the values this run staged (deleting its job takes them with it); says what was
    /// done, or what is left when that failed too.
    async fn unstage(&self, judged: &Judged, job: Option<&str>) -> String {
        let dell = self.bmc.client.dell();
        let cleared = match job {
            Some(j) => dell.delete_job(j).await.map(drop),
            None => dell.clear_pending().await.map(drop),
        };
        match cleared {
            Ok(()) => {
                marker::remove(&judged.marker);
                let _ = self.audit(Step::Unstage, json!({"job": job}), "ok", Value::Null);
                "its staged values were cleared again".to_owned()
            }
            Err(e) => {
                let e = self.bmc.explain(e, "clearing the staged values");
                let _ = self.audit(
                    Step::Unstage,
                    json!({"job": job}),
                    "error",
                    json!(crate::error::report(&e)),
                );
                format!(
                    "clearing its staged values failed too ({}): they stay pending with job {}; delete it with `rftune jobs delete`",
                    crate::error::report(&e),
                    job.unwrap_or("(unknown)")
                )
            }
        }
    }
}
