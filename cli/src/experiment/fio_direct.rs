//! The storage benchmark without rftune on the host: fio itself, over the same transport, with
//! the seed's seven tests and shared options from `host_bench::fio`, parsed here into a
//! `rftune.bench/v1` document. Only files are accepted as targets: the raw-device safety checks
//! live in rftune, which is what is missing on the host.

use super::spec::StorageBench;
use super::transport::Transport;
use crate::commands::power::Meter;
use anyhow::{Context, Result, bail};
use host_bench::fio::{self, IoEngine};
use host_bench::host::HostInfo;
use host_bench::report::{self, BenchReport, RunReport, Storage, TestReport};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Whether `program` can be run on the host.
pub async fn available(transport: &Transport, program: &str) -> bool {
    let probe = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        format!("command -v {} >/dev/null", super::transport::shell_quote(program)),
    ];
    transport
        .run(&probe, Duration::from_secs(30))
        .await
        .is_ok_and(|o| o.success())
}

fn seconds(text: Option<&str>, default: u64) -> Result<u64> {
    match text {
        Some(t) => Ok(humantime::parse_duration(t.trim())
            .with_context(|| format!("duration {t:?}"))?
            .as_secs()),
        None => Ok(default),
    }
}

/// Runs the configured fio tests on the host with fio directly, sampling power with `meter`,
/// and writes the bench document to `local`.
pub async fn run(
    transport: &Transport,
    storage: &StorageBench,
    label: &str,
    remote: &str,
    meter: &Meter<'_>,
    timeout: Duration,
    local: &Path,
) -> Result<()> {
    let target = storage.target.clone();
    let quoted = super::transport::shell_quote(&target);
    // Refuse anything that exists and is not a regular file (block and character devices, ...).
    let not_a_file = transport
        .run(
            &[
                "sh".to_owned(),
                "-c".to_owned(),
                format!("test -e {quoted} && ! test -f {quoted}"),
            ],
            Duration::from_secs(30),
        )
        .await
        .is_ok_and(|o| o.success());
    if not_a_file || storage.destroy_data {
        bail!(
            "{target}: without rftune on the host, experiments run fio only on files (the raw-device safety checks are rftune's)"
        );
    }
    let tests = fio::select(storage.tests.as_deref().unwrap_or("all"))?;
    let mut engine = match storage.ioengine.as_deref() {
        Some("libaio") => IoEngine::Libaio,
        _ => IoEngine::IoUring,
    };
    let opts = fio::Options {
        target: PathBuf::from(&target),
        size: Some(match storage.size.as_deref() {
            Some(text) => fio::parse_size(text).with_context(|| format!("benchmarks.storage.size of {target}"))?,
            None => 4 << 30,
        }),
        offset: 0,
        runtime_s: seconds(storage.runtime.as_deref(), 60)?,
        ramp_s: seconds(storage.ramp.as_deref(), 5)?,
        numjobs: storage.numjobs.unwrap_or(1),
        ioengine: engine,
    };
    transport
        .run_ok(
            &["mkdir".to_owned(), "-p".to_owned(), remote.to_owned()],
            Duration::from_secs(30),
        )
        .await?;
    let version = transport
        .run_ok(&["fio".to_owned(), "--version".to_owned()], Duration::from_secs(30))
        .await?
        .stdout_text();
    let started_at = host_bench::utc_now();
    let mut reports = Vec::new();
    let mut fallback = None;
    for spec in &tests {
        let output = format!("{remote}/{}.json", spec.name);
        let mut attempt = 0;
        let (out, samples) = loop {
            attempt += 1;
            let mut argv = vec!["fio".to_owned()];
            argv.extend(fio::job_args(
                spec,
                &opts,
                engine,
                Path::new(&output),
                Path::new(&format!("{remote}/{}", spec.name)),
            ));
            let (ran, samples) = meter
                .sample_while(Duration::from_secs(1), Instant::now(), transport.run(&argv, timeout))
                .await;
            let ran = ran?;
            if !ran.success() && engine == IoEngine::IoUring && attempt == 1 && fio::io_uring_unavailable(&ran.stderr) {
                engine = IoEngine::Libaio;
                fallback = Some("io_uring is unavailable on the host; libaio was used".to_owned());
                continue;
            }
            if !ran.success() {
                bail!("fio {} failed on the host: {}", spec.name, ran.stderr.trim());
            }
            break (ran, samples);
        };
        drop(out);
        let text = transport
            .run_ok(&["cat".to_owned(), output.clone()], Duration::from_secs(60))
            .await?
            .stdout_text();
        let parsed = fio::parse(&text).with_context(|| format!("fio {} output", spec.name))?;
        let samples = samples.unwrap_or_default();
        let measured = host_bench::power::window(&samples, opts.ramp_s as f64, f64::INFINITY);
        let run = RunReport {
            metrics: parsed.metrics(),
            power: host_bench::power::stats(&measured),
            power_trace: samples,
            iops_trace: Vec::new(),
        };
        reports.push(TestReport::new(spec, opts.numjobs, engine, fallback.clone(), vec![run]));
    }
    let uname = transport
        .run_ok(&["uname".to_owned(), "-nr".to_owned()], Duration::from_secs(30))
        .await?
        .stdout_text();
    let mut parts = uname.split_whitespace();
    let problems: Vec<String> = reports
        .iter()
        .flat_map(|t| t.problems.iter().map(|p| format!("{}: {p}", t.name)))
        .collect();
    let doc = BenchReport {
        schema: report::SCHEMA.into(),
        kind: "storage".into(),
        label: Some(label.to_owned()),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at,
        finished_at: host_bench::utc_now(),
        host: HostInfo {
            hostname: parts.next().map(str::to_owned),
            kernel: parts.next().map(str::to_owned),
            cpu_model: None,
            logical_cpus: 0,
            cores: 0,
            smt_active: None,
            numa_nodes: 0,
            cpuidle_states: Vec::new(),
            llc_bytes: None,
        },
        bmc: None,
        storage: Some(Storage {
            target,
            target_kind: "file".into(),
            size: opts.size.map(fio::format_size),
            runtime_s: opts.runtime_s,
            ramp_s: opts.ramp_s,
            numjobs: opts.numjobs,
            ioengine: engine.as_str().into(),
            fio_version: Some(version.trim().to_owned()),
            precondition: None,
            tests: reports,
        }),
        memory: None,
        power_caveat: Some(format!(
            "fio run directly over the transport (rftune is not installed on the host); {}",
            host_bench::power::CAVEAT
        )),
        valid: problems.is_empty(),
        problems,
    };
    if let Some(dir) = local.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    crate::snapshot::write_private(local, serde_json::to_string_pretty(&doc)?.as_bytes())
}
