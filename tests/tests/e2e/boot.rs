//! The rest of a provisioning run with the real binary against the emulator: a profile's boot
//! order in apply's one PATCH, job and reset; `boot show|once|clear` over an inventory; `bios
//! reset-defaults` proven finished; `apply --from-defaults`; BIOS passwords that never reach
//! argv, logs, the state directory or the JSON output; Secure Boot. Each flow prints its
//! request count and reboots (`flow …:` lines, shown with `--nocapture`).

use super::{Run, TempDir, client, sim, stats, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A profile of one's own: low-latency's values, and the disk first, then the network.
const DISK_FIRST: &str = r#"
name = "site-disk-first"
description = "low latency, booting the installed OS first"
extends = "low-latency"
[boot.order]
devices = ["disk", "pxe"]
why = "The OS is installed on the RAID volume; the network is the fallback."
source = "snapshot"
confidence = "inferred"
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Waits, durations short for the emulator's POST.
const WAITS: [&str; 6] = [
    "--graceful-timeout",
    "2s",
    "--job-timeout",
    "20s",
    "--boot-timeout",
    "20s",
];

/// Requests, BIOS PATCHes, jobs and POSTs of host `i` since its counters were last reset, and
/// what each POST booted; printed for the report as `flow NAME: ...`.
fn counted(flow: &str, fleet: &idrac_sim::Fleet, i: usize) -> (u64, u64, u64, u64) {
    let s = stats(fleet, i);
    let n = |k: &str| s[k].as_u64().unwrap_or_default();
    let got = (
        s["requests"]["total"].as_u64().unwrap_or_default(),
        n("bios_patches"),
        n("jobs_created"),
        n("posts"),
    );
    eprintln!(
        "flow {flow}: {} requests, {} BIOS PATCH, {} job(s), {} POST(s), booted {}",
        got.0, got.1, got.2, got.3, s["booted"]
    );
    got
}

/// Waits until host `i` is out of POST.
async fn settle(fleet: &idrac_sim::Fleet, i: usize) {
    for _ in 0..200 {
        if fleet.hosts()[i].host.boot_remaining().is_none() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_with_a_boot_order_stages_it_with_the_bios_values_in_one_patch_one_job_one_reset() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = write(&dir.0, "p.toml", DISK_FIRST);
    let mut args = vec![
        "apply",
        "--bmc",
        url,
        "--profile",
        profile.to_str().unwrap(),
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "converged", "{host}");
    assert_eq!(
        host["bios"]["SetBootOrderEn"],
        "RAID.SL.3-1,NIC.PxeDevice.1-1,Optical.iDRACVirtual.1-1"
    );
    assert!(
        host["bios"].as_object().unwrap().len() > 1,
        "the order rides with the values: {host}"
    );
    let (_, patches, jobs, posts) = counted("apply with a boot order", &fleet, 0);
    assert_eq!((patches, jobs, posts), (1, 1, 1), "one PATCH, one job, one reset");
    assert_eq!(
        stats(&fleet, 0)["booted"],
        serde_json::json!(["RAID.SL.3-1"]),
        "the new order booted"
    );
    // The one PATCH carried both, as the audit log shows.
    let audit = std::fs::read_to_string(dir.0.join("audit.log")).unwrap();
    let stage: Value = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["step"] == "stage" && r["request"].is_object())
        .unwrap();
    let sent = stage["request"]["Attributes"].as_object().unwrap();
    assert!(
        sent.contains_key("SetBootOrderEn") && sent.contains_key("SysProfile"),
        "{stage}"
    );
    // A second apply finds the order in sync: no write.
    let again = Run::new(&args).state_dir(&dir.0).output().await;
    let doc: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["outcome"], "in_sync", "{}", stderr(&again));
}

#[tokio::test(flavor = "multi_thread")]
async fn diff_shows_boot_drift_and_a_class_that_matches_nothing_names_the_host_s_devices() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = write(&dir.0, "p.toml", DISK_FIRST);
    let out = Run::new(&[
        "diff",
        "--bmc",
        url,
        "--profile",
        profile.to_str().unwrap(),
        "-o",
        "json",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(2), "drift: {}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let change = doc["hosts"][0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["attribute"] == "SetBootOrderEn")
        .unwrap()
        .clone();
    assert_eq!(change["status"], "drift");
    assert_eq!(
        change["current"],
        "NIC.PxeDevice.1-1,RAID.SL.3-1,Optical.iDRACVirtual.1-1"
    );
    let (requests, ..) = counted("diff with a boot order", &fleet, 0);
    assert!(requests <= 9, "the boot options are one more request: {requests}");
    let second_nic = write(
        &dir.0,
        "nic2.toml",
        &DISK_FIRST.replace("\"disk\", \"pxe\"", "\"pxe:2\""),
    );
    let out = Run::new(&["diff", "--bmc", url, "--profile", second_nic.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("boot.order `pxe:2` matches no boot device on this host; it has NIC.PxeDevice.1-1 (PXE Device 1: Integrated NIC 1 Port 1 Partition 1), RAID.SL.3-1 (Disk Controller: boot volume), Optical.iDRACVirtual.1-1 (Virtual Optical Drive)"),
        "{err}"
    );
}

/// An inventory of the fleet's hosts (names `h0`, `h1`, …).
fn inventory(dir: &Path, fleet: &idrac_sim::Fleet) -> PathBuf {
    let mut text = String::new();
    for (i, h) in fleet.hosts().iter().enumerate() {
        text.push_str(&format!("[[bmc]]\nname = \"h{i}\"\nurl = \"{}\"\n", h.url));
    }
    write(dir, "fleet.toml", &text)
}

#[tokio::test(flavor = "multi_thread")]
async fn boot_once_over_an_inventory_boots_each_host_once_without_a_job_and_clear_cancels() {
    let fleet = sim("r7625", 2, |_| {}).await;
    let dir = TempDir::new();
    let inv = inventory(&dir.0, &fleet);
    let inv = inv.to_str().unwrap();
    let mut args = vec!["boot", "once", "Pxe", "--reboot", "--inventory", inv, "-o", "json"];
    args.extend(&WAITS[..2]);
    args.extend(&WAITS[4..]);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "rftune.boot-once/v1");
    for (i, h) in doc["hosts"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            (h["rebooted"].as_bool(), h["consumed"].as_bool()),
            (Some(true), Some(true)),
            "{h}"
        );
        let (_, patches, jobs, posts) = counted(&format!("boot once Pxe --reboot (host {i})"), &fleet, i);
        assert_eq!((patches, jobs, posts), (0, 0, 1), "no BIOS PATCH, no job, one POST");
        assert_eq!(stats(&fleet, i)["booted"], serde_json::json!(["Pxe (once)"]));
    }
    // Only the target and Enabled were sent, never a mode.
    let audit = std::fs::read_to_string(dir.0.join("audit.log")).unwrap();
    let once: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["step"] == "boot-once")
        .collect();
    assert_eq!(once.len(), 2);
    assert_eq!(
        once[0]["request"],
        serde_json::json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}})
    );
    // A boot option for the next boot (no reboot), shown, then cancelled.
    let url = &fleet.hosts()[1].url;
    let out = Run::new(&["boot", "once", "Boot0001", "--bmc", url])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let show = Run::new(&["boot", "show", "--bmc", url]).output().await;
    assert!(
        stdout(&show).contains("boot override: UefiTarget (PciRoot(0x1)/Pci(0x3,0x1)/Pci(0x0,0x0)), once"),
        "{}",
        stdout(&show)
    );
    let out = Run::new(&["boot", "clear", "--bmc", url])
        .state_dir(&dir.0)
        .output()
        .await;
    assert!(
        stdout(&out).contains("cancelled the boot override (UefiTarget once)"),
        "{}",
        stdout(&out)
    );
    let show = Run::new(&["boot", "show", "--bmc", url, "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["override_target"], "None");
    assert!(
        doc["hosts"][0].get("uefi_target").is_none(),
        "the path the iDRAC keeps is not shown as an override once cancelled: {doc}"
    );
    assert_eq!(doc["hosts"][0]["order"][1]["fqdd"], "RAID.SL.3-1");
}

#[tokio::test(flavor = "multi_thread")]
async fn boot_once_refuses_pending_work_it_did_not_stage_and_replaces_it_when_asked() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let other: Attributes = [("MemTest".to_owned(), "Enabled".into())].into_iter().collect();
    client(url)
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &other,
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let out = Run::new(&["boot", "once", "Pxe", "--reboot", "--bmc", url])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("MemTest=Enabled already staged"),
        "{}",
        stdout(&out)
    );
    assert_eq!(stats(&fleet, 0)["posts"], 0, "nothing rebooted");
    let mut args = vec!["boot", "once", "Pxe", "--reboot", "--replace-pending", "--bmc", url];
    args.extend(&WAITS[..2]);
    let out = Run::new(&args).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    settle(&fleet, 0).await;
    assert_eq!(
        fleet.hosts()[0].host.snapshot().0["MemTest"],
        "Disabled".into(),
        "their value went"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reset_defaults_proves_the_reset_finished_and_lists_what_changed_against_the_snapshot() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let mut apply = vec!["apply", "--bmc", url, "--profile", "low-latency"];
    apply.extend(WAITS);
    let out = Run::new(&apply).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    fleet.hosts()[0].host.stats.reset();
    let mut args = vec!["bios", "reset-defaults", "--bmc", url, "-o", "json"];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "rftune.bios-defaults/v1");
    let host = &doc["hosts"][0];
    assert_eq!(host["finished"], true, "{host}");
    assert_eq!(
        host["requested"],
        serde_json::json!({"bios_pending": true, "rtd_requested": true})
    );
    let changed: Vec<&str> = host["changed"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["attribute"].as_str())
        .collect();
    assert!(
        changed.contains(&"SysProfile") && changed.contains(&"LogicalProc"),
        "{changed:?}"
    );
    let sys = host["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["attribute"] == "SysProfile")
        .unwrap();
    assert_eq!(
        (sys["before"].as_str(), sys["after"].as_str()),
        (Some("Custom"), Some("PerfOptimized"))
    );
    let snapshot: Value =
        serde_json::from_str(&std::fs::read_to_string(host["snapshot"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(
        snapshot["bios"]["SysProfile"], "Custom",
        "the snapshot holds the values before"
    );
    let (_, patches, jobs, posts) = counted("bios reset-defaults", &fleet, 0);
    assert_eq!((patches, jobs, posts), (0, 0, 1), "ResetBios needs no job, one reboot");
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_from_defaults_resets_then_applies_with_two_reboots() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    // Someone else's tuning, applied.
    let other: Attributes = [("MemTest".to_owned(), "Enabled".into())].into_iter().collect();
    client(url)
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &other,
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let host = &fleet.hosts()[0].host;
    host.reset(&serde_json::json!({"ResetType": "ForceRestart"}));
    settle(&fleet, 0).await;
    host.stats.reset();
    let dir = TempDir::new();
    let profile = write(&dir.0, "p.toml", DISK_FIRST);
    let mut args = vec![
        "apply",
        "--from-defaults",
        "--bmc",
        url,
        "--profile",
        profile.to_str().unwrap(),
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &doc["hosts"][0];
    assert_eq!(h["outcome"], "converged", "{h}");
    assert_eq!(h["defaults"]["finished"], true);
    assert!(
        h["summary"]
            .as_str()
            .unwrap()
            .starts_with("BIOS reset to defaults first ("),
        "{h}"
    );
    assert_eq!(host.snapshot().0["MemTest"], "Disabled".into(), "their tuning is gone");
    let (_, patches, jobs, posts) = counted("apply --from-defaults", &fleet, 0);
    assert_eq!(
        (patches, jobs, posts),
        (1, 1, 2),
        "the reset's reboot, then the profile's"
    );
}

/// Counts `needle` in every process's command line while `child` runs; returns how it ended,
/// the count, and what it wrote on stdout and stderr (read as it runs, so a chatty run never
/// fills a pipe).
async fn in_process_list_while(
    mut child: tokio::process::Child,
    needle: &str,
) -> (std::process::ExitStatus, usize, String) {
    use tokio::io::AsyncReadExt as _;
    let mut pipes = Vec::new();
    for mut pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    ]
    .into_iter()
    .flatten()
    {
        pipes.push(tokio::spawn(async move {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text).await;
            text
        }));
    }
    let mut hits = 0;
    let status = loop {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
                && String::from_utf8_lossy(&cmdline).contains(needle)
            {
                hits += 1;
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let mut output = String::new();
    for p in pipes {
        output.push_str(&p.await.unwrap());
    }
    (status, hits, output)
}

/// Every file below `dir` that contains `needle`.
fn files_with(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle)) {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bios_password_never_reaches_argv_logs_the_state_directory_or_the_json_output() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let state = dir.0.join("state");
    let secret = "Bios-Setup-Secret-42";
    let file = write(&dir.0, "bios.toml", &format!("new = \"{secret}\"\n"));
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    // Set it from a private file, with -vv (trace logs) and JSON output.
    let mut args = vec![
        "-vv",
        "bios",
        "password",
        "set",
        "--password",
        "setup",
        "--bios-password-file",
        file.to_str().unwrap(),
        "--bmc",
        url,
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let mut run = Run::new(&args).state_dir(&state);
    run.cmd.kill_on_drop(true);
    let child = run.cmd.spawn().unwrap();
    let (status, argv_hits, traced) = in_process_list_while(child, secret).await;
    assert!(status.success(), "{traced}");
    assert!(traced.contains("ChangePassword"), "-vv traced the requests: {traced}");
    let (_, patches, jobs, posts) = counted("bios password set", &fleet, 0);
    assert_eq!((patches, jobs, posts), (0, 1, 1), "ChangePassword, its job, one reboot");
    let (bios, ..) = fleet.hosts()[0].host.snapshot();
    let hash = bios["SHA256SetupPassword"].as_str().unwrap().to_owned();
    assert_eq!(hash.len(), 64, "the BIOS shows it set");
    // Change it, from standard input (the old line, then the new), with a snapshot taken.
    let new_secret = "Bios-Setup-Secret-43";
    let mut args = vec![
        "bios",
        "password",
        "change",
        "--password",
        "setup",
        "--bios-password-stdin",
        "--bmc",
        url,
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let changed = Run::new(&args)
        .state_dir(&state)
        .stdin(&format!("{secret}\n{new_secret}\n"))
        .output()
        .await;
    assert_eq!(
        changed.status.code(),
        Some(0),
        "{}{}",
        stdout(&changed),
        stderr(&changed)
    );
    let doc: Value = serde_json::from_slice(&changed.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["in_force"], true, "{doc}");
    let snap = Run::new(&["snapshot", "--bmc", url, "-o", "json"])
        .state_dir(&state)
        .output()
        .await;
    assert_eq!(snap.status.code(), Some(0), "{}", stderr(&snap));
    // `bios get` says a password is set, never its hash.
    let get = Run::new(&["bios", "get", "--bmc", url, "-a", "SHA256SetupPassword", "-o", "json"])
        .output()
        .await;
    let shown: Value = serde_json::from_slice(&get.stdout).unwrap();
    assert_eq!(
        shown["attributes"]["SHA256SetupPassword"], "(set, not shown)",
        "{shown}"
    );
    // Then a wrong old one, from the environment: BIOS021, said plainly.
    let wrong = Run::new(&["bios", "password", "clear", "--password", "setup", "--bmc", url])
        .state_dir(&state)
        .env("RFTUNE_BIOS_OLD_PASSWORD", secret)
        .output()
        .await;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        stdout(&wrong).contains("the old setup password is not the one set on this host (BIOS021)"),
        "{}",
        stdout(&wrong)
    );
    let (bios, ..) = fleet.hosts()[0].host.snapshot();
    let new_hash = bios["SHA256SetupPassword"].as_str().unwrap().to_owned();
    let mut leaks = Vec::new();
    for needle in [secret, new_secret, hash.as_str(), new_hash.as_str()] {
        leaks.extend(
            files_with(&state, needle)
                .into_iter()
                .map(|p| format!("{needle} in {}", p.display())),
        );
        for out in [&changed, &snap, &wrong, &get] {
            if stdout(out).contains(needle) || stderr(out).contains(needle) {
                leaks.push(format!("{needle} in the output"));
            }
        }
        if traced.contains(needle) {
            leaks.push(format!("{needle} in the -vv logs or JSON of the set"));
        }
    }
    eprintln!(
        "flow secrets: {} process-list hit(s), {} hit(s) in the state directory, audit log, snapshots and outputs",
        argv_hits,
        leaks.len()
    );
    assert_eq!(argv_hits, 0, "the password was on a command line");
    assert!(leaks.is_empty(), "{leaks:?}");
    assert!(state.join("audit.log").exists() && state.join("snapshots").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_sets_a_bios_password_in_the_profile_s_one_job() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let secret = "Apply-Setup-Secret-7";
    let mut args = vec![
        "apply",
        "--bmc",
        url,
        "--profile",
        "low-latency",
        "--bios-password",
        "set-setup",
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args)
        .state_dir(&dir.0)
        .env("RFTUNE_BIOS_NEW_PASSWORD", secret)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let h = &doc["hosts"][0];
    assert_eq!(
        h["password"],
        serde_json::json!({"PasswordName": "SetupPassword", "action": "set", "job": null, "in_force": true})
    );
    assert!(
        h["summary"].as_str().unwrap().starts_with("setup password set; "),
        "{h}"
    );
    let (_, patches, jobs, posts) = counted("apply --bios-password set-setup", &fleet, 0);
    assert_eq!(
        (patches, jobs, posts),
        (1, 1, 1),
        "ChangePassword first, then the PATCH's job: one reboot"
    );
    assert!(files_with(&dir.0, secret).is_empty() && !stdout(&out).contains(secret));
}

#[tokio::test(flavor = "multi_thread")]
async fn secure_boot_shows_in_inventory_and_its_keys_reset_under_the_custom_policy() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let inv = Run::new(&["inventory", "--bmc", url, "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&inv.stdout).unwrap();
    assert_eq!(doc["secure_boot"]["enabled"], true, "{doc}");
    assert_eq!(doc["secure_boot"]["current_boot"], "Enabled");
    let out = Run::new(&["secure-boot", "reset-keys", "--type", "DeletePK", "--bmc", url])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("give --delete-keys to confirm"),
        "{}",
        stderr(&out)
    );
    let out = Run::new(&[
        "secure-boot",
        "reset-keys",
        "--type",
        "ResetAllKeysToDefault",
        "--bmc",
        url,
    ])
    .output()
    .await;
    assert!(
        stdout(&out).contains("only under the Custom policy; SecureBootPolicy is Standard"),
        "{}",
        stdout(&out)
    );
    // The policy through a profile (the BIOS attribute, in the one job), then the reset.
    let dir = TempDir::new();
    let custom = write(
        &dir.0,
        "custom.toml",
        "name = \"custom-keys\"\ndescription = \"d\"\ncpu = \"any\"\n[bios.SecureBootPolicy]\nvalue = \"Custom\"\nwhy = \"Our own keys.\"\nsource = \"snapshot\"\nconfidence = \"inferred\"\n",
    );
    let mut apply = vec!["apply", "--bmc", url, "--profile", custom.to_str().unwrap()];
    apply.extend(WAITS);
    let out = Run::new(&apply).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    fleet.hosts()[0].host.stats.reset();
    let mut args = vec![
        "secure-boot",
        "reset-keys",
        "--type",
        "DeleteAllKeys",
        "--delete-keys",
        "--bmc",
        url,
        "-o",
        "json",
    ];
    args.extend(&WAITS[..2]);
    args.extend(&WAITS[4..]);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["after"]["mode"], "SetupMode", "{doc}");
    assert_eq!(doc["hosts"][0]["after"]["current_boot"], "Disabled");
    let (_, patches, jobs, posts) = counted("secure-boot reset-keys", &fleet, 0);
    assert_eq!(
        (patches, jobs, posts),
        (0, 0, 1),
        "no job: the reset completes at the reboot"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_turns_secure_boot_on_through_the_bios_attribute_in_its_one_job() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = write(
        &dir.0,
        "sb.toml",
        "name = \"secure\"\ndescription = \"d\"\nextends = \"performance\"\n[bios.SecureBoot]\nvalue = \"Enabled\"\nwhy = \"Only signed loaders boot.\"\nsource = \"snapshot\"\nconfidence = \"inferred\"\n",
    );
    let before = Run::new(&["inventory", "--bmc", url, "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&before.stdout).unwrap();
    assert_eq!(doc["secure_boot"]["enabled"], false);
    let mut args = vec![
        "apply",
        "--bmc",
        url,
        "--profile",
        profile.to_str().unwrap(),
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["bios"]["SecureBoot"], "Enabled");
    let (_, patches, jobs, posts) = counted("apply with SecureBoot Enabled", &fleet, 0);
    assert_eq!((patches, jobs, posts), (1, 1, 1));
    let after = Run::new(&["inventory", "--bmc", url, "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&after.stdout).unwrap();
    assert_eq!(
        (
            doc["secure_boot"]["enabled"].as_bool(),
            doc["secure_boot"]["current_boot"].as_str()
        ),
        (Some(true), Some("Enabled"))
    );
}
