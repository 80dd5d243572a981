//! The built-in ProLiant DL385 Gen10 Plus v2 (dl385) answers as HPE's iLO 5: each behaviour as
//! the recorded host or HPE's documents show it, over raw HTTP (statuses, headers and bodies
//! are the point).

use super::{config, eventually, raw, start};
use idrac_sim::{Fleet, ModelSource, SimConfig};
use serde_json::{Value, json};

const SYSTEM: &str = "/redfish/v1/Systems/1";
const BIOS: &str = "/redfish/v1/systems/1/bios/";
const SETTINGS: &str = "/redfish/v1/systems/1/bios/settings/";
const RESET: &str = "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset";

async fn dl385() -> Fleet {
    start(SimConfig {
        model: ModelSource::Builtin("dl385".into()),
        ..config()
    })
    .await
}

/// One answer: status, headers of interest, JSON body (`null` when none).
struct Answer {
    status: u16,
    etag: Option<String>,
    location: Option<String>,
    encoding: Option<String>,
    body: Value,
}

/// `method` on `path` with Basic credentials (iLO takes them), `body` as JSON, and `headers`.
async fn send(url: &str, method: &str, path: &str, body: Option<Value>, headers: &[(&str, &str)]) -> Answer {
    let r = super::conformance::send(url, method, path, headers, body).await;
    let header = |name: &str| r.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (etag, location, encoding) = (header("ETag"), header("Location"), header("Content-Encoding"));
    Answer {
        status: r.status().as_u16(),
        etag,
        location,
        encoding,
        body: r.json().await.unwrap_or(Value::Null),
    }
}

/// `PATCH path` with `body`.
async fn patch(url: &str, path: &str, body: Value) -> Answer {
    send(url, "PATCH", path, Some(body), &[]).await
}

async fn get(url: &str, path: &str) -> Answer {
    send(url, "GET", path, None, &[]).await
}

fn ids(body: &Value) -> Vec<&str> {
    body["error"]["@Message.ExtendedInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["MessageId"].as_str().unwrap())
        .collect()
}

/// Resets the system and waits until iLO reports `FinishedPost`.
async fn reset_and_wait(url: &str) {
    let r = send(url, "POST", RESET, Some(json!({"ResetType": "ForceRestart"})), &[]).await;
    assert_eq!((r.status, ids(&r.body)), (200, vec!["Base.1.4.Success"]));
    eventually("FinishedPost", || async {
        let s = get(url, SYSTEM).await;
        (s.body["Oem"]["Hpe"]["PostState"] == "FinishedPost").then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_service_root_names_an_ilo_5_and_paths_match_in_any_spelling() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let root = raw().get(format!("{url}/redfish/v1/")).send().await.unwrap();
    assert_eq!(root.status(), 200, "the root answers without credentials");
    let root: Value = root.json().await.unwrap();
    assert_eq!(root["Vendor"], "HPE");
    assert_eq!(root["Oem"]["Hpe"]["Manager"][0]["ManagerType"], "iLO 5");
    assert!(root["Oem"].get("Dell").is_none(), "no Dell service tag on an iLO");
    // The system's Bios link has no slash and lower case; the Bios's own id has both.
    let system = get(url, SYSTEM).await;
    assert_eq!(system.body["Bios"]["@odata.id"], "/redfish/v1/systems/1/bios");
    for spelling in [
        "/redfish/v1/Systems/1/Bios",
        "/redfish/v1/systems/1/bios",
        BIOS,
        "/REDFISH/V1/SYSTEMS/1/BIOS/",
    ] {
        let b = get(url, spelling).await;
        assert_eq!(b.status, 200, "{spelling}");
        assert_eq!(b.body["@odata.id"], BIOS, "{spelling}");
    }
    assert_eq!(system.body["Oem"]["Hpe"]["PostState"], "FinishedPost");
    // Members expanded through their links, whatever their spelling (one level, as iLO).
    let memory = get(url, "/redfish/v1/Systems/1/Memory?$expand=.($levels=1)").await;
    let present = memory.body["Members"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["CapacityMiB"].as_u64().unwrap_or(0) > 0)
        .count();
    assert_eq!(present, 16, "{}", memory.body);
    // Errors come in iLO's envelope: ids and arguments only.
    let missing = get(url, "/redfish/v1/Systems/2").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body["error"]["code"], "iLO.0.10.ExtendedInfo");
    assert_eq!(ids(&missing.body), vec!["Base.1.4.ResourceMissingAtURI"]);
    assert!(
        missing.body["error"]["@Message.ExtendedInfo"][0]
            .get("Severity")
            .is_none()
    );
    let denied = raw().get(format!("{url}{SYSTEM}")).send().await.unwrap();
    assert_eq!(denied.status(), 401);
    let denied: Value = denied.json().await.unwrap();
    assert_eq!(ids(&denied), vec!["Base.1.4.NoValidSession"]);
}

#[tokio::test]
async fn a_session_has_an_ilo_id_an_absolute_location_and_ends_with_delete() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let login = raw()
        .post(format!("{url}/redfish/v1/SessionService/Sessions/"))
        .json(&json!({"UserName": "root", "Password": "calvin"}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 201);
    let token = login.headers()["X-Auth-Token"].to_str().unwrap().to_owned();
    let location = login.headers()["Location"].to_str().unwrap().to_owned();
    assert!(
        location.starts_with(&format!("{url}/redfish/v1/SessionService/Sessions/root")),
        "{location}"
    );
    assert!(location.ends_with('/'), "{location}");
    let id = location.trim_end_matches('/').rsplit('/').next().unwrap().to_owned();
    assert_eq!(id.len(), "root".len() + 24, "{id}");
    let with_token = |m: reqwest::Method, u: String| raw().request(m, u).header("X-Auth-Token", &token);
    let list: Value = with_token(
        reqwest::Method::GET,
        format!("{url}/redfish/v1/SessionService/Sessions"),
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        list["Members"][0]["@odata.id"],
        format!("/redfish/v1/SessionService/Sessions/{id}")
    );
    assert_eq!(
        list["Oem"]["Hpe"]["Links"]["MySession"]["@odata.id"],
        format!("/redfish/v1/SessionService/Sessions/{id}")
    );
    let out = with_token(reqwest::Method::DELETE, location.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    let after = with_token(reqwest::Method::GET, format!("{url}{SYSTEM}"))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 401, "the token died with its session");
    let bad = raw()
        .post(format!("{url}/redfish/v1/SessionService/Sessions"))
        .json(&json!({"UserName": "root", "Password": "wrong"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    assert_eq!(
        ids(&bad.json().await.unwrap()),
        vec!["iLO.2.15.UnauthorizedLoginAttempt"]
    );
}

#[tokio::test]
async fn the_settings_object_is_a_full_copy_that_takes_anything_and_only_a_system_reset_applies_it() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let current = get(url, BIOS).await;
    let settings = get(url, SETTINGS).await;
    assert_eq!(
        current.body["Attributes"], settings.body["Attributes"],
        "a full copy, nothing pending"
    );
    assert_eq!(
        current.body["Oem"]["Hpe"]["SettingsObject"]["UnmodifiedETag"].as_str(),
        settings.etag.as_deref(),
        "nothing written: the settings' tag is the unmodified one"
    );
    assert_eq!(settings.etag.as_deref(), settings.body["@odata.etag"].as_str());
    let before_time = current.body["@Redfish.Settings"]["Time"].clone();
    // Under the GeneralPowerEfficientCompute preset, AdminName is free, ApplicationPowerBoost
    // is forced Enabled; Dhcpv8 does not exist; ProcSMT takes no "Sometimes".
    let r = patch(
        url,
        SETTINGS,
        json!({"Attributes": {
            "AdminName": "ops", "ApplicationPowerBoost": "Disabled", "Dhcpv8": "Enabled", "ProcSMT": "Sometimes"
        }}),
    )
    .await;
    assert_eq!((r.status, ids(&r.body)), (200, vec!["iLO.2.15.SystemResetRequired"]));
    let settings = get(url, SETTINGS).await;
    let written = &settings.body["Attributes"];
    assert_eq!(written["AdminName"], "ops");
    assert_eq!(written["Dhcpv8"], "Enabled", "nonsense is kept until POST judges it");
    assert_eq!(
        written.as_object().unwrap().len(),
        current.body["Attributes"].as_object().unwrap().len() + 1,
        "every setting is still there"
    );
    let bios = get(url, BIOS).await;
    assert_eq!(bios.body["Attributes"]["AdminName"], "", "current until POST");
    assert_ne!(
        bios.body["Oem"]["Hpe"]["SettingsObject"]["UnmodifiedETag"].as_str(),
        settings.etag.as_deref(),
        "something was written"
    );
    // An iLO restart leaves it pending.
    let managers = send(
        url,
        "POST",
        "/redfish/v1/Managers/1/Actions/Manager.Reset",
        Some(json!({"ResetType": "GracefulRestart"})),
        &[],
    )
    .await;
    assert_eq!(managers.status, 200);
    let back = eventually("the iLO back", || async {
        let r = raw()
            .get(format!("{url}{BIOS}"))
            .basic_auth("root", Some("calvin"))
            .send()
            .await
            .ok()?;
        r.json::<Value>().await.ok()
    })
    .await;
    assert_eq!(back["Attributes"]["AdminName"], "");
    assert_eq!(back["@Redfish.Settings"]["Time"], before_time);
    reset_and_wait(url).await;
    let bios = get(url, BIOS).await;
    let attrs = &bios.body["Attributes"];
    assert_eq!(attrs["AdminName"], "ops", "the valid value is applied");
    assert_eq!(attrs["ApplicationPowerBoost"], "Enabled", "the preset keeps its value");
    assert_eq!(attrs["ProcSMT"], "Enabled");
    assert!(attrs.get("Dhcpv8").is_none());
    let outcome = &bios.body["@Redfish.Settings"];
    assert_ne!(outcome["Time"], before_time, "the POST processed the settings");
    let messages = outcome["Messages"].as_array().unwrap();
    assert_eq!(messages[0]["MessageId"], "Base.1.0.Success");
    let related: Vec<(&str, &str)> = messages[1..]
        .iter()
        .map(|m| {
            (
                m["MessageId"].as_str().unwrap(),
                m["RelatedProperties"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        related,
        vec![
            ("Base.1.0.PropertyUnknown", "#/Dhcpv8"),
            ("Base.1.0.PropertyValueNotInList", "#/ProcSMT"),
            ("iLO.2.15.PropertyValueIncompatible", "#/ApplicationPowerBoost"),
        ]
    );
    assert_eq!(
        messages[3]["MessageArgs"],
        json!(["Disabled", "ApplicationPowerBoost", "WorkloadProfile"])
    );
    let settings = get(url, SETTINGS).await;
    assert_eq!(
        settings.body["Attributes"], bios.body["Attributes"],
        "nothing left pending"
    );
    assert_eq!(
        bios.body["Oem"]["Hpe"]["SettingsObject"]["UnmodifiedETag"].as_str(),
        settings.etag.as_deref()
    );
    // A reset with nothing written processes nothing: Time stays.
    reset_and_wait(url).await;
    assert_eq!(get(url, BIOS).await.body["@Redfish.Settings"]["Time"], outcome["Time"]);
}

#[tokio::test]
async fn the_custom_escape_lets_a_preset_locked_value_through_and_presets_force_their_set() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let r = patch(url, SETTINGS, json!({"Attributes": {"WorkloadProfile": "Custom", "ApplicationPowerBoost": "Disabled", "ProcSMT": "Disabled"}}))
    .await;
    assert_eq!(r.status, 200);
    reset_and_wait(url).await;
    let bios = get(url, BIOS).await;
    assert_eq!(
        bios.body["@Redfish.Settings"]["Messages"],
        json!([{"MessageId": "Base.1.0.Success"}])
    );
    let attrs = &bios.body["Attributes"];
    assert_eq!(
        (attrs["ApplicationPowerBoost"].as_str(), attrs["ProcSMT"].as_str()),
        (Some("Disabled"), Some("Disabled"))
    );
    // HighPerformanceCompute(HPC) forces its set at the next POST.
    patch(
        url,
        SETTINGS,
        json!({"Attributes": {"WorkloadProfile": "HighPerformanceCompute(HPC)"}}),
    )
    .await;
    reset_and_wait(url).await;
    let attrs = get(url, BIOS).await.body["Attributes"].clone();
    assert_eq!(attrs["PowerRegulator"], "StaticHighPerf");
    assert_eq!(attrs["NumaMemoryDomainsPerSocket"], "FourMemoryDomainsPerSocket");
    assert_eq!(attrs["NumaGroupSizeOpt"], "Clustered");
}

#[tokio::test]
async fn actions_answer_at_their_advertised_targets_and_defaults_and_passwords_wait_for_post() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let bios = get(url, BIOS).await;
    let target = |a: &str| bios.body["Actions"][a]["target"].as_str().unwrap().to_owned();
    assert!(target("#Bios.ChangePassword").ends_with("/Bios.ChangePasswords/"));
    patch(url, SETTINGS, json!({"Attributes": {"AdminName": "ops"}})).await;
    reset_and_wait(url).await;
    // The path built from the action's name is not served.
    let built = send(
        url,
        "POST",
        "/redfish/v1/systems/1/bios/Actions/Bios.ChangePassword",
        Some(json!({})),
        &[],
    )
    .await;
    assert_eq!(built.status, 404);
    let pw = |old: &str, new: &str| json!({"PasswordName": "Administrator", "OldPassword": old, "NewPassword": new});
    let r = send(
        url,
        "POST",
        &target("#Bios.ChangePassword"),
        Some(pw("", "s3cret")),
        &[],
    )
    .await;
    assert_eq!((r.status, ids(&r.body)), (200, vec!["iLO.2.15.SystemResetRequired"]));
    let r = send(url, "POST", &target("#Bios.ResetBios"), None, &[]).await;
    assert_eq!((r.status, ids(&r.body)), (200, vec!["iLO.2.15.SystemResetRequired"]));
    assert_eq!(
        get(url, BIOS).await.body["Attributes"]["AdminName"],
        "ops",
        "defaults wait for POST"
    );
    reset_and_wait(url).await;
    assert_eq!(
        get(url, BIOS).await.body["Attributes"]["AdminName"],
        "",
        "the registry's default"
    );
    let wrong = send(url, "POST", &target("#Bios.ChangePassword"), Some(pw("", "other")), &[]).await;
    assert_eq!(
        (wrong.status, ids(&wrong.body)),
        (400, vec!["iLO.2.15.BiosPasswordMismatch"])
    );
}

#[tokio::test]
async fn the_registry_is_found_through_the_registries_collection_and_sent_gzip_encoded() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let id = get(url, BIOS).await.body["AttributeRegistry"]
        .as_str()
        .unwrap()
        .to_owned();
    let member = get(url, &format!("/redfish/v1/Registries/{id}")).await;
    let uri = member.body["Location"][0]["Uri"].as_str().unwrap().to_owned();
    // reqwest here inflates nothing: the bytes are what iLO sends, gzip even though identity
    // was asked for.
    let r = raw()
        .get(format!("{url}{uri}"))
        .basic_auth("root", Some("calvin"))
        .header("Accept-Encoding", "identity")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["Content-Encoding"], "gzip");
    let bytes = r.bytes().await.unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text).unwrap();
    let registry: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(registry["Id"], id);
    assert!(registry["RegistryEntries"]["Dependencies"].as_array().unwrap().len() > 100);
    let head = send(url, "GET", &uri, None, &[]).await;
    assert_eq!(head.encoding.as_deref(), Some("gzip"));
}

#[tokio::test]
async fn if_match_guards_the_settings_object_and_boot_is_written_on_the_system() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let settings = get(url, SETTINGS).await;
    let stale = send(
        url,
        "PATCH",
        SETTINGS,
        Some(json!({"Attributes": {"AdminName": "a"}})),
        &[("If-Match", "\"1103906B\"")],
    )
    .await;
    assert_eq!(stale.status, 412);
    let tag = settings.etag.unwrap();
    let fresh = send(
        url,
        "PATCH",
        SETTINGS,
        Some(json!({"Attributes": {"AdminName": "a"}})),
        &[("If-Match", &tag)],
    )
    .await;
    assert_eq!(fresh.status, 200);
    // A one-time boot applies at once; a boot order waits for POST.
    let system = get(url, SYSTEM).await;
    let mut order: Vec<Value> = system.body["Boot"]["BootOrder"].as_array().unwrap().clone();
    order.reverse();
    let r = patch(
        url,
        SYSTEM,
        json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}}),
    )
    .await;
    assert_eq!((r.status, ids(&r.body)), (200, vec!["Base.1.4.Success"]));
    assert_eq!(get(url, SYSTEM).await.body["Boot"]["BootSourceOverrideTarget"], "Pxe");
    let r = patch(url, SYSTEM, json!({"Boot": {"BootOrder": order}})).await;
    assert_eq!((r.status, ids(&r.body)), (200, vec!["iLO.2.15.SystemResetRequired"]));
    let bad = patch(url, SYSTEM, json!({"Boot": {"BootOrder": ["Boot9999"]}})).await;
    assert_eq!(bad.status, 400);
    reset_and_wait(url).await;
    let system = get(url, SYSTEM).await;
    assert_eq!(system.body["Boot"]["BootOrder"], json!(order));
    assert_eq!(
        system.body["Boot"]["BootSourceOverrideTarget"], "None",
        "the one-time boot was used"
    );
    let _ = fleet.hosts()[0].host.stats.to_json("x");
    let _ = settings.location;
}

#[tokio::test]
async fn a_mixed_fleet_serves_dell_and_hpe_hosts_side_by_side_numbered_through_the_fleet() {
    let fleet = start(SimConfig {
        model: ModelSource::Builtin("r7625".into()),
        hosts: 1,
        more: vec![(ModelSource::Builtin("dl385".into()), 2)],
        ..config()
    })
    .await;
    let names: Vec<&str> = fleet.hosts().iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, vec!["r7625-0001", "dl385-0002", "dl385-0003"]);
    let mut vendors = Vec::new();
    for h in fleet.hosts() {
        let root: Value = raw()
            .get(format!("{}/redfish/v1", h.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        vendors.push(root["Vendor"].as_str().unwrap_or("Dell").to_owned());
    }
    assert_eq!(vendors, vec!["Dell", "HPE", "HPE"]);
    let serials: Vec<Value> = [1, 2]
        .iter()
        .map(|i| fleet.hosts()[*i].host.service_tag.clone().into())
        .collect();
    assert_ne!(serials[0], serials[1], "each ProLiant has its own serial number");
    assert_eq!(
        get(&fleet.hosts()[2].url, SYSTEM).await.body["SerialNumber"],
        serials[1]
    );
}

/// A public mockup names its system only through the Systems collection (the generated tree is
/// laid out as one): served from its directory, it behaves as the built-in model.
#[tokio::test]
async fn a_mockup_directory_without_system_embedded_1_is_served_through_its_systems_collection() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/dl385");
    let fleet = start(SimConfig {
        model: ModelSource::Dir(dir),
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    assert_eq!(fleet.hosts()[0].name, "dl385-0001");
    let places = &fleet.hosts()[0].host.fixture.places;
    assert_eq!(
        (places.system.as_str(), places.bios.as_str(), places.settings.as_str()),
        (
            "/redfish/v1/systems/1",
            "/redfish/v1/systems/1/bios",
            "/redfish/v1/systems/1/bios/settings"
        )
    );
    patch(url, SETTINGS, json!({"Attributes": {"AdminName": "from-dir"}})).await;
    reset_and_wait(url).await;
    assert_eq!(get(url, BIOS).await.body["Attributes"]["AdminName"], "from-dir");
}

/// The body of a gzip-encoded answer, inflated.
async fn inflated(url: &str, path: &str) -> (Option<String>, Value) {
    let r = raw()
        .get(format!("{url}{path}"))
        .basic_auth("root", Some("calvin"))
        .header("Accept-Encoding", "identity")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{path}");
    let encoding = r
        .headers()
        .get("Content-Encoding")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = r.bytes().await.unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text).unwrap();
    (encoding, serde_json::from_str(&text).unwrap())
}

#[tokio::test]
async fn the_message_registries_its_ids_name_are_listed_beside_the_bios_one_and_sent_gzip_encoded() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let listing = get(url, "/redfish/v1/Registries?$expand=.($levels=1)").await;
    assert_eq!(listing.status, 200);
    let members = listing.body["Members"].as_array().unwrap();
    assert_eq!(listing.body["Members@odata.count"], members.len());
    let registries: Vec<&str> = members.iter().map(|m| m["Registry"].as_str().unwrap()).collect();
    assert_eq!(
        registries,
        ["BiosAttributeRegistryA42.v1_2_60", "Base.1.4.0", "iLO.2.15.0"],
        "the BIOS registry as recorded, then the message registries"
    );
    for (member, prefix, key) in [
        (&members[1], "Base", "UnrecognizedRequestBody"),
        (&members[2], "iLO", "BiosPasswordMismatch"),
    ] {
        let uri = member["Location"][0]["Uri"].as_str().unwrap();
        assert_eq!(uri, format!("/redfish/v1/RegistryStore/registries/en/{prefix}.json"));
        let (encoding, file) = inflated(url, uri).await;
        assert_eq!(encoding.as_deref(), Some("gzip"), "{uri}");
        assert_eq!(file["RegistryPrefix"], prefix);
        let entry = &file["Messages"][key];
        assert!(
            entry["Message"].is_string() && entry["Resolution"].is_string(),
            "{entry}"
        );
    }
    // Marked as the emulator's, so that a capture of it leaves them out.
    let r = raw()
        .get(format!("{url}/redfish/v1/Registries/iLO"))
        .basic_auth("root", Some("calvin"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["X-Rftune-Synthesised"], "document");
    let r = raw()
        .get(format!("{url}/redfish/v1/Registries"))
        .basic_auth("root", Some("calvin"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["X-Rftune-Synthesised"], "/Members/1, /Members/2");
}

/// The requests the host counted for `path` with `method`.
async fn counted(url: &str, method: &str, path: &str) -> u64 {
    let stats: Value = raw()
        .get(format!("{url}/_sim/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    stats["requests"]["by_path"][format!("{method} {path}")]
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test]
async fn a_client_reads_an_ilo_refusal_in_words_and_reads_each_registry_once() {
    let fleet = dl385().await;
    let url = &fleet.hosts()[0].url;
    let client = super::client(&fleet, 0);
    // A body without `Attributes`: Base's UnrecognizedRequestBody.
    let refused = client
        .patch(SETTINGS, &json!({"ProcSMT": "Disabled"}))
        .await
        .unwrap_err();
    let text = refused.to_string();
    assert!(
        text.ends_with(
            "HTTP 400: [UnrecognizedRequestBody] The request body is not one this resource takes. Resolution: Send the body the resource documents."
        ),
        "{text}"
    );
    // A reset type the system does not list: iLO's ActionParameterValueNotInList, with the
    // arguments in the text.
    let refused = client.post(RESET, &json!({"ResetType": "Sideways"})).await.unwrap_err();
    let text = refused.to_string();
    assert!(
        text.ends_with(
            "HTTP 400: [ActionParameterValueNotInList] The action does not take the value Sideways for its parameter ResetType. Resolution: Use one of the values the action lists for the parameter."
        ),
        "{text}"
    );
    // Again: the registries are not read again.
    client
        .patch(SETTINGS, &json!({"ProcSMT": "Disabled"}))
        .await
        .unwrap_err();
    client.post(RESET, &json!({"ResetType": "Sideways"})).await.unwrap_err();
    assert_eq!(
        (
            counted(url, "GET", "/redfish/v1/registries").await,
            counted(url, "GET", "/redfish/v1/registrystore/registries/en/base.json").await,
            counted(url, "GET", "/redfish/v1/registrystore/registries/en/ilo.json").await,
            counted(url, "GET", "/redfish/v1/registries/ilo").await,
        ),
        (1, 1, 1, 0),
        "the collection once with its members inline, each file once"
    );
}
