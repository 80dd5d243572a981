//! The iDRAC's own services: unavailable while the iDRAC or its Lifecycle Controller restarts.

use std::time::{Duration, Instant};

/// What a request to the Systems tree or the iDRAC attributes meets while the iDRAC or its
/// Lifecycle Controller restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Served normally.
    Ready,
    /// The iDRAC is rebooting: the connection is dropped.
    Unreachable,
    /// Configuration services are restarting after an iDRAC reset: 400 SWC0700 everywhere on
    /// those paths, the Systems collection included.
    IdracStarting,
    /// The Lifecycle Controller is restarting: the Systems collection lists no member and its
    /// resources answer 400 SWC0700.
    LcRestarting,
}

/// The iDRAC's own services are unavailable: after `Manager.Reset` (the iDRAC reboots: no
/// connection at first, then SWC0700 on the configuration paths) or after `JID_CLEARALL_FORCE`
/// (the Lifecycle Controller restarts: SWC0700, and the Systems collection lists no member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outage {
    /// Connections are dropped until then (an iDRAC reset only).
    pub(crate) down_until: Option<Instant>,
    /// Configuration services answer again from then on.
    pub(crate) ready_at: Instant,
}

impl Outage {
    /// An iDRAC reboot: unreachable for half a POST, then not ready for a POST.
    pub(crate) fn idrac_reset(now: Instant, boot_time: Duration) -> Self {
        let down_until = now + boot_time / 2;
        Self {
            down_until: Some(down_until),
            ready_at: down_until + boot_time,
        }
    }

    /// An iLO restart: unreachable for half a POST, then ready (iLO has no Lifecycle
    /// Controller to wait for).
    pub(crate) fn ilo_reset(now: Instant, boot_time: Duration) -> Self {
        let down_until = now + boot_time / 2;
        Self {
            down_until: Some(down_until),
            ready_at: down_until,
        }
    }

    /// A Lifecycle Controller restart: not ready for a POST's length.
    pub(crate) fn lc_restart(now: Instant, boot_time: Duration) -> Self {
        Self {
            down_until: None,
            ready_at: now + boot_time,
        }
    }

    /// What a request to the Systems tree or the iDRAC attributes meets at `now`.
    pub(crate) fn availability(outage: Option<Self>, now: Instant) -> Availability {
        match outage {
            None => Availability::Ready,
            Some(o) if o.down_until.is_some_and(|d| now < d) => Availability::Unreachable,
            Some(o) if o.down_until.is_some() => Availability::IdracStarting,
            Some(_) => Availability::LcRestarting,
        }
    }
}
