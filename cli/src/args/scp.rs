//! `rftune scp ...` arguments: Server Configuration Profiles.

// Help text shows URLs as typed; rustdoc's link markup would leak into `--help`.
#![allow(rustdoc::bare_urls)]

use super::common::{ApplyFlags, ConnectArgs, TargetArgs, parse_duration};
use std::path::PathBuf;

/// `rftune scp`.
#[derive(Debug, clap::Subcommand)]
pub enum ScpCommand {
    /// Export each host's Server Configuration Profile through the iDRAC's local export (no
    /// share): one file per host, DIR/<host>.xml or .json, readable only by you (an export can
    /// hold password hashes and SNMP or LDAP secrets). Raw, byte for byte what the iDRAC sent,
    /// so it imports again; --sanitize replaces identifiers and empties secrets for sharing.
    Export(ExportArgs),
    /// Import a Server Configuration Profile: with --preview, what each host's iDRAC says it
    /// would change, per component, with its messages (exit 2 when it would change something);
    /// without, the import, as apply runs: pending work refused (or --replace-pending),
    /// a snapshot first, the iDRAC told not to reboot (ShutdownType NoReboot) and rftune
    /// rebooting the host in its own slot (--reboot, --max-unavailable, --canary,
    /// --max-failures), then each component's result. An import that applied only part of
    /// the profile is an error listing what failed.
    // apply's --dry-run is hidden here: --preview is an import's dry run (a --dry-run given
    // anyway is refused with that hint).
    #[command(mut_arg("dry_run", |a| a.hide(true)))]
    Import(Box<ImportArgs>),
    /// Write the SCP fragment a profile means for one host: each setting's value as that
    /// host's registry chose it, and the unlocks the plan adds, for teams that deploy through
    /// OpenManage Enterprise or Ansible. Settings the host lacks or a dependency sets are left
    /// out and listed on stderr.
    Render(RenderArgs),
}

/// An SCP format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScpFormatArg {
    /// XML, the iDRAC's default.
    Xml,
    /// JSON.
    Json,
}

/// `rftune scp export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The directory for the files (created readable only by you when missing). An existing
    /// file is never overwritten.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// What to export, comma-separated: ALL, or BIOS, IDRAC, System, LifecycleController, NIC,
    /// RAID (and the other targets the iDRAC lists).
    #[arg(long, default_value = "ALL", value_name = "TARGETS")]
    pub target: String,
    /// The format.
    #[arg(long, value_enum, default_value_t = ScpFormatArg::Xml)]
    pub format: ScpFormatArg,
    /// For sharing: replace service tags, addresses, host and user names by placeholders (as
    /// `rftune capture` does) and empty every secret. The file no longer imports as the host's
    /// own.
    #[arg(long)]
    pub sanitize: bool,
    /// How long one host's export may take.
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = parse_duration)]
    pub export_timeout: std::time::Duration,
    /// The BMC(s) to export.
    #[command(flatten)]
    pub target_hosts: TargetArgs,
}

/// `rftune scp import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The profile: an SCP file, XML or JSON.
    pub file: PathBuf,
    /// Only preview: what the iDRAC would change, and what it could not. Changes nothing.
    #[arg(long)]
    pub preview: bool,
    /// What to import, comma-separated (ALL, or BIOS, IDRAC, System, LifecycleController, NIC,
    /// RAID, ...). A preview always covers ALL.
    #[arg(long, default_value = "ALL", value_name = "TARGETS")]
    pub target: String,
    /// How to import (as apply: --reboot, timeouts, --replace-pending, rolling limits).
    #[command(flatten)]
    pub flags: ApplyFlags,
    /// The BMC(s) to import on.
    #[command(flatten)]
    pub target_hosts: TargetArgs,
}

/// `rftune scp render`.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// A shipped profile (see `rftune profiles list`) or a profile file.
    #[arg(long, short = 'p', value_name = "NAME|FILE")]
    pub profile: String,
    /// The host whose registry chooses the values.
    #[arg(long, value_name = "URL", env = "RFTUNE_BMC")]
    pub bmc: String,
    /// The format.
    #[arg(long, value_enum, default_value_t = ScpFormatArg::Xml)]
    pub format: ScpFormatArg,
    /// Write the fragment to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// How to connect.
    #[command(flatten)]
    pub connect: ConnectArgs,
}
