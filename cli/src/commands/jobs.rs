//! `rftune jobs list|delete|clear-queue` and `rftune bios clear-pending`: the housekeeping that
//! `apply --replace-pending` does implicitly, each write recorded in the audit log.

use crate::Outcome;
use crate::args::{BmcArgs, JobsCommand, OutputFormat};
use crate::render::{self, Table};
use anyhow::Result;
use redfish_client::oem::dell::JobQueueClear;
use rftune_engine::audit::AuditLog;
use rftune_engine::state::StateDirs;
use rftune_engine::target::Target;
use serde_json::{Value, json};

async fn open(bmc: &BmcArgs, dirs: &StateDirs) -> Result<Target> {
    let entry = rftune_engine::fleet::BmcEntry::from_url(&bmc.bmc)?;
    let target = crate::credentials::connect_one(&bmc.connect, &entry, dirs).await?;
    target.login().await?;
    Ok(target)
}

/// Runs a `jobs` subcommand.
pub async fn run(cmd: &JobsCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    match cmd {
        JobsCommand::List { bmc, all } => {
            let target = open(bmc, dirs).await?;
            let jobs = target
                .client
                .dell()
                .jobs()
                .await
                .map_err(|e| target.explain(e, "reading the job queue"));
            target.close().await;
            let jobs: Vec<_> = jobs?.into_iter().filter(|j| *all || j.holds_queue()).collect();
            if output == OutputFormat::Json {
                render::json(&json!({"schema": "rftune.jobs/v1", "host": target.name, "jobs": jobs}))?;
            } else if jobs.is_empty() {
                render::text(if *all {
                    "No jobs.\n"
                } else {
                    "No open jobs (--all lists finished ones too).\n"
                })?;
            } else {
                let mut t = Table::new(["JOB", "TYPE", "STATE", "DONE", "MESSAGE"]);
                for j in &jobs {
                    t.row([
                        j.id.clone(),
                        j.job_type.clone().unwrap_or_default(),
                        j.job_state.to_string(),
                        format!("{}%", j.percent_complete.unwrap_or(0)),
                        format!(
                            "{}{}",
                            j.message_code().map(|c| format!("[{c}] ")).unwrap_or_default(),
                            j.message.clone().unwrap_or_default()
                        ),
                    ]);
                }
                render::text(&t.render())?;
            }
            Ok(Outcome::Success)
        }
        JobsCommand::Delete { bmc, job } => {
            let target = open(bmc, dirs).await?;
            let result = target
                .client
                .dell()
                .delete_job(job)
                .await
                .map_err(|e| target.explain(e, &format!("deleting job {job}")));
            target.close().await;
            record(dirs, &target.name, "delete-job", json!({"job": job}), &result)?;
            result?;
            render::text(&format!(
                "{}: deleted job {job} (a BIOS job's pending values go with it)\n",
                target.name
            ))?;
            Ok(Outcome::Success)
        }
        JobsCommand::ClearQueue { bmc, force } => {
            let target = open(bmc, dirs).await?;
            let what = if *force {
                JobQueueClear::AllForce
            } else {
                JobQueueClear::All
            };
            let result = target
                .client
                .dell()
                .clear_job_queue(&what)
                .await
                .map_err(|e| target.explain(e, "clearing the job queue"));
            target.close().await;
            record(dirs, &target.name, "clear-job-queue", json!({"force": force}), &result)?;
            result?;
            render::text(&format!(
                "{}: job queue cleared{}\n",
                target.name,
                if *force {
                    " (Lifecycle Controller services restart)"
                } else {
                    ""
                }
            ))?;
            Ok(Outcome::Success)
        }
    }
}

/// Runs `rftune bios clear-pending`.
pub async fn clear_pending(bmc: &BmcArgs, dirs: &StateDirs) -> Result<Outcome> {
    let target = open(bmc, dirs).await?;
    let result = target
        .client
        .dell()
        .clear_pending()
        .await
        .map_err(|e| target.explain(e, "clearing pending BIOS values"));
    target.close().await;
    record(dirs, &target.name, "clear-pending", Value::Null, &result)?;
    result?;
    render::text(&format!("{}: pending BIOS values cleared\n", target.name))?;
    Ok(Outcome::Success)
}

fn record<T>(
    dirs: &StateDirs,
    host: &str,
    step: &str,
    request: Value,
    result: &Result<T, rftune_engine::Error>,
) -> Result<()> {
    let audit = AuditLog::open(&dirs.state)?;
    match result {
        Ok(_) => audit.record(host, step, request, "ok", Value::Null)?,
        Err(e) => audit.record(
            host,
            step,
            request,
            "error",
            Value::String(rftune_engine::error::report(e)),
        )?,
    }
    Ok(())
}
