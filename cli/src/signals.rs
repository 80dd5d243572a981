//! Ctrl-C and SIGTERM for commands that change hosts (and the exporter): the first asks the engine to stop
//! ([`rftune_engine::interrupt::request`]) and says what happens now; a second stops at once
//! and names the hosts rftune may have left powered off. The process then exits 130 (SIGINT)
//! or 143 (SIGTERM).

use rftune_engine::interrupt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Starts listening for SIGINT and SIGTERM (inside the runtime; later calls do nothing).
pub fn install() -> std::io::Result<()> {
    install_with("starting no new work; finishing reboots in progress so no host is left powered off")
}

/// Like [`install`], saying `then` (what happens after the first signal) instead of the apply's
/// words: the exporter stops checking and serving.
pub fn install_with(then: &'static str) -> std::io::Result<()> {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
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
                if interrupt::request(number) {
                    stop_now(number);
                }
                note!(
                    "rftune: {} received: {then} (signal again to stop at once)",
                    interrupt::signal_name(number)
                );
            }
        });
    }
    Ok(())
}

fn stop_now(number: i32) -> ! {
    let off = interrupt::powered_off_hosts();
    if off.is_empty() {
        note!("rftune: stopping now");
    } else {
        note!(
            "rftune: stopping now. THESE HOSTS MAY BE LEFT POWERED OFF by rftune: {}. Power them on with `rftune power on --bmc URL`, or rerun the apply, which powers them on",
            off.join(", ")
        );
    }
    std::process::exit(128 + number);
}
