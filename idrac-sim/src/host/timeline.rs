//! The host's clock. Every scheduled change (a graceful shutdown ending, POST's phases and the
//! BIOS job POST runs, a maintenance window opening or closing, a reboot job's start time, the
//! end of an iDRAC or Lifecycle Controller restart) happens at its own instant. Each operation
//! first replays, in order, every change whose instant has passed, each at that instant (a
//! power-on that follows a shutdown starts when the shutdown ended, not when the next request
//! arrives), so no task runs per host and nothing a client sees depends on when it asks.
//! Readiness (`availability`, `GetRemoteServicesAPIStatus`) is read off the same state.

use super::jobs::{Job, JobKind, ScpKind};
use super::{Boot, Host, Reply, State};
use crate::clock::wall;
use crate::messages::{self, idrac};
use crate::route::Request;
use redfish_client::oem::dell::{AttributeGroup, JobState};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// What a request to the Systems tree or the iDRAC attributes meets while the iDRAC or its
/// Lifecycle Controller restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Served normally.
    Ready,
    /// The iDRAC is rebooting: the connection is dropped.
    Unreachable,
    /// Configuration services are restarting after an iDRAC reset: 400 SWC0700 everywhere on
    /// those paths, the Systems collection included.
    IdracStarting,
    /// The Lifecycle Controller is restarting: the Systems collection lists no member and its
    /// resources answer 400 SWC0700.
    LcRestarting,
}

/// What a restarting iDRAC or Lifecycle Controller answers on the paths it cannot serve (the
/// Systems tree, the iDRAC attributes): 400 SWC0700, and the Systems collection empty while the
/// Lifecycle Controller restarts. `None` while it is ready.
pub(crate) fn configuration_gate(host: &Host, request: &Request<'_>) -> Option<Reply> {
    let path = request.path;
    let configuration = path.starts_with("/redfish/v1/Systems")
        || path.contains("/DellAttributes/")
        || super::dell::group_at(path).is_some();
    if !configuration {
        return None;
    }
    match host.availability() {
        Availability::LcRestarting if *request.method == axum::http::Method::GET && path == "/redfish/v1/Systems" => {
            let mut empty = request
                .recorded(host)
                .cloned()
                .unwrap_or_else(|| json!({"@odata.id": path}));
            empty["Members"] = json!([]);
            empty["Members@odata.count"] = json!(0);
            Some(Reply::ok(empty))
        }
        Availability::LcRestarting | Availability::IdracStarting => Some(Reply::error(400, vec![messages::swc0700()])),
        Availability::Ready | Availability::Unreachable => None,
    }
}

/// A scheduled change as [`Host::next_event`] weighs it, before anything is copied: one of
/// the host's own, or one of a job's, by the job's id.
enum Due<'a> {
    Host(Event),
    Job(fn(String) -> Event, &'a str),
}

/// Something scheduled that happens at its own instant.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    OutageEnds,
    ShutdownEnds,
    BiosJobStarts,
    BiosJobEnds,
    PostEnds,
    WindowOpens(String),
    WindowCloses(String),
    RebootJobRuns(String),
    /// An SCP job's next step (`scp`).
    ScpDue(String),
}

impl Host {
    /// Replays every scheduled change up to `now`, each at its own instant.
    pub(super) fn advance(&self, s: &mut State, now: Instant) {
        self.fire_due(s, now);
        self.account_energy(s, now);
        if let Some(boot) = s.boot
            && let Some(job) = s.jobs.values_mut().find(|j| {
                j.state == JobState::Running && matches!(j.kind, JobKind::Bios | JobKind::Scp(ScpKind::Import))
            })
        {
            let total = self.config.boot_time;
            let elapsed = now.saturating_duration_since(boot.started);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let pct = (elapsed.as_secs_f64() / total.as_secs_f64().max(1e-3) * 100.0).clamp(10.0, 99.0) as u8;
            job.percent = pct;
        }
    }

    /// Fires every scheduled change up to `now`, each at its own instant, the energy counted
    /// up to each. What runs on its own between changes (the energy counter, a running job's
    /// percentage) is left for [`Host::advance`]: the draw is constant between changes, so
    /// counting later gives the same total.
    pub(super) fn fire_due(&self, s: &mut State, now: Instant) {
        while let Some((at, event)) = self.next_event(s, now) {
            self.account_energy(s, at);
            self.fire(s, at, event);
        }
    }

    /// The earliest scheduled change, if it is due by `now` (the first listed among changes due
    /// at the same instant). Nothing is allocated unless one is due: a job's id is copied only
    /// for the change that fires.
    fn next_event(&self, s: &State, now: Instant) -> Option<(Instant, Event)> {
        let mut earliest: Option<(Instant, Due<'_>)> = None;
        let mut consider = |at: Instant, due| {
            if earliest.as_ref().is_none_or(|(first, _)| at < *first) {
                earliest = Some((at, due));
            }
        };
        if let Some(o) = s.outage {
            consider(o.ready_at, Due::Host(Event::OutageEnds));
        }
        if let Some(sd) = s.shutdown {
            consider(sd.at, Due::Host(Event::ShutdownEnds));
        }
        if let Some(b) = s.boot {
            let total = self.config.boot_time;
            if !b.job_started {
                consider(b.started + total.mul_f64(0.1), Due::Host(Event::BiosJobStarts));
            } else if self.faults.no_return {
                // POST never ends: nothing more happens in it.
            } else if !b.job_done {
                consider(b.started + total.mul_f64(0.6), Due::Host(Event::BiosJobEnds));
            } else {
                consider(b.started + total, Due::Host(Event::PostEnds));
            }
        }
        for job in s.jobs.values() {
            if job.state == JobState::Scheduled {
                if let Some(w) = job.window {
                    if w.reboots && !w.triggered {
                        consider(w.start, Due::Job(Event::WindowOpens, &job.id));
                    }
                    if let Some(end) = w.end {
                        consider(end, Due::Job(Event::WindowCloses, &job.id));
                    }
                }
                if let Some(at) = job.run_at {
                    consider(at, Due::Job(Event::RebootJobRuns, &job.id));
                }
            }
        }
        for (id, task) in &s.scp {
            if let Some(at) = task.due {
                consider(at, Due::Job(Event::ScpDue, id));
            }
        }
        let (at, due) = earliest.filter(|(at, _)| *at <= now)?;
        Some((
            at,
            match due {
                Due::Host(event) => event,
                Due::Job(event, id) => event(id.to_owned()),
            },
        ))
    }

    fn fire(&self, s: &mut State, at: Instant, event: Event) {
        self.changed();
        match event {
            Event::OutageEnds => s.outage = None,
            Event::ShutdownEnds => {
                let then_boot = s.shutdown.is_some_and(|sd| sd.then_boot);
                s.shutdown = None;
                s.on = false;
                // A host shut down in POST does not finish that POST.
                s.boot = None;
                if then_boot {
                    self.start_boot(s, at);
                }
            }
            Event::BiosJobStarts => {
                if let Some(b) = s.boot.as_mut() {
                    b.job_started = true;
                }
                self.start_bios_job(s, at);
            }
            Event::BiosJobEnds => {
                if let Some(b) = s.boot.as_mut() {
                    b.job_done = true;
                }
                self.finish_bios_job(s, at);
            }
            Event::PostEnds => {
                s.boot = None;
                s.on = true;
                // The BIOS's Secure Boot state (a key reset, the values the job applied) is what
                // this boot runs under; a one-time boot override (or the BIOS's one-time device)
                // is used up here.
                Self::apply_secure_boot(s, wall(at));
                self.choose_boot_device(s);
                s.view = None;
            }
            Event::WindowOpens(id) => {
                if let Some(w) = s.jobs.get_mut(&id).and_then(|j| j.window.as_mut()) {
                    w.triggered = true;
                }
                // AtMaintenanceWindowStart: the iDRAC restarts the host itself.
                s.shutdown = None;
                self.start_boot(s, at);
            }
            Event::WindowCloses(id) => {
                if let Some(job) = s.jobs.get_mut(&id)
                    && job.state == JobState::Scheduled
                {
                    job.state = JobState::Failed;
                    job.message_id = "SYS051";
                    job.message = "The maintenance window ended before the job could run.";
                    job.actual_stop = Some(wall(at));
                    s.pending.clear();
                    s.password_pending.clear();
                    s.boot_seq_pending = None;
                    Self::lc_log_at(
                        s,
                        wall(at),
                        "JCP042",
                        &[&id, "the maintenance window ended before the job could run"],
                        "Configuration",
                        Some(super::MANAGER),
                    );
                }
            }
            Event::RebootJobRuns(id) => self.run_reboot_job(s, &id, at),
            Event::ScpDue(id) => self.scp_due(s, &id, at),
        }
    }

    pub(super) fn start_boot(&self, s: &mut State, at: Instant) {
        let mut completed = Vec::new();
        // A reboot job is done once the host restarts.
        for job in s.jobs.values_mut() {
            if job.state == JobState::RebootPending {
                job.state = JobState::RebootCompleted;
                job.message_id = "RED030";
                job.message = "Reboot is complete.";
                job.percent = 100;
                job.actual_stop = Some(wall(at));
                completed.push(job.id.clone());
            }
        }
        for id in completed {
            Self::lc_log_at(s, wall(at), "JCP037", &[&id], "Configuration", Some(super::MANAGER));
        }
        self.stats.count_post();
        s.on = true;
        s.boot = Some(Boot {
            started: at,
            job_started: false,
            job_done: false,
        });
    }

    /// Early in POST the scheduled BIOS job starts, if this boot may run it (no window, or a
    /// boot inside its window).
    fn start_bios_job(&self, s: &mut State, at: Instant) {
        let Some(boot) = s.boot else { return };
        self.scp_post_starts(s, at);
        let stuck = self.faults.stuck_job;
        let eligible = |j: &Job| {
            j.kind == JobKind::Bios
                && j.state == JobState::Scheduled
                && j.message_id != "PR30"
                && j.window
                    .is_none_or(|w| boot.started >= w.start && w.end.is_none_or(|e| boot.started <= e))
        };
        if let Some(job) = s.jobs.values_mut().find(|j| eligible(j)) {
            if stuck {
                job.message_id = "PR30";
                job.message = "Job processing initialization failure.";
            } else {
                job.state = JobState::Running;
                job.message_id = "PR20";
                job.message = "Job in progress.";
                job.percent = 10;
                job.actual_start = Some(wall(at));
            }
        }
    }

    /// Later in POST: a requested BIOS reset restores the defaults, then the running BIOS job
    /// applies the pending values (with every value the registry's presets force) and password
    /// changes, or fails.
    fn finish_bios_job(&self, s: &mut State, at: Instant) {
        if s.reset_bios_pending {
            s.reset_bios_pending = false;
            s.bios = Self::default_bios(&self.fixture, &self.service_tag);
            s.inferred = self.fixture.hidden_bios.keys().cloned().collect();
            s.passwords.clear();
            s.boot_seq = super::boot::initial_sequence(&self.fixture);
            s.view = None;
            self.set_rtd_flag(s, false);
            Self::lc_log_at(s, wall(at), "UEFI0157", &[], "Configuration", None);
        }
        self.scp_post_ends(s, at);
        let Some(job) = s
            .jobs
            .values_mut()
            .find(|j| j.state == JobState::Running && j.kind == JobKind::Bios)
        else {
            return;
        };
        job.actual_stop = Some(wall(at));
        job.percent = 100;
        let id = job.id.clone();
        if self.faults.job_fails {
            job.state = JobState::Failed;
            job.message_id = "SYS051";
            job.message = "Unable to apply the BIOS configuration changes.";
            s.pending.clear();
            s.password_pending.clear();
            s.boot_seq_pending = None;
            Self::lc_log_at(
                s,
                wall(at),
                "JCP042",
                &[&id, "the BIOS configuration changes could not be applied"],
                "Configuration",
                Some(super::MANAGER),
            );
            return;
        }
        job.state = JobState::Completed;
        job.message_id = "PR19";
        job.message = "Job completed successfully.";
        Self::lc_log_at(s, wall(at), "JCP037", &[&id], "Configuration", Some(super::MANAGER));
        let mut candidate = Self::known(s);
        let applied = std::mem::take(&mut s.pending);
        candidate.extend(applied.clone());
        let evaluation = self.evaluate(&candidate);
        for (name, value) in evaluation.values() {
            s.inferred.remove(name);
            s.bios.insert(name.clone(), value.clone());
        }
        self.apply_boot_changes(s, &applied);
        // An NPS the memory population cannot take: POST falls back to NPS 1 (UEFI0391).
        let written = s
            .bios
            .get("NumaNodesPerSocket")
            .and_then(|v| v.as_str())
            .map(str::to_owned);
        if let Some(written) = written
            && let Some(fallback) =
                super::numa::after_post(&written, &self.fixture.cpu_model, &self.fixture.dimms_per_socket)
        {
            s.bios.insert("NumaNodesPerSocket".to_owned(), fallback.into());
            Self::lc_log_at(s, wall(at), "UEFI0391", &[], "Configuration", None);
        }
        let passwords = std::mem::take(&mut s.password_pending);
        for (name, new) in passwords {
            Self::password_hash(s, &name, &new);
            if new.is_empty() {
                s.passwords.remove(&name);
            } else {
                s.passwords.insert(name, new);
            }
        }
        s.view = None;
    }

    /// `LCAttributes.1.BIOSRTDRequested`, where the tree has it: whether a BIOS reset to
    /// defaults waits for the next POST.
    pub(super) fn set_rtd_flag(&self, s: &mut State, requested: bool) {
        const RTD: &str = "LCAttributes.1.BIOSRTDRequested";
        if let Some(lc) = s.dell.get_mut(&AttributeGroup::LifecycleController)
            && lc.contains_key(RTD)
        {
            lc.insert(RTD.to_owned(), if requested { "True" } else { "False" }.into());
        }
    }

    /// What a request to the Systems tree or the iDRAC attributes meets right now.
    pub fn availability(&self) -> Availability {
        let mut s = self.lock();
        self.fire_due(&mut s, Instant::now());
        match s.outage {
            None => Availability::Ready,
            Some(o) if o.down_until.is_some_and(|d| Instant::now() < d) => Availability::Unreachable,
            Some(o) if o.down_until.is_some() => Availability::IdracStarting,
            Some(_) => Availability::LcRestarting,
        }
    }

    /// Whether the iDRAC accepts connections (it does not while it reboots).
    pub fn reachable(&self) -> bool {
        self.availability() != Availability::Unreachable
    }

    /// `DellLCService.GetRemoteServicesAPIStatus`: how Dell's guidance says to tell POST
    /// (`ServerStatus` InPOST, `Status` NotReady) and a restarting Lifecycle Controller
    /// (`LCStatus` NotReady) apart from a ready host.
    pub fn lc_status(&self) -> Value {
        let s = self.now();
        let lc_ready = s.outage.is_none();
        let (server, host_ready) = match (s.on, s.boot.is_some()) {
            (false, _) => ("PoweredOff", true),
            (true, true) => ("InPOST", false),
            (true, false) => ("OutOfPOST", true),
        };
        let word = |ready: bool| if ready { "Ready" } else { "NotReady" };
        json!({
            "LCStatus": word(lc_ready && host_ready),
            "Status": word(lc_ready && host_ready),
            "ServerStatus": server,
            "RTStatus": "Ready",
            "TelemetryStatus": word(lc_ready),
            "@Message.ExtendedInfo": [idrac(
                "LC061",
                if lc_ready && host_ready { "Lifecycle Controller Remote Services is ready." } else { "Lifecycle Controller Remote Services is not ready." },
                &[],
                "No response action is required.",
                None,
            )],
        })
    }

    /// Time until POST ends, if booting.
    pub fn boot_remaining(&self) -> Option<Duration> {
        let s = self.now();
        s.boot
            .map(|b| self.config.boot_time.saturating_sub(b.started.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_maps_to_the_wall_clock_either_side_of_now() {
        let now = Instant::now();
        let earlier = wall(now - Duration::from_secs(60));
        let later = wall(now + Duration::from_secs(60));
        let span = later.duration_since(earlier).unwrap();
        assert!((span.as_secs_f64() - 120.0).abs() < 1.0, "{span:?}");
    }
}
