//! Behaviours checked against real iDRAC captures (two R750 mockups, iDRAC 6.00 and 7.10):
//! hidden attributes left out of `GET …/Bios`, the registry's flags per host, and the job queue
//! on both collection paths.

use super::{client, config, eventually, post, raw, start};
use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::resources::computer_system::ResetType;
use redfish_client::resources::task::JobOutcome;
use redfish_client::{Client, ODataId};
use serde_json::{Value, json};

fn attrs(pairs: &[(&str, Value)]) -> Attributes {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone().into())).collect()
}

/// Stages `change` with a job, restarts the host and waits until the job has run and the BIOS
/// answers again.
async fn apply(c: &Client, change: &Attributes) {
    let staged = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            change,
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let job = staged.job.expect("a job");
    let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::ForceRestart).await.unwrap();
    let done = eventually("the job to finish", || async {
        let j = c.dell().job(job.last_segment()).await.ok()?;
        j.outcome().is_final().then_some(j)
    })
    .await;
    assert_eq!(done.outcome(), JobOutcome::Succeeded);
    eventually("the host to be back", || async {
        c.bios(&ODataId::new(dell::BIOS)).await.ok()
    })
    .await;
}

async fn patch_raw(url: &str, attributes: Value) -> (u16, Value) {
    let r = raw()
        .patch(format!("{url}{}", dell::BIOS_SETTINGS))
        .basic_auth("root", Some("calvin"))
        .json(&json!({ "Attributes": attributes }))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn get_raw(url: &str, path: &str) -> Value {
    raw()
        .get(format!("{url}{path}"))
        .basic_auth("root", Some("calvin"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn registry_flag(registry: &Value, name: &str, flag: &str) -> bool {
    registry["RegistryEntries"]["Attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["AttributeName"] == name)
        .unwrap_or_else(|| panic!("{name} not in the registry"))[flag]
        .as_bool()
        .unwrap()
}

#[tokio::test]
async fn hidden_attributes_appear_in_bios_only_while_rules_unhide_them() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let c = client(&fleet, 0);
    let bios = c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    assert!(
        !bios.attributes.contains_key("FixedSocPstate"),
        "hidden while ApbDis = Disabled"
    );
    assert!(
        !bios.attributes.contains_key("SyntheticU64Register"),
        "hidden by nature"
    );
    assert!(registry_flag(
        &get_raw(url, dell::BIOS_REGISTRY).await,
        "FixedSocPstate",
        "Hidden"
    ));

    apply(&c, &attrs(&[("ApbDis", json!("Enabled"))])).await;
    let bios = c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    assert_eq!(
        bios.attributes.get("FixedSocPstate"),
        Some(&"FixedSocPstate0".into()),
        "shown with the value the host held all along"
    );
    assert!(!bios.attributes.contains_key("SyntheticU64Register"));
    let registry = get_raw(url, dell::BIOS_REGISTRY).await;
    assert!(!registry_flag(&registry, "FixedSocPstate", "Hidden"));
    assert!(!registry_flag(&registry, "FixedSocPstate", "ReadOnly"));

    // Set it while visible, hide it again: the value stays, unlisted.
    apply(&c, &attrs(&[("FixedSocPstate", json!("FixedSocPstate2"))])).await;
    apply(&c, &attrs(&[("ApbDis", json!("Disabled"))])).await;
    let bios = c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    assert!(!bios.attributes.contains_key("FixedSocPstate"));
    assert_eq!(
        fleet.hosts()[0].host.snapshot().0["FixedSocPstate"],
        "FixedSocPstate2".into()
    );
}

#[tokio::test]
async fn a_patch_to_an_attribute_hidden_in_the_planned_state_is_refused() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    for attributes in [
        json!({"FixedSocPstate": "FixedSocPstate1"}),
        json!({"SyntheticU64Register": 18_446_744_073_709_551_615_u64}),
    ] {
        let (status, body) = patch_raw(url, attributes.clone()).await;
        assert_eq!(status, 400, "{attributes}");
        let info = &body["error"]["@Message.ExtendedInfo"];
        assert_eq!(info[0]["MessageId"], "IDRAC.2.9.SYS427", "{body}");
        assert_eq!(info[1]["MessageId"], "Base.1.12.PropertyNotWritable", "{body}");
        assert!(info[0]["Message"].as_str().unwrap().contains("hidden"), "{body}");
    }
    // Unhidden by the same request: accepted.
    let (status, body) = patch_raw(url, json!({"ApbDis": "Enabled", "FixedSocPstate": "FixedSocPstate1"})).await;
    assert_eq!(status, 200, "{body}");
}

/// The registry is rendered once per state: repeated reads, and other hosts in the same state,
/// get the same bytes; a change of values renders a new one.
#[tokio::test]
async fn the_served_registry_is_rendered_once_per_state_and_shared_between_hosts() {
    let fleet = start(super::SimConfig { hosts: 2, ..config() }).await;
    let body = |i: usize| {
        let reply = fleet.hosts()[i].host.bios_registry();
        assert_eq!(reply.status, 200);
        reply.rendered.expect("a rendered body").body.clone()
    };
    let first = body(0);
    assert_eq!(first.as_ptr(), body(0).as_ptr(), "cached for the host");
    assert_eq!(first.as_ptr(), body(1).as_ptr(), "shared with a host in the same state");
    let c = client(&fleet, 0);
    apply(&c, &attrs(&[("ApbDis", json!("Enabled"))])).await;
    let changed = body(0);
    assert_ne!(changed, first, "new values, new flags");
    assert_eq!(first.as_ptr(), body(1).as_ptr(), "the other host is unchanged");
    let decoded: Value = serde_json::from_slice(&changed).unwrap();
    assert!(!registry_flag(&decoded, "FixedSocPstate", "Hidden"));
}

#[tokio::test]
async fn both_job_collections_list_the_one_queue_and_the_manager_links_the_oem_one() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let c = client(&fleet, 0);
    let staged = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &attrs(&[("MemTest", json!("Enabled"))]),
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let id = staged.job.unwrap().last_segment().to_owned();
    let manager = get_raw(url, dell::MANAGER).await;
    let advertised = manager["Links"]["Oem"]["Dell"]["Jobs"]["@odata.id"].as_str().unwrap();
    assert_eq!(advertised, "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs");
    for collection in [advertised, dell::JOBS] {
        let listed = get_raw(url, collection).await;
        assert_eq!(listed["@odata.id"], collection);
        assert_eq!(listed["Members@odata.count"], 1, "{collection}: {listed}");
        assert_eq!(listed["Members"][0]["@odata.id"], format!("{collection}/{id}"));
        let expanded = get_raw(url, &format!("{collection}?$expand=*($levels=1)")).await;
        assert_eq!(expanded["Members"][0]["JobState"], "Scheduled", "{collection}");
        let job = get_raw(url, &format!("{collection}/{id}")).await;
        assert_eq!(
            (job["Id"].as_str(), job["MessageId"].as_str()),
            (Some(id.as_str()), Some("JCP001"))
        );
    }
}

/// iDRAC 7.x `Value` rules, on the planned state: r7625 allows ProcX2Apic only Disabled while
/// IommuSupport = Disabled (fixtures/README.md). Pending values count; r7525 (iDRAC 6.10) has
/// no Value rules.
#[tokio::test]
async fn a_value_a_value_rule_excludes_in_the_planned_state_is_refused_naming_the_allowed_values() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (status, body) = patch_raw(url, json!({"IommuSupport": "Disabled", "ProcX2Apic": "Enabled"})).await;
    assert_eq!(status, 400, "{body}");
    let info = &body["error"]["@Message.ExtendedInfo"];
    assert_eq!(info[0]["MessageId"], "IDRAC.2.9.SYS426", "{body}");
    assert_eq!(info[1]["MessageId"], "Base.1.12.PropertyValueNotInList", "{body}");
    assert_eq!(info[0]["RelatedProperties"][0], "#/Attributes/ProcX2Apic");
    assert!(
        info[0]["Message"]
            .as_str()
            .unwrap()
            .contains("while IommuSupport = Disabled"),
        "{body}"
    );
    assert_eq!(
        info[0]["Resolution"],
        "Enter one of the values Disabled and retry the operation."
    );
    assert!(fleet.hosts()[0].host.snapshot().1.is_empty(), "nothing staged");
    // The same rule through a pending value: stage IommuSupport first, then ProcX2Apic alone.
    let (status, body) = patch_raw(url, json!({"IommuSupport": "Disabled"})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = patch_raw(url, json!({"ProcX2Apic": "Enabled"})).await;
    assert_eq!(
        (status, &body["error"]["@Message.ExtendedInfo"][0]["MessageId"]),
        (400, &json!("IDRAC.2.9.SYS426"))
    );
    let (status, body) = patch_raw(url, json!({"ProcX2Apic": "Disabled"})).await;
    assert_eq!(status, 200, "an allowed value: {body}");

    let milan = start(super::SimConfig {
        model: "r7525".parse().unwrap(),
        ..config()
    })
    .await;
    let (status, body) = patch_raw(
        &milan.hosts()[0].url,
        json!({"IommuSupport": "Disabled", "ProcX2Apic": "Enabled"}),
    )
    .await;
    assert_eq!(status, 200, "iDRAC 6.x registries have no Value rules: {body}");
}

/// A host started under System Lockdown serves the registry the way the real locked R750
/// (iDRAC 7.10) does: attributes that would be writable are ReadOnly and Immutable. Lifting
/// lockdown through DellAttributes unlocks them again.
#[tokio::test]
async fn lockdown_locks_the_registry_and_lifting_it_unlocks_the_bios() {
    let fleet = start(super::SimConfig {
        lockdown: true,
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    let c = client(&fleet, 0);
    let idrac = c.dell().attributes(dell::AttributeGroup::Idrac).await.unwrap();
    assert_eq!(idrac.attributes["Lockdown.1.SystemLockdown"].as_str(), Some("Enabled"));
    let locked = get_raw(url, dell::BIOS_REGISTRY).await;
    for name in ["MemTest", "LogicalProc", "SysProfile"] {
        assert!(registry_flag(&locked, name, "ReadOnly"), "{name}");
        assert!(registry_flag(&locked, name, "Immutable"), "{name}");
    }
    // Read-only for its own reasons (a preset): read-only, not made immutable.
    assert!(registry_flag(&locked, "ProcCStates", "ReadOnly"));
    assert!(!registry_flag(&locked, "ProcCStates", "Immutable"));
    let err = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &attrs(&[("MemTest", json!("Enabled"))]),
            None,
        )
        .await
        .unwrap_err();
    assert!(err.has_code("SYS406"), "{err}");

    c.dell()
        .set_attributes(
            dell::AttributeGroup::Idrac,
            &attrs(&[("Lockdown.1.SystemLockdown", json!("Disabled"))]),
        )
        .await
        .unwrap();
    let open = get_raw(url, dell::BIOS_REGISTRY).await;
    assert!(!registry_flag(&open, "MemTest", "ReadOnly"));
    assert!(!registry_flag(&open, "MemTest", "Immutable"));
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &attrs(&[("MemTest", json!("Enabled"))]),
        None,
    )
    .await
    .unwrap();
}

/// Documents are kept rendered between requests; each read after a change shows it, whether
/// the change came over HTTP, through the library's API, or with time (POST running its job
/// and ending, with no request in between).
#[tokio::test]
async fn kept_documents_show_each_change_at_once_however_it_came() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let host = &fleet.hosts()[0].host;
    let memtest = || async { get_raw(url, dell::BIOS).await["Attributes"]["MemTest"].clone() };
    let before = memtest().await;
    assert_eq!(memtest().await, before, "a second read, served from the kept copy");
    assert_eq!(get_raw(url, dell::BIOS_SETTINGS).await["Attributes"], json!({}));
    let wanted = if before == json!("Enabled") {
        "Disabled"
    } else {
        "Enabled"
    };
    // Through the library, not HTTP.
    let reply = host.patch_bios(&json!({
        "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"},
        "Attributes": {"MemTest": wanted},
    }));
    assert_eq!(reply.status, 202, "{reply:?}");
    assert_eq!(
        get_raw(url, dell::BIOS_SETTINGS).await["Attributes"],
        json!({ "MemTest": wanted })
    );
    let power = || async { get_raw(url, dell::SYSTEM).await["PowerState"].clone() };
    assert_eq!(power().await, json!("On"));
    // Over HTTP.
    let reset_path = format!("{}/Actions/ComputerSystem.Reset", dell::SYSTEM);
    let reset = |kind: &'static str| post(url, &reset_path, json!({ "ResetType": kind }));
    let (off, body) = reset("ForceOff").await;
    assert!((200..300).contains(&off), "{off} {body}");
    assert_eq!(power().await, json!("Off"));
    let (on, body) = reset("On").await;
    assert!((200..300).contains(&on), "{on} {body}");
    // With time: POST runs the job and ends; only reads from here on.
    eventually("POST to end", || async {
        let system = get_raw(url, dell::SYSTEM).await;
        (system["BootProgress"]["LastState"] == "OSRunning").then_some(())
    })
    .await;
    assert_eq!(memtest().await, json!(wanted), "the job applied the value");
    assert_eq!(get_raw(url, dell::BIOS_SETTINGS).await["Attributes"], json!({}));
}
