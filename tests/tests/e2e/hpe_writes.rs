//! The writes beside a profile on an HPE ProLiant (the emulator's DL385 Gen10 Plus v2 on iLO 5)
//! with the real binary: a BIOS reset to defaults, BIOS passwords and the one-time boot. An iLO
//! has no jobs: each action is POSTed where the BIOS advertises it and waits for the next POST,
//! which rftune's reboot brings and proves (the settings object processed, the override used
//! up). Each flow prints its requests (`flow …:` lines, shown with `--nocapture`).

use super::hpe::{WAITS, apply_args, counters, json};
use super::{Run, TempDir, sim, stderr, stdout};
use serde_json::Value;

/// `bios password ACTION --password WHICH --bios-password-stdin --bmc URL --reboot force -o
/// json` with the short waits.
fn password_args<'a>(action: &'a str, which: &'a str, url: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "bios",
        "password",
        action,
        "--password",
        which,
        "--bios-password-stdin",
        "--bmc",
        url,
        "--reboot",
        "force",
        "-o",
        "json",
    ];
    args.extend(WAITS);
    args
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_to_defaults_on_an_ilo_is_requested_where_advertised_proven_at_the_post_and_measured() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    // Away from the defaults first: the shipped profile sets HPE's Custom preset.
    let out = Run::new(&apply_args(url, "force")).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let mut args = vec![
        "bios",
        "reset-defaults",
        "--bmc",
        url,
        "--reboot",
        "force",
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(
        host["requested"],
        serde_json::json!({"settings_unprocessed": true}),
        "the reset waits in the settings object: {host}"
    );
    assert_eq!(
        (&host["rebooted"], &host["finished"]),
        (&Value::from(true), &Value::from(true)),
        "{host}"
    );
    let changed = host["changed"].as_array().unwrap();
    let preset = changed
        .iter()
        .find(|c| c["attribute"] == "WorkloadProfile")
        .unwrap_or_else(|| panic!("{host}"));
    assert_eq!(preset["before"], "Custom");
    assert_ne!(preset["after"], "Custom", "the registry's default came back: {preset}");
    let s = counters("reset to defaults on an iLO", &fleet, 0);
    assert_eq!(
        (&s["bios_patches"], &s["jobs_created"], &s["posts"]),
        (&Value::from(1), &Value::from(0), &Value::from(2)),
        "the apply's PATCH only, no job, one POST each: {s}"
    );
    // The host is back on the defaults: the profile drifts again.
    let diff = Run::new(&["diff", "--bmc", url, "-p", "performance", "-o", "json"])
        .output()
        .await;
    assert_eq!(diff.status.code(), Some(2), "{}", stdout(&diff));
}

#[tokio::test(flavor = "multi_thread")]
async fn bios_passwords_on_an_ilo_apply_at_the_post_a_wrong_old_one_is_said_so_and_no_job_is_named() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let password = |action: &'static str, input: &str| {
        Run::new(&password_args(action, "setup", url))
            .state_dir(&dir.0)
            .stdin(input)
    };
    let set = password("set", "Setup-1\n").output().await;
    assert_eq!(set.status.code(), Some(0), "{}{}", stdout(&set), stderr(&set));
    let host = &json(&set)["hosts"][0];
    assert_eq!(
        (&host["job"], &host["rebooted"]),
        (&Value::Null, &Value::from(true)),
        "{host}"
    );
    assert!(
        host["summary"].as_str().unwrap().contains("processed it at that POST"),
        "{host}"
    );
    let wrong = password("change", "not-it\nSetup-2\n").output().await;
    assert_eq!(wrong.status.code(), Some(1), "{}", stdout(&wrong));
    let host = &json(&wrong)["hosts"][0];
    let error = host["error"].as_str().unwrap();
    assert!(
        error.contains("the old setup password is not the one set on this host (BiosPasswordMismatch)"),
        "{host}"
    );
    let right = password("change", "Setup-1\nSetup-2\n").output().await;
    assert_eq!(right.status.code(), Some(0), "{}{}", stdout(&right), stderr(&right));
    let clear = password("clear", "Setup-2\n").output().await;
    assert_eq!(clear.status.code(), Some(0), "{}{}", stdout(&clear), stderr(&clear));
    let s = counters("passwords on an iLO", &fleet, 0);
    assert_eq!(
        (&s["jobs_created"], &s["posts"]),
        (&Value::from(0), &Value::from(3)),
        "{s}"
    );
    // The passwords never reach the audit log.
    let audit = std::fs::read_to_string(dir.0.join("audit.log")).unwrap();
    assert!(!audit.contains("Setup-1") && !audit.contains("Setup-2"));
    assert!(
        audit.contains("\"PasswordName\":\"Administrator\""),
        "the iLO's name for it"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_password_change_an_ilo_post_does_not_process_is_outcome_unknown_never_done() {
    let fleet = sim("dl385", 1, |c| c.faults = vec!["job-fails".parse().unwrap()]).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&password_args("set", "system", url))
        .stdin("Power-on-1\n")
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["error_kind"], "outcome_unknown", "{host}");
    assert!(
        host["error"]
            .as_str()
            .unwrap()
            .contains("did not process the change at that POST"),
        "{host}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_one_time_boot_on_an_ilo_is_set_on_the_system_and_proven_used_up_once_post_ends() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let show = Run::new(&["boot", "show", "--bmc", url, "-o", "json"]).output().await;
    assert!(show.status.success(), "{}{}", stdout(&show), stderr(&show));
    let shown = &json(&show)["hosts"][0];
    let names: Vec<&str> = shown["order"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    assert!(
        names.contains(&"Embedded UEFI Shell"),
        "named from the boot options: {shown}"
    );
    // At the next boot only: set, shown, cancelled.
    let once = Run::new(&["boot", "once", "Pxe", "--bmc", url, "--reboot", "none", "-o", "json"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(once.status.code(), Some(0), "{}{}", stdout(&once), stderr(&once));
    let clear = Run::new(&["boot", "clear", "--bmc", url, "-o", "json"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert!(clear.status.success(), "{}{}", stdout(&clear), stderr(&clear));
    assert_eq!(json(&clear)["hosts"][0]["was"], "Pxe once");
    // Now, into a boot option by reference: the POST boots it, and the override is gone.
    let mut args = vec![
        "boot", "once", "Boot0015", "--bmc", url, "--reboot", "force", "-o", "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(
        (&host["rebooted"], &host["consumed"]),
        (&Value::from(true), &Value::from(true)),
        "{host}"
    );
    let s = counters("one-time boot on an iLO", &fleet, 0);
    let booted = s["booted"].as_array().unwrap();
    assert_eq!(booted.len(), 1, "{s}");
    assert!(booted[0].as_str().unwrap().starts_with("UefiTarget"), "{s}");
    assert_eq!(
        (&s["bios_patches"], &s["jobs_created"]),
        (&Value::from(0), &Value::from(0)),
        "{s}"
    );
}

/// Writes a profile file `name.toml` in `dir` with `body` after its name and description.
pub(super) fn profile_file(dir: &TempDir, name: &str, body: &str) -> String {
    let path = dir.0.join(format!("{name}.toml"));
    let text = format!("name = \"{name}\"\ndescription = \"a boot order for the test\"\n{body}");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The `[boot.order]` entry that boots the local disk first and the network after it.
pub(super) const DISK_FIRST: &str = r#"
[boot.order]
devices = ["disk", "pxe"]
why = "The OS is installed on the local disk; the network is the fallback."
source = "snapshot"
confidence = "inferred"
"#;

/// A host's writes as its counters show them: (BIOS PATCHes, boot settings PATCHes, POSTs).
pub(super) fn writes(s: &Value) -> (u64, u64, u64) {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    (n(&s["bios_patches"]), boot_order_patches(s), n(&s["posts"]))
}

/// `apply --bmc URL -p PROFILE --reboot force -o json` with the short waits, its state in
/// `dir`.
pub(super) async fn apply_force(url: &str, profile: &str, dir: &TempDir, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["apply", "--bmc", url, "-p", profile, "--reboot", "force", "-o", "json"];
    args.extend(WAITS);
    args.extend(extra);
    Run::new(&args).state_dir(&dir.0).output().await
}

/// The boot order's row of a `diff -o json` document of one host.
fn boot_order_change(diff: &Value) -> Value {
    let host = &diff["hosts"][0];
    host["changes"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["attribute"] == "PersistentBootConfigOrder"))
        .unwrap_or_else(|| panic!("no boot order among {host}"))
        .clone()
}

/// How many PATCHes of HPE's boot settings object a host's counters show.
pub(super) fn boot_order_patches(s: &Value) -> u64 {
    s["requests"]["by_path"]["PATCH /redfish/v1/systems/1/bios/oem/hpe/boot/settings"]
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profiles_boot_order_goes_through_hpes_boot_settings_with_the_bios_values_in_one_reboot() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "disk-first", &format!("extends = \"low-latency\"\n{DISK_FIRST}"));
    // The order is one more value beside the BIOS's: diffed by HPE's name for it.
    let out = Run::new(&["diff", "--bmc", url, "-p", &profile, "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let order = boot_order_change(&json(&out));
    assert_eq!(
        (&order["current"], &order["desired"], &order["status"]),
        (
            &Value::from("NIC.LOM.1.1.IPv4,NIC.LOM.1.1.Httpv4,NVMe.Slot.1.1,Generic.USB.1.1"),
            &Value::from("NVMe.Slot.1.1,NIC.LOM.1.1.IPv4,NIC.LOM.1.1.Httpv4,Generic.USB.1.1"),
            &Value::from("drift")
        ),
        "{order}"
    );
    fleet.hosts()[0].host.stats.reset();
    let out = apply_force(url, &profile, &dir, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["outcome"], "converged", "{host}");
    let s = counters("boot order on an iLO", &fleet, 0);
    assert_eq!(
        (
            &s["bios_patches"],
            boot_order_patches(&s),
            &s["posts"],
            &s["jobs_created"]
        ),
        (&Value::from(1), 1, &Value::from(1), &Value::from(0)),
        "one BIOS PATCH, one boot settings PATCH, one POST: {s}"
    );
    // In force after the POST: the system boots the disk first.
    let show = Run::new(&["boot", "show", "--bmc", url, "-o", "json"]).output().await;
    let shown = json(&show);
    let refs: Vec<&str> = shown["hosts"][0]["order"]
        .as_array()
        .or_else(|| shown["order"].as_array())
        .unwrap_or_else(|| panic!("{shown}"))
        .iter()
        .map(|o| o["reference"].as_str().unwrap())
        .collect();
    assert_eq!(
        refs,
        ["Boot0013", "Boot0011", "Boot0012", "Boot0014", "Boot0015"],
        "{shown}"
    );
    let again = Run::new(&["diff", "--bmc", url, "-p", &profile]).output().await;
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}

#[tokio::test(flavor = "multi_thread")]
async fn one_boot_order_on_a_mixed_fleet_is_dells_bios_list_and_hpes_boot_settings_in_one_reboot_each() {
    let dell = sim("r7625", 1, |_| {}).await;
    let hpe = sim("dl385", 1, |_| {}).await;
    let dir = TempDir::new();
    let inventory = super::joint_inventory(&dir.0, &[&dell, &hpe]);
    let profile = profile_file(&dir, "disk-first", DISK_FIRST);
    let mut args = vec![
        "apply",
        "--inventory",
        inventory.to_str().unwrap(),
        "-p",
        &profile,
        "--reboot",
        "force",
        "-o",
        "json",
    ];
    args.extend(WAITS);
    args.extend(["--job-timeout", "20s"]);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc = json(&out);
    let (r7625, dl385) = (super::host_entry(&doc, "r7625"), super::host_entry(&doc, "dl385"));
    assert_eq!(
        (&r7625["outcome"], &dl385["outcome"]),
        (&Value::from("converged"), &Value::from("converged"))
    );
    // The disk first, then the first PXE device, in each vendor's words.
    assert_eq!(
        r7625["bios"]["SetBootOrderEn"], "RAID.SL.3-1,NIC.PxeDevice.1-1,Optical.iDRACVirtual.1-1",
        "{r7625}"
    );
    assert_eq!(
        dl385["bios"]["PersistentBootConfigOrder"], "NVMe.Slot.1.1,NIC.LOM.1.1.IPv4,NIC.LOM.1.1.Httpv4,Generic.USB.1.1",
        "{dl385}"
    );
    let (d, h) = (
        counters("one boot order: r7625", &dell, 0),
        counters("one boot order: dl385", &hpe, 0),
    );
    assert_eq!(
        (&d["bios_patches"], &d["posts"]),
        (&Value::from(1), &Value::from(1)),
        "{d}"
    );
    assert_eq!(writes(&h), (0, 1, 1), "{h}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_shows_an_ilos_boot_order_as_its_own_patch_and_applies_exactly_that() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "disk-first", &format!("extends = \"low-latency\"\n{DISK_FIRST}"));
    let plan_file = dir.0.join("plan.json");
    let plan = plan_file.to_str().unwrap();
    let out = Run::new(&["plan", "--bmc", url, "-p", &profile, "--out", plan])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("PATCH boot order settings {\"PersistentBootConfigOrder\":[\"NVMe.Slot.1.1\","),
        "{}",
        stdout(&out)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&plan_file).unwrap()).unwrap();
    let patch = &doc["hosts"][0]["patch"];
    assert_eq!(
        patch["boot_order"]["PersistentBootConfigOrder"],
        serde_json::json!([
            "NVMe.Slot.1.1",
            "NIC.LOM.1.1.IPv4",
            "NIC.LOM.1.1.Httpv4",
            "Generic.USB.1.1"
        ]),
        "{patch}"
    );
    assert!(
        patch["bios"]["Attributes"].get("PersistentBootConfigOrder").is_none(),
        "{patch}"
    );
    assert_eq!(patch["bios"]["Attributes"]["WorkloadProfile"], "Custom", "{patch}");
    fleet.hosts()[0].host.stats.reset();
    let mut args = vec!["apply", "--bmc", url, "--plan", plan, "-o", "json"];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(json(&out)["hosts"][0]["outcome"], "converged");
    let s = counters("a plan on an iLO", &fleet, 0);
    assert_eq!(writes(&s), (1, 1, 1), "{s}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_restores_an_ilos_bios_values_and_its_boot_order_in_one_reboot() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "disk-first", &format!("extends = \"low-latency\"\n{DISK_FIRST}"));
    let before = fleet.hosts()[0].host.snapshot().0;
    let out = apply_force(url, &profile, &dir, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let snapshot = std::fs::read_dir(dir.0.join("snapshots"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let taken: Value = serde_json::from_str(&std::fs::read_to_string(&snapshot).unwrap()).unwrap();
    assert_eq!(
        taken["bios"]["PersistentBootConfigOrder"], "NIC.LOM.1.1.IPv4,NIC.LOM.1.1.Httpv4,NVMe.Slot.1.1,Generic.USB.1.1",
        "the snapshot keeps the boot order beside the BIOS values"
    );
    fleet.hosts()[0].host.stats.reset();
    let mut args = vec![
        "restore",
        "--bmc",
        url,
        "--snapshot",
        snapshot.to_str().unwrap(),
        "--reboot",
        "force",
        "-o",
        "json",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let s = counters("restore on an iLO", &fleet, 0);
    assert_eq!(writes(&s), (1, 1, 1), "{s}");
    let after = fleet.hosts()[0].host.snapshot().0;
    assert_eq!(after, before, "every BIOS value as it was");
    let show = Run::new(&["boot", "show", "--bmc", url, "-o", "json"]).output().await;
    let shown = json(&show);
    let entries = shown["hosts"][0]["order"]
        .as_array()
        .or_else(|| shown["order"].as_array())
        .unwrap();
    assert_eq!(
        entries[0]["fqdd"], "NIC.LOM.1.1.IPv4",
        "the boot order as it was: {shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_boot_order_alone_is_staged_without_a_bios_patch_and_proven_by_the_read_back() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "only-boot", DISK_FIRST);
    let out = apply_force(url, &profile, &dir, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(json(&out)["hosts"][0]["outcome"], "converged");
    let s = counters("boot order alone on an iLO", &fleet, 0);
    assert_eq!(writes(&s), (0, 1, 1), "{s}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_boot_order_someone_else_staged_meets_the_pending_rule_and_replace_pending_writes_ours() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "only-boot", DISK_FIRST);
    // Another tool stages its own order in HPE's boot settings.
    let foreign = serde_json::json!({"PersistentBootConfigOrder":
        ["Generic.USB.1.1", "NIC.LOM.1.1.IPv4", "NIC.LOM.1.1.Httpv4", "NVMe.Slot.1.1"]});
    let written = super::client(url)
        .patch("/redfish/v1/systems/1/bios/oem/hpe/boot/settings/", &foreign)
        .await;
    assert!(written.is_ok(), "{written:?}");
    let diff = Run::new(&["diff", "--bmc", url, "-p", &profile, "-o", "json"])
        .output()
        .await;
    let order = boot_order_change(&json(&diff));
    assert_eq!(order["status"], "pending_conflict", "{order}");
    assert_eq!(
        order["pending"],
        "Generic.USB.1.1,NIC.LOM.1.1.IPv4,NIC.LOM.1.1.Httpv4,NVMe.Slot.1.1"
    );
    let refused = apply_force(url, &profile, &dir, &[]).await;
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let host = &json(&refused)["hosts"][0];
    assert_eq!(host["error_kind"], "pending_work", "{host}");
    assert!(
        host["error"].as_str().unwrap().contains("rftune diff"),
        "an iLO has no job queue to inspect: {host}"
    );
    let out = apply_force(url, &profile, &dir, &["--replace-pending"]).await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(json(&out)["hosts"][0]["outcome"], "converged");
    let again = Run::new(&["diff", "--bmc", url, "-p", &profile]).output().await;
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_to_defaults_over_someone_elses_pending_value_on_an_ilo_points_at_diff() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    super::client(url)
        .patch(
            "/redfish/v1/systems/1/bios/settings/",
            &serde_json::json!({"Attributes": {"ProcSMT": "Disabled"}}),
        )
        .await
        .unwrap();
    let out = Run::new(&["bios", "reset-defaults", "--bmc", url, "--reboot", "none", "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["error_kind"], "pending_work", "{host}");
    let error = host["error"].as_str().unwrap();
    assert!(
        error.contains("ProcSMT") && error.contains("rftune diff --bmc") && !error.contains("jobs list"),
        "an iLO has no job queue to inspect: {error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn disabling_a_boot_device_on_an_ilo_is_refused_with_hpes_way_to_do_it() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(
        &dir,
        "no-usb",
        r#"
[boot.disabled]
devices = ["usb"]
why = "Nothing boots from a stick."
source = "snapshot"
confidence = "inferred"
"#,
    );
    let out = Run::new(&["diff", "--bmc", url, "-p", &profile, "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["error_kind"], "profile_not_applicable", "{host}");
    let error = host["error"].as_str().unwrap();
    assert!(
        error.contains("PersistentBootConfigOrder") && error.contains("[bios]"),
        "{host}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secure_boot_key_reset_is_refused_on_an_ilo_before_anything_is_sent() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&[
        "secure-boot",
        "reset-keys",
        "--type",
        "ResetAllKeysToDefault",
        "--bmc",
        url,
        "--reboot",
        "none",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["error_kind"], "unsupported", "{host}");
    let error = host["error"].as_str().unwrap();
    assert!(
        error.contains("HPE iLO 5 (firmware 2.72), which has no Secure Boot key reset rftune knows")
            && error.contains("Custom policy"),
        "{host}"
    );
    let s = counters("Secure Boot key reset refused on an iLO", &fleet, 0);
    let posts = s["requests"]["by_method"]["POST"].as_u64().unwrap_or(0);
    assert_eq!(posts, 1, "the login only: {s}");
}

#[tokio::test(flavor = "multi_thread")]
async fn clearing_an_ilos_pending_values_writes_the_current_ones_back_and_nothing_when_none_differ() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    // Someone stages a value behind rftune's back (an iLO takes it without a job).
    super::client(url)
        .patch(
            "/redfish/v1/systems/1/bios/settings/",
            &serde_json::json!({"Attributes": {"ProcSMT": "Disabled"}}),
        )
        .await
        .unwrap();
    // And a boot order in HPE's boot settings.
    let order = serde_json::json!({"PersistentBootConfigOrder":
        ["Generic.USB.1.1", "NIC.LOM.1.1.IPv4", "NIC.LOM.1.1.Httpv4", "NVMe.Slot.1.1"]});
    let boot_settings = "/redfish/v1/systems/1/bios/oem/hpe/boot/settings/";
    super::client(url).patch(boot_settings, &order).await.unwrap();
    let clear = || {
        Run::new(&["bios", "clear-pending", "--bmc", url])
            .state_dir(&dir.0)
            .output()
    };
    let out = clear().await;
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let (current, settings, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(
        settings.get("ProcSMT").or(current.get("ProcSMT")),
        current.get("ProcSMT"),
        "the settings object holds the current value again"
    );
    let diff = Run::new(&["diff", "--bmc", url, "-p", "performance", "-o", "json"])
        .output()
        .await;
    assert_eq!(json(&diff)["hosts"][0]["counts"]["pending"], 0);
    let staged: Value = super::client(url).get(boot_settings).await.unwrap();
    assert_eq!(
        staged["PersistentBootConfigOrder"],
        serde_json::json!([
            "NIC.LOM.1.1.IPv4",
            "NIC.LOM.1.1.Httpv4",
            "NVMe.Slot.1.1",
            "Generic.USB.1.1"
        ]),
        "the boot order in force is staged again"
    );
    let audit = std::fs::read_to_string(dir.0.join("audit.log")).unwrap();
    assert!(
        audit.contains(r#""attributes":["ProcSMT"],"boot_order":true"#),
        "{audit}"
    );
    let again = clear().await;
    assert!(again.status.success(), "{}", stderr(&again));
    let s = counters("clear-pending on an iLO", &fleet, 0);
    assert_eq!(
        (&s["bios_patches"], boot_order_patches(&s)),
        (&Value::from(2), 2),
        "the foreign PATCHes and the write-backs; nothing when nothing differs: {s}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn what_an_ilo_does_not_have_is_said_plainly_on_first_contact() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let scp_dir = dir.0.join("scp");
    let scp_dir = scp_dir.to_str().unwrap();
    for (args, lacks) in [
        (vec!["jobs", "list"], "job queue"),
        (vec!["scp", "export", "--dir", scp_dir], "Server Configuration Profile"),
    ] {
        // A fresh state directory each time: nothing remembers the host's backend.
        let out = Run::new(&[&args[..], &["--bmc", url]].concat()).output().await;
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stdout(&out));
        let expected = format!("this BMC is HPE iLO 5 (firmware 2.72), which has no {lacks} rftune knows");
        assert!(stderr(&out).contains(&expected), "{args:?}: {}", stderr(&out));
    }
}
