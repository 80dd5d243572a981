//! Stopping work that changes hosts (`apply`, `restore`, `power on|off|cycle`) when asked:
//! the command line turns SIGINT and SIGTERM into [`request`]; a library caller may call it too.
//!
//! The first request stops new work: hosts not started stay untouched, a host stops at its next
//! step boundary (before a snapshot, a PATCH or a reboot), and waits for a job or a boot end
//! with the job left to run on the BMC. A reboot in progress is finished, so no host that
//! rftune powered off is left off. Every host still logs out, gets its audit record and a line
//! in the summary; the process exits 130 (SIGINT) or 143 (SIGTERM). A second signal stops at
//! once and names the hosts that may be left powered off.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};

static SIGNAL: AtomicI32 = AtomicI32::new(0);
static POWERED_OFF: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn notify() -> &'static tokio::sync::Notify {
    static NOTIFY: OnceLock<tokio::sync::Notify> = OnceLock::new();
    NOTIFY.get_or_init(tokio::sync::Notify::new)
}

/// The work stopped because of a signal.
#[derive(Debug, thiserror::Error)]
#[error("{host}: interrupted by {} {during}", signal_name(*signal))]
pub struct Interrupted {
    /// The host.
    pub host: String,
    /// The signal number.
    pub signal: i32,
    /// Where it stopped (`before staging`, `while waiting for job JID_1; it continues on the BMC`).
    pub during: String,
}

/// Asks running work to stop, as a signal numbered `signal` would (2 SIGINT, 15 SIGTERM): no
/// new host starts, each host stops at its next step boundary. Returns whether a stop had been
/// requested before (a caller may then stop at once, naming [`powered_off_hosts`]).
pub fn request(signal: i32) -> bool {
    let before = SIGNAL.swap(signal, Ordering::SeqCst) != 0;
    notify().notify_waiters();
    before
}

/// The hosts rftune powered off during a reboot and has not powered on yet.
pub fn powered_off_hosts() -> Vec<String> {
    POWERED_OFF
        .lock()
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default()
}

/// The name of a signal number, for messages.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// The signal received, if any.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}

/// The exit code for the signal received: 130 or 143.
pub fn exit_code() -> Option<u8> {
    received().and_then(|n| u8::try_from(128 + n).ok())
}

/// An error if a signal arrived: call at step boundaries, before work that changes the host.
pub fn check(host: &str, before: &str) -> Result<(), Interrupted> {
    match received() {
        Some(signal) => Err(Interrupted {
            host: host.to_owned(),
            signal,
            during: format!("before {before}; nothing of that was sent"),
        }),
        None => Ok(()),
    }
}

/// Resolves when a signal arrives (at once if one already did).
pub async fn wait() -> i32 {
    loop {
        let notified = notify().notified();
        if let Some(n) = received() {
            return n;
        }
        notified.await;
    }
}

/// Notes that rftune powered `host` off and has not powered it on yet (named if rftune is
/// stopped at once).
pub fn powered_off(host: &str, off: bool) {
    if let Ok(mut set) = POWERED_OFF.lock() {
        if off {
            set.insert(host.to_owned());
        } else {
            set.remove(host);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interruptions_name_the_host_the_signal_and_the_step() {
        let e = Interrupted {
            host: "r1".into(),
            signal: 15,
            during: "before staging; nothing of that was sent".into(),
        };
        assert_eq!(
            e.to_string(),
            "r1: interrupted by SIGTERM before staging; nothing of that was sent"
        );
    }
}
