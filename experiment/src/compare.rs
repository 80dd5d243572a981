//! Comparing profiles: the median per profile, the change against the baseline in percent, and
//! two 95% intervals of the difference — a seeded percentile bootstrap of the difference of
//! medians (2000 resamples by default) and a Welch t interval of the difference of means
//! (unequal variances, Welch–Satterthwaite degrees of freedom), both computed by
//! `host_bench::stats`. A verdict ("better", "worse") is
//! given only when both intervals exclude zero on the same side; otherwise "within noise" (or "too few runs" below two runs a side). `bench compare` uses the same rule, each repeat of a document one sample ([`documents`]).
//! Requiring both is deliberate: with the few repeats an experiment affords, the bootstrap alone
//! is overconfident (two samples of one value each give a zero-width interval), and the t
//! interval alone leans on normality.
//!
//! Comparisons are made per host: hosts differ, and pooling them would hide a profile's effect
//! in the spread between machines.

use crate::error::{Result, bad_input};
use host_bench::report::Figure;
pub use host_bench::stats::{Interval, Method};
use host_bench::stats::{bootstrap_median, bootstrap_median_difference, median, welch_interval};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One measured value: a metric of one test in one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The host.
    pub host: String,
    /// The profile in force.
    pub profile: String,
    /// `storage` or `memory`.
    pub kind: String,
    /// Test or kernel (`randread`, `Triad`).
    pub test: String,
    /// Metric (`iops`, `bandwidth`, `read_p99`, `power`, `iops_per_watt`).
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Which way is an improvement.
    pub direction: Direction,
    /// The value.
    pub value: f64,
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Throughput, bandwidth, performance per watt.
    HigherIsBetter,
    /// Latency, power, energy, CPU use.
    LowerIsBetter,
}

impl Direction {
    /// The direction of a metric by its name, for documents that do not say: performance per
    /// watt, IOPS, bandwidth and GB/s go up; latency, watts, energy and CPU use go down.
    pub fn of_metric(metric: &str) -> Self {
        let m = metric.to_ascii_lowercase();
        if m.contains("per_watt") || m.contains("per_w") {
            Self::HigherIsBetter
        } else if m.contains("lat")
            || m.contains("_p5")
            || m.contains("_p9")
            || m.contains("power")
            || m.contains("watt")
            || m.contains("energy")
            || m.contains("cpu")
            || m.starts_with("cv")
        {
            Self::LowerIsBetter
        } else {
            Self::HigherIsBetter
        }
    }

    /// From a bench document's `higher_is_better`.
    pub fn from_higher_is_better(up: bool) -> Self {
        if up { Self::HigherIsBetter } else { Self::LowerIsBetter }
    }
}

/// The conclusion for one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Both intervals exclude zero, on the improving side.
    Better,
    /// Both intervals exclude zero, on the worsening side.
    Worse,
    /// An interval includes zero: the change is within the noise of the runs.
    NoClearChange,
    /// Fewer than two runs on a side: no interval, so no verdict, whatever the change.
    TooFewRuns,
}

impl Verdict {
    /// How reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Better => "better",
            Self::Worse => "worse",
            Self::NoClearChange => "within noise",
            Self::TooFewRuns => "too few runs (n < 2)",
        }
    }
}

/// One profile's values of one metric on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileSummary {
    /// The profile.
    pub profile: String,
    /// Samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Bootstrap interval of the median (absent below two samples).
    pub median_interval: Option<Interval>,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// A profile against the baseline on one metric: how a measured figure changed (a diff's
/// `bios_profiles::Change` is an attribute compared with a profile).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineChange {
    /// The profile.
    pub profile: String,
    /// Median(profile) − median(baseline).
    pub difference: f64,
    /// The difference in percent of the baseline median (absent when that is zero).
    pub percent: Option<f64>,
    /// Bootstrap interval of the difference of medians.
    pub bootstrap: Option<Interval>,
    /// The bootstrap interval in percent of the baseline median.
    pub bootstrap_percent: Option<Interval>,
    /// Welch t interval of the difference of means.
    pub welch: Option<Interval>,
    /// The Welch interval in percent of the baseline median (the same scale as
    /// `bootstrap_percent`).
    #[serde(default)]
    pub welch_percent: Option<Interval>,
    /// The conclusion.
    pub verdict: Verdict,
}

/// Every profile on one metric of one test on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The host.
    pub host: String,
    /// `storage` or `memory`.
    pub kind: String,
    /// Test or kernel.
    pub test: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Per profile, in the experiment's order (profiles without samples left out).
    pub profiles: Vec<ProfileSummary>,
    /// Each non-baseline profile against the baseline.
    pub changes: Vec<BaselineChange>,
}

impl Comparison {
    /// `profile` against the baseline (absent for the baseline itself).
    pub fn change(&self, profile: &str) -> Option<&BaselineChange> {
        self.changes.iter().find(|ch| ch.profile == profile)
    }
}

/// The verdict from both intervals, read in the metric's direction.
pub fn verdict(bootstrap: Option<Interval>, welch: Option<Interval>, direction: Direction) -> Verdict {
    let (Some(b), Some(w)) = (bootstrap, welch) else {
        return Verdict::NoClearChange;
    };
    let up = b.low > 0.0 && w.low > 0.0;
    let down = b.high < 0.0 && w.high < 0.0;
    match (up, down, direction) {
        (true, _, Direction::HigherIsBetter) | (_, true, Direction::LowerIsBetter) => Verdict::Better,
        (true, _, Direction::LowerIsBetter) | (_, true, Direction::HigherIsBetter) => Verdict::Worse,
        _ => Verdict::NoClearChange,
    }
}

/// Compares every profile with the baseline (`profiles[0]`), per host, benchmark, test and
/// metric. Groups are ordered by host, kind, test, then metric in first-seen order.
pub fn compare(observations: &[Observation], profiles: &[String], method: &Method) -> Vec<Comparison> {
    type Key = (String, String, String);
    let mut groups: BTreeMap<Key, Vec<(String, String, Direction)>> = BTreeMap::new();
    let mut values: BTreeMap<(Key, String, String), Vec<f64>> = BTreeMap::new();
    for o in observations.iter().filter(|o| o.value.is_finite()) {
        let key = (o.host.clone(), o.kind.clone(), o.test.clone());
        let metrics = groups.entry(key.clone()).or_default();
        if !metrics.iter().any(|(m, _, _)| *m == o.metric) {
            metrics.push((o.metric.clone(), o.unit.clone(), o.direction));
        }
        values
            .entry((key, o.metric.clone(), o.profile.clone()))
            .or_default()
            .push(o.value);
    }
    let Some(baseline) = profiles.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, metrics) in groups {
        for (metric, unit, direction) in metrics {
            let sample = |p: &String| {
                values
                    .get(&(key.clone(), metric.clone(), p.clone()))
                    .cloned()
                    .unwrap_or_default()
            };
            let summaries: Vec<ProfileSummary> = profiles
                .iter()
                .filter_map(|p| {
                    let xs = sample(p);
                    Some(ProfileSummary {
                        profile: p.clone(),
                        n: xs.len(),
                        median: median(&xs)?,
                        median_interval: bootstrap_median(&xs, method),
                        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
                        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    })
                })
                .collect();
            let base = sample(baseline);
            let base_median = median(&base);
            let changes = profiles
                .iter()
                .skip(1)
                .filter_map(|p| {
                    let other = sample(p);
                    let difference = median(&other)? - base_median?;
                    let bootstrap = bootstrap_median_difference(&base, &other, method);
                    let welch = welch_interval(&base, &other, method.level);
                    let pct = |x: f64| base_median.filter(|m| *m != 0.0).map(|m| x / m.abs() * 100.0);
                    let in_percent = |i: Option<Interval>| {
                        i.and_then(|i| {
                            Some(Interval {
                                low: pct(i.low)?,
                                high: pct(i.high)?,
                            })
                        })
                    };
                    Some(BaselineChange {
                        profile: p.clone(),
                        difference,
                        percent: pct(difference),
                        bootstrap_percent: in_percent(bootstrap),
                        welch_percent: in_percent(welch),
                        bootstrap,
                        welch,
                        verdict: if base.len() < 2 || other.len() < 2 {
                            Verdict::TooFewRuns
                        } else {
                            verdict(bootstrap, welch, direction)
                        },
                    })
                })
                .collect();
            out.push(Comparison {
                host: key.0.clone(),
                kind: key.1.clone(),
                test: key.2.clone(),
                metric,
                unit,
                direction,
                profiles: summaries,
                changes,
            });
        }
    }
    out
}

/// The two documents' labels as [`compare`] sees them (the labels themselves may be equal).
const PAIR: [&str; 2] = ["A", "B"];

/// A figure of `doc` as an observation of `host` under `profile`.
fn observation(doc: &host_bench::report::BenchReport, host: &str, profile: &str, f: Figure) -> Observation {
    Observation {
        host: host.to_owned(),
        profile: profile.to_owned(),
        kind: doc.kind.clone(),
        test: f.test,
        metric: f.metric,
        unit: f.unit,
        direction: Direction::from_higher_is_better(f.higher_is_better),
        value: f.value,
    }
}

/// The observations in one bench document: its figures (host-bench's definition), without the
/// coefficients of variation, which describe a document's repeats, not the host.
pub fn observations(doc: &host_bench::report::BenchReport, host: &str, profile: &str) -> Vec<Observation> {
    doc.figures()
        .into_iter()
        .filter(|f| !f.metric.starts_with("cv"))
        .map(|f| observation(doc, host, profile, f))
        .collect()
}

/// One observation per repeat of every figure a bench document holds per repeat (host-bench's
/// [`host_bench::report::BenchReport::run_figures`]: storage tests, memory kernels and power,
/// every point of every file-system curve), and the document's own figure, once, for the rest.
pub fn run_observations(doc: &host_bench::report::BenchReport, profile: &str) -> Vec<Observation> {
    doc.run_figures()
        .into_iter()
        .map(|f| observation(doc, "", profile, f))
        .collect()
}

/// The `schema` of `rftune bench compare`'s JSON document.
pub const BENCH_COMPARE_SCHEMA: &str = "rftune.bench-compare/v1";

/// Said in every report next to the intervals.
pub const METHOD_NOTE: &str = "Intervals are 95% intervals of the difference against the baseline, both in percent of \
     the baseline's median: a seeded percentile bootstrap of the difference of medians, and Welch's t interval of the \
     difference of means. One rule gives every verdict: better or worse only when both intervals exclude zero on the \
     same side; \"within noise\" when either includes zero; \"too few runs\" below two runs a side. Comparisons are \
     per host.";

/// Two bench documents compared (`rftune.bench-compare/v1`): B against A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchComparison {
    /// Always [`BENCH_COMPARE_SCHEMA`].
    pub schema: String,
    /// A's name: its label, else when it started.
    pub a: String,
    /// B's name, the same way.
    pub b: String,
    /// How intervals and verdicts were computed.
    pub method: Method,
    /// The method in words ([`METHOD_NOTE`]).
    pub method_note: String,
    /// One row per test and metric both documents could be compared on.
    pub changes: Vec<BenchChange>,
}

/// B against A on one metric of one test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchChange {
    /// Test or kernel.
    pub test: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// A's median (absent when A has no sample).
    pub a: Option<f64>,
    /// A's samples.
    pub n_a: usize,
    /// B's median (absent when B has no sample).
    pub b: Option<f64>,
    /// B's samples.
    pub n_b: usize,
    /// Median(B) − median(A).
    pub difference: f64,
    /// The difference in percent of A's median (absent when that is zero).
    pub percent: Option<f64>,
    /// Bootstrap interval of the difference of medians, in percent of A's median.
    pub bootstrap_percent: Option<Interval>,
    /// Welch t interval of the difference of means, in percent of A's median.
    pub welch_percent: Option<Interval>,
    /// The conclusion.
    pub verdict: Verdict,
    /// The conclusion in words.
    pub verdict_text: String,
}

/// Two bench documents compared as an experiment compares profiles: B against A per figure,
/// each repeat one sample ([`run_observations`]), with the same intervals and verdict rule,
/// rows in the documents' own order; `metrics`, when not empty, keeps only those. Documents of
/// different kinds (storage, memory, filesystem) cannot be compared.
pub fn documents(
    a: &host_bench::report::BenchReport,
    b: &host_bench::report::BenchReport,
    metrics: &[String],
    method: &Method,
) -> Result<BenchComparison> {
    if a.kind != b.kind {
        bad_input!("cannot compare a {} run with a {} run", a.kind, b.kind);
    }
    let mut order: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut observations = Vec::new();
    for (side, doc) in PAIR.iter().zip([a, b]) {
        for o in run_observations(doc, side) {
            if !metrics.is_empty() && !metrics.contains(&o.metric) {
                continue;
            }
            let next = order.len();
            order.entry((o.test.clone(), o.metric.clone())).or_insert(next);
            observations.push(o);
        }
    }
    let profiles: Vec<String> = PAIR.iter().map(|p| (*p).to_owned()).collect();
    let mut changes: Vec<BenchChange> = compare(&observations, &profiles, method)
        .into_iter()
        .filter_map(|c| {
            let ch = c.changes.first()?;
            let side = |label: &str| c.profiles.iter().find(|p| p.profile == label);
            let (sa, sb) = (side(PAIR[0]), side(PAIR[1]));
            Some(BenchChange {
                a: sa.map(|p| p.median),
                n_a: sa.map_or(0, |p| p.n),
                b: sb.map(|p| p.median),
                n_b: sb.map_or(0, |p| p.n),
                difference: ch.difference,
                percent: ch.percent,
                bootstrap_percent: ch.bootstrap_percent,
                welch_percent: ch.welch_percent,
                verdict: ch.verdict,
                verdict_text: ch.verdict.as_str().to_owned(),
                test: c.test,
                metric: c.metric,
                unit: c.unit,
                direction: c.direction,
            })
        })
        .collect();
    changes.sort_by_key(|r| order.get(&(r.test.clone(), r.metric.clone())).copied());
    let name = |r: &host_bench::report::BenchReport| r.label.clone().unwrap_or_else(|| r.started_at.clone());
    Ok(BenchComparison {
        schema: BENCH_COMPARE_SCHEMA.to_owned(),
        a: name(a),
        b: name(b),
        method: *method,
        method_note: METHOD_NOTE.to_owned(),
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(profile: &str, metric: &str, values: &[f64]) -> Vec<Observation> {
        values
            .iter()
            .map(|v| Observation {
                host: "h".into(),
                profile: profile.into(),
                kind: "storage".into(),
                test: "randread".into(),
                metric: metric.into(),
                unit: "IO/s".into(),
                direction: Direction::of_metric(metric),
                value: *v,
            })
            .collect()
    }

    fn profiles() -> Vec<String> {
        vec!["base".into(), "tuned".into()]
    }

    #[test]
    fn documents_of_different_kinds_are_not_compared() {
        let doc = |kind: &str| host_bench::report::BenchReport {
            kind: kind.into(),
            ..Default::default()
        };
        let e = documents(&doc("storage"), &doc("memory"), &[], &Method::default()).unwrap_err();
        assert_eq!(e.to_string(), "cannot compare a storage run with a memory run");
        let same = documents(&doc("memory"), &doc("memory"), &[], &Method::default()).unwrap();
        assert_eq!(same.schema, BENCH_COMPARE_SCHEMA);
    }

    #[test]
    fn identical_samples_give_no_verdict() {
        let xs = [100.0, 102.0, 98.0, 101.0, 99.0];
        let mut o = obs("base", "iops", &xs);
        o.extend(obs("tuned", "iops", &xs));
        let c = compare(&o, &profiles(), &Method::default());
        assert_eq!(c.len(), 1);
        let ch = &c[0].changes[0];
        assert_eq!(ch.difference, 0.0);
        assert_eq!(ch.percent, Some(0.0));
        let b = ch.bootstrap.unwrap();
        assert!(b.low <= 0.0 && b.high >= 0.0, "{b:?}");
        let w = ch.welch.unwrap();
        assert!((w.low + w.high).abs() < 1e-9);
        assert_eq!(ch.verdict, Verdict::NoClearChange);
    }

    #[test]
    fn separated_samples_give_a_verdict_in_the_metrics_direction() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        let tuned = [120.0, 122.0, 118.0, 121.0, 119.0];
        let mut o = obs("base", "iops", &base);
        o.extend(obs("tuned", "iops", &tuned));
        o.extend(obs("base", "read_p99", &base));
        o.extend(obs("tuned", "read_p99", &tuned));
        let c = compare(&o, &profiles(), &Method::default());
        let iops = c.iter().find(|c| c.metric == "iops").unwrap();
        let ch = &iops.changes[0];
        assert_eq!(ch.difference, 20.0);
        assert_eq!(ch.percent, Some(20.0));
        assert!(ch.bootstrap.unwrap().low > 0.0);
        assert_eq!(ch.verdict, Verdict::Better);
        assert_eq!(iops.profiles[0].median, 100.0);
        assert_eq!(iops.profiles[1].n, 5);
        // The bootstrap interval of the median lies within the sample's range.
        let mi = iops.profiles[1].median_interval.unwrap();
        assert!(mi.low >= 118.0 && mi.high <= 122.0);
        // Latency going up is worse.
        let lat = c.iter().find(|c| c.metric == "read_p99").unwrap();
        assert_eq!(lat.direction, Direction::LowerIsBetter);
        assert_eq!(lat.changes[0].verdict, Verdict::Worse);
    }

    #[test]
    fn single_samples_never_get_a_verdict() {
        let mut o = obs("base", "iops", &[100.0]);
        o.extend(obs("tuned", "iops", &[200.0]));
        let c = compare(&o, &profiles(), &Method::default());
        let ch = &c[0].changes[0];
        assert_eq!(ch.difference, 100.0);
        assert_eq!((ch.bootstrap, ch.welch), (None, None));
        assert_eq!(ch.verdict, Verdict::TooFewRuns);
        assert_eq!(ch.verdict.as_str(), "too few runs (n < 2)");
    }

    #[test]
    fn verdict_needs_both_intervals_on_one_side() {
        let pos = Some(Interval { low: 1.0, high: 2.0 });
        let neg = Some(Interval { low: -2.0, high: -1.0 });
        let zero = Some(Interval { low: -1.0, high: 1.0 });
        assert_eq!(verdict(pos, pos, Direction::HigherIsBetter), Verdict::Better);
        assert_eq!(verdict(pos, pos, Direction::LowerIsBetter), Verdict::Worse);
        assert_eq!(verdict(neg, neg, Direction::LowerIsBetter), Verdict::Better);
        assert_eq!(verdict(pos, zero, Direction::HigherIsBetter), Verdict::NoClearChange);
        assert_eq!(verdict(pos, neg, Direction::HigherIsBetter), Verdict::NoClearChange);
        assert_eq!(verdict(None, pos, Direction::HigherIsBetter), Verdict::NoClearChange);
    }

    #[test]
    fn directions_by_metric_name() {
        for m in [
            "iops",
            "bandwidth",
            "iops_per_watt",
            "mbps_per_watt",
            "gbs_per_watt",
            "fraction_of_peak",
        ] {
            assert_eq!(Direction::of_metric(m), Direction::HigherIsBetter, "{m}");
        }
        for m in [
            "read_p99",
            "write_p99.9",
            "power",
            "energy",
            "cpu",
            "cv_iops",
            "latency_us",
        ] {
            assert_eq!(Direction::of_metric(m), Direction::LowerIsBetter, "{m}");
        }
    }
}
