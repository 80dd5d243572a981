//! `rftune bios get`: current (and pending) BIOS attribute values, as the engine reads them,
//! of one host or every host of an inventory.

use crate::Exit;
use crate::args::{BiosGetArgs, OutputFormat};
use crate::config::Hosts;
use crate::documents;
use crate::render::{self, Table};
use anyhow::{Result, bail};
use redfish_client::resources::bios::Attributes;
use rftune_engine::fleet::HostResult;
use rftune_engine::read::BiosValues;
use rftune_engine::state::StateDirs;
use serde::Serialize;
use std::sync::Arc;

/// The schema of `rftune bios get -o json`.
const SCHEMA: &str = "rftune.bios/v1";

/// The `rftune.bios/v1` document.
#[derive(Debug, Serialize)]
pub struct BiosReport {
    /// Always `rftune.bios/v1`.
    pub schema: &'static str,
    /// The host's name.
    pub host: String,
    /// Current values (all, or those asked for).
    pub attributes: Attributes,
    /// Pending values, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Attributes>,
}

/// Runs `rftune bios get` on one host, or on every host of an inventory (hosts with the same
/// values share one table).
pub async fn get(args: &BiosGetArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let hosts = Hosts::of(&args.target)?;
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let read = Arc::new(BiosValues { pending: args.pending });
    let results = hosts.run("bios get", connect, dirs, None, read, output).await;
    let results: Vec<HostResult<BiosReport>> = results
        .into_iter()
        .map(|r| {
            let result = r.result.and_then(|(bios, pending)| {
                report(&r.entry.name, &bios.attributes, pending, &args.attributes)
                    .map_err(|e| rftune_engine::Error::bad_input(format!("{e:#}")))
            });
            HostResult { entry: r.entry, result }
        })
        .collect();
    let explicit = !args.attributes.is_empty();
    if hosts.single {
        let report = results
            .into_iter()
            .next()
            .map_or_else(|| Err(anyhow::anyhow!("no host")), |r| Ok(r.result?))?;
        match output {
            OutputFormat::Json => render::json(&report)?,
            OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => {
                render::text(&table(&report, explicit))?;
            }
        }
        return Ok(Exit::Success);
    }
    let (doc, failed) = documents::action_document(SCHEMA, &results, None);
    match output {
        OutputFormat::Json => render::json(&doc)?,
        OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => {
            render::text(&grouped(&results, explicit))?;
        }
    }
    documents::action_exit(failed, results.len(), 0, None)
}

/// The `rftune.bios/v1` document of one host: its values (those asked for), redacted, and its
/// pending ones when read.
fn report(host: &str, current: &Attributes, pending: Option<Attributes>, wanted: &[String]) -> Result<BiosReport> {
    let attributes = redacted(select(host, current, wanted)?);
    let pending = pending.map(redacted).map(|p| {
        if wanted.is_empty() {
            p
        } else {
            p.into_iter().filter(|(k, _)| wanted.contains(k)).collect()
        }
    });
    Ok(BiosReport {
        schema: SCHEMA,
        host: host.to_owned(),
        attributes,
        pending,
    })
}

/// A fleet's values: hosts whose values (and pending values) are the same share one table,
/// headed by how many they are and their names; then the failures, grouped.
fn grouped(results: &[HostResult<BiosReport>], explicit: bool) -> String {
    let mut groups: Vec<(String, Vec<&BiosReport>)> = Vec::new();
    for report in results.iter().filter_map(|r| r.result.as_ref().ok()) {
        let key = serde_json::to_string(&(&report.attributes, &report.pending)).unwrap_or_default();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(report),
            None => groups.push((key, vec![report])),
        }
    }
    let mut out = String::new();
    for (i, (_, members)) in groups.iter().enumerate() {
        let names: Vec<&str> = members.iter().map(|r| r.host.as_str()).collect();
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{} host(s): {}\n", names.len(), render::group::names(&names)));
        out.push_str(&table(members[0], explicit));
    }
    let read: usize = groups.iter().map(|(_, m)| m.len()).sum();
    out.push_str(&format!(
        "\n{} hosts: {read} read in {} group(s) of identical values, {} failed\n",
        results.len(),
        groups.len(),
        results.len() - read
    ));
    out.push_str(&render::group::failures(results));
    out
}

/// `attributes` with the BIOS password hashes and salts real iDRACs list replaced by
/// `(set, not shown)`: whether a password is set shows, its hash never.
fn redacted(mut attributes: Attributes) -> Attributes {
    for (name, value) in &mut attributes {
        if redfish_client::oem::dell::is_secret_bios_attribute(name) && value.as_str().is_some_and(|v| !v.is_empty()) {
            *value = "(set, not shown)".into();
        }
    }
    attributes
}

fn select(host: &str, all: &Attributes, wanted: &[String]) -> Result<Attributes> {
    if wanted.is_empty() {
        return Ok(all.clone());
    }
    let mut out = Attributes::new();
    for name in wanted {
        match all.get(name) {
            Some(v) => {
                out.insert(name.clone(), v.clone());
            }
            None => {
                let near = bios_profiles::suggest::closest(name, all.keys().map(String::as_str));
                if near.is_empty() {
                    bail!("{host}: BIOS has no attribute {name:?}");
                }
                bail!(
                    "{host}: BIOS has no attribute {name:?}; did you mean {}?",
                    near.join(", ")
                );
            }
        }
    }
    Ok(out)
}

fn table(report: &BiosReport, explicit: bool) -> String {
    match &report.pending {
        None => {
            let mut t = Table::new(["ATTRIBUTE", "VALUE"]);
            for (k, v) in &report.attributes {
                t.row([k.clone(), v.to_string()]);
            }
            t.render()
        }
        Some(pending) => {
            let mut t = Table::new(["ATTRIBUTE", "CURRENT", "PENDING"]);
            for (k, v) in &report.attributes {
                let p = pending.get(k);
                if explicit || p.is_some() {
                    t.row([
                        k.clone(),
                        v.to_string(),
                        p.map_or_else(|| "-".to_owned(), ToString::to_string),
                    ]);
                }
            }
            if t.is_empty() {
                "No pending BIOS values.\n".to_owned()
            } else {
                t.render()
            }
        }
    }
}
