//! Dell iDRAC10 (PowerEdge 17G, firmware 1.x): iDRAC9's backend with the concerns iDRAC10 does
//! differently replaced, each with the public source that shows it.
//!
//! - **Jobs** are read from DMTF's `JobService`: firmware 1.30.10.50 marks the Manager's
//!   `Oem/Dell/Jobs` link deprecated ("Please migrate to use /redfish/v1/JobService/Jobs uri", a
//!   real Manager payload in mrlhansen/idrac_exporter issue 202), and Dell's
//!   `DeleteJobQueueREDFISH.py` lists jobs there. A job's Dell type sits under `Oem.Dell.JobType`
//!   (Dell's `CreateVirtualDiskREDFISH.py` reads it there on iDRAC10). Where `JobService/Jobs` is
//!   missing, Dell's OEM queue is read, as on iDRAC9. `DellJobService.DeleteJobQueue` stays (Dell's
//!   Ansible collection 9.12 clears the queue with it on iDRAC10).
//! - **Boot** is read-only on the System (`PATCH` answers 400 `Base.1.18.PropertyNotWritable`:
//!   the body quoted in dsx-ai-factory/libredfish PR 33, and community.general issue 11297); the
//!   override and the order are written to the System's settings object
//!   (`Systems/System.Embedded.1/Settings`), as Dell's `SetNextOneTimeBootDeviceREDFISH.py` and
//!   `ChangeBiosBootOrderREDFISH.py` do (`if idrac_version == 10`). One report (libredfish PR 75)
//!   says that object takes only `BootOrder` and `BootSourceOverrideMode`: a write it rejects
//!   with a 400 is sent to the System instead.
//! - **Server Configuration Profiles** take `ShareParameters.Target` as a list ("made mandatory
//!   since 17G", the comment of `process_scp_target` in Dell's Ansible collection).

use super::concern::{BootControl, JobQueue, ScpShapes, SequenceEntry};
use super::job::{Job, JobKind, JobOutcome, QueueClear};
use futures_util::future::BoxFuture;
use redfish_client::oem::dell;
use redfish_client::{Client, ODataId, Result, Written};
use serde_json::Value;

/// DMTF's job service.
const JOB_SERVICE_JOBS: &str = "/redfish/v1/JobService/Jobs";

/// Jobs read from DMTF's `JobService`, Dell's OEM queue where that is missing; created, and the
/// queue cleared, through Dell's own services (iDRAC10 keeps them).
pub(super) struct JobServiceJobs;

impl JobQueue for JobServiceJobs {
    fn list<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Vec<Job>>> {
        Box::pin(async move {
            match client.expanded_members::<Value>(JOB_SERVICE_JOBS).await {
                Ok(jobs) => Ok(jobs.iter().filter_map(job_of).collect()),
                Err(e) if e.status() == Some(404) => {
                    Ok(client.dell().jobs().await?.into_iter().map(super::dell::job).collect())
                }
                Err(e) => Err(e),
            }
        })
    }

    fn get<'a>(&'a self, client: &'a Client, id: &'a str) -> BoxFuture<'a, Result<Job>> {
        Box::pin(async move {
            let path = if id.starts_with('/') {
                ODataId::new(id).path().to_owned()
            } else {
                format!("{JOB_SERVICE_JOBS}/{id}")
            };
            match client.get::<Value>(&path).await {
                Ok(v) => job_of(&v).ok_or_else(|| redfish_client::Error::Protocol {
                    method: "GET".into(),
                    url: path.clone(),
                    what: "the job has no Id".into(),
                }),
                Err(e) if e.status() == Some(404) => client.dell().job(id).await.map(super::dell::job),
                Err(e) => Err(e),
            }
        })
    }

    fn create_bios_job<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<ODataId>> {
        // Assumed: iDRAC10 takes `POST Oem/Dell/Jobs {"TargetSettingsURI"}` as iDRAC9 takes it at
        // both paths (no public iDRAC10 payload shows a job created this way; rftune needs it
        // only for values some other run staged without a job).
        Box::pin(async move {
            let written = client
                .post(dell::OEM_JOBS, &dell::job_body(dell::BIOS_SETTINGS))
                .await?;
            written.location.ok_or_else(|| redfish_client::Error::Protocol {
                method: "POST".into(),
                url: dell::OEM_JOBS.into(),
                what: format!("job created (HTTP {}) without a Location header", written.status),
            })
        })
    }

    fn delete<'a>(&'a self, client: &'a Client, id: &'a str) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move {
            if id.starts_with('/') {
                return client.delete(ODataId::new(id).path()).await;
            }
            match client.delete(&format!("{JOB_SERVICE_JOBS}/{id}")).await {
                Err(e) if e.status() == Some(404) => client.dell().delete_job(id).await,
                other => other,
            }
        })
    }

    fn clear<'a>(&'a self, client: &'a Client, what: &'a QueueClear) -> BoxFuture<'a, Result<Written>> {
        super::dell::OemJobs.clear(client, what)
    }
}

/// A job of DMTF's `JobService` as an iDRAC10 reports it: the DMTF fields, with Dell's type and
/// message under `Oem.Dell` where present.
pub(super) fn job_of(v: &Value) -> Option<Job> {
    let text = |pointer: &str| v.pointer(pointer).and_then(Value::as_str).map(str::to_owned);
    let id = text("/Id")?;
    let odata_id = text("/@odata.id").unwrap_or_else(|| format!("{JOB_SERVICE_JOBS}/{id}"));
    let state = text("/JobState").unwrap_or_else(|| "Unknown".to_owned());
    let job_type = text("/Oem/Dell/JobType").or_else(|| text("/JobType"));
    let message_id = text("/Messages/0/MessageId")
        .or_else(|| text("/Oem/Dell/MessageId"))
        .or_else(|| text("/MessageId"));
    let message = text("/Messages/0/Message")
        .or_else(|| text("/Oem/Dell/Message"))
        .or_else(|| text("/Message"));
    let percent = v
        .get("PercentComplete")
        .or_else(|| v.pointer("/Oem/Dell/PercentComplete"))
        .and_then(Value::as_u64)
        .and_then(|p| u8::try_from(p).ok());
    let name = text("/Name");
    let bios = job_type.as_deref() == Some("BIOSConfiguration")
        || name
            .as_deref()
            .is_some_and(|n| n.starts_with("ConfigBIOS") || n.contains("BIOS.Setup"));
    let kind = if bios {
        JobKind::BiosConfiguration
    } else if job_type.as_deref() == Some("ImportConfiguration") {
        JobKind::ConfigurationImport
    } else {
        JobKind::Other
    };
    let code = message_id
        .as_deref()
        .map(redfish_client::resources::message::message_code);
    let outcome = match state.as_str() {
        "Completed" | "RebootCompleted" => JobOutcome::Succeeded,
        "CompletedWithErrors" => JobOutcome::SucceededWithErrors,
        "Failed" | "RebootFailed" | "Exception" | "Cancelled" | "Killed" => JobOutcome::Failed,
        _ if code == Some("PR30") => JobOutcome::Stuck,
        "Running" | "Starting" | "Downloading" | "Scheduling" | "ReadyForExecution" | "Stopping" => JobOutcome::Running,
        _ => JobOutcome::Waiting,
    };
    Some(Job {
        odata_id: ODataId::new(odata_id),
        id,
        name,
        job_type,
        job_state: state,
        message,
        message_id,
        percent_complete: percent,
        start_time: text("/StartTime"),
        completion_time: text("/EndTime").or_else(|| text("/Oem/Dell/CompletionTime")),
        target_settings_uri: text("/Oem/Dell/TargetSettingsURI"),
        kind,
        outcome,
    })
}

/// Boot settings through the System's settings object, the System itself where that object
/// refuses a write.
pub(super) struct SettingsObjectBoot;

impl BootControl for SettingsObjectBoot {
    fn override_targets(&self, system: &ODataId) -> Vec<ODataId> {
        vec![system.join("Settings"), system.clone()]
    }

    fn sequence<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Option<Vec<SequenceEntry>>>> {
        super::dell::SystemBoot.sequence(client)
    }
}

/// Components as a list of strings.
pub(super) struct ListedTargets;

impl ScpShapes for ListedTargets {
    fn targets(&self, targets: &[String]) -> Value {
        Value::Array(targets.iter().cloned().map(Value::String).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_job_service_job_reads_dells_type_and_message_and_both_state_vocabularies() {
        // The shape bmclib's iDRAC10 (R6715) test double gives a BIOS job, and a finished one
        // with DMTF's message list.
        let starting = job_of(&json!({"Id": "JID_1", "JobState": "Starting",
            "Oem": {"Dell": {"JobType": "BIOSConfiguration", "ActualRunningStartTime": ""}}}))
        .unwrap();
        assert!(starting.is_open_bios_job());
        assert_eq!(starting.outcome, JobOutcome::Running);
        assert_eq!(starting.odata_id.path(), "/redfish/v1/JobService/Jobs/JID_1");
        let done = job_of(&json!({"@odata.id": "/redfish/v1/JobService/Jobs/JID_2", "Id": "JID_2",
            "Name": "ConfigBIOS:BIOS.Setup.1-1", "JobState": "Completed", "PercentComplete": 100,
            "Messages": [{"MessageId": "IDRAC.2.9.PR19", "Message": "Job completed successfully."}]}))
        .unwrap();
        assert!(done.is_bios_config() && !done.holds_queue());
        assert_eq!(done.message_code(), Some("PR19"));
        let stuck = job_of(&json!({"Id": "JID_3", "JobState": "Scheduled",
            "Oem": {"Dell": {"JobType": "BIOSConfiguration", "MessageId": "PR30"}}}))
        .unwrap();
        assert_eq!(stuck.outcome, JobOutcome::Stuck);
        assert!(stuck.failure().unwrap().to_string().contains("stuck"));
        assert!(
            job_of(&json!({"JobState": "New"})).is_none(),
            "a job without an id is no job"
        );
    }

    #[test]
    fn scp_targets_are_a_list_on_idrac10() {
        let t = ListedTargets.targets(&["BIOS".to_owned(), "IDRAC".to_owned()]);
        assert_eq!(t, json!(["BIOS", "IDRAC"]));
    }
}
