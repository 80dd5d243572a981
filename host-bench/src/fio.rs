//! The seven fio tests of Dell's note "Using NVMe Namespaces to Increase Performance in a Dell
//! PowerEdge R7525 Server" (sequential read and write at 128k, random read and write and three
//! read/write mixes at 4k): job arguments with the options every test shares, running
//! the real `fio` wherever an [`Exec`] reaches (this host or a remote one), lenient parsing of
//! its JSON (from the first `{`, unknown fields ignored, per-job errors kept), per-second IOPS
//! logs, io_uring → libaio fallback, and preconditioning with the SNIA steady-state check.

use crate::exec::Exec;
use crate::{Error, Result, stats};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One test of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TestSpec {
    /// Short name used on the command line and in reports.
    pub name: &'static str,
    /// fio `rw`.
    pub rw: &'static str,
    /// fio `bs`.
    pub bs: &'static str,
    /// fio `iodepth` (per job).
    pub iodepth: u32,
    /// fio `rwmixread` for mixed tests.
    pub rwmixread: Option<u32>,
}

impl TestSpec {
    /// Whether the test writes to the target.
    pub fn writes(&self) -> bool {
        !matches!(self.rw, "read" | "randread")
    }

    /// Sequential tests are judged by bandwidth, random ones by IOPS.
    pub fn sequential(&self) -> bool {
        matches!(self.rw, "read" | "write")
    }
}

const fn test(name: &'static str, rw: &'static str, bs: &'static str, iodepth: u32, mix: Option<u32>) -> TestSpec {
    TestSpec {
        name,
        rw,
        bs,
        iodepth,
        rwmixread: mix,
    }
}

/// The suite, in the note's order.
pub const TESTS: [TestSpec; 7] = [
    test("seqread", "read", "128k", 16, None),
    test("seqwrite", "write", "128k", 16, None),
    test("randread", "randread", "4k", 32, None),
    test("randwrite", "randwrite", "4k", 32, None),
    test("randrw70", "randrw", "4k", 32, Some(70)),
    test("randrw50", "randrw", "4k", 32, Some(50)),
    test("randrw30", "randrw", "4k", 32, Some(30)),
];

/// Tests named in a comma-separated list (`all` for the suite), in the suite's order.
pub fn select(list: &str) -> Result<Vec<TestSpec>> {
    let names: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if names.contains(&"all") {
        return Ok(TESTS.to_vec());
    }
    for n in &names {
        if !TESTS.iter().any(|t| t.name == *n) {
            let known: Vec<&str> = TESTS.iter().map(|t| t.name).collect();
            return Err(Error::BadInput(format!(
                "unknown test {n:?}; known: all, {}",
                known.join(", ")
            )));
        }
    }
    let chosen: Vec<TestSpec> = TESTS.iter().filter(|t| names.contains(&t.name)).copied().collect();
    if chosen.is_empty() {
        return Err(Error::BadInput("no tests selected".into()));
    }
    Ok(chosen)
}

/// fio I/O engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoEngine {
    /// Linux io_uring (the default).
    IoUring,
    /// Linux native AIO (the fallback).
    Libaio,
}

impl IoEngine {
    /// fio's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::IoUring => "io_uring",
            Self::Libaio => "libaio",
        }
    }
}

/// Settings shared by every test of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// File or block device.
    pub target: PathBuf,
    /// Bytes to use ([`crate::units::parse_size`]); required for files, optional for devices (whole device).
    pub size: Option<u64>,
    /// Where I/O starts: [`crate::target::HEADER_BYTES`] on rftune's files, whose header fio
    /// must never write; 0 on devices.
    pub offset: u64,
    /// Measured seconds per test.
    pub runtime_s: u64,
    /// Seconds run before measuring.
    pub ramp_s: u64,
    /// fio `numjobs` (outstanding I/O = numjobs × iodepth).
    pub numjobs: u32,
    /// Preferred engine.
    pub ioengine: IoEngine,
}

/// fio's filename syntax uses `:` to separate files; escape it.
fn fio_filename(p: &Path) -> String {
    p.to_string_lossy().replace(':', "\\:")
}

/// The fio arguments for one test: the options every test shares (direct I/O, io_uring, time
/// based, no random map, fresh buffers, JSON output) plus the test's own.
pub fn job_args(spec: &TestSpec, opts: &Options, engine: IoEngine, output: &Path, log_prefix: &Path) -> Vec<String> {
    let mut a = vec![
        format!("--name={}", spec.name),
        format!("--filename={}", fio_filename(&opts.target)),
    ];
    if let Some(size) = opts.size {
        a.push(format!("--size={size}"));
    }
    if opts.offset > 0 {
        a.push(format!("--offset={}", opts.offset));
    }
    a.push(format!("--rw={}", spec.rw));
    if let Some(mix) = spec.rwmixread {
        a.push(format!("--rwmixread={mix}"));
    }
    a.extend([
        format!("--bs={}", spec.bs),
        format!("--iodepth={}", spec.iodepth),
        format!("--numjobs={}", opts.numjobs),
        format!("--ioengine={}", engine.as_str()),
        "--direct=1".into(),
        "--time_based".into(),
        format!("--runtime={}", opts.runtime_s),
        format!("--ramp_time={}", opts.ramp_s),
        "--norandommap".into(),
        "--randrepeat=0".into(),
        "--refill_buffers".into(),
        "--group_reporting".into(),
        "--output-format=json".into(),
        format!("--output={}", output.display()),
        format!("--write_iops_log={}", log_prefix.display()),
        "--log_avg_msec=1000".into(),
    ]);
    a
}

/// Latency percentiles of completions, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: Option<f64>,
    /// 99th percentile.
    pub p99_us: Option<f64>,
    /// 99.9th percentile.
    pub p99_9_us: Option<f64>,
}

/// One completion latency percentile rftune reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Percentile {
    /// Median.
    P50,
    /// 99th percentile.
    P99,
    /// 99.9th percentile.
    P99_9,
}

impl Percentile {
    /// Every percentile reported, in the order figures, tables and charts give them.
    pub const ALL: [Self; 3] = [Self::P50, Self::P99, Self::P99_9];

    /// Its name in figures and charts (`read_p99.9`).
    pub fn name(self) -> &'static str {
        match self {
            Self::P50 => "p50",
            Self::P99 => "p99",
            Self::P99_9 => "p99.9",
        }
    }

    /// Its value in `latency`, µs.
    pub fn of(self, latency: &Latency) -> Option<f64> {
        match self {
            Self::P50 => latency.p50_us,
            Self::P99 => latency.p99_us,
            Self::P99_9 => latency.p99_9_us,
        }
    }
}

/// Which completions a latency describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataDirection {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

impl DataDirection {
    /// Reads, then writes.
    pub const BOTH: [Self; 2] = [Self::Read, Self::Write];

    /// Its name in figures (`read_p99`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
        }
    }

    /// The completion latency of this direction in `metrics`.
    pub fn latency(self, metrics: &Metrics) -> Option<Latency> {
        match self {
            Self::Read => metrics.read_lat,
            Self::Write => metrics.write_lat,
        }
    }
}

/// One direction (read or write) of one job.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Direction {
    /// I/O per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// Completed I/Os.
    pub total_ios: u64,
    /// Bytes transferred.
    #[serde(default)]
    pub io_bytes: u64,
    /// Milliseconds.
    pub runtime_ms: u64,
    /// Completion latency.
    pub clat: Option<Latency>,
}

/// One entry of fio's `jobs[]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Job {
    /// `jobname`.
    pub name: String,
    /// fio's `error` (an errno; 0 is success).
    pub error: i64,
    /// Reads.
    pub read: Direction,
    /// Writes.
    pub write: Direction,
    /// User CPU, percent.
    pub usr_cpu: f64,
    /// System CPU, percent.
    pub sys_cpu: f64,
    /// `"job options"` as fio printed them.
    pub options: BTreeMap<String, String>,
}

/// A parsed fio JSON document.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Output {
    /// `"fio version"`, e.g. `fio-3.33`.
    pub version: Option<String>,
    /// `jobs[]`; from fio's client/server mode, the one aggregate of every client (fio's "All
    /// clients" entry, computed as fio does where its front end left it out, or the one
    /// client's group when there was one).
    pub jobs: Vec<Job>,
    /// fio's client/server mode: each client's group, in the order fio lists them, with the
    /// server it ran on (`hostname`, or the socket's path). Empty when fio ran the jobs itself.
    #[serde(default)]
    pub clients: Vec<(String, Job)>,
}

mod raw {
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize)]
    pub(super) struct Output {
        #[serde(rename = "fio version")]
        pub(super) version: Option<String>,
        #[serde(default)]
        pub(super) jobs: Vec<Job>,
        /// What the front end of fio's client/server mode writes instead of `jobs`.
        #[serde(default)]
        pub(super) client_stats: Vec<Job>,
    }

    #[derive(Deserialize)]
    pub(super) struct Job {
        #[serde(default)]
        pub(super) jobname: String,
        #[serde(default)]
        pub(super) hostname: String,
        #[serde(default)]
        pub(super) error: i64,
        #[serde(rename = "job options", default)]
        pub(super) options: BTreeMap<String, serde_json::Value>,
        pub(super) read: Option<Dir>,
        pub(super) write: Option<Dir>,
        #[serde(default)]
        pub(super) usr_cpu: f64,
        #[serde(default)]
        pub(super) sys_cpu: f64,
        /// Milliseconds the job ran, what fio weighs CPU shares by when it sums groups.
        #[serde(default)]
        pub(super) job_runtime: f64,
    }

    #[derive(Deserialize, Default)]
    pub(super) struct Dir {
        #[serde(default)]
        pub(super) iops: f64,
        #[serde(default)]
        pub(super) bw_bytes: f64,
        #[serde(default)]
        pub(super) total_ios: f64,
        #[serde(default)]
        pub(super) io_bytes: f64,
        #[serde(default)]
        pub(super) runtime: f64,
        pub(super) clat_ns: Option<Clat>,
    }

    #[derive(Deserialize)]
    pub(super) struct Clat {
        #[serde(default)]
        pub(super) mean: f64,
        #[serde(default)]
        pub(super) percentile: BTreeMap<String, f64>,
    }
}

fn direction(d: Option<raw::Dir>) -> Direction {
    let d = d.unwrap_or_default();
    let clat = d.clat_ns.filter(|_| d.total_ios > 0.0).map(|c| {
        let pct = |want: f64| {
            c.percentile
                .iter()
                .find(|(k, _)| k.parse::<f64>().is_ok_and(|p| (p - want).abs() < 1e-6))
                .map(|(_, ns)| ns / 1000.0)
        };
        Latency {
            mean_us: c.mean / 1000.0,
            p50_us: pct(50.0),
            p99_us: pct(99.0),
            p99_9_us: pct(99.9),
        }
    });
    Direction {
        iops: d.iops,
        bw_bytes: d.bw_bytes,
        total_ios: d.total_ios as u64,
        io_bytes: d.io_bytes as u64,
        runtime_ms: d.runtime as u64,
        clat,
    }
}

/// The name fio's client/server front end gives the aggregate of every client.
const ALL_CLIENTS: &str = "All clients";

/// Parses fio's JSON output: from the first line that opens with `{` (warnings before it are
/// skipped, and so are the lines fio's client/server front end prints there, `<host> …`),
/// ignoring anything after the document and any field this code does not know. The front end's
/// `client_stats` become [`Output::clients`], its aggregate [`Output::jobs`].
pub fn parse(text: &str) -> Result<Output> {
    let start = if text.starts_with('{') {
        Some(0)
    } else {
        text.find("\n{").map(|i| i + 1)
    };
    let start = start.or_else(|| text.find('{')).ok_or_else(|| Error::Parse {
        what: "fio output".into(),
        detail: "no JSON document in it".into(),
    })?;
    let raw: raw::Output = serde_json::Deserializer::from_str(&text[start..])
        .into_iter()
        .next()
        .ok_or_else(|| Error::Parse {
            what: "fio output".into(),
            detail: "empty JSON".into(),
        })?
        .map_err(|e| Error::Parse {
            what: "fio output".into(),
            detail: e.to_string(),
        })?;
    let job = |j: raw::Job| Job {
        name: j.jobname,
        error: j.error,
        read: direction(j.read),
        write: direction(j.write),
        usr_cpu: j.usr_cpu,
        sys_cpu: j.sys_cpu,
        options: j
            .options
            .into_iter()
            .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect(),
    };
    let (mut aggregate, mut clients, mut job_runtimes) = (Vec::new(), Vec::new(), Vec::new());
    for j in raw.client_stats {
        if j.jobname == ALL_CLIENTS {
            aggregate.push(job(j));
        } else {
            job_runtimes.push(j.job_runtime);
            clients.push((j.hostname.clone(), job(j)));
        }
    }
    let jobs = if !raw.jobs.is_empty() {
        raw.jobs.into_iter().map(job).collect()
    } else if !aggregate.is_empty() {
        aggregate
    } else if clients.len() > 1 {
        vec![all_clients(&clients, &job_runtimes)]
    } else {
        // One client: its group is the whole.
        clients.iter().map(|(_, j)| j.clone()).collect()
    };
    Ok(Output {
        version: raw.version,
        jobs,
        clients,
    })
}

/// fio's "All clients" entry, computed as its front end computes it (`sum_thread_stats`), for
/// when the front end leaves it out: fio 3.33 counts a report per job section from each server
/// but a server under `group_reporting` sends one per group, so a client whose job file has
/// several sections (the metadata jobs: one a thread) never completes the count. I/Os and bytes
/// summed, the longest runtime, the rates over it in fio's arithmetic, CPU shares weighted by
/// each job's runtime, the first error; latency percentiles cannot be merged from summaries.
fn all_clients(clients: &[(String, Job)], job_runtimes: &[f64]) -> Job {
    let summed = |pick: fn(&Job) -> &Direction| {
        let total_ios: u64 = clients.iter().map(|(_, j)| pick(j).total_ios).sum();
        let io_bytes: u64 = clients.iter().map(|(_, j)| pick(j).io_bytes).sum();
        let runtime_ms = clients.iter().map(|(_, j)| pick(j).runtime_ms).max().unwrap_or(0);
        let (iops, bw_bytes) = if runtime_ms == 0 {
            (0.0, 0.0)
        } else {
            // fio: iops in floating point, bytes per second in whole bytes.
            (
                1000.0 * total_ios as f64 / runtime_ms as f64,
                (1000 * u128::from(io_bytes) / u128::from(runtime_ms)) as f64,
            )
        };
        Direction {
            iops,
            bw_bytes,
            total_ios,
            io_bytes,
            runtime_ms,
            clat: None,
        }
    };
    let weight: f64 = job_runtimes.iter().sum();
    let cpu = |pick: fn(&Job) -> f64| {
        if weight > 0.0 {
            clients
                .iter()
                .zip(job_runtimes)
                .map(|((_, j), w)| pick(j) * w)
                .sum::<f64>()
                / weight
        } else {
            0.0
        }
    };
    Job {
        name: ALL_CLIENTS.to_owned(),
        error: clients.iter().map(|(_, j)| j.error).find(|e| *e != 0).unwrap_or(0),
        read: summed(|j| &j.read),
        write: summed(|j| &j.write),
        usr_cpu: cpu(|j| j.usr_cpu),
        sys_cpu: cpu(|j| j.sys_cpu),
        options: BTreeMap::new(),
    }
}

/// What one fio run of a test measured (jobs summed; latency of the first job reporting it,
/// which with `group_reporting` is the group).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Metrics {
    /// Read + write IOPS.
    pub iops: f64,
    /// Read IOPS.
    pub read_iops: f64,
    /// Write IOPS.
    pub write_iops: f64,
    /// Read + write bytes/s.
    pub bw_bytes: f64,
    /// Read bytes/s.
    pub read_bw_bytes: f64,
    /// Write bytes/s.
    pub write_bw_bytes: f64,
    /// Read completion latency.
    pub read_lat: Option<Latency>,
    /// Write completion latency.
    pub write_lat: Option<Latency>,
    /// User CPU, percent.
    pub usr_cpu: f64,
    /// System CPU, percent.
    pub sys_cpu: f64,
    /// Per-job errors (`jobname: error N`).
    pub errors: Vec<String>,
}

impl Output {
    /// Sums the jobs into one set of metrics.
    pub fn metrics(&self) -> Metrics {
        let mut m = Metrics::default();
        for j in &self.jobs {
            m.read_iops += j.read.iops;
            m.write_iops += j.write.iops;
            m.read_bw_bytes += j.read.bw_bytes;
            m.write_bw_bytes += j.write.bw_bytes;
            m.usr_cpu += j.usr_cpu;
            m.sys_cpu += j.sys_cpu;
            m.read_lat = m.read_lat.or(j.read.clat);
            m.write_lat = m.write_lat.or(j.write.clat);
            if j.error != 0 && self.clients.is_empty() {
                m.errors
                    .push(format!("{}: error {} ({})", j.name, j.error, errno_text(j.error)));
            }
        }
        for (host, j) in self.clients.iter().filter(|(_, j)| j.error != 0) {
            m.errors.push(format!(
                "{} on {host}: error {} ({})",
                j.name,
                j.error,
                errno_text(j.error)
            ));
        }
        m.iops = m.read_iops + m.write_iops;
        m.bw_bytes = m.read_bw_bytes + m.write_bw_bytes;
        m
    }
}

fn errno_text(errno: i64) -> String {
    i32::try_from(errno).map_or_else(
        |_| "unknown".into(),
        |e| std::io::Error::from_raw_os_error(e).to_string(),
    )
}

/// Parses fio per-second IOPS logs (`msec, value, ddir, bs, offset` lines) from any number of
/// files (one per job) into IOPS per second, summed over jobs and directions.
pub fn parse_iops_logs<'a>(logs: impl IntoIterator<Item = &'a str>) -> Vec<(f64, f64)> {
    let mut buckets: BTreeMap<u64, f64> = BTreeMap::new();
    for text in logs {
        for line in text.lines() {
            let mut fields = line.split(',').map(str::trim);
            let (Some(Ok(ms)), Some(Ok(v))) = (
                fields.next().map(str::parse::<u64>),
                fields.next().map(str::parse::<f64>),
            ) else {
                continue;
            };
            *buckets.entry((ms + 500) / 1000).or_default() += v;
        }
    }
    buckets.into_iter().map(|(s, v)| (s as f64, v)).collect()
}

/// Whether fio's messages say io_uring cannot be used here (old kernel, seccomp, disabled by
/// sysctl, or an fio built without it).
pub fn io_uring_unavailable(messages: &str) -> bool {
    let m = messages.to_ascii_lowercase();
    m.contains("io_uring")
        && [
            "not loadable",
            "failed to load",
            "queue_init",
            "io_uring_setup",
            "operation not permitted",
            "function not implemented",
            "not supported",
            "invalid ioengine",
        ]
        .iter()
        .any(|s| m.contains(s))
}

/// The fio runner, on the machine `exec` names: this host ([`crate::exec::Local`]) or one reached
/// by a remote command. The same runner serves `rftune bench storage` and experiments on hosts
/// without rftune.
#[derive(Clone, Copy)]
pub struct Fio<'a> {
    /// Where fio runs.
    pub exec: &'a dyn Exec,
    /// Program name or path (default `fio` from PATH).
    pub program: &'a str,
}

impl std::fmt::Debug for Fio<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fio")
            .field("exec", &self.exec.describe())
            .field("program", &self.program)
            .finish()
    }
}

/// One fio run of a test.
#[derive(Debug, Clone, PartialEq)]
pub struct FioRun {
    /// The parsed document.
    pub output: Output,
    /// The summed metrics.
    pub metrics: Metrics,
    /// The engine that ran (libaio after a fallback).
    pub engine: IoEngine,
    /// Set when io_uring was unavailable and libaio was used instead.
    pub fallback: Option<String>,
    /// IOPS per second since measuring began.
    pub iops_trace: Vec<(f64, f64)>,
}

impl<'a> Fio<'a> {
    /// `fio` from PATH on `exec`.
    pub fn new(exec: &'a dyn Exec) -> Self {
        Self { exec, program: "fio" }
    }

    /// `fio --version`, e.g. `fio-3.33`.
    pub async fn version(&self) -> Result<String> {
        let argv = [self.program.to_owned(), "--version".to_owned()];
        let out = self
            .exec
            .run_ok(&argv, Some(std::time::Duration::from_secs(60)))
            .await?;
        Ok(out.stdout_text().trim().to_owned())
    }

    /// Runs fio with `args`, returning how it ended: its exit status and its messages (stderr,
    /// then stdout).
    async fn invoke(&self, args: Vec<String>) -> Result<Ended> {
        let mut argv = vec![self.program.to_owned()];
        argv.extend(args);
        let out = self.exec.run(&argv, None).await?;
        let mut messages = out.stderr.clone();
        messages.push_str(&out.stdout_text());
        Ok(Ended {
            code: out.code,
            messages,
        })
    }

    /// The error of a fio run of `test` that ended without usable results.
    fn failed(&self, test: &str, ended: &Ended) -> Error {
        crate::exec::program_failed(format!("{} ({test})", self.program), ended.code, &ended.messages)
    }

    /// Runs one test in `workdir`, an existing directory (which receives `<test>.json` and the
    /// IOPS logs), falling back to libaio when io_uring is unavailable.
    pub async fn run(&self, spec: &TestSpec, opts: &Options, workdir: &Path, tag: &str) -> Result<FioRun> {
        let first = self.run_engine(spec, opts, opts.ioengine, workdir, tag).await?;
        match first {
            Ok(run) => Ok(run),
            Err(ended) if opts.ioengine == IoEngine::IoUring && io_uring_unavailable(&ended.messages) => {
                let mut run = self
                    .run_engine(spec, opts, IoEngine::Libaio, workdir, tag)
                    .await?
                    .map_err(|e| self.failed(spec.name, &e))?;
                run.fallback = Some(format!(
                    "io_uring unavailable ({}); ran with libaio",
                    last_line(&ended.messages)
                ));
                Ok(run)
            }
            Err(ended) => Err(self.failed(spec.name, &ended)),
        }
    }

    /// Ok(Err(how it ended)) when fio ran but failed without a usable document.
    async fn run_engine(
        &self,
        spec: &TestSpec,
        opts: &Options,
        engine: IoEngine,
        workdir: &Path,
        tag: &str,
    ) -> Result<std::result::Result<FioRun, Ended>> {
        let output = workdir.join(format!("{}{tag}.json", spec.name));
        let prefix = workdir.join(format!("{}{tag}", spec.name));
        self.exec.clear_outputs(&output, &prefix).await?;
        let mut ended = self.invoke(job_args(spec, opts, engine, &output, &prefix)).await?;
        let text = self.exec.read(&output).await.ok().flatten().unwrap_or_default();
        let parsed = match parse(&text) {
            Ok(p) if !p.jobs.is_empty() => p,
            _ => return Ok(Err(ended)),
        };
        let metrics = parsed.metrics();
        if ended.code != Some(0) && engine == IoEngine::IoUring && io_uring_unavailable(&ended.messages) {
            return Ok(Err(ended));
        }
        if !metrics.errors.is_empty() && metrics.iops == 0.0 {
            ended.messages.push_str(&metrics.errors.join("; "));
            return Ok(Err(ended));
        }
        let logs = self.exec.iops_logs(&prefix).await.unwrap_or_default();
        let ramp = opts.ramp_s as f64;
        Ok(Ok(FioRun {
            metrics,
            output: parsed,
            engine,
            fallback: None,
            iops_trace: parse_iops_logs(logs.iter().map(String::as_str))
                .into_iter()
                .map(|(t, v)| (t + ramp, v))
                .collect(),
        }))
    }

    /// Preconditions the target for sustained results: two full sequential writes (128k QD16),
    /// then rounds of 4k random writes of `round_s` seconds until the SNIA steady-state test
    /// passes or `max_rounds` have run; fio's output goes to `workdir`, an existing directory.
    pub async fn precondition(
        &self,
        opts: &Options,
        workdir: &Path,
        round_s: u64,
        max_rounds: usize,
    ) -> Result<Precondition> {
        let mut opts = opts.clone();
        loop {
            let mut args = vec![
                "--name=precondition".to_owned(),
                format!("--filename={}", fio_filename(&opts.target)),
                "--rw=write".into(),
                "--bs=128k".into(),
                "--iodepth=16".into(),
                format!("--ioengine={}", opts.ioengine.as_str()),
                "--direct=1".into(),
                "--loops=2".into(),
                "--output-format=json".into(),
                format!("--output={}", workdir.join("precondition.json").display()),
            ];
            if let Some(size) = opts.size {
                args.push(format!("--size={size}"));
            }
            if opts.offset > 0 {
                args.push(format!("--offset={}", opts.offset));
            }
            let ended = self.invoke(args).await?;
            if ended.code == Some(0) {
                break;
            }
            if opts.ioengine == IoEngine::IoUring && io_uring_unavailable(&ended.messages) {
                opts.ioengine = IoEngine::Libaio;
                continue;
            }
            return Err(self.failed("precondition", &ended));
        }
        let round_opts = Options {
            runtime_s: round_s,
            ramp_s: 0,
            ..opts
        };
        let randwrite = TESTS[3];
        let mut rounds = Vec::new();
        let mut verdict = None;
        for i in 0..max_rounds.max(stats::STEADY_WINDOW) {
            let run = self.run(&randwrite, &round_opts, workdir, &format!("-ss{i}")).await?;
            rounds.push(run.metrics.iops);
            verdict = stats::steady_state(&rounds);
            if verdict.is_some_and(|v| v.reached) {
                break;
            }
        }
        Ok(Precondition {
            sequential_passes: 2,
            round_s,
            rounds_iops: rounds,
            steady_state: verdict,
        })
    }
}

/// What preconditioning did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    /// Full sequential writes of the target.
    pub sequential_passes: u32,
    /// Length of each steady-state round, s.
    pub round_s: u64,
    /// 4k random-write IOPS per round.
    pub rounds_iops: Vec<f64>,
    /// The verdict over the last five rounds.
    pub steady_state: Option<stats::SteadyState>,
}

fn last_line(s: &str) -> &str {
    s.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
}

/// How a fio run ended.
#[derive(Debug)]
struct Ended {
    /// Exit status (`None`: ended by a signal).
    code: Option<i32>,
    /// stderr, then stdout (then the jobs' errors, when those are all there is).
    messages: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_client_server_front_ends_output_gives_the_aggregate_and_each_clients_group() {
        // As fio 3.33's front end writes it with two servers: its lines first, then the document.
        let dir =
            |bw: f64, bytes: f64, ms: f64| json!({"bw_bytes": bw, "io_bytes": bytes, "runtime": ms, "total_ios": 16});
        let doc = json!({
            "fio version": "fio-3.33",
            "client_stats": [
                {"jobname": "w", "hostname": "127.0.0.1", "error": 0, "write": dir(699e6, 16777216.0, 24.0)},
                {"jobname": "w", "hostname": "/tmp/s2.sock", "error": 5, "write": dir(270e6, 16777216.0, 62.0)},
                {"jobname": "All clients", "hostname": "/tmp/s2.sock", "error": 0, "write": dir(541e6, 33554432.0, 62.0)}
            ]
        });
        let text = format!("<vm> w: (g=0): rw=write, bs=(R) 1024KiB\n<vm> Starting 2 threads\n\n{doc}");
        let out = parse(&text).unwrap();
        assert_eq!(out.jobs.len(), 1);
        assert_eq!(
            (out.jobs[0].name.as_str(), out.jobs[0].write.io_bytes),
            ("All clients", 33554432)
        );
        assert_eq!(out.clients.len(), 2);
        assert_eq!(out.clients[1].0, "/tmp/s2.sock");
        let m = out.metrics();
        assert_eq!(m.bw_bytes, 541e6, "fio's aggregate, not a sum of ours");
        assert_eq!(
            m.errors,
            ["w on /tmp/s2.sock: error 5 (Input/output error (os error 5))"]
        );
        // One client: its own group is the whole.
        let one = json!({"client_stats": [{"jobname": "w", "hostname": "h", "write": dir(1e9, 1.0, 1.0)}]});
        let out = parse(&one.to_string()).unwrap();
        assert_eq!((out.jobs.len(), out.clients.len(), out.metrics().bw_bytes), (1, 1, 1e9));
    }

    #[test]
    fn without_fios_all_clients_entry_the_aggregate_is_the_one_fio_would_have_printed() {
        // Two clients' groups of a metadata create as fio 3.33 printed them, and the "All
        // clients" entry it printed beside them (each client had one job section): name,
        // files, runtime ms, usr and sys CPU %, job runtime ms, IOPS, bytes per second.
        let rows = [
            ("t0", 4096, 68, 0.0, 91.044776, 67, 60235.294118, 246723764.0),
            ("t1", 4096, 76, 4.0, 78.666667, 75, 53894.736842, 220752842.0),
            (
                "All clients",
                8192,
                76,
                2.112676,
                84.507042,
                142,
                107789.473684,
                441505684.0,
            ),
        ];
        let groups: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, ios, ms, usr, sys, run, iops, bw)| {
                json!({"jobname": name, "hostname": format!("/r/{name}.sock"), "usr_cpu": usr, "sys_cpu": sys,
                       "job_runtime": run, "write": {"iops": iops, "bw_bytes": bw, "total_ios": ios,
                       "io_bytes": ios * 4096, "runtime": ms}})
            })
            .collect();
        let fios = parse(&json!({ "client_stats": groups }).to_string()).unwrap();
        // With several sections on a client, fio leaves the entry out; it is computed alike.
        let ours = parse(&json!({"client_stats": groups[..2]}).to_string()).unwrap();
        assert_eq!(
            (ours.jobs.len(), ours.clients.len()),
            (1, 2),
            "one aggregate beside each client"
        );
        let (f, o) = (&fios.jobs[0], &ours.jobs[0]);
        assert_eq!(o.name, "All clients");
        let whole = |j: &Job| {
            (
                j.write.total_ios,
                j.write.io_bytes,
                j.write.runtime_ms,
                j.write.bw_bytes,
            )
        };
        assert_eq!(whole(o), whole(f));
        for (mine, fio) in [
            (o.write.iops, f.write.iops),
            (o.usr_cpu, f.usr_cpu),
            (o.sys_cpu, f.sys_cpu),
        ] {
            assert!((mine - fio).abs() < 1e-5, "{mine} against fio's {fio}");
        }
        // All the files over the slower client's time, not the sum of the clients' rates.
        assert!((ours.metrics().iops - 8192.0 / 0.076).abs() < 1e-6);
    }

    #[test]
    fn job_args_carry_the_shared_options() {
        let opts = Options {
            target: "/tmp/a:b".into(),
            size: Some(4 << 30),
            offset: 1 << 20,
            runtime_s: 60,
            ramp_s: 5,
            numjobs: 2,
            ioengine: IoEngine::IoUring,
        };
        let a = job_args(
            &TESTS[4],
            &opts,
            IoEngine::IoUring,
            Path::new("/o.json"),
            Path::new("/l"),
        );
        for want in [
            "--filename=/tmp/a\\:b",
            "--size=4294967296",
            "--offset=1048576",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--iodepth=32",
            "--numjobs=2",
            "--ioengine=io_uring",
            "--direct=1",
            "--time_based",
            "--runtime=60",
            "--ramp_time=5",
            "--norandommap",
            "--randrepeat=0",
            "--refill_buffers",
            "--group_reporting",
            "--output-format=json",
            "--output=/o.json",
            "--write_iops_log=/l",
            "--log_avg_msec=1000",
        ] {
            assert!(a.iter().any(|x| x == want), "{want} missing from {a:?}");
        }
        assert_eq!(TESTS.iter().filter(|t| t.writes()).count(), 5);
    }

    #[test]
    fn select_keeps_suite_order_and_rejects_unknown_names() {
        let names: Vec<&str> = select("randread,seqread").unwrap().iter().map(|t| t.name).collect();
        assert_eq!(names, ["seqread", "randread"]);
        assert_eq!(select("all").unwrap().len(), 7);
        assert!(select("seqread,bogus").unwrap_err().to_string().contains("bogus"));
    }

    #[test]
    fn iops_logs_sum_jobs_and_directions_per_second() {
        let job1 = "1000, 100, 0, 4096, 0\n1000, 50, 1, 4096, 0\n2001, 120, 0, 4096, 0\n";
        let job2 = "999, 10, 0, 4096, 0\ngarbage\n";
        assert_eq!(parse_iops_logs([job1, job2]), vec![(1.0, 160.0), (2.0, 120.0)]);
    }

    #[test]
    fn io_uring_failures_are_recognised() {
        assert!(io_uring_unavailable(
            "fio: io_uring_queue_init: Operation not permitted\nfio: pid=12, err=1/file:engines/io_uring.c"
        ));
        assert!(io_uring_unavailable("fio: engine io_uring not loadable"));
        assert!(!io_uring_unavailable(
            "fio: pid=1, err=28/file:io_u.c:1889, error=No space left on device"
        ));
    }

    #[test]
    fn job_errors_are_reported_per_job() {
        let doc = r#"{"jobs":[{"jobname":"a","error":5,"read":{"iops":1.5},"new_field":[1]},
                     {"jobname":"b","error":0,"write":{"iops":2,"bw_bytes":8192}}]}"#;
        let m = parse(doc).unwrap().metrics();
        assert_eq!((m.iops, m.write_bw_bytes), (3.5, 8192.0));
        assert_eq!(m.errors.len(), 1);
        assert!(m.errors[0].starts_with("a: error 5 ("), "{:?}", m.errors);
        assert!(parse("fio: nothing here").is_err());
    }
}
