//! The text forms of a `rftune.diff/v1` document: the table for people (the hosts that need
//! attention, then the fleet's counts) and JUnit XML for CI systems.

use super::Table;
use crate::documents::{DiffReport, DiffStatus};
use bios_profiles::Status;
use std::fmt::Write;

fn value(v: Option<&redfish_client::resources::bios::AttributeValue>) -> String {
    v.map_or_else(|| "-".to_owned(), ToString::to_string)
}

/// Per host: a heading, the attributes that are not in sync (all of them with `all`), the
/// validation findings; then a fleet summary when there is more than one host.
pub fn table(report: &DiffReport, all: bool) -> String {
    let mut out = String::new();
    let fleet = report.hosts.len() > 1;
    let mut hidden = 0;
    for h in &report.hosts {
        // A fleet shows the hosts that need attention; the rest are counted in the summary.
        let clean =
            h.status == DiffStatus::InSync && !h.lockdown && h.violations.iter().all(|v| v.starts_with("warning:"));
        if fleet && clean && !all {
            hidden += 1;
            continue;
        }
        let identity: Vec<&str> = [h.service_tag.as_deref(), h.model.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        let bios = h
            .bios_version
            .as_deref()
            .map(|v| format!(", BIOS {v}"))
            .unwrap_or_default();
        let _ = write!(out, "{}", h.host);
        if !identity.is_empty() {
            let _ = write!(out, " ({}{bios})", identity.join(", "));
        }
        match (&h.counts, &h.error) {
            (Some(c), _) => {
                let parts: Vec<String> = Status::ALL
                    .iter()
                    .filter(|s| c.get(**s) > 0)
                    .map(|s| format!("{} {}", c.get(*s), s.as_str()))
                    .collect();
                let _ = writeln!(out, " vs {}: {}", report.profile, parts.join(", "));
                if h.status == DiffStatus::Unverified {
                    let _ = writeln!(
                        out,
                        "  unverified: nothing checked differs, but {} setting(s) have no evidence for this host's CPU generation and were not checked: not proven in sync",
                        c.unverified
                    );
                }
            }
            (None, Some(e)) => {
                let _ = writeln!(out, ": error: {e}");
            }
            (None, None) => out.push('\n'),
        }
        let mut t = Table::new(["  ATTRIBUTE", "DESIRED", "CURRENT", "PENDING", "STATUS", "NOTE"]);
        for c in &h.changes {
            if all || c.status != Status::InSync {
                let name = match c.target {
                    bios_profiles::Target::Bios => c.attribute.clone(),
                    bios_profiles::Target::Idrac(g) => format!("{} ({g})", c.attribute),
                };
                t.row([
                    format!("  {name}"),
                    c.desired.to_string(),
                    value(c.current.as_ref()),
                    value(c.pending.as_ref()),
                    c.status.as_str().to_owned(),
                    c.note.clone().unwrap_or_default(),
                ]);
            }
        }
        if !t.is_empty() {
            out.push_str(&t.render());
        }
        for c in h.changes.iter().filter(|c| all || c.status != Status::InSync) {
            let Some(choice) = &c.choice else { continue };
            for line in choice.decisions.iter().filter_map(super::decisions::line) {
                let _ = writeln!(out, "  {}: {line}", c.attribute);
            }
            if let Some(split) = &choice.asid_split {
                let _ = writeln!(out, "  split {}", super::decisions::split(split));
            }
        }
        for v in &h.violations {
            let _ = writeln!(out, "  {v}");
        }
        if h.counts.is_some() && h.error.is_some() {
            let _ = writeln!(out, "  error: {}", h.error.as_deref().unwrap_or_default());
        }
    }
    if report.hosts.len() > 1 {
        let _ = writeln!(out, "\n{}", report.summary);
        if hidden > 0 {
            let _ = writeln!(
                out,
                "({hidden} host(s) in sync not listed; --all or -v lists them, -o json has every host)"
            );
        }
    }
    out
}

/// JUnit XML: one test suite per host, one test case per attribute; drift is a failure and a
/// host that could not be compared an error, so CI systems show both. A setting not checked is
/// skipped, and an unverified host (settings without evidence for its CPU generation) has one
/// more test case, `verdict`, failed as `unverified`: not proven in sync fails the gate.
pub fn junit(report: &DiffReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let tests: usize = report.hosts.iter().map(|h| h.changes.len().max(1)).sum();
    let unverified = |h: &crate::documents::HostDiff| usize::from(h.status == DiffStatus::Unverified);
    let tests: usize = tests + report.hosts.iter().map(unverified).sum::<usize>();
    let failures: usize = report
        .hosts
        .iter()
        .map(|h| h.changes.iter().filter(|c| !c.status.is_clean()).count() + unverified(h))
        .sum();
    let errors = report.summary.error;
    let _ = writeln!(
        out,
        "<testsuites name=\"rftune diff {}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">",
        xml(&report.profile)
    );
    for h in &report.hosts {
        let host_failures = h.changes.iter().filter(|c| !c.status.is_clean()).count() + unverified(h);
        let host_errors = usize::from(h.error.is_some());
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{host_failures}\" errors=\"{host_errors}\">",
            xml(&h.host),
            h.changes.len().max(1) + unverified(h)
        );
        if h.status == DiffStatus::Unverified {
            let n = h.counts.map_or(0, |c| c.unverified);
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"verdict\"><failure type=\"unverified\" message=\"{}\"/></testcase>",
                xml(&h.host),
                xml(&format!(
                    "unverified: {n} setting(s) have no evidence for this host's CPU generation and were not checked; not proven in sync"
                ))
            );
        }
        if let Some(e) = &h.error {
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"profile {}\"><error message=\"{}\"/></testcase>",
                xml(&h.host),
                xml(&report.profile),
                xml(e)
            );
        }
        for c in &h.changes {
            let name = format!("{} {}", c.target, c.attribute);
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml(&h.host),
                xml(&name)
            );
            if c.status.is_clean() {
                if c.status == Status::NotApplicable {
                    let _ = writeln!(
                        out,
                        "><skipped message=\"{}\"/></testcase>",
                        xml(c.note.as_deref().unwrap_or("not applicable"))
                    );
                } else {
                    out.push_str("/>\n");
                }
            } else {
                let msg = format!(
                    "{}: desired {}, current {}, pending {}",
                    c.status.as_str(),
                    c.desired,
                    value(c.current.as_ref()),
                    value(c.pending.as_ref())
                );
                let _ = writeln!(
                    out,
                    "><failure message=\"{}\">{}</failure></testcase>",
                    xml(&msg),
                    xml(&c.why)
                );
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Text for XML content and double-quoted attributes.
fn xml(s: &str) -> std::borrow::Cow<'_, str> {
    html_escape::encode_double_quoted_attribute(s)
}
