//! Log setup: human or JSON lines on stderr, level from -v/-q or `RFTUNE_LOG`.

use crate::args::{GlobalArgs, LogFormat};
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// The target of warnings about where the password goes (`--insecure`). They are
/// shown at every verbosity, `-q` and `RFTUNE_LOG` included: quiet must not mean unaware.
pub const SECURITY: &str = rftune_engine::SECURITY_LOG_TARGET;

/// The `tracing` target of the per-host progress lines in `--log-format json` (fields `host`,
/// `phase`).
pub const PROGRESS: &str = "rftune::progress";

static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static JSON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `-q` was given: no progress lines.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether log lines are JSON (`--log-format json`).
pub fn json() -> bool {
    JSON.load(std::sync::atomic::Ordering::Relaxed)
}

/// rftune's own crates: `-v` shows their debug lines, not those of the HTTP stack.
const OURS: [&str; 6] = [
    "rftune",
    "rftune_engine",
    "redfish_client",
    "bios_profiles",
    "host_bench",
    "idrac_sim",
];

/// Installs the global subscriber. `RFTUNE_LOG` (an `EnvFilter` directive such as
/// `redfish_client=trace`) overrides the flags, except for [`SECURITY`] warnings.
pub fn init(args: &GlobalArgs) {
    QUIET.store(args.quiet, std::sync::atomic::Ordering::Relaxed);
    JSON.store(args.log_format == LogFormat::Json, std::sync::atomic::Ordering::Relaxed);
    let ours = |level: &str| OURS.map(|c| format!(",{c}={level}")).concat();
    // The platform verifier logs every rejected certificate at `error`; rftune reports the
    // same failure once, with the fingerprint to pin. Shown from -v on.
    const VERIFIER: &str = "rustls_platform_verifier=off";
    let level = if args.quiet {
        format!("error,{VERIFIER}")
    } else {
        match args.verbose {
            0 => format!("warn,{PROGRESS}=info,{VERIFIER}"),
            1 => format!("warn{}", ours("debug")),
            _ => format!("info{}", ours("trace")),
        }
    };
    let mut filter = EnvFilter::try_from_env("RFTUNE_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    if let Ok(security) = format!("{SECURITY}=warn").parse() {
        filter = filter.add_directive(security);
    }
    // `rftune sim --log-requests` asked for one line per request: show them at any verbosity
    // (the emulator logs nothing on this target without the flag).
    if let Ok(requests) = format!("{}=info", idrac_sim::server::REQUEST_LOG).parse() {
        filter = filter.add_directive(requests);
    }
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // A log line that meets a closed stderr (`rftune … 2>&1 | head`) is dropped: the
        // subscriber would otherwise report it with `eprintln!`, which panics there.
        .log_internal_errors(false)
        .with_target(false);
    let result = match args.log_format {
        LogFormat::Text => builder.without_time().try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    // A subscriber may already exist when rftune is driven as a library (tests); keep it.
    drop(result);
}
