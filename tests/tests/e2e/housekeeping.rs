//! snapshot → change → restore, derive, jobs and clear-pending against the emulator.

use super::{Run, TempDir, client, sim, stats, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn snapshot_change_restore_round_trip() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let state = TempDir::new();
    let before = fleet.hosts()[0].host.snapshot().0;
    let out = Run::new(&["snapshot", "--bmc", url, "-o", "json"])
        .state_dir(&state.0)
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let snap: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(snap["schema"], "rftune.snapshot/v1");
    let file = std::fs::read_dir(state.0.join("snapshots"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let out = Run::new(&["apply", "--bmc", url, "-p", "low-latency", "--reboot", "force"])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_ne!(fleet.hosts()[0].host.snapshot().0, before);
    let out = Run::new(&["restore", "--snapshot", file.to_str().unwrap(), "--reboot", "force"])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(fleet.hosts()[0].host.snapshot().0, before, "every BIOS value is back");
    // Restoring again changes nothing.
    fleet.hosts()[0].host.stats.reset();
    let out = Run::new(&["restore", "--snapshot", file.to_str().unwrap()])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stats(&fleet, 0)["bios_patches"], 0);
    // derive: a profile file from the snapshot, valid and equal to the host.
    let out = Run::new(&[
        "profiles",
        "derive",
        "--snapshot",
        file.to_str().unwrap(),
        "--name",
        "golden",
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let golden = state.0.join("golden.toml");
    std::fs::write(&golden, &out.stdout).unwrap();
    let out = Run::new(&["diff", "--bmc", url, "-p", golden.to_str().unwrap()])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_and_pending_housekeeping() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let c = client(url);
    let change: Attributes = [("MemTest".to_owned(), "Enabled".into())].into_iter().collect();
    let staged = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &change,
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let job = staged.job.unwrap().last_segment().to_owned();
    let out = Run::new(&["jobs", "list", "--bmc", url]).output().await;
    assert!(
        stdout(&out).contains(&job) && stdout(&out).contains("[JCP001]"),
        "{}",
        stdout(&out)
    );
    let out = Run::new(&["bios", "clear-pending", "--bmc", url]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("[BIOS011]"), "{}", stderr(&out));
    let out = Run::new(&["jobs", "delete", &job, "--bmc", url]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        fleet.hosts()[0].host.snapshot().1.is_empty(),
        "deleting the job discarded the values"
    );
    c.stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &change, None)
        .await
        .unwrap();
    let out = Run::new(&["bios", "clear-pending", "--bmc", url]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(fleet.hosts()[0].host.snapshot().1.is_empty());
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &change,
        Some(&SettingsApplyTime::on_reset()),
    )
    .await
    .unwrap();
    let out = Run::new(&["jobs", "clear-queue", "--bmc", url]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = Run::new(&["jobs", "list", "--bmc", url, "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["jobs"], serde_json::json!([]));
}
