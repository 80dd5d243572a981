//! The table of an apply (or restore) for people: each host's outcome, or hosts whose outcomes
//! read the same grouped under one block and failures under one line per cause.

use super::Table;
use super::group::{self, Blocks};
use crate::documents::{ApplyReport, ApplyStatus};
use rftune_engine::converge::{ApplyOutcome, HostApply};
use rftune_engine::fleet::HostResult;
use std::fmt::Write;

/// Per host (or per group of hosts, as `blocks` says) its outcome and summary, with a dry run's
/// writes, unlocks, choices, replaced work and snapshot; then the fleet's counts.
/// `report.hosts` are the entries of `results`, in order.
pub fn table(report: &ApplyReport, results: &[HostResult<HostApply>], blocks: Blocks) -> String {
    let mut out = String::new();
    let mut done: Vec<(&str, &HostApply)> = Vec::new();
    // Failures by their label (`stale`, `not started`, `error`): name, URL and text.
    let mut failed: [(&str, Vec<group::Failed<'_>>); 3] = [
        ("stale", Vec::new()),
        ("not started", Vec::new()),
        ("error", Vec::new()),
    ];
    for (i, r) in results.iter().enumerate() {
        let name = r.entry.name.as_str();
        let (label, text) = match &r.result {
            Ok(h) if blocks == Blocks::PerHost => {
                out.push_str(&host(name, h, report.dry_run));
                continue;
            }
            Ok(h) => {
                done.push((name, h));
                continue;
            }
            Err(e) if e.kind() == Some(rftune_engine::HostErrorKind::Stale) => {
                (0, crate::documents::error_text(ApplyStatus::Stale, name, e))
            }
            // Left untouched (also by a stop that came before anything was written to it).
            Err(e)
                if report
                    .hosts
                    .get(i)
                    .is_some_and(|h| h["outcome"] == ApplyStatus::NotStarted.as_str()) =>
            {
                let text = format!("{e:#}");
                let text = rftune_engine::error::without_host(name, &text);
                (1, text.strip_prefix("not started: ").unwrap_or(text).to_owned())
            }
            Err(e) => (2, format!("{e:#}")),
        };
        if blocks == Blocks::PerHost {
            let _ = writeln!(out, "{name}: {}: {text}", failed[label].0);
        } else {
            failed[label].1.push(group::Failed {
                host: name,
                url: Some(&r.entry.url),
                text,
            });
        }
    }
    let keys = done.iter().map(|(_, h)| block(h, report.dry_run));
    for (key, members) in group::by(keys) {
        let group: Vec<(&str, &HostApply)> = members.iter().map(|&i| done[i]).collect();
        match group.as_slice() {
            [(name, h)] => out.push_str(&host(name, h, report.dry_run)),
            many => {
                let names: Vec<&str> = many.iter().map(|(name, _)| *name).collect();
                let (heading, rest) = key.split_once('\n').unwrap_or((&key, ""));
                let _ = write!(out, "{} hosts: {heading}\n{}{rest}", many.len(), group::members(&names));
                let dirs = group::distinct(
                    many.iter()
                        .map(|(_, h)| h.snapshot.as_deref().and_then(|p| p.parent()).and_then(|d| d.to_str())),
                );
                if let Some(dirs) = dirs {
                    let _ = writeln!(out, "  snapshots: each host's own, in {dirs}");
                }
            }
        }
    }
    for (label, hosts) in &failed {
        out.push_str(&group::causes(label, hosts));
    }
    let s = &report.summary;
    if s.hosts > 1 || s.error > 0 {
        let _ = writeln!(out, "\n{s}");
    }
    out
}

/// One host's block: its name, then its [`block`] and its snapshot.
fn host(name: &str, h: &HostApply, dry_run: bool) -> String {
    let mut out = format!("{name}: {}", block(h, dry_run));
    if let Some(p) = &h.snapshot {
        let _ = writeln!(out, "  snapshot: {}", p.display());
    }
    out
}

/// What a host's apply did, its own names aside: `OUTCOME: SUMMARY`, then what a dry run (or a
/// planned outcome) writes, unlocks, the choices made and the work replaced.
fn block(h: &HostApply, dry_run: bool) -> String {
    let mut out = String::new();
    let outcome = ApplyStatus::Done(h.outcome).as_str();
    let _ = writeln!(out, "{outcome}: {}", h.summary);
    if dry_run || h.outcome == ApplyOutcome::Planned {
        let mut t = Table::new(["  WRITE", "ATTRIBUTE", "VALUE"]);
        for (k, v) in &h.bios {
            t.row(["  BIOS".to_owned(), k.clone(), v.to_string()]);
        }
        for (g, attrs) in &h.idrac {
            for (k, v) in attrs {
                t.row([format!("  iDRAC {g}"), k.clone(), v.to_string()]);
            }
        }
        if !t.is_empty() {
            out.push_str(&t.render());
        }
    }
    for u in &h.unlocks {
        let _ = writeln!(out, "  unlock: {u}");
    }
    for (attribute, c) in &h.choices {
        let picked = c
            .chosen
            .as_ref()
            .map_or_else(|| "left as is".to_owned(), ToString::to_string);
        let _ = writeln!(out, "  choice: {attribute} = {picked}: {}", c.reason);
    }
    if let Some(replaced) = &h.replaced {
        let _ = writeln!(out, "  replaced: {replaced}");
    }
    out
}
