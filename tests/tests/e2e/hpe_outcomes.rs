//! What an apply on an HPE ProLiant (the emulator's DL385 Gen10 Plus v2 on iLO 5) reports when
//! the POST does not do what was asked: a value the BIOS refused at the POST is `not_applied`,
//! never success; a POST that processed nothing is `outcome_unknown`; answers lost on the way
//! never lead to a second PATCH, and a rerun converges; a boot order in HPE's boot settings is
//! judged the same way, by what those settings say of their POST. Each flow prints its requests (`flow …:`
//! lines, shown with `--nocapture`).

use super::hpe::{WAITS, apply_args, counters, json};
use super::hpe_writes::{DISK_FIRST, apply_force, boot_order_patches, profile_file, writes};
use super::{Run, TempDir, sim, stderr, stdout};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn a_value_the_ilo_refuses_at_post_is_not_applied_named_with_the_bioss_message() {
    let fleet = sim("dl385", 1, |c| c.faults = vec!["post-refuses".parse().unwrap()]).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let out = Run::new(&apply_args(url, "force")).state_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let doc = json(&out);
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "not_applied", "{host}");
    let summary = host["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("accepted but not applied: the BIOS refused ")
            && summary.contains("PropertyValueIncompatible: The value ")
            && summary.contains("does not go with the value of"),
        "{summary}"
    );
    assert_eq!(doc["summary"]["not_applied"], 1, "{}", doc["summary"]);
    let s = counters("refused at POST", &fleet, 0);
    assert_eq!(
        (&s["bios_patches"], &s["posts"]),
        (&Value::from(1), &Value::from(1)),
        "{s}"
    );
    // The audit log records the verdict with the BIOS's own words.
    let audit = std::fs::read_to_string(dir.0.join("audit.log")).unwrap();
    assert!(audit.contains("\"not_applied\""), "{audit}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ilo_post_that_processes_nothing_is_outcome_unknown_and_the_values_stay_staged() {
    let fleet = sim("dl385", 1, |c| c.faults = vec!["job-fails".parse().unwrap()]).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&apply_args(url, "force")).output().await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["error_kind"], "outcome_unknown", "{host}");
    assert!(
        host["error"]
            .as_str()
            .unwrap()
            .contains("the BIOS did not process the staged values at the reboot"),
        "{host}"
    );
    assert_eq!(host["written"], true, "{host}");
    // Still staged for the next POST: diff shows them pending.
    let diff = Run::new(&["diff", "--bmc", url, "-p", "performance", "-o", "json"])
        .output()
        .await;
    let doc = json(&diff);
    assert!(
        doc["hosts"][0]["counts"]["pending"].as_u64().unwrap() > 0,
        "{}",
        doc["hosts"][0]["counts"]
    );
}

/// The iLO takes a request and the answer is cut (`reset`) or garbled (`malformed`): rftune reads
/// back what the full-copy settings object holds and adopts it, so no host gets a second PATCH
/// of its values and a rerun converges every host.
#[tokio::test(flavor = "multi_thread")]
async fn on_ilos_lost_answers_never_lead_to_a_second_patch_and_a_rerun_converges() {
    for fault in ["reset:0.1", "malformed:0.1"] {
        let fleet = sim("dl385", 12, |c| {
            c.faults = vec![fault.parse().unwrap()];
            c.seed = 11;
        })
        .await;
        super::apply::converges_within_three_runs(fault, &fleet, &WAITS).await;
        for (i, h) in fleet.hosts().iter().enumerate() {
            let s = h.host.stats.to_json("");
            assert!(s["bios_patches"].as_u64().unwrap() <= 1, "{fault} host {i}: {s}");
            let (bios, pending, _) = h.host.snapshot();
            assert_eq!(bios["WorkloadProfile"].as_str(), Some("Custom"), "{fault} host {i}");
            assert!(pending.is_empty(), "{fault} host {i}: {pending:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_ilos_a_lost_answer_to_a_boot_order_patch_is_read_back_never_sent_twice_blindly() {
    let dir = TempDir::new();
    let profile = profile_file(&dir, "disk-first", &format!("extends = \"performance\"\n{DISK_FIRST}"));
    for fault in ["reset:0.1", "malformed:0.1"] {
        let fleet = sim("dl385", 12, |c| {
            c.faults = vec![fault.parse().unwrap()];
            c.seed = 13;
        })
        .await;
        super::apply::converges_within_three_runs_of(&profile, fault, &fleet, &WAITS).await;
        for (i, h) in fleet.hosts().iter().enumerate() {
            let s = h.host.stats.to_json("");
            assert!(s["bios_patches"].as_u64().unwrap() <= 1, "{fault} host {i}: {s}");
            // Both faults let the request through and lose its answer: the read-back finds the
            // order staged, and it is never sent again.
            assert!(boot_order_patches(&s) <= 1, "{fault} host {i}: {s}");
            let (bios, pending, _) = h.host.snapshot();
            assert_eq!(bios["WorkloadProfile"].as_str(), Some("Custom"), "{fault} host {i}");
            assert!(pending.is_empty(), "{fault} host {i}: {pending:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn part_of_what_an_earlier_run_staged_on_an_ilo_is_staged_again_whole_without_replace_pending() {
    let fleet = sim("dl385", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "disk-first", &format!("extends = \"performance\"\n{DISK_FIRST}"));
    let apply = |reboot: &'static str| {
        let mut args = vec!["apply", "--bmc", url, "-p", &profile, "--reboot", reboot, "-o", "json"];
        args.extend(WAITS);
        Run::new(&args).state_dir(&dir.0).output()
    };
    // Both parts staged for the next reboot, then the BIOS part is gone (as after a run cut
    // between its two PATCHes): only the boot order is left of what rftune staged.
    let out = apply("none").await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "staged, waiting for a reboot: {}{}",
        stdout(&out),
        stderr(&out)
    );
    let (current, _, _) = fleet.hosts()[0].host.snapshot();
    super::client(url)
        .patch(
            "/redfish/v1/systems/1/bios/settings/",
            &serde_json::json!({ "Attributes": current }),
        )
        .await
        .unwrap();
    let out = apply("force").await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["outcome"], "converged", "{host}");
    assert!(
        host["replaced"]
            .as_str()
            .is_some_and(|r| r.contains("PersistentBootConfigOrder")),
        "{host}"
    );
    assert!(
        stderr(&out).contains("(rftune's own, staged again whole)"),
        "{}",
        stderr(&out)
    );
    let (after, pending, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(after["WorkloadProfile"].as_str(), Some("Custom"));
    assert!(pending.is_empty(), "{pending:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn on_an_idrac_a_value_the_bios_drops_at_post_leaves_the_host_not_converged() {
    let fleet = sim("r7625", 1, |c| c.faults = vec!["post-refuses".parse().unwrap()]).await;
    let url = &fleet.hosts()[0].url;
    let mut args = apply_args(url, "force");
    args.extend(["--job-timeout", "20s"]);
    let out = Run::new(&args).output().await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["outcome"], "not_converged", "{host}");
    assert!(host["job"].is_string(), "the job completed: {host}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_boot_order_the_ilo_refuses_at_post_is_not_applied_named_with_its_boot_settings_message() {
    let fleet = sim("dl385", 1, |c| c.faults = vec!["post-refuses".parse().unwrap()]).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "only-boot", DISK_FIRST);
    let out = apply_force(url, &profile, &dir, &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["outcome"], "not_applied", "{host}");
    let summary = host["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(
            "accepted but not applied: the BIOS refused PersistentBootConfigOrder (iLO.2.15.PropertyValueIncompatible"
        ),
        "{summary}"
    );
    let s = counters("boot order refused at POST", &fleet, 0);
    assert_eq!(writes(&s), (0, 1, 1), "{s}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_boot_order_an_ilo_post_does_not_process_is_outcome_unknown_and_stays_staged() {
    let fleet = sim("dl385", 1, |c| c.faults = vec!["job-fails".parse().unwrap()]).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let profile = profile_file(&dir, "only-boot", DISK_FIRST);
    let out = apply_force(url, &profile, &dir, &[]).await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let host = &json(&out)["hosts"][0];
    assert_eq!(host["error_kind"], "outcome_unknown", "{host}");
    assert!(
        host["error"]
            .as_str()
            .unwrap()
            .contains("did not process the staged boot order at the reboot"),
        "{host}"
    );
    let diff = Run::new(&["diff", "--bmc", url, "-p", &profile, "-o", "json"])
        .output()
        .await;
    let row = &json(&diff)["hosts"][0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["attribute"] == "PersistentBootConfigOrder")
        .cloned()
        .unwrap();
    assert_eq!(row["status"], "pending", "still staged for the next POST: {row}");
}
