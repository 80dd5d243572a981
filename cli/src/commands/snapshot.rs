//! `rftune snapshot` (save every current BIOS value and the iDRAC attributes rftune manages)
//! and `rftune restore` (apply a snapshot back through the plan/apply path).

use crate::Outcome;
use crate::args::{OutputFormat, RestoreArgs, SnapshotArgs};
use crate::render;
use anyhow::{Context, Result};
use redfish_client::oem::dell::AttributeGroup;
use rftune_engine::assess::Chosen;
use rftune_engine::derive::{self, Selection};
use rftune_engine::fleet;
use rftune_engine::snapshot::Snapshot;
use rftune_engine::state::StateDirs;
use rftune_engine::target;
use serde_json::json;
use std::fmt::Write;
use std::sync::Arc;

/// Runs `rftune snapshot`.
pub async fn snapshot(args: &SnapshotArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let (entries, single) = super::targets(&args.target)?;
    let connect = Arc::new(crate::credentials::connect_config(&args.target.connect, &entries)?);
    let dirs_owned = Arc::new(dirs.clone());
    let cache = Arc::new(dirs.registry_cache());
    let progress = std::sync::Arc::new(render::Progress::hosts("snapshot", entries.len(), output));
    let results = fleet::run_all(
        entries,
        args.target.concurrency,
        |entry| {
            let (connect, dirs, cache) = (connect.clone(), dirs_owned.clone(), cache.clone());
            let progress = progress.clone();
            async move {
                let target = target::connect(&entry, &connect, &dirs, &*progress).await?;
                target.login().await?;
                let groups = [AttributeGroup::System, AttributeGroup::Idrac].into_iter().collect();
                let state = rftune_engine::bmc::read_state(&target, &cache, &groups, false).await;
                target.close().await;
                let state = state?;
                let snap = Snapshot::of(&entry.name, &entry.url, &state, "rftune snapshot");
                let path = snap.save(&dirs.state)?;
                Ok((snap, path))
            }
        },
        |_, ok| progress.host_done(ok),
    )
    .await;
    progress.finish();
    let failed = results.iter().filter(|r| r.result.is_err()).count();
    if single {
        let (snap, path) = results
            .into_iter()
            .next()
            .map_or_else(|| Err(anyhow::anyhow!("no host")), |r| r.result)?;
        match output {
            OutputFormat::Json => render::json(&snap)?,
            _ => render::text(&format!(
                "{}: {} BIOS values saved to {}\n",
                snap.host,
                snap.bios.len(),
                path.display()
            ))?,
        }
        return Ok(Outcome::Success);
    }
    let mut out = String::new();
    let mut files = Vec::new();
    for r in &results {
        match &r.result {
            Ok((snap, path)) => {
                let _ = writeln!(
                    out,
                    "{}: {} BIOS values saved to {}",
                    r.entry.name,
                    snap.bios.len(),
                    path.display()
                );
                files.push(json!({"host": r.entry.name, "file": path}));
            }
            Err(e) => {
                let _ = writeln!(out, "{}: error: {e:#}", r.entry.name);
                files.push(json!({"host": r.entry.name, "error": format!("{e:#}")}));
            }
        }
    }
    match output {
        OutputFormat::Json => render::json(&json!({"schema": "rftune.snapshots/v1", "snapshots": files}))?,
        _ => render::text(&out)?,
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} host(s) could not be snapshotted", results.len());
    }
    Ok(Outcome::Success)
}

/// Runs `rftune restore`: derives a profile from the snapshot (every attribute writable under
/// the snapshot's own values, and the iDRAC attributes rftune manages) and applies it.
pub async fn restore(args: &RestoreArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let snap = Snapshot::load(&args.snapshot)?;
    let url = args.bmc.clone().unwrap_or_else(|| snap.url.clone());
    let entry = fleet::BmcEntry {
        name: snap.host.clone(),
        ..fleet::BmcEntry::from_url(&url)?
    };
    // The registry decides what is restorable: read it from the host once (it is cached).
    let target = crate::credentials::connect_one(&args.connect, &entry, dirs).await?;
    target.login().await?;
    let state = rftune_engine::bmc::read_state(&target, &dirs.registry_cache(), &Default::default(), false).await;
    target.close().await;
    let state = state?;
    if state.service_tag.is_some()
        && snap.service_tag.is_some()
        && state.service_tag != snap.service_tag
        && !args.any_host
    {
        anyhow::bail!(
            "{}: the snapshot is of service tag {}, this host is {}; pass --any-host to restore it here anyway",
            entry.name,
            snap.service_tag.as_deref().unwrap_or_default(),
            state.service_tag.as_deref().unwrap_or_default()
        );
    }
    let name = format!(
        "restore-{}",
        snap.host.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
    );
    let text = derive::profile_toml(&snap, &name, None, &Selection::Restorable(state.registry))?;
    let chosen =
        Chosen::from_toml(&text, &args.snapshot.display().to_string()).context("the derived restore profile")?;
    let host = super::apply::Fleet {
        entries: vec![entry],
        single: true,
        concurrency: 1,
        shard: None,
    };
    super::apply::run_with(chosen, host, &args.flags, &args.connect, dirs, output).await
}
