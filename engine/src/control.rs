//! Power-state control of a host through its BMC: on, off (the OS asked to shut down, power
//! forced off after a timeout), cycle, and the reboot that runs a BIOS job. A reset whose answer
//! was lost may have happened, so the host is looked at before it is sent again; a host rftune
//! powered off is noted until it is on again, so a run stopped at once can name it.

use crate::audit::{AuditLog, Step};
use crate::connect::Bmc;
use crate::error::Result;
use crate::observe::{Event, Observer, Phase};
use crate::wait::{poll_interval, until};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use redfish_client::resources::computer_system::{ComputerSystem, PowerState, ResetType};
use serde_json::{Value, json};
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

/// What `rftune power on|off|cycle` asks of a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerAction {
    /// Power on (nothing to do when it is on).
    On,
    /// Power off: the OS is asked to shut down, unless forced.
    Off,
    /// Power off and on again (on, when it is off).
    Cycle,
}

impl PowerAction {
    /// As the command line and the JSON output spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Cycle => "cycle",
        }
    }

    fn step(self) -> Step {
        match self {
            Self::On => Step::PowerOn,
            Self::Off => Step::PowerOff,
            Self::Cycle => Step::PowerCycle,
        }
    }
}

/// How power actions treat the OS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchOptions {
    /// Skip the OS: force power off, or restart at once.
    pub force: bool,
    /// How long the OS gets to shut down before power is forced off.
    pub graceful_timeout: Duration,
}

/// What a power action did to one host.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Switched {
    /// The host's name.
    pub host: String,
    /// `on`, `off` or `cycle`.
    pub action: &'static str,
    /// The power state before, as the BMC reported it.
    pub before: Option<String>,
    /// What was done: `powered on`, `already on`, `shut down`, `forced off`, `cycled`, ...
    pub result: String,
}

/// Carries out `action` on the host and records it in `audit` (what was done, or why not).
pub async fn switch(
    bmc: &Bmc,
    action: PowerAction,
    options: SwitchOptions,
    audit: &AuditLog,
    observer: &dyn Observer,
) -> Result<Switched> {
    let switched = switch_unrecorded(bmc, action, options, observer).await;
    let (outcome, detail) = match &switched {
        Ok(s) => ("ok", json!(s.result)),
        Err(e) => ("error", json!(crate::error::report(e))),
    };
    audit.record(&bmc.name, action.step(), Value::Null, outcome, detail)?;
    switched
}

async fn switch_unrecorded(
    bmc: &Bmc,
    action: PowerAction,
    options: SwitchOptions,
    observer: &dyn Observer,
) -> Result<Switched> {
    let system = read_system(bmc).await?;
    let before = system.power_state;
    let off = before == Some(PowerState::Off);
    let resets = Resets { bmc, system: &system };
    let result = match (action, off) {
        (PowerAction::On | PowerAction::Cycle, true) => {
            resets.until_state(ResetType::On, PowerState::On).await?;
            "powered on"
        }
        (PowerAction::On, false) => "already on",
        (PowerAction::Off, true) => "already off",
        (PowerAction::Off, false) if options.force => {
            resets.until_state(ResetType::ForceOff, PowerState::Off).await?;
            "forced off"
        }
        (PowerAction::Off, false) => {
            // Asked interactively: look every half second rather than a twentieth of the wait.
            let poll = Duration::from_millis(500);
            match resets.shut_down(options.graceful_timeout, poll, observer).await? {
                ShutDown::ByTheOs => "shut down",
                ShutDown::Forced => "forced off after the graceful timeout",
            }
        }
        (PowerAction::Cycle, false) => {
            let policy = if options.force {
                RebootPolicy::Force
            } else {
                RebootPolicy::Graceful
            };
            reboot(bmc, policy, options.graceful_timeout, observer, &|_, _| {}).await?;
            "cycled"
        }
    };
    Ok(Switched {
        host: bmc.name.clone(),
        action: action.as_str(),
        before: before.map(|p| format!("{p:?}")),
        result: result.to_owned(),
    })
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
enum ShutDown {
    /// The OS shut down within the time it was given.
    ByTheOs,
    /// Power was forced off after that time.
    Forced,
}

/// The resets of one host's system, each whose answer was lost checked before it is resent.
struct Resets<'a> {
    bmc: &'a Bmc,
    system: &'a ComputerSystem,
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
    async fn until_state(&self, kind: ResetType, state: PowerState) -> Result<()> {
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
    async fn shut_down(&self, graceful_timeout: Duration, poll: Duration, observer: &dyn Observer) -> Result<ShutDown> {
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

async fn read_system(bmc: &Bmc) -> Result<ComputerSystem> {
    bmc.client
        .system(&ODataId::new(dell::SYSTEM))
        .await
        .map_err(|e| bmc.explain(e, "reading the system"))
}

/// The host's power state, when the BMC says.
pub async fn power_state(bmc: &Bmc) -> Option<PowerState> {
    bmc.client.system(&ODataId::new(dell::SYSTEM)).await.ok()?.power_state
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
    until(timeout, || async {
        let in_post = bmc.client.dell().lc_status().await.is_ok_and(|lc| lc.in_post());
        in_post || power_state(bmc).await == Some(PowerState::Off)
    })
    .await
}

/// A power action as a fleet [`Operation`](crate::lifecycle::Operation), each host's switch
/// recorded in the run's audit log.
#[derive(Debug, Clone)]
pub struct Switch {
    /// What to do.
    pub action: PowerAction,
    /// How to treat the OS.
    pub options: SwitchOptions,
    /// Where every switch is recorded.
    pub audit: AuditLog,
    /// The host locks to hold while switching (one run per host), if any.
    pub locks: Option<crate::lock::Locks>,
}

impl crate::lifecycle::Operation for Switch {
    type Output = Switched;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Switched> {
        let _lock = match &self.locks {
            Some(locks) => Some(locks.hold(bmc, observer).await.inspect_err(|e| {
                let _ = self.audit.record(
                    &bmc.name,
                    crate::audit::Step::Lock,
                    Value::Null,
                    "refused",
                    json!(crate::error::report(e)),
                );
            })?),
            None => None,
        };
        switch(bmc, self.action, self.options, &self.audit, observer).await
    }
}
