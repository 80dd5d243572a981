//! `rftune bench fs` through the binary on tmpfs (`/dev/shm`): a tiny sweep with two emulated
//! BMCs' power, every refusal before anything is written, Ctrl-C in the middle of a step, a
//! killed run finished by `--cleanup`, and `bench compare` of file-system documents (curve
//! against curve, `--fail-on worse`).

use super::bench::compare_json;
use super::{Run, TempDir, binary, sim, stderr, stdout};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An empty directory on tmpfs, removed on drop; `None` where `/dev/shm` is not a tmpfs (the
/// test is then skipped, saying so, or fails with `RFTUNE_REQUIRE_TOOLS=1`).
pub(crate) fn tmpfs_target() -> Option<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("rftune-e2e-fs-")
        .tempdir_in("/dev/shm")
        .ok();
    let on_tmpfs = dir.as_ref().is_some_and(|d| {
        host_bench::filesystem::mount::observe_local(d.path())
            .ok()
            .and_then(|o| host_bench::filesystem::mount::identify(&o))
            .is_some_and(|fs| fs.fs_type == "tmpfs")
    });
    rftune_tests::tool_available("a tmpfs at /dev/shm", on_tmpfs, "mount -t tmpfs tmpfs /dev/shm").then_some(dir)?
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The arguments of a tiny run on `target` writing into `out`, with `changes`: a flag and its
/// new value (a flag not there is added; an empty value removes the flag and its value).
fn tiny(target: &str, out: &str, changes: &[(&str, &str)]) -> Vec<String> {
    let mut args: Vec<String> = [
        "bench",
        "fs",
        "--target",
        target,
        "--fs-type",
        "tmpfs",
        "--threads",
        "1,2",
        "--data-size",
        "8M",
        "--record-size",
        "1M",
        "--md-files",
        "2048",
        "--md-file-sizes",
        "0",
        "--out",
        out,
        "--oversubscribe",
    ]
    .map(str::to_owned)
    .to_vec();
    for (flag, value) in changes {
        match args.iter().position(|a| a == flag) {
            Some(i) if value.is_empty() => {
                let n = if args.get(i + 1).is_some_and(|v| !v.starts_with("--")) {
                    2
                } else {
                    1
                };
                args.drain(i..i + n);
            }
            Some(i) => args[i + 1] = (*value).to_owned(),
            None => args.extend([(*flag).to_owned(), (*value).to_owned()]),
        }
    }
    args
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sweep_with_two_bmcs_reports_every_point_with_its_power_and_leaves_the_target_empty() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_target() else { return };
    let work = TempDir::new();
    let fleet = sim("r7625", 2, |_| {}).await;
    let (bmc_a, bmc_b) = (fleet.hosts()[0].url.clone(), fleet.hosts()[1].url.clone());
    let (t, out) = (target.path().to_str().unwrap(), work.0.join("out"));
    let mut args = tiny(
        t,
        out.to_str().unwrap(),
        &[
            ("--tests", "n-to-n,metadata"),
            ("--repeat", "2"),
            ("--bmc", &bmc_a),
            ("--idle", "0s"),
            ("--power-interval", "200ms"),
            ("--label", "baseline"),
        ],
    );
    args.extend(["--bmc".to_owned(), bmc_b.clone()]);
    let run = Run::new(&strs(&args)).output().await;
    assert!(run.status.success(), "{}", stderr(&run));
    // Off a terminal, a line per fio run: (2 + 4 operations) × 2 thread counts × 2 repeats.
    let steps: Vec<String> = stderr(&run)
        .lines()
        .filter(|l| l.starts_with("rftune: [") && l.contains(" run "))
        .map(str::to_owned)
        .collect();
    assert_eq!(steps.len(), 24, "{}", stderr(&run));
    assert_eq!(steps[0], "rftune: [1/24] n-to-n write at 1 thread, run 1/2");
    assert_eq!(steps[23], "rftune: [24/24] metadata remove empty at 2 threads, run 2/2");
    let text = stdout(&run);
    for want in [
        "file system: tmpfs",
        "N-to-N sequential (GB/s)",
        "Metadata (op/s)",
        "create (empty)",
        "PEAK (threads)",
        "BIOS profile: baseline; SysProfile",
        "* cache-affected",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
    assert_eq!(
        entries(target.path()),
        Vec::<String>::new(),
        "nothing of the run is left"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bench.json")).unwrap()).unwrap();
    assert_eq!(
        (doc["schema"].as_str(), doc["kind"].as_str()),
        (Some("rftune.bench/v1"), Some("filesystem"))
    );
    let f = &doc["filesystem"];
    assert_eq!(f["file_system"]["fs_type"], "tmpfs");
    assert_eq!(f["bmcs"].as_array().unwrap().len(), 2);
    assert_eq!(f["bmcs"][0]["model"], "PowerEdge R7625");
    let curves = f["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 6);
    for c in curves {
        assert!(c["peak"]["threads"].as_u64().is_some(), "{c}");
        for p in c["points"].as_array().unwrap() {
            assert_eq!(p["runs"].as_array().unwrap().len(), 2);
            assert!(
                p["interval"]["low"].as_f64().unwrap() <= p["value"].as_f64().unwrap(),
                "{p}"
            );
            assert_eq!(p["cache_affected"], true);
            // Both servers' power, summed, and work per watt from it.
            let runs = p["runs"].as_array().unwrap();
            assert!(runs.iter().all(|r| r["power"].as_array().unwrap().len() == 2), "{p}");
            let (value, watts) = (p["value"].as_f64().unwrap(), p["power_w"].as_f64().unwrap());
            let per_watt = p["per_watt"].as_f64().unwrap();
            let expected = if c["metric"] == "bandwidth" {
                value * 1000.0 / watts
            } else {
                value / watts
            };
            assert!((per_watt - expected).abs() <= 1e-9 * expected, "{p}");
        }
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("N-to-N sequential: bandwidth against threads") && html.contains("— log scale"));
    assert!(html.contains("Mount options") && html.contains("SysProfile"));
    let csv = std::fs::read_to_string(out.join("bench.csv")).unwrap();
    assert!(
        csv.contains(",filesystem,n-to-n write at 2 threads,bandwidth,"),
        "{csv}"
    );

    // The run against itself, curve against curve: every point a row of two samples a side.
    let json = out.join("bench.json");
    let c = compare_json(&json, &json, &["--fail-on", "worse"]).await;
    let rows = c["changes"].as_array().unwrap();
    let row = rows
        .iter()
        .find(|r| r["test"] == "metadata stat empty at 2 threads" && r["metric"] == "ops")
        .unwrap();
    assert_eq!((row["n_a"].as_u64(), row["n_b"].as_u64()), (Some(2), Some(2)), "{row}");
    assert_eq!(row["verdict"], "no_clear_change");
    assert_eq!(
        rows.iter().position(|r| r["test"] == "n-to-n write at 1 thread"),
        Some(0),
        "rows in the document's order"
    );
    assert_eq!(c["curves"].as_array().unwrap().len(), 6);
    assert_eq!(c["curves"][0]["curve"], "n-to-n write");
    assert_eq!(c["curves"][0]["a"], c["curves"][0]["b"]);
    let table = Run::new(&["bench", "compare", json.to_str().unwrap(), json.to_str().unwrap()])
        .output()
        .await;
    assert!(
        stdout(&table).contains("PEAK A (threads)") && stdout(&table).contains("n-to-n write (GB/s)"),
        "{}",
        stdout(&table)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_servers_can_come_from_an_inventory_chosen_by_tag() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_target() else { return };
    let work = TempDir::new();
    let fleet = sim("r7625", 2, |_| {}).await;
    let inventory = work.0.join("servers.toml");
    std::fs::write(
        &inventory,
        format!(
            "[[bmc]]\nname = \"oss-1\"\nurl = \"{}\"\ntags = [\"storage\"]\n\n\
             [[bmc]]\nname = \"login-1\"\nurl = \"{}\"\ntags = [\"login\"]\n",
            fleet.hosts()[0].url,
            fleet.hosts()[1].url
        ),
    )
    .unwrap();
    let out = work.0.join("out");
    let args = tiny(
        target.path().to_str().unwrap(),
        out.to_str().unwrap(),
        &[
            ("--tests", "n-to-1"),
            ("--threads", "1"),
            ("--inventory", inventory.to_str().unwrap()),
            ("--tag", "storage"),
            ("--idle", "0s"),
            ("-o", "json"),
        ],
    );
    let run = Run::new(&strs(&args)).output().await;
    assert!(run.status.success(), "{}", stderr(&run));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&run)).unwrap();
    let bmcs = doc["filesystem"]["bmcs"].as_array().unwrap();
    assert_eq!(bmcs.len(), 1, "only the storage-tagged server");
    let point = &doc["filesystem"]["curves"][0]["points"][0];
    assert_eq!(point["runs"][0]["power"][0]["host"], bmcs[0]["host"]);
    assert!(point["power_w"].as_f64().unwrap() > 0.0, "{point}");
}

/// A run that is refused: exit 1 with `message` in its error, and nothing written.
async fn refused(args: &[&str], message: &str, out: &Path) {
    let run = Run::new(args).output().await;
    assert_eq!(run.status.code(), Some(1), "{args:?}: {}", stderr(&run));
    assert!(
        stderr(&run).contains(message),
        "{args:?}: wanted {message:?} in {}",
        stderr(&run)
    );
    assert!(!out.exists(), "{args:?}: the output directory was created");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_refusal_comes_before_anything_is_written() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_target() else { return };
    let work = TempDir::new();
    let out = work.0.join("out");
    let (t, o) = (target.path().to_str().unwrap(), out.to_str().unwrap());
    let check =
        async |changes: &[(&str, &str)], message: &str| refused(&strs(&tiny(t, o, changes)), message, &out).await;
    // Not the file system named, and without a name, not a mount point of its own.
    check(&[("--fs-type", "ext4")], "is on tmpfs").await;
    check(&[("--fs-type", "ext4")], "not ext4").await;
    check(&[("--fs-type", "")], "the target is not a mount point").await;
    // Too little free space for the largest step.
    check(&[("--data-size", "1P")], "the largest step needs").await;
    // More threads than the cores, unless asked.
    let info = host_bench::host::HostInfo::collect();
    let cores = if info.cores > 0 { info.cores } else { info.logical_cpus };
    let beyond = (cores + 1).to_string();
    check(
        &[("--threads", &beyond), ("--oversubscribe", "")],
        "--oversubscribe to run it anyway",
    )
    .await;
    // Metadata threads without a directory each.
    check(
        &[("--md-files", "1024"), ("--tests", "metadata")],
        "each thread needs a directory",
    )
    .await;
    // A missing target, and a non-empty one (its file untouched).
    let gone = format!("{t}/absent");
    check(&[("--target", &gone)], "is not an existing directory").await;
    std::fs::write(target.path().join("data.txt"), b"keep me").unwrap();
    check(&[], "is not empty (1 entries: data.txt)").await;
    assert_eq!(std::fs::read(target.path().join("data.txt")).unwrap(), b"keep me");
    assert_eq!(entries(target.path()), ["data.txt"]);
}

/// Starts a run whose random-read step lasts a minute, in a process group of its own, and
/// waits until that step's fio is running.
async fn long_run(target: &Path, out: &Path) -> tokio::process::Child {
    let state = TempDir::new();
    let mut cmd = tokio::process::Command::new(binary());
    cmd.args(tiny(
        target.to_str().unwrap(),
        out.to_str().unwrap(),
        &[
            ("--tests", "random"),
            ("--threads", "1"),
            ("--data-size", "16M"),
            ("--random-io", "64G"),
            ("--random-runtime", "60s"),
        ],
    ))
    .env("RFTUNE_STATE_DIR", &state.0)
    .process_group(0)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .kill_on_drop(true);
    let child = cmd.spawn().unwrap();
    let job = out.join("fio/random-read-t1-r1.fio");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !job.exists() {
        assert!(Instant::now() < deadline, "the random read never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(target.join("rftune-fs/random/c0.0").exists(), "{:?}", entries(target));
    child
}

fn signal(pid: u32, group: bool, name: &str) {
    let who = if group { format!("-{pid}") } else { pid.to_string() };
    let status = std::process::Command::new("kill")
        .args([name, "--", &who])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_fio_removes_what_the_run_created_and_exits_130() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_target() else { return };
    let work = TempDir::new();
    let child = long_run(target.path(), &work.0.join("out")).await;
    signal(child.id().unwrap(), false, "-INT");
    let started = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("rftune did not stop within 30 s of SIGINT")
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "fio was stopped, not run to its end"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("interrupted by SIGINT") && err.contains("everything this run created was removed"),
        "{err}"
    );
    assert_eq!(entries(target.path()), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn cleanup_removes_what_a_killed_run_left_and_keeps_what_it_did_not_create() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_target() else { return };
    let work = TempDir::new();
    let mut child = long_run(target.path(), &work.0.join("out")).await;
    // SIGKILL to rftune and its fio alike: nothing gets to clean up.
    signal(child.id().unwrap(), true, "-KILL");
    child.wait().await.unwrap();
    assert_eq!(entries(target.path()), ["rftune-fs", "rftune-fs-manifest.json"]);
    let t = target.path().to_str().unwrap();
    let stranger = target.path().join("rftune-fs/random/notes.txt");
    std::fs::write(&stranger, b"not rftune's").unwrap();
    // The leftovers make the target non-empty: a new run is refused and told about --cleanup.
    let again = Run::new(&strs(&tiny(t, work.0.join("again").to_str().unwrap(), &[])))
        .output()
        .await;
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("--cleanup` removes them"), "{}", stderr(&again));
    // --cleanup removes the run's files and keeps the stranger's, with its directories.
    let cleanup = Run::new(&["bench", "fs", "--target", t, "--cleanup", "-o", "json"])
        .output()
        .await;
    assert_eq!(cleanup.status.code(), Some(1), "{}", stderr(&cleanup));
    let done: serde_json::Value = serde_json::from_str(&stdout(&cleanup)).unwrap();
    assert_eq!(done["removed_files"], 1, "{done}");
    assert_eq!(done["left"][0], stranger.display().to_string());
    assert!(
        stderr(&cleanup).contains("kept what rftune did not create"),
        "{}",
        stderr(&cleanup)
    );
    assert_eq!(std::fs::read(&stranger).unwrap(), b"not rftune's");
    assert!(target.path().join("rftune-fs-manifest.json").exists());
    std::fs::remove_file(&stranger).unwrap();
    let cleanup = Run::new(&["bench", "fs", "--target", t, "--cleanup"]).output().await;
    assert!(cleanup.status.success(), "{}", stderr(&cleanup));
    assert!(
        stdout(&cleanup).contains("nothing of a run is left"),
        "{}",
        stdout(&cleanup)
    );
    assert_eq!(entries(target.path()), Vec::<String>::new());
}

/// A storage document with one test whose repeats gave `iops`.
fn storage_doc(dir: &Path, name: &str, iops: &[f64]) -> PathBuf {
    let runs: Vec<serde_json::Value> = iops
        .iter()
        .map(|v| serde_json::json!({"metrics": {"iops": v, "bw_bytes": v * 4096.0}}))
        .collect();
    let doc = serde_json::json!({
        "schema": "rftune.bench/v1", "kind": "storage", "label": name, "valid": true,
        "storage": {"tests": [{"name": "randread", "iops": iops[1], "bw_bytes": iops[1] * 4096.0, "runs": runs}]}
    });
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_fails_on_worse_for_ci_and_judges_only_the_metrics_asked_for() {
    let work = TempDir::new();
    let base = storage_doc(&work.0, "base", &[1000.0, 1010.0, 990.0, 1005.0]);
    let slower = storage_doc(&work.0, "slower", &[800.0, 810.0, 790.0, 805.0]);
    let (a, b) = (base.to_str().unwrap(), slower.to_str().unwrap());
    let plain = Run::new(&["bench", "compare", a, b]).output().await;
    assert_eq!(
        plain.status.code(),
        Some(0),
        "without --fail-on a comparison only reports"
    );
    assert!(stdout(&plain).contains("worse"), "{}", stdout(&plain));
    let ci = Run::new(&["bench", "compare", a, b, "--fail-on", "worse"])
        .output()
        .await;
    assert_eq!(ci.status.code(), Some(2), "{}", stderr(&ci));
    assert!(
        stderr(&ci).contains("got worse (--fail-on worse): randread iops"),
        "{}",
        stderr(&ci)
    );
    // Judged on bandwidth alone, still worse; the other way round, better: exit 0.
    let only = Run::new(&[
        "bench",
        "compare",
        a,
        b,
        "--metric",
        "bandwidth",
        "--fail-on",
        "worse",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert_eq!(only.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&only)).unwrap();
    let metrics: Vec<&str> = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert_eq!(metrics, ["bandwidth"]);
    let better = Run::new(&["bench", "compare", b, a, "--fail-on", "worse"])
        .output()
        .await;
    assert_eq!(better.status.code(), Some(0), "{}", stderr(&better));
    assert!(stdout(&better).contains("better"), "{}", stdout(&better));
}
