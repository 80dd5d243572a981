//! Hand-written SVG charts for the self-contained HTML reports (the bench reports here and the
//! experiment report in the engine): real axes with units and "nice" ticks (steps of 1, 2 or 5
//! times a power of ten), value axes that start at zero (or a logarithmic axis that says so in
//! its title), gridlines, a legend whenever colours or marks need one, and a `viewBox` with
//! `width="100%"` so a chart fits its column at any page width.
//!
//! The markup is well-formed XML (every attribute quoted, every element closed, text escaped),
//! and carries classes the tests look for: `chart` on each `<svg>`, `tick` on tick labels,
//! `grid` on gridlines, `legend` on the legend group, `axis-title` on axis titles.

use std::fmt::Write;

/// Width of every chart's coordinate system; the page scales it to the column.
pub const WIDTH: f64 = 720.0;

/// Series colours, in order (distinguishable in print and for common colour blindness).
pub const PALETTE: &[&str] = &[
    "#3b6fb6", "#e08a1e", "#2e8b57", "#b8386b", "#7a5cb8", "#5a5a5a", "#1f9bb0", "#a0522d",
];

const FONT: f64 = 12.0;
const CHAR_W: f64 = 7.0;

/// Escapes text for HTML and SVG (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A value axis: its range and the values that get a tick, a label and a gridline.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
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
pub fn nice_step(span: f64, max_ticks: usize) -> f64 {
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
    pub fn zero_based(lo: f64, hi: f64, max_ticks: usize) -> Self {
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
    pub fn log(lo: f64, hi: f64) -> Self {
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
    pub fn tight(mut self, lo: f64, hi: f64) -> Self {
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
    pub fn fraction(&self, v: f64) -> f64 {
        let f = if self.log {
            let v = v.max(self.min);
            (v.log10() - self.min.log10()) / (self.max.log10() - self.min.log10())
        } else {
            (v - self.min) / (self.max - self.min)
        };
        if f.is_finite() { f.clamp(0.0, 1.0) } else { 0.0 }
    }

    /// The label of tick `v`: SI-scaled (k, M, G) with as many decimals as the step needs.
    pub fn label(&self, v: f64) -> String {
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

fn si(v: f64) -> (f64, &'static str) {
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
pub fn format_tick(v: f64, step: f64, top: f64) -> String {
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
pub fn format_significant(v: f64, digits: i32) -> String {
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

fn text_w(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * CHAR_W * size / FONT
}

/// Cuts `s` to `max_w` (at 12 px), ending in "…".
fn fit(s: &str, max_w: f64) -> String {
    let max_chars = (max_w / CHAR_W + 1e-6).floor().max(2.0) as usize;
    if s.chars().count() <= max_chars {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max_chars - 1).collect();
        out.push('…');
        out
    }
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A filled square (a bar's series).
    Swatch,
    /// A short line (a trace).
    Line,
    /// A short dashed line (a reference value).
    Dashed,
    /// An interval whisker.
    Whisker,
    /// A dot (a value on a logarithmic axis).
    Dot,
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    /// What it says.
    pub label: String,
    /// Its colour.
    pub color: String,
    /// Its mark.
    pub mark: Mark,
}

impl LegendEntry {
    /// An entry.
    pub fn new(label: impl Into<String>, color: impl Into<String>, mark: Mark) -> Self {
        Self {
            label: label.into(),
            color: color.into(),
            mark,
        }
    }
}

/// Draws the legend at (`x`, `y`) wrapping within `w`; returns the height used.
fn legend(s: &mut String, entries: &[LegendEntry], x0: f64, y0: f64, w: f64) -> f64 {
    if entries.is_empty() {
        return 0.0;
    }
    let row = 18.0;
    let (mut x, mut y) = (x0, y0);
    s.push_str("<g class=\"legend\">");
    for e in entries {
        let ew = 22.0 + text_w(&e.label, FONT) + 16.0;
        if x > x0 && x + ew > x0 + w {
            x = x0;
            y += row;
        }
        let c = esc(&e.color);
        let cy = y + 9.0;
        let _ = match e.mark {
            Mark::Swatch => write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"14\" height=\"12\" fill=\"{c}\"/>",
                y + 3.0
            ),
            Mark::Line => write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{c}\" stroke-width=\"2.5\"/>",
                x + 16.0
            ),
            Mark::Dashed => write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{c}\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>",
                x + 16.0
            ),
            Mark::Dot => write!(s, "<circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{c}\"/>", x + 7.0),
            Mark::Whisker => write!(
                s,
                "<path d=\"M{x:.1} {a:.1}v8M{x:.1} {cy:.1}h14M{x2:.1} {a:.1}v8\" stroke=\"{c}\" fill=\"none\"/>",
                a = cy - 4.0,
                x2 = x + 14.0
            ),
        };
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{FONT}\">{}</text>",
            x + 20.0,
            y + 13.0,
            esc(&e.label)
        );
        x += ew;
    }
    s.push_str("</g>");
    y - y0 + row
}

fn open_svg(s: &mut String, title: &str, h: f64) {
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {WIDTH} {h:.0}\" width=\"100%\" \
         preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"{t}\" font-family=\"system-ui, sans-serif\" \
         font-size=\"{FONT}\"><title>{t}</title><text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"bold\">{t}</text>",
        t = esc(title)
    );
}

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
        let h = plot_y + plot_h + 44.0;
        let xp = |v: f64| plot_x + x_axis.fraction(v) * plot_w;
        let yp = |v: f64| plot_y + plot_h - y_axis.fraction(v) * plot_h;

        let mut s = String::new();
        open_svg(&mut s, &self.title, h);
        s.push_str(&legend_svg);
        for t in &y_axis.ticks {
            let y = yp(*t);
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{plot_x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e3e3e3\"/>\
                 <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#444\">{}</text>",
                plot_x + plot_w,
                plot_x - 5.0,
                y + 4.0,
                esc(&y_axis.label(*t))
            );
        }
        for t in &x_axis.ticks {
            let x = xp(*t);
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{plot_y:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eeeeee\"/>\
                 <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
                plot_y + plot_h + 4.0,
                plot_y + plot_h + 18.0,
                esc(&x_axis.label(*t))
            );
        }
        let _ = write!(
            s,
            "<line x1=\"{plot_x:.1}\" y1=\"{plot_y:.1}\" x2=\"{plot_x:.1}\" y2=\"{b:.1}\" stroke=\"#555\"/>\
             <line x1=\"{plot_x:.1}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"#555\"/>\
             <text class=\"axis-title\" x=\"{c:.1}\" y=\"{ty:.1}\" text-anchor=\"middle\" fill=\"#222\">{xt}</text>\
             <text class=\"axis-title\" transform=\"translate(12 {cy:.1}) rotate(-90)\" text-anchor=\"middle\" fill=\"#222\">{yt}</text>",
            b = plot_y + plot_h,
            r = plot_x + plot_w,
            c = plot_x + plot_w / 2.0,
            ty = plot_y + plot_h + 36.0,
            cy = plot_y + plot_h / 2.0,
            xt = esc(&self.x_title),
            yt = esc(&self.y_title)
        );
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

/// The stylesheet every report page shares: a fluid page from 760 to 1600 px, charts in a
/// grid of columns at least 560 px wide, tables that scroll sideways instead of overflowing.
pub const PAGE_CSS: &str = "*{box-sizing:border-box}\
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:1.2em 2vw;max-width:1600px;color:#1a1a1a}\
h1{font-size:1.5em;margin:.2em 0 .6em}h2{font-size:1.2em;margin:1.4em 0 .4em;border-bottom:1px solid #ddd}\
h3{font-size:1.05em;margin:1em 0 .3em}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,560px),1fr));gap:.5em 2em;align-items:start}\
.charts svg,svg.chart{display:block;width:100%;height:auto;margin:.6em 0}\
.scroll{overflow-x:auto;max-width:100%}\
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
table.facts{max-width:100%}table.facts th{white-space:nowrap;background:#f6f6f6}\
.note{color:#555}summary{cursor:pointer;margin:.6em 0;color:#245}.bad{color:#b00;font-weight:bold}";

/// A complete self-contained page (well-formed XML as well as HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>{}</title>\
         <style>{PAGE_CSS}</style></head><body>{body}</body></html>\n",
        esc(title)
    )
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
