//! `rftune jobs list|delete|clear-queue` and `rftune bios clear-pending`: the engine's job and
//! pending-value housekeeping on one iDRAC, each write recorded in the audit log.

use crate::Exit;
use crate::args::{BmcArgs, JobsCommand, OutputFormat};
use crate::render::{self, Table};
use anyhow::Result;
use rftune_engine::audit::AuditLog;
use rftune_engine::connect::Bmc;
use rftune_engine::fleet::BmcEntry;
use rftune_engine::jobs;
use rftune_engine::lifecycle::Operation;
use rftune_engine::observe::Observer;
use rftune_engine::state::StateDirs;
use serde_json::json;

/// One housekeeping action as an engine operation.
enum Housekeeping<'a> {
    List,
    Delete(&'a str, &'a AuditLog),
    ClearQueue(bool, &'a AuditLog),
    ClearPending(&'a AuditLog),
}

impl Operation for Housekeeping<'_> {
    type Output = Vec<redfish_client::oem::dell::DellJob>;

    async fn run(&self, bmc: &mut Bmc, _: &dyn Observer) -> rftune_engine::Result<Self::Output> {
        match self {
            Self::List => jobs::list(bmc).await,
            Self::Delete(job, audit) => jobs::delete(bmc, job, audit).await.map(|()| Vec::new()),
            Self::ClearQueue(force, audit) => jobs::clear_queue(bmc, *force, audit).await.map(|()| Vec::new()),
            Self::ClearPending(audit) => jobs::clear_pending(bmc, audit).await.map(|()| Vec::new()),
        }
    }
}

/// Runs `op` on the BMC of `bmc`, audited when it writes.
async fn on(
    bmc: &BmcArgs,
    dirs: &StateDirs,
    audit: Option<&AuditLog>,
    op: &Housekeeping<'_>,
) -> Result<(String, Vec<redfish_client::oem::dell::DellJob>)> {
    let entry = BmcEntry::from_url(&bmc.bmc)?;
    let access = crate::config::access_one(&bmc.connect, &entry, dirs)?;
    let out = access.one(&entry, audit, op).await?;
    Ok((entry.name, out))
}

/// Runs a `jobs` subcommand.
pub async fn run(cmd: &JobsCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        JobsCommand::List { bmc, all } => {
            let (host, jobs) = on(bmc, dirs, None, &Housekeeping::List).await?;
            let jobs: Vec<_> = jobs.into_iter().filter(|j| *all || j.holds_queue()).collect();
            if output == OutputFormat::Json {
                render::json(&json!({"schema": "rftune.jobs/v1", "host": host, "jobs": jobs}))?;
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
            Ok(Exit::Success)
        }
        JobsCommand::Delete { bmc, job } => {
            let audit = AuditLog::open(&dirs.state)?;
            let (host, _) = on(bmc, dirs, Some(&audit), &Housekeeping::Delete(job, &audit)).await?;
            render::text(&format!(
                "{host}: deleted job {job} (a BIOS job's pending values go with it)\n"
            ))?;
            Ok(Exit::Success)
        }
        JobsCommand::ClearQueue { bmc, force } => {
            let audit = AuditLog::open(&dirs.state)?;
            let (host, _) = on(bmc, dirs, Some(&audit), &Housekeeping::ClearQueue(*force, &audit)).await?;
            render::text(&format!(
                "{host}: job queue cleared{}\n",
                if *force {
                    " (Lifecycle Controller services restart)"
                } else {
                    ""
                }
            ))?;
            Ok(Exit::Success)
        }
    }
}

/// Runs `rftune bios clear-pending`.
pub async fn clear_pending(bmc: &BmcArgs, dirs: &StateDirs) -> Result<Exit> {
    let audit = AuditLog::open(&dirs.state)?;
    let (host, _) = on(bmc, dirs, Some(&audit), &Housekeeping::ClearPending(&audit)).await?;
    render::text(&format!("{host}: pending BIOS values cleared\n"))?;
    Ok(Exit::Success)
}
