//! The job queue: BIOS configuration jobs (`@Redfish.SettingsApplyTime` or `POST Jobs`), reboot
//! jobs (`DellJobService.CreateRebootJob`, scheduled by `SetupJobQueue`), maintenance windows,
//! the kinds of job (a Server Configuration Profile's three among them, which `scp` runs), and
//! the two views of one queue: Dell's `DellJob` (at `Managers/iDRAC.Embedded.1/Jobs` and
//! `…/Oem/Dell/Jobs`) and the DMTF `Job` (at `JobService/Jobs`), shaped as on real R750s.
//!
//! iDRAC10 (17G) serves the queue at `…/Oem/Dell/Jobs` and `JobService/Jobs` only (Dell's
//! Ansible collection and scripts moved every `Managers/iDRAC.Embedded.1/Jobs` use to the OEM
//! path for 17G), reports new jobs at `JobService/Jobs` (firmware 1.30.10.50 marks the OEM link
//! deprecated in favour of it; the `Location` path is assumed) and adds Dell's view of each job
//! under the DMTF job's `Oem.Dell`.

pub(crate) mod state;

use super::core::{Host, State};
use super::manager::state::Outage;
use super::manager::{dell_service_action, with_clock};
use super::power::state::Shutdown;
use super::reply::Reply;
pub(crate) use state::DMTF_JOBS;

use crate::clock::{self, wall};
use crate::messages::{self, base, idrac};
use crate::route::{Route, exact, member};
use redfish_client::oem::dell::{self, JobState};
use serde_json::{Value, json};
use state::{ApplyTime, Job, JobKind, RebootKind, Window, instant_of};
use std::time::{Instant, SystemTime};

/// iDRAC9's job queue: its three collections and their members, Dell's job service actions, and
/// the `JobService` (which carries the iDRAC's clock).
pub(crate) fn routes() -> Vec<Route> {
    queue_routes(&[dell::JOBS, dell::OEM_JOBS])
}

/// iDRAC10's: the same without `Managers/iDRAC.Embedded.1/Jobs`.
pub(crate) fn idrac10_routes() -> Vec<Route> {
    queue_routes(&[dell::OEM_JOBS])
}

/// The queue at Dell's `collections` and at DMTF's `JobService/Jobs`, and the services.
fn queue_routes(collections: &[&'static str]) -> Vec<Route> {
    let mut routes = Vec::new();
    for &collection in collections {
        routes.push(Route::get(exact(collection), |h, r| {
            Reply::ok(h.jobs(r.path, r.expand))
        }));
        routes.push(Route::post(exact(collection), |h, r| {
            r.with_json(|b| h.create_job_for(b))
        }));
    }
    routes.push(Route::get(exact(DMTF_JOBS), |h, r| Reply::ok(h.dmtf_jobs(r.expand))));
    for &collection in collections.iter().chain([&DMTF_JOBS]) {
        routes.push(Route::get(member(collection), |h, r| h.job(r.collection(), r.id())));
        routes.push(Route::delete(member(collection), |h, r| h.delete_job(r.id())));
    }
    let actions: [(&str, crate::route::Handler); 3] = [
        ("DeleteJobQueue", |h, r| r.with_json(|b| h.delete_job_queue(b))),
        ("CreateRebootJob", |h, r| r.with_json(|b| h.create_reboot_job(b))),
        ("SetupJobQueue", |h, r| r.with_json(|b| h.setup_job_queue(b))),
    ];
    for (action, handler) in actions {
        for path in dell_service_action("DellJobService", action) {
            routes.push(Route::post(exact(path), handler));
        }
    }
    routes.push(Route::get(exact("/redfish/v1/JobService"), with_clock));
    routes
}

impl Host {
    /// Where a new job is reported (`Location`): Dell's `Managers/iDRAC.Embedded.1/Jobs` on
    /// iDRAC9, DMTF's `JobService/Jobs` on iDRAC10.
    pub(crate) fn job_location(&self, id: &str) -> String {
        let collection = if self.idrac10() { DMTF_JOBS } else { dell::JOBS };
        format!("{collection}/{id}")
    }

    /// Creates a BIOS job for the pending values; returns its `Location`.
    pub(crate) fn create_bios_job(&self, s: &mut State, apply: &ApplyTime) -> String {
        let id = self.new_bios_job(s, apply);
        self.job_location(&id)
    }

    /// Creates the BIOS job a SecureBoot PATCH makes on iDRAC10, which no other write joins;
    /// returns its `Location`.
    pub(crate) fn create_exclusive_bios_job(&self, s: &mut State) -> String {
        let id = self.new_bios_job(s, &ApplyTime::OnReset);
        s.jobs.exclusive = Some(id.clone());
        self.job_location(&id)
    }

    /// A new BIOS job for the pending values; its id.
    fn new_bios_job(&self, s: &mut State, apply: &ApplyTime) -> String {
        let id = s.jobs.next_id("JID", self.index);
        let now = Instant::now();
        let wall = SystemTime::now();
        let (window, start_time, end_time) = match apply {
            // Real R750 BIOS jobs (iDRAC 6.00 and 7.10) show the creation time, not `TIME_NOW`.
            ApplyTime::OnReset => (None, clock::local(wall), "TIME_NA".to_owned()),
            ApplyTime::Window {
                reboots,
                start,
                duration,
            } => {
                let end = duration.and_then(|d| start.checked_add(d));
                (
                    Some(Window {
                        start: instant_of(*start, wall, now),
                        end: end.map(|e| instant_of(e, wall, now)),
                        reboots: *reboots,
                        triggered: false,
                    }),
                    clock::local(*start),
                    end.map_or_else(|| "TIME_NA".to_owned(), clock::local),
                )
            }
        };
        s.jobs.queue.insert(
            id.clone(),
            Job {
                id: id.clone(),
                kind: JobKind::Bios,
                state: JobState::Scheduled,
                message_id: "JCP001",
                message: "Task successfully scheduled.",
                percent: 0,
                start_time,
                end_time,
                created: wall,
                window,
                run_at: None,
                actual_start: None,
                actual_stop: None,
            },
        );
        self.stats.count_job();
        id
    }

    /// `POST Managers/iDRAC.Embedded.1/Jobs {"TargetSettingsURI": ...}` (either Dell path).
    pub fn create_job_for(&self, body: &Value) -> Reply {
        let mut s = self.change();
        let target = body
            .get("TargetSettingsURI")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if target.trim_end_matches('/') != dell::BIOS_SETTINGS {
            return Reply::error(
                400,
                vec![base(
                    "PropertyValueNotInList",
                    &format!(
                        "The value {target} for the property TargetSettingsURI is not in the list of acceptable values."
                    ),
                    &[target, "TargetSettingsURI"],
                    "Use /redfish/v1/Systems/System.Embedded.1/Bios/Settings.",
                    Some("#/TargetSettingsURI"),
                )],
            );
        }
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.has_open_bios() {
            return Reply::error(400, vec![messages::sys011()]);
        }
        if s.bios.pending.is_empty() && s.bios.password_pending.is_empty() && s.boot.pending.is_none() {
            return Reply::error(
                400,
                vec![idrac(
                    "SYS023",
                    "Unable to create a configuration job because there are no pending attribute changes.",
                    &[],
                    "Set attributes on the settings resource and retry the operation.",
                    None,
                )],
            );
        }
        let location = self.create_bios_job(&mut s, &ApplyTime::OnReset);
        Reply::ok(messages::success_body(vec![idrac_ok("JCP000")])).header("Location", location)
    }

    /// The Dell job queue as the collection at `collection` shows it (`Managers/iDRAC.Embedded.1/Jobs`
    /// or `…/Oem/Dell/Jobs`, one queue), members expanded or as links.
    pub fn jobs(&self, collection: &str, expand: bool) -> Value {
        let shape = JobCollection {
            path: collection,
            schema: "DellJobCollection",
            name: "JobQueue",
            description: "Collection of Job Instances",
        };
        self.job_collection(&shape, expand, |j| j.dell_json(collection))
    }

    /// `JobService/Jobs`: the same queue as DMTF `Job` resources.
    pub fn dmtf_jobs(&self, expand: bool) -> Value {
        let shape = JobCollection {
            path: DMTF_JOBS,
            schema: "JobCollection",
            name: "JobCollection",
            description: "A Collection of Job resource instances",
        };
        let dell = self.idrac10();
        self.job_collection(&shape, expand, |j| j.dmtf_json(dell))
    }

    /// The job queue as one collection: members expanded with `render`, or as links.
    fn job_collection(&self, shape: &JobCollection<'_>, expand: bool, render: impl Fn(&Job) -> Value) -> Value {
        let s = self.now();
        let members: Vec<Value> = s
            .jobs
            .queue
            .values()
            .map(|j| {
                if expand {
                    render(j)
                } else {
                    json!({"@odata.id": format!("{}/{}", shape.path, j.id)})
                }
            })
            .collect();
        let schema = shape.schema;
        json!({"@odata.context": format!("/redfish/v1/$metadata#{schema}.{schema}"),
               "@odata.id": shape.path, "@odata.type": format!("#{schema}.{schema}"),
               "Name": shape.name, "Description": shape.description,
               "Members@odata.count": members.len(), "Members": members})
    }

    /// One job, as a member of `collection` (a DMTF `Job` under `JobService/Jobs`).
    pub fn job(&self, collection: &str, id: &str) -> Reply {
        let s = self.now();
        match s.jobs.queue.get(id) {
            Some(j) if collection == DMTF_JOBS => Reply::ok(j.dmtf_json(self.idrac10())),
            Some(j) => Reply::ok(j.dell_json(collection)),
            None => Reply::error(404, vec![messages::not_found(&format!("{collection}/{id}"))]),
        }
    }

    /// `DELETE Jobs/<id>`: a scheduled BIOS job takes its pending values with it.
    pub fn delete_job(&self, id: &str) -> Reply {
        let mut s = self.change();
        match Self::remove_job(&mut s, id) {
            Ok(()) => Reply::ok(messages::success_body(vec![messages::sys413()])),
            Err(reply) => reply,
        }
    }

    fn remove_job(s: &mut State, id: &str) -> Result<(), Reply> {
        if s.dell_attributes.lockdown() {
            return Err(Reply::error(400, vec![messages::sys406()]));
        }
        match s.jobs.queue.get(id).map(|j| (j.state, j.kind)) {
            None => Err(Reply::error(
                404,
                vec![messages::not_found(&format!("{}/{id}", dell::JOBS))],
            )),
            Some((JobState::Running, _)) => Err(Reply::error(
                400,
                vec![idrac(
                    "SYS431",
                    "Unable to delete the job because it is running.",
                    &[id],
                    "Wait for the job to complete and retry the operation.",
                    None,
                )],
            )),
            Some((state, kind)) => {
                if state == JobState::Scheduled && kind == JobKind::Bios {
                    s.bios.pending.clear();
                    s.bios.password_pending.clear();
                    s.boot.pending = None;
                }
                s.jobs.queue.remove(id);
                Ok(())
            }
        }
    }

    /// `DellJobService.DeleteJobQueue`: one job, `JID_CLEARALL`, or `JID_CLEARALL_FORCE` (which
    /// also restarts the Lifecycle Controller: SWC0700 and an empty Systems collection for a
    /// POST's length, as after the field's ~2 minute restart). A success carries two messages,
    /// the second SUP020, as real iDRACs answer.
    pub fn delete_job_queue(&self, body: &Value) -> Reply {
        let Some(id) = body.get("JobID").and_then(Value::as_str) else {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "DeleteJobQueue",
                    "JobID",
                    None,
                    &["a job id", "JID_CLEARALL", "JID_CLEARALL_FORCE"],
                )],
            );
        };
        let mut s = self.change();
        if id == "JID_CLEARALL" || id == "JID_CLEARALL_FORCE" {
            if s.dell_attributes.lockdown() {
                return Reply::error(400, vec![messages::sys406()]);
            }
            s.jobs.queue.clear();
            s.bios.pending.clear();
            s.bios.password_pending.clear();
            s.boot.pending = None;
            if id == "JID_CLEARALL_FORCE" {
                s.outage = Some(Outage::lc_restart(Instant::now(), self.config.boot_time));
            }
        } else if let Err(reply) = Self::remove_job(&mut s, id) {
            return reply;
        }
        Reply::ok(messages::success_body(vec![
            messages::success(),
            idrac(
                "SUP020",
                "Successfully deleted the job(s).",
                &[],
                "No response action is required.",
                None,
            ),
        ]))
    }

    /// `DellJobService.CreateRebootJob {"RebootJobType": ...}`: a reboot job (`RID_…`), state
    /// New until `SetupJobQueue` schedules it.
    pub fn create_reboot_job(&self, body: &Value) -> Reply {
        let allowed: Vec<&str> = RebootKind::NAMES.iter().map(|(n, _)| *n).collect();
        let given = body.get("RebootJobType").and_then(Value::as_str);
        let Some(kind) = given.and_then(|g| RebootKind::NAMES.iter().find(|(n, _)| *n == g).map(|(_, k)| *k)) else {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "CreateRebootJob",
                    "RebootJobType",
                    given,
                    &allowed,
                )],
            );
        };
        let mut s = self.change();
        let id = s.jobs.next_id("RID", self.index);
        s.jobs.queue.insert(
            id.clone(),
            Job {
                id: id.clone(),
                kind: JobKind::Reboot(kind),
                state: JobState::New,
                message_id: "RED001",
                message: "Reboot job created.",
                percent: 0,
                start_time: "TIME_NA".into(),
                end_time: "TIME_NA".into(),
                created: SystemTime::now(),
                window: None,
                run_at: None,
                actual_start: None,
                actual_stop: None,
            },
        );
        self.stats.count_job();
        Reply::ok(messages::success_body(vec![idrac_ok("JCP000")])).header("Location", self.job_location(&id))
    }

    /// `DellJobService.SetupJobQueue {"JobArray": [...], "StartTimeInterval": "TIME_NOW" |
    /// "YYYYMMDDHHMMSS"}`: schedules the listed jobs; a reboot job among them restarts the host
    /// at the start time, and the BIOS job runs in that POST.
    pub fn setup_job_queue(&self, body: &Value) -> Reply {
        let Some(ids) = body.get("JobArray").and_then(Value::as_array) else {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "SetupJobQueue",
                    "JobArray",
                    None,
                    &["job ids"],
                )],
            );
        };
        let start_text = body
            .get("StartTimeInterval")
            .and_then(Value::as_str)
            .unwrap_or("TIME_NOW");
        let wall = SystemTime::now();
        let now = Instant::now();
        let start = if start_text == "TIME_NOW" {
            None
        } else {
            match clock::parse_compact(start_text) {
                Some(t) => Some(t),
                None => {
                    return Reply::error(
                        400,
                        vec![messages::action_parameter(
                            "SetupJobQueue",
                            "StartTimeInterval",
                            Some(start_text),
                            &["TIME_NOW", "YYYYMMDDHHMMSS"],
                        )],
                    );
                }
            }
        };
        let mut s = self.change();
        let ids: Vec<String> = ids.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
        if let Some(missing) = ids.iter().find(|id| !s.jobs.queue.contains_key(*id)) {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "SetupJobQueue",
                    "JobArray",
                    Some(missing),
                    &["ids of jobs in the queue"],
                )],
            );
        }
        let run_at = start.map_or(now, |t| instant_of(t, wall, now));
        let start_time = start.map_or_else(|| "TIME_NOW".to_owned(), clock::local);
        for id in &ids {
            if let Some(job) = s.jobs.queue.get_mut(id) {
                if !matches!(job.state, JobState::New | JobState::Scheduled) {
                    continue;
                }
                job.state = JobState::Scheduled;
                job.start_time.clone_from(&start_time);
                if matches!(job.kind, JobKind::Reboot(_)) {
                    job.run_at = Some(run_at);
                    job.message_id = "JCP001";
                    job.message = "Task successfully scheduled.";
                }
            }
        }
        Reply::ok(messages::success_body(vec![idrac_ok("JCP000")]))
    }

    /// A scheduled reboot job's time has come: restart the host as its type says.
    pub(crate) fn run_reboot_job(&self, s: &mut State, id: &str, at: Instant) {
        let graceful_delay = self.config.boot_time.mul_f64(0.3);
        let Some(job) = s.jobs.queue.get_mut(id) else { return };
        let JobKind::Reboot(kind) = job.kind else { return };
        job.run_at = None;
        job.state = JobState::RebootPending;
        job.message_id = "RED023";
        job.message = "Reboot is in progress.";
        job.actual_start = Some(wall(at));
        let cooperates = self.config.graceful_os;
        match kind {
            RebootKind::PowerCycle => {
                s.power.shutdown = None;
                self.start_post(s, at);
            }
            _ if !s.power.on => self.start_post(s, at),
            RebootKind::Graceful if !cooperates => {
                if let Some(job) = s.jobs.queue.get_mut(id) {
                    job.state = JobState::RebootFailed;
                    job.message_id = "RED031";
                    job.message = "The operating system did not shut down in time; the reboot was not forced.";
                    job.actual_stop = Some(wall(at));
                }
            }
            // Forced after the graceful timeout when the OS ignores the request.
            _ => {
                let wait = if cooperates {
                    graceful_delay
                } else {
                    graceful_delay.saturating_mul(2)
                };
                s.power.shutdown = Some(Shutdown {
                    at: at + wait,
                    then_boot: true,
                });
            }
        }
    }
}

/// What tells the two job collections apart: where they live, their schema and their names.
struct JobCollection<'a> {
    path: &'a str,
    schema: &'a str,
    name: &'a str,
    description: &'a str,
}

/// A Dell success message with the generic text.
fn idrac_ok(code: &str) -> Value {
    idrac(
        code,
        "The operation successfully completed.",
        &[],
        "No response action is required.",
        None,
    )
}
