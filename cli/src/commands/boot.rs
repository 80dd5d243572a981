//! `rftune boot show|once|clear`: the boot order and the one-time boot, through the engine's
//! boot module, over one host or an inventory; `once` and `clear` are audited.

use crate::Exit;
use crate::args::OutputFormat;
use crate::args::boot::{BootCommand, OnceArgs};
use crate::documents::{self, BOOT_CLEAR_SCHEMA, BOOT_ONCE_SCHEMA, BOOT_SCHEMA};
use crate::render::{self, Table};
use anyhow::Result;
use rftune_engine::boot::{BootShown, Clear, OnceRun, OnceTarget, Show};
use rftune_engine::control::RebootPolicy;
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// Runs `rftune boot ...`.
pub async fn run(cmd: &BootCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        BootCommand::Show { target } => show(target, dirs, output).await,
        BootCommand::Once(args) => once(args, dirs, output).await,
        BootCommand::Clear { target, lock } => clear(target, lock, dirs, output).await,
    }
}

async fn show(target: &crate::args::TargetArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let hosts = crate::config::Hosts::of(target)?;
    let connect = crate::credentials::connect_config(&target.connect, &hosts.entries)?;
    let results = hosts
        .run("boot show", connect, dirs, None, Arc::new(Show), output)
        .await;
    let (doc, failed) = documents::action_document(BOOT_SCHEMA, &results, None);
    if output == OutputFormat::Json {
        render::json(&doc)?;
    } else {
        let mut out = String::new();
        for r in &results {
            match &r.result {
                Ok(shown) => out.push_str(&show_table(shown)),
                Err(e) => out.push_str(&format!("{}: error: {e:#}\n", r.entry.name)),
            }
        }
        render::text(&out)?;
    }
    documents::action_exit(failed, results.len(), 0, None)
}

/// One host's boot order and override, for people.
fn show_table(shown: &BootShown) -> String {
    let mut t = Table::new(["#", "OPTION", "FQDD", "NAME", "ENABLED"]);
    for o in &shown.order {
        t.row([
            o.position.to_string(),
            o.reference.clone(),
            o.fqdd.clone().unwrap_or_else(|| "-".into()),
            o.name.clone().unwrap_or_else(|| "-".into()),
            o.enabled
                .map_or_else(|| "-".into(), |e| if e { "yes" } else { "no" }.into()),
        ]);
    }
    let over = if shown.override_active() {
        let target = shown.override_target.map(|t| t.to_string()).unwrap_or_default();
        let uefi = shown
            .uefi_target
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        let enabled = shown.override_enabled.map_or("", |e| e.as_str()).to_lowercase();
        format!("{target}{uefi}, {enabled}")
    } else {
        "none".into()
    };
    format!("{}:\n{}boot override: {over}\n\n", shown.host, t.render())
}

/// The restart of `--reboot` (`None`: no reboot).
async fn once(args: &OnceArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let target = OnceTarget::parse(&args.target)?;
    let policy = args.reboot.map_or(RebootPolicy::None, crate::config::reboot_policy);
    if policy != RebootPolicy::None {
        crate::signals::install()?;
    }
    let hosts = crate::config::Hosts::of(&args.target_hosts)?;
    let connect = crate::credentials::connect_config(&args.target_hosts.connect, &hosts.entries)?;
    let writes = crate::config::provision_writes("boot once", policy, &args.restart, dirs)?;
    let audit = writes.audit.clone();
    let run = Arc::new(OnceRun { target, writes });
    let results = hosts.run("boot once", connect, dirs, Some(&audit), run, output).await;
    render::action::finish(
        BOOT_ONCE_SCHEMA,
        &results,
        &audit,
        output,
        |d| d.summary.clone(),
        |_| false,
    )
}

async fn clear(
    target: &crate::args::TargetArgs,
    lock: &crate::args::LockFlags,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Exit> {
    let hosts = crate::config::Hosts::of(target)?;
    let connect = crate::credentials::connect_config(&target.connect, &hosts.entries)?;
    let writes = crate::config::lock_writes("boot clear", lock, dirs)?;
    let audit = writes.audit.clone();
    let op = Arc::new(Clear { writes });
    let results = hosts.run("boot clear", connect, dirs, Some(&audit), op, output).await;
    render::action::finish(
        BOOT_CLEAR_SCHEMA,
        &results,
        &audit,
        output,
        |c| c.summary.clone(),
        |_| false,
    )
}
