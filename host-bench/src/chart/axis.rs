//! Value axes: nice 1-2-5 ticks, zero-based linear or decade-aligned logarithmic ranges, and
//! SI-scaled labels.

/// A value axis: its range and the values that get a tick, a label and a gridline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    /// Lowest value shown.
    pub min: f64,
    /// Highest value shown.
    pub max: f64,
    /// Distance between ticks (for a logarithmic axis, 0).
    pub step: f64,
    /// Tick values, ascending, from `min` to `max`.
    pub ticks: Vec<f64>,
    /// Logarithmic.
    pub log: bool,
}

/// The "nice" step (1, 2 or 5 × 10ᵏ) that divides `span` into at most `max_ticks` intervals
/// and as many as possible.
pub(crate) fn nice_step(span: f64, max_ticks: usize) -> f64 {
    let span = if span.is_finite() && span > 0.0 { span } else { 1.0 };
    let raw = span / max_ticks.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

impl Axis {
    /// A linear axis over `lo..=hi` that always includes zero (so a bar's length and a
    /// trace's height are proportional to the value, and ±1% noise looks like ±1%), rounded
    /// out to a nice step with at most `max_ticks` intervals. Empty or non-finite data gives
    /// 0 to 1.
    pub(crate) fn zero_based(lo: f64, hi: f64, max_ticks: usize) -> Self {
        let lo = if lo.is_finite() { lo.min(0.0) } else { 0.0 };
        let hi = if hi.is_finite() { hi.max(0.0) } else { 0.0 };
        let hi = if hi <= lo { lo + 1.0 } else { hi };
        let step = nice_step(hi - lo, max_ticks);
        let min = (lo / step + 1e-9).floor() * step;
        let max = (hi / step - 1e-9).ceil() * step;
        let n = ((max - min) / step).round() as usize;
        let ticks = (0..=n).map(|i| clean(min + step * i as f64)).collect();
        Self {
            min: clean(min),
            max: clean(max),
            step,
            ticks,
            log: false,
        }
    }

    /// A logarithmic axis from the decade at or below `lo` to the decade at or above `hi`
    /// (both positive), with ticks at 1, 2 and 5 × 10ᵏ (only 1 × 10ᵏ beyond four decades).
    /// For figures spanning orders of magnitude, such as latency percentiles. Charts using it
    /// say "log scale" in the axis title.
    pub(crate) fn log(lo: f64, hi: f64) -> Self {
        let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1.0 };
        let hi = if hi.is_finite() && hi > lo { hi } else { lo * 10.0 };
        let d0 = lo.log10().floor() as i32;
        let mut d1 = hi.log10().ceil() as i32;
        if d1 <= d0 {
            d1 = d0 + 1;
        }
        let mults: &[f64] = if d1 - d0 > 4 { &[1.0] } else { &[1.0, 2.0, 5.0] };
        let mut ticks = Vec::new();
        for d in d0..d1 {
            for m in mults {
                ticks.push(clean(m * 10f64.powi(d)));
            }
        }
        ticks.push(clean(10f64.powi(d1)));
        Self {
            min: clean(10f64.powi(d0)),
            max: clean(10f64.powi(d1)),
            step: 0.0,
            ticks,
            log: true,
        }
    }

    /// Ends the axis at the data (`lo..=hi`, widened to include zero) rather than at the next
    /// tick, keeping only the ticks inside: for time, where a run of 60.4 s should not draw an
    /// empty 70 s axis. Unchanged if fewer than three ticks would remain.
    #[must_use]
    pub(crate) fn tight(mut self, lo: f64, hi: f64) -> Self {
        if self.log || !lo.is_finite() || !hi.is_finite() || hi <= lo {
            return self;
        }
        let (lo, hi) = (lo.min(0.0), hi.max(0.0));
        let eps = self.step * 1e-9;
        let ticks: Vec<f64> = self
            .ticks
            .iter()
            .copied()
            .filter(|t| *t >= lo - eps && *t <= hi + eps)
            .collect();
        if ticks.len() >= 3 {
            self.ticks = ticks;
            self.min = lo;
            self.max = hi;
        }
        self
    }

    /// Where `v` falls, from 0 (`min`) to 1 (`max`), clamped.
    pub(crate) fn fraction(&self, v: f64) -> f64 {
        let f = if self.log {
            let v = v.max(self.min);
            (v.log10() - self.min.log10()) / (self.max.log10() - self.min.log10())
        } else {
            (v - self.min) / (self.max - self.min)
        };
        if f.is_finite() { f.clamp(0.0, 1.0) } else { 0.0 }
    }

    /// The label of tick `v`: SI-scaled (k, M, G) with as many decimals as the step needs.
    pub(crate) fn label(&self, v: f64) -> String {
        if self.log {
            format_tick(v, v, v)
        } else {
            format_tick(v, self.step, self.max.abs().max(self.min.abs()))
        }
    }
}

/// Rounds away binary noise (0.30000000000000004 → 0.3).
fn clean(v: f64) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let digits = 12 - v.abs().log10().ceil() as i32;
    let p = 10f64.powi(digits.clamp(0, 15));
    (v * p).round() / p
}

pub(crate) fn si(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    }
}

/// A tick label on an axis of `step` whose largest magnitude is `top` (which picks the SI
/// prefix, so all labels of an axis share it): `0`, `250k`, `1.5M`, `0.25`.
pub(crate) fn format_tick(v: f64, step: f64, top: f64) -> String {
    let (_, suffix) = si(top);
    let div = match suffix {
        "G" => 1e9,
        "M" => 1e6,
        "k" => 1e3,
        _ => 1.0,
    };
    let scaled = v / div;
    let s = step / div;
    let decimals = if s >= 1.0 || s <= 0.0 {
        0
    } else {
        (-s.log10() - 1e-9).ceil() as usize
    };
    if v == 0.0 {
        return "0".into();
    }
    format!("{scaled:.decimals$}{suffix}")
}

/// A value with three significant digits, SI-scaled: `512k`, `1.23M`, `405`, `12.5`, `0.0314`.
pub fn format_value(v: f64) -> String {
    format_significant(v, 3)
}

/// A value with `digits` significant digits (at least), SI-scaled.
pub(crate) fn format_significant(v: f64, digits: i32) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let (scaled, suffix) = si(v);
    let a = scaled.abs();
    let decimals = |a: f64| {
        if a == 0.0 {
            0
        } else {
            (digits - 1 - a.log10().floor() as i32).max(0) as usize
        }
    };
    // Rounding may carry into the next power of ten (9.996 → 10.00): count digits again.
    let d = decimals(a);
    let rounded = format!("{a:.d$}").parse::<f64>().unwrap_or(a);
    let d = decimals(rounded).min(d);
    format!("{scaled:.d$}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(100.0, 5), 20.0);
        assert_eq!(nice_step(430.0, 5), 100.0);
        assert_eq!(nice_step(1.0, 4), 0.5);
        assert_eq!(nice_step(0.07, 5), 0.02);
        assert_eq!(nice_step(512_000.0, 6), 100_000.0);
        assert_eq!(nice_step(0.0, 5), 0.2, "an empty span gets 0 to 1");
        for span in [0.003, 1.7, 9.99, 42.0, 999.0, 12_345.0, 7.5e6] {
            let s = nice_step(span, 6);
            let m = s / 10f64.powf(s.log10().floor());
            assert!([1.0, 2.0, 5.0].iter().any(|x| (m - x).abs() < 1e-9), "{span}: {s}");
            assert!(span / s <= 6.0 + 1e-9 && span / s > 1.0, "{span}: {s}");
        }
    }

    #[test]
    fn linear_axes_start_at_zero_and_cover_the_data() {
        // A power trace between 396 and 404 W: the axis starts at 0, so ±1% stays ±1%.
        let a = Axis::zero_based(396.0, 404.0, 5);
        assert_eq!((a.min, a.max, a.step), (0.0, 500.0, 100.0));
        assert_eq!(a.ticks, vec![0.0, 100.0, 200.0, 300.0, 400.0, 500.0]);
        assert!((a.fraction(404.0) - a.fraction(396.0)) < 0.02);
        let a = Axis::zero_based(0.0, 0.3, 5);
        assert_eq!(a.ticks, vec![0.0, 0.1, 0.2, 0.3], "no binary noise in ticks");
        let a = Axis::zero_based(-12.0, 30.0, 5);
        assert_eq!((a.min, a.max), (-20.0, 30.0));
        assert!(a.ticks.contains(&0.0));
        let a = Axis::zero_based(f64::INFINITY, f64::NEG_INFINITY, 5);
        assert_eq!((a.min, a.max), (0.0, 1.0));
        assert!(a.ticks.len() >= 3);
        let t = Axis::zero_based(0.0, 60.4, 6).tight(0.0, 60.4);
        assert_eq!((t.max, t.ticks.last()), (60.4, Some(&60.0)));
        // Exactly on a step: not rounded past it.
        assert_eq!(Axis::zero_based(0.0, 400.0, 4).max, 400.0);
    }

    #[test]
    fn log_axes_span_whole_decades_with_one_two_five_ticks() {
        let a = Axis::log(48.0, 2300.0);
        assert_eq!((a.min, a.max), (10.0, 10_000.0));
        assert_eq!(&a.ticks[..4], &[10.0, 20.0, 50.0, 100.0]);
        assert_eq!(a.ticks.last(), Some(&10_000.0));
        assert!((a.fraction(100.0) - 1.0 / 3.0).abs() < 1e-9);
        let wide = Axis::log(0.5, 2e6);
        assert_eq!(wide.ticks, vec![0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e7]);
        assert_eq!(Axis::log(100.0, 100.0).ticks.len(), 4);
    }

    #[test]
    fn tick_labels_carry_si_prefixes_and_the_decimals_the_step_needs() {
        assert_eq!(format_tick(0.0, 100_000.0, 500_000.0), "0");
        assert_eq!(format_tick(200_000.0, 100_000.0, 500_000.0), "200k");
        assert_eq!(format_tick(1_500_000.0, 500_000.0, 2e6), "1.5M");
        assert_eq!(format_tick(0.25, 0.05, 0.3), "0.25");
        assert_eq!(format_tick(400.0, 100.0, 500.0), "400");
        assert_eq!(format_tick(2.5e9, 5e8, 3e9), "2.5G");
        let a = Axis::zero_based(0.0, 0.9, 5);
        assert_eq!(a.label(0.6), "0.6");
        // One prefix per axis: 5k next to 10k, not 5000.
        let a = Axis::zero_based(0.0, 19_000.0, 4);
        let labels: Vec<String> = a.ticks.iter().map(|t| a.label(*t)).collect();
        assert_eq!(labels, ["0", "5k", "10k", "15k", "20k"]);
        assert_eq!(format_value(512_345.0), "512k");
        assert_eq!(format_value(1_234_567.0), "1.23M");
        assert_eq!(format_value(405.2), "405");
        assert_eq!(format_value(12.54), "12.5");
        assert_eq!(format_value(0.03142), "0.0314");
        assert_eq!(format_value(9.996), "10.0");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_significant(460.8, 4), "460.8");
        assert_eq!(format_value(f64::NAN), "-");
    }
}
