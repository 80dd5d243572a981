//! badfish (PyPI, the Red Hat QUADS team's iDRAC tool) run unchanged against the emulator:
//! `--power-state`, `--ls-jobs`, `--clear-jobs`, `--reboot-only` and `--set-bios-attribute` on
//! one host and on three (`--host-list`); its boot flows (`--check-boot`, the boot order of a
//! host type from an interfaces file, `--pxe`, `--boot-to-type`, `--boot-to`), `--factory-reset`
//! and the setup password (`--set-bios-password`, `--remove-bios-password`). `.ci/run` installs it into a venv and points
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

/// The interfaces file badfish's boot-order flows read (`-i`): per host type, the boot devices
/// in order, by FQDD. A host named by address has no model in its name, so the keys are the
/// bare types.
fn interfaces(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("interfaces.yml");
    std::fs::write(
        &path,
        "director: NIC.PxeDevice.1-1,RAID.SL.3-1,Optical.iDRACVirtual.1-1\nforeman: RAID.SL.3-1,NIC.PxeDevice.1-1,Optical.iDRACVirtual.1-1\n",
    )
    .unwrap();
    path
}

/// Waits (at most a minute) until host `i` is out of POST with nothing pending.
async fn settled(fleet: &Fleet, i: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let host = &fleet.hosts()[i].host;
    while Instant::now() < deadline {
        let (_, pending, on) = host.snapshot();
        if on && host.boot_remaining().is_none() && pending.is_empty() && !host.stats.booted().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn badfish_checks_the_boot_order() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--check-boot"]).await;
    report("--check-boot", &fleet, &r);
    for line in ["1: NIC.PxeDevice.1-1", "2: RAID.SL.3-1", "3: Optical.iDRACVirtual.1-1"] {
        assert!(r.output.contains(line), "{line}: {}", r.output);
    }
}

#[tokio::test]
async fn badfish_changes_the_boot_order_from_an_interfaces_file_with_one_job() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let dir = tempfile::tempdir().unwrap();
    let yml = interfaces(dir.path());
    let r = run(
        &bf,
        &["-H", &target(&fleet, 0), "-i", yml.to_str().unwrap(), "-t", "foreman"],
    )
    .await;
    report("-t foreman -i interfaces.yml (boot order)", &fleet, &r);
    settled(&fleet, 0).await;
    let check = run(
        &bf,
        &["-H", &target(&fleet, 0), "-i", yml.to_str().unwrap(), "--check-boot"],
    )
    .await;
    report("--check-boot after the change", &fleet, &check);
    assert!(
        check.output.contains("foreman"),
        "the order is now foreman's:\n{}",
        check.output
    );
    let stats = fleet.hosts()[0].host.stats.to_json("x");
    assert_eq!(stats["jobs_created"], 1, "{stats}");
    assert_eq!(fleet.hosts()[0].host.stats.booted(), ["RAID.SL.3-1"]);
}

#[tokio::test]
async fn badfish_sets_a_one_time_pxe_boot() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--pxe"]).await;
    report("--pxe", &fleet, &r);
    let system = fleet.hosts()[0].host.system(&json!({"Boot": {}}));
    assert_eq!(system["Boot"]["BootSourceOverrideTarget"], "Pxe");
    assert_eq!(system["Boot"]["BootSourceOverrideEnabled"], "Once");
    assert_eq!(fleet.hosts()[0].host.stats.to_json("x")["jobs_created"], 0);
}

#[tokio::test]
async fn badfish_boots_once_to_a_host_type_through_the_bios_one_time_setting() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let dir = tempfile::tempdir().unwrap();
    let yml = interfaces(dir.path());
    let r = run(
        &bf,
        &[
            "-H",
            &target(&fleet, 0),
            "-i",
            yml.to_str().unwrap(),
            "--boot-to-type",
            "foreman",
        ],
    )
    .await;
    report("--boot-to-type foreman", &fleet, &r);
    let r = run(&bf, &["-H", &target(&fleet, 0), "--reboot-only"]).await;
    report("--reboot-only (into the one-time boot)", &fleet, &r);
    settled(&fleet, 0).await;
    assert_eq!(
        fleet.hosts()[0].host.stats.booted(),
        ["RAID.SL.3-1 (one-time BIOS setting)"],
        "the boot used the BIOS's one-time device once"
    );
    let (bios, _, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(bios["OneTimeBootMode"], AttributeValue::from("Disabled"), "used up");
}

/// badfish's `--boot-to` stages the one-time device with an apply time (which creates the job)
/// and then asks for a job too: a real iDRAC answers SYS011, as a public QUADS report shows, and
/// so does the emulator.
#[tokio::test]
async fn badfish_boot_to_a_device_meets_sys011_as_on_a_real_idrac() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--boot-to", "NIC.PxeDevice.1-1"]).await;
    assert_ne!(r.code, Some(0), "{}", r.output);
    assert!(
        r.output.contains("Pending configuration values are already committed"),
        "{}",
        r.output
    );
    eprintln!(
        "flow badfish --boot-to: failed with SYS011 as on a real iDRAC, {} requests",
        requests(&fleet)
    );
}

#[tokio::test]
async fn badfish_resets_the_bios_to_defaults_at_the_next_boot() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let host = &fleet.hosts()[0].host;
    let r = run(&bf, &["-H", &target(&fleet, 0), "--factory-reset"]).await;
    report("--factory-reset", &fleet, &r);
    let lc = host.dell_attributes(
        redfish_client::oem::dell::AttributeGroup::LifecycleController,
        &json!({}),
    );
    assert_eq!(lc["Attributes"]["LCAttributes.1.BIOSRTDRequested"], "True");
    let r = run(&bf, &["-H", &target(&fleet, 0), "--reboot-only"]).await;
    report("--reboot-only (into the reset)", &fleet, &r);
    settled(&fleet, 0).await;
    let lc = host.dell_attributes(
        redfish_client::oem::dell::AttributeGroup::LifecycleController,
        &json!({}),
    );
    assert_eq!(lc["Attributes"]["LCAttributes.1.BIOSRTDRequested"], "False");
}

#[tokio::test]
async fn badfish_sets_and_removes_the_bios_setup_password() {
    let Some(bf) = require_badfish() else { return };
    let fleet = fleet(1).await;
    let target = target(&fleet, 0);
    // badfish takes the passwords as arguments; this is a test password.
    let r = run(
        &bf,
        &["-H", &target, "--set-bios-password", "--new-password", "Quads-Setup-1"],
    )
    .await;
    report("--set-bios-password", &fleet, &r);
    settled(&fleet, 0).await;
    let (bios, _, _) = fleet.hosts()[0].host.snapshot();
    assert!(
        bios["SHA256SetupPassword"].as_str().is_some_and(|h| h.len() == 64),
        "{:?}",
        bios["SHA256SetupPassword"]
    );
    let r = run(
        &bf,
        &[
            "-H",
            &target,
            "--remove-bios-password",
            "--old-password",
            "Quads-Setup-1",
        ],
    )
    .await;
    report("--remove-bios-password", &fleet, &r);
    settled(&fleet, 0).await;
    let (bios, _, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(bios["SHA256SetupPassword"], AttributeValue::from(""));
}
