//! Streamed results (`-o jsonl`), `--shard K/N` and `rftune merge` against emulated fleets.

use super::{Run, TempDir, sim, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Writes the fleet's inventory into `dir`.
fn inventory(fleet: &idrac_sim::Fleet, dir: &TempDir) -> PathBuf {
    let path = dir.0.join("fleet.toml");
    std::fs::write(&path, fleet.inventory_toml()).unwrap();
    path
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

/// Brings host 0 in sync with `profile` (the others keep the fixture's values).
async fn apply_first(fleet: &idrac_sim::Fleet, profile: &str) {
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["apply", "--bmc", url, "-p", profile, "--reboot", "force"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn jsonl_writes_each_host_as_it_finishes_then_a_summary() {
    // Host 2 never answers (until the 8 s request timeout): the two others must be on stdout
    // while rftune still waits for it (also when its login went first: a login holds the
    // others back for 2 s at most).
    let fleet = sim("r7625", 3, |c| c.faults = vec!["timeout@3".parse().unwrap()]).await;
    let dir = TempDir::new();
    let inv = inventory(&fleet, &dir);
    let run = Run::new(&[
        "diff",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        "performance",
        "-o",
        "jsonl",
        "--timeout",
        "8s",
        "--retry-for",
        "0s",
    ]);
    let mut cmd = run.cmd;
    let mut child = cmd.spawn().unwrap();
    drop(child.stdin.take());
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut read_line = async || {
        use tokio::io::AsyncBufReadExt;
        let mut line = String::new();
        out.read_line(&mut line).await.unwrap();
        line
    };
    let mut early = Vec::new();
    for _ in 0..2 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(6), read_line())
            .await
            .expect("a fast host's line arrives before the slow host times out");
        early.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    assert!(child.try_wait().unwrap().is_none(), "still waiting for host 2");
    let mut names: Vec<&str> = early.iter().map(|l| l["host"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, [fleet.hosts()[0].name.as_str(), fleet.hosts()[1].name.as_str()]);
    for l in &early {
        assert_eq!(l["schema"], "rftune.diff.host/v1");
        assert_eq!(l["profile"], "performance");
        assert_eq!(l["status"], "drift", "{l}");
        assert!(!l["changes"].as_array().unwrap().is_empty(), "{l}");
    }
    let rest = [read_line().await, read_line().await];
    assert_eq!(read_line().await, "", "nothing after the summary");
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(1), "one host failed");
    let slow: Value = serde_json::from_str(&rest[0]).unwrap();
    assert_eq!(slow["host"], fleet.hosts()[2].name.as_str());
    assert_eq!(slow["status"], "error");
    assert!(slow["error"].as_str().unwrap().contains("timed out"), "{slow}");
    let summary: Value = serde_json::from_str(&rest[1]).unwrap();
    assert_eq!(summary["schema"], "rftune.diff.summary/v1");
    assert_eq!(
        summary["summary"],
        serde_json::json!({"hosts": 3, "in_sync": 0, "unverified": 0, "drift": 2, "error": 1})
    );
}

/// Runs `rftune diff` over `inv` with `extra` arguments; returns (exit code, stdout).
async fn diff(inv: &Path, profile: &str, extra: &[&str]) -> (Option<i32>, String) {
    // No retries: the unreadable host fails at once.
    let mut args = vec![
        "diff",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        profile,
        "--retry-for",
        "0s",
    ];
    args.extend_from_slice(extra);
    let out = Run::new(&args).output().await;
    (out.status.code(), stdout(&out))
}

/// `rftune merge` of the files in `dir`; returns (exit code, stdout, stderr).
async fn merge(dir: &TempDir, files: &[&str], extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["merge"];
    args.extend_from_slice(files);
    args.extend_from_slice(extra);
    let out = Run::new(&args).current_dir(&dir.0).output().await;
    (out.status.code(), stdout(&out), stderr(&out))
}

#[tokio::test(flavor = "multi_thread")]
async fn three_shards_merge_into_the_result_of_one_process() {
    // 12 hosts: one in sync, one unreadable (its login answers garbage), the rest drifting.
    let fleet = sim("r7625", 12, |c| c.faults = vec!["malformed@6".parse().unwrap()]).await;
    apply_first(&fleet, "performance").await;
    let dir = TempDir::new();
    let inv = inventory(&fleet, &dir);
    let (code, whole) = diff(&inv, "performance", &["-o", "json"]).await;
    assert_eq!(code, Some(1));
    std::fs::write(dir.0.join("whole.json"), &whole).unwrap();
    // Shards 1 and 2 stream JSON lines, shard 3 writes a document: merge reads both.
    let mut counted = 0;
    for (k, format, file) in [
        (1, "jsonl", "s1.jsonl"),
        (2, "jsonl", "s2.jsonl"),
        (3, "json", "s3.json"),
    ] {
        let shard = format!("{k}/3");
        let (_, text) = diff(&inv, "performance", &["-o", format, "--shard", &shard]).await;
        counted += if format == "jsonl" {
            let lines = json_lines(&text);
            assert_eq!(lines.last().unwrap()["shard"], shard.as_str());
            lines.len() - 1
        } else {
            serde_json::from_str::<Value>(&text).unwrap()["hosts"]
                .as_array()
                .unwrap()
                .len()
        };
        std::fs::write(dir.0.join(file), text).unwrap();
    }
    assert_eq!(counted, 12, "every host in exactly one shard");
    let (code, merged, err) = merge(&dir, &["s1.jsonl", "s2.jsonl", "s3.json"], &["-o", "json"]).await;
    assert_eq!(code, Some(1), "the fleet's exit code: one host failed; {err}");
    let (code_one, one, _) = merge(&dir, &["whole.json"], &["-o", "json"]).await;
    assert_eq!(code_one, Some(1));
    let (mut merged, mut one): (Value, Value) = (
        serde_json::from_str(&merged).unwrap(),
        serde_json::from_str(&one).unwrap(),
    );
    assert_eq!(merged["merged_from"].as_array().unwrap().len(), 3);
    merged.as_object_mut().unwrap().remove("merged_from");
    one.as_object_mut().unwrap().remove("merged_from");
    assert_eq!(merged, one, "3 shards merged = one process");
    assert_eq!(
        merged["summary"],
        serde_json::json!({"hosts": 12, "in_sync": 1, "unverified": 0, "drift": 10, "error": 1})
    );
    let names: Vec<&str> = merged["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "hosts listed by name");
    // The table says the same for people.
    let (_, text, _) = merge(&dir, &["s1.jsonl", "s2.jsonl", "s3.json"], &[]).await;
    assert!(text.contains("12 hosts: 1 in sync, 10 drift, 1 error"), "{text}");
    assert!(
        text.contains(&format!("{}: error (redfish):", fleet.hosts()[5].name)),
        "with its kind: {text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn merge_refuses_what_does_not_belong_together() {
    let fleet = sim("r7625", 4, |_| {}).await;
    let dir = TempDir::new();
    let inv = inventory(&fleet, &dir);
    let write = |name: &str, text: &str| std::fs::write(dir.0.join(name), text).unwrap();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let (code, text) = diff(&inv, "performance", &["-o", "jsonl", "--shard", &shard]).await;
        assert_eq!(code, Some(2), "drift in every shard");
        write(&format!("perf{k}.jsonl"), &text);
    }
    let (_, text) = diff(&inv, "hpc", &["-o", "json", "--shard", "2/2"]).await;
    write("hpc2.json", &text);
    // A dry-run apply of the same profile: apply lines, and exit 2 (changes planned).
    let out = Run::new(&[
        "apply",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        "performance",
        "--dry-run",
        "-o",
        "jsonl",
        "--shard",
        "2/2",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let lines = json_lines(&stdout(&out));
    assert!(
        lines[..lines.len() - 1]
            .iter()
            .all(|l| l["schema"] == "rftune.apply.host/v1" && l["outcome"] == "planned")
    );
    assert_eq!(lines.last().unwrap()["schema"], "rftune.apply.summary/v1");
    write("apply2.jsonl", &stdout(&out));
    // A stream cut short: its summary line is missing.
    let perf2 = std::fs::read_to_string(dir.0.join("perf2.jsonl")).unwrap();
    let cut: Vec<&str> = perf2.lines().collect();
    write("cut2.jsonl", &(cut[..cut.len() - 1].join("\n") + "\n"));

    let (code, _, err) = merge(&dir, &["perf1.jsonl", "perf2.jsonl"], &["-o", "json"]).await;
    assert_eq!(code, Some(2), "the whole fleet drifts: {err}");
    for (files, expected) in [
        (
            &["perf1.jsonl", "hpc2.json"][..],
            "(profile performance) with hpc2.json (profile hpc)",
        ),
        (
            &["perf1.jsonl", "apply2.jsonl"][..],
            "perf1.jsonl (rftune diff) with apply2.jsonl (rftune apply)",
        ),
        (&["perf1.jsonl", "cut2.jsonl"][..], "cut2.jsonl: the stream ends after"),
        (&["perf1.jsonl"][..], "shard(s) 2/2 missing"),
        (&["perf1.jsonl", "perf1.jsonl"][..], "shard 1/2 appears twice"),
    ] {
        let (code, out, err) = merge(&dir, files, &[]).await;
        assert_eq!(code, Some(1), "{files:?}: {out}");
        assert!(out.is_empty(), "nothing printed for a refused merge: {out}");
        assert!(err.contains(expected), "{files:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn shard_arguments_are_checked() {
    let dir = TempDir::new();
    let inv = dir.0.join("fleet.toml");
    std::fs::write(&inv, "[[bmc]]\nurl = \"http://127.0.0.1:9\"\n").unwrap();
    for (shard, expected) in [
        ("0/4", "shards count from 1, so K must be 1 to 4"),
        ("5/4", "there are only 4 shard(s), so K must be 1 to 4"),
        ("1/0", "the number of shards N must be at least 1"),
        ("two", "is not K/N"),
    ] {
        let out = Run::new(&[
            "diff",
            "--inventory",
            inv.to_str().unwrap(),
            "-p",
            "hpc",
            "--shard",
            shard,
        ])
        .output()
        .await;
        assert_eq!(out.status.code(), Some(1), "{shard}");
        assert!(stderr(&out).contains(expected), "{shard}: {}", stderr(&out));
    }
    let out = Run::new(&["diff", "--bmc", "http://127.0.0.1:9", "-p", "hpc", "--shard", "1/2"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--inventory"), "{}", stderr(&out));
    // A shard with no host of this inventory is an empty result, not an error.
    let empty = (1..=8)
        .map(|k| format!("{k}/8"))
        .find(|s| {
            let shard: rftune_engine::fleet::Shard = s.parse().unwrap();
            !shard.contains("127.0.0.1:9")
        })
        .unwrap();
    let out = Run::new(&[
        "diff",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        "hpc",
        "--shard",
        &empty,
        "-o",
        "jsonl",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&stdout(&out));
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["summary"]["hosts"], 0);
    // jsonl is for the fleet commands that stream.
    let out = Run::new(&["profiles", "list", "-o", "jsonl"]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("only available for rftune diff, apply"),
        "{}",
        stderr(&out)
    );
}
