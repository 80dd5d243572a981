//! The arguments many commands share: how to reach and authenticate to BMCs (one or a fleet),
//! how a writer applies, reboots, runs hooks and takes the host's lock, and rftune's duration
//! grammar.

use clap::{Args as ClapArgs, ValueEnum};
use std::path::PathBuf;

/// How `apply` and `restore` change a host.
#[derive(Debug, Clone, ClapArgs)]
pub struct ApplyFlags {
    /// Print the plan, and whether it would reboot; change nothing. Exits 2 when changes are
    /// planned (as diff does on drift), 0 when the host is in sync.
    #[arg(long)]
    pub dry_run: bool,
    /// How to reboot into the BIOS job: graceful (then forced after --graceful-timeout),
    /// force, or none (the job stays scheduled for the next reboot).
    #[arg(long, value_enum, default_value_t = RebootArg::Graceful)]
    pub reboot: RebootArg,
    /// How long the OS gets to shut down before power is forced off.
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = parse_duration)]
    pub graceful_timeout: std::time::Duration,
    /// How long the BIOS job may take once the host reboots.
    #[arg(long, default_value = "30m", value_name = "DURATION", value_parser = parse_duration)]
    pub job_timeout: std::time::Duration,
    /// How long the host may take to come back after the job.
    #[arg(long, default_value = "20m", value_name = "DURATION", value_parser = parse_duration)]
    pub boot_timeout: std::time::Duration,
    /// Discard pending BIOS values and delete scheduled BIOS jobs that are in the way (says so).
    #[arg(long)]
    pub replace_pending: bool,
    /// Treat attributes the host's BIOS lacks as errors instead of "not applicable".
    #[arg(long)]
    pub strict: bool,
    /// Hosts that may be rebooting at the same time. A host is staged only once its reboot slot
    /// is granted, so stopping a run leaves the hosts still waiting untouched.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub max_unavailable: usize,
    /// Converge the first N hosts of the inventory first; if any of them fails, touch no other.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub canary: usize,
    /// Start no further host once N hosts have failed (the hosts left are reported as not
    /// started, and untouched).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_failures: Option<usize>,
    /// When staged BIOS values apply: at the reboot rftune performs, or in a maintenance window
    /// (then rftune does not reboot; the job waits for the window).
    #[arg(long, value_enum, default_value_t = ApplyTimeArg::OnReset)]
    pub apply_time: ApplyTimeArg,
    /// Maintenance window start, ISO 8601 in the iDRAC's offset (e.g. 2026-12-01T02:00:00-06:00).
    #[arg(long, value_name = "ISO8601", required_if_eq_any = [("apply_time", "at-maintenance-window-start"), ("apply_time", "in-maintenance-window-on-reset")])]
    pub maintenance_start: Option<String>,
    /// Maintenance window length.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "1h")]
    pub maintenance_duration: std::time::Duration,
    /// The hooks around each host's reboot.
    #[command(flatten)]
    pub hooks: HookFlags,
    /// The host's lock.
    #[command(flatten)]
    pub lock: LockFlags,
}

/// How a fleet's table shows its hosts (`diff`, `plan`, `apply`, `restore`).
#[derive(Debug, Clone, Copy, ClapArgs)]
pub struct LayoutFlags {
    /// One block per host, in inventory order. By default a fleet's table gives hosts whose
    /// results read the same one block (how many, their names, then the changes and warnings
    /// once) and failures one line per cause (each host's own name and address set aside).
    /// -o json and -o jsonl list every host either way.
    #[arg(long)]
    pub per_host: bool,
}

/// The commands every writer that reboots runs around each host's reboot.
#[derive(Debug, Clone, ClapArgs)]
pub struct HookFlags {
    /// A command run for each host once it holds its reboot slot and its values are staged,
    /// before rftune reboots it (e.g. `kubectl drain "$RFTUNE_NODE" --ignore-daemonsets`), at
    /// most --max-unavailable at a time. Run with /bin/sh -c; its environment has RFTUNE_HOST,
    /// RFTUNE_BMC, RFTUNE_SERVICE_TAG, RFTUNE_PROFILE, RFTUNE_PHASE and RFTUNE_NODE (the
    /// inventory's `node`), and no other RFTUNE_* variable (the password is not there).
    /// Failing stops that host before the reboot (see --keep-staged) and counts toward
    /// --max-failures. Hosts rftune does not reboot run no hooks.
    #[arg(long, value_name = "CMD")]
    pub before_reboot: Option<String>,
    /// A command run for each host that reached its reboot once it is back and verified in
    /// sync (e.g. `kubectl uncordon "$RFTUNE_NODE"`); failing fails the host.
    #[arg(long, value_name = "CMD")]
    pub after_verify: Option<String>,
    /// A command run for each host that reached its reboot but did not end verified (the
    /// before-reboot hook, the reboot, the job or the verification failed, or the run was
    /// stopped); RFTUNE_ERROR says why.
    #[arg(long, value_name = "CMD")]
    pub on_failure: Option<String>,
    /// The longest a hook may run before it is killed (with what it started) and counts as failed.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub hook_timeout: std::time::Duration,
    /// When a before-reboot hook fails, leave the values staged (they apply at the host's
    /// next reboot, whenever that is). By default they are cleared again, so a host that could
    /// not be drained does not change at an unplanned reboot later.
    #[arg(long)]
    pub keep_staged: bool,
}

/// The host's lock, which every writer takes.
#[derive(Debug, Clone, ClapArgs)]
pub struct LockFlags {
    /// How long to wait for another rftune run (with this state directory) that holds a host,
    /// before failing it naming that run. 0s fails at once.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub lock_wait: std::time::Duration,
}

/// When staged BIOS values apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApplyTimeArg {
    /// At the next reset (rftune reboots per --reboot).
    OnReset,
    /// When the maintenance window opens (the iDRAC reboots the host).
    AtMaintenanceWindowStart,
    /// At a reset that happens inside the maintenance window.
    InMaintenanceWindowOnReset,
}

/// One BMC: `--bmc URL` plus how to connect.
#[derive(Debug, Clone, ClapArgs)]
pub struct BmcArgs {
    /// The BMC's URL, e.g. https://idrac-r7625.example or https://127.0.0.1:9001; a bare host
    /// name or address means https://.
    #[arg(long, value_name = "URL", env = "RFTUNE_BMC")]
    pub bmc: String,
    /// How to connect.
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// One BMC (`--bmc`) or a fleet (`--inventory`, optionally narrowed with `--tag`).
#[derive(Debug, Clone, ClapArgs)]
pub struct TargetArgs {
    /// The BMC's URL, e.g. https://idrac-r7625.example or https://127.0.0.1:9001; a bare host
    /// name or address means https:// (idrac-r7625.example, 10.0.0.5:443, [fd00::5]). Without
    /// --bmc and --inventory, the RFTUNE_BMC environment variable names it (an exported
    /// RFTUNE_BMC never conflicts with an explicit --inventory).
    #[arg(long, value_name = "URL", conflicts_with = "inventory")]
    pub bmc: Option<String>,
    /// A TOML inventory of BMCs ([[bmc]] entries with name, url, fingerprint, credentials, tags,
    /// and node: the host's OS node name, given to hooks as RFTUNE_NODE).
    #[arg(long, value_name = "FILE")]
    pub inventory: Option<PathBuf>,
    /// Only inventory entries carrying this tag (repeatable: all must match).
    #[arg(long = "tag", value_name = "TAG", requires = "inventory")]
    pub tags: Vec<String>,
    /// Only the hosts matching PATTERN: an inventory name or a glob over names and BMC
    /// addresses (`r7625-*`, `10.1.2.*`, `rack12-0[1-4]`); `!PATTERN` leaves hosts out.
    /// Repeatable and comma-separated (`--limit 'r7625-*,!r7625-0003'`); a host is kept when it
    /// matches any pattern given without `!` (or none is given) and no `!` pattern. Combines
    /// with --tag and --shard (a host must pass all). A pattern that matches no host of the
    /// inventory is refused: a mistyped exclusion would keep the host it meant to leave out.
    #[arg(long = "limit", value_name = "PATTERN")]
    pub limit: Vec<String>,
    /// Only the inventory entries in shard K of N (1 ≤ K ≤ N), chosen by a stable hash of each
    /// entry's name: N processes given 1/N … N/N split the inventory between them, each host
    /// in exactly one, whatever machine runs them. `rftune merge` combines their outputs.
    #[arg(long, value_name = "K/N", requires = "inventory", value_parser = parse_shard)]
    pub shard: Option<rftune_engine::fleet::Shard>,
    /// Hosts read at the same time (BMC round trips dominate, not CPU). Each holds a socket
    /// and about 200 KB while in flight; 512 keep 10,000 hosts at 50 ms round trips within
    /// about 6 s of waiting on the network.
    #[arg(long, default_value_t = 512, value_name = "N")]
    pub concurrency: usize,
    /// Hosts that may reject one credential (the run's, or an inventory entry's file) before
    /// rftune sends it to no further host: those are left untouched (not started). Until a host
    /// accepts a credential it goes to one host at a time, so a wrong password costs at most
    /// this many failed logins, not one per host (a directory account locks after a few).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub max_login_rejections: u16,
    /// How to connect.
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// Parses `--shard K/N`.
fn parse_shard(s: &str) -> Result<rftune_engine::fleet::Shard, String> {
    s.parse().map_err(|e: rftune_engine::Error| e.to_string())
}

/// How to authenticate to a BMC and whether to trust its certificate.
#[derive(Debug, Clone, ClapArgs)]
pub struct ConnectArgs {
    /// Account name (default root, the iDRAC factory account).
    #[arg(long, value_name = "NAME", env = "RFTUNE_USERNAME")]
    pub username: Option<String>,
    /// Read the password from the first line of standard input.
    #[arg(long)]
    pub password_stdin: bool,
    /// A TOML file with `username` and `password`, readable only by you (chmod 600).
    #[arg(long, value_name = "FILE", env = "RFTUNE_CREDENTIALS")]
    pub credentials: Option<PathBuf>,
    /// Trust only certificates issued by the CA in this PEM file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["fingerprint", "insecure"])]
    pub ca_cert: Option<PathBuf>,
    /// Trust exactly the certificate with this SHA-256 fingerprint: sha256:HEX (colons allowed),
    /// or the line `openssl x509 -noout -fingerprint -sha256` prints.
    /// The usual choice for an iDRAC's self-signed factory certificate. Without it (and without
    /// --insecure or --ca-cert), the RFTUNE_FINGERPRINT environment variable is used.
    #[arg(long, value_name = "sha256:HEX", conflicts_with = "insecure")]
    pub fingerprint: Option<String>,
    /// Record an unknown BMC's certificate fingerprint in known_hosts on first contact, and
    /// refuse it if it ever changes (as ssh does).
    #[arg(long)]
    pub trust_on_first_use: bool,
    /// Do not verify the BMC's certificate at all. Anyone on the path can read and change
    /// the traffic, credentials included.
    #[arg(long)]
    pub insecure: bool,
    /// Redfish session (one login, logged out at the end) or HTTP Basic on every request.
    #[arg(long, value_enum, default_value_t = AuthArg::Session)]
    pub auth: AuthArg,
    /// Per-request timeout, e.g. 30s or 2m.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub timeout: std::time::Duration,
    /// Keep retrying a busy, rebooting or unreachable BMC (503, 429, "iDRAC not ready",
    /// refused connections) for up to this long, with backoff; 0s disables retries. A read
    /// that timed out gets one more attempt even when --timeout used up this budget.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub retry_for: std::time::Duration,
}

/// `--reboot`: how to reboot into the BIOS job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RebootArg {
    /// Ask the OS to shut down; force it off after --graceful-timeout; power on.
    Graceful,
    /// Restart at once, without asking the OS.
    Force,
    /// Do not reboot: the job stays scheduled for the next reboot.
    None,
}

/// Authentication method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthArg {
    /// A Redfish session, with Basic as fallback.
    Session,
    /// HTTP Basic on every request.
    Basic,
}

/// Parses `500ms`, `30s`, `2m` (or `2min`), `1h30m`: rftune's one duration grammar
/// ([`rftune_engine::duration`]), the same as in experiment files. A bare number is refused
/// rather than read as seconds: `--job-timeout 10` could as well mean minutes.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    rftune_engine::duration::parse(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        let bare = parse_duration("7").unwrap_err();
        assert!(bare.contains("\"7\"") && bare.contains("7s"), "{bare}");
        assert!(parse_duration("0").is_err(), "0 needs a unit too: 0s");
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
