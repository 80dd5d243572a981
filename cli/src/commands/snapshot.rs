//! `rftune snapshot`: the engine saves every current BIOS value and the iDRAC attributes rftune
//! manages, per host; this prints where (`rftune restore` applies one back).

use crate::Exit;
use crate::args::{OutputFormat, SnapshotArgs};
use crate::config::Hosts;
use crate::render;
use anyhow::Result;
use rftune_engine::snapshot::Take;
use rftune_engine::state::StateDirs;
use serde_json::json;
use std::fmt::Write;
use std::sync::Arc;

/// Runs `rftune snapshot`.
pub async fn snapshot(args: &SnapshotArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let hosts = Hosts::of(&args.target)?;
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let take = Arc::new(Take {
        cache: Arc::new(dirs.registry_cache()),
        state_dir: dirs.state.clone(),
    });
    let results = hosts.run("snapshot", connect, dirs, None, take, output).await;
    let failed = results.iter().filter(|r| r.result.is_err()).count();
    if hosts.single {
        let (snap, path) = results
            .into_iter()
            .next()
            .map_or_else(|| Err(anyhow::anyhow!("no host")), |r| Ok(r.result?))?;
        match output {
            OutputFormat::Json => render::json(&snap)?,
            _ => render::text(&format!(
                "{}: {} BIOS values saved to {}\n",
                snap.host,
                snap.bios.len(),
                path.display()
            ))?,
        }
        return Ok(Exit::Success);
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
                files.push(crate::documents::Failure::of(e, false).entry(&r.entry.name));
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
    Ok(Exit::Success)
}
