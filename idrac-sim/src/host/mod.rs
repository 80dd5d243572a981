//! One emulated iDRAC: its state and what each operation does to it, independent of HTTP.
//!
//! Time is a function of the clock, not of requests: every scheduled change happens at its own
//! instant, and each operation first replays the ones whose instant has passed (`timeline`).
//!
//! This module holds the host's state and its identity; the submodules, the operations on it:
//! `timeline` (the clock: shutdowns, POST and the BIOS job it runs, windows, iDRAC and LC
//! restarts, readiness), `sessions` (login, tokens, logout), `documents` (the recorded documents
//! with live values), `registry` (what the current values make of the registry: hidden and
//! read-only attributes, System Lockdown, the rendered registry), `readings` (power readings
//! and the energy counter), `bios` (staging, `ClearPending`, `ResetBios`, `ChangePassword`),
//! `attributes` (the messages a refused attribute write carries, whichever operation wrote it),
//! `jobs` (the queue and its two views, the kinds of job, reboot jobs, windows), `actions`
//! (system, chassis and manager resets, boot override, BIOS recovery), `boot` (the boot
//! sequence and what changes it), `secure_boot` (Secure Boot and its key resets) and `dell`
//! (iDRAC attributes).

pub(crate) mod accounts;
pub(crate) mod actions;
mod attributes;
pub(crate) mod bios;
pub(crate) mod boot;
pub(crate) mod certificates;
pub(crate) mod chassis;
pub(crate) mod dell;
pub(crate) mod documents;
mod episodes;
pub(crate) mod events;
pub(crate) mod jobs;
pub(crate) mod logs;
pub(crate) mod network;
mod numa;
pub(crate) mod readings;
mod registry;
mod reply;
pub(crate) mod scp;
pub(crate) mod secure_boot;
pub(crate) mod sessions;
pub(crate) mod timeline;

pub use accounts::{ACCOUNTS, LEGACY_ACCOUNTS};
pub use boot::{BOOT_SOURCES, DELL_BOOT_SOURCES};
pub use jobs::DMTF_JOBS;
pub use logs::{Caller, FAULT_ENTRIES, LCLOG_ENTRIES, LEGACY_LCLOG, SEL_ENTRIES};
pub use network::MANAGER_NIC;
pub use reply::{Rendered, Reply, XML};
pub use scp::TASKS;
pub use sessions::{SESSIONS, SESSIONS_MEMBERS};
pub use timeline::Availability;

use crate::config::{FaultKind, SimConfig};
use crate::fixture::Fixture;
use crate::power::Platform;
use crate::stats::Stats;
use episodes::{Boot, Outage, Shutdown};
use jobs::Job;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::Attributes;
use registry::View;
use serde_json::Value;
use sessions::Session;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// The Manager, the origin of most Lifecycle-log entries.
pub const MANAGER: &str = redfish_client::oem::dell::MANAGER;

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
}

#[derive(Debug)]
struct State {
    on: bool,
    boot: Option<Boot>,
    shutdown: Option<Shutdown>,
    outage: Option<Outage>,
    /// A value for every registry attribute, hidden ones included.
    bios: Attributes,
    /// Attributes whose value the tree did not give and nothing has set since ([`Fixture::hidden_bios`]):
    /// a rule that reads one is unknown, so the registry's recorded flag stands.
    inferred: BTreeSet<String>,
    view: Option<View>,
    pending: Attributes,
    /// `Bios.ResetBios` was called: the next POST restores the defaults.
    reset_bios_pending: bool,
    /// BIOS passwords set so far (none at start), and changes waiting for a BIOS job.
    passwords: BTreeMap<String, String>,
    password_pending: BTreeMap<String, String>,
    /// `Boot` of the ComputerSystem (the one-time boot override).
    boot_override: serde_json::Map<String, Value>,
    /// The UEFI boot sequence in force.
    boot_seq: Vec<boot::BootDev>,
    /// A boot sequence staged for the next BIOS job (boot sources, `Boot.BootOrder`).
    boot_seq_pending: Option<Vec<boot::BootDev>>,
    /// A Secure Boot key reset waiting for POST.
    keys_pending: Option<String>,
    /// The Secure Boot keys were deleted (no platform key).
    keys_deleted: bool,
    /// The running boot was verified by Secure Boot.
    secure_boot_verified: bool,
    jobs: BTreeMap<String, Job>,
    job_seq: u64,
    /// The SCP jobs' own state (export, preview, import), by job id.
    scp: BTreeMap<String, scp::Task>,
    dell: BTreeMap<AttributeGroup, Attributes>,
    sessions: BTreeMap<u64, Session>,
    session_seq: u64,
    /// The 16 account slots (index 0 is slot 1).
    accounts: Vec<accounts::Account>,
    logs: logs::Logs,
    /// Event subscriptions by id, as served.
    subscriptions: BTreeMap<String, Value>,
    subscription_seq: u64,
    /// The iDRAC's NTP servers, as `NetworkProtocol` lists them.
    ntp_servers: Vec<String>,
    /// The last certificate signing request `CertificateService.GenerateCSR` made.
    last_csr: Option<String>,
    /// The identify LED's properties as last PATCHed (`LocationIndicatorActive`, `IndicatorLED`).
    indicator: serde_json::Map<String, Value>,
    utilization: f64,
    rng: fastrand::Rng,
    energy_joules: f64,
    energy_at: Instant,
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
    platform: Platform,
    /// Session tokens come from the process's random keys, never from `--seed`: two emulators
    /// started with the same seed must not hand out the same tokens.
    tokens: std::collections::hash_map::RandomState,
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
    web_certificate: Option<Arc<crate::tls::WebCertificate>>,
}

/// The iDRAC attribute that turns System Lockdown on and off.
const LOCKDOWN: &str = "Lockdown.1.SystemLockdown";

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
        let service_tag = service_tag(&fixture.service_tag, index);
        let bios = Self::default_bios(&fixture, &service_tag);
        let mut dell = fixture.dell_attributes.clone();
        if config.lockdown {
            dell.entry(AttributeGroup::Idrac)
                .or_default()
                .insert(LOCKDOWN.to_owned(), "Enabled".into());
        }
        let boot_override = fixture
            .doc(redfish_client::oem::dell::SYSTEM)
            .and_then(|d| d.get("Boot"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let now = Instant::now();
        let state = State {
            on: true,
            boot: None,
            shutdown: None,
            outage: None,
            bios,
            inferred: fixture.hidden_bios.keys().cloned().collect(),
            view: None,
            pending: Attributes::new(),
            reset_bios_pending: false,
            passwords: BTreeMap::new(),
            password_pending: BTreeMap::new(),
            boot_override,
            boot_seq: boot::initial_sequence(&fixture),
            boot_seq_pending: None,
            keys_pending: None,
            keys_deleted: false,
            secure_boot_verified: fixture.bios.get("SecureBoot").and_then(|v| v.as_str()) == Some("Enabled"),
            jobs: BTreeMap::new(),
            job_seq: 0,
            scp: BTreeMap::new(),
            dell,
            sessions: BTreeMap::new(),
            session_seq: 0,
            accounts: Self::initial_accounts(&fixture, &config),
            logs: logs::Logs::default(),
            subscriptions: BTreeMap::new(),
            subscription_seq: 0,
            ntp_servers: Vec::new(),
            last_csr: None,
            indicator: serde_json::Map::new(),
            utilization: 0.0,
            rng: fastrand::Rng::with_seed(config.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            // A captured tree's counter goes on from its recorded value.
            energy_joules: fixture
                .doc("/redfish/v1/Chassis/System.Embedded.1/EnvironmentMetrics")
                .and_then(|d| d.pointer("/EnergykWh/Reading"))
                .and_then(Value::as_f64)
                .filter(|kwh| kwh.is_finite() && *kwh >= 0.0)
                .map_or(0.0, |kwh| kwh * 3.6e6),
            energy_at: now,
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

    /// The BIOS values a host starts with, and returns to after `Bios.ResetBios`: the tree's
    /// values (the inferred ones for attributes it does not list), with this host's tag.
    fn default_bios(fixture: &Fixture, service_tag: &str) -> Attributes {
        let mut bios = fixture.hidden_bios.clone();
        bios.extend(fixture.bios.clone());
        if bios.contains_key("SystemServiceTag") {
            bios.insert("SystemServiceTag".to_owned(), service_tag.into());
        }
        bios
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a handler panicked mid-update; the state is still usable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Locks the state after moving time forward.
    fn now(&self) -> MutexGuard<'_, State> {
        let mut s = self.lock();
        self.advance(&mut s, Instant::now());
        s
    }

    /// Locks the state, after moving time forward, for an operation that may change what a
    /// document shows: every cached rendering is stale from here on. Everything that changes
    /// the state other than scheduled changes (which bump the generation themselves), session
    /// bookkeeping and the energy counter (which no cached document shows) locks through here.
    fn change(&self) -> MutexGuard<'_, State> {
        let s = self.now();
        self.changed();
        s
    }

    /// Marks every cached rendering stale (a change was made, or a scheduled one fired); the
    /// state lock is held.
    fn changed(&self) {
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
        (s.bios.clone(), s.pending.clone(), s.on)
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
