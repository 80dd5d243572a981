//! The `rftune.bench/v1` document: host and BMC context, storage, memory or file-system results with
//! repeats (median, coefficient of variation), power and performance per watt, validity flags;
//! its one reader ([`parse`]) and power sampled from outside attached to it. Beside it, by job:
//! its comparable figures and CSV rows (`figures`), the self-contained HTML report (`html`,
//! drawn with [`crate::chart`]). Two runs are compared by the experiment
//! crate (`rftune_experiment::compare`), which reads their observations from here.

mod figures;
mod filesystem;
mod filesystem_html;
mod html;

pub use figures::{Figure, point_test, split_point_test};
pub use filesystem::{
    BmcPower, ClientInfo, ClientRun, Curve, CurvePeak, FileSystemBench, PLATEAU_TOLERANCE, PhaseRun, Plateau, Point,
    curve_name, peak_and_plateau,
};
pub use filesystem_html::bios_profile;

use crate::fio::{self, Metrics, Precondition, TestSpec};
use crate::host::HostInfo;
use crate::power::{PowerStats, Sample};
use crate::stats;
use crate::stream::{Peak, StreamResult};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// `storage`, `memory` or `filesystem`.
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
    /// File-system results.
    pub filesystem: Option<FileSystemBench>,
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
    /// The median over repeats of one completion latency percentile of one direction (absent
    /// when no repeat has it).
    pub fn latency_median(&self, dir: fio::DataDirection, pct: fio::Percentile) -> Option<f64> {
        let xs: Vec<f64> = self
            .runs
            .iter()
            .filter_map(|r| dir.latency(&r.metrics).and_then(|l| pct.of(&l)))
            .collect();
        stats::median(&xs)
    }

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
    /// Power over each repeat, in the order of `runs` (so each repeat's performance per watt
    /// is a sample of its own when runs are compared).
    pub run_power: Vec<Option<PowerStats>>,
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
            run_power: Vec::new(),
            runs,
        }
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
