//! The reboot a change needs, the same for every writer: the reset by the run's policy (a
//! reboot rftune started is finished, so the host is never left off; a reset whose answer was
//! lost is looked for before it is sent again), the wait for the job it runs, and the wait for
//! the host to come back (on, out of POST, its BIOS readable) — the waits interruptible, every
//! step recorded.

use super::Writer;
use crate::audit::Step;
use crate::backend::Job;
use crate::control::{self, RebootPolicy};
use crate::error::Result;
use crate::interrupt;
use redfish_client::resources::bios::Bios;
use redfish_client::resources::computer_system::ResetType;
use serde_json::{Value, json};

impl Writer<'_> {
    /// Reboots the host into what was staged and waits until it is back, waiting for `job` in
    /// between when there is one; `why` says what the reboot applies. `None` when the run does
    /// not reboot (the change applies at the host's next reboot; recorded as skipped).
    pub async fn reboot(&self, why: &str, job: Option<&str>) -> Result<Option<Bios>> {
        if self.options().reboot == RebootPolicy::None {
            let detail = json!(format!("{why}: at the next reboot"));
            self.audit(Step::Reboot, Value::Null, "skipped", detail)?;
            return Ok(None);
        }
        self.check("rebooting")?;
        self.reset(Some(why)).await?;
        if let Some(job) = job {
            self.wait_for_job(job).await?;
        }
        self.wait_back().await.map(Some)
    }

    /// Resets the host by the run's policy, recorded with what it is `for` when said. Not
    /// interruptible: a reboot rftune started is finished, so the host is not left off.
    pub async fn reset(&self, why: Option<&str>) -> Result<()> {
        let opts = self.options();
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
        let mut request = json!({"policy": format!("{:?}", opts.reboot)});
        if let Some(why) = why {
            request["for"] = json!(why);
        }
        match control::reboot(self.bmc, opts.reboot, opts.graceful_timeout, self.observer, &lost).await {
            Ok(_) => self.audit(Step::Reboot, request, "ok", Value::Null),
            Err(e) => {
                let _ = self.audit(Step::Reboot, request, "error", json!(crate::error::report(&e)));
                Err(e)
            }
        }
    }

    /// Waits for `job` to end (a failed or stuck job, or the run's job timeout, is an error);
    /// a stop request leaves it running on the BMC.
    pub async fn wait_for_job(&self, job: &str) -> Result<Job> {
        let timeout = self.options().job_timeout;
        let done = tokio::select! {
            done = crate::wait::wait_for_job(self.bmc, job, timeout, self.observer) => done,
            _ = interrupt::wait() => {
                let e = self.stopped(format!(
                    "while waiting for job {job}; the job continues on the BMC: rerun {} to verify",
                    self.writes.command
                ));
                self.audit(Step::Job, Value::Null, "unknown", json!(e.to_string()))?;
                return Err(e.into());
            }
        }
        .inspect_err(|e| {
            let _ = self.audit(Step::Job, Value::Null, "error", json!(crate::error::report(e)));
        })?;
        let detail = json!({"job": done.id, "state": done.job_state, "message_id": done.message_id});
        self.audit(Step::Job, Value::Null, "ok", detail)?;
        Ok(done)
    }

    /// Waits until the host is back (on, out of POST, its BIOS readable); returns its BIOS
    /// resource as read last. A stop request leaves the host to finish on its own.
    pub async fn wait_back(&self) -> Result<Bios> {
        let timeout = self.options().boot_timeout;
        let back = tokio::select! {
            back = crate::wait::wait_until_back(self.bmc, timeout, self.observer) => back,
            _ = interrupt::wait() => {
                let e = self.stopped(format!(
                    "while waiting for the host to come back; the job continues on the BMC: rerun {} to verify",
                    self.writes.command
                ));
                self.audit(Step::Boot, Value::Null, "unknown", json!(e.to_string()))?;
                return Err(e.into());
            }
        }
        .inspect_err(|e| {
            let _ = self.audit(Step::Boot, Value::Null, "error", json!(crate::error::report(e)));
        })?;
        self.audit(Step::Boot, Value::Null, "ok", Value::Null)?;
        Ok(back)
    }
}
