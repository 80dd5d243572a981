//! `rftune bench storage|memory|fs|compare`: Dell's seven-test fio suite, STREAM, and the
//! file-system sweeps of Dell's HPC storage designs on this host, with power sampled from the
//! servers' BMCs (`--bmc`) for performance per watt, written as an `rftune.bench/v1` document,
//! CSV rows and a self-contained HTML report; and two such documents compared. The runs are
//! host-bench's (`host_bench::run`, `host_bench::filesystem`); this module reads the arguments,
//! connects the BMCs (whose meters are the runs' power sources), catches the signals that stop
//! a run, writes the files and renders.

use crate::Exit;
use crate::args::OutputFormat;
use crate::args::bench::{
    BenchCommand, CommonArgs, CompareArgs, EngineArg, FailOn, FsArgs, MemoryArgs, RunArgs, StorageArgs,
};
use crate::render::{self, Progress, Table};
use anyhow::{Context, Result, bail};
use host_bench::chart::format_value;
use host_bench::exec::Local;
use host_bench::filesystem::{self, Client, FsRun, FsSettings, Method, Test};
use host_bench::fio::{self, IoEngine};
use host_bench::power;
use host_bench::report::{BenchReport, BmcInfo, CurvePeak, FileSystemBench, Plateau};
use host_bench::run::{
    self as bench_run, MemoryRun, MemorySettings, NamedPower, NoPower, PowerSource, StorageRun, StorageSettings,
};
use host_bench::ssh::{OnHost, SshTarget, Transport};
use host_bench::{Stop, device, stream};
use rftune_engine::connect::Bmc;
use rftune_engine::fleet::{self, BmcEntry};
use rftune_engine::lifecycle::Access;
use rftune_engine::meter::Meter;
use rftune_engine::state::StateDirs;
use rftune_experiment::compare::{self, BenchComparison, Verdict};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs `rftune bench ...`.
pub async fn run(cmd: &BenchCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        BenchCommand::Storage(a) => storage(a, dirs, output).await,
        BenchCommand::Memory(a) => memory(a, dirs, output).await,
        BenchCommand::Fs(a) => fs(a, dirs, output).await,
        BenchCommand::Compare(a) => compare(a, output),
    }
}

/// The BMC side of a run: the connection, and what it said before the run.
struct Server {
    bmc: Bmc,
    said: bench_run::BmcFacts,
}

/// Connects the BMC of `entry` and reads what the document records of its server; the
/// session stays open for the run's power readings.
async fn open_server(access: &Access, entry: &BmcEntry) -> Result<Server> {
    let mut bmc = access.open(entry, None, false).await?;
    match rftune_engine::bench::bmc_facts(&mut bmc).await {
        Ok(said) => Ok(Server { bmc, said }),
        Err(e) => {
            bmc.close().await;
            Err(e.into())
        }
    }
}

/// The server of `--bmc`, connected.
async fn connect_bmc(common: &CommonArgs, dirs: &StateDirs) -> Result<Option<Server>> {
    let Some(url) = &common.bmc else { return Ok(None) };
    let entry = BmcEntry::from_url(url)?;
    let access = crate::config::access_one(&common.connect, &entry, dirs)?;
    Ok(Some(open_server(&access, &entry).await?))
}

/// The servers of every `--bmc`, or of `--inventory` (narrowed by `--tag`), connected one after
/// the other; none is left open if one fails.
async fn connect_bmcs(args: &FsArgs, dirs: &StateDirs) -> Result<Vec<Server>> {
    let entries = match &args.inventory {
        Some(path) => {
            let chosen = fleet::filter_tags(fleet::read_inventory(path)?, &args.tags);
            if chosen.is_empty() {
                bail!(
                    "no host in {} carries the tags {}",
                    path.display(),
                    args.tags.join(", ")
                );
            }
            chosen
        }
        None => args
            .bmcs
            .iter()
            .map(|u| BmcEntry::from_url(u))
            .collect::<Result<_, _>>()?,
    };
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let connect = crate::credentials::connect_config(&args.connect, &entries)?;
    let access = Access::new(connect, dirs.clone(), std::sync::Arc::new(render::Notices));
    let mut servers = Vec::new();
    for entry in &entries {
        match open_server(&access, entry).await {
            Ok(s) => servers.push(s),
            Err(e) => {
                for s in &servers {
                    s.bmc.close().await;
                }
                return Err(e);
            }
        }
    }
    Ok(servers)
}

/// Connects the BMC (with `--bmc`) and builds its meter once: the sensor and idle baseline for
/// the document, then the power source of `run`, which a spinner follows. Closes the BMC's
/// session, then writes and renders the document.
async fn run_and_finish(
    common: &CommonArgs,
    dirs: &StateDirs,
    output: OutputFormat,
    dir: &Path,
    table: fn(&BenchReport) -> String,
    run: impl AsyncFnOnce(
        Option<&bench_run::BmcFacts>,
        &dyn PowerSource,
        &dyn bench_run::Progress,
    ) -> host_bench::Result<BenchReport>,
) -> Result<Exit> {
    create_dir(dir)?;
    let mut server = connect_bmc(common, dirs).await?;
    let report = match server.as_mut() {
        Some(Server { bmc, said }) => {
            metered(bmc, said, common.run.idle, async |meter, said| {
                spinning(output, async |progress| run(Some(said), meter, progress).await).await
            })
            .await
        }
        None => spinning(output, async |progress| run(None, &NoPower, progress).await).await,
    };
    if let Some(s) = &server {
        s.bmc.close().await;
    }
    finish(report?, dir, output, table)
}

/// Builds the BMC's meter, records its sensor and the idle baseline in `said`, then runs `work`
/// with both.
async fn metered(
    bmc: &mut Bmc,
    said: &mut bench_run::BmcFacts,
    idle: Duration,
    work: impl AsyncFnOnce(&Meter<'_>, &bench_run::BmcFacts) -> Result<BenchReport>,
) -> Result<BenchReport> {
    let meter = Meter::new(bmc).await?;
    rftune_engine::bench::record_idle_power(&meter, idle, &mut said.info).await?;
    work(&meter, said).await
}

/// A benchmark's progress: the spinner's message on a terminal; off one (CI, cron, a pipe) a
/// line per step on stderr, so that minutes of work do not pass in silence; nothing with `-q`.
struct Steps {
    spinner: Progress,
    lines: bool,
}

impl bench_run::Progress for Steps {
    fn message(&self, text: &str) {
        if !self.lines {
            self.spinner.message(text);
        } else if crate::logging::json() {
            tracing::info!(target: crate::logging::PROGRESS, "{text}");
        } else {
            note!("rftune: {text}");
        }
    }
}

/// Runs `work` with its progress shown ([`Steps`]).
async fn spinning(
    output: OutputFormat,
    work: impl AsyncFnOnce(&dyn bench_run::Progress) -> host_bench::Result<BenchReport>,
) -> Result<BenchReport> {
    let progress = Steps {
        spinner: Progress::spinner(output),
        lines: !std::io::IsTerminal::is_terminal(&std::io::stderr()) && !crate::logging::quiet(),
    };
    let report = work(&progress).await;
    progress.spinner.finish();
    Ok(report?)
}

/// The output directory: `--out`, or one named after the kind and the time.
fn out_dir(out: Option<&PathBuf>, kind: &str) -> PathBuf {
    out.cloned().unwrap_or_else(|| {
        let stamp = host_bench::utc_now_seconds().replace(':', "");
        PathBuf::from(format!("rftune-bench-{kind}-{stamp}"))
    })
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

fn common(args: &RunArgs) -> bench_run::Common {
    bench_run::Common {
        label: args.label.clone(),
        repeat: args.repeat,
        power_interval: args.power_interval,
        power_optional: false,
    }
}

/// Writes bench.json, bench.csv and report.html, prints the summary, and fails if the results
/// are not valid.
fn finish(r: BenchReport, dir: &Path, output: OutputFormat, table: impl Fn(&BenchReport) -> String) -> Result<Exit> {
    let json = serde_json::to_string_pretty(&r)?;
    for (name, body) in [("bench.json", json), ("bench.csv", r.csv()), ("report.html", r.html())] {
        let p = dir.join(name);
        std::fs::write(&p, body).with_context(|| format!("writing {}", p.display()))?;
    }
    match output {
        OutputFormat::Json => render::json(&r)?,
        _ => {
            let mut text = table(&r);
            for p in &r.problems {
                text.push_str(&format!("problem: {p}\n"));
            }
            text.push_str(&format!(
                "Results: {}, {}, {}\n",
                dir.join("bench.json").display(),
                dir.join("bench.csv").display(),
                dir.join("report.html").display()
            ));
            render::text(&text)?;
        }
    }
    if !r.valid {
        bail!("the results are not valid: {}", r.problems.join("; "));
    }
    Ok(Exit::Success)
}

async fn storage(args: &StorageArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let dir = out_dir(args.common.run.out.as_ref(), "storage");
    let stop = Stop::default();
    let local = Local::new(stop.clone());
    let settings = StorageSettings {
        target: args.target.clone(),
        size: args.size,
        tests: args.tests.clone(),
        runtime: args.runtime,
        ramp: args.ramp,
        numjobs: args.numjobs,
        ioengine: match args.ioengine {
            EngineArg::IoUring => IoEngine::IoUring,
            EngineArg::Libaio => IoEngine::Libaio,
        },
        precondition: args.precondition.then_some(args.ss_rounds),
        overwrite: args.overwrite,
        consent: device::Consent {
            destroy_data: args.destroy_data,
            confirm_serial: args.confirm_serial.clone(),
        },
        workdir: dir.join("fio"),
        common: common(&args.common.run),
    };
    let run = StorageRun::new(settings, &local).await?;
    interruptible(
        &stop,
        run_and_finish(
            &args.common,
            dirs,
            output,
            &dir,
            storage_table,
            async |bmc, power, progress| bench_run::storage(&run, bmc, power, progress).await,
        ),
    )
    .await
}

/// Runs `work` until it ends or a signal arrives. On a signal, `stop` is requested (fio gets
/// SIGINT, a layout stops at its next chunk), the work gets 30 s to end and remove what it
/// created, and the process exits 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM),
/// saying what became of the files.
async fn interruptible(stop: &Stop, work: impl std::future::Future<Output = Result<Exit>>) -> Result<Exit> {
    let mut interrupts = Interrupts::install()?;
    tokio::pin!(work);
    tokio::select! {
        r = &mut work => r,
        (name, number) = interrupts.next() => {
            stop.request();
            rftune_engine::interrupt::request(number);
            let interrupted = anyhow::anyhow!("interrupted by {name}");
            Err(match tokio::time::timeout(Duration::from_secs(30), work).await {
                Ok(Err(e)) => match e.downcast_ref::<host_bench::Error>() {
                    Some(host_bench::Error::Failed { what, .. }) => interrupted.context(what.clone()),
                    _ => interrupted,
                },
                _ => interrupted,
            })
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP, caught while a benchmark lasts so that fio is stopped and what
/// the run created is removed instead of being left behind.
struct Interrupts {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Interrupts {
    fn install() -> Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let catch = |kind: SignalKind, name: &str| {
            signal(kind).with_context(|| format!("installing a {name} handler (to clean up if interrupted)"))
        };
        Ok(Self {
            int: catch(SignalKind::interrupt(), "SIGINT")?,
            term: catch(SignalKind::terminate(), "SIGTERM")?,
            hup: catch(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The name and number of the next signal received.
    async fn next(&mut self) -> (&'static str, i32) {
        tokio::select! {
            _ = self.int.recv() => ("SIGINT", 2),
            _ = self.term.recv() => ("SIGTERM", 15),
            _ = self.hup.recv() => ("SIGHUP", 1),
        }
    }
}

fn storage_table(r: &BenchReport) -> String {
    let Some(s) = &r.storage else { return String::new() };
    let mut t = Table::new([
        "TEST",
        "IOPS",
        "MB/S",
        "READ P99 µs",
        "WRITE P99 µs",
        "CPU %",
        "W",
        "IOPS/W",
        "CV",
        "VALID",
    ]);
    for x in &s.tests {
        let first = x.runs.first();
        let p99 = |l: Option<fio::Latency>| l.and_then(|l| l.p99_us).map_or("-".to_owned(), |v| format!("{v:.0}"));
        t.row([
            x.name.clone(),
            format!("{:.0}", x.iops),
            format!("{:.1}", x.bw_bytes / 1e6),
            p99(first.and_then(|f| f.metrics.read_lat)),
            p99(first.and_then(|f| f.metrics.write_lat)),
            first.map_or("-".into(), |f| format!("{:.1}", f.metrics.usr_cpu + f.metrics.sys_cpu)),
            x.power_w.map_or("-".into(), |w| format!("{w:.0}")),
            x.iops_per_watt.map_or("-".into(), |v| format!("{v:.1}")),
            x.cv_iops.map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
            if x.valid { "yes" } else { "NO" }.to_owned(),
        ]);
    }
    let mut out = format!(
        "fio storage on {} ({}, {}), {} s + {} s ramp per test, numjobs {}, {}\n",
        s.target,
        s.target_kind,
        s.size.clone().unwrap_or_else(|| "whole device".into()),
        s.runtime_s,
        s.ramp_s,
        s.numjobs,
        s.fio_version.clone().unwrap_or_default()
    );
    out.push_str(&t.render());
    if let Some(c) = &r.power_caveat {
        out.push_str(&format!("Power: {c}.\n"));
    }
    out
}

async fn memory(args: &MemoryArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let array_mib = match args.array_mib.as_str() {
        "auto" => None,
        text => Some(
            text.parse()
                .ok()
                .filter(|m: &f64| *m > 0.0)
                .with_context(|| format!("--array-mib {text:?}: give MiB per array or auto"))?,
        ),
    };
    let run = MemoryRun::new(MemorySettings {
        threads: args.threads,
        array_mib,
        iterations: args.iterations as usize,
        nt_stores: args.nt_stores,
        peak: args.peak_gbs.map(|gbs| stream::Peak {
            gbs,
            source: "--peak-gbs".into(),
            sockets: Vec::new(),
        }),
        common: common(&args.common.run),
    })?;
    let dir = out_dir(args.common.run.out.as_ref(), "memory");
    run_and_finish(
        &args.common,
        dirs,
        output,
        &dir,
        memory_table,
        async |bmc, power, progress| bench_run::memory(&run, bmc, power, progress).await,
    )
    .await
}

fn memory_table(r: &BenchReport) -> String {
    let Some(m) = &r.memory else { return String::new() };
    let mut t = Table::new(["KERNEL", "BEST GB/S", "AVG s", "MIN s", "MAX s", "CV"]);
    let first = m.runs.first();
    for k in stream::KERNELS {
        let kr = first.and_then(|f| f.kernels.iter().find(|x| x.name == k));
        t.row([
            k.to_owned(),
            m.gbs.get(k).map_or("-".into(), |v| format!("{v:.1}")),
            kr.map_or("-".into(), |x| format!("{:.6}", x.avg_s)),
            kr.map_or("-".into(), |x| format!("{:.6}", x.min_s)),
            kr.map_or("-".into(), |x| format!("{:.6}", x.max_s)),
            m.cv.get(k).map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
        ]);
    }
    let mut out = format!(
        "STREAM ({}): {} threads pinned to CPUs {:?}, {} elements per array ({:.1} MiB), last-level cache {}\n",
        m.variant,
        m.threads,
        first.map(|f| f.cpus.clone()).unwrap_or_default(),
        m.elements,
        m.array_mib,
        m.llc_bytes.map_or("unknown".into(), |b| format!("{} MiB", b >> 20))
    );
    out.push_str(&t.render());
    out.push_str(&format!(
        "Validation: {}\n",
        if m.runs.iter().all(|x| x.validation.passed) {
            "passed"
        } else {
            "FAILED"
        }
    ));
    if let (Some(p), Some(f)) = (&m.peak, m.triad_fraction_of_peak) {
        out.push_str(&format!(
            "Triad: {:.1}% of a {:.1} GB/s peak ({})\n",
            f * 100.0,
            p.gbs,
            p.source
        ));
    }
    if let Some(w) = m.power_w {
        out.push_str(&format!(
            "Power: {w:.0} W average, {:.3} GB/s per W (Triad). {}.\n",
            m.triad_gbs_per_watt.unwrap_or_default(),
            power::CAVEAT
        ));
    }
    out
}

/// The longest a command on a client host may take (fio runs from here, through its server).
const CLIENT_COMMANDS: Duration = Duration::from_secs(3600);

async fn fs(args: &FsArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let stop = Stop::default();
    let local = Local::new(stop.clone());
    if args.cleanup {
        return cleanup(&local, &args.target, output).await;
    }
    let dir = out_dir(args.run.out.as_ref(), "filesystem");
    let settings = FsSettings {
        target: args.target.clone(),
        fs_type: args.fs_type.clone(),
        tests: args.tests.clone(),
        threads: args.threads.clone(),
        oversubscribe: args.oversubscribe,
        method: if args.quick { Method::Quick } else { Method::Published },
        data_size: args.data_size,
        server_memory: args.server_memory,
        record_size: args.record_size,
        random_record_size: args.random_record_size,
        random_io: args.random_io,
        random_runtime: args.random_runtime,
        md_files: args.md_files,
        md_file_sizes: args.md_file_sizes.clone(),
        workdir: dir.join("fio"),
        common: common(&args.run),
    };
    let transports: Vec<Transport> = args
        .clients
        .iter()
        .map(|c| {
            let (target, port) = SshTarget::parse(c)?;
            Ok(Transport::Ssh(SshTarget {
                target,
                port,
                config: args.ssh_config.clone(),
                connect_timeout: Duration::from_secs(10),
            }))
        })
        .collect::<host_bench::Result<_>>()?;
    let hosts: Vec<OnHost<'_>> = transports.iter().map(|t| OnHost::new(t, CLIENT_COMMANDS)).collect();
    let clients = if hosts.is_empty() {
        vec![Client {
            exec: &local,
            server: None,
        }]
    } else {
        hosts
            .iter()
            .zip(&transports)
            .map(|(h, t)| Client {
                exec: h,
                server: Some(t),
            })
            .collect()
    };
    let run = FsRun::new(settings, clients, &local).await?;
    interruptible(&stop, async {
        create_dir(&dir)?;
        let mut servers = connect_bmcs(args, dirs).await?;
        let report = sweep(&run, &mut servers, args.run.idle, output).await;
        for s in &servers {
            s.bmc.close().await;
        }
        finish(report?, &dir, output, fs_table)
    })
    .await
}

/// Builds every server's meter, records its sensor and idle baseline, then runs the sweep with
/// all of them as its power sources.
async fn sweep(run: &FsRun<'_>, servers: &mut [Server], idle: Duration, output: OutputFormat) -> Result<BenchReport> {
    let mut meters = Vec::new();
    let mut infos: Vec<BmcInfo> = Vec::new();
    for Server { bmc, said } in servers.iter_mut() {
        let meter = Meter::new(bmc).await?;
        rftune_engine::bench::record_idle_power(&meter, idle, &mut said.info).await?;
        infos.push(said.info.clone());
        meters.push(meter);
    }
    let power: Vec<NamedPower<'_>> = meters
        .iter()
        .zip(&infos)
        .map(|(m, i)| (i.host.clone(), m as &dyn PowerSource))
        .collect();
    spinning(output, async |progress| {
        filesystem::run(run, &infos, &power, progress).await
    })
    .await
}

/// `--cleanup`: removes what a killed run left, says what was kept, and fails unless the target
/// is as the run found it.
async fn cleanup(local: &Local, target: &Path, output: OutputFormat) -> Result<Exit> {
    let done = filesystem::cleanup(local, target).await?;
    match output {
        OutputFormat::Json => render::json(&done)?,
        _ => render::text(&format!(
            "{}: removed {} files and {} directories rftune created{}\n",
            target.display(),
            done.removed_files,
            done.removed_dirs,
            if done.complete {
                "; nothing of a run is left"
            } else {
                ""
            }
        ))?,
    }
    if !done.complete {
        bail!(
            "kept what rftune did not create, and the directories holding it: {}",
            done.left.join(", ")
        );
    }
    Ok(Exit::Success)
}

/// A point's value with its marks: `*` cache-affected, `!` more threads than cores.
fn marked(value: f64, p: &host_bench::report::Point) -> String {
    format!(
        "{}{}{}",
        format_value(value),
        if p.cache_affected { "*" } else { "" },
        if p.oversubscribed { "!" } else { "" }
    )
}

fn peak_text(peak: Option<CurvePeak>) -> String {
    peak.map_or("-".into(), |p| format!("{} at {}", format_value(p.value), p.threads))
}

fn plateau_text(plateau: Option<Plateau>) -> String {
    plateau.map_or("none in the sweep".into(), |p| {
        format!("from {} ({} sustained)", p.from_threads, format_value(p.level))
    })
}

fn fs_table(r: &BenchReport) -> String {
    let Some(f) = &r.filesystem else { return String::new() };
    let fs = &f.file_system;
    let s = &f.sizes;
    let mut out = format!(
        "file system: {} ({} mounted at {}; {})\n{}: {} a step in {} records; random {} transfers, {} or {} s; metadata {} files, {} a directory, of {}\n",
        fs.fs_type,
        fs.source,
        fs.mount_point,
        fs.options,
        if f.method == Some(Method::Quick) {
            "quick mode"
        } else {
            "published sizes"
        },
        host_bench::units::format_size(s.data_bytes),
        host_bench::units::format_size(s.record_bytes),
        host_bench::units::format_size(s.random_record_bytes),
        host_bench::units::format_size(s.random_io_bytes),
        s.random_runtime_s,
        s.md_files,
        s.md_files_per_dir,
        s.md_file_sizes
            .iter()
            .map(|b| host_bench::units::format_size(*b))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for c in &f.clients {
        let h = &c.host;
        out.push_str(&format!(
            "client {}: {}, {} RAM, kernel {}, {}\n",
            c.name,
            if h.cores > 0 {
                format!("{} cores", h.cores)
            } else {
                format!("{} logical CPUs", h.logical_cpus)
            },
            h.memory_bytes.map_or("unknown".into(), host_bench::units::approx_size),
            h.kernel.clone().unwrap_or_default(),
            h.cpu_model.clone().unwrap_or_default()
        ));
    }
    if f.clients.len() > 1
        && let Some(c) = f.curves.first()
    {
        let split: Vec<String> = c
            .points
            .iter()
            .map(|p| {
                let parts: Vec<String> = p.threads_per_client.iter().map(u32::to_string).collect();
                format!("{} = {}", p.threads, parts.join("+"))
            })
            .collect();
        out.push_str(&format!(
            "threads per client, round robin: {} (fio's client/server mode; each figure is fio's aggregate of all clients)\n",
            split.join(", ")
        ));
    }
    out.push_str(&format!(
        "BIOS profile: {}\n",
        host_bench::report::bios_profile(f, r.label.as_deref())
    ));
    for test in &f.tests {
        out.push('\n');
        out.push_str(&test_table(f, *test));
    }
    out.push_str("* cache-affected (data set under twice the largest RAM)   ! more threads than cores\n");
    if let Some(c) = &r.power_caveat {
        out.push_str(&format!("Power: {c}.\n"));
    }
    out
}

/// One test's curves: a row per operation, a column per thread count, then the peak and the
/// plateau; with power, a row of watts and one of work per watt under each.
fn test_table(f: &FileSystemBench, test: Test) -> String {
    let curves: Vec<_> = f.curves.iter().filter(|c| c.test == test).collect();
    let Some(first) = curves.first() else {
        return String::new();
    };
    let mut header = vec![format!("{} ({})", test.title(), first.unit)];
    header.extend(f.threads.iter().map(u32::to_string));
    header.extend(["PEAK (threads)".to_owned(), "PLATEAU".to_owned()]);
    let mut t = Table::new(header);
    let (_, per_watt_unit) = first.measure().per_watt();
    for c in curves {
        let cells = |value: &dyn Fn(&host_bench::report::Point) -> Option<f64>| -> Vec<String> {
            f.threads
                .iter()
                .map(|n| {
                    c.points
                        .iter()
                        .find(|p| p.threads == *n)
                        .and_then(|p| Some(marked(value(p)?, p)))
                        .unwrap_or_else(|| "-".into())
                })
                .collect()
        };
        let mut row = vec![c.label()];
        row.extend(cells(&|p| Some(p.value)));
        row.extend([peak_text(c.peak), plateau_text(c.plateau)]);
        t.row(row);
        if c.points.iter().any(|p| p.power_w.is_some()) {
            let mut watts = vec![format!("  W")];
            watts.extend(cells(&|p| p.power_w));
            t.row(watts);
            let mut per = vec![format!("  {per_watt_unit}")];
            per.extend(cells(&|p| p.per_watt));
            t.row(per);
        }
    }
    t.render()
}

/// `bench compare`'s JSON: the rows, and for file-system runs each curve's peak and plateau side
/// by side.
#[derive(Serialize)]
struct Compared {
    #[serde(flatten)]
    comparison: BenchComparison,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    curves: Vec<CurvePair>,
}

/// One curve of two file-system runs.
#[derive(Serialize)]
struct CurvePair {
    curve: String,
    unit: String,
    a: Option<CurveMarks>,
    b: Option<CurveMarks>,
}

/// A curve's peak and plateau.
#[derive(Serialize)]
struct CurveMarks {
    peak: Option<CurvePeak>,
    plateau: Option<Plateau>,
}

/// Each curve of either file-system run, its peak and plateau in both.
fn curve_pairs(a: &BenchReport, b: &BenchReport) -> Vec<CurvePair> {
    let (Some(fa), Some(fb)) = (&a.filesystem, &b.filesystem) else {
        return Vec::new();
    };
    let marks = |f: &FileSystemBench, name: &str| {
        f.curves.iter().find(|c| c.name() == name).map(|c| CurveMarks {
            peak: c.peak,
            plateau: c.plateau,
        })
    };
    let mut names: Vec<(String, String)> = Vec::new();
    for c in fa.curves.iter().chain(&fb.curves) {
        if !names.iter().any(|(n, _)| *n == c.name()) {
            names.push((c.name(), c.unit.clone()));
        }
    }
    names
        .into_iter()
        .map(|(curve, unit)| CurvePair {
            a: marks(fa, &curve),
            b: marks(fb, &curve),
            curve,
            unit,
        })
        .collect()
}

/// The curves' peaks and plateaus, A beside B.
fn curves_text(pairs: &[CurvePair]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let mut t = Table::new([
        "CURVE",
        "PEAK A (threads)",
        "PEAK B (threads)",
        "CHANGE",
        "PLATEAU A",
        "PLATEAU B",
    ]);
    for p in pairs {
        let peak = |m: &Option<CurveMarks>| m.as_ref().and_then(|m| m.peak);
        let plateau = |m: &Option<CurveMarks>| m.as_ref().and_then(|m| m.plateau);
        let change = match (peak(&p.a), peak(&p.b)) {
            (Some(x), Some(y)) if x.value > 0.0 => format!("{:+.1}%", (y.value - x.value) / x.value * 100.0),
            _ => "-".into(),
        };
        t.row([
            format!("{} ({})", p.curve, p.unit),
            peak_text(peak(&p.a)),
            peak_text(peak(&p.b)),
            change,
            plateau_text(plateau(&p.a)),
            plateau_text(plateau(&p.b)),
        ]);
    }
    format!("\n{}", t.render())
}

fn compare(args: &CompareArgs, output: OutputFormat) -> Result<Exit> {
    use rftune_experiment::report;
    let (a, b) = (report::read_bench(&args.a)?, report::read_bench(&args.b)?);
    let comparison = compare::documents(&a, &b, &args.metrics, &compare::Method::default())?;
    let curves = curve_pairs(&a, &b);
    let worse: Vec<String> = comparison
        .changes
        .iter()
        .filter(|c| c.verdict == Verdict::Worse)
        .map(|c| format!("{} {}", c.test, c.metric))
        .collect();
    match output {
        OutputFormat::Json => render::json(&Compared { comparison, curves })?,
        _ => render::text(&format!(
            "{}{}",
            report::bench_comparison_text(&comparison),
            curves_text(&curves)
        ))?,
    }
    if args.fail_on == Some(FailOn::Worse) && !worse.is_empty() {
        note!(
            "rftune: {} row{} got worse (--fail-on worse): {}",
            worse.len(),
            if worse.len() == 1 { "" } else { "s" },
            worse.join("; ")
        );
        return Ok(Exit::Drift);
    }
    Ok(Exit::Success)
}
