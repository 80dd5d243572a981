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

/// The failed hosts of `results`, grouped by what went wrong once the host's own text (its
/// name, its URL) is set aside: one line per distinct failure, `error on 3 hosts (a, b, c):
/// TEXT`. Empty when no host failed.
pub fn failures<T>(results: &[HostResult<T>]) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for r in results {
        let Err(e) = &r.result else { continue };
        let text = format!("{e:#}");
        let mut text = rftune_engine::error::without_host(&r.entry.name, &text).to_owned();
        if let Ok(url) = url::Url::parse(&r.entry.url) {
            let key = rftune_engine::fleet::host_key(&url);
            text = text.replace(&r.entry.url, "<BMC>").replace(&key, "<BMC>");
        }
        match groups.iter_mut().find(|(t, _)| *t == text) {
            Some((_, hosts)) => hosts.push(&r.entry.name),
            None => groups.push((text, vec![&r.entry.name])),
        }
    }
    groups
        .iter()
        .map(|(text, hosts)| match hosts.as_slice() {
            [one] => format!("{one}: error: {text}\n"),
            many => format!("error on {} hosts ({}): {text}\n", many.len(), names(many)),
        })
        .collect()
}

/// Up to five of `hosts`, then how many more: `a, b, c, d, e and 45 more`.
pub fn names(hosts: &[&str]) -> String {
    const SHOWN: usize = 5;
    if hosts.len() <= SHOWN {
        return hosts.join(", ");
    }
    format!("{} and {} more", hosts[..SHOWN].join(", "), hosts.len() - SHOWN)
}
