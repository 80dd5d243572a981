//! `rftune diff` against the emulator: statuses, exit codes, JSON and JUnit, round trips.

use super::{Run, redact, sim, stats, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use redfish_client::resources::bios::Attributes;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn in_sync_host_exits_0_and_drifting_host_exits_2() {
    // The R7625 runs Dell's Performance preset but, like the real R7615, with correctable-error
    // logging off, which every profile keeps on: one drift until applied, then in sync.
    let genoa = sim("r7625", 1, |_| {}).await;
    let url = &genoa.hosts()[0].url;
    let out = Run::new(&["diff", "--bmc", url, "--profile", "performance"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("1 drift"), "{}", stdout(&out));
    let apply = [
        "apply",
        "--bmc",
        url,
        "--profile",
        "performance",
        "--reboot",
        "force",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
    ];
    let out = Run::new(&apply).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let out = Run::new(&["diff", "--bmc", url, "--profile", "performance"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let milan = sim("r7525", 1, |_| {}).await;
    let url = &milan.hosts()[0].url;
    let out = Run::new(&["diff", "--bmc", url, "--profile", "performance"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    insta::assert_snapshot!(redact(&stdout(&out), url));
}

#[tokio::test(flavor = "multi_thread")]
async fn json_document_lists_every_attribute_with_its_status() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let out = Run::new(&[
        "diff",
        "--bmc",
        &fleet.hosts()[0].url,
        "-p",
        "performance",
        "-o",
        "json",
    ])
    .output()
    .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "rftune.diff/v1");
    let host = &doc["hosts"][0];
    assert_eq!(host["status"], "drift");
    let status_of = |name: &str| {
        host["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["attribute"] == name)
            .map(|c| c["status"].clone())
            .unwrap()
    };
    assert_eq!(status_of("SysProfile"), "drift");
    assert_eq!(status_of("ProcCStates"), "forced");
    assert_eq!(status_of("PowerProfileSelect"), "not_applicable");
    assert_eq!(status_of("LogicalProc"), "in_sync");
    assert_eq!(status_of("CECriticalSEL"), "drift");
    assert_eq!(host["counts"]["drift"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_values_show_as_pending_or_conflict() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let staged: Attributes = [
        ("SysProfile".to_owned(), "PerfOptimized".into()),
        ("MemTest".to_owned(), "Enabled".into()),
    ]
    .into_iter()
    .collect();
    super::client(url)
        .stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &staged, None)
        .await
        .unwrap();
    let out = Run::new(&["diff", "--bmc", url, "-p", "performance", "-o", "json"])
        .output()
        .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = doc["hosts"][0]["changes"].as_array().unwrap().clone();
    let status_of = |name: &str| {
        changes
            .iter()
            .find(|c| c["attribute"] == name)
            .map(|c| c["status"].clone())
            .unwrap()
    };
    assert_eq!(status_of("SysProfile"), "pending");
    assert_eq!(status_of("MemTest"), "pending_conflict");
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn junit_shows_drift_as_failures() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let out = Run::new(&[
        "diff",
        "--bmc",
        &fleet.hosts()[0].url,
        "-p",
        "performance",
        "-o",
        "junit",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(2));
    let xml = stdout(&out);
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(xml.contains("failures=\"6\""), "{xml}");
    assert!(
        xml.contains(
            "name=\"BIOS SysProfile\"><failure message=\"drift: desired PerfOptimized, current PerfPerWattOptimizedDapc"
        ),
        "{xml}"
    );
    assert!(xml.contains("<skipped"), "{xml}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warm_diff_reads_four_resources() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let state = super::TempDir::new();
    let run = || Run::new(&["diff", "--bmc", url, "-p", "performance", "-o", "json"]).state_dir(&state.0);
    run().output().await;
    let cold = stats(&fleet, 0)["requests"]["total"].as_u64().unwrap();
    fleet.hosts()[0].host.stats.reset();
    run().output().await;
    let warm = stats(&fleet, 0);
    let by_path = warm["requests"]["by_path"].as_object().unwrap();
    let reads: Vec<&String> = by_path.keys().filter(|k| k.starts_with("GET")).collect();
    assert_eq!(
        reads.len(),
        4,
        "Bios, Bios/Settings, DellAttributes System and System Lockdown: {by_path:?}"
    );
    assert_eq!(warm["requests"]["total"], 6, "plus login and logout");
    assert_eq!(cold, 7, "the cold run also fetched the registry");
    let out = Run::new(&["diff", "--bmc", url, "-p", "performance", "--auth", "basic"])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_profile_and_bad_profile_file_are_errors() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let out = Run::new(&["diff", "--bmc", &fleet.hosts()[0].url, "-p", "performace"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("did you mean"), "{}", stderr(&out));
    let dir = super::TempDir::new();
    let file = dir.0.join("mine.toml");
    std::fs::write(&file, "name = \"mine\"\ndescription = \"x\"\nextends = \"performance\"\n[bios.ProcCStates]\nvalue = \"Enabled\"\nwhy = \"x\"\nsource = \"amd-58011\"\nconfidence = \"stated\"\ncolour = 1\n").unwrap();
    let out = Run::new(&["diff", "--bmc", &fleet.hosts()[0].url, "-p", file.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("mine.toml:9"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_diff_summarises_and_takes_the_worst_exit_code() {
    let fleet = sim("r7525", 3, |c| c.faults = vec!["503@2".parse().unwrap()]).await;
    let dir = super::TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let out = Run::new(&[
        "diff",
        "--inventory",
        inventory.to_str().unwrap(),
        "-p",
        "performance",
        "--retry-for",
        "0s",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "one host errors");
    let text = stdout(&out);
    assert!(text.contains("3 hosts: 0 in sync, 2 drift, 1 error"), "{text}");
    assert!(text.contains("r7525-0002: error:"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_diff_lists_only_the_hosts_that_differ_then_a_summary() {
    let fleet = sim("r7625", 3, |_| {}).await;
    let hosts = fleet.hosts();
    let out = Run::new(&["apply", "--bmc", &hosts[0].url, "-p", "hpc"]).output().await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dir = super::TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", "--inventory", inventory.to_str().unwrap(), "-p", "hpc"];
        args.extend_from_slice(extra);
        Run::new(&args)
    };
    let out = diff(&[]).output().await;
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(!text.contains(&hosts[0].name), "the host in sync is not listed: {text}");
    assert!(text.contains(&hosts[1].name) && text.contains(&hosts[2].name), "{text}");
    assert!(text.contains("3 hosts: 1 in sync, 2 drift, 0 error"), "{text}");
    assert!(text.contains("(1 host(s) in sync not listed"), "{text}");
    let out = diff(&["-v"]).output().await;
    assert!(stdout(&out).contains(&hosts[0].name), "{}", stdout(&out));
    let out = diff(&["-o", "json"]).output().await;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["hosts"].as_array().unwrap().len(), 3);
}
