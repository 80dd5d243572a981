//! Job and pending-value housekeeping on one iDRAC — the queue listed, one job deleted, the
//! queue cleared, pending BIOS values cleared: what `apply --replace-pending` does implicitly,
//! each write recorded in the audit log whether it worked or not.

use crate::audit::{AuditLog, Step};
use crate::connect::Bmc;
use crate::error::Result;
use redfish_client::oem::dell::{DellJob, JobQueueClear};
use serde_json::{Value, json};

/// The iDRAC's job queue, finished jobs included.
pub async fn list(bmc: &Bmc) -> Result<Vec<DellJob>> {
    bmc.client
        .dell()
        .jobs()
        .await
        .map_err(|e| bmc.explain(e, "reading the job queue"))
}

/// Creates the BIOS configuration job for values staged without one (`POST Jobs`), returning
/// its id.
pub async fn create_bios_job(bmc: &Bmc) -> Result<String> {
    let link = bmc
        .client
        .dell()
        .create_bios_job()
        .await
        .map_err(|e| bmc.explain(e, "creating the BIOS job for the staged values"))?;
    Ok(link.last_segment().to_owned())
}

/// Deletes job `job` (a BIOS job's pending values go with it).
pub async fn delete(bmc: &Bmc, job: &str, audit: &AuditLog) -> Result<()> {
    let result = bmc
        .client
        .dell()
        .delete_job(job)
        .await
        .map(drop)
        .map_err(|e| bmc.explain(e, &format!("deleting job {job}")));
    record(audit, bmc, Step::DeleteJob, json!({ "job": job }), result)
}

/// Clears the whole job queue; `force` also restarts the Lifecycle Controller's services (a
/// last resort for a queue that will not clear).
pub async fn clear_queue(bmc: &Bmc, force: bool, audit: &AuditLog) -> Result<()> {
    let what = if force {
        JobQueueClear::AllForce
    } else {
        JobQueueClear::All
    };
    let result = bmc
        .client
        .dell()
        .clear_job_queue(&what)
        .await
        .map(drop)
        .map_err(|e| bmc.explain(e, "clearing the job queue"));
    record(audit, bmc, Step::ClearJobQueue, json!({ "force": force }), result)
}

/// Clears pending BIOS values (refused by the iDRAC while a BIOS job holds them).
pub async fn clear_pending(bmc: &Bmc, audit: &AuditLog) -> Result<()> {
    let result = bmc
        .client
        .dell()
        .clear_pending()
        .await
        .map(drop)
        .map_err(|e| bmc.explain(e, "clearing pending BIOS values"));
    record(audit, bmc, Step::ClearPending, Value::Null, result)
}

/// Records `result` of `step` and hands it back.
fn record(audit: &AuditLog, bmc: &Bmc, step: Step, request: Value, result: Result<()>) -> Result<()> {
    match &result {
        Ok(()) => audit.record(&bmc.name, step, request, "ok", Value::Null)?,
        Err(e) => audit.record(
            &bmc.name,
            step,
            request,
            "error",
            Value::String(crate::error::report(e)),
        )?,
    }
    result
}
