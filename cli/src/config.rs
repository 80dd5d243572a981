//! The arguments turned, once, into the plain values the engine takes (ripgrep's low args →
//! high args): the hosts a command addresses, how to reach one BMC (the password resolved
//! before anything is sent; fleets resolve it with `credentials::connect_config` before their
//! progress display starts), and the apply options. Commands start from these.

use crate::args::{ApplyFlags, ApplyTimeArg, ConnectArgs, OutputFormat, TargetArgs};
use anyhow::Result;
use redfish_client::resources::bios::{ApplyTime, SettingsApplyTime};
use rftune_engine::audit::AuditLog;
use rftune_engine::connect::ConnectConfig;
use rftune_engine::control::RebootPolicy;
use rftune_engine::converge::ApplyOptions;
use rftune_engine::fleet::HostResult;
use rftune_engine::fleet::{self, BmcEntry, Limits, Shard};
use rftune_engine::lifecycle::{Access, Operation};
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// The hosts a command addresses.
#[derive(Debug)]
pub struct Hosts {
    /// The hosts, in inventory order.
    pub entries: Vec<BmcEntry>,
    /// Whether it was one `--bmc` (its error is then the command's message).
    pub single: bool,
    /// Hosts worked on at the same time.
    pub concurrency: usize,
    /// The `--shard` they were chosen by.
    pub shard: Option<Shard>,
    /// Hosts that may reject one credential before no further host is sent it.
    pub max_login_rejections: usize,
}

impl Hosts {
    /// `--bmc URL`, or the entries of `--inventory` carrying every `--tag` in `--shard`, or
    /// `RFTUNE_BMC`.
    pub fn of(args: &TargetArgs) -> Result<Self> {
        let (entries, single) = entries(args)?;
        Ok(Self {
            entries,
            single,
            concurrency: args.concurrency,
            shard: args.shard,
            max_login_rejections: args.max_login_rejections.into(),
        })
    }

    /// A fleet of `entries`, chosen by the caller, with the limits of `args`.
    pub fn fleet(entries: Vec<BmcEntry>, args: &TargetArgs) -> Self {
        Self {
            entries,
            single: false,
            concurrency: args.concurrency,
            shard: args.shard,
            max_login_rejections: args.max_login_rejections.into(),
        }
    }

    /// One host (`--bmc` of a single-host command, or a snapshot's host).
    pub fn one(entry: BmcEntry) -> Self {
        Self {
            entries: vec![entry],
            single: true,
            concurrency: 1,
            shard: None,
            max_login_rejections: Limits::default().max_login_rejections,
        }
    }

    /// The rollout limits of these hosts: their concurrency and login rejections, no canary,
    /// no failure limit.
    pub fn limits(&self) -> Limits {
        Limits {
            concurrency: self.concurrency,
            max_login_rejections: self.max_login_rejections,
            ..Limits::default()
        }
    }

    /// Runs `op` on these hosts through the engine, connected with `connect`, showing each
    /// host's progress under `label` (a line per host without a terminal); every host's result,
    /// in inventory order.
    pub async fn run<O: Operation + 'static>(
        &self,
        label: &str,
        connect: ConnectConfig,
        dirs: &StateDirs,
        audit: Option<&AuditLog>,
        op: Arc<O>,
        output: OutputFormat,
    ) -> Vec<HostResult<O::Output>>
    where
        O::Output: 'static,
    {
        let progress = Arc::new(crate::render::Progress::hosts(label, self.entries.len(), output));
        let access = Access::new(connect, dirs.clone(), progress.clone());
        let results = access
            .fleet_collected(&self.entries, &self.limits(), audit, op, |_, ok| progress.host_done(ok))
            .await;
        progress.finish();
        results
    }
}

fn entries(args: &TargetArgs) -> Result<(Vec<BmcEntry>, bool)> {
    // clap's `requires` does not hold against an argument another one conflicts with.
    if args.inventory.is_none() && (args.shard.is_some() || !args.tags.is_empty() || !args.limit.is_empty()) {
        anyhow::bail!("--shard, --tag and --limit choose among the hosts of an inventory: give --inventory FILE");
    }
    match (&args.bmc, &args.inventory) {
        (Some(url), _) => Ok((vec![BmcEntry::from_url(url)?], true)),
        (None, Some(path)) => Ok((
            select(args, fleet::read_inventory(path)?, &path.display().to_string())?,
            false,
        )),
        (None, None) => match std::env::var("RFTUNE_BMC") {
            Ok(url) if !url.trim().is_empty() => Ok((vec![BmcEntry::from_url(url.trim())?], true)),
            _ => anyhow::bail!("give --bmc URL or --inventory FILE (or set RFTUNE_BMC)"),
        },
    }
}

/// The hosts of `all` (read from `source`) that `--tag`, `--limit` and `--shard` of `args`
/// keep, in their order.
pub fn select(args: &TargetArgs, all: Vec<BmcEntry>, source: &str) -> Result<Vec<BmcEntry>> {
    let limit = fleet::Limit::parse(&args.limit)?;
    let tagged = fleet::filter_tags(all.clone(), &args.tags);
    if tagged.is_empty() {
        anyhow::bail!("no host in {source} carries the tags {}", args.tags.join(", "));
    }
    let chosen = limit.select(&all, tagged, source)?;
    if chosen.is_empty() {
        anyhow::bail!(
            "no host in {source} passes --limit {}{}",
            args.limit.join(" --limit "),
            if args.tags.is_empty() {
                String::new()
            } else {
                format!(" and carries the tags {}", args.tags.join(", "))
            }
        );
    }
    // A shard may be empty (more shards than hosts): its output then lists no host.
    Ok(match args.shard {
        Some(shard) => shard.select(chosen),
        None => chosen,
    })
}

/// How to reach the one BMC of a single-host command: the connection settings of `args` with
/// the password resolved, telling only notices (a certificate trusted on first use).
pub fn access_one(args: &ConnectArgs, entry: &BmcEntry, dirs: &StateDirs) -> Result<Access> {
    let connect = crate::credentials::connect_config(args, std::slice::from_ref(entry))?;
    Ok(Access::new(connect, dirs.clone(), Arc::new(crate::render::Notices)))
}

/// The apply options of `apply` and `restore`.
pub fn apply_options(args: &ApplyFlags) -> ApplyOptions {
    let apply_time = SettingsApplyTime {
        apply_time: match args.apply_time {
            ApplyTimeArg::OnReset => ApplyTime::OnReset,
            ApplyTimeArg::AtMaintenanceWindowStart => ApplyTime::AtMaintenanceWindowStart,
            ApplyTimeArg::InMaintenanceWindowOnReset => ApplyTime::InMaintenanceWindowOnReset,
        },
        maintenance_window_start_time: args.maintenance_start.clone(),
        maintenance_window_duration_in_seconds: args
            .maintenance_start
            .as_ref()
            .map(|_| args.maintenance_duration.as_secs()),
    };
    ApplyOptions {
        reboot: reboot_policy(args.reboot),
        graceful_timeout: args.graceful_timeout,
        job_timeout: args.job_timeout,
        boot_timeout: args.boot_timeout,
        replace_pending: args.replace_pending,
        dry_run: args.dry_run,
        strict: args.strict,
        apply_time,
        hooks: hooks(&args.hooks),
        keep_staged: args.hooks.keep_staged,
        lock_wait: args.lock.lock_wait,
        from_defaults: false,
        password: None,
    }
}

/// The provisioning steps of `apply` (`--from-defaults`, `--bios-password`) in `options`, the
/// BIOS passwords read from their sources.
pub fn provision_options(flags: &crate::args::boot::ProvisionFlags, options: &mut ApplyOptions) -> Result<()> {
    let reboots_now = options.reboot != RebootPolicy::None && options.apply_time.apply_time == ApplyTime::OnReset;
    if flags.from_defaults && !reboots_now {
        anyhow::bail!(
            "--from-defaults needs rftune to reboot the host (the reset must finish before the profile is staged): drop --reboot none and the maintenance window"
        );
    }
    options.from_defaults = flags.from_defaults;
    if let Some(change) = flags.bios_password {
        let (which, need_old, need_new) = change.parts();
        let which = bios_password(which);
        let (old, new) = crate::credentials::bios_passwords(&flags.secrets, which.as_str(), need_old, need_new)?;
        options.password = Some(rftune_engine::passwords::PasswordChange { which, old, new });
    }
    Ok(())
}

/// `--password setup|system` as the engine's name of the BIOS password.
pub fn bios_password(w: crate::args::boot::WhichPassword) -> rftune_engine::passwords::BiosPassword {
    match w {
        crate::args::boot::WhichPassword::Setup => rftune_engine::passwords::BiosPassword::Setup,
        crate::args::boot::WhichPassword::System => rftune_engine::passwords::BiosPassword::System,
    }
}

/// The apply time of `--apply-time` and the maintenance window options.
pub fn settings_apply_time(
    arg: ApplyTimeArg,
    start: Option<&String>,
    duration: std::time::Duration,
) -> SettingsApplyTime {
    SettingsApplyTime {
        apply_time: match arg {
            ApplyTimeArg::OnReset => ApplyTime::OnReset,
            ApplyTimeArg::AtMaintenanceWindowStart => ApplyTime::AtMaintenanceWindowStart,
            ApplyTimeArg::InMaintenanceWindowOnReset => ApplyTime::InMaintenanceWindowOnReset,
        },
        maintenance_window_start_time: start.cloned(),
        maintenance_window_duration_in_seconds: start.map(|_| duration.as_secs()),
    }
}

/// The hooks of `--before-reboot`, `--after-verify`, `--on-failure` and `--hook-timeout`.
pub fn hooks(flags: &crate::args::HookFlags) -> rftune_engine::hooks::Hooks {
    rftune_engine::hooks::Hooks {
        before_reboot: flags.before_reboot.clone(),
        after_verify: flags.after_verify.clone(),
        on_failure: flags.on_failure.clone(),
        timeout: flags.hook_timeout,
    }
}

/// How a provisioning command (`command`) writes: reboots by `policy` with the timeouts,
/// rolling limit, pending-work rule, hooks and lock wait of `flags`, recorded in the audit log
/// of `dirs`.
pub fn provision_writes(
    command: &'static str,
    policy: RebootPolicy,
    flags: &crate::args::boot::RestartFlags,
    dirs: &StateDirs,
) -> Result<rftune_engine::write::Writes> {
    let options = rftune_engine::write::WriteOptions {
        reboot: policy,
        graceful_timeout: flags.graceful_timeout,
        job_timeout: flags.job_timeout,
        boot_timeout: flags.boot_timeout,
        replace_pending: flags.replace_pending,
        hooks: hooks(&flags.hooks),
        keep_staged: flags.hooks.keep_staged,
        lock_wait: flags.lock.lock_wait,
    };
    let audit = rftune_engine::audit::AuditLog::open(&dirs.state)?;
    Ok(rftune_engine::write::Writes::new(
        command,
        options,
        audit,
        &dirs.state,
        flags.max_unavailable,
    ))
}

/// How a command that writes without rebooting (`command`: a power action, job housekeeping)
/// takes each host's lock, recorded in the audit log of `dirs`.
pub fn lock_writes(
    command: &'static str,
    lock: &crate::args::LockFlags,
    dirs: &StateDirs,
) -> Result<rftune_engine::write::Writes> {
    let options = rftune_engine::write::WriteOptions {
        reboot: RebootPolicy::None,
        lock_wait: lock.lock_wait,
        ..rftune_engine::write::WriteOptions::default()
    };
    let audit = rftune_engine::audit::AuditLog::open(&dirs.state)?;
    Ok(rftune_engine::write::Writes::new(
        command,
        options,
        audit,
        &dirs.state,
        1,
    ))
}

/// `--reboot` as the engine's policy.
pub fn reboot_policy(arg: crate::args::RebootArg) -> RebootPolicy {
    match arg {
        crate::args::RebootArg::Graceful => RebootPolicy::Graceful,
        crate::args::RebootArg::Force => RebootPolicy::Force,
        crate::args::RebootArg::None => RebootPolicy::None,
    }
}
