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
    assert_eq!(out.status.code(), Some(2), "changes planned, as diff: {}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("planned:") && text.contains("SysProfile") && text.contains("Custom"),
        "{text}"
    );
    assert!(text.contains("would reboot the host once (graceful)"), "{text}");
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
/// ReadOnly and Immutable. rftune reads the lockdown attribute with the host's state and refuses
/// once, naming the cause, before any snapshot or write, instead of one misleading "read-only"
/// per attribute; a write that gets through anyway is refused with SYS406 (the emulator's own
/// tests cover that answer).
#[tokio::test(flavor = "multi_thread")]
async fn system_lockdown_is_refused_once_before_any_snapshot_or_write() {
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
    let state = super::TempDir::new();
    // A BIOS profile and an iDRAC-only profile: both refused before anything is sent.
    for profile in ["hpc", "thermally-challenged"] {
        let args = ["apply", "--bmc", url, "--profile", profile, "--reboot", "force"];
        let out = Run::new(&args).state_dir(&state.0).output().await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("System Lockdown is on"), "{err}");
        assert!(!err.contains("read-only"), "no misleading per-attribute errors: {err}");
    }
    let stats = stats(&fleet, 0);
    let writes: Vec<&String> = stats["requests"]["by_path"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("PATCH") || (k.starts_with("POST") && !k.contains("Sessions")))
        .collect();
    assert!(writes.is_empty(), "no write reached the iDRAC: {writes:?}");
    assert!(!state.0.join("snapshots").exists(), "no snapshot either");
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

/// A failed host's JSON entry says whether rftune wrote to it first (Ansible's `changed` reads
/// it): a job that got stuck after the PATCH and the reboot did; refused pending work did not.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_hosts_entry_says_whether_anything_was_written_before_the_failure() {
    let fleet = sim("r7625", 2, |c| c.faults = vec!["stuck-job@1".parse().unwrap()]).await;
    let (stuck, refused) = (&fleet.hosts()[0].url, &fleet.hosts()[1].url);
    client(refused)
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &attrs(&[("MemTest", "Enabled")]),
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    for (url, written) in [(stuck, true), (refused, false)] {
        let out = Run::new(&apply(url, &["--reboot", "force", "-o", "json"]))
            .output()
            .await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let entry = &doc["hosts"][0];
        assert_eq!(entry["outcome"], "error", "{entry}");
        assert_eq!(entry["written"], written, "{entry}");
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

/// Applies `performance` to every host of `fleet`, whose BMCs suffer `fault`, with `waits`,
/// all hosts at once, up to three times: no host may refuse the values an earlier run staged,
/// and every host ends converged.
pub(super) async fn converges_within_three_runs(fault: &str, fleet: &idrac_sim::Fleet, waits: &[&str]) {
    converges_within_three_runs_of("performance", fault, fleet, waits).await;
}

/// [`converges_within_three_runs`] with the profile `profile` (a name or a file).
pub(super) async fn converges_within_three_runs_of(
    profile: &str,
    fault: &str,
    fleet: &idrac_sim::Fleet,
    waits: &[&str],
) {
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let hosts = fleet.hosts().len().to_string();
    let mut args = vec![
        "apply",
        "--inventory",
        inventory.to_str().unwrap(),
        "-p",
        profile,
        "--reboot",
        "force",
        "--max-unavailable",
        &hosts,
        "-o",
        "json",
    ];
    args.extend(waits);
    let mut converged = 0;
    for round in 1..=3 {
        let out = Run::new(&args).state_dir(&dir.0).output().await;
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        for h in doc["hosts"].as_array().into_iter().flatten() {
            let error = h["error"].as_str().unwrap_or_default();
            assert!(
                !error.contains("already staged"),
                "{fault} round {round}: a host refused its own values: {h}"
            );
        }
        converged = doc["summary"]["converged"].as_u64().unwrap_or(0) + doc["summary"]["in_sync"].as_u64().unwrap_or(0);
        if out.status.code() == Some(0) {
            break;
        }
    }
    assert_eq!(
        converged,
        fleet.hosts().len() as u64,
        "{fault}: every host converged within three runs"
    );
}

/// The iDRAC applies a request and the answer is cut (`reset`) or garbled (`malformed`): rftune
/// keeps its staging marker, reads back what is staged and adopts it, so no host ends refusing
/// its own values, none gets a second job, and a rerun converges every host.
#[tokio::test(flavor = "multi_thread")]
async fn lost_answers_never_lead_to_a_second_job_and_a_rerun_converges() {
    for fault in ["reset:0.1", "malformed:0.1"] {
        let fleet = sim("r7525", 30, |c| {
            c.faults = vec![fault.parse().unwrap()];
            c.seed = 7;
        })
        .await;
        converges_within_three_runs(fault, &fleet, &["--job-timeout", "10s", "--boot-timeout", "10s"]).await;
        for (i, h) in fleet.hosts().iter().enumerate() {
            let s = h.host.stats.to_json("");
            assert!(s["jobs_created"].as_u64().unwrap() <= 1, "{fault} host {i}: {s}");
            let (bios, pending, _) = h.host.snapshot();
            assert_eq!(bios["SysProfile"].as_str(), Some("PerfOptimized"), "{fault} host {i}");
            assert!(pending.is_empty(), "{fault} host {i}: {pending:?}");
        }
    }
}

/// A job stuck at PR30 never runs but holds the queue. `jobs list` shows it as open, the
/// refusal names commands that work, and running them recovers the host.
#[tokio::test(flavor = "multi_thread")]
async fn a_stuck_job_is_shown_as_open_and_the_hinted_commands_recover_the_host() {
    let fleet = sim("r7625", 1, |c| c.faults = vec!["stuck-job".parse().unwrap()]).await;
    let url = fleet.hosts()[0].url.clone();
    let state = TempDir::new();
    let run = |args: &[&str]| Run::new(args).state_dir(&state.0);
    let base = [
        "apply",
        "--bmc",
        &url,
        "-p",
        "low-latency",
        "--reboot",
        "force",
        "--job-timeout",
        "3s",
        "--boot-timeout",
        "5s",
    ];
    let out = run(&base).output().await;
    assert_eq!(out.status.code(), Some(1), "the job sticks: {}", stderr(&out));
    // The stuck job is open for jobs list (not only with --all) and for inventory.
    let listed = run(&["jobs", "list", "--bmc", &url]).output().await;
    assert!(stdout(&listed).contains("PR30"), "{}", stdout(&listed));
    let inv = run(&["inventory", "--bmc", &url, "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&inv.stdout).unwrap();
    assert_eq!(doc["open_jobs"][0]["message_id"], "PR30", "{doc}");
    // A second apply refuses and says what to run.
    let refused = run(&base).output().await;
    assert_eq!(refused.status.code(), Some(1));
    let err = stderr(&refused);
    assert!(err.contains("its job is stuck"), "{err}");
    assert!(err.contains(&format!("rftune jobs list --bmc {url}")), "{err}");
    assert!(err.contains("--replace-pending"), "{err}");
    // The hinted command works: the stuck job is deleted and the values are staged again with
    // a fresh job (left for the next reboot here, since this emulated host sticks every job
    // it boots into).
    let mut replace: Vec<&str> = base.iter().map(|a| if *a == "force" { "none" } else { a }).collect();
    replace.push("--replace-pending");
    let out = run(&replace).output().await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("deleted BIOS job"), "{}", stderr(&out));
    let listed = run(&["jobs", "list", "--bmc", &url, "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{doc}");
    assert_eq!(
        jobs[0]["MessageId"].as_str().map(|m| m.ends_with("JCP001")),
        Some(true),
        "{doc}"
    );
}

/// Starts `rftune apply` (graceful reboot) on `url` in the background, and returns once the
/// emulator saw the shutdown request.
async fn apply_until_shutdown_requested(
    fleet: &idrac_sim::Fleet,
    url: &str,
    state: &std::path::Path,
) -> tokio::process::Child {
    let child = tokio::process::Command::new(super::binary())
        .args([
            "apply",
            "--bmc",
            url,
            "-p",
            "low-latency",
            "--job-timeout",
            "30s",
            "--boot-timeout",
            "30s",
        ])
        .env("RFTUNE_PASSWORD", "calvin")
        .env("RFTUNE_STATE_DIR", state)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while stats(fleet, 0)["resets"] == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "apply never asked for the shutdown"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    child
}

fn power_state(fleet: &idrac_sim::Fleet) -> &'static str {
    let (_, _, on) = fleet.hosts()[0].host.snapshot();
    if on { "On" } else { "Off" }
}

/// SIGTERM between the graceful shutdown and the power-on: rftune finishes the reboot (the host
/// is not left off), stops waiting for the job, logs out, records it and exits 143.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_graceful_reboot_leaves_the_host_on_and_exits_143() {
    let fleet = sim("r7625", 1, |c| c.boot_time = std::time::Duration::from_secs(3)).await;
    let url = fleet.hosts()[0].url.clone();
    let state = TempDir::new();
    let child = apply_until_shutdown_requested(&fleet, &url, &state.0).await;
    let pid = child.id().unwrap().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("SIGTERM"), "{err}");
    assert_eq!(power_state(&fleet), "On", "the host was powered on again");
    let audit = std::fs::read_to_string(state.0.join("audit.log")).unwrap();
    assert!(audit.contains("interrupted by SIGTERM"), "{audit}");
    let sessions = client(&url)
        .members::<redfish_client::odata::Link>("/redfish/v1/SessionService/Sessions")
        .await
        .unwrap();
    assert!(sessions.is_empty(), "logged out: {sessions:?}");
    // The job ran on the BMC meanwhile; a rerun verifies without a second PATCH or reboot.
    let out = Run::new(&apply(&url, &[])).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let s = stats(&fleet, 0);
    assert_eq!(s["bios_patches"], 1, "{s}");
}

/// SIGKILL right after the shutdown request leaves the host off; the next apply finds its own
/// interrupted reboot and powers the host on instead of waiting for it.
#[tokio::test(flavor = "multi_thread")]
async fn a_rerun_powers_on_a_host_an_interrupted_reboot_left_off() {
    let fleet = sim("r7625", 1, |c| c.boot_time = std::time::Duration::from_secs(2)).await;
    let url = fleet.hosts()[0].url.clone();
    let state = TempDir::new();
    let mut child = apply_until_shutdown_requested(&fleet, &url, &state.0).await;
    child.kill().await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while power_state(&fleet) != "Off" {
        assert!(std::time::Instant::now() < deadline, "the host never went off");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let started = std::time::Instant::now();
    let out = Run::new(&apply(&url, &[])).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "no long wait for a host left off"
    );
    assert_eq!(power_state(&fleet), "On");
    let audit = std::fs::read_to_string(state.0.join("audit.log")).unwrap();
    assert!(audit.contains("powered on after an interrupted reboot"), "{audit}");
    assert_eq!(stats(&fleet, 0)["bios_patches"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_and_diff_say_which_choice_was_made_for_this_host_and_why() {
    // The C6615 sled cannot do NPS 4 (six channels): hpc asks for 4, then 2, then 1.
    let fleet = sim("c6615", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["apply", "--bmc", url, "--profile", "hpc", "--dry-run"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "choice: NumaNodesPerSocket = 2: 4 is not possible on this platform (base [platform c6615]): Six memory channels"
        ) && text.contains("; using 2"),
        "{text}"
    );
    assert!(
        text.contains("choice: FixedSocPstate = FixedSocPstate0: token FixedSocPstate0"),
        "{text}"
    );
    let out = Run::new(&["apply", "--bmc", url, "--profile", "hpc", "--dry-run", "-o", "json"])
        .output()
        .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["bios"]["NumaNodesPerSocket"], "2");
    assert_eq!(host["choices"]["NumaNodesPerSocket"]["chosen"], "2");
    assert_eq!(
        host["choices"]["NumaNodesPerSocket"]["candidates"],
        serde_json::json!(["4", "2", "1"])
    );

    let out = Run::new(&["diff", "--bmc", url, "-p", "hpc", "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let nps = doc["hosts"][0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["attribute"] == "NumaNodesPerSocket")
        .unwrap()
        .clone();
    assert_eq!(nps["desired"], "2");
    assert_eq!(nps["status"], "drift");
    assert!(
        nps["note"].as_str().unwrap().starts_with("chose 2: 4 is not possible"),
        "{nps}"
    );
    let out = Run::new(&["diff", "--bmc", url, "-p", "hpc"]).output().await;
    assert!(
        stdout(&out).contains("chose 2: 4 is not possible on this platform"),
        "{}",
        stdout(&out)
    );
    assert!(stats(&fleet, 0)["requests"]["by_method"].get("PATCH").is_none());
}

/// Copies a directory tree (a fixture) so that a test can change it.
pub(super) fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `tree` (a built-in model) copied under `dir` with the DIMM `dimm` pulled from its
/// `Memory` collection.
fn without_dimm(dir: &std::path::Path, tree: &str, dimm: &str) {
    copy_tree(&rftune_tests::fixtures_dir().join(tree), dir);
    let memory = dir.join("redfish/v1/Systems/System.Embedded.1/Memory");
    std::fs::remove_dir_all(memory.join(dimm)).unwrap();
    let index = memory.join("index.json");
    let mut collection: Value = serde_json::from_slice(&std::fs::read(&index).unwrap()).unwrap();
    let members = collection["Members"].as_array_mut().unwrap();
    members.retain(|m| !m["@odata.id"].as_str().unwrap().ends_with(&format!("/{dimm}")));
    collection["Members@odata.count"] = members.len().into();
    std::fs::write(&index, serde_json::to_vec(&collection).unwrap()).unwrap();
}

/// The `NumaNodesPerSocket` change of a `rftune diff -o json` of `url` against `profile`.
async fn nps_change(url: &str, profile: &str) -> Value {
    let out = Run::new(&["diff", "--bmc", url, "-p", profile, "-o", "json"])
        .output()
        .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    doc["hosts"][0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["attribute"] == "NumaNodesPerSocket")
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_memory_population_rules_of_the_host_s_generation_decide_nps_and_the_dimms_are_read_once() {
    let memory_reads = |fleet: &idrac_sim::Fleet| {
        stats(fleet, 0)["requests"]["by_path"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(path, _)| path.contains("/Memory"))
            .map(|(_, n)| n.as_u64().unwrap())
            .sum::<u64>()
    };

    // A Genoa R7625 with one DIMM pulled (12 on socket 1, 11 on socket 2): Dell documents no
    // population rules for 12 DDR5 channels, so NPS 4 stays, with a warning saying so.
    let dir = TempDir::new();
    without_dimm(&dir.0, "r7625", "DIMM.Socket.B12");
    let unbalanced = sim(dir.0.to_str().unwrap(), 1, |_| {}).await;
    let nps = nps_change(&unbalanced.hosts()[0].url, "hpc").await;
    assert_eq!(nps["desired"], "4", "{nps}");
    let decision = &nps["choice"]["decisions"][0];
    assert_eq!(decision["outcome"], "warning", "{nps}");
    assert_eq!(decision["table"], "nps-population", "{nps}");
    assert_eq!(memory_reads(&unbalanced), 1, "one request for all the DIMMs");

    // A Milan R7525 with 7 DIMMs on its second socket: NPS 2 needs four equal channels per
    // half, so a profile preferring NPS 2 gets NPS 1, saying which rule decided.
    let dir = TempDir::new();
    without_dimm(&dir.0, "r7525", "DIMM.Socket.B8");
    let profile = dir.0.join("nics.toml");
    std::fs::write(
        &profile,
        "name = \"nics\"\ndescription = \"NPS 2 for a NIC-bound host\"\nextends = \"performance\"\n\
         [bios.NumaNodesPerSocket]\nprefer = [\"2\", \"1\"]\nwhy = \"NIC locality.\"\nsource = \"nvidia-net-tuning\"\nconfidence = \"inferred\"\n",
    )
    .unwrap();
    let milan = sim(dir.0.to_str().unwrap(), 1, |_| {}).await;
    let nps = nps_change(&milan.hosts()[0].url, profile.to_str().unwrap()).await;
    assert_eq!(nps["desired"], "1", "{nps}");
    let note = nps["note"].as_str().unwrap_or_default();
    assert!(note.starts_with("chose 1: 2 is not possible"), "{nps}");
    assert!(note.contains("DIMM"), "the note names the population rule: {note}");
    assert_eq!(memory_reads(&milan), 1, "one request for all the DIMMs");

    // The same host fully populated keeps NPS 4; a profile that never asks for NPS 4
    // (performance writes NPS 1) does not read the DIMMs at all.
    let balanced = sim("r7625", 1, |_| {}).await;
    let url = &balanced.hosts()[0].url;
    let out = Run::new(&["apply", "--bmc", url, "-p", "hpc", "--dry-run", "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["choices"]["NumaNodesPerSocket"]["chosen"], "4", "{doc}");
    assert_eq!(memory_reads(&balanced), 1);
    let out = Run::new(&["diff", "--bmc", url, "-p", "performance"]).output().await;
    assert!(out.status.code().is_some_and(|c| c <= 2), "{}", stderr(&out));
    assert_eq!(memory_reads(&balanced), 1, "performance needs no DIMM read");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_nps_the_bios_falls_back_from_at_post_is_not_converged_and_says_why() {
    // A Genoa R7625 with one DIMM pulled: no manual gives Genoa's population rules, so hpc
    // writes NPS 4 with a warning; the emulated BIOS (assuming every channel must be alike)
    // boots NPS 1 and logs UEFI0391, and the apply ends not converged, saying what that means.
    let dir = TempDir::new();
    without_dimm(&dir.0, "r7625", "DIMM.Socket.B12");
    let fleet = sim(dir.0.to_str().unwrap(), 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["apply", "--bmc", url, "-p", "hpc", "--reboot", "force", "-o", "json"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "not converged: {}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "not_converged", "{host}");
    assert_eq!(host["bios"]["NumaNodesPerSocket"], "4", "the value written: {host}");
    let note = host["readback"]["NumaNodesPerSocket"].as_str().unwrap_or_default();
    assert!(
        note.contains("UEFI0391") && note.contains("fell back to NPS 1"),
        "{host}"
    );
    let summary = host["summary"].as_str().unwrap();
    assert!(
        summary.contains("NumaNodesPerSocket (drift: wanted 4, has 1: the BIOS reads back NPS 1"),
        "{summary}"
    );
    // The emulated iDRAC's Lifecycle log says so too, as a real one would.
    let log = client(url)
        .get_value("/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries")
        .await
        .unwrap();
    assert!(log.to_string().contains("UEFI0391"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_each_host_reports_each_phase_on_one_line() {
    let fleet = sim("r7625", 2, |_| {}).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let out = Run::new(&["apply", "--inventory", inventory.to_str().unwrap(), "-p", "hpc"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    // Every host reads: a fleet counts them instead of a line each.
    assert!(err.contains("rftune: apply: 2/2 hosts done, 0 failed ("), "{err}");
    for host in fleet.hosts() {
        let name = &host.name;
        assert!(!err.contains(&format!("rftune: {name}: reading\n")), "{err}");
        for phase in ["staging 9 BIOS value(s)", "asking the OS to shut down", "verifying"] {
            assert!(
                err.contains(&format!("rftune: {name}: {phase}\n")),
                "{name} {phase}: {err}"
            );
        }
        // A job polled many times prints once per state.
        let job_lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with(&format!("rftune: {name}: job ")))
            .collect();
        let mut distinct = job_lines.clone();
        distinct.dedup();
        assert_eq!(job_lines, distinct, "{err}");
    }
    // As JSON log lines, with the host and a stable phase name, and no ANSI colour.
    let out = Run::new(&[
        "--log-format",
        "json",
        "apply",
        "--bmc",
        &fleet.hosts()[0].url,
        "-p",
        "performance",
    ])
    .state_dir(&dir.0)
    .output()
    .await;
    let err = stderr(&out);
    assert!(!err.contains('\u{1b}'), "{err}");
    let phases: Vec<Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["fields"]["phase"].is_string())
        .collect();
    assert!(
        phases.iter().any(
            |l| l["fields"]["host"] == fleet.hosts()[0].url.trim_start_matches("http://")
                && l["fields"]["phase"] == "reading"
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_canary_leaves_the_fleet_untouched_and_max_failures_stops_new_hosts() {
    // The first host's BIOS job fails: as a canary it stops the rollout before any other host.
    let fleet = sim("r7625", 4, |c| c.faults = vec!["job-fails@1".parse().unwrap()]).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let apply = |extra: &[&str]| {
        let mut args = vec![
            "apply",
            "--inventory",
            inventory.to_str().unwrap(),
            "-p",
            "performance",
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        Run::new(&args).state_dir(&dir.0)
    };
    let out = apply(&["--canary", "1"]).output().await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts[0]["outcome"], "error");
    for (i, h) in hosts.iter().enumerate().skip(1) {
        let why = h["error"].as_str().unwrap();
        assert!(why.contains("not started: the canary r7625-0001 failed"), "{h}");
        assert!(
            stats(&fleet, i)["requests"]["by_method"].get("PATCH").is_none(),
            "host {i} touched"
        );
    }
    // Without a canary, one at a time, --max-failures 1: the first failure stops the rest.
    let fleet = sim("r7625", 3, |c| c.faults = vec!["job-fails@1".parse().unwrap()]).await;
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let out = apply(&["--max-failures", "1", "--concurrency", "1"]).output().await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let outcomes: Vec<&str> = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["error"].as_str().unwrap_or("ok"))
        .collect();
    assert!(
        outcomes[1..]
            .iter()
            .all(|e| e.contains("not started: 1 host(s) had failed")),
        "{outcomes:?}"
    );
    assert!(stats(&fleet, 2)["requests"]["by_method"].get("PATCH").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_stages_a_host_only_once_its_reboot_slot_is_granted() {
    // Three hosts, one reboot at a time, each POST slow: while the first reboots, the others
    // have nothing staged yet.
    let fleet = sim("r7625", 3, |c| c.boot_time = std::time::Duration::from_secs(3)).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let run = Run::new(&["apply", "--inventory", inventory.to_str().unwrap(), "-p", "performance"])
        .state_dir(&dir.0)
        .output();
    let watch = async {
        let mut most_staged = 0;
        for _ in 0..60 {
            let staged = fleet.hosts().iter().filter(|h| !h.host.snapshot().1.is_empty()).count();
            most_staged = most_staged.max(staged);
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        most_staged
    };
    let (out, most_staged) = tokio::join!(run, watch);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(most_staged, 1, "at most one host had values staged at a time");
}
