//! The file-system benchmark's part of a bench document: the run's configuration (file system
//! and mount options, sizes, clients, BMCs) and one curve per operation of each test, each
//! point with its repeats, the median and its 95% interval, power and work per watt, and the
//! flags that say how far to trust it (cache-affected, oversubscribed). A curve's peak is its
//! highest median; its plateau is the range of thread counts from which every point up to the
//! end of the sweep stays within [`PLATEAU_TOLERANCE`] of that peak, when at least two points
//! do.

use super::BmcInfo;
use crate::filesystem::mount::FileSystem;
use crate::filesystem::{Measure, Method, Op, Sizes, Test};
use crate::fio::Latency;
use crate::host::HostInfo;
use crate::power::PowerStats;
use crate::stats::{self, Interval};
use serde::{Deserialize, Serialize};

/// How far below the peak a point may be and still count as on the plateau (5%).
pub const PLATEAU_TOLERANCE: f64 = 0.05;

/// A file-system run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileSystemBench {
    /// The papers' sizes or the quick mode's.
    pub method: Option<Method>,
    /// The directory benchmarked.
    pub target: String,
    /// The file system holding it, with its mount options.
    pub file_system: FileSystem,
    /// The machines that ran the threads.
    pub clients: Vec<ClientInfo>,
    /// The BMCs whose power each point sums.
    pub bmcs: Vec<BmcInfo>,
    /// The tests run.
    pub tests: Vec<Test>,
    /// The sweep: threads across all clients.
    pub threads: Vec<u32>,
    /// The sizes.
    pub sizes: Sizes,
    /// Points whose data set is smaller than this (twice the largest RAM of the clients and of
    /// the servers given) are cache-affected, bytes.
    pub cache_limit_bytes: u64,
    /// More threads than a client has cores were allowed.
    pub oversubscribe: bool,
    /// Repeats of every point.
    pub repeat: u32,
    /// [`PLATEAU_TOLERANCE`].
    pub plateau_tolerance: f64,
    /// `fio --version` (the same on every client).
    pub fio_version: Option<String>,
    /// One per operation of each test (and file size, for metadata), in the order they ran.
    pub curves: Vec<Curve>,
}

/// A machine that ran threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientInfo {
    /// How rftune reached it (`this host`).
    pub name: String,
    /// What its OS shows.
    pub host: HostInfo,
}

/// One operation of a test against the thread count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// The test.
    pub test: Test,
    /// The operation.
    pub op: Op,
    /// Metadata: the files' size, bytes.
    #[serde(default)]
    pub file_size: Option<u64>,
    /// `bandwidth`, `iops` or `ops`.
    pub metric: String,
    /// `GB/s`, `IO/s` or `op/s`.
    pub unit: String,
    /// One per thread count of the sweep.
    pub points: Vec<Point>,
    /// The highest median.
    #[serde(default)]
    pub peak: Option<CurvePeak>,
    /// Where the curve stays within the tolerance of its peak to the end of the sweep.
    #[serde(default)]
    pub plateau: Option<Plateau>,
}

/// A curve's highest median.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePeak {
    /// At this many threads.
    pub threads: u32,
    /// The median there.
    pub value: f64,
}

/// The thread counts on which a curve stays within [`PLATEAU_TOLERANCE`] of its peak.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// The first thread count on it.
    pub from_threads: u32,
    /// The last (the end of the sweep).
    pub to_threads: u32,
    /// The lowest median on it: the performance sustained from `from_threads` on.
    pub level: f64,
}

/// One thread count of a curve, over its repeats.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Point {
    /// Threads across all clients.
    pub threads: u32,
    /// Threads per client, in the clients' order.
    pub threads_per_client: Vec<u32>,
    /// Bytes the operation worked on.
    pub data_set_bytes: u64,
    /// The data set is smaller than twice the largest RAM: caches may have answered.
    pub cache_affected: bool,
    /// A client ran more threads than it has cores.
    pub oversubscribed: bool,
    /// The median over repeats, in the curve's unit.
    pub value: f64,
    /// 95% percentile-bootstrap interval of the median (two repeats or more).
    pub interval: Option<Interval>,
    /// The lowest repeat.
    pub min: f64,
    /// The highest repeat.
    pub max: f64,
    /// The median over repeats of the power summed over the BMCs, W.
    pub power_w: Option<f64>,
    /// Work per watt of the medians (MB/s, IO/s or op/s per W).
    pub per_watt: Option<f64>,
    /// Every repeat produced a figure and fio reported no error.
    pub valid: bool,
    /// Each repeat.
    pub runs: Vec<PhaseRun>,
}

/// One fio run of an operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseRun {
    /// fio's aggregate, in the curve's unit.
    pub value: f64,
    /// Operations completed (files, for metadata).
    pub ops: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// The slowest thread's time, ms (what fio's aggregate divides by).
    pub runtime_ms: u64,
    /// Completion latency of one operation.
    pub latency: Option<Latency>,
    /// User CPU, percent.
    pub usr_cpu: f64,
    /// System CPU, percent.
    pub sys_cpu: f64,
    /// Each BMC's power over the run.
    pub power: Vec<BmcPower>,
    /// Their average power summed, W.
    pub power_w: Option<f64>,
    /// fio's JSON output, relative to the output directory.
    pub fio_output: String,
    /// fio's per-job errors.
    pub errors: Vec<String>,
    /// With several clients, each one's own share as fio reported it (its group), in the
    /// clients' order; `value` is fio's aggregate of them all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientRun>,
}

/// One client's share of a fio run over several.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientRun {
    /// The client ([`ClientInfo::name`]).
    pub client: String,
    /// Its threads in the step.
    pub threads: u32,
    /// Its group's figure, in the curve's unit.
    pub value: f64,
    /// Bytes its threads transferred.
    pub bytes: u64,
    /// Its place among the run's clients (0 for the first).
    pub index: usize,
}

/// One BMC's power over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BmcPower {
    /// The BMC.
    pub host: String,
    /// Its readings' statistics.
    pub stats: PowerStats,
}

impl Point {
    /// Summarises the repeats at `threads`; `cache_limit` and `oversubscribed` set the flags.
    pub fn new(
        measure: Measure,
        threads: u32,
        threads_per_client: Vec<u32>,
        data_set_bytes: u64,
        cache_limit: u64,
        oversubscribed: bool,
        runs: Vec<PhaseRun>,
    ) -> Self {
        let values: Vec<f64> = runs.iter().map(|r| r.value).collect();
        let watts: Vec<f64> = runs.iter().filter_map(|r| r.power_w).collect();
        let value = stats::median(&values).unwrap_or(0.0);
        let power_w = stats::median(&watts).filter(|w| *w > 0.0);
        Self {
            threads,
            threads_per_client,
            data_set_bytes,
            cache_affected: data_set_bytes < cache_limit,
            oversubscribed,
            value,
            interval: stats::bootstrap_median(&values, &stats::Method::default()),
            min: values.iter().copied().fold(f64::INFINITY, f64::min).min(value),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max).max(value),
            power_w,
            per_watt: power_w.map(|w| measure.per_watt_value(value, w)),
            valid: !runs.is_empty() && value > 0.0 && runs.iter().all(|r| r.errors.is_empty() && r.value > 0.0),
            runs,
        }
    }
}

impl Curve {
    /// A curve of `points`, its peak and plateau found.
    pub fn new(test: Test, op: Op, file_size: Option<u64>, points: Vec<Point>) -> Self {
        let measure = test.measure();
        let (peak, plateau) = peak_and_plateau(&points);
        Self {
            test,
            op,
            file_size,
            metric: measure.metric().into(),
            unit: measure.unit().into(),
            points,
            peak,
            plateau,
        }
    }

    /// Its name ([`curve_name`]).
    pub fn name(&self) -> String {
        curve_name(self.test, self.op, self.file_size)
    }

    /// Its name within its test's chart: `write`, `create (3 KiB)`.
    pub fn label(&self) -> String {
        match self.file_size {
            Some(0) => format!("{} (empty)", self.op.name()),
            Some(b) => format!("{} ({})", self.op.name(), size_label(b)),
            None => self.op.name().to_owned(),
        }
    }

    /// What the curve measures.
    pub fn measure(&self) -> Measure {
        self.test.measure()
    }
}

/// A curve's name: `n-to-n write`, `metadata create empty`, `metadata stat 3 KiB`.
pub fn curve_name(test: Test, op: Op, file_size: Option<u64>) -> String {
    match file_size {
        Some(0) => format!("{} {} empty", test.name(), op.name()),
        Some(b) => format!("{} {} {}", test.name(), op.name(), size_label(b)),
        None => format!("{} {}", test.name(), op.name()),
    }
}

/// `3 KiB`, `4 KiB`, `512 B`.
fn size_label(bytes: u64) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// The peak (the highest median, the first of equals) and the plateau: the earliest point from
/// which every median to the end of the sweep is within [`PLATEAU_TOLERANCE`] of the peak,
/// when that holds for at least two points.
pub fn peak_and_plateau(points: &[Point]) -> (Option<CurvePeak>, Option<Plateau>) {
    let Some(best) = points
        .iter()
        .filter(|p| p.value.is_finite() && p.value > 0.0)
        .fold(None::<&Point>, |best, p| match best {
            Some(b) if b.value >= p.value => Some(b),
            _ => Some(p),
        })
    else {
        return (None, None);
    };
    let peak = CurvePeak {
        threads: best.threads,
        value: best.value,
    };
    let floor = peak.value * (1.0 - PLATEAU_TOLERANCE);
    let tail = points.iter().rev().take_while(|p| p.value >= floor).count();
    let plateau = (tail >= 2).then(|| {
        let on = &points[points.len() - tail..];
        Plateau {
            from_threads: on[0].threads,
            to_threads: on[on.len() - 1].threads,
            level: on.iter().map(|p| p.value).fold(f64::INFINITY, f64::min),
        }
    });
    (Some(peak), plateau)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(threads: u32, value: f64) -> Point {
        Point {
            threads,
            value,
            ..Point::default()
        }
    }

    fn curve(values: &[f64]) -> (Option<CurvePeak>, Option<Plateau>) {
        let points: Vec<Point> = values.iter().enumerate().map(|(i, v)| point(1 << i, *v)).collect();
        peak_and_plateau(&points)
    }

    #[test]
    fn the_plateau_is_where_the_curve_stays_within_five_percent_of_its_peak() {
        // Rising, then flat within 5%: plateau from 8 threads, sustained 96.
        let (peak, plateau) = curve(&[10.0, 40.0, 80.0, 96.0, 100.0, 97.0]);
        assert_eq!(
            peak,
            Some(CurvePeak {
                threads: 16,
                value: 100.0
            })
        );
        assert_eq!(
            plateau,
            Some(Plateau {
                from_threads: 8,
                to_threads: 32,
                level: 96.0
            })
        );
        // Still rising at the end: a peak but no plateau.
        assert_eq!(curve(&[10.0, 20.0, 40.0, 80.0]).1, None);
        // Falling after the peak by more than 5%: no plateau either.
        let (peak, plateau) = curve(&[50.0, 100.0, 99.0, 90.0]);
        assert_eq!((peak.map(|p| p.threads), plateau), (Some(2), None));
        // Exactly 5% below still counts.
        assert_eq!(curve(&[100.0, 95.0]).1.map(|p| p.from_threads), Some(1));
        assert_eq!(curve(&[]), (None, None));
        assert_eq!(curve(&[0.0, 0.0]), (None, None));
    }

    #[test]
    fn a_point_summarises_its_repeats_and_says_whether_caches_may_have_answered() {
        let run = |value: f64, watts: f64| PhaseRun {
            value,
            power_w: Some(watts),
            ..PhaseRun::default()
        };
        let p = Point::new(
            Measure::Bandwidth,
            4,
            vec![4],
            8 << 30,
            48 << 30,
            false,
            vec![run(2.0, 400.0), run(2.2, 410.0), run(1.8, 390.0)],
        );
        assert_eq!((p.value, p.min, p.max, p.power_w), (2.0, 1.8, 2.2, Some(400.0)));
        assert_eq!(p.per_watt, Some(5.0), "2 GB/s at 400 W: 5 MB/s per W");
        let i = p.interval.unwrap();
        assert!(i.low >= 1.8 && i.high <= 2.2 && i.low <= 2.0 && i.high >= 2.0, "{i:?}");
        assert!(p.cache_affected && p.valid);
        let big = Point::new(
            Measure::Iops,
            1,
            vec![1],
            48 << 30,
            48 << 30,
            false,
            vec![run(5.0, 0.0)],
        );
        assert!(!big.cache_affected, "exactly twice the RAM is not under it");
        assert_eq!((big.power_w, big.per_watt, big.interval), (None, None, None));
        let failed = Point::new(Measure::Ops, 1, vec![1], 0, 1, false, vec![PhaseRun::default()]);
        assert!(!failed.valid);
    }
}
