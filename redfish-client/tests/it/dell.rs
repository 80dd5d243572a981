//! The iDRAC layer: config jobs, the job queue, ClearPending, DellAttributes, LC readiness.

use super::client;
use redfish_client::AuthMethod;
use redfish_client::oem::dell::{self, AttributeGroup, JobQueueClear};
use redfish_client::resources::bios::Attributes;
use redfish_client::resources::task::JobOutcome;
use rftune_tests::{MockBmc, redfish_error};
use serde_json::json;
use wiremock::matchers::{body_json, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const JOBS: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs";

fn job(id: &str, state: &str, message_id: &str) -> serde_json::Value {
    json!({"@odata.id": format!("{JOBS}/{id}"), "@odata.type": "#DellJob.v1_6_0.DellJob", "Id": id,
           "JobState": state, "JobType": "BIOSConfiguration", "MessageId": message_id,
           "Message": "Task successfully scheduled.", "PercentComplete": 0, "Name": "Configure: BIOS.Setup.1-1"})
}

#[tokio::test]
async fn creates_a_bios_job_for_staged_values() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path(JOBS))
        .and(body_json(
            json!({"TargetSettingsURI": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"}),
        ))
        .respond_with(ResponseTemplate::new(200).insert_header("Location", format!("{JOBS}/JID_001").as_str()))
        .expect(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let link = c.dell().create_bios_job().await.unwrap();
    assert_eq!(link.last_segment(), "JID_001");
}

#[tokio::test]
async fn second_commit_surfaces_sys011() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path(JOBS))
        .respond_with(ResponseTemplate::new(400).set_body_json(redfish_error(
            "IDRAC.2.9.SYS011",
            "Pending configuration values are already committed.",
            "Delete the existing job or wait for it to complete.",
        )))
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c.dell().create_bios_job().await.unwrap_err();
    assert!(err.has_code("SYS011"));
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("POST {}{JOBS}: HTTP 400: [SYS011]", bmc.url())),
        "{text}"
    );
    assert!(text.contains("Resolution: Delete the existing job"), "{text}");
}

#[tokio::test]
async fn lists_gets_deletes_and_classifies_jobs() {
    let bmc = MockBmc::start("r7625").await;
    // At the path real iDRACs advertise (Manager Links.Oem.Dell.Jobs).
    let jobs_path = dell::OEM_JOBS;
    Mock::given(method("GET"))
        .and(path(jobs_path))
        .and(query_param("$expand", "*($levels=1)"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "Members": [job("JID_1", "Scheduled", "JCP001"), job("JID_2", "Scheduled", "IDRAC.2.9.PR30"), job("JID_3", "Completed", "PR19")]
        })))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!("{jobs_path}/JID_3")))
        .respond_with(ResponseTemplate::new(200).set_body_json(job("JID_3", "Completed", "PR19")))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("DELETE"))
        .and(path(format!("{jobs_path}/JID_1")))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let dell = c.dell();
    let jobs = dell.jobs().await.unwrap();
    let outcomes: Vec<JobOutcome> = jobs.iter().map(|j| j.outcome()).collect();
    assert_eq!(
        outcomes,
        [JobOutcome::Waiting, JobOutcome::Stuck, JobOutcome::Succeeded]
    );
    assert!(jobs[1].failure().unwrap().to_string().contains("PR30"));
    assert_eq!(dell.job("JID_3").await.unwrap().message_code(), Some("PR19"));
    dell.delete_job("JID_1").await.unwrap();
}

/// Older firmware without the advertised `Oem/Dell/Jobs` collection: the `Jobs` path serves.
#[tokio::test]
async fn jobs_fall_back_to_the_older_path_where_the_advertised_one_is_missing() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path(dell::OEM_JOBS))
        .respond_with(ResponseTemplate::new(404))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path(JOBS))
        .and(query_param("$expand", "*($levels=1)"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"Members": [job("JID_9", "Scheduled", "JCP001")]})),
        )
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let jobs = c.dell().jobs().await.unwrap();
    assert_eq!(jobs[0].id, "JID_9");
}

#[tokio::test]
async fn clears_queue_and_pending_values() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path(
            "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellJobService/Actions/DellJobService.DeleteJobQueue",
        ))
        .and(body_json(json!({"JobID": "JID_CLEARALL"})))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("POST"))
        .and(path(
            "/redfish/v1/Systems/System.Embedded.1/Bios/Settings/Actions/Oem/DellManager.ClearPending",
        ))
        .and(body_json(json!({})))
        .respond_with(ResponseTemplate::new(400).set_body_json(redfish_error(
            "IDRAC.2.9.BIOS011",
            "Unable to clear pending values because a configuration job exists.",
            "Delete the job and retry.",
        )))
        .expect(1)
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    c.dell().clear_job_queue(&JobQueueClear::All).await.unwrap();
    let err = c.dell().clear_pending().await.unwrap_err();
    assert!(err.has_code("BIOS011"));
}

#[tokio::test]
async fn reads_and_patches_dell_attributes() {
    let bmc = MockBmc::start("r7625").await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let system = c.dell().attributes(AttributeGroup::System).await.unwrap();
    assert_eq!(
        system.attributes["ServerPwr.1.PowerCapSetting"].as_str(),
        Some("Disabled")
    );
    let idrac = c.dell().attributes(AttributeGroup::Idrac).await.unwrap();
    assert_eq!(idrac.attributes["Lockdown.1.SystemLockdown"].as_str(), Some("Disabled"));
    Mock::given(method("PATCH"))
        .and(path(AttributeGroup::System.path()))
        .and(body_json(
            json!({"Attributes": {"ThermalSettings.1.ThermalProfile": "Maximum Performance"}}),
        ))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&bmc.server)
        .await;
    let mut attrs = Attributes::new();
    attrs.insert("ThermalSettings.1.ThermalProfile".into(), "Maximum Performance".into());
    c.dell().set_attributes(AttributeGroup::System, &attrs).await.unwrap();
}

#[tokio::test]
async fn lifecycle_controller_readiness() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellLCService/Actions/DellLCService.GetRemoteServicesAPIStatus"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"LCStatus": "Ready", "Status": "Ready", "ServerStatus": "OutOfPOST", "RTStatus": "Ready"})))
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    assert!(c.dell().lc_status().await.unwrap().is_ready());
}

#[tokio::test]
async fn answers_that_break_the_protocol_name_the_absolute_url() {
    const LC_STATUS: &str =
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellLCService/Actions/DellLCService.GetRemoteServicesAPIStatus";
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path(JOBS))
        .respond_with(ResponseTemplate::new(200))
        .mount(&bmc.server)
        .await;
    Mock::given(method("POST"))
        .and(path(LC_STATUS))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"LCStatus": 5})))
        .mount(&bmc.server)
        .await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let err = c.dell().create_bios_job().await.unwrap_err();
    assert_eq!(err.url(), Some(format!("{}{JOBS}", bmc.url()).as_str()), "{err}");
    let err = c.dell().lc_status().await.unwrap_err();
    assert_eq!(err.url(), Some(format!("{}{LC_STATUS}", bmc.url()).as_str()), "{err}");
}

#[tokio::test]
async fn bios_registry_at_its_idrac_location() {
    let bmc = MockBmc::start("c6615").await;
    let c = client(&bmc.url(), AuthMethod::Basic);
    let reg = c.dell().bios_registry().await.unwrap();
    assert!(reg.product_names().any(|p| p.contains("C6615")));
    assert_eq!(bmc.requests().await.len(), 1);
}
