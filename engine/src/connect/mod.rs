//! Turning an inventory entry and a [`ConnectConfig`] into a connected [`Bmc`]:
//! credentials, certificate trust (CA, pin, known_hosts, trust on first use, or an explicit
//! insecure mode), and error messages that say what to do next. A [`Bmc`] also knows which
//! [`Backend`] serves it, once its answers have told (see [`crate::backend`]).

pub mod credentials;
mod remembered;
pub(crate) mod trust;

use crate::backend::Backend;
use crate::error::{Context, HostError, HostErrorKind, Result};
use crate::fleet::{BmcEntry, host_key};
use crate::observe::{Event, Observer};
use crate::state::StateDirs;
use redfish_client::error::TransportKind;
use redfish_client::odata::Link;
use redfish_client::resources::computer_system::ComputerSystem;
use redfish_client::resources::service_root::ServiceRoot;
use redfish_client::{
    AuthMethod, Client, Credentials, Error as RedfishError, Fingerprint, ODataId, RetryPolicy, TlsVerification,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use trust::KnownHosts;
use url::Url;

/// How to connect to BMCs: plain values, credentials already resolved.
#[derive(Debug, Clone)]
pub struct ConnectConfig {
    /// Credentials for hosts whose inventory entry names no credentials file.
    pub credentials: Option<Credentials>,
    /// A user name that overrides the one in credentials files.
    pub username: Option<String>,
    /// Redfish sessions (the default) or Basic authentication on every request.
    pub auth: AuthMethod,
    /// Trust certificates signed by this CA (PEM).
    pub ca_cert: Option<PathBuf>,
    /// Pin this certificate fingerprint (`sha256:HEX`) for every host without its own.
    pub fingerprint: Option<String>,
    /// Record the certificate of a host seen for the first time in known_hosts.
    pub trust_on_first_use: bool,
    /// Verify no certificate at all (warned about, once per host).
    pub insecure: bool,
    /// Per-request timeout.
    pub timeout: Duration,
    /// How long to keep retrying a request that failed in a retryable way (0: no retries).
    pub retry_for: Duration,
}

impl ConnectConfig {
    /// Sessions, verified TLS, 60 s timeouts and retries, with these credentials.
    pub fn new(credentials: Credentials) -> Self {
        Self {
            credentials: Some(credentials),
            username: None,
            auth: AuthMethod::Session,
            ca_cert: None,
            fingerprint: None,
            trust_on_first_use: false,
            insecure: false,
            timeout: Duration::from_secs(60),
            retry_for: Duration::from_secs(60),
        }
    }
}

/// A BMC this run talks to.
#[derive(Debug)]
pub struct Bmc {
    /// How messages name it: the inventory name, or `host:port`.
    pub name: String,
    /// Its URL as the inventory entry (or `--bmc`) gives it.
    pub url: String,
    /// The connected client.
    pub client: Client,
    /// The host's OS node name from the inventory (for hooks).
    pub node: Option<String>,
    /// How its certificate is trusted (for hints in errors).
    trust: Trust,
    /// The service root, once read.
    root: tokio::sync::OnceCell<ServiceRoot>,
    /// Which backend serves it, and what told.
    recognition: Mutex<Recognition>,
    /// The logout [`Bmc::begin_close`] sent, until [`Bmc::close`] has its answer.
    closing: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Where what this run learns of a host not laid out as an iDRAC is kept for the next.
    remember_at: Option<std::path::PathBuf>,
}

/// A BMC dropped with its session open (its work abandoned: `--check-timeout` passed, or a
/// stop) logs out in the background, so the BMC's few sessions are not held until they expire.
/// After [`Bmc::close`] there is no session and nothing is sent.
impl Drop for Bmc {
    fn drop(&mut self) {
        self.client.logout_in_background();
    }
}

/// The backend of a BMC, what its choice rests on, and the PowerEdge generation its answers
/// named (from a model name, and from the Manager once read).
#[derive(Debug, Clone)]
struct Recognition {
    backend: Backend,
    by: RecognisedBy,
    /// The generation a system or BIOS model name said (`PowerEdge R7725`: 17).
    model_generation: Option<u32>,
    /// Whether the Manager (its `Model`, `17G Monolithic`, and firmware) told the generation.
    manager_read: bool,
    /// Where a backend without fixed places keeps the BIOS settings object, as the BIOS last
    /// read named it.
    settings_at: Option<ODataId>,
    /// Where a boot order kept apart from the BIOS values is staged, as last read.
    order_at: Option<ODataId>,
    /// The first system and its BIOS, where a backend without fixed places found them (so
    /// later steps do not list the systems again).
    system_at: Option<(ODataId, ODataId)>,
}

/// What a backend's choice rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecognisedBy {
    /// Nothing yet: the iDRAC's fixed paths are where an operation that reads no service root
    /// starts, and the first answer there decides.
    Presumed,
    /// An earlier run's record (`remembered.rs`): reads start there; anything that must be
    /// sure (a write) reads the service root.
    Remembered,
    /// A resource only that backend serves answered.
    Answer,
    /// The service root.
    ServiceRoot,
}

impl Recognition {
    /// Where a run starts: an earlier run's record at `at`, where one was kept, else the
    /// presumed iDRAC.
    fn remembered(at: Option<&std::path::Path>) -> Self {
        let Some(record) = at.and_then(remembered::load) else {
            return Self::default();
        };
        Self {
            backend: record.backend(),
            by: RecognisedBy::Remembered,
            settings_at: Some(ODataId::new(record.settings.as_str())),
            system_at: Some((ODataId::new(record.system.as_str()), ODataId::new(record.bios.as_str()))),
            ..Self::default()
        }
    }
}

impl Default for Recognition {
    fn default() -> Self {
        Self {
            backend: Backend::idrac9(),
            by: RecognisedBy::Presumed,
            model_generation: None,
            manager_read: false,
            settings_at: None,
            order_at: None,
            system_at: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Trust {
    PlainHttp,
    System,
    CaFile,
    Pinned,
    KnownHosts(std::path::PathBuf),
    FirstUse,
    Insecure,
}

/// Connects to the BMC of `entry`. With trust on first use and an unknown host, this makes the
/// first request (the service root, anonymously) and records the certificate it presented,
/// which every later connection of the run must present too (and tells `observer`).
pub async fn connect(
    entry: &BmcEntry,
    config: &ConnectConfig,
    dirs: &StateDirs,
    observer: &dyn Observer,
) -> Result<Bmc> {
    let url = Url::parse(&entry.url).with_context(|| format!("{:?} is not a URL", entry.url))?;
    let key = host_key(&url);
    let name = entry.name.clone();
    let pinned = match (&entry.fingerprint, &config.fingerprint) {
        (Some(fp), _) => Some((fp, "the inventory's `fingerprint`")),
        (None, Some(fp)) => Some((fp, "--fingerprint")),
        (None, None) => None,
    };
    if url.scheme() == "http" {
        if let Some((_, source)) = pinned {
            return Err(HostError::new(
                &name,
                HostErrorKind::Tls,
                format!(
                    "{source} pins a certificate, but {url} is plain HTTP, which has none: use https:// (an iDRAC serves it by default), or drop the fingerprint"
                ),
            )
            .into());
        }
        // A plain warning, not a security one: `http://` is a choice the URL states (an
        // emulator, a lab), so `-q` ("only errors") hides it; `--insecure` stays loud.
        static WARNED_HTTP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !WARNED_HTTP.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tracing::warn!(
                "{key}: plain HTTP: the password and session token cross the network unencrypted, and anyone on the path can change what rftune sees and sends; use https:// (said once for every http:// BMC of this run)"
            );
        }
    }
    let creds = match (&entry.credentials, &config.credentials) {
        (Some(path), _) => credentials::from_file(path, config.username.as_deref(), &entry.url)?,
        (None, Some(creds)) => creds.clone(),
        (None, None) => {
            return Err(HostError::new(
                &name,
                HostErrorKind::Credentials,
                format!(
                    "no password for {}: its inventory entry names no credentials file and none were given",
                    entry.url
                ),
            )
            .into());
        }
    };
    let known_hosts = KnownHosts::new(dirs.known_hosts());
    let (tls, trust) = if url.scheme() == "http" {
        (TlsVerification::System, Trust::PlainHttp)
    } else if config.insecure {
        warn_once("insecure", || {
            format!(
                "TLS certificate verification is OFF (--insecure) for every BMC of this run, starting with {key}: anyone on the network path can read the password and change what rftune sees and sends"
            )
        });
        (TlsVerification::Insecure, Trust::Insecure)
    } else if let Some(ca) = &config.ca_cert {
        (TlsVerification::CaFile(ca.clone()), Trust::CaFile)
    } else if let Some((fp, source)) = pinned {
        let fp: Fingerprint = fp.parse().with_context(|| format!("{name}: {source}"))?;
        (TlsVerification::Pinned(fp), Trust::Pinned)
    } else if let Some(fp) = known_hosts.lookup(&key)? {
        (
            TlsVerification::Pinned(fp),
            Trust::KnownHosts(known_hosts.path().to_owned()),
        )
    } else if config.trust_on_first_use {
        (TlsVerification::TrustOnFirstUse, Trust::FirstUse)
    } else {
        (TlsVerification::System, Trust::System)
    };
    let client = Client::builder(url.as_str())
        .credentials(creds)
        .auth_method(config.auth)
        .tls(tls)
        .timeout(config.timeout)
        .retry(RetryPolicy {
            max_elapsed: config.retry_for,
            // The budget is time, as the option promises: as many attempts as fit in it.
            max_attempts: if config.retry_for.is_zero() { 1 } else { u32::MAX },
            ..RetryPolicy::default()
        })
        .build()
        .with_context(|| format!("{name}: setting up the connection"))?;
    let remember_at = remembered::path(&dirs.cache, &key);
    let bmc = Bmc {
        name,
        url: entry.url.clone(),
        node: entry.node.clone(),
        client,
        trust,
        root: tokio::sync::OnceCell::new(),
        recognition: Mutex::new(Recognition::remembered(Some(remember_at.as_path()))),
        closing: Mutex::default(),
        remember_at: Some(remember_at),
    };
    if bmc.trust == Trust::FirstUse {
        // Anonymous: the first handshake sets the client's pin before any credential leaves.
        bmc.service_root().await?;
        if let Some(fp) = bmc.client.trusted_fingerprint() {
            known_hosts.record(&key, fp)?;
            observer.event(&Event::notice(
                &bmc.name,
                format!(
                    "trusting its certificate {fp} from now on (recorded in {})",
                    known_hosts.path().display()
                ),
            ));
        }
    }
    Ok(bmc)
}

/// Logs a [`crate::SECURITY_LOG_TARGET`] warning the first time `kind` applies in this process:
/// a fleet of 500 plain-HTTP hosts, or a command that reconnects, says it once, not per host.
fn warn_once(kind: &'static str, message: impl FnOnce() -> String) {
    static WARNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let first = WARNED.lock().map(|mut warned| warned.insert(kind)).unwrap_or(true);
    if first {
        tracing::warn!(target: crate::SECURITY_LOG_TARGET, "{}", message());
    }
}

impl Bmc {
    /// A BMC around an already configured client (the demo's, pinned to the emulator).
    pub fn from_client(name: impl Into<String>, client: Client) -> Self {
        Self {
            name: name.into(),
            url: client.base_url().as_str().trim_end_matches('/').to_owned(),
            node: None,
            client,
            trust: Trust::Pinned,
            root: tokio::sync::OnceCell::new(),
            recognition: Mutex::default(),
            closing: Mutex::default(),
            remember_at: None,
        }
    }

    /// The service root, read anonymously the first time and kept; reading it recognises the
    /// backend.
    pub async fn service_root(&self) -> Result<ServiceRoot> {
        let root = self
            .root
            .get_or_try_init(|| async {
                self.client
                    .service_root()
                    .await
                    .map_err(|e| self.explain(e, "reading the service root"))
            })
            .await?;
        let mut r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
        if r.by != RecognisedBy::ServiceRoot {
            let recognised = Backend::recognise(root);
            // An iDRAC keeps the generation its answers named so far.
            if !(recognised.is_idrac() && r.backend.is_idrac()) {
                r.backend = recognised;
            }
            r.by = RecognisedBy::ServiceRoot;
        }
        Ok(root.clone())
    }

    /// The backend as far as known: the one recognised, else the iDRAC's (where an operation
    /// that reads no service root starts; its first answer confirms it, see
    /// `Bmc::confirm_backend`, or [`Bmc::recognise`] decides).
    pub fn backend(&self) -> Backend {
        self.recognition
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .backend
            .clone()
    }

    /// Whether the backend is recognised (not only presumed).
    pub fn recognised(&self) -> bool {
        let by = self.recognition.lock().unwrap_or_else(PoisonError::into_inner).by;
        !matches!(by, RecognisedBy::Presumed | RecognisedBy::Remembered)
    }

    /// Records that a resource only the presumed backend serves answered: the backend is
    /// recognised.
    pub(crate) fn confirm_backend(&self) {
        let mut r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
        if r.by == RecognisedBy::Presumed {
            r.by = RecognisedBy::Answer;
        }
    }

    /// Records the model name an answer gave (a System's `Model`, a BIOS's `SystemModelName`):
    /// an iDRAC whose Manager has not been read yet takes the generation it names (a 17G model
    /// is presumed an iDRAC10 until the Manager confirms it, see [`Bmc::writable`]).
    pub(crate) fn note_model(&self, model: Option<&str>) {
        let Some(generation) = model.and_then(crate::backend::generation_of) else {
            return;
        };
        let mut r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
        r.model_generation = Some(generation);
        if r.backend.is_idrac() && !r.manager_read && r.backend.kind() != Backend::idrac(Some(generation), None).kind()
        {
            r.backend = Backend::idrac(Some(generation), None);
        }
    }

    /// Records what the Manager says of the iDRAC: its `Model` (`17G Monolithic`) and firmware.
    pub(crate) fn note_manager(&self, manager: &redfish_client::resources::manager::Manager) {
        let mut r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
        if !r.backend.is_idrac() {
            return;
        }
        let generation = manager
            .model
            .as_deref()
            .and_then(crate::backend::generation_of)
            .or(r.model_generation);
        r.backend = Backend::idrac(generation, manager.firmware_version.clone());
        r.manager_read = true;
    }

    /// The backend, recognised: from what answered so far, else from the service root (read
    /// now).
    pub async fn recognise(&self) -> Result<Backend> {
        {
            let r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
            if !matches!(r.by, RecognisedBy::Presumed | RecognisedBy::Remembered) {
                return Ok(r.backend.clone());
            }
        }
        self.service_root().await?;
        Ok(self.backend())
    }

    /// The backend, recognised and one rftune writes to; otherwise the host's error saying why
    /// nothing is written. An iDRAC whose answers named no generation up to 16G has its Manager
    /// read first (one request): its `Model` tells iDRAC10 and later generations, which differ
    /// in where they take writes.
    pub async fn writable(&self) -> Result<Backend> {
        let mut backend = self.recognise().await?;
        let settled = {
            let r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
            r.manager_read || r.model_generation.is_some_and(|g| g <= 16)
        };
        if backend.is_idrac() && !settled {
            let manager = self.backend_place(&backend, |p| &p.manager)?;
            let read = self
                .client
                .get::<redfish_client::resources::manager::Manager>(manager.path())
                .await
                .map_err(|e| self.explain(e, "reading the iDRAC's model and firmware"))?;
            self.note_manager(&read);
            backend = self.backend();
        }
        match backend.refuses_writes() {
            None => Ok(backend),
            Some(why) => Err(HostError::new(&self.name, HostErrorKind::Unsupported, why).into()),
        }
    }

    /// `err`, from work started at the presumed iDRAC's places: when nothing had recognised the
    /// backend yet, the service root decides, and a BMC without `what` (`boot control`), as
    /// `has` tells, gets the host's error saying so instead of the failed request's.
    pub async fn presumed_failure(
        &self,
        err: crate::Error,
        has: impl FnOnce(&Backend) -> bool,
        what: &str,
    ) -> crate::Error {
        if self.recognised() {
            return err;
        }
        match self.recognise().await {
            Ok(backend) if !has(&backend) => {
                HostError::new(&self.name, HostErrorKind::Unsupported, backend.lacks(what)).into()
            }
            _ => err,
        }
    }

    /// `what` (`the job queue`) of the host's backend, or the host's error saying it has none.
    pub fn require<'b, T: ?Sized>(
        &self,
        backend: &'b Backend,
        concern: impl FnOnce(&'b Backend) -> Option<&'b T>,
        what: &str,
    ) -> Result<&'b T> {
        concern(backend)
            .ok_or_else(|| HostError::new(&self.name, HostErrorKind::Unsupported, backend.lacks(what)).into())
    }

    /// The place `which` names of the host's `backend`, or the host's error saying this BMC has
    /// no fixed place for it.
    pub fn backend_place(
        &self,
        backend: &Backend,
        which: impl FnOnce(&crate::backend::Places) -> &ODataId,
    ) -> Result<ODataId> {
        backend.places().map(|p| which(p).clone()).ok_or_else(|| {
            HostError::new(
                &self.name,
                HostErrorKind::Unsupported,
                backend.lacks("fixed resource paths"),
            )
            .into()
        })
    }

    /// The system: the backend's fixed place (the presumed one included), or the first member
    /// of `Systems`.
    pub async fn system_id(&self) -> Result<ODataId> {
        Ok(match self.backend().places() {
            Some(p) => p.system.clone(),
            None => match self.found_system() {
                Some((system, _)) => system,
                None => self.first_system().await?.odata_id,
            },
        })
    }

    /// The first system and its BIOS, as found by an earlier [`Bmc::first_system`].
    fn found_system(&self) -> Option<(ODataId, ODataId)> {
        self.recognition
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .system_at
            .clone()
    }

    /// The BIOS resource: the backend's fixed place (the presumed one included), or where the
    /// first system links.
    pub async fn bios_id(&self) -> Result<ODataId> {
        Ok(match self.backend().places() {
            Some(p) => p.bios.clone(),
            None => match self.found_system() {
                Some((_, bios)) => bios,
                None => self.first_system().await?.bios_link(),
            },
        })
    }

    /// Keeps what this run found of a host read by its links (its backend, system, BIOS and
    /// settings object) for the next run, where the backend is one worth remembering.
    pub(crate) fn remember(&self) {
        let Some(at) = &self.remember_at else { return };
        let record = {
            let r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
            let (Some((system, bios)), Some(settings)) = (&r.system_at, &r.settings_at) else {
                return;
            };
            remembered::Remembered::of(&r.backend, system, bios, settings)
        };
        if let Some(record) = record {
            remembered::store(at, &record);
        }
    }

    /// The system as found before (this run, or an earlier one's record), read; else the
    /// first system, found by listing them.
    pub async fn linked_system(&self) -> Result<ComputerSystem> {
        if let Some((system, _)) = self.found_system() {
            match self.client.system(&system).await {
                Ok(read) => return Ok(read),
                Err(e) if !self.forget_remembered() => return Err(self.explain(e, "reading the system")),
                // An earlier run's record that no longer holds: forgotten, and looked up again.
                Err(_) => {}
            }
        }
        self.first_system().await
    }

    /// Drops an earlier run's record (kept and in memory) when the run started from one;
    /// whether it did.
    fn forget_remembered(&self) -> bool {
        let mut r = self.recognition.lock().unwrap_or_else(PoisonError::into_inner);
        if r.by != RecognisedBy::Remembered {
            return false;
        }
        *r = Recognition::default();
        if let Some(at) = &self.remember_at {
            let _ = std::fs::remove_file(at);
        }
        true
    }

    /// Records where the BIOS just read keeps its settings object (a backend without fixed
    /// places finds it there).
    pub(crate) fn note_settings_at(&self, settings: ODataId) {
        self.recognition
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .settings_at = Some(settings);
    }

    /// Records where the boot order just read is staged.
    pub(crate) fn note_order_at(&self, at: ODataId) {
        self.recognition.lock().unwrap_or_else(PoisonError::into_inner).order_at = Some(at);
    }

    /// Where a boot order kept apart from the BIOS values is staged, where one read earlier
    /// named it.
    pub(crate) fn noted_order(&self) -> Option<ODataId> {
        self.recognition
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .order_at
            .clone()
    }

    /// Where the BIOS settings object is, where a BIOS read earlier named it (a backend
    /// without fixed places).
    pub(crate) fn noted_settings(&self) -> Option<ODataId> {
        self.recognition
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .settings_at
            .clone()
    }

    /// The BIOS settings object (where values are staged): the backend's fixed place, else
    /// where the BIOS names it (`@Redfish.Settings`), as read last or read now.
    pub async fn settings_id(&self) -> Result<ODataId> {
        if let Some(p) = self.backend().places() {
            return Ok(p.bios_settings.clone());
        }
        if let Some(at) = self.noted_settings() {
            return Ok(at);
        }
        let bios = self
            .client
            .bios(&self.bios_id().await?)
            .await
            .map_err(|e| self.explain(e, "reading BIOS values"))?;
        let at = bios.settings_object();
        self.note_settings_at(at.clone());
        Ok(at)
    }

    /// The chassis: the recognised backend's fixed place (the service root is read first when
    /// nothing has told the backend yet), or the first member of `Chassis`.
    pub async fn chassis_id(&self) -> Result<ODataId> {
        if let Some(p) = self.recognise().await?.places() {
            return Ok(p.chassis.clone());
        }
        let links: Vec<Link> = self
            .client
            .members("/redfish/v1/Chassis")
            .await
            .map_err(|e| self.explain(e, "listing chassis"))?;
        links
            .into_iter()
            .next()
            .map(|l| l.odata_id)
            .ok_or_else(|| HostError::new(&self.name, HostErrorKind::Unsupported, "the BMC lists no chassis").into())
    }

    /// The first system of a service whose backend has no fixed places (`Systems` → first
    /// member).
    pub async fn first_system(&self) -> Result<ComputerSystem> {
        let systems = self
            .client
            .systems()
            .await
            .map_err(|e| self.explain(e, "listing systems"))?;
        let first = systems.first().ok_or_else(|| {
            HostError::new(
                &self.name,
                HostErrorKind::Unsupported,
                "the BMC lists no systems (it may still be starting)",
            )
        })?;
        let system = self
            .client
            .system(first)
            .await
            .map_err(|e| self.explain(e, "reading the system"))?;
        self.recognition
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .system_at = Some((system.odata_id.clone(), system.bios_link()));
        Ok(system)
    }

    /// Logs in (a no-op with Basic authentication), so a credential problem is reported as such.
    pub async fn login(&self) -> Result<()> {
        let who = self.client.username().unwrap_or(credentials::DEFAULT_USERNAME);
        self.client
            .login()
            .await
            .map_err(|e| self.explain(e, &format!("logging in as {who}")))
    }

    /// Wraps a client error with the host, what was attempted, and a hint where one helps; its
    /// kind is [`HostErrorKind::of_redfish`]'s.
    pub fn explain(&self, err: RedfishError, attempted: &str) -> crate::Error {
        let (kind, hint) = self.diagnose(&err);
        HostError {
            host: self.name.clone(),
            kind,
            message: attempted.to_owned(),
            hint,
            source: Some(err),
        }
        .into()
    }

    /// What kind of failure `err` is ([`HostErrorKind::of_redfish`] decides, for every caller
    /// alike), and what may help: the hints know how this BMC's certificate is trusted.
    fn diagnose(&self, err: &RedfishError) -> (HostErrorKind, Option<String>) {
        let kind = HostErrorKind::of_redfish(err);
        let err = err.last_attempt();
        let hint = match err {
            RedfishError::PinMismatch { found, .. } => Some(match &self.trust {
                Trust::KnownHosts(path) => format!(
                    "its certificate changed since it was recorded in {}; if the iDRAC's certificate was replaced on purpose, delete its line there and reconnect with --trust-on-first-use (now {found})",
                    path.display()
                ),
                Trust::FirstUse => format!(
                    "a later connection presented {found}, not the certificate rftune trusted on first contact moments before (now in known_hosts); something on the network path may be intercepting the connection, and no credential was sent over it"
                ),
                _ => format!("the BMC presented {found}; check --fingerprint"),
            }),
            RedfishError::Transport {
                kind: TransportKind::Certificate,
                ..
            } => {
                let seen = self
                    .client
                    .observed_fingerprint()
                    .map(|fp| format!(" It presented {fp}; if that is your iDRAC, pass --fingerprint {fp}."))
                    .unwrap_or_default();
                Some(format!(
                    "iDRAC factory certificates are self-signed and no CA vouches for them: pin the certificate with --fingerprint, record it with --trust-on-first-use, or give its CA with --ca-cert.{seen}"
                ))
            }
            RedfishError::Redirect {
                location: Some(location),
                ..
            } => Some(format!(
                "rftune follows no redirects; if {location} is where this BMC really answers (an iDRAC sends http:// to https://), give that address with --bmc or in the inventory"
            )),
            RedfishError::Transport {
                kind: TransportKind::Connect,
                ..
            } => Some("is the BMC up and reachable at this address and port?".to_owned()),
            RedfishError::Transport {
                kind: TransportKind::NoSuchName,
                ..
            } => Some(format!(
                "no such host name: check the spelling of {} (or use the BMC's IP address); rftune did not retry, since a name that does not exist will not come to",
                self.client.base_url().host_str().unwrap_or("the name")
            )),
            RedfishError::Transport {
                kind: TransportKind::PlainHttp,
                ..
            } => Some(format!(
                "this port answers in plain HTTP: if that is really the BMC (an emulator, a lab setup), use {} — rftune then warns that the password crosses the network unencrypted",
                self.client.base_url().as_str().replacen("https://", "http://", 1)
            )),
            RedfishError::Transport {
                kind: TransportKind::TlsAnswer,
                ..
            } => Some(format!(
                "this port serves HTTPS: use {} (an iDRAC serves HTTPS on 443 by default)",
                self.client.base_url().as_str().replacen("http://", "https://", 1)
            )),
            RedfishError::SessionExpired {
                relogin_refused: true,
                ..
            } => Some(
                "the session expired or was ended on the BMC, and logging in again was refused: were the credentials changed, or the account locked after failed logins, during the run? Check them and rerun"
                    .to_owned(),
            ),
            RedfishError::SessionExpired { .. } => Some(
                "the session expired or was ended on the BMC, and each new one was ended too: another tool may be deleting sessions, or the iDRAC's session timeout is very short. Rerun; if it persists, check the iDRAC's Redfish session timeout and the sessions other clients hold"
                    .to_owned(),
            ),
            // A service with Basic authentication unadvertised answers a Basic request as a
            // wrong password (Base.1.18.AccessDenied, 401). Dell's release notes for iDRAC10
            // 1.30.10.50 (and KB 000437501 for iDRAC9 7.30.10.50) made that the default.
            _ if kind == HostErrorKind::Credentials && self.client.auth_method() == AuthMethod::Basic => Some(
                "the BMC refused HTTP Basic authentication: iDRAC10 from firmware 1.30.10.50 and iDRAC9 from 7.30.10.50 ship with Basic authentication unadvertised (iDRAC attribute Redfish.1.BasicAuthState), which answers like a wrong password. Drop --auth basic (rftune then opens a Redfish session); if you need Basic, set Redfish.1.BasicAuthState to Enabled on the iDRAC"
                    .to_owned(),
            ),
            _ if kind == HostErrorKind::Credentials => {
                let backend = self.backend();
                Some(credentials_hint(self.recognised().then(|| backend.kind())))
            }
            _ => None,
        };
        (kind, hint)
    }

    /// Logs out, reporting (not failing on) problems: the work is done by then. After
    /// [`Bmc::begin_close`], waits for the logout it sent.
    pub async fn close(&self) {
        let begun = self.closing.lock().unwrap_or_else(PoisonError::into_inner).take();
        match begun {
            // The logout reported its own failure, and the runtime a panic in it.
            Some(logout) => drop(logout.await),
            None => log_out(&self.client, &self.name).await,
        }
    }

    /// Sends the logout now, on a task of its own, for work that is done with the BMC before
    /// it is done with what it read (judging the values while the logout is under way);
    /// [`Bmc::close`] waits for its answer.
    pub fn begin_close(&self) {
        let mut closing = self.closing.lock().unwrap_or_else(PoisonError::into_inner);
        if closing.is_none() {
            let (client, name) = (self.client.clone(), self.name.clone());
            *closing = Some(tokio::spawn(async move { log_out(&client, &name).await }));
        }
    }
}

/// The hint for credentials a BMC refused (HTTP 401), naming the BMC and the MessageId it
/// answers with where `recognised` says which it is, in general words otherwise: a login is
/// often the first request, sent before anything told the BMC apart.
fn credentials_hint(recognised: Option<&crate::backend::Kind>) -> String {
    let named = recognised.filter(|kind| !matches!(kind, crate::backend::Kind::Generic { .. }));
    let who = named.map_or_else(|| "the BMC".to_owned(), |kind| format!("the {kind}"));
    let answer = named
        .and_then(|kind| kind.refused_login_answer())
        .map(|id| format!(" (it answers {id})"))
        .unwrap_or_default();
    format!("{who} rejected the credentials{answer}; check RFTUNE_USERNAME and the password")
}

/// Logs `client` out, reporting (not failing on) problems: the work is done by then.
async fn log_out(client: &Client, name: &str) {
    if let Err(e) = client.logout().await {
        tracing::warn!("{name}: logout failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Kind;

    #[test]
    fn the_credentials_hint_names_the_bmc_only_once_it_is_known() {
        assert_eq!(
            credentials_hint(None),
            "the BMC rejected the credentials; check RFTUNE_USERNAME and the password"
        );
        assert_eq!(
            credentials_hint(Some(&Kind::Idrac9)),
            "the Dell iDRAC9 rejected the credentials (it answers SYS415); check RFTUNE_USERNAME and the password"
        );
        let ilo = Kind::Ilo {
            generation: Some(5),
            firmware: Some("2.72".into()),
        };
        let hint = credentials_hint(Some(&ilo));
        assert_eq!(
            hint,
            "the HPE iLO 5 (firmware 2.72) rejected the credentials; check RFTUNE_USERNAME and the password"
        );
        assert!(!hint.contains("SYS415") && !hint.contains("iDRAC"), "{hint}");
        assert!(!credentials_hint(Some(&Kind::Generic { vendor: None })).contains("iDRAC"));
    }
}
