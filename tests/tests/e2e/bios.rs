//! `rftune bios get` against the fixture BMCs.

use super::{Run, redact, stderr, stdout};
use rftune_tests::MockBmc;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

#[tokio::test(flavor = "multi_thread")]
async fn selected_attributes_as_table_and_json() {
    let bmc = MockBmc::start("r7625").await;
    let args = [
        "bios",
        "get",
        "--bmc",
        &bmc.url(),
        "-a",
        "SysProfile",
        "-a",
        "NumaNodesPerSocket",
        "-a",
        "CpuAcpiCstC2Latency",
    ];
    let out = Run::new(&args).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
    let mut json_args = args.to_vec();
    json_args.extend(["--output", "json"]);
    let out = Run::new(&json_args).output().await;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["attributes"],
        json!({"SysProfile": "PerfOptimized", "NumaNodesPerSocket": "1", "CpuAcpiCstC2Latency": 800})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_attribute_suggests_close_names() {
    let bmc = MockBmc::start("r7625").await;
    let out = Run::new(&["bios", "get", "--bmc", &bmc.url(), "-a", "ProcCstate"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = redact(&stderr(&out), &bmc.url());
    assert!(
        err.contains("BIOS has no attribute \"ProcCstate\"; did you mean ProcCStates?"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_values_next_to_current_ones() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Systems/System.Embedded.1/Bios/Settings"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "@odata.id": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
            "Attributes": {"SysProfile": "Custom", "ProcCStates": "Enabled"}
        })))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let out = Run::new(&["bios", "get", "--bmc", &bmc.url(), "--pending"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(stdout(&out));
}

/// Logs in once, then refuses the credentials (changed, or the account locked, mid-run).
struct LoginOnce(std::sync::atomic::AtomicU64);

impl wiremock::Respond for LoginOnce {
    fn respond(&self, _: &wiremock::Request) -> ResponseTemplate {
        if self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 0 {
            return ResponseTemplate::new(201)
                .insert_header("X-Auth-Token", "token-1")
                .insert_header("Location", "/redfish/v1/SessionService/Sessions/1");
        }
        ResponseTemplate::new(401).set_body_json(rftune_tests::redfish_error(
            "IDRAC.2.9.SYS415",
            "Unable to complete the operation because an invalid username and/or password is entered, and therefore authentication failed.",
            "Enter valid user name and password and retry the operation.",
        ))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_session_is_reported_as_such_not_as_bad_credentials() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("POST"))
        .and(path("/redfish/v1/SessionService/Sessions"))
        .respond_with(LoginOnce(std::sync::atomic::AtomicU64::new(0)))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Systems/System.Embedded.1/Bios/Settings"))
        .respond_with(ResponseTemplate::new(401).set_body_json(rftune_tests::redfish_error(
            "Base.1.12.NoValidSession",
            "There is no valid session established with the implementation.",
            "Establish a session before attempting any operations.",
        )))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let out = Run::new(&["bios", "get", "--bmc", &bmc.url(), "--pending"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = redact(&stderr(&out), &bmc.url());
    assert!(err.contains("reading pending BIOS values"), "{err}");
    assert!(err.contains("[SYS415]"), "the refused login's MessageId: {err}");
    let hint = err.lines().find(|l| l.starts_with("hint: ")).unwrap_or_default();
    assert!(hint.contains("session") && hint.contains("expired"), "{err}");
    assert!(!hint.contains("rejected the credentials"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bios_without_attributes_is_an_error_not_an_empty_table() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Systems/System.Embedded.1/Bios"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "@odata.id": "/redfish/v1/Systems/System.Embedded.1/Bios", "Id": "Bios"
        })))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let out = Run::new(&["bios", "get", "--bmc", &bmc.url()]).output().await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = redact(&stderr(&out), &bmc.url());
    assert!(
        err.contains("reading BIOS values: GET http://[BMC]/redfish/v1/Systems/System.Embedded.1/Bios"),
        "{err}"
    );
    assert!(err.contains("missing field `Attributes`"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_queue_without_members_is_an_error_not_no_jobs() {
    let bmc = MockBmc::start("r7625").await;
    Mock::given(method("GET"))
        .and(path("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs", "Name": "JobQueue"
        })))
        .with_priority(1)
        .mount(&bmc.server)
        .await;
    let out = Run::new(&["jobs", "list", "--bmc", &bmc.url()]).output().await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("missing field `Members`"), "{}", stderr(&out));
}

/// The service root decides once whether the BIOS is at an iDRAC's fixed path or found through
/// `Systems`, and reading it costs the same requests as before the layout was kept on the target.
#[tokio::test(flavor = "multi_thread")]
async fn the_service_root_decides_between_fixed_paths_and_discovery_once() {
    let bios = "/redfish/v1/Systems/System.Embedded.1/Bios";
    let settings = "/redfish/v1/Systems/System.Embedded.1/Bios/Settings";
    let dell = MockBmc::start("r7625").await;
    let out = Run::new(&["bios", "get", "--bmc", &dell.url(), "--pending", "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        dell.requests().await,
        [
            "GET /redfish/v1".to_owned(),
            "POST /redfish/v1/SessionService/Sessions".to_owned(),
            format!("GET {bios}"),
            format!("GET {settings}"),
            "DELETE /redfish/v1/SessionService/Sessions/1".to_owned(),
        ]
    );

    // Another vendor (its root names it and carries no Dell OEM block): the same tree, found
    // through Systems; its settings object mirrors every attribute, and only the one that
    // differs is pending.
    let generic = MockBmc::start("r7625").await;
    let root_file = rftune_tests::fixtures_dir().join("r7625/redfish/v1/index.json");
    let mut root: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(root_file).unwrap()).unwrap();
    root["Vendor"] = json!("Contoso");
    root.as_object_mut().unwrap().remove("Oem");
    Mock::given(method("GET"))
        .and(path("/redfish/v1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(root))
        .with_priority(1)
        .mount(&generic.server)
        .await;
    Mock::given(method("GET"))
        .and(path(settings))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "@odata.id": settings,
            "Attributes": {"SysProfile": "Custom", "NumaNodesPerSocket": "1"}
        })))
        .with_priority(1)
        .mount(&generic.server)
        .await;
    let out = Run::new(&["bios", "get", "--bmc", &generic.url(), "--pending", "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["pending"], json!({"SysProfile": "Custom"}));
    assert_eq!(
        generic.requests().await,
        [
            "GET /redfish/v1".to_owned(),
            "POST /redfish/v1/SessionService/Sessions".to_owned(),
            "GET /redfish/v1/Systems".to_owned(),
            "GET /redfish/v1/Systems/System.Embedded.1".to_owned(),
            format!("GET {bios}"),
            format!("GET {settings}"),
            "DELETE /redfish/v1/SessionService/Sessions/1".to_owned(),
        ]
    );
}
