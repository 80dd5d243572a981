//! The file-system run end to end on tmpfs: a tiny sweep of every test with real fio (each fio
//! run takes about 0.4 s here, so one repeat and one metadata size) and two stand-in power
//! sources, the document it gives, the target left as found; and the cleanup that removes what
//! a killed run left and nothing else.

use super::run::FakePower;
use host_bench::exec::{Exec, Local};
use host_bench::filesystem::{self, Client, FsRun, FsSettings, MANIFEST, Method, ROOT};
use host_bench::run::{Common, NamedPower, NoProgress};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A fresh directory on tmpfs (`/dev/shm`), removed on drop; `None` where there is none (the
/// test is then skipped, saying so, or fails with `RFTUNE_REQUIRE_TOOLS=1`).
fn tmpfs_dir(tag: &str) -> Option<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix(&format!("host-bench-{tag}-"))
        .tempdir_in("/dev/shm")
        .ok();
    let on_tmpfs = dir.as_ref().is_some_and(|d| {
        filesystem::mount::observe_local(d.path())
            .ok()
            .and_then(|o| filesystem::mount::identify(&o))
            .is_some_and(|fs| fs.fs_type == "tmpfs")
    });
    rftune_tests::tool_available("a tmpfs at /dev/shm", on_tmpfs, "mount -t tmpfs tmpfs /dev/shm").then_some(dir)?
}

fn tiny(target: &Path, workdir: PathBuf) -> FsSettings {
    FsSettings {
        target: target.to_owned(),
        fs_type: Some("tmpfs".into()),
        threads: Some(vec![1, 2]),
        oversubscribe: true,
        method: Method::Quick,
        data_size: Some(8 << 20),
        record_size: Some(1 << 20),
        random_io: Some(256 << 10),
        random_runtime: Some(Duration::from_secs(2)),
        md_files: Some(2048),
        md_file_sizes: Some(vec![3072]),
        workdir,
        common: Common::default(),
        ..FsSettings::default()
    }
}

#[tokio::test]
async fn a_tiny_sweep_on_tmpfs_gives_every_curve_with_power_and_leaves_the_target_empty() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_dir("sweep") else {
        return;
    };
    let out = super::TempDir::new("fs-out");
    let local = Local::default();
    let run = FsRun::new(
        tiny(target.path(), out.0.join("fio")),
        vec![Client {
            exec: &local,
            server: None,
        }],
        &local,
    )
    .await
    .unwrap();
    let (a, b) = (FakePower { fail: false }, FakePower { fail: false });
    let power: Vec<NamedPower<'_>> = vec![("bmc-a".into(), &a), ("bmc-b".into(), &b)];
    let doc = filesystem::run(&run, &[], &power, &NoProgress).await.unwrap();
    assert_eq!(doc.kind, "filesystem");
    assert!(doc.valid, "{:?}", doc.problems);
    let f = doc.filesystem.as_ref().unwrap();
    assert_eq!(f.file_system.fs_type, "tmpfs");
    let names: Vec<String> = f.curves.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "n-to-n write",
            "n-to-n read",
            "n-to-1 write",
            "n-to-1 read",
            "random read",
            "random write",
            "metadata create 3 KiB",
            "metadata stat 3 KiB",
            "metadata read 3 KiB",
            "metadata remove 3 KiB",
        ]
    );
    for c in &f.curves {
        assert_eq!(
            c.points.iter().map(|p| p.threads).collect::<Vec<_>>(),
            [1, 2],
            "{}",
            c.name()
        );
        assert!(c.peak.is_some(), "{}", c.name());
        for p in &c.points {
            assert_eq!(p.runs.len(), 1);
            assert!(p.valid && p.value > 0.0, "{}: {p:?}", c.name());
            assert!(p.cache_affected, "an 8 MiB data set is under twice any RAM");
            assert!(p.interval.is_none(), "one repeat gives no interval");
            // Both BMCs read around every fio run: their averages add up.
            assert_eq!(p.power_w, Some(2.0 * 412.5));
            assert!(p.runs.iter().all(|r| r.power.len() == 2));
            assert!(out.0.join(&p.runs[0].fio_output).is_file(), "{}", p.runs[0].fio_output);
        }
    }
    // Metadata counts every file: 2,048 files at 1 thread, each thread a directory of its own at 2.
    let create = &f.curves[6];
    assert_eq!(create.points[0].runs[0].bytes, 2048 * 3072);
    assert_eq!(create.points[0].runs[0].ops, 2048);
    assert_eq!(create.points[1].runs[0].ops, 2048);
    // The sequential figure is fio's aggregate bandwidth, in GB/s.
    let write = &f.curves[0].points[1].runs[0];
    let fio_doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.0.join(&write.fio_output)).unwrap()).unwrap();
    let bw = fio_doc["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap();
    assert!((write.value - bw / 1e9).abs() < 1e-12, "{} vs {bw}", write.value);
    assert_eq!(write.bytes, 8 << 20, "two threads, 4 MiB each");
    // Nothing of the run remains in the target.
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
    let html = doc.html();
    assert_eq!(
        html.matches("class=\"chart\"").count(),
        8,
        "value and per-watt charts of four tests"
    );
    assert!(html.contains("— log scale") && html.contains("tmpfs"));
    assert_eq!(
        doc.run_figures()
            .iter()
            .filter(|x| x.test == "n-to-n write at 2 threads" && x.metric == "mbps_per_watt")
            .count(),
        1
    );
}

#[tokio::test]
async fn cleanup_removes_what_a_killed_run_left_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path();
    let root = target.join(ROOT);
    // What a run killed mid-step leaves: the manifest, the root, a metadata tree with files.
    let tree = root.join("metadata/t0/d0");
    std::fs::create_dir_all(&tree).unwrap();
    for f in ["f0", "f1"] {
        std::fs::write(tree.join(f), b"").unwrap();
    }
    std::fs::create_dir_all(root.join("n-to-1")).unwrap();
    std::fs::write(root.join("n-to-1/shared"), b"data").unwrap();
    // Someone else's files, one inside the tree and one beside it.
    std::fs::write(tree.join("notes.txt"), b"mine").unwrap();
    std::fs::write(target.join("keep.txt"), b"mine").unwrap();
    let local = Local::default();
    // No manifest: nothing says rftune created the root.
    let e = filesystem::cleanup(&local, target).await.unwrap_err();
    assert!(e.to_string().contains("nothing was removed"), "{e}");
    assert!(tree.join("f0").exists());
    local
        .create_new(
            &target.join(MANIFEST),
            &serde_json::json!({"schema": "rftune.bench-fs-manifest/v1", "root": ROOT, "created_at": "t",
                                 "created_by": "a test", "note": ""})
            .to_string(),
        )
        .await
        .unwrap();
    let done = filesystem::cleanup(&local, target).await.unwrap();
    assert_eq!((done.removed_files, done.complete), (3, false));
    assert_eq!(done.left, [tree.join("notes.txt").display().to_string()]);
    assert_eq!(std::fs::read(tree.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(std::fs::read(target.join("keep.txt")).unwrap(), b"mine");
    assert!(!root.join("n-to-1").exists(), "an emptied directory of the run goes");
    assert!(target.join(MANIFEST).exists(), "kept while the root is");
    // Once the stranger's file is gone, a second cleanup finishes.
    std::fs::remove_file(tree.join("notes.txt")).unwrap();
    let done = filesystem::cleanup(&local, target).await.unwrap();
    assert!(done.complete && done.left.is_empty());
    let left: Vec<_> = std::fs::read_dir(target)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["keep.txt"]);
    // A manifest of another kind is not trusted.
    std::fs::write(target.join(MANIFEST), "{\"schema\": \"something else\"}").unwrap();
    std::fs::create_dir(&root).unwrap();
    assert!(filesystem::cleanup(&local, target).await.is_err());
    assert!(root.exists());
}

#[tokio::test]
async fn two_clients_run_each_step_through_fios_servers_with_threads_round_robin_and_one_aggregate() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_dir("clients") else {
        return;
    };
    let out = super::TempDir::new("fs-clients");
    let before = rftune_tests::fio_server_dirs();
    // Two clients that are both this host, each with a server of its own on a private socket:
    // fio's client/server mode as over SSH, without the tunnel.
    let (a, b) = (Local::default(), Local::default());
    let local = host_bench::ssh::Transport::Local;
    let settings = FsSettings {
        tests: "n-to-n,n-to-1".into(),
        threads: Some(vec![1, 3]),
        ..tiny(target.path(), out.0.join("fio"))
    };
    let clients = served(&[&a, &b], &local);
    let run = FsRun::new(settings, clients, &a).await.unwrap();
    let doc = filesystem::run(&run, &[], &[], &NoProgress).await.unwrap();
    assert!(doc.valid, "{:?}", doc.problems);
    let f = doc.filesystem.as_ref().unwrap();
    assert_eq!(f.clients.len(), 2);
    for c in &f.curves {
        let split: Vec<Vec<u32>> = c.points.iter().map(|p| p.threads_per_client.clone()).collect();
        assert_eq!(
            split,
            [vec![1, 0], vec![2, 1]],
            "{}: thread i on client i mod 2",
            c.name()
        );
        // One client at 1 thread: its group is the figure. Two at 3: fio's "All clients".
        // Each client's own group, told apart by where fio reached it: client 0 ran two
        // threads of 2 MiB each (8 MiB over 3 threads, in whole 1 MiB records), client 1 one.
        let shares: Vec<(usize, u32, u64)> = c.points[1].runs[0]
            .clients
            .iter()
            .map(|r| (r.index, r.threads, r.bytes))
            .collect();
        assert_eq!(shares, [(0, 2, 4 << 20), (1, 1, 2 << 20)], "{}", c.name());
        for p in &c.points {
            let run = &p.runs[0];
            assert!(p.valid && run.value > 0.0, "{}: {p:?}", c.name());
            let fio: serde_json::Value = serde_json::from_str(&host_bench_json(&out.0.join(&run.fio_output))).unwrap();
            let stats = fio["client_stats"].as_array().unwrap();
            let all = stats.iter().find(|s| s["jobname"] == "All clients");
            let whole = all.unwrap_or(&stats[0]);
            let dir = if c.op == filesystem::Op::Write { "write" } else { "read" };
            let bw = whole[dir]["bw_bytes"].as_f64().unwrap();
            assert!(
                (run.value - bw / 1e9).abs() < 1e-12,
                "{}: {} vs fio's {bw}",
                c.name(),
                run.value
            );
            assert_eq!(all.is_some(), p.threads == 3, "{}", c.name());
        }
    }
    // The N-to-1 file got every thread's segment from both clients: 3 threads × 8 MiB / 3.
    let write = &f.curves.iter().find(|c| c.name() == "n-to-1 write").unwrap().points[1].runs[0];
    assert_eq!(write.bytes, 3 * ((8 << 20) / 3 / (1 << 20)) * (1 << 20));
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "the target is as found"
    );
    assert_eq!(
        rftune_tests::fio_server_dirs(),
        before,
        "every server stopped and its directory removed"
    );
}

/// fio's client/server output as written: the front end's lines, then the document.
fn host_bench_json(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let start = text.find("\n{").map_or(0, |i| i + 1);
    text[start..].to_owned()
}

/// Clients each running fio's server, started through `transport`.
fn served<'a>(execs: &[&'a dyn Exec], transport: &'a host_bench::ssh::Transport) -> Vec<Client<'a>> {
    execs
        .iter()
        .map(|exec| Client {
            exec: *exec,
            server: Some(transport),
        })
        .collect()
}

/// A client whose shell sees none of the files the first one writes: a stand-in for a machine
/// that mounts another file system at the same path.
struct Elsewhere(Local);

impl Exec for Elsewhere {
    fn describe(&self) -> String {
        "elsewhere".into()
    }

    fn run<'a>(
        &'a self,
        argv: &'a [String],
        timeout: Option<Duration>,
    ) -> host_bench::exec::BoxFuture<'a, host_bench::Result<host_bench::exec::Output>> {
        self.0.run(argv, timeout)
    }

    fn read<'a>(&'a self, _: &'a Path) -> host_bench::exec::BoxFuture<'a, host_bench::Result<Option<String>>> {
        Box::pin(std::future::ready(Ok(None)))
    }
}

#[tokio::test]
async fn a_client_that_does_not_see_the_marker_stops_the_run_before_any_fio_runs() {
    if !rftune_tests::fio_available() {
        return;
    }
    let Some(target) = tmpfs_dir("marker") else {
        return;
    };
    let out = super::TempDir::new("fs-marker");
    let before = rftune_tests::fio_server_dirs();
    let (a, b) = (Local::default(), Elsewhere(Local::default()));
    let local = host_bench::ssh::Transport::Local;
    let clients = served(&[&a, &b], &local);
    let run = FsRun::new(tiny(target.path(), out.0.join("fio")), clients, &a)
        .await
        .unwrap();
    let e = filesystem::run(&run, &[], &[], &NoProgress).await.unwrap_err();
    let text = format!(
        "{e}: {}",
        std::error::Error::source(&e)
            .map(ToString::to_string)
            .unwrap_or_default()
    );
    assert!(
        text.contains("elsewhere does not see the file this host wrote") && text.contains("one file system"),
        "{text}"
    );
    assert!(text.contains("everything this run created was removed"), "{text}");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
    assert!(!out.0.join("fio").exists(), "no fio ran");
    assert_eq!(rftune_tests::fio_server_dirs(), before);
}
