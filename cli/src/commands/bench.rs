//! `rftune bench storage|memory|compare`: Dell's seven-test fio suite and STREAM on this host, with
//! power sampled from the server's BMC (`--bmc`) for performance per watt, written as an
//! `rftune.bench/v1` document, CSV rows and a self-contained HTML report. The benchmark logic is
//! in the host-bench crate; this module is the glue to the BMC, the terminal and the files.

use crate::Outcome;
use crate::args::OutputFormat;
use crate::args::bench::{BenchCommand, CommonArgs, CompareArgs, EngineArg, MemoryArgs, StorageArgs};
use crate::render::{self, Progress, Table};
use anyhow::{Context, Result, bail};
use host_bench::fio::{self, Fio, IoEngine};
use host_bench::host::HostInfo;
use host_bench::power::{self, Sample};
use host_bench::report::{self, BenchReport, BmcInfo, Memory, RunReport, Storage, TestReport};
use host_bench::target::{self as bench_target, Kind};
use host_bench::{device, stream};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use rftune_engine::power::Meter;
use rftune_engine::state::StateDirs;
use rftune_engine::target::Target;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Runs `rftune bench ...`.
pub async fn run(cmd: &BenchCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    match cmd {
        BenchCommand::Storage(a) => storage(a, dirs, output).await,
        BenchCommand::Memory(a) => memory(a, dirs, output).await,
        BenchCommand::Compare(a) => compare(a, output),
    }
}

/// The BMC side of a run: the connection, its description and the power meter's sensor.
struct Bmc {
    target: Target,
    info: BmcInfo,
    dimms: Vec<stream::Dimm>,
}

async fn connect_bmc(common: &CommonArgs, dirs: &StateDirs) -> Result<Option<Bmc>> {
    let Some(url) = &common.bmc else { return Ok(None) };
    let entry = rftune_engine::fleet::BmcEntry::from_url(url)?;
    let mut target = crate::credentials::connect_one(&common.connect, &entry, dirs).await?;
    target.login().await?;
    match describe(&mut target, common.idle).await {
        Ok((info, dimms)) => Ok(Some(Bmc { target, info, dimms })),
        Err(e) => {
            target.close().await;
            Err(e)
        }
    }
}

/// Model, service tag, firmware, BIOS attributes in force, DIMMs and the idle baseline.
async fn describe(target: &mut Target, idle: Duration) -> Result<(BmcInfo, Vec<stream::Dimm>)> {
    let root = target.service_root().await?;
    let t = &*target;
    let c = &t.client;
    let system = if root.is_dell() {
        c.system(&ODataId::new(dell::SYSTEM))
            .await
            .map_err(|e| t.explain(e, "reading the system"))?
    } else {
        t.first_system().await?
    };
    let bios_link = system.bios_link();
    let (bios, memory) = tokio::join!(c.bios(&bios_link), c.memory(&system));
    let bios = bios.map_err(|e| t.explain(e, "reading BIOS attributes"))?;
    let memory = memory.map_err(|e| t.explain(e, "reading the DIMM inventory"))?;
    let idrac_firmware = if root.is_dell() {
        c.get::<redfish_client::resources::manager::Manager>(dell::MANAGER)
            .await
            .map_err(|e| t.explain(e, "reading the iDRAC"))?
            .firmware_version
    } else {
        None
    };
    let dimms = memory
        .iter()
        .map(|m| stream::Dimm {
            id: m.id.clone(),
            socket: m.memory_location.as_ref().and_then(|l| l.socket),
            channel: m.memory_location.as_ref().and_then(|l| l.channel),
            speed_mts: m.operating_speed_mhz,
            populated: m.capacity_mib.unwrap_or(0) > 0
                && m.status.as_ref().and_then(|s| s.state.as_deref()) != Some("Absent"),
        })
        .collect();
    let mut info = BmcInfo {
        host: t.name.clone(),
        model: system.model.clone(),
        service_tag: if root.is_dell() {
            dell::service_tag(&root).map(str::to_owned)
        } else {
            system.sku.clone()
        },
        bios_version: system.bios_version.clone(),
        idrac_firmware,
        power_sensor: None,
        idle_power: None,
        bios_attributes: bios
            .attributes
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
            .collect(),
    };
    let meter = Meter::new(target).await?;
    info.power_sensor = Some(meter.sensor.as_str().to_owned());
    if !idle.is_zero() {
        let samples = meter
            .sample_for(
                Duration::from_secs(1).min(idle),
                idle,
                &Progress::spinner(OutputFormat::Json),
            )
            .await?;
        info.idle_power = power::stats(&samples);
    }
    Ok((info, dimms))
}

/// Runs blocking `work` while sampling power (when a BMC is given); samples are timed from
/// when the work started.
async fn with_power<T: Send + 'static>(
    bmc: Option<&mut Bmc>,
    interval: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<(T, Vec<Sample>)> {
    let origin = Instant::now();
    let handle = tokio::task::spawn_blocking(work);
    let Some(bmc) = bmc else {
        return Ok((handle.await.context("benchmark thread")?, Vec::new()));
    };
    let meter = Meter::new(&mut bmc.target).await?;
    let (result, samples) = meter.sample_while(interval, origin, handle).await;
    Ok((result.context("benchmark thread")?, samples?))
}

fn out_dir(common: &CommonArgs, kind: &str) -> Result<PathBuf> {
    let dir = common.out.clone().unwrap_or_else(|| {
        let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace(':', "");
        PathBuf::from(format!("rftune-bench-{kind}-{stamp}"))
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

fn new_report(kind: &str, common: &CommonArgs, started_at: String, bmc: Option<&Bmc>) -> BenchReport {
    BenchReport {
        schema: report::SCHEMA.into(),
        kind: kind.into(),
        label: common.label.clone(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        finished_at: String::new(),
        host: HostInfo::collect(),
        bmc: bmc.map(|b| b.info.clone()),
        storage: None,
        memory: None,
        power_caveat: bmc.map(|_| power::CAVEAT.into()),
        valid: true,
        problems: Vec::new(),
    }
}

/// Writes bench.json, bench.csv and report.html, prints the summary, and fails if the results
/// are not valid.
fn finish(
    mut r: BenchReport,
    dir: &Path,
    output: OutputFormat,
    table: impl Fn(&BenchReport) -> String,
) -> Result<Outcome> {
    r.finished_at = host_bench::utc_now();
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
    Ok(Outcome::Success)
}

async fn storage(args: &StorageArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let specs = fio::select(&args.tests)?;
    let kind = bench_target::examine(&args.target, args.overwrite)?;
    let is_device = kind == Kind::Device;
    let opts = fio::Options {
        target: args.target.clone(),
        size: args.size.or((!is_device).then_some(4 << 30)),
        offset: if is_device { 0 } else { bench_target::HEADER_BYTES },
        runtime_s: args.runtime.as_secs().max(1),
        ramp_s: args.ramp.as_secs(),
        numjobs: args.numjobs,
        ioengine: match args.ioengine {
            EngineArg::IoUring => IoEngine::IoUring,
            EngineArg::Libaio => IoEngine::Libaio,
        },
    };
    // Held until the run ends: nothing can mount or claim the device meanwhile.
    let _claim = if is_device {
        let writes = args.precondition || specs.iter().any(|t| t.writes());
        let consent = device::Consent {
            destroy_data: args.destroy_data,
            confirm_serial: args.confirm_serial.clone(),
        };
        device::check_for_writing(&args.target, writes, &consent, device::open_exclusive)?
    } else {
        if let Some(size) = opts.size {
            bench_target::ensure_space(&args.target, kind, size)?;
        }
        None
    };
    let run = StorageRun {
        specs,
        kind,
        opts,
        fio: Fio::default(),
        created: std::sync::OnceLock::new(),
    };
    let mut interrupts = Interrupts::install()?;
    let result = {
        let work = run.run(args, dirs, output);
        tokio::pin!(work);
        tokio::select! {
            r = &mut work => r,
            signal = interrupts.next() => {
                // fio gets SIGINT and the layout stops at its next chunk; let both end.
                run.fio.stop.request();
                let _ = tokio::time::timeout(Duration::from_secs(30), work).await;
                Err(anyhow::anyhow!("interrupted by {signal}"))
            }
        }
    };
    match (result, run.created.get()) {
        (Err(e), Some(path)) => Err(match std::fs::remove_file(path) {
            Ok(()) => e.context(format!(
                "benchmarking {} failed; the file this run created was removed",
                path.display()
            )),
            Err(r) => e.context(format!(
                "benchmarking {} failed, and removing the file this run created failed too ({r}); delete it yourself",
                path.display()
            )),
        }),
        (result, _) => result,
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

/// A storage run that passed the checks.
struct StorageRun {
    specs: Vec<fio::TestSpec>,
    kind: Kind,
    opts: fio::Options,
    fio: Fio,
    /// The target file, once this run has created it.
    created: std::sync::OnceLock<PathBuf>,
}

impl StorageRun {
    /// Everything after the checks: fio's version, the output directory, the BMC, the target's
    /// layout, the runs and the report.
    async fn run(&self, args: &StorageArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
        let opts = &self.opts;
        let fio_version = self.fio.version()?;
        let dir = out_dir(&args.common, "storage")?;
        let raw = dir.join("fio");
        let started_at = host_bench::utc_now();
        let mut bmc = connect_bmc(&args.common, dirs).await?;
        let result = match self.prepare_file().await {
            Ok(()) => storage_runs(args, &self.specs, opts, &self.fio, &raw, bmc.as_mut(), output).await,
            Err(e) => Err(e),
        };
        if let Some(b) = &bmc {
            b.target.close().await;
        }
        let (precondition, tests) = result?;
        let mut r = new_report("storage", &args.common, started_at, bmc.as_ref());
        for t in &tests {
            r.problems.extend(t.problems.iter().map(|p| format!("{}: {p}", t.name)));
            r.valid &= t.valid;
        }
        if let Some(p) = &precondition
            && !p.steady_state.is_some_and(|s| s.reached)
        {
            r.problems
                .push(format!("steady state not reached in {} rounds", p.rounds_iops.len()));
        }
        r.storage = Some(Storage {
            target: args.target.display().to_string(),
            target_kind: if self.kind == Kind::Device { "device" } else { "file" }.into(),
            size: opts.size.map(fio::format_size),
            runtime_s: opts.runtime_s,
            ramp_s: opts.ramp_s,
            numjobs: opts.numjobs,
            ioengine: opts.ioengine.as_str().into(),
            fio_version: Some(fio_version),
            precondition,
            tests,
        });
        finish(r, &dir, output, storage_table)
    }

    /// Creates or extends a file target with rftune's header and its data laid out (see
    /// `host_bench::target`), recording a file it created; nothing for a device.
    async fn prepare_file(&self) -> Result<()> {
        let (Some(size), false) = (self.opts.size, self.kind == Kind::Device) else {
            return Ok(());
        };
        let (path, kind, stop) = (self.opts.target.clone(), self.kind, self.fio.stop.clone());
        tokio::task::spawn_blocking(move || bench_target::prepare(&path, kind, size, &stop))
            .await
            .context("layout thread")??;
        if self.kind == Kind::NewFile {
            let _ = self.created.set(self.opts.target.clone());
        }
        Ok(())
    }
}

async fn storage_runs(
    args: &StorageArgs,
    specs: &[fio::TestSpec],
    opts: &fio::Options,
    fio: &Fio,
    raw: &Path,
    mut bmc: Option<&mut Bmc>,
    output: OutputFormat,
) -> Result<(Option<fio::Precondition>, Vec<TestReport>)> {
    let progress = Progress::spinner(output);
    let precondition = if args.precondition {
        progress.message("preconditioning: two sequential writes, then steady-state rounds");
        let (f, o, r, rounds, s) = (
            fio.clone(),
            opts.clone(),
            raw.to_owned(),
            args.ss_rounds,
            opts.runtime_s,
        );
        Some(
            tokio::task::spawn_blocking(move || f.precondition(&o, &r, s, rounds))
                .await
                .context("preconditioning thread")??,
        )
    } else {
        None
    };
    let (ramp, runtime) = (opts.ramp_s as f64, opts.runtime_s as f64);
    let mut tests = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let mut runs = Vec::new();
        let (mut engine, mut fallback) = (opts.ioengine, None);
        for rep in 0..args.common.repeat {
            progress.message(format!(
                "{} ({}/{}), run {}/{}",
                spec.name,
                i + 1,
                specs.len(),
                rep + 1,
                args.common.repeat
            ));
            let (f, s, o, r) = (fio.clone(), *spec, opts.clone(), raw.to_owned());
            let tag = if args.common.repeat > 1 {
                format!("-{}", rep + 1)
            } else {
                String::new()
            };
            let (run, samples) = with_power(bmc.as_deref_mut(), args.common.power_interval, move || {
                f.run(&s, &o, &r, &tag)
            })
            .await?;
            let run = run?;
            engine = run.engine;
            fallback = fallback.or(run.fallback.clone());
            let window = power::window(&samples, ramp, ramp + runtime);
            runs.push(RunReport {
                metrics: run.metrics,
                power: power::stats(if window.len() >= 2 { &window } else { &samples }),
                power_trace: samples,
                iops_trace: run.iops_trace,
            });
        }
        tests.push(TestReport::new(spec, opts.numjobs, engine, fallback, runs));
    }
    progress.finish();
    Ok((precondition, tests))
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

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

async fn memory(args: &MemoryArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let online = host_bench::host::online_cpus();
    let mut cpus = host_bench::host::cores(&online);
    if let Some(n) = args.threads {
        if n == 0 || n > online.len() {
            bail!("--threads {n}: this host has {} usable logical CPUs", online.len());
        }
        // Physical cores first, then SMT siblings if asked for more threads than cores.
        let siblings: Vec<usize> = online.iter().copied().filter(|c| !cpus.contains(c)).collect();
        cpus.extend(siblings);
        cpus.truncate(n);
    }
    let llc = host_bench::host::llc_bytes(&online);
    let elements = if args.array_mib == "auto" {
        stream::elements_for_llc(llc.unwrap_or(64 << 20))
    } else {
        let mib: f64 = args
            .array_mib
            .parse()
            .ok()
            .filter(|m: &f64| *m > 0.0)
            .with_context(|| format!("--array-mib {:?}: give MiB per array or auto", args.array_mib))?;
        (mib * 1048576.0 / 8.0) as usize
    };
    let needed = elements as u64 * 8 * 3;
    if let Some(avail) = mem_available()
        && needed > avail / 10 * 8
    {
        bail!(
            "three arrays of {} MiB need {} MiB, more than 80% of available memory ({} MiB)",
            (elements * 8) >> 20,
            needed >> 20,
            avail >> 20
        );
    }
    let dir = out_dir(&args.common, "memory")?;
    let started_at = host_bench::utc_now();
    let mut bmc = connect_bmc(&args.common, dirs).await?;
    let config = stream::Config {
        elements,
        cpus,
        iterations: args.iterations as usize,
        nt_stores: args.nt_stores,
    };
    let progress = Progress::spinner(output);
    let mut runs = Vec::new();
    let mut trace = Vec::new();
    let mut offset = 0.0;
    let mut failure = None;
    for rep in 0..args.common.repeat {
        progress.message(format!("STREAM run {}/{}", rep + 1, args.common.repeat));
        let c = config.clone();
        match with_power(bmc.as_mut(), args.common.power_interval, move || stream::run(&c)).await {
            Ok((Ok(r), samples)) => {
                let end = samples.last().map_or(0.0, |s| s.t_s);
                trace.extend(samples.into_iter().map(|s| Sample {
                    t_s: s.t_s + offset,
                    watts: s.watts,
                }));
                offset += end;
                runs.push(r);
            }
            Ok((Err(e), _)) => {
                failure = Some(anyhow::Error::new(e));
                break;
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    progress.finish();
    if let Some(b) = &bmc {
        b.target.close().await;
    }
    if let Some(e) = failure {
        return Err(e.context("STREAM"));
    }
    let peak = match args.peak_gbs {
        Some(gbs) => Some(stream::Peak {
            gbs,
            source: "--peak-gbs".into(),
            sockets: Vec::new(),
        }),
        None => bmc.as_ref().and_then(|b| stream::peak_from_dimms(&b.dimms)),
    };
    let mut r = new_report("memory", &args.common, started_at, bmc.as_ref());
    let power = power::stats(&trace).map(|s| (s, trace));
    let mem = Memory::new(runs, llc, peak, power, &mut r.problems);
    r.valid = mem.runs.iter().all(|x| x.validation.passed)
        && mem
            .triad_fraction_of_peak
            .is_none_or(|f| f <= stream::MAX_PLAUSIBLE_FRACTION);
    r.memory = Some(mem);
    finish(r, &dir, output, memory_table)
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

fn compare(args: &CompareArgs, output: OutputFormat) -> Result<Outcome> {
    let read = |p: &Path| -> Result<BenchReport> {
        let text = rftune_engine::state::read_capped(p, rftune_engine::state::MAX_DOCUMENT_BYTES, "bench results")?;
        let v: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not JSON", p.display()))?;
        if v.get("schema").and_then(|s| s.as_str()) != Some(report::SCHEMA) {
            bail!("{} is not an {} document", p.display(), report::SCHEMA);
        }
        serde_json::from_value(v).with_context(|| format!("decoding {}", p.display()))
    };
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    if a.kind != b.kind {
        bail!("cannot compare a {} run with a {} run", a.kind, b.kind);
    }
    let c = report::compare(&a, &b);
    match output {
        OutputFormat::Json => render::json(&c)?,
        _ => {
            let mut t = Table::new(["TEST", "METRIC", "A", "B", "CHANGE", "%", ""]);
            let num = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}"));
            for x in &c.changes {
                t.row([
                    x.test.clone(),
                    format!("{} ({})", x.metric, x.unit),
                    num(x.a),
                    num(x.b),
                    x.delta.map_or("-".into(), |d| format!("{d:+.2}")),
                    x.percent.map_or("-".into(), |p| format!("{p:+.1}%")),
                    x.verdict.clone(),
                ]);
            }
            render::text(&format!("A = {}, B = {}\n{}", c.a, c.b, t.render()))?;
        }
    }
    Ok(Outcome::Success)
}
