//! The benchmarks end to end, as `rftune bench` and experiments run them: the storage run
//! ([`StorageRun::new`] checks, [`storage`] lays the target out, preconditions, runs each test
//! `repeat` times) and the memory run ([`MemoryRun::new`], [`memory`]: STREAM `repeat` times),
//! each sampling power around every measured piece of work and returning the `rftune.bench/v1`
//! document. Nothing here prints: progress goes to a [`Progress`], and power comes from a
//! [`PowerSource`] (the engine's BMC meter, or [`NoPower`]).
//!
//! A storage run is generic over where fio runs ([`Exec`]); whatever the machine, a file target
//! is one rftune created (with its header) or, only where rftune's own checks run and the user
//! said `--overwrite`, a file it was told to take over. A target file the run created is removed
//! again when the run fails.

use crate::exec::{BoxFuture, Exec, blocking};
use crate::fio::{self, Fio, IoEngine, Precondition, TestSpec};
use crate::power::{self, PowerError, Sample};
use crate::report::{BenchReport, BmcInfo, Memory, RunReport, Storage, TestReport};
use crate::target::{self, TargetKind};
use crate::{Error, Result, device, stream};
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where progress goes (a spinner's message, a log): one line of what is running now.
pub trait Progress: Send + Sync {
    /// What is running now, e.g. `randread (3/7), run 1/2`.
    fn message(&self, text: &str);
}

/// Progress nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn message(&self, _text: &str) {}
}

/// Power readings taken while benchmark work runs (the server's BMC, read from wherever rftune
/// runs). Object safe, so runs take `&dyn PowerSource`.
pub trait PowerSource: Send + Sync {
    /// Drives `work` to completion while taking a reading every `interval`, timed in seconds
    /// since `origin`, plus one after the work ends so the readings cover all of it. The work
    /// always runs to its end, whatever happens to the readings.
    fn sample_while<'a>(
        &'a self,
        interval: Duration,
        origin: Instant,
        work: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, Result<Vec<Sample>, PowerError>>;

    /// What the readings are, for the document's `power_caveat`; `None` when there are none.
    fn caveat(&self) -> Option<String>;
}

/// No power readings (no BMC given): the work runs alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPower;

impl PowerSource for NoPower {
    fn sample_while<'a>(
        &'a self,
        _interval: Duration,
        _origin: Instant,
        work: BoxFuture<'a, ()>,
    ) -> BoxFuture<'a, Result<Vec<Sample>, PowerError>> {
        Box::pin(async move {
            work.await;
            Ok(Vec::new())
        })
    }

    fn caveat(&self) -> Option<String> {
        None
    }
}

/// What the server's BMC said before the run: its description for the document, and the DIMM
/// inventory from which STREAM's theoretical peak is derived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BmcFacts {
    /// Model, firmware, BIOS attributes in force, idle power.
    pub info: BmcInfo,
    /// The DIMMs.
    pub dimms: Vec<stream::Dimm>,
    /// Which machine the BMC says it manages (service tag, system UUID).
    pub machine: crate::host::MachineId,
}

impl BmcFacts {
    /// Whether the BMC manages the machine this runs on, as far as SMBIOS tells.
    pub fn same_machine(&self) -> crate::host::SameMachine {
        crate::host::MachineId::local().same_machine(&self.machine)
    }
}

/// What the document must say about power and peak from a BMC that is not (or may not be) this
/// machine's; nothing when it is.
fn foreign_bmc(bmc: Option<&BmcFacts>, problems: &mut Vec<String>) -> bool {
    use crate::host::SameMachine;
    let Some(b) = bmc else { return false };
    match b.same_machine() {
        SameMachine::Yes(_) => false,
        SameMachine::No(why) => {
            problems.push(format!(
                "the BMC {} does not manage this host ({why}): its power readings and DIMM inventory are another machine's",
                b.info.host
            ));
            true
        }
        SameMachine::Unknown(why) => {
            problems.push(format!(
                "cannot confirm that the BMC {} manages this host ({why}): its power readings may be another machine's",
                b.info.host
            ));
            true
        }
    }
}

/// A note for `problems` when power from `stats` covers too few sensor periods to trust.
pub(crate) fn unreliable_power(what: &str, stats: Option<&power::PowerStats>, hint: &str, problems: &mut Vec<String>) {
    if let Some(s) = stats.filter(|s| s.unreliable) {
        let note = format!(
            "power is unreliable{what}: {} reading(s) over {:.1} s, shorter than {} sensor periods (the BMC refreshes about every {} s); {hint}",
            s.n,
            s.duration_s,
            power::MIN_SENSOR_PERIODS,
            power::SENSOR_PERIOD_S
        );
        if !problems.contains(&note) {
            problems.push(note);
        }
    }
}

/// Settings every benchmark shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    /// A name for the run in reports and comparisons (the BIOS profile applied).
    pub label: Option<String>,
    /// Runs of everything; results report the median and coefficient of variation.
    pub repeat: u32,
    /// Time between power readings.
    pub power_interval: Duration,
    /// When readings fail, note it in the document's problems and go on without power, instead
    /// of failing the run.
    pub power_optional: bool,
}

impl Default for Common {
    fn default() -> Self {
        Self {
            label: None,
            repeat: 1,
            power_interval: Duration::from_secs(1),
            power_optional: false,
        }
    }
}

/// Runs `work` while `power` samples; readings are timed from when the work started. The work's
/// own failure wins over the readings'.
async fn measured<T: Send>(
    power: &dyn PowerSource,
    common: &Common,
    problems: &mut Vec<String>,
    work: impl Future<Output = Result<T>> + Send,
) -> Result<(T, Vec<Sample>)> {
    let mut out = None;
    let origin = Instant::now();
    let samples = power
        .sample_while(
            common.power_interval,
            origin,
            Box::pin(async {
                out = Some(work.await);
            }),
        )
        .await;
    let out = out.ok_or_else(|| Error::Interrupted("the power source did not run the benchmark".into()))??;
    match samples {
        Ok(samples) => Ok((out, samples)),
        Err(e) if common.power_optional => {
            let note = format!("no power readings: {e}");
            if !problems.contains(&note) {
                problems.push(note);
            }
            Ok((out, Vec::new()))
        }
        Err(e) => Err(Error::Power(e)),
    }
}

/// A power source with the name the document gives its readings (the BMC's host).
pub type NamedPower<'a> = (String, &'a dyn PowerSource);

/// One source's readings, or why there are none.
type Slot = std::sync::Mutex<Option<Result<Vec<Sample>, PowerError>>>;

/// `work` wrapped in every source's sampling, the first source outermost: each samples while
/// everything inside it (the work, last) runs, and leaves its readings in its slot.
fn nest<'a>(
    sources: &'a [NamedPower<'a>],
    slots: &'a [Slot],
    interval: Duration,
    origin: Instant,
    work: BoxFuture<'a, ()>,
) -> BoxFuture<'a, ()> {
    match (sources.split_first(), slots.split_first()) {
        (Some(((_, source), rest)), Some((slot, others))) => Box::pin(async move {
            let inner = nest(rest, others, interval, origin, work);
            let readings = source.sample_while(interval, origin, inner).await;
            if let Ok(mut s) = slot.lock() {
                *s = Some(readings);
            }
        }),
        _ => work,
    }
}

/// Runs `work` while every source in `sources` samples (all at once, each on its own ticks);
/// one trace per source, named, in order. As [`measured`]: the work's failure wins, and with
/// `power_optional` a failed source becomes a note in `problems` and an empty trace.
pub(crate) async fn measured_each<T: Send>(
    sources: &[NamedPower<'_>],
    common: &Common,
    problems: &mut Vec<String>,
    work: impl Future<Output = Result<T>> + Send,
) -> Result<(T, Vec<(String, Vec<Sample>)>)> {
    let mut out = None;
    let slots: Vec<Slot> = sources.iter().map(|_| std::sync::Mutex::new(None)).collect();
    nest(
        sources,
        &slots,
        common.power_interval,
        Instant::now(),
        Box::pin(async {
            out = Some(work.await);
        }),
    )
    .await;
    let out = out.ok_or_else(|| Error::Interrupted("the power sources did not run the benchmark".into()))??;
    let mut traces = Vec::new();
    for ((name, _), slot) in sources.iter().zip(slots) {
        match slot.into_inner().ok().flatten() {
            Some(Ok(samples)) => traces.push((name.clone(), samples)),
            Some(Err(e)) if common.power_optional => {
                let note = format!("no power readings from {name}: {e}");
                if !problems.contains(&note) {
                    problems.push(note);
                }
                traces.push((name.clone(), Vec::new()));
            }
            Some(Err(e)) => return Err(Error::Power(e)),
            None => return Err(Error::Interrupted(format!("{name}'s power readings did not finish"))),
        }
    }
    Ok((out, traces))
}

/// What to run, storage.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageSettings {
    /// File or block device.
    pub target: PathBuf,
    /// Bytes of the target to use; default 4 GiB for a file, the whole device for a device.
    pub size: Option<u64>,
    /// Comma-separated tests, or `all` ([`fio::select`]).
    pub tests: String,
    /// Measured time per test.
    pub runtime: Duration,
    /// Time each test runs before measuring (excluded from results and power).
    pub ramp: Duration,
    /// fio jobs per test.
    pub numjobs: u32,
    /// Preferred engine (io_uring falls back to libaio where the kernel refuses it).
    pub ioengine: IoEngine,
    /// Precondition, with at most this many steady-state rounds.
    pub precondition: Option<usize>,
    /// Take over an existing file rftune did not create (only where rftune's checks run).
    pub overwrite: bool,
    /// The user's consent to writing a raw device.
    pub consent: device::Consent,
    /// Directory for fio's raw output (JSON, IOPS logs), on the machine fio runs on.
    pub workdir: PathBuf,
    /// Shared settings.
    pub common: Common,
}

impl Default for StorageSettings {
    fn default() -> Self {
        Self {
            target: PathBuf::new(),
            size: None,
            tests: "all".into(),
            runtime: Duration::from_secs(60),
            ramp: Duration::from_secs(5),
            numjobs: 1,
            ioengine: IoEngine::IoUring,
            precondition: None,
            overwrite: false,
            consent: device::Consent::default(),
            workdir: PathBuf::new(),
            common: Common::default(),
        }
    }
}

/// A storage run that passed its checks; a raw device stays held exclusively until it drops.
pub struct StorageRun<'a> {
    settings: StorageSettings,
    exec: &'a dyn Exec,
    specs: Vec<TestSpec>,
    kind: TargetKind,
    opts: fio::Options,
    fio_version: String,
    _claim: Option<device::Claim>,
}

impl std::fmt::Debug for StorageRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageRun")
            .field("settings", &self.settings)
            .field("exec", &self.exec.describe())
            .field("kind", &self.kind)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl<'a> StorageRun<'a> {
    /// Checks everything before anything is written: the tests, what the target is and whether
    /// it may be written ([`target::decide`], or [`target::decide_files_only`] where
    /// [`Exec::files_only`]), a raw device's safety checks and exclusive hold, room for a file's
    /// layout ([`target::check_space`]), and fio's version.
    pub async fn new(settings: StorageSettings, exec: &'a dyn Exec) -> Result<Self> {
        let specs = fio::select(&settings.tests)?;
        let path = &settings.target;
        let files_only = exec.files_only();
        if let Some(why) = files_only.as_ref().filter(|_| settings.consent.destroy_data) {
            return Err(Error::Refused(format!("{}: {why}", path.display())));
        }
        let found = exec.observe(path).await?;
        let in_dev = exec.under_dev(path);
        let kind = match &files_only {
            None => target::decide(path, in_dev, &found, settings.overwrite)?,
            Some(why) => target::decide_files_only(path, in_dev, &found, why)?,
        };
        let is_device = kind == TargetKind::Device;
        let opts = fio::Options {
            target: path.clone(),
            size: settings.size.or((!is_device).then_some(4 << 30)),
            offset: if is_device { 0 } else { target::HEADER_BYTES },
            runtime_s: settings.runtime.as_secs().max(1),
            ramp_s: settings.ramp.as_secs(),
            numjobs: settings.numjobs,
            ioengine: settings.ioengine,
        };
        let claim = if is_device {
            let writes = settings.precondition.is_some() || specs.iter().any(TestSpec::writes);
            exec.claim_device(path, writes, &settings.consent).await?
        } else {
            if let Some(size) = opts.size {
                let (available, total) = exec.space(target::filesystem_of(path, kind)).await?;
                target::check_space(path, size, target::to_allocate(kind, size), available, total)?;
            }
            None
        };
        let fio_version = Fio::new(exec).version().await?;
        Ok(Self {
            settings,
            exec,
            specs,
            kind,
            opts,
            fio_version,
            _claim: claim,
        })
    }

    /// What the target turned out to be.
    pub fn kind(&self) -> TargetKind {
        self.kind
    }

    /// Lays a file target out; whether this run created it.
    async fn prepare(&self) -> Result<bool> {
        let (Some(size), false) = (self.opts.size, self.kind == TargetKind::Device) else {
            return Ok(false);
        };
        self.exec.lay_out(&self.opts.target, self.kind, size).await?;
        Ok(self.kind == TargetKind::NewFile)
    }

    /// Preconditioning and every test's repeats.
    async fn measure(
        &self,
        power: &dyn PowerSource,
        progress: &dyn Progress,
        problems: &mut Vec<String>,
    ) -> Result<(Option<Precondition>, Vec<TestReport>)> {
        let (opts, common, workdir) = (&self.opts, &self.settings.common, &self.settings.workdir);
        // Once per run: over a remote command each creation is a round trip.
        self.exec.create_dir(workdir).await?;
        let fio = Fio::new(self.exec);
        let precondition = match self.settings.precondition {
            Some(rounds) => {
                progress.message("preconditioning: two sequential writes, then steady-state rounds");
                Some(fio.precondition(opts, workdir, opts.runtime_s, rounds).await?)
            }
            None => None,
        };
        let (ramp, runtime) = (opts.ramp_s as f64, opts.runtime_s as f64);
        let mut tests = Vec::new();
        for (i, spec) in self.specs.iter().enumerate() {
            let mut runs = Vec::new();
            let (mut engine, mut fallback) = (opts.ioengine, None);
            for rep in 0..common.repeat {
                progress.message(&format!(
                    "{} ({}/{}), run {}/{}",
                    spec.name,
                    i + 1,
                    self.specs.len(),
                    rep + 1,
                    common.repeat
                ));
                let tag = if common.repeat > 1 {
                    format!("-{}", rep + 1)
                } else {
                    String::new()
                };
                let (run, samples) = measured(power, common, problems, fio.run(spec, opts, workdir, &tag)).await?;
                engine = run.engine;
                fallback = fallback.or(run.fallback.clone());
                let window = power::window(&samples, ramp, ramp + runtime);
                let stats = power::stats(if window.len() >= 2 { &window } else { &samples });
                unreliable_power(" per test", stats.as_ref(), "give a longer --runtime", problems);
                runs.push(RunReport {
                    metrics: run.metrics,
                    power: stats,
                    power_trace: samples,
                    iops_trace: run.iops_trace,
                });
            }
            tests.push(TestReport::new(spec, opts.numjobs, engine, fallback, runs));
        }
        Ok((precondition, tests))
    }

    /// Everything after the checks, as one document.
    async fn report(
        &self,
        bmc: Option<&BmcFacts>,
        power: &dyn PowerSource,
        progress: &dyn Progress,
    ) -> Result<BenchReport> {
        let started_at = crate::utc_now();
        let mut problems = Vec::new();
        let (precondition, tests) = self.measure(power, progress, &mut problems).await?;
        let opts = &self.opts;
        foreign_bmc(bmc, &mut problems);
        let mut r = self.new_report("storage", started_at, bmc, power).await?;
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
        r.problems.extend(problems);
        r.storage = Some(Storage {
            target: opts.target.display().to_string(),
            target_kind: if self.kind == TargetKind::Device {
                "device"
            } else {
                "file"
            }
            .into(),
            size: opts.size.map(crate::units::format_size),
            runtime_s: opts.runtime_s,
            ramp_s: opts.ramp_s,
            numjobs: opts.numjobs,
            ioengine: opts.ioengine.as_str().into(),
            fio_version: Some(self.fio_version.clone()),
            precondition,
            tests,
        });
        r.finished_at = crate::utc_now();
        Ok(r)
    }

    async fn new_report(
        &self,
        kind: &str,
        started_at: String,
        bmc: Option<&BmcFacts>,
        power: &dyn PowerSource,
    ) -> Result<BenchReport> {
        let mut r = BenchReport::new(
            kind,
            self.settings.common.label.clone(),
            started_at,
            self.exec.host_info().await?,
        );
        r.bmc = bmc.map(|b| b.info.clone());
        r.power_caveat = power.caveat();
        Ok(r)
    }
}

/// Runs a checked storage run: lays a file target out, preconditions when asked, runs each test
/// `repeat` times with power sampled around every fio run (the ramp left out of the power
/// figures), and returns the document. A target file this run created is removed again if
/// anything fails; the error then says so ([`Error::Failed`]).
pub async fn storage(
    run: &StorageRun<'_>,
    bmc: Option<&BmcFacts>,
    power: &dyn PowerSource,
    progress: &dyn Progress,
) -> Result<BenchReport> {
    let created = run.prepare().await?;
    let result = run.report(bmc, power, progress).await;
    match result {
        Err(e) if created => {
            let path = run.opts.target.display();
            let what = match run.exec.remove(&run.opts.target).await {
                Ok(()) => format!("benchmarking {path} failed; the file this run created was removed"),
                Err(r) => format!(
                    "benchmarking {path} failed, and removing the file this run created failed too ({r}); delete it yourself"
                ),
            };
            Err(Error::Failed {
                what,
                source: Box::new(e),
            })
        }
        result => result,
    }
}

/// What to run, memory.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySettings {
    /// Worker threads (default: one per physical core; beyond that, SMT siblings).
    pub threads: Option<usize>,
    /// MiB per array (default: 4× the total last-level cache).
    pub array_mib: Option<f64>,
    /// Passes over the four kernels; the first is not counted.
    pub iterations: usize,
    /// Non-temporal stores (the labelled "nt-stores" variant).
    pub nt_stores: bool,
    /// The theoretical peak as the user gave it, instead of deriving it from the DIMMs.
    pub peak: Option<stream::Peak>,
    /// Shared settings.
    pub common: Common,
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self {
            threads: None,
            array_mib: None,
            iterations: 10,
            nt_stores: false,
            peak: None,
            common: Common::default(),
        }
    }
}

/// A memory run that passed its checks.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRun {
    settings: MemorySettings,
    config: stream::Config,
    llc: Option<u64>,
}

impl MemoryRun {
    /// Picks the CPUs (physical cores first, then SMT siblings when more threads are asked for)
    /// and the array size, and refuses arrays that would take more than 80% of the available
    /// memory.
    pub fn new(settings: MemorySettings) -> Result<Self> {
        let online = crate::host::online_cpus();
        let mut cpus = crate::host::cores(&online);
        if let Some(n) = settings.threads {
            if n == 0 || n > online.len() {
                return Err(Error::BadInput(format!(
                    "--threads {n}: this host has {} usable logical CPUs",
                    online.len()
                )));
            }
            let siblings: Vec<usize> = online.iter().copied().filter(|c| !cpus.contains(c)).collect();
            cpus.extend(siblings);
            cpus.truncate(n);
        }
        let llc = crate::host::llc_bytes(&online);
        let elements = match settings.array_mib {
            None => stream::elements_for_llc(llc.unwrap_or(64 << 20)),
            Some(mib) => (mib * 1048576.0 / 8.0) as usize,
        };
        let needed = elements as u64 * 8 * 3;
        if let Some(avail) = crate::host::mem_available()
            && needed > avail / 10 * 8
        {
            return Err(Error::BadInput(format!(
                "three arrays of {} MiB need {} MiB, more than 80% of available memory ({} MiB)",
                (elements * 8) >> 20,
                needed >> 20,
                avail >> 20
            )));
        }
        let config = stream::Config {
            elements,
            cpus,
            iterations: settings.iterations,
            nt_stores: settings.nt_stores,
        };
        Ok(Self { settings, config, llc })
    }
}

/// Runs STREAM `repeat` times with power sampled around each run (kept per run, and as one
/// trace across them), and returns the document: medians per kernel, Triad against the
/// theoretical peak (the user's, else from the BMC's DIMMs), validity.
pub async fn memory(
    run: &MemoryRun,
    bmc: Option<&BmcFacts>,
    power: &dyn PowerSource,
    progress: &dyn Progress,
) -> Result<BenchReport> {
    let common = &run.settings.common;
    let started_at = crate::utc_now();
    let mut problems = Vec::new();
    let mut runs = Vec::new();
    let mut run_power = Vec::new();
    let mut trace = Vec::new();
    let mut offset = 0.0;
    for rep in 0..common.repeat {
        progress.message(&format!("STREAM run {}/{}", rep + 1, common.repeat));
        let c = run.config.clone();
        let work = blocking(move || stream::run(&c));
        let (result, samples) = measured(power, common, &mut problems, work)
            .await
            .map_err(|e| Error::Failed {
                what: "STREAM".into(),
                source: Box::new(e),
            })?;
        let end = samples.last().map_or(0.0, |s| s.t_s);
        run_power.push(power::stats(&samples));
        trace.extend(samples.into_iter().map(|s| Sample {
            t_s: s.t_s + offset,
            watts: s.watts,
        }));
        offset += end;
        runs.push(result);
    }
    // The DIMM inventory scores Triad only if it is this machine's.
    let foreign = foreign_bmc(bmc, &mut problems);
    let peak = match (run.settings.peak.clone(), bmc) {
        (Some(peak), _) => Some(peak),
        (None, Some(b)) if !foreign => stream::peak_from_dimms(&b.dimms),
        (None, Some(_)) => {
            problems.push("no % of peak: the BMC's DIMM inventory may not be this host's; give --peak-gbs".into());
            None
        }
        (None, None) => None,
    };
    let mut r = BenchReport::new(
        "memory",
        common.label.clone(),
        started_at,
        crate::host::HostInfo::collect(),
    );
    r.bmc = bmc.map(|b| b.info.clone());
    r.power_caveat = power.caveat();
    let power = power::stats(&trace).map(|s| (s, trace));
    unreliable_power(
        "",
        power.as_ref().map(|(s, _)| s),
        "more --iterations, a larger --array-mib or --repeat make the run longer",
        &mut problems,
    );
    let mut mem = Memory::new(runs, run.llc, peak, power, &mut r.problems);
    mem.run_power = run_power;
    r.problems.extend(problems);
    r.valid = mem.runs.iter().all(|x| x.validation.passed)
        && mem
            .triad_fraction_of_peak
            .is_none_or(|f| f <= stream::MAX_PLAUSIBLE_FRACTION);
    r.memory = Some(mem);
    r.finished_at = crate::utc_now();
    Ok(r)
}
