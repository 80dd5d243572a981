//! `rftune sim --fixture DIR` and the emulator on a tree it did not generate: a small tree
//! written here with the shapes of real captures that our generated fixtures do not have: no
//! hidden values at all, a `Value` rule, a u64 bound, a rule that reads a hidden attribute, only
//! the `Oem/Dell/Jobs` collection, no manager attribute registry, an Intel CPU.

use super::{Run, TempDir, binary, client, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use redfish_client::resources::computer_system::ResetType;
use serde_json::{Value, json};
use std::path::Path;
use tokio::io::{AsyncBufReadExt, BufReader};

const U64_MAX: u64 = u64::MAX;

fn put(root: &Path, path: &str, doc: &Value) {
    let dir = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.json"), serde_json::to_vec_pretty(doc).unwrap()).unwrap();
}

fn link(path: &str) -> Value {
    json!({ "@odata.id": path })
}

fn enumeration(name: &str, values: &[&str], read_only: bool, hidden: bool) -> Value {
    let values: Vec<Value> = values
        .iter()
        .map(|v| json!({"ValueName": v, "ValueDisplayName": v}))
        .collect();
    json!({"AttributeName": name, "DisplayName": name, "Type": "Enumeration", "Value": values,
           "ReadOnly": read_only, "Hidden": hidden, "Immutable": false, "WriteOnly": false,
           "ResetRequired": true, "CurrentValue": null})
}

fn rule(target: &str, property: &str, to: Value, attribute: &str, value: &str) -> Value {
    json!({"DependencyFor": target, "Type": "Map", "Dependency": {
        "MapFrom": [{"MapFromAttribute": attribute, "MapFromCondition": "EQU",
                     "MapFromProperty": "CurrentValue", "MapFromValue": value}],
        "MapToAttribute": target, "MapToProperty": property, "MapToValue": to}})
}

/// Writes the tree under `root` (`root/redfish/v1/...`).
fn write_tree(root: &Path) {
    let system = dell::SYSTEM;
    let manager = dell::MANAGER;
    put(
        root,
        "/redfish/v1",
        &json!({
        "@odata.id": "/redfish/v1", "@odata.type": "#ServiceRoot.v1_15_0.ServiceRoot",
        "Id": "RootService", "Name": "Root Service", "Vendor": "Dell", "RedfishVersion": "1.18.0",
        "Product": "Integrated Dell Remote Access Controller",
        "Oem": {"Dell": {"ServiceTag": "TREE001"}},
        "Systems": link("/redfish/v1/Systems"), "Managers": link("/redfish/v1/Managers"),
        "SessionService": link("/redfish/v1/SessionService"),
        "Links": {"Sessions": link("/redfish/v1/SessionService/Sessions")}}),
    );
    put(
        root,
        "/redfish/v1/Systems",
        &json!({
        "@odata.id": "/redfish/v1/Systems", "Members": [link(system)], "Members@odata.count": 1}),
    );
    put(
        root,
        system,
        &json!({
        "@odata.id": system, "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem",
        "Id": "System.Embedded.1", "Manufacturer": "Dell Inc.", "Model": "PowerEdge R750",
        "SKU": "TREE001", "BiosVersion": "1.13.2", "PowerState": "On",
        "ProcessorSummary": {"Count": 2, "Model": "Intel(R) Xeon(R) Gold 6354 CPU @ 3.00GHz"},
        "MemorySummary": {"TotalSystemMemoryGiB": 32},
        "Bios": link(dell::BIOS), "Memory": link(&format!("{system}/Memory")),
        "Links": {"ManagedBy": [link(manager)]}}),
    );
    put(
        root,
        &format!("{system}/Memory"),
        &json!({
        "@odata.id": format!("{system}/Memory"),
        "Members": [link(&format!("{system}/Memory/DIMM.Socket.A1"))], "Members@odata.count": 1}),
    );
    put(
        root,
        &format!("{system}/Memory/DIMM.Socket.A1"),
        &json!({
        "@odata.id": format!("{system}/Memory/DIMM.Socket.A1"), "@odata.type": "#Memory.v1_16_0.Memory",
        "Id": "DIMM.Socket.A1", "CapacityMiB": 32768, "OperatingSpeedMhz": 3200,
        "MemoryDeviceType": "DDR4"}),
    );
    // Bios lists visible attributes only, as real iDRACs do; no hidden value is given anywhere.
    put(
        root,
        dell::BIOS,
        &json!({
        "@odata.id": dell::BIOS, "@odata.type": "#Bios.v1_2_1.Bios", "Id": "Bios",
        "AttributeRegistry": "BiosAttributeRegistry.v1_0_3",
        "@Redfish.Settings": {"SettingsObject": link(dell::BIOS_SETTINGS),
                              "SupportedApplyTimes": ["OnReset", "AtMaintenanceWindowStart",
                                                      "InMaintenanceWindowOnReset"]},
        "Attributes": {"SystemModelName": "PowerEdge R750", "SystemServiceTag": "TREE001",
                       "SysProfile": "PerfOptimized", "ProcVirtualization": "Enabled",
                       "ProcAts": "Enabled", "Sgx": "Off", "PxeDev5Protocol": "IPv4"}}),
    );
    put(
        root,
        dell::BIOS_SETTINGS,
        &json!({
        "@odata.id": dell::BIOS_SETTINGS, "@odata.type": "#DellBios.v1_2_0.DellBios",
        "Id": "Settings", "Attributes": {}}),
    );
    let mut model = json!({"AttributeName": "SystemModelName", "Type": "String", "ReadOnly": true,
                           "Hidden": false, "Immutable": true, "MaxLength": 40, "MinLength": 0});
    let mut tag = model.clone();
    tag["AttributeName"] = json!("SystemServiceTag");
    model["DisplayName"] = json!("System Model Name");
    put(
        root,
        dell::BIOS_REGISTRY,
        &json!({
        "@odata.id": dell::BIOS_REGISTRY, "@odata.type": "#AttributeRegistry.v1_3_6.AttributeRegistry",
        "Id": "BiosAttributeRegistry.v1_0_3", "Language": "en", "OwningEntity": "Dell",
        "RegistryVersion": "1.0.3",
        "RegistryEntries": {
            "Attributes": [
                model, tag,
                enumeration("SysProfile", &["PerfOptimized", "Custom"], false, false),
                enumeration("ProcVirtualization", &["Enabled", "Disabled"], false, false),
                enumeration("ProcAts", &["Enabled", "Disabled"], false, false),
                enumeration("Sgx", &["Off", "On"], false, false),
                {"AttributeName": "SgxEpoch0", "Type": "Integer", "ReadOnly": false, "Hidden": true,
                 "Immutable": false, "LowerBound": 0, "UpperBound": U64_MAX, "ScalarIncrement": 0},
                {"AttributeName": "SgxEpoch1", "Type": "Integer", "ReadOnly": false, "Hidden": true,
                 "Immutable": false, "LowerBound": 0, "UpperBound": U64_MAX, "ScalarIncrement": 0},
                enumeration("PxeDev5EnDis", &["Enabled", "Disabled"], false, true),
                enumeration("PxeDev5Protocol", &["IPv4", "IPv6"], true, false),
            ],
            "Dependencies": [
                rule("ProcAts", "Value", json!([{"ValueName": "Disabled", "ValueDisplayName": "Disabled"}]),
                     "ProcVirtualization", "Disabled"),
                rule("SgxEpoch0", "Hidden", json!(true), "Sgx", "Off"),
                // Reads a hidden attribute whose value the tree does not give.
                rule("PxeDev5Protocol", "ReadOnly", json!(true), "PxeDev5EnDis", "Disabled"),
            ],
            "Menus": []}}),
    );
    put(
        root,
        "/redfish/v1/Registries/BiosAttributeRegistry.v1_0_3",
        &json!({
        "@odata.id": "/redfish/v1/Registries/BiosAttributeRegistry.v1_0_3",
        "@odata.type": "#MessageRegistryFile.v1_1_0.MessageRegistryFile", "Id": "BiosAttributeRegistry.v1_0_3",
        "Location": [{"Language": "en", "Uri": dell::BIOS_REGISTRY}]}),
    );
    put(
        root,
        "/redfish/v1/Managers",
        &json!({
        "@odata.id": "/redfish/v1/Managers", "Members": [link(manager)], "Members@odata.count": 1}),
    );
    put(
        root,
        manager,
        &json!({
        "@odata.id": manager, "@odata.type": "#Manager.v1_17_0.Manager", "Id": "iDRAC.Embedded.1",
        "FirmwareVersion": "7.10.30.00", "Model": "15G Monolithic", "ManagerType": "BMC",
        "Links": {"Oem": {"Dell": {"Jobs": link(&format!("{manager}/Oem/Dell/Jobs"))}}}}),
    );
    put(
        root,
        &format!("{manager}/Oem/Dell/Jobs"),
        &json!({
        "@odata.id": format!("{manager}/Oem/Dell/Jobs"), "@odata.type": "#DellJobCollection.DellJobCollection",
        "Name": "JobQueue", "Members": [], "Members@odata.count": 0}),
    );
    put(
        root,
        &dell::AttributeGroup::Idrac.path(),
        &json!({
        "@odata.id": dell::AttributeGroup::Idrac.path(), "@odata.type": "#DellAttributes.v1_0_0.DellAttributes",
        "Id": "iDRAC.Embedded.1",
        "Attributes": {"Lockdown.1.SystemLockdown": "Disabled", "Info.1.Version": "7.10.30.00"}}),
    );
}

/// PATCHes `Bios/Settings`; the iDRAC MessageId of the refusal, if refused.
async fn refusal(url: &str, attributes: Value) -> Option<&'static str> {
    let err = client(url)
        .patch(dell::BIOS_SETTINGS, &json!({ "Attributes": attributes }))
        .await
        .err()?;
    assert_eq!(err.status(), Some(400), "{err}");
    ["SYS426", "SYS427", "SYS429", "SYS417", "SYS424"]
        .into_iter()
        .find(|code| err.has_code(code))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tree_with_real_shapes_serves_visible_values_and_enforces_its_rules() {
    let dir = TempDir::new();
    write_tree(&dir.0);
    let fleet = idrac_sim::Fleet::start(idrac_sim::SimConfig {
        model: idrac_sim::ModelSource::Dir(dir.0.clone()),
        tls: false,
        boot_time: std::time::Duration::from_millis(600),
        ..idrac_sim::SimConfig::default()
    })
    .await
    .unwrap();
    let url = &fleet.hosts()[0].url;
    let c = client(url);
    let bios = c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    let listed: Vec<&str> = bios.attributes.keys().map(String::as_str).collect();
    assert_eq!(
        listed,
        [
            "ProcAts",
            "ProcVirtualization",
            "PxeDev5Protocol",
            "Sgx",
            "SysProfile",
            "SystemModelName",
            "SystemServiceTag"
        ]
    );
    let (held, _, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(held["SgxEpoch1"], 0.into(), "inferred: the lower bound");
    assert_eq!(
        held["PxeDev5EnDis"],
        "Disabled".into(),
        "deduced: Enabled is listed first, but only Disabled explains PxeDev5Protocol's recorded ReadOnly"
    );

    // The Value rule, the u64 bound, a hidden attribute, and a flag whose rule reads a hidden value.
    assert_eq!(
        refusal(url, json!({"ProcVirtualization": "Disabled", "ProcAts": "Enabled"})).await,
        Some("SYS426"),
        "the Value rule"
    );
    assert_eq!(
        refusal(url, json!({"SgxEpoch1": U64_MAX})).await,
        Some("SYS427"),
        "hidden"
    );
    assert_eq!(
        refusal(url, json!({"PxeDev5Protocol": "IPv6"})).await,
        Some("SYS427"),
        "the rule reads a hidden value, so the recorded ReadOnly stands"
    );
    assert_eq!(
        refusal(url, json!({"Sgx": "On", "SgxEpoch0": U64_MAX})).await,
        None,
        "unhidden in the same request, u64::MAX in bounds"
    );

    // Jobs live where this tree's Manager says, and run.
    let job = c.dell().create_bios_job().await.unwrap();
    let listed: Value = c
        .get_value("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs")
        .await
        .unwrap();
    assert_eq!(listed["Members@odata.count"], 1, "{listed}");
    let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::ForceRestart).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let bios = loop {
        let done = c
            .dell()
            .job(job.last_segment())
            .await
            .ok()
            .is_some_and(|j| j.outcome().is_final());
        if done && let Ok(b) = c.bios(&ODataId::new(dell::BIOS)).await {
            break b;
        }
        assert!(std::time::Instant::now() < deadline, "the job did not finish");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(bios.attributes["Sgx"], "On".into());
    assert_eq!(
        bios.attributes["SgxEpoch0"].as_integer(),
        Some(i128::from(U64_MAX)),
        "shown once Sgx = On unhides it"
    );
    assert!(!bios.attributes.contains_key("SgxEpoch1"));
}

#[tokio::test(flavor = "multi_thread")]
async fn sim_serves_a_fixture_directory_that_bios_get_and_inventory_read() {
    let dir = TempDir::new();
    write_tree(&dir.0);
    let mut child = tokio::process::Command::new(binary())
        .args([
            "sim",
            "--http",
            "--listen",
            "127.0.0.1:0",
            "--exit-after",
            "120s",
            "--fixture",
        ])
        .arg(&dir.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next_line().await.unwrap().unwrap();
    let url = line.strip_prefix("rftune-sim: listening ").unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    let out = Run::new(&["bios", "get", "--bmc", &url, "-o", "json"]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("PerfOptimized") && text.contains("ProcAts"), "{text}");
    assert!(!text.contains("SgxEpoch"), "hidden attributes are not listed: {text}");
    let out = Run::new(&["inventory", "--bmc", &url, "-o", "json"]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Each emulated host gets its own tag, derived from the tree's.
    let tag = idrac_sim::host::service_tag("TREE001", 0);
    assert_eq!(
        (doc["model"].as_str(), doc["service_tag"].as_str()),
        (Some("PowerEdge R750"), Some(tag.as_str()))
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn unusable_fixture_directories_are_named_in_the_error() {
    let dir = TempDir::new();
    let tree = dir.0.display().to_string();
    // Not a tree at all.
    let out = Run::new(&["sim", "--http", "--listen", "127.0.0.1:0", "--fixture", &tree])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&dir.0.join("redfish/v1/index.json").display().to_string()) && err.contains("DIR/redfish/v1"),
        "{err}"
    );
    // A tree whose Bios is not JSON, then one whose registry has the wrong shape.
    write_tree(&dir.0);
    let bios_file = dir.0.join("redfish/v1/Systems/System.Embedded.1/Bios/index.json");
    std::fs::write(&bios_file, b"{\"Attributes\": ").unwrap();
    let out = Run::new(&["sim", "--http", "--listen", "127.0.0.1:0", "--fixture", &tree])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&bios_file.display().to_string()) && err.contains("not JSON"),
        "{err}"
    );
    write_tree(&dir.0);
    let registry_file = dir
        .0
        .join("redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry/index.json");
    std::fs::write(
        &registry_file,
        br#"{"Id": "x", "RegistryEntries": {"Attributes": [{"AttributeName": 7}]}}"#,
    )
    .unwrap();
    let out = Run::new(&["sim", "--http", "--listen", "127.0.0.1:0", "--fixture", &tree])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&registry_file.display().to_string())
            && err.contains("RegistryEntries.Attributes[0].AttributeName"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // A model name that is neither built in nor a directory.
    let out = Run::new(&["sim", "--http", "--model", "r9999"]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("built-in models: c6615, dl385, r7525, r7625"),
        "{}",
        stderr(&out)
    );
}
