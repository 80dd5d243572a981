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

#[tokio::test(flavor = "multi_thread")]
async fn lifecycle_entries_say_who_changed_a_host_behind_rftunes_back() {
    let fleet = super::sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    // Someone stages a BIOS value with their own tool, over Redfish, with a job.
    let other = super::client(url);
    other
        .patch(
            redfish_client::oem::dell::BIOS_SETTINGS,
            &serde_json::json!({"Attributes": {"LogicalProc": "Disabled"}}),
        )
        .await
        .unwrap();
    other.dell().create_bios_job().await.unwrap();
    let before = super::stats(&fleet, 0)["requests"]["total"].as_u64().unwrap();
    let out = Run::new(&["inventory", "--bmc", url, "--lifecycle", "3", "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = doc["lifecycle"].as_array().unwrap();
    assert_eq!(log.len(), 3, "{log:#?}");
    let ids: Vec<&str> = log.iter().map(|e| e["message_id"].as_str().unwrap()).collect();
    // Newest first: rftune's own login, then the job and the change it was made for.
    assert_eq!(ids, ["USR0030", "JCP040", "RAC1195"], "{log:#?}");
    for e in log {
        assert_eq!(e["who"]["user"], "root", "{e:#}");
        assert_eq!(e["who"]["address"], "127.0.0.1", "{e:#}");
        assert_eq!(e["who"]["interface"], "REDFISH", "{e:#}");
        assert!(e["created"].as_str().unwrap().len() >= 19, "{e:#}");
    }
    assert!(log[1]["message"].as_str().unwrap().contains("JID_"), "{log:#?}");
    // One request more than an inventory without the log: root, login, six reads (Secure Boot
    // the sixth), the log, logout.
    let used = super::stats(&fleet, 0)["requests"]["total"].as_u64().unwrap() - before;
    assert_eq!(used, 10);
    let table = Run::new(&["inventory", "--bmc", url, "--lifecycle", "2"])
        .output()
        .await;
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(text.contains("Lifecycle log, latest 2 (newest first):"), "{text}");
    assert!(text.contains("root from 127.0.0.1 via REDFISH"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lifecycle_log_longer_than_a_page_is_read_across_pages_and_cut_to_n() {
    let fleet = super::sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    for _ in 0..30 {
        // Each a login and a logout (USR0030, USR0032): 60 entries, more than one page of 50.
        let s = redfish_client::Client::builder(url)
            .credentials(redfish_client::Credentials::new("root", "calvin"))
            .build()
            .unwrap();
        s.login().await.unwrap();
        s.logout().await.unwrap();
    }
    let out = Run::new(&["inventory", "--bmc", url, "--lifecycle", "55", "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = doc["lifecycle"].as_array().unwrap();
    assert_eq!(log.len(), 55);
    let ids: Vec<u64> = log.iter().map(|e| e["id"].as_str().unwrap().parse().unwrap()).collect();
    assert!(
        ids.windows(2).all(|w| w[0] == w[1] + 1),
        "newest first, none missed: {ids:?}"
    );
}
