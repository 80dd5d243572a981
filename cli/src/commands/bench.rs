//! `rftune bench storage|memory|compare`: Dell's seven-test fio suite and STREAM on this host, with
//! power sampled from the server's BMC (`--bmc`) for performance per watt, written as an
//! `rftune.bench/v1` document, CSV rows and a self-contained HTML report. The runs are
//! host-bench's (`host_bench::run`); this module reads the arguments, connects the BMC (whose
//! meter is the runs' power source), catches the signals that stop a run, writes the files and
//! renders.

use crate::Exit;
use crate::args::OutputFormat;
use crate::args::bench::{BenchCommand, CommonArgs, CompareArgs, EngineArg, MemoryArgs, StorageArgs};
use crate::render::{self, Progress, Table};
use anyhow::{Context, Result, bail};
use host_bench::exec::Local;
use host_bench::fio::{self, IoEngine};
use host_bench::power;
use host_bench::report::BenchReport;
use host_bench::run::{
    self as bench_run, MemoryRun, MemorySettings, NoPower, PowerSource, StorageRun, StorageSettings,
};
use host_bench::{Stop, device, stream};
use rftune_engine::connect::Bmc;
use rftune_engine::power::Meter;
use rftune_engine::state::StateDirs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs `rftune bench ...`.
pub async fn run(cmd: &BenchCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        BenchCommand::Storage(a) => storage(a, dirs, output).await,
        BenchCommand::Memory(a) => memory(a, dirs, output).await,
        BenchCommand::Compare(a) => compare(a, output),
    }
}

/// The BMC side of a run: the connection, and what it said before the run.
struct Server {
    bmc: Bmc,
    said: bench_run::BmcFacts,
}

/// Connects the BMC of `--bmc` and reads what the document records of its server; the session
/// stays open for the run's power readings.
async fn connect_bmc(common: &CommonArgs, dirs: &StateDirs) -> Result<Option<Server>> {
    let Some(url) = &common.bmc else { return Ok(None) };
    let entry = rftune_engine::fleet::BmcEntry::from_url(url)?;
    let access = crate::config::access_one(&common.connect, &entry, dirs)?;
    let mut bmc = access.open(&entry, None, false).await?;
    match rftune_engine::bench::bmc_facts(&mut bmc).await {
        Ok(said) => Ok(Some(Server { bmc, said })),
        Err(e) => {
            bmc.close().await;
            Err(e.into())
        }
    }
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
            metered(bmc, said, common.idle, async |meter, said| {
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

/// Runs `work` with a spinner for its progress.
async fn spinning(
    output: OutputFormat,
    work: impl AsyncFnOnce(&dyn bench_run::Progress) -> host_bench::Result<BenchReport>,
) -> Result<BenchReport> {
    let progress = Progress::spinner(output);
    let report = work(&progress).await;
    progress.finish();
    Ok(report?)
}

/// The output directory: `--out`, or one named after the kind and the time.
fn out_dir(common: &CommonArgs, kind: &str) -> PathBuf {
    common.out.clone().unwrap_or_else(|| {
        let stamp = host_bench::utc_now_seconds().replace(':', "");
        PathBuf::from(format!("rftune-bench-{kind}-{stamp}"))
    })
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

fn common(args: &CommonArgs) -> bench_run::Common {
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
    let dir = out_dir(&args.common, "storage");
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
        common: common(&args.common),
    };
    let run = StorageRun::new(settings, &local).await?;
    let mut interrupts = Interrupts::install()?;
    let work = run_and_finish(
        &args.common,
        dirs,
        output,
        &dir,
        storage_table,
        async |bmc, power, progress| bench_run::storage(&run, bmc, power, progress).await,
    );
    tokio::pin!(work);
    tokio::select! {
        r = &mut work => r,
        signal = interrupts.next() => {
            // fio gets SIGINT and the layout stops at its next chunk; let both end, and the run
            // remove a file it created.
            stop.request();
            let interrupted = anyhow::anyhow!("interrupted by {signal}");
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

/// SIGINT, SIGTERM and SIGHUP, caught while a storage run lasts so that fio is stopped and a
/// file the run created is removed instead of being left behind.
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

    /// The name of the next signal received.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.int.recv() => "SIGINT",
            _ = self.term.recv() => "SIGTERM",
            _ = self.hup.recv() => "SIGHUP",
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
        common: common(&args.common),
    })?;
    let dir = out_dir(&args.common, "memory");
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

fn compare(args: &CompareArgs, output: OutputFormat) -> Result<Exit> {
    use rftune_experiment::{compare, report};
    let (a, b) = (report::read_bench(&args.a)?, report::read_bench(&args.b)?);
    let comparison = compare::documents(&a, &b, &compare::Method::default())?;
    match output {
        OutputFormat::Json => render::json(&comparison)?,
        _ => render::text(&report::bench_comparison_text(&comparison))?,
    }
    Ok(Exit::Success)
}
