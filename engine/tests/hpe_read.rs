//! An HPE iLO read and judged through the engine, against a service shaped as the recorded
//! ProLiant DL385 Gen10 Plus v2 (iLO 5 2.72, ROM A42 v2.60): its service root's `Oem.Hpe`,
//! `Systems/1` with lower-case BIOS links, a settings object that copies every value, the
//! registry found through `Registries` and sent gzip-encoded. It is recognised as an iLO, its
//! identity and CPU read from the system, a shipped profile judged in HPE's names through the
//! binding, and a second run starts from what the first found. The values are the
//! hand-derived A42 data bios-profiles' tests use.
#![allow(clippy::unwrap_used)]

use flate2::Compression;
use flate2::write::GzEncoder;
use rftune_engine::assess::{Assess, LoadedProfile};
use rftune_engine::backend::Kind;
use rftune_engine::connect::ConnectConfig;
use rftune_engine::observe::Silent;
use rftune_engine::{Access, BmcEntry, StateDirs};
use rftune_tests::TempDir;
use serde_json::{Value, json};
use std::io::Write;
use std::sync::Arc;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

const REGISTRY_ID: &str = "BiosAttributeRegistryA42.v1_2_60";
const REGISTRY_FILE: &str = "/redfish/v1/registrystore/registries/en/biosattributeregistrya42.v1_2_60";

fn data(name: &str) -> Value {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bios-profiles/tests/data")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

fn gzip(body: &Value) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(&serde_json::to_vec(body).unwrap()).unwrap();
    encoder.finish().unwrap()
}

/// `path`, with or without a trailing slash (iLO answers both).
fn at(path: &str) -> wiremock::matchers::PathRegexMatcher {
    path_regex(format!("^{}/?$", path.trim_end_matches('/').replace('.', "\\.")))
}

async fn get(server: &MockServer, path: &str, body: Value) {
    Mock::given(method("GET"))
        .and(at(path))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(server)
        .await;
}

/// An iLO 5 serving the DL385's shapes; its pending area changes `ProcSMT` only.
async fn ilo() -> MockServer {
    let server = MockServer::start().await;
    let uri = server.uri();
    get(
        &server,
        "/redfish/v1",
        json!({
            "@odata.id": "/redfish/v1/", "RedfishVersion": "1.6.0", "Vendor": "HPE",
            "Product": "ProLiant DL385 Gen10 Plus v2",
            "Systems": {"@odata.id": "/redfish/v1/Systems"},
            "Registries": {"@odata.id": "/redfish/v1/Registries"},
            "Links": {"Sessions": {"@odata.id": "/redfish/v1/SessionService/Sessions"}},
            "Oem": {"Hpe": {"Manager": [{"ManagerType": "iLO 5", "ManagerFirmwareVersion": "2.72"}]}}
        }),
    )
    .await;
    Mock::given(method("POST"))
        .and(at("/redfish/v1/SessionService/Sessions"))
        .respond_with(
            ResponseTemplate::new(201)
                .insert_header("X-Auth-Token", "ilo-token")
                .insert_header(
                    "Location",
                    format!("{uri}/redfish/v1/SessionService/Sessions/root0000000066ab958288190bb4/").as_str(),
                )
                .set_body_json(json!({})),
        )
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(at("/redfish/v1/SessionService/Sessions/root0000000066ab958288190bb4/"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(&server)
        .await;
    get(
        &server,
        "/redfish/v1/Systems",
        json!({"Members": [{"@odata.id": "/redfish/v1/Systems/1"}], "Members@odata.count": 1}),
    )
    .await;
    get(
        &server,
        "/redfish/v1/Systems/1",
        json!({
            "@odata.id": "/redfish/v1/Systems/1", "Id": "1", "Manufacturer": "HPE",
            "Model": "ProLiant DL385 Gen10 Plus v2", "SerialNumber": "CZ2D1X0ABC",
            "BiosVersion": "A42 v2.60 (08/11/2022)", "PowerState": "On",
            "ProcessorSummary": {"Count": 2, "CoreCount": 128, "Model": "AMD EPYC 7763 64-Core Processor                "},
            "Bios": {"@odata.id": "/redfish/v1/systems/1/bios"},
            "Memory": {"@odata.id": "/redfish/v1/Systems/1/Memory"},
            "Oem": {"Hpe": {"PostState": "FinishedPost", "Bios": {"Current": {"Family": "A42"}}}}
        }),
    )
    .await;
    // 16 of 32 slots: eight 64 GiB DDR4-3200 DIMMs per socket, one per channel.
    let dimms: Vec<Value> = (1..=2)
        .flat_map(|socket| {
            (1..=16).map(move |slot| {
                let id = format!("proc{socket}dimm{slot}");
                let present = slot % 2 == 0;
                json!({
                    "@odata.id": format!("/redfish/v1/Systems/1/Memory/{id}"), "Id": id,
                    "CapacityMiB": if present { 65536 } else { 0 },
                    "MemoryDeviceType": "DDR4", "OperatingSpeedMhz": 3200,
                    "MemoryLocation": {"Socket": socket, "MemoryController": (slot + 1) / 4, "Channel": (slot + 1) / 2, "Slot": slot},
                    "Status": {"State": if present { "Enabled" } else { "Absent" }}
                })
            })
        })
        .collect();
    get(
        &server,
        "/redfish/v1/Systems/1/Memory",
        json!({"Members": dimms, "Members@odata.count": 32}),
    )
    .await;
    let current = data("hpe-a42-current.json");
    let mut pending = current.clone();
    pending["ProcSMT"] = json!("Disabled");
    get(
        &server,
        "/redfish/v1/systems/1/bios",
        json!({
            "@odata.id": "/redfish/v1/systems/1/bios/", "Id": "bios",
            "AttributeRegistry": REGISTRY_ID, "Attributes": current,
            "@Redfish.Settings": {
                "ETag": "1103906B", "Messages": [{"MessageId": "Base.1.0.Success"}],
                "SettingsObject": {"@odata.id": "/redfish/v1/systems/1/bios/settings/"},
                "Time": "2024-06-10T20:01:29+00:00"
            },
            "Actions": {
                "#Bios.ChangePassword": {"target": "/redfish/v1/systems/1/bios/settings/Actions/Bios.ChangePasswords/"},
                "#Bios.ResetBios": {"target": "/redfish/v1/systems/1/bios/settings/Actions/Bios.ResetBios/"}
            }
        }),
    )
    .await;
    get(
        &server,
        "/redfish/v1/systems/1/bios/settings/",
        json!({"@odata.id": "/redfish/v1/systems/1/bios/settings/", "Id": "settings", "Attributes": pending}),
    )
    .await;
    get(
        &server,
        &format!("/redfish/v1/Registries/{REGISTRY_ID}"),
        json!({"Registry": REGISTRY_ID, "Location": [{"Language": "en", "Uri": REGISTRY_FILE}]}),
    )
    .await;
    // Sent gzip-encoded whatever the client asked for, as HPE documents it.
    Mock::given(method("GET"))
        .and(at(REGISTRY_FILE))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Content-Encoding", "gzip")
                .insert_header("Content-Type", "application/json")
                .set_body_bytes(gzip(&data("hpe-a42-registry.json"))),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ilo_is_read_by_its_links_and_judged_in_hpe_names_with_its_registry_cached() {
    let server = ilo().await;
    let scratch = TempDir::new();
    let dirs = StateDirs::resolve(Some(&scratch.path().join("state"))).unwrap();
    let access = Access::new(
        ConnectConfig::new(redfish_client::Credentials::new("root", "password")),
        dirs.clone(),
        Arc::new(Silent),
    );
    let entry = BmcEntry::from_url(&server.uri()).unwrap();
    let op = Assess {
        profile: Arc::new(LoadedProfile::load("hpc").unwrap()),
        cache: Arc::new(dirs.registry_cache()),
        strict: false,
    };
    let a = access.one(&entry, None, &op).await.unwrap();
    assert_eq!(
        a.state.backend.kind(),
        &Kind::Ilo {
            generation: Some(5),
            firmware: Some("2.72".into())
        }
    );
    assert_eq!(a.state.model.as_deref(), Some("ProLiant DL385 Gen10 Plus v2"));
    assert_eq!(a.state.service_tag.as_deref(), Some("CZ2D1X0ABC"));
    assert_eq!(a.state.bios_version.as_deref(), Some("A42 v2.60 (08/11/2022)"));
    // A full copy in the settings object: only what differs is pending.
    assert_eq!(
        a.state.pending.keys().collect::<Vec<_>>(),
        ["ProcSMT"],
        "{:?}",
        a.state.pending
    );
    // The profile in HPE's names: hpc's SMT off is ProcSMT, its NPS HPE's memory domains.
    assert!(a.profile.bios.contains_key("ProcSMT"), "{:?}", a.profile.bios.keys());
    assert!(a.profile.bios.contains_key("NumaMemoryDomainsPerSocket"));
    assert!(!a.profile.bios.contains_key("LogicalProc"));
    let smt = a.diff.changes.iter().find(|c| c.attribute == "ProcSMT").unwrap();
    assert_eq!(smt.status, bios_profiles::Status::Pending, "{smt:#?}");
    // The Milan host is recognised from the system's CPU: no setting goes unverified.
    assert_eq!(a.diff.unverified(), 0, "{:#?}", a.diff);
    let fetched = |requests: &[wiremock::Request]| requests.iter().filter(|r| r.url.path() == REGISTRY_FILE).count();
    assert_eq!(fetched(&server.received_requests().await.unwrap()), 1);
    // A second read takes the registry from the cache on disk.
    let again = Access::new(
        ConnectConfig::new(redfish_client::Credentials::new("root", "password")),
        dirs.clone(),
        Arc::new(Silent),
    );
    let op = Assess {
        cache: Arc::new(dirs.registry_cache()),
        ..op
    };
    let before = server.received_requests().await.unwrap().len();
    again.one(&entry, None, &op).await.unwrap();
    let requests = server.received_requests().await.unwrap();
    assert_eq!(fetched(&requests), 1, "the registry was read from the cache");
    let warm: Vec<String> = requests[before..]
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect();
    eprintln!("warm iLO diff: {} requests: {warm:#?}", warm.len());
    // The second run starts where the first found things (the backend and its places, kept
    // in the cache directory): no presumed iDRAC's places, no service root, no listing.
    let mut warm = warm;
    warm.sort();
    assert_eq!(
        warm,
        [
            "DELETE /redfish/v1/SessionService/Sessions/root0000000066ab958288190bb4/",
            "GET /redfish/v1/Systems/1",
            "GET /redfish/v1/Systems/1/Memory",
            "GET /redfish/v1/systems/1/bios",
            "GET /redfish/v1/systems/1/bios/settings",
            "POST /redfish/v1/SessionService/Sessions",
        ],
        "sorted: some go out together"
    );
}
