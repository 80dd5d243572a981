//! How long work reports where it is: the engine sends [`Event`]s to an [`Observer`] the
//! caller supplies (the command line draws a progress bar or prints a line per phase; a
//! provisioning program may log them or ignore them with [`Silent`]). The engine never prints.

use crate::backend::AttributeGroup;
use std::fmt;

/// Receives the engine's progress. Called from many tasks at once; keep it quick.
pub trait Observer: Send + Sync {
    /// One event.
    fn event(&self, event: &Event);
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {
    fn event(&self, _: &Event) {}
}

/// Something happened on a host.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The host's work entered a phase.
    Phase {
        /// The host's name.
        host: String,
        /// What it is doing now.
        phase: Phase,
    },
    /// Something a person must be told even when nothing else is shown: rftune deleted
    /// pending work, or trusted a certificate from now on.
    Notice {
        /// The host's name.
        host: String,
        /// One sentence.
        text: String,
    },
}

impl Event {
    /// A phase event.
    pub fn phase(host: &str, phase: Phase) -> Self {
        Self::Phase {
            host: host.to_owned(),
            phase,
        }
    }

    /// A notice.
    pub fn notice(host: &str, text: impl Into<String>) -> Self {
        Self::Notice {
            host: host.to_owned(),
            text: text.into(),
        }
    }

    /// The host it concerns.
    pub fn host(&self) -> &str {
        match self {
            Self::Phase { host, .. } | Self::Notice { host, .. } => host,
        }
    }
}

impl fmt::Display for Event {
    /// `r7625-01: staging 3 BIOS value(s)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Phase { host, phase } => write!(f, "{host}: {phase}"),
            Self::Notice { host, text } => write!(f, "{host}: {text}"),
        }
    }
}

/// The phases of work on a host, in roughly the order an apply meets them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Phase {
    /// An earlier run left the host powered off mid-reboot; powering it on.
    RecoveringPower,
    /// An earlier run was interrupted; waiting for the host to settle.
    Settling,
    /// Another rftune run holds the host's lock; waiting for it (`--lock-wait`). Says who
    /// holds it, when it has said so.
    WaitingForLock(String),
    /// Reading the host's values.
    Reading,
    /// Writing iDRAC attributes of a group.
    SettingIdrac(AttributeGroup),
    /// Staging this many BIOS values.
    Staging(usize),
    /// A write's answer was lost; reading back what is staged.
    ReadingBack,
    /// A reset was sent (`ForceRestart`, ...).
    Resetting(String),
    /// Asking the OS to shut down.
    ShuttingDown,
    /// Forcing the power off.
    ForcingOff,
    /// Powering on.
    PoweringOn,
    /// A job's state as the BMC reports it.
    Job {
        /// Job id.
        id: String,
        /// Its state (`Running`, `Completed`, ...).
        state: String,
        /// Percent complete.
        percent: u32,
    },
    /// Waiting for the host to come back from a reboot.
    WaitingForHost,
    /// Reading back and comparing with the profile.
    Verifying,
    /// `Bios.ResetBios` sent; the BIOS returns to its defaults at the next POST.
    ResettingBios,
    /// The host is back; waiting for the BIOS to show the reset to defaults finished.
    WaitingForDefaults,
    /// Sending a BIOS password change (never the password).
    ChangingPassword,
    /// Setting a boot override for the next boot.
    SettingBootOverride(String),
    /// Reading power: `done` of `total` readings.
    SamplingPower {
        /// Readings taken.
        done: u32,
        /// Readings planned.
        total: u32,
    },
    /// A hook around the reboot runs (`before-reboot`, `after-verify`, `on-failure`).
    Hook(String),
}

impl Phase {
    /// A stable name for logs and scripts (`staging`, `job`, `verifying`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::RecoveringPower => "recovering_power",
            Self::Settling => "settling",
            Self::WaitingForLock(_) => "waiting_for_lock",
            Self::Reading => "reading",
            Self::SettingIdrac(_) => "setting_idrac",
            Self::Staging(_) => "staging",
            Self::ReadingBack => "reading_back",
            Self::Resetting(_) => "resetting",
            Self::ShuttingDown => "shutting_down",
            Self::ForcingOff => "forcing_off",
            Self::PoweringOn => "powering_on",
            Self::Job { .. } => "job",
            Self::WaitingForHost => "waiting_for_host",
            Self::Verifying => "verifying",
            Self::ResettingBios => "resetting_bios",
            Self::WaitingForDefaults => "waiting_for_defaults",
            Self::ChangingPassword => "changing_password",
            Self::SettingBootOverride(_) => "setting_boot_override",
            Self::SamplingPower { .. } => "sampling_power",
            Self::Hook(_) => "hook",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RecoveringPower => f.write_str("an earlier run left the host powered off; powering it on"),
            Self::Settling => f.write_str("an earlier run was interrupted; waiting for the host to settle"),
            Self::WaitingForLock(holder) => write!(f, "waiting for another rftune run's lock on this host: {holder}"),
            Self::Reading => f.write_str("reading"),
            Self::SettingIdrac(group) => write!(f, "setting iDRAC {group}"),
            Self::Staging(n) => write!(f, "staging {n} BIOS value(s)"),
            Self::ReadingBack => f.write_str("the answer to the PATCH was lost; reading back what is staged"),
            Self::Resetting(kind) => write!(f, "restarting ({kind})"),
            Self::ShuttingDown => f.write_str("asking the OS to shut down"),
            Self::ForcingOff => f.write_str("forcing power off"),
            Self::PoweringOn => f.write_str("powering on"),
            Self::Job { id, state, percent } => write!(f, "job {id} {state} {percent}%"),
            Self::WaitingForHost => f.write_str("waiting for the host to come back"),
            Self::Verifying => f.write_str("verifying"),
            Self::ResettingBios => f.write_str("resetting the BIOS to its defaults (at the next POST)"),
            Self::WaitingForDefaults => f.write_str("waiting for the BIOS to show the reset finished"),
            Self::ChangingPassword => f.write_str("changing the BIOS password"),
            Self::SettingBootOverride(target) => write!(f, "setting a one-time boot from {target}"),
            Self::SamplingPower { done, total } => write!(f, "sampling power: {done}/{total} readings"),
            Self::Hook(phase) => write!(f, "running the {phase} hook"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_as_one_line_per_host() {
        let e = Event::phase("r1", Phase::Staging(3));
        assert_eq!(e.to_string(), "r1: staging 3 BIOS value(s)");
        let job = Event::phase(
            "r1",
            Phase::Job {
                id: "JID_1".into(),
                state: "Running".into(),
                percent: 40,
            },
        );
        assert_eq!(job.to_string(), "r1: job JID_1 Running 40%");
        assert_eq!(job.host(), "r1");
    }
}
