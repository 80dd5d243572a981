//! A plan for people (`rftune plan`, `apply --dry-run`, `merge` of plans): per host who it is,
//! what happens to it, the attributes written (and, with `all`, every attribute) with their
//! current, pending and desired values and what decided them, the PATCH bodies and the state
//! digest; then the counts line.

use super::Table;
use rftune_engine::plan::{PlanDocument, PlanStatus, PlanSummary, PlannedHost};
use std::fmt::Write;

/// The whole plan document.
pub fn table(doc: &PlanDocument, all: bool) -> String {
    let mut out = hosts(&doc.hosts, all);
    let _ = writeln!(out, "\n{}", doc.summary);
    out
}

/// Each host's block.
pub fn hosts(hosts: &[PlannedHost], all: bool) -> String {
    hosts.iter().map(|h| host(h, all)).collect()
}

/// The counts line of `hosts`.
pub fn summary(hosts: &[PlannedHost]) -> String {
    PlanSummary::of(hosts).to_string()
}

/// One host: `name (tag, model, BIOS v, registry): change, reboots`, its attributes, bodies
/// and state digest.
pub fn host(h: &PlannedHost, all: bool) -> String {
    let mut out = String::new();
    let who = h
        .identity
        .as_ref()
        .map(|i| {
            let parts: Vec<String> = [
                i.service_tag.clone(),
                i.model.clone(),
                i.bios_version.as_ref().map(|v| format!("BIOS {v}")),
                i.registry_id.clone(),
            ]
            .into_iter()
            .flatten()
            .collect();
            format!(" ({})", parts.join(", "))
        })
        .unwrap_or_default();
    let what = match h.status {
        PlanStatus::Change if h.reboot => "change, reboots once".to_owned(),
        PlanStatus::Change => "change, no reboot".to_owned(),
        PlanStatus::InSync => "in sync".to_owned(),
        PlanStatus::Error => format!("error: {}", h.error.as_deref().unwrap_or("unknown")),
    };
    let _ = writeln!(out, "{}{who}: {what}", h.host);
    let shown: Vec<_> = h
        .attributes
        .iter()
        .filter(|a| all || a.action != "keep" || a.pending.is_some())
        .collect();
    if !shown.is_empty() {
        let mut t = Table::new([
            "  TARGET",
            "ATTRIBUTE",
            "CURRENT",
            "PENDING",
            "DESIRED",
            "ACTION",
            "SOURCE",
        ]);
        let value = |v: Option<&redfish_client::resources::bios::AttributeValue>| {
            v.map_or_else(|| "-".to_owned(), ToString::to_string)
        };
        for a in &shown {
            t.row([
                format!("  {}", a.target),
                a.attribute.clone(),
                value(a.current.as_ref()),
                value(a.pending.as_ref()),
                a.desired.to_string(),
                a.action.clone(),
                if a.source.is_empty() {
                    "-".to_owned()
                } else {
                    a.source.clone()
                },
            ]);
        }
        out.push_str(&t.render());
        for a in shown.iter().filter(|a| a.action != "keep") {
            if let Some(why) = &a.decided_by {
                let _ = writeln!(out, "  {}: {why}", a.attribute);
            }
        }
    }
    let kept = h.attributes.len() - shown.len();
    if kept > 0 {
        let _ = writeln!(out, "  ({kept} more attribute(s) in sync; --all lists them)");
    }
    if h.adopts_pending {
        let _ = writeln!(out, "  adopts the values an earlier rftune run staged");
    }
    if let Some(r) = &h.replaces {
        let _ = writeln!(out, "  replaces: {r}");
    }
    if let Some(p) = &h.patch {
        if let Some(body) = &p.bios {
            let _ = writeln!(out, "  PATCH Bios/Settings {body}");
        }
        for (group, body) in &p.idrac {
            let _ = writeln!(out, "  PATCH DellAttributes/{group} {body}");
        }
    }
    if let Some(d) = &h.state_digest {
        let _ = writeln!(out, "  planned from state {d}");
    }
    out
}
