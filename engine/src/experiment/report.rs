//! The experiment's report: the `rftune.experiment/v1` JSON document, a self-contained HTML page
//! (inline SVG: per metric a bar per profile with its interval as whiskers, performance per
//! watt among them) and a text table. Results are read from the `rftune.bench/v1` documents the
//! steps produced, with host-bench's one reader of the format, which also reads documents an
//! older or newer rftune on the host wrote.

use super::compare::{self, Comparison, Direction, Interval, Method, Observation, Verdict};
use super::spec::Spec;
use super::state::{Failure, State, StepOutcome};
use crate::error::{Context, Result};
use crate::table::Table;
use host_bench::report::BenchReport;
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Metrics drawn as charts (the tables show every metric).
pub const CHART_METRICS: &[&str] = &[
    "iops",
    "bandwidth",
    "power",
    "iops_per_watt",
    "mbps_per_watt",
    "gbs_per_watt",
];

/// Said in every report next to the intervals.
pub const METHOD_NOTE: &str = "Intervals are 95% intervals of the difference against the baseline, both in percent of \
     the baseline's median: a seeded percentile bootstrap of the difference of medians, and Welch's t interval of the \
     difference of means. One rule gives every verdict: better or worse only when both intervals exclude zero on the \
     same side; \"within noise\" when either includes zero; \"too few runs\" below two runs a side. Comparisons are \
     per host.";

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
/// [`crate::state::MAX_DOCUMENT_BYTES`]; errors name the file.
pub fn read_bench(path: &Path) -> Result<BenchReport> {
    let text = crate::state::read_capped(path, crate::state::MAX_DOCUMENT_BYTES, "bench results")?;
    host_bench::report::parse(&text).with_context(|| path.display().to_string())
}

/// The observations in one bench document: its figures (host-bench's definition), without the
/// coefficients of variation, which describe a document's repeats, not the host.
pub fn observations(doc: &BenchReport, host: &str, profile: &str) -> Vec<Observation> {
    doc.figures()
        .into_iter()
        .filter(|f| !f.metric.starts_with("cv"))
        .map(|f| Observation {
            host: host.to_owned(),
            profile: profile.to_owned(),
            kind: doc.kind.clone(),
            test: f.test,
            metric: f.metric,
            unit: f.unit,
            direction: Direction::from_higher_is_better(f.higher_is_better),
            value: f.value,
        })
        .collect()
}

/// Builds the report from observations (pure; [`from_state`] reads them from disk).
pub fn build(spec: &Spec, observations: &[Observation], method: Method) -> ExperimentReport {
    ExperimentReport {
        schema: super::SCHEMA.to_owned(),
        name: spec.name().to_owned(),
        baseline: spec.baseline().to_owned(),
        profiles: spec.profiles.clone(),
        hosts: spec.hosts.iter().map(|h| h.name.clone()).collect(),
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
            for rel in &rec.results {
                match read_bench(&dir.join(rel)) {
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
            let change = c.changes.iter().find(|ch| ch.profile == p.profile);
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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One comparison as horizontal bars (median per profile) with the bootstrap interval of each
/// median as whiskers and the change against the baseline beside each bar.
pub fn chart(c: &Comparison) -> String {
    let (w, label_w, row, right) = (640.0, 150.0, 26.0, 170.0);
    let h = 34.0 + row * c.profiles.len() as f64 + 8.0;
    let max = c
        .profiles
        .iter()
        .map(|p| p.median_interval.map_or(p.median, |i| i.high.max(p.median)))
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let scale = (w - label_w - right) / max;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" role=\"img\"><title>{t}</title>\
         <text x=\"0\" y=\"16\" font-weight=\"bold\">{t}</text>",
        t = esc(&format!("{} {} — {} ({})", c.kind, c.test, c.metric, c.unit))
    );
    for (i, p) in c.profiles.iter().enumerate() {
        let y = 26.0 + row * i as f64;
        let change = c.changes.iter().find(|ch| ch.profile == p.profile);
        let fill = match change.map(|ch| ch.verdict) {
            None => "#888",
            Some(Verdict::Better) => "#2e8b57",
            Some(Verdict::Worse) => "#c33",
            Some(Verdict::NoClearChange | Verdict::TooFewRuns) => "#4a7ebb",
        };
        let bw = p.median.max(0.0) * scale;
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{ty}\">{n}</text><rect x=\"{label_w}\" y=\"{y}\" width=\"{bw:.1}\" height=\"{bh}\" fill=\"{fill}\"/>",
            ty = y + 15.0,
            n = esc(&p.profile),
            bh = row - 8.0,
        );
        if let Some(iv) = p.median_interval {
            let (x1, x2, ym) = (
                label_w + iv.low.max(0.0) * scale,
                label_w + iv.high.max(0.0) * scale,
                y + (row - 8.0) / 2.0,
            );
            let _ = write!(
                s,
                "<line x1=\"{x1:.1}\" y1=\"{ym:.1}\" x2=\"{x2:.1}\" y2=\"{ym:.1}\" stroke=\"#000\"/>\
                 <line x1=\"{x1:.1}\" y1=\"{a:.1}\" x2=\"{x1:.1}\" y2=\"{b:.1}\" stroke=\"#000\"/>\
                 <line x1=\"{x2:.1}\" y1=\"{a:.1}\" x2=\"{x2:.1}\" y2=\"{b:.1}\" stroke=\"#000\"/>",
                a = ym - 5.0,
                b = ym + 5.0
            );
        }
        let label = match change {
            None => format!("{} (baseline, n={})", fmt_num(p.median), p.n),
            Some(ch) => format!(
                "{} {} {}",
                fmt_num(p.median),
                fmt_pct(ch.percent),
                if ch.verdict == Verdict::NoClearChange {
                    String::new()
                } else {
                    ch.verdict.as_str().to_owned()
                }
            ),
        };
        let _ = write!(
            s,
            "<text x=\"{tx:.1}\" y=\"{ty}\" font-size=\"12\">{l}</text>",
            tx = w - right + 6.0,
            ty = y + 15.0,
            l = esc(label.trim_end())
        );
    }
    s.push_str("</svg>");
    s
}

/// The self-contained HTML page (no external assets).
pub fn html(report: &ExperimentReport) -> String {
    let mut body = String::new();
    let title = format!("rftune experiment — {}", esc(&report.name));
    let _ = write!(
        body,
        "<h1>{title}</h1><p>Baseline <b>{}</b>; profiles {}; hosts {}.</p><p class=note>{}</p>",
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
        body.push_str("<div class=charts>");
        for c in mine.iter().filter(|c| CHART_METRICS.contains(&c.metric.as_str())) {
            body.push_str(&chart(c));
        }
        body.push_str(
            "</div><table><tr><th>test</th><th>metric</th><th>profile</th><th>n</th><th>median</th>\
             <th>change</th><th>bootstrap 95%</th><th>Welch 95%</th><th>verdict</th></tr>",
        );
        for c in &mine {
            for p in &c.profiles {
                let ch = c.changes.iter().find(|ch| ch.profile == p.profile);
                let _ = write!(
                    body,
                    "<tr><td>{} {}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
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
        body.push_str("</table>");
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
    let _ = write!(body, "<p class=note>Power: {}.</p>", esc(&report.power_caveat));
    format!(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{title}</title><style>\
         body{{font:14px system-ui,sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse;margin:1em 0}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}svg{{display:block;margin:1em 0}}\
         .charts{{display:flex;flex-wrap:wrap;gap:0 2em}}.note{{color:#555}}</style></head><body>{body}</body></html>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::state::StepRecord;
    use serde_json::json;
    use std::collections::BTreeMap;

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
        let plan = crate::experiment::schedule::plan(&spec);
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
        let dir = std::env::temp_dir().join(format!("rftune-exp-report-{}", std::process::id()));
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
}
