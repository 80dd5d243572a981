//! `rftune experiment run|resume`: each host in parallel walks its steps in order — apply the
//! step's profile through the apply path (one reboot, verified), wait until the OS answers,
//! record the BIOS values in force and what the OS shows, run the benchmarks on the host, copy
//! the results back — and the state is saved after every step, so an interrupted experiment
//! resumes after the last finished step. A host whose apply fails is skipped for that step with
//! the reason recorded, never benchmarked under the wrong settings.

use super::report;
use super::schedule::{self, Step};
use super::spec::{BenchKind, OsAccess, Spec, bench_argv};
use super::state::{State, StepOutcome, StepRecord};
use super::stats::Method;
use super::transport::{Transport, contradictions};
use crate::assess::Chosen;
use crate::audit::AuditLog;
use crate::converge::{self, ApplyOptions, Run};
use crate::error::{Context, Result};
use crate::fleet::BmcEntry;
use crate::observe::{Event, Observer, Phase};
use crate::power::Meter;
use crate::state::StateDirs;
use crate::target::ConnectConfig;
use redfish_client::resources::bios::SettingsApplyTime;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// What a run of an experiment left: its report, the files written, and the hosts that
/// stopped early.
#[derive(Debug)]
pub struct Finished {
    /// The report over every result so far.
    pub report: report::ExperimentReport,
    /// The report files written into the experiment's directory.
    pub files: Vec<PathBuf>,
    /// Hosts that stopped before their last step, with why (`resume` continues them).
    pub stopped_early: Vec<String>,
    /// Every step of every host finished and none failed.
    pub complete: bool,
}

/// Runs (or resumes) the experiment whose state lives in `dir`, then writes its report.
pub async fn run(
    state: State,
    dir: &Path,
    connect: &ConnectConfig,
    dirs: &StateDirs,
    observer: Arc<dyn Observer>,
) -> Result<Finished> {
    crate::state::ensure_private_dir(dir)?;
    state.save(dir)?;
    let spec = state.spec.clone();
    let plan = schedule::plan(&spec);
    let shared = Arc::new(Shared {
        state: Mutex::new(state),
        dir: dir.to_owned(),
        dirs: dirs.clone(),
        connect: connect.clone(),
        audit: AuditLog::open(&dirs.state)?,
        observer,
    });
    let mut tasks = tokio::task::JoinSet::new();
    for host in spec.hosts.iter().cloned() {
        let steps = plan.get(&host.name).cloned().unwrap_or_default();
        let (shared, spec) = (shared.clone(), spec.clone());
        tasks.spawn(async move {
            let name = host.name.clone();
            (name, run_host(&shared, &spec, &host, &steps).await)
        });
    }
    let mut host_errors = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((_, Ok(()))) => {}
            Ok((name, Err(e))) => host_errors.push(format!("{name}: {}", crate::error::report(&e))),
            Err(e) => host_errors.push(format!("a host task ended abnormally: {e}")),
        }
    }
    let state = shared.state.lock().await;
    let method = Method {
        seed: spec.seed.unwrap_or(0),
        ..Method::default()
    };
    let report = report::from_state(&state, dir, method);
    let files = report::write(dir, &report)?;
    Ok(Finished {
        complete: state.failures.is_empty() && state.complete(&plan),
        report,
        files,
        stopped_early: host_errors,
    })
}

struct Shared {
    state: Mutex<State>,
    dir: PathBuf,
    dirs: StateDirs,
    connect: ConnectConfig,
    audit: AuditLog,
    observer: Arc<dyn Observer>,
}

async fn run_host(shared: &Shared, spec: &Spec, host: &super::spec::HostSpec, steps: &[Step]) -> Result<()> {
    let remaining: Vec<Step> = shared.state.lock().await.remaining(&host.name, steps).to_vec();
    if remaining.is_empty() {
        return Ok(());
    }
    let waits = spec.timeouts.waits()?;
    let entry = BmcEntry {
        name: host.name.clone(),
        url: host.bmc.clone(),
        fingerprint: host.fingerprint.clone(),
        credentials: host.credentials.clone(),
        tags: Vec::new(),
    };
    let observer = &*shared.observer;
    let target = crate::target::connect(&entry, &shared.connect, &shared.dirs, observer).await?;
    target.login().await?;
    let transport = Transport::from(&host.os);
    let program = match &host.os {
        OsAccess::Local { rftune } => rftune
            .clone()
            .or_else(|| std::env::current_exe().ok().map(|p| p.display().to_string()))
            .unwrap_or_else(|| "rftune".into()),
        OsAccess::Ssh { rftune, .. } => rftune.clone().unwrap_or_else(|| "rftune".into()),
    };
    let experiment = spec.name.clone().unwrap_or_else(|| "experiment".into());
    for step in remaining {
        let profile = spec.profiles.get(step.profile).cloned().unwrap_or_default();
        let audit = |what: &str, outcome: &str, detail: Value| {
            shared.audit.record(
                &host.name,
                &format!("experiment:{what}"),
                json!({"experiment": experiment, "step": step.index, "profile": profile}),
                outcome,
                detail,
            )
        };
        let record = match run_step(shared, spec, &target, &transport, &program, &step, &waits).await {
            Ok(done) => {
                audit("step", "ok", json!({"results": done.results}))?;
                done
            }
            Err(e) => {
                let reason = crate::error::report(&e);
                audit("step", "skipped", json!(reason))?;
                StepRecord {
                    step,
                    profile: profile.clone(),
                    outcome: StepOutcome::Skipped,
                    results: Vec::new(),
                    bios: BTreeMap::new(),
                    os: None,
                    contradictions: Vec::new(),
                    reason: Some(reason),
                    finished_at: crate::audit::now_iso(),
                }
            }
        };
        let mut state = shared.state.lock().await;
        state.record(&host.name, record)?;
        state.save(&shared.dir)?;
    }
    target.close().await;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn run_step(
    shared: &Shared,
    spec: &Spec,
    target: &crate::target::Target,
    transport: &Transport,
    program: &str,
    step: &Step,
    waits: &super::spec::Waits,
) -> Result<StepRecord> {
    let observer = &*shared.observer;
    let profile = spec
        .profiles
        .get(step.profile)
        .cloned()
        .context("a step names a profile the experiment lacks")?;
    let chosen = Chosen::load(&profile)?;
    let run = Run::new(
        chosen,
        &shared.dirs,
        ApplyOptions {
            reboot: spec.reboot.policy(),
            graceful_timeout: waits.graceful,
            job_timeout: waits.job,
            boot_timeout: waits.boot,
            replace_pending: false,
            dry_run: false,
            strict: false,
            apply_time: SettingsApplyTime::on_reset(),
        },
        1,
    )?;
    observer.event(&Event::phase(
        &target.name,
        Phase::ExperimentStep {
            index: step.index,
            profile: profile.clone(),
        },
    ));
    let applied = converge::apply_host(&run, target, observer)
        .await
        .context("applying the profile")?;
    if !matches!(
        applied.outcome,
        converge::Outcome::Converged | converge::Outcome::InSync
    ) {
        crate::error::bail!("the profile did not converge: {}", applied.summary);
    }
    observer.event(&Event::phase(&target.name, Phase::WaitingForOs));
    transport
        .wait_ready(waits.os, Duration::from_secs(1))
        .await
        .context("the OS did not answer")?;
    // Converged or in sync means the apply path verified the profile (a fresh read): reuse it.
    let bios: BTreeMap<String, Value> = applied.in_force.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
    let os = transport.os_view(Duration::from_secs(30)).await.ok();
    let contradictions = os.as_ref().map(|o| contradictions(&bios, o)).unwrap_or_default();
    let mut results = Vec::new();
    let host_dir = shared
        .dir
        .join("results")
        .join(crate::state::path_component(&target.name));
    let has_rftune = super::fio_direct::available(transport, program).await;
    // The host never gets BMC credentials: rftune samples the iDRAC here while benchmarks run.
    let mut meter_target = target.clone();
    let meter = Meter::new(&mut meter_target).await?;
    for (kind, args) in spec.benchmarks.commands() {
        let remote = format!(
            "/tmp/rftune-experiment-{}-{}-{:03}-{}",
            crate::state::path_component(spec.name.as_deref().unwrap_or("experiment")),
            crate::state::path_component(&target.name),
            step.index,
            kind.as_str()
        );
        let local = host_dir.join(format!(
            "{:03}-{}-{}.json",
            step.index,
            crate::state::path_component(&profile),
            kind.as_str()
        ));
        if !has_rftune {
            match (kind, &spec.benchmarks.storage) {
                (BenchKind::Storage, Some(storage)) if super::fio_direct::available(transport, "fio").await => {
                    observer.event(&Event::phase(
                        &target.name,
                        Phase::Benchmark {
                            index: step.index,
                            kind: kind.as_str().to_owned(),
                            how: Some(format!("fio directly (no {program} on the host)")),
                        },
                    ));
                    super::fio_direct::run(transport, storage, &profile, &remote, &meter, waits.bench, &local).await?;
                    results.push(local);
                    continue;
                }
                _ => crate::error::bail!(
                    "{program} is not installed on the host (and the {} benchmark needs it{})",
                    kind.as_str(),
                    if kind == BenchKind::Storage { ", or fio" } else { "" }
                ),
            }
        }
        observer.event(&Event::phase(
            &target.name,
            Phase::Benchmark {
                index: step.index,
                kind: kind.as_str().to_owned(),
                how: None,
            },
        ));
        let argv = bench_argv(program, kind, &args, &profile, &remote);
        let (ran, samples) = meter
            .sample_while(
                Duration::from_secs(1),
                std::time::Instant::now(),
                transport.run_ok(&argv, waits.bench),
            )
            .await;
        ran.with_context(|| format!("running the {} benchmark", kind.as_str()))?;
        transport
            .fetch(&format!("{remote}/bench.json"), &local, Duration::from_secs(60))
            .await?;
        match samples {
            Ok(samples) => add_power(&local, &samples)?,
            Err(e) => tracing::warn!(
                "{}: no power readings during the {} benchmark: {}",
                target.name,
                kind.as_str(),
                crate::error::report(&e)
            ),
        }
        results.push(local);
    }
    Ok(StepRecord {
        step: *step,
        profile,
        outcome: StepOutcome::Done,
        results,
        bios,
        os,
        contradictions,
        reason: None,
        finished_at: crate::audit::now_iso(),
    })
}

/// Adds the iDRAC power sampled during a benchmark to its document (when the host did not
/// measure it itself): the average over the whole run, and performance per watt from it.
fn add_power(file: &Path, samples: &[host_bench::power::Sample]) -> Result<()> {
    let Some(stats) = host_bench::power::stats(samples) else {
        return Ok(());
    };
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let mut doc: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    let watts = stats.average_w;
    if watts <= 0.0 {
        return Ok(());
    }
    let trace = serde_json::to_value(samples)?;
    if let Some(memory) = doc.get_mut("memory").and_then(Value::as_object_mut)
        && memory.get("power_w").is_none_or(Value::is_null)
    {
        memory.insert("power_w".into(), json!(watts));
        let triad = memory.get("gbs").and_then(|g| g.get("Triad")).and_then(Value::as_f64);
        memory.insert("triad_gbs_per_watt".into(), json!(triad.map(|t| t / watts)));
        memory.insert("power_trace".into(), trace.clone());
    }
    if let Some(tests) = doc
        .get_mut("storage")
        .and_then(|s| s.get_mut("tests"))
        .and_then(Value::as_array_mut)
    {
        for t in tests.iter_mut().filter(|t| t.get("power_w").is_none_or(Value::is_null)) {
            let iops = t.get("iops").and_then(Value::as_f64);
            let bw = t.get("bw_bytes").and_then(Value::as_f64);
            t["power_w"] = json!(watts);
            t["iops_per_watt"] = json!(iops.map(|i| i / watts));
            t["mbps_per_watt"] = json!(bw.map(|b| b / 1e6 / watts));
        }
    }
    doc["power_caveat"] = json!(format!(
        "iDRAC readings sampled by rftune experiment every second over the whole benchmark run ({} readings, {:.0} s, {:.0} J); \
         per-test figures use that run average. BMC readings, not a calibrated meter.",
        stats.n, stats.duration_s, stats.energy_j
    ));
    crate::state::write_private(file, serde_json::to_string_pretty(&doc)?.as_bytes())
}
