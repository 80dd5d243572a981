//! `rftune apply`: converge one host or a fleet on a profile, with one reboot per host.

use crate::Outcome;
use crate::args::{ApplyArgs, ApplyFlags, ApplyTimeArg, ConnectArgs, OutputFormat};
use crate::render::{self, Line, Progress, SummaryBody, Table};
use anyhow::Result;
use redfish_client::resources::bios::{ApplyTime, SettingsApplyTime};
use rftune_engine::assess::Chosen;
use rftune_engine::converge::{self, ApplyOptions, HostApply, Run};
use rftune_engine::fleet::{self, HostResult};
use rftune_engine::state::StateDirs;
use rftune_engine::target;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;

use super::merge::Kind;
use std::sync::Arc;

/// The `rftune.apply/v1` document.
#[derive(Debug, Serialize)]
pub struct ApplyReport {
    /// Always `rftune.apply/v1`.
    pub schema: &'static str,
    /// The profile applied.
    pub profile: String,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// `K/N` when the run was given `--shard K/N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// One entry per host, in inventory order.
    pub hosts: Vec<Value>,
    /// Hosts by outcome.
    pub summary: ApplySummary,
    /// The audit log of this run.
    pub audit_log: String,
}

/// How a host's apply ended: an `outcome` of `rftune.apply/v1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyStatus {
    /// It ran to its end.
    Done(converge::Outcome),
    /// It failed.
    Error,
    /// It was left untouched: a canary failed, or `--max-failures` hosts had failed.
    NotStarted,
}

impl ApplyStatus {
    /// Every status, in the order the summary counts them.
    pub const ALL: [Self; 6] = [
        Self::Done(converge::Outcome::InSync),
        Self::Done(converge::Outcome::Converged),
        Self::Done(converge::Outcome::NotConverged),
        Self::Done(converge::Outcome::Planned),
        Self::Error,
        Self::NotStarted,
    ];

    /// As the JSON output spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done(converge::Outcome::InSync) => "in_sync",
            Self::Done(converge::Outcome::Converged) => "converged",
            Self::Done(converge::Outcome::NotConverged) => "not_converged",
            Self::Done(converge::Outcome::Planned) => "planned",
            Self::Error => "error",
            Self::NotStarted => "not_started",
        }
    }

    /// The status spelled `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl Serialize for ApplyStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Hosts by outcome.
#[derive(Debug, Default, Serialize)]
pub struct ApplySummary {
    /// Hosts addressed.
    pub hosts: usize,
    /// Already in sync.
    pub in_sync: usize,
    /// Changed and verified.
    pub converged: usize,
    /// Staged but not applied, or not clean after the change.
    pub not_converged: usize,
    /// Dry run plans.
    pub planned: usize,
    /// Failed.
    pub error: usize,
    /// Left untouched: a canary failed, or `--max-failures` hosts had failed.
    pub not_started: usize,
}

/// The counts of the text output: one line, and a second for hosts left untouched if any.
impl std::fmt::Display for ApplySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} hosts: {} converged, {} in sync, {} not converged, {} planned, {} failed",
            self.hosts, self.converged, self.in_sync, self.not_converged, self.planned, self.error
        )?;
        if self.not_started > 0 {
            write!(f, "\n{} not started (left untouched)", self.not_started)?;
        }
        Ok(())
    }
}

impl ApplySummary {
    /// Counts one host of `status`.
    pub fn count(&mut self, status: ApplyStatus) {
        use converge::Outcome;
        match status {
            ApplyStatus::Done(Outcome::InSync) => self.in_sync += 1,
            ApplyStatus::Done(Outcome::Converged) => self.converged += 1,
            ApplyStatus::Done(Outcome::NotConverged) => self.not_converged += 1,
            ApplyStatus::Done(Outcome::Planned) => self.planned += 1,
            ApplyStatus::NotStarted => self.not_started += 1,
            ApplyStatus::Error => self.error += 1,
        }
    }

    /// The fleet exit rule: any failure is an error (`audit_log` names where every step is);
    /// else hosts not converged, or changes planned by a dry run, are drift (exit 2).
    pub fn outcome(&self, audit_log: &str) -> Result<Outcome> {
        if self.error > 0 {
            anyhow::bail!(
                "{} of {} host(s) failed; every step is in {audit_log}",
                self.error,
                self.hosts
            );
        }
        // A dry run that plans changes found drift: exit 2, as diff does.
        Ok(if self.not_converged > 0 || self.planned > 0 {
            Outcome::Drift
        } else {
            Outcome::Success
        })
    }
}

/// Runs `rftune apply`.
pub async fn run(args: &ApplyArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let chosen = Chosen::load(&args.profile)?;
    let (entries, single) = super::targets(&args.target)?;
    let fleet = Fleet {
        entries,
        single,
        concurrency: args.target.concurrency,
        shard: args.target.shard,
    };
    run_with(chosen, fleet, &args.flags, &args.target.connect, dirs, output).await
}

/// The hosts an apply or restore addresses.
#[derive(Debug)]
pub struct Fleet {
    /// The hosts.
    pub entries: Vec<rftune_engine::fleet::BmcEntry>,
    /// Whether it was one `--bmc`.
    pub single: bool,
    /// Hosts worked on at the same time.
    pub concurrency: usize,
    /// The `--shard` they were chosen by.
    pub shard: Option<fleet::Shard>,
}

/// Applies `chosen` to the hosts (shared by `apply` and `restore`).
pub async fn run_with(
    chosen: Chosen,
    hosts: Fleet,
    args: &ApplyFlags,
    connect: &ConnectArgs,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Outcome> {
    let Fleet {
        entries,
        single,
        concurrency,
        shard,
    } = hosts;
    let apply_time = SettingsApplyTime {
        apply_time: match args.apply_time {
            ApplyTimeArg::OnReset => ApplyTime::OnReset,
            ApplyTimeArg::AtMaintenanceWindowStart => ApplyTime::AtMaintenanceWindowStart,
            ApplyTimeArg::InMaintenanceWindowOnReset => ApplyTime::InMaintenanceWindowOnReset,
        },
        maintenance_window_start_time: args.maintenance_start.clone(),
        maintenance_window_duration_in_seconds: args
            .maintenance_start
            .as_ref()
            .map(|_| args.maintenance_duration.as_secs()),
    };
    let options = ApplyOptions {
        reboot: args.reboot.into(),
        graceful_timeout: args.graceful_timeout,
        job_timeout: args.job_timeout,
        boot_timeout: args.boot_timeout,
        replace_pending: args.replace_pending,
        dry_run: args.dry_run,
        strict: args.strict,
        apply_time,
    };
    let ctx = Arc::new(Run::new(chosen, dirs, options, args.max_unavailable)?);
    let connect = Arc::new(crate::credentials::connect_config(connect, &entries)?);
    let dirs_owned = Arc::new(dirs.clone());
    let progress = Arc::new(if single {
        Progress::spinner(output)
    } else {
        Progress::hosts("apply", entries.len(), output)
    });
    let bar = progress.clone();
    let converge_one = |entry: rftune_engine::fleet::BmcEntry| {
        let (ctx, connect, dirs, progress) = (ctx.clone(), connect.clone(), dirs_owned.clone(), progress.clone());
        async move {
            // Every host gets a record, also when it fails before any BIOS step.
            let record = |step: &str, error: Option<&rftune_engine::Error>| {
                let (outcome, detail) = match error {
                    None => ("ok", Value::Null),
                    Some(e) => ("error", Value::String(rftune_engine::error::report(e))),
                };
                ctx.audit.record(&entry.name, step, Value::Null, outcome, detail)
            };
            let target = match target::connect(&entry, &connect, &dirs, &*progress).await {
                Ok(t) => t,
                Err(e) => {
                    record("connect", Some(&e))?;
                    return Err(e);
                }
            };
            if let Err(e) = target.login().await {
                record("login", Some(&e))?;
                target.close().await;
                return Err(e);
            }
            record("login", None)?;
            let result = converge::apply_host(&ctx, &target, &*progress).await;
            if let Err(e) = &result {
                let _ = ctx.audit.record(
                    &entry.name,
                    "done",
                    Value::Null,
                    "error",
                    Value::String(rftune_engine::error::report(e)),
                );
            }
            target.close().await;
            result
        }
    };
    // Canaries first, in inventory order; the engine leaves the rest untouched if one fails.
    let limits = fleet::Limits {
        concurrency,
        max_failures: args.max_failures,
        canaries: args.canary,
    };
    let shard = shard.map(|s| s.to_string());
    if output == OutputFormat::Jsonl {
        // Each host is written as it finishes and dropped; only the counters stay.
        let profile = ctx.chosen.name();
        let mut summary = ApplySummary {
            hosts: entries.len(),
            ..ApplySummary::default()
        };
        let mut lines = render::JsonLines::default();
        fleet::for_each_limited(&entries, &limits, &converge_one, |_, r| {
            bar.host_done(r.result.is_ok());
            let host = host_entry(&ctx, &r, &mut summary);
            lines.line(&Line {
                schema: Kind::Apply.host_schema(),
                profile,
                dry_run: Some(args.dry_run),
                shard: None,
                body: &host,
            });
        })
        .await;
        progress.finish();
        let audit_log = ctx.audit.path().display().to_string();
        lines.line(&Line {
            schema: Kind::Apply.summary_schema(),
            profile,
            dry_run: Some(args.dry_run),
            shard: shard.as_deref(),
            body: SummaryBody {
                summary: &summary,
                audit_log: Some(&audit_log),
            },
        });
        lines.finish()?;
        return summary.outcome(&audit_log);
    }
    if output == OutputFormat::Json {
        // Each host's entry is written once every host before it in the inventory is done:
        // only the entries of hosts that finished early are held, serialised.
        let mut report = ApplyReport {
            schema: Kind::Apply.schema(),
            profile: ctx.chosen.name().to_owned(),
            dry_run: args.dry_run,
            shard,
            hosts: Vec::new(),
            summary: ApplySummary {
                hosts: entries.len(),
                ..ApplySummary::default()
            },
            audit_log: ctx.audit.path().display().to_string(),
        };
        let mut document = render::JsonDocument::start(&report, "hosts")?;
        fleet::for_each_limited(&entries, &limits, &converge_one, |i, r| {
            bar.host_done(r.result.is_ok());
            document.entry(i, &host_entry(&ctx, &r, &mut report.summary));
        })
        .await;
        progress.finish();
        document.finish(&report)?;
        return report.summary.outcome(&report.audit_log);
    }
    let results = fleet::run_all_limited(entries, &limits, &converge_one, |_, ok| bar.host_done(ok)).await;
    progress.finish();
    if single && let Some(Err(_)) = results.first().map(|r| &r.result) {
        // One host: its error is the message, on stderr.
        let failed = results.into_iter().next().map(|r| r.result);
        eprintln!("rftune: every step is in the audit log {}", ctx.audit.path().display());
        return Err(match failed {
            Some(Err(e)) => e.into(),
            _ => anyhow::anyhow!("apply failed"),
        });
    }
    let mut report = report(&ctx, args.dry_run, &results);
    report.shard = shard;
    // Table or JUnit (JSON and JSON lines were streamed above).
    render::text(&table(&report, &results))?;
    report.summary.outcome(&report.audit_log)
}

fn report(ctx: &Run, dry_run: bool, results: &[HostResult<HostApply>]) -> ApplyReport {
    let mut summary = ApplySummary {
        hosts: results.len(),
        ..ApplySummary::default()
    };
    let hosts = results.iter().map(|r| host_entry(ctx, r, &mut summary)).collect();
    ApplyReport {
        schema: Kind::Apply.schema(),
        profile: ctx.chosen.name().to_owned(),
        dry_run,
        shard: None,
        hosts,
        summary,
        audit_log: ctx.audit.path().display().to_string(),
    }
}

/// One host's entry of the report, counted in `summary`.
fn host_entry(ctx: &Run, r: &HostResult<HostApply>, summary: &mut ApplySummary) -> Value {
    let (status, entry) = match &r.result {
        Ok(h) => {
            let mut v = serde_json::to_value(h).unwrap_or_default();
            v["host"] = Value::String(r.entry.name.clone());
            (ApplyStatus::Done(h.outcome), v)
        }
        Err(e) => {
            let status = if e.kind() == Some(rftune_engine::HostErrorKind::NotStarted) {
                ApplyStatus::NotStarted
            } else {
                ApplyStatus::Error
            };
            // Whether anything was written before the failure (a staged PATCH, a reboot, ...):
            // the host changed even though the apply failed.
            let written = ctx.audit.wrote(&r.entry.name);
            let v = serde_json::json!({"host": r.entry.name, "outcome": status, "written": written, "error": format!("{e:#}")});
            (status, v)
        }
    };
    summary.count(status);
    entry
}

fn table(report: &ApplyReport, results: &[HostResult<HostApply>]) -> String {
    let mut out = String::new();
    for r in results {
        match &r.result {
            Ok(h) => {
                let outcome = ApplyStatus::Done(h.outcome).as_str();
                let _ = writeln!(out, "{}: {outcome}: {}", r.entry.name, h.summary);
                if report.dry_run || h.outcome == converge::Outcome::Planned {
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
