//! An HPE ProLiant (the emulator's DL385 Gen10 Plus v2 on iLO 5) with the real binary: the
//! same commands and shipped profiles as on a Dell host, the profile bound to HPE's names, the
//! write a PATCH of the full-copy settings object with no job, applied by one reset and judged
//! from the BIOS's own account; a value the registry does not allow is refused before anything
//! is sent (an iLO would take it). Each flow prints its requests (`flow …:` lines, shown with
//! `--nocapture`).

use super::{Run, TempDir, host_entry, joint_inventory, sim, stats, stderr, stdout};
use serde_json::Value;

/// Waits, short for the emulator's POST.
pub(super) const WAITS: [&str; 4] = ["--graceful-timeout", "2s", "--boot-timeout", "20s"];

/// `apply --bmc URL -p performance --reboot REBOOT -o json` with the short waits.
pub(super) fn apply_args<'a>(url: &'a str, reboot: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "apply",
        "--bmc",
        url,
        "-p",
        "performance",
        "--reboot",
        reboot,
        "-o",
        "json",
    ];
    args.extend(WAITS);
    args
}

/// A command's `-o json` document; anything else fails the test with the command's output.
pub(super) fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(out), stderr(out)))
}

/// The requests, BIOS PATCHes, jobs, POSTs and resets host `i` of `fleet` counted, printed as
/// the `flow` line.
pub(super) fn counters(flow: &str, fleet: &idrac_sim::Fleet, i: usize) -> Value {
    let s = stats(fleet, i);
    eprintln!(
        "flow {flow}: {} requests, {} BIOS PATCH, {} job(s), {} POST(s), {} reset(s)",
        s["requests"]["total"], s["bios_patches"], s["jobs_created"], s["posts"], s["resets"]
    );
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ilo_is_inventoried_and_diffed_in_hpe_names_with_what_hpe_lacks_said_so() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let inv = Run::new(&["inventory", "--bmc", url, "-o", "json"]).output().await;
    assert!(inv.status.success(), "{}", stderr(&inv));
    let doc: Value = serde_json::from_slice(&inv.stdout).unwrap();
    assert_eq!(doc["model"], "ProLiant DL385 Gen10 Plus v2");
    assert_eq!(doc["bmc"], "HPE iLO 5 (firmware 2.72)");
    // The system's summary names sockets and model only; the processors give the rest.
    assert_eq!(
        (
            &doc["processors"]["count"],
            &doc["processors"]["cores"],
            &doc["processors"]["threads"]
        ),
        (&Value::from(2), &Value::from(128), &Value::from(256)),
        "{}",
        doc["processors"]
    );
    assert_eq!(
        doc["generation"],
        Value::Null,
        "a ProLiant's name is not a PowerEdge generation"
    );
    let out = Run::new(&["diff", "--bmc", url, "-p", "performance", "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    let change = |name: &str| {
        host["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["attribute"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    // Dell's system profile becomes HPE's Custom preset, the escape its locks need.
    assert_eq!(change("WorkloadProfile")["desired"], "Custom", "{host}");
    assert_eq!(change("WorkloadProfile")["status"], "drift");
    assert!(change("LogicalProc").is_null(), "no Dell name is judged on an iLO");
    let lacking = change("CECriticalSEL");
    assert_eq!(lacking["status"], "not_applicable");
    assert!(
        lacking["note"].as_str().unwrap().starts_with("no HPE equivalent"),
        "{lacking}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_on_an_ilo_is_one_patch_and_one_reset_with_no_job_verified_then_in_sync() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let args = apply_args(url, "graceful");
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "converged", "{host}");
    assert_eq!(host["job"], Value::Null, "an iLO has no job");
    assert_eq!(host["bios"]["WorkloadProfile"], "Custom", "{host}");
    assert_eq!(host["rebooted"], true);
    let s = counters("apply on an iLO", &fleet, 0);
    assert_eq!(
        (&s["bios_patches"], &s["jobs_created"], &s["posts"]),
        (&Value::from(1), &Value::from(0), &Value::from(1)),
        "{s}"
    );
    let again = Run::new(&args).state_dir(&dir.0).output().await;
    let doc: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["outcome"], "in_sync", "{}", stderr(&again));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_value_the_registry_does_not_allow_is_refused_before_an_ilo_that_would_take_it_sees_it() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = dir.0.join("bogus.toml");
    std::fs::write(
        &profile,
        r#"
name = "bogus"
description = "nonsense an iLO would accept at PATCH time"
extends = "performance"
[bios.ProcSMT]
value = "Sometimes"
why = "a test of validation before sending"
source = "snapshot"
confidence = "used"
"#,
    )
    .unwrap();
    let mut args = vec![
        "apply",
        "--bmc",
        url,
        "-p",
        profile.to_str().unwrap(),
        "--reboot",
        "graceful",
    ];
    args.extend(WAITS);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let shown = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        shown.contains("ProcSMT: \"Sometimes\" is not allowed here; allowed: Enabled, Disabled"),
        "{shown}"
    );
    let s = counters("nonsense refused", &fleet, 0);
    assert_eq!(
        (&s["bios_patches"], &s["resets"]),
        (&Value::from(0), &Value::from(0)),
        "{s}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mixed_dell_and_hpe_fleet_takes_one_shipped_profile_each_in_its_own_names() {
    let dell = sim("r7625", 1, |_| {}).await;
    let hpe = sim("dl385", 1, |_| {}).await;
    let dir = TempDir::new();
    let inventory = joint_inventory(&dir.0, &[&dell, &hpe]);
    let inv = inventory.to_str().unwrap();
    let mut args = vec![
        "apply",
        "--inventory",
        inv,
        "-p",
        "performance",
        "--reboot",
        "graceful",
        "-o",
        "json",
    ];
    args.extend(WAITS);
    args.extend(["--job-timeout", "20s"]);
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (r7625, dl385) = (host_entry(&doc, "r7625"), host_entry(&doc, "dl385"));
    assert_eq!(
        (&r7625["outcome"], &dl385["outcome"]),
        (&Value::from("converged"), &Value::from("converged"))
    );
    // One intent, each vendor's words: Dell's correctable-error logging, HPE's preset escape.
    assert_eq!(r7625["bios"]["CECriticalSEL"], "Enabled", "{r7625}");
    assert_eq!(dl385["bios"]["WorkloadProfile"], "Custom", "{dl385}");
    assert!(r7625["job"].is_string() && dl385["job"].is_null());
    let (d, h) = (
        counters("mixed fleet: r7625", &dell, 0),
        counters("mixed fleet: dl385", &hpe, 0),
    );
    assert_eq!(
        (&d["bios_patches"], &d["jobs_created"]),
        (&Value::from(1), &Value::from(1)),
        "{d}"
    );
    assert_eq!(
        (&h["bios_patches"], &h["jobs_created"]),
        (&Value::from(1), &Value::from(0)),
        "{h}"
    );
    let diff = Run::new(&["diff", "--inventory", inv, "-p", "performance", "-o", "json"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(diff.status.code(), Some(0), "{}", stdout(&diff));
}

#[tokio::test(flavor = "multi_thread")]
async fn on_an_ilo_values_left_for_the_next_reboot_are_adopted_and_foreign_ones_need_replace_pending() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let none = Run::new(&apply_args(url, "none")).state_dir(&dir.0).output().await;
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    let doc: Value = serde_json::from_slice(&none.stdout).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "not_converged", "{host}");
    assert!(
        host["summary"]
            .as_str()
            .unwrap()
            .contains("apply at the host's next reboot (this BMC runs no job)"),
        "{host}"
    );
    // The next run adopts what it staged: no second PATCH, one reset.
    let mut args = apply_args(url, "graceful");
    let out = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&doc["hosts"][0]["outcome"], &doc["hosts"][0]["adopted"]),
        (&Value::from("converged"), &Value::from(true))
    );
    let s = counters("left for the next reboot, then adopted", &fleet, 0);
    assert_eq!(
        (&s["bios_patches"], &s["posts"]),
        (&Value::from(1), &Value::from(1)),
        "{s}"
    );
    // Someone else stages a value (an iLO takes it without a job): refused, then replaced.
    super::client(url)
        .patch(
            "/redfish/v1/systems/1/bios/settings/",
            &serde_json::json!({"Attributes": {"ProcSMT": "Disabled"}}),
        )
        .await
        .unwrap();
    let refused = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(refused.status.code(), Some(1), "{}", stdout(&refused));
    let doc: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["error_kind"], "pending_work", "{}", doc["hosts"][0]);
    args.push("--replace-pending");
    let replaced = Run::new(&args).state_dir(&dir.0).output().await;
    assert_eq!(
        replaced.status.code(),
        Some(0),
        "{}{}",
        stdout(&replaced),
        stderr(&replaced)
    );
    let doc: Value = serde_json::from_slice(&replaced.stdout).unwrap();
    assert!(doc["hosts"][0]["replaced"].is_string(), "{}", doc["hosts"][0]);
    // Written back: nothing pending any more, the host in sync.
    let diff = Run::new(&["diff", "--bmc", url, "-p", "performance", "-o", "json"])
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(diff.status.code(), Some(0), "{}", stdout(&diff));
    let doc: Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert_eq!(doc["hosts"][0]["counts"]["pending"], 0, "{}", doc["hosts"][0]["counts"]);
}

/// The requests a host counted for `method path` (paths as an iLO's routes see them: lower case).
fn counted(s: &Value, method_path: &str) -> u64 {
    s["requests"]["by_path"][method_path].as_u64().unwrap_or(0)
}

/// An iLO refuses with MessageIds and arguments only; rftune's error names the message and what
/// to do about it, read from the registries the iLO serves, each once in a run (the collection
/// with its members inline, then the one file the id names). A wrong password's hint names the
/// iLO and no iDRAC id, and costs no lookup.
#[tokio::test(flavor = "multi_thread")]
async fn an_ilo_refusal_reads_in_words_from_the_registries_it_serves_read_once_in_a_run() {
    let dir = TempDir::new();
    let tree = dir.0.join("tree");
    super::apply::copy_tree(&rftune_tests::fixtures_dir().join("dl385"), &tree);
    // A system that does not list ForceRestart: rftune sends it for --reboot force all the
    // same, and the iLO refuses it.
    let system = tree.join("redfish/v1/Systems/1/index.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&system).unwrap()).unwrap();
    doc["Actions"]["#ComputerSystem.Reset"]["ResetType@Redfish.AllowableValues"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t != "ForceRestart");
    std::fs::write(&system, serde_json::to_vec(&doc).unwrap()).unwrap();
    let fleet = sim("dl385", 1, |c| c.model = idrac_sim::ModelSource::Dir(tree.clone())).await;
    let url = &fleet.hosts()[0].url;
    let apply = apply_args(url, "force");
    let out = Run::new(&apply).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = &doc["hosts"][0];
    let error = host["error"].as_str().unwrap();
    assert!(
        error.contains(
            "HTTP 400: [ActionParameterValueNotInList] The action does not take the value ForceRestart for its parameter ResetType. Resolution: Use one of the values the action lists for the parameter."
        ),
        "the message and the resolution, not only the id: {host}"
    );
    assert!(
        error.starts_with(&format!("{}:", host["host"].as_str().unwrap())),
        "{host}"
    );
    assert!(
        host["message_ids"]
            .as_array()
            .unwrap()
            .contains(&Value::from("iLO.2.15.ActionParameterValueNotInList")),
        "{host}"
    );
    let s = counters("an iLO's refusal in words", &fleet, 0);
    let lookups = |s: &Value| {
        (
            counted(s, "GET /redfish/v1/registries"),
            counted(s, "GET /redfish/v1/registrystore/registries/en/ilo.json"),
            counted(s, "GET /redfish/v1/registrystore/registries/en/base.json"),
        )
    };
    assert_eq!(
        lookups(&s),
        (1, 1, 0),
        "the collection once, members inline; the iLO registry's file once; Base not needed: {}",
        s["requests"]["by_path"]
    );
    // A wrong password: 401, explained by nothing but the hint, which names no iDRAC id.
    let wrong = Run::new(&["inventory", "--bmc", url])
        .env("RFTUNE_PASSWORD", "not-the-password")
        .state_dir(&dir.0)
        .output()
        .await;
    assert_eq!(wrong.status.code(), Some(1));
    let err = stderr(&wrong);
    assert!(err.contains("HTTP 401: [UnauthorizedLoginAttempt]"), "{err}");
    let hint = err.lines().find(|l| l.starts_with("hint: ")).unwrap_or_default();
    assert_eq!(
        hint, "hint: the HPE iLO 5 (firmware 2.72) rejected the credentials; check RFTUNE_USERNAME and the password",
        "the BMC read from its service root, and no iDRAC id: {err}"
    );
    assert_eq!(
        lookups(&stats(&fleet, 0)),
        (1, 1, 0),
        "a refused login looks nothing up"
    );
}
