//! Time and power as clients see them: changes that happen by themselves at their own instant,
//! an iDRAC that reboots (`Manager.Reset`), maintenance windows on the Manager's live clock,
//! reboot jobs, chassis resets.

use super::{config, get, post, raw, start};
use idrac_sim::SimConfig;
use redfish_client::oem::dell;
use serde_json::{Value, json};
use std::time::{Duration, SystemTime};

fn first_id(body: &Value) -> &str {
    body["error"]["@Message.ExtendedInfo"][0]["MessageId"]
        .as_str()
        .unwrap_or_default()
}

/// Stages MemTest = Enabled with `apply` (an `@Redfish.SettingsApplyTime` object); returns the
/// status and the job id.
async fn stage(url: &str, apply: Value) -> (u16, Value, String) {
    let r = raw()
        .patch(format!("{url}{}", dell::BIOS_SETTINGS))
        .basic_auth("root", Some("calvin"))
        .json(&json!({"@Redfish.SettingsApplyTime": apply, "Attributes": {"MemTest": "Enabled"}}))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let job = r
        .headers()
        .get("Location")
        .and_then(|v| v.to_str().ok())
        .and_then(|l| l.rsplit('/').next())
        .unwrap_or_default()
        .to_owned();
    (status, r.json().await.unwrap_or(Value::Null), job)
}

/// A time at least `offset` after the Manager's `DateTime` (read as a client would), in whole
/// seconds as iDRAC writes it: up to a second later.
async fn manager_time(url: &str, offset: Duration) -> String {
    let (_, manager) = get(url, dell::MANAGER).await;
    let now = idrac_sim::clock::parse_iso8601(manager["DateTime"].as_str().unwrap()).unwrap();
    idrac_sim::clock::with_offset(now + offset + Duration::from_secs(1))
}

/// The iDRAC attributes, which a restarting iDRAC cannot serve.
const IDRAC_ATTRIBUTES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1";

#[tokio::test]
async fn a_graceful_restart_completes_on_its_own_without_requests_in_between() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (status, _, job) = stage(url, json!({"ApplyTime": "OnReset"})).await;
    assert_eq!(status, 202);
    let (status, _) = post(
        url,
        "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset",
        json!({"ResetType": "GracefulRestart"}),
    )
    .await;
    assert_eq!(status, 204);
    // Shutdown (120 ms) and POST (400 ms) happen while nobody asks.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let (_, j) = get(url, &format!("{}/{job}", dell::JOBS)).await;
    assert_eq!(
        (j["JobState"].as_str(), j["MessageId"].as_str()),
        (Some("Completed"), Some("PR19"))
    );
    let (_, lc) = post(url, dell::LC_STATUS, json!({})).await;
    assert_eq!(lc["ServerStatus"], "OutOfPOST", "{lc}");
    let (_, system) = get(url, dell::SYSTEM).await;
    assert_eq!(system["PowerState"], "On");
}

#[tokio::test]
async fn an_idrac_reset_refuses_connections_then_answers_swc0700_with_400_then_recovers() {
    let fleet = start(SimConfig {
        boot_time: Duration::from_secs(1),
        ..config()
    })
    .await;
    let url = fleet.hosts()[0].url.clone();
    let c = super::client(&fleet, 0);
    c.service_root().await.unwrap();
    c.system(&redfish_client::ODataId::new(dell::SYSTEM)).await.unwrap();
    let (status, _) = post(
        &url,
        "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Manager.Reset",
        json!({"ResetType": "GracefulRestart"}),
    )
    .await;
    assert_eq!(status, 204);
    let refused = raw().get(format!("{url}/redfish/v1")).send().await.map(|r| r.status());
    assert!(
        refused.is_err(),
        "connections fail while the iDRAC reboots: {refused:?}"
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    for path in ["/redfish/v1/Systems", dell::SYSTEM, dell::BIOS, IDRAC_ATTRIBUTES] {
        let (status, body) = get(&url, path).await;
        assert_eq!((status, first_id(&body)), (400, "IDRAC.2.9.SWC0700"), "{path}");
    }
    let (status, manager) = get(&url, dell::MANAGER).await;
    assert_eq!(status, 200, "the Manager answers: {manager}");
    let (_, lc) = post(&url, dell::LC_STATUS, json!({})).await;
    assert_eq!(
        (lc["LCStatus"].as_str(), lc["TelemetryStatus"].as_str()),
        (Some("NotReady"), Some("NotReady"))
    );
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (status, _) = get(&url, dell::BIOS).await;
    assert_eq!(status, 200, "ready again");
    // The reset ended every session: the client logs in again by itself.
    c.system(&redfish_client::ODataId::new(dell::SYSTEM)).await.unwrap();
    let stats = fleet.hosts()[0].host.stats.to_json("x");
    assert_eq!(stats["sessions_created"], 2, "{stats}");
}

#[tokio::test]
async fn the_managers_clock_is_live() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let read = || async {
        let (_, m) = get(url, dell::MANAGER).await;
        idrac_sim::clock::parse_iso8601(m["DateTime"].as_str().unwrap()).unwrap()
    };
    let first = read().await;
    let gap = first.duration_since(SystemTime::now()).unwrap_or_else(|e| e.duration());
    assert!(gap < Duration::from_secs(2), "DateTime is the time now: {gap:?}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(read().await > first);
    let (_, js) = get(url, "/redfish/v1/JobService").await;
    assert!(idrac_sim::clock::parse_iso8601(js["DateTime"].as_str().unwrap()).unwrap() >= first);
}

#[tokio::test]
async fn a_maintenance_window_opening_restarts_the_host_and_runs_the_job() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let start_time = manager_time(url, Duration::from_secs(1)).await;
    let (status, body, job) = stage(
        url,
        json!({"ApplyTime": "AtMaintenanceWindowStart", "MaintenanceWindowStartTime": start_time,
               "MaintenanceWindowDurationInSeconds": 600}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let (_, j) = get(url, &format!("{}/{job}", dell::JOBS)).await;
    assert_eq!(j["JobState"], "Scheduled");
    assert_eq!(
        j["StartTime"].as_str(),
        start_time.strip_suffix("+00:00"),
        "the window's start, not TIME_NOW"
    );
    assert_ne!(j["EndTime"], "TIME_NA", "the window's end");
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let (_, j) = get(url, &format!("{}/{job}", dell::JOBS)).await;
    assert_eq!(j["JobState"], "Completed", "{j}");
    assert_eq!(
        fleet.hosts()[0].host.snapshot().0["MemTest"],
        "Enabled".into(),
        "applied with nobody rebooting the host"
    );
}

#[tokio::test]
async fn a_window_that_has_already_started_is_refused_by_the_managers_clock() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (_, manager) = get(url, dell::MANAGER).await;
    let now = idrac_sim::clock::parse_iso8601(manager["DateTime"].as_str().unwrap()).unwrap();
    let past = idrac_sim::clock::with_offset(now - Duration::from_secs(3600));
    let (status, body, _) = stage(
        url,
        json!({"ApplyTime": "InMaintenanceWindowOnReset", "MaintenanceWindowStartTime": past,
               "MaintenanceWindowDurationInSeconds": 600}),
    )
    .await;
    assert_eq!(
        (status, first_id(&body)),
        (400, "Base.1.12.PropertyValueOutOfRange"),
        "{body}"
    );
    let (status, body, _) = stage(
        url,
        json!({"ApplyTime": "InMaintenanceWindowOnReset", "MaintenanceWindowStartTime": "tomorrow"}),
    )
    .await;
    assert_eq!(
        (status, first_id(&body)),
        (400, "Base.1.12.PropertyValueFormatError"),
        "{body}"
    );
    assert!(fleet.hosts()[0].host.snapshot().1.is_empty(), "nothing staged");
}

/// Windows start on a whole second, 1.5 to 2.5 s from now, and last 2 s: host 0 restarts before
/// its window (the job waits, then fails when the window closes), host 1 inside its window.
#[tokio::test]
async fn a_job_for_a_window_on_reset_runs_only_on_a_reset_inside_the_window_and_fails_after_it() {
    let fleet = start(SimConfig { hosts: 2, ..config() }).await;
    let t0 = tokio::time::Instant::now();
    let reset = json!({"ResetType": "ForceRestart"});
    let reset_path = "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset";
    let mut jobs = Vec::new();
    for h in fleet.hosts() {
        let start_time = manager_time(&h.url, Duration::from_millis(1500)).await;
        let (status, body, job) = stage(
            &h.url,
            json!({"ApplyTime": "InMaintenanceWindowOnReset", "MaintenanceWindowStartTime": start_time,
                   "MaintenanceWindowDurationInSeconds": 2}),
        )
        .await;
        assert_eq!(status, 202, "{body}");
        jobs.push(job);
    }
    let (a, b) = (&fleet.hosts()[0].url, &fleet.hosts()[1].url);
    assert_eq!(post(a, reset_path, reset.clone()).await.0, 204);
    tokio::time::sleep_until(t0 + Duration::from_millis(2700)).await;
    let (_, j) = get(a, &format!("{}/{}", dell::JOBS, jobs[0])).await;
    assert_eq!(j["JobState"], "Scheduled", "a reset before the window does not run it");
    assert_eq!(post(b, reset_path, reset).await.0, 204);
    tokio::time::sleep_until(t0 + Duration::from_millis(3400)).await;
    let (_, j) = get(b, &format!("{}/{}", dell::JOBS, jobs[1])).await;
    assert_eq!(j["JobState"], "Completed", "{j}");
    tokio::time::sleep_until(t0 + Duration::from_millis(4900)).await;
    let (_, j) = get(a, &format!("{}/{}", dell::JOBS, jobs[0])).await;
    assert_eq!(j["JobState"], "Failed", "{j}");
    assert!(
        fleet.hosts()[0].host.snapshot().1.is_empty(),
        "its pending values went with it"
    );
}

#[tokio::test]
async fn a_reboot_job_scheduled_for_later_restarts_the_host_then() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let service = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellJobService/Actions/DellJobService";
    let created = raw()
        .post(format!("{url}{service}.CreateRebootJob"))
        .basic_auth("root", Some("calvin"))
        .json(&json!({"RebootJobType": "PowerCycle"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);
    let rid = created.headers()["Location"]
        .to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let (_, j) = get(url, &format!("{}/{rid}", dell::JOBS)).await;
    assert_eq!(
        (j["JobState"].as_str(), j["JobType"].as_str()),
        (Some("New"), Some("RebootPowerCycle"))
    );
    let (_, manager) = get(url, dell::MANAGER).await;
    let now = idrac_sim::clock::parse_iso8601(manager["DateTime"].as_str().unwrap()).unwrap();
    let at = idrac_sim::clock::local(now + Duration::from_secs(2)).replace(['-', ':', 'T'], "");
    let (status, body) = post(
        url,
        &format!("{service}.SetupJobQueue"),
        json!({"JobArray": [rid], "StartTimeInterval": at}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fleet.hosts()[0].host.boot_remaining(), None, "not yet");
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let (_, j) = get(url, &format!("{}/{rid}", dell::JOBS)).await;
    assert_eq!(j["JobState"], "RebootCompleted", "{j}");
    let (status, body) = post(
        url,
        &format!("{service}.SetupJobQueue"),
        json!({"JobArray": ["JID_000000000000"], "StartTimeInterval": "TIME_NOW"}),
    )
    .await;
    assert_eq!((status, first_id(&body)), (400, "Base.1.12.ActionParameterValueError"));
}

#[tokio::test]
async fn chassis_resets_and_dells_extended_reset_drive_the_power_state() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let chassis = "/redfish/v1/Chassis/System.Embedded.1/Actions";
    let power = || async {
        get(url, dell::SYSTEM).await.1["PowerState"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        post(
            url,
            &format!("{chassis}/Chassis.Reset"),
            json!({"ResetType": "ForceOff"})
        )
        .await
        .0,
        204
    );
    assert_eq!(power().await, "Off");
    let (status, body) = post(
        url,
        &format!("{chassis}/Chassis.Reset"),
        json!({"ResetType": "ForceOff"}),
    )
    .await;
    assert_eq!(
        (status, first_id(&body)),
        (409, "IDRAC.2.9.PSU502"),
        "redundant, like the system's"
    );
    let (status, body) = post(url, &format!("{chassis}/Chassis.Reset"), json!({"ResetType": "Nmi"})).await;
    assert_eq!(
        (status, first_id(&body)),
        (400, "Base.1.12.ActionParameterValueError"),
        "not offered"
    );
    let extended = format!("{chassis}/Oem/DellOemChassis.ExtendedReset");
    assert_eq!(
        post(
            url,
            &extended,
            json!({"ResetType": "PowerCycle", "FinalPowerState": "On"})
        )
        .await
        .0,
        204
    );
    assert_eq!(power().await, "On");
    assert_eq!(
        post(
            url,
            &extended,
            json!({"ResetType": "PowerCycle", "FinalPowerState": "Off"})
        )
        .await
        .0,
        204
    );
    assert_eq!(power().await, "Off");
}
