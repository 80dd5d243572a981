//! The storage benchmark without rftune on the host: fio itself, over the same transport, with
//! the seed's seven tests and shared options from `host_bench::fio`, parsed here into a
//! `rftune.bench/v1` document. Only files are accepted as targets (the raw-device safety checks
//! live in rftune, which is what is missing on the host), and only as rftune would: created
//! with its header and laid out here, or already carrying the header; never a user's file.

use super::spec::StorageBench;
use super::transport::Transport;
use crate::error::{Context, Result, bail};
use crate::power::Meter;
use host_bench::fio::{self, IoEngine};
use host_bench::host::HostInfo;
use host_bench::report::{self, BenchReport, RunReport, Storage, TestReport};
use host_bench::target as bench_target;
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
        Some(t) => Ok(crate::duration::parse(t.trim())
            .with_context(|| format!("duration {t:?}"))?
            .as_secs()),
        None => Ok(default),
    }
}

/// Runs the configured fio tests on the host with fio directly, sampling power with `meter`,
/// and writes the bench document to `local`. A target file this created is removed again if
/// the run fails.
pub async fn run(
    transport: &Transport,
    storage: &StorageBench,
    label: &str,
    remote: &str,
    meter: &Meter<'_>,
    timeout: Duration,
    local: &Path,
) -> Result<()> {
    let target = &storage.target;
    if storage.destroy_data {
        bail!(
            "{target}: without rftune on the host, experiments run fio only on files (the raw-device safety checks are rftune's)"
        );
    }
    let created = prepare(transport, target, size(storage)?).await?;
    let result = measure(transport, storage, label, remote, meter, timeout, local).await;
    if result.is_err() && created {
        // Like rftune bench storage: a failed step leaves no file it created behind.
        let _ = transport
            .run(
                &["rm".to_owned(), "-f".to_owned(), "--".to_owned(), target.clone()],
                Duration::from_secs(30),
            )
            .await;
    }
    result
}

/// `benchmarks.storage.size` in bytes (4 GiB when unset).
fn size(storage: &StorageBench) -> Result<u64> {
    match storage.size.as_deref() {
        Some(text) => fio::parse_size(text).with_context(|| format!("benchmarks.storage.size of {}", storage.target)),
        None => Ok(4 << 30),
    }
}

/// The tests on a prepared target, and the document.
async fn measure(
    transport: &Transport,
    storage: &StorageBench,
    label: &str,
    remote: &str,
    meter: &Meter<'_>,
    timeout: Duration,
    local: &Path,
) -> Result<()> {
    let target = storage.target.clone();
    let tests = fio::select(storage.tests.as_deref().unwrap_or("all"))?;
    let mut engine = match storage.ioengine.as_deref() {
        Some("libaio") => IoEngine::Libaio,
        _ => IoEngine::IoUring,
    };
    let opts = fio::Options {
        target: PathBuf::from(&target),
        size: Some(size(storage)?),
        offset: bench_target::HEADER_BYTES,
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
    crate::state::write_private(local, serde_json::to_string_pretty(&doc)?.as_bytes())
}

/// Makes the target ready on the host as `host_bench::target::prepare` does locally: a new
/// file is created exclusively (after a free-space check) with rftune's header and its data
/// laid out, so fio runs after the header and never rewrites it; an existing file is used only
/// if it starts with the header (laid out further if `size` grew). Returns whether this step
/// created the file.
async fn prepare(transport: &Transport, target: &str, size: u64) -> Result<bool> {
    let q = super::transport::shell_quote(target);
    let short = Duration::from_secs(30);
    let probe = transport
        .script(
            &format!(
                "if [ -f {q} ]; then echo file $(wc -c < {q}); elif [ -e {q} ]; then echo other; \
                 elif [ -d \"$(dirname -- {q})\" ]; then echo missing 0; else echo no-dir; fi"
            ),
            short,
        )
        .await?
        .stdout_text();
    let mut words = probe.split_whitespace();
    let (state, len) = (
        words.next().unwrap_or_default(),
        words.next().and_then(|l| l.parse::<u64>().ok()),
    );
    let end = bench_target::HEADER_BYTES.saturating_add(size);
    let (new, len) = match (state, len) {
        ("other", _) => bail!(
            "{target}: without rftune on the host, experiments run fio only on files (the raw-device safety checks are rftune's)"
        ),
        ("no-dir", _) => bail!(
            "{target}: its directory does not exist on the host; create it first (rftune does not create directories for a target)"
        ),
        ("file", Some(len)) => {
            let head = transport
                .run_ok(
                    &[
                        "head".to_owned(),
                        "-c".to_owned(),
                        bench_target::MAGIC.len().to_string(),
                        "--".to_owned(),
                        target.to_owned(),
                    ],
                    short,
                )
                .await?
                .stdout;
            if head != bench_target::MAGIC {
                bail!(
                    "{target} already exists on the host and was not created by rftune (it does not start with rftune's header), so benchmarking it would destroy its contents; set benchmarks.storage.target to a path that does not exist, or delete the file yourself"
                );
            }
            (false, len)
        }
        ("missing", Some(_)) => (true, 0),
        _ => bail!(
            "{target}: could not tell what is there on the host ({:?})",
            probe.trim()
        ),
    };
    // Bytes to append: the whole file when new, else what `size` adds to rftune's file.
    let needed = end.saturating_sub(len);
    if needed == 0 {
        return Ok(false);
    }
    let dir = match Path::new(target).parent() {
        Some(d) if !d.as_os_str().is_empty() => d.display().to_string(),
        _ => ".".to_owned(),
    };
    let df = transport
        .run_ok(&["df".to_owned(), "-Pk".to_owned(), "--".to_owned(), dir], short)
        .await?
        .stdout_text();
    let (available, total) =
        parse_df(&df).with_context(|| format!("reading the free space for {target} on the host"))?;
    bench_target::check_space(Path::new(target), size, needed, available, total)?;
    let script = if new {
        let header = bench_target::header(&host_bench::utc_now());
        let text_len = header.iter().position(|b| *b == 0).unwrap_or(header.len());
        let text = super::transport::shell_quote(&String::from_utf8_lossy(&header[..text_len]));
        // `set -C`: the file is created exclusively, and removed again only if this created it.
        format!(
            "set -C; printf '%s' {text} > {q} || exit 3; \
             {{ head -c {pad} /dev/zero >> {q} && head -c {size} /dev/urandom >> {q}; }} || {{ rm -f -- {q}; exit 1; }}",
            pad = bench_target::HEADER_BYTES as usize - text_len
        )
    } else {
        format!("head -c {needed} /dev/urandom >> {q}")
    };
    transport
        .script(&script, Duration::from_secs(3600))
        .await
        .with_context(|| format!("laying out {target} on the host"))?;
    Ok(new)
}

/// Available and total bytes from `df -Pk` (POSIX format, KiB).
fn parse_df(text: &str) -> Result<(u64, u64)> {
    let fields: Vec<&str> = text.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    let kib = |i: usize| -> Result<u64> {
        let v: u64 = fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("unexpected df output: {text:?}"))?;
        Ok(v.saturating_mul(1024))
    };
    Ok((kib(3)?, kib(1)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_output_gives_available_and_total_bytes() {
        let text = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n\
                    /dev/vda         263174212 16474096 235000000       7% /\n";
        assert_eq!(parse_df(text).unwrap(), (235_000_000 * 1024, 263_174_212 * 1024));
        assert!(parse_df("df: /nope: No such file or directory\n").is_err());
    }
}
