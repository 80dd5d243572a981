//! A plan for people (`rftune plan`, `apply --dry-run`, `merge` of plans): per host (or per
//! group of hosts whose plans read the same) who it is, what happens to it, the attributes
//! written (and, with `all`, every attribute) with their current, pending and desired values
//! and what decided them, the PATCH bodies and the state digest; then the counts line.

use super::Table;
use super::group::{self, Blocks};
use rftune_engine::plan::{PlanDocument, PlanStatus, PlanSummary, PlannedHost};
use std::fmt::Write;

/// The whole plan document, laid out as `blocks` says.
pub fn table(doc: &PlanDocument, all: bool, blocks: Blocks) -> String {
    let mut out = hosts(&doc.hosts, all, blocks);
    let _ = writeln!(out, "\n{}", doc.summary);
    out
}

/// Each host's block, or grouped: hosts whose blocks read the same (but for their identity and
/// the state digest each plan is made from) share one, headed by how many they are, what they
/// share and their names; hosts that could not be planned share a line per cause.
pub fn hosts(hosts: &[PlannedHost], all: bool, blocks: Blocks) -> String {
    if blocks == Blocks::PerHost {
        return hosts.iter().map(|h| host(h, all)).collect();
    }
    let (planned, failed): (Vec<&PlannedHost>, Vec<&PlannedHost>) =
        hosts.iter().partition(|h| h.status != PlanStatus::Error);
    let mut out = String::new();
    let keys = planned.iter().map(|h| format!("{}\n{}", outcome(h), body(h, all)));
    for (key, members) in group::by(keys) {
        let group: Vec<&PlannedHost> = members.iter().map(|&i| planned[i]).collect();
        let [one] = group.as_slice() else {
            let (what, body) = key.split_once('\n').unwrap_or((&key, ""));
            let names: Vec<&str> = group.iter().map(|h| h.host.as_str()).collect();
            let identities = || group.iter().map(|h| h.identity.as_ref());
            let shared = who(
                None,
                group::distinct(identities().map(|i| i.and_then(|i| i.model.as_deref()))).as_deref(),
                group::distinct(identities().map(|i| i.and_then(|i| i.bios_version.as_deref()))).as_deref(),
                group::distinct(identities().map(|i| i.and_then(|i| i.registry_id.as_deref()))).as_deref(),
            );
            let _ = write!(
                out,
                "{} hosts{shared}: {what}\n{}{body}",
                group.len(),
                group::members(&names)
            );
            // Each host's state (its service tag, at least) is its own.
            let digests: std::collections::BTreeSet<&str> =
                group.iter().filter_map(|h| h.state_digest.as_deref()).collect();
            match digests.iter().collect::<Vec<_>>().as_slice() {
                [] => {}
                [d] => {
                    let _ = writeln!(out, "  planned from state {d}");
                }
                _ => out.push_str("  planned from each host's own state (-o json has each digest)\n"),
            }
            continue;
        };
        out.push_str(&host(one, all));
    }
    let failed: Vec<group::Failed<'_>> = failed
        .iter()
        .map(|h| group::Failed {
            host: &h.host,
            url: Some(&h.url),
            text: h.error.clone().unwrap_or_else(|| "unknown".to_owned()),
        })
        .collect();
    out.push_str(&group::causes("error", &failed));
    out
}

/// The counts line of `hosts`.
pub fn summary(hosts: &[PlannedHost]) -> String {
    PlanSummary::of(hosts).to_string()
}

/// One host: `name (tag, model, BIOS v, registry): change, reboots`, its attributes, bodies
/// and state digest.
pub fn host(h: &PlannedHost, all: bool) -> String {
    let who = h.identity.as_ref().map_or_else(String::new, |i| {
        who(
            i.service_tag.as_deref(),
            i.model.as_deref(),
            i.bios_version.as_deref(),
            i.registry_id.as_deref(),
        )
    });
    let mut out = format!("{}{who}: {}\n{}", h.host, outcome(h), body(h, all));
    if let Some(d) = &h.state_digest {
        let _ = writeln!(out, "  planned from state {d}");
    }
    out
}

/// ` (TAG, MODEL, BIOS V, REGISTRY)`, what of it is known; empty when nothing is.
fn who(service_tag: Option<&str>, model: Option<&str>, bios_version: Option<&str>, registry: Option<&str>) -> String {
    let bios = bios_version.map(|v| format!("BIOS {v}"));
    let parts: Vec<&str> = [service_tag, model, bios.as_deref(), registry]
        .into_iter()
        .flatten()
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// What happens to the host: `change, reboots once`, `in sync`, `error: …`.
fn outcome(h: &PlannedHost) -> String {
    match h.status {
        PlanStatus::Change if h.reboot => "change, reboots once".to_owned(),
        PlanStatus::Change => "change, no reboot".to_owned(),
        PlanStatus::InSync => "in sync".to_owned(),
        PlanStatus::Error => format!("error: {}", h.error.as_deref().unwrap_or("unknown")),
    }
}

/// The attributes shown (written or pending, or all), what decided them, what else the plan
/// does, and the PATCH bodies.
fn body(h: &PlannedHost, all: bool) -> String {
    let mut out = String::new();
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
        if let Some(body) = &p.boot_order {
            let _ = writeln!(out, "  PATCH boot order settings {body}");
        }
        if let Some(body) = &p.bios {
            let _ = writeln!(out, "  PATCH Bios/Settings {body}");
        }
        for (group, body) in &p.idrac {
            let _ = writeln!(out, "  PATCH DellAttributes/{group} {body}");
        }
    }
    out
}
