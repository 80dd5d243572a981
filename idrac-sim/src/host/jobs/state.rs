//! The job queue as the host keeps it: its jobs (BIOS configuration, reboot, and the Server
//! Configuration Profile's three kinds), what each does and when it may run, how an apply time
//! asks a BIOS job to run, and the two views of one job: Dell's `DellJob` and the DMTF `Job`.

use crate::clock;
use crate::messages::{self, base};
use redfish_client::oem::dell::JobState;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

/// The DMTF view of the job queue.
pub(crate) const DMTF_JOBS: &str = "/redfish/v1/JobService/Jobs";

/// The queue: every job by id, and the count that numbers new ones.
#[derive(Debug, Default)]
pub(crate) struct Jobs {
    pub(crate) queue: BTreeMap<String, Job>,
    pub(crate) seq: u64,
    /// The BIOS job a `PATCH` of the SecureBoot resource created on iDRAC10: while it is open, no
    /// other BIOS write joins it (bmclib PR 471, live on an R6715).
    pub(crate) exclusive: Option<String>,
}

impl Jobs {
    /// A new job id (`JID_…`, `RID_…`) for host `index` of the fleet: unique in the fleet.
    pub(crate) fn next_id(&mut self, prefix: &str, index: usize) -> String {
        self.seq += 1;
        format!("{prefix}_{:06}{:06}", 100_000 + index % 900_000, self.seq)
    }

    /// Whether a BIOS job is scheduled or running (a second one is refused, SYS011).
    pub(crate) fn has_open_bios(&self) -> bool {
        self.queue.values().any(Job::is_open_bios)
    }

    /// The open BIOS job that no write may join: one running (its values are being applied), or
    /// the one a SecureBoot PATCH created. `None` when no BIOS job is open, or when the open one
    /// is scheduled and takes more pending values (iDRAC10).
    pub(crate) fn closed_to_writes(&self) -> Option<&Job> {
        self.queue
            .values()
            .filter(|j| j.is_open_bios())
            .find(|j| j.state == JobState::Running || self.exclusive.as_deref() == Some(j.id.as_str()))
    }
}

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobKind {
    /// Applies the pending BIOS values during the next POST.
    Bios,
    /// Restarts the host when its start time comes.
    Reboot(RebootKind),
    /// A Server Configuration Profile export, preview or import (`scp`).
    Scp(ScpKind),
}

/// What an SCP job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScpKind {
    /// `ExportSystemConfiguration`.
    Export,
    /// `ImportSystemConfigurationPreview`.
    Preview,
    /// `ImportSystemConfiguration`.
    Import,
}

impl ScpKind {
    /// The DellJob `JobType` (the DellJob schema's values).
    pub(crate) fn job_type(self) -> &'static str {
        match self {
            Self::Export => "ExportConfiguration",
            Self::Preview => "PreviewConfiguration",
            Self::Import => "ImportConfiguration",
        }
    }

    /// The job's `Name` (Ansible's sample import job is "Import Configuration"; the other two
    /// follow it, assumed).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Export => "Export Configuration",
            Self::Preview => "Preview Configuration",
            Self::Import => "Import Configuration",
        }
    }
}

/// `RebootJobType` of `DellJobService.CreateRebootJob`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RebootKind {
    /// `PowerCycle`.
    PowerCycle,
    /// `GracefulRebootWithForcedShutdown`.
    GracefulForced,
    /// `GracefulRebootWithoutForcedShutdown`.
    Graceful,
}

impl RebootKind {
    pub(crate) const NAMES: [(&'static str, Self); 3] = [
        ("PowerCycle", Self::PowerCycle),
        ("GracefulRebootWithForcedShutdown", Self::GracefulForced),
        ("GracefulRebootWithoutForcedShutdown", Self::Graceful),
    ];

    /// The DellJob `JobType` (DCIM's reboot job types; assumed for Redfish).
    pub(crate) fn job_type(self) -> &'static str {
        match self {
            Self::PowerCycle => "RebootPowerCycle",
            Self::GracefulForced => "RebootForce",
            Self::Graceful => "RebootNoForce",
        }
    }
}

/// When a job may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// Not before.
    pub(crate) start: Instant,
    /// Not after (`MaintenanceWindowDurationInSeconds`).
    pub(crate) end: Option<Instant>,
    /// `AtMaintenanceWindowStart`: the iDRAC restarts the host at `start`. Otherwise
    /// (`InMaintenanceWindowOnReset`) a reset inside the window runs the job.
    pub(crate) reboots: bool,
    /// The restart at `start` has happened.
    pub(crate) triggered: bool,
}

/// One job of the queue.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Job {
    pub(crate) id: String,
    pub(crate) kind: JobKind,
    pub(crate) state: JobState,
    pub(crate) message_id: &'static str,
    pub(crate) message: &'static str,
    pub(crate) percent: u8,
    /// When the job was created (as real BIOS jobs show), or the start a window or a
    /// schedule sets.
    pub(crate) start_time: String,
    pub(crate) end_time: String,
    pub(crate) created: SystemTime,
    pub(crate) window: Option<Window>,
    /// When a scheduled reboot job restarts the host.
    pub(crate) run_at: Option<Instant>,
    pub(crate) actual_start: Option<SystemTime>,
    pub(crate) actual_stop: Option<SystemTime>,
}

impl Job {
    pub(crate) fn is_open_bios(&self) -> bool {
        self.kind == JobKind::Bios && matches!(self.state, JobState::Scheduled | JobState::Running)
    }

    fn name(&self) -> &'static str {
        match self.kind {
            JobKind::Bios => "Configure: BIOS.Setup.1-1",
            JobKind::Reboot(_) => "Reboot Job",
            JobKind::Scp(k) => k.name(),
        }
    }

    fn job_type(&self) -> &'static str {
        match self.kind {
            JobKind::Bios => "BIOSConfiguration",
            JobKind::Reboot(k) => k.job_type(),
            JobKind::Scp(k) => k.job_type(),
        }
    }

    /// The `DellJob` resource as a member of `collection`, with the fields a real R750 shows.
    pub(crate) fn dell_json(&self, collection: &str) -> Value {
        let when = |t: Option<SystemTime>| t.map_or(Value::Null, |t| json!(clock::local(t)));
        let done = matches!(
            self.state,
            JobState::Completed | JobState::Failed | JobState::CompletedWithErrors | JobState::RebootCompleted
        );
        json!({
            "@odata.context": "/redfish/v1/$metadata#DellJob.DellJob",
            "@odata.id": format!("{collection}/{}", self.id),
            "@odata.type": "#DellJob.v1_5_0.DellJob",
            "ActualRunningStartTime": when(self.actual_start),
            "ActualRunningStopTime": when(self.actual_stop),
            "CompletionTime": if done { when(self.actual_stop) } else { Value::Null },
            "Description": "Job Instance",
            "EndTime": self.end_time,
            "Id": self.id,
            "JobState": self.state.to_string(),
            "JobType": self.job_type(),
            "Message": self.message,
            "MessageArgs": [],
            "MessageArgs@odata.count": 0,
            "MessageId": self.message_id,
            "Name": self.name(),
            "PercentComplete": self.percent,
            "StartTime": self.start_time,
            "TargetSettingsURI": null,
        })
    }

    /// The DMTF `Job` at `JobService/Jobs/<id>`, as a real R750 maps its DellJob: Completed →
    /// Completed/OK, CompletedWithErrors → Exception/Critical (both seen); the other states are
    /// mapped by their meaning (assumed). With `dell`, iDRAC10's: Dell's own view of the job
    /// under `Oem.Dell`, where Dell's `CreateVirtualDiskREDFISH.py` reads `JobType` on iDRAC10
    /// and bmclib's R6715 test double carries `JobType` and `ActualRunningStartTime` (the other
    /// members assumed: DellJob's).
    pub(crate) fn dmtf_json(&self, dell: bool) -> Value {
        let (state, status) = match self.state {
            JobState::Completed | JobState::RebootCompleted => ("Completed", "OK"),
            JobState::CompletedWithErrors => ("Exception", "Critical"),
            JobState::Failed | JobState::RebootFailed => ("Exception", "Critical"),
            JobState::Running | JobState::RebootPending => ("Running", "OK"),
            JobState::New => ("New", "OK"),
            _ => ("Pending", "OK"),
        };
        let name = match self.kind {
            JobKind::Bios => "ConfigBIOS:BIOS.Setup.1-1",
            JobKind::Reboot(_) => "Reboot Job",
            JobKind::Scp(k) => k.name(),
        };
        let mut doc = json!({
            "@odata.context": "/redfish/v1/$metadata#Job.Job",
            "@odata.id": format!("{DMTF_JOBS}/{}", self.id),
            "@odata.type": "#Job.v1_2_1.Job",
            "Description": "Represent a job in Redfish",
            "Id": self.id,
            "Name": name,
            "JobState": state,
            "JobStatus": status,
            "PercentComplete": self.percent,
            "StartTime": clock::with_offset(self.created),
            "EndTime": self.actual_stop.map_or(Value::Null, |t| json!(clock::with_offset(t))),
            "Messages": [{
                "Message": self.message,
                "MessageId": format!("{}.{}", messages::IDRAC, self.message_id),
                "MessageArgs": [],
                "MessageArgs@odata.count": 0,
            }],
            "Messages@odata.count": 1,
        });
        if dell {
            let mut oem = self.dell_json(DMTF_JOBS);
            if let Some(o) = oem.as_object_mut() {
                for own in ["@odata.context", "@odata.id", "Id"] {
                    o.remove(own);
                }
            }
            oem["@odata.type"] = json!("#DellJob.v1_6_0.DellJob");
            doc["Oem"] = json!({"Dell": oem});
        }
        doc
    }
}

/// How `@Redfish.SettingsApplyTime` asks a BIOS job to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ApplyTime {
    /// `OnReset`: at the next reset.
    OnReset,
    /// A maintenance window, already checked against the Manager's clock.
    Window {
        /// `AtMaintenanceWindowStart` (else `InMaintenanceWindowOnReset`).
        reboots: bool,
        start: SystemTime,
        duration: Option<std::time::Duration>,
    },
}

impl ApplyTime {
    /// The `ApplyTime` value that asks for it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::OnReset => "OnReset",
            Self::Window { reboots: true, .. } => "AtMaintenanceWindowStart",
            Self::Window { reboots: false, .. } => "InMaintenanceWindowOnReset",
        }
    }

    /// Reads `@Redfish.SettingsApplyTime`: `Immediate` is refused for BIOS, a window needs a
    /// start time in the future (by the Manager's `DateTime`) and a positive duration.
    pub(crate) fn parse(v: &Value, now: SystemTime) -> Result<Self, Value> {
        let related = Some("#/@Redfish.SettingsApplyTime/ApplyTime");
        let apply = v.get("ApplyTime").and_then(Value::as_str);
        let reboots = match apply {
            Some("OnReset") => return Ok(Self::OnReset),
            Some("AtMaintenanceWindowStart") => true,
            Some("InMaintenanceWindowOnReset") => false,
            other => {
                let shown = other.unwrap_or("(missing)");
                return Err(base(
                    "PropertyValueNotInList",
                    &format!("The value {shown} for the property ApplyTime is not in the list of acceptable values."),
                    &[shown, "ApplyTime"],
                    "Use OnReset, AtMaintenanceWindowStart or InMaintenanceWindowOnReset; BIOS settings cannot apply Immediately.",
                    related,
                ));
            }
        };
        let start_text = v.get("MaintenanceWindowStartTime").and_then(Value::as_str);
        let Some(start_text) = start_text else {
            return Err(messages::property_missing(
                "@Redfish.SettingsApplyTime/MaintenanceWindowStartTime",
            ));
        };
        let start = clock::parse_iso8601(start_text).ok_or_else(|| {
            base(
                "PropertyValueFormatError",
                &format!("The value {start_text} for the property MaintenanceWindowStartTime is of a different format than the property can accept."),
                &[start_text, "MaintenanceWindowStartTime"],
                "Use the form YYYY-MM-DDTHH:MM:SS±HH:MM.",
                Some("#/@Redfish.SettingsApplyTime/MaintenanceWindowStartTime"),
            )
        })?;
        if start <= now {
            let shown = clock::with_offset(now);
            return Err(base(
                "PropertyValueOutOfRange",
                &format!(
                    "The value {start_text} for the property MaintenanceWindowStartTime is not in the supported range: the window has already started (the iDRAC's time is {shown})."
                ),
                &[start_text, "MaintenanceWindowStartTime"],
                "Choose a start time after the Manager's DateTime.",
                Some("#/@Redfish.SettingsApplyTime/MaintenanceWindowStartTime"),
            ));
        }
        let duration = match v.get("MaintenanceWindowDurationInSeconds") {
            None => None,
            Some(d) => match d.as_u64().filter(|d| *d > 0) {
                Some(d) => Some(std::time::Duration::from_secs(d)),
                None => {
                    let shown = d.to_string();
                    return Err(base(
                        "PropertyValueOutOfRange",
                        &format!(
                            "The value {shown} for the property MaintenanceWindowDurationInSeconds is not in the supported range of acceptable values."
                        ),
                        &[&shown, "MaintenanceWindowDurationInSeconds"],
                        "Give the window a positive number of seconds.",
                        Some("#/@Redfish.SettingsApplyTime/MaintenanceWindowDurationInSeconds"),
                    ));
                }
            },
        };
        Ok(Self::Window {
            reboots,
            start,
            duration,
        })
    }
}

/// The instant `at` (wall clock) falls on, seen from `now`.
pub(crate) fn instant_of(at: SystemTime, now_wall: SystemTime, now: Instant) -> Instant {
    match at.duration_since(now_wall) {
        Ok(ahead) => now + ahead,
        Err(behind) => now.checked_sub(behind.duration()).unwrap_or(now),
    }
}
