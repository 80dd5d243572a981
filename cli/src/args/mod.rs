//! Command-line arguments. The doc comments here are the `--help` text.

// Help text shows URLs as typed; rustdoc's link markup would leak into `--help`.
#![allow(rustdoc::bare_urls, rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

pub mod bench;
pub mod boot;
mod common;
pub mod nvme;
pub mod power;
pub mod scp;
pub mod sim;

pub use sim::SimArgs;

pub use common::{
    ApplyFlags, ApplyTimeArg, AuthArg, BmcArgs, ConnectArgs, HookFlags, LayoutFlags, LockFlags, RebootArg, TargetArgs,
    parse_duration,
};

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Keep Dell PowerEdge servers with AMD EPYC on the BIOS and iDRAC settings Dell and AMD
/// recommend, prove it, and measure what they buy.
///
/// Exit codes: 0 success (or in sync), 2 drift found (or not converged, or not applied), 1 error, 130/143
/// stopped by SIGINT/SIGTERM, 141 stdout closed before all output was written (`| head`).
///
/// With -o json or jsonl, each failed host carries `error` (the text) and `error_kind`:
/// unreachable, credentials, tls, redfish (refused by the BMC; `message_ids` lists why),
/// pending_work, lockdown, profile_not_applicable, job_failed, timeout, outcome_unknown,
/// unsupported, not_started (left untouched), stale, locked, hook_failed, not_converged,
/// interrupted or other.
///
/// Credentials never go on the command line: set RFTUNE_USERNAME and RFTUNE_PASSWORD, pipe the
/// password with --password-stdin, point --credentials at a file only you can read, or type it
/// at the prompt.
#[derive(Debug, Parser)]
#[command(name = "rftune", version, propagate_version = true, max_term_width = 100)]
pub struct Args {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes (listed under their own heading in every command's help).
#[derive(Debug, ClapArgs)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// More log detail on stderr (-v debug, -vv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Output format on stdout: a table for people, JSON for scripts.
    #[arg(short, long, global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub output: OutputFormat,
    /// Directory for snapshots, the audit log, known_hosts and the registry cache, instead of
    /// $XDG_STATE_HOME/rftune and $XDG_CACHE_HOME/rftune.
    #[arg(long, global = true, value_name = "DIR", env = "RFTUNE_STATE_DIR")]
    pub state_dir: Option<PathBuf>,
    /// Fetch BIOS attribute registries from the BMCs instead of the local cache, and replace the
    /// cached copies (after a BIOS update the cache refetches by itself; use this if a cached
    /// registry is suspect).
    #[arg(long, global = true)]
    pub refresh_registry: bool,
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned columns.
    Table,
    /// A JSON document with a "schema" field.
    Json,
    /// JUnit XML, for CI systems (diff only): drift shows as failed test cases, an unverified
    /// host as a failed "verdict" case, settings not checked as skipped ones.
    Junit,
    /// JSON lines (diff, apply, restore, merge): one object per host as each finishes, then a
    /// summary object; each carries "schema" (rftune.<kind>.host/v1, rftune.<kind>.summary/v1).
    Jsonl,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Watch the whole story on an emulated iDRAC, offline, in under a minute: inventory, diff
    /// against a profile, apply with one reboot, verify, idempotent re-apply, power.
    Demo(DemoArgs),
    /// Show what a BMC reports: model, service tag, BIOS and iDRAC versions, CPUs, DIMMs,
    /// power state, pending BIOS values and open jobs.
    ///
    /// `--lifecycle 20` adds the latest 20 Lifecycle-log entries and who made each change:
    /// the way to find out who touched a host rftune reports as drifted.
    Inventory(InventoryArgs),
    /// Compare hosts with a BIOS profile: desired vs current vs pending, per attribute.
    ///
    /// Read-only. Each host is in_sync, unverified, drift or error. `unverified`: nothing
    /// checked differs, but some settings have no evidence for the host's CPU generation (EPYC
    /// 9005 today) and were not checked, so the host is not proven in sync. Exit 0 when every
    /// host is in sync, 2 when any drifts (or has the profile's values only pending) or is
    /// unverified, with or without --strict, 1 when any host could not be compared.
    ///
    /// A fleet's table lists hosts whose results read the same once: `12 hosts (MODEL, BIOS
    /// V) vs PROFILE: …`, their names, then the attributes and warnings; hosts that failed for
    /// one cause share a line. --per-host gives each host its own block; -o json has every host.
    Diff(DiffArgs),
    /// Converge hosts on a BIOS profile: plan, snapshot, stage every BIOS change in one PATCH,
    /// reboot once, wait for the job, verify.
    ///
    /// iDRAC attributes apply immediately. Existing pending values or BIOS jobs stop the host
    /// unless they are rftune's own and equal the plan (then they are adopted) or
    /// --replace-pending is given. Each host ends in_sync, converged, not_converged (staged for
    /// a later reboot, or not clean after it), not_applied (the BMC took the values but the
    /// BIOS refused some at POST, as an HPE iLO reports in its settings messages; never
    /// success) or planned (--dry-run). Exit 0 when every host ends in sync, 2 when any is not
    /// converged or not applied (including --reboot none), 1 on errors.
    Apply(ApplyArgs),
    /// Write what an apply would do to each host into a plan file (rftune.plan/v1) for review,
    /// and show it: per host its identity, every attribute's current, pending and desired value
    /// with what decided it, the PATCH bodies, whether it reboots, and a digest of the state it
    /// was made from. Read-only. Hosts whose plans read the same share one block in the table
    /// (--per-host: one each); the file has every host.
    ///
    /// `rftune apply --plan FILE` then applies exactly that plan, refusing any host whose state
    /// changed since. Exit 0 when every host is in sync, 2 when changes are planned, 1 when a
    /// host could not be planned (the file is written all the same).
    Plan(PlanArgs),
    /// Combine the outputs of sharded runs (`--shard K/N`) into one result: `-o json` documents
    /// and `-o jsonl` streams of `rftune diff`, or of `rftune apply`, for one profile; or the
    /// plan files of `rftune plan`, merged and resealed (`-o json` prints the merged plan).
    ///
    /// Refuses outputs of different commands or profiles (or dry runs with real ones), a host
    /// listed twice, a stream cut short (no summary line), and missing shards. Hosts are listed
    /// by name. Exit codes as the command's own over the whole fleet: 1 if any host failed, else
    /// 2 if any drifted or is unverified (diff) or is not converged, not applied or planned
    /// (apply), else 0.
    Merge(MergeArgs),
    /// Save every current BIOS value and the iDRAC attributes rftune manages, per host, under
    /// the state directory (`rftune.snapshot/v1`).
    Snapshot(SnapshotArgs),
    /// Put hosts back to their snapshots, through the same validated plan/apply path as apply
    /// (one reboot each, --max-unavailable at a time, canaries, hooks, the host's lock).
    ///
    /// `rftune restore --inventory fleet.toml --run RUN --dry-run` shows, per host, the snapshot
    /// its service tag matched and what restoring it writes; without --dry-run it rolls the
    /// fleet back. Exit codes as apply's.
    Restore(RestoreArgs),
    /// Browse, search and validate the BIOS profiles; derive one from a snapshot.
    #[command(subcommand)]
    Profiles(ProfilesCommand),
    /// The iDRAC job queue: list, delete one job, clear the queue.
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Read the power draw from the iDRAC: one reading, or sampling at an interval with
    /// min/max/mean/σ and energy (table, JSON, CSV or Prometheus text). `power on|off|cycle`
    /// switches hosts instead (--bmc or --inventory; every switch goes to the audit log).
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Power(power::PowerArgs),
    /// On-host benchmarks: Dell's seven-test fio suite for NVMe, STREAM memory bandwidth, the
    /// file-system sweeps of Dell's HPC storage papers, and comparing two result files; with --bmc,
    /// power is sampled from the iDRACs during each test.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// A/B-test BIOS profiles: for each profile and host, apply it (one reboot, verified), run
    /// the storage and memory benchmarks on the host (over ssh, or locally), collect the
    /// results, and compare profiles with confidence intervals and an HTML report.
    #[command(subcommand)]
    Experiment(ExperimentCommand),
    /// NVMe namespace sizing (trade capacity for over-provisioning); a dry run unless
    /// --execute with the controller's serial.
    #[command(subcommand)]
    Nvme(nvme::NvmeCommand),
    /// Read BIOS attributes; clear pending values; reset the BIOS to its defaults; set,
    /// change or clear BIOS passwords.
    #[command(subcommand)]
    Bios(BiosCommand),
    /// Server Configuration Profiles (Dell's bulk configuration document): export them per
    /// host, preview or import one with apply's rules, render a profile as one.
    #[command(subcommand)]
    Scp(scp::ScpCommand),
    /// The boot order and the one-time boot: show, boot once from a device (now or at the next
    /// boot), clear an override. A profile's `[boot]` section sets the order itself.
    #[command(subcommand)]
    Boot(boot::BootCommand),
    /// UEFI Secure Boot: reset its keys. Turn it on or off with a profile (BIOS attribute
    /// SecureBoot); `rftune inventory` shows its state.
    #[command(subcommand)]
    SecureBoot(boot::SecureBootCommand),
    /// Record a BMC as a test fixture: walks what rftune reads (service root, systems, BIOS with
    /// pending values and registry, DIMMs, CPUs, boot options, Secure Boot, the iDRAC with its
    /// Dell attributes and job queues, chassis power, the attribute registries; on an HPE iLO
    /// its lower-case BIOS paths and the registry file under registrystore) and writes
    /// DIR/redfish/v1/<path>/index.json with service tags, serials, MACs, IPs, UUIDs, host and
    /// user names, BIOS contact fields, boot URLs and license keys replaced by placeholders (the
    /// same original, the same placeholder) and BIOS password hashes removed, plus
    /// DIR/capture.toml with the
    /// firmware versions and which fields were replaced. Serve it with `rftune sim --fixture DIR`.
    ///
    /// Read-only: one GET per resource, one at a time.
    // The doc comment is the --help text, where `<path>` is meant literally.
    #[allow(rustdoc::invalid_html_tags)]
    Capture(CaptureArgs),
    /// Serve Prometheus metrics about a fleet: every host re-checked against a profile on a
    /// schedule (drift, pending values, open and stuck jobs, BIOS version, power, whether the
    /// check worked), on GET /metrics, with GET /healthz.
    ///
    /// Read-only, like diff. Runs until SIGTERM or Ctrl-C, then serves no more scrapes, lets
    /// the checks in flight finish (so their sessions are logged out) and exits 143 (SIGTERM) or
    /// 130 (SIGINT). With --once: check every host once, print the metrics, exit 0 in sync, 2
    /// drift or unverified, 1 a check failed.
    #[command(after_long_help = EXPORTER_HELP)]
    Exporter(ExporterArgs),
    /// Serve emulated BMCs: stateful iDRAC9s, iDRAC10s and HPE iLO 5s over fixture trees, for
    /// trying rftune without hardware and for tests. Prints one line per host, `rftune-sim:
    /// listening URL fingerprint sha256:HEX`, then serves until interrupted.
    ///
    /// Log in as root / calvin (the iDRAC factory default). HTTPS uses a generated self-signed
    /// certificate shaped like an iDRAC's: pin it with --fingerprint.
    Sim(SimArgs),
    /// Print a shell completion script, e.g. `rftune completions bash > /etc/bash_completion.d/rftune`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `rftune demo`.
#[derive(Debug, ClapArgs)]
pub struct DemoArgs {
    /// The emulated server: r7625 (Genoa), r7525 (Milan) or c6615 (Siena).
    #[arg(long, default_value = "r7625")]
    pub model: String,
    /// The profile to apply.
    #[arg(long, short = 'p', default_value = "low-latency")]
    pub profile: String,
    /// The simulated POST.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub boot_time: std::time::Duration,
}

/// `rftune exporter --help`'s closing section: what is served and how it is scheduled.
const EXPORTER_HELP: &str = "\
How it checks:
  Each host gets the read-only check `rftune diff` makes, with its job queue and one power
  reading: about eight requests and one session, logged out at the end. The first check of
  every host starts at once (--concurrency at a time); later ones come every --interval,
  each moved by up to a tenth of the interval at random, so the fleet's checks spread out.
  A check that takes longer than --check-timeout is abandoned and counted as failed: a BMC
  that stops answering holds one slot for that long and delays no other host. /metrics
  answers at once from the latest finished checks; it never waits for one.

Metrics (labels: host = the inventory name, profile = the profile's name):
  rftune_bios_drift_attributes{host,profile}  attributes not as the profile wants (0 = in sync)
  rftune_bios_unverified_attributes{host,profile}
                                              settings not checked: no evidence for its CPU
  rftune_bios_attributes{host,profile,status} the same by diff status (drift, pending, ...)
  rftune_bios_pending_attributes{host}        BIOS values staged for the next reboot
  rftune_idrac_jobs{host,state}               queue jobs: waiting, running, stuck (PR30, or
                                              no progress for --job-stuck-after)
  rftune_check_success{host}                  1 if the latest check worked
  rftune_check_failed{host,reason}            why it did not: timeout, connection, redfish, ...
  rftune_check_last_timestamp_seconds{host}   when the latest check ended (also _last_success_)
  rftune_check_duration_seconds{host}, rftune_checks_total{host,result}
  rftune_bios_info{host,model,bios_version,service_tag}, rftune_idrac_system_lockdown{host}
  rftune_power_watts{host,sensor}             the BMC's power reading at the latest check
  rftune_hosts{profile,state}                 hosts in_sync, unverified, drift, error, unknown
  rftune_exporter_build_info{version}, rftune_exporter_check_interval_seconds,
  rftune_exporter_checks_in_flight
  A failed check leaves out the host's value series (drift, jobs, power, ...) until a check
  works again, so stale values never look current.

GET /healthz answers 200 with {\"status\":\"ok\",\"hosts\":N,\"checked\":N,
\"first_round_complete\":true|false} once the server is up.

Multi-target mode (--probe):
  GET /probe?target=HOST&profile=NAME checks HOST when asked and answers its metrics (the
  families above from rftune_check_success on, host = the inventory name or host:port). A
  failed or timed-out check is metrics too (rftune_check_success 0, rftune_check_failed says
  why). The check ends within the scrape's X-Prometheus-Scrape-Timeout-Seconds less 0.5 s, and
  within --check-timeout. Refused: a target neither in --inventory nor admitted by
  --allow-target (403: the credentials go to no other host), a profile not configured with
  --profile or --probe-profile, or a path (400), no free probe slot in time (503). --insecure
  and --trust-on-first-use are refused at start. /metrics then serves the exporter's own
  metrics (build, probes in flight).
  # prometheus.yml:
  #   - job_name: rftune
  #     metrics_path: /probe
  #     params: {profile: [performance]}
  #     scrape_interval: 5m
  #     scrape_timeout: 60s
  #     static_configs: [{targets: ['idrac-r7625-01.example', 'idrac-r7625-02.example']}]
  #     relabel_configs:
  #       - {source_labels: [__address__], target_label: __param_target}
  #       - {source_labels: [__param_target], target_label: instance}
  #       - {target_label: __address__, replacement: 'exporter-host:9920'}
  Each probe logs in and out of the iDRAC: scrape every few minutes, not every 15 s.

Example:
  RFTUNE_PASSWORD=... rftune exporter --inventory fleet.toml --profile performance \\
      --listen 0.0.0.0:9920 --interval 5m
  # prometheus.yml:  - job_name: rftune
  #                    static_configs: [{targets: ['exporter-host:9920']}]
  Under systemd, add SuccessExitStatus=143 (the exit code of a stop by SIGTERM).
  contrib/grafana/rftune-dashboard.json is a Grafana dashboard for these metrics.";

/// `rftune diff`.
#[derive(Debug, ClapArgs)]
pub struct DiffArgs {
    /// A shipped profile (see `rftune profiles list`) or a profile file.
    #[arg(long, short = 'p', value_name = "NAME|FILE", required_unless_present = "scp")]
    pub profile: Option<String>,
    /// Compare with a Server Configuration Profile instead: every BIOS and iDRAC attribute an
    /// import of it would set (never a host's identity or secrets), typed by the first host's
    /// registry.
    #[arg(long, value_name = "FILE", conflicts_with = "profile")]
    pub scp: Option<PathBuf>,
    /// Treat attributes the host's BIOS lacks as errors instead of "not applicable". (Settings
    /// without evidence for the host's CPU generation make it unverified, exit 2, either way.)
    #[arg(long)]
    pub strict: bool,
    /// Show in-sync attributes too, not only differences, and (for a fleet) the hosts in sync;
    /// settings not checked for want of evidence (a Turin host's) get a row each instead of
    /// one line naming them. A fleet's table otherwise lists only the hosts that differ or
    /// failed, then a summary; -v does the same as --all, and -o json always has every host.
    #[arg(long)]
    pub all: bool,
    /// How the fleet's table shows its hosts.
    #[command(flatten)]
    pub layout: LayoutFlags,
    /// The BMC(s) to compare.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `rftune exporter`.
#[derive(Debug, ClapArgs)]
pub struct ExporterArgs {
    /// A shipped profile (see `rftune profiles list`) or a profile file.
    #[arg(long, short = 'p', value_name = "NAME|FILE")]
    pub profile: String,
    /// Where to serve /metrics and /healthz. Port 0 picks a free port; the first line on
    /// stdout, `rftune-exporter: listening http://ADDR`, says which.
    #[arg(long, default_value = "127.0.0.1:9920", value_name = "ADDR:PORT")]
    pub listen: std::net::SocketAddr,
    /// Time between two checks of a host.
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = parse_duration)]
    pub interval: std::time::Duration,
    /// Longest one host's check may take (its requests included) before it is abandoned and
    /// counted as failed (reason "timeout"). Also caps --timeout and --retry-for.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = parse_duration)]
    pub check_timeout: std::time::Duration,
    /// A running job whose progress has not moved for this long counts as stuck.
    #[arg(long, default_value = "1h", value_name = "DURATION", value_parser = parse_duration)]
    pub job_stuck_after: std::time::Duration,
    /// Check every host once, print the metrics on stdout and exit (0 in sync, 2 drift or
    /// unverified, 1 a check failed): for cron and node_exporter's textfile collector.
    /// Serves nothing.
    #[arg(long)]
    pub once: bool,
    /// Treat attributes the host's BIOS lacks as errors instead of "not applicable".
    #[arg(long)]
    pub strict: bool,
    /// Multi-target mode: watch nothing on a schedule; check a host when Prometheus asks for
    /// it on GET /probe?target=HOST&profile=NAME (as the blackbox and iDRAC exporters work),
    /// so a Prometheus that lists the iDRACs scrapes their drift. Only hosts of --inventory
    /// and addresses --allow-target admits are checked, with pinned or CA trust.
    #[arg(long, conflicts_with = "once")]
    pub probe: bool,
    /// With --probe: addresses a probe may name besides the inventory's hosts, as globs over
    /// the host and host:port (`*.idrac.example`, `10.1.2.*`, `!bmc-lab-*` to exclude;
    /// repeatable, comma-separated). Reached over HTTPS only, trusted by --fingerprint,
    /// --ca-cert, a pin in known_hosts or the system's CAs; never on first use.
    #[arg(long = "allow-target", value_name = "PATTERN", requires = "probe")]
    pub allow_target: Vec<String>,
    /// With --probe: another profile a probe may name with `profile=` (repeatable); --profile
    /// is the one used when a probe names none. Named by the profile's `name`, never by a path.
    #[arg(long = "probe-profile", value_name = "NAME|FILE", requires = "probe")]
    pub probe_profiles: Vec<String>,
    /// With --probe: probes checked at the same time; a probe that finds no free slot before
    /// its scrape's timeout is answered 503.
    #[arg(long, default_value_t = 32, value_name = "N", requires = "probe", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_probes: usize,
    /// The BMC(s) to watch (with --probe: the hosts a probe may name, by name or address,
    /// with their pins and credentials files).
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `rftune merge`.
#[derive(Debug, ClapArgs)]
pub struct MergeArgs {
    /// Outputs of `rftune diff` or `rftune apply` with `-o json` or `-o jsonl` (`-` reads
    /// standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// `rftune apply`.
#[derive(Debug, ClapArgs)]
pub struct ApplyArgs {
    /// A shipped profile (see `rftune profiles list`) or a profile file.
    #[arg(long, short = 'p', value_name = "NAME|FILE", required_unless_present = "plan")]
    pub profile: Option<String>,
    /// Apply exactly this plan file (from `rftune plan`), with the options it was made with:
    /// each host is re-read before its first write and refused as stale when anything the
    /// plan was made from changed (a value, a pending value or job, its BIOS version or
    /// registry). Hosts already at the plan's values are in sync. The file is refused whole
    /// when its integrity check fails, when it was made by another rftune version or from a
    /// profile that changed since, or when it is older than --max-plan-age.
    /// A plan holds no reset to defaults or BIOS password change: those go with --profile.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["profile", "dry_run", "reboot", "apply_time", "maintenance_start", "replace_pending", "strict", "from_defaults", "bios_password"])]
    pub plan: Option<PathBuf>,
    /// The oldest plan --plan accepts.
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = parse_duration, requires = "plan")]
    pub max_plan_age: std::time::Duration,
    /// How to apply.
    #[command(flatten)]
    pub flags: ApplyFlags,
    /// How the fleet's table shows its hosts.
    #[command(flatten)]
    pub layout: LayoutFlags,
    /// Provisioning steps besides the profile.
    #[command(flatten)]
    pub provision: boot::ProvisionFlags,
    /// The BMC(s) to converge.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `rftune plan`.
#[derive(Debug, ClapArgs)]
pub struct PlanArgs {
    /// A shipped profile (see `rftune profiles list`) or a profile file.
    #[arg(long, short = 'p', value_name = "NAME|FILE")]
    pub profile: String,
    /// Where to write the plan.
    #[arg(long, value_name = "FILE", default_value = "rftune-plan.json")]
    pub out: PathBuf,
    /// Show every attribute of each host, not only those written or pending.
    #[arg(long)]
    pub all: bool,
    /// How the fleet's table shows its hosts.
    #[command(flatten)]
    pub layout: LayoutFlags,
    /// How the plan's apply reboots: graceful, force, or none (the job stays scheduled).
    #[arg(long, value_enum, default_value_t = RebootArg::Graceful)]
    pub reboot: RebootArg,
    /// Plan to discard pending BIOS values and scheduled BIOS jobs that are in the way.
    #[arg(long)]
    pub replace_pending: bool,
    /// Treat attributes the host's BIOS lacks as errors instead of "not applicable".
    #[arg(long)]
    pub strict: bool,
    /// When staged BIOS values apply.
    #[arg(long, value_enum, default_value_t = ApplyTimeArg::OnReset)]
    pub apply_time: ApplyTimeArg,
    /// Maintenance window start, ISO 8601 in the iDRAC's offset.
    #[arg(long, value_name = "ISO8601", required_if_eq_any = [("apply_time", "at-maintenance-window-start"), ("apply_time", "in-maintenance-window-on-reset")])]
    pub maintenance_start: Option<String>,
    /// Maintenance window length.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "1h")]
    pub maintenance_duration: std::time::Duration,
    /// The BMC(s) to plan for.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `rftune restore`.
#[derive(Debug, ClapArgs)]
pub struct RestoreArgs {
    /// One snapshot file (written by `rftune snapshot` or `rftune apply`), restored onto its
    /// own host (or --bmc's). Without it, each host of --inventory (or --bmc) gets its own
    /// snapshot from --snapshot-dir, matched by service tag.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["snapshot_dir", "before", "run", "inventory"])]
    pub snapshot: Option<PathBuf>,
    /// Where the snapshots are (default: the state directory's snapshots/, where apply saves
    /// each host's values before changing it).
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,
    /// Take each host's latest snapshot taken before this time: UTC (2026-11-30T02:00:00Z,
    /// 2026-11-30) or a time ago (6h, 2d). Without --before or --run, the latest, which may
    /// already be the bad state (a snapshot taken before a later apply).
    #[arg(long, value_name = "TIME", conflicts_with = "run")]
    pub before: Option<String>,
    /// Take the snapshot each host got from this apply run (the `run` of the audit log's
    /// records, e.g. 1764468000-4242): that apply rolled back.
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// With --snapshot: restore onto a host whose service tag differs from the snapshot's.
    #[arg(long, requires = "snapshot")]
    pub any_host: bool,
    /// How to apply: --dry-run shows each host's snapshot and plan (what it will write and
    /// whether it reboots) and changes nothing; reboots are limited as apply's are.
    #[command(flatten)]
    pub flags: ApplyFlags,
    /// How the fleet's table shows its hosts.
    #[command(flatten)]
    pub layout: LayoutFlags,
    /// The BMC(s) to restore (with --snapshot and neither: the one the snapshot was taken from).
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `rftune snapshot`.
#[derive(Debug, ClapArgs)]
pub struct SnapshotArgs {
    /// The BMC(s) to snapshot.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `rftune inventory`.
#[derive(Debug, ClapArgs)]
pub struct InventoryArgs {
    /// The BMC(s) to ask.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Also show each host's latest N Lifecycle-log entries, newest first, with who made each
    /// change (user, address, interface) where the entry names them: logins, configuration
    /// changes, jobs. One more request per host for up to 50 entries (the iDRAC's page).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=10000))]
    pub lifecycle: Option<u16>,
}

/// `rftune bios ...`.
#[derive(Debug, Subcommand)]
pub enum BiosCommand {
    /// Print current BIOS attribute values, optionally with the pending ones.
    ///
    /// Pending values are staged and apply at the next reboot (when a BIOS job runs).
    Get(BiosGetArgs),
    /// Discard staged BIOS values (refused by the iDRAC while a BIOS job exists: delete the job
    /// instead, which discards them too).
    ClearPending {
        /// The BMC(s).
        #[command(flatten)]
        target: TargetArgs,
        /// The host's lock (another run's staged values are not cleared under its feet).
        #[command(flatten)]
        lock: LockFlags,
    },
    /// Reset the BIOS to its defaults and prove it: snapshot every value first, Bios.ResetBios,
    /// the reboot it needs, then the reset no longer pending and the values that changed
    /// against the snapshot (on an HPE iLO: the settings object processed at that POST; `-o
    /// json` shows the request as `settings_unprocessed`). Exit 0 when every host finished, 2
    /// when a reset waits for the next reboot (--reboot none), 1 on errors.
    ResetDefaults(boot::ResetDefaultsArgs),
    /// Set, change or clear the BIOS setup or system password (Bios.ChangePassword, then a BIOS
    /// job and a reboot; on an HPE iLO no job, `"job": null`, and the next POST proves it). The
    /// passwords never go on the command line.
    #[command(subcommand)]
    Password(boot::PasswordCommand),
}

/// `rftune profiles ...`.
#[derive(Debug, Subcommand)]
pub enum ProfilesCommand {
    /// The shipped profiles: name, what they extend, settings, targets.
    List,
    /// A profile resolved (inheritance, generation filters, platform overrides) with every
    /// setting's value, why, source and confidence (stated, used or inferred).
    Show {
        /// Profile name or file.
        profile: String,
        /// Resolve for this model, e.g. "PowerEdge C6615" (platform overrides).
        #[arg(long)]
        model: Option<String>,
        /// Resolve for this CPU generation: rome, milan, genoa, bergamo, siena, turin.
        #[arg(long)]
        generation: Option<String>,
        /// Resolve for this CPU: its brand string or model number, e.g. 7552 (CPU overrides;
        /// also gives the generation).
        #[arg(long)]
        cpu: Option<String>,
        /// Resolve for this many populated sockets (settings such as `when = { sockets = 2 }`).
        #[arg(long)]
        sockets: Option<u32>,
        /// Resolve for this many cores per processor (settings that depend on the hardware
        /// thread count, such as the IOMMU kept on past 255 threads). Taken from a brand
        /// string's "64-Core" when --cpu gives one.
        #[arg(long)]
        cores: Option<u32>,
        /// Show the profile bound to this vendor's BIOS: dell (the profiles' own names) or hpe
        /// (HPE ProLiant: each setting as HPE's attribute and token, the writes that enable
        /// them, and what HPE has no equivalent for, with the evidence).
        #[arg(long, value_name = "VENDOR", default_value = "dell")]
        vendor: String,
    },
    /// Check a profile: its format (every missing field at once), and its values — with
    /// --registry or --bmc against that BIOS attribute registry and its dependencies; without
    /// either, offline, its attribute names and tokens against the shipped catalog and the
    /// registries of the emulator's real-shaped hosts (a host's own registry may still differ:
    /// what none of them offers but resembles nothing is a warning). Exit 0 clean, 2 problems
    /// found, 1 error.
    Validate(ValidateArgs),
    /// Write a commented starting profile that extends a shipped one: the format, a setting to
    /// change and a knob to leave alone, each commented out, and what the parent sets today.
    /// Edit it, then `rftune profiles validate FILE`.
    New {
        /// The new profile's name.
        name: String,
        /// The shipped profile it starts from (e.g. hpc, performance).
        #[arg(long, value_name = "PROFILE")]
        extends: String,
        /// The new profile's description.
        #[arg(long)]
        description: Option<String>,
        /// Write the file here (refused if it exists) instead of to standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Search the settings catalog by the names people know ("c-states", "numa", "x2apic").
    Search {
        /// Words to look for.
        #[arg(required = true)]
        query: Vec<String>,
    },
    /// Write a profile (TOML, to stdout) from a snapshot of a known-good server, or from a
    /// Server Configuration Profile (its BIOS and iDRAC attributes, never a host's identity or
    /// secrets; what is left out is listed in the file's header and on stderr).
    Derive {
        /// A snapshot file.
        #[arg(
            long,
            value_name = "FILE",
            required_unless_present = "from_scp",
            conflicts_with = "from_scp"
        )]
        snapshot: Option<PathBuf>,
        /// A Server Configuration Profile (XML or JSON) instead of a snapshot.
        #[arg(long, value_name = "FILE")]
        from_scp: Option<PathBuf>,
        /// With --from-scp: a BIOS attribute registry JSON file that types the values (SCP
        /// values are text); without it a value of digits is an integer unless the catalog
        /// knows the attribute as an enumeration, and the file says which values were typed so.
        #[arg(long, value_name = "FILE", requires = "from_scp")]
        registry: Option<PathBuf>,
        /// The new profile's name.
        #[arg(long)]
        name: String,
        /// Only these attributes (repeatable; BIOS or iDRAC names). Default: the catalog's
        /// settings. With --from-scp these are taken besides the catalog's (either spelling:
        /// Group.N#Attr or Group.N.Attr).
        #[arg(long = "attribute", short = 'a', value_name = "NAME")]
        attributes: Vec<String>,
        /// The new profile's description.
        #[arg(long)]
        description: Option<String>,
    },
}

/// `rftune profiles validate`.
#[derive(Debug, ClapArgs)]
pub struct ValidateArgs {
    /// Profile name or file.
    pub profile: String,
    /// An attribute registry JSON file (e.g. a saved Bios/BiosRegistry).
    #[arg(long, value_name = "FILE", conflicts_with = "bmc")]
    pub registry: Option<PathBuf>,
    /// Validate against this BMC's registry and current values.
    #[arg(long, value_name = "URL")]
    pub bmc: Option<String>,
    /// Resolve for this model.
    #[arg(long)]
    pub model: Option<String>,
    /// Resolve for this CPU generation.
    #[arg(long)]
    pub generation: Option<String>,
    /// Attributes the registry lacks are errors.
    #[arg(long)]
    pub strict: bool,
    /// How to connect (with --bmc).
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `rftune experiment ...`.
#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// Run an experiment file (TOML: hosts with their BMC and how to reach the OS, profiles —
    /// the first is the baseline —, benchmarks, repeats, order). Results, state and the report
    /// go to its output directory.
    ///
    /// The whole file is checked first (every problem with its line), then every host is
    /// connected and every profile checked against its registry: a problem stops the run before
    /// any host is changed.
    #[command(after_long_help = concat!(
        "The file format, as shipped in examples/experiment.toml:\n\n",
        include_str!("../../../examples/experiment.toml")
    ))]
    Run {
        /// The experiment file.
        file: PathBuf,
        /// How to connect to the BMCs.
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// Continue an interrupted experiment after its last finished step.
    Resume {
        /// The experiment's output directory.
        dir: PathBuf,
        /// How to connect to the BMCs.
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// Per benchmark and metric: the median per profile, the change against the baseline with
    /// bootstrap and Welch intervals, a verdict only where both exclude zero; writes
    /// experiment.json and report.html.
    Report {
        /// The experiment's output directory.
        dir: PathBuf,
        /// Bootstrap resamples.
        #[arg(long, default_value_t = 2000)]
        resamples: usize,
    },
}

/// `rftune jobs ...`.
#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Open jobs (all with --all) of one BMC, or of every host of an inventory in one table
    /// (hosts without open jobs are counted, not listed).
    List {
        /// The BMC(s).
        #[command(flatten)]
        target: TargetArgs,
        /// Include finished jobs.
        #[arg(long)]
        all: bool,
    },
    /// Delete one job; a scheduled BIOS job takes its pending values with it. Job ids are each
    /// iDRAC's own: with --inventory, narrow with --limit to the hosts that hold the job (a host
    /// without it fails with the iDRAC's answer).
    Delete {
        /// The job id (JID_...).
        job: String,
        /// The BMC(s).
        #[command(flatten)]
        target: TargetArgs,
        /// The host's lock (another run's job is not deleted under its feet).
        #[command(flatten)]
        lock: LockFlags,
    },
    /// Delete every job (JID_CLEARALL), of one BMC or every host of an inventory.
    ClearQueue {
        /// Also restart Lifecycle Controller services (JID_CLEARALL_FORCE): a last resort.
        #[arg(long)]
        force: bool,
        /// The BMC(s).
        #[command(flatten)]
        target: TargetArgs,
        /// The host's lock (another run's jobs are not deleted under its feet).
        #[command(flatten)]
        lock: LockFlags,
    },
}

/// `rftune bios get`.
#[derive(Debug, ClapArgs)]
pub struct BiosGetArgs {
    /// The BMC(s) to ask. With --inventory, hosts whose values (and pending values) are the
    /// same share one table, headed by their names; -o json lists every host.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Also show pending values; without --attribute, only attributes that have one.
    #[arg(long)]
    pub pending: bool,
    /// Only this attribute (repeatable), e.g. --attribute SysProfile --attribute ProcCStates.
    #[arg(long = "attribute", short = 'a', value_name = "NAME")]
    pub attributes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Args::command().debug_assert();
    }
}

/// `rftune capture`.
#[derive(Debug, ClapArgs)]
pub struct CaptureArgs {
    /// The BMC to record.
    #[command(flatten)]
    pub bmc: BmcArgs,
    /// A new (or empty) directory for the tree.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}
