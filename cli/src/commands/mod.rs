//! One module per command; each returns an [`Exit`] or an error that names the host. Commands
//! share the configuration (`config`), the documents (`documents`) and the rendering (`render`),
//! never each other.

pub mod apply;
pub mod bench;
pub mod bios;
pub mod boot;
pub mod capture;
pub mod demo;
pub mod diff;
pub mod experiment;
pub mod exporter;
pub mod inventory;
pub mod jobs;
pub mod merge;
pub mod nvme;
pub mod plan;
pub mod power;
pub mod profiles;
pub mod provision;
pub mod scp;
pub mod sim;
pub mod snapshot;

use crate::Exit;
use crate::args::{Args, BiosCommand, Command};
use anyhow::Result;
use clap::CommandFactory;
use rftune_engine::state::StateDirs;

/// Runs the parsed command.
pub async fn run(args: Args) -> Result<Exit> {
    let mut dirs = StateDirs::resolve(args.global.state_dir.as_deref())?;
    dirs.refresh_registry = args.global.refresh_registry;
    let state_dir_given = args.global.state_dir.is_some();
    let output = args.global.output;
    if output == crate::args::OutputFormat::Junit && !matches!(args.command, Command::Diff(_)) {
        anyhow::bail!("--output junit is only available for rftune diff");
    }
    if output == crate::args::OutputFormat::Jsonl
        && !matches!(
            args.command,
            Command::Diff(_) | Command::Apply(_) | Command::Restore(_) | Command::Merge(_)
        )
    {
        anyhow::bail!("--output jsonl is only available for rftune diff, apply, restore and merge");
    }
    let importing = matches!(&args.command, Command::Scp(crate::args::scp::ScpCommand::Import(a)) if !a.preview);
    if importing || matches!(args.command, Command::Apply(_) | Command::Restore(_)) {
        // Ctrl-C and SIGTERM stop new work but finish reboots in progress (power actions
        // install the same handling themselves).
        crate::signals::install()?;
    }
    match args.command {
        Command::Inventory(a) => inventory::run(&a, &dirs, output).await,
        Command::Bios(BiosCommand::Get(a)) => bios::get(&a, &dirs, output).await,
        Command::Capture(a) => capture::run(&a, &dirs, output).await,
        Command::Bios(BiosCommand::ClearPending { target, lock }) => {
            jobs::clear_pending(&target, &lock, &dirs, output).await
        }
        Command::Bios(BiosCommand::ResetDefaults(a)) => provision::reset_defaults(&a, &dirs, output).await,
        Command::Bios(BiosCommand::Password(cmd)) => provision::password(&cmd, &dirs, output).await,
        Command::Boot(cmd) => boot::run(&cmd, &dirs, output).await,
        Command::SecureBoot(crate::args::boot::SecureBootCommand::ResetKeys(a)) => {
            provision::reset_keys(&a, &dirs, output).await
        }
        Command::Jobs(cmd) => jobs::run(&cmd, &dirs, output).await,
        Command::Power(a) => power::run(&a, &dirs, output).await,
        Command::Bench(cmd) => bench::run(&cmd, &dirs, output).await,
        Command::Nvme(cmd) => nvme::run(&cmd, &dirs, output).await,
        Command::Experiment(cmd) => experiment::run(&cmd, &dirs, output).await,
        Command::Profiles(cmd) => profiles::run(&cmd, &dirs, output).await,
        Command::Scp(cmd) => scp::run(&cmd, &dirs, output).await,
        Command::Snapshot(a) => snapshot::snapshot(&a, &dirs, output).await,
        Command::Restore(a) => apply::restore(&a, &dirs, output).await,
        Command::Sim(a) => sim::run(a).await,
        Command::Demo(_) if output != crate::args::OutputFormat::Table => anyhow::bail!(
            "demo tells its story as text for people and has no {} output; the commands it runs take -o json (`rftune sim --write-inventory fleet.toml`, then `rftune diff --inventory fleet.toml --profile low-latency -o json`)",
            if output == crate::args::OutputFormat::Json {
                "JSON"
            } else {
                "JUnit"
            }
        ),
        Command::Demo(a) => demo::run(&a, &dirs, state_dir_given).await,
        Command::Diff(mut a) => {
            a.all |= args.global.verbose > 0;
            diff::run(&a, &dirs, output).await
        }
        Command::Apply(a) => apply::run(&a, &dirs, output).await,
        Command::Plan(a) => plan::run(&a, &dirs, output).await,
        Command::Exporter(_) if output != crate::args::OutputFormat::Table => anyhow::bail!(
            "the exporter serves Prometheus text (and prints it with --once); it has no other output format"
        ),
        Command::Exporter(a) => exporter::run(&a, &dirs).await,
        Command::Merge(a) => merge::run(&a, output),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut crate::args::Args::command(), "rftune", &mut out);
            crate::render::text(&String::from_utf8_lossy(&out))?;
            Ok(Exit::Success)
        }
    }
}
