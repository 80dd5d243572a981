//! Waiting for what a host does on its own: a job to end, the host to come back from a reboot
//! (powered on, out of POST, its BIOS readable), a task to get somewhere (`watch`, which an
//! SCP import and export use too), and the polling all of them use — fast right after a reset,
//! backing off, and around the end a job's pace predicts.

use crate::backend::{Job, JobOutcome};
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::observe::{Event, Observer, Phase};
use redfish_client::resources::bios::Bios;
use redfish_client::resources::computer_system::PowerState;
use std::time::{Duration, Instant};

/// Polls `check` until it holds or `timeout` passes, as often as [`Poll::for_timeout`] says.
pub(crate) async fn until<F, Fut>(timeout: Duration, check: F) -> bool
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let looked = watch(timeout, || async {
        if check().await {
            Look::Done(())
        } else {
            Look::NotYet(None)
        }
    })
    .await;
    looked.is_ok()
}

/// What one look at something waited for found.
#[derive(Debug)]
pub(crate) enum Look<T> {
    /// It got there: the wait ends with this.
    Done(T),
    /// Not yet; its progress (percent), where it tells.
    NotYet(Option<u8>),
    /// It could not be read this time (a BMC busy with a reboot); why, for the timeout's message.
    Unreadable(String),
}

/// Looks with `look` as often as [`Poll::for_timeout`] says (and around the end a progress
/// figure predicts) until it is done or `timeout` passes; at the timeout, why the last look
/// could not read it, if it could not.
pub(crate) async fn watch<T, F, Fut>(timeout: Duration, mut look: F) -> std::result::Result<T, Option<String>>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Look<T>>,
{
    let deadline = Instant::now() + timeout;
    let mut poll = Poll::for_timeout(timeout);
    let mut last_error = None;
    loop {
        let percent = match look().await {
            Look::Done(done) => return Ok(done),
            Look::NotYet(percent) => percent,
            Look::Unreadable(why) => {
                last_error = Some(why);
                None
            }
        };
        if Instant::now() >= deadline {
            return Err(last_error);
        }
        tokio::time::sleep(poll.next(Instant::now(), percent)).await;
    }
}

pub(crate) fn poll_interval(scale: Duration) -> Duration {
    (scale / 20).clamp(Duration::from_millis(100), Duration::from_secs(5))
}

/// When to look again while waiting for what a host does on its own after a reset (a BIOS job,
/// POST): soon after the reset, then less and less often up to `cap`; and once a job's
/// `PercentComplete` moves, around the time its pace says it ends, so the wait ends close to
/// when the host is done rather than up to a whole interval later.
#[derive(Debug)]
struct Poll {
    interval: Duration,
    cap: Duration,
    /// The first progress seen, and when: the pace is measured from there.
    first: Option<(Instant, u8)>,
}

impl Poll {
    /// The first wait, and the shortest near an expected end.
    const FIRST: Duration = Duration::from_millis(250);

    /// Starts fast; `cap` bounds every wait.
    fn new(cap: Duration) -> Self {
        Self {
            interval: Self::FIRST.min(cap),
            cap,
            first: None,
        }
    }

    /// The polling for a wait of at most `timeout`: every wait at most a twentieth of it,
    /// within 100 ms to 2 s.
    fn for_timeout(timeout: Duration) -> Self {
        Self::new(poll_interval(timeout).min(Duration::from_secs(2)))
    }

    /// The wait before the next look, given the job's `PercentComplete` read at `now` (none
    /// for POST).
    fn next(&mut self, now: Instant, percent: Option<u8>) -> Duration {
        let backoff = self.interval;
        self.interval = (self.interval * 3 / 2).min(self.cap);
        let expected_rest = percent.filter(|p| (1..100).contains(p)).and_then(|p| {
            let (since, from) = *self.first.get_or_insert((now, p));
            let moved = p.checked_sub(from).filter(|d| *d > 0)?;
            Some(
                now.saturating_duration_since(since)
                    .mul_f64(f64::from(100 - p) / f64::from(moved)),
            )
        });
        match expected_rest {
            Some(rest) => backoff.min(rest.max(Self::FIRST)),
            None => backoff,
        }
    }
}

/// Waits for a job to end; a failed or stuck (PR30) job, or the timeout, is an error.
pub async fn wait_for_job(bmc: &Bmc, job_id: &str, timeout: Duration, observer: &dyn Observer) -> Result<Job> {
    let backend = bmc.backend();
    let queue = bmc.require(&backend, crate::backend::Backend::jobs, "job queue")?;
    let looked = watch(timeout, || async {
        let job = match queue.get(&bmc.client, job_id).await {
            Ok(job) => job,
            // The BMC may be briefly unavailable while the host reboots; keep waiting.
            Err(e) => return Look::Unreadable(e.to_string()),
        };
        observer.event(&Event::phase(
            &bmc.name,
            Phase::Job {
                id: job.id.clone(),
                state: job.job_state.clone(),
                percent: u32::from(job.percent_complete.unwrap_or(0)),
            },
        ));
        if let Some(err) = job.failure() {
            return Look::Done(Err(crate::Error::from(HostError {
                host: bmc.name.clone(),
                kind: HostErrorKind::JobFailed,
                message: "the BIOS job did not apply the settings".into(),
                hint: None,
                source: Some(err),
            })));
        }
        match job.outcome {
            JobOutcome::Succeeded | JobOutcome::SucceededWithErrors => Look::Done(Ok(job)),
            _ => Look::NotYet(job.percent_complete),
        }
    })
    .await;
    looked.unwrap_or_else(|last| {
        let why = last.map(|e| format!(" (last error: {e})")).unwrap_or_default();
        Err(HostError::new(
            &bmc.name,
            HostErrorKind::Timeout,
            format!("job {job_id} did not finish within {timeout:?}{why}"),
        )
        .into())
    })
}

/// Waits until the host is powered on, out of POST, and its BIOS values are readable; returns
/// the BIOS resource read last, so the read that follows need not ask for it again.
pub async fn wait_until_back(bmc: &Bmc, timeout: Duration, observer: &dyn Observer) -> Result<Bios> {
    let backend = bmc.backend();
    let (system_id, bios_id) = (bmc.system_id().await?, bmc.bios_id().await?);
    let looked = watch(timeout, || async {
        observer.event(&Event::phase(&bmc.name, Phase::WaitingForHost));
        let system = bmc.client.system(&system_id).await.ok();
        let on = system.as_ref().is_some_and(|s| s.power_state == Some(PowerState::On));
        let out_of_post = match backend.readiness() {
            Some(readiness) => matches!(readiness.in_post(&bmc.client, system.as_ref()).await, Ok(false)),
            None => true,
        };
        if on
            && out_of_post
            && let Ok(bios) = bmc.client.bios(&bios_id).await
        {
            return Look::Done(bios);
        }
        Look::NotYet(None)
    })
    .await;
    looked.map_err(|_| {
        HostError::new(
            &bmc.name,
            HostErrorKind::Timeout,
            format!("the host did not come back within {timeout:?} after the reboot (still powered off or in POST)"),
        )
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn polls_start_fast_after_a_reset_and_back_off_to_the_cap() {
        let mut poll = Poll::new(Duration::from_secs(2));
        let t = Instant::now();
        let waits: Vec<Duration> = (0..8).map(|_| poll.next(t, None)).collect();
        assert_eq!(waits[0], ms(250));
        assert!(waits.windows(2).all(|w| w[1] >= w[0]), "{waits:?}");
        assert_eq!(*waits.last().unwrap(), Duration::from_secs(2), "{waits:?}");
        // A short timeout keeps its shorter cap.
        let mut short = Poll::new(ms(100));
        assert_eq!(short.next(t, None), ms(100));
        assert_eq!(short.next(t, None), ms(100));
    }

    #[test]
    fn a_job_s_pace_brings_the_next_look_to_its_expected_end() {
        let mut poll = Poll::new(Duration::from_secs(2));
        let t = Instant::now();
        for _ in 0..6 {
            poll.next(t, Some(10));
        }
        // 10 % -> 60 % in 3 s: 40 % more is expected in 2.4 s; the cap (2 s) still bounds it.
        assert_eq!(poll.next(t + Duration::from_secs(3), Some(60)), Duration::from_secs(2));
        // 10 % -> 90 % in 4 s: 10 % more in 0.5 s, sooner than the cap.
        assert_eq!(poll.next(t + Duration::from_secs(4), Some(90)), ms(500));
        // 99 % after 8 s: never faster than the first wait.
        assert_eq!(poll.next(t + Duration::from_secs(8), Some(99)), ms(250));
        // A job whose percentage does not move gets the plain back-off.
        let mut stuck = Poll::new(Duration::from_secs(2));
        stuck.next(t, Some(30));
        assert_eq!(stuck.next(t + Duration::from_secs(1), Some(30)), ms(375));
    }
}
