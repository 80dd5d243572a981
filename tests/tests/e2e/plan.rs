//! `rftune plan` and `rftune apply --plan` against the emulator: plans that refuse hosts changed
//! since, a second apply that changes nothing, edited and expired plans refused whole, a 412 as
//! stale, one run per host, hooks around the reboot, and runs with separate state directories.

use super::{Run, TempDir, client, sim, stats, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::resources::computer_system::ResetType;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const BIOS_PATCH: &str = "PATCH /redfish/v1/Systems/System.Embedded.1/Bios/Settings";

/// The fleet's inventory in `dir`, each host with `node = "worker-N"`.
fn inventory(fleet: &idrac_sim::Fleet, dir: &Path) -> PathBuf {
    let mut text = String::new();
    for (i, h) in fleet.hosts().iter().enumerate() {
        text.push_str(&format!(
            "[[bmc]]\nname = {:?}\nurl = {:?}\nnode = \"worker-{}\"\n\n",
            h.name,
            h.url,
            i + 1
        ));
    }
    let path = dir.join("fleet.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn waits() -> Vec<&'static str> {
    vec![
        "--graceful-timeout",
        "2s",
        "--job-timeout",
        "30s",
        "--boot-timeout",
        "30s",
    ]
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(out), stderr(out)))
}

/// Changes a BIOS value of host `i` behind rftune's back, as another administrator would:
/// staged, then a restart that runs the job; returns once the value is current.
async fn change_out_of_band(fleet: &idrac_sim::Fleet, i: usize, attribute: &str, value: &str) {
    let url = &fleet.hosts()[i].url;
    let c = client(url);
    let values: Attributes = [(attribute.to_owned(), value.into())].into_iter().collect();
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &values,
        Some(&SettingsApplyTime::on_reset()),
    )
    .await
    .unwrap();
    let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::ForceRestart).await.unwrap();
    for _ in 0..300 {
        let (bios, pending, _) = fleet.hosts()[i].host.snapshot();
        if bios.get(attribute).and_then(|v| v.as_str()) == Some(value) && pending.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{attribute} never became {value} on host {i}");
}

fn reset_stats(fleet: &idrac_sim::Fleet) {
    for h in fleet.hosts() {
        h.host.stats.reset();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_of_20_hosts_applies_to_19_and_refuses_the_one_changed_since_naming_the_attribute() {
    let fleet = sim("r7625", 20, |_| {}).await;
    let dir = TempDir::new();
    let state = TempDir::new();
    let inv = inventory(&fleet, &dir.0);
    let plan = dir.0.join("plan.json");
    let inv_arg = inv.to_str().unwrap();
    let plan_arg = plan.to_str().unwrap();
    let out = Run::new(&["plan", "--inventory", inv_arg, "-p", "performance", "--out", plan_arg])
        .state_dir(&state.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "changes planned: {}", stderr(&out));
    let table = stdout(&out);
    assert!(
        table.contains("20 hosts: 20 change, 20 reboot, 0 in sync, 0 error"),
        "{table}"
    );
    assert!(table.contains("PATCH Bios/Settings"), "{table}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(doc["schema"], "rftune.plan/v1");
    let host = &doc["hosts"][4];
    assert_eq!(host["status"], "change");
    assert_eq!(host["reboot"], true);
    assert_eq!(host["identity"]["model"], "PowerEdge R7625");
    assert!(host["identity"]["registry_id"].is_string());
    assert_eq!(host["basis"]["bios"]["MemTest"], "Disabled");
    assert!(host["state_digest"].as_str().unwrap().starts_with("sha256:"));
    assert!(host["patch"]["bios"]["Attributes"].is_object());
    assert_eq!(stats(&fleet, 4)["bios_patches"], 0, "planning writes nothing");

    change_out_of_band(&fleet, 4, "MemTest", "Enabled").await;
    reset_stats(&fleet);
    let mut args = vec![
        "apply",
        "--plan",
        plan_arg,
        "--inventory",
        inv_arg,
        "--max-unavailable",
        "20",
        "-o",
        "json",
    ];
    args.extend(waits());
    let out = Run::new(&args).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(1), "a stale host is an error: {}", stderr(&out));
    let doc = json(&out);
    let outcomes: Vec<&str> = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "converged").count(),
        19,
        "{outcomes:?}"
    );
    let stale = &doc["hosts"][4];
    assert_eq!(stale["outcome"], "stale");
    assert_eq!(
        stale["error"],
        "plan is stale for r7625-0005: MemTest was Disabled when planned, is Enabled now; run `rftune plan` again"
    );
    assert_eq!(stale["written"], false);
    assert_eq!(doc["summary"]["stale"], 1);
    assert_eq!(doc["summary"]["converged"], 19);
    assert_eq!(
        stats(&fleet, 4)["requests"]["by_method"].get("PATCH"),
        None,
        "nothing sent to it"
    );
    assert_eq!(stats(&fleet, 4)["resets"], 0);
    for i in [0, 19] {
        let s = stats(&fleet, i);
        assert_eq!(
            (s["bios_patches"].as_u64(), s["jobs_created"].as_u64()),
            (Some(1), Some(1))
        );
    }

    // The same plan again: every applied host already has its values; nothing is sent.
    reset_stats(&fleet);
    let out = Run::new(&args).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(1), "the stale host is still refused");
    let doc = json(&out);
    assert_eq!(doc["summary"]["in_sync"], 19, "{}", doc["summary"]);
    assert_eq!(doc["summary"]["stale"], 1);
    for i in 0..20 {
        let s = stats(&fleet, i);
        assert_eq!(s["requests"]["by_method"].get("PATCH"), None, "host {i}");
        assert_eq!(s["resets"], 0, "host {i}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_expired_or_foreign_plan_is_refused_whole_before_any_host_is_touched() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let dir = TempDir::new();
    let url = fleet.hosts()[0].url.clone();
    let plan = dir.0.join("plan.json");
    let plan_arg = plan.to_str().unwrap();
    let out = Run::new(&["plan", "--bmc", &url, "-p", "performance", "--out", plan_arg])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = std::fs::read_to_string(&plan).unwrap();
    reset_stats(&fleet);
    let apply = |file: &str, extra: &[&str]| {
        let mut args = vec!["apply", "--plan", file, "--bmc", url.as_str()];
        args.extend_from_slice(extra);
        args.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>()
    };
    // Edited: a desired value changed by hand.
    let edited = dir.0.join("edited.json");
    std::fs::write(&edited, text.replacen("\"Enabled\"", "\"Disabled\"", 1)).unwrap();
    let args = apply(edited.to_str().unwrap(), &[]);
    let out = Run::new(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("fails its integrity check"), "{}", stderr(&out));
    // Made by another rftune version (resealed, so only the version differs).
    let mut foreign = rftune_engine::plan::PlanDocument::parse(&text, "plan.json").unwrap();
    foreign.rftune_version = "0.0.1".into();
    foreign.seal();
    let other = dir.0.join("other.json");
    std::fs::write(&other, serde_json::to_string(&foreign).unwrap()).unwrap();
    let args = apply(other.to_str().unwrap(), &[]);
    let out = Run::new(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("was made by rftune 0.0.1"), "{}", stderr(&out));
    // Expired: older than --max-plan-age.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let args = apply(plan_arg, &["--max-plan-age", "1s"]);
    let out = Run::new(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("more than --max-plan-age 1s"), "{}", stderr(&out));
    assert_eq!(stats(&fleet, 0)["requests"]["total"], 0, "no host was contacted");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_412_to_the_conditional_bios_patch_is_reported_as_stale_and_never_resent() {
    // Two hosts, one reboot at a time: both are read and planned at once, then one waits for
    // its reboot slot while someone stages a value on it. Its PATCH carries the ETag it read.
    let fleet = sim("r7625", 2, |c| c.boot_time = Duration::from_secs(2)).await;
    let dir = TempDir::new();
    let state = TempDir::new();
    let inv = inventory(&fleet, &dir.0);
    let mut args = vec![
        "apply",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        "performance",
        "--reboot",
        "force",
        "--max-unavailable",
        "1",
        "-o",
        "json",
    ];
    args.extend(waits());
    let run = tokio::spawn(Run::new(&args).state_dir(&state.0).output());
    // Wait until one host is rebooting and the other, planned, waits for the slot (which
    // host goes first is the scheduler's choice).
    let audit = state.0.join("audit.log");
    let planned = |i: usize| {
        let name = format!("\"host\":\"r7625-000{}\"", i + 1);
        std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains(&name) && l.contains("\"step\":\"plan\""))
    };
    let mut waiting = None;
    for _ in 0..400 {
        let rebooting = (0..2).find(|i| stats(&fleet, *i)["resets"].as_u64() >= Some(1));
        if let Some(first) = rebooting
            && planned(1 - first)
        {
            waiting = Some(1 - first);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let waiting = waiting.expect("one host rebooted while the other waited");
    assert_eq!(
        stats(&fleet, waiting)["requests"]["by_path"].get(BIOS_PATCH),
        None,
        "still waiting"
    );
    let values: Attributes = [("MemTest".to_owned(), "Enabled".into())].into_iter().collect();
    client(&fleet.hosts()[waiting].url)
        .stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &values, None)
        .await
        .unwrap();
    let out = run.await.unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["hosts"][1 - waiting]["outcome"], "converged");
    let second = &doc["hosts"][waiting];
    assert_eq!(second["outcome"], "stale", "{second}");
    let error = second["error"].as_str().unwrap();
    assert!(
        error.contains(&format!("plan is stale for r7625-000{}", waiting + 1))
            && error.contains("412 Precondition Failed")
            && error.contains("run apply again"),
        "{error}"
    );
    let s = stats(&fleet, waiting);
    assert_eq!(
        s["requests"]["by_path"][BIOS_PATCH], 2,
        "the other staging, and rftune's one refused PATCH"
    );
    assert_eq!(s["resets"], 0, "not rebooted");
    let (_, pending, _) = fleet.hosts()[waiting].host.snapshot();
    assert_eq!(
        pending.get("MemTest").and_then(|v| v.as_str()),
        Some("Enabled"),
        "the other value stays; nothing of rftune's is staged"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_applies_at_once_on_one_host_with_one_state_directory_send_one_patch_one_job_one_reset() {
    for wait in ["0s", "2m"] {
        let fleet = sim("r7625", 1, |c| c.boot_time = Duration::from_secs(1)).await;
        let state = TempDir::new();
        let url = fleet.hosts()[0].url.clone();
        let mut args = vec![
            "apply",
            "--bmc",
            url.as_str(),
            "-p",
            "performance",
            "--reboot",
            "force",
            "--lock-wait",
            wait,
            "-o",
            "json",
        ];
        args.extend(waits());
        let (a, b) = tokio::join!(
            Run::new(&args).state_dir(&state.0).output(),
            Run::new(&args).state_dir(&state.0).output()
        );
        let s = stats(&fleet, 0);
        assert_eq!(
            (
                s["bios_patches"].as_u64(),
                s["jobs_created"].as_u64(),
                s["resets"].as_u64()
            ),
            (Some(1), Some(1), Some(1)),
            "--lock-wait {wait}: {s}"
        );
        let mut codes = [a.status.code(), b.status.code()];
        codes.sort_unstable();
        if wait == "0s" {
            // The second fails at once, naming the run that holds the host.
            assert_eq!(codes, [Some(0), Some(1)]);
            let refused = if a.status.code() == Some(1) { &a } else { &b };
            let doc = json(refused);
            let err = doc["hosts"][0]["error"].as_str().unwrap_or_default();
            assert_eq!(doc["hosts"][0]["written"], false);
            assert!(
                err.contains("another rftune run holds the lock of 127.0.0.1:")
                    && err.contains("pid ")
                    && err.contains("rftune apply"),
                "{err}"
            );
        } else {
            // The second waits, then finds the host converged.
            assert_eq!(codes, [Some(0), Some(0)], "{}{}", stderr(&a), stderr(&b));
            let mut outcomes = [
                json(&a)["hosts"][0]["outcome"].clone(),
                json(&b)["hosts"][0]["outcome"].clone(),
            ];
            outcomes.sort_by_key(ToString::to_string);
            assert_eq!(outcomes, [Value::from("converged"), Value::from("in_sync")]);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_before_reboot_hook_stops_its_host_before_the_reboot_and_the_rest_converge() {
    let fleet = sim("r7625", 10, |_| {}).await;
    let dir = TempDir::new();
    let state = TempDir::new();
    let inv = inventory(&fleet, &dir.0);
    let hooks = dir.0.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let mut args = vec![
        "apply",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        "performance",
        "--max-unavailable",
        "3",
        "--before-reboot",
        r#"env > "$HOOK_DIR/before-$RFTUNE_HOST"; echo "drained $RFTUNE_NODE"; if [ "$RFTUNE_HOST" = r7625-0004 ]; then echo "cannot evict pods on $RFTUNE_NODE" >&2; exit 3; fi"#,
        "--after-verify",
        r#"touch "$HOOK_DIR/after-$RFTUNE_HOST""#,
        "--on-failure",
        r#"echo "$RFTUNE_ERROR" > "$HOOK_DIR/failure-$RFTUNE_HOST""#,
        "-o",
        "json",
    ];
    args.extend(waits());
    let out = Run::new(&args)
        .state_dir(&state.0)
        .env("HOOK_DIR", hooks.to_str().unwrap())
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["summary"]["converged"], 9, "{}", doc["summary"]);
    let failed = &doc["hosts"][3];
    assert_eq!(failed["outcome"], "error");
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("the before-reboot hook failed (exit 3: cannot evict pods on worker-4)")
            && error.contains("not rebooted")
            && error.contains("cleared again"),
        "{error}"
    );
    let s = stats(&fleet, 3);
    assert_eq!(s["resets"], 0, "the failing host was not rebooted");
    let (bios, pending, _) = fleet.hosts()[3].host.snapshot();
    assert!(pending.is_empty(), "its staged values were cleared: {pending:?}");
    assert_eq!(
        bios.get("CECriticalSEL").and_then(|v| v.as_str()),
        Some("Disabled"),
        "unchanged"
    );
    for i in (0..10).filter(|i| *i != 3) {
        assert_eq!(doc["hosts"][i]["outcome"], "converged", "host {i}");
        assert_eq!(
            doc["hosts"][i]["hooks"],
            serde_json::json!(["before-reboot: ok", "after-verify: ok"])
        );
    }
    let files: std::collections::BTreeSet<String> = std::fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.iter().filter(|f| f.starts_with("before-")).count(), 10);
    assert_eq!(files.iter().filter(|f| f.starts_with("after-")).count(), 9);
    assert!(!files.contains("after-r7625-0004"));
    let failures: Vec<&String> = files.iter().filter(|f| f.starts_with("failure-")).collect();
    assert_eq!(
        failures,
        ["failure-r7625-0004"],
        "on-failure only where before-reboot ran and failed"
    );
    // The hook's environment: the host, and no secret.
    let env = std::fs::read_to_string(hooks.join("before-r7625-0004")).unwrap();
    for line in [
        "RFTUNE_HOST=r7625-0004",
        "RFTUNE_PHASE=before-reboot",
        "RFTUNE_NODE=worker-4",
        "RFTUNE_PROFILE=performance",
    ] {
        assert!(env.lines().any(|l| l == line), "{line} missing from:\n{env}");
    }
    assert!(env.lines().any(|l| l.starts_with("RFTUNE_SERVICE_TAG=")), "{env}");
    assert!(
        env.lines().any(|l| l == format!("RFTUNE_BMC={}", fleet.hosts()[3].url)),
        "{env}"
    );
    assert!(
        !env.contains(rftune_tests::PASSWORD),
        "the BMC password is not in the hook's environment"
    );
    assert!(
        !env.contains("RFTUNE_PASSWORD") && !env.contains("RFTUNE_STATE_DIR"),
        "{env}"
    );
    // Their output is in the audit log.
    let audit = std::fs::read_to_string(state.0.join("audit.log")).unwrap();
    let hook = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["step"] == "hook" && r["host"] == "r7625-0004")
        .unwrap();
    assert_eq!(hook["outcome"], "error");
    assert_eq!(hook["detail"]["exit"], 3);
    assert_eq!(hook["detail"]["stdout"], "drained worker-4\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_with_different_state_directories_meet_the_rule_that_refuses_pending_work_they_did_not_stage() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    let (one, two) = (TempDir::new(), TempDir::new());
    let out = Run::new(&["apply", "--bmc", &url, "-p", "performance", "--reboot", "none"])
        .state_dir(&one.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "staged, not converged: {}", stderr(&out));
    let out = Run::new(&["apply", "--bmc", &url, "-p", "performance", "--reboot", "none"])
        .state_dir(&two.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("already staged; rftune does not stack changes on pending work")
            && err.contains("--replace-pending"),
        "{err}"
    );
    assert_eq!(stats(&fleet, 0)["bios_patches"], 1, "only the first run's PATCH");
    // The first run's own state directory adopts its values.
    let out = Run::new(&["apply", "--bmc", &url, "-p", "performance", "--reboot", "none"])
        .state_dir(&one.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).contains("adopted"), "{}", stdout(&out));
    assert_eq!(stats(&fleet, 0)["bios_patches"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn plans_made_in_shards_merge_into_one_resealed_plan_that_applies() {
    let fleet = sim("r7625", 4, |_| {}).await;
    let dir = TempDir::new();
    let state = TempDir::new();
    let inv = inventory(&fleet, &dir.0);
    let inv_arg = inv.to_str().unwrap();
    let mut parts = Vec::new();
    for k in ["1/2", "2/2"] {
        let file = dir.0.join(format!("plan-{}.json", &k[..1]));
        let out = Run::new(&[
            "plan",
            "--inventory",
            inv_arg,
            "--shard",
            k,
            "-p",
            "performance",
            "--out",
            file.to_str().unwrap(),
        ])
        .state_dir(&state.0)
        .output()
        .await;
        assert!(
            out.status.code() == Some(2) || out.status.code() == Some(0),
            "{}",
            stderr(&out)
        );
        parts.push(file);
    }
    let out = Run::new(&[
        "merge",
        "-o",
        "json",
        parts[0].to_str().unwrap(),
        parts[1].to_str().unwrap(),
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let merged = dir.0.join("plan.json");
    std::fs::write(&merged, &out.stdout).unwrap();
    let doc = json(&out);
    assert_eq!(doc["summary"]["hosts"], 4);
    assert!(doc.get("shard").is_none());
    // A shard missing is refused.
    let out = Run::new(&["merge", parts[0].to_str().unwrap()]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("shard(s) 2/2 missing"), "{}", stderr(&out));
    let mut args = vec![
        "apply",
        "--plan",
        merged.to_str().unwrap(),
        "--inventory",
        inv_arg,
        "--max-unavailable",
        "4",
        "-o",
        "json",
    ];
    args.extend(waits());
    let out = Run::new(&args).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["summary"]["converged"], 4);
}
