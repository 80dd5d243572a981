//! `rftune power`: one power reading, or sampling at a fixed interval on the client's clock,
//! from the best source the BMC offers (EnvironmentMetrics, else PowerControl). The [`Meter`]
//! here is also what `rftune bench` samples with. `rftune power on|off|cycle` switches hosts
//! (see [`control`]).

use crate::Outcome;
use crate::args::{OutputFormat, TargetArgs, parse_duration};
use crate::render::{self, Table};
use crate::state::StateDirs;
use crate::target::{self, Target};
use anyhow::{Context, Result};
use host_bench::power::{PowerReport, Sample, Sensor};
use redfish_client::ODataId;
use redfish_client::oem::dell;
use std::time::{Duration, Instant};

/// `rftune power`.
// Help text shows URLs as typed; rustdoc's link markup would leak into `--help`.
#[allow(rustdoc::bare_urls)]
#[derive(Debug, clap::Args)]
pub struct PowerArgs {
    /// Switch hosts on, off or through a power cycle instead of reading.
    #[command(subcommand)]
    pub action: Option<PowerAction>,
    /// The BMC to read, e.g. https://idrac-r7625.example or https://127.0.0.1:9001.
    // The doc comment is the --help text, where URLs are written plainly.
    #[allow(rustdoc::bare_urls)]
    #[arg(long, value_name = "URL", env = "RFTUNE_BMC")]
    pub bmc: Option<String>,
    /// How to connect.
    #[command(flatten)]
    pub connect: crate::args::ConnectArgs,
    /// Time between readings when sampling (the iDRAC sensor itself refreshes about every 5 s).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Sample for this long (readings at 0, interval, 2×interval, ... up to it); without it, take
    /// one reading.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// What to print: table, json (`rftune.power/v1`), csv (one row per reading) or prometheus
    /// (text exposition format). Default: json with --output json, else table.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<PowerFormat>,
}

/// `rftune power on|off|cycle`.
#[derive(Debug, clap::Subcommand)]
pub enum PowerAction {
    /// Power hosts on (nothing is sent to a host that is already on).
    On(PowerControlArgs),
    /// Shut hosts down: ask the OS (GracefulShutdown), force power off after
    /// --graceful-timeout; --force powers off at once.
    Off(PowerControlArgs),
    /// Power-cycle hosts: shut down as `off` does, then power on; --force restarts at once
    /// (ForceRestart). A host that is off is just powered on.
    Cycle(PowerControlArgs),
}

impl PowerAction {
    fn args(&self) -> &PowerControlArgs {
        match self {
            Self::On(a) | Self::Off(a) | Self::Cycle(a) => a,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::On(_) => "on",
            Self::Off(_) => "off",
            Self::Cycle(_) => "cycle",
        }
    }
}

/// Options of `rftune power on|off|cycle`.
#[derive(Debug, clap::Args)]
pub struct PowerControlArgs {
    /// Which hosts.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Do not ask the OS: ForceOff, ForceRestart.
    #[arg(long)]
    pub force: bool,
    /// How long the OS gets to shut down before power is forced off.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub graceful_timeout: Duration,
}

/// `rftune power --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PowerFormat {
    /// Aligned text.
    Table,
    /// The `rftune.power/v1` document.
    Json,
    /// `host,sensor,t_s,watts` rows.
    Csv,
    /// Prometheus text exposition format.
    Prometheus,
}

/// Reads power from one BMC through the source chosen at start.
#[derive(Debug)]
pub struct Meter<'a> {
    target: &'a Target,
    chassis: ODataId,
    /// The source in use.
    pub sensor: Sensor,
}

impl<'a> Meter<'a> {
    /// Picks the chassis and the best source that gives a reading.
    pub async fn new(target: &'a mut Target) -> Result<Meter<'a>> {
        let root = target.service_root().await?;
        let target = &*target;
        let chassis = if root.is_dell() {
            ODataId::new(dell::CHASSIS)
        } else {
            let links: Vec<redfish_client::odata::Link> = target
                .client
                .members("/redfish/v1/Chassis")
                .await
                .map_err(|e| target.explain(e, "listing chassis"))?;
            links
                .into_iter()
                .next()
                .map(|l| l.odata_id)
                .with_context(|| format!("{}: the BMC lists no chassis", target.name))?
        };
        let env = target.client.environment_metrics(&chassis).await;
        let sensor = match env.ok().and_then(|e| e.power_watts?.reading) {
            Some(_) => Sensor::EnvironmentMetrics,
            None => {
                let power = target
                    .client
                    .power(&chassis)
                    .await
                    .map_err(|e| target.explain(e, "reading power"))?;
                power
                    .consumed_watts()
                    .with_context(|| format!("{}: the BMC reports no power reading", target.name))?;
                Sensor::PowerControl
            }
        };
        Ok(Meter {
            target,
            chassis,
            sensor,
        })
    }

    /// One reading, watts.
    pub async fn read(&self) -> Result<f64> {
        let t = self.target;
        let watts = match self.sensor {
            Sensor::EnvironmentMetrics => t
                .client
                .environment_metrics(&self.chassis)
                .await
                .map_err(|e| t.explain(e, "reading EnvironmentMetrics"))?
                .power_watts
                .and_then(|p| p.reading),
            Sensor::PowerControl => t
                .client
                .power(&self.chassis)
                .await
                .map_err(|e| t.explain(e, "reading Power"))?
                .consumed_watts(),
        };
        watts.with_context(|| format!("{}: the power reading disappeared", t.name))
    }

    /// One timestamped reading: seconds since `origin` at the midpoint of the round trip.
    pub async fn sample(&self, origin: Instant) -> Result<Sample> {
        let sent = Instant::now();
        let watts = self.read().await?;
        let mid = sent + (Instant::now() - sent) / 2;
        Ok(Sample {
            t_s: (mid - origin).as_secs_f64(),
            watts,
        })
    }

    /// Runs `work` while taking readings every `interval` (timed from `origin`), stopping
    /// with one reading after `work` ends. Returns the work's output and the readings.
    pub async fn sample_while<F: std::future::Future>(
        &self,
        interval: Duration,
        origin: Instant,
        work: F,
    ) -> (F::Output, Result<Vec<Sample>>) {
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let work = async {
            let out = work.await;
            let _ = stop.send(());
            out
        };
        tokio::join!(work, self.sample_until(interval, origin, stopped))
    }

    /// Readings every `interval` from now until `stop` fires, plus one after it, so the
    /// trapezoid covers the whole window.
    pub async fn sample_until(
        &self,
        interval: Duration,
        origin: Instant,
        mut stop: tokio::sync::oneshot::Receiver<()>,
    ) -> Result<Vec<Sample>> {
        let mut ticks = tokio::time::interval(interval.max(Duration::from_millis(10)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut out = Vec::new();
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = ticks.tick() => out.push(self.sample(origin).await?),
            }
        }
        out.push(self.sample(origin).await?);
        Ok(out)
    }

    /// Readings at 0, interval, ... ≤ duration.
    pub async fn sample_for(
        &self,
        interval: Duration,
        duration: Duration,
        progress: &render::Progress,
    ) -> Result<Vec<Sample>> {
        let origin = Instant::now();
        let interval = interval.max(Duration::from_millis(10));
        let n = (duration.as_secs_f64() / interval.as_secs_f64()).floor() as u32 + 1;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            tokio::time::sleep_until((origin + interval * i).into()).await;
            out.push(self.sample(origin).await?);
            progress.message(format!("sampling power: {}/{n} readings", i + 1));
        }
        Ok(out)
    }
}

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
    let mut target = target::connect(&crate::fleet::BmcEntry::from_url(url)?, &args.connect, dirs).await?;
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
    crate::interrupt::install()?;
    let audit = std::sync::Arc::new(crate::audit::AuditLog::open(&dirs.state)?);
    let (entries, _) = super::targets(&args.target)?;
    let connect = std::sync::Arc::new(args.target.connect.clone());
    let dirs_owned = std::sync::Arc::new(dirs.clone());
    let progress = std::sync::Arc::new(render::Progress::hosts(
        &format!("power {}", action.name()),
        entries.len(),
        output,
    ));
    let bar = progress.clone();
    let (force, graceful_timeout) = (args.force, args.graceful_timeout);
    let kind = action.name();
    let results = crate::fleet::run_all(
        entries,
        args.target.concurrency,
        |entry| {
            let (connect, dirs, audit, progress) =
                (connect.clone(), dirs_owned.clone(), audit.clone(), progress.clone());
            async move {
                let target = target::connect(&entry, &connect, &dirs).await?;
                target.login().await?;
                let outcome = async {
                    let before = crate::bmc::power_state(&target).await;
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
                                if crate::bmc::power_state(&target).await == Some(PowerState::Off) {
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
                                crate::bmc::RebootPolicy::Force
                            } else {
                                crate::bmc::RebootPolicy::Graceful
                            };
                            crate::bmc::reboot(&target, policy, graceful_timeout, &progress, &|_, _| {}).await?;
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
