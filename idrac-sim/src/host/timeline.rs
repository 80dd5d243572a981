//! The host's clock. Every scheduled change (a graceful shutdown ending, POST's phases and the
//! BIOS job POST runs, a maintenance window opening or closing, a reboot job's start time, the
//! end of an iDRAC or Lifecycle Controller restart) happens at its own instant. Each operation
//! first replays, in order, every change whose instant has passed, each at that instant (a
//! power-on that follows a shutdown starts when the shutdown ended, not when the next request
//! arrives), so no task runs per host and nothing a client sees depends on when it asks.
//! POST runs the BIOS job and applies what each concern staged for it.

use super::bios::state::Bios;
use super::boot::state::initial_sequence;
use super::core::{Host, State};
use super::jobs::state::{Job, JobKind, ScpKind};
use super::power::state::Post;
use crate::clock::wall;
use redfish_client::oem::dell::{self, AttributeGroup, JobState};
use std::time::Instant;

/// A scheduled change as [`Host::next_scheduled`] weighs it, before anything is copied: one of
/// the host's own, or one of a job's, by the job's id.
enum Due<'a> {
    Host(Scheduled),
    Job(fn(String) -> Scheduled, &'a str),
}

/// Something scheduled that happens at its own instant.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scheduled {
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
    pub(crate) fn advance(&self, s: &mut State, now: Instant) {
        self.fire_due(s, now);
        self.account_energy(s, now);
        if let Some(boot) = s.power.post
            && let Some(job) = s.jobs.queue.values_mut().find(|j| {
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
    pub(crate) fn fire_due(&self, s: &mut State, now: Instant) {
        while let Some((at, event)) = self.next_scheduled(s, now) {
            self.account_energy(s, at);
            self.fire(s, at, event);
        }
    }

    /// The earliest scheduled change, if it is due by `now` (the first listed among changes due
    /// at the same instant). Nothing is allocated unless one is due: a job's id is copied only
    /// for the change that fires.
    fn next_scheduled(&self, s: &State, now: Instant) -> Option<(Instant, Scheduled)> {
        let mut earliest: Option<(Instant, Due<'_>)> = None;
        let mut consider = |at: Instant, due| {
            if earliest.as_ref().is_none_or(|(first, _)| at < *first) {
                earliest = Some((at, due));
            }
        };
        if let Some(o) = s.outage {
            consider(o.ready_at, Due::Host(Scheduled::OutageEnds));
        }
        if let Some(sd) = s.power.shutdown {
            consider(sd.at, Due::Host(Scheduled::ShutdownEnds));
        }
        if let Some(b) = s.power.post {
            let total = self.config.boot_time;
            if !b.job_started {
                consider(b.started + total.mul_f64(0.1), Due::Host(Scheduled::BiosJobStarts));
            } else if self.faults.no_return {
                // POST never ends: nothing more happens in it.
            } else if !b.job_done {
                consider(b.started + total.mul_f64(0.6), Due::Host(Scheduled::BiosJobEnds));
            } else {
                consider(b.started + total, Due::Host(Scheduled::PostEnds));
            }
        }
        for job in s.jobs.queue.values() {
            if job.state == JobState::Scheduled {
                if let Some(w) = job.window {
                    if w.reboots && !w.triggered {
                        consider(w.start, Due::Job(Scheduled::WindowOpens, &job.id));
                    }
                    if let Some(end) = w.end {
                        consider(end, Due::Job(Scheduled::WindowCloses, &job.id));
                    }
                }
                if let Some(at) = job.run_at {
                    consider(at, Due::Job(Scheduled::RebootJobRuns, &job.id));
                }
            }
        }
        for (id, task) in &s.scp.tasks {
            if let Some(at) = task.due {
                consider(at, Due::Job(Scheduled::ScpDue, id));
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

    fn fire(&self, s: &mut State, at: Instant, event: Scheduled) {
        self.changed();
        match event {
            Scheduled::OutageEnds => s.outage = None,
            Scheduled::ShutdownEnds => {
                let then_boot = s.power.shutdown.is_some_and(|sd| sd.then_boot);
                s.power.shutdown = None;
                s.power.on = false;
                // A host shut down in POST does not finish that POST.
                s.power.post = None;
                if then_boot {
                    self.start_post(s, at);
                }
            }
            Scheduled::BiosJobStarts => {
                if let Some(b) = s.power.post.as_mut() {
                    b.job_started = true;
                }
                self.start_bios_job(s, at);
            }
            Scheduled::BiosJobEnds => {
                if let Some(b) = s.power.post.as_mut() {
                    b.job_done = true;
                }
                self.finish_bios_job(s, at);
            }
            Scheduled::PostEnds => {
                s.power.post = None;
                s.power.on = true;
                // The BIOS's Secure Boot state (a key reset, the values the job applied) is what
                // this boot runs under; a one-time boot override (or the BIOS's one-time device)
                // is used up here.
                Self::apply_secure_boot(s, wall(at));
                self.choose_boot_device(s);
                s.bios.view = None;
            }
            Scheduled::WindowOpens(id) => {
                if let Some(w) = s.jobs.queue.get_mut(&id).and_then(|j| j.window.as_mut()) {
                    w.triggered = true;
                }
                // AtMaintenanceWindowStart: the iDRAC restarts the host itself.
                s.power.shutdown = None;
                self.start_post(s, at);
            }
            Scheduled::WindowCloses(id) => {
                if let Some(job) = s.jobs.queue.get_mut(&id)
                    && job.state == JobState::Scheduled
                {
                    job.state = JobState::Failed;
                    job.message_id = "SYS051";
                    job.message = "The maintenance window ended before the job could run.";
                    job.actual_stop = Some(wall(at));
                    s.bios.pending.clear();
                    s.bios.password_pending.clear();
                    s.boot.pending = None;
                    Self::lc_log_at(
                        s,
                        wall(at),
                        "JCP042",
                        &[&id, "the maintenance window ended before the job could run"],
                        "Configuration",
                        Some(dell::MANAGER),
                    );
                }
            }
            Scheduled::RebootJobRuns(id) => self.run_reboot_job(s, &id, at),
            Scheduled::ScpDue(id) => self.scp_due(s, &id, at),
        }
    }

    pub(crate) fn start_post(&self, s: &mut State, at: Instant) {
        let mut completed = Vec::new();
        // A reboot job is done once the host restarts.
        for job in s.jobs.queue.values_mut() {
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
            Self::lc_log_at(s, wall(at), "JCP037", &[&id], "Configuration", Some(dell::MANAGER));
        }
        self.stats.count_post();
        s.power.on = true;
        s.power.post = Some(Post {
            started: at,
            job_started: false,
            job_done: false,
        });
    }

    /// Early in POST the scheduled BIOS job starts, if this boot may run it (no window, or a
    /// boot inside its window).
    fn start_bios_job(&self, s: &mut State, at: Instant) {
        let Some(boot) = s.power.post else { return };
        self.scp_post_starts(s, at);
        let stuck = self.faults.stuck_job;
        let eligible = |j: &Job| {
            j.kind == JobKind::Bios
                && j.state == JobState::Scheduled
                && j.message_id != "PR30"
                && j.window
                    .is_none_or(|w| boot.started >= w.start && w.end.is_none_or(|e| boot.started <= e))
        };
        if let Some(job) = s.jobs.queue.values_mut().find(|j| eligible(j)) {
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
        // An iLO has no jobs: its POST processes the settings object itself.
        if self.fixture.bmc == crate::generation::Bmc::Ilo {
            self.ilo_post(s, at);
            self.ilo_apply_boot_order(s);
            self.ilo_boot_post(s, at);
            return;
        }
        if s.bios.reset_pending {
            s.bios.reset_pending = false;
            s.bios.values = Bios::defaults(&self.fixture, &self.service_tag);
            s.bios.inferred = self.fixture.hidden_bios.keys().cloned().collect();
            s.bios.passwords.clear();
            s.boot.sequence = initial_sequence(&self.fixture);
            s.bios.view = None;
            self.set_rtd_flag(s, false);
            Self::lc_log_at(s, wall(at), "UEFI0157", &[], "Configuration", None);
        }
        self.scp_post_ends(s, at);
        let Some(job) = s
            .jobs
            .queue
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
            s.bios.pending.clear();
            s.bios.password_pending.clear();
            s.boot.pending = None;
            Self::lc_log_at(
                s,
                wall(at),
                "JCP042",
                &[&id, "the BIOS configuration changes could not be applied"],
                "Configuration",
                Some(dell::MANAGER),
            );
            return;
        }
        job.state = JobState::Completed;
        job.message_id = "PR19";
        job.message = "Job completed successfully.";
        Self::lc_log_at(s, wall(at), "JCP037", &[&id], "Configuration", Some(dell::MANAGER));
        let mut candidate = s.bios.known();
        let mut applied = std::mem::take(&mut s.bios.pending);
        // The `post-refuses` fault: the BIOS drops the first value and the job still completes
        // (assumed: no recorded iDRAC shows how its job reports a value the BIOS dropped).
        if self.faults.post_refuses
            && let Some(first) = applied.keys().next().cloned()
        {
            applied.remove(&first);
        }
        candidate.extend(applied.clone());
        let evaluation = self.evaluate(&candidate);
        for (name, value) in evaluation.values() {
            s.bios.inferred.remove(name);
            s.bios.values.insert(name.clone(), value.clone());
        }
        self.apply_boot_changes(s, &applied);
        // An NPS the memory population cannot take: POST falls back to NPS 1 (UEFI0391).
        let written = s
            .bios
            .values
            .get("NumaNodesPerSocket")
            .and_then(|v| v.as_str())
            .map(str::to_owned);
        if let Some(written) = written
            && let Some(fallback) =
                super::bios::numa::after_post(&written, &self.fixture.cpu_model, &self.fixture.dimms_per_socket)
        {
            s.bios.values.insert("NumaNodesPerSocket".to_owned(), fallback.into());
            Self::lc_log_at(s, wall(at), "UEFI0391", &[], "Configuration", None);
        }
        let passwords = std::mem::take(&mut s.bios.password_pending);
        for (name, new) in passwords {
            Self::password_hash(s, &name, &new);
            if new.is_empty() {
                s.bios.passwords.remove(&name);
            } else {
                s.bios.passwords.insert(name, new);
            }
        }
        s.bios.view = None;
    }

    /// `LCAttributes.1.BIOSRTDRequested`, where the tree has it: whether a BIOS reset to
    /// defaults waits for the next POST.
    pub(crate) fn set_rtd_flag(&self, s: &mut State, requested: bool) {
        const RTD: &str = "LCAttributes.1.BIOSRTDRequested";
        if let Some(lc) = s.dell_attributes.groups.get_mut(&AttributeGroup::LifecycleController)
            && lc.contains_key(RTD)
        {
            lc.insert(RTD.to_owned(), if requested { "True" } else { "False" }.into());
        }
    }
}
