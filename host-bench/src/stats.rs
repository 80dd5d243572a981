//! Descriptive statistics used across benchmarks: summaries, medians, coefficients of
//! variation, and the SNIA steady-state test.

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

/// The median (mean of the middle two for an even count); `None` when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    })
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
}
