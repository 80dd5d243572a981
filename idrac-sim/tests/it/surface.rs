//! The emulator's surface as clients probe it: every advertised action answers, sessions by id
//! and expanded, ETags, tokens, messages with their arguments and the registry that lists them,
//! the legacy attribute and Dell service paths, the boot override, and both views of the job
//! queue.

use super::{call, config, get, raw, start};
use idrac_sim::SimConfig;
use redfish_client::oem::dell;
use serde_json::{Value, json};
use std::time::Duration;

fn ids(body: &Value) -> Vec<String> {
    body["error"]["@Message.ExtendedInfo"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["MessageId"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Every `target` under an `Actions` object of `doc`.
fn targets(doc: &Value, out: &mut Vec<String>) {
    match doc {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "target"
                    && let Some(t) = v.as_str()
                {
                    out.push(t.to_owned());
                } else {
                    targets(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| targets(v, out)),
        _ => {}
    }
}

/// No tree advertises an action the emulator does not implement: each one, posted an empty
/// body, is answered (its parameters checked, or done), never 404 or 405 (the iLO's four as
/// well as the iDRACs' many).
#[tokio::test]
async fn every_action_a_tree_advertises_is_implemented() {
    for model in idrac_sim::fixture::builtin_models() {
        let fixture = idrac_sim::fixture::Fixture::builtin(model).unwrap();
        let fleet = start(SimConfig {
            model: idrac_sim::ModelSource::Builtin(model.to_owned()),
            ..config()
        })
        .await;
        let url = &fleet.hosts()[0].url;
        let mut all = Vec::new();
        let mut paths = vec!["/redfish/v1".to_owned()];
        let mut seen = std::collections::BTreeSet::new();
        // Walk the tree as a client would, collecting action targets.
        while let Some(path) = paths.pop() {
            if !seen.insert(path.clone()) {
                continue;
            }
            let Some(doc) = fixture.doc(&fixture.canonical(&path)) else {
                continue;
            };
            targets(doc, &mut all);
            let mut links = Vec::new();
            collect_links(doc, &mut links);
            paths.extend(links);
        }
        let least = if fixture.bmc == idrac_sim::generation::Bmc::Ilo {
            4
        } else {
            10
        };
        assert!(all.len() >= least, "{model}: {all:?}");
        for target in &all {
            let (status, body) = call(url, "POST", target, Some(json!({}))).await;
            assert!(
                status != 404 && status != 405,
                "{model}: {target} answered {status}: {body}"
            );
        }
    }
}

fn collect_links(doc: &Value, out: &mut Vec<String>) {
    match doc {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("@odata.id" | "Uri", Value::String(s)) => {
                        out.push(s.split('#').next().unwrap_or_default().to_owned())
                    }
                    _ => collect_links(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_links(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn sessions_are_read_by_id_and_expanded_inline() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let login = super::login(url).await;
    assert_eq!(login.status(), 201);
    let location = login.headers()["Location"].to_str().unwrap().to_owned();
    let (status, session) = get(url, &location).await;
    assert_eq!((status, session["UserName"].as_str()), (200, Some("root")));
    assert_eq!(session["@odata.id"], location.as_str());
    let (_, expanded) = get(url, "/redfish/v1/SessionService/Sessions?$expand=*($levels=1)").await;
    assert_eq!(expanded["Members"][0]["UserName"], "root", "{expanded}");
    let (_, plain) = get(url, "/redfish/v1/SessionService/Sessions").await;
    assert_eq!(plain["Members"][0], json!({"@odata.id": location}));
    let (status, body) = get(url, "/redfish/v1/SessionService/Sessions/999").await;
    assert_eq!(
        (status, ids(&body)),
        (404, vec!["Base.1.12.ResourceMissingAtURI".to_owned()])
    );
}

#[tokio::test]
async fn emulators_started_with_the_same_seed_hand_out_different_tokens() {
    let mut tokens = std::collections::BTreeSet::new();
    for _ in 0..2 {
        let fleet = start(SimConfig { seed: 7, ..config() }).await;
        for _ in 0..2 {
            let r = raw()
                .post(format!("{}/redfish/v1/SessionService/Sessions", fleet.hosts()[0].url))
                .json(&json!({"UserName": "root", "Password": "calvin"}))
                .send()
                .await
                .unwrap();
            tokens.insert(r.headers()["X-Auth-Token"].to_str().unwrap().to_owned());
        }
    }
    assert_eq!(tokens.len(), 4, "{tokens:?}");
    assert!(tokens.iter().all(|t| t.len() == 32));
}

#[tokio::test]
async fn reads_carry_an_etag_that_follows_the_resource_and_if_match_guards_writes() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let etag = || async {
        let r = raw()
            .get(format!("{url}{}", dell::BIOS_SETTINGS))
            .basic_auth("root", Some("calvin"))
            .send()
            .await
            .unwrap();
        r.headers()["ETag"].to_str().unwrap().to_owned()
    };
    let first = etag().await;
    assert!(first.starts_with("W/\""), "{first}");
    assert_eq!(etag().await, first, "stable while nothing changes");
    let patch = |tag: &str| {
        raw()
            .patch(format!("{url}{}", dell::BIOS_SETTINGS))
            .basic_auth("root", Some("calvin"))
            .header("If-Match", tag)
            .json(&json!({"Attributes": {"MemTest": "Enabled"}}))
            .send()
    };
    let stale = patch("W/\"0000000000000000\"").await.unwrap();
    assert_eq!(stale.status(), 412);
    let body: Value = stale.json().await.unwrap();
    assert_eq!(ids(&body), vec!["Base.1.12.PreconditionFailed".to_owned()]);
    assert!(fleet.hosts()[0].host.snapshot().1.is_empty(), "refused before staging");
    assert_eq!(patch(&first).await.unwrap().status(), 200);
    assert_ne!(etag().await, first, "the pending value changed the resource");
}

#[tokio::test]
async fn error_messages_carry_their_arguments_and_a_severity_per_id() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (status, body) = call(
        url,
        "PATCH",
        dell::BIOS_SETTINGS,
        Some(json!({"Attributes": {"NoSuchThing": "On", "MemTest": "Sometimes"}})),
    )
    .await;
    assert_eq!(status, 400);
    let info = body["error"]["@Message.ExtendedInfo"].as_array().unwrap();
    let find = |id: &str| {
        info.iter()
            .find(|m| m["MessageId"] == id)
            .unwrap_or_else(|| panic!("{id}: {body}"))
    };
    assert_eq!(find("IDRAC.2.9.SYS429")["MessageArgs"], json!(["NoSuchThing"]));
    assert_eq!(find("IDRAC.2.9.SYS429")["MessageArgs@odata.count"], 1);
    assert_eq!(find("IDRAC.2.9.SYS426")["MessageArgs"], json!(["Sometimes", "MemTest"]));
    assert_eq!(find("Base.1.12.PropertyValueNotInList")["Severity"], "Warning");
    let (_, body) = call(
        url,
        "POST",
        "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset",
        Some(json!({"ResetType": "On"})),
    )
    .await;
    assert_eq!(
        body["error"]["@Message.ExtendedInfo"][0]["Severity"], "Informational",
        "{body}"
    );
}

/// The served message registry lists the Dell ids the emulator sends, with the severity it
/// sends them with.
#[tokio::test]
async fn the_message_registry_lists_the_dell_messages_with_their_severities() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (_, pointer) = get(url, "/redfish/v1/Registries/Messages").await;
    let (status, registry) = get(url, pointer["Location"][0]["Uri"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    let messages = registry["Messages"].as_object().unwrap();
    for id in [
        "SYS011", "SYS023", "SYS406", "SYS413", "SYS415", "SYS417", "SYS424", "SYS426", "SYS427", "SYS429", "SYS431",
        "SYS432", "BIOS011", "RAC0218", "SWC0700", "JCP000", "JCP001", "LC061", "PR19", "PR20", "PR30", "PSU501",
        "PSU502", "SUP020", "SYS051", "RED001", "RED023", "RED030", "RED031",
    ] {
        let entry = messages
            .get(id)
            .unwrap_or_else(|| panic!("{id} missing from the registry"));
        assert_eq!(
            entry["Severity"].as_str(),
            Some(idrac_sim::messages::dell_severity(id)),
            "{id}"
        );
    }
    for (id, entry) in messages {
        assert_eq!(
            entry["Severity"].as_str(),
            Some(idrac_sim::messages::dell_severity(id)),
            "{id}"
        );
    }
}

#[tokio::test]
async fn manager_attributes_answer_at_the_registry_path_and_the_legacy_attributes_paths() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (status, registry) = get(
        url,
        "/redfish/v1/Registries/ManagerAttributeRegistry/ManagerAttributeRegistry.v1_0_0.json",
    )
    .await;
    assert_eq!(status, 200);
    let entry = registry["RegistryEntries"]["Attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["AttributeName"] == "Info.1.HWModel")
        .unwrap();
    assert_eq!((entry["Readonly"].as_bool(), entry.get("ReadOnly")), (Some(true), None));
    let (status, legacy) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes").await;
    assert_eq!(status, 200);
    assert_eq!(legacy["Attributes"]["Info.1.HWModel"], "iDRAC 9");
    let (status, body) = call(
        url,
        "PATCH",
        "/redfish/v1/Managers/System.Embedded.1/Attributes",
        Some(json!({"Attributes": {"ThermalSettings.1.ThermalProfile": "Minimum Power"}})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, current) = get(url, &dell::AttributeGroup::System.path()).await;
    assert_eq!(
        current["Attributes"]["ThermalSettings.1.ThermalProfile"],
        "Minimum Power"
    );
    let (status, lc) = get(url, "/redfish/v1/Managers/LifecycleController.Embedded.1/Attributes").await;
    assert_eq!(
        (status, lc["Attributes"]["LCAttributes.1.BIOSRTDRequested"].as_str()),
        (200, Some("False"))
    );
    let (status, body) = call(
        url,
        "PATCH",
        "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes",
        Some(json!({"Attributes": {"Info.1.HWModel": "iDRAC 10"}})),
    )
    .await;
    assert_eq!((status, ids(&body)[0].as_str()), (400, "IDRAC.2.9.SYS427"), "read-only");
}

#[tokio::test]
async fn dells_services_answer_at_their_legacy_paths_too() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    for service in ["DellJobService", "DellLCService"] {
        let path = format!("/redfish/v1/Dell/Managers/iDRAC.Embedded.1/{service}");
        let (status, doc) = get(url, &path).await;
        assert_eq!((status, doc["@odata.id"].as_str()), (200, Some(path.as_str())));
        let mut t = Vec::new();
        targets(&doc, &mut t);
        assert!(t.iter().all(|t| t.starts_with(&path)), "{t:?}");
    }
}

#[tokio::test]
async fn the_boot_override_is_patched_on_the_system_and_used_up_by_the_next_boot() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (status, body) = call(
        url,
        "PATCH",
        dell::SYSTEM,
        Some(json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, system) = get(url, dell::SYSTEM).await;
    assert_eq!(
        (
            &system["Boot"]["BootSourceOverrideTarget"],
            &system["Boot"]["BootSourceOverrideEnabled"]
        ),
        (&json!("Pxe"), &json!("Once"))
    );
    for (bad, id) in [
        (
            json!({"Boot": {"BootSourceOverrideTarget": "Tape"}}),
            "Base.1.12.PropertyValueNotInList",
        ),
        (json!({"Boot": {"Colour": "Blue"}}), "Base.1.12.PropertyUnknown"),
        (json!({"PowerState": "Off"}), "Base.1.12.PropertyNotWritable"),
    ] {
        let (status, body) = call(url, "PATCH", dell::SYSTEM, Some(bad.clone())).await;
        assert_eq!((status, ids(&body)), (400, vec![id.to_owned()]), "{bad}");
    }
    let (status, _) = call(
        url,
        "POST",
        "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset",
        Some(json!({"ResetType": "ForceRestart"})),
    )
    .await;
    assert_eq!(status, 204);
    tokio::time::sleep(Duration::from_millis(700)).await;
    let (_, system) = get(url, dell::SYSTEM).await;
    assert_eq!(
        (
            &system["Boot"]["BootSourceOverrideTarget"],
            &system["Boot"]["BootSourceOverrideEnabled"]
        ),
        (&json!("None"), &json!("Disabled"))
    );
}

#[tokio::test]
async fn both_views_of_the_job_queue_show_a_job_in_their_own_shape() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    assert_eq!(
        call(
            url,
            "PATCH",
            dell::BIOS_SETTINGS,
            Some(json!({"Attributes": {"MemTest": "Enabled"}}))
        )
        .await
        .0,
        200
    );
    let created = raw()
        .post(format!("{url}{}", dell::OEM_JOBS))
        .basic_auth("root", Some("calvin"))
        .json(&json!({"TargetSettingsURI": dell::BIOS_SETTINGS}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200, "POST at Dell's path");
    let id = created.headers()["Location"]
        .to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    let (_, dell_view) = get(url, &format!("{}?$expand=*($levels=1)", dell::OEM_JOBS)).await;
    let job = &dell_view["Members"][0];
    assert_eq!(job["@odata.id"], format!("{}/{id}", dell::OEM_JOBS));
    assert_eq!(
        (job["Description"].as_str(), job["ActualRunningStartTime"].clone()),
        (Some("Job Instance"), Value::Null)
    );
    let (_, dmtf) = get(url, "/redfish/v1/JobService/Jobs?$expand=*($levels=1)").await;
    let d = &dmtf["Members"][0];
    assert_eq!(
        (d["@odata.type"].as_str(), d["JobState"].as_str()),
        (Some("#Job.v1_2_1.Job"), Some("Pending"))
    );
    assert_eq!(d["Messages"][0]["MessageId"], "IDRAC.2.9.JCP001");
    assert_eq!(
        call(
            url,
            "POST",
            "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset",
            Some(json!({"ResetType": "ForceRestart"}))
        )
        .await
        .0,
        204
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    let (_, done) = get(url, &format!("/redfish/v1/JobService/Jobs/{id}")).await;
    assert_eq!(
        (done["JobState"].as_str(), done["JobStatus"].as_str()),
        (Some("Completed"), Some("OK"))
    );
    assert!(done["EndTime"].is_string());
    let (_, dell_done) = get(url, &format!("{}/{id}", dell::JOBS)).await;
    for field in ["ActualRunningStartTime", "ActualRunningStopTime", "CompletionTime"] {
        assert!(dell_done[field].is_string(), "{field}: {dell_done}");
    }
    let (_, lc) = call(url, "POST", dell::LC_STATUS, Some(json!({}))).await;
    assert_eq!(lc["TelemetryStatus"], "Ready");
}
