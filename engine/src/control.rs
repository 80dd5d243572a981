//! Power-state control of a host through its BMC, for the writers that need it (`crate::write`,
//! `crate::switch`): on, off (the OS asked to shut down, power forced off after a timeout), and
//! the reboot that runs a BIOS job. A reset whose answer
//! was lost may have happened, so the host is looked at before it is sent again; a host rftune
//! powered off is noted until it is on again, so a run stopped at once can name it.

use crate::connect::Bmc;
use crate::error::Result;
use crate::observe::{Event, Observer, Phase};
use crate::wait::{poll_interval, until};
use redfish_client::resources::computer_system::{ComputerSystem, PowerState, ResetType};
use std::time::{Duration, Instant};

/// How to get the host through the reboot that runs the BIOS job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebootPolicy {
    /// Ask the OS to shut down; force it off after --graceful-timeout; power on.
    Graceful,
    /// Restart at once, without asking the OS.
    Force,
    /// Do not reboot: the job stays scheduled for the next reboot.
    None,
}

/// Reboots the host as `policy` says. Returns `false` when the policy is `None`. `lost` hears
/// of every reset whose answer was lost, and whether the host then showed it happened.
pub async fn reboot(
    bmc: &Bmc,
    policy: RebootPolicy,
    graceful_timeout: Duration,
    observer: &dyn Observer,
    lost: &(dyn Fn(ResetType, bool) + Sync),
) -> Result<bool> {
    if policy == RebootPolicy::None {
        return Ok(false);
    }
    let system = read_system(bmc).await?;
    let resets = Resets { bmc, system: &system };
    let was_off = system.power_state == Some(PowerState::Off);
    if policy == RebootPolicy::Force {
        observer.event(&Event::phase(&bmc.name, Phase::Resetting("ForceRestart".into())));
        let kind = if was_off {
            ResetType::On
        } else {
            ResetType::ForceRestart
        };
        if !resets.send(kind).await? {
            let happened = restart_observed(bmc, Duration::from_secs(20)).await;
            lost(kind, happened);
            if !happened {
                // Nothing shows the reset happened: it was not applied, send it once more.
                resets.send_again(kind).await?;
            }
        }
        return Ok(true);
    }
    if !was_off {
        resets
            .shut_down(graceful_timeout, poll_interval(graceful_timeout), observer)
            .await?;
    }
    observer.event(&Event::phase(&bmc.name, Phase::PoweringOn));
    resets.until_state(ResetType::On, PowerState::On).await?;
    crate::interrupt::powered_off(&bmc.name, false);
    Ok(true)
}

/// How a shutdown ended.
pub(crate) enum ShutDown {
    /// The OS shut down within the time it was given.
    ByTheOs,
    /// Power was forced off after that time.
    Forced,
}

/// The resets of one host's system, each whose answer was lost checked before it is resent.
pub(crate) struct Resets<'a> {
    pub(crate) bmc: &'a Bmc,
    pub(crate) system: &'a ComputerSystem,
}

impl Resets<'_> {
    /// Sends `kind`; `false` when its answer was lost (it may or may not have happened).
    async fn send(&self, kind: ResetType) -> Result<bool> {
        match self.bmc.client.reset(self.system, kind).await {
            Ok(()) => Ok(true),
            Err(e) if e.write_outcome_unknown() => {
                tracing::warn!(
                    "{}: the answer to {kind:?} was lost ({e}); checking whether the host reacted",
                    self.bmc.name
                );
                Ok(false)
            }
            Err(e) => Err(self.bmc.explain(e, &format!("requesting {kind:?}"))),
        }
    }

    /// Sends `kind` once more, a lost answer included as an error.
    async fn send_again(&self, kind: ResetType) -> Result<()> {
        self.bmc
            .client
            .reset(self.system, kind)
            .await
            .map_err(|e| self.bmc.explain(e, &format!("requesting {kind:?} again")))
    }

    /// Sends `kind`; when its answer was lost and the host does not reach `state` soon, once
    /// more.
    pub(crate) async fn until_state(&self, kind: ResetType, state: PowerState) -> Result<()> {
        let wait = if state == PowerState::On {
            Duration::from_secs(20)
        } else {
            Duration::from_secs(10)
        };
        if !self.send(kind).await? && !until(wait, || async { power_state(self.bmc).await == Some(state) }).await {
            self.send_again(kind).await?;
        }
        Ok(())
    }

    /// Asks the OS to shut down, looking every `poll` whether it did; forces power off after
    /// `graceful_timeout`. The host is noted as powered off by rftune from the first request.
    pub(crate) async fn shut_down(
        &self,
        graceful_timeout: Duration,
        poll: Duration,
        observer: &dyn Observer,
    ) -> Result<ShutDown> {
        let name = &self.bmc.name;
        observer.event(&Event::phase(name, Phase::ShuttingDown));
        crate::interrupt::powered_off(name, true);
        // A lost answer needs no resend: the wait below sees whether the OS went down.
        self.send(ResetType::GracefulShutdown).await?;
        let deadline = Instant::now() + graceful_timeout;
        while Instant::now() < deadline {
            if power_state(self.bmc).await == Some(PowerState::Off) {
                return Ok(ShutDown::ByTheOs);
            }
            tokio::time::sleep(poll).await;
        }
        tracing::warn!("{name}: the OS did not shut down within {graceful_timeout:?}; forcing power off");
        observer.event(&Event::phase(name, Phase::ForcingOff));
        self.until_state(ResetType::ForceOff, PowerState::Off).await?;
        Ok(ShutDown::Forced)
    }
}

/// The host's system; on a host whose backend is not recognised yet, at the presumed place
/// first (its answer recognises the backend), else where the recognised backend has it.
pub(crate) async fn read_system(bmc: &Bmc) -> Result<ComputerSystem> {
    if let Some(places) = bmc.backend().places() {
        match bmc.client.system(&places.system).await {
            Ok(system) => {
                bmc.confirm_backend();
                bmc.note_model(system.model.as_deref());
                return Ok(system);
            }
            Err(e) if e.status() != Some(404) || bmc.recognised() => {
                return Err(bmc.explain(e, "reading the system"));
            }
            // Not the presumed iDRAC: the service root says which backend it is.
            Err(_) => {
                bmc.recognise().await?;
            }
        }
    }
    // A host read by its links: the system found before, else the first one (read once).
    if bmc.backend().places().is_none() {
        return bmc.linked_system().await;
    }
    let system_id = bmc.system_id().await?;
    bmc.client
        .system(&system_id)
        .await
        .map_err(|e| bmc.explain(e, "reading the system"))
}

/// The host's power state, when the BMC says.
pub async fn power_state(bmc: &Bmc) -> Option<PowerState> {
    let system_id = bmc.system_id().await.ok()?;
    bmc.client.system(&system_id).await.ok()?.power_state
}

/// Powers the host on.
pub async fn power_on(bmc: &Bmc) -> Result<()> {
    let system = read_system(bmc).await?;
    bmc.client
        .reset(&system, ResetType::On)
        .await
        .map_err(|e| bmc.explain(e, "powering on"))
}

/// Whether the host shows, within `timeout`, that a restart began: it is in POST, or it
/// powered off on the way.
async fn restart_observed(bmc: &Bmc, timeout: Duration) -> bool {
    let backend = bmc.backend();
    until(timeout, || async {
        let in_post = match backend.readiness() {
            Some(readiness) => readiness.in_post(&bmc.client, None).await.unwrap_or(false),
            None => false,
        };
        in_post || power_state(bmc).await == Some(PowerState::Off)
    })
    .await
}
