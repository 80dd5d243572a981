//! The guards around an apply's writes: the check of a re-read host against its plan
//! (`apply --plan`) before the first write, the plan entry a dry run describes (`rftune plan`),
//! and the hooks around the reboot (the writer's, with what a failing before-reboot hook
//! undoes: the values this run staged).

use super::decide::{self, RebootStep};
use super::run::{ApplyOutcome, HostApply};
use super::steps::{Go, Host, Judged};
use crate::audit::Step;
use crate::control::RebootPolicy;
use crate::error::{HostError, HostErrorKind, Result};
use crate::marker;
use crate::plan::{self, Basis, PlanStatus};
use redfish_client::resources::bios::Attributes;
use serde_json::{Value, json};

impl Host<'_> {
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
    /// staged; a host that rftune does not reboot runs no hooks. A failing hook stops the host
    /// here: its staged values are cleared again (unless `keep_staged`), its on-failure hook
    /// runs, and the error says what happened.
    pub(super) async fn before_reboot(
        &self,
        judged: &Judged,
        go: &Go,
        job: Option<&str>,
        result: &mut HostApply,
    ) -> Result<()> {
        if !go.bios_work || go.step != RebootStep::Reboot {
            return Ok(());
        }
        let left = format!(
            "its staged values stay pending with job {} and apply at its next reboot (--keep-staged)",
            job.unwrap_or("(unknown)")
        );
        self.w.set_service_tag(result.service_tag.as_deref());
        let ran = self.w.before_reboot(|| self.unstage(judged, job), &left).await;
        result.hooks = self.w.hooks_ran();
        ran
    }

    /// After the reboot and verification of a host whose before-reboot point was reached:
    /// its after-verify hook when it converged (a failing one fails the host), else its
    /// on-failure hook.
    pub(super) async fn after_reboot(&self, finished: &Result<()>, result: &mut HostApply) -> Result<()> {
        let converged = result.outcome == ApplyOutcome::Converged;
        let why = result.summary.clone();
        let after = self.w.after_reboot(finished, converged, &why).await;
        result.hooks = self.w.hooks_ran();
        after
    }

    /// Clears the values this run staged (deleting its job takes them with it); says what was
    /// done, or what is left when that failed too.
    async fn unstage(&self, judged: &Judged, job: Option<&str>) -> String {
        let backend = self.bmc.backend();
        let cleared = match (job, backend.jobs()) {
            (Some(j), Some(queue)) => queue
                .delete(&self.bmc.client, j)
                .await
                .map(drop)
                .map_err(|e| self.bmc.explain(e, "clearing the staged values")),
            _ => self.w.clear_values(&judged.plan.bios).await,
        };
        match cleared {
            Ok(()) => {
                marker::remove(&judged.marker);
                let _ = self.audit(Step::Unstage, json!({"job": job}), "ok", Value::Null);
                "its staged values were cleared again".to_owned()
            }
            Err(e) => {
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
