//! `rftune power on|off|cycle`: a power action on each host, as every writer does it (the
//! host's lock, a backend rftune writes to, the audit log), with the OS asked to shut down
//! unless forced.

use crate::audit::Step;
use crate::connect::Bmc;
use crate::control::{self, RebootPolicy, Resets, ShutDown, reboot};
use crate::error::Result;
use crate::observe::Observer;
use redfish_client::resources::computer_system::{PowerState, ResetType};
use serde_json::{Value, json};
use std::time::Duration;

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

/// Carries out `action` on the host under its writer `w`.
async fn switch_unrecorded(
    w: &crate::write::Writer<'_>,
    action: PowerAction,
    options: SwitchOptions,
) -> Result<Switched> {
    let (bmc, observer) = (w.bmc, w.observer);
    let system = control::read_system(bmc).await?;
    w.writable().await?;
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

/// A power action as a fleet [`Operation`](crate::lifecycle::Operation): each host's switch
/// under its lock, recorded in the run's audit log.
#[derive(Debug)]
pub struct Switch {
    /// What to do.
    pub action: PowerAction,
    /// How to treat the OS.
    pub options: SwitchOptions,
    /// How its hosts are written to (the lock, the audit log).
    pub writes: crate::write::Writes,
}

impl crate::lifecycle::Operation for Switch {
    type Output = Switched;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Switched> {
        let w = self.writes.begin(bmc, observer).await?;
        let switched = switch_unrecorded(&w, self.action, self.options).await;
        let (outcome, detail) = match &switched {
            Ok(s) => ("ok", json!(s.result)),
            Err(e) => ("error", json!(crate::error::report(e))),
        };
        w.audit(self.action.step(), Value::Null, outcome, detail)?;
        switched
    }
}
