//! `rftune power`: one power reading, or sampling at a fixed interval on the client's clock,
//! from the best source the BMC offers (EnvironmentMetrics, else PowerControl), of one host or
//! every host of an inventory at once; and
//! `rftune power on|off|cycle`, which switches hosts through the engine, each switch recorded in
//! the audit log.

use crate::Exit;
use crate::args::OutputFormat;
use crate::args::power::{PowerAction as PowerArg, PowerArgs, PowerFormat};
use crate::documents;
use crate::render::{self, Table};
use anyhow::Result;
use host_bench::power::{PowerReport, SCHEMA};
use rftune_engine::fleet::HostResult;
use rftune_engine::lifecycle::Access;
use rftune_engine::meter::Readings;
use rftune_engine::state::StateDirs;
use rftune_engine::switch::{PowerAction, Switch, SwitchOptions};
use std::sync::Arc;

/// Runs `rftune power`.
pub async fn run(args: &PowerArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    if let Some(action) = &args.action {
        return control(action, dirs, output).await;
    }
    if args.target.bmc.is_none() && args.target.inventory.is_none() && std::env::var_os("RFTUNE_BMC").is_none() {
        anyhow::bail!("rftune power needs --bmc URL or --inventory FILE to read, or a subcommand: on, off, cycle");
    }
    let hosts = crate::config::Hosts::of(&args.target)?;
    let format = args.format.unwrap_or(match output {
        OutputFormat::Json => PowerFormat::Json,
        _ => PowerFormat::Table,
    });
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let readings = Arc::new(Readings {
        interval: args.interval,
        duration: args.duration,
    });
    // Progress only beside a table: the other formats are read by programs.
    let shown = if format == PowerFormat::Table {
        output
    } else {
        OutputFormat::Json
    };
    if hosts.single {
        let entry = &hosts.entries[0];
        let progress = Arc::new(render::Progress::spinner(shown));
        let access = Access::new(connect, dirs.clone(), progress.clone());
        let report = access.one(entry, None, &*readings).await;
        progress.finish();
        let report = report?;
        match format {
            PowerFormat::Json => render::json(&report)?,
            PowerFormat::Csv => render::text(&report.csv())?,
            PowerFormat::Prometheus => render::text(&report.prometheus())?,
            PowerFormat::Table => render::text(&table(&report))?,
        }
        return Ok(Exit::Success);
    }
    let results = hosts.run("power", connect, dirs, None, readings, shown).await;
    let (doc, failed) = documents::action_document(SCHEMA, &results, None);
    let reports: Vec<&PowerReport> = results.iter().filter_map(|r| r.result.as_ref().ok()).collect();
    match format {
        PowerFormat::Json => render::json(&doc)?,
        PowerFormat::Csv => {
            let rows: String = reports
                .iter()
                .flat_map(|r| r.csv().lines().skip(1).map(|l| format!("{l}\n")).collect::<Vec<_>>())
                .collect();
            render::text(&format!("host,sensor,t_s,watts\n{rows}"))?;
        }
        PowerFormat::Prometheus => {
            let texts: Vec<String> = reports.iter().map(|r| r.prometheus()).collect();
            render::text(&merge_expositions(&texts))?;
        }
        PowerFormat::Table => render::text(&fleet_table(&reports, &results))?,
    }
    if format != PowerFormat::Table && failed > 0 {
        // The error lines of a table go to stdout with it; beside a program's format, stderr.
        note!("{}", render::group::failures(&results).trim_end());
    }
    documents::action_exit(failed, results.len(), 0, None)
}

/// A fleet's readings: one row per host read (one reading, or the window's statistics), the
/// total, and the failures grouped.
fn fleet_table(reports: &[&PowerReport], results: &[HostResult<PowerReport>]) -> String {
    let sampled = reports.iter().any(|r| r.stats.n > 1);
    let mut t = if sampled {
        Table::new(["HOST", "SENSOR", "READINGS", "MIN W", "MAX W", "MEAN W", "ENERGY J"])
    } else {
        Table::new(["HOST", "SENSOR", "WATTS"])
    };
    for r in reports {
        let s = &r.stats;
        if sampled {
            t.row([
                r.host.clone(),
                r.sensor.as_str().to_owned(),
                s.n.to_string(),
                format!("{:.0}", s.min_w),
                format!("{:.0}", s.max_w),
                format!("{:.1}", s.mean_w),
                format!("{:.0}", s.energy_j),
            ]);
        } else {
            t.row([r.host.clone(), r.sensor.as_str().to_owned(), format!("{}", s.mean_w)]);
        }
    }
    let mut out = if reports.is_empty() { String::new() } else { t.render() };
    let total: f64 = reports.iter().map(|r| r.stats.mean_w).sum();
    out.push_str(&format!(
        "{} hosts: {} read{}, {} failed\n",
        results.len(),
        reports.len(),
        if reports.is_empty() {
            String::new()
        } else {
            format!(
                " ({total:.0} W in all{})",
                if sampled { ", by their means" } else { "" }
            )
        },
        results.len() - reports.len()
    ));
    out.push_str(&render::group::failures(results));
    if let Some(r) = reports.first() {
        out.push_str(&format!("Note: {}.\n", r.caveat));
    }
    out
}

/// Several hosts' expositions as one: each family announced once (its `# HELP` and `# TYPE`),
/// with every host's samples under it, in the order families first appear.
fn merge_expositions(texts: &[String]) -> String {
    let mut families: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    for text in texts {
        let mut current: Option<usize> = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ").or_else(|| line.strip_prefix("# TYPE ")) {
                let name = rest.split_whitespace().next().unwrap_or_default().to_owned();
                let i = match families.iter().position(|(n, _, _)| *n == name) {
                    Some(i) => i,
                    None => {
                        families.push((name, Vec::new(), Vec::new()));
                        families.len() - 1
                    }
                };
                let head = &mut families[i].1;
                if head.len() < 2 && !head.iter().any(|h| h == line) {
                    head.push(line.to_owned());
                }
                current = Some(i);
            } else if let Some(i) = current
                && !line.is_empty()
            {
                families[i].2.push(line.to_owned());
            }
        }
    }
    families
        .into_iter()
        .flat_map(|(_, head, samples)| head.into_iter().chain(samples))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs `rftune power on|off|cycle` on one host or a fleet. Every switch is in the audit log.
/// After Ctrl-C or SIGTERM no further host is started; a host being cycled is powered on again.
pub async fn control(arg: &PowerArg, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let args = arg.args();
    crate::signals::install()?;
    let hosts = crate::config::Hosts::of(&args.target)?;
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let writes = crate::config::lock_writes("power", &args.lock, dirs)?;
    let audit = writes.audit.clone();
    let action = match arg {
        PowerArg::On(_) => PowerAction::On,
        PowerArg::Off(_) => PowerAction::Off,
        PowerArg::Cycle(_) => PowerAction::Cycle,
    };
    let op = Arc::new(Switch {
        action,
        options: SwitchOptions {
            force: args.force,
            graceful_timeout: args.graceful_timeout,
        },
        writes,
    });
    let label = format!("power {}", arg.name());
    let results = hosts.run(&label, connect, dirs, Some(&audit), op, output).await;
    let failed = results.iter().filter(|r| r.result.is_err()).count();
    let kind = action.as_str();
    if output == OutputFormat::Json {
        let hosts: Vec<serde_json::Value> = results
            .iter()
            .map(|r| match &r.result {
                Ok(s) => serde_json::to_value(s).unwrap_or_default(),
                Err(e) => {
                    let mut v = serde_json::json!({"host": r.entry.name, "action": kind});
                    crate::documents::Failure::of(e, audit.wrote(&r.entry.name)).add_to(&mut v);
                    v
                }
            })
            .collect();
        render::json(&serde_json::json!({"schema": "rftune.power-action/v1", "hosts": hosts}))?;
    } else {
        let mut t = Table::new(["HOST", "BEFORE", "RESULT"]);
        for r in &results {
            match &r.result {
                Ok(s) => t.row([s.host.clone(), s.before.clone().unwrap_or_default(), s.result.clone()]),
                Err(e) => t.row([r.entry.name.clone(), String::new(), format!("error: {e:#}")]),
            }
        }
        render::text(&t.render())?;
    }
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} host(s) failed; every step is in {}",
            results.len(),
            audit.path().display()
        );
    }
    Ok(Exit::Success)
}

fn table(r: &PowerReport) -> String {
    let s = &r.stats;
    let mut t = Table::new(["", ""]);
    t.row(["Host".to_owned(), r.host.clone()]);
    t.row(["Sensor".to_owned(), r.sensor.as_str().to_owned()]);
    if s.n == 1 {
        t.row(["Power".to_owned(), format!("{} W", s.mean_w)]);
    } else {
        t.row([
            "Readings".to_owned(),
            format!("{} over {:.1} s (every {} s)", s.n, s.duration_s, r.interval_s),
        ]);
        t.row([
            "Power".to_owned(),
            format!(
                "min {:.0} W, max {:.0} W, mean {:.1} W, σ {:.1} W",
                s.min_w, s.max_w, s.mean_w, s.stddev_w
            ),
        ]);
        t.row([
            "Energy".to_owned(),
            format!(
                "{:.0} J ({:.4} kWh), average {:.1} W (trapezoid rule)",
                s.energy_j,
                s.energy_j / 3.6e6,
                s.average_w
            ),
        ]);
    }
    let mut out: String = t.render().lines().skip(1).map(|l| format!("{l}\n")).collect();
    out.push_str(&format!("Note: {}.\n", r.caveat));
    out
}
