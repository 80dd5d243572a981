//! `rftune jobs list|delete|clear-queue` and `rftune bios clear-pending`: the engine's job and
//! pending-value housekeeping on one iDRAC, each write recorded in the audit log.

use crate::Exit;
use crate::args::{BmcArgs, JobsCommand, LockFlags, OutputFormat};
use crate::render::{self, Table};
use anyhow::Result;
use rftune_engine::fleet::BmcEntry;
use rftune_engine::jobs::{Housekeeping, Keep, List};
use rftune_engine::lifecycle::Operation;
use rftune_engine::state::StateDirs;
use serde_json::json;

/// Runs `op` on the BMC of `bmc`; returns the host's name and what it gave.
async fn on<O: Operation>(bmc: &BmcArgs, dirs: &StateDirs, audited: bool, op: &O) -> Result<(String, O::Output)> {
    let entry = BmcEntry::from_url(&bmc.bmc)?;
    let access = crate::config::access_one(&bmc.connect, &entry, dirs)?;
    let audit = audited
        .then(|| rftune_engine::audit::AuditLog::open(&dirs.state))
        .transpose()?;
    let out = access.one(&entry, audit.as_ref(), op).await?;
    Ok((entry.name, out))
}

/// Carries out a housekeeping write under the host's lock.
async fn keep(action: Housekeeping, bmc: &BmcArgs, lock: &LockFlags, dirs: &StateDirs) -> Result<String> {
    let writes = crate::config::lock_writes("jobs", lock, dirs)?;
    let (host, ()) = on(bmc, dirs, true, &Keep { action, writes }).await?;
    Ok(host)
}

/// Runs a `jobs` subcommand.
pub async fn run(cmd: &JobsCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        JobsCommand::List { bmc, all } => {
            let (host, jobs) = on(bmc, dirs, false, &List).await?;
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
                        j.job_state.clone(),
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
        JobsCommand::Delete { bmc, job, lock } => {
            let host = keep(Housekeeping::Delete(job.clone()), bmc, lock, dirs).await?;
            render::text(&format!(
                "{host}: deleted job {job} (a BIOS job's pending values go with it)\n"
            ))?;
            Ok(Exit::Success)
        }
        JobsCommand::ClearQueue { bmc, force, lock } => {
            let host = keep(Housekeeping::ClearQueue(*force), bmc, lock, dirs).await?;
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
pub async fn clear_pending(bmc: &BmcArgs, lock: &LockFlags, dirs: &StateDirs) -> Result<Exit> {
    let host = keep(Housekeeping::ClearPending, bmc, lock, dirs).await?;
    render::text(&format!("{host}: pending BIOS values cleared\n"))?;
    Ok(Exit::Success)
}
