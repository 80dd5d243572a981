//! The text of `rftune scp export`, `scp import --preview` and `scp import`: a table of hosts,
//! then each host's components with the iDRAC's result for every attribute and its notes.

use super::Table;
use rftune_engine::fleet::HostResult;
use rftune_engine::scp::export::Exported;
use rftune_engine::scp::import::{HostImport, ImportOutcome, TaskReport};
use std::fmt::Write;

/// `scp export`: one row per host.
pub fn export_table(results: &[HostResult<Exported>]) -> String {
    let mut t = Table::new(["HOST", "FILE", "COMPONENTS", "ATTRIBUTES", "JOB", "NOTE"]);
    for r in results {
        match &r.result {
            Ok(e) => t.row([
                r.entry.name.clone(),
                e.file.display().to_string(),
                e.components.to_string(),
                e.attributes.to_string(),
                e.job.clone(),
                if e.sanitized {
                    format!("sanitized: {} secret(s) emptied", e.secrets_emptied)
                } else {
                    "raw (mode 0600)".to_owned()
                },
            ]),
            Err(e) => t.row([
                r.entry.name.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                format!("error: {e:#}"),
            ]),
        }
    }
    t.render()
}

/// A task's results, component by component, indented.
fn components(out: &mut String, report: &TaskReport, verb: &str) {
    for c in &report.components {
        let _ = writeln!(
            out,
            "  {} ({}): {} {verb}, {} failed",
            c.fqdd, c.kind, c.applied, c.failed
        );
        for a in &c.attributes {
            let mark = if a.ok { " " } else { "!" };
            let old = a.old.as_deref().unwrap_or("-");
            let new = a.new.as_deref().unwrap_or("-");
            let why = if a.ok {
                String::new()
            } else {
                format!("  {}", a.message.as_deref().unwrap_or(&a.status))
            };
            let _ = writeln!(out, "   {mark} {}: {old} → {new}{why}", a.name);
        }
    }
    for n in &report.notes {
        let _ = writeln!(out, "  note: {n}");
    }
}

/// `scp import --preview`: per host, what the iDRAC would change.
pub fn preview_text(file: &str, results: &[HostResult<TaskReport>]) -> String {
    let mut out = String::new();
    for r in results {
        match &r.result {
            Ok(p) => {
                let _ = writeln!(
                    out,
                    "{}: preview of {file}, job {} {}: {}",
                    r.entry.name,
                    p.job,
                    p.state,
                    p.message.as_deref().unwrap_or("")
                );
                components(&mut out, p, "would change");
            }
            Err(e) => {
                let _ = writeln!(out, "{}: error: {e:#}", r.entry.name);
            }
        }
    }
    out
}

/// `scp import`: per host, how it ended and each component's result.
pub fn import_text(file: &str, results: &[HostResult<HostImport>], audit_log: &str) -> String {
    let mut out = String::new();
    let mut t = Table::new(["HOST", "OUTCOME", "JOB", "REBOOTED", "SUMMARY"]);
    for r in results {
        match &r.result {
            Ok(h) => t.row([
                r.entry.name.clone(),
                match h.outcome {
                    ImportOutcome::Imported => "imported",
                    ImportOutcome::InSync => "in_sync",
                    ImportOutcome::NotConverged => "not_converged",
                }
                .to_owned(),
                h.report.job.clone(),
                if h.rebooted { "yes" } else { "no" }.to_owned(),
                h.summary.clone(),
            ]),
            Err(e) => t.row([
                r.entry.name.clone(),
                "error".into(),
                "-".into(),
                "-".into(),
                format!("{e:#}"),
            ]),
        }
    }
    out.push_str(&t.render());
    for r in results {
        if let Ok(h) = &r.result
            && !h.report.components.is_empty()
        {
            let _ = writeln!(out, "\n{} ({file}, job {}):", r.entry.name, h.report.job);
            components(&mut out, &h.report, "set");
        }
    }
    let _ = writeln!(out, "\nEvery step is in the audit log {audit_log}");
    out
}
