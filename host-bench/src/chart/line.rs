//! Line charts of traces over time, zero-based on both axes.

use super::axis::Axis;
use super::{FONT, LegendEntry, Mark, PALETTE, Plot, WIDTH, esc, legend, text_w};
use std::fmt::Write;

/// One trace: (x, y) points in x order.
#[derive(Debug, Clone, PartialEq)]
pub struct LineSeries {
    /// Legend label.
    pub name: String,
    /// Colour.
    pub color: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

impl LineSeries {
    /// A trace with the `index`th palette colour.
    pub fn new(name: impl Into<String>, index: usize, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            color: PALETTE[index % PALETTE.len()].into(),
            points,
        }
    }
}

/// Traces over time (or any x), both axes zero-based with nice ticks, gridlines and units;
/// a legend when there is more than one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    title: String,
    x_title: String,
    y_title: String,
    series: Vec<LineSeries>,
    y_max: Option<f64>,
    height: f64,
}

impl LineChart {
    /// A chart; the titles name quantity and unit (`time (s)`, `power (W)`).
    pub fn new(title: impl Into<String>, x_title: impl Into<String>, y_title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            x_title: x_title.into(),
            y_title: y_title.into(),
            series: Vec::new(),
            y_max: None,
            height: 220.0,
        }
    }

    /// Adds a trace.
    #[must_use]
    pub fn series(mut self, s: LineSeries) -> Self {
        self.series.push(s);
        self
    }

    /// Extends the value axis to at least `v` (so traces share a scale with a bar chart).
    #[must_use]
    pub fn y_at_least(mut self, v: f64) -> Self {
        self.y_max = Some(v);
        self
    }

    /// The plot's height (default 220).
    #[must_use]
    pub fn plot_height(mut self, h: f64) -> Self {
        self.height = h;
        self
    }

    /// The SVG.
    pub fn render(&self) -> String {
        let pts = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter())
                .filter(|p| p.0.is_finite() && p.1.is_finite())
        };
        let x_hi = pts().map(|p| p.0).fold(0.0, f64::max);
        let x_lo = pts().map(|p| p.0).fold(0.0, f64::min);
        let y_hi = pts().map(|p| p.1).fold(self.y_max.unwrap_or(0.0), f64::max);
        let y_lo = pts().map(|p| p.1).fold(0.0, f64::min);
        let y_axis = Axis::zero_based(y_lo, y_hi, 5);
        let tick_w = y_axis
            .ticks
            .iter()
            .map(|t| text_w(&y_axis.label(*t), FONT))
            .fold(0.0, f64::max);
        let plot_x = 24.0 + tick_w + 8.0;
        let plot_w = WIDTH - plot_x - 16.0;
        let x_axis = Axis::zero_based(x_lo, x_hi, ((plot_w / 70.0) as usize).clamp(3, 10)).tight(x_lo, x_hi);
        let entries: Vec<LegendEntry> = if self.series.len() > 1 {
            self.series
                .iter()
                .map(|s| LegendEntry::new(&s.name, &s.color, Mark::Line))
                .collect()
        } else {
            Vec::new()
        };
        let mut legend_svg = String::new();
        let legend_h = legend(&mut legend_svg, &entries, 0.0, 26.0, WIDTH);
        let plot_y = 30.0 + legend_h + 6.0;
        let plot_h = self.height;
        let xp = |v: f64| plot_x + x_axis.fraction(v) * plot_w;
        let yp = |v: f64| plot_y + plot_h - y_axis.fraction(v) * plot_h;

        let plot = Plot {
            x: plot_x,
            y: plot_y,
            w: plot_w,
            h: plot_h,
        };
        let mut s = plot.start(&self.title, &legend_svg, &y_axis, yp);
        plot.x_grid(&mut s, x_axis.ticks.iter().map(|t| (xp(*t), x_axis.label(*t))));
        plot.frame(&mut s, &self.x_title, &self.y_title);
        for ser in &self.series {
            let points: Vec<String> = ser
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|(x, y)| format!("{:.1},{:.1}", xp(*x), yp(*y)))
                .collect();
            if points.is_empty() {
                continue;
            }
            let _ = write!(
                s,
                "<polyline class=\"trace\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" stroke-linejoin=\"round\"><title>{}</title></polyline>",
                points.join(" "),
                esc(&ser.color),
                esc(&ser.name)
            );
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &str, pat: &str) -> usize {
        s.matches(pat).count()
    }
    #[test]
    fn line_charts_are_zero_based_on_both_axes_and_can_share_a_bar_charts_scale() {
        let trace: Vec<(f64, f64)> = (0..=60)
            .map(|i| (f64::from(i), 400.0 + f64::from(i % 3) * 4.0))
            .collect();
        let svg = LineChart::new("Power", "time (s)", "power (W)")
            .series(LineSeries::new("randread", 0, trace.clone()))
            .render();
        assert!(count(&svg, "class=\"tick\"") >= 6);
        assert!(svg.contains(">0</text>") && svg.contains(">60</text>") && svg.contains(">400</text>"));
        // The time axis ends at the data (60 s), not at a further tick.
        assert!(!svg.contains(">70</text>"));
        assert!(svg.contains("time (s)") && svg.contains("power (W)"));
        assert!(!svg.contains("class=\"legend\""));
        let shared = LineChart::new("Power", "time (s)", "power (W)")
            .series(LineSeries::new("a", 0, trace.clone()))
            .series(LineSeries::new("b", 1, trace))
            .y_at_least(600.0)
            .render();
        assert!(shared.contains(">600</text>") && shared.contains("class=\"legend\""));
    }
}
