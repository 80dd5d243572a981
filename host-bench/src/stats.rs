//! Every statistic rftune computes, in one place: summaries, medians, coefficients of variation
//! and the SNIA steady-state test for benchmark repeats; and for comparing samples, percentile
//! bootstrap intervals (seeded, reproducible) and Welch's t interval with Student's t quantiles.
//! The numerical core is checked against reference values from published t tables and SciPy.

use serde::{Deserialize, Serialize};

/// n, min, max, mean and sample standard deviation of a series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub stddev: f64,
}

/// Summarises `xs`; `None` when empty.
pub fn summary(xs: &[f64]) -> Option<Summary> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    Some(Summary {
        n,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean,
        stddev: var.sqrt(),
    })
}

/// The median of the finite values (mean of the middle two for an even count); `None` when
/// there are none.
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(median_sorted(&v))
}

/// The median of sorted, non-empty values.
fn median_sorted(v: &[f64]) -> f64 {
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

/// Coefficient of variation σ/mean; `None` for fewer than two values or a zero mean.
pub fn cv(xs: &[f64]) -> Option<f64> {
    let s = summary(xs)?;
    (s.n > 1 && s.mean != 0.0).then(|| s.stddev / s.mean.abs())
}

/// Least-squares slope of `ys` against their index.
pub fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return 0.0;
    }
    let mx = (n - 1.0) / 2.0;
    let my = ys.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - mx;
        num += dx * (y - my);
        den += dx * dx;
    }
    num / den
}

/// The SNIA PTS steady-state verdict over the last five rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// Both criteria hold.
    pub reached: bool,
    /// Mean of the window.
    pub average: f64,
    /// (max − min) / average over the window; must be ≤ 0.20.
    pub range_fraction: f64,
    /// |slope| × (window − 1) / average: how far the fitted line moves across the window;
    /// must be ≤ 0.10.
    pub slope_fraction: f64,
}

/// Rounds in the steady-state window (SNIA PTS).
pub const STEADY_WINDOW: usize = 5;

/// Applies SNIA's steady-state test to the last [`STEADY_WINDOW`] values of `rounds`; `None`
/// until there are that many.
pub fn steady_state(rounds: &[f64]) -> Option<SteadyState> {
    let window = rounds.get(rounds.len().checked_sub(STEADY_WINDOW)?..)?;
    let s = summary(window)?;
    if s.mean <= 0.0 {
        return Some(SteadyState {
            reached: false,
            average: s.mean,
            range_fraction: f64::INFINITY,
            slope_fraction: f64::INFINITY,
        });
    }
    let range_fraction = (s.max - s.min) / s.mean;
    let slope_fraction = slope(window).abs() * (STEADY_WINDOW - 1) as f64 / s.mean;
    Some(SteadyState {
        reached: range_fraction <= 0.20 && slope_fraction <= 0.10,
        average: s.mean,
        range_fraction,
        slope_fraction,
    })
}

/// A small seeded pseudo-random generator (SplitMix64, Steele et al. 2014): the same seed gives
/// the same sequence on every platform and Rust version, which an experiment's randomised order
/// and the bootstrap need so that resuming an experiment or rebuilding its report reproduces
/// earlier results exactly. Not for anything secret.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (`0` when `n` is 0), without modulo bias worth noticing:
    /// Lemire's multiply-shift on 64 bits.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
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

/// How intervals are computed: bootstrap resamples and seed, and the confidence level of every
/// interval.
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
    median_sorted(buf)
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
/// on the distribution function to 1e-12; `None` outside that domain.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_median_and_cv_match_hand_values() {
        let s = summary(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.n, s.min, s.max, s.mean), (8, 2.0, 9.0, 5.0));
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(cv(&[1.0]), None);
        assert!((cv(&[9.0, 11.0]).unwrap() - 2f64.sqrt() / 10.0).abs() < 1e-12);
        assert!(summary(&[]).is_none());
    }

    #[test]
    fn steady_state_needs_five_flat_rounds() {
        assert!(steady_state(&[1.0, 1.0, 1.0, 1.0]).is_none());
        assert!(
            steady_state(&[500.0, 100.0, 101.0, 99.0, 100.0, 100.0])
                .unwrap()
                .reached
        );
        // Range 30% of the average: not steady.
        assert!(!steady_state(&[85.0, 100.0, 115.0, 100.0, 100.0]).unwrap().reached);
        // Range within 20% but a steady climb: the slope criterion fails.
        let climbing = steady_state(&[90.0, 94.0, 98.0, 102.0, 106.0]).unwrap();
        assert!(climbing.range_fraction <= 0.20 && !climbing.reached, "{climbing:?}");
        assert!((slope(&[1.0, 3.0, 5.0]) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn medians_skip_values_that_are_not_finite() {
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
        assert_eq!(median(&[f64::INFINITY, 1.0, 3.0]), Some(2.0));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // Reference values of SplitMix64 seeded with 1234567 (from the algorithm's C code).
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SplitMix64::new(7);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let i = r.below(5);
            assert!(i < 5);
            seen[i] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(r.below(0), 0);
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
    fn t_distribution_matches_scipy() {
        // scipy.stats.t.ppf(p, df) (SciPy 1.17), fractional and extreme df included.
        for (p, df, want) in [
            (0.975, 2.0, 4.302_652_729_749),
            (0.975, 3.0, 3.182_446_305_284),
            (0.975, 10.0, 2.228_138_851_986),
            (0.975, 100.0, 1.983_971_518_524),
            (0.975, 5.5, 2.501_858_617_589),
            (0.975, 2.5, 3.574_654_842_004),
            (0.975, 0.5, 164.557_673_480_488),
            (0.95, 3.0, 2.353_363_434_802),
            (0.995, 7.0, 3.499_483_297_350),
            (0.9, 12.25, 1.354_608_187_664),
        ] {
            let q = student_t_quantile(p, df).unwrap();
            assert!(
                (q - want).abs() < 1e-9 * want.max(1.0),
                "t({p}, {df}) = {q}, SciPy {want}"
            );
        }
        // scipy.stats.t.cdf(t, df).
        for (t, df, want) in [
            (1.0, 3.0, 0.804_498_890_522_115),
            (2.0, 5.5, 0.951_622_804_884_408),
            (-1.5, 7.0, 0.088_649_243_494_985),
            (0.3, 1.0, 0.592_773_579_077_742),
        ] {
            let c = student_t_cdf(t, df);
            assert!((c - want).abs() < 1e-12, "cdf({t}, {df}) = {c}, SciPy {want}");
        }
        // scipy.special.gammaln and betainc, the functions underneath.
        for (x, want) in [
            (0.1, 2.252_712_651_734_206),
            (0.5, 0.572_364_942_924_700),
            (1.0, 0.0),
            (2.5, 0.284_682_870_472_919),
            (10.0, 12.801_827_480_081_469),
            (171.5, 709.143_163_030_928_3),
        ] {
            assert!(
                (ln_gamma(x) - want).abs() < 1e-12 * want.max(1.0),
                "ln Γ({x}) = {}",
                ln_gamma(x)
            );
        }
        for (a, b, x, want) in [
            (2.5, 0.5, 0.3, 0.018_927_124_071_946),
            (0.5, 0.5, 0.9, 0.795_167_235_300_867),
            (10.0, 3.0, 0.7, 0.252_815_347_855_000),
        ] {
            let got = incomplete_beta(a, b, x);
            assert!((got - want).abs() < 1e-12, "I_{x}({a}, {b}) = {got}, SciPy {want}");
        }
    }

    #[test]
    fn welch_interval_by_hand() {
        // Means 3 and 5, variances 2.5 and 2.5, n = 5: se = 1, df = 8, t(0.975, 8) = 2.306004135.
        let w = welch_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 5.0, 6.0, 7.0], 0.95).unwrap();
        assert!((w.low - (2.0 - 2.306_004_135)).abs() < 1e-6, "{w:?}");
        assert!((w.high - (2.0 + 2.306_004_135)).abs() < 1e-6, "{w:?}");
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
        assert_eq!(welch_interval(&[1.0], &[2.0, 3.0], 0.95), None);
    }

    #[test]
    fn welch_interval_matches_scipy() {
        // scipy.stats.ttest_ind(other, base, equal_var=False).confidence_interval(level).
        for (base, other, level, low, high) in [
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0][..],
                &[2.0, 4.0, 6.0, 8.0, 10.0][..],
                0.95,
                -0.887_741_643_736_975,
                6.887_741_643_736_975,
            ),
            (
                &[101.2, 99.8, 100.5, 98.9, 100.1, 99.5][..],
                &[103.0, 104.9, 102.2, 105.5][..],
                0.90,
                2.111_047_651_040_031,
                5.688_952_348_959_98,
            ),
        ] {
            let w = welch_interval(base, other, level).unwrap();
            assert!(
                (w.low - low).abs() < 1e-9 && (w.high - high).abs() < 1e-9,
                "{w:?}, SciPy [{low}, {high}]"
            );
        }
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        // numpy.quantile (its default "linear" method is R's type 7).
        let mut x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        x.sort_by(f64::total_cmp);
        for (q, want) in [(0.025, 1.0), (0.1, 1.0), (0.5, 3.5), (0.975, 8.475)] {
            assert!((quantile_sorted(&x, q) - want).abs() < 1e-12, "q {q}");
        }
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
        // Every resampled median lies within the sample's range, and so does the interval.
        let i = bootstrap_median(&a, &m).unwrap();
        assert!(i.low >= 1.0 && i.high <= 9.0 && i.low <= i.high, "{i:?}");
        assert_eq!(bootstrap_median(&[1.0], &m), None);
    }
}
