//! One emulated iDRAC: its state and what each operation does to it, independent of HTTP.
//! Time moves lazily: every operation first calls `advance`, which walks resets, POST and BIOS
//! jobs forward to "now", so no background task is needed per host.

use crate::config::{FaultKind, SimConfig};
use crate::fixture::{EntryFlags, Fixture};
use crate::messages::{self, base, idrac};
use crate::power::{self, Phase, Platform};
use crate::stats::Stats;
use axum::body::Bytes;
use redfish_client::dependencies::{Allowed, Conditions, DependencyEvaluator, Evaluation};
use redfish_client::oem::dell::{AttributeGroup, JobState};
use redfish_client::resources::attribute_registry::{AttributeRegistry, ValueProblem};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use redfish_client::resources::computer_system::ResetType;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
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

/// A configuration job.
#[derive(Debug, Clone, PartialEq)]
struct Job {
    id: String,
    state: JobState,
    message_id: &'static str,
    message: &'static str,
    percent: u8,
    start_time: String,
    completion_time: Option<String>,
}

#[derive(Debug, Clone)]
struct Session {
    token: String,
    last_used: Instant,
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
    /// A value for every registry attribute, hidden ones included.
    bios: Attributes,
    /// Attributes whose value the tree did not give and nothing has set since ([`Fixture::hidden_bios`]):
    /// a rule that reads one is unknown, so the registry's recorded flag stands.
    inferred: BTreeSet<String>,
    view: Option<View>,
    pending: Attributes,
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
    state: Mutex<State>,
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
        let mut bios = fixture.hidden_bios.clone();
        bios.extend(fixture.bios.clone());
        for key in ["SystemServiceTag"] {
            if bios.contains_key(key) {
                bios.insert(key.to_owned(), service_tag.clone().into());
            }
        }
        let mut dell = fixture.dell_attributes.clone();
        if config.lockdown {
            dell.entry(AttributeGroup::Idrac)
                .or_default()
                .insert(LOCKDOWN.to_owned(), "Enabled".into());
        }
        let now = Instant::now();
        let state = State {
            on: true,
            boot: None,
            shutdown: None,
            bios,
            inferred: fixture.hidden_bios.keys().cloned().collect(),
            view: None,
            pending: Attributes::new(),
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
            state: Mutex::new(state),
        }
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

    fn advance(&self, s: &mut State, now: Instant) {
        self.account_energy(s, now);
        if let Some(sd) = s.shutdown
            && now >= sd.at
        {
            s.shutdown = None;
            s.on = false;
            if sd.then_boot {
                self.start_boot(s, now);
            }
        }
        let Some(mut boot) = s.boot else { return };
        let total = self.config.boot_time;
        let elapsed = now.saturating_duration_since(boot.started);
        if !boot.job_started && elapsed >= total.mul_f64(0.1) {
            boot.job_started = true;
            self.start_bios_job(s);
        }
        if self.faults.no_return {
            s.boot = Some(boot);
            return;
        }
        if let Some(job) = s.jobs.values_mut().find(|j| j.state == JobState::Running) {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let pct = (elapsed.as_secs_f64() / total.as_secs_f64().max(1e-3) * 100.0).clamp(10.0, 99.0) as u8;
            job.percent = pct;
        }
        if !boot.job_done && elapsed >= total.mul_f64(0.6) {
            boot.job_done = true;
            self.finish_bios_job(s);
        }
        if elapsed >= total {
            s.boot = None;
            s.on = true;
        } else {
            s.boot = Some(boot);
        }
    }

    fn start_boot(&self, s: &mut State, now: Instant) {
        s.on = true;
        s.boot = Some(Boot {
            started: now,
            job_started: false,
            job_done: false,
        });
    }

    fn start_bios_job(&self, s: &mut State) {
        let stuck = self.faults.stuck_job;
        if let Some(job) = s
            .jobs
            .values_mut()
            .find(|j| j.state == JobState::Scheduled && j.message_id != "PR30")
        {
            if stuck {
                job.message_id = "PR30";
                job.message = "Job processing initialization failure.";
            } else {
                job.state = JobState::Running;
                job.message_id = "PR20";
                job.message = "Job in progress.";
                job.percent = 10;
            }
        }
    }

    fn finish_bios_job(&self, s: &mut State) {
        let Some(job) = s.jobs.values_mut().find(|j| j.state == JobState::Running) else {
            return;
        };
        job.completion_time = Some(humantime::format_rfc3339_seconds(SystemTime::now()).to_string());
        job.percent = 100;
        if self.faults.job_fails {
            job.state = JobState::Failed;
            job.message_id = "SYS051";
            job.message = "Unable to apply the BIOS configuration changes.";
            s.pending.clear();
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
        s.view = None;
    }

    /// Whether the service answers "not ready" for the system right now (early POST, or a host
    /// that never comes back).
    pub fn not_ready(&self) -> bool {
        let s = self.now();
        match s.boot {
            Some(b) => self.faults.no_return || b.started.elapsed() < self.config.boot_time.mul_f64(0.4),
            None => false,
        }
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
                    "Close one or more sessions and retry the operation.",
                    None,
                )],
            );
        }
        s.session_seq += 1;
        let id = s.session_seq;
        let token = format!("{:016x}{:016x}", s.rng.u64(..), s.rng.u64(..));
        s.sessions.insert(
            id,
            Session {
                token: token.clone(),
                last_used: Instant::now(),
            },
        );
        self.stats.count_session();
        let location = format!("/redfish/v1/SessionService/Sessions/{id}");
        Reply::with_body(
            201,
            Some(json!({
                "@odata.id": location, "@odata.type": "#Session.v1_6_0.Session",
                "Id": id.to_string(), "Name": "User Session", "UserName": username,
            })),
        )
        .header("X-Auth-Token", token)
        .header("Location", location)
    }

    /// Whether `token` names a live session (and marks it used).
    pub fn check_token(&self, token: &str) -> bool {
        let mut s = self.lock();
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

    /// The sessions collection.
    pub fn sessions(&self) -> Value {
        let s = self.lock();
        let members: Vec<Value> = s
            .sessions
            .keys()
            .map(|id| json!({"@odata.id": format!("/redfish/v1/SessionService/Sessions/{id}")}))
            .collect();
        json!({"@odata.id": "/redfish/v1/SessionService/Sessions", "@odata.type": "#SessionCollection.SessionCollection",
               "Name": "Session Collection", "Members@odata.count": members.len(), "Members": members})
    }

    // ---- documents --------------------------------------------------------------------

    /// The service root, with this host's service tag.
    pub fn service_root(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        set(&mut doc, &["Oem", "Dell", "ServiceTag"], json!(self.service_tag));
        doc
    }

    /// The system, with live power state.
    pub fn system(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.on { "On" } else { "Off" }));
        set(&mut doc, &["SKU"], json!(self.service_tag));
        if let Some(v) = s.bios.get("SystemBiosVersion") {
            set(&mut doc, &["BiosVersion"], v.to_json());
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

    /// `Bios` with the current values of the attributes those values leave visible: like a real
    /// iDRAC, hidden attributes are not listed.
    pub fn bios(&self, doc: &Value) -> Value {
        let mut s = self.now();
        self.view(&mut s);
        let State { bios, view, .. } = &*s;
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

    // ---- BIOS staging -----------------------------------------------------------------

    /// `PATCH Bios/Settings`: validate like iDRAC, stage, and create a job when the body
    /// carries `@Redfish.SettingsApplyTime`.
    pub fn patch_bios(&self, body: &Value) -> Reply {
        self.stats.count_bios_patch();
        let mut s = self.now();
        if Self::lockdown(&s) {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.values().any(|j| j.is_open_bios()) {
            return Reply::error(400, vec![messages::sys011()]);
        }
        let Some(requested) = body.get("Attributes").and_then(Value::as_object) else {
            return Reply::error(
                400,
                vec![base(
                    "PropertyMissing",
                    "The property Attributes is a required property and must be included in the request.",
                    "Include the Attributes property in the request body.",
                    Some("#/Attributes"),
                )],
            );
        };
        let apply_time = match body.get("@Redfish.SettingsApplyTime") {
            None => None,
            Some(v) => match v.get("ApplyTime").and_then(Value::as_str) {
                Some(t @ ("OnReset" | "AtMaintenanceWindowStart" | "InMaintenanceWindowOnReset")) => Some(t.to_owned()),
                other => {
                    let shown = other.unwrap_or("(missing)");
                    return Reply::error(
                        400,
                        vec![base(
                            "PropertyValueNotInList",
                            &format!(
                                "The value {shown} for the property ApplyTime is not in the list of acceptable values."
                            ),
                            "Use OnReset, AtMaintenanceWindowStart or InMaintenanceWindowOnReset; BIOS settings cannot apply Immediately.",
                            Some("#/@Redfish.SettingsApplyTime/ApplyTime"),
                        )],
                    );
                }
            },
        };
        let patch: Attributes = requested
            .iter()
            .map(|(k, v)| (k.clone(), AttributeValue::from(v.clone())))
            .collect();
        let mut problems = Vec::new();
        // The planned state: current, pending and this request.
        let mut candidate = Self::known(&s);
        candidate.extend(s.pending.clone());
        candidate.extend(patch.clone());
        let evaluation = self.evaluate(&candidate);
        for (name, value) in &patch {
            let Some(attr) = self.registry().attribute(name) else {
                problems.extend(unknown_attribute(name));
                continue;
            };
            if let Err(p) = attr.check(value) {
                problems.extend(value_problem(name, value, &p));
                continue;
            }
            if evaluation.is_hidden(name) {
                problems.extend(hidden(name));
            } else if evaluation.is_read_only(name) {
                problems.extend(read_only(name));
            } else if let Some(allowed) = evaluation.allowed(name)
                && !allowed.values.iter().any(|v| Some(v.as_str()) == value.as_str())
            {
                problems.extend(not_allowed_now(name, value, allowed));
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        s.pending.extend(patch);
        match apply_time {
            None => Reply::ok(messages::success_body(vec![messages::sys413()])),
            Some(_) => {
                let location = self.create_job(&mut s);
                Reply::with_body(202, Some(messages::success_body(vec![messages::sys413()])))
                    .header("Location", location)
            }
        }
    }

    fn create_job(&self, s: &mut State) -> String {
        s.job_seq += 1;
        let id = format!("JID_{:06}{:06}", 100_000 + self.index % 900_000, s.job_seq);
        s.jobs.insert(
            id.clone(),
            Job {
                id: id.clone(),
                state: JobState::Scheduled,
                message_id: "JCP001",
                message: "Task successfully scheduled.",
                percent: 0,
                start_time: "TIME_NOW".into(),
                completion_time: None,
            },
        );
        self.stats.count_job();
        format!("{}/{id}", redfish_client::oem::dell::JOBS)
    }

    /// `POST Managers/iDRAC.Embedded.1/Jobs {"TargetSettingsURI": ...}`.
    pub fn create_job_for(&self, body: &Value) -> Reply {
        let mut s = self.now();
        let target = body
            .get("TargetSettingsURI")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if target.trim_end_matches('/') != redfish_client::oem::dell::BIOS_SETTINGS {
            return Reply::error(
                400,
                vec![base(
                    "PropertyValueNotInList",
                    &format!(
                        "The value {target} for the property TargetSettingsURI is not in the list of acceptable values."
                    ),
                    "Use /redfish/v1/Systems/System.Embedded.1/Bios/Settings.",
                    Some("#/TargetSettingsURI"),
                )],
            );
        }
        if Self::lockdown(&s) {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.values().any(|j| j.is_open_bios()) {
            return Reply::error(400, vec![messages::sys011()]);
        }
        if s.pending.is_empty() {
            return Reply::error(
                400,
                vec![idrac(
                    "SYS023",
                    "Unable to create a configuration job because there are no pending attribute changes.",
                    "Set attributes on the settings resource and retry the operation.",
                    None,
                )],
            );
        }
        let location = self.create_job(&mut s);
        Reply::ok(messages::success_body(vec![idrac_ok("JCP000")])).header("Location", location)
    }

    /// The job queue as the collection at `collection` shows it (`Managers/iDRAC.Embedded.1/Jobs`
    /// or `…/Oem/Dell/Jobs`, one queue), members expanded or as links.
    pub fn jobs(&self, collection: &str, expand: bool) -> Value {
        let s = self.now();
        let members: Vec<Value> = s
            .jobs
            .values()
            .map(|j| {
                if expand {
                    j.to_json(collection)
                } else {
                    json!({"@odata.id": j.odata_id(collection)})
                }
            })
            .collect();
        json!({"@odata.id": collection, "@odata.type": "#DellJobCollection.DellJobCollection",
               "Name": "JobQueue", "Description": "Collection of Job Instances",
               "Members@odata.count": members.len(), "Members": members})
    }

    /// One job, as a member of `collection`.
    pub fn job(&self, collection: &str, id: &str) -> Reply {
        let s = self.now();
        match s.jobs.get(id) {
            Some(j) => Reply::ok(j.to_json(collection)),
            None => Reply::error(404, vec![messages::not_found(&format!("{collection}/{id}"))]),
        }
    }

    /// `DELETE Jobs/<id>`: a scheduled BIOS job takes its pending values with it.
    pub fn delete_job(&self, id: &str) -> Reply {
        let mut s = self.now();
        if Self::lockdown(&s) {
            return Reply::error(400, vec![messages::sys406()]);
        }
        match s.jobs.get(id).map(|j| j.state) {
            None => Reply::error(
                404,
                vec![messages::not_found(&format!(
                    "{}/{id}",
                    redfish_client::oem::dell::JOBS
                ))],
            ),
            Some(JobState::Running) => Reply::error(
                400,
                vec![idrac(
                    "SYS431",
                    "Unable to delete the job because it is running.",
                    "Wait for the job to complete and retry the operation.",
                    None,
                )],
            ),
            Some(state) => {
                if state == JobState::Scheduled {
                    s.pending.clear();
                }
                s.jobs.remove(id);
                Reply::ok(messages::success_body(vec![messages::sys413()]))
            }
        }
    }

    /// `DellJobService.DeleteJobQueue`.
    pub fn delete_job_queue(&self, body: &Value) -> Reply {
        let id = body.get("JobID").and_then(Value::as_str).unwrap_or_default().to_owned();
        if id == "JID_CLEARALL" || id == "JID_CLEARALL_FORCE" {
            let mut s = self.now();
            if Self::lockdown(&s) {
                return Reply::error(400, vec![messages::sys406()]);
            }
            s.jobs.clear();
            s.pending.clear();
            return Reply::ok(messages::success_body(vec![messages::sys413()]));
        }
        self.delete_job(&id)
    }

    /// `DellManager.ClearPending` (refused while a BIOS job exists).
    pub fn clear_pending(&self) -> Reply {
        let mut s = self.now();
        if Self::lockdown(&s) {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.values().any(|j| j.is_open_bios()) {
            return Reply::error(
                400,
                vec![idrac(
                    "BIOS011",
                    "Unable to clear the pending values because a configuration job is scheduled or running.",
                    "Delete the configuration job and retry the operation.",
                    None,
                )],
            );
        }
        s.pending.clear();
        Reply::ok(messages::success_body(vec![messages::sys413()]))
    }

    // ---- iDRAC attributes -------------------------------------------------------------

    /// `PATCH DellAttributes/<group>`: validated against the manager registry, applied now.
    pub fn patch_dell_attributes(&self, group: AttributeGroup, body: &Value) -> Reply {
        let mut s = self.now();
        let Some(requested) = body.get("Attributes").and_then(Value::as_object) else {
            return Reply::error(
                400,
                vec![base(
                    "PropertyMissing",
                    "The property Attributes is a required property and must be included in the request.",
                    "Include the Attributes property in the request body.",
                    Some("#/Attributes"),
                )],
            );
        };
        let patch: Attributes = requested
            .iter()
            .map(|(k, v)| (k.clone(), AttributeValue::from(v.clone())))
            .collect();
        let unlocking = patch.len() == 1 && patch.get(LOCKDOWN).and_then(AttributeValue::as_str) == Some("Disabled");
        if Self::lockdown(&s) && !unlocking {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let mut candidate = s.dell.get(&group).cloned().unwrap_or_default();
        let mut problems = Vec::new();
        if self.fixture.manager_registry.is_none() {
            // Nothing to validate against (public mockups lack the registry): only attributes
            // the resource lists exist.
            for name in patch.keys().filter(|n| !candidate.contains_key(*n)) {
                problems.extend(unknown_attribute(name));
            }
        }
        candidate.extend(patch.clone());
        if let Some(registry) = &self.fixture.manager_registry {
            let evaluation = DependencyEvaluator::new(registry).evaluate(&candidate);
            for (name, value) in &patch {
                let Some(attr) = registry.attribute(name) else {
                    problems.extend(unknown_attribute(name));
                    continue;
                };
                if let Err(p) = attr.check(value) {
                    problems.extend(value_problem(name, value, &p));
                } else if name == "ServerPwr.1.PowerCapValue"
                    && candidate
                        .get("ServerPwr.1.PowerCapSetting")
                        .and_then(AttributeValue::as_str)
                        != Some("Enabled")
                {
                    problems.push(idrac(
                        "SYS432",
                        "Unable to set the power cap value because power capping is disabled.",
                        "Enable power capping (ServerPwr.1.PowerCapSetting) and retry the operation.",
                        Some(&format!("#/Attributes/{name}")),
                    ));
                } else if evaluation.is_read_only(name) {
                    problems.extend(read_only(name));
                }
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        s.dell.insert(group, candidate);
        if group == AttributeGroup::Idrac {
            // Lockdown shows in the BIOS registry's flags.
            s.view = None;
        }
        Reply::ok(messages::success_body(vec![messages::sys413()]))
    }

    // ---- power ------------------------------------------------------------------------

    /// `ComputerSystem.Reset`.
    pub fn reset(&self, body: &Value) -> Reply {
        let kind = body
            .get("ResetType")
            .cloned()
            .and_then(|v| serde_json::from_value::<ResetType>(v).ok());
        let Some(kind) = kind else {
            return Reply::error(
                400,
                vec![base(
                    "ActionParameterUnknown",
                    "The ResetType parameter is missing or not one of the allowable values.",
                    "Use one of On, ForceOff, GracefulShutdown, GracefulRestart, ForceRestart, PowerCycle, PushPowerButton, Nmi.",
                    Some("#/ResetType"),
                )],
            );
        };
        let mut s = self.now();
        let now = Instant::now();
        let graceful_delay = self.config.boot_time.mul_f64(0.3);
        let busy = s.boot.is_some() || s.shutdown.is_some();
        match kind {
            ResetType::On if s.on && !busy => return already("on"),
            ResetType::On => {
                if !s.on {
                    self.start_boot(&mut s, now);
                }
            }
            ResetType::ForceOff => {
                s.on = false;
                s.boot = None;
                s.shutdown = None;
            }
            ResetType::GracefulShutdown if !s.on => return already("off"),
            ResetType::GracefulShutdown => {
                if self.config.graceful_os {
                    s.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: false,
                    });
                }
            }
            ResetType::GracefulRestart => {
                if !s.on {
                    self.start_boot(&mut s, now);
                } else if self.config.graceful_os {
                    s.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: true,
                    });
                }
            }
            ResetType::ForceRestart | ResetType::PowerCycle => {
                s.shutdown = None;
                self.start_boot(&mut s, now);
            }
            ResetType::PushPowerButton => {
                if s.on {
                    s.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: false,
                    });
                } else {
                    self.start_boot(&mut s, now);
                }
            }
            ResetType::Nmi => {}
        }
        self.stats.count_reset();
        Reply::with_body(204, None)
    }

    /// A uniform sample in `[0, 1)` from the host's seeded generator (latency, faults).
    pub fn draw(&self) -> f64 {
        self.lock().rng.f64()
    }

    /// `DellLCService.GetRemoteServicesAPIStatus`: not ready during POST.
    pub fn lc_status(&self) -> Value {
        let s = self.now();
        let (server, ready) = match (s.on, s.boot.is_some()) {
            (false, _) => ("PoweredOff", true),
            (true, true) => ("InPOST", false),
            (true, false) => ("OutOfPOST", true),
        };
        let status = if ready { "Ready" } else { "NotReady" };
        json!({"LCStatus": status, "Status": status, "ServerStatus": server, "RTStatus": "Ready",
               "@Message.ExtendedInfo": [idrac_ok("LC061")]})
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
        s.energy_at = now;
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

    /// Current BIOS values, pending values, jobs and power, for tests.
    pub fn snapshot(&self) -> (Attributes, Attributes, bool) {
        let s = self.now();
        (s.bios.clone(), s.pending.clone(), s.on)
    }

    /// Seconds until POST ends, if booting.
    pub fn boot_remaining(&self) -> Option<Duration> {
        let s = self.now();
        s.boot
            .map(|b| self.config.boot_time.saturating_sub(b.started.elapsed()))
    }
}

impl Job {
    fn is_open_bios(&self) -> bool {
        matches!(self.state, JobState::Scheduled | JobState::Running)
    }

    fn odata_id(&self, collection: &str) -> String {
        format!("{collection}/{}", self.id)
    }

    fn to_json(&self, collection: &str) -> Value {
        json!({
            "@odata.id": self.odata_id(collection),
            "@odata.type": "#DellJob.v1_6_0.DellJob",
            "Id": self.id,
            "Name": "Configure: BIOS.Setup.1-1",
            "JobType": "BIOSConfiguration",
            "JobState": self.state.to_string(),
            "Message": self.message,
            "MessageId": self.message_id,
            "MessageArgs": [],
            "PercentComplete": self.percent,
            "StartTime": self.start_time,
            "CompletionTime": self.completion_time,
            "EndTime": "TIME_NA",
            "TargetSettingsURI": null,
        })
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

fn idrac_ok(code: &str) -> Value {
    messages::message(
        &format!("{}.{code}", messages::IDRAC),
        "The operation successfully completed.",
        "No response action is required.",
        "Informational",
        None,
    )
}

fn already(state: &str) -> Reply {
    Reply::error(
        409,
        vec![base(
            "OperationNotAllowed",
            &format!("Unable to perform the reset because the server is already powered {state}."),
            "Check the power state and retry with a different ResetType.",
            Some("#/ResetType"),
        )],
    )
}

fn unknown_attribute(name: &str) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    vec![
        idrac(
            "SYS429",
            &format!("The attribute {name} is not supported on this system."),
            "Remove the attribute from the request body and retry the operation.",
            Some(&related),
        ),
        base(
            "PropertyUnknown",
            &format!("The property {name} is not in the list of valid properties for the resource."),
            "Remove the unknown property from the request body and resubmit the request if the operation failed.",
            Some(&related),
        ),
    ]
}

fn read_only(name: &str) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    vec![
        idrac(
            "SYS427",
            &format!(
                "Unable to modify the attribute {name} because it is read-only under the current and requested settings."
            ),
            "Change the attributes it depends on (see the attribute registry Dependencies) and retry the operation.",
            Some(&related),
        ),
        base(
            "PropertyNotWritable",
            &format!("The property {name} is a read only property and cannot be assigned a value."),
            "Remove the property from the request body and resubmit the request if the operation failed.",
            Some(&related),
        ),
    ]
}

/// A PATCH to an attribute hidden in the planned state. What a real iDRAC answers is not
/// documented; SYS427 with Base PropertyNotWritable is assumed (idrac-sim/README.md).
fn hidden(name: &str) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    vec![
        idrac(
            "SYS427",
            &format!(
                "Unable to modify the attribute {name} because it is hidden under the current and requested settings."
            ),
            "Change the attributes it depends on (see the attribute registry Dependencies) and retry the operation.",
            Some(&related),
        ),
        base(
            "PropertyNotWritable",
            &format!("The property {name} is a read only property and cannot be assigned a value."),
            "Remove the property from the request body and resubmit the request if the operation failed.",
            Some(&related),
        ),
    ]
}

/// A value an iDRAC 7.x `Value` rule excludes in the planned state: SYS426, as for a value not
/// in the registry's list, naming the values still allowed and why (assumed wording).
fn not_allowed_now(name: &str, value: &AttributeValue, allowed: &Allowed<'_>) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    let because: Vec<String> = allowed
        .rules
        .iter()
        .map(|r| Conditions(&r.map_from).to_string())
        .collect();
    vec![
        idrac(
            "SYS426",
            &format!(
                "The value {value} for {name} is not in the list of acceptable values while {}.",
                because.join(" and ")
            ),
            &format!(
                "Enter one of the values {} and retry the operation.",
                allowed.values.join(", ")
            ),
            Some(&related),
        ),
        base(
            "PropertyValueNotInList",
            &format!("The value {value} for the property {name} is not in the list of acceptable values."),
            "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.",
            Some(&related),
        ),
    ]
}

fn value_problem(name: &str, value: &AttributeValue, problem: &ValueProblem) -> Vec<Value> {
    let related = format!("#/Attributes/{name}");
    let r = Some(related.as_str());
    match problem {
        ValueProblem::WrongType { expected, found } => vec![
            idrac(
                "SYS424",
                &format!("The value {value} for {name} is of type {found}, but {expected} is required."),
                "Enter a value of the correct type and retry the operation.",
                r,
            ),
            base(
                "PropertyValueTypeError",
                &format!(
                    "The value {value} for the property {name} is of a different type than the property can accept."
                ),
                "Correct the value for the property in the request body and resubmit the request if the operation failed.",
                r,
            ),
        ],
        ValueProblem::NotInList { allowed } => vec![
            idrac(
                "SYS426",
                &format!("The value {value} for {name} is not in the list of acceptable values."),
                &format!(
                    "Enter one of the values {} and retry the operation.",
                    allowed.join(", ")
                ),
                r,
            ),
            base(
                "PropertyValueNotInList",
                &format!("The value {value} for the property {name} is not in the list of acceptable values."),
                "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.",
                r,
            ),
        ],
        ValueProblem::OutOfRange { .. } | ValueProblem::NotOnIncrement { .. } | ValueProblem::BadLength { .. } => vec![
            idrac(
                "SYS417",
                &format!("The value {value} for {name} is out of range: it {problem}."),
                "Enter a value within the range and retry the operation.",
                r,
            ),
            base(
                "PropertyValueOutOfRange",
                &format!(
                    "The value {value} for the property {name} is not in the supported range of acceptable values."
                ),
                "Correct the value for the property in the request body and resubmit the request if the operation failed.",
                r,
            ),
        ],
    }
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
}
