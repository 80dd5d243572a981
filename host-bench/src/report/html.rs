//! The bench document as a self-contained HTML page (inline SVG from [`crate::chart`], no
//! external assets): the run's context, then storage charts (IOPS, bandwidth, completion
//! latency percentiles, power, performance per watt, power and IOPS over time), memory
//! charts (STREAM kernels against the theoretical peak, power over time) or the file-system
//! curves (`filesystem_html`), and tables of every figure.

use super::{BenchReport, Memory, Storage, TestReport, filesystem_html};
use crate::chart::{self, BarChart, BarSeries, LegendEntry, LineChart, LineSeries, Mark, esc, format_value};
use crate::fio::{self, DataDirection, Percentile};
use std::fmt::Write;

const WHISKER_NOTE: &str = "whisker: lowest to highest repeat";

impl BenchReport {
    /// A self-contained HTML page (inline SVG, no external assets).
    pub fn html(&self) -> String {
        let mut body = String::new();
        let title = format!(
            "rftune {} benchmark{}",
            self.kind,
            self.label.as_ref().map(|l| format!(" — {l}")).unwrap_or_default()
        );
        let _ = write!(body, "<h1>{}</h1>", esc(&title));
        body.push_str(&self.facts_table());
        if !self.problems.is_empty() {
            body.push_str("<h2>Problems</h2><ul>");
            for p in &self.problems {
                let _ = write!(body, "<li>{}</li>", esc(p));
            }
            body.push_str("</ul>");
        }
        if let Some(s) = &self.storage {
            storage_section(&mut body, s);
        }
        if let Some(m) = &self.memory {
            memory_section(&mut body, m);
        }
        if let Some(f) = &self.filesystem {
            filesystem_html::section(&mut body, f);
        }
        if let Some(c) = &self.power_caveat {
            let _ = write!(body, "<p class=\"note\">Power: {}.</p>", esc(c));
        }
        chart::page(&title, &body)
    }

    fn facts_table(&self) -> String {
        let h = &self.host;
        let mut facts: Vec<(String, String)> = vec![
            ("Host".into(), h.hostname.clone().unwrap_or_default()),
            ("CPU".into(), h.cpu_model.clone().unwrap_or_default()),
            (
                "Cores / logical CPUs".into(),
                format!("{} / {}", h.cores, h.logical_cpus),
            ),
            (
                "SMT".into(),
                h.smt_active
                    .map_or("unknown".into(), |s| if s { "on".into() } else { "off".into() }),
            ),
            ("NUMA nodes".into(), h.numa_nodes.to_string()),
            ("Idle states".into(), h.cpuidle_states.join(", ")),
            ("Kernel".into(), h.kernel.clone().unwrap_or_default()),
            (
                "Started / finished (UTC)".into(),
                format!("{} / {}", self.started_at, self.finished_at),
            ),
            ("rftune".into(), self.tool_version.clone()),
            ("Valid".into(), if self.valid { "yes".into() } else { "NO".into() }),
        ];
        if let Some(b) = &self.bmc {
            facts.push((
                "Server".into(),
                format!(
                    "{} ({})",
                    b.model.clone().unwrap_or_default(),
                    b.service_tag.clone().unwrap_or_default()
                ),
            ));
            facts.push((
                "BIOS / iDRAC".into(),
                format!(
                    "{} / {}",
                    b.bios_version.clone().unwrap_or_default(),
                    b.idrac_firmware.clone().unwrap_or_default()
                ),
            ));
        }
        if let Some(s) = &self.storage {
            facts.push((
                "Target".into(),
                format!(
                    "{} ({}, {})",
                    s.target,
                    s.target_kind,
                    s.size.clone().unwrap_or_else(|| "whole device".into())
                ),
            ));
            facts.push((
                "fio".into(),
                format!(
                    "{} · {} s + {} s ramp · numjobs {} · {}",
                    s.fio_version.clone().unwrap_or_default(),
                    s.runtime_s,
                    s.ramp_s,
                    s.numjobs,
                    s.ioengine
                ),
            ));
        }
        if let Some(f) = &self.filesystem {
            facts.extend(filesystem_html::facts(f, self.label.as_deref()));
        }
        let mut out = String::from("<div class=\"scroll\"><table class=\"facts\">");
        for (k, v) in facts {
            let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
        }
        out.push_str("</table></div>");
        out
    }
}

/// Lowest and highest of the repeats, when there are at least two.
fn spread(xs: &[f64]) -> Option<(f64, f64)> {
    let xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    (xs.len() >= 2).then(|| {
        (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    })
}

fn whisker_legend(any: bool) -> Vec<LegendEntry> {
    if any {
        vec![LegendEntry::new(WHISKER_NOTE, "#111", Mark::Whisker)]
    } else {
        Vec::new()
    }
}

/// A bar chart of one figure per test, with the repeats' spread as whiskers.
fn per_test(
    s: &Storage,
    title: &str,
    axis: &str,
    value: fn(&TestReport) -> Option<f64>,
    run: Option<fn(&fio::Metrics) -> f64>,
) -> Option<String> {
    let values: Vec<Option<f64>> = s.tests.iter().map(value).collect();
    if values.iter().all(Option::is_none) {
        return None;
    }
    let whiskers: Vec<Option<(f64, f64)>> = s
        .tests
        .iter()
        .map(|t| run.and_then(|f| spread(&t.runs.iter().map(|r| f(&r.metrics)).collect::<Vec<_>>())))
        .collect();
    let any = whiskers.iter().any(Option::is_some);
    Some(
        BarChart::new(title, axis, s.tests.iter().map(|t| t.name.clone()).collect())
            .series(BarSeries::new(title, 0, values).whiskers(whiskers))
            .legend(whisker_legend(any))
            .render(),
    )
}

/// Read and write completion latency: per test that has the direction, p50, p99 and p99.9
/// (median over repeats) on a logarithmic axis, since they span orders of magnitude.
fn latency_chart(s: &Storage, dir_name: &str, dir: DataDirection) -> Option<String> {
    let tests: Vec<&TestReport> = s
        .tests
        .iter()
        .filter(|t| Percentile::ALL.iter().any(|p| t.latency_median(dir, *p).is_some()))
        .collect();
    if tests.is_empty() {
        return None;
    }
    let mut c = BarChart::new(
        format!("{dir_name} completion latency per test (median of repeats)"),
        "completion latency (µs)",
        tests.iter().map(|t| t.name.clone()).collect(),
    )
    .log_scale();
    for (i, pct) in Percentile::ALL.into_iter().enumerate() {
        c = c.series(BarSeries::new(
            pct.name(),
            i,
            tests.iter().map(|t| t.latency_median(dir, pct)).collect(),
        ));
    }
    Some(c.render())
}

fn storage_section(body: &mut String, s: &Storage) {
    body.push_str("<h2>Storage</h2><div class=\"charts\">");
    let charts = [
        per_test(
            s,
            "IOPS per test (median of repeats)",
            "IOPS (IO/s)",
            |t| Some(t.iops),
            Some(|m| m.iops),
        ),
        per_test(
            s,
            "Bandwidth per test (median of repeats)",
            "bandwidth (MB/s, 10⁶ B/s)",
            |t| Some(t.bw_bytes / 1e6),
            Some(|m| m.bw_bytes / 1e6),
        ),
        latency_chart(s, "Read", DataDirection::Read),
        latency_chart(s, "Write", DataDirection::Write),
        per_test(s, "Average power per test", "power (W)", |t| t.power_w, None),
        per_test(
            s,
            "Performance per watt",
            "IOPS per watt (IO/s/W)",
            |t| t.iops_per_watt,
            None,
        ),
    ];
    for c in charts.into_iter().flatten() {
        body.push_str(&c);
    }
    body.push_str("</div>");

    let traced: Vec<&TestReport> = s
        .tests
        .iter()
        .filter(|t| {
            t.runs
                .first()
                .is_some_and(|r| !r.power_trace.is_empty() || !r.iops_trace.is_empty())
        })
        .collect();
    if !traced.is_empty() {
        body.push_str("<h2>Over time (first repeat of each test)</h2><div class=\"charts\">");
        let power: Vec<LineSeries> = traced
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let r = t.runs.first()?;
                (!r.power_trace.is_empty())
                    .then(|| LineSeries::new(&t.name, i, r.power_trace.iter().map(|p| (p.t_s, p.watts)).collect()))
            })
            .collect();
        if !power.is_empty() {
            // The same zero-based scale as the power bars.
            let top = s.tests.iter().filter_map(|t| t.power_w).fold(0.0, f64::max);
            let mut c =
                LineChart::new("Power over time, per test", "time since fio started (s)", "power (W)").y_at_least(top);
            for p in power {
                c = c.series(p);
            }
            body.push_str(&c.render());
        }
        for (i, t) in traced.iter().enumerate() {
            let Some(r) = t.runs.first().filter(|r| !r.iops_trace.is_empty()) else {
                continue;
            };
            body.push_str(
                &LineChart::new(
                    format!("{}: IOPS over time", t.name),
                    "time since fio started (s)",
                    "IOPS (IO/s)",
                )
                .series(LineSeries::new(&t.name, i, r.iops_trace.clone()))
                .plot_height(160.0)
                .render(),
            );
        }
        body.push_str("</div>");
    }

    body.push_str(
        "<h2>Tests</h2><div class=\"scroll\"><table><tr><th>test</th><th>IOPS</th><th>MB/s</th>\
         <th>read p50 µs</th><th>read p99 µs</th><th>read p99.9 µs</th>\
         <th>write p50 µs</th><th>write p99 µs</th><th>write p99.9 µs</th>\
         <th>W</th><th>IOPS/W</th><th>CV</th><th>repeats</th><th>valid</th></tr>",
    );
    for t in &s.tests {
        let lat = |dir: DataDirection| {
            Percentile::ALL
                .iter()
                .map(|p| {
                    format!(
                        "<td class=\"num\">{}</td>",
                        t.latency_median(dir, *p).map_or("-".into(), |v| format!("{v:.1}"))
                    )
                })
                .collect::<String>()
        };
        let _ = write!(
            body,
            "<tr><td>{}</td><td class=\"num\">{:.0}</td><td class=\"num\">{:.1}</td>{}{}<td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td{}>{}</td></tr>",
            esc(&t.name),
            t.iops,
            t.bw_bytes / 1e6,
            lat(DataDirection::Read),
            lat(DataDirection::Write),
            t.power_w.map_or("-".into(), |w| format!("{w:.0}")),
            t.iops_per_watt.map_or("-".into(), |w| format!("{w:.1}")),
            t.cv_iops.map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
            t.runs.len(),
            if t.valid { "" } else { " class=\"bad\"" },
            if t.valid { "yes" } else { "NO" }
        );
    }
    body.push_str("</table></div>");
}

fn memory_section(body: &mut String, m: &Memory) {
    body.push_str("<h2>Memory</h2><div class=\"charts\">");
    let kernels: Vec<&str> = crate::stream::KERNELS
        .iter()
        .copied()
        .filter(|k| m.gbs.contains_key(*k))
        .collect();
    let whiskers: Vec<Option<(f64, f64)>> = kernels
        .iter()
        .map(|k| spread(&m.runs.iter().filter_map(|r| r.gbs(k)).collect::<Vec<_>>()))
        .collect();
    let any = whiskers.iter().any(Option::is_some);
    let mut c = BarChart::new(
        format!("STREAM ({}): best rate per kernel, median of repeats", m.variant),
        "memory bandwidth (GB/s, 10⁹ B/s)",
        kernels.iter().map(|k| (*k).to_owned()).collect(),
    )
    .series(BarSeries::new("GB/s", 0, kernels.iter().map(|k| m.gbs.get(*k).copied()).collect()).whiskers(whiskers))
    .legend(whisker_legend(any));
    if let Some(p) = &m.peak {
        c = c
            .reference(format!("theoretical peak ({})", p.source), p.gbs)
            .reference("95% of peak (plausibility limit)", 0.95 * p.gbs);
    }
    body.push_str(&c.render());
    if !m.power_trace.is_empty() {
        let top = m.power_w.unwrap_or(0.0);
        body.push_str(
            &LineChart::new(
                "Power during STREAM",
                "time since the first run started (s)",
                "power (W)",
            )
            .series(LineSeries::new(
                "power",
                0,
                m.power_trace.iter().map(|p| (p.t_s, p.watts)).collect(),
            ))
            .y_at_least(top)
            .render(),
        );
    }
    body.push_str("</div>");
    let _ = write!(
        body,
        "<p>{} threads, {} elements per array ({:.0} MiB), last-level cache {}. {}</p>",
        m.threads,
        m.elements,
        m.array_mib,
        m.llc_bytes
            .map_or("unknown".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0)),
        m.triad_fraction_of_peak
            .map_or(String::new(), |f| format!("Triad reaches {:.1}% of peak.", f * 100.0))
    );
    body.push_str(
        "<div class=\"scroll\"><table><tr><th>kernel</th><th>GB/s (median)</th><th>lowest</th><th>highest</th><th>CV</th></tr>",
    );
    for k in &kernels {
        let runs: Vec<f64> = m.runs.iter().filter_map(|r| r.gbs(k)).collect();
        let (lo, hi) = spread(&runs).map_or(("-".into(), "-".into()), |(a, b)| (format_value(a), format_value(b)));
        let _ = write!(
            body,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{lo}</td><td class=\"num\">{hi}</td><td class=\"num\">{}</td></tr>",
            esc(k),
            m.gbs.get(*k).map_or("-".into(), |v| format!("{v:.1}")),
            m.cv.get(*k).map_or("-".into(), |c| format!("{:.1}%", c * 100.0))
        );
    }
    body.push_str("</table></div>");
    if let Some(w) = m.power_w {
        let _ = write!(
            body,
            "<p>Average power {w:.0} W{}.</p>",
            m.triad_gbs_per_watt
                .map_or(String::new(), |e| format!("; Triad {} GB/s per watt", format_value(e)))
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::report::{BenchReport, parse};
    use rftune_tests::markup::{assert_readable, assert_well_formed_xml, chart_title as title, charts};
    use serde_json::{Value, json};

    fn lat(p50: f64) -> Value {
        json!({"mean_us": p50 * 1.2, "p50_us": p50, "p99_us": p50 * 4.0, "p99_9_us": p50 * 11.0})
    }

    fn run(iops: f64, read: Option<f64>, write: Option<f64>, traced: bool) -> Value {
        let power: Vec<Value> = (0..=30)
            .map(|t| json!({"t_s": f64::from(t), "watts": 400.0 + f64::from(t % 3)}))
            .collect();
        let trace: Vec<Value> = (1..=30)
            .map(|t| json!([f64::from(t), iops * (1.0 + 0.01 * f64::from(t % 2))]))
            .collect();
        json!({"metrics": {"iops": iops, "bw_bytes": iops * 4096.0, "read_lat": read.map(lat), "write_lat": write.map(lat)},
               "power_trace": if traced { power } else { vec![] },
               "iops_trace": if traced { trace } else { vec![] }})
    }

    /// A storage document as the reader sees it: three tests (read only, write only, mixed),
    /// two repeats each, traces on the first.
    pub(crate) fn storage() -> BenchReport {
        let test = |name: &str, iops: f64, read: Option<f64>, write: Option<f64>| {
            json!({"name": name, "iops": iops, "bw_bytes": iops * 4096.0, "power_w": 410.0, "iops_per_watt": iops / 410.0,
                   "cv_iops": 0.01, "valid": true,
                   "runs": [run(iops * 0.99, read, write, true), run(iops * 1.01, read, write, false)]})
        };
        let doc = json!({
            "schema": "rftune.bench/v1", "kind": "storage", "label": "<nps4>", "valid": true,
            "storage": {"target": "/dev/nvme1n1", "tests": [
                test("seqread", 52_000.0, Some(290.0), None),
                test("randwrite", 410_000.0, None, Some(24.0)),
                test("randrw70", 640_000.0, Some(110.0), Some(105.0)),
            ]},
            "power_caveat": "BMC readings"
        });
        parse(&doc.to_string()).unwrap()
    }

    fn memory() -> BenchReport {
        let runs: Vec<Value> = [1.0, 1.01, 0.99]
            .iter()
            .map(|f| {
                let k = |name: &str, gbs: f64| json!({"name": name, "best_gbs": gbs * f, "avg_s": 0.05, "min_s": 0.05, "max_s": 0.05});
                json!({"variant": "standard", "elements": 1000, "array_bytes": 8000, "threads": 4, "cpus": [], "iterations": 10,
                       "kernels": [k("Copy", 318.0), k("Triad", 333.0)],
                       "validation": {"passed": true, "relative_errors": [0.0, 0.0, 0.0]}})
            })
            .collect();
        let power: Vec<Value> = (0..=40)
            .map(|t| json!({"t_s": f64::from(t), "watts": 500.0 + f64::from(t % 4)}))
            .collect();
        let doc = json!({
            "schema": "rftune.bench/v1", "kind": "memory", "valid": true,
            "memory": {"variant": "standard", "gbs": {"Copy": 318.0, "Triad": 333.0}, "runs": runs,
                       "peak": {"gbs": 460.8, "source": "dimm-inventory", "sockets": []}, "power_w": 501.0, "power_trace": power}
        });
        parse(&doc.to_string()).unwrap()
    }

    #[test]
    fn the_storage_report_has_axes_legends_and_latency_percentiles_per_test() {
        let page = storage().html();
        assert_well_formed_xml(&page);
        assert!(
            page.contains("<meta name=\"viewport\"")
                && page.contains("max-width:1600px")
                && page.contains("grid-template-columns")
        );
        assert!(page.contains("&lt;nps4&gt;") && !page.contains("<nps4>"));
        let charts = charts(&page);
        let titles: Vec<&str> = charts.iter().map(|c| title(c)).collect();
        for want in [
            "IOPS per test (median of repeats)",
            "Bandwidth per test (median of repeats)",
            "Read completion latency per test (median of repeats)",
            "Write completion latency per test (median of repeats)",
            "Average power per test",
            "Performance per watt",
            "Power over time, per test",
            "seqread: IOPS over time",
        ] {
            assert!(titles.contains(&want), "no chart {want:?} in {titles:?}");
        }
        for c in &charts {
            assert_readable(c);
        }
        // Latency: p50, p99 and p99.9 for each test that reads, with their values.
        let read = charts.iter().find(|c| title(c).starts_with("Read completion")).unwrap();
        let legend = &read[read.find("class=\"legend\"").unwrap()..];
        for p in [">p50<", ">p99<", ">p99.9<"] {
            assert!(legend.contains(p), "read latency legend lacks {p}");
        }
        assert!(read.contains(">seqread<") && read.contains(">randrw70<") && !read.contains(">randwrite<"));
        assert_eq!(read.matches("class=\"value\"").count(), 2 * 3);
        // randrw70's read p99.9 (median of repeats: 110 × 11).
        assert!(read.contains(">1210<"), "{read}");
        assert!(read.contains("completion latency (µs) — log scale"));
        let write = charts
            .iter()
            .find(|c| title(c).starts_with("Write completion"))
            .unwrap();
        assert!(write.contains(">randwrite<") && write.contains(">randrw70<") && !write.contains(">seqread<"));
        // The power traces share the power bars' zero-based axis, 0 to 500 W.
        let bars = charts.iter().find(|c| title(c) == "Average power per test").unwrap();
        let trace = charts.iter().find(|c| title(c) == "Power over time, per test").unwrap();
        for c in [bars, trace] {
            assert!(c.contains(">0</text>") && c.contains(">500</text>") && !c.contains(">600</text>"));
        }
        // Repeats' spread as whiskers, explained in the legend.
        let iops = charts.iter().find(|c| title(c).starts_with("IOPS per test")).unwrap();
        assert_eq!(iops.matches("class=\"whisker\"").count(), 3);
        assert!(iops.contains("whisker: lowest to highest repeat"));
        // The table lists every percentile per test.
        for col in [
            "read p50 µs",
            "read p99 µs",
            "read p99.9 µs",
            "write p50 µs",
            "write p99 µs",
            "write p99.9 µs",
        ] {
            assert!(page.contains(&format!("<th>{col}</th>")), "{col}");
        }
    }

    #[test]
    fn the_memory_report_marks_the_peak_in_its_legend() {
        let page = memory().html();
        assert_well_formed_xml(&page);
        let charts = charts(&page);
        assert_eq!(charts.len(), 2);
        for c in &charts {
            assert_readable(c);
        }
        let stream = charts[0];
        assert!(stream.contains("memory bandwidth (GB/s, 10⁹ B/s)"));
        let legend = &stream[stream.find("class=\"legend\"").unwrap()..];
        assert!(legend.contains("theoretical peak (dimm-inventory): 460.8") && legend.contains("95% of peak"));
        assert_eq!(stream.matches("class=\"reference\"").count(), 2);
        assert!(charts[1].contains("power (W)") && charts[1].contains("time since the first run started (s)"));
    }

    #[test]
    fn a_document_with_only_headline_figures_still_renders_readable_charts() {
        let r = parse(r#"{"schema": "rftune.bench/v1", "kind": "storage", "storage": {"tests": [{"name": "randread", "iops": 1000.0}]}}"#).unwrap();
        let page = r.html();
        assert_well_formed_xml(&page);
        let charts = charts(&page);
        assert_eq!(
            charts.len(),
            2,
            "IOPS and bandwidth; no latency, power or traces to draw"
        );
        for c in &charts {
            assert_readable(c);
        }
    }

    #[test]
    fn the_markup_checks_catch_what_they_look_for() {
        if rftune_tests::on_path("python3") {
            let broken = std::panic::catch_unwind(|| assert_well_formed_xml("<svg><g></svg>"));
            assert!(broken.is_err(), "an unclosed element passed");
        }
        let bare = "<svg viewBox=\"0 0 720 100\" width=\"100%\"><title>t</title><text class=\"tick\">0</text></svg>";
        assert!(
            std::panic::catch_unwind(|| assert_readable(bare)).is_err(),
            "one tick label passed"
        );
    }
}
