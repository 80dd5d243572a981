//! Hand-written SVG charts for the self-contained HTML reports (the bench reports here and the
//! experiment report of `rftune-experiment`): real axes with units and "nice" ticks (steps of 1, 2 or 5
//! times a power of ten), value axes that start at zero (or a logarithmic axis that says so in
//! its title), gridlines, a legend whenever colours or marks need one, and a `viewBox` with
//! `width="100%"` so a chart fits its column at any page width.
//!
//! The markup is well-formed XML (every attribute quoted, every element closed, text escaped),
//! and carries classes the tests look for: `chart` on each `<svg>`, `tick` on tick labels,
//! `grid` on gridlines, `legend` on the legend group, `axis-title` on axis titles.
//!
//! By job: the axis and the number formats (`axis`), [`BarChart`] (`bar`), [`LineChart`]
//! (`line`), [`SweepChart`] (`sweep`: curves over a thread-count sweep), [`ChangeChart`]
//! (`change`: changes against a baseline with their intervals, a row each); here the legend, the
//! shared drawing helpers and the page ([`page`] and its stylesheet).

mod axis;
mod bar;
mod change;
mod line;
mod sweep;

use axis::Axis;
pub use axis::format_value;
pub use bar::{BarChart, BarSeries};
pub use change::{ChangeChart, ChangeRow, measure};
pub use line::{LineChart, LineSeries};
pub use sweep::{SweepChart, SweepPoint, SweepSeries};

use std::fmt::Write;

/// Width of every chart's coordinate system; the page scales it to the column.
pub(crate) const WIDTH: f64 = 720.0;

/// Series colours, in order (distinguishable in print and for common colour blindness).
pub(crate) const PALETTE: &[&str] = &[
    "#3b6fb6", "#e08a1e", "#2e8b57", "#b8386b", "#7a5cb8", "#5a5a5a", "#1f9bb0", "#a0522d",
];

pub(crate) const FONT: f64 = 12.0;
pub(crate) const CHAR_W: f64 = 7.0;

/// Escapes text for HTML and SVG, element content and double-quoted attributes alike (`&`,
/// `<`, `>` and `"`: html-escape's encoding for a double-quoted attribute).
pub fn esc(s: &str) -> String {
    html_escape::encode_double_quoted_attribute(s).into_owned()
}

pub(crate) fn text_w(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * CHAR_W * size / FONT
}

/// Cuts `s` to `max_w` (at 12 px), ending in "…".
pub(crate) fn fit(s: &str, max_w: f64) -> String {
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
    /// A short line with this `stroke-dasharray` (a curve of its own dash).
    Pattern(&'static str),
    /// A hollow circle (a flagged point).
    Ring,
    /// A triangle pointing down (a curve's peak).
    Triangle,
    /// A short translucent band (a curve's plateau).
    Band,
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
pub(crate) fn legend(s: &mut String, entries: &[LegendEntry], x0: f64, y0: f64, w: f64) -> f64 {
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
            Mark::Pattern(dash) => write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{c}\" stroke-width=\"2\" stroke-dasharray=\"{}\"/>",
                x + 16.0,
                esc(dash)
            ),
            Mark::Ring => write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"4\" fill=\"#ffffff\" stroke=\"{c}\" stroke-width=\"1.5\"/>",
                x + 7.0
            ),
            Mark::Triangle => write!(
                s,
                "<path d=\"M{:.1} {:.1}l-5 -8h10z\" fill=\"{c}\"/>",
                x + 7.0,
                cy + 4.0
            ),
            Mark::Band => write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{c}\" stroke-width=\"9\" stroke-opacity=\"0.22\"/>",
                x + 16.0
            ),
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

/// Where a chart's plot area lies in its coordinates.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plot {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Plot {
    /// A chart's SVG up to its curves: the title, `legend_svg`, and the value axis's gridlines
    /// and tick labels (`yp` placing a value), 44 units left below the plot for the time or
    /// thread axis.
    pub(crate) fn start(&self, title: &str, legend_svg: &str, axis: &Axis, yp: impl Fn(f64) -> f64) -> String {
        let mut s = String::new();
        open_svg(&mut s, title, self.y + self.h + 44.0);
        s.push_str(legend_svg);
        self.y_grid(&mut s, axis, yp);
        s
    }

    /// The horizontal gridlines and tick labels of a value axis, `yp` placing a value.
    fn y_grid(&self, s: &mut String, axis: &Axis, yp: impl Fn(f64) -> f64) {
        for t in &axis.ticks {
            let y = yp(*t);
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e3e3e3\"/>\
                 <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#444\">{}</text>",
                self.x,
                self.x + self.w,
                self.x - 5.0,
                y + 4.0,
                esc(&axis.label(*t))
            );
        }
    }

    /// The vertical gridlines and tick labels along the bottom: (position, label) pairs.
    pub(crate) fn x_grid(&self, s: &mut String, ticks: impl IntoIterator<Item = (f64, String)>) {
        let bottom = self.y + self.h;
        for (x, label) in ticks {
            let _ = write!(
                s,
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eeeeee\"/>\
                 <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#444\">{}</text>",
                self.y,
                bottom + 4.0,
                bottom + 18.0,
                esc(&label)
            );
        }
    }

    /// The left and bottom axis lines and the two axis titles.
    pub(crate) fn frame(&self, s: &mut String, x_title: &str, y_title: &str) {
        let _ = write!(
            s,
            "<line x1=\"{l:.1}\" y1=\"{t:.1}\" x2=\"{l:.1}\" y2=\"{b:.1}\" stroke=\"#555\"/>\
             <line x1=\"{l:.1}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\" stroke=\"#555\"/>\
             <text class=\"axis-title\" x=\"{c:.1}\" y=\"{ty:.1}\" text-anchor=\"middle\" fill=\"#222\">{xt}</text>\
             <text class=\"axis-title\" transform=\"translate(12 {cy:.1}) rotate(-90)\" text-anchor=\"middle\" fill=\"#222\">{yt}</text>",
            l = self.x,
            t = self.y,
            b = self.y + self.h,
            r = self.x + self.w,
            c = self.x + self.w / 2.0,
            ty = self.y + self.h + 36.0,
            cy = self.y + self.h / 2.0,
            xt = esc(x_title),
            yt = esc(y_title)
        );
    }
}

pub(crate) fn open_svg(s: &mut String, title: &str, h: f64) {
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {WIDTH} {h:.0}\" width=\"100%\" \
         preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"{t}\" font-family=\"system-ui, sans-serif\" \
         font-size=\"{FONT}\"><title>{t}</title><text x=\"0\" y=\"16\" font-size=\"14\" font-weight=\"bold\">{t}</text>",
        t = esc(title)
    );
}

/// The stylesheet every report page shares: a fluid page from 760 to 1600 px, charts in a
/// grid of columns at least 560 px wide, tables that scroll sideways instead of overflowing.
pub(crate) const PAGE_CSS: &str = "*{box-sizing:border-box}\
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
