//! The text forms of a `rftune.diff/v1` document: the table for people (the hosts that need
//! attention, then the fleet's counts) and JUnit XML for CI systems.

use super::Table;
use super::group::{self, Blocks};
use crate::documents::{DiffReport, DiffStatus, HostDiff};
use bios_profiles::Status;
use rftune_engine::fleet::BmcEntry;
use std::collections::HashMap;
use std::fmt::Write;

fn value(v: Option<&redfish_client::resources::bios::AttributeValue>) -> String {
    v.map_or_else(|| "-".to_owned(), ToString::to_string)
}

/// Per host: a heading, the attributes that are not in sync (all of them with `all`), the
/// validation findings; then a fleet summary when there is more than one host. Grouped, hosts
/// whose blocks read the same share one, headed by how many they are, what they share and their
/// names, and hosts that could not be compared share a line per cause; `entries` (the hosts'
/// inventory entries, where known) give each host's URL, which its error's text sets aside.
pub fn table(report: &DiffReport, all: bool, blocks: Blocks, entries: &[BmcEntry]) -> String {
    let mut out = String::new();
    let fleet = report.hosts.len() > 1;
    // A fleet shows the hosts that need attention; the rest are counted in the summary.
    let shown: Vec<&HostDiff> = report
        .hosts
        .iter()
        .filter(|h| {
            let clean =
                h.status == DiffStatus::InSync && !h.lockdown && h.violations.iter().all(|v| v.starts_with("warning:"));
            !(fleet && clean && !all)
        })
        .collect();
    let hidden = report.hosts.len() - shown.len();
    if blocks == Blocks::PerHost {
        for h in &shown {
            match &h.counts {
                Some(_) => {
                    let _ = write!(
                        out,
                        "{}{}",
                        h.host,
                        identity(h.service_tag.as_deref(), h.model.as_deref(), h.bios_version.as_deref())
                    );
                    out.push_str(&verdict(h, &report.profile));
                    out.push_str(&body(h, all));
                }
                None => {
                    let _ = writeln!(out, "{}: error: {}", h.host, h.error.as_deref().unwrap_or_default());
                }
            }
        }
    } else {
        let (compared, failed): (Vec<&HostDiff>, Vec<&HostDiff>) = shown.iter().partition(|h| h.counts.is_some());
        let keys = compared.iter().map(|h| verdict(h, &report.profile) + &body(h, all));
        for (block, members) in group::by(keys) {
            let hosts: Vec<&HostDiff> = members.iter().map(|&i| compared[i]).collect();
            match hosts.as_slice() {
                [one] => {
                    let _ = write!(
                        out,
                        "{}{}{block}",
                        one.host,
                        identity(
                            one.service_tag.as_deref(),
                            one.model.as_deref(),
                            one.bios_version.as_deref()
                        )
                    );
                }
                many => {
                    let names: Vec<&str> = many.iter().map(|h| h.host.as_str()).collect();
                    let model = group::distinct(many.iter().map(|h| h.model.as_deref()));
                    let bios = group::distinct(many.iter().map(|h| h.bios_version.as_deref()));
                    let shared = identity(None, model.as_deref(), bios.as_deref());
                    // The verdict line, the hosts' names, then the rest of the block.
                    let (first, rest) = block.split_once('\n').unwrap_or((&block, ""));
                    let _ = write!(
                        out,
                        "{} hosts{shared}{first}\n{}{rest}",
                        many.len(),
                        group::members(&names)
                    );
                }
            }
        }
        let urls: HashMap<&str, &str> = entries.iter().map(|e| (e.name.as_str(), e.url.as_str())).collect();
        let failed: Vec<group::Failed<'_>> = failed
            .iter()
            .map(|h| group::Failed {
                host: &h.host,
                url: urls.get(h.host.as_str()).copied(),
                text: h.error.clone().unwrap_or_default(),
            })
            .collect();
        out.push_str(&group::causes("error", &failed));
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

/// ` (TAG, MODEL, BIOS V)`, what of it is known; empty when nothing is.
fn identity(service_tag: Option<&str>, model: Option<&str>, bios_version: Option<&str>) -> String {
    let bios = bios_version.map(|v| format!("BIOS {v}"));
    let parts: Vec<&str> = [service_tag, model, bios.as_deref()].into_iter().flatten().collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The rest of a compared host's heading, ` vs PROFILE: counts`, and the line saying it is
/// unverified when it is.
fn verdict(h: &HostDiff, profile: &str) -> String {
    let mut out = String::new();
    let Some(c) = &h.counts else {
        return out;
    };
    let parts: Vec<String> = Status::ALL
        .iter()
        .filter(|s| c.get(**s) > 0)
        .map(|s| format!("{} {}", c.get(*s), s.as_str()))
        .collect();
    let _ = writeln!(out, " vs {profile}: {}", parts.join(", "));
    if h.status == DiffStatus::Unverified {
        let _ = writeln!(
            out,
            "  unverified: nothing checked differs, but {} setting(s) have no evidence for this host's CPU generation and were not checked: not proven in sync",
            c.unverified
        );
    }
    out
}

/// A compared host's attributes (those not in sync, or all), what decided them, its findings
/// and the error that makes the profile inapplicable to it, if any.
fn body(h: &HostDiff, all: bool) -> String {
    let mut out = String::new();
    let mut t = Table::new(["  ATTRIBUTE", "DESIRED", "CURRENT", "PENDING", "STATUS", "NOTE"]);
    // Settings left unchecked for want of evidence share one reason: one line names them all
    // (a Turin host has some forty), unless --all asks for every row.
    let unproven = |c: &&bios_profiles::Change| {
        !all && c.status == Status::NotApplicable && c.not_applicable == Some(bios_profiles::Unchecked::NoEvidence)
    };
    let unchecked: Vec<&bios_profiles::Change> = h.changes.iter().filter(unproven).collect();
    for c in h.changes.iter().filter(|c| !unproven(c)) {
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
    if let Some(first) = unchecked.first() {
        let reason = first
            .note
            .as_deref()
            .unwrap_or("no evidence for this host's CPU generation");
        let _ = writeln!(out, "  not checked ({}; --all lists each): {reason}", unchecked.len());
        let names: Vec<&str> = unchecked.iter().map(|c| c.attribute.as_str()).collect();
        for line in wrap(&names, 96) {
            let _ = writeln!(out, "    {line}");
        }
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
    if let Some(e) = &h.error {
        let _ = writeln!(out, "  error: {e}");
    }
    out
}

/// `names` joined by commas into lines of at most `width` characters (a longer name alone).
fn wrap(names: &[&str], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for (i, name) in names.iter().enumerate() {
        let piece = if i + 1 < names.len() {
            format!("{name},")
        } else {
            (*name).to_owned()
        };
        if !line.is_empty() && line.len() + 1 + piece.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&piece);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
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
