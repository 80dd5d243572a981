//! `rftune bios get`: current (and pending) BIOS attribute values.

use crate::Outcome;
use crate::args::{BiosGetArgs, OutputFormat};
use crate::render::{self, Table};
use anyhow::{Result, bail};
use redfish_client::resources::bios::{Attributes, Bios};
use rftune_engine::state::StateDirs;
use rftune_engine::target::{Layout, Target};
use serde::Serialize;

/// The `rftune.bios/v1` document.
#[derive(Debug, Serialize)]
pub struct BiosReport {
    /// Always `rftune.bios/v1`.
    pub schema: &'static str,
    /// The target's name.
    pub host: String,
    /// Current values (all, or those asked for).
    pub attributes: Attributes,
    /// Pending values, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Attributes>,
}

/// Runs `rftune bios get`.
pub async fn get(args: &BiosGetArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let entry = rftune_engine::fleet::BmcEntry::from_url(&args.bmc.bmc)?;
    let mut target = crate::credentials::connect_one(&args.bmc.connect, &entry, dirs).await?;
    let result = read(&mut target, args.pending).await;
    target.close().await;
    let (bios, pending) = result?;
    let attributes = select(&target.name, &bios.attributes, &args.attributes)?;
    let pending = pending.map(|p| {
        if args.attributes.is_empty() {
            p
        } else {
            p.into_iter().filter(|(k, _)| args.attributes.contains(k)).collect()
        }
    });
    let report = BiosReport {
        schema: "rftune.bios/v1",
        host: target.name.clone(),
        attributes,
        pending,
    };
    match output {
        OutputFormat::Json => render::json(&report)?,
        OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => {
            render::text(&table(&report, !args.attributes.is_empty()))?;
        }
    }
    Ok(Outcome::Success)
}

async fn read(target: &mut Target, pending: bool) -> Result<(Bios, Option<Attributes>)> {
    let layout = target.layout().await?;
    target.login().await?;
    let bios_id = target.bios_id().await?;
    let t = &*target;
    let bios = t
        .client
        .bios(&bios_id)
        .await
        .map_err(|e| t.explain(e, "reading BIOS values"))?;
    let pending = if pending {
        let settings = t
            .client
            .pending_bios(&bios)
            .await
            .map_err(|e| t.explain(e, "reading pending BIOS values"))?;
        Some(match layout {
            // iDRAC lists only what is staged; a staged value equal to the current one still
            // rides on the pending job.
            Layout::Dell => settings.attributes,
            Layout::Generic => pending_changes(&bios.attributes, settings.attributes),
        })
    } else {
        None
    };
    Ok((bios, pending))
}

/// The entries of a settings object that differ from the current values. Generic services
/// often mirror every attribute in their settings object; only a different value is pending.
pub fn pending_changes(current: &Attributes, settings: Attributes) -> Attributes {
    settings
        .into_iter()
        .filter(|(k, v)| current.get(k) != Some(v))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_object_mirroring_current_values_has_nothing_pending() {
        let current: Attributes = [("A".to_owned(), "x".into()), ("B".to_owned(), 1.into())]
            .into_iter()
            .collect();
        let mirror = current.clone();
        assert!(pending_changes(&current, mirror).is_empty());
        let mut changed = current.clone();
        changed.insert("B".into(), 2.into());
        changed.insert("New".into(), "y".into());
        let pending = pending_changes(&current, changed);
        assert_eq!(pending.keys().collect::<Vec<_>>(), ["B", "New"]);
    }
}
