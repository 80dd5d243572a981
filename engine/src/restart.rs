//! The reboot that operations other than `apply` need (a one-time boot, a BIOS reset to
//! defaults, a BIOS password change, a Secure Boot key reset): the same reboot policy as apply,
//! at most as many hosts rebooting at once as the run allows, the host's return awaited, and
//! each step in the audit log.

use crate::audit::{AuditLog, Step};
use crate::connect::Bmc;
use crate::control::{self, RebootPolicy};
use crate::error::Result;
use crate::interrupt::{self, Interrupted};
use crate::observe::Observer;
use redfish_client::resources::bios::Bios;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How a run reboots its hosts, shared by them.
#[derive(Debug, Clone)]
pub struct Restart {
    /// How to reboot (`None`: the change waits for the host's next reboot).
    pub policy: RebootPolicy,
    /// How long the OS gets to shut down before power is forced off.
    pub graceful_timeout: Duration,
    /// How long the host may take to come back (POST, and a BIOS job in it).
    pub boot_timeout: Duration,
    /// Hosts allowed to be rebooting at once.
    slots: Arc<Semaphore>,
}

impl Restart {
    /// Reboots by `policy`, at most `max_rebooting` hosts at a time; the OS gets
    /// `graceful_timeout`, the host `boot_timeout` to come back.
    pub fn new(policy: RebootPolicy, graceful_timeout: Duration, boot_timeout: Duration, max_rebooting: usize) -> Self {
        Self {
            policy,
            graceful_timeout,
            boot_timeout,
            slots: Arc::new(Semaphore::new(max_rebooting.max(1))),
        }
    }

    /// [`Restart::new`] with the reboot slots of an apply run (`ApplyRun::reboots`), so its
    /// hosts count against the same limit.
    pub fn sharing(
        policy: RebootPolicy,
        graceful_timeout: Duration,
        boot_timeout: Duration,
        slots: Arc<Semaphore>,
    ) -> Self {
        Self {
            policy,
            graceful_timeout,
            boot_timeout,
            slots,
        }
    }

    /// Whether hosts are rebooted at all.
    pub fn reboots(&self) -> bool {
        self.policy != RebootPolicy::None
    }

    /// One of the run's reboot slots, held until the host is back (`None` when hosts are not
    /// rebooted). A stop request while waiting leaves the host untouched.
    pub async fn slot(&self, host: &str) -> Result<Option<OwnedSemaphorePermit>> {
        if !self.reboots() {
            return Ok(None);
        }
        tokio::select! {
            permit = self.slots.clone().acquire_owned() => Ok(permit.ok()),
            _ = interrupt::wait() => Err(Interrupted {
                host: host.to_owned(),
                signal: interrupt::received().unwrap_or(0),
                during: "while waiting for a reboot slot; nothing was sent".into(),
            }
            .into()),
        }
    }

    /// Reboots the host by the policy and waits until it is back (on, out of POST, its BIOS
    /// readable), recording the reboot and the return in `audit`; `why` says what the reboot
    /// applies. Returns the BIOS resource read last, or `None` when the policy is not to reboot.
    pub async fn run(&self, bmc: &Bmc, audit: &AuditLog, observer: &dyn Observer, why: &str) -> Result<Option<Bios>> {
        if !self.reboots() {
            audit.record(
                &bmc.name,
                Step::Reboot,
                Value::Null,
                "skipped",
                json!(format!("{why}: at the next reboot")),
            )?;
            return Ok(None);
        }
        interrupt::check(&bmc.name, "rebooting")?;
        let request = json!({"policy": format!("{:?}", self.policy), "for": why});
        let lost = |kind: redfish_client::resources::computer_system::ResetType, happened: bool| {
            let outcome = if happened { "ok" } else { "unknown" };
            let _ = audit.record(
                &bmc.name,
                Step::Reboot,
                json!({"reset": format!("{kind:?}")}),
                outcome,
                json!("the answer to the reset was lost"),
            );
        };
        // Not interruptible: a reboot rftune started is finished, so the host is not left off.
        match control::reboot(bmc, self.policy, self.graceful_timeout, observer, &lost).await {
            Ok(_) => audit.record(&bmc.name, Step::Reboot, request, "ok", Value::Null)?,
            Err(e) => {
                audit.record(
                    &bmc.name,
                    Step::Reboot,
                    request,
                    "error",
                    json!(crate::error::report(&e)),
                )?;
                return Err(e);
            }
        }
        let back = crate::wait::wait_until_back(bmc, self.boot_timeout, observer).await;
        match &back {
            Ok(_) => audit.record(&bmc.name, Step::Boot, Value::Null, "ok", Value::Null)?,
            Err(e) => audit.record(
                &bmc.name,
                Step::Boot,
                Value::Null,
                "error",
                json!(crate::error::report(e)),
            )?,
        }
        back.map(Some)
    }
}
