//! One emulated iDRAC: its state and what each operation does to it, independent of HTTP.
//!
//! Time is a function of the clock, not of requests: every scheduled change (a graceful
//! shutdown ending, POST's phases, a maintenance window opening or closing, a reboot job's start
//! time, the end of an iDRAC or Lifecycle Controller restart) happens at its own instant. Each
//! operation first replays, in order, every change whose instant has passed, each at that
//! instant (a power-on that follows a shutdown starts when the shutdown ended, not when the next
//! request arrives), so no task runs per host and nothing a client sees depends on when it asks.
//!
//! Submodules hold the operations: `bios` (staging, `ClearPending`, `ResetBios`,
//! `ChangePassword`), `jobs` (the queue and its two views, reboot jobs, windows), `actions`
//! (system, chassis and manager resets, boot override, BIOS recovery) and `dell` (iDRAC
//! attributes).

mod actions;
mod bios;
mod dell;
mod jobs;

pub use jobs::DMTF_JOBS;

use crate::clock;
use crate::config::{FaultKind, SimConfig};
use crate::fixture::{EntryFlags, Fixture};
use crate::messages::{self, idrac};
use crate::power::{self, Phase, Platform};
use crate::stats::Stats;
use axum::body::Bytes;
use jobs::{Job, JobKind};
use redfish_client::dependencies::{DependencyEvaluator, Evaluation};
use redfish_client::oem::dell::{AttributeGroup, JobState};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

/// An HTTP-agnostic answer: status, extra headers, JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers (`Location`, `Retry-After`, `X-Auth-Token`).
    pub headers: Vec<(&'static str, String)>,
    /// Body; `None` for an empty body (or when `rendered` carries it).
    pub body: Option<Value>,
    /// A body already serialized (the cached BIOS registry); served instead of `body`.
    pub rendered: Option<Bytes>,
}

impl Reply {
    /// 200 with a body.
    pub fn ok(body: Value) -> Self {
        Self::with_body(200, Some(body))
    }

    /// 200 with a JSON body serialized earlier.
    pub fn ok_rendered(body: Bytes) -> Self {
        Self {
            rendered: Some(body),
            ..Self::with_body(200, None)
        }
    }

    /// A status with a body, or none.
    pub fn with_body(status: u16, body: Option<Value>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body,
            rendered: None,
        }
    }

    /// A status with an `{"error": ...}` body.
    pub fn error(status: u16, messages: Vec<Value>) -> Self {
        Self::with_body(status, Some(messages::error_body(messages)))
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}

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

#[derive(Debug, Clone)]
struct Session {
    token: String,
    last_used: Instant,
    user: String,
}

#[derive(Debug, Clone, Copy)]
struct Boot {
    started: Instant,
    job_started: bool,
    job_done: bool,
}

#[derive(Debug, Clone, Copy)]
struct Shutdown {
    at: Instant,
    then_boot: bool,
}

/// The iDRAC's own services are unavailable: after `Manager.Reset` (the iDRAC reboots: no
/// connection at first, then SWC0700 on the configuration paths) or after `JID_CLEARALL_FORCE`
/// (the Lifecycle Controller restarts: SWC0700, and the Systems collection lists no member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Outage {
    /// Connections are dropped until then (an iDRAC reset only).
    down_until: Option<Instant>,
    /// Configuration services answer again from then on.
    ready_at: Instant,
}

impl Outage {
    /// An iDRAC reboot: unreachable for half a POST, then not ready for a POST.
    fn idrac_reset(now: Instant, boot_time: Duration) -> Self {
        let down_until = now + boot_time / 2;
        Self {
            down_until: Some(down_until),
            ready_at: down_until + boot_time,
        }
    }

    /// A Lifecycle Controller restart: not ready for a POST's length.
    fn lc_restart(now: Instant, boot_time: Duration) -> Self {
        Self {
            down_until: None,
            ready_at: now + boot_time,
        }
    }
}

/// What a request to the Systems tree or the iDRAC attributes meets while the iDRAC or its
/// Lifecycle Controller restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Served normally.
    Ready,
    /// The iDRAC is rebooting: the connection is dropped.
    Unreachable,
    /// Configuration services are restarting after an iDRAC reset: 400 SWC0700 everywhere on
    /// those paths, the Systems collection included.
    IdracStarting,
    /// The Lifecycle Controller is restarting: the Systems collection lists no member and its
    /// resources answer 400 SWC0700.
    LcRestarting,
}

/// What the current values make of the registry: computed on demand, dropped whenever BIOS
/// values or System Lockdown change.
#[derive(Debug, Default)]
struct View {
    hidden: BTreeSet<String>,
    read_only: BTreeSet<String>,
    /// The served registry, once rendered.
    registry: Option<Bytes>,
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
    jobs: BTreeMap<String, Job>,
    job_seq: u64,
    dell: BTreeMap<AttributeGroup, Attributes>,
    sessions: BTreeMap<u64, Session>,
    session_seq: u64,
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
}

/// The iDRAC attribute that turns System Lockdown on and off.
const LOCKDOWN: &str = "Lockdown.1.SystemLockdown";

/// Something scheduled that happens at its own instant.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    OutageEnds,
    ShutdownEnds,
    BiosJobStarts,
    BiosJobEnds,
    PostEnds,
    WindowOpens(String),
    WindowCloses(String),
    RebootJobRuns(String),
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

/// The wall-clock time of `at`.
fn wall(at: Instant) -> SystemTime {
    let now = Instant::now();
    let wall_now = SystemTime::now();
    if at <= now {
        wall_now.checked_sub(now - at).unwrap_or(wall_now)
    } else {
        wall_now.checked_add(at - now).unwrap_or(wall_now)
    }
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
            jobs: BTreeMap::new(),
            job_seq: 0,
            dell,
            sessions: BTreeMap::new(),
            session_seq: 0,
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
        }
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

    fn registry(&self) -> &AttributeRegistry {
        &self.fixture.bios_registry
    }

    /// The values rules may read: every value but the inferred guesses.
    fn known(s: &State) -> Attributes {
        s.bios
            .iter()
            .filter(|(k, _)| !s.inferred.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The registry's rules on `candidate`. As on a real iDRAC's `GET …/Bios`, an attribute the
    /// candidate lacks is hidden unless a `Hidden` rule decides otherwise, and a rule that reads
    /// a value the candidate lacks leaves the registry's recorded flag standing.
    fn evaluate(&self, candidate: &Attributes) -> Evaluation<'_> {
        DependencyEvaluator::new(self.registry())
            .with_listing(candidate.keys())
            .evaluate(candidate)
    }

    /// The view of the current values, computed if the state changed since the last one.
    fn view<'s>(&self, s: &'s mut State) -> &'s mut View {
        if s.view.is_none() {
            let evaluation = self.evaluate(&Self::known(s));
            let mut view = View::default();
            for attr in &self.registry().registry_entries.attributes {
                let name = attr.attribute_name.as_str();
                if evaluation.is_hidden(name) {
                    view.hidden.insert(name.to_owned());
                }
                if evaluation.is_read_only(name) {
                    view.read_only.insert(name.to_owned());
                }
            }
            s.view = Some(view);
        }
        s.view.get_or_insert_with(View::default)
    }

    // ---- time -------------------------------------------------------------------------

    /// Replays every scheduled change up to `now`, each at its own instant.
    fn advance(&self, s: &mut State, now: Instant) {
        while let Some((at, event)) = self.next_event(s).filter(|(at, _)| *at <= now) {
            self.account_energy(s, at);
            self.fire(s, at, event);
        }
        self.account_energy(s, now);
        if let Some(boot) = s.boot
            && let Some(job) = s.jobs.values_mut().find(|j| j.state == JobState::Running)
        {
            let total = self.config.boot_time;
            let elapsed = now.saturating_duration_since(boot.started);
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let pct = (elapsed.as_secs_f64() / total.as_secs_f64().max(1e-3) * 100.0).clamp(10.0, 99.0) as u8;
            job.percent = pct;
        }
    }

    /// The earliest scheduled change, if any.
    fn next_event(&self, s: &State) -> Option<(Instant, Event)> {
        let mut candidates: Vec<(Instant, Event)> = Vec::new();
        if let Some(o) = s.outage {
            candidates.push((o.ready_at, Event::OutageEnds));
        }
        if let Some(sd) = s.shutdown {
            candidates.push((sd.at, Event::ShutdownEnds));
        }
        if let Some(b) = s.boot {
            let total = self.config.boot_time;
            if !b.job_started {
                candidates.push((b.started + total.mul_f64(0.1), Event::BiosJobStarts));
            } else if self.faults.no_return {
                // POST never ends: nothing more happens in it.
            } else if !b.job_done {
                candidates.push((b.started + total.mul_f64(0.6), Event::BiosJobEnds));
            } else {
                candidates.push((b.started + total, Event::PostEnds));
            }
        }
        for job in s.jobs.values() {
            if job.state == JobState::Scheduled {
                if let Some(w) = job.window {
                    if w.reboots && !w.triggered {
                        candidates.push((w.start, Event::WindowOpens(job.id.clone())));
                    }
                    if let Some(end) = w.end {
                        candidates.push((end, Event::WindowCloses(job.id.clone())));
                    }
                }
                if let Some(at) = job.run_at {
                    candidates.push((at, Event::RebootJobRuns(job.id.clone())));
                }
            }
        }
        candidates.into_iter().min_by_key(|(at, _)| *at)
    }

    fn fire(&self, s: &mut State, at: Instant, event: Event) {
        match event {
            Event::OutageEnds => s.outage = None,
            Event::ShutdownEnds => {
                let then_boot = s.shutdown.is_some_and(|sd| sd.then_boot);
                s.shutdown = None;
                s.on = false;
                // A host shut down in POST does not finish that POST.
                s.boot = None;
                if then_boot {
                    self.start_boot(s, at);
                }
            }
            Event::BiosJobStarts => {
                if let Some(b) = s.boot.as_mut() {
                    b.job_started = true;
                }
                self.start_bios_job(s, at);
            }
            Event::BiosJobEnds => {
                if let Some(b) = s.boot.as_mut() {
                    b.job_done = true;
                }
                self.finish_bios_job(s, at);
            }
            Event::PostEnds => {
                s.boot = None;
                s.on = true;
                // A one-time boot override is used up by the boot it applied to.
                if s.boot_override.get("BootSourceOverrideEnabled").and_then(Value::as_str) == Some("Once") {
                    s.boot_override
                        .insert("BootSourceOverrideEnabled".into(), "Disabled".into());
                    s.boot_override.insert("BootSourceOverrideTarget".into(), "None".into());
                }
            }
            Event::WindowOpens(id) => {
                if let Some(w) = s.jobs.get_mut(&id).and_then(|j| j.window.as_mut()) {
                    w.triggered = true;
                }
                // AtMaintenanceWindowStart: the iDRAC restarts the host itself.
                s.shutdown = None;
                self.start_boot(s, at);
            }
            Event::WindowCloses(id) => {
                if let Some(job) = s.jobs.get_mut(&id)
                    && job.state == JobState::Scheduled
                {
                    job.state = JobState::Failed;
                    job.message_id = "SYS051";
                    job.message = "The maintenance window ended before the job could run.";
                    job.actual_stop = Some(wall(at));
                    s.pending.clear();
                    s.password_pending.clear();
                }
            }
            Event::RebootJobRuns(id) => self.run_reboot_job(s, &id, at),
        }
    }

    fn start_boot(&self, s: &mut State, at: Instant) {
        // A reboot job is done once the host restarts.
        for job in s.jobs.values_mut() {
            if job.state == JobState::RebootPending {
                job.state = JobState::RebootCompleted;
                job.message_id = "RED030";
                job.message = "Reboot is complete.";
                job.percent = 100;
                job.actual_stop = Some(wall(at));
            }
        }
        s.on = true;
        s.boot = Some(Boot {
            started: at,
            job_started: false,
            job_done: false,
        });
    }

    /// Early in POST the scheduled BIOS job starts, if this boot may run it (no window, or a
    /// boot inside its window).
    fn start_bios_job(&self, s: &mut State, at: Instant) {
        let Some(boot) = s.boot else { return };
        let stuck = self.faults.stuck_job;
        let eligible = |j: &Job| {
            j.kind == JobKind::Bios
                && j.state == JobState::Scheduled
                && j.message_id != "PR30"
                && j.window
                    .is_none_or(|w| boot.started >= w.start && w.end.is_none_or(|e| boot.started <= e))
        };
        if let Some(job) = s.jobs.values_mut().find(|j| eligible(j)) {
            if stuck {
                job.message_id = "PR30";
                job.message = "Job processing initialization failure.";
            } else {
                job.state = JobState::Running;
                job.message_id = "PR20";
                job.message = "Job in progress.";
                job.percent = 10;
                job.actual_start = Some(wall(at));
            }
        }
    }

    /// Later in POST: a requested BIOS reset restores the defaults, then the running BIOS job
    /// applies the pending values (with every value the registry's presets force) and password
    /// changes, or fails.
    fn finish_bios_job(&self, s: &mut State, at: Instant) {
        if s.reset_bios_pending {
            s.reset_bios_pending = false;
            s.bios = Self::default_bios(&self.fixture, &self.service_tag);
            s.inferred = self.fixture.hidden_bios.keys().cloned().collect();
            s.passwords.clear();
            s.view = None;
            self.set_rtd_flag(s, false);
        }
        let Some(job) = s.jobs.values_mut().find(|j| j.state == JobState::Running) else {
            return;
        };
        job.actual_stop = Some(wall(at));
        job.percent = 100;
        if self.faults.job_fails {
            job.state = JobState::Failed;
            job.message_id = "SYS051";
            job.message = "Unable to apply the BIOS configuration changes.";
            s.pending.clear();
            s.password_pending.clear();
            return;
        }
        job.state = JobState::Completed;
        job.message_id = "PR19";
        job.message = "Job completed successfully.";
        let mut candidate = Self::known(s);
        candidate.extend(std::mem::take(&mut s.pending));
        let evaluation = self.evaluate(&candidate);
        for (name, value) in evaluation.values() {
            s.inferred.remove(name);
            s.bios.insert(name.clone(), value.clone());
        }
        let passwords = std::mem::take(&mut s.password_pending);
        for (name, new) in passwords {
            if new.is_empty() {
                s.passwords.remove(&name);
            } else {
                s.passwords.insert(name, new);
            }
        }
        s.view = None;
    }

    /// `LCAttributes.1.BIOSRTDRequested`, where the tree has it: whether a BIOS reset to
    /// defaults waits for the next POST.
    fn set_rtd_flag(&self, s: &mut State, requested: bool) {
        const RTD: &str = "LCAttributes.1.BIOSRTDRequested";
        if let Some(lc) = s.dell.get_mut(&AttributeGroup::LifecycleController)
            && lc.contains_key(RTD)
        {
            lc.insert(RTD.to_owned(), if requested { "True" } else { "False" }.into());
        }
    }

    /// What a request to the Systems tree or the iDRAC attributes meets right now.
    pub fn availability(&self) -> Availability {
        let s = self.now();
        match s.outage {
            None => Availability::Ready,
            Some(o) if o.down_until.is_some_and(|d| Instant::now() < d) => Availability::Unreachable,
            Some(o) if o.down_until.is_some() => Availability::IdracStarting,
            Some(_) => Availability::LcRestarting,
        }
    }

    /// Whether the iDRAC accepts connections (it does not while it reboots).
    pub fn reachable(&self) -> bool {
        self.availability() != Availability::Unreachable
    }

    // ---- sessions ---------------------------------------------------------------------

    /// `POST SessionService/Sessions`.
    pub fn login(&self, username: &str, password: &str) -> Reply {
        if username != self.config.username || password != self.config.password {
            return Reply::error(401, vec![messages::sys415()]);
        }
        let mut s = self.now();
        let timeout = self.config.session_timeout;
        s.sessions.retain(|_, sess| sess.last_used.elapsed() < timeout);
        if s.sessions.len() >= self.config.session_limit {
            return Reply::error(
                400,
                vec![idrac(
                    "RAC0218",
                    "The maximum number of user sessions is reached.",
                    &[],
                    "Close one or more sessions and retry the operation.",
                    None,
                )],
            );
        }
        s.session_seq += 1;
        let id = s.session_seq;
        let token = self.new_token(id);
        s.sessions.insert(
            id,
            Session {
                token: token.clone(),
                last_used: Instant::now(),
                user: username.to_owned(),
            },
        );
        self.stats.count_session();
        let location = format!("/redfish/v1/SessionService/Sessions/{id}");
        Reply::with_body(201, Some(Self::session_json(id, username)))
            .header("X-Auth-Token", token)
            .header("Location", location)
    }

    /// 128 bits from this process's random keys, the session number and the time.
    fn new_token(&self, id: u64) -> String {
        let half = |salt: u64| {
            let mut h = self.tokens.build_hasher();
            h.write_u64(id);
            h.write_u64(salt);
            h.write_u128(
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            h.finish()
        };
        format!("{:016x}{:016x}", half(1), half(2))
    }

    fn session_json(id: u64, user: &str) -> Value {
        json!({
            "@odata.context": "/redfish/v1/$metadata#Session.Session",
            "@odata.id": format!("/redfish/v1/SessionService/Sessions/{id}"),
            "@odata.type": "#Session.v1_6_0.Session",
            "ClientOriginIPAddress": "127.0.0.1",
            "Description": "User Session",
            "Id": id.to_string(),
            "Name": "User Session",
            "Password": null,
            "SessionType": "Redfish",
            "UserName": user,
        })
    }

    /// Whether `token` names a live session (and marks it used).
    pub fn check_token(&self, token: &str) -> bool {
        let mut s = self.now();
        let timeout = self.config.session_timeout;
        s.sessions.retain(|_, sess| sess.last_used.elapsed() < timeout);
        match s.sessions.values_mut().find(|sess| sess.token == token) {
            Some(sess) => {
                sess.last_used = Instant::now();
                true
            }
            None => false,
        }
    }

    /// Drops the session holding `token` (the `session-expiry` fault).
    pub fn expire_token(&self, token: &str) {
        self.lock().sessions.retain(|_, sess| sess.token != token);
    }

    /// Whether Basic credentials are right.
    pub fn check_basic(&self, username: &str, password: &str) -> bool {
        username == self.config.username && password == self.config.password
    }

    /// `DELETE SessionService/Sessions/<id>`.
    pub fn logout(&self, id: &str) -> Reply {
        let removed = id.parse::<u64>().ok().and_then(|n| self.lock().sessions.remove(&n));
        match removed {
            Some(_) => Reply::ok(messages::success_body(vec![messages::sys413()])),
            None => Reply::error(
                404,
                vec![messages::not_found(&format!(
                    "/redfish/v1/SessionService/Sessions/{id}"
                ))],
            ),
        }
    }

    /// The sessions collection; with `$expand`, the sessions inline.
    pub fn sessions(&self, expand: bool) -> Value {
        let s = self.now();
        let members: Vec<Value> = s
            .sessions
            .iter()
            .map(|(id, sess)| {
                if expand {
                    Self::session_json(*id, &sess.user)
                } else {
                    json!({"@odata.id": format!("/redfish/v1/SessionService/Sessions/{id}")})
                }
            })
            .collect();
        json!({"@odata.context": "/redfish/v1/$metadata#SessionCollection.SessionCollection",
               "@odata.id": "/redfish/v1/SessionService/Sessions", "@odata.type": "#SessionCollection.SessionCollection",
               "Description": "Session Collection",
               "Name": "Session Collection", "Members@odata.count": members.len(), "Members": members})
    }

    /// `GET SessionService/Sessions/<id>`.
    pub fn session(&self, id: &str) -> Reply {
        let s = self.now();
        match id
            .parse::<u64>()
            .ok()
            .and_then(|n| s.sessions.get(&n).map(|sess| (n, sess)))
        {
            Some((n, sess)) => Reply::ok(Self::session_json(n, &sess.user)),
            None => Reply::error(
                404,
                vec![messages::not_found(&format!(
                    "/redfish/v1/SessionService/Sessions/{id}"
                ))],
            ),
        }
    }

    // ---- documents --------------------------------------------------------------------

    /// The service root, with this host's service tag.
    pub fn service_root(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        set(&mut doc, &["Oem", "Dell", "ServiceTag"], json!(self.service_tag));
        doc
    }

    /// The system, with live power state and boot override. It answers during POST, as a real
    /// iDRAC's does (`PowerState` On); POST shows in `GetRemoteServicesAPIStatus`.
    pub fn system(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.on { "On" } else { "Off" }));
        set(&mut doc, &["SKU"], json!(self.service_tag));
        if let Some(v) = s.bios.get("SystemBiosVersion") {
            set(&mut doc, &["BiosVersion"], v.to_json());
        }
        for (k, v) in &s.boot_override {
            set(&mut doc, &["Boot", k], v.clone());
        }
        if doc.get("BootProgress").is_some() {
            let progress = match (s.on, s.boot) {
                (false, _) => "None",
                (true, Some(b)) if !b.job_done => "MemoryInitializationStarted",
                (true, Some(_)) => "SystemHardwareInitializationComplete",
                (true, None) => "OSRunning",
            };
            set(&mut doc, &["BootProgress", "LastState"], json!(progress));
        }
        doc
    }

    /// The chassis, with live power state.
    pub fn chassis(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.on { "On" } else { "Off" }));
        set(&mut doc, &["SKU"], json!(self.service_tag));
        doc
    }

    /// A document that carries the iDRAC's clock (`Manager`, `JobService`): `DateTime` is now.
    pub fn with_clock(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        if doc.get("DateTime").is_some() {
            set(&mut doc, &["DateTime"], json!(clock::with_offset(SystemTime::now())));
        }
        doc
    }

    /// `Bios` with the current values of the attributes those values leave visible: like a real
    /// iDRAC, hidden attributes are not listed.
    pub fn bios(&self, doc: &Value) -> Value {
        let mut s = self.now();
        self.view(&mut s);
        let State {
            bios,
            view,
            reset_bios_pending,
            ..
        } = &*s;
        let visible: Attributes = bios
            .iter()
            .filter(|(k, _)| view.as_ref().is_none_or(|v| !v.hidden.contains(*k)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut doc = doc.clone();
        set(
            &mut doc,
            &["Attributes"],
            serde_json::to_value(&visible).unwrap_or_default(),
        );
        if doc.get("ResetBiosToDefaultsPending").is_some() {
            set(&mut doc, &["ResetBiosToDefaultsPending"], json!(reset_bios_pending));
        }
        doc
    }

    /// `Bios/Settings` with pending values.
    pub fn bios_settings(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(
            &mut doc,
            &["Attributes"],
            serde_json::to_value(&s.pending).unwrap_or_default(),
        );
        doc
    }

    /// The BIOS registry with `ReadOnly`/`Hidden` evaluated for this host's current values, as a
    /// real iDRAC reports them. Under System Lockdown every attribute that would be writable is
    /// `ReadOnly` and `Immutable`, as on a real locked R750 (iDRAC 7.10). Rendered once per
    /// state change.
    pub fn bios_registry(&self) -> Reply {
        let mut s = self.now();
        let lockdown = Self::lockdown(&s);
        let view = self.view(&mut s);
        if let Some(body) = &view.registry {
            return Reply::ok_rendered(body.clone());
        }
        let index = self.registry().index();
        let flags = |name: &str| {
            let read_only = view.read_only.contains(name);
            let immutable = index.get(name).is_some_and(|a| a.immutable.unwrap_or(false));
            EntryFlags {
                read_only: read_only || lockdown,
                hidden: view.hidden.contains(name),
                immutable: immutable || (lockdown && !read_only),
            }
        };
        let body = self.fixture.render_bios_registry(&flags);
        view.registry = Some(body.clone());
        Reply::ok_rendered(body)
    }

    /// A `DellAttributes` resource with live values.
    pub fn dell_attributes(&self, group: AttributeGroup, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        let values = serde_json::to_value(s.dell.get(&group).cloned().unwrap_or_default()).unwrap_or_default();
        set(&mut doc, &["Attributes"], values);
        doc
    }

    fn lockdown(s: &State) -> bool {
        s.dell
            .get(&AttributeGroup::Idrac)
            .and_then(|a| a.get(LOCKDOWN))
            .and_then(AttributeValue::as_str)
            == Some("Enabled")
    }

    // ---- readiness and power ------------------------------------------------------------

    /// A uniform sample in `[0, 1)` from the host's seeded generator (latency, faults).
    pub fn draw(&self) -> f64 {
        self.lock().rng.f64()
    }

    /// `DellLCService.GetRemoteServicesAPIStatus`: how Dell's guidance says to tell POST
    /// (`ServerStatus` InPOST, `Status` NotReady) and a restarting Lifecycle Controller
    /// (`LCStatus` NotReady) apart from a ready host.
    pub fn lc_status(&self) -> Value {
        let s = self.now();
        let lc_ready = s.outage.is_none();
        let (server, host_ready) = match (s.on, s.boot.is_some()) {
            (false, _) => ("PoweredOff", true),
            (true, true) => ("InPOST", false),
            (true, false) => ("OutOfPOST", true),
        };
        let word = |ready: bool| if ready { "Ready" } else { "NotReady" };
        json!({
            "LCStatus": word(lc_ready && host_ready),
            "Status": word(lc_ready && host_ready),
            "ServerStatus": server,
            "RTStatus": "Ready",
            "TelemetryStatus": word(lc_ready),
            "@Message.ExtendedInfo": [idrac(
                "LC061",
                if lc_ready && host_ready { "Lifecycle Controller Remote Services is ready." } else { "Lifecycle Controller Remote Services is not ready." },
                &[],
                "No response action is required.",
                None,
            )],
        })
    }

    /// Sets the simulated load (0..=1).
    pub fn set_load(&self, utilization: f64) {
        self.now().utilization = utilization.clamp(0.0, 1.0);
    }

    fn phase(s: &State) -> Phase {
        match (s.on, s.boot.is_some()) {
            (false, _) => Phase::Off,
            (true, true) => Phase::Booting,
            (true, false) => Phase::On,
        }
    }

    fn model_watts(&self, s: &State) -> f64 {
        let empty = Attributes::new();
        let system = s.dell.get(&AttributeGroup::System).unwrap_or(&empty);
        power::watts(self.platform, Self::phase(s), s.utilization, &s.bios, system)
    }

    fn account_energy(&self, s: &mut State, now: Instant) {
        let dt = now.saturating_duration_since(s.energy_at).as_secs_f64();
        s.energy_joules += self.model_watts(s) * dt;
        s.energy_at = s.energy_at.max(now);
    }

    /// One noisy reading of the instantaneous draw, whole watts.
    pub fn reading(&self) -> f64 {
        let mut s = self.now();
        let w = self.model_watts(&s);
        let sample = s.rng.f64();
        power::with_noise(w, sample)
    }

    /// `Chassis/System.Embedded.1/Power` with live readings.
    pub fn power(&self, doc: &Value) -> Value {
        let watts = self.reading();
        let model = self.model_watts(&self.lock());
        let mut doc = doc.clone();
        if let Some(control) = doc.get_mut("PowerControl").and_then(|c| c.get_mut(0)) {
            set(control, &["PowerConsumedWatts"], json!(watts));
            set(control, &["PowerMetrics", "AverageConsumedWatts"], json!(model.round()));
            set(
                control,
                &["PowerMetrics", "MinConsumedWatts"],
                json!((model * 0.97).round()),
            );
            set(
                control,
                &["PowerMetrics", "MaxConsumedWatts"],
                json!((model * 1.03).round()),
            );
            let s = self.lock();
            if let Some(cap) = s
                .dell
                .get(&AttributeGroup::System)
                .and_then(|a| a.get("ServerPwr.1.PowerCapValue"))
            {
                set(control, &["PowerLimit", "LimitInWatts"], cap.to_json());
            }
        }
        doc
    }

    /// `Chassis/System.Embedded.1/EnvironmentMetrics` with live readings.
    pub fn environment_metrics(&self, doc: &Value) -> Value {
        let watts = self.reading();
        let kwh = self.lock().energy_joules / 3.6e6;
        let mut doc = doc.clone();
        set(&mut doc, &["PowerWatts", "Reading"], json!(watts));
        set(
            &mut doc,
            &["EnergykWh", "Reading"],
            json!((kwh * 1000.0).round() / 1000.0),
        );
        doc
    }

    /// A sensor resource whose reading is the system input power.
    pub fn power_sensor(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        set(&mut doc, &["Reading"], json!(self.reading()));
        doc
    }

    /// Current BIOS values, pending values and power, for tests.
    pub fn snapshot(&self) -> (Attributes, Attributes, bool) {
        let s = self.now();
        (s.bios.clone(), s.pending.clone(), s.on)
    }

    /// Time until POST ends, if booting.
    pub fn boot_remaining(&self) -> Option<Duration> {
        let s = self.now();
        s.boot
            .map(|b| self.config.boot_time.saturating_sub(b.started.elapsed()))
    }
}

/// Sets `value` at `path` in a recorded document, creating objects for missing or null steps.
/// A step that is some other JSON (a tree of an unexpected shape) leaves the document as it is:
/// data from a file must never panic the emulator.
fn set(doc: &mut Value, path: &[&str], value: Value) {
    let Some((last, steps)) = path.split_last() else { return };
    let mut at = doc;
    for step in steps {
        if at.is_null() {
            *at = Value::Object(serde_json::Map::new());
        }
        let Some(next) = at.as_object_mut().map(|o| o.entry(*step).or_insert(Value::Null)) else {
            return;
        };
        at = next;
    }
    if at.is_null() {
        *at = Value::Object(serde_json::Map::new());
    }
    if let Some(o) = at.as_object_mut() {
        o.insert((*last).to_owned(), value);
    }
}

/// A Dell success message with the generic text.
fn idrac_ok(code: &str) -> Value {
    idrac(
        code,
        "The operation successfully completed.",
        &[],
        "No response action is required.",
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_of_an_unexpected_shape_are_left_alone_not_panicked_on() {
        let mut doc = json!({"PowerWatts": "n/a", "Oem": null});
        set(&mut doc, &["PowerWatts", "Reading"], json!(5));
        set(&mut doc, &["Oem", "Dell", "ServiceTag"], json!("T"));
        assert_eq!(doc, json!({"PowerWatts": "n/a", "Oem": {"Dell": {"ServiceTag": "T"}}}));
        let mut list = json!([1, 2]);
        set(&mut list, &["Attributes"], json!({}));
        assert_eq!(list, json!([1, 2]));
    }

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

    #[test]
    fn an_instant_maps_to_the_wall_clock_either_side_of_now() {
        let now = Instant::now();
        let earlier = wall(now - Duration::from_secs(60));
        let later = wall(now + Duration::from_secs(60));
        let span = later.duration_since(earlier).unwrap();
        assert!((span.as_secs_f64() - 120.0).abs() < 1.0, "{span:?}");
    }
}
