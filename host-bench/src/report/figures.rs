//! The comparable figures of a bench document (what `bench compare` and experiments compare)
//! and its CSV rows.

use super::BenchReport;
use crate::fio;
use crate::stats;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

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
                let cpu: Vec<f64> = t.runs.iter().map(|r| r.metrics.usr_cpu + r.metrics.sys_cpu).collect();
                push(&t.name, "iops", Some(t.iops), "IO/s", true);
                push(&t.name, "bandwidth", Some(t.bw_bytes / 1e6), "MB/s", true);
                for dir in fio::DataDirection::BOTH {
                    for pct in fio::Percentile::ALL {
                        let metric = format!("{}_{}", dir.name(), pct.name());
                        push(&t.name, &metric, t.latency_median(dir, pct), "µs", false);
                    }
                }
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
}
