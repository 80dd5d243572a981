//! Power readings from a BMC: the chassis's `EnvironmentMetrics` where the BMC has it (iDRAC
//! 7.x), else `Power.PowerControl`, sampled on a schedule or while work runs. It only reads;
//! switching a host's power is `control`'s.

use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::observe::{Event, Observer, Phase};
use host_bench::power::{Sample, Sensor};
use redfish_client::ODataId;
use std::time::{Duration, Instant};

/// One reading of `chassis`, watts, and where it came from: `EnvironmentMetrics` when it has a
/// reading (unless `known` says the chassis has only `Power.PowerControl`), else
/// `Power.PowerControl`. One request when the first source answers.
pub async fn read_best(bmc: &Bmc, chassis: &ODataId, known: Option<Sensor>) -> Result<(Sensor, f64)> {
    if known != Some(Sensor::PowerControl) {
        let env = bmc.client.environment_metrics(chassis).await;
        if let Some(watts) = env.ok().and_then(|e| e.power_watts?.reading) {
            return Ok((Sensor::EnvironmentMetrics, watts));
        }
    }
    let watts = bmc
        .client
        .power(chassis)
        .await
        .map_err(|e| bmc.explain(e, "reading power"))?
        .consumed_watts()
        .ok_or_else(|| {
            HostError::new(
                &bmc.name,
                HostErrorKind::Unsupported,
                "the BMC reports no power reading",
            )
        })?;
    Ok((Sensor::PowerControl, watts))
}

/// Reads power from one BMC through the source chosen at start.
#[derive(Debug)]
pub struct Meter<'a> {
    bmc: &'a Bmc,
    chassis: ODataId,
    /// The source in use.
    pub sensor: Sensor,
}

impl<'a> Meter<'a> {
    /// Picks the chassis and the best source that gives a reading.
    pub async fn new(bmc: &'a mut Bmc) -> Result<Meter<'a>> {
        let chassis = bmc.chassis_id().await?;
        Self::of_chassis(bmc, chassis).await
    }

    /// Picks the best source of `chassis` ([`Bmc::chassis_id`]) that gives a reading; for a
    /// caller that keeps using the BMC while the meter lives (applies between readings).
    pub async fn of_chassis(bmc: &'a Bmc, chassis: ODataId) -> Result<Meter<'a>> {
        let (sensor, _) = read_best(bmc, &chassis, None).await?;
        Ok(Meter { bmc, chassis, sensor })
    }

    /// One reading, watts.
    pub async fn read(&self) -> Result<f64> {
        let t = self.bmc;
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
        watts.ok_or_else(|| HostError::new(&t.name, HostErrorKind::Unsupported, "the power reading disappeared").into())
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
    async fn sample_until(
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
        observer: &dyn Observer,
    ) -> Result<Vec<Sample>> {
        let origin = Instant::now();
        let interval = interval.max(Duration::from_millis(10));
        let n = (duration.as_secs_f64() / interval.as_secs_f64()).floor() as u32 + 1;
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n {
            tokio::time::sleep_until((origin + interval * i).into()).await;
            out.push(self.sample(origin).await?);
            observer.event(&Event::phase(
                &self.bmc.name,
                Phase::SamplingPower { done: i + 1, total: n },
            ));
        }
        Ok(out)
    }
}

/// The meter as host-bench's power source: benchmark runs (`host_bench::run`) sample through it.
impl host_bench::run::PowerSource for Meter<'_> {
    fn sample_while<'a>(
        &'a self,
        interval: Duration,
        origin: Instant,
        work: host_bench::exec::BoxFuture<'a, ()>,
    ) -> host_bench::exec::BoxFuture<'a, Result<Vec<Sample>, host_bench::power::PowerError>> {
        Box::pin(async move {
            let ((), samples) = Meter::sample_while(self, interval, origin, work).await;
            samples.map_err(|e| Box::new(e) as host_bench::power::PowerError)
        })
    }

    fn caveat(&self) -> Option<String> {
        Some(host_bench::power::CAVEAT.to_owned())
    }
}

/// Power readings as an [`Operation`](crate::lifecycle::Operation): one reading, or one every
/// `interval` for `duration`, from the best source the BMC offers, as a `rftune.power/v1`
/// document.
#[derive(Debug, Clone, Copy)]
pub struct Readings {
    /// How often to read, with a duration.
    pub interval: Duration,
    /// How long to read; `None` for one reading.
    pub duration: Option<Duration>,
}

impl crate::lifecycle::Operation for Readings {
    type Output = host_bench::power::PowerReport;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Self::Output> {
        let started_at = host_bench::utc_now();
        let host = bmc.name.clone();
        let meter = Meter::new(bmc).await?;
        let samples = match self.duration {
            Some(d) => meter.sample_for(self.interval, d, observer).await?,
            None => vec![meter.sample(Instant::now()).await?],
        };
        let interval = if self.duration.is_some() {
            self.interval.as_secs_f64()
        } else {
            0.0
        };
        host_bench::power::PowerReport::new(&host, meter.sensor, started_at, interval, samples)
            .ok_or_else(|| HostError::new(&host, HostErrorKind::Unsupported, "no readings").into())
    }
}
