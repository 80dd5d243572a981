//! The apply of one host, as a pipeline of named steps over one context (`steps.rs`):
//! recover from an interrupted run → (with `--from-defaults`, a BIOS reset to defaults, seen
//! through) → judge (read, refuse, plan) → pending work (adopt | replace | refuse, the reboot
//! slot) → snapshot → iDRAC attributes → (a BIOS password change) → stage (one BIOS PATCH with
//! an apply time) → reboot (and wait for the job and the host) → verify. Every step is
//! written to the audit log before the next starts; the decisions are pure functions
//! (`decide.rs`).
//!
//! Interruption safety: before staging, rftune writes a marker (`crate::marker`) naming the values
//! it is about to stage. A later run that finds exactly those values pending with a BIOS job
//! still open adopts them instead of staging again, and skips the reset when the host is
//! already in POST — so a run killed at any point converges without a second reboot where none
//! is needed.

pub(crate) mod decide;
mod guard;
mod provision;
mod run;
mod stage;
mod steps;

pub(crate) use run::run_parts;
pub use run::{ApplyOptions, ApplyOutcome, ApplyRun, HostApply};

use crate::connect::Bmc;
use crate::error::Result;
use crate::lifecycle::Operation;
use crate::observe::Observer;
use steps::{Host, Next, Rebooted};

/// Applies the profile to one connected host. Whether it wrote to the host before a failure is
/// [`crate::audit::AuditLog::wrote`] of the run's audit log.
pub async fn apply_host(run: &ApplyRun, bmc: &Bmc, observer: &dyn Observer) -> Result<HostApply> {
    // One run per host: the lock is held from before the first read that leads to a write to
    // the last read-back (a dry run writes nothing and takes none).
    let w = if run.options.dry_run {
        run.writes.dry(bmc, observer)
    } else {
        run.writes.begin(bmc, observer).await?
    };
    // On the heap: the steps' state is large, and callers nest this in futures of their own
    // (a step of a program around the apply), which would otherwise carry all of it on a
    // worker's stack.
    let mut result = Box::pin(apply_steps(&Host::new(run, &w))).await?;
    provision::summarize(&run.options, &mut result);
    Ok(result)
}

/// The steps of [`apply_host`], in order.
async fn apply_steps(host: &Host<'_>) -> Result<HostApply> {
    let settled = host.recover().await?;
    let defaults = host.defaults().await?;
    let mut judged = host.judge(settled).await?;
    if !host.run.options.dry_run {
        // Read and judged: the backend is recognised, and must be one rftune writes to.
        host.w.writable().await?;
    }
    if let Some(done) = host.hold_to_plan(&mut judged)? {
        return Ok(done);
    }
    let mut result = judged.planned();
    result.defaults = defaults;
    let go = match host.pending(&judged, &mut result).await? {
        Next::Done => {
            host.describe(&judged, &mut result);
            return Ok(result);
        }
        Next::Write(go) => go,
    };
    host.snapshot(&judged, &mut result)?;
    host.write_idrac(&judged.plan).await?;
    let job = match host.password(&judged, &mut result).await? {
        Some(job) => Some(job),
        None => host.stage(&judged, &go, &mut result).await?,
    };
    result.job.clone_from(&job);
    Box::pin(host.before_reboot(&judged, &go, job.as_deref(), &mut result)).await?;
    let finished = Box::pin(finish(host, &judged, go, job, &mut result)).await;
    Box::pin(host.after_reboot(&finished, &mut result)).await?;
    finished.map(|()| result)
}

/// The reboot (with the job and the host's return) and the verification, for a host whose
/// values are staged.
async fn finish(
    host: &Host<'_>,
    judged: &steps::Judged,
    go: steps::Go,
    job: Option<String>,
    result: &mut HostApply,
) -> Result<()> {
    let settled = match host.reboot(judged, go, job, result).await? {
        Rebooted::Left => return Ok(()),
        Rebooted::NotNeeded => None,
        Rebooted::Back(bios) => Some(*bios),
    };
    crate::marker::remove(&judged.marker);
    host.password_in_force(judged, settled.as_ref(), result);
    host.verify(judged, settled, result).await
}

/// Apply as a fleet [`Operation`]: [`apply_host`] on each host, within the lifecycle (and the
/// audit log) of [`crate::lifecycle::Access`].
impl Operation for ApplyRun {
    type Output = HostApply;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<HostApply> {
        apply_host(self, bmc, observer).await
    }
}
