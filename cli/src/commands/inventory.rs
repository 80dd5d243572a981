//! `rftune inventory`: identity, firmware, CPUs, DIMMs, power state, pending BIOS values, open
//! jobs and (`--lifecycle N`) the latest Lifecycle-log entries of one BMC or a fleet, collected
//! by the engine (`rftune.inventory/v1`).

use crate::Exit;
use crate::args::{InventoryArgs, OutputFormat};
use crate::config::Hosts;
use crate::render;
use anyhow::Result;
use rftune_engine::inventory::{Collect, SCHEMA};
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// Runs `rftune inventory` on one BMC or a fleet.
pub async fn run(args: &InventoryArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let hosts = Hosts::of(&args.target)?;
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let collect = Collect {
        lifecycle: args.lifecycle.map_or(0, usize::from),
    };
    let results = hosts
        .run("inventory", connect, dirs, None, Arc::new(collect), output)
        .await;
    if hosts.single {
        let inventory = results
            .into_iter()
            .next()
            .map_or_else(|| Err(anyhow::anyhow!("no host")), |r| Ok(r.result?))?;
        match output {
            OutputFormat::Json => render::json(&inventory)?,
            OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => {
                render::text(&render::inventory::table(&inventory))?;
            }
        }
        return Ok(Exit::Success);
    }
    let failed = results.iter().filter(|r| r.result.is_err()).count();
    match output {
        OutputFormat::Json => {
            let hosts: Vec<serde_json::Value> = results
                .iter()
                .map(|r| match &r.result {
                    Ok(inv) => serde_json::to_value(inv).unwrap_or_default(),
                    Err(e) => crate::documents::Failure::of(e, false).entry(&r.entry.name),
                })
                .collect();
            render::json(&serde_json::json!({"schema": SCHEMA, "hosts": hosts}))?;
        }
        OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => {
            render::text(&render::inventory::fleet_table(&results))?;
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} hosts could not be read (details above)", results.len());
    }
    Ok(Exit::Success)
}
