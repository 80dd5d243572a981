//! One emulated iDRAC: the [`Host`] and its [`State`], one part per concern, and what every
//! operation shares: the lock that moves time forward first (`timeline`), the marking of a
//! change, and the documents kept rendered until the state they show changes.

use super::accounts::state::Accounts;
use super::bios::state::Bios;
use super::boot::state::Boot;
use super::certificates::state::Certificates;
use super::chassis::state::Chassis;
use super::dell_attributes::state::DellAttributes;
use super::events::state::Subscriptions;
use super::jobs::state::Jobs;
use super::logs::state::Logs;
use super::manager::state::Outage;
use super::network::state::Network;
use super::power::state::Power;
use super::readings::state::Readings;
use super::reply::{Rendered, Reply};
use super::scp::state::ScpTasks;
use super::secure_boot::state::SecureBoot;
use super::sessions::state::Sessions;
use crate::config::{FaultKind, SimConfig};
use crate::fixture::Fixture;
use crate::power_model::Platform;
use crate::stats::Stats;
use redfish_client::resources::bios::Attributes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// A host's kept rendering of one path, with its generation.
type Kept = (u64, Arc<Rendered>);

/// The faults that apply to one host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostFaults {
    /// Request-level faults and their per-request probability.
    pub request: Vec<(FaultKind, f64)>,
    /// BIOS jobs get stuck with PR30.
    pub stuck_job: bool,
    /// BIOS jobs fail.
    pub job_fails: bool,
    /// Resets never finish.
    pub no_return: bool,
    /// The POST leaves the first staged BIOS value as it was.
    pub post_refuses: bool,
}

/// Everything a host holds, one part per concern; each part is the concern's own type. One
/// lock covers them all: a POST, say, runs a job, applies BIOS values, changes the boot
/// sequence and writes the log as one change.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) power: Power,
    pub(crate) outage: Option<Outage>,
    pub(crate) bios: Bios,
    pub(crate) boot: Boot,
    pub(crate) secure_boot: SecureBoot,
    pub(crate) jobs: Jobs,
    pub(crate) scp: ScpTasks,
    pub(crate) dell_attributes: DellAttributes,
    pub(crate) sessions: Sessions,
    pub(crate) accounts: Accounts,
    pub(crate) logs: Logs,
    pub(crate) events: Subscriptions,
    pub(crate) network: Network,
    pub(crate) certificates: Certificates,
    pub(crate) chassis: Chassis,
    pub(crate) readings: Readings,
    /// The host's seeded generator (latency, faults, power noise, password salts).
    pub(crate) rng: fastrand::Rng,
}

/// One emulated iDRAC.
#[derive(Debug)]
pub struct Host {
    /// Position in the fleet (0-based).
    pub index: usize,
    /// This host's service tag.
    pub service_tag: String,
    /// The shared fixture data.
    pub fixture: Arc<Fixture>,
    /// The fleet configuration.
    pub config: Arc<SimConfig>,
    /// Faults that apply here.
    pub faults: HostFaults,
    /// Request counters for `/_sim/stats`.
    pub stats: Stats,
    pub(crate) platform: Platform,
    /// Session tokens come from the process's random keys, never from `--seed`: two emulators
    /// started with the same seed must not hand out the same tokens.
    pub(crate) tokens: std::collections::hash_map::RandomState,
    state: Mutex<State>,
    /// Counts the changes to what a cached document can show: bumped under the state lock by
    /// every operation that may change it ([`Host::change`]) and by every scheduled change
    /// that fires.
    generation: AtomicU64,
    /// This host's documents as last served, by path, with the generation they were rendered
    /// at: served again while the generation stands.
    documents: Mutex<HashMap<String, Kept>>,
    /// The web server certificate the host's `Certificate` resource describes, once the fleet
    /// has generated it.
    pub(crate) web_certificate: Option<Arc<crate::tls::WebCertificate>>,
}

/// A unique, valid-looking 7-character service tag for host `index` of a fleet. The first host
/// keeps the tree's own tag (so serving a captured tree reproduces it); the others get tags
/// derived from its first three characters and their index.
pub fn service_tag(fixture_tag: &str, index: usize) -> String {
    let valid = fixture_tag.len() == 7 && fixture_tag.chars().all(|c| c.is_ascii_alphanumeric());
    if valid && index == 0 {
        return fixture_tag.to_owned();
    }
    let derived = derived_tag(fixture_tag, index);
    if valid && derived == fixture_tag {
        // Host 0 has the tree's tag, so its derived one is free.
        return derived_tag(fixture_tag, 0);
    }
    derived
}

fn derived_tag(fixture_tag: &str, index: usize) -> String {
    const DIGITS: &[u8] = b"0123456789BCDFGHJKLMNPQRSTVWXYZ";
    let prefix: String = fixture_tag
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(3)
        .collect();
    let mut n = index;
    let mut suffix = [b'0'; 4];
    for slot in suffix.iter_mut().rev() {
        *slot = DIGITS[n % DIGITS.len()];
        n /= DIGITS.len();
    }
    format!("{prefix:0<3}{}", String::from_utf8_lossy(&suffix))
}

impl Host {
    /// A host in the fixture's recorded state, powered on.
    pub fn new(index: usize, fixture: Arc<Fixture>, config: Arc<SimConfig>, faults: HostFaults) -> Self {
        // An iLO's serial number (ten characters on a ProLiant) stands where an iDRAC's service
        // tag does: the first host keeps the tree's, so serving a captured tree reproduces it.
        let service_tag = if fixture.bmc == crate::generation::Bmc::Ilo && index == 0 {
            fixture.service_tag.clone()
        } else {
            service_tag(&fixture.service_tag, index)
        };
        let state = State {
            power: Power::on(),
            outage: None,
            bios: Bios::new(&fixture, &service_tag),
            boot: Boot::new(&fixture),
            secure_boot: SecureBoot::new(&fixture),
            jobs: Jobs::default(),
            scp: ScpTasks::default(),
            dell_attributes: DellAttributes::new(&fixture, config.lockdown),
            sessions: Sessions::default(),
            accounts: Accounts::new(&fixture, &config),
            logs: Logs::default(),
            events: Subscriptions::default(),
            network: Network::default(),
            certificates: Certificates::default(),
            chassis: Chassis::default(),
            readings: Readings::new(&fixture, Instant::now()),
            rng: fastrand::Rng::with_seed(config.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        };
        Self {
            index,
            platform: Platform::new(fixture.sockets, &fixture.cpu_model),
            service_tag,
            fixture,
            config,
            faults,
            stats: Stats::default(),
            tokens: std::collections::hash_map::RandomState::new(),
            state: Mutex::new(state),
            generation: AtomicU64::new(0),
            documents: Mutex::new(HashMap::new()),
            web_certificate: None,
        }
    }

    /// This host describing `certificate` as its web server certificate.
    #[must_use]
    pub fn serving(mut self, certificate: Arc<crate::tls::WebCertificate>) -> Self {
        self.web_certificate = Some(certificate);
        self
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a handler panicked mid-update; the state is still usable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Locks the state after moving time forward.
    pub(crate) fn now(&self) -> MutexGuard<'_, State> {
        let mut s = self.lock();
        self.advance(&mut s, Instant::now());
        s
    }

    /// Locks the state, after moving time forward, for an operation that may change what a
    /// document shows: every cached rendering is stale from here on. Everything that changes
    /// the state other than scheduled changes (which bump the generation themselves), session
    /// bookkeeping and the energy counter (which no cached document shows) locks through here.
    pub(crate) fn change(&self) -> MutexGuard<'_, State> {
        let s = self.now();
        self.changed();
        s
    }

    /// Marks every cached rendering stale (a change was made, or a scheduled one fired); the
    /// state lock is held.
    pub(crate) fn changed(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The document at `path` as `render` makes it from this
    /// host's state, serialized: the copy kept from an earlier request while nothing it can
    /// show has changed since, else a new rendering (kept when it is a 200 and nothing changed
    /// while it was made). `render` must depend on the state only through the fields that
    /// `Host::change` guards.
    pub fn cached(&self, path: &str, render: impl FnOnce() -> Reply) -> Reply {
        let generation = {
            // Time first: a change scheduled before now fires (and bumps) here.
            let mut state = self.lock();
            self.fire_due(&mut state, Instant::now());
            self.generation.load(Ordering::SeqCst)
        };
        let lock = || self.documents.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, hit)) = lock().get(path).filter(|(at, _)| *at == generation) {
            return Reply::ok_rendered(hit.clone());
        }
        let reply = render().render();
        if let Some(rendered) = &reply.rendered
            && reply.status == 200
            && reply.headers.is_empty()
            && self.generation.load(Ordering::SeqCst) == generation
        {
            lock().insert(path.to_owned(), (generation, rendered.clone()));
        }
        reply
    }

    /// A uniform sample in `[0, 1)` from the host's seeded generator (latency, faults).
    pub fn draw(&self) -> f64 {
        self.lock().rng.f64()
    }

    /// Current BIOS values, pending values and power, for tests.
    pub fn snapshot(&self) -> (Attributes, Attributes, bool) {
        let s = self.now();
        (s.bios.values.clone(), s.bios.pending.clone(), s.power.on)
    }

    /// Whether the iDRAC takes the 7.x shapes (firmware 7.x, iDRAC10, or a tree that does not
    /// say): some documents' versions and paths follow it.
    pub(crate) fn is_7x(&self) -> bool {
        crate::generation::newer_shapes(self.fixture.doc(redfish_client::oem::dell::MANAGER))
    }

    /// Whether the tree is an iDRAC10's (17G): how its jobs are reported follows it.
    pub(crate) fn idrac10(&self) -> bool {
        self.fixture.bmc == crate::generation::Bmc::Idrac10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_tags_are_unique_and_seven_characters() {
        let tags: std::collections::BTreeSet<String> = (0..5000).map(|i| service_tag("R7625A1", i)).collect();
        assert_eq!(tags.len(), 5000);
        assert!(tags.iter().all(|t| t.len() == 7));
        assert_eq!(service_tag("R7625A1", 1), "R760001");
        assert_eq!(
            service_tag("R7625A1", 0),
            "R7625A1",
            "the first host keeps the tree's tag"
        );
        // A tree whose tag looks derived: no two hosts share one.
        let tags: std::collections::BTreeSet<String> = (0..100).map(|i| service_tag("R760005", i)).collect();
        assert_eq!(tags.len(), 100);
    }
}
