//! `rftune experiment run|resume`: each host in parallel walks its steps in order — apply the
//! step's profile through the apply path (one reboot, verified), wait until the OS answers,
//! record the BIOS values in force and what the OS shows, run the benchmarks on the host, copy
//! the results back — and the state is saved after every step, so an interrupted experiment
//! resumes after the last finished step. A host whose apply fails is skipped for that step with
//! the reason recorded, never benchmarked under the wrong settings.

use crate::compare::Method;
use crate::error::{Context, Error, Result, report as error_report};
use crate::observe::{Event, Observer, Phase};
use crate::report;
use crate::schedule::{self, Step};
use crate::spec::{BenchKind, FileSystemBench, Given, HostSpec, OsAccess, Spec, StorageBench, Waits, bench_argv};
use crate::state::{State, StepOutcome, StepRecord};
use crate::transport::on_host;
use host_bench::exec::Local;
use host_bench::filesystem::{self as fs_bench, Client, FsRun, FsSettings};
use host_bench::report::BenchReport;
use host_bench::run::{self as bench_run, NamedPower, StorageRun, StorageSettings};
use host_bench::ssh::{OnHost, Transport};
use redfish_client::resources::bios::SettingsApplyTime;
use rftune_engine::assess::{AssessOptions, Blocked, LoadedProfile};
use rftune_engine::audit::AuditLog;
use rftune_engine::connect::{Bmc, ConnectConfig};
use rftune_engine::converge::{self, ApplyOptions, ApplyRun};
use rftune_engine::lifecycle::Access;
use rftune_engine::meter::Meter;
use rftune_engine::state::StateDirs;
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

/// Runs (or resumes) the experiment whose state lives in `dir`, reaching the hosts' BMCs with
/// `connect` (one password for them all, or each host's credentials file) and `dirs`, telling
/// `observer` of the engine's events and the experiment's; then writes its report.
pub async fn run(
    state: State,
    dir: &Path,
    connect: ConnectConfig,
    dirs: StateDirs,
    observer: Arc<dyn Observer>,
) -> Result<Finished> {
    let access = &Access::new(connect, dirs, observer.clone());
    let dirs = &*access.dirs;
    let spec = state.spec.clone();
    let waits = spec.timeouts.waits()?;
    let audit = AuditLog::open(&dirs.state)?;
    // Every profile loads before anything is written: a typo stops the run, not every step.
    let runs = apply_runs(&spec, &waits, dirs, &audit)?;
    let plan = schedule::plan(&spec);
    // Every host is connected, and every profile it will get checked against its registry,
    // before the first step: a profile one host cannot take stops the run before any reboot.
    let mut bmcs = preflight(&spec, &state, &plan, &runs, access, &audit).await?;
    rftune_engine::state::ensure_private_dir(dir)?;
    state.save(dir)?;
    let shared = Arc::new(Shared {
        state: Mutex::new(state),
        dir: dir.to_owned(),
        audit,
        runs,
        waits,
        observer,
    });
    let mut host_errors = Vec::new();
    let mut tasks = tokio::task::JoinSet::new();
    if let Some(fs) = &spec.benchmarks.filesystem {
        let hosts: Vec<(HostSpec, rftune_engine::Result<Bmc>)> = spec
            .hosts
            .iter()
            .filter_map(|h| Some((h.clone(), bmcs.remove(&h.name)?)))
            .collect();
        let steps = plan.values().next().cloned().unwrap_or_default();
        if let Err(e) = run_together(&shared, &spec, fs, hosts, &steps).await {
            host_errors.push(error_report(&e));
        }
    }
    for host in spec.hosts.iter().cloned() {
        let Some(bmc) = bmcs.remove(&host.name) else {
            continue;
        };
        let steps = plan.get(&host.name).cloned().unwrap_or_default();
        let (shared, spec) = (shared.clone(), spec.clone());
        tasks.spawn(async move {
            let name = host.name.clone();
            (name, run_host(&shared, &spec, &host, bmc, &steps).await)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((_, Ok(()))) => {}
            Ok((name, Err(e))) => host_errors.push(named(&name, &error_report(&e))),
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

/// `text` about `host`, named once: errors from the host's connection already start with its
/// name.
fn named(host: &str, text: &str) -> String {
    format!("{host}: {}", rftune_engine::error::without_host(host, text))
}

struct Shared {
    state: Mutex<State>,
    dir: PathBuf,
    audit: AuditLog,
    /// The apply run of each profile, by its index in the spec.
    runs: Vec<ApplyRun>,
    waits: Waits,
    observer: Arc<dyn Observer>,
}

/// One apply run per profile, built once: all of them share the experiment's audit log (one run
/// id), one registry cache, and one reboot semaphore with a permit per host (hosts never wait
/// for each other's reboots).
fn apply_runs(spec: &Spec, waits: &Waits, dirs: &StateDirs, audit: &AuditLog) -> Result<Vec<ApplyRun>> {
    let cache = dirs.registry_cache();
    let options = ApplyOptions {
        reboot: spec.reboot.policy(),
        graceful_timeout: waits.graceful,
        job_timeout: waits.job,
        boot_timeout: waits.boot,
        replace_pending: false,
        dry_run: false,
        strict: false,
        apply_time: SettingsApplyTime::on_reset(),
        hooks: spec.hooks.hooks()?,
        keep_staged: false,
        lock_wait: Duration::ZERO,
        from_defaults: false,
        password: None,
    };
    let writes = rftune_engine::write::Writes::new(
        "apply",
        options.write_options(),
        audit.clone(),
        &dirs.state,
        spec.hosts.len(),
    );
    spec.profiles
        .iter()
        .map(|profile| {
            let profile = LoadedProfile::load(profile)?;
            Ok(ApplyRun {
                writes: writes.clone().labelled(profile.name()),
                profile,
                cache: cache.clone(),
                options: options.clone(),
                plan: None,
            })
        })
        .collect()
}

/// What the host's OS offers to run the benchmarks with.
#[derive(Debug, Clone, Copy)]
struct Tools {
    /// rftune itself.
    rftune: bool,
    /// fio, looked for only without rftune and with a storage benchmark.
    fio: bool,
}

/// One host's side of the experiment, set up once for all its steps.
struct HostRun<'a> {
    bmc: &'a Bmc,
    /// The iDRAC's power, sampled here while benchmarks run (the host never gets BMC
    /// credentials): the chassis and its sensor do not change between steps.
    meter: Meter<'a>,
    transport: Transport,
    /// The rftune program on the host.
    program: String,
    /// Probed once, at the first step whose OS answers.
    tools: Option<Tools>,
}

impl HostRun<'_> {
    /// What the host offers, probed the first time only.
    async fn tools(&mut self, storage: bool) -> Result<Tools> {
        if let Some(tools) = self.tools {
            return Ok(tools);
        }
        let rftune = self.transport.has_program(&self.program).await?;
        let fio = !rftune && storage && self.transport.has_program("fio").await?;
        Ok(*self.tools.insert(Tools { rftune, fio }))
    }
}

async fn run_host(
    shared: &Shared,
    spec: &Spec,
    host: &HostSpec,
    bmc: rftune_engine::Result<Bmc>,
    steps: &[Step],
) -> Result<()> {
    let remaining: Vec<Step> = shared.state.lock().await.remaining(&host.name, steps).to_vec();
    let bmc = bmc?;
    let result = match bmc.chassis_id().await {
        Ok(chassis) => run_steps(shared, spec, host, &bmc, chassis, remaining).await,
        Err(e) => Err(e.into()),
    };
    bmc.close().await;
    result
}

/// Connects every host that has steps left and checks every profile of those steps against
/// what the host shows (resolved for its generation and model, validated against its
/// registry), all hosts at once. A host that cannot be reached keeps its error (its steps stop
/// as they would have); a profile a reachable host cannot take fails the whole run, naming
/// every such host and profile, before anything is written. A host an earlier run left
/// mid-apply is only connected: its apply recovers it first.
async fn preflight(
    spec: &Spec,
    state: &State,
    plan: &BTreeMap<String, Vec<Step>>,
    runs: &[ApplyRun],
    access: &Access,
    audit: &AuditLog,
) -> Result<BTreeMap<String, rftune_engine::Result<Bmc>>> {
    let (observer, dirs) = (&*access.observer, &*access.dirs);
    let checks = spec.hosts.iter().filter_map(|host| {
        let steps = plan.get(&host.name).map(Vec::as_slice).unwrap_or_default();
        let mut profiles: Vec<usize> = state.remaining(&host.name, steps).iter().map(|s| s.profile).collect();
        if profiles.is_empty() {
            return None;
        }
        profiles.sort_unstable();
        profiles.dedup();
        Some(async move {
            let connected = access.open(&host.entry(), Some(audit), false).await;
            let mut problems = Vec::new();
            if let Ok(bmc) = &connected
                && !rftune_engine::marker::interrupted(&dirs.state, &host.name)
            {
                observer.event(&rftune_engine::Event::phase(
                    &host.name,
                    rftune_engine::observe::Phase::Reading,
                ));
                for i in profiles {
                    let (Some(run), Some(name)) = (runs.get(i), spec.profiles.get(i)) else {
                        continue;
                    };
                    let assessed =
                        rftune_engine::assess::assess(bmc, &run.profile, &run.cache, AssessOptions::default()).await;
                    let blocked = assessed.map(|a| a.blocked());
                    match blocked {
                        Ok(Some(Blocked::Lockdown)) => {
                            problems.push(format!(
                                "{}: {}",
                                host.name,
                                rftune_engine::read::lockdown_reason(&bmc.backend())
                            ));
                            break;
                        }
                        Ok(Some(Blocked::NotApplicable(errors))) => {
                            problems.push(format!(
                                "{}: profile {name:?} cannot be applied as written:\n    {}",
                                host.name,
                                errors.join("\n    ")
                            ));
                        }
                        Ok(None) => {}
                        Err(e) => {
                            let text = error_report(&e);
                            let text = rftune_engine::error::without_host(&host.name, &text);
                            problems.push(format!("{}: profile {name:?}: {text}", host.name));
                        }
                    }
                }
            }
            (host.name.clone(), connected, problems)
        })
    });
    let checked = futures_util::future::join_all(checks).await;
    let mut bmcs = BTreeMap::new();
    let mut problems = Vec::new();
    for (name, connected, found) in checked {
        problems.extend(found);
        bmcs.insert(name, connected);
    }
    if !problems.is_empty() {
        for bmc in bmcs.values().filter_map(|t| t.as_ref().ok()) {
            bmc.close().await;
        }
        return Err(Error::PreflightRefused(problems));
    }
    Ok(bmcs)
}

/// The remaining steps of hosts measured together (a file system's servers, by the suite run
/// from its clients), in order: per step every host applies the profile and its OS answers, all
/// at once; then the suite runs once with every host's power summed, and the step is recorded
/// on every host with the same result. A host whose apply fails skips the step for all: the
/// others alone would be measured under mixed profiles. Every host must be reachable.
async fn run_together(
    shared: &Shared,
    spec: &Spec,
    fs: &FileSystemBench,
    hosts: Vec<(HostSpec, rftune_engine::Result<Bmc>)>,
    steps: &[Step],
) -> Result<()> {
    let mut bmcs = Vec::new();
    let mut unreachable = Vec::new();
    for (h, bmc) in hosts {
        match bmc {
            Ok(b) => bmcs.push((h, b)),
            Err(e) => unreachable.push(named(&h.name, &error_report(&Error::from(e)))),
        }
    }
    let result = if unreachable.is_empty() {
        together_steps(shared, spec, fs, &bmcs, steps).await
    } else {
        Err(Error::bad_input(format!(
            "the file system's servers are measured together, and not every one could be reached: {}",
            unreachable.join("; ")
        )))
    };
    for (_, bmc) in &bmcs {
        bmc.close().await;
    }
    result
}

async fn together_steps(
    shared: &Shared,
    spec: &Spec,
    fs: &FileSystemBench,
    bmcs: &[(HostSpec, Bmc)],
    steps: &[Step],
) -> Result<()> {
    let mut hosts = Vec::new();
    for (h, bmc) in bmcs {
        let chassis = bmc.chassis_id().await?;
        hosts.push((
            h,
            HostRun {
                bmc,
                meter: Meter::of_chassis(bmc, chassis).await?,
                transport: Transport::from(&h.os),
                program: String::new(),
                tools: None,
            },
        ));
    }
    let Some((first, _)) = bmcs.first() else {
        return Ok(());
    };
    let group = spec.together_name();
    let remaining: Vec<Step> = shared.state.lock().await.remaining(&first.name, steps).to_vec();
    for step in remaining {
        let profile = spec.profiles.get(step.profile).cloned().unwrap_or_default();
        let applied =
            futures_util::future::join_all(hosts.iter().map(|(_, h)| apply_and_wait(shared, spec, h, &step))).await;
        let problems: Vec<String> = hosts
            .iter()
            .zip(&applied)
            .filter_map(|((h, _), a)| a.as_ref().err().map(|e| named(&h.name, &error_report(e))))
            .collect();
        let measured = if problems.is_empty() {
            shared.observer.experiment(&Event::new(
                &group,
                Phase::Benchmark {
                    index: step.index,
                    kind: "filesystem".into(),
                    how: Some(format!(
                        "from {} client hosts, every server's power summed",
                        fs.clients.len()
                    )),
                },
            ));
            let power: Vec<NamedPower<'_>> = hosts
                .iter()
                .map(|(h, run)| (h.name.clone(), &run.meter as &dyn host_bench::run::PowerSource))
                .collect();
            let local = shared.dir.join("results").join("filesystem").join(format!(
                "{:03}-{}",
                step.index,
                rftune_engine::state::path_component(&profile)
            ));
            match filesystem_suite(fs, &profile, &power, &local.join("fio"), shared.waits.bench).await {
                Ok(doc) => {
                    let file = local.with_extension("json");
                    write_result(&file, &serde_json::to_vec_pretty(&doc)?).map(|()| file)
                }
                Err(e) => Err(e),
            }
        } else {
            Err(Error::bad_input(problems.join("; ")))
        };
        let mut state = shared.state.lock().await;
        for ((h, _), applied) in hosts.iter().zip(applied) {
            let (outcome, results, reason) = match &measured {
                Ok(file) => (StepOutcome::Done, vec![file.clone()], None),
                Err(e) => (StepOutcome::Skipped, Vec::new(), Some(error_report(e))),
            };
            let seen = applied.ok();
            let record = StepRecord {
                step,
                profile: profile.clone(),
                outcome,
                results,
                bios: seen.as_ref().map(|s| s.bios.clone()).unwrap_or_default(),
                os: seen.as_ref().and_then(|s| s.os.clone()),
                contradictions: seen.map(|s| s.contradictions).unwrap_or_default(),
                reason,
                finished_at: host_bench::utc_now_seconds(),
            };
            shared.audit.record(
                &h.name,
                rftune_engine::audit::Step::Named("experiment:step"),
                json!({"experiment": spec.name(), "step": step.index, "profile": profile, "together": group}),
                if measured.is_ok() { "ok" } else { "skipped" },
                json!({"results": record.results, "reason": record.reason}),
            )?;
            state.record(&h.name, record)?;
        }
        state.save(&shared.dir)?;
    }
    Ok(())
}

/// The file-system suite of `fs` from its clients, labelled `label`: fio's servers on the
/// clients over ssh, the front end here writing into `workdir`, the servers' power from `power`.
async fn filesystem_suite(
    fs: &FileSystemBench,
    label: &str,
    power: &[NamedPower<'_>],
    workdir: &Path,
    timeout: Duration,
) -> Result<BenchReport> {
    let transports: Vec<Transport> = fs
        .clients
        .iter()
        .map(|c| {
            let (target, port) = host_bench::ssh::SshTarget::parse(&c.target)?;
            Ok(Transport::Ssh(host_bench::ssh::SshTarget {
                target,
                port: c.port.or(port),
                config: c.config.clone(),
                connect_timeout: Duration::from_secs(10),
            }))
        })
        .collect::<Result<_>>()?;
    let execs: Vec<OnHost<'_>> = transports.iter().map(|t| on_host(t, timeout)).collect();
    let clients = execs
        .iter()
        .zip(&transports)
        .map(|(exec, t)| Client { exec, server: Some(t) })
        .collect();
    let bytes = |g: &Option<Given<crate::spec::Bytes>>| -> Result<Option<u64>> {
        g.as_ref().map(|g| g.value().map(|b| b.0)).transpose()
    };
    let settings = FsSettings {
        target: PathBuf::from(&fs.target),
        fs_type: fs.fs_type.clone(),
        tests: fs.tests.clone().unwrap_or_else(|| "all".into()),
        threads: fs.threads.clone(),
        oversubscribe: fs.oversubscribe,
        method: if fs.quick {
            fs_bench::Method::Quick
        } else {
            fs_bench::Method::Published
        },
        data_size: bytes(&fs.data_size)?,
        server_memory: bytes(&fs.server_memory)?,
        record_size: bytes(&fs.record_size)?,
        random_io: bytes(&fs.random_io)?,
        random_runtime: fs.random_runtime.as_ref().map(Given::value).transpose()?,
        md_files: fs.md_files,
        workdir: workdir.to_owned(),
        common: bench_run::Common {
            label: Some(label.to_owned()),
            power_optional: true,
            ..bench_run::Common::default()
        },
        ..FsSettings::default()
    };
    let here = Local::default();
    let run = FsRun::new(settings, clients, &here).await?;
    Ok(fs_bench::run(&run, &[], power, &bench_run::NoProgress).await?)
}

/// The host's remaining steps, in order, each recorded (done or skipped) as it ends.
async fn run_steps(
    shared: &Shared,
    spec: &Spec,
    host: &HostSpec,
    bmc: &Bmc,
    chassis: redfish_client::ODataId,
    remaining: Vec<Step>,
) -> Result<()> {
    let mut on_host = HostRun {
        bmc,
        meter: Meter::of_chassis(bmc, chassis).await?,
        transport: Transport::from(&host.os),
        program: match &host.os {
            OsAccess::Local { rftune } => rftune
                .clone()
                .or_else(|| std::env::current_exe().ok().map(|p| p.display().to_string()))
                .unwrap_or_else(|| "rftune".into()),
            OsAccess::Ssh { rftune, .. } => rftune.clone().unwrap_or_else(|| "rftune".into()),
        },
        tools: None,
    };
    let experiment = spec.name.clone().unwrap_or_else(|| "experiment".into());
    for step in remaining {
        let profile = spec.profiles.get(step.profile).cloned().unwrap_or_default();
        let audit = |outcome: &str, detail: Value| {
            shared.audit.record(
                &host.name,
                rftune_engine::audit::Step::Named("experiment:step"),
                json!({"experiment": experiment, "step": step.index, "profile": profile}),
                outcome,
                detail,
            )
        };
        let record = match run_step(shared, spec, &mut on_host, &step).await {
            Ok(done) => {
                audit("ok", json!({"results": done.results}))?;
                done
            }
            Err(e) => {
                let reason = error_report(&e);
                audit("skipped", json!(reason))?;
                StepRecord {
                    step,
                    profile: profile.clone(),
                    outcome: StepOutcome::Skipped,
                    results: Vec::new(),
                    bios: BTreeMap::new(),
                    os: None,
                    contradictions: Vec::new(),
                    reason: Some(reason),
                    finished_at: host_bench::utc_now_seconds(),
                }
            }
        };
        let mut state = shared.state.lock().await;
        state.record(&host.name, record)?;
        state.save(&shared.dir)?;
    }
    Ok(())
}

/// What a host showed once a step's profile was in force and its OS answered.
struct InForce {
    /// The profile's name.
    profile: String,
    /// The BIOS values the apply verified.
    bios: BTreeMap<String, Value>,
    /// What the OS shows.
    os: Option<host_bench::host::OsView>,
    /// BIOS values the OS contradicts.
    contradictions: Vec<String>,
}

/// Applies the step's profile through the apply path (one reboot, verified), waits until the
/// OS answers, and reads what it shows against the BIOS values in force.
async fn apply_and_wait(shared: &Shared, spec: &Spec, host: &HostRun<'_>, step: &Step) -> Result<InForce> {
    let observer = &*shared.observer;
    let waits = &shared.waits;
    let (profile, run) = spec
        .profiles
        .get(step.profile)
        .zip(shared.runs.get(step.profile))
        .ok_or_else(|| Error::bad_input("a step names a profile the experiment lacks"))?;
    let bmc = host.bmc;
    observer.experiment(&Event::new(
        &bmc.name,
        Phase::Step {
            index: step.index,
            profile: profile.clone(),
        },
    ));
    let applied = converge::apply_host(run, bmc, observer)
        .await
        .context("applying the profile")?;
    if !matches!(
        applied.outcome,
        converge::ApplyOutcome::Converged | converge::ApplyOutcome::InSync
    ) {
        return Err(Error::NotConverged(format!(
            "the profile did not converge: {}",
            applied.summary
        )));
    }
    observer.experiment(&Event::new(&bmc.name, Phase::WaitingForOs));
    let transport = &host.transport;
    transport
        .wait_ready(waits.os, Duration::from_secs(1))
        .await
        .context("the OS did not answer")?;
    // Converged or in sync means the apply path verified the profile (a fresh read): reuse it.
    let bios: BTreeMap<String, Value> = applied.in_force.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
    let os = transport.os_view(Duration::from_secs(30)).await.ok();
    let contradictions = os
        .as_ref()
        .map(|o| {
            let facts = bios_profiles::os::OsFacts {
                smt_active: o.smt_active,
                numa_nodes: o.numa_nodes,
                sockets: o.sockets,
                idle_states: &o.idle_states,
            };
            bios_profiles::os::contradictions(|name| bios.get(name).and_then(serde_json::Value::as_str), &facts)
        })
        .unwrap_or_default();
    Ok(InForce {
        profile: profile.clone(),
        bios,
        os,
        contradictions,
    })
}

async fn run_step(shared: &Shared, spec: &Spec, host: &mut HostRun<'_>, step: &Step) -> Result<StepRecord> {
    let observer = &*shared.observer;
    let waits = &shared.waits;
    let InForce {
        profile,
        bios,
        os,
        contradictions,
    } = apply_and_wait(shared, spec, host, step).await?;
    let profile = &profile;
    let bmc = host.bmc;
    let mut results = Vec::new();
    let host_dir = shared
        .dir
        .join("results")
        .join(rftune_engine::state::path_component(&bmc.name));
    let tools = host
        .tools(spec.benchmarks.storage.is_some())
        .await
        .context("looking for rftune and fio on the host")?;
    let (transport, meter, program) = (&host.transport, &host.meter, host.program.as_str());
    for (kind, args) in spec.benchmarks.commands() {
        let remote = format!(
            "/tmp/rftune-experiment-{}-{}-{:03}-{}",
            rftune_engine::state::path_component(spec.name.as_deref().unwrap_or("experiment")),
            rftune_engine::state::path_component(&bmc.name),
            step.index,
            kind.as_str()
        );
        let local = host_dir.join(format!(
            "{:03}-{}-{}.json",
            step.index,
            rftune_engine::state::path_component(profile),
            kind.as_str()
        ));
        if !tools.rftune {
            match (kind, &spec.benchmarks.storage) {
                (BenchKind::Storage, Some(storage)) if tools.fio => {
                    observer.experiment(&Event::new(
                        &bmc.name,
                        Phase::Benchmark {
                            index: step.index,
                            kind: kind.as_str().to_owned(),
                            how: Some(format!("fio directly (no {program} on the host)")),
                        },
                    ));
                    let exec = on_host(transport, waits.bench);
                    let doc = fio_directly(&exec, storage, profile, &remote, meter).await?;
                    write_result(&local, &serde_json::to_vec_pretty(&doc)?)?;
                    results.push(local);
                    continue;
                }
                _ => {
                    return Err(Error::MissingProgram(format!(
                        "{program} is not installed on the host (and the {} benchmark needs it{})",
                        kind.as_str(),
                        if kind == BenchKind::Storage { ", or fio" } else { "" }
                    )));
                }
            }
        }
        observer.experiment(&Event::new(
            &bmc.name,
            Phase::Benchmark {
                index: step.index,
                kind: kind.as_str().to_owned(),
                how: None,
            },
        ));
        let argv = bench_argv(program, kind, &args, profile, &remote);
        let (ran, samples) = meter
            .sample_while(
                Duration::from_secs(1),
                std::time::Instant::now(),
                transport.run_ok(&argv, waits.bench),
            )
            .await;
        ran.with_context(|| format!("running the {} benchmark", kind.as_str()))?;
        let document = transport
            .fetch(
                &format!("{remote}/bench.json"),
                rftune_engine::state::MAX_DOCUMENT_BYTES,
                Duration::from_secs(60),
            )
            .await?;
        let document = match samples {
            Ok(samples) => with_power(document, &samples, &local),
            Err(e) => {
                tracing::warn!(
                    "{}: no power readings during the {} benchmark: {}",
                    bmc.name,
                    kind.as_str(),
                    error_report(&e)
                );
                document
            }
        };
        write_result(&local, &document)?;
        results.push(local);
    }
    Ok(StepRecord {
        step: *step,
        profile: profile.clone(),
        outcome: StepOutcome::Done,
        results,
        bios,
        os,
        contradictions,
        reason: None,
        finished_at: host_bench::utc_now_seconds(),
    })
}

/// The storage benchmark without rftune on the host: host-bench's storage run with fio over the
/// transport (files only, as rftune would lay them out: created with its header, or already
/// carrying it; never a user's file), the iDRAC's power sampled here around each test. A target
/// file the run created is removed again if it fails.
async fn fio_directly(
    exec: &OnHost<'_>,
    storage: &StorageBench,
    label: &str,
    remote: &str,
    meter: &Meter<'_>,
) -> Result<BenchReport> {
    let defaults = StorageSettings::default();
    let seconds = |given: &Option<Given<Duration>>, default: Duration| -> Result<Duration> {
        given.as_ref().map_or(Ok(default), Given::value)
    };
    let size = match &storage.size {
        Some(given) => Some(
            given
                .value()
                .with_context(|| format!("benchmarks.storage.size of {}", storage.target))?
                .0,
        ),
        None => None,
    };
    let settings = StorageSettings {
        target: PathBuf::from(&storage.target),
        size,
        tests: storage.tests.clone().unwrap_or_else(|| "all".into()),
        runtime: seconds(&storage.runtime, defaults.runtime)?,
        ramp: seconds(&storage.ramp, defaults.ramp)?,
        numjobs: storage.numjobs.unwrap_or(defaults.numjobs),
        ioengine: storage.ioengine.unwrap_or(defaults.ioengine),
        consent: host_bench::device::Consent {
            destroy_data: storage.destroy_data,
            confirm_serial: storage.confirm_serial.clone(),
        },
        workdir: PathBuf::from(remote),
        common: bench_run::Common {
            label: Some(label.to_owned()),
            power_optional: true,
            ..bench_run::Common::default()
        },
        ..defaults
    };
    let run = StorageRun::new(settings, exec).await?;
    let mut doc = bench_run::storage(&run, None, meter, &bench_run::NoProgress).await?;
    doc.power_caveat = Some(format!(
        "fio run directly over the transport (rftune is not installed on the host); {}",
        host_bench::power::CAVEAT
    ));
    Ok(doc)
}

/// Writes a result document (privately, through a temporary file so a partial copy never looks
/// finished).
fn write_result(file: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(rftune_engine::state::write_private(file, bytes)?)
}

/// The document the host wrote (`file` is where it will be kept) with the iDRAC power sampled
/// here during its benchmark attached (it has none of its own: the host never gets BMC
/// credentials), through host-bench's reader. A document this rftune cannot read is kept as it
/// is; the report lists it.
fn with_power(document: Vec<u8>, samples: &[host_bench::power::Sample], file: &Path) -> Vec<u8> {
    let mut doc = match host_bench::report::parse(&String::from_utf8_lossy(&document)) {
        Ok(doc) => doc,
        Err(e) => {
            tracing::warn!("{}: power readings not attached: {e}", file.display());
            return document;
        }
    };
    let attached = doc.attach_run_power(
        samples,
        "iDRAC readings sampled by rftune experiment every second over the whole benchmark run",
    );
    if !attached {
        return document;
    }
    serde_json::to_vec_pretty(&doc).unwrap_or(document)
}
