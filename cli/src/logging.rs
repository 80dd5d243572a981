//! Log setup: human or JSON lines on stderr, level from -v/-q or `RFTUNE_LOG`.

use crate::args::{GlobalArgs, LogFormat};
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `RFTUNE_LOG` (an `EnvFilter` directive such as
/// `redfish_client=trace`) overrides the flags.
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
    let filter = EnvFilter::try_from_env("RFTUNE_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let result = match args.log_format {
        LogFormat::Text => builder.without_time().try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    // A subscriber may already exist when rftune is driven as a library (tests); keep it.
    drop(result);
}
