//! The 17G tree (r7725) answers as an iDRAC10: each behaviour as the public report it follows
//! shows it, over raw HTTP (status codes, headers and bodies are the point).

use super::{authorized, config, eventually, get, raw, start};
use idrac_sim::{Fleet, ModelSource, SimConfig};
use redfish_client::oem::dell;
use serde_json::{Value, json};

const SETTINGS: &str = "/redfish/v1/Systems/System.Embedded.1/Settings";
const JOB_SERVICE_JOBS: &str = "/redfish/v1/JobService/Jobs";
const RESET: &str = "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset";
const IDRAC_ATTRIBUTES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1";

async fn r7725() -> Fleet {
    start(SimConfig {
        model: ModelSource::Builtin("r7725".into()),
        ..config()
    })
    .await
}

/// One answer with its `Location`.
struct Answer {
    status: u16,
    location: Option<String>,
    body: Value,
}

/// `method` on `path` with the host's session (iDRAC10 refuses Basic), `body` as JSON, and
/// `headers`.
async fn send(url: &str, method: &str, path: &str, body: Option<Value>, headers: &[(&str, &str)]) -> Answer {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = authorized(raw().request(method, format!("{url}{path}")), url).await;
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let location = r.headers().get("Location").map(|v| v.to_str().unwrap().to_owned());
    Answer {
        status: r.status().as_u16(),
        location,
        body: r.json().await.unwrap_or(Value::Null),
    }
}

async fn patch(url: &str, path: &str, body: Value) -> Answer {
    send(url, "PATCH", path, Some(body), &[]).await
}

fn jobs_created(fleet: &Fleet) -> u64 {
    fleet.hosts()[0].host.stats.to_json("x")["jobs_created"]
        .as_u64()
        .unwrap()
}

/// Restarts the host and waits until it is out of POST.
async fn restart(fleet: &Fleet) {
    let url = &fleet.hosts()[0].url;
    let r = send(url, "POST", RESET, Some(json!({"ResetType": "ForceRestart"})), &[]).await;
    assert_eq!(r.status, 204);
    let host = &fleet.hosts()[0].host;
    eventually("the host back out of POST", || async {
        (host.boot_remaining().is_none() && host.snapshot().2).then_some(())
    })
    .await;
}

#[tokio::test]
async fn basic_credentials_get_the_real_access_denied_until_basic_authentication_is_enabled_and_sessions_work() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let basic = || async {
        let r = raw()
            .get(format!("{url}{}", dell::SYSTEM))
            .basic_auth("root", Some("calvin"))
            .send()
            .await
            .unwrap();
        let challenge = r.headers().get("WWW-Authenticate").is_some();
        (r.status().as_u16(), challenge, r.json::<Value>().await.unwrap())
    };
    let (status, challenge, body) = basic().await;
    assert_eq!((status, challenge), (401, false), "Unadvertised: no Basic challenge");
    assert_eq!(
        body["error"]["@Message.ExtendedInfo"][0]["MessageId"],
        "Base.1.18.AccessDenied"
    );
    assert_eq!(
        body["error"]["@Message.ExtendedInfo"][0]["Message"],
        "The authentication credentials included with this request are missing or invalid."
    );
    // The service root stays open, with Basic credentials too (Dell's session script reads it so).
    let root = raw()
        .get(format!("{url}/redfish/v1"))
        .basic_auth("root", Some("calvin"))
        .send()
        .await
        .unwrap();
    assert_eq!(root.status(), 200);
    // A session works, and turns Basic back on.
    let (_, attrs) = get(url, IDRAC_ATTRIBUTES).await;
    assert_eq!(attrs["Attributes"]["Redfish.1.BasicAuthState"], "Unadvertised");
    let on = patch(
        url,
        IDRAC_ATTRIBUTES,
        json!({"Attributes": {"Redfish.1.BasicAuthState": "Enabled"}}),
    )
    .await;
    assert_eq!(on.status, 200, "{}", on.body);
    let (status, _, system) = basic().await;
    assert_eq!((status, system["Model"].as_str()), (200, Some("PowerEdge R7725")));
}

#[tokio::test]
async fn a_session_ends_with_204() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let login = super::login(url).await;
    assert_eq!(login.status(), 201);
    let token = login.headers()["X-Auth-Token"].to_str().unwrap().to_owned();
    let session = login.headers()["Location"].to_str().unwrap().to_owned();
    let out = raw()
        .delete(format!("{url}{session}"))
        .header("X-Auth-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    assert_eq!(out.text().await.unwrap(), "");
}

#[tokio::test]
async fn the_17g_tree_says_what_it_is_where_clients_look() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let (_, manager) = get(url, dell::MANAGER).await;
    assert_eq!(manager["Model"], "17G Monolithic");
    assert_eq!(manager["FirmwareVersion"], "1.30.10.50");
    assert_eq!(manager["Name"], "Integrated Dell Remote Access Controller");
    assert_eq!(
        manager["Oem"]["Dell"]["Jobs@Redfish.Deprecated"],
        "Please migrate to use /redfish/v1/JobService/Jobs uri"
    );
    assert!(
        manager["Actions"]["Oem"]["#OemManager.ExportSystemConfiguration"]["target"]
            .as_str()
            .unwrap()
            .ends_with("/Actions/Oem/OemManager.ExportSystemConfiguration")
    );
    let (_, system) = get(url, dell::SYSTEM).await;
    assert_eq!(
        system["Oem"]["Dell"]["DellSystem"]["SystemGeneration"],
        "17G Monolithic"
    );
    assert_eq!(
        (
            &system["ProcessorSummary"]["Count"],
            &system["ProcessorSummary"]["CoreCount"],
            &system["ProcessorSummary"]["LogicalProcessorCount"]
        ),
        (&json!(2), &json!(384), &json!(768))
    );
    assert_eq!(system["@Redfish.Settings"]["SettingsObject"]["@odata.id"], SETTINGS);
    let (_, bios) = get(url, dell::BIOS).await;
    assert_eq!(bios["@Redfish.Settings"]["SupportedApplyTimes"], json!(["OnReset"]));
    assert_eq!(bios["Attributes"]["Proc0NumCores"], 192);
    assert!(bios["Attributes"].get("AcPwrRcvry").is_none());
    let (_, attrs) = get(
        url,
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/System.Embedded.1",
    )
    .await;
    assert_eq!(attrs["Attributes"]["ServerPwr.1.AcPwrRcvry"], "Last");
    // Gone on iDRAC10: the Manager's own Attributes and its non-OEM job queue.
    for gone in ["/redfish/v1/Managers/iDRAC.Embedded.1/Attributes", dell::JOBS] {
        let (status, _) = get(url, gone).await;
        assert_eq!(status, 404, "{gone}");
    }
}

#[tokio::test]
async fn patching_boot_on_the_system_answers_the_body_a_real_idrac10_returned() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let r = patch(
        url,
        dell::SYSTEM,
        json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}}),
    )
    .await;
    assert_eq!(r.status, 400);
    // Verbatim from dsx-ai-factory/libredfish PR 33.
    let real: Value = serde_json::from_str(
        r##"{"error":{"@Message.ExtendedInfo":[{"Message":"The property Boot is a read-only property and cannot be assigned a value.","MessageArgs":["Boot"],"MessageArgs@odata.count":1,"MessageId":"Base.1.18.PropertyNotWritable","RelatedProperties":["#/Boot"],"RelatedProperties@odata.count":1,"Resolution":"Remove the property from the request body and resubmit the request if the operation failed.","Severity":"Warning"}],"code":"Base.1.18.GeneralError","message":"A general error has occurred. See ExtendedInfo for more information"}}"##,
    )
    .unwrap();
    assert_eq!(r.body, real);
}

#[tokio::test]
async fn a_one_time_boot_through_the_settings_object_answers_200_without_a_job_and_is_used_once() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let (_, settings) = get(url, SETTINGS).await;
    assert!(
        settings["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"]
            .as_array()
            .unwrap()
            .contains(&json!("Pxe"))
    );
    let r = patch(url, SETTINGS, json!({"Boot": {"BootSourceOverrideTarget": "Pxe"}})).await;
    assert_eq!((r.status, r.location.as_deref()), (200, None), "{}", r.body);
    assert_eq!(jobs_created(&fleet), 0);
    let (_, system) = get(url, dell::SYSTEM).await;
    assert_eq!(system["Boot"]["BootSourceOverrideTarget"], "Pxe");
    assert_eq!(system["Boot"]["BootSourceOverrideEnabled"], "Once");
    restart(&fleet).await;
    assert_eq!(fleet.hosts()[0].host.stats.booted(), ["Pxe (once)"]);
    // The mode is read-only on 17G.
    let r = patch(url, SETTINGS, json!({"Boot": {"BootSourceOverrideMode": "UEFI"}})).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn a_boot_order_through_the_settings_object_queues_a_bios_job_reported_in_the_job_service() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let r = patch(
        url,
        SETTINGS,
        json!({"Boot": {"BootOrder": ["Boot0001", "Boot0000", "Boot0002"]}}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let location = r.location.unwrap();
    assert!(location.starts_with(&format!("{JOB_SERVICE_JOBS}/JID_")), "{location}");
    let id = location.rsplit('/').next().unwrap().to_owned();
    let (_, job) = get(url, &location).await;
    assert_eq!(job["@odata.type"], "#Job.v1_2_1.Job");
    assert_eq!(job["Oem"]["Dell"]["JobType"], "BIOSConfiguration");
    assert_eq!(job["Oem"]["Dell"]["Message"], "Task successfully scheduled.");
    let (status, dell_job) = get(url, &format!("{}/{id}", dell::OEM_JOBS)).await;
    assert_eq!((status, dell_job["JobType"].as_str()), (200, Some("BIOSConfiguration")));
    let (status, _) = get(url, &format!("{}/{id}", dell::JOBS)).await;
    assert_eq!(status, 404, "no Managers/iDRAC.Embedded.1/Jobs on 17G");
    let (_, settings) = get(url, SETTINGS).await;
    assert_eq!(
        settings["Boot"]["BootOrder"],
        json!(["Boot0001", "Boot0000", "Boot0002"])
    );
    restart(&fleet).await;
    let (_, system) = get(url, dell::SYSTEM).await;
    assert_eq!(system["Boot"]["BootOrder"], json!(["Boot0001", "Boot0000", "Boot0002"]));
    let (_, job) = get(url, &location).await;
    assert_eq!(job["JobState"], "Completed");
}

#[tokio::test]
async fn successive_bios_writes_merge_into_the_scheduled_job_with_200_and_no_new_job() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let first = patch(
        url,
        dell::BIOS_SETTINGS,
        json!({"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}, "Attributes": {"MemTest": "Enabled"}}),
    )
    .await;
    assert_eq!(first.status, 202);
    let second = patch(
        url,
        dell::BIOS_SETTINGS,
        json!({"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}, "Attributes": {"HttpDev1EnDis": "Enabled"}}),
    )
    .await;
    assert_eq!(
        (second.status, second.location.as_deref()),
        (200, None),
        "{}",
        second.body
    );
    assert_eq!(jobs_created(&fleet), 1);
    let (_, pending) = get(url, dell::BIOS_SETTINGS).await;
    assert_eq!(
        pending["Attributes"],
        json!({"MemTest": "Enabled", "HttpDev1EnDis": "Enabled"})
    );
    // A boot order joins the same job.
    let order = patch(url, SETTINGS, json!({"Boot": {"BootOrder": ["Boot0001"]}})).await;
    assert_eq!((order.status, order.location.as_deref()), (200, None));
    restart(&fleet).await;
    let (bios, _, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(
        (bios["MemTest"].as_str(), bios["HttpDev1EnDis"].as_str()),
        (Some("Enabled"), Some("Enabled"))
    );
    let (_, system) = get(url, dell::SYSTEM).await;
    assert_eq!(system["Boot"]["BootOrder"][0], "Boot0001");
}

#[tokio::test]
async fn after_a_secure_boot_patch_a_bios_write_fails_with_the_body_a_real_r6715_returned() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let secure = patch(url, dell::SECURE_BOOT, json!({"SecureBootEnable": false})).await;
    assert_eq!(secure.status, 202, "{}", secure.body);
    assert!(secure.location.unwrap().starts_with(JOB_SERVICE_JOBS));
    assert_eq!(jobs_created(&fleet), 1, "the job exists at once");
    let r = patch(
        url,
        dell::BIOS_SETTINGS,
        json!({"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}, "Attributes": {"HttpDev1EnDis": "Enabled"}}),
    )
    .await;
    assert_eq!(r.status, 400);
    // Verbatim from bmclib PR 467 (an R6715).
    let real: Value = serde_json::from_str(
        r##"{"error":{"@Message.ExtendedInfo":[{"Message":"Pending configuration values are already committed, unable to perform another set operation.","MessageArgs":["HttpDev1EnDis"],"MessageArgs@odata.count":1,"MessageId":"IDRAC.2.14.SYS011","RelatedProperties":["#/Attributes/HttpDev1EnDis"],"RelatedProperties@odata.count":1,"Resolution":"Wait for the scheduled job to complete or delete the configuration jobs before attempting more set attribute operations.","Severity":"Warning"}],"code":"Base.1.18.GeneralError","message":"A general error has occurred. See ExtendedInfo for more information"}}"##,
    )
    .unwrap();
    assert_eq!(r.body, real);
    restart(&fleet).await;
    let (_, secure_boot) = get(url, dell::SECURE_BOOT).await;
    assert_eq!(secure_boot["SecureBootEnable"], false);
}

#[tokio::test]
async fn an_apply_time_the_bios_does_not_list_is_refused_before_anything_is_staged() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let (_, manager) = get(url, dell::MANAGER).await;
    let start = manager["DateTime"].as_str().unwrap().to_owned();
    let start = idrac_sim::clock::parse_iso8601(&start).unwrap() + std::time::Duration::from_secs(3600);
    let r = patch(
        url,
        dell::BIOS_SETTINGS,
        json!({"@Redfish.SettingsApplyTime": {"ApplyTime": "AtMaintenanceWindowStart",
                "MaintenanceWindowStartTime": idrac_sim::clock::with_offset(start),
                "MaintenanceWindowDurationInSeconds": 600},
               "Attributes": {"MemTest": "Enabled"}}),
    )
    .await;
    assert_eq!(r.status, 400);
    let message = &r.body["error"]["@Message.ExtendedInfo"][0];
    assert!(
        message["MessageId"]
            .as_str()
            .unwrap()
            .ends_with("PropertyValueNotInList")
    );
    assert!(message["Resolution"].as_str().unwrap().contains("OnReset"), "{message}");
    let (_, pending) = get(url, dell::BIOS_SETTINGS).await;
    assert_eq!(pending["Attributes"], json!({}));
}

#[tokio::test]
async fn scp_targets_come_as_a_list_and_a_joined_string_is_refused_clearly() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let export = "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/OemManager.ExportSystemConfiguration";
    let listed = send(
        url,
        "POST",
        export,
        Some(json!({"ExportFormat": "JSON", "ShareParameters": {"Target": ["BIOS", "IDRAC"]}})),
        &[],
    )
    .await;
    assert_eq!(listed.status, 202);
    assert!(
        listed
            .location
            .unwrap()
            .starts_with("/redfish/v1/TaskService/Tasks/JID_")
    );
    let joined = send(
        url,
        "POST",
        export,
        Some(json!({"ExportFormat": "JSON", "ShareParameters": {"Target": "BIOS,IDRAC"}})),
        &[],
    )
    .await;
    assert_eq!(joined.status, 400);
    let message = &joined.body["error"]["@Message.ExtendedInfo"][0];
    assert!(message["Message"].as_str().unwrap().contains("list"), "{message}");
    let idrac9_target = "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.ExportSystemConfiguration";
    let old = send(url, "POST", idrac9_target, Some(json!({})), &[]).await;
    assert_eq!(old.status, 404);
}

#[tokio::test]
async fn a_job_is_deleted_at_either_path() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    for collection in [JOB_SERVICE_JOBS, dell::OEM_JOBS] {
        let staged = patch(
            url,
            dell::BIOS_SETTINGS,
            json!({"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}, "Attributes": {"MemTest": "Enabled"}}),
        )
        .await;
        assert_eq!(staged.status, 202);
        let id = staged.location.unwrap().rsplit('/').next().unwrap().to_owned();
        let deleted = send(url, "DELETE", &format!("{collection}/{id}"), None, &[]).await;
        assert_eq!(deleted.status, 200, "{collection}");
        let (status, _) = get(url, &format!("{JOB_SERVICE_JOBS}/{id}")).await;
        assert_eq!(status, 404);
        let (_, pending) = get(url, dell::BIOS_SETTINGS).await;
        assert_eq!(pending["Attributes"], json!({}), "the job took its values with it");
    }
}

#[tokio::test]
async fn an_action_post_with_if_match_is_refused_with_412_whatever_the_tag() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let reset =
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellLCService/Actions/DellLCService.GetRemoteServicesAPIStatus";
    let tagged = send(url, "POST", reset, Some(json!({})), &[("If-Match", "*")]).await;
    assert_eq!(tagged.status, 412);
    let plain = send(url, "POST", reset, Some(json!({})), &[]).await;
    assert_eq!(plain.status, 200);
    // A PATCH with the current tag is still honoured (gofish sends one to the settings object).
    let current = authorized(raw().get(format!("{url}{SETTINGS}")), url)
        .await
        .send()
        .await
        .unwrap()
        .headers()["ETag"]
        .to_str()
        .unwrap()
        .to_owned();
    let r = send(
        url,
        "PATCH",
        SETTINGS,
        Some(json!({"Boot": {"BootSourceOverrideTarget": "Cd"}})),
        &[("If-Match", &current)],
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn accounts_are_created_by_post_and_deleted_by_delete() {
    let fleet = r7725().await;
    let url = &fleet.hosts()[0].url;
    let accounts = "/redfish/v1/AccountService/Accounts";
    let created = send(
        url,
        "POST",
        accounts,
        Some(json!({"UserName": "ops", "Password": "Passw0rd!", "RoleId": "Operator", "Enabled": true, "Id": "5"})),
        &[],
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.location.as_deref(),
        Some("/redfish/v1/AccountService/Accounts/5")
    );
    assert_eq!(created.body["UserName"], "ops");
    let again = send(
        url,
        "POST",
        accounts,
        Some(json!({"UserName": "ops2", "Password": "Passw0rd!", "RoleId": "ReadOnly", "Enabled": true, "Id": "5"})),
        &[],
    )
    .await;
    assert_eq!(again.status, 400, "slot 5 is taken");
    let deleted = send(url, "DELETE", &format!("{accounts}/5"), None, &[]).await;
    assert_eq!(deleted.status, 204);
    let (_, slot) = get(url, &format!("{accounts}/5")).await;
    assert_eq!(slot["UserName"], "");
}
