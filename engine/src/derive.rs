//! Profiles from snapshots: `rftune profiles derive` writes a profile file from a known-good
//! server's snapshot, and `rftune restore` ([`crate::restore`]) derives one in memory and
//! applies it through the same plan/apply path (with validation) as any profile.

use crate::backend::AttributeGroup;
use crate::error::{Result, bad_input};
use crate::snapshot::Snapshot;
use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::AttributeValue;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Which attributes of the snapshot become settings.
#[derive(Debug, Clone)]
pub enum Selection {
    /// Exactly these (BIOS or iDRAC names).
    Named(Vec<String>),
    /// The tunable settings rftune knows (the settings catalog).
    Catalog,
    /// Every BIOS attribute that is writable under the snapshot's own values (a restore), and
    /// the iDRAC attributes rftune's profiles manage.
    Restorable(std::sync::Arc<AttributeRegistry>),
}

/// The iDRAC attributes shipped profiles set: what `apply` may have changed.
fn managed_idrac() -> BTreeSet<String> {
    bios_profiles::Library::shipped()
        .map(|lib| {
            lib.list()
                .iter()
                .flat_map(|p| {
                    p.idrac
                        .keys()
                        .cloned()
                        .chain(p.platforms.values().flat_map(|pl| pl.idrac.keys().cloned()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes a profile (TOML) holding the snapshot's values of the selected attributes.
pub fn profile_toml(
    snapshot: &Snapshot,
    name: &str,
    description: Option<&str>,
    selection: &Selection,
) -> Result<String> {
    let host = format!(
        "{} ({})",
        snapshot.host,
        snapshot.service_tag.as_deref().unwrap_or("no service tag")
    );
    let why = format!("the value on {host} when snapshotted at {}", snapshot.taken_at);
    let mut bios: Vec<(&String, &AttributeValue)> = Vec::new();
    let mut idrac: Vec<(AttributeGroup, &String, &AttributeValue)> = Vec::new();
    match selection {
        Selection::Named(names) => {
            for n in names {
                if let Some(v) = snapshot.bios.get(n) {
                    bios.push((n, v));
                } else if let Some((g, v)) = snapshot.idrac.iter().find_map(|(g, a)| a.get(n).map(|v| (*g, v))) {
                    idrac.push((g, n, v));
                } else {
                    bad_input!("the snapshot of {host} has no attribute {n:?}");
                }
            }
        }
        Selection::Catalog => {
            let catalog = bios_profiles::catalog::shipped()?;
            let known: BTreeSet<&str> = catalog
                .entries
                .iter()
                .flat_map(|e| e.attributes.iter().map(String::as_str))
                .collect();
            bios.extend(snapshot.bios.iter().filter(|(k, _)| known.contains(k.as_str())));
            for (g, attrs) in &snapshot.idrac {
                idrac.extend(
                    attrs
                        .iter()
                        .filter(|(k, _)| known.contains(k.as_str()))
                        .map(|(k, v)| (*g, k, v)),
                );
            }
        }
        Selection::Restorable(registry) => {
            let evaluation = DependencyEvaluator::new(registry).evaluate(&snapshot.bios);
            bios.extend(snapshot.bios.iter().filter(|(k, v)| {
                // A snapshot older than the rule may still hold a password hash: never restored.
                !crate::backend::is_secret_bios_attribute(k)
                    && **v != AttributeValue::Null
                    && registry.attribute(k).is_some_and(|a| !a.write_only.unwrap_or(false))
                    && !evaluation.is_read_only(k)
                    && !evaluation.is_hidden(k)
            }));
            let managed = managed_idrac();
            for (g, attrs) in &snapshot.idrac {
                idrac.extend(
                    attrs
                        .iter()
                        .filter(|(k, _)| managed.contains(*k))
                        .map(|(k, v)| (*g, k, v)),
                );
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Derived by rftune from a snapshot of {host} taken {}.",
        snapshot.taken_at
    );
    let _ = writeln!(out, "name = {}", toml_string(name));
    let default_description = format!(
        "BIOS and iDRAC values of {host}, {}",
        snapshot.model.as_deref().unwrap_or("unknown model")
    );
    let _ = writeln!(
        out,
        "description = {}",
        toml_string(description.unwrap_or(&default_description))
    );
    if let Some(m) = &snapshot.model {
        let _ = writeln!(out, "models = [{}]", toml_string(m));
    }
    for (k, v) in bios {
        let _ = write!(out, "\n[bios.{}]\nvalue = {}\n", toml_key(k), toml_value(v)?);
        let _ = writeln!(
            out,
            "why = {}\nsource = \"snapshot\"\nconfidence = \"used\"",
            toml_string(&why)
        );
    }
    for (g, k, v) in idrac {
        let group = serde_json::to_value(g)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = write!(
            out,
            "\n[idrac.{}]\ngroup = {}\nvalue = {}\n",
            toml_key(k),
            toml_string(&group),
            toml_value(v)?
        );
        let _ = writeln!(
            out,
            "why = {}\nsource = \"snapshot\"\nconfidence = \"used\"",
            toml_string(&why)
        );
    }
    Ok(out)
}

pub(crate) fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

pub(crate) fn toml_key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        k.to_owned()
    } else {
        toml_string(k)
    }
}

pub(crate) fn toml_value(v: &AttributeValue) -> Result<String> {
    Ok(match v {
        AttributeValue::String(s) => toml_string(s),
        AttributeValue::Integer(i) => i.to_string(),
        AttributeValue::Bool(b) => b.to_string(),
        other => bad_input!("cannot express the value {other} in a profile"),
    })
}
