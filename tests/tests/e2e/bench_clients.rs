//! `rftune bench fs` from several client hosts: two OpenSSH servers this test starts, each on an
//! address of its own in 127.0.0.0/8 with its own port, host key and user key, stand in for two
//! client nodes that mount one file system (tmpfs here). The threads split round robin, fio's
//! servers are reached through the ssh connections and always stopped, clients whose fio
//! versions differ are refused, and a connection lost mid-sweep stops the run, saying where.

use super::bench_fs::tmpfs_target;
use super::{Run, TempDir, binary, stderr, stdout};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An sshd on `addr` (in 127.0.0.0/8) and a free port, with its own host key and an authorized
/// user key, killed on drop.
pub(crate) struct Sshd {
    child: tokio::process::Child,
    /// Its address.
    pub(crate) addr: String,
    /// Its port.
    pub(crate) port: u16,
    /// The private key it authorizes.
    pub(crate) key: PathBuf,
}

impl Sshd {
    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }
}

/// Starts an sshd in `dir` on `addr`, with `extra` lines appended to its configuration. Callers
/// check `rftune_tests::sshd_available` first.
pub(crate) async fn sshd(dir: &Path, addr: &str, extra: &str) -> Sshd {
    std::fs::create_dir_all(dir).unwrap();
    let keygen = |file: &str| {
        let status = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join(file))
            .status()
            .unwrap();
        assert!(status.success(), "ssh-keygen {file}");
    };
    keygen("host_key");
    keygen("user_key");
    std::fs::copy(dir.join("user_key.pub"), dir.join("authorized_keys")).unwrap();
    // sshd's privilege separation needs this directory (root-owned); it exists when sshd runs as a service.
    let _ = std::fs::create_dir_all("/run/sshd");
    let port = std::net::TcpListener::bind((addr, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let d = dir.display();
    std::fs::write(
        dir.join("sshd_config"),
        format!(
            "Port {port}\nListenAddress {addr}\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nStrictModes no\nUsePAM no\n\
             PermitRootLogin yes\n{extra}"
        ),
    )
    .unwrap();
    let child = tokio::process::Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect((addr, port)).await.is_err() {
        assert!(Instant::now() < deadline, "sshd on {addr} did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Sshd {
        child,
        addr: addr.to_owned(),
        port,
        key: dir.join("user_key"),
    }
}

/// An ssh client configuration in `dir` naming each server by its alias.
pub(crate) fn ssh_config(dir: &Path, hosts: &[(&str, &Sshd)]) -> PathBuf {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "root".into());
    let mut text = String::new();
    for (alias, s) in hosts {
        text.push_str(&format!(
            "Host {alias}\n  HostName {}\n  Port {}\n  User {user}\n  IdentityFile {}\n  IdentitiesOnly yes\n\
             StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n",
            s.addr,
            s.port,
            s.key.display()
        ));
    }
    let path = dir.join("ssh_config");
    std::fs::write(&path, text).unwrap();
    path
}

/// One test of this file at a time: each looks at every server directory on the machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Whether ssh, sshd and fio are here (each missing one says so, or fails under
/// `RFTUNE_REQUIRE_TOOLS=1`).
fn tools() -> bool {
    rftune_tests::fio_available()
        && rftune_tests::sshd_available()
        && rftune_tests::tool_available(
            "ssh",
            rftune_tests::on_path("ssh"),
            "apt-get install openssh-client; .ci/run installs it",
        )
}

/// Two client hosts over ssh on tmpfs, one test at a time.
struct Clients {
    _one: tokio::sync::MutexGuard<'static, ()>,
    target: tempfile::TempDir,
    work: TempDir,
    a: Sshd,
    b: Sshd,
    config: PathBuf,
}

/// `client-a` on 127.0.0.2 and `client-b` on 127.0.0.3 (its sshd configured with `b_extra`
/// too); `None` when a tool is missing.
async fn two_clients(b_extra: &str) -> Option<Clients> {
    if !tools() {
        return None;
    }
    let one = ONE_AT_A_TIME.lock().await;
    let target = tmpfs_target()?;
    let work = TempDir::new();
    let a = sshd(&work.0.join("a"), "127.0.0.2", "").await;
    let b = sshd(&work.0.join("b"), "127.0.0.3", b_extra).await;
    let config = ssh_config(&work.0, &[("client-a", &a), ("client-b", &b)]);
    Some(Clients {
        _one: one,
        target,
        work,
        a,
        b,
        config,
    })
}

/// The arguments of a tiny two-client run.
fn args(target: &Path, out: &Path, config: &Path, threads: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "bench",
        "fs",
        "--target",
        target.to_str().unwrap(),
        "--fs-type",
        "tmpfs",
        "--client",
        "client-a",
        "--client",
        "client-b",
        "--ssh-config",
        config.to_str().unwrap(),
        "--threads",
        threads,
        "--data-size",
        "6M",
        "--record-size",
        "1M",
        "--oversubscribe",
        "--out",
        out.to_str().unwrap(),
    ]
    .map(str::to_owned)
    .to_vec();
    a.extend(extra.iter().map(|s| (*s).to_owned()));
    a
}

#[tokio::test(flavor = "multi_thread")]
async fn two_clients_over_ssh_split_the_threads_round_robin_and_fio_gives_one_aggregate() {
    let Some(clients) = two_clients("").await else {
        return;
    };
    let (target, work, config) = (&clients.target, &clients.work, &clients.config);
    let before = rftune_tests::fio_server_dirs();
    let out = work.0.join("out");
    let a_args = args(target.path(), &out, config, "1,2,3", &["--tests", "n-to-1"]);
    let run = Run::new(&a_args.iter().map(String::as_str).collect::<Vec<_>>())
        .output()
        .await;
    assert_eq!(run.status.code(), Some(0), "{}{}", stdout(&run), stderr(&run));
    let err = stderr(&run);
    assert!(
        err.contains("starting fio's server on 2 clients: ssh client-a, ssh client-b")
            && err.contains("n-to-1 write at 3 threads (2+1 on 2 clients), run 1/1"),
        "{err}"
    );
    let text = stdout(&run);
    assert!(
        text.contains("threads per client, round robin: 1 = 1+0, 2 = 1+1, 3 = 2+1"),
        "{text}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("bench.json")).unwrap()).unwrap();
    let f = &doc["filesystem"];
    let names: Vec<&str> = f["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ssh client-a", "ssh client-b"]);
    for c in f["curves"].as_array().unwrap() {
        let points = c["points"].as_array().unwrap();
        let split: Vec<serde_json::Value> = points.iter().map(|p| p["threads_per_client"].clone()).collect();
        assert_eq!(
            split,
            [
                serde_json::json!([1, 0]),
                serde_json::json!([1, 1]),
                serde_json::json!([2, 1])
            ]
        );
        let three = &points[2]["runs"][0];
        // Each client's own group: client-a's two threads wrote 2 MiB each, client-b's one.
        let shares: Vec<(&str, u64, u64)> = three["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["client"].as_str().unwrap(),
                    s["threads"].as_u64().unwrap(),
                    s["bytes"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            shares,
            [("ssh client-a", 2, 4 << 20), ("ssh client-b", 1, 2 << 20)],
            "{c}"
        );
        // The point's figure is fio's "All clients" group, in GB/s.
        let fio = std::fs::read_to_string(out.join(three["fio_output"].as_str().unwrap())).unwrap();
        let fio: serde_json::Value = serde_json::from_str(&fio[fio.find("\n{").unwrap() + 1..]).unwrap();
        let all = fio["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["jobname"] == "All clients")
            .unwrap();
        let dir = c["op"].as_str().unwrap();
        let bw = all[dir]["bw_bytes"].as_f64().unwrap();
        // Every thread's 2 MiB segment of the shared file, from both clients, in fio's whole.
        assert_eq!(three["bytes"].as_u64(), Some(6 << 20), "{three}");
        assert!((three["value"].as_f64().unwrap() - bw / 1e9).abs() < 1e-12, "{three}");
    }
    assert!(
        std::fs::read_dir(target.path()).unwrap().next().is_none(),
        "the target is as found"
    );
    assert_eq!(
        rftune_tests::fio_server_dirs(),
        before,
        "both fio servers were stopped and their directories removed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_whose_fio_versions_differ_are_refused_before_anything_is_written() {
    // client-b's sessions find another fio first on their PATH.
    let fake = tempfile::tempdir().unwrap();
    let fio = fake.path().join("fio");
    std::fs::write(
        &fio,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo fio-3.99; exit 0; }\nexec /usr/bin/fio \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&fio, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("SetEnv PATH={}:/usr/local/bin:/usr/bin:/bin\n", fake.path().display());
    let Some(clients) = two_clients(&path).await else {
        return;
    };
    let (target, work, config) = (&clients.target, &clients.work, &clients.config);
    let out = work.0.join("out");
    let a_args = args(target.path(), &out, config, "1,2", &[]);
    let run = Run::new(&a_args.iter().map(String::as_str).collect::<Vec<_>>())
        .output()
        .await;
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let err = stderr(&run);
    assert!(
        err.contains("the clients run different fio versions") && err.contains("fio-3.99 on ssh client-b"),
        "{err}"
    );
    assert!(std::fs::read_dir(target.path()).unwrap().next().is_none());
}

/// Every process below `pid`, deepest last, read from /proc.
fn descendants(pid: u32) -> Vec<u32> {
    let parent_of = |p: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        stat[stat.rfind(')')? + 2..].split_whitespace().nth(1)?.parse().ok()
    };
    let all: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for c in all.iter().copied().filter(|c| parent_of(*c) == Some(p)) {
            out.push(c);
            frontier.push(c);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_lost_mid_sweep_stops_the_run_says_where_and_leaves_nothing() {
    let Some(Clients {
        target,
        work,
        a,
        mut b,
        config,
        _one,
    }) = two_clients("").await
    else {
        return;
    };
    let before = rftune_tests::fio_server_dirs();
    let out = work.0.join("out");
    // Random reads bounded by time: each step lasts about 20 s unless the run stops it.
    let run_args = args(
        target.path(),
        &out,
        &config,
        "2",
        &["--tests", "random", "--random-io", "64G", "--random-runtime", "20s"],
    );
    let state = TempDir::new();
    let mut child = tokio::process::Command::new(binary())
        .args(&run_args)
        .env("RFTUNE_STATE_DIR", &state.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Wait until the random read runs on both clients.
    let job = out.join("fio/random-read-t2-r1.c1.fio");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !job.exists() {
        assert!(Instant::now() < deadline, "the random read never started");
        assert!(child.try_wait().unwrap().is_none(), "rftune ended early");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // client-b goes away: its sshd and every session it serves.
    let mut gone = descendants(b.pid());
    gone.push(b.pid());
    let _ = b.child.start_kill();
    for pid in gone {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    let started = Instant::now();
    let output = tokio::time::timeout(Duration::from_secs(40), child.wait_with_output())
        .await
        .expect("rftune did not stop after the connection was lost")
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "stopped at once, not after the other client's 20 s: {:?}",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("lost the connection to ssh client-b")
            && err.contains("during random read at 2 threads (1+1 on 2 clients), run 1/1"),
        "{err}"
    );
    assert!(err.contains("everything this run created was removed"), "{err}");
    assert!(
        std::fs::read_dir(target.path()).unwrap().next().is_none(),
        "cleaned up through client-a"
    );
    // client-a's server stopped once its connection's input closed; client-b vanished with its
    // server's directory still there (on a real client, its own /tmp), which the test removes.
    let deadline = Instant::now() + Duration::from_secs(10);
    let left = loop {
        let left: Vec<PathBuf> = rftune_tests::fio_server_dirs().difference(&before).cloned().collect();
        if left.iter().all(|d| d.to_string_lossy().ends_with("-1")) || Instant::now() > deadline {
            break left;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for d in &left {
        let _ = std::fs::remove_dir_all(d);
    }
    assert!(
        left.iter().all(|d| d.to_string_lossy().ends_with("-1")),
        "client-a's server was left running: {left:?}"
    );
    drop(a);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_experiment_applies_each_profile_to_both_storage_servers_then_runs_the_suite_from_the_clients() {
    let Some(clients) = two_clients("").await else {
        return;
    };
    let (target, work, config) = (&clients.target, &clients.work, &clients.config);
    let fleet = super::sim("r7625", 2, |_| {}).await;
    let mut text = format!(
        "profiles = [\"performance\", \"low-latency\"]\nrepeats = 1\nreboot = \"force\"\n\n\
         [timeouts]\ngraceful = \"5s\"\njob = \"20s\"\nboot = \"20s\"\nos = \"10s\"\nbench = \"120s\"\n\n\
         [benchmarks.filesystem]\ntarget = \"{}\"\nfs_type = \"tmpfs\"\ntests = \"n-to-1\"\nthreads = [1, 2]\n\
         oversubscribe = true\ndata_size = \"4M\"\nrecord_size = \"1M\"\n",
        target.path().display()
    );
    for alias in ["client-a", "client-b"] {
        text.push_str(&format!(
            "[[benchmarks.filesystem.clients]]\ntarget = \"{alias}\"\nconfig = \"{}\"\n",
            config.display()
        ));
    }
    for (i, h) in fleet.hosts().iter().enumerate() {
        text.push_str(&format!(
            "\n[[hosts]]\nname = \"nvme-0{}\"\nbmc = \"{}\"\nos = {{ transport = \"local\" }}\n",
            i + 1,
            h.url
        ));
    }
    let file = work.0.join("pixstor.toml");
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&work.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let results = work.0.join("pixstor-results");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("state.json")).unwrap()).unwrap();
    for step in 0..2 {
        let one = &state["hosts"]["nvme-01"]["steps"][step];
        let two = &state["hosts"]["nvme-02"]["steps"][step];
        assert_eq!(
            (one["outcome"].as_str(), two["outcome"].as_str()),
            (Some("done"), Some("done"))
        );
        assert_eq!(
            one["profile"], two["profile"],
            "both servers under one profile at every step"
        );
        assert_eq!(one["results"], two["results"], "one suite measured them together");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(one["results"][0].as_str().unwrap()).unwrap()).unwrap();
        assert_eq!(doc["kind"], "filesystem");
        assert_eq!(doc["label"], one["profile"]);
        let point = &doc["filesystem"]["curves"][0]["points"][1];
        assert_eq!(point["threads_per_client"], serde_json::json!([1, 1]));
        let power: Vec<&str> = point["runs"][0]["power"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["host"].as_str().unwrap())
            .collect();
        assert_eq!(power, ["nvme-01", "nvme-02"], "both servers' power at every point");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("experiment.json")).unwrap()).unwrap();
    assert_eq!(report["hosts"], serde_json::json!(["nvme-01 + nvme-02"]));
    let tests: Vec<&str> = report["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["metric"] == "bandwidth")
        .map(|c| c["test"].as_str().unwrap())
        .collect();
    assert_eq!(
        tests,
        [
            "n-to-1 read at 1 thread",
            "n-to-1 read at 2 threads",
            "n-to-1 write at 1 thread",
            "n-to-1 write at 2 threads"
        ],
        "curve against curve: every point of each compared"
    );
    let page = std::fs::read_to_string(results.join("report.html")).unwrap();
    let titles: Vec<&str> = rftune_tests::markup::charts(&page)
        .into_iter()
        .map(rftune_tests::markup::chart_title)
        .collect();
    assert_eq!(
        titles,
        [
            "nvme-01 + nvme-02: every change against the baseline",
            "filesystem n-to-1 read: bandwidth against threads, by profile",
            "filesystem n-to-1 write: bandwidth against threads, by profile",
        ],
        "the summary, then a curve per operation with a line per profile"
    );
    assert!(std::fs::read_dir(target.path()).unwrap().next().is_none());
}
