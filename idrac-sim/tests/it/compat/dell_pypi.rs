//! Dell's own iDRAC-Redfish-Scripting Python scripts, as PyPI ships them (the
//! `IdracRedfishSupport` package installs the standalone scripts too), run unchanged against the
//! emulator: a one-time PXE boot with its reboot, a BIOS reset to defaults with its reboot, an
//! SCP export, its preview and its import from a file, the Secure Boot key types and the boot
//! order. `.ci/run` installs the pinned package into a venv and points `RFTUNE_DELL_SCRIPT` at
//! its `SetNextOneTimeBootDeviceREDFISH.py` (the other scripts sit beside it). The scripts end
//! with exit code 0 whatever happened, so each flow is judged by what the script printed (its
//! `PASS`/`FAIL` lines) and by what the emulator then holds. The transcripts in
//! [`super::dell_scripts`], [`super::dell_scp`] and [`super::dell_provisioning`] cover the
//! newer versions of the same scripts in Dell's repository.

use idrac_sim::{Fleet, SimConfig};
use redfish_client::resources::bios::AttributeValue;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The directory of Dell's scripts, or `None` after printing why the test is skipped.
fn scripts() -> Option<PathBuf> {
    let one = rftune_tests::require_tool(
        "SetNextOneTimeBootDeviceREDFISH.py",
        "RFTUNE_DELL_SCRIPT",
        "set RFTUNE_DELL_SCRIPT to SetNextOneTimeBootDeviceREDFISH.py of PyPI's IdracRedfishSupport; .ci/run installs it",
    )?;
    one.parent().map(Path::to_path_buf)
}

async fn fleet() -> Fleet {
    Fleet::start(SimConfig {
        boot_time: Duration::from_secs(2),
        ..SimConfig::default()
    })
    .await
    .unwrap()
}

/// Runs Dell's `script` with `args` against host 0 (`-ip host:port -u root -p calvin`, the
/// emulator's test account) in `dir`; its output, after checking it printed no FAIL or ERROR.
async fn run(dir: &Path, fleet: &Fleet, script: &str, args: &[&str], cwd: &Path) -> String {
    let addr = fleet.hosts()[0].addr.to_string();
    let out = tokio::process::Command::new(dir.join(script))
        .args(["-ip", &addr, "-u", "root", "-p", "calvin"])
        .args(args)
        .current_dir(cwd)
        // requests would let a CA bundle in the environment override the scripts' verify=False.
        .env_remove("REQUESTS_CA_BUNDLE")
        .env_remove("CURL_CA_BUNDLE")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(240), out)
        .await
        .expect("the script finished within 4 minutes")
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{script} {args:?}:\n{text}");
    assert!(
        !text.contains("- FAIL") && !text.contains("- ERROR") && !text.contains("Traceback"),
        "{script} {args:?}:\n{text}"
    );
    eprintln!("flow dell (PyPI) {script} {}: passed", args.join(" "));
    text
}

/// Whether host 0 reaches `name = value` within a minute, powered on and out of POST.
async fn applied(fleet: &Fleet, name: &str, value: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let host = &fleet.hosts()[0].host;
        let (bios, _, on) = host.snapshot();
        if on && host.boot_remaining().is_none() && bios.get(name) == Some(&AttributeValue::from(value)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

#[tokio::test]
async fn dells_scripts_from_pypi_boot_once_from_pxe_and_read_the_boot_order_and_key_types() {
    let Some(dir) = scripts() else { return };
    let fleet = fleet().await;
    let work = tempfile::tempdir().unwrap();
    let out = run(
        &dir,
        &fleet,
        "SetNextOneTimeBootDeviceREDFISH.py",
        &["--device", "Pxe", "--reboot"],
        work.path(),
    )
    .await;
    assert!(out.contains("PASS, POST command passed to power ON server"), "{out}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while fleet.hosts()[0].host.stats.booted().is_empty() && Instant::now() < deadline {
        // Time moves for the host when it is asked something.
        fleet.hosts()[0].host.boot_remaining();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(fleet.hosts()[0].host.stats.booted(), ["Pxe (once)"], "{out}");
    let order = run(&dir, &fleet, "ChangeBiosBootOrderREDFISH.py", &["--get"], work.path()).await;
    assert!(order.contains("Boot0000") && order.contains("PXE Device 1"), "{order}");
    let keys = run(
        &dir,
        &fleet,
        "SecureBootResetKeysREDFISH.py",
        &["--get-keytypes"],
        work.path(),
    )
    .await;
    assert!(
        keys.contains("ResetAllKeysToDefault") && keys.contains("DeletePK"),
        "{keys}"
    );
}

#[tokio::test]
async fn dells_scripts_from_pypi_export_preview_and_import_a_profile_then_reset_the_bios_to_defaults() {
    let Some(dir) = scripts() else { return };
    let fleet = fleet().await;
    let work = tempfile::tempdir().unwrap();
    run(
        &dir,
        &fleet,
        "ExportSystemConfigurationLocalREDFISH.py",
        &["--target", "BIOS", "--format-type", "JSON"],
        work.path(),
    )
    .await;
    let export = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_export.json"))
        .expect("the script wrote its export");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let mut edited = false;
    for component in doc["SystemConfiguration"]["Components"].as_array_mut().unwrap() {
        for a in component["Attributes"].as_array_mut().into_iter().flatten() {
            if a["Name"] == "MemTest" {
                a["Value"] = "Enabled".into();
                edited = true;
            }
        }
    }
    assert!(edited, "the export lists MemTest");
    let file = work.path().join("edited.json");
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let name = file.to_str().unwrap();
    let preview = run(
        &dir,
        &fleet,
        "ImportSystemConfigurationPreviewLocalFilenameREDFISH.py",
        &["--filename", name],
        work.path(),
    )
    .await;
    assert!(preview.contains("MemTest") && preview.contains("SYS088"), "{preview}");
    let import = run(
        &dir,
        &fleet,
        "ImportSystemConfigurationLocalFilenameREDFISH.py",
        &["--target", "BIOS", "--filename", name, "--shutdown-type", "Forced"],
        work.path(),
    )
    .await;
    assert!(applied(&fleet, "MemTest", "Enabled").await, "{import}");
    let reset = run(&dir, &fleet, "BiosResetToDefaultsREDFISH.py", &[], work.path()).await;
    assert!(
        applied(&fleet, "MemTest", "Disabled").await,
        "the tree's value is back: {reset}"
    );
}
