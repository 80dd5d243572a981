//! Checks of the HTML reports' markup, shared by the crates that render them (host-bench's
//! bench reports, the experiment report): well-formed XML, and charts a reader can
//! read (ticks, gridlines, units, zero, legends).

/// Asserts that `markup` (an HTML report written as XHTML-compatible markup, or SVG) is
/// well-formed XML, parsing it with python3's `xml.etree`: every element closed, every attribute
/// quoted, no undefined entity. Skips (see [`crate::tool_available`]) where python3 is missing.
pub fn assert_well_formed_xml(markup: &str) {
    use std::io::Write as _;
    if !crate::tool_available("python3", crate::on_path("python3"), "apt-get install python3") {
        return;
    }
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, xml.etree.ElementTree as E; E.fromstring(sys.stdin.buffer.read())",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting python3: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(markup.as_bytes())
            .unwrap_or_else(|e| panic!("writing to python3: {e}"));
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("running python3: {e}"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "not well-formed XML: {}",
        err.lines().last().unwrap_or_default()
    );
}

/// The text of `s` after the first `open` (from `from`) up to the next `close`.
fn after<'a>(s: &'a str, from: usize, open: &str, close: &str) -> &'a str {
    let start = s[from..]
        .find(open)
        .map(|i| from + i + open.len())
        .expect("opening text present");
    let len = s[start..].find(close).expect("closing text present");
    &s[start..start + len]
}

/// The page's charts, each `<svg …</svg>`.
pub fn charts(page: &str) -> Vec<&str> {
    page.match_indices("<svg")
        .map(|(i, _)| &page[i..i + page[i..].find("</svg>").expect("every <svg> is closed") + 6])
        .collect()
}

/// A chart's `<title>`.
pub fn chart_title(svg: &str) -> &str {
    after(svg, 0, "<title>", "</title>")
}

/// Asserts what a reader of any chart needs: at least 3 tick labels with gridlines, axis
/// titles naming a unit in parentheses, zero on every linear axis (a logarithmic one says "log
/// scale"), a legend when there is more than one trace, bar colour or dot colour, and a drawing that scales
/// to its column (`viewBox`, `width="100%"`).
pub fn assert_readable(svg: &str) {
    let t = chart_title(svg);
    assert!(
        svg.matches("class=\"tick\"").count() >= 3,
        "{t}: fewer than 3 tick labels"
    );
    assert!(svg.matches("class=\"grid\"").count() >= 3, "{t}: no gridlines");
    assert!(
        svg.contains("viewBox=\"0 0 ") && svg.contains("width=\"100%\""),
        "{t}: not scalable"
    );
    let axis_titles: Vec<&str> = svg
        .match_indices("class=\"axis-title\"")
        .map(|(i, _)| after(svg, i, ">", "<"))
        .collect();
    assert!(!axis_titles.is_empty(), "{t}: no axis title");
    assert!(
        axis_titles.iter().all(|a| a.contains('(') && a.contains(')')),
        "{t}: an axis without a unit: {axis_titles:?}"
    );
    if !axis_titles.iter().any(|a| a.contains("log scale")) {
        assert!(
            svg.contains("class=\"tick\"") && svg.contains(">0</text>"),
            "{t}: axis not from zero"
        );
    }
    let traces = svg.matches("class=\"trace\"").count();
    // Colours of bars and dots (legend swatches add none: they repeat the plot's colours).
    let fills: std::collections::BTreeSet<&str> = svg
        .match_indices("<rect x=")
        .chain(svg.match_indices("<circle class=\"dot\""))
        .map(|(i, _)| after(svg, i, "fill=\"", "\""))
        .collect();
    if traces > 1 || fills.len() > 1 {
        assert!(svg.contains("class=\"legend\""), "{t}: several series and no legend");
    }
}
