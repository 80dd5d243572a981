//! One check of one host: `diff`'s read-and-judge path ([`assess`](crate::assess::assess))
//! with the job queue, plus one power reading, boiled down to a [`Finding`] of counts and
//! names. Nothing of the host's documents outlives the check.

use crate::assess::{self, Chosen};
use crate::cache::RegistryCache;
use crate::error::Result;
use crate::fleet::BmcEntry;
use crate::observe::Observer;
use crate::state::StateDirs;
use crate::target::{self, ConnectConfig};
use bios_profiles::{Severity, StatusCounts};
use host_bench::power::Sensor;
use redfish_client::oem::dell::JobOutcome;
use std::sync::Arc;

/// What one successful check found: counts and names, small enough to keep for every host of
/// a large fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The profile's attributes (BIOS and iDRAC) by status.
    pub counts: StatusCounts,
    /// Validation findings that stop an apply (the profile cannot be applied as written).
    pub profile_errors: usize,
    /// Validation warnings.
    pub profile_warnings: usize,
    /// BIOS values staged on the BMC (`Bios/Settings`), whoever staged them.
    pub pending_values: usize,
    /// The jobs that hold the iDRAC's queue: waiting, running, or stuck.
    pub jobs: Vec<JobSeen>,
    /// Whether System Lockdown is on (`None`: the BMC does not say).
    pub lockdown: Option<bool>,
    /// `SystemModelName`.
    pub model: Option<String>,
    /// `SystemBiosVersion`.
    pub bios_version: Option<String>,
    /// `SystemServiceTag`.
    pub service_tag: Option<String>,
    /// The power draw, when the BMC reports one (a missing reading does not fail the check).
    pub power: Option<PowerReading>,
}

/// Not in sync with the profile: drift, pending, pending conflict or forced (what `diff`
/// lists for a host).
pub fn not_in_sync(counts: &StatusCounts) -> usize {
    counts.drift + counts.pending + counts.pending_conflict + counts.forced
}

/// A job in the queue, as much as deciding whether it is stuck needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSeen {
    /// `JID_…`.
    pub id: String,
    /// What iDRAC's state and MessageId mean.
    pub outcome: JobOutcome,
    /// Progress, when reported.
    pub percent: Option<u8>,
    /// The latest MessageId.
    pub message_id: Option<String>,
}

/// One power reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerReading {
    /// Where it came from.
    pub sensor: Sensor,
    /// Watts.
    pub watts: f64,
}

/// What every check of a run shares: the profile, how to connect, the registry cache.
#[derive(Clone)]
pub struct Checker {
    /// The profile hosts are judged against.
    pub chosen: Arc<Chosen>,
    /// How to connect (credentials resolved).
    pub connect: Arc<ConnectConfig>,
    /// known_hosts and the registry cache live here.
    pub dirs: Arc<StateDirs>,
    /// Registries shared between hosts and checks.
    pub cache: Arc<RegistryCache>,
    /// Attributes the host lacks count as errors.
    pub strict: bool,
    /// Told about trust-on-first-use records and other notices.
    pub observer: Arc<dyn Observer>,
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("profile", &self.chosen.name())
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

impl Checker {
    /// Checks one host: connect, read the service root (for the chassis), log in, read and
    /// judge it with its job queue while reading its power, log out. `sensor` is the power
    /// source an earlier check found, so the reading takes one request.
    pub async fn check(&self, entry: &BmcEntry, sensor: Option<Sensor>) -> Result<Finding> {
        let mut target = target::connect(entry, &self.connect, &self.dirs, &*self.observer).await?;
        // The service root is read anonymously, before the password is sent.
        let chassis = target.chassis_id().await?;
        target.login().await?;
        let (assessment, power) = tokio::join!(
            assess::assess(&target, &self.chosen, &self.cache, true, self.strict),
            crate::power::read_best(&target, &chassis, sensor)
        );
        target.close().await;
        let a = assessment?;
        let power = match power {
            Ok((sensor, watts)) => Some(PowerReading { sensor, watts }),
            Err(e) => {
                tracing::debug!("{}: no power reading: {e:#}", target.name);
                None
            }
        };
        let severity = |s| a.violations.iter().filter(|v| v.severity == s).count();
        Ok(Finding {
            counts: a.diff.counts(),
            profile_errors: severity(Severity::Error),
            profile_warnings: severity(Severity::Warning),
            pending_values: a.state.pending.len(),
            jobs: a
                .state
                .jobs
                .iter()
                .filter(|j| j.holds_queue())
                .map(|j| JobSeen {
                    id: j.id.clone(),
                    outcome: j.outcome(),
                    percent: j.percent_complete,
                    message_id: j.message_code().map(str::to_owned),
                })
                .collect(),
            lockdown: a.state.lockdown,
            model: a.state.model,
            bios_version: a.state.bios_version,
            service_tag: a.state.service_tag,
            power,
        })
    }
}
