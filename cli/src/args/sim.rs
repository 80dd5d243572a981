//! Arguments of `rftune sim`: which models, how many hosts of each, and how they behave.

use super::common::parse_duration;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::str::FromStr;

/// `--hosts`: a count of one model's hosts, or each model of a mixed fleet with its count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hosts {
    /// N hosts of --model (or --fixture).
    Count(usize),
    /// `MODEL=N,...`: each model (a built-in name or a directory) with its count, in order.
    Mix(Vec<(String, usize)>),
}

impl Hosts {
    /// How many hosts in all.
    pub fn total(&self) -> usize {
        match self {
            Self::Count(n) => *n,
            Self::Mix(groups) => groups.iter().map(|(_, n)| n).sum(),
        }
    }
}

impl FromStr for Hosts {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let count = |t: &str, what: &str| {
            t.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{what}: {t:?} is not a count of hosts (1 or more)"))
        };
        if !s.contains('=') {
            return count(s, "--hosts").map(Self::Count);
        }
        let mut groups = Vec::new();
        for part in s.split(',') {
            let Some((model, n)) = part.rsplit_once('=') else {
                return Err(format!(
                    "--hosts {s:?}: {part:?} names no count (expected MODEL=N, e.g. r7625=2,dl385=2)"
                ));
            };
            let model = model.trim();
            if model.is_empty() {
                return Err(format!("--hosts {s:?}: {part:?} names no model"));
            }
            groups.push((model.to_owned(), count(n, &format!("--hosts {model}"))?));
        }
        Ok(Self::Mix(groups))
    }
}

/// `rftune sim`.
#[derive(Debug, ClapArgs)]
pub struct SimArgs {
    /// Built-in model: r7625 (Genoa), r7525 (Milan), c6615 (Siena), r7725 (Turin, a 17G host on
    /// iDRAC10), dl385 (an HPE ProLiant DL385 Gen10 Plus v2 with Milan, on iLO 5); for a
    /// directory use --fixture, for several models --hosts MODEL=N,...
    #[arg(long, default_value = "r7625", value_name = "MODEL")]
    pub model: String,
    /// Serve this tree instead of a built-in model: any directory laid out as
    /// DIR/redfish/v1/<path>/index.json (the fixtures, a `rftune capture`, a public Redfish
    /// mockup such as an iLO's: the system is the first member of its Systems collection).
    // The doc comment is the --help text, where `<path>` is meant literally.
    #[allow(rustdoc::invalid_html_tags)]
    #[arg(long, value_name = "DIR", conflicts_with = "model")]
    pub fixture: Option<PathBuf>,
    /// Start every host with System Lockdown on (Lockdown.1.SystemLockdown = Enabled): BIOS and
    /// iDRAC writes are refused (SYS406) until that attribute is set to Disabled.
    #[arg(long)]
    pub lockdown: bool,
    /// Emulated hosts, on consecutive ports from the --listen port: N of --model (or of
    /// --fixture), or a mixed fleet MODEL=N,MODEL=N,... (a built-in model or a tree's
    /// directory each), numbered on through the fleet: --hosts r7625=2,dl385=2 serves
    /// r7625-0001, r7625-0002, dl385-0003 and dl385-0004.
    #[arg(long, default_value = "1", value_name = "N|MODEL=N,...")]
    pub hosts: Hosts,
    /// Address of the first host; port 0 picks a free range.
    #[arg(long, default_value = "127.0.0.1:9001", value_name = "ADDR:PORT")]
    pub listen: std::net::SocketAddr,
    /// Serve plain HTTP instead of HTTPS.
    #[arg(long)]
    pub http: bool,
    /// How long the simulated POST takes after a reset (the BIOS job runs during it).
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = parse_duration)]
    pub boot_time: std::time::Duration,
    /// Delay added to every request: 50ms, or a range 20ms..80ms.
    #[arg(long, value_name = "DURATION[..DURATION]")]
    pub latency: Option<idrac_sim::Latency>,
    /// Inject a fault, KIND[:RATE][@SELECTOR] (repeatable). KIND: 503, reset, timeout,
    /// malformed, session-expiry (RATE per request); stuck-job, job-fails, no-return,
    /// post-refuses (the POST leaves the first staged BIOS value as it was) (RATE per host).
    /// SELECTOR: 10% of the hosts, or host numbers as in their names (1 is …-0001),
    /// like 1,4,6-8.
    #[arg(long = "fault", value_name = "SPEC")]
    pub faults: Vec<idrac_sim::FaultSpec>,
    /// Seed for latency, faults and power noise.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the hosts to this inventory file (the format every --inventory command reads).
    #[arg(long, value_name = "FILE")]
    pub write_inventory: Option<PathBuf>,
    /// The emulator's account name.
    #[arg(long, default_value = "root")]
    pub username: String,
    /// The emulator's account password (a test credential, not a secret).
    #[arg(long, env = "RFTUNE_SIM_PASSWORD", default_value = "calvin", hide_env_values = true)]
    pub password: String,
    /// Idle time after which a session expires.
    #[arg(long, default_value = "300s", value_name = "DURATION", value_parser = parse_duration)]
    pub session_timeout: std::time::Duration,
    /// Open sessions allowed per host (RAC0218 beyond).
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub session_limit: usize,
    /// The emulated OS ignores GracefulShutdown and GracefulRestart.
    #[arg(long)]
    pub os_ignores_graceful: bool,
    /// Print each request on stderr.
    #[arg(long)]
    pub log_requests: bool,
    /// Stop by itself after this long (tests and scripts use it so nothing outlives them).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub exit_after: Option<std::time::Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_is_a_count_or_models_with_their_counts() {
        assert_eq!("3".parse::<Hosts>(), Ok(Hosts::Count(3)));
        assert_eq!(
            "r7625=2,dl385=1".parse::<Hosts>(),
            Ok(Hosts::Mix(vec![("r7625".into(), 2), ("dl385".into(), 1)]))
        );
        assert_eq!(
            "/srv/mockups/ilo=1".parse::<Hosts>().map(|h| h.total()),
            Ok(1),
            "a directory is a model too"
        );
        for bad in ["0", "x", "r7625=0", "r7625=", "=2", "r7625=2,dl385"] {
            assert!(bad.parse::<Hosts>().is_err(), "{bad}");
        }
    }
}
