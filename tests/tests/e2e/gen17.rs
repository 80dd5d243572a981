//! A 17G host (PowerEdge R7725: iDRAC10, EPYC 9005 "Turin") with the real binary against the
//! emulator's iDRAC10 personality: what it reports, that a check comparing little never reads
//! "in sync", and that every write goes where iDRAC10 takes it (the counters by path prove the
//! iDRAC9 places are never tried). Each flow prints its requests (`flow …:` lines, shown with
//! `--nocapture`).

use super::{Run, TempDir, host_entry, joint_inventory, sim, stats, stderr, stdout};
use serde_json::Value;

/// Waits, short for the emulator's POST.
const WAITS: [&str; 6] = [
    "--graceful-timeout",
    "2s",
    "--job-timeout",
    "20s",
    "--boot-timeout",
    "20s",
];

/// Requests host `i` received since the emulator started, by `METHOD /path`.
fn by_path(fleet: &idrac_sim::Fleet, i: usize, flow: &str) -> serde_json::Map<String, Value> {
    let s = stats(fleet, i);
    eprintln!(
        "flow {flow}: {} requests, {} BIOS PATCH, {} job(s), {} POST(s)",
        s["requests"]["total"], s["bios_patches"], s["jobs_created"], s["posts"]
    );
    s["requests"]["by_path"].as_object().cloned().unwrap_or_default()
}

/// How many requests of `paths` start with `prefix` (`PATCH /redfish/v1/Systems/…`).
fn count(paths: &serde_json::Map<String, Value>, prefix: &str) -> u64 {
    paths
        .iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(_, v)| v.as_u64().unwrap_or_default())
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn inventory_names_the_17g_generation_and_idrac10_with_both_turin_sockets() {
    let fleet = sim("r7725", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["inventory", "--bmc", url, "-o", "json"]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["model"], "PowerEdge R7725");
    assert_eq!(doc["generation"], "17G Monolithic");
    assert_eq!(doc["bmc"], "Dell iDRAC10 (firmware 1.30.10.50)");
    assert_eq!(doc["processors"]["count"], 2, "{}", doc["processors"]);
    let text = Run::new(&["inventory", "--bmc", url]).output().await;
    let shown = stdout(&text);
    assert!(shown.contains("17G Monolithic") && shown.contains("iDRAC10"), "{shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_strict_diff_of_a_turin_host_is_unverified_and_exits_2_not_a_silent_in_sync() {
    let fleet = sim("r7725", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["diff", "--bmc", url, "-p", "hpc", "--strict", "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["unverified"], 1, "{}", doc["summary"]);
    assert_eq!(doc["summary"]["in_sync"], 0, "{}", doc["summary"]);
    let host = &doc["hosts"][0];
    assert_eq!(host["status"], "unverified", "{host}");
    // What was checked is still checked: the Turin preset and the iDRAC's own settings.
    let checked: Vec<&str> = host["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "in_sync")
        .filter_map(|c| c["attribute"].as_str())
        .collect();
    assert!(checked.contains(&"SysProfile"), "{checked:?}");
    let text = Run::new(&["diff", "--bmc", url, "-p", "hpc", "--strict"])
        .output()
        .await;
    assert_eq!(text.status.code(), Some(2));
    let shown = stdout(&text);
    assert!(shown.contains("not proven in sync"), "the table says why: {shown}");
    // The settings left unchecked share one reason: one line names them, not a row each.
    assert!(shown.contains("  not checked ("), "{shown}");
    assert!(
        !shown.lines().any(|l| l.starts_with("  NumaNodesPerSocket ")),
        "{shown}"
    );
    assert!(shown.contains("NumaNodesPerSocket"), "{shown}");
    let every = Run::new(&["diff", "--bmc", url, "-p", "hpc", "--all"]).output().await;
    let rows = stdout(&every);
    assert!(
        rows.lines()
            .any(|l| l.starts_with("  NumaNodesPerSocket ") && l.contains("no Turin evidence")),
        "--all gives each its row: {rows}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_on_17g_stages_through_bios_settings_waits_on_jobservice_and_says_what_it_left_unchecked() {
    let fleet = sim("r7725", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    // The 17G model ships the performance preset; virtualization's Turin value differs.
    let mut args = vec![
        "apply",
        "--bmc",
        url,
        "-p",
        "virtualization",
        "--reboot",
        "graceful",
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "converged", "{host}");
    assert_eq!(host["bios"]["SysProfile"], "PerfPerWattOptimizedOs", "{host}");
    assert!(host["verify"]["unverified"].as_u64().unwrap() > 0, "{host}");
    assert!(
        host["summary"].as_str().unwrap().contains("not proven in sync"),
        "{host}"
    );
    let paths = by_path(&fleet, 0, "apply on 17G");
    assert_eq!(
        count(&paths, "PATCH /redfish/v1/Systems/System.Embedded.1/Bios/Settings"),
        1,
        "{paths:#?}"
    );
    assert!(count(&paths, "GET /redfish/v1/JobService/Jobs/JID_") > 0, "{paths:#?}");
    assert_eq!(
        count(&paths, "GET /redfish/v1/Managers/iDRAC.Embedded.1/Jobs/"),
        0,
        "iDRAC10 serves no job at the Manager's Jobs: {paths:#?}"
    );
    assert_eq!(
        count(
            &paths,
            "POST /redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset"
        ),
        2,
        "{paths:#?}"
    );
    // Nothing left to do: a second run changes nothing, and says it checked little.
    let again = Run::new(&["apply", "--bmc", url, "-p", "virtualization", "--reboot", "graceful"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("nothing to change") && stdout(&again).contains("not checked"),
        "{}",
        stdout(&again)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn boot_once_pxe_on_17g_patches_the_system_s_settings_object_never_the_system() {
    let fleet = sim("r7725", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let mut args = vec!["boot", "once", "Pxe", "--bmc", url, "--reboot"];
    args.extend(&WAITS[..2]);
    args.extend(&WAITS[4..]);
    let out = Run::new(&args).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("booted once from Pxe"), "{}", stdout(&out));
    let paths = by_path(&fleet, 0, "boot once on 17G");
    assert_eq!(
        count(&paths, "PATCH /redfish/v1/Systems/System.Embedded.1/Settings"),
        1,
        "{paths:#?}"
    );
    assert!(
        !paths.contains_key("PATCH /redfish/v1/Systems/System.Embedded.1"),
        "iDRAC10 refuses Boot on the System: {paths:#?}"
    );
    assert_eq!(stats(&fleet, 0)["booted"], serde_json::json!(["Pxe (once)"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn scp_export_of_two_targets_on_17g_sends_them_as_the_list_idrac10_takes() {
    let fleet = sim("r7725", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let out_dir = dir.0.join("scp");
    let out = Run::new(&[
        "scp",
        "export",
        "--bmc",
        url,
        "--target",
        "BIOS,IDRAC",
        "--dir",
        out_dir.to_str().unwrap(),
        "-o",
        "json",
    ])
    .output()
    .await;
    // The emulator's iDRAC10 refuses a joined "BIOS,IDRAC" as the real one does.
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let exported = std::fs::read_dir(&out_dir).unwrap().count();
    assert_eq!(exported, 1);
    let paths = by_path(&fleet, 0, "scp export on 17G");
    assert_eq!(
        count(
            &paths,
            "POST /redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/OemManager.ExportSystemConfiguration"
        ),
        1,
        "{paths:#?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn basic_auth_refused_by_an_idrac10_says_what_to_do() {
    let fleet = sim("r7725", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["inventory", "--bmc", url, "--auth", "basic"]).output().await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("HTTP 401"), "{err}");
    assert!(
        err.contains("BasicAuthState") && err.contains("Drop --auth basic"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_genoa_and_turin_fleet_summary_counts_the_turin_host_unverified_not_in_sync() {
    let genoa = sim("r7625", 1, |_| {}).await;
    let turin = sim("r7725", 1, |_| {}).await;
    let dir = TempDir::new();
    let inventory = joint_inventory(&dir.0, &[&genoa, &turin]);
    let inv = inventory.to_str().unwrap();
    // Both on the profile first, so that what remains is what the check could not prove.
    let mut apply = vec!["apply", "--inventory", inv, "-p", "performance", "--reboot", "graceful"];
    apply.extend(WAITS);
    let applied = Run::new(&apply).state_dir(&dir.0).output().await;
    assert_eq!(
        applied.status.code(),
        Some(0),
        "{}{}",
        stdout(&applied),
        stderr(&applied)
    );
    let out = Run::new(&["diff", "--inventory", inv, "-p", "performance", "-o", "json"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["summary"],
        serde_json::json!({"hosts": 2, "in_sync": 1, "unverified": 1, "drift": 0, "error": 0}),
        "{}",
        doc["summary"]
    );
    assert_eq!(host_entry(&doc, "r7625")["status"], "in_sync");
    assert_eq!(host_entry(&doc, "r7725")["status"], "unverified");
    let text = Run::new(&["diff", "--inventory", inv, "-p", "performance"])
        .state_dir(&dir.0)
        .output()
        .await;
    let shown = stdout(&text);
    assert!(shown.contains("1 in sync") && shown.contains("1 unverified"), "{shown}");
}
