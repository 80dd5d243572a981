//! The experiment file (TOML): which hosts (BMC and how to reach the OS), which BIOS profiles
//! to compare (the first is the baseline), which benchmarks with which options, how many repeats
//! in which order, how to reboot, and where results go. A typo fails with its line and column.
//!
//! `examples/experiment.toml` at the root of the repository shows every field (and
//! `rftune experiment run --help` prints it), `examples/pixstor-experiment.toml` those of the
//! file-system suite run from client hosts against a storage node pair; tests load both.

use crate::error::{Context, Result, bad_input};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Largest experiment file accepted.
const MAX_EXPERIMENT_BYTES: u64 = 1 << 20;

/// A parsed and validated experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// A name for reports; defaults to the file's stem.
    #[serde(default)]
    pub name: Option<String>,
    /// The hosts, each run through its own sequence of steps.
    pub hosts: Vec<HostSpec>,
    /// Profile names or files; the first is the baseline.
    pub profiles: Vec<String>,
    /// The benchmarks run at every step.
    pub benchmarks: Benchmarks,
    /// How many times each profile is measured per host.
    #[serde(default = "one")]
    pub repeats: u32,
    /// The order of the steps.
    #[serde(default)]
    pub order: Order,
    /// The random number seed of the step order (and of the report's bootstrap).
    #[serde(default)]
    pub seed: Option<u64>,
    /// How hosts are rebooted to apply a profile.
    #[serde(default)]
    pub reboot: Reboot,
    /// How long to wait for things.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// The output directory (state, results, report).
    #[serde(default)]
    pub output: Option<PathBuf>,
    /// Commands run around each host's reboot, as `apply --before-reboot` and its kin run them.
    #[serde(default)]
    pub hooks: HookSpec,
}

/// `[hooks]`: commands run around each host's reboot (see [`rftune_engine::hooks`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// Run once the host holds its reboot slot, before the reboot (a failure stops the host).
    #[serde(default)]
    pub before_reboot: Option<String>,
    /// Run once the host is back and verified.
    #[serde(default)]
    pub after_verify: Option<String>,
    /// Run when a host whose before-reboot point was reached did not end verified.
    #[serde(default)]
    pub on_failure: Option<String>,
    /// The longest a hook may run.
    #[serde(default = "ten_minutes")]
    pub timeout: Given<Duration>,
}

impl Default for HookSpec {
    fn default() -> Self {
        Self {
            before_reboot: None,
            after_verify: None,
            on_failure: None,
            timeout: ten_minutes(),
        }
    }
}

impl HookSpec {
    /// The hooks, with their time limit parsed.
    pub fn hooks(&self) -> Result<rftune_engine::hooks::Hooks> {
        Ok(rftune_engine::hooks::Hooks {
            before_reboot: self.before_reboot.clone(),
            after_verify: self.after_verify.clone(),
            on_failure: self.on_failure.clone(),
            timeout: self.timeout.value().context("hooks.timeout")?,
        })
    }
}

fn one() -> u32 {
    1
}

/// One host of the experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Unique name, used in file names, the audit log and reports.
    pub name: String,
    /// The BMC's URL (`https://…`, or `http://` for an emulator).
    pub bmc: String,
    /// Pinned BMC certificate fingerprint (`sha256:…`).
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// A credentials file for the BMC (relative to the experiment file).
    #[serde(default)]
    pub credentials: Option<PathBuf>,
    /// The host's OS node name, given to hooks as `RFTUNE_NODE`.
    #[serde(default)]
    pub node: Option<String>,
    /// How to run commands on the host's OS.
    pub os: OsAccess,
}

/// How rftune reaches the host's operating system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "lowercase", deny_unknown_fields)]
pub enum OsAccess {
    /// rftune runs on the host itself.
    Local {
        /// The rftune program to run the benchmarks with (default: this executable).
        #[serde(default)]
        rftune: Option<String>,
    },
    /// The system `ssh` client with the user's own configuration and keys (never a password).
    Ssh {
        /// `user@host` or a `Host` alias of the ssh configuration.
        target: String,
        /// The ssh port.
        #[serde(default = "ssh_port")]
        port: u16,
        /// An ssh configuration file instead of `~/.ssh/config` (`ssh -F`; relative to the
        /// experiment file).
        #[serde(default)]
        config: Option<PathBuf>,
        /// The rftune program on the host (default `rftune`, found through `PATH`).
        #[serde(default)]
        rftune: Option<String>,
    },
}

impl HostSpec {
    /// The host's BMC as an inventory entry (what connecting and credentials take).
    pub fn entry(&self) -> rftune_engine::fleet::BmcEntry {
        rftune_engine::fleet::BmcEntry {
            name: self.name.clone(),
            url: self.bmc.clone(),
            fingerprint: self.fingerprint.clone(),
            credentials: self.credentials.clone(),
            tags: Vec::new(),
            node: self.node.clone(),
        }
    }
}

fn ssh_port() -> u16 {
    22
}

/// The order of the steps of one host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// A B A B …: drift over time (temperature, wear) spreads over all profiles.
    #[default]
    Interleaved,
    /// A A B B …: fewest reboots.
    Blocked,
    /// A seeded permutation of the interleaved steps, different per host.
    Random,
}

/// How a host is rebooted to apply a profile. There is no "none": benchmarking a profile that
/// was only staged would measure the wrong settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reboot {
    /// Ask the OS to shut down, force after the graceful timeout.
    #[default]
    Graceful,
    /// Restart at once.
    Force,
}

impl Reboot {
    /// The apply path's policy.
    pub fn policy(self) -> rftune_engine::control::RebootPolicy {
        match self {
            Self::Graceful => rftune_engine::control::RebootPolicy::Graceful,
            Self::Force => rftune_engine::control::RebootPolicy::Force,
        }
    }
}

/// A value as the experiment file writes it, parsed when the file is read: the text is kept
/// (it is written back to the state file and passed on to the host's rftune as given), and so
/// is the parse, whose error is one of the problems [`Spec::parse`] reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Given<T> {
    text: String,
    parsed: std::result::Result<T, String>,
}

/// What a [`Given`] value is parsed with.
pub trait Grammar: Sized {
    /// `text` as this value, or what is wrong with it.
    fn parse_given(text: &str) -> std::result::Result<Self, String>;
}

impl Grammar for Duration {
    fn parse_given(text: &str) -> std::result::Result<Self, String> {
        rftune_engine::duration::parse(text.trim())
    }
}

/// A size in bytes: `4G`, `512M`, `2TiB` (powers of 1024), or a number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl Grammar for Bytes {
    fn parse_given(text: &str) -> std::result::Result<Self, String> {
        host_bench::units::parse_size(text)
            .map(Bytes)
            .map_err(|e| e.to_string())
    }
}

impl<T: Grammar> Given<T> {
    /// `text`, parsed.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let parsed = T::parse_given(&text);
        Self { text, parsed }
    }

    /// The text as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What is wrong with the text, if anything.
    fn problem(&self) -> Option<&str> {
        self.parsed.as_ref().err().map(String::as_str)
    }
}

impl<T: Copy> Given<T> {
    /// The value. Every loader ([`Spec::parse`], [`Spec::load`], the state's) refuses a file
    /// whose values do not parse, so this is an error only for a spec built by hand.
    pub fn value(&self) -> Result<T> {
        self.parsed
            .clone()
            .map_err(|e| crate::error::Error::bad_input(format!("{:?}: {e}", self.text)))
    }
}

impl<T> Serialize for Given<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de, T: Grammar> Deserialize<'de> for Given<T> {
    /// Any string: a value that does not parse is reported with the file's other problems.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::new)
    }
}

/// Waits, as durations (`90s`, `10m`), parsed when the file is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timeouts {
    /// How long the OS gets to shut down before power is forced off.
    #[serde(default = "ten_minutes")]
    pub graceful: Given<Duration>,
    /// How long the BIOS job may take.
    #[serde(default = "thirty_minutes")]
    pub job: Given<Duration>,
    /// How long the host may take to come back after the job.
    #[serde(default = "thirty_minutes")]
    pub boot: Given<Duration>,
    /// How long the OS may take to answer over its transport once the BMC says it is up.
    #[serde(default = "ten_minutes")]
    pub os: Given<Duration>,
    /// How long one benchmark command may run.
    #[serde(default = "two_hours")]
    pub bench: Given<Duration>,
}

fn ten_minutes() -> Given<Duration> {
    Given::new("10m")
}

fn thirty_minutes() -> Given<Duration> {
    Given::new("30m")
}

fn two_hours() -> Given<Duration> {
    Given::new("2h")
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            graceful: ten_minutes(),
            job: thirty_minutes(),
            boot: thirty_minutes(),
            os: ten_minutes(),
            bench: two_hours(),
        }
    }
}

/// [`Timeouts`] as durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waits {
    /// OS shutdown before power is forced off.
    pub graceful: Duration,
    /// BIOS job.
    pub job: Duration,
    /// Host back after the job.
    pub boot: Duration,
    /// OS answering over its transport.
    pub os: Duration,
    /// One benchmark command.
    pub bench: Duration,
}

impl Timeouts {
    /// Each field's name and value.
    fn fields(&self) -> [(&'static str, &Given<Duration>); 5] {
        [
            ("graceful", &self.graceful),
            ("job", &self.job),
            ("boot", &self.boot),
            ("os", &self.os),
            ("bench", &self.bench),
        ]
    }

    /// The durations, parsed when the file was read.
    pub fn waits(&self) -> Result<Waits> {
        let d = |field: &str, given: &Given<Duration>| given.value().with_context(|| format!("timeouts.{field}"));
        Ok(Waits {
            graceful: d("graceful", &self.graceful)?,
            job: d("job", &self.job)?,
            boot: d("boot", &self.boot)?,
            os: d("os", &self.os)?,
            bench: d("bench", &self.bench)?,
        })
    }
}

/// The benchmarks run at every step; at least one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmarks {
    /// The fio suite (`rftune bench storage`).
    #[serde(default)]
    pub storage: Option<StorageBench>,
    /// STREAM (`rftune bench memory`).
    #[serde(default)]
    pub memory: Option<MemoryBench>,
    /// The file-system suite (`rftune bench fs`) from client hosts against a file system the
    /// experiment's hosts serve together: every host takes each step's profile, then the suite
    /// runs once with every host's power summed.
    #[serde(default)]
    pub filesystem: Option<FileSystemBench>,
}

/// Options of `rftune bench fs`, run from where rftune runs with fio's servers on the clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSystemBench {
    /// An existing, empty directory on the file system, the same path on every client.
    pub target: String,
    /// The file system's type as the kernel names it (`gpfs`, `lustre`, `nfs4`); without it the
    /// target must be a mount point of its own.
    #[serde(default)]
    pub fs_type: Option<String>,
    /// Comma-separated tests (`n-to-n`, `n-to-1`, `random`, `metadata`) or `all`.
    #[serde(default)]
    pub tests: Option<String>,
    /// The sweep: threads of all clients together (default 1, 2, 4 … up to their cores).
    #[serde(default)]
    pub threads: Option<Vec<u32>>,
    /// The quick mode's sizes (every point under twice the RAM marked cache-affected).
    #[serde(default)]
    pub quick: bool,
    /// Allow more threads on a client than it has cores.
    #[serde(default)]
    pub oversubscribe: bool,
    /// Data per step of the sequential and random tests.
    #[serde(default)]
    pub data_size: Option<Given<Bytes>>,
    /// The largest RAM of the servers (the default data size exceeds twice it).
    #[serde(default)]
    pub server_memory: Option<Given<Bytes>>,
    /// Transfer size of the sequential tests.
    #[serde(default)]
    pub record_size: Option<Given<Bytes>>,
    /// Random I/O per operation and step.
    #[serde(default)]
    pub random_io: Option<Given<Bytes>>,
    /// The longest a random operation runs.
    #[serde(default)]
    pub random_runtime: Option<Given<Duration>>,
    /// Metadata files per step.
    #[serde(default)]
    pub md_files: Option<u64>,
    /// The client hosts that run the threads, each reached over ssh.
    pub clients: Vec<ClientSpec>,
}

/// A client host of the file-system suite: how ssh reaches it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// `user@host` or a `Host` alias of the ssh configuration.
    pub target: String,
    /// The ssh port (default: the ssh configuration's).
    #[serde(default)]
    pub port: Option<u16>,
    /// An ssh configuration file (`ssh -F`; relative to the experiment file).
    #[serde(default)]
    pub config: Option<PathBuf>,
}

/// Options of `rftune bench storage`, passed through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageBench {
    /// File (safe default) or block device on the host.
    pub target: String,
    /// Bytes of the target: `4G`, `512M`, `2TiB` (powers of 1024), or a number of bytes.
    #[serde(default)]
    pub size: Option<Given<Bytes>>,
    /// Measured time per test.
    #[serde(default)]
    pub runtime: Option<Given<Duration>>,
    /// Ramp time per test.
    #[serde(default)]
    pub ramp: Option<Given<Duration>>,
    /// Comma-separated tests, or `all`.
    #[serde(default)]
    pub tests: Option<String>,
    /// fio jobs per test.
    #[serde(default)]
    pub numjobs: Option<u32>,
    /// `io_uring` or `libaio`; anything else is an error naming both.
    #[serde(default)]
    pub ioengine: Option<host_bench::fio::IoEngine>,
    /// Allow writing a raw device (the host's rftune still refuses a mounted or in-use one).
    #[serde(default)]
    pub destroy_data: bool,
    /// The device serial confirming `destroy_data`.
    #[serde(default)]
    pub confirm_serial: Option<String>,
}

/// Options of `rftune bench memory`, passed through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryBench {
    /// MiB per array (default: 4× the last-level cache).
    #[serde(default)]
    pub array_mib: Option<u64>,
    /// Worker threads (default: one per core).
    #[serde(default)]
    pub threads: Option<usize>,
    /// Passes over the kernels.
    #[serde(default)]
    pub iterations: Option<u32>,
    /// The labelled non-temporal-store variant.
    #[serde(default)]
    pub nt_stores: bool,
}

impl StorageBench {
    /// The arguments after `rftune bench storage`, without `--out` and `--label`.
    pub fn args(&self) -> Vec<String> {
        let mut a = vec!["--target".to_owned(), self.target.clone()];
        let mut opt = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(flag.to_owned());
                a.push(v);
            }
        };
        let text = |g: &Option<Given<_>>| g.as_ref().map(|g: &Given<_>| g.text().to_owned());
        opt("--size", self.size.as_ref().map(|g| g.text().to_owned()));
        opt("--runtime", text(&self.runtime));
        opt("--ramp", text(&self.ramp));
        opt("--tests", self.tests.clone());
        opt("--numjobs", self.numjobs.map(|n| n.to_string()));
        opt("--ioengine", self.ioengine.map(|e| e.as_str().to_owned()));
        opt("--confirm-serial", self.confirm_serial.clone());
        if self.destroy_data {
            a.push("--destroy-data".to_owned());
        }
        a
    }
}

impl MemoryBench {
    /// The arguments after `rftune bench memory`, without `--out` and `--label`.
    pub fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(n) = self.array_mib {
            a.extend(["--array-mib".to_owned(), n.to_string()]);
        }
        if let Some(n) = self.threads {
            a.extend(["--threads".to_owned(), n.to_string()]);
        }
        if let Some(n) = self.iterations {
            a.extend(["--iterations".to_owned(), n.to_string()]);
        }
        if self.nt_stores {
            a.push("--nt-stores".to_owned());
        }
        a
    }
}

/// A benchmark of the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BenchKind {
    /// `rftune bench storage`.
    Storage,
    /// `rftune bench memory`.
    Memory,
}

impl BenchKind {
    /// The subcommand name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Storage => "storage",
            Self::Memory => "memory",
        }
    }
}

/// The command that runs one benchmark on the host: `PROGRAM bench KIND ARGS… --label LABEL
/// --out DIR`. The host's rftune writes `DIR/bench.json`, which the experiment copies back. No
/// `--bmc`: BMC credentials never go to the host; power is sampled from where rftune runs.
pub fn bench_argv(program: &str, kind: BenchKind, args: &[String], label: &str, out_dir: &str) -> Vec<String> {
    let mut argv = vec![program.to_owned(), "bench".to_owned(), kind.as_str().to_owned()];
    argv.extend(args.iter().cloned());
    argv.extend([
        "--label".to_owned(),
        label.to_owned(),
        "--out".to_owned(),
        out_dir.to_owned(),
    ]);
    argv
}

impl Benchmarks {
    /// The configured benchmarks with their arguments, storage first.
    pub fn commands(&self) -> Vec<(BenchKind, Vec<String>)> {
        let mut out = Vec::new();
        if let Some(s) = &self.storage {
            out.push((BenchKind::Storage, s.args()));
        }
        if let Some(m) = &self.memory {
            out.push((BenchKind::Memory, m.args()));
        }
        out
    }
}

impl Spec {
    /// Reads and validates `path`; relative paths in it are resolved against its directory.
    pub fn load(path: &Path) -> Result<Self> {
        let text = rftune_engine::state::read_capped(path, MAX_EXPERIMENT_BYTES, "experiment")?;
        let mut spec = Self::parse(&text).with_context(|| format!("experiment {}", path.display()))?;
        // Absolute, so that the output directory and the result paths recorded under it mean
        // the same whatever the working directory (`experiment run ab.toml` from anywhere).
        let path = &std::path::absolute(path).with_context(|| format!("experiment {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("/"));
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "experiment".into());
        if spec.name.is_none() {
            spec.name = Some(stem.clone());
        }
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        let mut output = spec
            .output
            .take()
            .unwrap_or_else(|| PathBuf::from(format!("{stem}-results")));
        resolve(&mut output);
        spec.output = Some(output);
        // Profile files are relative to the experiment file too.
        for p in &mut spec.profiles {
            if bios_profiles::ProfileRef::parse(p)
                .file()
                .is_some_and(Path::is_relative)
            {
                *p = base.join(p.as_str()).display().to_string();
            }
        }
        // Every profile loads (parses, extends what exists) before anything runs: a typo in
        // the last profile must not surface after the first profiles rebooted hosts.
        let problems: Vec<Problem> = spec
            .profiles
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                rftune_engine::assess::LoadedProfile::load(p).err().map(|e| Problem {
                    path: vec!["profiles".to_owned(), i.to_string()],
                    message: format!("profile {p:?}: {}", crate::error::report(&e)),
                })
            })
            .collect();
        finish(problems, Some(&text)).with_context(|| format!("experiment {}", path.display()))?;
        for h in &mut spec.hosts {
            if let Some(c) = &mut h.credentials {
                resolve(c);
            }
            if let OsAccess::Ssh { config: Some(c), .. } = &mut h.os {
                resolve(c);
            }
        }
        if let Some(f) = &mut spec.benchmarks.filesystem {
            for c in &mut f.clients {
                if let Some(config) = &mut c.config {
                    resolve(config);
                }
            }
        }
        Ok(spec)
    }

    /// Parses and validates experiment text (TOML errors carry line and column).
    pub fn parse(text: &str) -> Result<Self> {
        let spec: Self = toml::from_str(text).map_err(|e| crate::error::Error::bad_input(e.to_string()))?;
        finish(spec.problems(), Some(text))?;
        Ok(spec)
    }

    /// Every rule the format cannot express, reported together.
    pub fn validate(&self) -> Result<()> {
        finish(self.problems(), None)
    }

    /// What [`Spec::validate`] reports, each problem with the place in the file it is about.
    fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut at = |path: &[&str], message: String| {
            problems.push(Problem {
                path: path.iter().map(|p| (*p).to_owned()).collect(),
                message,
            });
        };
        if self.profiles.len() < 2 {
            at(
                &["profiles"],
                "list at least two profiles (the first is the baseline)".to_owned(),
            );
        }
        let mut seen = BTreeSet::new();
        for (i, p) in self.profiles.iter().enumerate() {
            let index = i.to_string();
            if p.trim().is_empty() {
                at(&["profiles", &index], "a profile name is empty".to_owned());
            } else if !seen.insert(p.as_str()) {
                at(&["profiles", &index], format!("profile {p:?} is listed twice"));
            }
        }
        if self.hosts.is_empty() {
            at(&[], "list at least one [[hosts]] entry".to_owned());
        }
        let mut names = BTreeSet::new();
        for (i, h) in self.hosts.iter().enumerate() {
            let index = i.to_string();
            if h.name.trim().is_empty() {
                at(
                    &["hosts", &index, "name"],
                    format!("the host with bmc {:?} has an empty name", h.bmc),
                );
            } else if !names.insert(h.name.as_str()) {
                at(
                    &["hosts", &index, "name"],
                    format!("host name {:?} appears twice; names must be unique", h.name),
                );
            }
            match url::Url::parse(&h.bmc) {
                Ok(u) if matches!(u.scheme(), "http" | "https") => {
                    if !u.username().is_empty() || u.password().is_some() {
                        at(
                            &["hosts", &index, "bmc"],
                            format!(
                                "host {:?}: credentials do not belong in the bmc URL; use `credentials`",
                                h.name
                            ),
                        );
                    }
                }
                _ => at(
                    &["hosts", &index, "bmc"],
                    format!("host {:?}: bmc {:?} is not an http(s) URL", h.name, h.bmc),
                ),
            }
            if let OsAccess::Ssh { target, port, .. } = &h.os {
                if target.is_empty() || target.starts_with('-') || target.chars().any(char::is_whitespace) {
                    at(
                        &["hosts", &index, "os", "target"],
                        format!(
                            "host {:?}: ssh target {target:?} must be user@host or a Host alias (no spaces, no leading '-')",
                            h.name
                        ),
                    );
                }
                if *port == 0 {
                    at(
                        &["hosts", &index, "os", "port"],
                        format!("host {:?}: ssh port 0 is not a port", h.name),
                    );
                }
            }
        }
        if self.repeats < 1 {
            at(&["repeats"], "repeats must be at least 1".to_owned());
        }
        if self.order == Order::Random && self.seed.is_none() {
            at(
                &["order"],
                "order = \"random\" needs a seed, so that resume and reports reproduce the order".to_owned(),
            );
        }
        if self.benchmarks.storage.is_none() && self.benchmarks.memory.is_none() && self.benchmarks.filesystem.is_none()
        {
            at(
                &["benchmarks"],
                "configure at least one benchmark: [benchmarks.storage], [benchmarks.memory] or [benchmarks.filesystem]"
                    .to_owned(),
            );
        }
        if let Some(f) = &self.benchmarks.filesystem {
            if self.benchmarks.storage.is_some() || self.benchmarks.memory.is_some() {
                at(
                    &["benchmarks", "filesystem"],
                    "benchmarks.filesystem measures every host at once from the clients, step by step together; \
                     run [benchmarks.storage] or [benchmarks.memory] in an experiment of their own"
                        .to_owned(),
                );
            }
            if !f.target.starts_with('/') {
                at(
                    &["benchmarks", "filesystem", "target"],
                    format!(
                        "benchmarks.filesystem.target = {:?} must be an absolute path (the same on every client)",
                        f.target
                    ),
                );
            }
            if let Some(tests) = &f.tests
                && let Err(e) = host_bench::filesystem::Test::select(tests)
            {
                at(
                    &["benchmarks", "filesystem", "tests"],
                    format!("benchmarks.filesystem.tests: {e}"),
                );
            }
            if f.threads.as_ref().is_some_and(|t| t.is_empty() || t.contains(&0)) {
                at(
                    &["benchmarks", "filesystem", "threads"],
                    "benchmarks.filesystem.threads: give thread counts of 1 or more".to_owned(),
                );
            }
            for (field, given) in [
                ("data_size", &f.data_size),
                ("server_memory", &f.server_memory),
                ("record_size", &f.record_size),
                ("random_io", &f.random_io),
            ] {
                if let Some(e) = given.as_ref().and_then(Given::problem) {
                    at(
                        &["benchmarks", "filesystem", field],
                        format!("benchmarks.filesystem.{field}: {e}"),
                    );
                }
            }
            if let Some(e) = f.random_runtime.as_ref().and_then(Given::problem) {
                at(
                    &["benchmarks", "filesystem", "random_runtime"],
                    format!("benchmarks.filesystem.random_runtime: {e}"),
                );
            }
            if f.clients.is_empty() {
                at(
                    &["benchmarks", "filesystem"],
                    "benchmarks.filesystem needs at least one [[benchmarks.filesystem.clients]]".to_owned(),
                );
            }
            for (i, c) in f.clients.iter().enumerate() {
                if let Err(e) = host_bench::ssh::SshTarget::parse(&c.target) {
                    at(
                        &["benchmarks", "filesystem", "clients", &i.to_string(), "target"],
                        format!("benchmarks.filesystem.clients: {e}"),
                    );
                }
            }
        }
        if let Some(s) = &self.benchmarks.storage {
            let target = s.target.trim();
            if target.is_empty() || !target.starts_with('/') {
                at(
                    &["benchmarks", "storage", "target"],
                    format!(
                        "benchmarks.storage.target = {:?} must be an absolute path on the host (a file in an existing directory, or a block device)",
                        s.target
                    ),
                );
            }
            for (field, v) in [("runtime", &s.runtime), ("ramp", &s.ramp)] {
                if let Some(e) = v.as_ref().and_then(Given::problem) {
                    at(
                        &["benchmarks", "storage", field],
                        format!("benchmarks.storage.{field}: {e}"),
                    );
                }
            }
            if let Some(e) = s.size.as_ref().and_then(Given::problem) {
                at(&["benchmarks", "storage", "size"], format!("benchmarks.storage.{e}"));
            }
            if let Some(tests) = &s.tests
                && let Err(e) = host_bench::fio::select(tests)
            {
                at(
                    &["benchmarks", "storage", "tests"],
                    format!("benchmarks.storage.tests: {e}"),
                );
            }
            if s.numjobs == Some(0) {
                at(
                    &["benchmarks", "storage", "numjobs"],
                    "benchmarks.storage.numjobs must be at least 1".to_owned(),
                );
            }
            if s.destroy_data && s.confirm_serial.is_none() {
                at(
                    &["benchmarks", "storage", "destroy_data"],
                    "benchmarks.storage.destroy_data needs confirm_serial (the device's serial)".to_owned(),
                );
            }
        }
        if let Some(m) = &self.benchmarks.memory {
            if m.array_mib == Some(0) {
                at(
                    &["benchmarks", "memory", "array_mib"],
                    "benchmarks.memory.array_mib must be at least 1 (leave it out for 4× the last-level cache)"
                        .to_owned(),
                );
            }
            if m.threads == Some(0) {
                at(
                    &["benchmarks", "memory", "threads"],
                    "benchmarks.memory.threads must be at least 1 (leave it out for one per core)".to_owned(),
                );
            }
            if let Some(n) = m.iterations
                && n < 2
            {
                at(
                    &["benchmarks", "memory", "iterations"],
                    format!("benchmarks.memory.iterations = {n}: give at least 2 (the first pass is not counted)"),
                );
            }
        }
        for (field, given) in self.timeouts.fields() {
            if let Some(e) = given.problem() {
                at(
                    &["timeouts", field],
                    format!("timeouts.{field} = {:?}: {e}", given.text()),
                );
            }
        }
        problems
    }

    /// What is allowed but defeats the experiment's purpose, to say before it starts.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.repeats == 1 {
            out.push(
                "repeats = 1: each profile runs once per host, and a verdict needs at least two runs a side \
                 (every row will say \"too few runs\"); use repeats = 3 or more to tell a change from noise"
                    .to_owned(),
            );
        }
        out
    }

    /// The baseline profile.
    pub fn baseline(&self) -> &str {
        self.profiles.first().map_or("", String::as_str)
    }

    /// The experiment's name.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("experiment")
    }

    /// The name results measured on every host at once go by: the hosts' names joined by ` + `.
    pub fn together_name(&self) -> String {
        self.hosts
            .iter()
            .map(|h| h.name.as_str())
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// One thing wrong with an experiment file, and the key it is about (`["profiles", "1"]`).
struct Problem {
    path: Vec<String>,
    message: String,
}

/// Every problem in one error, each with its line in `text` when there is one.
fn finish(problems: Vec<Problem>, text: Option<&str>) -> Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = problems
        .iter()
        .map(|p| {
            let path: Vec<&str> = p.path.iter().map(String::as_str).collect();
            match text.filter(|_| !path.is_empty()).and_then(|t| line_of(t, &path)) {
                Some(line) => format!("line {line}: {}", p.message),
                None => p.message.clone(),
            }
        })
        .collect();
    bad_input!("{}", lines.join("\n  "))
}

/// The line (from 1) where the value at `path` (keys, and array indexes as numbers) starts in
/// the TOML `text`.
fn line_of(text: &str, path: &[&str]) -> Option<usize> {
    use toml::de::{DeArray, DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut table: Option<&DeTable> = Some(doc.get_ref());
    let mut array: Option<&DeArray> = None;
    let mut span = doc.span();
    for key in path {
        let next = match (table, array) {
            (Some(t), _) => t.iter().find(|(k, _)| k.get_ref().as_ref() == *key).map(|(_, v)| v)?,
            (None, Some(a)) => a.get(key.parse::<usize>().ok()?)?,
            (None, None) => return None,
        };
        span = next.span();
        (table, array) = match next.get_ref() {
            DeValue::Table(t) => (Some(t), None),
            DeValue::Array(a) => (None, Some(a)),
            _ => (None, None),
        };
    }
    Some(text.get(..span.start)?.matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
profiles = ["base", "tuned"]
repeats = 2
order = "random"
seed = 42

[[hosts]]
name = "a"
bmc = "https://127.0.0.1:9001"
os = { transport = "ssh", target = "bench@127.0.0.1", port = 2222, config = "ssh/config" }

[[hosts]]
name = "b"
bmc = "http://127.0.0.1:9002"
credentials = "creds.toml"
os = { transport = "local" }

[benchmarks.storage]
target = "/tmp/f"
size = "1G"
runtime = "10s"
tests = "randread"

[benchmarks.memory]
array_mib = 64
"#;

    #[test]
    fn parses_the_documented_format() {
        let s = Spec::parse(GOOD).unwrap();
        assert_eq!(s.baseline(), "base");
        assert_eq!(s.repeats, 2);
        assert_eq!(s.order, Order::Random);
        assert_eq!(
            s.hosts[0].os,
            OsAccess::Ssh {
                target: "bench@127.0.0.1".into(),
                port: 2222,
                config: Some("ssh/config".into()),
                rftune: None
            }
        );
        assert_eq!(s.hosts[1].os, OsAccess::Local { rftune: None });
        assert_eq!(s.reboot, Reboot::Graceful);
        assert_eq!(s.timeouts.waits().unwrap().os, Duration::from_secs(600));
        let cmds = s.benchmarks.commands();
        assert_eq!(cmds[0].0, BenchKind::Storage);
        assert_eq!(
            cmds[0].1,
            [
                "--target",
                "/tmp/f",
                "--size",
                "1G",
                "--runtime",
                "10s",
                "--tests",
                "randread"
            ]
        );
        assert_eq!(
            cmds[1],
            (BenchKind::Memory, vec!["--array-mib".to_owned(), "64".to_owned()])
        );
    }

    #[test]
    fn hooks_and_node_names_are_read_as_apply_takes_them() {
        let s = Spec::parse(GOOD).unwrap();
        assert_eq!(
            s.hooks.hooks().unwrap(),
            rftune_engine::hooks::Hooks::default(),
            "none unless given"
        );
        let text = GOOD
            .replace(
                "credentials = \"creds.toml\"",
                "credentials = \"creds.toml\"\nnode = \"worker-2\"",
            )
            .replace(
                "[benchmarks.storage]",
                "[hooks]\nbefore_reboot = \"kubectl drain $RFTUNE_NODE\"\ntimeout = \"90s\"\n\n[benchmarks.storage]",
            );
        let s = Spec::parse(&text).unwrap();
        let hooks = s.hooks.hooks().unwrap();
        assert_eq!(hooks.before_reboot.as_deref(), Some("kubectl drain $RFTUNE_NODE"));
        assert_eq!(hooks.timeout, Duration::from_secs(90));
        assert_eq!(s.hosts[1].entry().node.as_deref(), Some("worker-2"));
        let typo = text.replace("before_reboot", "before_rebot");
        assert!(Spec::parse(&typo).is_err(), "an unknown hook is refused");
    }

    #[test]
    fn one_repeat_is_warned_about() {
        assert!(Spec::parse(GOOD).unwrap().warnings().is_empty());
        let s = Spec::parse(&GOOD.replace("repeats = 2", "repeats = 1")).unwrap();
        assert!(s.warnings()[0].contains("too few runs"), "{:?}", s.warnings());
    }

    #[test]
    fn bench_commands_carry_label_and_output() {
        let s = Spec::parse(GOOD).unwrap();
        let (kind, args) = &s.benchmarks.commands()[1];
        assert_eq!(
            bench_argv("rftune", *kind, args, "tuned", "/tmp/out"),
            [
                "rftune",
                "bench",
                "memory",
                "--array-mib",
                "64",
                "--label",
                "tuned",
                "--out",
                "/tmp/out"
            ]
        );
    }

    #[test]
    fn the_io_engine_is_one_fio_knows() {
        let text = GOOD.replace("tests = \"randread\"", "tests = \"randread\"\nioengine = \"libaio\"");
        let s = Spec::parse(&text).unwrap();
        let storage = s.benchmarks.storage.as_ref().unwrap();
        assert_eq!(storage.ioengine, Some(host_bench::fio::IoEngine::Libaio));
        assert!(
            storage
                .args()
                .ends_with(&["--ioengine".to_owned(), "libaio".to_owned()])
        );
        let text = GOOD.replace("tests = \"randread\"", "tests = \"randread\"\nioengine = \"uring\"");
        let err = crate::error::report(&Spec::parse(&text).unwrap_err());
        assert!(
            err.contains("uring") && err.contains("io_uring") && err.contains("libaio") && err.contains("line 23"),
            "{err}"
        );
    }

    #[test]
    fn ssh_port_defaults_to_22() {
        let text = GOOD.replace(", port = 2222", "");
        let s = Spec::parse(&text).unwrap();
        assert!(matches!(s.hosts[0].os, OsAccess::Ssh { port: 22, .. }));
    }

    #[test]
    fn typos_fail_with_line_and_column() {
        let text = GOOD.replace("repeats = 2", "repeat = 2");
        let err = crate::error::report(&Spec::parse(&text).unwrap_err());
        assert!(err.contains("repeat") && err.contains("line 3"), "{err}");
        let text = GOOD.replace("transport = \"local\"", "transport = \"telnet\"");
        let err = crate::error::report(&Spec::parse(&text).unwrap_err());
        assert!(err.contains("telnet") && err.contains("line 16"), "{err}");
        let text = GOOD.replace(
            "os = { transport = \"local\" }",
            "os = { transport = \"local\", port = 1 }",
        );
        assert!(Spec::parse(&text).is_err());
    }

    #[test]
    fn validation_reports_every_problem() {
        let text = GOOD
            .replace("profiles = [\"base\", \"tuned\"]", "profiles = [\"base\"]")
            .replace("repeats = 2", "repeats = 0")
            .replace("seed = 42", "")
            .replace("name = \"b\"", "name = \"a\"")
            .replace("target = \"bench@127.0.0.1\"", "target = \"-oProxyCommand=x\"")
            .replace("size = \"1G\"", "size = \"64Q\"");
        let err = crate::error::report(&Spec::parse(&text).unwrap_err());
        for needle in [
            "two profiles",
            "repeats",
            "needs a seed",
            "appears twice",
            "ssh target",
            "benchmarks.storage.size \"64Q\": unknown unit",
        ] {
            assert!(err.contains(needle), "{needle} missing from: {err}");
        }
    }

    #[test]
    fn rejects_missing_benchmarks_bad_urls_and_durations() {
        let text = r#"
profiles = ["a", "a"]
[[hosts]]
name = "h"
bmc = "https://root:calvin@idrac"
os = { transport = "local" }
[benchmarks]
[timeouts]
os = "soon"
"#;
        let err = crate::error::report(&Spec::parse(text).unwrap_err());
        for needle in [
            "listed twice",
            "at least one benchmark",
            "credentials do not belong",
            "timeouts.os",
        ] {
            assert!(err.contains(needle), "{needle} missing from: {err}");
        }
    }

    #[test]
    fn the_pixstor_example_measures_both_storage_nodes_together_from_four_clients() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/pixstor-experiment.toml");
        let s = Spec::load(&path).unwrap();
        assert_eq!(s.profiles, ["performance", "hpc"]);
        assert_eq!(
            s.hosts.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
            ["nvme-01", "nvme-02"]
        );
        let f = s.benchmarks.filesystem.as_ref().unwrap();
        assert_eq!(f.clients.len(), 4);
        assert_eq!(f.fs_type.as_deref(), Some("gpfs"));
        assert_eq!(f.server_memory.as_ref().unwrap().value().unwrap().0, 256 << 30);
        assert_eq!(f.threads.as_ref().unwrap().last(), Some(&512));
        assert!(
            s.benchmarks.commands().is_empty(),
            "nothing runs on the storage nodes themselves"
        );
        let plan = crate::schedule::plan(&s);
        assert_eq!(plan["nvme-01"], plan["nvme-02"], "both nodes take every step together");
        assert_eq!(plan["nvme-01"].len(), 6);
    }

    #[test]
    fn a_filesystem_benchmark_is_checked_with_its_lines() {
        let text = format!(
            "{}\n[benchmarks.filesystem]\ntarget = \"mnt\"\ntests = \"n-to-n,ior\"\nthreads = [0]\n\
             data_size = \"1Q\"\n[[benchmarks.filesystem.clients]]\ntarget = \"-oProxyCommand=x\"\n",
            GOOD.replace("[benchmarks.memory]\narray_mib = 64\n", "")
        );
        let err = crate::error::report(&Spec::parse(&text).unwrap_err());
        for needle in [
            "in an experiment of their own",
            "must be an absolute path",
            "unknown test \"ior\"",
            "thread counts of 1 or more",
            "benchmarks.filesystem.data_size",
            "ssh destination \"-oProxyCommand=x\"",
        ] {
            assert!(err.contains(needle), "{needle} missing from: {err}");
        }
        assert!(err.contains("line "), "{err}");
    }

    #[test]
    fn load_resolves_paths_against_the_file() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("nps.toml");
        std::fs::create_dir_all(dir.join("profiles")).unwrap();
        std::fs::write(
            dir.join("profiles/tuned.toml"),
            "name = \"tuned\"\ndescription = \"performance, renamed\"\nextends = \"performance\"\n",
        )
        .unwrap();
        std::fs::write(
            &path,
            GOOD.replace("[\"base\", \"tuned\"]", "[\"performance\", \"profiles/tuned.toml\"]"),
        )
        .unwrap();
        let s = Spec::load(&path).unwrap();
        assert_eq!(
            s.profiles[1],
            dir.join("profiles/tuned.toml").display().to_string(),
            "a profile file is relative to the experiment file"
        );
        assert_eq!(s.name(), "nps");
        assert_eq!(s.output.as_deref(), Some(dir.join("nps-results").as_path()));
        assert!(s.output.as_deref().is_some_and(Path::is_absolute));
        assert_eq!(
            s.hosts[1].credentials.as_deref(),
            Some(dir.join("creds.toml").as_path())
        );
        assert!(matches!(&s.hosts[0].os, OsAccess::Ssh { config: Some(c), .. } if *c == dir.join("ssh/config")));
        std::fs::remove_dir_all(dir).ok();
    }
}
