//! The bench document as a self-contained HTML page (inline SVG, no external assets).

use super::BenchReport;
use super::chart::{bar_chart, esc, trace_chart};
use crate::fio;
use std::fmt::Write;

impl BenchReport {
    /// A self-contained HTML page (inline SVG, no external assets).
    pub fn html(&self) -> String {
        let mut body = String::new();
        let title = format!(
            "rftune {} benchmark{}",
            self.kind,
            self.label
                .as_ref()
                .map(|l| format!(" — {}", esc(l)))
                .unwrap_or_default()
        );
        let _ = write!(body, "<h1>{title}</h1>");
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
        body.push_str("<table>");
        for (k, v) in facts {
            let _ = write!(body, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
        }
        body.push_str("</table>");
        if !self.problems.is_empty() {
            body.push_str("<h2>Problems</h2><ul>");
            for p in &self.problems {
                let _ = write!(body, "<li>{}</li>", esc(p));
            }
            body.push_str("</ul>");
        }
        if let Some(s) = &self.storage {
            let iops: Vec<(String, f64)> = s.tests.iter().map(|t| (t.name.clone(), t.iops)).collect();
            let bw: Vec<(String, f64)> = s.tests.iter().map(|t| (t.name.clone(), t.bw_bytes / 1e6)).collect();
            body.push_str(&bar_chart("IOPS per test (median of repeats)", "IO/s", &iops, &[]));
            body.push_str(&bar_chart("Bandwidth per test", "MB/s", &bw, &[]));
            let ppw: Vec<(String, f64)> = s
                .tests
                .iter()
                .filter_map(|t| Some((t.name.clone(), t.iops_per_watt?)))
                .collect();
            if !ppw.is_empty() {
                body.push_str(&bar_chart("Performance per watt", "IO/s per W", &ppw, &[]));
            }
            for t in &s.tests {
                if let Some(r) = t.runs.first()
                    && (!r.power_trace.is_empty() || !r.iops_trace.is_empty())
                {
                    let power: Vec<(f64, f64)> = r.power_trace.iter().map(|p| (p.t_s, p.watts)).collect();
                    body.push_str(&trace_chart(
                        &format!("{}: power and IOPS over time", t.name),
                        &power,
                        &r.iops_trace,
                    ));
                }
            }
            body.push_str("<h2>Tests</h2><table><tr><th>test</th><th>IOPS</th><th>MB/s</th><th>read p99 µs</th><th>write p99 µs</th><th>W</th><th>IOPS/W</th><th>CV</th><th>valid</th></tr>");
            for t in &s.tests {
                let r = t.runs.first();
                let p99 = |l: Option<fio::Latency>| l.and_then(|l| l.p99_us).map_or("-".into(), |v| format!("{v:.1}"));
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{:.0}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&t.name),
                    t.iops,
                    t.bw_bytes / 1e6,
                    p99(r.and_then(|r| r.metrics.read_lat)),
                    p99(r.and_then(|r| r.metrics.write_lat)),
                    t.power_w.map_or("-".into(), |w| format!("{w:.0}")),
                    t.iops_per_watt.map_or("-".into(), |w| format!("{w:.1}")),
                    t.cv_iops.map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
                    if t.valid { "yes" } else { "NO" }
                );
            }
            body.push_str("</table>");
        }
        if let Some(m) = &self.memory {
            let bars: Vec<(String, f64)> = m.gbs.iter().map(|(k, v)| (k.clone(), *v)).collect();
            let ordered: Vec<(String, f64)> = crate::stream::KERNELS
                .iter()
                .filter_map(|k| bars.iter().find(|(n, _)| n == k).cloned())
                .collect();
            let refs: Vec<(String, f64)> = m
                .peak
                .iter()
                .flat_map(|p| [("peak".to_owned(), p.gbs), ("95% of peak".to_owned(), 0.95 * p.gbs)])
                .collect();
            body.push_str(&bar_chart(
                &format!("STREAM ({}) — Triad vs theoretical peak", m.variant),
                "GB/s",
                &ordered,
                &refs,
            ));
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
            if !m.power_trace.is_empty() {
                let power: Vec<(f64, f64)> = m.power_trace.iter().map(|p| (p.t_s, p.watts)).collect();
                body.push_str(&trace_chart("Power during STREAM", &power, &[]));
            }
        }
        if let Some(c) = &self.power_caveat {
            let _ = write!(body, "<p class=note>Power: {}.</p>", esc(c));
        }
        format!(
            "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{title}</title><style>\
             body{{font:14px system-ui,sans-serif;margin:2em;max-width:60em}}table{{border-collapse:collapse;margin:1em 0}}\
             td,th{{border:1px solid #ccc;padding:2px 8px;text-align:left}}svg{{display:block;margin:1em 0}}\
             .note{{color:#555}}</style></head><body>{body}</body></html>\n"
        )
    }
}
