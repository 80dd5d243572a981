//! `rftune jobs list|delete|clear-queue` and `rftune bios clear-pending`: the engine's job and
//! pending-value housekeeping on one iDRAC or every host of an inventory, each write recorded
//! in the audit log.

use crate::Exit;
use crate::args::{JobsCommand, LockFlags, OutputFormat, TargetArgs};
use crate::config::Hosts;
use crate::documents;
use crate::render::{self, Table};
use anyhow::Result;
use rftune_engine::backend::Job;
use rftune_engine::fleet::HostResult;
use rftune_engine::jobs::{Housekeeping, Keep, List};
use rftune_engine::state::StateDirs;
use serde::Serialize;
use serde_json::json;
use std::sync::Arc;

/// The schema of `rftune jobs list -o json`.
const SCHEMA: &str = "rftune.jobs/v1";

/// One host's jobs, as a fleet's `-o json` lists them.
#[derive(Debug, Serialize)]
struct HostJobs {
    host: String,
    jobs: Vec<Job>,
}

/// Carries out a housekeeping write on every host of `target` under its lock, and renders it
/// (`done` says what a host that worked went through).
async fn keep(
    action: Housekeeping,
    target: &TargetArgs,
    lock: &LockFlags,
    dirs: &StateDirs,
    output: OutputFormat,
    done: &str,
) -> Result<Exit> {
    let hosts = Hosts::of(target)?;
    let connect = crate::credentials::connect_config(&target.connect, &hosts.entries)?;
    let writes = crate::config::lock_writes("jobs", lock, dirs)?;
    let audit = writes.audit.clone();
    let label = match &action {
        Housekeeping::Delete(_) => "jobs delete",
        Housekeeping::ClearQueue(_) => "jobs clear-queue",
        Housekeeping::ClearPending => "bios clear-pending",
    };
    let op = Arc::new(Keep { action, writes });
    let results = hosts.run(label, connect, dirs, Some(&audit), op, output).await;
    if hosts.single && output != OutputFormat::Json {
        // One host: its error is the message, on stderr.
        let r = results.into_iter().next().ok_or_else(|| anyhow::anyhow!("no host"))?;
        r.result?;
        render::text(&format!("{}: {done}\n", r.entry.name))?;
        return Ok(Exit::Success);
    }
    let results: Vec<HostResult<serde_json::Value>> = results
        .into_iter()
        .map(|r| HostResult {
            result: r.result.map(|()| json!({"host": r.entry.name, "result": done})),
            entry: r.entry,
        })
        .collect();
    let (doc, failed) = documents::action_document(label_schema(label), &results, Some(&audit));
    if output == OutputFormat::Json {
        render::json(&doc)?;
    } else {
        let ok: Vec<&str> = results
            .iter()
            .filter(|r| r.result.is_ok())
            .map(|r| r.entry.name.as_str())
            .collect();
        let mut out = String::new();
        if !ok.is_empty() {
            out.push_str(&format!(
                "{done}: {} host(s) ({})\n",
                ok.len(),
                render::group::names(&ok)
            ));
        }
        out.push_str(&render::group::failures(&results));
        render::text(&out)?;
    }
    documents::action_exit(failed, results.len(), 0, Some(&audit))
}

/// The schema of a housekeeping command's `-o json` document.
fn label_schema(label: &str) -> &'static str {
    match label {
        "jobs delete" => "rftune.jobs-delete/v1",
        "jobs clear-queue" => "rftune.jobs-clear/v1",
        _ => "rftune.bios-clear-pending/v1",
    }
}

/// Runs a `jobs` subcommand.
pub async fn run(cmd: &JobsCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        JobsCommand::List { target, all } => list(target, *all, dirs, output).await,
        JobsCommand::Delete { target, job, lock } => {
            let done = format!("deleted job {job} (a BIOS job's pending values go with it)");
            keep(Housekeeping::Delete(job.clone()), target, lock, dirs, output, &done).await
        }
        JobsCommand::ClearQueue { target, force, lock } => {
            let done = format!(
                "job queue cleared{}",
                if *force {
                    " (Lifecycle Controller services restart)"
                } else {
                    ""
                }
            );
            keep(Housekeeping::ClearQueue(*force), target, lock, dirs, output, &done).await
        }
    }
}

/// `rftune jobs list`: one host's jobs as a table (or `rftune.jobs/v1`), or a fleet's in one
/// table with a HOST column.
async fn list(target: &TargetArgs, all: bool, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let hosts = Hosts::of(target)?;
    let connect = crate::credentials::connect_config(&target.connect, &hosts.entries)?;
    let results = hosts
        .run("jobs list", connect, dirs, None, Arc::new(List), output)
        .await;
    let results: Vec<HostResult<HostJobs>> = results
        .into_iter()
        .map(|r| HostResult {
            result: r.result.map(|jobs| HostJobs {
                host: r.entry.name.clone(),
                jobs: jobs.into_iter().filter(|j| all || j.holds_queue()).collect(),
            }),
            entry: r.entry,
        })
        .collect();
    if hosts.single {
        let r = results.into_iter().next().ok_or_else(|| anyhow::anyhow!("no host"))?;
        let one = r.result?;
        if output == OutputFormat::Json {
            render::json(&json!({"schema": SCHEMA, "host": one.host, "jobs": one.jobs}))?;
        } else if one.jobs.is_empty() {
            render::text(if all {
                "No jobs.\n"
            } else {
                "No open jobs (--all lists finished ones too).\n"
            })?;
        } else {
            render::text(&jobs_table(&[&one], false))?;
        }
        return Ok(Exit::Success);
    }
    let (doc, failed) = documents::action_document(SCHEMA, &results, None);
    if output == OutputFormat::Json {
        render::json(&doc)?;
    } else {
        let read: Vec<&HostJobs> = results.iter().filter_map(|r| r.result.as_ref().ok()).collect();
        let with: Vec<&HostJobs> = read.iter().copied().filter(|h| !h.jobs.is_empty()).collect();
        let mut out = if with.is_empty() {
            String::new()
        } else {
            jobs_table(&with, true)
        };
        out.push_str(&format!(
            "{} hosts: {} with {} job(s), {} with none{}, {failed} failed\n",
            results.len(),
            with.len(),
            with.iter().map(|h| h.jobs.len()).sum::<usize>(),
            read.len() - with.len(),
            if all {
                ""
            } else {
                " open (--all lists finished ones too)"
            },
        ));
        out.push_str(&render::group::failures(&results));
        render::text(&out)?;
    }
    documents::action_exit(failed, results.len(), 0, None)
}

/// The jobs of `hosts`, a row each, with a HOST column for a fleet.
fn jobs_table(hosts: &[&HostJobs], fleet: bool) -> String {
    let mut head = vec!["JOB", "TYPE", "STATE", "DONE", "MESSAGE"];
    if fleet {
        head.insert(0, "HOST");
    }
    let mut t = Table::new(head);
    for h in hosts {
        for j in &h.jobs {
            let mut row = vec![
                j.id.clone(),
                j.job_type.clone().unwrap_or_default(),
                j.job_state.clone(),
                format!("{}%", j.percent_complete.unwrap_or(0)),
                format!(
                    "{}{}",
                    j.message_code().map(|c| format!("[{c}] ")).unwrap_or_default(),
                    j.message.clone().unwrap_or_default()
                ),
            ];
            if fleet {
                row.insert(0, h.host.clone());
            }
            t.row(row);
        }
    }
    t.render()
}

/// Runs `rftune bios clear-pending`.
pub async fn clear_pending(
    target: &TargetArgs,
    lock: &LockFlags,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Exit> {
    keep(
        Housekeeping::ClearPending,
        target,
        lock,
        dirs,
        output,
        "pending BIOS values cleared",
    )
    .await
}
