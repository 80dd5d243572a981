//! The change chart: one row per compared figure, its change against a baseline (in percent) as
//! a dot and its 95% interval as a bar, each row in the colour of its verdict, on one axis
//! through zero. The text never meets a bar, by layout rather than by luck: each row's name sits
//! in a column left of the plot, right-aligned, and its value in a column right of it,
//! left-aligned; both columns are sized by measuring their text with the advance widths of the
//! font the chart names (DejaVu Sans), and a name too wide for the space left is cut to fit.
//! Bars stay inside the plot, whose axis covers every interval.

use super::axis::Axis;
use super::{LegendEntry, Plot, WIDTH, esc, legend, open_svg};
use std::fmt::Write;

/// The font the chart's rows are set in, and measured for.
const ROW_FONT: &str = "DejaVu Sans, Verdana, sans-serif";

/// The rows' font size.
const ROW_SIZE: f64 = 11.0;

/// One row's height.
const ROW_H: f64 = 18.0;

/// Space between a column of text and the plot.
const GAP: f64 = 8.0;

/// DejaVu Sans's advance widths of the printable ASCII characters (32 to 126), in units of
/// 1/2048 em, as its `hmtx` table gives them (DejaVu Sans 2.37).
const ADVANCE: [u16; 95] = [
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303, 1303, 1303, 1303, 1303,
    1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587,
    1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403,
    799, 690, 799, 1716, 1024, 1024, 1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298,
    1253, 1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716,
];

/// The width of `text` set in DejaVu Sans at `size` px: each character's advance width (an
/// em, the widest, for one outside printable ASCII, so text is never measured short).
pub fn measure(text: &str, size: f64) -> f64 {
    let units: u32 = text
        .chars()
        .map(|c| {
            let i = (c as u32).wrapping_sub(32) as usize;
            ADVANCE.get(i).map_or(2048, |w| u32::from(*w))
        })
        .sum();
    f64::from(units) / 2048.0 * size
}

/// `text` cut at its end (with "…") to be at most `max_w` wide at `size`.
fn cut(text: &str, max_w: f64, size: f64) -> String {
    if measure(text, size) <= max_w {
        return text.to_owned();
    }
    let mut out: String = text.to_owned();
    while !out.is_empty() && measure(&out, size) + measure("…", size) > max_w {
        out.pop();
    }
    out.push('…');
    out
}

/// One row: a figure's change and its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRow {
    /// What changed (`storage randread: iops`).
    pub label: String,
    /// The change, %.
    pub change: f64,
    /// Its 95% interval, %.
    pub interval: Option<(f64, f64)>,
    /// The row's colour (its verdict's).
    pub color: String,
    /// The value written right of the plot (`+12.3% better`).
    pub value: String,
}

/// A chart of changes with their intervals, a row each.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeChart {
    title: String,
    axis_title: String,
    rows: Vec<ChangeRow>,
    legend: Vec<LegendEntry>,
}

impl ChangeChart {
    /// An empty chart titled `title`, its axis titled `axis_title` (with its unit).
    pub fn new(title: impl Into<String>, axis_title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            axis_title: axis_title.into(),
            rows: Vec::new(),
            legend: Vec::new(),
        }
    }

    /// Adds a row.
    #[must_use]
    pub fn row(mut self, row: ChangeRow) -> Self {
        self.rows.push(row);
        self
    }

    /// The legend: what the colours mean.
    #[must_use]
    pub fn legend(mut self, entries: Vec<LegendEntry>) -> Self {
        self.legend = entries;
        self
    }

    /// The SVG. Each row is a group of class `change-row`: its name (`class="row-label"`), its
    /// interval (`class="interval"`, a line) and dot (`class="dot"`), and its value
    /// (`class="row-value"`); every text element carries the width it was measured at
    /// (`data-width`).
    pub fn render(&self) -> String {
        let value_w = self
            .rows
            .iter()
            .map(|r| measure(&r.value, ROW_SIZE))
            .fold(0.0, f64::max);
        // The plot keeps at least a third of the width; names get what is left.
        let room = WIDTH - 2.0 * GAP - value_w - GAP - WIDTH / 3.0;
        let label_w = self
            .rows
            .iter()
            .map(|r| measure(&r.label, ROW_SIZE))
            .fold(0.0, f64::max)
            .min(room.max(80.0));
        let mut legend_svg = String::new();
        let legend_h = legend(&mut legend_svg, &self.legend, 0.0, 26.0, WIDTH);
        let plot = Plot {
            x: GAP + label_w + GAP,
            y: 26.0 + legend_h + 8.0,
            w: WIDTH - (GAP + label_w + GAP) - GAP - value_w - GAP,
            h: ROW_H * self.rows.len().max(1) as f64,
        };
        let (lo, hi) = self.rows.iter().fold((0.0f64, 0.0f64), |(lo, hi), r| {
            let (a, b) = r.interval.unwrap_or((r.change, r.change));
            (lo.min(a).min(r.change), hi.max(b).max(r.change))
        });
        let axis = Axis::zero_based(lo, hi, 6);
        let span = (axis.max - axis.min).max(f64::MIN_POSITIVE);
        let xp = |v: f64| plot.x + (v.clamp(axis.min, axis.max) - axis.min) / span * plot.w;
        let mut s = String::new();
        open_svg(&mut s, &self.title, plot.y + plot.h + 44.0);
        s.push_str(&legend_svg);
        plot.x_grid(&mut s, axis.ticks.iter().map(|t| (xp(*t), axis.label(*t))));
        let zero = xp(0.0);
        let _ = write!(
            s,
            "<line x1=\"{zero:.1}\" y1=\"{:.1}\" x2=\"{zero:.1}\" y2=\"{:.1}\" stroke=\"#555\"/>\
             <text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#222\">{}</text>",
            plot.y,
            plot.y + plot.h,
            plot.x + plot.w / 2.0,
            plot.y + plot.h + 36.0,
            esc(&self.axis_title)
        );
        for (i, r) in self.rows.iter().enumerate() {
            let cy = plot.y + ROW_H * (i as f64 + 0.5);
            let c = esc(&r.color);
            let label = cut(&r.label, label_w, ROW_SIZE);
            let _ = write!(
                s,
                "<g class=\"change-row\"><text class=\"row-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" \
                 font-family=\"{ROW_FONT}\" font-size=\"{ROW_SIZE}\" data-width=\"{:.1}\">{}</text>",
                plot.x - GAP,
                cy + 4.0,
                measure(&label, ROW_SIZE),
                esc(&label)
            );
            if let Some((a, b)) = r.interval {
                let _ = write!(
                    s,
                    "<line class=\"interval\" x1=\"{:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" stroke=\"{c}\" \
                     stroke-width=\"2\"/>",
                    xp(a.min(b)),
                    xp(a.max(b))
                );
            }
            let _ = write!(
                s,
                "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{cy:.1}\" r=\"4\" fill=\"{c}\"/>\
                 <text class=\"row-value\" x=\"{:.1}\" y=\"{:.1}\" font-family=\"{ROW_FONT}\" font-size=\"{ROW_SIZE}\" \
                 fill=\"{c}\" data-width=\"{:.1}\">{}</text></g>",
                xp(r.change),
                plot.x + plot.w + GAP,
                cy + 4.0,
                measure(&r.value, ROW_SIZE),
                esc(&r.value)
            );
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_measured_per_character_and_cut_to_fit() {
        // "iii" is narrower than "WWW" in any proportional font, and here by DejaVu's widths.
        assert!(measure("iii", 11.0) * 3.0 < measure("WWW", 11.0));
        assert_eq!(measure("0", 2048.0), 1303.0);
        assert_eq!(measure("é", 2048.0), 2048.0, "outside ASCII: an em");
        let long = "storage randrw70: write_p99.9 completion latency";
        let c = cut(long, 120.0, 11.0);
        assert!(c.ends_with('…') && measure(&c, 11.0) <= 120.0, "{c}");
        assert_eq!(cut("iops", 120.0, 11.0), "iops");
    }
}
