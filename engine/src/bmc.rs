//! What diff and apply need from one iDRAC, in as few round trips as it allows: current and
//! pending BIOS values, the registry (from the cache when possible), the iDRAC attribute groups
//! a profile touches, the job queue; and the long waits — for a job, for a reboot, for the host
//! to come back.

use crate::cache::{HostRegistryInfo, RegistryCache, RegistrySource};
use crate::error::{HostError, HostErrorKind, Result};
use crate::observe::{Event, Observer, Phase};
use crate::target::Target;
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, AttributeGroup, DellJob, JobOutcome};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{Attributes, Bios, BiosSettings};
use redfish_client::resources::computer_system::{PowerState, ResetType};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// A host's BIOS and iDRAC state as read for one diff or apply.
#[derive(Debug, Clone)]
pub struct HostState {
    /// Current BIOS values.
    pub bios: Attributes,
    /// Pending BIOS values.
    pub pending: Attributes,
    /// The BIOS attribute registry (shared by every host of the same model and BIOS version).
    pub registry: std::sync::Arc<AttributeRegistry>,
    /// iDRAC attributes of the groups asked for.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// The job queue, when asked for.
    pub jobs: Vec<DellJob>,
    /// `SystemModelName`.
    pub model: Option<String>,
    /// `SystemBiosVersion`.
    pub bios_version: Option<String>,
    /// `SystemServiceTag`.
    pub service_tag: Option<String>,
    /// Whether System Lockdown is on (`None`: the iDRAC does not say).
    pub lockdown: Option<bool>,
    /// Whether the registry came from the cache.
    pub registry_cached: bool,
}

/// Everything [`HostState`] holds but the registry: what a host says about itself, read in one
/// round of concurrent requests.
#[derive(Debug, Clone)]
pub struct HostValues {
    /// Current BIOS values.
    pub bios: Attributes,
    /// `Bios.AttributeRegistry`, the registry the BIOS names.
    pub registry_id: Option<String>,
    /// Pending BIOS values.
    pub pending: Attributes,
    /// iDRAC attributes of the groups asked for.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// The job queue, when asked for.
    pub jobs: Vec<DellJob>,
    /// Whether System Lockdown is on (`None`: the iDRAC does not say).
    pub lockdown: Option<bool>,
}

impl HostValues {
    fn text(&self, name: &str) -> Option<String> {
        self.bios.get(name).and_then(|v| v.as_str()).map(str::to_owned)
    }
}

impl HostState {
    /// The part bios-profiles judges a profile against (validate, diff, plan), borrowed.
    pub fn view(&self) -> bios_profiles::HostState<'_> {
        bios_profiles::HostState {
            registry: &self.registry,
            bios: &self.bios,
            pending: &self.pending,
            idrac: &self.idrac,
        }
    }

    /// Open BIOS configuration jobs: scheduled, running, or stuck at PR30 (which blocks the
    /// queue until deleted).
    pub fn open_bios_jobs(&self) -> impl Iterator<Item = &DellJob> {
        self.jobs.iter().filter(|j| j.is_open_bios_job())
    }

    /// Whether System Lockdown is on.
    pub fn in_lockdown(&self) -> bool {
        self.lockdown == Some(true)
    }
}

/// Why nothing can be changed on a host in System Lockdown, and how to end it.
pub fn lockdown_reason() -> String {
    format!(
        "System Lockdown is on (iDRAC attribute {}): the iDRAC refuses every BIOS and iDRAC change until an administrator turns it off (e.g. `racadm set iDRAC.Lockdown.SystemLockdown Disabled`, or in the iDRAC web interface)",
        dell::SYSTEM_LOCKDOWN
    )
}

/// Reads a host's state: [`read_values`], then its registry from `cache` when it holds a
/// copy that fits this host, else from the host.
pub async fn read_state(
    target: &Target,
    cache: &RegistryCache,
    groups: &BTreeSet<AttributeGroup>,
    jobs: bool,
) -> Result<HostState> {
    let values = read_values(target, groups, jobs).await?;
    with_registry(target, cache, values).await
}

/// Reads what the host says about itself, concurrently: BIOS values, pending values, System
/// Lockdown, the iDRAC groups in `groups`, and the job queue when `jobs` is set. Targets iDRAC
/// paths directly: no discovery round trips.
pub async fn read_values(target: &Target, groups: &BTreeSet<AttributeGroup>, jobs: bool) -> Result<HostValues> {
    read_values_with(target, groups, jobs, None).await
}

/// [`read_values`], taking the BIOS resource from `bios` when the caller has just read it
/// (after a reboot, [`wait_until_back`] has): one GET fewer.
pub(crate) async fn read_values_with(
    target: &Target,
    groups: &BTreeSet<AttributeGroup>,
    jobs: bool,
    bios: Option<Bios>,
) -> Result<HostValues> {
    let client = &target.client;
    let bios_id = ODataId::new(dell::BIOS);
    let idrac = client.dell();
    // Every group at once, like the other reads.
    let read_groups = futures_util::future::try_join_all(groups.iter().map(|g| async move {
        let attrs = idrac
            .attributes(*g)
            .await
            .map_err(|e| target.explain(e, &format!("reading iDRAC attributes {g}")))?;
        Ok::<_, crate::Error>((*g, attrs.attributes))
    }));
    let read_jobs = async {
        if jobs {
            idrac
                .jobs()
                .await
                .map_err(|e| target.explain(e, "reading the job queue"))
        } else {
            Ok(Vec::new())
        }
    };
    let read_lockdown = async {
        // The iDRAC group holds it; when it is read anyway, no extra request.
        if groups.contains(&AttributeGroup::Idrac) {
            return Ok(None);
        }
        match idrac.system_lockdown().await {
            Ok(v) => Ok(v),
            // Not a Dell iDRAC, or too old to know lockdown: nothing to refuse on.
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(target.explain(e, "reading System Lockdown")),
        }
    };
    let read_bios = async {
        match bios {
            Some(bios) => Ok(bios),
            None => client.bios(&bios_id).await,
        }
    };
    let (bios, pending, groups, jobs, lockdown) = tokio::join!(
        read_bios,
        client.get::<BiosSettings>(dell::BIOS_SETTINGS),
        read_groups,
        read_jobs,
        read_lockdown
    );
    let bios = bios.map_err(|e| {
        if e.status() == Some(404) {
            HostError::new(
                &target.name,
                HostErrorKind::Unsupported,
                format!(
                    "no BIOS resource at {}: rftune's profiles need a Dell iDRAC (iDRAC9 or later)",
                    dell::BIOS
                ),
            )
            .into()
        } else {
            target.explain(e, "reading BIOS values")
        }
    })?;
    let pending = pending.map_err(|e| target.explain(e, "reading pending BIOS values"))?;
    let idrac: BTreeMap<_, _> = groups?.into_iter().collect();
    let lockdown = match lockdown? {
        Some(v) => Some(v),
        None => idrac
            .get(&AttributeGroup::Idrac)
            .and_then(|a| a.get(dell::SYSTEM_LOCKDOWN))
            .and_then(|v| v.as_str())
            .map(|v| v.eq_ignore_ascii_case("Enabled")),
    };
    Ok(HostValues {
        registry_id: bios.attribute_registry.clone(),
        bios: bios.attributes,
        pending: pending.attributes,
        idrac,
        jobs: jobs?,
        lockdown,
    })
}

/// Completes `values` with the host's BIOS attribute registry: from `cache` when a copy fits
/// this host, else from the host.
pub async fn with_registry(target: &Target, cache: &RegistryCache, values: HostValues) -> Result<HostState> {
    let model = values.text("SystemModelName");
    let bios_version = values.text("SystemBiosVersion");
    let fetch = || async {
        target
            .client
            .dell()
            .bios_registry()
            .await
            .map_err(|e| target.explain(e, "reading the BIOS attribute registry"))
    };
    let (registry, registry_cached) = match (&model, &bios_version) {
        (Some(m), Some(v)) => {
            let info = HostRegistryInfo {
                model: m,
                bios_version: v,
                registry_id: values.registry_id.as_deref(),
                values: &values.bios,
                lockdown: values.lockdown == Some(true),
            };
            let (r, source) = cache.get_or_fetch(info, fetch).await?;
            (r, source == RegistrySource::Cache)
        }
        _ => (std::sync::Arc::new(fetch().await?), false),
    };
    Ok(HostState {
        service_tag: values.text("SystemServiceTag"),
        model,
        bios_version,
        bios: values.bios,
        pending: values.pending,
        registry,
        idrac: values.idrac,
        jobs: values.jobs,
        lockdown: values.lockdown,
        registry_cached,
    })
}

/// How to get the host through the reboot that runs the BIOS job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebootPolicy {
    /// Ask the OS to shut down; force it off after --graceful-timeout; power on.
    Graceful,
    /// Restart at once, without asking the OS.
    Force,
    /// Do not reboot: the job stays scheduled for the next reboot.
    None,
}

/// Reboots the host as `policy` says. Returns `false` when the policy is `None`. `lost` hears
/// of every reset whose answer was lost, and whether the host then showed it happened.
pub async fn reboot(
    target: &Target,
    policy: RebootPolicy,
    graceful_timeout: Duration,
    observer: &dyn Observer,
    lost: &(dyn Fn(ResetType, bool) + Sync),
) -> Result<bool> {
    let client = &target.client;
    let system_id = ODataId::new(dell::SYSTEM);
    let system = client
        .system(&system_id)
        .await
        .map_err(|e| target.explain(e, "reading the system"))?;
    // A reset whose answer was lost may have happened: look before sending it again.
    let reset = |kind: ResetType| {
        let system = system.clone();
        async move {
            match client.reset(&system, kind).await {
                Ok(()) => Ok(true),
                Err(e) if e.write_outcome_unknown() => {
                    tracing::warn!(
                        "{}: the answer to {kind:?} was lost ({e}); checking whether the host reacted",
                        target.name
                    );
                    Ok(false)
                }
                Err(e) => Err(target.explain(e, &format!("requesting {kind:?}"))),
            }
        }
    };
    let power = || async { client.system(&system_id).await.ok().and_then(|s| s.power_state) };
    match policy {
        RebootPolicy::None => return Ok(false),
        RebootPolicy::Force => {
            observer.event(&Event::phase(&target.name, Phase::Resetting("ForceRestart".into())));
            let kind = if system.power_state == Some(PowerState::Off) {
                ResetType::On
            } else {
                ResetType::ForceRestart
            };
            if !reset(kind).await? {
                let happened = restart_observed(target, Duration::from_secs(20)).await;
                lost(kind, happened);
                if !happened {
                    // Nothing shows the reset happened: it was not applied, send it once more.
                    send_reset(target, &system, kind).await?;
                }
            }
        }
        RebootPolicy::Graceful => {
            if system.power_state != Some(PowerState::Off) {
                observer.event(&Event::phase(&target.name, Phase::ShuttingDown));
                crate::interrupt::powered_off(&target.name, true);
                reset(ResetType::GracefulShutdown).await?;
                let deadline = Instant::now() + graceful_timeout;
                let mut off = false;
                while Instant::now() < deadline {
                    if power().await == Some(PowerState::Off) {
                        off = true;
                        break;
                    }
                    tokio::time::sleep(poll_interval(graceful_timeout)).await;
                }
                if !off {
                    tracing::warn!(
                        "{}: the OS did not shut down within {:?}; forcing power off",
                        target.name,
                        graceful_timeout
                    );
                    observer.event(&Event::phase(&target.name, Phase::ForcingOff));
                    if !reset(ResetType::ForceOff).await?
                        && !until(Duration::from_secs(10), || async {
                            power().await == Some(PowerState::Off)
                        })
                        .await
                    {
                        send_reset(target, &system, ResetType::ForceOff).await?;
                    }
                }
            }
            observer.event(&Event::phase(&target.name, Phase::PoweringOn));
            if !reset(ResetType::On).await?
                && !until(Duration::from_secs(20), || async {
                    power().await == Some(PowerState::On)
                })
                .await
            {
                send_reset(target, &system, ResetType::On).await?;
            }
            crate::interrupt::powered_off(&target.name, false);
        }
    }
    Ok(true)
}

/// The host's power state, when the BMC says.
pub async fn power_state(target: &Target) -> Option<PowerState> {
    target
        .client
        .system(&ODataId::new(dell::SYSTEM))
        .await
        .ok()?
        .power_state
}

/// Powers the host on.
pub async fn power_on(target: &Target) -> Result<()> {
    let system = target
        .client
        .system(&ODataId::new(dell::SYSTEM))
        .await
        .map_err(|e| target.explain(e, "reading the system"))?;
    target
        .client
        .reset(&system, ResetType::On)
        .await
        .map_err(|e| target.explain(e, "powering on"))
}

/// Sends a reset, a lost answer included as an error.
async fn send_reset(
    target: &Target,
    system: &redfish_client::resources::computer_system::ComputerSystem,
    kind: ResetType,
) -> Result<()> {
    target
        .client
        .reset(system, kind)
        .await
        .map_err(|e| target.explain(e, &format!("requesting {kind:?} again")))
}

/// Whether the host shows, within `timeout`, that a restart began: it is in POST, or it
/// powered off on the way.
async fn restart_observed(target: &Target, timeout: Duration) -> bool {
    let system_id = ODataId::new(dell::SYSTEM);
    until(timeout, || async {
        let in_post = target.client.dell().lc_status().await.is_ok_and(|lc| lc.in_post());
        in_post
            || target
                .client
                .system(&system_id)
                .await
                .is_ok_and(|s| s.power_state == Some(PowerState::Off))
    })
    .await
}

/// Polls `check` until it holds or `timeout` passes, as often as [`Poll::for_timeout`] says.
async fn until<F, Fut>(timeout: Duration, check: F) -> bool
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    let mut poll = Poll::for_timeout(timeout);
    loop {
        if check().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(poll.next(Instant::now(), None)).await;
    }
}

fn poll_interval(scale: Duration) -> Duration {
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
pub async fn wait_for_job(
    target: &Target,
    job_id: &str,
    timeout: Duration,
    observer: &dyn Observer,
) -> Result<DellJob> {
    let deadline = Instant::now() + timeout;
    let mut last_error = None;
    let mut poll = Poll::for_timeout(timeout);
    loop {
        let mut percent = None;
        match target.client.dell().job(job_id).await {
            Ok(job) => {
                percent = job.percent_complete;
                observer.event(&Event::phase(
                    &target.name,
                    Phase::Job {
                        id: job.id.clone(),
                        state: job.job_state.to_string(),
                        percent: u32::from(job.percent_complete.unwrap_or(0)),
                    },
                ));
                if let Some(err) = job.failure() {
                    return Err(crate::Error::from(HostError {
                        host: target.name.clone(),
                        kind: HostErrorKind::JobFailed,
                        message: "the BIOS job did not apply the settings".into(),
                        hint: None,
                        source: Some(err),
                    }));
                }
                if matches!(job.outcome(), JobOutcome::Succeeded | JobOutcome::SucceededWithErrors) {
                    return Ok(job);
                }
            }
            // The iDRAC may be briefly unavailable while the host reboots; keep waiting.
            Err(e) => last_error = Some(e),
        }
        if Instant::now() >= deadline {
            let why = last_error.map(|e| format!(" (last error: {e})")).unwrap_or_default();
            return Err(HostError::new(
                &target.name,
                HostErrorKind::Timeout,
                format!("job {job_id} did not finish within {timeout:?}{why}"),
            )
            .into());
        }
        tokio::time::sleep(poll.next(Instant::now(), percent)).await;
    }
}

/// Waits until the host is powered on, out of POST, and its BIOS values are readable; returns
/// the BIOS resource read last, so the read that follows need not ask for it again.
pub async fn wait_until_back(target: &Target, timeout: Duration, observer: &dyn Observer) -> Result<Bios> {
    let deadline = Instant::now() + timeout;
    let system_id = ODataId::new(dell::SYSTEM);
    let mut poll = Poll::for_timeout(timeout);
    loop {
        observer.event(&Event::phase(&target.name, Phase::WaitingForHost));
        let on = matches!(target.client.system(&system_id).await, Ok(s) if s.power_state == Some(PowerState::On));
        let out_of_post = match target.client.dell().lc_status().await {
            Ok(lc) => !lc.in_post(),
            Err(_) => false,
        };
        if on
            && out_of_post
            && let Ok(bios) = target.client.bios(&ODataId::new(dell::BIOS)).await
        {
            return Ok(bios);
        }
        if Instant::now() >= deadline {
            return Err(HostError::new(
                &target.name,
                HostErrorKind::Timeout,
                format!(
                    "the host did not come back within {timeout:?} after the reboot (still powered off or in POST)"
                ),
            )
            .into());
        }
        tokio::time::sleep(poll.next(Instant::now(), None)).await;
    }
}

/// Pending values or open jobs that an apply must not stack on, described for the user.
pub fn describe_pending(state: &HostState) -> Option<String> {
    let jobs: Vec<String> = state
        .open_bios_jobs()
        .map(|j| {
            format!(
                "{} ({}{})",
                j.id,
                j.job_state,
                j.message_code().map(|c| format!(", {c}")).unwrap_or_default()
            )
        })
        .collect();
    match (state.pending.is_empty(), jobs.is_empty()) {
        (true, true) => None,
        (false, true) => Some(format!(
            "{} pending BIOS value(s): {}",
            state.pending.len(),
            names(&state.pending)
        )),
        (true, false) => Some(format!("BIOS job {}", jobs.join(", "))),
        (false, false) => Some(format!(
            "BIOS job {} with pending value(s) {}",
            jobs.join(", "),
            names(&state.pending)
        )),
    }
}

fn names(a: &Attributes) -> String {
    a.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
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
