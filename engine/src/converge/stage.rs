//! The stage step: every BIOS value of the plan in one PATCH with an apply time, which creates
//! the one BIOS job. A PATCH whose answer was lost is never resent blindly: what is pending is
//! read back first, and a second PATCH goes out only when the read-back shows nothing staged.

use super::run::HostApply;
use super::steps::{Go, Host, Judged};
use crate::audit::Step;
use crate::backend::Job;
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::interrupt;
use crate::marker::{self, Marker};
use crate::observe::Phase;
use redfish_client::resources::bios::{Attributes, BiosSettings};
use serde_json::{Value, json};

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

impl Host<'_> {
    /// Stages the plan's BIOS values (unless adopted ones stand in for them) and returns the
    /// BIOS job, the adopted one included. The marker is written before the PATCH and names the
    /// job once known.
    pub(super) async fn stage(&self, judged: &Judged, go: &Go, result: &mut HostApply) -> Result<Option<String>> {
        let plan = &judged.plan;
        if plan.bios.is_empty() || result.adopted {
            return Ok(go.adopted_job.clone());
        }
        let run = self.run;
        let backend = self.bmc.backend();
        let settings = self.bmc.settings_id().await?;
        let mut marker = Marker {
            profile: run.profile.name().to_owned(),
            run: run.writes.audit.run().to_owned(),
            bios: plan.bios.clone(),
            job: None,
            rebooting: false,
        };
        interrupt::check(&self.bmc.name, "staging BIOS values")?;
        let etag = self.settings_etag(judged, result).await?;
        marker::write(&judged.marker, &marker)?;
        // A boot order the backend keeps apart from the BIOS (an iLO's) goes first, in one
        // PATCH of its own settings object, which the same POST processes.
        let (values, order) = crate::write::order::split(&self.bmc.backend(), &plan.bios);
        if let Some(order) = &order {
            self.w.audit(
                Step::Stage,
                json!({ "boot_order": order }),
                "unknown",
                json!({"phase": "sending"}),
            )?;
            if let Err(failed) = crate::write::order::stage(self.bmc, order).await {
                let e = failed.error;
                if failed.may_be_staged {
                    // The marker stays: the next run finds its own order and stages all again.
                    self.w.writes.audit.note_write(&self.bmc.name);
                    self.record_stage("unknown", json!(crate::error::report(&e)))?;
                } else {
                    marker::remove(&judged.marker);
                    self.record_stage("error", json!(crate::error::report(&e)))?;
                }
                return Err(e);
            }
            if values.is_empty() {
                return self.staged(judged, &mut marker, None, json!({"job": null, "boot_order": "staged"}));
            }
        }
        let apply_time = &run.options.apply_time;
        let body = redfish_client::request::settings_body(&values, Some(apply_time));
        // At most two PATCHes, and the second only once a read-back proved the first staged
        // nothing: never a duplicate.
        for attempt in 1..=2 {
            self.observer.event(&crate::observe::Event::phase(
                &self.bmc.name,
                Phase::Staging(values.len()),
            ));
            let sending = json!({"attempt": attempt, "phase": "sending"});
            self.w.audit(Step::Stage, body.clone(), "unknown", sending)?;
            let err = match backend
                .pending()
                .stage(&self.bmc.client, &settings, &values, Some(apply_time), etag.as_deref())
                .await
            {
                Ok(s) => {
                    let job = match s.job {
                        Some(j) => Some(j.last_segment().to_owned()),
                        // Some firmware stages without creating a job: find the one it queued.
                        None => open_bios_job(self.bmc).await,
                    };
                    let detail = json!({ "job": job });
                    return self.staged(judged, &mut marker, job, detail);
                }
                Err(e) => e,
            };
            if err.precondition_failed() && etag.is_some() {
                // Staged by someone else since rftune read the settings: nothing of ours is
                // staged, and sending it again would stack on their change.
                marker::remove(&judged.marker);
                return Err(self.stale_settings(err));
            }
            if !err.write_outcome_unknown() {
                // The iDRAC answered no (or nothing reached it): nothing is staged.
                marker::remove(&judged.marker);
                let e = self.bmc.explain(err, "staging BIOS values");
                self.record_stage("error", json!(crate::error::report(&e)))?;
                return Err(e);
            }
            // The PATCH may have been applied, but its answer was lost: keep the marker and look.
            if let Some(job) = self.after_lost_answer(judged, &mut marker, err, attempt).await? {
                return Ok(job);
            }
        }
        // The second attempt returns on every path above.
        Ok(None)
    }

    /// After a PATCH whose answer was lost (`err`): what is pending is read back. Our values
    /// pending: staged (with their job). Nothing pending after the first attempt: `None`, send
    /// again. Anything else, or nothing after the second: an error that says what is known.
    async fn after_lost_answer(
        &self,
        judged: &Judged,
        marker: &mut Marker,
        err: redfish_client::Error,
        attempt: u32,
    ) -> Result<Option<Option<String>>> {
        let err = self.bmc.explain(err, "staging BIOS values");
        self.record_stage("unknown", json!(crate::error::report(&err)))?;
        self.observer
            .event(&crate::observe::Event::phase(&self.bmc.name, Phase::ReadingBack));
        let (values, _) = crate::write::order::split(&self.bmc.backend(), &judged.plan.bios);
        match staged_state(self.bmc, &values).await {
            Ok(ReadBack::Ours(job)) => {
                let detail = json!({"job": job, "confirmed": "read back"});
                self.staged(judged, marker, job, detail).map(Some)
            }
            Ok(ReadBack::Nothing) if attempt == 1 => {
                self.record_stage("error", json!("read back: nothing was staged"))?;
                Ok(None)
            }
            Ok(ReadBack::Nothing) => {
                marker::remove(&judged.marker);
                Err(err.context("the read-back shows nothing staged; no further attempt"))
            }
            Ok(ReadBack::Other(desc)) => {
                marker::remove(&judged.marker);
                self.record_stage("error", json!(format!("read back: {desc}")))?;
                let message = format!(
                    "after a lost answer to the BIOS PATCH, {desc} is pending, which is not what rftune sent; inspect it with `rftune jobs list --bmc {}`",
                    self.bmc.client.base_url().as_str().trim_end_matches('/')
                );
                Err(HostError::new(&self.bmc.name, HostErrorKind::OutcomeUnknown, message).into())
            }
            Err(read) => {
                self.w.writes.audit.note_write(&self.bmc.name);
                Err(err.context(format!(
                    "the iDRAC may have staged the values, and reading back failed too ({}); rerun `rftune apply`: it adopts the values if they were staged and stages them otherwise",
                    crate::error::report(&read)
                )))
            }
        }
    }

    /// The values are staged with `job`: the marker names it, and the stage is recorded.
    fn staged(
        &self,
        judged: &Judged,
        marker: &mut Marker,
        job: Option<String>,
        detail: Value,
    ) -> Result<Option<String>> {
        marker.job.clone_from(&job);
        marker::write(&judged.marker, marker)?;
        self.record_stage("ok", detail)?;
        Ok(job)
    }

    /// The `ETag` the PATCH carries as `If-Match`: the one read with the pending values, read
    /// again when replacing pending work changed them since.
    async fn settings_etag(&self, judged: &Judged, result: &HostApply) -> Result<Option<String>> {
        let read = judged.assessment.state.settings_etag.clone();
        if read.is_none() || result.replaced.is_none() {
            return Ok(read);
        }
        let settings = self.bmc.settings_id().await?;
        let fresh = self
            .bmc
            .client
            .get_answer::<BiosSettings>(settings.path())
            .await
            .map_err(|e| self.bmc.explain(e, "reading the pending BIOS values again"))?;
        Ok(fresh.etag())
    }

    /// A 412 to the conditional PATCH: the settings changed after they were read.
    fn stale_settings(&self, err: redfish_client::Error) -> crate::Error {
        let again = if self.run.plan.is_some() {
            "run `rftune plan` again"
        } else {
            "run apply again"
        };
        let message = format!(
            "plan is stale for {}: the pending BIOS values changed after rftune read them (the iDRAC refused the PATCH with 412 Precondition Failed, so nothing was staged); {again}",
            self.bmc.name
        );
        let _ = self.record_stage("stale", json!(message));
        HostError {
            host: self.bmc.name.clone(),
            kind: HostErrorKind::Stale,
            message,
            hint: None,
            source: Some(err),
        }
        .into()
    }

    fn record_stage(&self, outcome: &str, detail: Value) -> Result<()> {
        self.w.audit(Step::Stage, Value::Null, outcome, detail)
    }
}

/// The open BIOS configuration job, if any (firmware that stages without naming the job).
async fn open_bios_job(bmc: &Bmc) -> Option<String> {
    let jobs = bmc.backend().jobs()?.list(&bmc.client).await.ok()?;
    jobs.into_iter().find(|j| j.is_open_bios_job()).map(|j| j.id)
}

/// Reads pending BIOS values and jobs to learn whether a PATCH whose answer was lost staged
/// `sent`.
async fn staged_state(bmc: &Bmc, sent: &Attributes) -> Result<ReadBack> {
    let backend = bmc.backend();
    let settings = bmc.settings_id().await?;
    let staged = bmc
        .client
        .get::<BiosSettings>(settings.path())
        .await
        .map_err(|e| bmc.explain(e, "reading back pending BIOS values"))?
        .attributes;
    // A settings object that copies every value (no fixed places: read by links) says what is
    // pending only against the current values.
    let pending = if backend.places().is_some() {
        staged
    } else {
        let current = bmc
            .client
            .bios(&bmc.bios_id().await?)
            .await
            .map_err(|e| bmc.explain(e, "reading back the current BIOS values"))?
            .attributes;
        backend.pending().pending(&current, staged)
    };
    let jobs = match backend.jobs() {
        Some(queue) => queue
            .list(&bmc.client)
            .await
            .map_err(|e| bmc.explain(e, "reading back the job queue"))?,
        None => Vec::new(),
    };
    let open: Vec<&Job> = jobs.iter().filter(|j| j.is_open_bios_job()).collect();
    if pending.is_empty() && open.is_empty() {
        return Ok(ReadBack::Nothing);
    }
    if pending != *sent {
        return Ok(ReadBack::Other(format!("{} BIOS value(s)", pending.len())));
    }
    match open.first() {
        Some(j) => Ok(ReadBack::Ours(Some(j.id.clone()))),
        // A BMC without jobs applies staged values at the next reset by itself.
        None if backend.jobs().is_none() => Ok(ReadBack::Ours(None)),
        // Staged without its job: create the one job the PATCH should have created.
        None => Ok(ReadBack::Ours(Some(crate::jobs::create_bios_job(bmc).await?))),
    }
}
