//! Dell's own Ansible modules (the `dellemc.openmanage` collection, shipped in PyPI's community
//! `ansible` package) run unchanged against the emulator by the real `ansible-playbook`:
//! `idrac_boot` (the boot order, a one-time boot, a boot option turned off) and `idrac_bios`
//! with `reset_bios`; and on the 17G tree (iDRAC10), where the collection (9.12.3) writes boot
//! settings through `Systems/System.Embedded.1/Settings` (`generation >= 17`) and logs in with a
//! session, `idrac_boot`'s boot order and one-time boot and `idrac_bios`'s attributes (the BIOS
//! lists OnReset only, so the module stages with OnReset and restarts the host). `.ci/run`
//! installs a pinned `ansible` into its own venv and points `RFTUNE_DELL_ANSIBLE_PLAYBOOK` at its
//! `ansible-playbook`; without it each test prints one `skipped:` line and passes, unless
//! `RFTUNE_REQUIRE_TOOLS=1`.

use idrac_sim::{Fleet, ModelSource, SimConfig};
use redfish_client::resources::bios::AttributeValue;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The `ansible-playbook` of a venv holding the community `ansible` package.
fn require_ansible() -> Option<PathBuf> {
    rftune_tests::require_tool(
        "ansible-playbook with dellemc.openmanage",
        "RFTUNE_DELL_ANSIBLE_PLAYBOOK",
        "set RFTUNE_DELL_ANSIBLE_PLAYBOOK to the ansible-playbook of a venv with PyPI's `ansible` package; .ci/run installs one",
    )
}

/// One emulated `model` whose POST lasts `boot_time`.
async fn fleet_of(model: &str, boot_time: Duration) -> Fleet {
    Fleet::start(SimConfig {
        hosts: 1,
        tls: true,
        boot_time,
        model: ModelSource::Builtin(model.to_owned()),
        ..SimConfig::default()
    })
    .await
    .unwrap()
}

/// One emulated iDRAC9 (r7625) whose POST lasts `boot_time`.
async fn fleet_booting_in(boot_time: Duration) -> Fleet {
    fleet_of("r7625", boot_time).await
}

async fn fleet() -> Fleet {
    fleet_booting_in(Duration::from_secs(2)).await
}

/// One emulated 17G host (iDRAC10).
async fn r7725() -> Fleet {
    fleet_of("r7725", Duration::from_secs(2)).await
}

/// Runs one task of `module` with `args` (YAML lines, indented for the task) against host 0,
/// and asserts `checks` (Jinja conditions on the registered result) in the play. Returns the
/// play's output.
async fn play(ansible: &Path, fleet: &Fleet, module: &str, args: &str, checks: &[&str]) -> String {
    let addr = fleet.hosts()[0].addr;
    let dir = tempfile::tempdir().unwrap();
    let that: String = checks.iter().map(|c| format!("          - \"{c}\"\n")).collect();
    let playbook = format!(
        "- hosts: localhost\n  gather_facts: false\n  connection: local\n  tasks:\n    - name: {module}\n      dellemc.openmanage.{module}:\n        idrac_ip: \"{ip}\"\n        idrac_port: {port}\n        idrac_user: root\n        idrac_password: calvin\n        validate_certs: false\n{args}      register: result\n    - ansible.builtin.debug:\n        var: result\n    - ansible.builtin.assert:\n        that:\n{that}",
        ip = addr.ip(),
        port = addr.port(),
    );
    let path = dir.path().join("play.yml");
    std::fs::write(&path, playbook).unwrap();
    let python = ansible.with_file_name("python");
    let out = tokio::process::Command::new(ansible)
        .arg(&path)
        .arg("-e")
        .arg(format!("ansible_python_interpreter={}", python.display()))
        .env("ANSIBLE_HOME", dir.path().join("home"))
        .env("ANSIBLE_LOCAL_TEMP", dir.path().join("tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(600), out)
        .await
        .expect("ansible-playbook finished within 10 minutes")
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{module} failed:\n{text}");
    let requests = fleet.hosts()[0].host.stats.total();
    eprintln!("flow Dell Ansible {module}: passed, {requests} requests");
    text
}

/// Waits (at most a minute) until the host is out of POST and `done` holds.
async fn until(fleet: &Fleet, done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline {
        if fleet.hosts()[0].host.boot_remaining().is_none() && done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

fn setting(fleet: &Fleet, name: &str) -> Option<AttributeValue> {
    fleet.hosts()[0].host.snapshot().0.get(name).cloned()
}

#[tokio::test]
async fn dell_ansible_idrac_boot_sets_the_boot_order_with_its_job_and_reboot() {
    let Some(ansible) = require_ansible() else { return };
    let fleet = fleet().await;
    let args = "        boot_order: [Boot0001, Boot0000, Boot0002]\n        reset_type: graceful_restart\n        job_wait: true\n        job_wait_timeout: 120\n";
    play(&ansible, &fleet, "idrac_boot", args, &["result is changed"]).await;
    let want = AttributeValue::from("RAID.SL.3-1,NIC.PxeDevice.1-1,Optical.iDRACVirtual.1-1");
    assert!(until(&fleet, || setting(&fleet, "SetBootOrderEn") == Some(want.clone())).await);
    let system = fleet.hosts()[0]
        .host
        .system(&serde_json::json!({"Boot": {"BootOrder": []}}));
    assert_eq!(
        system["Boot"]["BootOrder"],
        serde_json::json!(["Boot0001", "Boot0000", "Boot0002"])
    );
}

/// `idrac_boot` one-time PXE (`reset_type: none`) on host 0: the override in force, no job.
async fn one_time_pxe_without_a_job(ansible: &Path, fleet: &Fleet) {
    let args = "        boot_source_override_target: pxe\n        boot_source_override_enabled: once\n        reset_type: none\n";
    let out = play(ansible, fleet, "idrac_boot", args, &["result is not failed"]).await;
    assert!(
        out.contains("The boot settings operation is triggered/submitted successfully."),
        "{out}"
    );
    let system = fleet.hosts()[0].host.system(&serde_json::json!({"Boot": {}}));
    assert_eq!(system["Boot"]["BootSourceOverrideTarget"], "Pxe");
    assert_eq!(system["Boot"]["BootSourceOverrideEnabled"], "Once");
    assert_eq!(fleet.hosts()[0].host.stats.to_json("x")["jobs_created"], 0);
}

#[tokio::test]
async fn dell_ansible_idrac_boot_sets_a_one_time_pxe_boot_without_a_job() {
    let Some(ansible) = require_ansible() else { return };
    one_time_pxe_without_a_job(&ansible, &fleet().await).await;
}

#[tokio::test]
async fn dell_ansible_idrac_boot_turns_a_boot_option_off_through_the_boot_sources() {
    let Some(ansible) = require_ansible() else { return };
    let fleet = fleet().await;
    let args = "        boot_options:\n          - boot_option_reference: Boot0002\n            enabled: false\n        reset_type: force_restart\n        job_wait: true\n        job_wait_timeout: 120\n";
    play(&ansible, &fleet, "idrac_boot", args, &["result is changed"]).await;
    let off = AttributeValue::from("Optical.iDRACVirtual.1-1");
    assert!(until(&fleet, || setting(&fleet, "SetBootOrderDis") == Some(off.clone())).await);
}

/// The module proves the reset by a UEFI0157 entry newer than the Lifecycle log's clock, read
/// 15 s after the host is back on: a POST that applies the reset later than that (real ones
/// take minutes) is what it can see, so this host's POST lasts 30 s.
#[tokio::test]
async fn dell_ansible_idrac_bios_reset_bios_resets_and_finds_uefi0157() {
    let Some(ansible) = require_ansible() else { return };
    let fleet = fleet_booting_in(Duration::from_secs(30)).await;
    let host = &fleet.hosts()[0].host;
    // A value off its default, applied, so the reset has something to restore.
    let staged = host.patch_bios(&serde_json::json!({
        "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"},
        "Attributes": {"MemTest": "Enabled"},
    }));
    assert_eq!(staged.status, 202);
    host.reset(&serde_json::json!({"ResetType": "ForceRestart"}));
    assert!(until(&fleet, || setting(&fleet, "MemTest") == Some("Enabled".into())).await);
    let args = "        reset_bios: true\n        reset_type: graceful_restart\n";
    let out = play(&ansible, &fleet, "idrac_bios", args, &["result is changed"]).await;
    assert!(
        out.contains("BIOS reset to defaults has been completed successfully."),
        "{out}"
    );
    assert!(until(&fleet, || setting(&fleet, "MemTest") == Some("Disabled".into())).await);
}

#[tokio::test]
async fn dell_ansible_idrac_boot_sets_the_boot_order_on_idrac10_through_the_settings_object() {
    let Some(ansible) = require_ansible() else { return };
    let fleet = r7725().await;
    let args = "        boot_order: [Boot0001, Boot0000, Boot0002]\n        reset_type: graceful_restart\n        job_wait: true\n        job_wait_timeout: 120\n";
    play(&ansible, &fleet, "idrac_boot", args, &["result is changed"]).await;
    let host = &fleet.hosts()[0].host;
    assert!(
        until(&fleet, || host.stats.booted().last().map(String::as_str)
            == Some("RAID.SL.3-1"))
        .await
    );
    let system = host.system(&serde_json::json!({"Boot": {"BootOrder": []}}));
    assert_eq!(
        system["Boot"]["BootOrder"],
        serde_json::json!(["Boot0001", "Boot0000", "Boot0002"])
    );
    let by_path = &host.stats.to_json("x")["requests"]["by_path"];
    assert_eq!(by_path["PATCH /redfish/v1/Systems/System.Embedded.1/Settings"], 1);
    assert_eq!(
        by_path["PATCH /redfish/v1/Systems/System.Embedded.1"],
        serde_json::Value::Null
    );
}

#[tokio::test]
async fn dell_ansible_idrac_boot_sets_a_one_time_pxe_boot_on_idrac10_without_a_job() {
    let Some(ansible) = require_ansible() else { return };
    let fleet = r7725().await;
    one_time_pxe_without_a_job(&ansible, &fleet).await;
    let by_path = &fleet.hosts()[0].host.stats.to_json("x")["requests"]["by_path"];
    assert_eq!(by_path["PATCH /redfish/v1/Systems/System.Embedded.1/Settings"], 1);
}

#[tokio::test]
async fn dell_ansible_idrac_bios_applies_attributes_on_idrac10_with_the_only_apply_time_it_lists() {
    let Some(ansible) = require_ansible() else { return };
    let fleet = r7725().await;
    let args = "        attributes:\n          MemTest: Enabled\n        reset_type: graceful_restart\n        job_wait: true\n        job_wait_timeout: 120\n";
    let out = play(&ansible, &fleet, "idrac_bios", args, &["result is changed"]).await;
    assert!(
        out.contains("Successfully applied the BIOS attributes update."),
        "{out}"
    );
    assert!(until(&fleet, || setting(&fleet, "MemTest") == Some("Enabled".into())).await);
    assert_eq!(fleet.hosts()[0].host.stats.to_json("x")["jobs_created"], 1);
}
