//! One check of one host: `diff`'s read-and-judge path ([`assess`](crate::assess::assess))
//! with the job queue, plus one power reading, boiled down to a [`Finding`] of counts and
//! names. Nothing of the host's documents outlives the check.

use crate::assess::{self, AssessOptions, LoadedProfile};
use crate::backend::JobOutcome;
use crate::cache::RegistryCache;
use crate::connect::Bmc;
use crate::error::Result;
use crate::fleet::BmcEntry;
use crate::lifecycle::{Access, Operation};
use bios_profiles::{Severity, StatusCounts};
use host_bench::power::Sensor;
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

/// What every check of a run shares: the profile, how to reach the hosts, the registry cache.
#[derive(Clone)]
pub struct Checker {
    /// The profile hosts are judged against.
    pub profile: Arc<LoadedProfile>,
    /// How to reach the hosts (credentials resolved; told of notices such as trust-on-first-use
    /// records).
    pub access: Access,
    /// Registries shared between hosts and checks.
    pub cache: Arc<RegistryCache>,
    /// Attributes the host lacks count as errors.
    pub strict: bool,
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("profile", &self.profile.name())
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

/// One check as an [`Operation`]: the power source an earlier check found, if any.
struct Check<'a> {
    checker: &'a Checker,
    sensor: Option<Sensor>,
}

impl Operation for Check<'_> {
    type Output = Finding;

    /// The chassis comes from the service root, read before the password is sent.
    fn reads_service_root_first(&self) -> bool {
        true
    }

    async fn run(&self, bmc: &mut Bmc, _: &dyn crate::observe::Observer) -> Result<Finding> {
        let chassis = bmc.chassis_id().await?;
        let c = self.checker;
        let options = AssessOptions {
            jobs: true,
            strict: c.strict,
        };
        let (assessment, power) = tokio::join!(
            assess::assess(bmc, &c.profile, &c.cache, options),
            crate::meter::read_best(bmc, &chassis, self.sensor)
        );
        bmc.close().await;
        finding(&bmc.name, assessment?, power)
    }
}

impl Checker {
    /// Checks one host: connect, read the service root (for the chassis), log in, read and
    /// judge it with its job queue while reading its power, log out. `sensor` is the power
    /// source an earlier check found, so the reading takes one request.
    pub async fn check(&self, entry: &BmcEntry, sensor: Option<Sensor>) -> Result<Finding> {
        let check = Check { checker: self, sensor };
        self.access.one(entry, None, &check).await
    }
}

/// What a check keeps of an assessment and a power reading.
fn finding(host: &str, a: crate::assess::Assessment, power: Result<(Sensor, f64)>) -> Result<Finding> {
    let power = match power {
        Ok((sensor, watts)) => Some(PowerReading { sensor, watts }),
        Err(e) => {
            tracing::debug!("{host}: no power reading: {e:#}");
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
                outcome: j.outcome,
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
