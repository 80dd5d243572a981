//! Horizontal bar charts (dots on a logarithmic axis), with whiskers, reference lines, notes
//! and legends.

use super::axis::{Axis, format_significant, format_value};
use super::{FONT, LegendEntry, Mark, PALETTE, WIDTH, esc, fit, legend, open_svg, text_w};
use std::fmt::Write;

/// One series of a bar chart: a value per category (absent values draw nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    /// Legend label.
    pub name: String,
    /// Colour of its bars.
    pub color: String,
    /// Per category.
    pub values: Vec<Option<f64>>,
    /// Per category: an interval drawn as a whisker (e.g. min–max of repeats).
    pub whiskers: Vec<Option<(f64, f64)>>,
    /// Per category: a colour overriding the series colour (e.g. by verdict).
    pub fills: Vec<Option<String>>,
}

impl BarSeries {
    /// A series with the `index`th palette colour.
    pub fn new(name: impl Into<String>, index: usize, values: Vec<Option<f64>>) -> Self {
        Self {
            name: name.into(),
            color: PALETTE[index % PALETTE.len()].into(),
            values,
            whiskers: Vec::new(),
            fills: Vec::new(),
        }
    }

    /// With whiskers, per category.
    #[must_use]
    pub fn whiskers(mut self, whiskers: Vec<Option<(f64, f64)>>) -> Self {
        self.whiskers = whiskers;
        self
    }

    /// With per-category colours.
    #[must_use]
    pub fn fills(mut self, fills: Vec<Option<String>>) -> Self {
        self.fills = fills;
        self
    }
}

/// Horizontal bars: a row per category, a bar per series in it, on a zero-based (or
/// logarithmic) value axis along the bottom with ticks, gridlines and the unit.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    title: String,
    axis_title: String,
    categories: Vec<String>,
    series: Vec<BarSeries>,
    refs: Vec<(String, f64)>,
    notes: Vec<String>,
    log: bool,
    extra_legend: Vec<LegendEntry>,
}

impl BarChart {
    /// A chart of `categories`; `axis_title` names the quantity and unit (`IOPS (IO/s)`).
    pub fn new(title: impl Into<String>, axis_title: impl Into<String>, categories: Vec<String>) -> Self {
        Self {
            title: title.into(),
            axis_title: axis_title.into(),
            categories,
            series: Vec::new(),
            refs: Vec::new(),
            notes: Vec::new(),
            log: false,
            extra_legend: Vec::new(),
        }
    }

    /// Adds a series (more than one gets a legend).
    #[must_use]
    pub fn series(mut self, s: BarSeries) -> Self {
        self.series.push(s);
        self
    }

    /// Adds a dashed reference line (named in the legend with its value).
    #[must_use]
    pub fn reference(mut self, name: impl Into<String>, value: f64) -> Self {
        self.refs.push((name.into(), value));
        self
    }

    /// A note right of each category's row (e.g. the change against a baseline).
    #[must_use]
    pub fn notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    /// A logarithmic value axis (its title says so).
    #[must_use]
    pub fn log_scale(mut self) -> Self {
        self.log = true;
        self
    }

    /// Legend entries beyond the series' own (what colours or whiskers mean).
    #[must_use]
    pub fn legend(mut self, entries: Vec<LegendEntry>) -> Self {
        self.extra_legend = entries;
        self
    }

    /// The SVG.
    pub fn render(&self) -> String {
        let values = || {
            self.series.iter().flat_map(|s| {
                s.values
                    .iter()
                    .flatten()
                    .copied()
                    .chain(s.whiskers.iter().flatten().flat_map(|(a, b)| [*a, *b]))
            })
        };
        let all: Vec<f64> = values()
            .chain(self.refs.iter().map(|r| r.1))
            .filter(|v| v.is_finite())
            .collect();
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let label_w = self
            .categories
            .iter()
            .map(|c| text_w(c, FONT))
            .fold(40.0, f64::max)
            .min(200.0)
            + 10.0;
        let note_w = self
            .notes
            .iter()
            .map(|n| text_w(n, FONT))
            .fold(0.0, f64::max)
            .min(230.0);
        let right = if note_w > 0.0 { note_w + 20.0 } else { 56.0 };
        let plot_x = label_w;
        let plot_w = WIDTH - plot_x - right;
        let axis = if self.log {
            let pos: Vec<f64> = all.iter().copied().filter(|v| *v > 0.0).collect();
            Axis::log(
                pos.iter().copied().fold(f64::INFINITY, f64::min),
                pos.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        } else {
            Axis::zero_based(lo, hi, 5)
        };
        let x_of = |v: f64| plot_x + axis.fraction(v) * plot_w;

        let mut entries: Vec<LegendEntry> = Vec::new();
        if self.series.len() > 1 {
            entries.extend(
                self.series
                    .iter()
                    .map(|s| LegendEntry::new(&s.name, &s.color, if self.log { Mark::Dot } else { Mark::Swatch })),
            );
        }
        entries.extend(self.extra_legend.iter().cloned());
        for (i, (name, v)) in self.refs.iter().enumerate() {
            entries.push(LegendEntry::new(
                format!("{name}: {}", format_significant(*v, 4)),
                ref_color(i),
                Mark::Dashed,
            ));
        }
        let mut legend_svg = String::new();
        let legend_h = legend(&mut legend_svg, &entries, 0.0, 26.0, WIDTH);

        let n_series = self.series.len().max(1) as f64;
        let bar_h = if self.series.len() > 1 { 14.0 } else { 18.0 };
        let row = bar_h * n_series + 10.0;
        let plot_y = 30.0 + legend_h + 4.0;
        let plot_h = row * self.categories.len().max(1) as f64;
        let h = plot_y + plot_h + 44.0;

        let mut s = String::new();
        open_svg(&mut s, &self.title, h);
        s.push_str(&legend_svg);
        // Gridlines and tick labels.
        for t in &axis.ticks {
            let x = x_of(*t);
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{plot_y:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#e3e3e3\"/>\
                 <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
                plot_y + plot_h + 4.0,
                plot_y + plot_h + 18.0,
                esc(&axis.label(*t))
            );
        }
        let axis_title = if self.log {
            format!("{} — log scale", self.axis_title)
        } else {
            self.axis_title.clone()
        };
        let _ = write!(
            s,
            "<line x1=\"{plot_x:.1}\" y1=\"{plot_y:.1}\" x2=\"{plot_x:.1}\" y2=\"{b:.1}\" stroke=\"#555\"/>\
             <line x1=\"{plot_x:.1}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"#555\"/>\
             <text class=\"axis-title\" x=\"{c:.1}\" y=\"{ty:.1}\" text-anchor=\"middle\" fill=\"#222\">{t}</text>",
            b = plot_y + plot_h,
            r = plot_x + plot_w,
            c = plot_x + plot_w / 2.0,
            ty = plot_y + plot_h + 36.0,
            t = esc(&axis_title)
        );
        let base = if self.log { axis.min } else { 0.0 };
        for (ci, cat) in self.categories.iter().enumerate() {
            let y0 = plot_y + row * ci as f64 + 5.0;
            let shown = fit(cat, label_w - 10.0);
            let _ = write!(
                s,
                "<text class=\"category\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}{}</text>",
                plot_x - 6.0,
                y0 + (row - 10.0) / 2.0 + 4.0,
                if shown == *cat {
                    String::new()
                } else {
                    format!("<title>{}</title>", esc(cat))
                },
                esc(&shown)
            );
            for (si, ser) in self.series.iter().enumerate() {
                let y = y0 + bar_h * si as f64;
                if let Some(v) = ser.values.get(ci).copied().flatten().filter(|v| v.is_finite()) {
                    let (xa, xb) = (x_of(base.min(v)), x_of(base.max(v)));
                    let fill = ser
                        .fills
                        .get(ci)
                        .cloned()
                        .flatten()
                        .unwrap_or_else(|| ser.color.clone());
                    let tip = esc(&format!("{} {}: {}", cat, ser.name, format_value(v)));
                    if self.log {
                        // On a logarithmic axis a bar's length means nothing: a dot marks the
                        // value, on a faint guide from the axis.
                        let ym = y + (bar_h - 3.0) / 2.0;
                        let _ = write!(
                            s,
                            "<line x1=\"{xa:.1}\" y1=\"{ym:.1}\" x2=\"{xb:.1}\" y2=\"{ym:.1}\" stroke=\"{c}\" stroke-opacity=\"0.35\" stroke-width=\"2\"/>\
                             <circle class=\"dot\" cx=\"{xb:.1}\" cy=\"{ym:.1}\" r=\"5\" fill=\"{c}\"><title>{tip}</title></circle>",
                            c = esc(&fill)
                        );
                    } else {
                        let _ = write!(
                            s,
                            "<rect x=\"{xa:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{tip}</title></rect>",
                            (xb - xa).max(0.5),
                            bar_h - 3.0,
                            esc(&fill),
                        );
                    }
                    let mut label_x = xb + if self.log { 8.0 } else { 4.0 };
                    if let Some((a, b)) = ser.whiskers.get(ci).copied().flatten() {
                        let (x1, x2, ym) = (x_of(a), x_of(b), y + (bar_h - 3.0) / 2.0);
                        let _ = write!(
                            s,
                            "<path class=\"whisker\" d=\"M{x1:.1} {t:.1}v{l:.1}M{x1:.1} {ym:.1}H{x2:.1}M{x2:.1} {t:.1}v{l:.1}\" stroke=\"#111\" fill=\"none\"/>",
                            t = ym - 4.0,
                            l = 8.0
                        );
                        label_x = label_x.max(x2 + 4.0);
                    }
                    let label = format_value(v);
                    let room = plot_x + plot_w + if self.notes.is_empty() { right - 4.0 } else { 0.0 };
                    if self.log || label_x + text_w(&label, 11.0) <= room || xb - xa < text_w(&label, 11.0) + 8.0 {
                        let _ = write!(
                            s,
                            "<text class=\"value\" x=\"{label_x:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#222\">{}</text>",
                            y + bar_h - 5.0,
                            esc(&label)
                        );
                    } else {
                        let _ = write!(
                            s,
                            "<text class=\"value\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#fff\" text-anchor=\"end\">{}</text>",
                            xb - 4.0,
                            y + bar_h - 5.0,
                            esc(&label)
                        );
                    }
                }
            }
            if let Some(note) = self.notes.get(ci).filter(|n| !n.is_empty()) {
                let _ = write!(
                    s,
                    "<text class=\"note\" x=\"{:.1}\" y=\"{:.1}\" fill=\"#333\">{}</text>",
                    WIDTH - right + 12.0,
                    y0 + (row - 10.0) / 2.0 + 4.0,
                    esc(&fit(note, right - 12.0))
                );
            }
        }
        for (i, (name, v)) in self.refs.iter().enumerate() {
            let x = x_of(*v);
            let _ = write!(
                s,
                "<line class=\"reference\" x1=\"{x:.1}\" y1=\"{plot_y:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"><title>{}</title></line>",
                plot_y + plot_h,
                ref_color(i),
                esc(&format!("{name}: {}", format_value(*v)))
            );
        }
        s.push_str("</svg>");
        s
    }
}

fn ref_color(i: usize) -> &'static str {
    ["#c0392b", "#8e44ad", "#16a085"][i % 3]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &str, pat: &str) -> usize {
        s.matches(pat).count()
    }
    #[test]
    fn bar_charts_have_an_axis_with_unit_ticks_gridlines_and_a_legend_for_several_series() {
        let svg = BarChart::new(
            "Latency",
            "completion latency (µs)",
            vec!["randread".into(), "randwrite".into()],
        )
        .series(BarSeries::new("p50", 0, vec![Some(80.0), Some(20.0)]))
        .series(BarSeries::new("p99", 1, vec![Some(300.0), Some(90.0)]).whiskers(vec![Some((250.0, 320.0)), None]))
        .reference("limit", 400.0)
        .render();
        assert!(svg.contains("viewBox=\"0 0 720 ") && svg.contains("width=\"100%\""));
        assert!(count(&svg, "class=\"tick\"") >= 3);
        assert_eq!(count(&svg, "class=\"tick\""), count(&svg, "class=\"grid\""));
        assert!(svg.contains(">0</text>"), "zero-based: {svg}");
        assert!(svg.contains("completion latency (µs)"));
        let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
        assert!(legend.contains(">p50<") && legend.contains(">p99<") && legend.contains(">limit: 400<"));
        assert_eq!(count(&svg, "class=\"whisker\""), 1);
        // One series: no legend.
        let one = BarChart::new("IOPS", "IO/s", vec!["a".into()])
            .series(BarSeries::new("IOPS", 0, vec![Some(5.0)]))
            .render();
        assert!(!one.contains("class=\"legend\""));
        let log = BarChart::new("L", "µs", vec!["a".into()])
            .series(BarSeries::new("p", 0, vec![Some(5000.0)]))
            .series(BarSeries::new("q", 1, vec![Some(50.0)]))
            .log_scale()
            .render();
        assert!(log.contains("µs — log scale") && log.contains(">10k<"));
    }

    #[test]
    fn long_labels_are_shortened_with_the_full_name_kept() {
        let name = "a-profile-name-that-goes-on-and-on-and-on-and-on-and-on";
        let svg = BarChart::new("t", "u", vec![name.into()])
            .series(BarSeries::new("s", 0, vec![Some(1.0)]))
            .render();
        assert!(svg.contains(&format!("<title>{name}</title>")) && svg.contains('…'));
    }
}
