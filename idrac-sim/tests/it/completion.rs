//! What the emulator adds to a tree that lacks it, as real iDRACs serve it: the OData service
//! and metadata documents, schema files, the Manager's Dell services and their actions, the
//! event service, the fault list, the Manager's network; every addition marked, and a tree
//! that records its own served as recorded.

use super::{authorized, call, config, get, post, raw, start};
use idrac_sim::synth::SYNTHESISED_HEADER;
use idrac_sim::{ModelSource, SimConfig};
use serde_json::{Value, json};
use std::time::Duration;

async fn mark(url: &str, path: &str) -> Option<String> {
    let r = authorized(raw().get(format!("{url}{path}")), url)
        .await
        .send()
        .await
        .unwrap();
    r.headers()
        .get(SYNTHESISED_HEADER)
        .map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test]
async fn the_odata_documents_are_served_without_credentials_for_every_model() {
    for model in super::dell_models() {
        let fleet = start(SimConfig {
            model: ModelSource::Builtin(model.to_owned()),
            ..config()
        })
        .await;
        let url = &fleet.hosts()[0].url;
        let odata = raw().get(format!("{url}/redfish/v1/odata")).send().await.unwrap();
        assert_eq!(odata.status(), 200, "{model}");
        let doc: Value = odata.json().await.unwrap();
        assert_eq!(doc["@odata.context"], "/redfish/v1/$metadata");
        let names: Vec<&str> = doc["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        for want in [
            "Service",
            "Systems",
            "Managers",
            "TaskService",
            "JsonSchemas",
            "EventService",
        ] {
            assert!(names.contains(&want), "{model}: {names:?}");
        }
        let meta = raw().get(format!("{url}/redfish/v1/$metadata")).send().await.unwrap();
        assert_eq!(meta.status(), 200);
        assert_eq!(meta.headers()["content-type"], "application/xml;charset=utf-8");
        let xml = meta.text().await.unwrap();
        assert!(xml.contains("Extends=\"ServiceRoot.v1_"), "{model}");
        assert!(xml.contains("<edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/v1/ComputerSystem_v1.xml\">"));
        assert!(xml.contains("http://downloads.dell.com/redfish/bmc/schemas/DellAttributes_v1.xml"));
        // Every versioned type a document of the tree carries is included.
        let (_, system) = get(url, "/redfish/v1/Systems/System.Embedded.1").await;
        let ns = system["@odata.type"]
            .as_str()
            .unwrap()
            .trim_start_matches('#')
            .rsplit_once('.')
            .unwrap()
            .0
            .to_owned();
        assert!(
            xml.contains(&format!("<edmx:Include Namespace=\"{ns}\"/>")),
            "{model}: {ns}"
        );
        assert_eq!(mark(url, "/redfish/v1/$metadata").await.as_deref(), Some("document"));
    }
}

#[tokio::test]
async fn json_schemas_list_each_type_at_its_published_uri_and_the_link_header_resolves() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let r = raw()
        .get(format!("{url}/redfish/v1/Systems/System.Embedded.1"))
        .basic_auth("root", Some("calvin"))
        .send()
        .await
        .unwrap();
    let link = r.headers()["link"].to_str().unwrap().to_owned();
    let target = link.trim_start_matches('<').split('>').next().unwrap().to_owned();
    let (status, file) = get(url, &target).await;
    assert_eq!(status, 200, "{target}");
    let uri = file["Location"][0]["PublicationUri"].as_str().unwrap();
    assert!(
        uri.starts_with("http://redfish.dmtf.org/schemas/v1/ComputerSystem.v1_"),
        "{uri}"
    );
    let (_, all) = get(url, "/redfish/v1/JsonSchemas").await;
    assert!(all["Members@odata.count"].as_u64().unwrap() > 40);
}

#[tokio::test]
async fn the_manager_links_dells_services_as_a_real_r750_does_and_each_answers() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (_, manager) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1").await;
    let links = manager["Links"]["Oem"]["Dell"].as_object().unwrap();
    // 17 services and collections, their count annotation and the type: the R750's 19 keys.
    assert_eq!(links.len(), 19, "{:?}", links.keys().collect::<Vec<_>>());
    for (name, link) in links {
        let Some(target) = link["@odata.id"].as_str() else {
            continue;
        };
        let (status, _) = get(url, target).await;
        assert_eq!(status, 200, "{name} at {target}");
    }
    for generated in [
        "/redfish",
        "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol",
        "/redfish/v1/AccountService/Accounts/9",
    ] {
        assert_eq!(mark(url, generated).await.as_deref(), Some("document"), "{generated}");
    }
    assert!(
        mark(url, "/redfish/v1/AccountService/Accounts/2").await.is_none(),
        "recorded slot"
    );
    let marked = mark(url, "/redfish/v1/Managers/iDRAC.Embedded.1").await.unwrap();
    assert!(marked.contains("/Links/Oem/Dell/DelliDRACCardService"), "{marked}");
    assert!(
        !marked.contains("DellJobService"),
        "the recorded links are not claimed: {marked}"
    );
    assert_eq!(
        manager["Actions"]["#Manager.ResetToDefaults"]["ResetType@Redfish.AllowableValues"],
        json!(["ResetAll", "PreserveNetworkAndUsers"])
    );
    assert_eq!(
        manager["EthernetInterfaces"]["@odata.id"],
        "/redfish/v1/Managers/iDRAC.Embedded.1/EthernetInterfaces"
    );
}

#[tokio::test]
async fn the_idrac_card_service_resets_the_idrac_as_ironic_asks() {
    let fleet = start(SimConfig {
        boot_time: Duration::from_millis(300),
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    let target =
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DelliDRACCardService/Actions/DelliDRACCardService.iDRACReset";
    let (status, _) = post(url, target, json!({"Force": "Sideways"})).await;
    assert_eq!(status, 400);
    let (status, _) = post(url, target, json!({"Force": "Graceful"})).await;
    assert_eq!(status, 200);
    assert!(!fleet.hosts()[0].host.reachable(), "the iDRAC restarts");
    assert_eq!(fleet.hosts()[0].host.lifecycle_log()[0].0, "IDRAC.2.9.RAC0182");
}

#[tokio::test]
async fn reset_to_defaults_restores_the_idrac_attributes_and_keeps_users_when_asked() {
    let fleet = start(SimConfig {
        boot_time: Duration::from_millis(200),
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    let attrs = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1";
    assert_eq!(
        call(
            url,
            "PATCH",
            attrs,
            Some(json!({"Attributes": {"SSH.1.Enable": "Disabled"}}))
        )
        .await
        .0,
        200
    );
    let user = json!({"UserName": "kept", "Password": "Kept.pass1", "RoleId": "Operator", "Enabled": true});
    assert_eq!(
        call(url, "PATCH", "/redfish/v1/AccountService/Accounts/3", Some(user))
            .await
            .0,
        200
    );
    let action = "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Manager.ResetToDefaults";
    assert_eq!(post(url, action, json!({"ResetType": "Everything"})).await.0, 400);
    assert_eq!(
        post(url, action, json!({"ResetType": "PreserveNetworkAndUsers"}))
            .await
            .0,
        200
    );
    let host = &fleet.hosts()[0].host;
    super::eventually("the iDRAC back", || async { host.reachable().then_some(()) }).await;
    let (_, back) = super::eventually("the attributes served again", || async {
        let (status, body) = get(url, attrs).await;
        (status == 200).then_some((status, body))
    })
    .await;
    assert_eq!(back["Attributes"]["SSH.1.Enable"], "Enabled");
    let (_, three) = get(url, "/redfish/v1/AccountService/Accounts/3").await;
    assert_eq!(three["UserName"], "kept");
}

#[tokio::test]
async fn the_managers_network_follows_the_idrac_attributes() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (_, nic) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/EthernetInterfaces/NIC.1").await;
    assert_eq!(nic["IPv4Addresses"][0]["Address"], "192.0.2.11");
    assert_eq!(nic["MACAddress"], "00:00:5e:00:53:11");
    let attrs = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1";
    let change = json!({"Attributes": {"IPv4.1.Address": "192.0.2.99", "WebServer.1.HttpsPort": 8443}});
    assert_eq!(call(url, "PATCH", attrs, Some(change)).await.0, 200);
    let (_, nic) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/EthernetInterfaces/NIC.1").await;
    assert_eq!(nic["IPv4Addresses"][0]["Address"], "192.0.2.99");
    let (_, protocols) = get(url, "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol").await;
    assert_eq!(protocols["HTTPS"]["Port"], 8443);
}

#[tokio::test]
async fn event_subscriptions_are_created_read_and_deleted() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let test_event = "/redfish/v1/EventService/Actions/EventService.SubmitTestEvent";
    let (status, body) = post(url, test_event, json!({"EventType": "Alert"})).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["@Message.ExtendedInfo"][0]["MessageId"],
        "IDRAC.2.9.SYS423"
    );
    let r = raw()
        .post(format!("{url}/redfish/v1/EventService/Subscriptions"))
        .basic_auth("root", Some("calvin"))
        .json(&json!({"Destination": "https://127.0.0.1:9/events", "EventTypes": ["Alert"], "Context": "ci"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    let (status, sub) = get(url, &location).await;
    assert_eq!((status, sub["Context"].as_str()), (200, Some("ci")));
    assert_eq!(post(url, test_event, json!({"EventType": "Alert"})).await.0, 204);
    assert_eq!(
        post(
            url,
            "/redfish/v1/EventService/Subscriptions",
            json!({"Destination": "ftp://x"})
        )
        .await
        .0,
        400
    );
    assert_eq!(call(url, "DELETE", &location, None).await.0, 200);
    assert_eq!(get(url, &location).await.0, 404);
}

#[tokio::test]
async fn the_log_services_list_sel_lifecycle_log_and_fault_list() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let (_, services) = get(
        url,
        "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices?$expand=*($levels=1)",
    )
    .await;
    let ids: Vec<&str> = services["Members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["Id"].as_str().unwrap())
        .collect();
    for want in ["Sel", "Lclog", "FaultList"] {
        assert!(ids.contains(&want), "{ids:?}");
    }
    for log in ["Sel", "Lclog", "FaultList"] {
        let (status, entries) = get(
            url,
            &format!("/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/{log}/Entries"),
        )
        .await;
        assert_eq!(status, 200, "{log}");
        assert!(entries["Members@odata.count"].is_u64());
    }
}

#[tokio::test]
async fn a_tree_that_records_a_document_is_served_as_recorded() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("tree");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/c6615");
    copy_tree(&src, &dir);
    let roles = dir.join("redfish/v1/AccountService/Roles");
    std::fs::create_dir_all(&roles).unwrap();
    let recorded = json!({"@odata.id": "/redfish/v1/AccountService/Roles", "@odata.type": "#RoleCollection.RoleCollection",
                          "Members": [], "Members@odata.count": 0, "Name": "Recorded"});
    std::fs::write(roles.join("index.json"), recorded.to_string()).unwrap();
    let meta = dir.join("redfish/v1/$metadata");
    std::fs::create_dir_all(&meta).unwrap();
    std::fs::write(meta.join("index.xml"), "<edmx:Edmx Version=\"4.0\"/>").unwrap();
    let fleet = start(SimConfig {
        model: ModelSource::Dir(dir.clone()),
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    let (_, served) = get(url, "/redfish/v1/AccountService/Roles").await;
    assert_eq!(served["Name"], "Recorded");
    assert!(mark(url, "/redfish/v1/AccountService/Roles").await.is_none());
    let xml = raw()
        .get(format!("{url}/redfish/v1/$metadata"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(xml, "<edmx:Edmx Version=\"4.0\"/>");
    assert!(mark(url, "/redfish/v1/$metadata").await.is_none());
    drop(fleet);
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test]
async fn ntp_servers_are_patched_with_the_array_rules_of_dsp0266() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let path = "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol";
    let servers = |v: Value| json!({"NTP": {"NTPServers": v}});
    assert_eq!(
        call(
            url,
            "PATCH",
            path,
            Some(servers(json!([
                "a.example.invalid",
                "b.example.invalid",
                "c.example.invalid"
            ])))
        )
        .await
        .0,
        200
    );
    // {} keeps an element, null removes one, fewer elements truncate.
    assert_eq!(call(url, "PATCH", path, Some(servers(json!([{}, null])))).await.0, 200);
    let (_, now) = get(url, path).await;
    assert_eq!(now["NTP"]["NTPServers"], json!(["a.example.invalid"]));
    assert_eq!(
        call(url, "PATCH", path, Some(json!({"SSH": {"ProtocolEnabled": false}})))
            .await
            .0,
        200
    );
    let (_, attrs) = get(
        url,
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1",
    )
    .await;
    assert_eq!(attrs["Attributes"]["SSH.1.Enable"], "Disabled");
    assert_eq!(call(url, "PATCH", path, Some(json!({"Id": "x"}))).await.0, 400);
}

#[tokio::test]
async fn the_managers_address_and_names_are_patched_on_its_nic() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let nic = "/redfish/v1/Managers/iDRAC.Embedded.1/EthernetInterfaces/NIC.1";
    let change = json!({"HostName": "bmc-7", "IPv4StaticAddresses": [{"Address": "192.0.2.70", "SubnetMask": "255.255.255.0", "Gateway": "192.0.2.1"}],
                        "NameServers": ["192.0.2.53"]});
    assert_eq!(call(url, "PATCH", nic, Some(change)).await.0, 200);
    let (_, now) = get(url, nic).await;
    assert_eq!(now["HostName"], "bmc-7");
    assert_eq!(now["IPv4Addresses"][0]["Address"], "192.0.2.70");
    assert_eq!(now["IPv4Addresses"][0]["AddressOrigin"], "Static");
    assert_eq!(now["LinkStatus"], "LinkUp");
    assert_eq!(
        call(
            url,
            "PATCH",
            nic,
            Some(json!({"IPv4StaticAddresses": [{"Address": "not-an-ip"}]}))
        )
        .await
        .0,
        400
    );
    let log = fleet.hosts()[0].host.lifecycle_log();
    assert!(
        log.iter()
            .any(|(_, args)| args.get(2).map(String::as_str) == Some("iDRAC.Embedded.1#IPv4.1#Address"))
    );
}

#[tokio::test]
async fn an_account_links_its_ssh_keys_where_the_tree_records_them_as_the_7_10_capture_does() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("tree");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/r7625");
    copy_tree(&src, &dir);
    // Each slot of the real 7.10 tree records `Accounts/N/Keys`; this tree records slot 3's.
    let keys = dir.join("redfish/v1/AccountService/Accounts/3/Keys");
    std::fs::create_dir_all(&keys).unwrap();
    let recorded = json!({"@odata.id": "/redfish/v1/AccountService/Accounts/3/Keys",
                          "@odata.type": "#KeyCollection.KeyCollection", "Members": [],
                          "Members@odata.count": 0, "Name": "Key Collection"});
    std::fs::write(keys.join("index.json"), recorded.to_string()).unwrap();
    let fleet = start(SimConfig {
        model: ModelSource::Dir(dir.clone()),
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    let (_, three) = get(url, "/redfish/v1/AccountService/Accounts/3").await;
    assert_eq!(three["Keys"]["@odata.id"], "/redfish/v1/AccountService/Accounts/3/Keys");
    let (status, served) = get(url, "/redfish/v1/AccountService/Accounts/3/Keys").await;
    assert_eq!((status, served["Name"].clone()), (200, json!("Key Collection")));
    let (_, two) = get(url, "/redfish/v1/AccountService/Accounts/2").await;
    assert!(two.get("Keys").is_none(), "no link to what is not served: {two}");
}

#[tokio::test]
async fn every_model_serves_the_inventory_a_real_r750_lists_beside_cpus_and_dimms() {
    // DMTF's rf_sys_inventory.py found only the chassis, CPUs and DIMMs before; the R750
    // captures also list drives, storage controllers, PCIe devices and network adapters.
    let count = |doc: &Value| doc["Members"].as_array().map_or(0, Vec::len);
    for model in super::dell_models() {
        let fleet = start(SimConfig {
            model: ModelSource::Builtin(model.to_owned()),
            ..config()
        })
        .await;
        let url = &fleet.hosts()[0].url;
        let system = "/redfish/v1/Systems/System.Embedded.1";
        let (_, storage) = get(url, &format!("{system}/Storage")).await;
        assert!(count(&storage) >= 1, "{model}: {storage}");
        let controller = storage["Members"][0]["@odata.id"].as_str().unwrap().to_owned();
        let (status, controller) = get(url, &controller).await;
        assert_eq!(status, 200, "{model}");
        let drives = controller["Drives"].as_array().cloned().unwrap_or_default();
        assert!(!drives.is_empty(), "{model}: a controller with its drives");
        for drive in &drives {
            let (status, d) = get(url, drive["@odata.id"].as_str().unwrap()).await;
            assert_eq!(status, 200, "{model}: {drive}");
            assert!(d["CapacityBytes"].as_u64().is_some_and(|b| b > 0), "{model}: {d}");
        }
        let (_, simple) = get(url, &format!("{system}/SimpleStorage")).await;
        assert!(count(&simple) >= 1, "{model}");
        let chassis = "/redfish/v1/Chassis/System.Embedded.1";
        let (_, pcie) = get(url, &format!("{chassis}/PCIeDevices")).await;
        assert!(count(&pcie) >= 1, "{model}: {pcie}");
        let (_, nics) = get(url, &format!("{chassis}/NetworkAdapters")).await;
        assert!(count(&nics) >= 1, "{model}: {nics}");
        for part in ["Thermal", "ThermalSubsystem", "PowerSubsystem"] {
            let (status, _) = get(url, &format!("{chassis}/{part}")).await;
            assert_eq!(status, 200, "{model}: {part}");
        }
    }
}
