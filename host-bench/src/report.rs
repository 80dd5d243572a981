//! The `rftune.bench/v1` document: host and BMC context, storage or memory results with
//! repeats (median, coefficient of variation), power and performance per watt, validity flags;
//! its one reader ([`parse`]), power sampled from outside attached to it, its CSV rows, a
//! self-contained HTML report with inline SVG charts, and the comparison of two runs metric by
//! metric.

use crate::fio::{self, Metrics, Precondition, TestSpec};
use crate::host::HostInfo;
use crate::power::{PowerStats, Sample};
use crate::stats;
use crate::stream::{Peak, StreamResult};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The `schema` of every bench document.
pub const SCHEMA: &str = "rftune.bench/v1";

/// rftune's version, which every crate of the workspace shares.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Coefficient of variation above which repeats are flagged as noisy.
pub const NOISY_CV: f64 = 0.10;

/// A benchmark run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BenchReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// `storage` or `memory`.
    pub kind: String,
    /// A name for the run (e.g. the BIOS profile applied), from `--label`.
    pub label: Option<String>,
    /// rftune's version.
    pub tool_version: String,
    /// UTC start.
    pub started_at: String,
    /// UTC end.
    pub finished_at: String,
    /// What the OS sees.
    pub host: HostInfo,
    /// What the BMC says, with `--bmc`.
    pub bmc: Option<BmcInfo>,
    /// Storage results.
    pub storage: Option<Storage>,
    /// Memory results.
    pub memory: Option<Memory>,
    /// The power caveat, when power was sampled.
    pub power_caveat: Option<String>,
    /// No test failed and every validity check passed.
    pub valid: bool,
    /// Why not, and other warnings.
    pub problems: Vec<String>,
}

/// Reads a bench document: the one reader of the format, for `bench compare`, experiment reports
/// and attaching power. Anything but an [`SCHEMA`] document is refused. Lenient like every
/// reader of data another rftune may have written (on the host, older or newer): unknown fields
/// are ignored and missing ones take their defaults (empty, zero, absent), so the figures a
/// document does carry are read.
pub fn parse(text: &str) -> Result<BenchReport> {
    let parse_error = |detail: String| Error::Parse {
        what: "bench document".into(),
        detail,
    };
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| parse_error(format!("not JSON: {e}")))?;
    if doc.get("schema").and_then(serde_json::Value::as_str) != Some(SCHEMA) {
        return Err(parse_error(format!("not an {SCHEMA} document")));
    }
    serde_json::from_value(doc).map_err(|e| parse_error(e.to_string()))
}

impl BenchReport {
    /// An empty, valid document of `kind` (`storage`, `memory`) started at `started_at`.
    pub fn new(kind: &str, label: Option<String>, started_at: String, host: HostInfo) -> Self {
        Self {
            schema: SCHEMA.into(),
            kind: kind.into(),
            label,
            tool_version: TOOL_VERSION.into(),
            started_at,
            host,
            valid: true,
            ..Self::default()
        }
    }

    /// Attaches power sampled from outside over the whole run (when the host did not measure
    /// it itself): the run's average power stands for every test and for the memory run that
    /// carry none of their own, performance per watt follows from it, and `caveat` (who
    /// sampled, how often) heads the power caveat with the readings' count, span and energy.
    /// Returns whether anything was attached: nothing is without a positive average.
    pub fn attach_run_power(&mut self, samples: &[Sample], caveat: &str) -> bool {
        let Some(stats) = crate::power::stats(samples).filter(|s| s.average_w > 0.0) else {
            return false;
        };
        let watts = stats.average_w;
        if let Some(m) = self.memory.as_mut().filter(|m| m.power_w.is_none()) {
            m.power_w = Some(watts);
            m.triad_gbs_per_watt = m.gbs.get("Triad").map(|t| t / watts);
            m.power_trace = samples.to_vec();
        }
        if let Some(s) = &mut self.storage {
            for t in s.tests.iter_mut().filter(|t| t.power_w.is_none()) {
                t.power_w = Some(watts);
                t.iops_per_watt = Some(t.iops / watts);
                t.mbps_per_watt = Some(t.bw_bytes / 1e6 / watts);
            }
        }
        self.power_caveat = Some(format!(
            "{caveat} ({} readings, {:.0} s, {:.0} J); per-test figures use that run average. BMC readings, not a calibrated meter.",
            stats.n, stats.duration_s, stats.energy_j
        ));
        true
    }
}

/// The server as its BMC describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BmcInfo {
    /// The BMC's name (host:port).
    pub host: String,
    /// e.g. `PowerEdge R7625`.
    pub model: Option<String>,
    /// Dell service tag.
    pub service_tag: Option<String>,
    /// Running BIOS version.
    pub bios_version: Option<String>,
    /// iDRAC firmware version.
    pub idrac_firmware: Option<String>,
    /// Which Redfish property the power readings came from.
    pub power_sensor: Option<String>,
    /// Idle power before the run.
    pub idle_power: Option<PowerStats>,
    /// BIOS attributes in force.
    pub bios_attributes: BTreeMap<String, serde_json::Value>,
}

/// Storage settings and per-test results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Storage {
    /// File or device.
    pub target: String,
    /// `file` or `device`.
    pub target_kind: String,
    /// fio `size`.
    pub size: Option<String>,
    /// Measured seconds per test.
    pub runtime_s: u64,
    /// Ramp seconds per test (excluded from power figures).
    pub ramp_s: u64,
    /// fio `numjobs`.
    pub numjobs: u32,
    /// Requested engine.
    pub ioengine: String,
    /// `fio --version`.
    pub fio_version: Option<String>,
    /// Preconditioning, when asked for.
    pub precondition: Option<Precondition>,
    /// One entry per test.
    pub tests: Vec<TestReport>,
}

/// One test, over its repeats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestReport {
    /// Test name (`seqread`, ...).
    pub name: String,
    /// fio `rw`.
    pub rw: String,
    /// fio `bs`.
    pub bs: String,
    /// fio `iodepth` per job.
    pub iodepth: u32,
    /// fio `rwmixread`.
    pub rwmixread: Option<u32>,
    /// numjobs × iodepth.
    pub outstanding_io: u32,
    /// The engine that ran.
    pub ioengine: String,
    /// Why another engine was used.
    pub fallback: Option<String>,
    /// Median IOPS over repeats.
    pub iops: f64,
    /// Median bytes/s over repeats.
    pub bw_bytes: f64,
    /// Coefficient of variation of IOPS over repeats.
    pub cv_iops: Option<f64>,
    /// Median of the repeats' average power (energy / time), W.
    pub power_w: Option<f64>,
    /// Median energy per repeat, J.
    pub energy_j: Option<f64>,
    /// IOPS per watt.
    pub iops_per_watt: Option<f64>,
    /// MB/s (10⁶ B/s) per watt.
    pub mbps_per_watt: Option<f64>,
    /// Every check passed.
    pub valid: bool,
    /// Errors and warnings.
    pub problems: Vec<String>,
    /// Each repeat.
    pub runs: Vec<RunReport>,
}

/// One repeat of a test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunReport {
    /// fio's figures.
    pub metrics: Metrics,
    /// Power over the measured part (ramp excluded).
    pub power: Option<PowerStats>,
    /// Readings, seconds since fio started.
    pub power_trace: Vec<Sample>,
    /// IOPS per second, seconds since fio started.
    pub iops_trace: Vec<(f64, f64)>,
}

impl TestReport {
    /// Summarises the repeats of `spec`.
    pub fn new(
        spec: &TestSpec,
        numjobs: u32,
        engine: fio::IoEngine,
        fallback: Option<String>,
        runs: Vec<RunReport>,
    ) -> Self {
        let iops: Vec<f64> = runs.iter().map(|r| r.metrics.iops).collect();
        let bw: Vec<f64> = runs.iter().map(|r| r.metrics.bw_bytes).collect();
        let watts: Vec<f64> = runs.iter().filter_map(|r| r.power.map(|p| p.average_w)).collect();
        let energy: Vec<f64> = runs.iter().filter_map(|r| r.power.map(|p| p.energy_j)).collect();
        let median_iops = stats::median(&iops).unwrap_or(0.0);
        let median_bw = stats::median(&bw).unwrap_or(0.0);
        let power_w = stats::median(&watts).filter(|w| *w > 0.0);
        let cv_iops = stats::cv(&iops);
        let mut problems: Vec<String> = runs.iter().flat_map(|r| r.metrics.errors.clone()).collect();
        let valid = problems.is_empty() && median_iops > 0.0;
        if median_iops <= 0.0 {
            problems.push("no I/O completed".into());
        }
        if let Some(cv) = cv_iops.filter(|cv| *cv > NOISY_CV) {
            problems.push(format!("repeats vary by {:.0}% (coefficient of variation)", cv * 100.0));
        }
        if runs.iter().any(|r| r.power.is_some_and(|p| p.n < 2)) {
            problems
                .push("fewer than two power readings in a measured window: power figures are a single reading".into());
        }
        Self {
            name: spec.name.into(),
            rw: spec.rw.into(),
            bs: spec.bs.into(),
            iodepth: spec.iodepth,
            rwmixread: spec.rwmixread,
            outstanding_io: spec.iodepth * numjobs,
            ioengine: engine.as_str().into(),
            fallback,
            iops: median_iops,
            bw_bytes: median_bw,
            cv_iops,
            power_w,
            energy_j: stats::median(&energy),
            iops_per_watt: power_w.map(|w| median_iops / w),
            mbps_per_watt: power_w.map(|w| median_bw / 1e6 / w),
            valid,
            problems,
            runs,
        }
    }
}

/// Memory results over repeats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Memory {
    /// `standard` or `nt-stores`.
    pub variant: String,
    /// Elements per array.
    pub elements: usize,
    /// MiB per array.
    pub array_mib: f64,
    /// Total last-level cache detected, bytes.
    pub llc_bytes: Option<u64>,
    /// Worker threads.
    pub threads: usize,
    /// Median best rate per kernel over repeats, GB/s.
    pub gbs: BTreeMap<String, f64>,
    /// Coefficient of variation per kernel over repeats.
    pub cv: BTreeMap<String, f64>,
    /// Theoretical peak, when known.
    pub peak: Option<Peak>,
    /// Triad / peak.
    pub triad_fraction_of_peak: Option<f64>,
    /// Average power during the runs, W.
    pub power_w: Option<f64>,
    /// Triad GB/s per watt.
    pub triad_gbs_per_watt: Option<f64>,
    /// Readings, seconds since the first run started.
    pub power_trace: Vec<Sample>,
    /// Each repeat.
    pub runs: Vec<StreamResult>,
}

impl Memory {
    /// Summarises repeats; appends validity problems to `problems`.
    pub fn new(
        runs: Vec<StreamResult>,
        llc_bytes: Option<u64>,
        peak: Option<Peak>,
        power: Option<(PowerStats, Vec<Sample>)>,
        problems: &mut Vec<String>,
    ) -> Self {
        let mut gbs = BTreeMap::new();
        let mut cv = BTreeMap::new();
        for k in crate::stream::KERNELS {
            let xs: Vec<f64> = runs.iter().filter_map(|r| r.gbs(k)).collect();
            if let Some(m) = stats::median(&xs) {
                gbs.insert(k.to_owned(), m);
            }
            if let Some(c) = stats::cv(&xs) {
                cv.insert(k.to_owned(), c);
            }
        }
        let first = runs.first();
        let elements = first.map_or(0, |r| r.elements);
        let triad = gbs.get("Triad").copied();
        let fraction = triad.zip(peak.as_ref()).map(|(t, p)| t / p.gbs);
        if let Some(f) = fraction.filter(|f| *f > crate::stream::MAX_PLAUSIBLE_FRACTION) {
            problems.push(format!(
                "Triad at {:.0}% of theoretical peak is implausible (above 95%): caches, not memory, were measured; use larger arrays",
                f * 100.0
            ));
        }
        if runs.iter().any(|r| !r.validation.passed) {
            problems.push("STREAM validation failed: the kernels computed wrong results".into());
        }
        if let Some(llc) = llc_bytes
            && (elements as u64) * 8 < 4 * llc
        {
            problems.push(format!(
                "arrays of {:.0} MiB are smaller than 4× the last-level cache ({:.0} MiB)",
                elements as f64 * 8.0 / 1048576.0,
                llc as f64 / 1048576.0
            ));
        }
        let power_w = power.as_ref().map(|(p, _)| p.average_w).filter(|w| *w > 0.0);
        Self {
            variant: first.map_or_else(|| "standard".into(), |r| r.variant.clone()),
            elements,
            array_mib: elements as f64 * 8.0 / 1048576.0,
            llc_bytes,
            threads: first.map_or(0, |r| r.threads),
            triad_gbs_per_watt: triad.zip(power_w).map(|(t, w)| t / w),
            gbs,
            cv,
            peak,
            triad_fraction_of_peak: fraction,
            power_w,
            power_trace: power.map(|(_, s)| s).unwrap_or_default(),
            runs,
        }
    }
}

/// One comparable figure of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Test or kernel (`randread`, `Triad`).
    pub test: String,
    /// Metric name.
    pub metric: String,
    /// The value.
    pub value: f64,
    /// Unit.
    pub unit: String,
    /// Whether a larger value is an improvement.
    pub higher_is_better: bool,
}

impl BenchReport {
    /// Every comparable figure, in a stable order.
    pub fn figures(&self) -> Vec<Figure> {
        let mut out = Vec::new();
        let mut push = |test: &str, metric: &str, value: Option<f64>, unit: &str, up: bool| {
            if let Some(value) = value.filter(|v| v.is_finite()) {
                out.push(Figure {
                    test: test.into(),
                    metric: metric.into(),
                    value,
                    unit: unit.into(),
                    higher_is_better: up,
                });
            }
        };
        if let Some(s) = &self.storage {
            for t in &s.tests {
                let lat = |f: fn(&Metrics) -> Option<fio::Latency>, g: fn(&fio::Latency) -> Option<f64>| {
                    let xs: Vec<f64> = t
                        .runs
                        .iter()
                        .filter_map(|r| f(&r.metrics).and_then(|l| g(&l)))
                        .collect();
                    stats::median(&xs)
                };
                let cpu: Vec<f64> = t.runs.iter().map(|r| r.metrics.usr_cpu + r.metrics.sys_cpu).collect();
                push(&t.name, "iops", Some(t.iops), "IO/s", true);
                push(&t.name, "bandwidth", Some(t.bw_bytes / 1e6), "MB/s", true);
                push(&t.name, "read_p50", lat(|m| m.read_lat, |l| l.p50_us), "µs", false);
                push(&t.name, "read_p99", lat(|m| m.read_lat, |l| l.p99_us), "µs", false);
                push(&t.name, "read_p99.9", lat(|m| m.read_lat, |l| l.p99_9_us), "µs", false);
                push(&t.name, "write_p50", lat(|m| m.write_lat, |l| l.p50_us), "µs", false);
                push(&t.name, "write_p99", lat(|m| m.write_lat, |l| l.p99_us), "µs", false);
                push(
                    &t.name,
                    "write_p99.9",
                    lat(|m| m.write_lat, |l| l.p99_9_us),
                    "µs",
                    false,
                );
                push(&t.name, "cpu", stats::median(&cpu), "%", false);
                push(&t.name, "cv_iops", t.cv_iops.map(|c| c * 100.0), "%", false);
                push(&t.name, "power", t.power_w, "W", false);
                push(&t.name, "energy", t.energy_j, "J", false);
                push(&t.name, "iops_per_watt", t.iops_per_watt, "IO/s/W", true);
                push(&t.name, "mbps_per_watt", t.mbps_per_watt, "MB/s/W", true);
            }
        }
        if let Some(m) = &self.memory {
            for k in crate::stream::KERNELS {
                push(k, "bandwidth", m.gbs.get(k).copied(), "GB/s", true);
                push(k, "cv", m.cv.get(k).map(|c| c * 100.0), "%", false);
            }
            push(
                "Triad",
                "fraction_of_peak",
                m.triad_fraction_of_peak.map(|f| f * 100.0),
                "%",
                true,
            );
            push("all", "power", m.power_w, "W", false);
            push("Triad", "gbs_per_watt", m.triad_gbs_per_watt, "GB/s/W", true);
        }
        out
    }

    /// CSV rows: `label,started_at,hostname,kind,test,metric,value,unit`.
    pub fn csv(&self) -> String {
        use crate::power::csv_field as f;
        let mut out = String::from("label,started_at,hostname,kind,test,metric,value,unit\n");
        let label = self.label.clone().unwrap_or_default();
        let host = self.host.hostname.clone().unwrap_or_default();
        for x in self.figures() {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                f(&label),
                self.started_at,
                f(&host),
                self.kind,
                f(&x.test),
                f(&x.metric),
                x.value,
                f(&x.unit)
            );
        }
        out
    }

    /// A self-contained HTML page (inline SVG, no external assets).
    pub fn html(&self) -> String {
        let mut body = String::new();
        let title = format!(
            "rftune {} benchmark{}",
            self.kind,
            self.label
                .as_ref()
                .map(|l| format!(" — {}", esc(l)))
                .unwrap_or_default()
        );
        let _ = write!(body, "<h1>{title}</h1>");
        let h = &self.host;
        let mut facts: Vec<(String, String)> = vec![
            ("Host".into(), h.hostname.clone().unwrap_or_default()),
            ("CPU".into(), h.cpu_model.clone().unwrap_or_default()),
            (
                "Cores / logical CPUs".into(),
                format!("{} / {}", h.cores, h.logical_cpus),
            ),
            (
                "SMT".into(),
                h.smt_active
                    .map_or("unknown".into(), |s| if s { "on".into() } else { "off".into() }),
            ),
            ("NUMA nodes".into(), h.numa_nodes.to_string()),
            ("Idle states".into(), h.cpuidle_states.join(", ")),
            ("Kernel".into(), h.kernel.clone().unwrap_or_default()),
            (
                "Started / finished (UTC)".into(),
                format!("{} / {}", self.started_at, self.finished_at),
            ),
            ("rftune".into(), self.tool_version.clone()),
            ("Valid".into(), if self.valid { "yes".into() } else { "NO".into() }),
        ];
        if let Some(b) = &self.bmc {
            facts.push((
                "Server".into(),
                format!(
                    "{} ({})",
                    b.model.clone().unwrap_or_default(),
                    b.service_tag.clone().unwrap_or_default()
                ),
            ));
            facts.push((
                "BIOS / iDRAC".into(),
                format!(
                    "{} / {}",
                    b.bios_version.clone().unwrap_or_default(),
                    b.idrac_firmware.clone().unwrap_or_default()
                ),
            ));
        }
        if let Some(s) = &self.storage {
            facts.push((
                "Target".into(),
                format!(
                    "{} ({}, {})",
                    s.target,
                    s.target_kind,
                    s.size.clone().unwrap_or_else(|| "whole device".into())
                ),
            ));
            facts.push((
                "fio".into(),
                format!(
                    "{} · {} s + {} s ramp · numjobs {} · {}",
                    s.fio_version.clone().unwrap_or_default(),
                    s.runtime_s,
                    s.ramp_s,
                    s.numjobs,
                    s.ioengine
                ),
            ));
        }
        body.push_str("<table>");
        for (k, v) in facts {
            let _ = write!(body, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
        }
        body.push_str("</table>");
        if !self.problems.is_empty() {
            body.push_str("<h2>Problems</h2><ul>");
            for p in &self.problems {
                let _ = write!(body, "<li>{}</li>", esc(p));
            }
            body.push_str("</ul>");
        }
        if let Some(s) = &self.storage {
            let iops: Vec<(String, f64)> = s.tests.iter().map(|t| (t.name.clone(), t.iops)).collect();
            let bw: Vec<(String, f64)> = s.tests.iter().map(|t| (t.name.clone(), t.bw_bytes / 1e6)).collect();
            body.push_str(&bar_chart("IOPS per test (median of repeats)", "IO/s", &iops, &[]));
            body.push_str(&bar_chart("Bandwidth per test", "MB/s", &bw, &[]));
            let ppw: Vec<(String, f64)> = s
                .tests
                .iter()
                .filter_map(|t| Some((t.name.clone(), t.iops_per_watt?)))
                .collect();
            if !ppw.is_empty() {
                body.push_str(&bar_chart("Performance per watt", "IO/s per W", &ppw, &[]));
            }
            for t in &s.tests {
                if let Some(r) = t.runs.first()
                    && (!r.power_trace.is_empty() || !r.iops_trace.is_empty())
                {
                    let power: Vec<(f64, f64)> = r.power_trace.iter().map(|p| (p.t_s, p.watts)).collect();
                    body.push_str(&trace_chart(
                        &format!("{}: power and IOPS over time", t.name),
                        &power,
                        &r.iops_trace,
                    ));
                }
            }
            body.push_str("<h2>Tests</h2><table><tr><th>test</th><th>IOPS</th><th>MB/s</th><th>read p99 µs</th><th>write p99 µs</th><th>W</th><th>IOPS/W</th><th>CV</th><th>valid</th></tr>");
            for t in &s.tests {
                let r = t.runs.first();
                let p99 = |l: Option<fio::Latency>| l.and_then(|l| l.p99_us).map_or("-".into(), |v| format!("{v:.1}"));
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{:.0}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&t.name),
                    t.iops,
                    t.bw_bytes / 1e6,
                    p99(r.and_then(|r| r.metrics.read_lat)),
                    p99(r.and_then(|r| r.metrics.write_lat)),
                    t.power_w.map_or("-".into(), |w| format!("{w:.0}")),
                    t.iops_per_watt.map_or("-".into(), |w| format!("{w:.1}")),
                    t.cv_iops.map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
                    if t.valid { "yes" } else { "NO" }
                );
            }
            body.push_str("</table>");
        }
        if let Some(m) = &self.memory {
            let bars: Vec<(String, f64)> = m.gbs.iter().map(|(k, v)| (k.clone(), *v)).collect();
            let ordered: Vec<(String, f64)> = crate::stream::KERNELS
                .iter()
                .filter_map(|k| bars.iter().find(|(n, _)| n == k).cloned())
                .collect();
            let refs: Vec<(String, f64)> = m
                .peak
                .iter()
                .flat_map(|p| [("peak".to_owned(), p.gbs), ("95% of peak".to_owned(), 0.95 * p.gbs)])
                .collect();
            body.push_str(&bar_chart(
                &format!("STREAM ({}) — Triad vs theoretical peak", m.variant),
                "GB/s",
                &ordered,
                &refs,
            ));
            let _ = write!(
                body,
                "<p>{} threads, {} elements per array ({:.0} MiB), last-level cache {}. {}</p>",
                m.threads,
                m.elements,
                m.array_mib,
                m.llc_bytes
                    .map_or("unknown".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0)),
                m.triad_fraction_of_peak
                    .map_or(String::new(), |f| format!("Triad reaches {:.1}% of peak.", f * 100.0))
            );
            if !m.power_trace.is_empty() {
                let power: Vec<(f64, f64)> = m.power_trace.iter().map(|p| (p.t_s, p.watts)).collect();
                body.push_str(&trace_chart("Power during STREAM", &power, &[]));
            }
        }
        if let Some(c) = &self.power_caveat {
            let _ = write!(body, "<p class=note>Power: {}.</p>", esc(c));
        }
        format!(
            "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{title}</title><style>\
             body{{font:14px system-ui,sans-serif;margin:2em;max-width:60em}}table{{border-collapse:collapse;margin:1em 0}}\
             td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}svg{{display:block;margin:1em 0}}\
             .note{{color:#555}}</style></head><body>{body}</body></html>\n"
        )
    }
}

/// Escapes text for HTML and SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v.abs() >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Horizontal bars with optional reference lines (name, value).
pub fn bar_chart(title: &str, unit: &str, bars: &[(String, f64)], refs: &[(String, f64)]) -> String {
    let (w, label_w, row) = (640.0, 110.0, 24.0);
    let h = 40.0 + row * bars.len() as f64 + 8.0 + 14.0 * refs.len() as f64;
    let max = bars
        .iter()
        .map(|b| b.1)
        .chain(refs.iter().map(|r| r.1))
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let scale = (w - label_w - 90.0) / max;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\"><title>{t}</title>\
         <text x=\"0\" y=\"16\" font-weight=\"bold\">{t} ({u})</text>",
        t = esc(title),
        u = esc(unit)
    );
    for (i, (name, v)) in bars.iter().enumerate() {
        let y = 30.0 + row * i as f64;
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{ty}\">{n}</text><rect x=\"{label_w}\" y=\"{y}\" width=\"{bw:.1}\" height=\"{bh}\" fill=\"#4a7ebb\"/>\
             <text x=\"{tx:.1}\" y=\"{ty}\">{val}</text>",
            ty = y + 15.0,
            n = esc(name),
            bw = v.max(0.0) * scale,
            bh = row - 6.0,
            tx = label_w + v.max(0.0) * scale + 4.0,
            val = fmt_num(*v)
        );
    }
    // One label row per reference line, so close lines (peak, 95% of peak) stay readable.
    for (i, (name, v)) in refs.iter().enumerate() {
        let x = label_w + v * scale;
        let ty = 40.0 + row * bars.len() as f64 + 4.0 + 14.0 * i as f64;
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"24\" x2=\"{x:.1}\" y2=\"{y2}\" stroke=\"#c33\" stroke-dasharray=\"4 3\"/>\
             <text x=\"{tx:.1}\" y=\"{ty}\" fill=\"#c33\" font-size=\"11\" text-anchor=\"end\">{n} {val}</text>",
            y2 = ty - 10.0,
            tx = x - 3.0,
            n = esc(name),
            val = fmt_num(*v)
        );
    }
    s.push_str("</svg>");
    s
}

/// Power (left axis, W) over time with IOPS (right axis) overlaid.
pub fn trace_chart(title: &str, power: &[(f64, f64)], iops: &[(f64, f64)]) -> String {
    let (w, h, l, r, t, b) = (640.0, 240.0, 50.0, 60.0, 28.0, 30.0);
    let t_max = power.iter().chain(iops).map(|p| p.0).fold(0.0f64, f64::max).max(1.0);
    let range = |xs: &[(f64, f64)]| {
        let lo = xs.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = xs.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        if lo.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (0.0, hi.max(1.0))
        }
    };
    let path = |xs: &[(f64, f64)], (lo, hi): (f64, f64)| {
        xs.iter()
            .map(|(x, y)| {
                format!(
                    "{:.1},{:.1}",
                    l + x / t_max * (w - l - r),
                    h - b - (y - lo) / (hi - lo).max(f64::MIN_POSITIVE) * (h - t - b)
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\"><title>{ti}</title>\
         <text x=\"0\" y=\"16\" font-weight=\"bold\">{ti}</text>\
         <rect x=\"{l}\" y=\"{t}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#ccc\"/>\
         <text x=\"{l}\" y=\"{ty}\" font-size=\"11\">0 s</text><text x=\"{tx}\" y=\"{ty}\" font-size=\"11\" text-anchor=\"end\">{tm:.0} s</text>",
        ti = esc(title),
        pw = w - l - r,
        ph = h - t - b,
        ty = h - b + 14.0,
        tx = w - r,
        tm = t_max
    );
    if !power.is_empty() {
        let rg = range(power);
        let _ = write!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#c33\" stroke-width=\"2\"/>\
             <text x=\"2\" y=\"{}\" fill=\"#c33\" font-size=\"11\">{:.0} W</text><text x=\"2\" y=\"{}\" fill=\"#c33\" font-size=\"11\">{:.0} W</text>",
            path(power, rg),
            t + 10.0,
            rg.1,
            h - b,
            rg.0
        );
    }
    if !iops.is_empty() {
        let rg = (0.0, range(iops).1);
        let _ = write!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#4a7ebb\" stroke-width=\"2\"/>\
             <text x=\"{}\" y=\"{}\" fill=\"#4a7ebb\" font-size=\"11\">{} IO/s</text><text x=\"{}\" y=\"{}\" fill=\"#4a7ebb\" font-size=\"11\">0</text>",
            path(iops, rg),
            w - r + 4.0,
            t + 10.0,
            fmt_num(rg.1),
            w - r + 4.0,
            h - b
        );
    }
    s.push_str("</svg>");
    s
}

/// The change of one figure between two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Test or kernel.
    pub test: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Value in A (absent when only B has it).
    pub a: Option<f64>,
    /// Value in B.
    pub b: Option<f64>,
    /// b − a.
    pub delta: Option<f64>,
    /// (b − a) / a × 100.
    pub percent: Option<f64>,
    /// `better`, `worse`, `same` or `-`.
    pub verdict: String,
}

/// A comparison document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Always `compare`.
    pub kind: String,
    /// Label (or start time) of A.
    pub a: String,
    /// Label (or start time) of B.
    pub b: String,
    /// Per metric.
    pub changes: Vec<Change>,
}

/// Compares two runs figure by figure (A's order, then figures only B has).
pub fn compare(a: &BenchReport, b: &BenchReport) -> Comparison {
    let fa = a.figures();
    let fb = b.figures();
    let key = |f: &Figure| (f.test.clone(), f.metric.clone());
    let mut changes: Vec<Change> = fa
        .iter()
        .map(|x| {
            let y = fb.iter().find(|y| key(y) == key(x));
            let bv = y.map(|y| y.value);
            let delta = bv.map(|v| v - x.value);
            let percent = delta.filter(|_| x.value != 0.0).map(|d| d / x.value.abs() * 100.0);
            let verdict = match percent {
                Some(p) if p.abs() < 0.5 => "same",
                Some(p) if (p > 0.0) == x.higher_is_better => "better",
                Some(_) => "worse",
                None => "-",
            };
            Change {
                test: x.test.clone(),
                metric: x.metric.clone(),
                unit: x.unit.clone(),
                a: Some(x.value),
                b: bv,
                delta,
                percent,
                verdict: verdict.into(),
            }
        })
        .collect();
    changes.extend(
        fb.iter()
            .filter(|y| !fa.iter().any(|x| key(x) == key(y)))
            .map(|y| Change {
                test: y.test.clone(),
                metric: y.metric.clone(),
                unit: y.unit.clone(),
                a: None,
                b: Some(y.value),
                delta: None,
                percent: None,
                verdict: "-".into(),
            }),
    );
    let name = |r: &BenchReport| r.label.clone().unwrap_or_else(|| r.started_at.clone());
    Comparison {
        schema: SCHEMA.into(),
        kind: "compare".into(),
        a: name(a),
        b: name(b),
        changes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> serde_json::Value {
        serde_json::json!({
            "schema": "rftune.bench/v1",
            "kind": "storage",
            "a_field_from_a_newer_rftune": [1, 2],
            "storage": {"tests": [
                {"name": "randread", "iops": 1000.0, "bw_bytes": 4.0e6},
                {"name": "randwrite", "iops": 500.0, "bw_bytes": 2.0e6, "power_w": 300.0}
            ]},
            "memory": {"gbs": {"Triad": 30.0}}
        })
    }

    #[test]
    fn the_reader_refuses_other_documents_and_defaults_what_is_missing() {
        let e = |text: &str| parse(text).unwrap_err().to_string();
        assert!(e("{nope").contains("not JSON"), "{}", e("{nope"));
        assert!(e(r#"{"schema": "rftune.power/v1"}"#).contains("not an rftune.bench/v1 document"));
        assert!(e(r#"{"schema": "rftune.bench/v1", "valid": "yes"}"#).contains("valid"));
        let r = parse(&doc().to_string()).unwrap();
        assert_eq!((r.kind.as_str(), r.valid, r.host.logical_cpus), ("storage", false, 0));
        let tests = &r.storage.as_ref().unwrap().tests;
        assert_eq!(
            (tests[0].iops, tests[0].power_w, tests[0].runs.len()),
            (1000.0, None, 0)
        );
        assert_eq!(r.memory.as_ref().unwrap().gbs["Triad"], 30.0);
    }

    #[test]
    fn power_sampled_outside_fills_only_what_the_host_did_not_measure() {
        let mut r = parse(&doc().to_string()).unwrap();
        let samples = [
            Sample { t_s: 0.0, watts: 380.0 },
            Sample { t_s: 1.0, watts: 420.0 },
            Sample { t_s: 2.0, watts: 400.0 },
        ];
        // Trapezoid: ½(380+420) + ½(420+400) = 810 J over 2 s: 405 W.
        assert!(r.attach_run_power(&samples, "sampled by a test every second"));
        let tests = &r.storage.as_ref().unwrap().tests;
        assert_eq!(tests[0].power_w, Some(405.0));
        assert_eq!(tests[0].iops_per_watt, Some(1000.0 / 405.0));
        assert_eq!(tests[0].mbps_per_watt, Some(4.0 / 405.0));
        assert_eq!(tests[1].power_w, Some(300.0), "the host's own figure stays");
        assert_eq!(tests[1].iops_per_watt, None);
        let m = r.memory.as_ref().unwrap();
        assert_eq!((m.power_w, m.triad_gbs_per_watt), (Some(405.0), Some(30.0 / 405.0)));
        assert_eq!(m.power_trace.len(), 3);
        assert_eq!(
            r.power_caveat.as_deref(),
            Some(
                "sampled by a test every second (3 readings, 2 s, 810 J); per-test figures use that run average. \
                 BMC readings, not a calibrated meter."
            )
        );
        let before = r.clone();
        assert!(!r.attach_run_power(&[], "nothing"));
        assert!(!r.attach_run_power(&[Sample { t_s: 0.0, watts: 0.0 }], "zero"));
        assert_eq!(r, before);
    }
}
