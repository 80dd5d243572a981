//! Turning an inventory entry and a [`ConnectConfig`] into a connected [`Bmc`]:
//! credentials, certificate trust (CA, pin, known_hosts, trust on first use, or an explicit
//! insecure mode), and error messages that say what to do next. A [`Bmc`] also knows, from
//! the first read of its service root, which [`Layout`] the BMC has: an iDRAC's fixed paths or
//! a generic service's discovery.

pub mod credentials;
pub(crate) mod trust;

use crate::error::{Context, HostError, HostErrorKind, Result};
use crate::fleet::{BmcEntry, host_key};
use crate::observe::{Event, Observer};
use crate::state::StateDirs;
use redfish_client::error::TransportKind;
use redfish_client::odata::Link;
use redfish_client::oem::dell;
use redfish_client::resources::computer_system::ComputerSystem;
use redfish_client::resources::service_root::ServiceRoot;
use redfish_client::{
    AuthMethod, Client, Credentials, Error as RedfishError, Fingerprint, ODataId, RetryPolicy, TlsVerification,
};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;
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
#[derive(Debug, Clone)]
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
    /// The service root and the layout it shows, once read.
    service: Option<(ServiceRoot, Layout)>,
}

/// A BMC dropped with its session open (its work abandoned: `--check-timeout` passed, or a
/// stop) logs out in the background, so the BMC's few sessions are not held until they expire.
/// After [`Bmc::close`] there is no session and nothing is sent.
impl Drop for Bmc {
    fn drop(&mut self) {
        self.client.logout_in_background();
    }
}

/// Where a BMC keeps what rftune reads, decided once per [`Bmc`] from its service root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A Dell iDRAC (`Vendor: Dell`): the fixed paths of `redfish_client::oem::dell`, read
    /// without discovery.
    Dell,
    /// Any other Redfish service: the system and chassis are the first members of their
    /// collections, and the BIOS is where the system links.
    Generic,
}

impl Layout {
    /// The layout of the service whose root this is.
    pub fn of(root: &ServiceRoot) -> Self {
        if root.is_dell() { Self::Dell } else { Self::Generic }
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
                HostErrorKind::Connection,
                format!(
                    "{source} pins a certificate, but {url} is plain HTTP, which has none: use https:// (an iDRAC serves it by default), or drop the fingerprint"
                ),
            )
            .into());
        }
        warn_once("http", || {
            format!(
                "{key}: plain HTTP: the password and session token cross the network unencrypted, and anyone on the path can change what rftune sees and sends; use https:// (said once for every http:// BMC of this run)"
            )
        });
    }
    let creds = match (&entry.credentials, &config.credentials) {
        (Some(path), _) => credentials::from_file(path, config.username.as_deref(), &entry.url)?,
        (None, Some(creds)) => creds.clone(),
        (None, None) => {
            return Err(HostError::new(
                &name,
                HostErrorKind::Connection,
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
    let mut bmc = Bmc {
        name,
        url: entry.url.clone(),
        node: entry.node.clone(),
        client,
        trust,
        service: None,
    };
    if bmc.trust == Trust::FirstUse {
        // Anonymous: the first handshake sets the client's pin before any credential leaves.
        bmc.service().await?;
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
            service: None,
        }
    }

    /// The service root and its layout, read anonymously the first time and kept.
    async fn service(&mut self) -> Result<&(ServiceRoot, Layout)> {
        let service = match self.service.take() {
            Some(service) => service,
            None => {
                let root = self
                    .client
                    .service_root()
                    .await
                    .map_err(|e| self.explain(e, "reading the service root"))?;
                let layout = Layout::of(&root);
                (root, layout)
            }
        };
        Ok(self.service.insert(service))
    }

    /// The service root (fetched once).
    pub async fn service_root(&mut self) -> Result<ServiceRoot> {
        Ok(self.service().await?.0.clone())
    }

    /// The BMC's layout (from the service root, fetched once).
    pub async fn layout(&mut self) -> Result<Layout> {
        Ok(self.service().await?.1)
    }

    /// The BIOS resource: an iDRAC's fixed path, or where the first system links.
    pub async fn bios_id(&mut self) -> Result<ODataId> {
        Ok(match self.layout().await? {
            Layout::Dell => ODataId::new(dell::BIOS),
            Layout::Generic => self.first_system().await?.bios_link(),
        })
    }

    /// The chassis: an iDRAC's fixed path, or the first member of `Chassis`.
    pub async fn chassis_id(&mut self) -> Result<ODataId> {
        if self.layout().await? == Layout::Dell {
            return Ok(ODataId::new(dell::CHASSIS));
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

    /// The first system of a [`Layout::Generic`] service (`Systems` → first member); iDRACs
    /// are addressed at their fixed paths instead.
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
        self.client
            .system(first)
            .await
            .map_err(|e| self.explain(e, "reading the system"))
    }

    /// Logs in (a no-op with Basic authentication), so a credential problem is reported as such.
    pub async fn login(&self) -> Result<()> {
        let who = self.client.username().unwrap_or(credentials::DEFAULT_USERNAME);
        self.client
            .login()
            .await
            .map_err(|e| self.explain(e, &format!("logging in as {who}")))
    }

    /// Wraps a client error with the host, what was attempted, and a hint where one helps. A
    /// failure to reach or trust the BMC, or credentials it rejects, is
    /// [`HostErrorKind::Connection`]; anything else the BMC answered is
    /// [`HostErrorKind::Redfish`].
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

    /// What kind of failure `err` is, and what may help, decided in one place: a failure to
    /// reach or trust the BMC, or credentials it rejects (a 401, whatever else the error
    /// says), is [`HostErrorKind::Connection`]; anything else the BMC answered is
    /// [`HostErrorKind::Redfish`].
    fn diagnose(&self, err: &RedfishError) -> (HostErrorKind, Option<String>) {
        use HostErrorKind::{Connection, Redfish};
        let err = err.last_attempt();
        let rejected = err.status() == Some(401);
        let answered = if rejected { Connection } else { Redfish };
        match err {
            RedfishError::PinMismatch { found, .. } => (
                Connection,
                Some(match &self.trust {
                    Trust::KnownHosts(path) => format!(
                        "its certificate changed since it was recorded in {}; if the iDRAC's certificate was replaced on purpose, delete its line there and reconnect with --trust-on-first-use (now {found})",
                        path.display()
                    ),
                    Trust::FirstUse => format!(
                        "a later connection presented {found}, not the certificate rftune trusted on first contact moments before (now in known_hosts); something on the network path may be intercepting the connection, and no credential was sent over it"
                    ),
                    _ => format!("the BMC presented {found}; check --fingerprint"),
                }),
            ),
            RedfishError::Transport {
                kind: TransportKind::Certificate,
                ..
            } => {
                let seen = self
                    .client
                    .observed_fingerprint()
                    .map(|fp| format!(" It presented {fp}; if that is your iDRAC, pass --fingerprint {fp}."))
                    .unwrap_or_default();
                (
                    Connection,
                    Some(format!(
                        "iDRAC factory certificates are self-signed and no CA vouches for them: pin the certificate with --fingerprint, record it with --trust-on-first-use, or give its CA with --ca-cert.{seen}"
                    )),
                )
            }
            RedfishError::Redirect {
                location: Some(location),
                ..
            } => (
                answered,
                Some(format!(
                    "rftune follows no redirects; if {location} is where this BMC really answers (an iDRAC sends http:// to https://), give that address with --bmc or in the inventory"
                )),
            ),
            RedfishError::Transport {
                kind: TransportKind::Connect,
                ..
            } => (
                Connection,
                Some("is the BMC up and reachable at this address and port?".to_owned()),
            ),
            RedfishError::Transport {
                kind: TransportKind::PlainHttp,
                ..
            } => (
                Connection,
                Some(format!(
                    "this port answers in plain HTTP: if that is really the BMC (an emulator, a lab setup), use {} — rftune then warns that the password crosses the network unencrypted",
                    self.client.base_url().as_str().replacen("https://", "http://", 1)
                )),
            ),
            RedfishError::SessionExpired {
                relogin_refused: true,
                ..
            } => (
                Connection,
                Some(
                    "the session expired or was ended on the BMC, and logging in again was refused: were the credentials changed, or the account locked after failed logins, during the run? Check them and rerun"
                        .to_owned(),
                ),
            ),
            RedfishError::SessionExpired { .. } => (
                answered,
                Some(
                    "the session expired or was ended on the BMC, and each new one was ended too: another tool may be deleting sessions, or the iDRAC's session timeout is very short. Rerun; if it persists, check the iDRAC's Redfish session timeout and the sessions other clients hold"
                        .to_owned(),
                ),
            ),
            _ if rejected => (
                Connection,
                Some(
                    "the BMC rejected the credentials (iDRAC answers SYS415); check RFTUNE_USERNAME and the password"
                        .to_owned(),
                ),
            ),
            _ => (Redfish, None),
        }
    }

    /// Logs out, reporting (not failing on) problems: the work is done by then.
    pub async fn close(&self) {
        if let Err(e) = self.client.logout().await {
            tracing::warn!("{}: logout failed: {e}", self.name);
        }
    }
}
