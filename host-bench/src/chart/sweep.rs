//! Curves over a thread-count sweep: the thread count on a log2 axis (a doubling sweep is
//! evenly spaced), the value on a zero-based or logarithmic axis, a marker per point (hollow
//! where the point is flagged, e.g. cache-affected), its interval as a whisker, each curve's
//! peak as a triangle and its plateau as a translucent band at the sustained level.

use super::axis::{Axis, format_value};
use super::{FONT, LegendEntry, Mark, PALETTE, Plot, WIDTH, esc, legend, text_w};
use std::fmt::Write;

/// One point of a curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPoint {
    /// The thread count.
    pub x: u32,
    /// The value.
    pub y: f64,
    /// Its interval, drawn as a whisker.
    pub interval: Option<(f64, f64)>,
    /// Drawn hollow.
    pub hollow: bool,
}

/// One curve.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSeries {
    /// Legend label.
    pub name: String,
    /// Colour.
    pub color: String,
    /// SVG `stroke-dasharray` (`None`: solid).
    pub dash: Option<&'static str>,
    /// Points in thread order.
    pub points: Vec<SweepPoint>,
    /// Its peak: thread count and value.
    pub peak: Option<(u32, f64)>,
    /// Its plateau: first and last thread count, and the level.
    pub plateau: Option<(u32, u32, f64)>,
}

impl SweepSeries {
    /// A curve with the `index`th palette colour.
    pub fn new(name: impl Into<String>, index: usize, points: Vec<SweepPoint>) -> Self {
        Self {
            name: name.into(),
            color: PALETTE[index % PALETTE.len()].into(),
            dash: None,
            points,
            peak: None,
            plateau: None,
        }
    }

    /// Dashed with `dash`.
    #[must_use]
    pub fn dash(mut self, dash: &'static str) -> Self {
        self.dash = Some(dash);
        self
    }

    /// With its peak and plateau marked.
    #[must_use]
    pub fn marks(mut self, peak: Option<(u32, f64)>, plateau: Option<(u32, u32, f64)>) -> Self {
        self.peak = peak;
        self.plateau = plateau;
        self
    }
}

/// Curves against the thread count.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepChart {
    title: String,
    y_title: String,
    series: Vec<SweepSeries>,
    log: bool,
    extra_legend: Vec<LegendEntry>,
}

impl SweepChart {
    /// A chart; `y_title` names the quantity and unit (`bandwidth (GB/s)`).
    pub fn new(title: impl Into<String>, y_title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            y_title: y_title.into(),
            series: Vec::new(),
            log: false,
            extra_legend: Vec::new(),
        }
    }

    /// Adds a curve.
    #[must_use]
    pub fn series(mut self, s: SweepSeries) -> Self {
        self.series.push(s);
        self
    }

    /// A logarithmic value axis (its title says so), for rates spanning orders of magnitude.
    #[must_use]
    pub fn log_scale(mut self) -> Self {
        self.log = true;
        self
    }

    /// Legend entries beyond the curves' own (what hollow markers, whiskers and bands mean).
    #[must_use]
    pub fn legend(mut self, entries: Vec<LegendEntry>) -> Self {
        self.extra_legend = entries;
        self
    }

    /// The SVG.
    pub fn render(&self) -> String {
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let ys: Vec<f64> = points()
            .flat_map(|p| [Some(p.y), p.interval.map(|i| i.0), p.interval.map(|i| i.1)])
            .flatten()
            .filter(|v| v.is_finite() && (!self.log || *v > 0.0))
            .collect();
        let (lo, hi) = (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let axis = if self.log {
            Axis::log(lo, hi)
        } else {
            Axis::zero_based(lo, hi, 5)
        };
        let mut xs: Vec<u32> = points().map(|p| p.x).filter(|x| *x > 0).collect();
        xs.sort_unstable();
        xs.dedup();
        let (x_lo, x_hi) = (
            f64::from(xs.first().copied().unwrap_or(1)).log2(),
            f64::from(xs.last().copied().unwrap_or(1)).log2(),
        );
        let tick_w = axis
            .ticks
            .iter()
            .map(|t| text_w(&axis.label(*t), FONT))
            .fold(0.0, f64::max);
        let plot_x = 24.0 + tick_w + 8.0;
        let plot_w = WIDTH - plot_x - 24.0;
        let mut entries: Vec<LegendEntry> = self
            .series
            .iter()
            .map(|s| LegendEntry::new(&s.name, &s.color, s.dash.map_or(Mark::Line, Mark::Pattern)))
            .collect();
        entries.extend(self.extra_legend.iter().cloned());
        let mut legend_svg = String::new();
        let legend_h = legend(&mut legend_svg, &entries, 0.0, 26.0, WIDTH);
        let plot_y = 30.0 + legend_h + 10.0;
        let plot_h = 240.0;
        let xp = |x: u32| {
            let f = if x_hi > x_lo {
                (f64::from(x.max(1)).log2() - x_lo) / (x_hi - x_lo)
            } else {
                0.5
            };
            plot_x + 10.0 + f * (plot_w - 20.0)
        };
        let yp = |v: f64| plot_y + plot_h - axis.fraction(v) * plot_h;

        let plot = Plot {
            x: plot_x,
            y: plot_y,
            w: plot_w,
            h: plot_h,
        };
        let mut s = plot.start(&self.title, &legend_svg, &axis, yp);
        plot.x_grid(&mut s, xs.iter().map(|x| (xp(*x), x.to_string())));
        let y_title = if self.log {
            format!("{} — log scale", self.y_title)
        } else {
            self.y_title.clone()
        };
        plot.frame(&mut s, "threads, all clients (log2 scale)", &y_title);
        let drawn = |v: f64| v.is_finite() && (!self.log || v > 0.0);
        for ser in &self.series {
            let c = esc(&ser.color);
            if let Some((from, to, level)) = ser.plateau.filter(|p| drawn(p.2)) {
                let (x1, x2, y) = (xp(from) - 6.0, xp(to) + 6.0, yp(level));
                let _ = write!(
                    s,
                    "<line class=\"plateau\" x1=\"{x1:.1}\" y1=\"{y:.1}\" x2=\"{x2:.1}\" y2=\"{y:.1}\" stroke=\"{c}\" \
                     stroke-width=\"9\" stroke-opacity=\"0.22\" stroke-linecap=\"round\"><title>{}: plateau from {from} \
                     threads, sustained {}</title></line>",
                    esc(&ser.name),
                    format_value(level)
                );
            }
            let line: Vec<String> = ser
                .points
                .iter()
                .filter(|p| drawn(p.y))
                .map(|p| format!("{:.1},{:.1}", xp(p.x), yp(p.y)))
                .collect();
            if !line.is_empty() {
                let dash = ser
                    .dash
                    .map(|d| format!(" stroke-dasharray=\"{d}\""))
                    .unwrap_or_default();
                let _ = write!(
                    s,
                    "<polyline class=\"curve\" points=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.8\"{dash}/>",
                    line.join(" ")
                );
            }
            for p in ser.points.iter().filter(|p| drawn(p.y)) {
                let (px, py) = (xp(p.x), yp(p.y));
                if let Some((a, b)) = p.interval.filter(|i| drawn(i.0) && drawn(i.1)) {
                    let (ya, yb) = (yp(a), yp(b));
                    let _ = write!(
                        s,
                        "<path class=\"whisker\" d=\"M{px:.1} {ya:.1}V{yb:.1}M{l:.1} {ya:.1}h6M{l:.1} {yb:.1}h6\" stroke=\"{c}\" fill=\"none\"/>",
                        l = px - 3.0
                    );
                }
                let fill = if p.hollow { "#ffffff" } else { c.as_str() };
                let _ = write!(
                    s,
                    "<circle class=\"point{}\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"3.5\" fill=\"{fill}\" stroke=\"{c}\" \
                     stroke-width=\"1.5\"><title>{}: {} at {} threads</title></circle>",
                    if p.hollow { " hollow" } else { "" },
                    esc(&ser.name),
                    format_value(p.y),
                    p.x
                );
            }
            if let Some((x, v)) = ser.peak.filter(|p| drawn(p.1)) {
                // Above the point's whisker, if it has one.
                let top = ser
                    .points
                    .iter()
                    .find(|p| p.x == x)
                    .and_then(|p| p.interval)
                    .map_or(v, |(_, hi)| hi.max(v));
                let (px, py) = (xp(x), yp(top) - 5.0);
                let _ = write!(
                    s,
                    "<path class=\"peak\" d=\"M{px:.1} {py:.1}l-5 -8h10z\" fill=\"{c}\"><title>{}: peak {} at {x} threads</title></path>",
                    esc(&ser.name),
                    format_value(v)
                );
            }
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(values: &[f64]) -> Vec<SweepPoint> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| SweepPoint {
                x: 1 << i,
                y: *v,
                interval: Some((v * 0.9, v * 1.1)),
                hollow: i < 2,
            })
            .collect()
    }

    #[test]
    fn a_sweep_chart_marks_points_peaks_plateaus_and_says_its_scales() {
        let svg = SweepChart::new("N-to-N sequential", "bandwidth (GB/s)")
            .series(
                SweepSeries::new("write", 0, points(&[1.0, 2.0, 3.9, 4.0])).marks(Some((8, 4.0)), Some((4, 8, 3.9))),
            )
            .series(SweepSeries::new("read", 1, points(&[1.5, 3.0, 5.0, 5.1])).dash("6 3"))
            .render();
        assert_eq!(svg.matches("class=\"point").count(), 8);
        assert_eq!(svg.matches("class=\"point hollow\"").count(), 4);
        assert_eq!(svg.matches("class=\"whisker\"").count(), 8);
        assert_eq!(svg.matches("class=\"peak\"").count(), 1);
        assert_eq!(svg.matches("class=\"plateau\"").count(), 1);
        assert!(svg.contains("stroke-dasharray=\"6 3\""));
        for x in [">1</text>", ">2</text>", ">4</text>", ">8</text>"] {
            assert!(svg.contains(x), "{x}");
        }
        assert!(svg.contains("threads, all clients (log2 scale)") && !svg.contains("— log scale"));
        let log = SweepChart::new("Metadata", "rate (op/s)")
            .series(SweepSeries::new("stat", 0, points(&[1e3, 1e5, 1e6])))
            .log_scale()
            .render();
        assert!(
            log.contains("rate (op/s) — log scale") && log.contains(">1M</text>"),
            "{log}"
        );
        // The four doubling steps are evenly spaced.
        let xs: Vec<f64> = svg
            .match_indices("class=\"point")
            .take(4)
            .map(|(i, _)| {
                let rest = &svg[i..];
                let at = rest.find("cx=\"").unwrap() + 4;
                rest[at..at + rest[at..].find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(((xs[1] - xs[0]) - (xs[3] - xs[2])).abs() < 0.2, "{xs:?}");
    }
}
