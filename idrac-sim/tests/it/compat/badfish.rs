//! badfish (PyPI, the Red Hat QUADS team's iDRAC tool) run unchanged against the emulator:
//! `--power-state`, `--ls-jobs`, `--clear-jobs`, `--reboot-only` and `--set-bios-attribute` on
//! one host and on three (`--host-list`). `.ci/run` installs it into a venv and points
//! `RFTUNE_BADFISH` at it. Without badfish a test prints one `skipped:` line and passes, unless
//! `RFTUNE_REQUIRE_TOOLS=1` (CI sets it), which makes a missing badfish a failure.

use idrac_sim::{Fleet, SimConfig};
use redfish_client::resources::bios::AttributeValue;
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The badfish to run (`RFTUNE_BADFISH`, else `badfish` on `PATH`), or `None` after printing
/// why the test is skipped (see [`rftune_tests::tool_available`]).
fn require_badfish() -> Option<PathBuf> {
    rftune_tests::require_tool(
        "badfish",
        "RFTUNE_BADFISH",
        "set RFTUNE_BADFISH to its path or put it on PATH; .ci/run installs it from PyPI",
    )
}

async fn fleet(hosts: usize) -> Fleet {
    Fleet::start(SimConfig {
        hosts,
        boot_time: Duration::from_secs(2),
        ..SimConfig::default()
    })
    .await
    .unwrap()
}

/// `host:port` as badfish takes it (`-H`), for host `i`.
fn target(fleet: &Fleet, i: usize) -> String {
    fleet.hosts()[i].addr.to_string()
}

struct Run {
    code: Option<i32>,
    output: String,
}

/// Runs badfish with `args` (plus `--insecure`: the emulator's certificate is self-signed, as an
/// iDRAC's), credentials from the environment as badfish recommends.
async fn run(badfish: &PathBuf, args: &[&str]) -> Run {
    let out = tokio::process::Command::new(badfish)
        .args(args)
        .arg("--insecure")
        .env("BADFISH_USERNAME", "root")
        .env("BADFISH_PASSWORD", "calvin")
        .env_remove("BADFISH_EMULATOR_USER")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), out)
        .await
        .expect("badfish finished within 5 minutes")
        .unwrap();
    Run {
        code: out.status.code(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn requests(fleet: &Fleet) -> u64 {
    fleet.hosts().iter().map(|h| h.host.stats.total()).sum()
}

fn report(flow: &str, fleet: &Fleet, run: &Run) {
    assert_eq!(run.code, Some(0), "badfish {flow} failed:\n{}", run.output);
    eprintln!("flow badfish {flow}: passed, {} requests", requests(fleet));
}

/// Stages a BIOS change with a job on host `i`, as any client would.
async fn stage_job(fleet: &Fleet, i: usize) -> String {
    let reply = fleet.hosts()[i].host.patch_bios(&json!({
        "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"},
        "Attributes": {"MemTest": "Enabled"},
    }));
    assert_eq!(reply.status, 202);
    let location = reply.headers.iter().find(|(k, _)| *k == "Location").unwrap().1.clone();
    location.rsplit('/').next().unwrap().to_owned()
}

/// Waits (at most a minute) until host `i`'s BIOS holds `value` for `name` and the host is out
/// of POST.
async fn applied(fleet: &Fleet, i: usize, name: &str, value: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let host = &fleet.hosts()[i].host;
        let (bios, _, on) = host.snapshot();
        if on && host.boot_remaining().is_none() && bios.get(name) == Some(&AttributeValue::from(value)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

#[tokio::test]
async fn badfish_reads_the_power_state() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--power-state"]).await;
    report("--power-state", &fleet, &r);
    assert!(r.output.contains("'On'"), "{}", r.output);
}

#[tokio::test]
async fn badfish_lists_the_job_queue() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let job = stage_job(&fleet, 0).await;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--ls-jobs"]).await;
    report("--ls-jobs", &fleet, &r);
    assert!(r.output.contains(&format!("JobID: {job}")), "{}", r.output);
}

#[tokio::test]
async fn badfish_clears_the_job_queue() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let job = stage_job(&fleet, 0).await;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--clear-jobs"]).await;
    report("--clear-jobs", &fleet, &r);
    assert!(r.output.contains("successfully cleared"), "{}", r.output);
    let queue = fleet.hosts()[0].host.jobs(redfish_client::oem::dell::JOBS, false);
    assert_eq!(queue["Members"], json!([]), "{job} was deleted");
    assert!(
        fleet.hosts()[0].host.snapshot().1.is_empty(),
        "its pending values went with it"
    );
}

#[tokio::test]
async fn badfish_reboots_a_host_and_finds_it_back() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--reboot-only"]).await;
    report("--reboot-only", &fleet, &r);
    let stats = fleet.hosts()[0].host.stats.to_json("x");
    assert!(stats["resets"].as_u64() >= Some(1), "{stats}");
    assert!(!r.output.contains("ERROR"), "{}", r.output);
}

#[tokio::test]
async fn badfish_sets_a_bios_attribute_and_reboots_one_host() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let r = run(
        &bf,
        &[
            "-H",
            &target(&fleet, 0),
            "--set-bios-attribute",
            "--attribute",
            "MemTest",
            "--value",
            "Enabled",
        ],
    )
    .await;
    report("--set-bios-attribute, 1 host", &fleet, &r);
    assert!(!r.output.contains("ERROR"), "{}", r.output);
    assert!(applied(&fleet, 0, "MemTest", "Enabled").await, "{}", r.output);
}

#[tokio::test]
async fn badfish_sets_a_bios_attribute_and_reboots_three_hosts_from_a_host_list() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(3).await;
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let list = dir.join("hosts.txt");
    let hosts: Vec<String> = (0..3).map(|i| target(&fleet, i)).collect();
    std::fs::write(&list, hosts.join("\n") + "\n").unwrap();
    let r = run(
        &bf,
        &[
            "--host-list",
            list.to_str().unwrap(),
            "--set-bios-attribute",
            "--attribute",
            "LogicalProc",
            "--value",
            "Disabled",
        ],
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    report("--set-bios-attribute --host-list, 3 hosts", &fleet, &r);
    for h in &hosts {
        assert!(r.output.contains(&format!("{h}: SUCCESSFUL")), "{}", r.output);
    }
    for i in 0..3 {
        assert!(
            applied(&fleet, i, "LogicalProc", "Disabled").await,
            "host {i}: {}",
            r.output
        );
    }
}
