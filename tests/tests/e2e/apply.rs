//! `rftune apply` against the emulator: convergence, idempotence, pending work, failures,
//! interruption, fleets.

use super::{Run, TempDir, client, sim, stats, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, AttributeGroup};
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use serde_json::Value;

fn attrs(pairs: &[(&str, &str)]) -> Attributes {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect()
}

fn apply<'a>(url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "apply",
        "--bmc",
        url,
        "--profile",
        "low-latency",
        "--graceful-timeout",
        "2s",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
    ];
    v.extend_from_slice(extra);
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_converges_with_one_reboot_and_a_second_apply_does_nothing() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let state = TempDir::new();
    let out = Run::new(&apply(url, &["-o", "json"]))
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "rftune.apply/v1");
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "converged");
    assert_eq!(host["bios"]["SysProfile"], "Custom");
    assert_eq!(host["rebooted"], true);
    let s = stats(&fleet, 0);
    assert_eq!(
        (s["bios_patches"].as_u64(), s["jobs_created"].as_u64()),
        (Some(1), Some(1)),
        "one PATCH, one job"
    );
    assert!(s["resets"].as_u64().unwrap() >= 1);
    // The snapshot holds the state before the change; the audit log every step.
    let snapshot: Value =
        serde_json::from_str(&std::fs::read_to_string(host["snapshot"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(snapshot["bios"]["SysProfile"], "PerfOptimized");
    let audit = std::fs::read_to_string(state.0.join("audit.log")).unwrap();
    let steps: Vec<String> = audit
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["step"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for step in ["plan", "snapshot", "stage", "reboot", "job", "boot", "verify"] {
        assert!(steps.iter().any(|s| s == step), "{step} missing from {steps:?}");
    }
    // Idempotent: no PATCH, no reset, exit 0.
    fleet.hosts()[0].host.stats.reset();
    let out = Run::new(&apply(url, &[])).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("in_sync: nothing to change, no reboot"),
        "{}",
        stdout(&out)
    );
    let s = stats(&fleet, 0);
    assert_eq!((s["bios_patches"].as_u64(), s["resets"].as_u64()), (Some(0), Some(0)));
    let out = Run::new(&["diff", "--bmc", url, "-p", "low-latency"])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_prints_the_plan_and_changes_nothing() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let out = Run::new(&apply(&fleet.hosts()[0].url, &["--dry-run"])).output().await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("planned:") && text.contains("SysProfile") && text.contains("Custom"),
        "{text}"
    );
    assert!(stats(&fleet, 0)["requests"]["by_method"].get("PATCH").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_pending_work_blocks_until_replaced() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    client(url)
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &attrs(&[("MemTest", "Enabled")]),
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let out = Run::new(&apply(url, &[])).output().await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("BIOS job JID_") && err.contains("MemTest=Enabled") && err.contains("--replace-pending"),
        "{err}"
    );
    assert_eq!(stats(&fleet, 0)["bios_patches"], 1, "only the foreign staging");
    let out = Run::new(&apply(url, &["--replace-pending"])).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("deleted BIOS job"), "{}", stderr(&out));
    let (bios, _, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(
        bios["MemTest"].as_str(),
        Some("Disabled"),
        "the foreign value was discarded"
    );
}

/// Under System Lockdown a real iDRAC (7.10) serves its registry with every writable attribute
/// ReadOnly and Immutable, so apply refuses while planning, naming the locked attributes, and
/// never writes; a write that gets through anyway is refused with SYS406 (the emulator's own
/// tests cover that answer).
#[tokio::test(flavor = "multi_thread")]
async fn system_lockdown_refuses_the_apply_before_any_write() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    client(url)
        .dell()
        .set_attributes(
            AttributeGroup::Idrac,
            &attrs(&[("Lockdown.1.SystemLockdown", "Enabled")]),
        )
        .await
        .unwrap();
    fleet.hosts()[0].host.stats.reset();
    let out = Run::new(&apply(url, &[])).output().await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("cannot be applied as written"), "{err}");
    assert!(
        err.contains("SysProfile: read-only on this host whatever else is set"),
        "{err}"
    );
    assert_eq!(stats(&fleet, 0)["bios_patches"], 0, "nothing was written");
    assert_eq!(stats(&fleet, 0)["jobs_created"], 0);
    let s = stats(&fleet, 0);
    assert!(
        s["requests"]["by_method"].get("PATCH").is_none(),
        "no PATCH at all: {s}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stuck_failed_and_missing_hosts_are_reported_with_their_reason() {
    for (fault, expected) in [("stuck-job", "PR30"), ("job-fails", "SYS051"), ("no-return", "did not")] {
        let fleet = sim("r7625", 1, |c| c.faults = vec![fault.parse().unwrap()]).await;
        let url = &fleet.hosts()[0].url;
        let out = Run::new(&[
            "apply",
            "--bmc",
            url,
            "-p",
            "low-latency",
            "--reboot",
            "force",
            "--job-timeout",
            "3s",
            "--boot-timeout",
            "3s",
        ])
        .output()
        .await;
        assert_eq!(out.status.code(), Some(1), "{fault}");
        assert!(
            stderr(&out).contains(expected) || stdout(&out).contains(expected),
            "{fault}: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reboot_none_leaves_the_job_and_the_next_run_adopts_it() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let state = TempDir::new();
    let out = Run::new(&apply(url, &["--reboot", "none"]))
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).contains("applies at the next reboot"), "{}", stdout(&out));
    assert_eq!(stats(&fleet, 0)["resets"], 0);
    let out = Run::new(&apply(url, &["-o", "json"]))
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["adopted"], true);
    let s = stats(&fleet, 0);
    assert_eq!(
        (s["bios_patches"].as_u64(), s["jobs_created"].as_u64()),
        (Some(1), Some(1)),
        "adopted, not staged again"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_during_the_job_wait_the_next_run_converges_without_a_second_reboot() {
    let fleet = sim("r7625", 1, |c| c.boot_time = std::time::Duration::from_secs(4)).await;
    let url = fleet.hosts()[0].url.clone();
    let state = TempDir::new();
    let mut child = tokio::process::Command::new(super::binary())
        .args(apply(&url, &["--reboot", "force"]))
        .env("RFTUNE_PASSWORD", "calvin")
        .env("RFTUNE_STATE_DIR", &state.0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while stats(&fleet, 0)["resets"] == 0 {
        assert!(std::time::Instant::now() < deadline, "apply never reset the host");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().await.unwrap(); // SIGKILL while the job runs during POST
    let out = Run::new(&apply(&url, &[])).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let s = stats(&fleet, 0);
    assert_eq!(
        (s["bios_patches"].as_u64(), s["resets"].as_u64()),
        (Some(1), Some(1)),
        "no second PATCH, no second reboot: {s}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_of_50_with_faults_ends_converged_or_reported() {
    let fleet = sim("r7525", 50, |c| {
        c.faults = vec!["stuck-job@10%".parse().unwrap(), "503:0.05".parse().unwrap()];
        c.seed = 11;
    })
    .await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let out = Run::new(&[
        "apply",
        "--inventory",
        inventory.to_str().unwrap(),
        "-p",
        "performance",
        "--reboot",
        "force",
        "--max-unavailable",
        "25",
        "--job-timeout",
        "5s",
        "--boot-timeout",
        "10s",
        "-o",
        "json",
    ])
    .state_dir(&dir.0)
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = &doc["summary"];
    assert_eq!(summary["converged"], 45, "{summary}");
    assert_eq!(summary["error"], 5, "{summary}");
    let audit = std::fs::read_to_string(dir.0.join("audit.log")).unwrap();
    let records: Vec<Value> = audit.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for h in doc["hosts"].as_array().unwrap() {
        let name = h["host"].as_str().unwrap();
        if h["outcome"] == "error" {
            assert!(h["error"].as_str().unwrap().contains("PR30"), "{h}");
        }
        let staged = records
            .iter()
            .any(|r| r["host"] == name && r["step"] == "stage" && r["outcome"] == "ok");
        assert!(staged, "{name}: a change without an audit record");
    }
    // Every host that converged really has the profile now.
    for (i, h) in fleet.hosts().iter().enumerate() {
        let (bios, _, _) = h.host.snapshot();
        let converged = doc["hosts"][i]["outcome"] == "converged";
        assert_eq!(
            bios["SysProfile"].as_str() == Some("PerfOptimized"),
            converged,
            "host {i}"
        );
    }
}
