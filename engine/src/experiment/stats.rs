//! Comparing profiles: the median per profile, the change against the baseline in percent, and
//! two 95% intervals of the difference — a seeded percentile bootstrap of the difference of
//! medians (2000 resamples by default) and a Welch t interval of the difference of means
//! (unequal variances, Welch–Satterthwaite degrees of freedom). A verdict ("better", "worse") is
//! given only when both intervals exclude zero on the same side; otherwise "no clear change".
//! Requiring both is deliberate: with the few repeats an experiment affords, the bootstrap alone
//! is overconfident (two samples of one value each give a zero-width interval), and the t
//! interval alone leans on normality.
//!
//! Comparisons are made per host: hosts differ, and pooling them would hide a profile's effect
//! in the spread between machines.

use super::SplitMix64;
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
    /// An interval includes zero, or there are too few samples for one.
    NoClearChange,
}

impl Verdict {
    /// How reports spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Better => "better",
            Self::Worse => "worse",
            Self::NoClearChange => "no clear change",
        }
    }
}

/// A confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Whether zero lies outside the interval.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Settings of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Method {
    /// Bootstrap resamples.
    pub resamples: usize,
    /// Confidence level (0.95).
    pub level: f64,
    /// Bootstrap seed.
    pub seed: u64,
}

impl Default for Method {
    fn default() -> Self {
        Self {
            resamples: 2000,
            level: 0.95,
            seed: 0,
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

/// A profile against the baseline on one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
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
    pub changes: Vec<Change>,
}

/// The median of the finite values (`None` when there are none).
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (n − 1 in the denominator).
fn variance(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() as f64 - 1.0)
}

/// The `q` quantile of sorted values, interpolating linearly (R's type 7).
fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    let h = (v.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

fn resample_median(xs: &[f64], rng: &mut SplitMix64, buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    buf.extend((0..xs.len()).map(|_| xs[rng.below(xs.len())]));
    buf.sort_by(f64::total_cmp);
    let n = buf.len();
    if n % 2 == 1 {
        buf[n / 2]
    } else {
        0.5 * (buf[n / 2 - 1] + buf[n / 2])
    }
}

fn percentile_interval(mut stats: Vec<f64>, level: f64) -> Option<Interval> {
    if stats.is_empty() {
        return None;
    }
    stats.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Some(Interval {
        low: quantile_sorted(&stats, alpha),
        high: quantile_sorted(&stats, 1.0 - alpha),
    })
}

/// Percentile bootstrap interval of median(`other`) − median(`base`): both samples are resampled
/// with replacement `method.resamples` times from a generator seeded with `method.seed`. `None`
/// when either sample has fewer than two values.
pub fn bootstrap_median_difference(base: &[f64], other: &[f64], method: &Method) -> Option<Interval> {
    if base.len() < 2 || other.len() < 2 || method.resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(method.seed);
    let mut buf = Vec::with_capacity(base.len().max(other.len()));
    let diffs: Vec<f64> = (0..method.resamples)
        .map(|_| {
            let b = resample_median(base, &mut rng, &mut buf);
            let o = resample_median(other, &mut rng, &mut buf);
            o - b
        })
        .collect();
    percentile_interval(diffs, method.level)
}

/// Percentile bootstrap interval of the median of one sample (for error bars).
pub fn bootstrap_median(xs: &[f64], method: &Method) -> Option<Interval> {
    if xs.len() < 2 || method.resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(method.seed);
    let mut buf = Vec::with_capacity(xs.len());
    let meds: Vec<f64> = (0..method.resamples)
        .map(|_| resample_median(xs, &mut rng, &mut buf))
        .collect();
    percentile_interval(meds, method.level)
}

/// Welch's t interval of mean(`other`) − mean(`base`) at `level`. `None` below two values per
/// sample; a zero-width interval when neither sample varies.
pub fn welch_interval(base: &[f64], other: &[f64], level: f64) -> Option<Interval> {
    let (na, nb) = (base.len() as f64, other.len() as f64);
    if base.len() < 2 || other.len() < 2 {
        return None;
    }
    let d = mean(other) - mean(base);
    let (qa, qb) = (variance(base) / na, variance(other) / nb);
    let se2 = qa + qb;
    if !se2.is_finite() {
        return None;
    }
    if se2 == 0.0 {
        return Some(Interval { low: d, high: d });
    }
    let df = se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    let t = student_t_quantile(0.5 + level / 2.0, df)?;
    let half = t * se2.sqrt();
    Some(Interval {
        low: d - half,
        high: d + half,
    })
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularised incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` (possibly fractional) degrees of freedom.
fn student_t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p` quantile (0.5 < p < 1) of Student's t with `df` > 0 degrees of freedom, by bisection
/// on the distribution function to 1e-12.
fn student_t_quantile(p: f64, df: f64) -> Option<f64> {
    if !(0.5..1.0).contains(&p) || !df.is_finite() || df <= 0.0 {
        return None;
    }
    let mut hi = 1.0;
    while student_t_cdf(hi, df) < p {
        hi *= 2.0;
        if hi > 1e12 {
            return None;
        }
    }
    let mut lo = 0.0;
    while hi - lo > 1e-12 * hi.max(1.0) {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
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
                    Some(Change {
                        profile: p.clone(),
                        difference,
                        percent: pct(difference),
                        bootstrap_percent: bootstrap.and_then(|i| {
                            Some(Interval {
                                low: pct(i.low)?,
                                high: pct(i.high)?,
                            })
                        }),
                        bootstrap,
                        welch,
                        verdict: verdict(bootstrap, welch, direction),
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
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn t_quantiles_match_tables() {
        // Two-sided 95% critical values.
        for (df, t) in [
            (1.0, 12.706_204_736),
            (4.0, 2.776_445_105),
            (5.0, 2.570_581_836),
            (8.0, 2.306_004_135),
            (30.0, 2.042_272_456),
        ] {
            let q = student_t_quantile(0.975, df).unwrap();
            assert!((q - t).abs() < 1e-6, "df {df}: {q} vs {t}");
        }
        // Fractional df lies between its neighbours, and the distribution function inverts.
        let q = student_t_quantile(0.975, 5.5).unwrap();
        assert!(q < 2.570_581_836 && q > 2.446_911_851);
        assert!((student_t_cdf(q, 5.5) - 0.975).abs() < 1e-10);
        assert!((student_t_cdf(0.0, 3.0) - 0.5).abs() < 1e-15);
        assert_eq!(student_t_quantile(1.0, 3.0), None);
        assert_eq!(student_t_quantile(0.975, 0.0), None);
    }

    #[test]
    fn welch_interval_by_hand() {
        // Means 3 and 5, variances 2.5 and 2.5, n = 5: se = 1, df = 8, t(0.975, 8) = 2.306004135.
        let w = welch_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 5.0, 6.0, 7.0], 0.95).unwrap();
        assert!((w.low - (2.0 - 2.306_004_135)).abs() < 1e-6, "{w:?}");
        assert!((w.high - (2.0 + 2.306_004_135)).abs() < 1e-6, "{w:?}");
        assert!(!w.excludes_zero());
        // Unequal variances: a = 1..5 (var 2.5), b = 2,4,..,10 (var 10): se² = 0.5 + 2 = 2.5,
        // df = 6.25 / (0.25/4 + 4/4) = 5.882352941.
        let w = welch_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 6.0, 8.0, 10.0], 0.95).unwrap();
        let t = student_t_quantile(0.975, 6.25 / 1.0625).unwrap();
        assert!((w.high - (3.0 + t * 2.5f64.sqrt())).abs() < 1e-9);
        assert!(t > 2.446_911_851 && t < 2.570_581_836);
        // Means 11 and 21, variances 1: se = √(2/3), df = 4, t = 2.776445105.
        let w = welch_interval(&[10.0, 11.0, 12.0], &[20.0, 21.0, 22.0], 0.95).unwrap();
        let half = 2.776_445_105 * (2.0f64 / 3.0).sqrt();
        assert!((w.low - (10.0 - half)).abs() < 1e-6 && (w.high - (10.0 + half)).abs() < 1e-6);
        assert!(w.excludes_zero());
        assert_eq!(welch_interval(&[1.0], &[2.0, 3.0], 0.95), None);
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
        assert_eq!(ch.verdict, Verdict::NoClearChange);
    }

    #[test]
    fn bootstrap_is_reproducible_and_seeded() {
        let a = [1.0, 5.0, 2.0, 8.0, 3.0, 9.0];
        let b = [2.0, 6.0, 4.0, 9.0, 5.0, 7.0];
        let m = Method::default();
        let x = bootstrap_median_difference(&a, &b, &m).unwrap();
        assert_eq!(x, bootstrap_median_difference(&a, &b, &m).unwrap());
        let y = bootstrap_median_difference(&a, &b, &Method { seed: 99, ..m }).unwrap();
        assert_ne!(x, y);
        assert!(x.low <= x.high);
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
