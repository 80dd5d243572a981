//! Ctrl-C and SIGTERM for commands that change hosts (`apply`, `restore`, `power on|off|cycle`).
//!
//! The first signal stops new work: hosts not started stay untouched, a host stops at its next
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

fn signal_name(signal: i32) -> &'static str {
    match signal {
        2 => "SIGINT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// Starts listening for SIGINT and SIGTERM (inside the runtime; later calls do nothing).
pub fn install() -> anyhow::Result<()> {
    static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        tokio::spawn(async move {
            loop {
                let number = tokio::select! {
                    _ = int.recv() => 2,
                    _ = term.recv() => 15,
                };
                if SIGNAL.swap(number, Ordering::SeqCst) != 0 {
                    stop_now(number);
                }
                eprintln!(
                    "rftune: {} received: starting no new work; finishing reboots in progress so no host is left powered off (signal again to stop at once)",
                    signal_name(number)
                );
                notify().notify_waiters();
            }
        });
    }
    Ok(())
}

fn stop_now(number: i32) -> ! {
    let off = POWERED_OFF.lock().map(|s| s.clone()).unwrap_or_default();
    if off.is_empty() {
        eprintln!("rftune: stopping now");
    } else {
        eprintln!(
            "rftune: stopping now. THESE HOSTS MAY BE LEFT POWERED OFF by rftune: {}. Power them on with `rftune power on --bmc URL`, or rerun the apply, which powers them on",
            off.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    std::process::exit(128 + number);
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
