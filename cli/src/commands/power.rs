//! `rftune power`: one power reading, or sampling at a fixed interval on the client's clock,
//! from the best source the BMC offers (EnvironmentMetrics, else PowerControl); and
//! `rftune power on|off|cycle`, which switches hosts through the engine, each switch recorded in
//! the audit log.

use crate::Exit;
use crate::args::OutputFormat;
use crate::args::power::{PowerAction as PowerArg, PowerArgs, PowerFormat};
use crate::render::{self, Table};
use anyhow::Result;
use host_bench::power::PowerReport;
use rftune_engine::fleet::BmcEntry;
use rftune_engine::lifecycle::Access;
use rftune_engine::power::Readings;
use rftune_engine::state::StateDirs;
use rftune_engine::switch::{PowerAction, Switch, SwitchOptions};
use std::sync::Arc;

/// Runs `rftune power`.
pub async fn run(args: &PowerArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    if let Some(action) = &args.action {
        return control(action, dirs, output).await;
    }
    let Some(url) = &args.bmc else {
        anyhow::bail!("rftune power needs --bmc URL to read, or a subcommand: on, off, cycle");
    };
    let format = args.format.unwrap_or(match output {
        OutputFormat::Json => PowerFormat::Json,
        _ => PowerFormat::Table,
    });
    let entry = BmcEntry::from_url(url)?;
    let connect = crate::credentials::connect_config(&args.connect, std::slice::from_ref(&entry))?;
    let progress = Arc::new(render::Progress::spinner(if format == PowerFormat::Table {
        output
    } else {
        OutputFormat::Json
    }));
    let access = Access::new(connect, dirs.clone(), progress.clone());
    let readings = Readings {
        interval: args.interval,
        duration: args.duration,
    };
    let report = access.one(&entry, None, &readings).await;
    progress.finish();
    let report = report?;
    match format {
        PowerFormat::Json => render::json(&report)?,
        PowerFormat::Csv => render::text(&report.csv())?,
        PowerFormat::Prometheus => render::text(&report.prometheus())?,
        PowerFormat::Table => render::text(&table(&report))?,
    }
    Ok(Exit::Success)
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
