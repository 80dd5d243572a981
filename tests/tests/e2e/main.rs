//! End-to-end tests: the real `rftune` binary against mock BMCs serving the fixtures.
#![allow(clippy::unwrap_used)]

mod ansible;
mod apply;
mod bench;
mod bench_clients;
mod bench_fs;
mod bios;
mod boot;
mod capture;
mod cli;
mod contrib;
mod diff;
mod examples;
mod experiment;
mod exporter;
mod fixture_dir;
mod fleet_failures;
mod fleet_verbs;
mod gen17;
mod grouping;
mod hardening;
mod housekeeping;
mod hpe;
mod hpe_outcomes;
mod hpe_writes;
mod inventory;
mod pipes;
mod plan;
mod power;
mod probe;
mod profiles;
mod real_idrac;
mod scp;
mod sessions;
mod shard;
mod sim;
mod switch;
mod trust;
mod writers;

use rftune_tests::TempDir;
use std::path::PathBuf;
use std::process::Output;

/// The `rftune` binary cargo built for this test run.
fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rftune"))
}

/// A run of the binary with a hermetic environment: no inherited RFTUNE_*, colour or width
/// settings, a fresh state directory, and the mock's password in RFTUNE_PASSWORD.
struct Run {
    cmd: tokio::process::Command,
    stdin: Option<String>,
    _state: TempDir,
}

impl Run {
    fn new(args: &[&str]) -> Self {
        Self::command(tokio::process::Command::new(binary()), args)
    }

    /// Like [`Run::new`], under `ulimit -f` of `kib` KiB: should a size check ever regress, the
    /// run is killed (SIGXFSZ) when a file grows past the limit instead of filling the disk.
    fn with_file_size_limit(kib: u64, args: &[&str]) -> Self {
        let mut sh = tokio::process::Command::new("sh");
        sh.args(["-c", "ulimit -f \"$0\" && exec \"$@\""])
            .arg(kib.to_string())
            .arg(binary());
        Self::command(sh, args)
    }

    fn command(mut cmd: tokio::process::Command, args: &[&str]) -> Self {
        let state = TempDir::new();
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().into_owned();
            if k.starts_with("RFTUNE_") || k == "NO_COLOR" || k == "COLUMNS" || k == "RUST_LOG" {
                cmd.env_remove(&k);
            }
        }
        cmd.env("RFTUNE_PASSWORD", rftune_tests::PASSWORD)
            .env("RFTUNE_STATE_DIR", &state.0)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        Self {
            cmd,
            stdin: None,
            _state: state,
        }
    }

    /// Uses `dir` as the state directory (to share known_hosts between runs).
    fn state_dir(mut self, dir: &std::path::Path) -> Self {
        self.cmd.env("RFTUNE_STATE_DIR", dir);
        self
    }

    /// Runs in `dir` (for relative paths on the command line).
    fn current_dir(mut self, dir: &std::path::Path) -> Self {
        self.cmd.current_dir(dir);
        self
    }

    fn env(mut self, k: &str, v: &str) -> Self {
        self.cmd.env(k, v);
        self
    }

    fn env_remove(mut self, k: &str) -> Self {
        self.cmd.env_remove(k);
        self
    }

    fn stdin(mut self, s: &str) -> Self {
        self.stdin = Some(s.to_owned());
        self
    }

    async fn output(mut self) -> Output {
        use tokio::io::AsyncWriteExt;
        let mut child = self.cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        if let Some(s) = self.stdin.take() {
            stdin.write_all(s.as_bytes()).await.unwrap();
        }
        drop(stdin);
        child.wait_with_output().await.unwrap()
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An in-process emulator: plain HTTP, a short POST.
async fn sim(model: &str, hosts: usize, extra: impl FnOnce(&mut idrac_sim::SimConfig)) -> idrac_sim::Fleet {
    let mut config = idrac_sim::SimConfig {
        model: model.parse().unwrap(),
        hosts,
        tls: false,
        boot_time: std::time::Duration::from_millis(600),
        ..idrac_sim::SimConfig::default()
    };
    extra(&mut config);
    idrac_sim::Fleet::start(config).await.unwrap()
}

/// A Basic-auth client for setting up scenarios behind rftune's back.
fn client(url: &str) -> redfish_client::Client {
    redfish_client::Client::builder(url)
        .credentials(redfish_client::Credentials::new("root", "calvin"))
        .auth_method(redfish_client::AuthMethod::Basic)
        .build()
        .unwrap()
}

/// `/_sim/stats` of a host.
fn stats(fleet: &idrac_sim::Fleet, host: usize) -> serde_json::Value {
    fleet.hosts()[host].host.stats.to_json("")
}

/// One inventory file in `dir` holding every host of `fleets` (emulators of different models).
fn joint_inventory(dir: &std::path::Path, fleets: &[&idrac_sim::Fleet]) -> PathBuf {
    let path = dir.join("fleet.toml");
    let text: Vec<String> = fleets.iter().map(|f| f.inventory_toml()).collect();
    std::fs::write(&path, text.join("\n")).unwrap();
    path
}

/// The entry of a fleet document's `hosts` whose name starts with `prefix` (`r7625`).
fn host_entry<'a>(doc: &'a serde_json::Value, prefix: &str) -> &'a serde_json::Value {
    doc["hosts"]
        .as_array()
        .and_then(|hosts| {
            hosts
                .iter()
                .find(|h| h["host"].as_str().is_some_and(|n| n.starts_with(prefix)))
        })
        .unwrap_or(&serde_json::Value::Null)
}

/// Replaces the mock's random port in output, for snapshots.
fn redact(text: &str, url: &str) -> String {
    let hostport = url.trim_start_matches("http://");
    text.replace(url, "http://[BMC]").replace(hostport, "[BMC]")
}
