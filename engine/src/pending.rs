//! Work already staged on a host, as the operations that reboot a host besides `apply` meet it
//! (a one-time boot with a reboot, a BIOS reset to defaults, a BIOS password change): they
//! follow apply's rule. Pending values or an open BIOS job rftune did not stage are refused,
//! or deleted with `--replace-pending`; values an earlier `apply` staged ride on the reboot
//! only where the operation says they may (a one-time boot), and are refused otherwise.

use crate::audit::{AuditLog, Step};
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::observe::{Event, Observer};
use redfish_client::oem::dell::{self, DellJob, JobOutcome, JobQueueClear};
use redfish_client::resources::bios::{Attributes, BiosSettings};
use serde_json::{Value, json};
use std::path::Path;

/// What is staged on a host.
#[derive(Debug, Clone, Default)]
pub struct Pending {
    /// Pending BIOS values.
    pub values: Attributes,
    /// Open BIOS jobs (scheduled, running, stuck).
    pub jobs: Vec<DellJob>,
    /// Whether an earlier `apply` of rftune staged exactly these values (its marker says so).
    pub ours: bool,
}

impl Pending {
    /// Whether anything is staged.
    pub fn any(&self) -> bool {
        !self.values.is_empty() || !self.jobs.is_empty()
    }

    /// `BIOS job JID_1 (Scheduled) with pending value(s) A=1`, for messages.
    pub fn describe(&self) -> String {
        let jobs: Vec<String> = self
            .jobs
            .iter()
            .map(|j| format!("{} ({})", j.id, j.job_state))
            .collect();
        let values: Vec<String> = crate::snapshot::without_secrets(&self.values)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        match (jobs.is_empty(), values.is_empty()) {
            (true, true) => "nothing".into(),
            (false, true) => format!("BIOS job {}", jobs.join(", ")),
            (true, false) => format!("{} pending BIOS value(s): {}", values.len(), values.join(", ")),
            (false, false) => format!(
                "BIOS job {} with pending value(s) {}",
                jobs.join(", "),
                values.join(", ")
            ),
        }
    }
}

/// Reads what is staged on the host (pending values and the job queue: two requests, at once),
/// and whether rftune's marker under `state_dir` names exactly these values.
pub async fn read(bmc: &Bmc, state_dir: &Path) -> Result<Pending> {
    let idrac = bmc.client.dell();
    let (values, jobs) = tokio::join!(bmc.client.get::<BiosSettings>(dell::BIOS_SETTINGS), idrac.jobs());
    let values = values
        .map_err(|e| bmc.explain(e, "reading pending BIOS values"))?
        .attributes;
    let jobs: Vec<DellJob> = jobs
        .map_err(|e| bmc.explain(e, "reading the job queue"))?
        .into_iter()
        .filter(DellJob::is_open_bios_job)
        .collect();
    let ours = !values.is_empty()
        && crate::marker::files(state_dir, &bmc.name)
            .iter()
            .filter_map(|f| crate::marker::read(f))
            .any(|m| m.bios == values);
    Ok(Pending { values, jobs, ours })
}

/// What [`settle`] does with rftune's own staged values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// They may ride on the operation's reboot (their job runs at that POST).
    RideAlong,
    /// They are refused like anyone else's (or deleted with `replace`).
    Refuse,
}

/// Deals with `pending` before `what` (`a BIOS reset to defaults`) writes to the host: nothing
/// staged, or rftune's own values where `own` lets them ride, goes on; anything else is
/// refused, or with `replace` its open jobs are deleted (their values with them) and values
/// without a job cleared, each deletion recorded. Returns what was discarded, if anything.
pub async fn settle(
    bmc: &Bmc,
    pending: &Pending,
    own: Own,
    replace: bool,
    audit: &AuditLog,
    observer: &dyn Observer,
    what: &str,
) -> Result<Option<String>> {
    if !pending.any() || (pending.ours && own == Own::RideAlong && !replace) {
        return Ok(None);
    }
    let desc = pending.describe();
    if !replace {
        audit.record(&bmc.name, Step::Pending, Value::Null, "refused", json!(desc))?;
        let whose = if pending.ours {
            " (staged by an earlier rftune apply)"
        } else {
            ""
        };
        let url = bmc.client.base_url().as_str().trim_end_matches('/').to_owned();
        let message = format!(
            "{desc} already staged{whose}; rftune does not put {what} on top of pending work. Inspect it with `rftune jobs list --bmc {url}`, then rerun with --replace-pending to delete it"
        );
        return Err(HostError::new(&bmc.name, HostErrorKind::PendingWork, message).into());
    }
    let idrac = bmc.client.dell();
    for job in &pending.jobs {
        if job.outcome() == JobOutcome::Running {
            let message = format!(
                "BIOS job {} is running; wait for it to finish before replacing it",
                job.id
            );
            return Err(HostError::new(&bmc.name, HostErrorKind::PendingWork, message).into());
        }
        let deleted = match idrac.delete_job(&job.id).await {
            Ok(_) => Ok(()),
            Err(first) => idrac
                .clear_job_queue(&JobQueueClear::Job(job.id.clone()))
                .await
                .map(drop)
                .map_err(|_| first),
        };
        if let Err(e) = deleted {
            audit.record(
                &bmc.name,
                Step::Replace,
                json!({"delete_job": job.id}),
                "error",
                json!(e.to_string()),
            )?;
            return Err(bmc.explain(e, &format!("deleting job {}", job.id)));
        }
        audit.record(
            &bmc.name,
            Step::Replace,
            json!({"delete_job": job.id}),
            "ok",
            Value::Null,
        )?;
        observer.event(&Event::notice(
            &bmc.name,
            format!("deleted BIOS job {} and its pending values (--replace-pending)", job.id),
        ));
    }
    if pending.jobs.is_empty() && !pending.values.is_empty() {
        idrac
            .clear_pending()
            .await
            .map_err(|e| bmc.explain(e, "clearing pending BIOS values"))?;
        audit.record(
            &bmc.name,
            Step::Replace,
            json!({"clear_pending": crate::snapshot::without_secrets(&pending.values)}),
            "ok",
            Value::Null,
        )?;
        observer.event(&Event::notice(
            &bmc.name,
            format!(
                "cleared {} pending BIOS value(s) (--replace-pending)",
                pending.values.len()
            ),
        ));
    }
    Ok(Some(desc))
}
