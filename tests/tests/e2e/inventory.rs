//! `rftune inventory` against the fixture BMCs.

use super::{Run, redact, stderr, stdout};
use rftune_tests::MockBmc;

#[tokio::test(flavor = "multi_thread")]
async fn inventory_table_shows_identity_hardware_and_pending_work() {
    let bmc = MockBmc::start("r7625").await;
    let out = Run::new(&["inventory", "--bmc", &bmc.url()]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!(redact(&stdout(&out), &bmc.url()));
    // Round trips: service root, login, system, memory ($expand), iDRAC, pending BIOS, jobs
    // (at the advertised Oem/Dell/Jobs), Secure Boot, logout.
    let reqs = bmc.requests().await;
    assert_eq!(reqs.len(), 9, "{reqs:#?}");
    assert!(
        reqs.iter()
            .any(|r| r.starts_with("DELETE /redfish/v1/SessionService/Sessions/")),
        "logged out"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn inventory_json_for_scripts() {
    let bmc = MockBmc::start("c6615").await;
    let out = Run::new(&["inventory", "--bmc", &bmc.url(), "--output", "json", "--auth", "basic"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "rftune.inventory/v1");
    assert_eq!(doc["model"], "PowerEdge C6615");
    assert_eq!(doc["service_tag"], "C6615C3");
    assert_eq!(doc["processors"]["count"], 1);
    assert_eq!(doc["memory"]["dimms"].as_array().unwrap().len(), 6);
    assert_eq!(doc["open_jobs"], serde_json::json!([]));
    assert_eq!(doc["secure_boot"]["enabled"], false);
    assert_eq!(
        bmc.requests().await.len(),
        7,
        "Basic: no login, no logout; Secure Boot is read with the rest"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_password_names_host_message_id_and_what_to_do() {
    let bmc = MockBmc::start("r7625").await;
    let out = Run::new(&["inventory", "--bmc", &bmc.url()])
        .env("RFTUNE_PASSWORD", "not-the-password")
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = redact(&stderr(&out), &bmc.url());
    assert!(!err.contains("not-the-password"));
    insta::assert_snapshot!(err);
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_bmc_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = Run::new(&["inventory", "--bmc", &url, "--timeout", "2s", "--retry-for", "0s"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("127.0.0.1:{port}: reading the service root")),
        "{err}"
    );
    assert!(err.contains("could not connect"), "{err}");
    assert!(err.contains("hint: is the BMC up"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn password_from_stdin_and_missing_password() {
    let bmc = MockBmc::start("r7625").await;
    let out = Run::new(&["inventory", "--bmc", &bmc.url(), "--password-stdin", "-o", "json"])
        .env_remove("RFTUNE_PASSWORD")
        .stdin("calvin\n")
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = Run::new(&["inventory", "--bmc", &bmc.url()])
        .env_remove("RFTUNE_PASSWORD")
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no password for"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_file_must_not_be_readable_by_others() {
    use std::os::unix::fs::PermissionsExt;
    let bmc = MockBmc::start("r7625").await;
    let dir = super::TempDir::new();
    let file = dir.0.join("idrac.toml");
    std::fs::write(&file, "username = \"root\"\npassword = \"calvin\"\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let args = [
        "inventory",
        "--bmc",
        &bmc.url(),
        "--credentials",
        file.to_str().unwrap(),
        "-o",
        "json",
    ];
    let out = Run::new(&args).env_remove("RFTUNE_PASSWORD").output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("chmod 600"), "{}", stderr(&out));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = Run::new(&args).env_remove("RFTUNE_PASSWORD").output().await;
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_password_is_refused_before_anything_is_sent() {
    use std::os::unix::fs::PermissionsExt;
    let bmc = MockBmc::start("r7625").await;
    let dir = super::TempDir::new();
    let file = dir.0.join("idrac.toml");
    std::fs::write(&file, "username = \"root\"\npassword = \"\"\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = file.to_str().unwrap();
    let cases = [
        (
            Run::new(&["inventory", "--bmc", &bmc.url()]).env("RFTUNE_PASSWORD", ""),
            "RFTUNE_PASSWORD",
        ),
        (
            Run::new(&["inventory", "--bmc", &bmc.url(), "--password-stdin"])
                .env_remove("RFTUNE_PASSWORD")
                .stdin("\n"),
            "--password-stdin",
        ),
        (
            Run::new(&["inventory", "--bmc", &bmc.url(), "--credentials", file]).env_remove("RFTUNE_PASSWORD"),
            file,
        ),
    ];
    for (run, source) in cases {
        let out = run.output().await;
        assert_eq!(out.status.code(), Some(1), "{source}");
        let err = stderr(&out);
        assert!(
            err.contains("empty password") && err.contains(source),
            "{source}: {err}"
        );
    }
    assert_eq!(bmc.requests().await, Vec::<String>::new(), "nothing was sent");
}
