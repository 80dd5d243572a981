//! `rftune power`: one power reading, or sampling at a fixed interval on the client's clock,
//! from the best source the BMC offers (EnvironmentMetrics, else PowerControl). The [`Meter`]
//! here is also what `rftune bench` samples with. `rftune power on|off|cycle` switches hosts
//! (see [`control`]).

use crate::Outcome;
use crate::args::OutputFormat;
use crate::args::power::{PowerAction, PowerArgs, PowerFormat};
use crate::render::{self, Table};
use anyhow::{Context, Result};
use host_bench::power::PowerReport;
use redfish_client::ODataId;
use redfish_client::oem::dell;
use rftune_engine::power::Meter;
use rftune_engine::state::StateDirs;
use rftune_engine::target;
use std::time::{Duration, Instant};

/// Runs `rftune power`.
pub async fn run(args: &PowerArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
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
    let entry = rftune_engine::fleet::BmcEntry::from_url(url)?;
    let mut target = crate::credentials::connect_one(&args.connect, &entry, dirs).await?;
    target.login().await?;
    let started_at = host_bench::utc_now();
    let result = async {
        let host = target.name.clone();
        let meter = Meter::new(&mut target).await?;
        let progress = render::Progress::spinner(if format == PowerFormat::Table {
            output
        } else {
            OutputFormat::Json
        });
        let samples = match args.duration {
            Some(d) => meter.sample_for(args.interval, d, &progress).await?,
            None => vec![meter.sample(Instant::now()).await?],
        };
        progress.finish();
        let interval = if args.duration.is_some() {
            args.interval.as_secs_f64()
        } else {
            0.0
        };
        PowerReport::new(&host, meter.sensor, started_at, interval, samples).context("no readings")
    }
    .await;
    target.close().await;
    let report = result?;
    match format {
        PowerFormat::Json => render::json(&report)?,
        PowerFormat::Csv => render::text(&report.csv())?,
        PowerFormat::Prometheus => render::text(&report.prometheus())?,
        PowerFormat::Table => render::text(&table(&report))?,
    }
    Ok(Outcome::Success)
}

/// What `power on|off|cycle` did to one host.
#[derive(Debug, serde::Serialize)]
struct Switched {
    host: String,
    action: &'static str,
    /// The power state before, as the BMC reported it.
    before: Option<String>,
    /// What was done: `powered on`, `already on`, `shut down`, `forced off`, `cycled`.
    result: String,
}

/// Runs `rftune power on|off|cycle` on one host or a fleet. Every switch is in the audit log.
/// After Ctrl-C or SIGTERM no further host is started; a host being cycled is powered on again.
pub async fn control(action: &PowerAction, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    use redfish_client::resources::computer_system::{PowerState, ResetType};
    let args = action.args();
    crate::signals::install()?;
    let audit = std::sync::Arc::new(rftune_engine::audit::AuditLog::open(&dirs.state)?);
    let (entries, _) = super::targets(&args.target)?;
    let connect = std::sync::Arc::new(crate::credentials::connect_config(&args.target.connect, &entries)?);
    let dirs_owned = std::sync::Arc::new(dirs.clone());
    let progress = std::sync::Arc::new(render::Progress::hosts(
        &format!("power {}", action.name()),
        entries.len(),
        output,
    ));
    let bar = progress.clone();
    let (force, graceful_timeout) = (args.force, args.graceful_timeout);
    let kind = action.name();
    let results = rftune_engine::fleet::run_all(
        entries,
        args.target.concurrency,
        |entry| {
            let (connect, dirs, audit, progress) =
                (connect.clone(), dirs_owned.clone(), audit.clone(), progress.clone());
            async move {
                let target = target::connect(&entry, &connect, &dirs, &*progress).await?;
                target.login().await?;
                let outcome = async {
                    let before = rftune_engine::bmc::power_state(&target).await;
                    let system = target
                        .client
                        .system(&ODataId::new(dell::SYSTEM))
                        .await
                        .map_err(|e| target.explain(e, "reading the system"))?;
                    let send = |reset: ResetType| {
                        let system = system.clone();
                        let target = &target;
                        async move {
                            target
                                .client
                                .reset(&system, reset)
                                .await
                                .map_err(|e| target.explain(e, &format!("requesting {reset:?}")))
                        }
                    };
                    let off = before == Some(PowerState::Off);
                    let result = match (kind, off) {
                        ("on", true) | ("cycle", true) => {
                            send(ResetType::On).await?;
                            "powered on"
                        }
                        ("on", false) => "already on",
                        ("off", true) => "already off",
                        ("off", false) if force => {
                            send(ResetType::ForceOff).await?;
                            "forced off"
                        }
                        ("off", false) => {
                            send(ResetType::GracefulShutdown).await?;
                            let deadline = Instant::now() + graceful_timeout;
                            loop {
                                if rftune_engine::bmc::power_state(&target).await == Some(PowerState::Off) {
                                    break "shut down";
                                }
                                if Instant::now() >= deadline {
                                    send(ResetType::ForceOff).await?;
                                    break "forced off after the graceful timeout";
                                }
                                tokio::time::sleep(Duration::from_millis(500)).await;
                            }
                        }
                        _ => {
                            let policy = if force {
                                rftune_engine::bmc::RebootPolicy::Force
                            } else {
                                rftune_engine::bmc::RebootPolicy::Graceful
                            };
                            rftune_engine::bmc::reboot(&target, policy, graceful_timeout, &*progress, &|_, _| {})
                                .await?;
                            "cycled"
                        }
                    };
                    Ok::<_, anyhow::Error>(Switched {
                        host: target.name.clone(),
                        action: kind,
                        before: before.map(|p| format!("{p:?}")),
                        result: result.to_owned(),
                    })
                }
                .await;
                let (status, detail) = match &outcome {
                    Ok(s) => ("ok", serde_json::json!(s.result)),
                    Err(e) => ("error", serde_json::json!(format!("{e:#}"))),
                };
                audit.record(
                    &entry.name,
                    &format!("power-{kind}"),
                    serde_json::Value::Null,
                    status,
                    detail,
                )?;
                target.close().await;
                outcome
            }
        },
        move |_, ok| bar.host_done(ok),
    )
    .await;
    progress.finish();
    let failed = results.iter().filter(|r| r.result.is_err()).count();
    if output == OutputFormat::Json {
        let hosts: Vec<serde_json::Value> = results
            .iter()
            .map(|r| match &r.result {
                Ok(s) => serde_json::to_value(s).unwrap_or_default(),
                Err(e) => serde_json::json!({"host": r.entry.name, "action": kind, "error": format!("{e:#}")}),
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
    Ok(Outcome::Success)
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
