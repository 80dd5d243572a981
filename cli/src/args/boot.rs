//! Arguments of the provisioning commands: `boot show|once|clear`, `bios reset-defaults`,
//! `bios password set|change|clear`, `secure-boot reset-keys`, and the provisioning flags of
//! `apply` (`--from-defaults`, `--bios-password`).

// Help text shows URLs as typed; rustdoc's link markup would leak into `--help`.
#![allow(rustdoc::bare_urls)]

use super::common::{HookFlags, LockFlags, RebootArg, TargetArgs, parse_duration};
use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// `rftune boot ...`.
#[derive(Debug, Subcommand)]
pub enum BootCommand {
    /// The boot order (position, BootNNNN, FQDD, display name, enabled) and the boot override.
    Show {
        /// The BMC(s) to ask.
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Boot once from TARGET: at the next boot, or now with --reboot. Sends only
    /// BootSourceOverrideTarget and BootSourceOverrideEnabled (a BootSourceOverrideMode would
    /// queue a BIOS job and a second reboot on iDRAC9); a BootNNNN boots that option through
    /// UefiTarget and its UEFI device path.
    Once(OnceArgs),
    /// Cancel a boot override (nothing is sent when none is set).
    Clear {
        /// The BMC(s) to change.
        #[command(flatten)]
        target: TargetArgs,
        /// The host's lock.
        #[command(flatten)]
        lock: LockFlags,
    },
}

/// `rftune boot once`.
#[derive(Debug, ClapArgs)]
pub struct OnceArgs {
    /// Pxe, UefiHttp, Hdd, Cd, BiosSetup, Usb, Utilities, SDCard, or a boot option such as
    /// Boot0001 (`rftune boot show` lists them).
    pub target: String,
    /// Reboot now into it (graceful unless given `force`); without it, the next boot uses it.
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "graceful", value_name = "HOW")]
    pub reboot: Option<RebootArg>,
    /// How the reboot goes, and which pending work may stand.
    #[command(flatten)]
    pub restart: RestartFlags,
    /// The BMC(s) to change.
    #[command(flatten)]
    pub target_hosts: TargetArgs,
}

/// How the provisioning commands reboot, and what they do about pending work.
#[derive(Debug, Clone, ClapArgs)]
pub struct RestartFlags {
    /// How long the OS gets to shut down before power is forced off.
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = parse_duration)]
    pub graceful_timeout: Duration,
    /// How long the host may take to come back (POST, with the BIOS job in it).
    #[arg(long, default_value = "20m", value_name = "DURATION", value_parser = parse_duration)]
    pub boot_timeout: Duration,
    /// How long the BIOS job (or the reset's end) may take once the host is back.
    #[arg(long, default_value = "30m", value_name = "DURATION", value_parser = parse_duration)]
    pub job_timeout: Duration,
    /// Hosts that may be rebooting at the same time.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub max_unavailable: usize,
    /// Delete pending BIOS values and scheduled BIOS jobs rftune did not stage instead of
    /// refusing (says so).
    #[arg(long)]
    pub replace_pending: bool,
    /// The hooks around each host's reboot.
    #[command(flatten)]
    pub hooks: HookFlags,
    /// The host's lock.
    #[command(flatten)]
    pub lock: LockFlags,
}

/// `rftune bios reset-defaults`.
#[derive(Debug, ClapArgs)]
pub struct ResetDefaultsArgs {
    /// How to reboot into the reset: graceful (forced after --graceful-timeout), force, or none
    /// (the reset waits for the host's next reboot, and is not proven).
    #[arg(long, value_enum, default_value_t = RebootArg::Graceful)]
    pub reboot: RebootArg,
    /// How the reboot goes, and which pending work may stand.
    #[command(flatten)]
    pub restart: RestartFlags,
    /// The BMC(s) to reset.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Which BIOS password.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WhichPassword {
    /// The setup password (BIOS setup and console changes).
    Setup,
    /// The system password: every POST waits for it at the console.
    System,
}

/// `rftune bios password ...`.
#[derive(Debug, Subcommand)]
pub enum PasswordCommand {
    /// Set a BIOS password where none is set (the new one from the sources below).
    Set(PasswordArgs),
    /// Change a BIOS password (the old and the new one from the sources below).
    Change(PasswordArgs),
    /// Clear a BIOS password (the old one from the sources below).
    Clear(PasswordArgs),
}

impl PasswordCommand {
    /// The options, whichever the action.
    pub fn args(&self) -> &PasswordArgs {
        match self {
            Self::Set(a) | Self::Change(a) | Self::Clear(a) => a,
        }
    }

    /// Whether the action needs the old password and the new one.
    pub fn needs(&self) -> (bool, bool) {
        match self {
            Self::Set(_) => (false, true),
            Self::Change(_) => (true, true),
            Self::Clear(_) => (true, false),
        }
    }
}

/// Options of `rftune bios password set|change|clear`.
#[derive(Debug, ClapArgs)]
pub struct PasswordArgs {
    /// Which password.
    #[arg(long = "password", value_enum, value_name = "WHICH")]
    pub which: WhichPassword,
    /// Where the passwords come from.
    #[command(flatten)]
    pub secrets: BiosSecretArgs,
    /// How to reboot into the BIOS job that applies it: graceful, force, or none (the job
    /// waits for the next reboot).
    #[arg(long, value_enum, default_value_t = RebootArg::Graceful)]
    pub reboot: RebootArg,
    /// How the reboot goes, and which pending work may stand.
    #[command(flatten)]
    pub restart: RestartFlags,
    /// The BMC(s) to change.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// Where BIOS passwords come from — never the command line: a TOML file only you can read
/// with `old` and/or `new`, standard input (the old line, then the new one, after the BMC
/// password's line if --password-stdin is given too), RFTUNE_BIOS_OLD_PASSWORD and
/// RFTUNE_BIOS_NEW_PASSWORD, or a prompt.
#[derive(Debug, Clone, ClapArgs)]
pub struct BiosSecretArgs {
    /// A TOML file (chmod 600) with `old = "..."` and/or `new = "..."`.
    #[arg(long, value_name = "FILE", env = "RFTUNE_BIOS_PASSWORD_FILE")]
    pub bios_password_file: Option<PathBuf>,
    /// Read the BIOS passwords from standard input, one a line (old first, when needed).
    #[arg(long)]
    pub bios_password_stdin: bool,
}

/// The provisioning steps `apply` can take besides the profile.
#[derive(Debug, Clone, ClapArgs)]
pub struct ProvisionFlags {
    /// Reset the BIOS to its defaults first (one reboot, proven finished), then apply the
    /// profile (a second reboot): the fewest the iDRAC allows, since what a job staged while
    /// the reset still waits for its POST would do is not known.
    #[arg(long)]
    pub from_defaults: bool,
    /// Change a BIOS password in the same job as the profile's values (no reboot of its own):
    /// `set-setup`, `change-setup`, `clear-setup`, and the same for `system`.
    #[arg(long, value_enum, value_name = "CHANGE")]
    pub bios_password: Option<PasswordChangeArg>,
    /// Where the BIOS passwords come from (with --bios-password).
    #[command(flatten)]
    pub secrets: BiosSecretArgs,
}

/// `--bios-password`: the change, and which password.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[allow(missing_docs)]
pub enum PasswordChangeArg {
    SetSetup,
    ChangeSetup,
    ClearSetup,
    SetSystem,
    ChangeSystem,
    ClearSystem,
}

impl PasswordChangeArg {
    /// Which password, and whether the old and the new one are needed.
    pub fn parts(self) -> (WhichPassword, bool, bool) {
        match self {
            Self::SetSetup => (WhichPassword::Setup, false, true),
            Self::ChangeSetup => (WhichPassword::Setup, true, true),
            Self::ClearSetup => (WhichPassword::Setup, true, false),
            Self::SetSystem => (WhichPassword::System, false, true),
            Self::ChangeSystem => (WhichPassword::System, true, true),
            Self::ClearSystem => (WhichPassword::System, true, false),
        }
    }
}

/// `rftune secure-boot ...`.
#[derive(Debug, Subcommand)]
pub enum SecureBootCommand {
    /// Reset the UEFI Secure Boot keys (needs SecureBootPolicy Custom; no BIOS job: the reset
    /// completes at the reboot). DeleteAllKeys and DeletePK leave Secure Boot nothing to verify
    /// with until keys are enrolled again: they need --delete-keys.
    ResetKeys(ResetKeysArgs),
}

/// `rftune secure-boot reset-keys`.
#[derive(Debug, ClapArgs)]
pub struct ResetKeysArgs {
    /// ResetAllKeysToDefault, DeleteAllKeys, DeletePK, ResetPK, ResetKEK, ResetDB or ResetDBX
    /// (as the iDRAC spells them).
    #[arg(long = "type", value_name = "TYPE")]
    pub kind: String,
    /// Confirm a reset that deletes keys (DeleteAllKeys, DeletePK).
    #[arg(long)]
    pub delete_keys: bool,
    /// How to reboot to complete it: graceful, force, or none (at the next reboot).
    #[arg(long, value_enum, default_value_t = RebootArg::Graceful)]
    pub reboot: RebootArg,
    /// How the reboot goes, and which pending work may stand.
    #[command(flatten)]
    pub restart: RestartFlags,
    /// The BMC(s) to change.
    #[command(flatten)]
    pub target: TargetArgs,
}
