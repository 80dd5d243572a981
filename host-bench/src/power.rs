//! Power readings from a BMC, sampled on the client's clock: statistics, energy by the
//! trapezoid rule, and the `rftune.power/v1` document with its CSV and Prometheus forms.

use crate::stats;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Why a power source ([`crate::run::PowerSource`]) gave no readings; shown as it is (its own
/// message and causes).
pub type PowerError = Box<dyn std::error::Error + Send + Sync>;

/// The `schema` of [`PowerReport`].
pub const SCHEMA: &str = "rftune.power/v1";

/// Said wherever power figures are shown.
pub const CAVEAT: &str = "BMC readings (iDRAC sensor, refreshed about every 5 s), not a calibrated power meter: \
     good for comparing runs on the same server, not SPECpower-grade";

/// One reading: seconds since sampling began (client clock) and watts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the first request, at the midpoint of this request's round trip.
    pub t_s: f64,
    /// The reading.
    pub watts: f64,
}

/// Which Redfish property a reading came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sensor {
    /// `Chassis/<id>/EnvironmentMetrics` `PowerWatts.Reading` (iDRAC 7.x and newer services).
    #[serde(rename = "EnvironmentMetrics.PowerWatts")]
    EnvironmentMetrics,
    /// `Chassis/<id>/Power` `PowerControl[0].PowerConsumedWatts`.
    #[serde(rename = "Power.PowerControl.PowerConsumedWatts")]
    PowerControl,
}

impl Sensor {
    /// The name used in documents and labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EnvironmentMetrics => "EnvironmentMetrics.PowerWatts",
            Self::PowerControl => "Power.PowerControl.PowerConsumedWatts",
        }
    }
}

/// Energy in joules, E = Σ ½(Pᵢ + Pᵢ₊₁)(tᵢ₊₁ − tᵢ). Zero for fewer than two samples.
pub fn energy_joules(samples: &[Sample]) -> f64 {
    samples
        .windows(2)
        .map(|w| 0.5 * (w[0].watts + w[1].watts) * (w[1].t_s - w[0].t_s))
        .sum::<f64>()
        // An empty float sum is -0.0, which JSON would print as `-0.0`.
        + 0.0
}

/// The samples with `from ≤ t ≤ to` (to leave out ramp periods).
pub fn window(samples: &[Sample], from: f64, to: f64) -> Vec<Sample> {
    samples
        .iter()
        .copied()
        .filter(|s| s.t_s >= from && s.t_s <= to)
        .collect()
}

/// Statistics of a series of readings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerStats {
    /// Readings.
    pub n: usize,
    /// Smallest reading, W.
    pub min_w: f64,
    /// Largest reading, W.
    pub max_w: f64,
    /// Arithmetic mean of the readings, W.
    pub mean_w: f64,
    /// Sample standard deviation of the readings, W.
    pub stddev_w: f64,
    /// t(last) − t(first), s.
    pub duration_s: f64,
    /// Trapezoid-rule energy, J.
    pub energy_j: f64,
    /// Energy / duration, W (the single reading when there is only one).
    pub average_w: f64,
    /// The readings span fewer than [`MIN_SENSOR_PERIODS`] sensor periods: the BMC may have
    /// refreshed its reading once or not at all, so the figures describe the moment, not the
    /// run.
    #[serde(default)]
    pub unreliable: bool,
}

/// How often an iDRAC refreshes its power reading, s (about every 5 s).
pub const SENSOR_PERIOD_S: f64 = 5.0;

/// Power over fewer sensor periods than this is marked unreliable.
pub const MIN_SENSOR_PERIODS: f64 = 3.0;

/// Statistics of `samples`; `None` when there are none.
pub fn stats(samples: &[Sample]) -> Option<PowerStats> {
    let watts: Vec<f64> = samples.iter().map(|s| s.watts).collect();
    let s = stats::summary(&watts)?;
    let duration_s = samples.last()?.t_s - samples.first()?.t_s;
    let energy_j = energy_joules(samples);
    Some(PowerStats {
        n: s.n,
        min_w: s.min,
        max_w: s.max,
        mean_w: s.mean,
        stddev_w: s.stddev,
        duration_s,
        energy_j,
        average_w: if duration_s > 0.0 {
            energy_j / duration_s
        } else {
            s.mean
        },
        unreliable: duration_s < SENSOR_PERIOD_S * MIN_SENSOR_PERIODS,
    })
}

/// The `rftune.power/v1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The BMC's name.
    pub host: String,
    /// Where the readings came from.
    pub sensor: Sensor,
    /// UTC time of the first sample.
    pub started_at: String,
    /// Requested interval between samples, s (0 for a single reading).
    pub interval_s: f64,
    /// Statistics.
    pub stats: PowerStats,
    /// Always [`CAVEAT`].
    pub caveat: String,
    /// The readings.
    pub samples: Vec<Sample>,
}

impl PowerReport {
    /// Builds the document; `None` without samples.
    pub fn new(host: &str, sensor: Sensor, started_at: String, interval_s: f64, samples: Vec<Sample>) -> Option<Self> {
        Some(Self {
            schema: SCHEMA.to_owned(),
            host: host.to_owned(),
            sensor,
            started_at,
            interval_s,
            stats: stats(&samples)?,
            caveat: CAVEAT.to_owned(),
            samples,
        })
    }

    /// One CSV row per sample: `host,sensor,t_s,watts`.
    pub fn csv(&self) -> String {
        let mut out = String::from("host,sensor,t_s,watts\n");
        for s in &self.samples {
            let _ = writeln!(
                out,
                "{},{},{:.3},{}",
                csv_field(&self.host),
                self.sensor.as_str(),
                s.t_s,
                s.watts
            );
        }
        out
    }

    /// Prometheus text exposition format (version 0.0.4): the last reading as a gauge and the
    /// statistics of the sampling window.
    pub fn prometheus(&self) -> String {
        let labels = [("host", self.host.as_str()), ("sensor", self.sensor.as_str())];
        let last = self.samples.last().map_or(f64::NAN, |s| s.watts);
        let st = &self.stats;
        let metrics: [(&'static str, &str, f64); 8] = [
            ("rftune_power_watts", "Last power reading from the BMC, in watts.", last),
            (
                "rftune_power_min_watts",
                "Smallest reading in the sampling window.",
                st.min_w,
            ),
            (
                "rftune_power_max_watts",
                "Largest reading in the sampling window.",
                st.max_w,
            ),
            (
                "rftune_power_mean_watts",
                "Mean of the readings in the window.",
                st.mean_w,
            ),
            (
                "rftune_power_stddev_watts",
                "Sample standard deviation of the readings.",
                st.stddev_w,
            ),
            (
                "rftune_power_average_watts",
                "Energy divided by the window length.",
                st.average_w,
            ),
            (
                "rftune_power_energy_joules",
                "Energy over the window by the trapezoid rule.",
                st.energy_j,
            ),
            ("rftune_power_samples", "Readings in the window.", st.n as f64),
        ];
        let mut out = crate::exposition::Exposition::default();
        for (name, help, value) in metrics {
            out.family(name, crate::exposition::MetricType::Gauge, help)
                .sample(&labels, value);
        }
        out.finish()
    }
}

/// Quotes a CSV field when it needs it (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_reading_has_zero_energy_not_minus_zero_and_short_spans_are_unreliable() {
        let one = stats(&[Sample { t_s: 0.0, watts: 300.0 }]).unwrap();
        assert!(one.energy_j.is_sign_positive(), "{}", one.energy_j);
        assert!(serde_json::to_string(&one).unwrap().contains("\"energy_j\":0.0"));
        assert!(one.unreliable);
        let two = stats(&[Sample { t_s: 0.0, watts: 300.0 }, Sample { t_s: 0.5, watts: 310.0 }]).unwrap();
        assert!(two.unreliable, "two readings of a 0.5 s run");
        let long: Vec<Sample> = (0..=20)
            .map(|i| Sample {
                t_s: f64::from(i),
                watts: 300.0,
            })
            .collect();
        assert!(!stats(&long).unwrap().unreliable, "20 s spans four sensor periods");
    }

    fn s(t_s: f64, watts: f64) -> Sample {
        Sample { t_s, watts }
    }

    #[test]
    fn energy_is_the_trapezoid_sum() {
        let samples = [s(0.0, 100.0), s(1.0, 200.0), s(3.0, 200.0)];
        // ½(100+200)·1 + ½(200+200)·2 = 150 + 400
        assert_eq!(energy_joules(&samples), 550.0);
        let st = stats(&samples).unwrap();
        assert_eq!((st.n, st.min_w, st.max_w, st.duration_s), (3, 100.0, 200.0, 3.0));
        assert!((st.average_w - 550.0 / 3.0).abs() < 1e-9);
        assert_eq!(energy_joules(&samples[..1]), 0.0);
        assert_eq!(stats(&samples[..1]).unwrap().average_w, 100.0);
        assert_eq!(window(&samples, 0.5, 3.0).len(), 2);
    }

    #[test]
    fn prometheus_and_csv_forms() {
        let r = PowerReport::new(
            "idrac\"1",
            Sensor::PowerControl,
            "2026-01-01T00:00:00.000Z".into(),
            1.0,
            vec![s(0.0, 400.0), s(1.0, 410.0)],
        )
        .unwrap();
        let p = r.prometheus();
        assert!(p.contains("# HELP rftune_power_watts "), "{p}");
        assert!(p.contains("# TYPE rftune_power_watts gauge"), "{p}");
        assert!(
            p.contains("rftune_power_watts{host=\"idrac\\\"1\",sensor=\"Power.PowerControl.PowerConsumedWatts\"} 410"),
            "{p}"
        );
        assert!(
            p.contains("rftune_power_energy_joules{") && p.contains("} 405\n"),
            "{p}"
        );
        assert_eq!(
            r.csv().lines().nth(2),
            Some("\"idrac\"\"1\",Power.PowerControl.PowerConsumedWatts,1.000,410")
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["schema"], "rftune.power/v1");
        assert_eq!(json["sensor"], "Power.PowerControl.PowerConsumedWatts");
    }
}
