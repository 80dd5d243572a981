//! The end of a per-host action (`boot once`, `boot clear`, `bios password`, `secure-boot
//! reset-keys`): its `-o json` document, or a HOST/RESULT table, and the exit code.

use crate::Exit;
use crate::args::OutputFormat;
use crate::documents;
use crate::render::{self, Table};
use rftune_engine::audit::AuditLog;
use rftune_engine::fleet::HostResult;
use serde::Serialize;

/// Renders `results` (the `schema` document with `-o json`, else each host's `summary`) and
/// gives the exit code: 1 when a host failed, 2 when a host is still `waiting` for a reboot to
/// apply the change, 0 otherwise.
pub fn finish<T: Serialize>(
    schema: &'static str,
    results: &[HostResult<T>],
    audit: &AuditLog,
    output: OutputFormat,
    summary: impl Fn(&T) -> String,
    waiting: impl Fn(&T) -> bool,
) -> anyhow::Result<Exit> {
    let (doc, failed) = documents::action_document(schema, results, Some(audit));
    if output == OutputFormat::Json {
        render::json(&doc)?;
    } else {
        render::text(&table(results, summary))?;
    }
    let waiting = results.iter().filter(|r| r.result.as_ref().is_ok_and(&waiting)).count();
    documents::action_exit(failed, results.len(), waiting, Some(audit))
}

/// HOST and RESULT (each host's `summary`, or its error) for every host.
pub fn table<T>(results: &[HostResult<T>], summary: impl Fn(&T) -> String) -> String {
    let mut t = Table::new(["HOST", "RESULT"]);
    for r in results {
        match &r.result {
            Ok(done) => t.row([r.entry.name.clone(), summary(done)]),
            Err(e) => t.row([r.entry.name.clone(), format!("error: {e:#}")]),
        }
    }
    t.render()
}
