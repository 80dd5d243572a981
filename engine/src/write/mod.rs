//! The pipeline every write to a host goes through, whoever writes — an apply, an SCP import, a
//! reset to defaults, a BIOS password change, a one-time boot, a Secure Boot key reset, a power
//! action, job and pending-value housekeeping: the host's lock (one run per host; a wait for
//! another run's says so and names it), a backend rftune writes to, the refusals every writer
//! shares (System Lockdown; pending work rftune did not stage, deleted only on request), one
//! of the run's reboot slots, the snapshot, the reboot by the run's policy with the hooks
//! around it, the wait for a job and for the host, and a stop request honoured between steps —
//! each step in the audit log.
//!
//! A run's [`Writes`] is shared by its hosts; a host's [`Writer`] exists while it holds the
//! lock, and the steps of an operation are its methods (`pending.rs`, `reboot.rs`, `around.rs`);
//! `order.rs` splits out a boot order a backend keeps apart from the BIOS values.

mod around;
pub(crate) mod order;
mod pending;
mod reboot;

pub(crate) use pending::inspect_pending;
pub use pending::{Own, Pending};

use crate::audit::{AuditLog, Step};
use crate::backend::Backend;
use crate::connect::Bmc;
use crate::control::RebootPolicy;
use crate::error::{HostError, HostErrorKind, Result};
use crate::hooks::Hooks;
use crate::interrupt::{self, Interrupted};
use crate::lock::HostLock;
use crate::observe::{Event, Observer, Phase};
use crate::snapshot::Snapshot;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How a run writes: plain values a caller fills.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// How to reboot a host when a change needs it (`None`: it applies at the host's next
    /// reboot).
    pub reboot: RebootPolicy,
    /// How long the OS gets to shut down before power is forced off.
    pub graceful_timeout: Duration,
    /// How long a job may take once the host reboots.
    pub job_timeout: Duration,
    /// How long the host may take to come back.
    pub boot_timeout: Duration,
    /// Delete pending work rftune did not stage instead of refusing.
    pub replace_pending: bool,
    /// Commands run around each host's reboot.
    pub hooks: Hooks,
    /// When a before-reboot hook fails, leave what was staged pending instead of clearing it.
    pub keep_staged: bool,
    /// How long to wait for another run's lock on a host before failing it.
    pub lock_wait: Duration,
}

impl Default for WriteOptions {
    /// A graceful reboot (10 min for the OS, then forced), 30 min for a job, 20 min for the
    /// host to come back; pending work refused; no hooks; another run's lock fails at once.
    fn default() -> Self {
        Self {
            reboot: RebootPolicy::Graceful,
            graceful_timeout: Duration::from_secs(600),
            job_timeout: Duration::from_secs(1800),
            boot_timeout: Duration::from_secs(1200),
            replace_pending: false,
            hooks: Hooks::default(),
            keep_staged: false,
            lock_wait: Duration::ZERO,
        }
    }
}

/// What a run's writes share across its hosts: the options, the audit log, the state directory
/// (locks, snapshots, markers), what the run writes, and its reboot slots.
#[derive(Debug, Clone)]
pub struct Writes {
    /// How to write.
    pub options: WriteOptions,
    /// The audit log.
    pub audit: AuditLog,
    /// The state directory.
    pub state_dir: PathBuf,
    /// The command that writes, as messages suggest running it again (`apply`, `scp import`).
    pub command: &'static str,
    /// What the run writes, as its hooks are told (`RFTUNE_PROFILE`): the profile's name, the
    /// SCP file's, or the command's.
    pub label: String,
    slots: RebootSlots,
}

/// How many hosts may be rebooting at once, shared by every run that holds a clone.
#[derive(Debug, Clone)]
pub struct RebootSlots(Arc<Semaphore>);

impl RebootSlots {
    /// At most `max` hosts rebooting at once (at least one).
    pub fn new(max: usize) -> Self {
        Self(Arc::new(Semaphore::new(max.max(1))))
    }
}

impl Writes {
    /// The writes of `command` with `options`, recorded in `audit`, with state under
    /// `state_dir`, letting at most `max_rebooting` hosts reboot at once; its hooks are told
    /// the command as what is written (see [`Writes::labelled`]).
    pub fn new(
        command: &'static str,
        options: WriteOptions,
        audit: AuditLog,
        state_dir: &Path,
        max_rebooting: usize,
    ) -> Self {
        Self {
            options,
            audit,
            state_dir: state_dir.to_owned(),
            command,
            label: command.to_owned(),
            slots: RebootSlots::new(max_rebooting),
        }
    }

    /// These writes, telling hooks that `label` (a profile's name, a file's) is written.
    #[must_use]
    pub fn labelled(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// These writes, with their hosts counted against `slots` (shared with other runs).
    #[must_use]
    pub fn sharing(mut self, slots: &RebootSlots) -> Self {
        self.slots = slots.clone();
        self
    }

    /// The reboot slots of these writes, to share with another run.
    pub fn slots(&self) -> &RebootSlots {
        &self.slots
    }

    /// Takes the host's lock and makes its [`Writer`]; the backend must be one rftune writes
    /// to once it is recognised ([`Writer::writable`]).
    pub async fn begin<'a>(&'a self, bmc: &'a Bmc, observer: &'a dyn Observer) -> Result<Writer<'a>> {
        let lock = self.lock(bmc, observer).await?;
        Ok(Writer {
            writes: self,
            bmc,
            observer,
            lock: Some(lock),
            hooks: Mutex::default(),
        })
    }

    /// A [`Writer`] that holds no lock, for a run that writes nothing (a dry run).
    pub fn dry<'a>(&'a self, bmc: &'a Bmc, observer: &'a dyn Observer) -> Writer<'a> {
        Writer {
            writes: self,
            bmc,
            observer,
            lock: None,
            hooks: Mutex::default(),
        }
    }

    /// Takes the lock of `bmc`, recording a refusal, and saying when it took over a lock a run
    /// that is gone left.
    async fn lock(&self, bmc: &Bmc, observer: &dyn Observer) -> Result<HostLock> {
        let lock = crate::lock::acquire(&self.state_dir, &bmc.name, &bmc.url, self.options.lock_wait, observer)
            .await
            .inspect_err(|e| {
                let _ = self.audit.record(
                    &bmc.name,
                    Step::Lock,
                    Value::Null,
                    "refused",
                    json!(crate::error::report(e)),
                );
            })?;
        if let Some(gone) = &lock.took_over {
            let text = format!("took over the host's lock from a run that is gone: {gone}");
            self.audit
                .record(&bmc.name, Step::Lock, Value::Null, "ok", json!(text))?;
            observer.event(&Event::notice(&bmc.name, text));
        }
        Ok(lock)
    }
}

/// One host's writes, while it holds its lock.
pub struct Writer<'a> {
    /// The run's writes.
    pub writes: &'a Writes,
    /// The host.
    pub bmc: &'a Bmc,
    /// Who hears of progress.
    pub observer: &'a dyn Observer,
    lock: Option<HostLock>,
    hooks: Mutex<HookState>,
}

impl std::fmt::Debug for Writer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("host", &self.bmc.name)
            .field("locked", &self.lock.is_some())
            .finish_non_exhaustive()
    }
}

impl Writer<'_> {
    /// The host's name.
    pub fn name(&self) -> &str {
        &self.bmc.name
    }

    /// The options of the run.
    pub fn options(&self) -> &WriteOptions {
        &self.writes.options
    }

    /// The host's BMC URL without a trailing slash, for messages that suggest commands.
    pub fn url(&self) -> String {
        self.bmc.client.base_url().as_str().trim_end_matches('/').to_owned()
    }

    /// Records one step of this host's work.
    pub fn audit(&self, step: Step, request: Value, outcome: &str, detail: Value) -> Result<()> {
        self.writes.audit.record(self.name(), step, request, outcome, detail)
    }

    /// Tells the observer what the host is doing.
    pub fn phase(&self, phase: Phase) {
        self.observer.event(&Event::phase(self.name(), phase));
    }

    /// A stop request, while the host is at `during`.
    pub fn stopped(&self, during: impl Into<String>) -> Interrupted {
        Interrupted {
            host: self.name().to_owned(),
            signal: interrupt::received().unwrap_or(0),
            during: during.into(),
        }
    }

    /// Fails when a stop was requested, naming `before` (`the snapshot`).
    pub fn check(&self, before: &str) -> Result<()> {
        Ok(interrupt::check(self.name(), before)?)
    }

    /// The host's backend, recognised and one rftune writes to; otherwise the host's error
    /// saying why nothing is written.
    pub async fn writable(&self) -> Result<Backend> {
        self.bmc.writable().await
    }

    /// Refuses the host when its BMC says it is locked down (`lockdown`, as read).
    pub fn refuse_lockdown(&self, lockdown: Option<bool>) -> Result<()> {
        if lockdown != Some(true) {
            return Ok(());
        }
        let reason = crate::read::lockdown_reason(&self.bmc.backend());
        self.audit(Step::Lockdown, Value::Null, "refused", json!(reason))?;
        Err(HostError::new(self.name(), HostErrorKind::Lockdown, reason).into())
    }

    /// One of the run's reboot slots, held until the host is back (`None` when the run does
    /// not reboot). A stop request while waiting leaves the host untouched.
    pub async fn slot(&self) -> Result<Option<OwnedSemaphorePermit>> {
        if self.options().reboot == RebootPolicy::None {
            return Ok(None);
        }
        self.take_slot("while waiting for a reboot slot; nothing was sent")
            .await
            .map(Some)
    }

    /// One of the run's reboot slots, whatever the policy; a stop request while waiting is
    /// reported as happening `during`.
    pub async fn take_slot(&self, during: &str) -> Result<OwnedSemaphorePermit> {
        tokio::select! {
            permit = self.writes.slots.0.clone().acquire_owned() => {
                permit.map_err(|_| crate::Error::from(self.stopped("the run's reboot slots were closed")))
            }
            _ = interrupt::wait() => Err(self.stopped(during).into()),
        }
    }

    /// Saves `snap` (every current value) before the first change, recorded.
    pub fn snapshot(&self, snap: &Snapshot) -> Result<PathBuf> {
        self.check("the snapshot")?;
        let path = snap.save(&self.writes.state_dir)?;
        self.audit(Step::Snapshot, Value::Null, "ok", json!(path))?;
        Ok(path)
    }

    /// The hooks that ran for this host, `before-reboot: ok`, in order.
    pub fn hooks_ran(&self) -> Vec<String> {
        self.hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .records
            .clone()
    }
}

/// What the hooks of one host have done (`around.rs` runs them).
#[derive(Debug, Default)]
struct HookState {
    /// The before-reboot point was reached: the after-verify or on-failure hook runs.
    reached: bool,
    /// `before-reboot: ok`, one per hook that ran.
    records: Vec<String>,
    /// The host's service tag, once read (`RFTUNE_SERVICE_TAG`).
    service_tag: Option<String>,
}
