//! The HTML report's inline SVG charts.

use std::fmt::Write;

/// Escapes text for HTML and SVG.
pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v.abs() >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Horizontal bars with optional reference lines (name, value).
pub fn bar_chart(title: &str, unit: &str, bars: &[(String, f64)], refs: &[(String, f64)]) -> String {
    let (w, label_w, row) = (640.0, 110.0, 24.0);
    let h = 40.0 + row * bars.len() as f64 + 8.0 + 14.0 * refs.len() as f64;
    let max = bars
        .iter()
        .map(|b| b.1)
        .chain(refs.iter().map(|r| r.1))
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let scale = (w - label_w - 90.0) / max;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\"><title>{t}</title>\
         <text x=\"0\" y=\"16\" font-weight=\"bold\">{t} ({u})</text>",
        t = esc(title),
        u = esc(unit)
    );
    for (i, (name, v)) in bars.iter().enumerate() {
        let y = 30.0 + row * i as f64;
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{ty}\">{n}</text><rect x=\"{label_w}\" y=\"{y}\" width=\"{bw:.1}\" height=\"{bh}\" fill=\"#4a7ebb\"/>\
             <text x=\"{tx:.1}\" y=\"{ty}\">{val}</text>",
            ty = y + 15.0,
            n = esc(name),
            bw = v.max(0.0) * scale,
            bh = row - 6.0,
            tx = label_w + v.max(0.0) * scale + 4.0,
            val = fmt_num(*v)
        );
    }
    // One label row per reference line, so close lines (peak, 95% of peak) stay readable.
    for (i, (name, v)) in refs.iter().enumerate() {
        let x = label_w + v * scale;
        let ty = 40.0 + row * bars.len() as f64 + 4.0 + 14.0 * i as f64;
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"24\" x2=\"{x:.1}\" y2=\"{y2}\" stroke=\"#c33\" stroke-dasharray=\"4 3\"/>\
             <text x=\"{tx:.1}\" y=\"{ty}\" fill=\"#c33\" font-size=\"11\" text-anchor=\"end\">{n} {val}</text>",
            y2 = ty - 10.0,
            tx = x - 3.0,
            n = esc(name),
            val = fmt_num(*v)
        );
    }
    s.push_str("</svg>");
    s
}

/// Power (left axis, W) over time with IOPS (right axis) overlaid.
pub fn trace_chart(title: &str, power: &[(f64, f64)], iops: &[(f64, f64)]) -> String {
    let (w, h, l, r, t, b) = (640.0, 240.0, 50.0, 60.0, 28.0, 30.0);
    let t_max = power.iter().chain(iops).map(|p| p.0).fold(0.0f64, f64::max).max(1.0);
    let range = |xs: &[(f64, f64)]| {
        let lo = xs.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let hi = xs.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        if lo.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (0.0, hi.max(1.0))
        }
    };
    let path = |xs: &[(f64, f64)], (lo, hi): (f64, f64)| {
        xs.iter()
            .map(|(x, y)| {
                format!(
                    "{:.1},{:.1}",
                    l + x / t_max * (w - l - r),
                    h - b - (y - lo) / (hi - lo).max(f64::MIN_POSITIVE) * (h - t - b)
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\"><title>{ti}</title>\
         <text x=\"0\" y=\"16\" font-weight=\"bold\">{ti}</text>\
         <rect x=\"{l}\" y=\"{t}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#ccc\"/>\
         <text x=\"{l}\" y=\"{ty}\" font-size=\"11\">0 s</text><text x=\"{tx}\" y=\"{ty}\" font-size=\"11\" text-anchor=\"end\">{tm:.0} s</text>",
        ti = esc(title),
        pw = w - l - r,
        ph = h - t - b,
        ty = h - b + 14.0,
        tx = w - r,
        tm = t_max
    );
    if !power.is_empty() {
        let rg = range(power);
        let _ = write!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#c33\" stroke-width=\"2\"/>\
             <text x=\"2\" y=\"{}\" fill=\"#c33\" font-size=\"11\">{:.0} W</text><text x=\"2\" y=\"{}\" fill=\"#c33\" font-size=\"11\">{:.0} W</text>",
            path(power, rg),
            t + 10.0,
            rg.1,
            h - b,
            rg.0
        );
    }
    if !iops.is_empty() {
        let rg = (0.0, range(iops).1);
        let _ = write!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#4a7ebb\" stroke-width=\"2\"/>\
             <text x=\"{}\" y=\"{}\" fill=\"#4a7ebb\" font-size=\"11\">{} IO/s</text><text x=\"{}\" y=\"{}\" fill=\"#4a7ebb\" font-size=\"11\">0</text>",
            path(iops, rg),
            w - r + 4.0,
            t + 10.0,
            fmt_num(rg.1),
            w - r + 4.0,
            h - b
        );
    }
    s.push_str("</svg>");
    s
}
