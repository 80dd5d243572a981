//! The host's episodes in progress — POST, a graceful shutdown, an iDRAC or Lifecycle
//! Controller restart — as the state holds them; `timeline` moves them on, `jobs` and
//! `actions` start them.

use std::time::{Duration, Instant};

/// POST in progress: when it started and how far the BIOS job it runs has got.
#[derive(Debug, Clone, Copy)]
pub(super) struct Boot {
    pub(super) started: Instant,
    pub(super) job_started: bool,
    pub(super) job_done: bool,
}

/// A graceful shutdown in progress: when the host goes off, and whether it then starts again.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shutdown {
    pub(super) at: Instant,
    pub(super) then_boot: bool,
}

/// The iDRAC's own services are unavailable: after `Manager.Reset` (the iDRAC reboots: no
/// connection at first, then SWC0700 on the configuration paths) or after `JID_CLEARALL_FORCE`
/// (the Lifecycle Controller restarts: SWC0700, and the Systems collection lists no member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Outage {
    /// Connections are dropped until then (an iDRAC reset only).
    pub(super) down_until: Option<Instant>,
    /// Configuration services answer again from then on.
    pub(super) ready_at: Instant,
}

impl Outage {
    /// An iDRAC reboot: unreachable for half a POST, then not ready for a POST.
    pub(super) fn idrac_reset(now: Instant, boot_time: Duration) -> Self {
        let down_until = now + boot_time / 2;
        Self {
            down_until: Some(down_until),
            ready_at: down_until + boot_time,
        }
    }

    /// A Lifecycle Controller restart: not ready for a POST's length.
    pub(super) fn lc_restart(now: Instant, boot_time: Duration) -> Self {
        Self {
            down_until: None,
            ready_at: now + boot_time,
        }
    }
}
