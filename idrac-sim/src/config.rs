//! How an emulated fleet is configured, and the `--latency` / `--fault` syntax:
//! `--latency 50ms` or `20ms..80ms`; `--fault KIND[:RATE][@SELECTOR]` with KIND one of `503`,
//! `reset`, `timeout`, `malformed`, `session-expiry`, `stuck-job`, `job-fails`, `no-return`,
//! `post-refuses`,
//! RATE a probability (per request for request faults, per host for host faults), SELECTOR
//! `10%` of the hosts or an index list such as `0,3,5-7`.

use std::collections::BTreeSet;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// Which fixture tree to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// One of the embedded trees: `r7625`, `r7525`, `c6615`.
    Builtin(String),
    /// A directory holding `redfish/v1/...` (DMTF mockup layout).
    Dir(PathBuf),
}

impl FromStr for ModelSource {
    type Err = std::convert::Infallible;

    /// A known model name selects the embedded tree; anything else is a directory.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        if crate::fixture::builtin_models().contains(&lower.as_str()) {
            Ok(Self::Builtin(lower))
        } else {
            Ok(Self::Dir(PathBuf::from(s)))
        }
    }
}

/// Everything that shapes an emulated fleet.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The fixture tree.
    pub model: ModelSource,
    /// How many hosts of `model`, on consecutive ports from `listen`.
    pub hosts: usize,
    /// Further hosts of other models, each group after the one before on the next ports
    /// (a mixed fleet: Dell and HPE side by side). Empty for a fleet of one model.
    pub more: Vec<(ModelSource, usize)>,
    /// Address of the first host; port 0 picks a free range.
    pub listen: SocketAddr,
    /// Serve HTTPS with a generated iDRAC-like certificate (else plain HTTP).
    pub tls: bool,
    /// Duration of the simulated POST after a reset.
    pub boot_time: Duration,
    /// Added delay per request.
    pub latency: Option<Latency>,
    /// Injected faults.
    pub faults: Vec<FaultSpec>,
    /// Seed of every random choice (latency, faults, power noise, tokens).
    pub seed: u64,
    /// Accepted account.
    pub username: String,
    /// Accepted password.
    pub password: String,
    /// Idle time after which a session expires.
    pub session_timeout: Duration,
    /// Open sessions allowed per host (RAC0218 beyond).
    pub session_limit: usize,
    /// Whether the "operating system" honours GracefulShutdown/GracefulRestart.
    pub graceful_os: bool,
    /// Log one event per request (service tag, method, URI, status) on the `tracing` target
    /// [`REQUEST_LOG`](crate::server::REQUEST_LOG), at `INFO`; the emulator prints nothing.
    pub log_requests: bool,
    /// Every host starts with System Lockdown on (`Lockdown.1.SystemLockdown = Enabled`).
    pub lockdown: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            model: ModelSource::Builtin("r7625".into()),
            hosts: 1,
            more: Vec::new(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: true,
            boot_time: Duration::from_secs(5),
            latency: None,
            faults: Vec::new(),
            seed: 0,
            username: "root".into(),
            password: "calvin".into(),
            session_timeout: Duration::from_secs(300),
            session_limit: 16,
            graceful_os: true,
            log_requests: false,
            lockdown: false,
        }
    }
}

impl SimConfig {
    /// Every host of the fleet: `hosts` of `model`, then each group of `more`.
    pub fn total_hosts(&self) -> usize {
        self.hosts + self.more.iter().map(|(_, n)| n).sum::<usize>()
    }
}

/// Added per-request delay: fixed or uniform in a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    /// Shortest delay.
    pub min: Duration,
    /// Longest delay.
    pub max: Duration,
}

/// A malformed `--latency` or `--fault` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(String);

impl FromStr for Latency {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parse = |t: &str| {
            humantime::parse_duration(t.trim())
                .map_err(|e| SpecError(format!("latency {s:?}: {e} (expected e.g. 50ms or 20ms..80ms)")))
        };
        let (min, max) = match s.split_once("..") {
            Some((a, b)) => (parse(a)?, parse(b)?),
            None => {
                let d = parse(s)?;
                (d, d)
            }
        };
        if min > max {
            return Err(SpecError(format!("latency {s:?}: the range is reversed")));
        }
        Ok(Self { min, max })
    }
}

/// What can go wrong on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// `503`: 503 Service Unavailable with `Retry-After: 1` (per request).
    Unavailable,
    /// `reset`: the connection drops in the middle of the response (per request).
    Reset,
    /// `timeout`: the response never comes (per request).
    Timeout,
    /// `malformed`: a 200 whose JSON is cut short (per request).
    Malformed,
    /// `session-expiry`: the session used is dropped and the request gets 401 (per request).
    SessionExpiry,
    /// `stuck-job`: BIOS jobs stay Scheduled with PR30 and never run (per host).
    StuckJob,
    /// `job-fails`: BIOS jobs fail during POST, applying nothing (per host); an iLO's POST
    /// processes none of its settings objects.
    JobFails,
    /// `no-return`: after a reset the host never finishes POST (per host).
    NoReturn,
    /// `post-refuses`: the POST that applies staged BIOS values leaves the first of them (by
    /// name) as it was: an iLO names it in `@Redfish.Settings.Messages` (and refuses a boot
    /// order written to its boot settings the same way), an iDRAC's BIOS job still completes
    /// (per host).
    PostRefuses,
}

impl FaultKind {
    /// Whether RATE is drawn per request (else per host).
    pub fn per_request(self) -> bool {
        matches!(
            self,
            Self::Unavailable | Self::Reset | Self::Timeout | Self::Malformed | Self::SessionExpiry
        )
    }

    const NAMES: [(&'static str, Self); 9] = [
        ("503", Self::Unavailable),
        ("reset", Self::Reset),
        ("timeout", Self::Timeout),
        ("malformed", Self::Malformed),
        ("session-expiry", Self::SessionExpiry),
        ("stuck-job", Self::StuckJob),
        ("job-fails", Self::JobFails),
        ("no-return", Self::NoReturn),
        ("post-refuses", Self::PostRefuses),
    ];
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Self::NAMES.iter().find(|(_, k)| k == self).map_or("?", |(n, _)| n);
        f.write_str(name)
    }
}

/// Which hosts a fault applies to.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    /// Every host.
    All,
    /// This share of the hosts (0–100), picked with `--seed`.
    Percent(f64),
    /// These hosts, by 0-based index (written 1-based, as in the hosts' names: `@1` is the
    /// host named `…-0001`).
    Indices(BTreeSet<usize>),
}

/// One `--fault` value.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    /// What goes wrong.
    pub kind: FaultKind,
    /// Probability per request or per host (1 = always).
    pub rate: f64,
    /// Where.
    pub selector: Selector,
}

impl FromStr for FaultSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            SpecError(format!(
                "fault {s:?}: {why} (expected KIND[:RATE][@SELECTOR], e.g. 503:0.1@10% or 503:10%)"
            ))
        };
        let (head, selector) = match s.split_once('@') {
            Some((h, sel)) => (h, parse_selector(sel).map_err(|w| bad(&w))?),
            None => (s, Selector::All),
        };
        let (kind, rate) = match head.split_once(':') {
            Some((k, r)) => {
                // 0.1 and 10% mean the same.
                let (number, scale) = match r.trim().strip_suffix('%') {
                    Some(p) => (p, 100.0),
                    None => (r.trim(), 1.0),
                };
                let rate: f64 = number
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| bad("RATE must be a number between 0 and 1, or a percentage"))?
                    / scale;
                (k, rate)
            }
            None => (head, 1.0),
        };
        if !(0.0..=1.0).contains(&rate) {
            return Err(bad("RATE must be between 0 and 1"));
        }
        let kind = FaultKind::NAMES
            .iter()
            .find(|(n, _)| *n == kind.trim())
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = FaultKind::NAMES.iter().map(|(n, _)| *n).collect();
                bad(&format!("unknown kind; known: {}", names.join(", ")))
            })?;
        Ok(Self { kind, rate, selector })
    }
}

fn parse_selector(s: &str) -> Result<Selector, String> {
    let s = s.trim();
    if let Some(p) = s.strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| "SELECTOR percentage is not a number".to_owned())?;
        if !(0.0..=100.0).contains(&v) {
            return Err("SELECTOR percentage must be within 0..100".into());
        }
        return Ok(Selector::Percent(v));
    }
    let mut set = BTreeSet::new();
    for part in s.split(',') {
        let part = part.trim();
        // Host numbers as in the hosts' names (1 is r7625-0001), kept 0-based inside.
        let num = |t: &str| match t.trim().parse::<usize>() {
            Ok(0) => Err(format!(
                "SELECTOR {part:?}: hosts are numbered from 1, as in their names (1 is the host named …-0001)"
            )),
            Ok(n) => Ok(n - 1),
            Err(_) => Err(format!("SELECTOR {part:?} is not a host number")),
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("SELECTOR range {part:?} is reversed"));
                }
                set.extend(a..=b);
            }
            None => {
                set.insert(num(part)?);
            }
        }
    }
    Ok(Selector::Indices(set))
}

impl Selector {
    /// The hosts selected out of `hosts`, deterministic for a seed.
    pub fn hosts(&self, hosts: usize, seed: u64) -> BTreeSet<usize> {
        match self {
            Self::All => (0..hosts).collect(),
            Self::Indices(set) => set.iter().copied().filter(|&i| i < hosts).collect(),
            Self::Percent(p) => {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss
                )]
                let count = ((hosts as f64) * p / 100.0).round() as usize;
                let mut order: Vec<usize> = (0..hosts).collect();
                fastrand::Rng::with_seed(seed ^ 0x5eed_f417).shuffle(&mut order);
                order.into_iter().take(count).collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_forms() {
        assert_eq!(
            "50ms".parse::<Latency>(),
            Ok(Latency {
                min: Duration::from_millis(50),
                max: Duration::from_millis(50)
            })
        );
        let r: Latency = "20ms..80ms".parse().unwrap();
        assert_eq!((r.min, r.max), (Duration::from_millis(20), Duration::from_millis(80)));
        assert!("80ms..20ms".parse::<Latency>().is_err());
        assert!("fast".parse::<Latency>().is_err());
    }

    #[test]
    fn fault_forms() {
        let f: FaultSpec = "503".parse().unwrap();
        assert_eq!(
            (f.kind, f.rate, f.selector),
            (FaultKind::Unavailable, 1.0, Selector::All)
        );
        let f: FaultSpec = "reset:0.25@10%".parse().unwrap();
        assert_eq!(
            (f.kind, f.rate, f.selector),
            (FaultKind::Reset, 0.25, Selector::Percent(10.0))
        );
        let f: FaultSpec = "malformed:10%".parse().unwrap();
        assert_eq!((f.kind, f.rate), (FaultKind::Malformed, 0.1), "a percentage rate");
        let f: FaultSpec = "stuck-job@1,4,6-8".parse().unwrap();
        assert_eq!(
            f.selector,
            Selector::Indices([0, 3, 5, 6, 7].into_iter().collect()),
            "host numbers as in the names, from 1"
        );
        let err = "stuck-job@0".parse::<FaultSpec>().unwrap_err().to_string();
        assert!(err.contains("numbered from 1"), "{err}");
        for bad in [
            "explode",
            "503:2",
            "503:x",
            "503:150%",
            "reset@7-3",
            "reset@150%",
            "timeout@a",
        ] {
            assert!(bad.parse::<FaultSpec>().is_err(), "{bad}");
        }
        assert!(
            "explode"
                .parse::<FaultSpec>()
                .unwrap_err()
                .to_string()
                .contains("known: 503, reset")
        );
    }

    #[test]
    fn percent_selector_picks_exactly_that_many_deterministically() {
        let s = Selector::Percent(10.0);
        let a = s.hosts(50, 7);
        assert_eq!(a.len(), 5);
        assert_eq!(a, s.hosts(50, 7));
        assert_ne!(a, s.hosts(50, 8));
        assert_eq!(Selector::Indices([1, 99].into_iter().collect()).hosts(10, 0).len(), 1);
    }
}
