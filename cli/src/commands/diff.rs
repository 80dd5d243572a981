//! `rftune diff`: desired (profile) vs current vs pending, per attribute, per host. Read-only.

use crate::Outcome;
use crate::args::{DiffArgs, OutputFormat};
use crate::render::{self, Line, SummaryBody, Table};
use anyhow::Result;
use bios_profiles::{Change, Status, StatusCounts};
use rftune_engine::assess::{self, Assessment, Chosen};
use rftune_engine::fleet::{self, HostResult};
use rftune_engine::state::StateDirs;
use rftune_engine::target;
use serde::Serialize;
use std::fmt::Write;

use super::merge::Kind;
use std::sync::Arc;

/// The `rftune.diff/v1` document.
#[derive(Debug, Serialize)]
pub struct DiffReport {
    /// Always `rftune.diff/v1`.
    pub schema: &'static str,
    /// The profile compared against.
    pub profile: String,
    /// `K/N` when the run was given `--shard K/N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// One entry per host, in inventory order.
    pub hosts: Vec<HostDiff>,
    /// Counts of hosts by status.
    pub summary: Summary,
}

/// One host's diff.
#[derive(Debug, Serialize)]
pub struct HostDiff {
    /// The host's name.
    pub host: String,
    /// `in_sync`, `drift` or `error`.
    pub status: DiffStatus,
    /// Service tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tag: Option<String>,
    /// Model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// BIOS version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bios_version: Option<String>,
    /// Per attribute, in stable order.
    pub changes: Vec<Change>,
    /// Attributes per status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<StatusCounts>,
    /// Whether System Lockdown is on: the host cannot be changed until it is turned off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lockdown: bool,
    /// Validation findings, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    /// Why the host could not be compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How a host compares: a `status` of `rftune.diff/v1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffStatus {
    /// Every attribute as the profile wants it.
    InSync,
    /// Drift, or pending changes.
    Drift,
    /// Not compared, or the profile is invalid for it.
    Error,
}

impl DiffStatus {
    /// Every status, in the order the summary counts them.
    pub const ALL: [Self; 3] = [Self::InSync, Self::Drift, Self::Error];

    /// As the JSON output spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InSync => "in_sync",
            Self::Drift => "drift",
            Self::Error => "error",
        }
    }

    /// The status spelled `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl Serialize for DiffStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Hosts by outcome.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    /// Hosts compared.
    pub hosts: usize,
    /// In sync.
    pub in_sync: usize,
    /// With drift (or pending changes).
    pub drift: usize,
    /// Not compared, or the profile is invalid for them.
    pub error: usize,
}

/// The counts line of the text output, e.g. `3 hosts: 1 in sync, 2 drift, 0 error`.
impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} hosts: {} in sync, {} drift, {} error",
            self.hosts, self.in_sync, self.drift, self.error
        )
    }
}

impl Summary {
    /// Counts one host of `status`.
    pub fn count(&mut self, status: DiffStatus) {
        match status {
            DiffStatus::InSync => self.in_sync += 1,
            DiffStatus::Drift => self.drift += 1,
            DiffStatus::Error => self.error += 1,
        }
    }

    /// The fleet exit rule: error beats drift beats in sync.
    pub fn outcome(&self) -> Result<Outcome> {
        if self.error > 0 {
            anyhow::bail!(
                "{} of {} host(s) failed: unreadable, or the profile cannot be applied to them as written (see each host above)",
                self.error,
                self.hosts
            );
        }
        Ok(if self.drift > 0 {
            Outcome::Drift
        } else {
            Outcome::Success
        })
    }
}

/// Runs `rftune diff`.
pub async fn run(args: &DiffArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    // First, so the registry decodes while the profile is parsed and the hosts are read.
    let cache = Arc::new(dirs.registry_cache());
    cache.prefetch_newest();
    let chosen = Arc::new(Chosen::load(&args.profile)?);
    let (entries, single) = super::targets(&args.target)?;
    let connect = Arc::new(crate::credentials::connect_config(&args.target.connect, &entries)?);
    let dirs_owned = Arc::new(dirs.clone());
    let strict = args.strict;
    let progress = std::sync::Arc::new(render::Progress::hosts("diff", entries.len(), output));
    let diff_one = |entry| {
        let (chosen, connect, cache, dirs) = (chosen.clone(), connect.clone(), cache.clone(), dirs_owned.clone());
        let progress = progress.clone();
        async move {
            let target = target::connect(&entry, &connect, &dirs, &*progress).await?;
            target.login().await?;
            assess::assess_and_close(&target, &chosen, &cache, strict).await
        }
    };
    let shard = args.target.shard.map(|s| s.to_string());
    let limits = fleet::Limits {
        concurrency: args.target.concurrency,
        ..fleet::Limits::default()
    };
    if output == OutputFormat::Jsonl {
        // Each host is written as it finishes and dropped; only the counters stay.
        let profile = chosen.name();
        let mut summary = Summary {
            hosts: entries.len(),
            ..Summary::default()
        };
        let mut lines = render::JsonLines::default();
        fleet::for_each_limited(&entries, &limits, diff_one, |_, r| {
            progress.host_done(r.result.is_ok());
            let host = host_diff(profile, &r);
            summary.count(host.status);
            lines.line(&Line {
                schema: Kind::Diff.host_schema(),
                profile,
                dry_run: None,
                shard: None,
                body: &host,
            });
        })
        .await;
        progress.finish();
        lines.line(&Line {
            schema: Kind::Diff.summary_schema(),
            profile,
            dry_run: None,
            shard: shard.as_deref(),
            body: SummaryBody {
                summary: &summary,
                audit_log: None,
            },
        });
        lines.finish()?;
        return summary.outcome();
    }
    let profile = chosen.name();
    if output == OutputFormat::Json {
        // Each host's entry is written once every host before it in the inventory is done:
        // only the entries of hosts that finished early are held, serialised.
        let mut report = DiffReport {
            schema: Kind::Diff.schema(),
            profile: profile.to_owned(),
            shard,
            hosts: Vec::new(),
            summary: Summary::default(),
        };
        let mut document = render::JsonDocument::start(&report, "hosts")?;
        report.summary.hosts = entries.len();
        fleet::for_each_limited(&entries, &limits, diff_one, |i, r| {
            progress.host_done(r.result.is_ok());
            let host = host_diff(profile, &r);
            report.summary.count(host.status);
            document.entry(i, &host);
        })
        .await;
        progress.finish();
        document.finish(&report)?;
        return report.summary.outcome();
    }
    // Each host's assessment (its BIOS values, pending values, registry) becomes its report
    // entry as soon as it arrives, so only the entries are held until the end.
    let mut hosts: Vec<Option<HostDiff>> = entries.iter().map(|_| None).collect();
    let mut failed_alone = None;
    fleet::for_each_limited(&entries, &limits, diff_one, |i, r| {
        progress.host_done(r.result.is_ok());
        match r.result {
            // One host: its error is the message, on stderr.
            Err(e) if single && output == OutputFormat::Table => failed_alone = Some(e),
            _ => hosts[i] = Some(host_diff(profile, &r)),
        }
    })
    .await;
    progress.finish();
    if let Some(e) = failed_alone {
        return Err(e.into());
    }
    let hosts: Vec<HostDiff> = hosts.into_iter().flatten().collect();
    let mut summary = Summary {
        hosts: hosts.len(),
        ..Summary::default()
    };
    hosts.iter().for_each(|h| summary.count(h.status));
    let report = DiffReport {
        schema: Kind::Diff.schema(),
        profile: profile.to_owned(),
        shard,
        hosts,
        summary,
    };
    match output {
        OutputFormat::Json | OutputFormat::Jsonl => render::json(&report)?,
        OutputFormat::Junit => render::text(&junit(&report))?,
        OutputFormat::Table => render::text(&table(&report, args.all))?,
    }
    report.summary.outcome()
}

/// Builds the report from per-host results.
pub fn report(profile: &str, results: &[HostResult<Assessment>]) -> DiffReport {
    let mut summary = Summary {
        hosts: results.len(),
        ..Summary::default()
    };
    let hosts = results
        .iter()
        .map(|r| {
            let host = host_diff(profile, r);
            summary.count(host.status);
            host
        })
        .collect();
    DiffReport {
        schema: Kind::Diff.schema(),
        profile: profile.to_owned(),
        shard: None,
        hosts,
        summary,
    }
}

/// One host's entry of the report.
pub fn host_diff(profile: &str, r: &HostResult<Assessment>) -> HostDiff {
    match &r.result {
        Ok(a) => {
            let invalid = a.errors().next().is_some();
            let status = if invalid {
                DiffStatus::Error
            } else if a.diff.is_clean() {
                DiffStatus::InSync
            } else {
                DiffStatus::Drift
            };
            HostDiff {
                host: r.entry.name.clone(),
                status,
                service_tag: a.state.service_tag.clone(),
                model: a.state.model.clone(),
                bios_version: a.state.bios_version.clone(),
                changes: a.diff.changes.clone(),
                counts: Some(a.diff.counts()),
                lockdown: a.state.in_lockdown(),
                violations: a
                    .state
                    .in_lockdown()
                    .then(|| {
                        format!(
                            "warning: {}; apply will refuse it",
                            rftune_engine::bmc::lockdown_reason()
                        )
                    })
                    .into_iter()
                    .chain(a.violations.iter().map(|v| {
                        let level = if v.severity == bios_profiles::Severity::Error {
                            "error"
                        } else {
                            "warning"
                        };
                        format!("{level}: {v}")
                    }))
                    .collect(),
                error: invalid.then(|| format!("profile {profile} cannot be applied to this host as written")),
            }
        }
        Err(e) => HostDiff {
            host: r.entry.name.clone(),
            status: DiffStatus::Error,
            service_tag: None,
            model: None,
            bios_version: None,
            changes: Vec::new(),
            counts: None,
            lockdown: false,
            violations: Vec::new(),
            error: Some(format!("{e:#}")),
        },
    }
}

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
        let clean = h.error.is_none()
            && !h.lockdown
            && h.violations.iter().all(|v| v.starts_with("warning:"))
            && h.changes.iter().all(|c| c.status.is_clean());
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
/// host that could not be compared an error, so CI systems show both.
pub fn junit(report: &DiffReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let tests: usize = report.hosts.iter().map(|h| h.changes.len().max(1)).sum();
    let failures: usize = report
        .hosts
        .iter()
        .map(|h| h.changes.iter().filter(|c| !c.status.is_clean()).count())
        .sum();
    let errors = report.summary.error;
    let _ = writeln!(
        out,
        "<testsuites name=\"rftune diff {}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">",
        xml(&report.profile)
    );
    for h in &report.hosts {
        let host_failures = h.changes.iter().filter(|c| !c.status.is_clean()).count();
        let host_errors = usize::from(h.error.is_some());
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{host_failures}\" errors=\"{host_errors}\">",
            xml(&h.host),
            h.changes.len().max(1)
        );
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

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
