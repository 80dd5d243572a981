//! The comparable figures of a bench document: its summary figures ([`BenchReport::figures`],
//! what experiments compare and the CSV rows hold) and the same figures repeat by repeat
//! ([`BenchReport::run_figures`], the samples `bench compare` judges).

use super::BenchReport;
use crate::fio::{DataDirection, Percentile};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// One comparable figure of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Test or kernel (`randread`, `Triad`, `n-to-n write at 8 threads`).
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

/// Figures as they are pushed: finite values only.
#[derive(Default)]
struct Figures(Vec<Figure>);

impl Figures {
    fn push(&mut self, test: &str, metric: &str, value: Option<f64>, unit: &str, higher_is_better: bool) {
        if let Some(value) = value.filter(|v| v.is_finite()) {
            self.0.push(Figure {
                test: test.into(),
                metric: metric.into(),
                value,
                unit: unit.into(),
                higher_is_better,
            });
        }
    }

    /// A storage test's figures from one repeat's values or the medians of all.
    fn storage(&mut self, test: &str, v: &StorageValues) {
        self.push(test, "iops", Some(v.iops), "IO/s", true);
        self.push(test, "bandwidth", Some(v.bw_bytes / 1e6), "MB/s", true);
        for dir in DataDirection::BOTH {
            for pct in Percentile::ALL {
                let metric = format!("{}_{}", dir.name(), pct.name());
                self.push(test, &metric, (v.latency)(dir, pct), "µs", false);
            }
        }
        self.push(test, "cpu", v.cpu, "%", false);
        self.push(test, "power", v.power_w, "W", false);
        self.push(test, "energy", v.energy_j, "J", false);
        self.push(test, "iops_per_watt", v.power_w.map(|w| v.iops / w), "IO/s/W", true);
        self.push(
            test,
            "mbps_per_watt",
            v.power_w.map(|w| v.bw_bytes / 1e6 / w),
            "MB/s/W",
            true,
        );
    }

    /// A file-system point's figures: its value, power and work per watt.
    fn point(&mut self, curve: &super::filesystem::Curve, threads: u32, value: f64, power_w: Option<f64>) {
        let test = point_test(curve, threads);
        let measure = curve.measure();
        let (per_watt, unit) = measure.per_watt();
        self.push(&test, measure.metric(), Some(value), measure.unit(), true);
        self.push(&test, "power", power_w, "W", false);
        self.push(
            &test,
            per_watt,
            power_w.map(|w| measure.per_watt_value(value, w)),
            unit,
            true,
        );
    }
}

/// One storage test's values: a repeat's, or the medians over repeats.
struct StorageValues<'a> {
    iops: f64,
    bw_bytes: f64,
    latency: &'a dyn Fn(DataDirection, Percentile) -> Option<f64>,
    cpu: Option<f64>,
    power_w: Option<f64>,
    energy_j: Option<f64>,
}

/// The test a file-system point's figures carry: `n-to-n write at 8 threads`.
pub fn point_test(curve: &super::filesystem::Curve, threads: u32) -> String {
    format!(
        "{} at {threads} thread{}",
        curve.name(),
        if threads == 1 { "" } else { "s" }
    )
}

/// A file-system point's test split back into its curve and thread count (`n-to-n write at 8
/// threads` is `("n-to-n write", 8)`); `None` for any other test.
pub fn split_point_test(test: &str) -> Option<(&str, u32)> {
    let rest = test.strip_suffix(" threads").or_else(|| test.strip_suffix(" thread"))?;
    let (curve, threads) = rest.rsplit_once(" at ")?;
    Some((curve, threads.parse().ok()?))
}

impl BenchReport {
    /// Every comparable figure, in a stable order.
    pub fn figures(&self) -> Vec<Figure> {
        let mut out = Figures::default();
        if let Some(s) = &self.storage {
            for t in &s.tests {
                let cpu: Vec<f64> = t.runs.iter().map(|r| r.metrics.usr_cpu + r.metrics.sys_cpu).collect();
                out.storage(
                    &t.name,
                    &StorageValues {
                        iops: t.iops,
                        bw_bytes: t.bw_bytes,
                        latency: &|dir, pct| t.latency_median(dir, pct),
                        cpu: stats::median(&cpu),
                        power_w: t.power_w,
                        energy_j: t.energy_j,
                    },
                );
                out.push(&t.name, "cv_iops", t.cv_iops.map(|c| c * 100.0), "%", false);
            }
        }
        if let Some(m) = &self.memory {
            for k in crate::stream::KERNELS {
                out.push(k, "bandwidth", m.gbs.get(k).copied(), "GB/s", true);
                out.push(k, "cv", m.cv.get(k).map(|c| c * 100.0), "%", false);
            }
            out.push(
                "Triad",
                "fraction_of_peak",
                m.triad_fraction_of_peak.map(|f| f * 100.0),
                "%",
                true,
            );
            out.push("all", "power", m.power_w, "W", false);
            out.push("Triad", "gbs_per_watt", m.triad_gbs_per_watt, "GB/s/W", true);
        }
        if let Some(f) = &self.filesystem {
            for c in &f.curves {
                for p in &c.points {
                    out.point(c, p.threads, p.value, p.power_w);
                }
            }
        }
        out.0
    }

    /// The figures a document holds per repeat, one entry per repeat (storage: each test's
    /// throughput, latency, CPU, power and work per watt; memory: each kernel's bandwidth, the
    /// power and Triad per watt; file system: each point's value, power and work per watt),
    /// then the document's own figure, once, for every other figure but the coefficients of
    /// variation (which describe the repeats, not the machine). Each entry is one sample when
    /// two documents are compared.
    pub fn run_figures(&self) -> Vec<Figure> {
        let mut out = Figures::default();
        if let Some(s) = &self.storage {
            for t in &s.tests {
                for r in &t.runs {
                    let m = &r.metrics;
                    out.storage(
                        &t.name,
                        &StorageValues {
                            iops: m.iops,
                            bw_bytes: m.bw_bytes,
                            latency: &|dir, pct| dir.latency(m).and_then(|l| pct.of(&l)),
                            cpu: Some(m.usr_cpu + m.sys_cpu),
                            power_w: r.power.map(|p| p.average_w).filter(|w| *w > 0.0),
                            energy_j: r.power.map(|p| p.energy_j),
                        },
                    );
                }
            }
        }
        if let Some(m) = &self.memory {
            for (i, run) in m.runs.iter().enumerate() {
                for k in &run.kernels {
                    out.push(&k.name, "bandwidth", Some(k.best_gbs), "GB/s", true);
                }
                let watts = m
                    .run_power
                    .get(i)
                    .copied()
                    .flatten()
                    .map(|p| p.average_w)
                    .filter(|w| *w > 0.0);
                out.push("all", "power", watts, "W", false);
                out.push(
                    "Triad",
                    "gbs_per_watt",
                    run.gbs("Triad").zip(watts).map(|(g, w)| g / w),
                    "GB/s/W",
                    true,
                );
            }
        }
        if let Some(f) = &self.filesystem {
            for c in &f.curves {
                for p in &c.points {
                    for r in &p.runs {
                        out.point(c, p.threads, r.value, r.power_w);
                    }
                }
            }
        }
        let per_run: std::collections::BTreeSet<(String, String)> =
            out.0.iter().map(|f| (f.test.clone(), f.metric.clone())).collect();
        let rest: Vec<Figure> = self
            .figures()
            .into_iter()
            .filter(|f| !f.metric.starts_with("cv") && !per_run.contains(&(f.test.clone(), f.metric.clone())))
            .collect();
        out.0.extend(rest);
        out.0
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
}

#[cfg(test)]
mod tests {
    use crate::report::{BenchReport, parse};

    #[test]
    fn a_points_test_splits_back_into_its_curve_and_threads() {
        assert_eq!(
            super::split_point_test("n-to-n write at 8 threads"),
            Some(("n-to-n write", 8))
        );
        assert_eq!(
            super::split_point_test("metadata create 3 KiB at 1 thread"),
            Some(("metadata create 3 KiB", 1))
        );
        assert_eq!(super::split_point_test("randread"), None);
        assert_eq!(super::split_point_test("x at many threads"), None);
    }

    #[test]
    fn each_repeat_is_a_figure_of_its_own_and_the_rest_come_once() {
        let run = |triad: f64| {
            serde_json::json!({
                "variant": "standard", "elements": 1, "array_bytes": 8, "threads": 1, "cpus": [0], "iterations": 2,
                "kernels": [{"name": "Triad", "best_gbs": triad, "avg_s": 0.1, "min_s": 0.1, "max_s": 0.1}],
                "validation": {"passed": true, "relative_errors": [0.0, 0.0, 0.0]}
            })
        };
        let doc = serde_json::json!({
            "schema": "rftune.bench/v1", "kind": "memory",
            "memory": {
                "gbs": {"Triad": 30.0}, "cv": {"Triad": 0.01}, "power_w": 400.0, "triad_gbs_per_watt": 0.075,
                "triad_fraction_of_peak": 0.5,
                "run_power": [{"n": 3, "min_w": 390.0, "max_w": 410.0, "mean_w": 400.0, "stddev_w": 10.0,
                               "duration_s": 2.0, "energy_j": 800.0, "average_w": 400.0},
                              null],
                "runs": [run(30.0), run(31.0)]
            }
        });
        let r: BenchReport = parse(&doc.to_string()).unwrap();
        let figs = r.run_figures();
        let values = |test: &str, metric: &str| -> Vec<f64> {
            figs.iter()
                .filter(|f| f.test == test && f.metric == metric)
                .map(|f| f.value)
                .collect()
        };
        assert_eq!(values("Triad", "bandwidth"), [30.0, 31.0]);
        // The second repeat has no power: one sample of power and of Triad per watt.
        assert_eq!(values("all", "power"), [400.0]);
        assert_eq!(values("Triad", "gbs_per_watt"), [30.0 / 400.0]);
        assert_eq!(values("Triad", "fraction_of_peak"), [50.0], "a document figure, once");
        assert!(values("Triad", "cv").is_empty());
    }
}
