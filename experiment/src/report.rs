//! The experiment's report: the `rftune.experiment/v1` JSON document, a self-contained HTML page
//! (inline SVG drawn with host-bench's chart module: each host's section leads with one chart of
//! every metric's change against the baseline and its 95% interval, coloured by verdict; then
//! per metric a bar per profile with its interval as whiskers, performance per watt among them,
//! and completion latency percentiles per test) and a text table. Results are read from the `rftune.bench/v1` documents the
//! steps produced, with host-bench's one reader of the format, which also reads documents an
//! older or newer rftune on the host wrote.

use crate::compare::{self, BenchComparison, Comparison, Interval, Method, Observation, Verdict, observations};
use crate::error::{Context, Result};
use crate::spec::Spec;
use crate::state::{Failure, State, StepOutcome};
use host_bench::chart::{
    self, BarChart, BarSeries, ChangeChart, ChangeRow, LegendEntry, Mark, SweepChart, SweepPoint, SweepSeries, esc,
};
use host_bench::fio::{DataDirection, Percentile};
use host_bench::report::BenchReport;
use rftune_engine::table::Table;
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Metrics drawn as charts (the tables show every metric).
const CHART_METRICS: &[&str] = &[
    "iops",
    "bandwidth",
    "power",
    "iops_per_watt",
    "mbps_per_watt",
    "gbs_per_watt",
];

pub use crate::compare::METHOD_NOTE;

/// The `rftune.experiment/v1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentReport {
    /// Always `rftune.experiment/v1`.
    pub schema: String,
    /// The experiment's name.
    pub name: String,
    /// The baseline profile.
    pub baseline: String,
    /// Every profile, baseline first.
    pub profiles: Vec<String>,
    /// The hosts.
    pub hosts: Vec<String>,
    /// How intervals and verdicts were computed.
    pub method: Method,
    /// The method in words.
    pub method_note: String,
    /// Per host, benchmark, test and metric.
    pub comparisons: Vec<Comparison>,
    /// BIOS values the OS contradicted.
    pub contradictions: Vec<Note>,
    /// Steps not benchmarked, with the reason.
    pub failures: Vec<Failure>,
    /// Results that could not be read.
    pub problems: Vec<String>,
    /// What the power figures are.
    pub power_caveat: String,
}

/// Something observed at one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// The host.
    pub host: String,
    /// The profile.
    pub profile: String,
    /// The step.
    pub step: usize,
    /// What.
    pub text: String,
}

/// Reads the `rftune.bench/v1` document at `path` with host-bench's reader, refusing a file over
/// [`rftune_engine::state::MAX_DOCUMENT_BYTES`]; errors name the file.
pub fn read_bench(path: &Path) -> Result<BenchReport> {
    let text = rftune_engine::state::read_capped(path, rftune_engine::state::MAX_DOCUMENT_BYTES, "bench results")?;
    host_bench::report::parse(&text).with_context(|| path.display().to_string())
}

/// The hosts a report has sections for: the spec's, in its order; with results measured on
/// every host at once (a file system's servers), that group's name in their place.
fn report_hosts(spec: &Spec, observations: &[Observation]) -> Vec<String> {
    let mut hosts: Vec<String> = spec.hosts.iter().map(|h| h.name.clone()).collect();
    if spec.benchmarks.filesystem.is_some() {
        hosts = vec![spec.together_name()];
    }
    for o in observations {
        if !hosts.contains(&o.host) {
            hosts.push(o.host.clone());
        }
    }
    hosts
}

/// Builds the report from observations (pure; [`from_state`] reads them from disk).
pub fn build(spec: &Spec, observations: &[Observation], method: Method) -> ExperimentReport {
    ExperimentReport {
        schema: crate::SCHEMA.to_owned(),
        name: spec.name().to_owned(),
        baseline: spec.baseline().to_owned(),
        profiles: spec.profiles.clone(),
        hosts: report_hosts(spec, observations),
        method,
        method_note: METHOD_NOTE.to_owned(),
        comparisons: compare::compare(observations, &spec.profiles, &method),
        contradictions: Vec::new(),
        failures: Vec::new(),
        problems: Vec::new(),
        power_caveat: host_bench::power::CAVEAT.to_owned(),
    }
}

/// The report of the experiment in `dir`: every finished step's results, contradictions and
/// failures. Unreadable result files are listed as problems, not fatal.
pub fn from_state(state: &State, dir: &Path, method: Method) -> ExperimentReport {
    let mut all = Vec::new();
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    // A document measured on every host at once is recorded on each: read it once, as theirs.
    let together = state.spec.together_name();
    let mut read = std::collections::BTreeSet::new();
    for (host, h) in &state.hosts {
        for rec in &h.steps {
            for text in &rec.contradictions {
                notes.push(Note {
                    host: host.clone(),
                    profile: rec.profile.clone(),
                    step: rec.step.index,
                    text: text.clone(),
                });
            }
            if rec.outcome != StepOutcome::Done {
                continue;
            }
            for rel in rec.results.iter().filter(|r| read.insert((*r).clone())) {
                match read_bench(&dir.join(rel)) {
                    Ok(doc) if doc.filesystem.is_some() => all.extend(observations(&doc, &together, &rec.profile)),
                    Ok(doc) => all.extend(observations(&doc, host, &rec.profile)),
                    Err(e) => problems.push(crate::error::report(&e)),
                }
            }
        }
    }
    let mut report = build(&state.spec, &all, method);
    report.contradictions = notes;
    report.failures = state.failures.clone();
    report.problems = problems;
    report
}

/// Writes `experiment.json` and `report.html` into `dir`; returns their paths.
pub fn write(dir: &Path, report: &ExperimentReport) -> Result<Vec<PathBuf>> {
    let json = dir.join("experiment.json");
    let html_path = dir.join("report.html");
    std::fs::write(&json, serde_json::to_vec_pretty(report)?).with_context(|| format!("writing {}", json.display()))?;
    std::fs::write(&html_path, html(report)).with_context(|| format!("writing {}", html_path.display()))?;
    Ok(vec![json, html_path])
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn fmt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |p| format!("{p:+.1}%"))
}

fn fmt_interval_pct(i: Option<Interval>) -> String {
    i.map_or("-".into(), |i| format!("[{:+.1}%, {:+.1}%]", i.low, i.high))
}

fn fmt_interval(i: Option<Interval>) -> String {
    i.map_or("-".into(), |i| format!("[{}, {}]", fmt_num(i.low), fmt_num(i.high)))
}

/// The text table: one row per host, test, metric and profile.
pub fn text(report: &ExperimentReport) -> String {
    let mut t = Table::new([
        "HOST",
        "TEST",
        "METRIC",
        "PROFILE",
        "N",
        "MEDIAN",
        "CHANGE",
        "BOOTSTRAP 95% (%)",
        "WELCH 95% (%)",
        "VERDICT",
    ]);
    for c in &report.comparisons {
        for p in &c.profiles {
            let change = c.change(&p.profile);
            t.row([
                c.host.clone(),
                format!("{} {}", c.kind, c.test),
                format!("{} ({})", c.metric, c.unit),
                p.profile.clone(),
                p.n.to_string(),
                fmt_num(p.median),
                change.map_or("baseline".into(), |ch| fmt_pct(ch.percent)),
                change.map_or(String::new(), |ch| fmt_interval_pct(ch.bootstrap_percent)),
                change.map_or(String::new(), |ch| fmt_interval_pct(ch.welch_percent)),
                change.map_or(String::new(), |ch| ch.verdict.as_str().to_owned()),
            ]);
        }
    }
    let mut out = t.render();
    let _ = writeln!(out, "\n{}", report.method_note);
    for n in &report.contradictions {
        let _ = writeln!(out, "{} step {} ({}): {}", n.host, n.step, n.profile, n.text);
    }
    for f in &report.failures {
        let _ = writeln!(out, "{} step {} ({}): skipped: {}", f.host, f.step, f.profile, f.reason);
    }
    for p in &report.problems {
        let _ = writeln!(out, "unreadable result: {p}");
    }
    out
}

/// `rftune bench compare`'s text: which document is A and which B, a row per test and metric,
/// and the method.
pub fn bench_comparison_text(c: &BenchComparison) -> String {
    let mut t = Table::new([
        "TEST",
        "METRIC",
        "A (N)",
        "B (N)",
        "CHANGE",
        "BOOTSTRAP 95% (%)",
        "WELCH 95% (%)",
        "VERDICT",
    ]);
    let side = |median: Option<f64>, n: usize| median.map_or("-".to_owned(), |m| format!("{m:.2} ({n})"));
    for ch in &c.changes {
        t.row([
            ch.test.clone(),
            format!("{} ({})", ch.metric, ch.unit),
            side(ch.a, ch.n_a),
            side(ch.b, ch.n_b),
            fmt_pct(ch.percent),
            fmt_interval_pct(ch.bootstrap_percent),
            fmt_interval_pct(ch.welch_percent),
            ch.verdict_text.clone(),
        ]);
    }
    format!("A = {}, B = {}\n{}\n{}\n", c.a, c.b, t.render(), c.method_note)
}

/// The colour of a profile's bar: grey for the baseline, else by verdict.
fn verdict_color(v: Option<Verdict>) -> &'static str {
    match v {
        None => "#8a8a8a",
        Some(Verdict::Better) => "#2e8b57",
        Some(Verdict::Worse) => "#c0392b",
        Some(Verdict::NoClearChange) => "#3b6fb6",
        Some(Verdict::TooFewRuns) => "#b0b8c4",
    }
}

/// What the whiskers of the comparison charts are.
fn median_interval_legend() -> LegendEntry {
    LegendEntry::new("95% bootstrap interval of the median", "#111", Mark::Whisker)
}

/// What the bar colours and whiskers of the comparison charts mean, for the verdicts shown.
fn verdict_legend(verdicts: &[Option<Verdict>], whiskers: bool) -> Vec<LegendEntry> {
    let mut out = Vec::new();
    for (v, label) in [
        (None, "baseline"),
        (Some(Verdict::Better), "better"),
        (Some(Verdict::Worse), "worse"),
        (Some(Verdict::NoClearChange), "no clear change"),
        (Some(Verdict::TooFewRuns), "too few runs to judge"),
    ] {
        if verdicts.contains(&v) {
            out.push(LegendEntry::new(label, verdict_color(v), Mark::Swatch));
        }
    }
    if whiskers {
        out.push(median_interval_legend());
    }
    out
}

/// One comparison as horizontal bars (median per profile, coloured by verdict) on a zero-based
/// axis in the metric's unit, with the bootstrap interval of each median as whiskers, the
/// change against the baseline beside each bar, and a legend of colours and whiskers.
fn chart(c: &Comparison) -> String {
    let verdicts: Vec<Option<Verdict>> = c
        .profiles
        .iter()
        .map(|p| c.change(&p.profile).map(|ch| ch.verdict))
        .collect();
    let whiskers: Vec<Option<(f64, f64)>> = c
        .profiles
        .iter()
        .map(|p| p.median_interval.map(|i| (i.low, i.high)))
        .collect();
    let notes: Vec<String> = c
        .profiles
        .iter()
        .map(|p| match c.change(&p.profile) {
            None => format!("baseline, n={}", p.n),
            Some(ch) => format!("{} {}, n={}", fmt_pct(ch.percent), ch.verdict.as_str(), p.n),
        })
        .collect();
    let any_whisker = whiskers.iter().any(Option::is_some);
    BarChart::new(
        format!("{} {}: {}", c.kind, c.test, c.metric.replace('_', " ")),
        format!("{} ({})", c.metric.replace('_', " "), c.unit),
        c.profiles.iter().map(|p| p.profile.clone()).collect(),
    )
    .series(
        BarSeries::new("median", 0, c.profiles.iter().map(|p| Some(p.median)).collect())
            .whiskers(whiskers)
            .fills(verdicts.iter().map(|v| Some(verdict_color(*v).to_owned())).collect()),
    )
    .notes(notes)
    .legend(verdict_legend(&verdicts, any_whisker))
    .render()
}

/// The chart a host's section leads with: every metric's change against the baseline, each
/// profile's a row, with its 95% bootstrap interval of the difference of medians, in percent of
/// the baseline's median, coloured by verdict. `None` when nothing was compared.
fn summary_chart(host: &str, comparisons: &[&Comparison], profiles: usize) -> Option<String> {
    let mut chart = ChangeChart::new(
        format!("{host}: every change against the baseline"),
        "change against the baseline (%), bar: 95% bootstrap interval",
    );
    let mut verdicts = Vec::new();
    let mut rows = 0;
    for c in comparisons {
        for ch in &c.changes {
            let Some(percent) = ch.percent else { continue };
            let mut label = format!("{} {}: {}", c.kind, c.test, c.metric.replace('_', " "));
            if profiles > 2 {
                label = format!("{label} ({})", ch.profile);
            }
            chart = chart.row(ChangeRow {
                label,
                change: percent,
                interval: ch.bootstrap_percent.map(|i| (i.low, i.high)),
                color: verdict_color(Some(ch.verdict)).to_owned(),
                value: format!("{} {}", fmt_pct(Some(percent)), ch.verdict.as_str()),
            });
            if !verdicts.contains(&Some(ch.verdict)) {
                verdicts.push(Some(ch.verdict));
            }
            rows += 1;
        }
    }
    (rows > 0).then(|| chart.legend(verdict_legend(&verdicts, false)).render())
}

/// The curves of a file-system suite, profile against profile: for each curve (a test's
/// operation) one chart of its value against the thread count, a line per profile through the
/// medians of its points with their bootstrap intervals (log scale for metadata rates, as the
/// suite's own report draws them).
fn curve_charts(comparisons: &[&Comparison], profiles: &[String]) -> Vec<String> {
    let mut curves: Vec<(&str, &str, &str)> = Vec::new();
    for c in comparisons {
        if let Some((curve, _)) = host_bench::report::split_point_test(&c.test)
            && ["bandwidth", "iops", "ops"].contains(&c.metric.as_str())
            && !curves.contains(&(curve, c.metric.as_str(), c.unit.as_str()))
        {
            curves.push((curve, &c.metric, &c.unit));
        }
    }
    curves
        .into_iter()
        .map(|(curve, metric, unit)| {
            let mut chart = SweepChart::new(
                format!("filesystem {curve}: {metric} against threads, by profile"),
                format!("{metric} ({unit})"),
            );
            if metric == "ops" {
                chart = chart.log_scale();
            }
            for (i, profile) in profiles.iter().enumerate() {
                let mut points: Vec<SweepPoint> = comparisons
                    .iter()
                    .filter(|c| c.metric == metric)
                    .filter_map(|c| {
                        let (name, threads) = host_bench::report::split_point_test(&c.test)?;
                        let p = c.profiles.iter().find(|p| &p.profile == profile)?;
                        (name == curve).then(|| SweepPoint {
                            x: threads,
                            y: p.median,
                            interval: p.median_interval.map(|iv| (iv.low, iv.high)),
                            hollow: false,
                        })
                    })
                    .collect();
                points.sort_by_key(|p| p.x);
                if !points.is_empty() {
                    chart = chart.series(SweepSeries::new(profile.clone(), i, points));
                }
            }
            chart.legend(vec![median_interval_legend()]).render()
        })
        .collect()
}

/// Completion latency percentiles of one test and direction (`read`, `write`) by profile:
/// p50, p99 and p99.9 medians with their bootstrap intervals, on a logarithmic axis.
fn latency_chart(comparisons: &[&Comparison], kind: &str, test: &str, direction: &str) -> Option<String> {
    let find = |pct: &str| {
        comparisons
            .iter()
            .find(|c| c.kind == kind && c.test == test && c.metric == format!("{direction}_{pct}"))
    };
    let found: Vec<(&str, &Comparison)> = Percentile::ALL
        .iter()
        .filter_map(|p| find(p.name()).map(|c| (p.name(), *c)))
        .collect();
    let (_, first) = found.first()?;
    let profiles: Vec<String> = first.profiles.iter().map(|p| p.profile.clone()).collect();
    let mut chart = BarChart::new(
        format!("{kind} {test}: {direction} completion latency by profile"),
        format!("completion latency ({})", first.unit),
        profiles.clone(),
    )
    .log_scale();
    let mut any_whisker = false;
    for (i, (pct, c)) in found.iter().enumerate() {
        let summary = |name: &str| c.profiles.iter().find(|p| p.profile == name);
        let whiskers: Vec<Option<(f64, f64)>> = profiles
            .iter()
            .map(|n| summary(n).and_then(|p| p.median_interval).map(|iv| (iv.low, iv.high)))
            .collect();
        any_whisker |= whiskers.iter().any(Option::is_some);
        chart = chart.series(
            BarSeries::new(*pct, i, profiles.iter().map(|n| summary(n).map(|p| p.median)).collect()).whiskers(whiskers),
        );
    }
    if any_whisker {
        chart = chart.legend(vec![median_interval_legend()]);
    }
    Some(chart.render())
}

/// The self-contained HTML page (no external assets).
pub fn html(report: &ExperimentReport) -> String {
    let mut body = String::new();
    let title = format!("rftune experiment — {}", report.name);
    let _ = write!(
        body,
        "<h1>{}</h1><p>Baseline <b>{}</b>; profiles {}; hosts {}.</p><p class=\"note\">{}</p>",
        esc(&title),
        esc(&report.baseline),
        esc(&report.profiles.join(", ")),
        esc(&report.hosts.join(", ")),
        esc(&format!(
            "{} Bootstrap: {} resamples, seed {}. Whiskers: bootstrap interval of each profile's median.",
            report.method_note, report.method.resamples, report.method.seed
        ))
    );
    for host in &report.hosts {
        let _ = write!(body, "<h2>{}</h2>", esc(host));
        let mine: Vec<&Comparison> = report.comparisons.iter().filter(|c| &c.host == host).collect();
        if mine.is_empty() {
            body.push_str("<p>No results.</p>");
            continue;
        }
        if let Some(svg) = summary_chart(host, &mine, report.profiles.len()) {
            body.push_str(&svg);
        }
        body.push_str("<div class=\"charts\">");
        for svg in curve_charts(&mine, &report.profiles) {
            body.push_str(&svg);
        }
        // A file-system point is drawn on its curve, not as bars of its own.
        let points = |c: &&&Comparison| host_bench::report::split_point_test(&c.test).is_some();
        for c in mine
            .iter()
            .filter(|c| CHART_METRICS.contains(&c.metric.as_str()) && !points(c))
        {
            body.push_str(&chart(c));
        }
        let mut tests: Vec<(&str, &str)> = Vec::new();
        for c in &mine {
            if !tests.contains(&(c.kind.as_str(), c.test.as_str())) {
                tests.push((&c.kind, &c.test));
            }
        }
        for (kind, test) in tests {
            for direction in DataDirection::BOTH {
                if let Some(svg) = latency_chart(&mine, kind, test, direction.name()) {
                    body.push_str(&svg);
                }
            }
        }
        // Every figure, folded away under the charts: a row per test, metric and profile is
        // long (some hundred rows per host) and the text output has the same table.
        let rows: usize = mine.iter().map(|c| c.profiles.len()).sum();
        let _ = write!(
            body,
            "</div><details><summary>Every figure on {} ({rows} rows): medians, changes, intervals, verdicts</summary>\
             <div class=\"scroll\"><table><tr><th>test</th><th>metric</th><th>profile</th><th>n</th><th>median</th>\
             <th>change</th><th>bootstrap 95%</th><th>Welch 95%</th><th>verdict</th></tr>",
            esc(host)
        );
        for c in &mine {
            for p in &c.profiles {
                let ch = c.change(&p.profile);
                let _ = write!(
                    body,
                    "<tr><td>{} {}</td><td>{} ({})</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                    esc(&c.kind),
                    esc(&c.test),
                    esc(&c.metric),
                    esc(&c.unit),
                    esc(&p.profile),
                    p.n,
                    fmt_num(p.median),
                    ch.map_or("baseline".into(), |ch| fmt_pct(ch.percent)),
                    ch.map_or(String::new(), |ch| fmt_interval_pct(ch.bootstrap_percent)),
                    ch.map_or(String::new(), |ch| esc(&fmt_interval(ch.welch))),
                    ch.map_or(String::new(), |ch| ch.verdict.as_str().to_owned()),
                );
            }
        }
        body.push_str("</table></div></details>");
    }
    if !report.contradictions.is_empty() || !report.failures.is_empty() || !report.problems.is_empty() {
        body.push_str("<h2>Notes</h2><ul>");
        for n in &report.contradictions {
            let _ = write!(
                body,
                "<li>{} step {} ({}): {}</li>",
                esc(&n.host),
                n.step,
                esc(&n.profile),
                esc(&n.text)
            );
        }
        for f in &report.failures {
            let _ = write!(
                body,
                "<li>{} step {} ({}): skipped — {}</li>",
                esc(&f.host),
                f.step,
                esc(&f.profile),
                esc(&f.reason)
            );
        }
        for p in &report.problems {
            let _ = write!(body, "<li>unreadable result: {}</li>", esc(p));
        }
        body.push_str("</ul>");
    }
    let _ = write!(body, "<p class=\"note\">Power: {}.</p>", esc(&report.power_caveat));
    chart::page(&title, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Direction;
    use crate::state::StepRecord;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[test]
    fn bench_comparison_text_names_the_sides_and_spells_each_row() {
        let c = BenchComparison {
            schema: compare::BENCH_COMPARE_SCHEMA.into(),
            a: "base".into(),
            b: "tuned".into(),
            method: Method::default(),
            method_note: METHOD_NOTE.into(),
            changes: vec![compare::BenchChange {
                test: "randread".into(),
                metric: "iops".into(),
                unit: "IO/s".into(),
                direction: Direction::HigherIsBetter,
                a: Some(1000.0),
                n_a: 3,
                b: Some(1100.0),
                n_b: 3,
                difference: 100.0,
                percent: Some(10.0),
                bootstrap_percent: Some(Interval { low: 5.0, high: 15.0 }),
                welch_percent: None,
                verdict: Verdict::Better,
                verdict_text: Verdict::Better.as_str().into(),
            }],
        };
        let text = bench_comparison_text(&c);
        assert!(text.starts_with("A = base, B = tuned\nTEST "), "{text}");
        let row = text.lines().find(|l| l.starts_with("randread")).unwrap();
        let cells: Vec<&str> = row.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
        assert_eq!(
            cells,
            [
                "randread",
                "iops (IO/s)",
                "1000.00 (3)",
                "1100.00 (3)",
                "+10.0%",
                "[+5.0%, +15.0%]",
                "-",
                "better"
            ],
            "{text}"
        );
        assert!(text.ends_with(&format!("\n{METHOD_NOTE}\n")), "{text}");
    }

    fn spec() -> Spec {
        Spec::parse(
            r#"
name = "nps"
profiles = ["base", "tuned"]
repeats = 3
[[hosts]]
name = "h1"
bmc = "http://127.0.0.1:1"
os = { transport = "local" }
[[hosts]]
name = "h2"
bmc = "http://127.0.0.1:2"
os = { transport = "local" }
[benchmarks.storage]
target = "/tmp/f"
"#,
        )
        .unwrap()
    }

    /// A minimal bench document in the lenient shape (not a full host-bench report).
    fn doc(iops: f64, watts: f64, triad: f64) -> serde_json::Value {
        json!({
            "schema": "rftune.bench/v1",
            "kind": "storage",
            "future_field": {"ignored": true},
            "storage": {"tests": [{"name": "randread", "iops": iops, "bw_bytes": iops * 4096.0,
                                   "power_w": watts, "iops_per_watt": iops / watts, "cv_iops": 0.01}]},
            "memory": {"gbs": {"Triad": triad}, "power_w": watts}
        })
    }

    fn read(doc: &serde_json::Value) -> host_bench::Result<BenchReport> {
        host_bench::report::parse(&doc.to_string())
    }

    #[test]
    fn lenient_documents_give_the_headline_figures() {
        let o = observations(&read(&doc(1000.0, 400.0, 30.0)).unwrap(), "h", "base");
        let find = |test: &str, metric: &str| o.iter().find(|x| x.test == test && x.metric == metric).unwrap();
        assert_eq!(find("randread", "iops").value, 1000.0);
        assert!((find("randread", "bandwidth").value - 4.096).abs() < 1e-12);
        assert_eq!(find("randread", "iops_per_watt").value, 2.5);
        assert_eq!(find("randread", "power").direction, Direction::LowerIsBetter);
        assert_eq!(find("Triad", "bandwidth").unit, "GB/s");
        assert!(o.iter().all(|x| !x.metric.starts_with("cv")));
        assert!(read(&json!({"schema": "x"})).is_err());
        let empty = read(&json!({"schema": "rftune.bench/v1"})).unwrap();
        assert!(observations(&empty, "h", "p").is_empty());
    }

    fn state_with_results(dir: &Path) -> State {
        let spec = spec();
        let plan = crate::schedule::plan(&spec);
        let mut st = State::new(spec);
        for (host, steps) in &plan {
            for s in steps {
                let profile = ["base", "tuned"][s.profile];
                // tuned: +20% IOPS on h1, unchanged on h2; a small spread between repeats.
                let spread = [0.0, 10.0, -10.0][s.repeat as usize];
                let iops = if host == "h1" && s.profile == 1 { 1200.0 } else { 1000.0 } + spread;
                let rel = PathBuf::from(format!("results/{host}/{}.json", s.index));
                std::fs::create_dir_all(dir.join(rel.parent().unwrap())).unwrap();
                std::fs::write(
                    dir.join(&rel),
                    serde_json::to_vec(&doc(iops, 400.0 + spread, 30.0)).unwrap(),
                )
                .unwrap();
                let skipped = host == "h2" && s.index == 5;
                st.record(
                    host,
                    StepRecord {
                        step: *s,
                        profile: profile.into(),
                        outcome: if skipped {
                            StepOutcome::Skipped
                        } else {
                            StepOutcome::Done
                        },
                        results: vec![rel],
                        bios: BTreeMap::new(),
                        os: None,
                        contradictions: if s.index == 0 && host == "h1" {
                            vec!["LogicalProc is Enabled but the OS reports SMT inactive".into()]
                        } else {
                            Vec::new()
                        },
                        reason: skipped.then(|| "apply failed: <job> failed".into()),
                        finished_at: "t".into(),
                    },
                )
                .unwrap();
            }
        }
        st
    }

    #[test]
    fn report_from_state_compares_per_host() {
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::remove_dir_all(&dir).ok();
        let st = state_with_results(&dir);
        let r = from_state(&st, &dir, Method::default());
        assert_eq!(r.schema, "rftune.experiment/v1");
        let iops = |host: &str| {
            r.comparisons
                .iter()
                .find(|c| c.host == host && c.test == "randread" && c.metric == "iops")
                .unwrap()
        };
        let h1 = iops("h1");
        assert_eq!(h1.profiles[0].median, 1000.0);
        assert_eq!(h1.profiles[1].median, 1200.0);
        assert_eq!(h1.changes[0].percent, Some(20.0));
        assert_eq!(h1.changes[0].verdict, Verdict::Better);
        let h2 = iops("h2");
        // h2's last step (tuned, repeat 2) was skipped: two tuned samples remain.
        assert_eq!(h2.profiles[1].n, 2);
        assert_eq!(h2.changes[0].verdict, Verdict::NoClearChange);
        assert_eq!(r.failures.len(), 1);
        assert_eq!(r.contradictions.len(), 1);
        assert!(r.problems.is_empty());

        let written = write(&dir, &r).unwrap();
        let back: ExperimentReport = serde_json::from_slice(&std::fs::read(&written[0]).unwrap()).unwrap();
        assert_eq!(
            (back.schema.as_str(), back.comparisons.len()),
            ("rftune.experiment/v1", r.comparisons.len())
        );
        assert_eq!(
            back.comparisons[2].changes[0].verdict,
            r.comparisons[2].changes[0].verdict
        );
        let page = std::fs::read_to_string(&written[1]).unwrap();
        assert!(
            page.starts_with("<!DOCTYPE html>") && page.contains("<svg") && !page.contains("http://www.w3.org/1999")
        );
        assert!(page.contains("+20.0%") && page.contains("better") && page.contains("SMT inactive"));
        assert!(!page.contains("<script") && !page.contains("src="));

        let table = text(&r);
        assert!(table.lines().next().unwrap().starts_with("HOST"));
        assert!(
            table.contains("baseline")
                && (table.contains("within noise") || table.contains("too few runs"))
                && table.contains("skipped")
        );

        // A result file that disappeared is a problem, not a failure of the report.
        std::fs::remove_file(dir.join("results/h1/0.json")).unwrap();
        let r = from_state(&st, &dir, Method::default());
        assert_eq!(r.problems.len(), 1);
        std::fs::remove_dir_all(dir).ok();
    }

    /// The value of attribute `name` in the element text `el`.
    fn attr(el: &str, name: &str) -> f64 {
        let key = format!(" {name}=\"");
        let start = el.find(&key).unwrap_or_else(|| panic!("{name} missing in {el}")) + key.len();
        el[start..start + el[start..].find('"').unwrap()].parse().unwrap()
    }

    /// A box on the chart: x0, x1, y0, y1.
    type Box2 = (f64, f64, f64, f64);

    /// Boxes of a change chart's text and of its marks (interval bars and dots).
    fn boxes(svg: &str) -> (Vec<Box2>, Vec<Box2>) {
        let (mut text, mut marks) = (Vec::new(), Vec::new());
        for (i, _) in svg.match_indices("<g class=\"change-row\">") {
            let row = &svg[i..i + svg[i..].find("</g>").unwrap()];
            for (j, _) in row.match_indices("<text ") {
                let el = &row[j..j + row[j..].find('>').unwrap()];
                let (x, y, w, size) = (
                    attr(el, "x"),
                    attr(el, "y"),
                    attr(el, "data-width"),
                    attr(el, "font-size"),
                );
                let x0 = if el.contains("text-anchor=\"end\"") { x - w } else { x };
                // From the ascender to the descender of the font's em around the baseline.
                text.push((x0, x0 + w, y - 0.93 * size, y + 0.24 * size));
            }
            for (j, _) in row.match_indices("<line class=\"interval\"") {
                let el = &row[j..j + row[j..].find('>').unwrap()];
                let y = attr(el, "y1");
                marks.push((attr(el, "x1"), attr(el, "x2"), y - 1.0, y + 1.0));
            }
            for (j, _) in row.match_indices("<circle class=\"dot\"") {
                let el = &row[j..j + row[j..].find('>').unwrap()];
                let (cx, cy) = (attr(el, "cx"), attr(el, "cy"));
                marks.push((cx - 4.0, cx + 4.0, cy - 4.0, cy + 4.0));
            }
        }
        (text, marks)
    }

    #[test]
    fn the_summary_chart_puts_no_label_on_an_interval_bar() {
        // Long names, intervals from -300% to +900%, changes at both ends of the axis.
        let mut s = spec();
        s.profiles = vec!["base".into(), "tuned-with-a-long-name".into(), "third".into()];
        let mut obs = Vec::new();
        let tests = [
            "randread",
            "randrw70",
            "seqwrite",
            "n-to-1 write at 512 threads of a long sweep",
        ];
        for (k, test) in tests.iter().enumerate() {
            for (p, profile) in s.profiles.iter().enumerate() {
                for r in 0..3 {
                    let spread = [1.0, 12.0, -9.0][r] * (k as f64 + 1.0) * 3.0;
                    let value = 100.0 * [1.0, 4.0 + k as f64, 0.1][p] + spread;
                    for metric in ["iops", "write_p99.9_completion_latency_in_microseconds"] {
                        obs.push(Observation {
                            host: "h1".into(),
                            profile: profile.clone(),
                            kind: "storage".into(),
                            test: (*test).into(),
                            metric: metric.into(),
                            unit: "IO/s".into(),
                            direction: Direction::of_metric(metric),
                            value,
                        });
                    }
                }
            }
        }
        let r = build(&s, &obs, Method::default());
        let page = html(&r);
        let charts = rftune_tests::markup::charts(&page);
        let summary = charts
            .iter()
            .find(|c| rftune_tests::markup::chart_title(c) == "h1: every change against the baseline")
            .expect("the host's section leads with its summary");
        assert!(
            page.find(summary).unwrap() < page.find("storage randread: iops").unwrap(),
            "the summary comes first"
        );
        rftune_tests::markup::assert_well_formed_xml(summary);
        let (text, marks) = boxes(summary);
        assert_eq!(
            text.len(),
            2 * tests.len() * 2 * 2,
            "a name and a value per metric, test and profile"
        );
        assert_eq!(
            marks.iter().filter(|m| m.3 - m.2 < 3.0).count(),
            text.len() / 2,
            "an interval per row"
        );
        for t in &text {
            assert!(t.0 >= 0.0 && t.1 <= 720.0, "text outside the chart: {t:?}");
            for m in &marks {
                let overlap = t.0 < m.1 && m.0 < t.1 && t.2 < m.3 && m.2 < t.3;
                assert!(!overlap, "text {t:?} falls on a mark {m:?}");
            }
        }
        for verdict in [">better<", ">worse<"] {
            assert!(summary.contains(verdict), "{verdict} in the legend");
        }
        assert!(summary.contains("(tuned-with-a-long-name)") || summary.contains('…'));
    }

    #[test]
    fn html_escapes_names() {
        let mut s = spec();
        s.profiles = vec!["<b>".into(), "x&y".into()];
        s.name = Some("a\"b".into());
        let r = build(&s, &[], Method::default());
        let page = html(&r);
        assert!(page.contains("&lt;b&gt;") && page.contains("x&amp;y") && page.contains("a&quot;b"));
        assert!(!page.contains("<b>,"));
    }

    #[test]
    fn the_page_has_readable_charts_verdict_legends_and_latency_percentiles_per_test() {
        use rftune_tests::markup::{assert_readable, assert_well_formed_xml, chart_title, charts};
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::remove_dir_all(&dir).ok();
        let st = state_with_results(&dir);
        // Latency percentiles as a real document carries them, per repeat.
        let mut obs = Vec::new();
        for (host, h) in &st.hosts {
            for rec in &h.steps {
                let mut d = doc(1000.0, 400.0, 30.0);
                let p50 = if rec.profile == "tuned" { 80.0 } else { 100.0 } + rec.step.index as f64;
                d["storage"]["tests"][0]["runs"] = json!([{"metrics": {"iops": 1000.0,
                    "read_lat": {"mean_us": p50, "p50_us": p50, "p99_us": p50 * 4.0, "p99_9_us": p50 * 12.0}}}]);
                obs.extend(observations(&read(&d).unwrap(), host, &rec.profile));
            }
        }
        let r = build(&st.spec, &obs, Method::default());
        let page = html(&r);
        std::fs::remove_dir_all(dir).ok();
        assert_well_formed_xml(&page);
        assert!(page.contains("<meta name=\"viewport\"") && page.contains("grid-template-columns"));
        let charts = charts(&page);
        assert!(!charts.is_empty());
        for c in &charts {
            assert_readable(c);
        }
        let titles: Vec<&str> = charts.iter().map(|c| chart_title(c)).collect();
        // Per host: IOPS with its unit and a legend of what the colours and whiskers mean.
        let iops = charts
            .iter()
            .find(|c| chart_title(c) == "storage randread: iops")
            .unwrap();
        assert!(iops.contains("iops (IO/s)"));
        let legend = &iops[iops.find("class=\"legend\"").unwrap()..];
        assert!(legend.contains(">baseline<") && legend.contains("95% bootstrap interval of the median"));
        assert!(iops.contains("baseline, n=3"));
        // The latency chart of each host lists p50, p99 and p99.9 for every profile.
        let latency: Vec<&&str> = charts
            .iter()
            .filter(|c| chart_title(c) == "storage randread: read completion latency by profile")
            .collect();
        assert_eq!(latency.len(), 2, "one per host: {titles:?}");
        for c in latency {
            let legend = &c[c.find("class=\"legend\"").unwrap()..];
            for p in [">p50<", ">p99<", ">p99.9<"] {
                assert!(legend.contains(p), "{p}");
            }
            assert!(c.contains(">base<") && c.contains(">tuned<"));
            assert_eq!(
                c.matches("class=\"value\"").count(),
                2 * 3,
                "three percentiles per profile"
            );
            assert!(c.contains("log scale"));
        }
        assert!(
            !titles.iter().any(|t| t.contains("write completion")),
            "no write latency was measured"
        );
    }
}
