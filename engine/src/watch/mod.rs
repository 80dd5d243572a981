//! Watching a fleet: every host re-checked against a profile on a schedule, each host's latest
//! result kept as a small record on a [`Board`] that a reader (`rftune exporter`'s `/metrics`)
//! renders whenever it likes, without waiting for checks.
//!
//! Each host has its own clock. Its first check starts at once (at most `concurrency` at a
//! time, in inventory order); every later one is due a whole number of intervals after the
//! first started, moved by a random tenth of the interval either way ([`due_after`]), so a
//! fleet that started together spreads out instead of calling every BMC in the same second,
//! and a host whose check overran skips the slots it missed instead of running back to back.
//! A check that takes longer than the timeout is abandoned and recorded as failed
//! ([`Reason::Timeout`]); it holds its concurrency slot only until then, so a BMC that stops
//! answering never delays the others by more than that. A stop (see [`run`]) starts no new
//! check and lets the ones in flight finish (each within the timeout), so their sessions are
//! logged out.
//!
//! A job counts as stuck when the iDRAC says it will never run (PR30), or when it has been
//! running without its progress or message changing for `stuck_after` ([`classify_jobs`]). A
//! job waiting for a reboot is not stuck: it is how `apply --reboot none` leaves a host.

pub mod check;
pub mod metrics;
pub mod probe;

use crate::backend::JobOutcome;
use crate::error::{Error, HostErrorKind, Result};
use crate::fleet::BmcEntry;
use bios_profiles::HostVerdict;
use check::{Finding, JobSeen};
use host_bench::power::Sensor;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};
use tokio::time::Instant;

/// How often and how hard hosts are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Time between two checks of a host.
    pub interval: Duration,
    /// Longest a check may take before it is abandoned as failed.
    pub timeout: Duration,
    /// Checks running at the same time.
    pub concurrency: usize,
    /// How long a running job may show no progress before it counts as stuck.
    pub stuck_after: Duration,
    /// Check every host once, then stop.
    pub once: bool,
}

impl Default for Schedule {
    /// Every 5 minutes, a minute per check, as many at a time as any fleet run
    /// ([`crate::fleet::Limits`]); jobs stuck after an hour.
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(300),
            timeout: Duration::from_secs(60),
            concurrency: crate::fleet::Limits::default().concurrency,
            stuck_after: Duration::from_secs(3600),
            once: false,
        }
    }
}

/// When a host's `k`-th check (the first is 0) is due, counted from the start of its first:
/// `k` intervals, moved by `jitter` (in −1..=1) tenths of an interval. The first is due at once.
pub fn due_after(interval: Duration, k: u32, jitter: f64) -> Duration {
    if k == 0 {
        return Duration::ZERO;
    }
    let base = interval.as_secs_f64() * f64::from(k);
    let moved = base + interval.as_secs_f64() * 0.1 * jitter.clamp(-1.0, 1.0);
    Duration::from_secs_f64(moved.max(0.0))
}

/// The next check's number after check `k`, when `elapsed` has passed since the first started:
/// the next slot, or the first one still ahead when the check overran (missed slots are
/// skipped, not caught up).
pub fn next_slot(interval: Duration, k: u32, elapsed: Duration) -> u32 {
    let passed = if interval.is_zero() {
        0
    } else {
        u32::try_from(elapsed.as_nanos() / interval.as_nanos()).unwrap_or(u32::MAX)
    };
    (k + 1).max(passed.saturating_add(1))
}

/// Why a check failed, as a metric label: coarse and stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The check, or a request in it, took longer than allowed: a BMC that stopped answering.
    Timeout,
    /// The BMC could not be reached, trusted or logged in to.
    Connection,
    /// The BMC answered a request with an error, or with something unreadable.
    Redfish,
    /// The BMC lacks what rftune reads (not an iDRAC, no BIOS resource).
    Unsupported,
    /// The profile does not apply to the host (another CPU generation or vendor).
    Profile,
    /// Anything else.
    Other,
}

impl Reason {
    /// Every reason, in label order.
    pub const ALL: [Self; 6] = [
        Self::Timeout,
        Self::Connection,
        Self::Redfish,
        Self::Unsupported,
        Self::Profile,
        Self::Other,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Connection => "connection",
            Self::Redfish => "redfish",
            Self::Unsupported => "unsupported",
            Self::Profile => "profile",
            Self::Other => "other",
        }
    }

    /// The reason for an engine error.
    pub fn of(error: &Error) -> Self {
        match error {
            Error::Host(e) => match e.kind {
                _ if e.source.as_ref().is_some_and(redfish_client::Error::is_timeout) => Self::Timeout,
                HostErrorKind::Timeout => Self::Timeout,
                HostErrorKind::Unreachable | HostErrorKind::Credentials | HostErrorKind::Tls => Self::Connection,
                HostErrorKind::Redfish => Self::Redfish,
                HostErrorKind::Unsupported => Self::Unsupported,
                HostErrorKind::ProfileNotApplicable => Self::Profile,
                _ => Self::Other,
            },
            Error::Profile(_) => Self::Profile,
            Error::Context { source, .. } => Self::of(source),
            _ => Self::Other,
        }
    }
}

/// A failed check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Why, coarsely.
    pub reason: Reason,
    /// The error, for people, without the host's name (logged after it; not a label, it varies
    /// too much).
    pub message: String,
}

/// Jobs holding a host's queue, by state; `waiting + running + stuck` is every open job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobCounts {
    /// Scheduled or waiting for a reboot (not stuck: a job staged for the next reboot waits).
    pub waiting: usize,
    /// Running and still moving.
    pub running: usize,
    /// Will never run (PR30), or running without progress for longer than `stuck_after`.
    pub stuck: usize,
}

/// What a host's jobs looked like when last seen, to tell a running job from a stuck one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobProgress {
    id: String,
    percent: Option<u8>,
    message_id: Option<String>,
    /// When it was first seen at this progress.
    since: Instant,
}

/// Counts `jobs` by state, given what the last check saw (`before`), at `now`: a running job
/// whose percentage and message are unchanged since `before` recorded them counts as stuck once
/// that was `stuck_after` ago. Returns the counts and what to remember for the next check.
pub fn classify_jobs(
    before: &[JobProgress],
    jobs: &[JobSeen],
    now: Instant,
    stuck_after: Duration,
) -> (JobCounts, Vec<JobProgress>) {
    let mut counts = JobCounts::default();
    let mut seen = Vec::new();
    for job in jobs {
        match job.outcome {
            JobOutcome::Stuck => counts.stuck += 1,
            JobOutcome::Running => {
                let since = before
                    .iter()
                    .find(|p| p.id == job.id && p.percent == job.percent && p.message_id == job.message_id)
                    .map_or(now, |p| p.since);
                if now.saturating_duration_since(since) >= stuck_after {
                    counts.stuck += 1;
                } else {
                    counts.running += 1;
                }
                seen.push(JobProgress {
                    id: job.id.clone(),
                    percent: job.percent,
                    message_id: job.message_id.clone(),
                    since,
                });
            }
            // Holding the queue but neither stuck nor running: waiting for a reboot or its turn.
            _ => counts.waiting += 1,
        }
    }
    (counts, seen)
}

/// A finished check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRecord {
    /// When it ended.
    pub finished: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// What it found, or why it failed.
    pub outcome: std::result::Result<Checked, Failure>,
}

/// A successful check's finding, with the jobs counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// What was read.
    pub finding: Finding,
    /// Its jobs by state.
    pub jobs: JobCounts,
}

/// How a host stands, as `rftune diff` would put it (plus not checked yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostStatus {
    /// Every attribute of the profile as it wants.
    InSync,
    /// Nothing checked differs, but some settings could not be checked for lack of evidence
    /// for the host's CPU generation: not proven in sync.
    Unverified,
    /// Drift, or the profile's values only pending.
    Drift,
    /// The last check failed, or the profile cannot be applied to the host as written.
    Error,
    /// Not checked yet.
    Unknown,
}

impl HostStatus {
    /// Every status, in label order.
    pub const ALL: [Self; 5] = [Self::InSync, Self::Unverified, Self::Drift, Self::Error, Self::Unknown];

    /// The label value (`diff`'s spelling, plus `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InSync => "in_sync",
            Self::Unverified => "unverified",
            Self::Drift => "drift",
            Self::Error => "error",
            Self::Unknown => "unknown",
        }
    }
}

/// One host's record: its latest check and counters, kept between checks.
#[derive(Debug, Clone)]
pub struct HostRecord {
    /// The inventory name.
    pub name: String,
    /// Successful checks so far.
    pub successes: u64,
    /// Failed checks so far.
    pub failures: u64,
    /// The latest finished check.
    pub last: Option<CheckRecord>,
    /// When the latest successful check ended.
    pub last_success: Option<SystemTime>,
    /// Whether a check is in flight.
    pub running: bool,
    /// The power source found (one request per reading from then on).
    sensor: Option<Sensor>,
    /// Running jobs' progress, to tell when one is stuck.
    progress: Vec<JobProgress>,
}

impl HostRecord {
    /// A host not checked yet.
    pub fn new(name: String) -> Self {
        Self {
            name,
            successes: 0,
            failures: 0,
            last: None,
            last_success: None,
            running: false,
            sensor: None,
            progress: Vec::new(),
        }
    }

    /// What the latest check found, if it succeeded.
    pub fn checked(&self) -> Option<&Checked> {
        self.last.as_ref()?.outcome.as_ref().ok()
    }

    /// How the host stands after its latest check.
    pub fn status(&self) -> HostStatus {
        match self.last.as_ref().map(|l| &l.outcome) {
            None => HostStatus::Unknown,
            Some(Err(_)) => HostStatus::Error,
            Some(Ok(c)) if c.finding.profile_errors > 0 => HostStatus::Error,
            Some(Ok(c)) => match c.finding.counts.verdict() {
                HostVerdict::InSync => HostStatus::InSync,
                HostVerdict::Unverified => HostStatus::Unverified,
                HostVerdict::Drift => HostStatus::Drift,
            },
        }
    }
}

/// Every host's latest record, shared between the checks that write it and the readers.
#[derive(Debug)]
pub struct Board {
    /// The profile hosts are checked against.
    pub profile: String,
    /// The schedule in force.
    pub schedule: Schedule,
    /// One record per host, in inventory order.
    pub hosts: Vec<HostRecord>,
}

impl Board {
    /// A board for `entries`, none checked yet.
    pub fn new(profile: &str, schedule: Schedule, entries: &[BmcEntry]) -> Self {
        Self {
            profile: profile.to_owned(),
            schedule,
            hosts: entries.iter().map(|e| HostRecord::new(e.name.clone())).collect(),
        }
    }

    /// Whether every host has finished at least one check (successful or not).
    pub fn all_checked(&self) -> bool {
        self.hosts.iter().all(|h| h.last.is_some())
    }

    /// Hosts checked at least once.
    pub fn checked(&self) -> usize {
        self.hosts.iter().filter(|h| h.last.is_some()).count()
    }

    /// Hosts per status, in [`HostStatus::ALL`] order.
    pub fn by_status(&self) -> [(HostStatus, usize); HostStatus::ALL.len()] {
        HostStatus::ALL.map(|s| (s, self.hosts.iter().filter(|h| h.status() == s).count()))
    }

    /// Records the end of host `i`'s check: its finding or failure, at `now` (monotonic) and
    /// `finished` (wall clock). Logs a host that starts or stops failing.
    pub fn record(
        &mut self,
        i: usize,
        result: std::result::Result<Finding, Failure>,
        duration: Duration,
        now: Instant,
        finished: SystemTime,
    ) {
        let stuck_after = self.schedule.stuck_after;
        if let Some(host) = self.hosts.get_mut(i) {
            host.record(result, duration, now, finished, stuck_after);
        }
    }
}

impl HostRecord {
    /// Records the end of a check of this host, as [`Board::record`] does: a running job that
    /// has not moved for `stuck_after` counts as stuck.
    pub fn record(
        &mut self,
        result: std::result::Result<Finding, Failure>,
        duration: Duration,
        now: Instant,
        finished: SystemTime,
        stuck_after: Duration,
    ) {
        let host = self;
        host.running = false;
        let was_failing = matches!(host.last.as_ref().map(|l| &l.outcome), Some(Err(_)));
        let outcome = match result {
            Ok(finding) => {
                host.successes += 1;
                host.last_success = Some(finished);
                if let Some(p) = &finding.power {
                    host.sensor = Some(p.sensor);
                }
                let (jobs, progress) = classify_jobs(&host.progress, &finding.jobs, now, stuck_after);
                host.progress = progress;
                if was_failing {
                    tracing::info!("{}: check succeeded again", host.name);
                }
                Ok(Checked { finding, jobs })
            }
            Err(failure) => {
                host.failures += 1;
                if was_failing {
                    tracing::debug!("{}: check failed again: {}", host.name, failure.message);
                } else {
                    tracing::warn!("{}: check failed: {}", host.name, failure.message);
                }
                Err(failure)
            }
        };
        host.last = Some(CheckRecord {
            finished,
            duration,
            outcome,
        });
    }
}

/// The [`Board`] as shared: checks write their records, readers lock it briefly to render.
#[derive(Debug, Clone)]
pub struct SharedBoard(Arc<Mutex<Board>>);

impl SharedBoard {
    /// Shares `board`.
    pub fn new(board: Board) -> Self {
        Self(Arc::new(Mutex::new(board)))
    }

    /// The board, locked (a check that panicked while holding it left nothing half-written
    /// that matters: every write is one assignment per field).
    pub fn lock(&self) -> MutexGuard<'_, Board> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Checks every host of `entries` on `board.schedule` with `check` (given the host and the power
/// sensor an earlier check found; [`check::Checker::check`] in the exporter) and records each
/// result on `board`, until `stop` turns true (or, with `once`, after every host's first
/// check). Returns when no check is in flight any more.
pub async fn run<C, Fut>(entries: Vec<BmcEntry>, board: SharedBoard, check: C, stop: tokio::sync::watch::Receiver<bool>)
where
    C: Fn(BmcEntry, Option<Sensor>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Finding>> + Send + 'static,
{
    let schedule = board.lock().schedule;
    let permits = Arc::new(tokio::sync::Semaphore::new(schedule.concurrency.max(1)));
    let check = Arc::new(check);
    let mut tasks = tokio::task::JoinSet::new();
    for (i, entry) in entries.into_iter().enumerate() {
        let host = HostLoop {
            i,
            entry,
            schedule,
            board: board.clone(),
            permits: permits.clone(),
            stop: stop.clone(),
            rng: fastrand::Rng::new(),
        };
        let check = check.clone();
        tasks.spawn(host.run(move |e, s| check(e, s)));
        // Spawned in inventory order; give each a chance to queue for its slot in that order.
        tokio::task::yield_now().await;
    }
    while let Some(joined) = tasks.join_next().await {
        if let Err(e) = joined {
            tracing::error!("a host's check loop ended abnormally: {e}");
        }
    }
}

/// One host's clock.
struct HostLoop {
    i: usize,
    entry: BmcEntry,
    schedule: Schedule,
    board: SharedBoard,
    permits: Arc<tokio::sync::Semaphore>,
    stop: tokio::sync::watch::Receiver<bool>,
    rng: fastrand::Rng,
}

impl HostLoop {
    async fn run<Fut>(mut self, check: impl Fn(BmcEntry, Option<Sensor>) -> Fut)
    where
        Fut: Future<Output = Result<Finding>>,
    {
        let Schedule {
            interval,
            timeout,
            once,
            ..
        } = self.schedule;
        let mut first: Option<Instant> = None;
        let mut k = 0;
        loop {
            if let Some(first) = first {
                let due = first + due_after(interval, k, self.rng.f64() * 2.0 - 1.0);
                tokio::select! {
                    () = tokio::time::sleep_until(due) => {}
                    _ = self.stop.wait_for(|s| *s) => return,
                }
            }
            let permit = tokio::select! {
                p = self.permits.clone().acquire_owned() => p,
                _ = self.stop.wait_for(|s| *s) => return,
            };
            if *self.stop.borrow() {
                return;
            }
            let started = Instant::now();
            let first = *first.get_or_insert(started);
            let sensor = {
                let mut board = self.board.lock();
                let Some(host) = board.hosts.get_mut(self.i) else {
                    return;
                };
                host.running = true;
                host.sensor
            };
            let result = match tokio::time::timeout(timeout, check(self.entry.clone(), sensor)).await {
                Ok(Ok(finding)) => Ok(finding),
                Ok(Err(e)) => Err(Failure {
                    reason: Reason::of(&e),
                    message: crate::error::without_host(&self.entry.name, &format!("{e:#}")).to_owned(),
                }),
                Err(_) => Err(Failure {
                    reason: Reason::Timeout,
                    message: format!(
                        "the check took longer than {} and was abandoned",
                        humantime::format_duration(timeout)
                    ),
                }),
            };
            drop(permit);
            let now = Instant::now();
            self.board
                .lock()
                .record(self.i, result, now - started, now, SystemTime::now());
            if once {
                return;
            }
            k = next_slot(interval, k, now - first);
        }
    }
}

#[cfg(test)]
mod tests;
