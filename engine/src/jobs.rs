//! Job and pending-value housekeeping on one BMC — the queue listed, one job deleted, the
//! queue cleared, pending BIOS values cleared: what `apply --replace-pending` does implicitly.
//! The writes go through the writer's pipeline (the host's lock, a backend rftune writes to,
//! the audit log whether they worked or not), so they cannot delete another run's job under
//! its feet.

use crate::audit::Step;
use crate::backend::{Backend, Job, QueueClear};
use crate::connect::Bmc;
use crate::error::Result;
use crate::lifecycle::Operation;
use crate::observe::Observer;
use crate::write::{Writer, Writes};
use redfish_client::resources::bios::Attributes;
use serde_json::{Value, json};

/// The BMC's job queue, finished jobs included.
pub async fn list(bmc: &Bmc) -> Result<Vec<Job>> {
    let backend = bmc.backend();
    let queue = bmc.require(&backend, Backend::jobs, "job queue")?;
    match queue.list(&bmc.client).await {
        Ok(jobs) => Ok(jobs),
        Err(e) => {
            let err = bmc.explain(e, "reading the job queue");
            Err(bmc.presumed_failure(err, |b| b.jobs().is_some(), "job queue").await)
        }
    }
}

/// Creates the BIOS configuration job for values staged without one, returning its id.
pub async fn create_bios_job(bmc: &Bmc) -> Result<String> {
    let backend = bmc.backend();
    let queue = bmc.require(&backend, Backend::jobs, "job queue")?;
    let link = queue
        .create_bios_job(&bmc.client)
        .await
        .map_err(|e| bmc.explain(e, "creating the BIOS job for the staged values"))?;
    Ok(link.last_segment().to_owned())
}

/// A housekeeping write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Housekeeping {
    /// Delete one job (a BIOS job's pending values go with it).
    Delete(String),
    /// Clear the whole queue; `true` also restarts the BMC's job services (a last resort for a
    /// queue that will not clear).
    ClearQueue(bool),
    /// Clear the pending BIOS values (refused by the BMC while a BIOS job holds them).
    ClearPending,
}

impl Housekeeping {
    /// Carries out the write under the host's writer `w`, recorded whether it worked or not.
    pub async fn run(&self, w: &Writer<'_>) -> Result<()> {
        w.writable().await?;
        let bmc = w.bmc;
        let backend = bmc.backend();
        let (step, request, result) = match self {
            Self::Delete(job) => {
                let queue = bmc.require(&backend, Backend::jobs, "job queue")?;
                let done = queue
                    .delete(&bmc.client, job)
                    .await
                    .map(drop)
                    .map_err(|e| bmc.explain(e, &format!("deleting job {job}")));
                (Step::DeleteJob, json!({ "job": job }), done)
            }
            Self::ClearQueue(force) => {
                let queue = bmc.require(&backend, Backend::jobs, "job queue")?;
                let what = if *force { QueueClear::AllForce } else { QueueClear::All };
                let done = queue
                    .clear(&bmc.client, &what)
                    .await
                    .map(drop)
                    .map_err(|e| bmc.explain(e, "clearing the job queue"));
                (Step::ClearJobQueue, json!({ "force": force }), done)
            }
            // A backend that lists only what is staged discards without being told the values;
            // on one whose settings object mirrors every value (an iLO), what differs is read
            // first and its current values written back, and nothing is sent when nothing does.
            Self::ClearPending if backend.places().is_some() => (
                Step::ClearPending,
                Value::Null,
                w.clear_values(&Attributes::new()).await,
            ),
            // A boot order such a backend keeps apart from the BIOS (an iLO's) gets its order in
            // force back too.
            Self::ClearPending => {
                let pending = w.pending().await?;
                let names: Vec<&String> = pending.values.keys().collect();
                let values = if pending.values.is_empty() {
                    Ok(())
                } else {
                    w.clear_against(&pending.values, pending.bios.as_ref()).await
                };
                let order = match values {
                    Ok(()) => w.clear_order(pending.bios.as_ref()).await,
                    Err(e) => Err(e),
                };
                let request = json!({ "attributes": names, "boot_order": order.as_ref().ok() });
                (Step::ClearPending, request, order.map(drop))
            }
        };
        match &result {
            Ok(()) => w.audit(step, request, "ok", Value::Null)?,
            Err(e) => w.audit(step, request, "error", Value::String(crate::error::report(e)))?,
        }
        result
    }
}

/// A housekeeping write as a fleet [`Operation`]: the service root read first (the backend is
/// known before anything is written), then the write under the host's lock.
#[derive(Debug)]
pub struct Keep {
    /// What to do.
    pub action: Housekeeping,
    /// How its hosts are written to (the lock, the audit log).
    pub writes: Writes,
}

impl Operation for Keep {
    type Output = ();

    fn reads_service_root_first(&self) -> bool {
        true
    }

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<()> {
        let w = self.writes.begin(bmc, observer).await?;
        self.action.run(&w).await
    }
}

/// Listing the job queue as a fleet [`Operation`].
#[derive(Debug, Clone, Copy, Default)]
pub struct List;

impl Operation for List {
    type Output = Vec<Job>;

    async fn run(&self, bmc: &mut Bmc, _: &dyn Observer) -> Result<Vec<Job>> {
        list(bmc).await
    }
}
