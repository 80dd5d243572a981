//! The file-system run in the HTML report: its configuration among the facts at the top (file
//! system and mount options, sizes, clients with kernel and CPU, BMCs and BIOS profile), then
//! per test one chart of every operation against the thread count (log scale for metadata)
//! with peaks and plateaus marked, one of work per watt when power was read, and a table of
//! every point.

use super::filesystem::{Curve, FileSystemBench, PLATEAU_TOLERANCE};
use crate::chart::{LegendEntry, Mark, SweepChart, SweepPoint, SweepSeries, esc, format_value};
use crate::filesystem::{Method, Op, Test};
use crate::units::{approx_size, format_size};
use std::fmt::Write;

/// The dash of a metadata curve by file size (none for empty files).
fn dash(file_size: Option<u64>, sizes: &[u64]) -> Option<&'static str> {
    const DASHES: [&str; 3] = ["6 3", "2 3", "8 3 2 3"];
    let i = sizes.iter().position(|s| Some(*s) == file_size)?;
    if sizes[i] == 0 {
        return None;
    }
    let nonzero_before = sizes[..i].iter().filter(|s| **s > 0).count();
    Some(DASHES[nonzero_before % DASHES.len()])
}

/// A curve's colour: by operation, the same in every chart.
fn color_index(op: Op) -> usize {
    match op {
        Op::Write | Op::Create => 0,
        Op::Read => 1,
        Op::Stat => 2,
        Op::Remove => 3,
    }
}

/// The configuration rows of the facts table.
pub(super) fn facts(f: &FileSystemBench, label: Option<&str>) -> Vec<(String, String)> {
    let fs = &f.file_system;
    let s = &f.sizes;
    let mut rows = vec![
        (
            "File system".to_owned(),
            format!("{} ({} mounted at {})", fs.fs_type, fs.source, fs.mount_point),
        ),
        ("Mount options".into(), fs.options.clone()),
        ("Target".into(), f.target.clone()),
        (
            "Method".into(),
            match f.method {
                Some(Method::Quick) => "quick mode: sizes scaled down for a small machine".into(),
                _ => "the published method's sizes (where not overridden)".into(),
            },
        ),
        (
            "Sizes".into(),
            format!(
                "{} of data per step in {} records; random: {} transfers, {} or {} s per operation; metadata: {} files, \
                 {} a directory, of {}",
                format_size(s.data_bytes),
                format_size(s.record_bytes),
                format_size(s.random_record_bytes),
                format_size(s.random_io_bytes),
                s.random_runtime_s,
                s.md_files,
                s.md_files_per_dir,
                s.md_file_sizes
                    .iter()
                    .map(|b| format_size(*b))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (
            "Sweep".into(),
            format!(
                "{} threads, {} repeat{} each{}",
                f.threads.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                f.repeat,
                if f.repeat == 1 { "" } else { "s" },
                if f.oversubscribe {
                    "; more threads than cores allowed"
                } else {
                    ""
                }
            ),
        ),
        (
            "Cache-affected below".into(),
            format!(
                "{}: twice the largest RAM of the clients and the servers given",
                approx_size(f.cache_limit_bytes)
            ),
        ),
        ("fio".into(), f.fio_version.clone().unwrap_or_default()),
    ];
    for c in &f.clients {
        let h = &c.host;
        rows.push((
            format!("Client {}", c.name),
            format!(
                "{} · {} · {} cores / {} CPUs · {} RAM · kernel {}",
                h.hostname.clone().unwrap_or_default(),
                h.cpu_model.clone().unwrap_or_default(),
                h.cores,
                h.logical_cpus,
                h.memory_bytes.map_or("unknown".into(), approx_size),
                h.kernel.clone().unwrap_or_default()
            ),
        ));
    }
    for b in &f.bmcs {
        rows.push((
            format!("Server {}", b.host),
            format!(
                "{} ({}) · BIOS {} · iDRAC {}",
                b.model.clone().unwrap_or_default(),
                b.service_tag.clone().unwrap_or_default(),
                b.bios_version.clone().unwrap_or_default(),
                b.idrac_firmware.clone().unwrap_or_default()
            ),
        ));
    }
    rows.push(("BIOS profile".into(), bios_profile(f, label)));
    rows
}

/// The BIOS profile in force: the run's label and each server's `SysProfile`.
pub fn bios_profile(f: &FileSystemBench, label: Option<&str>) -> String {
    let servers: Vec<String> = f
        .bmcs
        .iter()
        .map(|b| {
            let profile = b
                .bios_attributes
                .get("SysProfile")
                .and_then(|v| v.as_str())
                .unwrap_or("not reported");
            format!("SysProfile {profile} on {}", b.host)
        })
        .collect();
    let servers = if servers.is_empty() {
        "the servers' SysProfile not read (no --bmc)".to_owned()
    } else {
        servers.join("; ")
    };
    match label {
        Some(l) => format!("{l}; {servers}"),
        None => servers,
    }
}

/// The charts and tables of every test.
pub(super) fn section(body: &mut String, f: &FileSystemBench) {
    body.push_str("<h2>File system</h2>");
    let _ = write!(
        body,
        "<p class=\"note\">Each point is the median of its repeats, its whisker the 95% bootstrap interval of that \
         median. A curve's peak (▼) is its highest median; its plateau (band) starts at the first thread count from \
         which every point to the end of the sweep stays within {:.0}% of the peak, and its level is the lowest median \
         there (the sustained figure). Hollow points are cache-affected: their data set was under twice the largest \
         RAM ({}), so caches may have answered.</p>",
        PLATEAU_TOLERANCE * 100.0,
        approx_size(f.cache_limit_bytes)
    );
    for test in &f.tests {
        let curves: Vec<&Curve> = f.curves.iter().filter(|c| c.test == *test).collect();
        let Some(first) = curves.first() else { continue };
        let measure = first.measure();
        let _ = write!(
            body,
            "<h3>{} <span class=\"note\">(as {})</span></h3><div class=\"charts\">",
            esc(test.title()),
            esc(test.published())
        );
        let legend = vec![
            LegendEntry::new("peak", "#555", Mark::Triangle),
            LegendEntry::new(
                format!("plateau (within {:.0}%)", PLATEAU_TOLERANCE * 100.0),
                "#555",
                Mark::Band,
            ),
            LegendEntry::new("cache-affected", "#555", Mark::Ring),
        ];
        let mut chart = SweepChart::new(
            format!("{}: {} against threads", test.title(), measure.title()),
            format!("{} ({})", measure.title(), measure.unit()),
        )
        .legend(legend.clone());
        if *test == Test::Metadata {
            chart = chart.log_scale();
        }
        let (_, per_watt_unit) = measure.per_watt();
        let mut watts = SweepChart::new(
            format!("{}: work per watt against threads", test.title()),
            format!("{} per watt ({per_watt_unit})", measure.title()),
        )
        .legend(vec![LegendEntry::new("cache-affected", "#555", Mark::Ring)]);
        if *test == Test::Metadata {
            watts = watts.log_scale();
        }
        let mut any_power = false;
        for c in &curves {
            let style = |s: SweepSeries| match dash(c.file_size, &f.sizes.md_file_sizes) {
                Some(d) => s.dash(d),
                None => s,
            };
            let points = c
                .points
                .iter()
                .map(|p| SweepPoint {
                    x: p.threads,
                    y: p.value,
                    interval: p.interval.map(|i| (i.low, i.high)),
                    hollow: p.cache_affected,
                })
                .collect();
            chart = chart.series(style(SweepSeries::new(c.label(), color_index(c.op), points)).marks(
                c.peak.map(|p| (p.threads, p.value)),
                c.plateau.map(|p| (p.from_threads, p.to_threads, p.level)),
            ));
            let per_watt: Vec<SweepPoint> = c
                .points
                .iter()
                .filter_map(|p| {
                    Some(SweepPoint {
                        x: p.threads,
                        y: p.per_watt?,
                        interval: None,
                        hollow: p.cache_affected,
                    })
                })
                .collect();
            any_power |= !per_watt.is_empty();
            watts = watts.series(style(SweepSeries::new(c.label(), color_index(c.op), per_watt)));
        }
        body.push_str(&chart.render());
        if any_power {
            body.push_str(&watts.render());
        }
        body.push_str("</div>");
        table(body, &curves);
    }
}

/// Every point of a test's curves.
fn table(body: &mut String, curves: &[&Curve]) {
    body.push_str(
        "<div class=\"scroll\"><table><tr><th>operation</th><th>threads</th><th>per client</th><th>median</th>\
         <th>95% interval</th><th>lowest – highest</th><th>repeats</th><th>W</th><th>per W</th><th>notes</th></tr>",
    );
    for c in curves {
        for p in &c.points {
            let mut notes = Vec::new();
            if p.cache_affected {
                notes.push(format!("cache-affected ({} data set)", approx_size(p.data_set_bytes)));
            }
            if p.oversubscribed {
                notes.push("more threads than cores".to_owned());
            }
            if c.peak.is_some_and(|k| k.threads == p.threads) {
                notes.push("peak".to_owned());
            }
            if c.plateau.is_some_and(|k| k.from_threads == p.threads) {
                notes.push("plateau starts".to_owned());
            }
            if !p.valid {
                notes.push("NOT VALID".to_owned());
            }
            let _ = write!(
                body,
                "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{} {}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{} – {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td{}>{}</td></tr>",
                esc(&c.label()),
                p.threads,
                esc(&p
                    .threads_per_client
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(" + ")),
                format_value(p.value),
                esc(&c.unit),
                p.interval.map_or("-".into(), |i| format!(
                    "{} – {}",
                    format_value(i.low),
                    format_value(i.high)
                )),
                format_value(p.min),
                format_value(p.max),
                p.runs.len(),
                p.power_w.map_or("-".into(), |w| format!("{w:.0}")),
                p.per_watt.map_or("-".into(), format_value),
                if p.valid { "" } else { " class=\"bad\"" },
                esc(&notes.join("; "))
            );
        }
    }
    body.push_str("</table></div>");
}
