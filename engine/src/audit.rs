//! The append-only audit log: one JSON object per line (host, run, step, what was requested,
//! the outcome, a timestamp), so that every change rftune makes can be traced and an
//! interrupted run can be understood afterwards. Lines are written whole with `O_APPEND`, so
//! concurrent hosts and concurrent rftune processes do not interleave within a line.

use crate::error::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One record.
#[derive(Debug, Serialize)]
pub struct Record<'a> {
    /// UTC time, ISO 8601.
    pub ts: String,
    /// The run (one rftune invocation).
    pub run: &'a str,
    /// The host's name.
    pub host: &'a str,
    /// What happened: `plan`, `snapshot`, `stage`, `reboot`, `job`, `verify`, ...
    pub step: &'a str,
    /// What was sent, if anything (never credentials).
    #[serde(skip_serializing_if = "Value::is_null")]
    pub request: Value,
    /// `ok`, `error`, `skipped`, ...
    pub outcome: &'a str,
    /// Details: job ids, MessageIds, error text.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub detail: Value,
}

/// The steps a record can be of, as the log spells them (`Step::as_str`), and whether a step
/// changes the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Connecting to the BMC (and reading its service root) failed.
    Connect,
    /// Logging in.
    Login,
    /// The plan of an apply: the profile and the writes it needs.
    Plan,
    /// The host is in System Lockdown: nothing is written.
    Lockdown,
    /// The profile cannot be applied as written.
    Validate,
    /// Pending work rftune did not stage, refused.
    Pending,
    /// Pending values rftune staged earlier, adopted.
    Adopt,
    /// Pending work deleted (`--replace-pending`).
    Replace,
    /// A BIOS job created, or waited for.
    Job,
    /// The snapshot taken before any change.
    Snapshot,
    /// iDRAC attributes written.
    Idrac,
    /// The BIOS PATCH.
    Stage,
    /// The reboot that runs the BIOS job.
    Reboot,
    /// The host coming back after the reboot.
    Boot,
    /// The read-back and diff after a change.
    Verify,
    /// The end of a host's work, when it failed or had nothing to do.
    Done,
    /// Powering the host on (`rftune power on`, or after an interrupted reboot).
    PowerOn,
    /// Powering the host off.
    PowerOff,
    /// Power-cycling the host.
    PowerCycle,
    /// Deleting one job.
    DeleteJob,
    /// Clearing the job queue.
    ClearJobQueue,
    /// Clearing pending BIOS values.
    ClearPending,
    /// A step of a program built on the engine, named by that program (`PROGRAM:STEP`): a
    /// record of work whose writes the engine's own steps record.
    Named(&'static str),
    /// A Server Configuration Profile imported (`rftune scp import`).
    ScpImport,
    /// A hook around the reboot ran (its command, exit code and output).
    Hook,
    /// Values rftune staged were cleared again (a before-reboot hook failed).
    Unstage,
    /// The host's state before the first write, held against its plan.
    PlanCheck,
    /// The host's lock, taken (or taken over from a run that is gone).
    Lock,
    /// A one-time boot override set (`rftune boot once`).
    BootOnce,
    /// A boot override cancelled (`rftune boot clear`).
    BootClear,
    /// `Bios.ResetBios` sent: the BIOS returns to its defaults at the next POST.
    ResetBios,
    /// The read-back after a BIOS reset to defaults (the reset finished, what changed).
    Defaults,
    /// A BIOS password change sent (`Bios.ChangePassword`; the passwords are never recorded).
    ChangePassword,
    /// A Secure Boot key reset sent (`SecureBoot.ResetKeys`).
    ResetKeys,
}

impl Step {
    /// As the audit log spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Login => "login",
            Self::Plan => "plan",
            Self::Lockdown => "lockdown",
            Self::Validate => "validate",
            Self::Pending => "pending",
            Self::Adopt => "adopt",
            Self::Replace => "replace",
            Self::Job => "job",
            Self::Snapshot => "snapshot",
            Self::Idrac => "idrac",
            Self::Stage => "stage",
            Self::Reboot => "reboot",
            Self::Boot => "boot",
            Self::Verify => "verify",
            Self::Done => "done",
            Self::PowerOn => "power-on",
            Self::PowerOff => "power-off",
            Self::PowerCycle => "power-cycle",
            Self::DeleteJob => "delete-job",
            Self::ClearJobQueue => "clear-job-queue",
            Self::ClearPending => "clear-pending",
            Self::Named(name) => name,
            Self::ScpImport => "scp-import",
            Self::Hook => "hook",
            Self::Unstage => "unstage",
            Self::PlanCheck => "plan-check",
            Self::Lock => "lock",
            Self::BootOnce => "boot-once",
            Self::BootClear => "boot-clear",
            Self::ResetBios => "reset-bios",
            Self::Defaults => "defaults",
            Self::ChangePassword => "change-password",
            Self::ResetKeys => "reset-keys",
        }
    }

    /// Whether the step sends the host a write: what [`AuditLog::wrote`] answers for, once a
    /// record of it says `ok` (or, for a step that may be part-way done when it fails, `error`).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::PowerOn
                | Self::PowerOff
                | Self::PowerCycle
                | Self::Job
                | Self::Replace
                | Self::Idrac
                | Self::Stage
                | Self::Reboot
                | Self::DeleteJob
                | Self::ClearJobQueue
                | Self::ClearPending
                | Self::ScpImport
                | Self::Unstage
                | Self::BootOnce
                | Self::BootClear
                | Self::ResetBios
                | Self::ChangePassword
                | Self::ResetKeys
        )
    }

    /// Whether a failure of the step may still have changed the host (a reboot or power
    /// action that failed part way).
    fn may_have_written_on_error(self) -> bool {
        matches!(self, Self::Reboot | Self::PowerOff | Self::PowerCycle)
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The audit log of this run. Clones share the file and the run id (applies of several profiles
/// by one program are one run).
#[derive(Debug, Clone)]
pub struct AuditLog {
    path: PathBuf,
    run: String,
    file: Arc<Mutex<std::fs::File>>,
    /// The hosts this run wrote to (see [`AuditLog::wrote`]).
    written: Arc<Mutex<BTreeSet<String>>>,
}

impl AuditLog {
    /// Opens (creating) `dir/audit.log` for appending.
    pub fn open(dir: &Path) -> Result<Self> {
        let path = dir.join("audit.log");
        let file = crate::state::open_private_append(&path).context("opening the audit log")?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let run = format!("{}-{}", now.as_secs(), std::process::id());
        Ok(Self {
            path,
            run,
            file: Arc::new(Mutex::new(file)),
            written: Arc::default(),
        })
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// This run's id.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// Notes that this run sent `host` a write the BMC accepted, or one whose effect is not
    /// known (a lost answer, a reboot that failed part way).
    pub fn note_write(&self, host: &str) {
        let mut written = self.written.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !written.contains(host) {
            written.insert(host.to_owned());
        }
    }

    /// Whether this run wrote to `host` (or may have): what a caller tells apart in a host that
    /// failed, since a failure after a write still changed the host.
    pub fn wrote(&self, host: &str) -> bool {
        self.written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(host)
    }

    /// Appends a record; a failure to write the audit log fails the step that wanted it. A
    /// record of a write that happened (or may have) is noted for [`AuditLog::wrote`].
    pub fn record(&self, host: &str, step: Step, request: Value, outcome: &str, detail: Value) -> Result<()> {
        if step.writes() && (outcome == "ok" || (outcome == "error" && step.may_have_written_on_error())) {
            self.note_write(host);
        }
        let rec = Record {
            ts: host_bench::utc_now_seconds(),
            run: &self.run,
            host,
            step: step.as_str(),
            request,
            outcome,
            detail,
        };
        let mut line = serde_json::to_vec(&rec)?;
        line.push(b'\n');
        let mut f = self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f.write_all(&line)
            .with_context(|| format!("writing the audit log {}", self.path.display()))?;
        f.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_json_lines() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        let log = AuditLog::open(&dir).unwrap();
        log.record(
            "h1",
            Step::Stage,
            serde_json::json!({"Attributes": {"A": 1}}),
            "ok",
            Value::Null,
        )
        .unwrap();
        log.record("h2", Step::Reboot, Value::Null, "error", serde_json::json!("boom"))
            .unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["step"], "stage");
        assert_eq!(lines[1]["step"], "reboot");
        assert!(
            log.wrote("h1") && log.wrote("h2"),
            "a staged PATCH, and a reboot that may have happened"
        );
        assert_eq!(lines[1]["detail"], "boom");
        assert!(lines[0].get("detail").is_none());
        std::fs::remove_dir_all(dir).ok();
    }
}
