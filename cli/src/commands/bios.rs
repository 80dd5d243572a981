//! `rftune bios get`: current (and pending) BIOS attribute values, as the engine reads them.

use crate::Exit;
use crate::args::{BiosGetArgs, OutputFormat};
use crate::render::{self, Table};
use anyhow::{Result, bail};
use redfish_client::resources::bios::Attributes;
use rftune_engine::fleet::BmcEntry;
use rftune_engine::read::BiosValues;
use rftune_engine::state::StateDirs;
use serde::Serialize;

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

/// Runs `rftune bios get`.
pub async fn get(args: &BiosGetArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let entry = BmcEntry::from_url(&args.bmc.bmc)?;
    let access = crate::config::access_one(&args.bmc.connect, &entry, dirs)?;
    let read = BiosValues { pending: args.pending };
    let (bios, pending) = access.one(&entry, None, &read).await?;
    let attributes = redacted(select(&entry.name, &bios.attributes, &args.attributes)?);
    let pending = pending.map(redacted);
    let pending = pending.map(|p| {
        if args.attributes.is_empty() {
            p
        } else {
            p.into_iter().filter(|(k, _)| args.attributes.contains(k)).collect()
        }
    });
    let report = BiosReport {
        schema: "rftune.bios/v1",
        host: entry.name.clone(),
        attributes,
        pending,
    };
    match output {
        OutputFormat::Json => render::json(&report)?,
        OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => {
            render::text(&table(&report, !args.attributes.is_empty()))?;
        }
    }
    Ok(Exit::Success)
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
