//! A file-system run end to end. [`FsRun::new`] checks everything before anything is written
//! and refuses: a target that is not an existing empty directory on the file system the user
//! named ([`super::mount::check`]), too little free space for the largest step, a sweep a
//! client cannot run (more threads than it has cores, unless asked; more threads than fio
//! allows; metadata threads without a directory of their own), clients whose fio versions
//! differ (the front end's here among them). [`run`] then starts fio's server on every client
//! of a run with several ([`super::servers`]), writes the manifest on the first client and
//! reads it back on every other (the marker proving they all see one file system), writes the
//! root, runs every step's operations with power sampled from every BMC around each fio run,
//! removes each step's files after it, and always removes everything it created at the end
//! (through the first client still reachable) and stops the servers, also when a step fails,
//! a client's SSH connection is lost, or the run is stopped; the error then says where the
//! run stopped and whether that cleanup was complete.
//!
//! fio's front end runs on this host: it writes the job files and reads fio's JSON in the
//! work directory here. With one client that is this host fio runs the jobs itself; with
//! several, fio's client/server mode runs each client's job file on its server, all starting
//! each step together, and fio's own aggregate over all clients is the point's figure.

use super::Test;
use super::job::{Phase, Step};
use super::layout::{self, MANIFEST, Manifest, ROOT};
use super::mount::{self, FileSystem};
use super::servers::Servers;
use super::sizes::{self, FIO_MAX_JOBS, MAX_DEFAULT_THREADS, Method, Sizes};
use crate::exec::{self, Exec};
use crate::fio::{self, Fio};
use crate::power;
use crate::report::{
    BenchReport, BmcInfo, BmcPower, ClientInfo, ClientRun, Curve, FileSystemBench, PhaseRun, Point, curve_name,
};
use crate::run::{Common, NamedPower, Progress, measured_each, unreliable_power};
use crate::ssh::Transport;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// fio runs shorter than this (ms) are timed too coarsely to trust to the percent.
const SHORT_MS: u64 = 100;

/// A machine that runs threads of the benchmark.
#[derive(Clone, Copy)]
pub struct Client<'a> {
    /// How its files and programs are reached (listings, `mkdir`, `fio --version`).
    pub exec: &'a dyn Exec,
    /// How fio's server is started on it and reached from here (fio's client/server mode);
    /// `None` for a client that runs fio itself, which only a run with one client may have.
    pub server: Option<&'a Transport>,
}

impl std::fmt::Debug for Client<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("exec", &self.exec.describe())
            .field("server", &self.server.map(Transport::describe))
            .finish()
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct FsSettings {
    /// An existing, empty directory on the file system to test.
    pub target: PathBuf,
    /// The file system's type as the kernel names it; without it, the target must be a mount
    /// point of its own.
    pub fs_type: Option<String>,
    /// Comma-separated tests, or `all` ([`Test::select`]).
    pub tests: String,
    /// The sweep (threads across all clients); default 1, 2, 4 … up to the clients' cores.
    pub threads: Option<Vec<u32>>,
    /// Allow more threads on a client than it has cores.
    pub oversubscribe: bool,
    /// The papers' sizes or the quick mode's; the options below override them.
    pub method: Method,
    /// Bytes of data per step of the sequential and random tests.
    pub data_size: Option<u64>,
    /// The largest RAM of the file system's servers, which the data must also exceed twice.
    pub server_memory: Option<u64>,
    /// Transfer size of the sequential tests.
    pub record_size: Option<u64>,
    /// Transfer size of the random test.
    pub random_record_size: Option<u64>,
    /// Bytes of random I/O per operation and step.
    pub random_io: Option<u64>,
    /// The longest a random operation may run.
    pub random_runtime: Option<Duration>,
    /// Metadata files per step.
    pub md_files: Option<u64>,
    /// Metadata file sizes.
    pub md_file_sizes: Option<Vec<u64>>,
    /// Where fio's job files and JSON go, on this host.
    pub workdir: PathBuf,
    /// Shared settings.
    pub common: Common,
}

impl Default for FsSettings {
    fn default() -> Self {
        Self {
            target: PathBuf::new(),
            fs_type: None,
            tests: "all".into(),
            threads: None,
            oversubscribe: false,
            method: Method::Published,
            data_size: None,
            server_memory: None,
            record_size: None,
            random_record_size: None,
            random_io: None,
            random_runtime: None,
            md_files: None,
            md_file_sizes: None,
            workdir: PathBuf::new(),
            common: Common::default(),
        }
    }
}

/// A run that passed its checks.
#[derive(Debug)]
pub struct FsRun<'a> {
    settings: FsSettings,
    clients: Vec<Client<'a>>,
    /// Where fio's front end runs (this host).
    here: Client<'a>,
    tests: Vec<Test>,
    sizes: Sizes,
    threads: Vec<u32>,
    cores: Vec<u32>,
    file_system: FileSystem,
    infos: Vec<ClientInfo>,
    fio_version: String,
    cache_limit: u64,
}

/// A client's cores: physical ones where the OS tells them, else logical CPUs.
fn cores_of(info: &ClientInfo) -> u32 {
    let n = if info.host.cores > 0 {
        info.host.cores
    } else {
        info.host.logical_cpus
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<'a> FsRun<'a> {
    /// Checks everything before anything is written (see the module's documentation); `here`
    /// runs fio's front end (this host).
    pub async fn new(settings: FsSettings, clients: Vec<Client<'a>>, here: &'a dyn Exec) -> Result<Self> {
        if clients.is_empty() {
            return Err(Error::BadInput("a file-system run needs a client".into()));
        }
        if clients.len() > 1
            && let Some(c) = clients.iter().find(|c| c.server.is_none())
        {
            return Err(Error::BadInput(format!(
                "{} clients, but {} runs fio itself: with several clients each runs fio's server, reached from here",
                clients.len(),
                c.exec.describe()
            )));
        }
        let tests = Test::select(&settings.tests)?;
        let mut infos = Vec::new();
        let mut versions = Vec::new();
        for c in &clients {
            infos.push(ClientInfo {
                name: c.exec.describe(),
                host: c.exec.host_info().await?,
            });
            versions.push((c.exec.describe(), Fio::new(c.exec).version().await?));
        }
        if clients.iter().any(|c| c.server.is_some()) {
            versions.push((
                format!("{} (fio's front end)", here.describe()),
                Fio::new(here).version().await?,
            ));
        }
        if let Some((name, v)) = versions.iter().find(|(_, v)| *v != versions[0].1) {
            return Err(Error::Refused(format!(
                "the clients run different fio versions ({} on {}, {v} on {name}): their figures would not compare",
                versions[0].1, versions[0].0
            )));
        }
        let ram = infos
            .iter()
            .filter_map(|i| i.host.memory_bytes)
            .chain(settings.server_memory)
            .max();
        let sizes = sizes(&settings, ram)?;
        let cores: Vec<u32> = infos.iter().map(cores_of).collect();
        let threads = match &settings.threads {
            Some(t) => {
                let mut t = t.clone();
                t.sort_unstable();
                t.dedup();
                t
            }
            None => {
                let max = if settings.method == Method::Quick {
                    8
                } else {
                    MAX_DEFAULT_THREADS
                };
                sizes::sweep(cores.iter().sum(), max)
            }
        };
        check_sweep(&threads, &tests, &sizes, &cores, &infos, settings.oversubscribe)?;
        let mut file_system = FileSystem::default();
        for c in &clients {
            file_system = check_target(c.exec, &settings, &tests, &sizes, &threads).await?;
        }
        Ok(Self {
            cache_limit: ram.map_or(0, |r| 2 * r),
            fio_version: versions.swap_remove(0).1,
            settings,
            clients,
            here: Client {
                exec: here,
                server: None,
            },
            tests,
            sizes,
            threads,
            cores,
            file_system,
            infos,
        })
    }

    /// The sizes the run uses.
    pub fn sizes(&self) -> &Sizes {
        &self.sizes
    }

    /// The sweep.
    pub fn threads(&self) -> &[u32] {
        &self.threads
    }

    /// The clients reached through fio's server, in order (none when fio runs itself).
    fn server_transports(&self) -> Vec<&'a Transport> {
        self.clients.iter().filter_map(|c| c.server).collect()
    }

    /// fio's `--alloc-size` for the servers: enough for the most metadata files one client's
    /// job lists in the sweep.
    fn server_alloc_kib(&self) -> Option<u64> {
        if !self.tests.contains(&Test::Metadata) {
            return None;
        }
        let most = self
            .threads
            .iter()
            .flat_map(|t| {
                let dirs = self.sizes.md_dirs_per_thread(*t);
                sizes::round_robin(*t, self.clients.len())
                    .into_iter()
                    .map(move |n| dirs * u64::from(n))
            })
            .max()
            .unwrap_or(0);
        super::job::alloc_kib(most * self.sizes.md_files_per_dir)
    }

    /// Refuses clients that do not see the file `lead` wrote at `path` as it wrote it: they
    /// do not share one file system (or not at that path), so their threads would not meet.
    async fn same_file_system(&self, path: &Path, text: &str) -> Result<()> {
        let lead = self.clients[0].exec.describe();
        for c in &self.clients[1..] {
            let seen = c.exec.read(path).await?;
            if seen.as_deref() != Some(text) {
                return Err(Error::Refused(format!(
                    "{} does not see the file {lead} wrote at {} ({}): the clients do not share one file system \
                     at --target, so their threads would not meet on it",
                    c.exec.describe(),
                    path.display(),
                    if seen.is_some() {
                        "it sees another file there"
                    } else {
                        "it sees no file there"
                    }
                )));
            }
        }
        Ok(())
    }
}

/// The run's sizes: the method's, with the settings' overrides.
fn sizes(s: &FsSettings, ram: Option<u64>) -> Result<Sizes> {
    let mut sizes = match (s.method, ram, s.data_size) {
        (Method::Quick, _, _) => Sizes::quick(),
        (Method::Published, Some(ram), _) => Sizes::published(ram),
        (Method::Published, None, Some(_)) => Sizes::published(0),
        (Method::Published, None, None) => {
            return Err(Error::BadInput(
                "the clients' memory cannot be read, and the published data size is twice it: give --data-size".into(),
            ));
        }
    };
    let set = |v: Option<u64>, field: &mut u64| {
        if let Some(v) = v {
            *field = v;
        }
    };
    set(s.data_size, &mut sizes.data_bytes);
    set(s.record_size, &mut sizes.record_bytes);
    set(s.random_record_size, &mut sizes.random_record_bytes);
    set(s.random_io, &mut sizes.random_io_bytes);
    set(
        s.random_runtime.map(|d| d.as_secs().max(1)),
        &mut sizes.random_runtime_s,
    );
    set(s.md_files, &mut sizes.md_files);
    if let Some(list) = &s.md_file_sizes {
        sizes.md_file_sizes.clone_from(list);
    }
    for (name, v) in [
        ("--record-size", sizes.record_bytes),
        ("--random-record-size", sizes.random_record_bytes),
    ] {
        if v == 0 || !v.is_multiple_of(512) {
            return Err(Error::BadInput(format!(
                "{name} {v}: give a multiple of 512 bytes (direct I/O needs it)"
            )));
        }
    }
    if sizes.data_bytes == 0 || sizes.md_file_sizes.is_empty() {
        return Err(Error::BadInput(
            "--data-size and --md-file-sizes must not be zero or empty".into(),
        ));
    }
    Ok(sizes)
}

/// Refuses a sweep the clients cannot run.
fn check_sweep(
    threads: &[u32],
    tests: &[Test],
    sizes: &Sizes,
    cores: &[u32],
    infos: &[ClientInfo],
    oversubscribe: bool,
) -> Result<()> {
    if threads.is_empty() || threads[0] == 0 {
        return Err(Error::BadInput("--threads: give thread counts of 1 or more".into()));
    }
    let top = threads[threads.len() - 1];
    if top > FIO_MAX_JOBS {
        return Err(Error::BadInput(format!(
            "--threads {top}: fio runs at most {FIO_MAX_JOBS} threads at once"
        )));
    }
    for (k, n) in sizes::round_robin(top, cores.len()).iter().enumerate() {
        if *n > cores[k] && !oversubscribe {
            return Err(Error::Refused(format!(
                "{top} threads put {n} on {}, which has {} cores: threads beyond the cores measure context \
                 switching, not the file system. Give a sweep up to {} (--threads), or --oversubscribe to run it anyway",
                infos[k].name, cores[k], cores[k]
            )));
        }
    }
    if tests.contains(&Test::Metadata) && sizes.md_dirs_per_thread(top) == 0 {
        return Err(Error::BadInput(format!(
            "--md-files {}: at {} files a directory that is {} directories, fewer than the {top} threads of \
             the sweep (each thread needs a directory of its own); give --md-files {} or more",
            sizes.md_files,
            sizes.md_files_per_dir,
            sizes.md_files / sizes.md_files_per_dir.max(1),
            u64::from(top) * sizes.md_files_per_dir
        )));
    }
    Ok(())
}

/// Refuses a target that is not an existing empty directory on the file system meant, or one
/// without room for the largest step; returns the file system.
async fn check_target(
    exec: &dyn Exec,
    s: &FsSettings,
    tests: &[Test],
    sizes: &Sizes,
    threads: &[u32],
) -> Result<FileSystem> {
    let target = &s.target;
    let on = exec.describe();
    let Some(entries) = exec.entries(target, false).await? else {
        return Err(Error::Refused(format!(
            "--target {} on {on} is not an existing directory (rftune does not create the directory it tests)",
            target.display()
        )));
    };
    let fs = mount::check(target, &exec.mount(target).await?, s.fs_type.as_deref(), &on)?;
    if !entries.is_empty() {
        let leftover = entries
            .iter()
            .any(|e| e.path == Path::new(MANIFEST) || e.path == Path::new(ROOT));
        let mut names: Vec<String> = entries.iter().take(3).map(|e| e.path.display().to_string()).collect();
        if entries.len() > 3 {
            names.push("…".into());
        }
        return Err(Error::Refused(format!(
            "--target {} on {on} is not empty ({} entries: {}): rftune writes only into an empty directory, so \
             that it can remove everything it wrote and nothing else{}",
            target.display(),
            entries.len(),
            names.join(", "),
            if leftover {
                format!(
                    ". A killed run left its files there: `rftune bench fs --target {} --cleanup` removes them",
                    target.display()
                )
            } else {
                String::new()
            }
        )));
    }
    let need = tests
        .iter()
        .flat_map(|t| threads.iter().map(|n| sizes.footprint(*t, *n)))
        .max()
        .unwrap_or(0);
    let (available, total) = exec.space(target).await?;
    let keep = crate::target::margin(total);
    if need.saturating_add(keep) > available {
        return Err(Error::Refused(format!(
            "the largest step needs {} on {} ({} on {on}), plus {} that must stay free, but only {} is available; \
             give a smaller --data-size or --md-files, or free some space",
            crate::units::approx_size(need),
            fs.mount_point,
            fs.fs_type,
            crate::units::approx_size(keep),
            crate::units::approx_size(available)
        )));
    }
    Ok(fs)
}

/// Runs a checked run (see the module's documentation) and returns the document. `bmcs`
/// describe the servers whose power `power` reads, one source each, in the same order.
pub async fn run(
    run: &FsRun<'_>,
    bmcs: &[BmcInfo],
    power: &[NamedPower<'_>],
    progress: &dyn Progress,
) -> Result<BenchReport> {
    let started_at = crate::utc_now();
    let target = &run.settings.target;
    let transports = run.server_transports();
    let mut servers = if transports.is_empty() {
        None
    } else {
        progress.message(&format!(
            "starting fio's server on {} clients: {}",
            transports.len(),
            transports.iter().map(|t| t.describe()).collect::<Vec<_>>().join(", ")
        ));
        Some(Servers::start(&transports, run.server_alloc_kib()).await?)
    };
    let lead = run.clients[0].exec;
    let host = run.infos[0].host.hostname.clone().unwrap_or_else(|| lead.describe());
    let manifest = serde_json::to_string_pretty(&Manifest::new(&host)).unwrap_or_default();
    let manifest_path = target.join(MANIFEST);
    if let Err(e) = lead.create_new(&manifest_path, &manifest).await {
        if let Some(s) = servers {
            s.stop().await;
        }
        return Err(e);
    }
    let measured = async {
        run.same_file_system(&manifest_path, &manifest).await?;
        lead.make_dir(&target.join(ROOT)).await?;
        Sweep::new(run, power, progress, servers.as_mut()).curves().await
    }
    .await;
    if let Some(s) = servers {
        s.stop().await;
    }
    let cleanup = cleanup_through_any(run, target).await;
    let cleaned = match &cleanup {
        Ok((_, c)) if c.complete => "everything this run created was removed".to_owned(),
        Ok((_, c)) => format!(
            "what this run created was removed, but for the directories holding {} entries rftune did not \
             create ({})",
            c.left.len(),
            c.left.join(", ")
        ),
        Err(e) => format!(
            "removing what this run created failed ({e}); `rftune bench fs --target {} --cleanup` finishes it",
            target.display()
        ),
    };
    let (curves, mut problems) = measured.map_err(|e| Error::Failed {
        what: format!("benchmarking {} failed; {cleaned}", target.display()),
        source: Box::new(e),
    })?;
    if !matches!(&cleanup, Ok((_, c)) if c.complete) {
        problems.push(cleaned);
    }
    let mut r = BenchReport::new(
        "filesystem",
        run.settings.common.label.clone(),
        started_at,
        run.infos[0].host.clone(),
    );
    r.power_caveat = power.first().and_then(|(_, p)| p.caveat());
    let points = curves.iter().flat_map(|c| c.points.iter());
    let (total, cached) = points.fold((0, 0), |(n, c), p| (n + 1, c + usize::from(p.cache_affected)));
    if cached > 0 {
        problems.push(format!(
            "{cached} of {total} points are cache-affected: their data sets are under twice the largest RAM ({}), so \
             caches may have answered (marked in the charts and tables)",
            crate::units::approx_size(run.cache_limit)
        ));
    }
    let short = curves
        .iter()
        .flat_map(|c| c.points.iter().flat_map(|p| p.runs.iter()))
        .filter(|r| r.runtime_ms < SHORT_MS)
        .count();
    if short > 0 {
        problems.push(format!(
            "{short} fio runs took under {SHORT_MS} ms: fio counts whole milliseconds, so their rates may be off by \
             a few percent or more; larger --md-files or --data-size make the steps longer"
        ));
    }
    for c in &curves {
        for p in c.points.iter().filter(|p| !p.valid) {
            let errors: Vec<&str> = p
                .runs
                .iter()
                .flat_map(|r| r.errors.iter().map(String::as_str))
                .collect();
            problems.push(format!(
                "{} at {} threads: {}",
                c.name(),
                p.threads,
                if errors.is_empty() {
                    "no operation completed".to_owned()
                } else {
                    errors.join("; ")
                }
            ));
            r.valid = false;
        }
    }
    r.problems = problems;
    r.filesystem = Some(FileSystemBench {
        method: Some(run.settings.method),
        target: target.display().to_string(),
        file_system: run.file_system.clone(),
        clients: run.infos.clone(),
        bmcs: bmcs.to_vec(),
        tests: run.tests.clone(),
        threads: run.threads.clone(),
        sizes: run.sizes.clone(),
        cache_limit_bytes: run.cache_limit,
        oversubscribe: run.settings.oversubscribe,
        repeat: run.settings.common.repeat,
        plateau_tolerance: crate::report::PLATEAU_TOLERANCE,
        fio_version: Some(run.fio_version.clone()),
        curves,
    });
    r.finished_at = crate::utc_now();
    Ok(r)
}

/// The first server whose connection ends ([`Servers::lost`], looked at four times a second);
/// never, without servers.
async fn watch(servers: Option<&mut Servers>) -> String {
    let Some(servers) = servers else {
        return std::future::pending().await;
    };
    loop {
        if let Some(lost) = servers.lost() {
            return lost;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The error of a client whose connection ended during `at`.
fn lost_at(lost: &str, at: &str) -> Error {
    Error::NoAnswer(format!(
        "lost the connection to {lost} during {at}: the run stopped there, and fio's servers were stopped"
    ))
}

/// `, 2+2 on 2 clients` for a step spread over several clients; nothing for one.
fn split(per_client: &[u32]) -> String {
    if per_client.len() < 2 {
        return String::new();
    }
    let parts: Vec<String> = per_client.iter().map(u32::to_string).collect();
    format!(" ({} on {} clients)", parts.join("+"), per_client.len())
}

/// Removes what the run created through the first client that can still do it (a client whose
/// connection was lost may not answer; they all see the same files).
async fn cleanup_through_any(run: &FsRun<'_>, target: &Path) -> Result<(String, layout::Cleanup)> {
    let mut first_error = None;
    for c in &run.clients {
        match layout::cleanup(c.exec, target).await {
            Ok(done) => return Ok((c.exec.describe(), done)),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| Error::BadInput("no client".into())))
}

/// The measuring part of a run.
struct Sweep<'r, 'a> {
    run: &'r FsRun<'a>,
    power: &'r [NamedPower<'r>],
    progress: &'r dyn Progress,
    /// fio's servers on the clients, when there are several.
    servers: Option<&'r mut Servers>,
    root: PathBuf,
    /// fio runs done and to do, for progress.
    done: usize,
    total: usize,
    problems: Vec<String>,
}

impl<'r, 'a> Sweep<'r, 'a> {
    fn new(
        run: &'r FsRun<'a>,
        power: &'r [NamedPower<'r>],
        progress: &'r dyn Progress,
        servers: Option<&'r mut Servers>,
    ) -> Self {
        let sizes_of = |t: &Test| {
            if *t == Test::Metadata {
                run.sizes.md_file_sizes.len()
            } else {
                1
            }
        };
        let per_step: usize = run.tests.iter().map(|t| sizes_of(t) * t.ops().len()).sum();
        Self {
            run,
            power,
            progress,
            servers,
            root: run.settings.target.join(ROOT),
            done: 0,
            total: per_step * run.threads.len() * run.settings.common.repeat as usize,
            problems: Vec::new(),
        }
    }

    /// Every curve, test after test, each over the whole sweep.
    async fn curves(mut self) -> Result<(Vec<Curve>, Vec<String>)> {
        let run = self.run;
        let mut curves = Vec::new();
        for &test in &run.tests {
            let file_sizes: Vec<Option<u64>> = if test == Test::Metadata {
                run.sizes.md_file_sizes.iter().copied().map(Some).collect()
            } else {
                vec![None]
            };
            for file_size in file_sizes {
                let mut points: Vec<Vec<Point>> = vec![Vec::new(); test.ops().len()];
                for &threads in &run.threads {
                    for (i, p) in self.step(test, threads, file_size).await?.into_iter().enumerate() {
                        points[i].push(p);
                    }
                }
                for (op, points) in test.ops().iter().zip(points) {
                    curves.push(Curve::new(test, *op, file_size, points));
                }
            }
        }
        Ok((curves, self.problems))
    }

    /// One step's repeats: a point per operation.
    async fn step(&mut self, test: Test, threads: u32, file_size: Option<u64>) -> Result<Vec<Point>> {
        let run = self.run;
        let exec = run.clients[0].exec;
        let per_client = sizes::round_robin(threads, run.clients.len());
        let root = self.root.clone();
        let step = Step {
            test,
            threads,
            per_client: per_client.clone(),
            file_size: file_size.unwrap_or(0),
            root: &root,
            sizes: &run.sizes,
        };
        let test_dir = Path::new(layout::test_dir(test));
        let mut runs: Vec<Vec<PhaseRun>> = vec![Vec::new(); test.ops().len()];
        let repeat = run.settings.common.repeat;
        for rep in 0..repeat {
            exec.create_dirs(&self.directories(&step)).await?;
            if test == Test::Random {
                self.progress.message(&format!(
                    "random: laying out {} threads' files ({}) before measuring",
                    threads,
                    crate::units::approx_size(run.sizes.per_thread(threads) * u64::from(threads))
                ));
                self.fio(
                    &step,
                    Phase::LayOut,
                    &format!("{}-lay-out-t{threads}-r{}", test.name(), rep + 1),
                    &format!("laying out random at {threads} threads, run {}/{repeat}", rep + 1),
                )
                .await?;
            }
            for (i, op) in test.ops().iter().enumerate() {
                self.done += 1;
                let curve = curve_name(test, *op, file_size);
                let at = format!(
                    "{curve} at {threads} thread{}{}, run {}/{repeat}",
                    if threads == 1 { "" } else { "s" },
                    split(&per_client),
                    rep + 1
                );
                self.progress.message(&format!("[{}/{}] {at}", self.done, self.total));
                let name = format!("{}-t{threads}-r{}", curve.replace(' ', "-"), rep + 1);
                runs[i].push(self.fio(&step, Phase::Measure(*op), &name, &at).await?);
            }
            layout::remove_ours(exec, &root, test_dir).await?;
        }
        let oversubscribed = per_client.iter().zip(&run.cores).any(|(n, c)| n > c);
        let data_set = run.sizes.data_set(test, threads, file_size);
        Ok(runs
            .into_iter()
            .map(|r| {
                Point::new(
                    test.measure(),
                    threads,
                    per_client.clone(),
                    data_set,
                    run.cache_limit,
                    oversubscribed,
                    r,
                )
            })
            .collect())
    }

    /// The directories a step needs before fio runs: its test's, and for metadata every
    /// thread's tree.
    fn directories(&self, step: &Step<'_>) -> Vec<PathBuf> {
        let dir = self.root.join(layout::test_dir(step.test));
        if step.test != Test::Metadata {
            return vec![dir];
        }
        let dirs = self.run.sizes.md_dirs_per_thread(step.threads);
        (0..step.threads)
            .flat_map(|t| {
                let thread = dir.join(layout::thread_dir(t));
                (0..dirs).map(move |d| thread.join(layout::md_dir(d)))
            })
            .collect()
    }

    /// One fio run of `phase` named `name` (its job files and JSON in the work directory), with
    /// power sampled around it when it is measured; `at` says where in the sweep it is, for
    /// the error when a client's connection is lost.
    async fn fio(&mut self, step: &Step<'_>, phase: Phase, name: &str, at: &str) -> Result<PhaseRun> {
        let run = self.run;
        let workdir = &run.settings.workdir;
        std::fs::create_dir_all(workdir).map_err(crate::io_err(format!("creating {}", workdir.display())))?;
        let json_path = workdir.join(format!("{name}.json"));
        let _ = std::fs::remove_file(&json_path);
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text).map_err(crate::io_err(format!("writing {}", path.display())))
        };
        let mut argv = vec![
            "fio".to_owned(),
            "--output-format=json".to_owned(),
            format!("--output={}", json_path.display()),
        ];
        let exec = match self.servers.as_deref_mut() {
            None => {
                let job = step.job(phase, 0);
                let job_path = workdir.join(format!("{name}.fio"));
                write(&job_path, &job.text)?;
                if let Some(kib) = job.alloc_kib {
                    argv.push(format!("--alloc-size={kib}"));
                }
                argv.push(job_path.display().to_string());
                run.clients[0].exec
            }
            Some(servers) => {
                let mut jobs = Vec::new();
                let mut alloc = None;
                for (k, n) in step.per_client.iter().enumerate() {
                    if *n == 0 {
                        jobs.push(None);
                        continue;
                    }
                    let job = step.job(phase, k);
                    let path = workdir.join(format!("{name}.c{k}.fio"));
                    write(&path, &job.text)?;
                    alloc = alloc.max(job.alloc_kib);
                    jobs.push(Some(path));
                }
                if let Some(kib) = alloc {
                    argv.push(format!("--alloc-size={kib}"));
                }
                if let Some(lost) = servers.lost() {
                    return Err(lost_at(&lost, at));
                }
                argv.extend(servers.front_end_args(&jobs.iter().map(Option::as_deref).collect::<Vec<_>>()));
                run.here.exec
            }
        };
        let sources = if matches!(phase, Phase::Measure(_)) {
            self.power
        } else {
            &[]
        };
        // A server whose connection ends mid-run stops the run at once: fio's front end would
        // wait for the other clients' share to end first.
        let measured = measured_each(sources, &run.settings.common, &mut self.problems, exec.run(&argv, None));
        let (out, traces) = tokio::select! {
            measured = measured => measured?,
            lost = watch(self.servers.as_deref_mut()) => return Err(lost_at(&lost, at)),
        };
        if let Some(lost) = self.servers.as_deref_mut().and_then(Servers::lost) {
            return Err(lost_at(&lost, at));
        }
        let text = std::fs::read_to_string(&json_path).unwrap_or_default();
        let failed = || {
            exec::program_failed(
                format!("fio ({name}, {})", exec.describe()),
                out.code,
                &format!("{}{}", out.stderr, out.stdout_text()),
            )
        };
        let parsed = fio::parse(&text)
            .ok()
            .filter(|p| !p.jobs.is_empty())
            .ok_or_else(failed)?;
        let metrics = parsed.metrics();
        if out.code != Some(0) && metrics.errors.is_empty() {
            return Err(failed());
        }
        let group = &parsed.jobs[0];
        let measure = step.test.measure();
        let value = match measure {
            super::Measure::Bandwidth => metrics.bw_bytes / 1e9,
            super::Measure::Iops | super::Measure::Ops => metrics.iops,
        };
        let mut power = Vec::new();
        for (host, samples) in traces {
            if let Some(stats) = power::stats(&samples) {
                unreliable_power(
                    " per step",
                    Some(&stats),
                    "larger sizes make the steps longer",
                    &mut self.problems,
                );
                power.push(BmcPower { host, stats });
            }
        }
        let power_w = (!power.is_empty()).then(|| power.iter().map(|p| p.stats.average_w).sum());
        // fio names each client's group by the address it reached it at (here, its socket),
        // in an order of its own.
        let sockets = self.servers.as_deref().map(Servers::sockets).unwrap_or_default();
        let mut clients: Vec<ClientRun> = parsed
            .clients
            .iter()
            .filter_map(|(at, job)| {
                let k = sockets.iter().position(|s| s == at)?;
                Some(ClientRun {
                    client: run.infos.get(k).map(|i| i.name.clone()).unwrap_or_default(),
                    threads: step.per_client.get(k).copied().unwrap_or(0),
                    value: match measure {
                        super::Measure::Bandwidth => (job.read.bw_bytes + job.write.bw_bytes) / 1e9,
                        super::Measure::Iops | super::Measure::Ops => job.read.iops + job.write.iops,
                    },
                    bytes: job.read.io_bytes + job.write.io_bytes,
                    index: k,
                })
            })
            .collect();
        clients.sort_by_key(|c| c.index);
        Ok(PhaseRun {
            value,
            ops: group.read.total_ios + group.write.total_ios,
            bytes: group.read.io_bytes + group.write.io_bytes,
            runtime_ms: group.read.runtime_ms.max(group.write.runtime_ms),
            latency: metrics.read_lat.or(metrics.write_lat),
            usr_cpu: metrics.usr_cpu,
            sys_cpu: metrics.sys_cpu,
            power,
            power_w,
            fio_output: json_path
                .strip_prefix(workdir.parent().unwrap_or(workdir))
                .unwrap_or(&json_path)
                .display()
                .to_string(),
            errors: metrics.errors,
            clients,
        })
    }
}
