//! `rftune power ...` arguments.

use super::common::{LockFlags, TargetArgs, parse_duration};
use std::time::Duration;

/// `rftune power`.
// Help text shows URLs as typed; rustdoc's link markup would leak into `--help`.
#[allow(rustdoc::bare_urls)]
#[derive(Debug, clap::Args)]
pub struct PowerArgs {
    /// Switch hosts on, off or through a power cycle instead of reading.
    #[command(subcommand)]
    pub action: Option<PowerAction>,
    /// The BMC(s) to read: one --bmc, or every host of an --inventory at once (a table of
    /// readings and their total; -o json lists every host, a failed one with its error_kind).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Time between readings when sampling, at least 100ms (the iDRAC sensor itself refreshes
    /// about every 5 s; polling faster only loads the BMC).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Sample for this long (readings at 0, interval, 2×interval, ... up to it); without it, take
    /// one reading.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// What to print: table, json (`rftune.power/v1`), csv (one row per reading) or prometheus
    /// (text exposition format). Default: json with --output json, else table.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<PowerFormat>,
}

/// `rftune power on|off|cycle`.
#[derive(Debug, clap::Subcommand)]
pub enum PowerAction {
    /// Power hosts on (nothing is sent to a host that is already on).
    On(PowerControlArgs),
    /// Shut hosts down: ask the OS (GracefulShutdown), force power off after
    /// --graceful-timeout; --force powers off at once.
    Off(PowerControlArgs),
    /// Power-cycle hosts: shut down as `off` does, then power on; --force restarts at once
    /// (ForceRestart). A host that is off is just powered on.
    Cycle(PowerControlArgs),
}

impl PowerAction {
    /// The options, whichever the action.
    pub fn args(&self) -> &PowerControlArgs {
        match self {
            Self::On(a) | Self::Off(a) | Self::Cycle(a) => a,
        }
    }

    /// `on`, `off` or `cycle`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::On(_) => "on",
            Self::Off(_) => "off",
            Self::Cycle(_) => "cycle",
        }
    }
}

/// Options of `rftune power on|off|cycle`.
#[derive(Debug, clap::Args)]
pub struct PowerControlArgs {
    /// Which hosts.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Do not ask the OS: ForceOff, ForceRestart.
    #[arg(long)]
    pub force: bool,
    /// How long the OS gets to shut down before power is forced off.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub graceful_timeout: Duration,
    /// The host's lock.
    #[command(flatten)]
    pub lock: LockFlags,
}

/// `rftune power --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PowerFormat {
    /// Aligned text.
    Table,
    /// The `rftune.power/v1` document.
    Json,
    /// `host,sensor,t_s,watts` rows.
    Csv,
    /// Prometheus text exposition format.
    Prometheus,
}

/// `--interval`: a duration of at least 100 ms.
fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < Duration::from_millis(100) {
        return Err(format!(
            "--interval {text} polls the BMC too often: give at least 100ms (its power sensor refreshes about every 5 s)"
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sampling_interval_has_a_floor() {
        assert!(parse_interval("0s").unwrap_err().contains("at least 100ms"));
        assert!(parse_interval("50ms").is_err());
        assert_eq!(parse_interval("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_interval("5s"), Ok(Duration::from_secs(5)));
    }
}
