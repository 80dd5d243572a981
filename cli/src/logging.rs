//! Log setup: human or JSON lines on stderr, level from -v/-q or `RFTUNE_LOG`.

use crate::args::{GlobalArgs, LogFormat};
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// The target of warnings about where the password goes (plain HTTP, `--insecure`). They are
/// shown at every verbosity, `-q` and `RFTUNE_LOG` included: quiet must not mean unaware.
pub const SECURITY: &str = rftune_engine::SECURITY_LOG_TARGET;

/// Installs the global subscriber. `RFTUNE_LOG` (an `EnvFilter` directive such as
/// `redfish_client=trace`) overrides the flags, except for [`SECURITY`] warnings.
pub fn init(args: &GlobalArgs) {
    let level = if args.quiet {
        "error"
    } else {
        match args.verbose {
            0 => "warn",
            1 => "debug",
            _ => "trace",
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
        .with_target(false);
    let result = match args.log_format {
        LogFormat::Text => builder.without_time().try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    // A subscriber may already exist when rftune is driven as a library (tests); keep it.
    drop(result);
}
