//! Behaviours of real iDRACs our fixtures used not to show: a host whose CPU is not an AMD
//! EPYC, System Lockdown seen by `diff`, optional resources a service does not serve, a
//! settings object that mirrors every value, and a cached registry that does not fit.

use super::{Run, stderr, stdout};
use rftune_tests::MockBmc;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

const BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios";

fn fixture(model: &str, rel: &str) -> Value {
    let file = rftune_tests::fixtures_dir()
        .join(model)
        .join(rel.trim_start_matches('/'))
        .join("index.json");
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

async fn serve(bmc: &MockBmc, at: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_amd_profile_refuses_an_intel_host_before_reading_its_registry() {
    let bmc = MockBmc::start("r7625").await;
    let mut bios = fixture("r7625", BIOS);
    bios["Attributes"]["Proc1Brand"] = "Intel(R) Xeon(R) Gold 6354 CPU @ 3.00GHz".into();
    bios["Attributes"]["SystemModelName"] = "PowerEdge R750".into();
    serve(&bmc, BIOS, bios).await;
    let out = Run::new(&["diff", "--bmc", &bmc.url(), "-p", "performance"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("targets AMD EPYC"), "{err}");
    assert!(
        err.contains("this host is PowerEdge R750 (Intel(R) Xeon(R) Gold 6354"),
        "{err}"
    );
    let requests = bmc.requests().await;
    assert!(
        !requests.iter().any(|r| r.ends_with("/BiosRegistry")),
        "refused before the registry: {requests:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn diff_reports_system_lockdown_on_the_host() {
    let bmc = MockBmc::start("r7625").await;
    let mut idrac = fixture(
        "r7625",
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1",
    );
    idrac["Attributes"]["Lockdown.1.SystemLockdown"] = "Enabled".into();
    serve(
        &bmc,
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1",
        idrac,
    )
    .await;
    let out = Run::new(&["diff", "--bmc", &bmc.url(), "-p", "performance", "-o", "json"])
        .output()
        .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["lockdown"], true, "{host}");
    assert!(
        host["violations"][0]
            .as_str()
            .unwrap()
            .contains("System Lockdown is on"),
        "{host}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn inventory_shows_what_it_could_read_and_names_what_it_could_not() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Systems/System.Embedded.1/Memory"))
        .respond_with(ResponseTemplate::new(404).set_body_json(rftune_tests::redfish_error(
            "Base.1.12.ResourceMissingAtURI",
            "The resource at the URI was not found.",
            "Place a valid resource at the URI.",
        )))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let out = Run::new(&["inventory", "--bmc", &bmc.url(), "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["model"], "PowerEdge R7625");
    assert_eq!(doc["unread"][0]["what"], "DIMM inventory");
    let why = doc["unread"][0]["error"].as_str().unwrap();
    assert!(why.contains("/Memory") && why.contains("404"), "{why}");
    assert!(
        stderr(&out).contains("could not read the DIMM inventory"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_registry_for_another_platform_is_not_used() {
    let bmc = MockBmc::start("r7625").await;
    let state = super::TempDir::new();
    let run = || Run::new(&["diff", "--bmc", &bmc.url(), "-p", "performance"]).state_dir(&state.0);
    run().output().await;
    let fetched = |reqs: &[String]| reqs.iter().filter(|r| r.ends_with("/BiosRegistry")).count();
    assert_eq!(fetched(&bmc.requests().await), 1, "cold run fetches");
    run().output().await;
    assert_eq!(fetched(&bmc.requests().await), 1, "warm run reads the cache");
    // Doctor the cached copy: the same file name, but a registry of another model.
    let dir = state.0.join("cache/registries");
    let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let mut doctored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    doctored["SupportedSystems"][0]["ProductName"] = "PowerEdge R750".into();
    std::fs::write(&file, serde_json::to_vec(&doctored).unwrap()).unwrap();
    // Exit 2: the fixture keeps correctable-error logging off, which the profile turns on.
    let out = run().output().await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(fetched(&bmc.requests().await), 2, "the doctored copy was not used");
    // --refresh-registry always asks the BMC.
    Run::new(&["diff", "--bmc", &bmc.url(), "-p", "performance", "--refresh-registry"])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(fetched(&bmc.requests().await), 3);
}
