//! The table of an apply (or restore) for people.

use super::Table;
use crate::documents::{ApplyReport, ApplyStatus};
use rftune_engine::converge::{ApplyOutcome, HostApply};
use rftune_engine::fleet::HostResult;
use std::fmt::Write;

/// Per host its outcome and summary, with a dry run's writes, unlocks, choices, replaced work
/// and snapshot; then the fleet's counts. `report.hosts` are the entries of `results`, in order.
pub fn table(report: &ApplyReport, results: &[HostResult<HostApply>]) -> String {
    let mut out = String::new();
    for (i, r) in results.iter().enumerate() {
        match &r.result {
            Ok(h) => {
                let outcome = ApplyStatus::Done(h.outcome).as_str();
                let _ = writeln!(out, "{}: {outcome}: {}", r.entry.name, h.summary);
                if report.dry_run || h.outcome == ApplyOutcome::Planned {
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
                if let Some(p) = &h.snapshot {
                    let _ = writeln!(out, "  snapshot: {}", p.display());
                }
            }
            Err(e) if e.kind() == Some(rftune_engine::HostErrorKind::Stale) => {
                let text = crate::documents::error_text(ApplyStatus::Stale, &r.entry.name, e);
                let _ = writeln!(out, "{}: stale: {text}", r.entry.name);
            }
            // Left untouched (also by a stop that came before anything was written to it).
            Err(e)
                if report
                    .hosts
                    .get(i)
                    .is_some_and(|h| h["outcome"] == ApplyStatus::NotStarted.as_str()) =>
            {
                let text = format!("{e:#}");
                let text = text.strip_prefix(&format!("{}: ", r.entry.name)).unwrap_or(&text);
                let why = text.strip_prefix("not started: ").unwrap_or(text);
                let _ = writeln!(out, "{}: not started: {why}", r.entry.name);
            }
            Err(e) => {
                let _ = writeln!(out, "{}: error: {e:#}", r.entry.name);
            }
        }
    }
    let s = &report.summary;
    if s.hosts > 1 || s.error > 0 {
        let _ = writeln!(out, "\n{s}");
    }
    out
}
