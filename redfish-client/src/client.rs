//! The async HTTP client: authentication, retries, body limits and typed operations.

use crate::auth::{AuthMethod, AuthState, Authorization, Credentials, Password};
use crate::error::{Error, Result, TransportKind, decode_json};
use crate::odata::{Collection, Link, ODataId};
use crate::request;
use crate::resources::attribute_registry::AttributeRegistry;
use crate::resources::bios::{Attributes, Bios, BiosSettings, SettingsApplyTime};
use crate::resources::computer_system::{ComputerSystem, Memory, ResetType};
use crate::resources::message::{Message, RedfishError};
use crate::resources::power::{EnvironmentMetrics, Power};
use crate::resources::service_root::ServiceRoot;
use crate::retry::{RetryPolicy, parse_retry_after};
use crate::tls::{self, Fingerprint, Observed, TlsVerification, Trusted};
use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use url::Url;

/// Default cap on a response body: the largest real BIOS registries are ~1.3 MB.
pub const DEFAULT_MAX_BODY: usize = 64 * 1024 * 1024;

/// New sessions one request may open after its session was refused (401). More than one,
/// because a BMC under load can expire a fresh session too; bounded, because a service that
/// refuses every new session is not going to accept the next one.
const MAX_RELOGINS: u32 = 3;

/// Whether a request may be sent again after it failed in transit (it may have been applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replay {
    /// When repeating it cannot do harm: reads and deletes, or when no connection was made.
    IfSafe,
    /// Always: a login, whose repetition at worst leaves an unused session to expire, which
    /// beats leaving the run without a session at all.
    Always,
}

/// A Redfish client for one service. Cheap to clone; clones share the session.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    base: Url,
    credentials: Option<Credentials>,
    method: AuthMethod,
    auth: tokio::sync::Mutex<AuthState>,
    epochs: AtomicU64,
    retry: RetryPolicy,
    max_body: usize,
    observed: Observed,
    trusted: Trusted,
    /// Trust on first use: no credential leaves before `trusted` is set.
    first_use: bool,
    requests: AtomicU64,
}

/// Configures a [`Client`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ClientBuilder {
    base_url: String,
    credentials: Option<Credentials>,
    auth: AuthMethod,
    tls: TlsVerification,
    timeout: Duration,
    connect_timeout: Duration,
    retry: RetryPolicy,
    max_body: usize,
}

impl ClientBuilder {
    /// Starts a builder for the service at `base_url` (`https://bmc.example`, or `http://` for
    /// test servers). The path, if any, is ignored: Redfish paths are absolute.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            credentials: None,
            auth: AuthMethod::default(),
            tls: TlsVerification::default(),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            max_body: DEFAULT_MAX_BODY,
        }
    }

    /// Authenticates with these credentials (without them, requests are anonymous).
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Session (default) or Basic authentication.
    pub fn auth_method(mut self, method: AuthMethod) -> Self {
        self.auth = method;
        self
    }

    /// How to verify the server certificate (system roots by default).
    pub fn tls(mut self, tls: TlsVerification) -> Self {
        self.tls = tls;
        self
    }

    /// Per-request timeout, body included (default 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Connection timeout (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Retry bounds (default: [`RetryPolicy::default`]).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Largest response body accepted (default [`DEFAULT_MAX_BODY`]).
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body = limit;
        self
    }

    /// Builds the client. Does no IO: the first request logs in.
    pub fn build(self) -> Result<Client> {
        let mut base = Url::parse(&self.base_url).map_err(|e| Error::Config {
            what: format!("BMC URL {:?}", self.base_url),
            source: Some(Box::new(e)),
        })?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(Error::config(format!(
                "BMC URL {:?} must be http:// or https:// with a host",
                self.base_url
            )));
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err(Error::config(
                "credentials in the BMC URL are not accepted; pass them separately",
            ));
        }
        base.set_path("/");
        base.set_query(None);
        if base.scheme() == "http" && self.tls.pins() {
            return Err(Error::config(format!(
                "{base} is plain HTTP, which has no certificate to pin or to trust on first use; use https://"
            )));
        }
        let observed: Observed = Arc::default();
        let trusted: Trusted = Arc::default();
        let tls = tls::client_config(&self.tls, observed.clone(), trusted.clone())?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .user_agent(concat!("rftune-redfish-client/", env!("CARGO_PKG_VERSION")))
            // Redfish needs no redirects, and a followed one would carry the password (a 307
            // on login resends the body) or X-Auth-Token to wherever it points.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| Error::Config {
                what: "HTTP client".into(),
                source: Some(Box::new(e)),
            })?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                base,
                credentials: self.credentials,
                method: self.auth,
                auth: tokio::sync::Mutex::new(AuthState::Pending),
                epochs: AtomicU64::new(0),
                retry: self.retry,
                max_body: self.max_body,
                observed,
                trusted,
                first_use: self.tls == TlsVerification::TrustOnFirstUse,
                requests: AtomicU64::new(0),
            }),
        })
    }
}

/// The answer to a write (`PATCH`, `POST`, `DELETE`).
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// HTTP status.
    pub status: u16,
    /// The `Location` header, as a path (a created session, task or job).
    pub location: Option<ODataId>,
    /// The JSON body; `Null` when there was none.
    pub body: Value,
}

impl Written {
    /// The `@Message.ExtendedInfo` messages of the body.
    pub fn messages(&self) -> Vec<Message> {
        self.body
            .get("@Message.ExtendedInfo")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
}

/// The result of staging settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Staged {
    /// The job the service created, when it created one (iDRAC does for `@Redfish.SettingsApplyTime`).
    pub job: Option<ODataId>,
    /// Messages the service returned.
    pub messages: Vec<Message>,
}

#[derive(Debug)]
struct RawResponse {
    status: u16,
    location: Option<String>,
    retry_after: Option<Duration>,
    token: Option<Password>,
    body: Vec<u8>,
}

impl Client {
    /// Starts a [`ClientBuilder`].
    pub fn builder(base_url: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(base_url)
    }

    /// The service's origin, e.g. `https://127.0.0.1:9001/`.
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    /// The fingerprint of the certificate the server presented most recently (HTTPS only),
    /// whether it was trusted or not: for error messages.
    pub fn observed_fingerprint(&self) -> Option<Fingerprint> {
        self.inner.observed.lock().ok().and_then(|g| *g)
    }

    /// The fingerprint every connection of this client must present: the configured pin, or
    /// with [`TlsVerification::TrustOnFirstUse`] the certificate of the first handshake once it
    /// happened (what a known_hosts file should record). `None` for the other modes.
    pub fn trusted_fingerprint(&self) -> Option<Fingerprint> {
        self.inner.trusted.get().copied()
    }

    /// HTTP requests sent so far, retries and logins included.
    pub fn requests_sent(&self) -> u64 {
        self.inner.requests.load(Ordering::Relaxed)
    }

    /// The account the client authenticates as.
    pub fn username(&self) -> Option<&str> {
        self.inner.credentials.as_ref().map(|c| c.username.as_str())
    }

    /// Whether a session is currently open.
    pub async fn has_session(&self) -> bool {
        matches!(*self.inner.auth.lock().await, AuthState::Session { .. })
    }

    // ---- generic operations -------------------------------------------------------------

    /// `GET path`, decoded as `T`; decode errors name the JSON path. A body cut short or
    /// garbled on the way (not JSON at all) is read again within the retry policy; JSON of the
    /// wrong shape is an error at once.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        let start = Instant::now();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let (url, raw) = self.execute(Method::GET, path, None).await?;
            let decoded = decode_json("GET", url.as_str(), &raw.body);
            let wait = self.inner.retry.backoff(attempts - 1, None, fastrand::f64());
            match decoded {
                Err(e) if e.is_garbled() && self.inner.retry.allows(attempts, start.elapsed(), wait) => {
                    tracing::debug!(%url, attempt = attempts, error = %e, "garbled answer; reading again");
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }

    /// `GET path` as raw JSON.
    pub async fn get_value(&self, path: &str) -> Result<Value> {
        self.get(path).await
    }

    /// `PATCH path` with a JSON body.
    pub async fn patch<B: Serialize + ?Sized>(&self, path: &str, body: &B) -> Result<Written> {
        self.write(Method::PATCH, path, Some(to_value(body)?)).await
    }

    /// `POST path` with a JSON body.
    pub async fn post<B: Serialize + ?Sized>(&self, path: &str, body: &B) -> Result<Written> {
        self.write(Method::POST, path, Some(to_value(body)?)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Result<Written> {
        self.write(Method::DELETE, path, None).await
    }

    /// All members of a collection, following `Members@odata.nextLink` pages. `T` is [`Link`]
    /// for plain collections.
    pub async fn members<T: DeserializeOwned>(&self, collection: &str) -> Result<Vec<T>> {
        let mut out = Vec::new();
        let mut next = Some(collection.to_owned());
        let mut pages = 0;
        while let Some(page) = next.take() {
            pages += 1;
            if pages > 1000 {
                return Err(Error::Protocol {
                    method: "GET".into(),
                    url: self.url(collection)?.to_string(),
                    what: "more than 1000 pages of Members@odata.nextLink; refusing to loop".into(),
                });
            }
            let c: Collection<T> = self.get(&page).await?;
            out.extend(c.members);
            next = c.next_link;
        }
        Ok(out)
    }

    /// All members of a collection as full resources, in one request per page when the
    /// service honours `$expand`; members it still returns as bare links are fetched one by one.
    pub async fn expanded_members<T: DeserializeOwned>(&self, collection: &str) -> Result<Vec<T>> {
        let values: Vec<Value> = self.members(&request::expand(collection, 1)).await?;
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            let bare_link = v
                .as_object()
                .is_some_and(|o| o.len() == 1 && o.contains_key("@odata.id"));
            if bare_link {
                let link: Link = serde_json::from_value(v).map_err(|e| Error::Protocol {
                    method: "GET".into(),
                    url: collection.to_owned(),
                    what: format!("member link: {e}"),
                })?;
                out.push(self.get(link.odata_id.path()).await?);
            } else {
                let url = self.url(collection)?;
                let bytes = serde_json::to_vec(&v).unwrap_or_default();
                out.push(decode_json("GET", url.as_str(), &bytes)?);
            }
        }
        Ok(out)
    }

    // ---- typed operations ---------------------------------------------------------------

    /// The service root (`/redfish/v1`). Redfish serves it without authentication, so this
    /// neither logs in nor sends credentials.
    pub async fn service_root(&self) -> Result<ServiceRoot> {
        let (url, raw) = self.read_root_anonymously().await?;
        decode_json("GET", url.as_str(), &raw.body)
    }

    /// `GET /redfish/v1` without credentials (it needs none, and it makes the first handshake
    /// before any credential is sent).
    async fn read_root_anonymously(&self) -> Result<(Url, RawResponse)> {
        self.send_with_retry(
            Method::GET,
            request::SERVICE_ROOT,
            None,
            &Authorization::None,
            Replay::IfSafe,
        )
        .await
    }

    /// A computer system.
    pub async fn system(&self, system: &ODataId) -> Result<ComputerSystem> {
        self.get(system.path()).await
    }

    /// The links of every system in `/redfish/v1/Systems`.
    pub async fn systems(&self) -> Result<Vec<ODataId>> {
        let links: Vec<Link> = self.members("/redfish/v1/Systems").await?;
        Ok(links.into_iter().map(|l| l.odata_id).collect())
    }

    /// The DIMMs of a system (populated or not, as the service lists them).
    pub async fn memory(&self, system: &ComputerSystem) -> Result<Vec<Memory>> {
        let collection = system
            .memory
            .as_ref()
            .map(|l| l.odata_id.clone())
            .unwrap_or_else(|| system.odata_id.join("Memory"));
        self.expanded_members(collection.path()).await
    }

    /// Current BIOS values.
    pub async fn bios(&self, bios: &ODataId) -> Result<Bios> {
        self.get(bios.path()).await
    }

    /// Pending BIOS values (the settings object of `bios`).
    pub async fn pending_bios(&self, bios: &Bios) -> Result<BiosSettings> {
        self.get(bios.settings_object().path()).await
    }

    /// The attribute registry `bios` names, found through `/redfish/v1/Registries/<name>`
    /// (the DMTF way; iDRAC also serves it directly at `Bios/BiosRegistry`).
    pub async fn attribute_registry(&self, bios: &Bios) -> Result<AttributeRegistry> {
        let name = bios.attribute_registry.as_deref().ok_or_else(|| Error::Protocol {
            method: "GET".into(),
            url: bios.odata_id.to_string(),
            what: "Bios has no AttributeRegistry".into(),
        })?;
        let pointer: Value = self.get(&format!("/redfish/v1/Registries/{name}")).await?;
        let location = pointer["Location"]
            .as_array()
            .and_then(|locs| {
                locs.iter()
                    .find(|l| l["Language"].as_str().is_none_or(|lang| lang == "en"))
                    .or_else(|| locs.first())
            })
            .and_then(|l| l["Uri"].as_str())
            .ok_or_else(|| Error::Protocol {
                method: "GET".into(),
                url: format!("/redfish/v1/Registries/{name}"),
                what: "registry pointer has no Location[].Uri".into(),
            })?;
        self.get(ODataId::new(location).path()).await
    }

    /// Stages `attributes` on a settings object (`Bios/Settings`). With `apply_time`, the body
    /// carries `@Redfish.SettingsApplyTime`, and the job the service creates is returned.
    pub async fn stage_settings(
        &self,
        settings_object: &ODataId,
        attributes: &Attributes,
        apply_time: Option<&SettingsApplyTime>,
    ) -> Result<Staged> {
        let body = request::settings_body(attributes, apply_time);
        let written = self.patch(settings_object.path(), &body).await?;
        Ok(Staged {
            messages: written.messages(),
            job: written.location,
        })
    }

    /// `ComputerSystem.Reset`.
    pub async fn reset(&self, system: &ComputerSystem, reset: ResetType) -> Result<()> {
        self.post(system.reset_target().path(), &request::reset_body(reset))
            .await
            .map(drop)
    }

    /// The classic power resource of a chassis.
    pub async fn power(&self, chassis: &ODataId) -> Result<Power> {
        self.get(chassis.join("Power").path()).await
    }

    /// The environment metrics of a chassis (iDRAC 7.x and other newer services).
    pub async fn environment_metrics(&self, chassis: &ODataId) -> Result<EnvironmentMetrics> {
        self.get(chassis.join("EnvironmentMetrics").path()).await
    }

    // ---- sessions -----------------------------------------------------------------------

    /// Logs in now instead of on the first request.
    pub async fn login(&self) -> Result<()> {
        self.authorization().await.map(drop)
    }

    /// Ends the session, if one is open, retrying within the retry policy while the service
    /// is busy (a BMC allows few sessions; one left open blocks others until it expires). Safe
    /// to call more than once; a session the service already expired counts as logged out.
    pub async fn logout(&self) -> Result<()> {
        let mut state = self.inner.auth.lock().await;
        let AuthState::Session { token, location, .. } = &*state else {
            return Ok(());
        };
        let location = location.clone();
        let token = token.clone();
        *state = AuthState::Pending;
        drop(state);
        let Some(location) = location else { return Ok(()) };
        let auth = Authorization::Token { token, epoch: 0 };
        match self
            .send_with_retry(Method::DELETE, &location, None, &auth, Replay::IfSafe)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.status(), Some(401 | 404)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn authorization(&self) -> Result<Authorization> {
        let Some(creds) = &self.inner.credentials else {
            return Ok(Authorization::None);
        };
        let mut state = self.inner.auth.lock().await;
        if !matches!(&*state, AuthState::Session { .. }) {
            self.ensure_pinned().await?;
        }
        match &*state {
            AuthState::Session { token, epoch, .. } => {
                return Ok(Authorization::Token {
                    token: token.clone(),
                    epoch: *epoch,
                });
            }
            AuthState::Basic => return Ok(Authorization::Basic),
            AuthState::Pending => {}
        }
        if self.inner.method == AuthMethod::Basic {
            *state = AuthState::Basic;
            return Ok(Authorization::Basic);
        }
        let body = serde_json::json!({"UserName": creds.username, "Password": creds.password.expose()});
        let start = Instant::now();
        let mut attempts = 0u32;
        let result = loop {
            attempts += 1;
            let result = self
                .send_with_retry(
                    Method::POST,
                    request::SESSIONS,
                    Some(&body),
                    &Authorization::None,
                    Replay::Always,
                )
                .await;
            // An answer that lost its token header (cut or garbled on the way) is worth another
            // login, like a lost connection; at worst an idle session expires on the BMC.
            let wait = self.inner.retry.backoff(attempts - 1, None, fastrand::f64());
            match result {
                Ok((_, ref raw)) if raw.token.is_none() && self.inner.retry.allows(attempts, start.elapsed(), wait) => {
                    tracing::debug!(attempt = attempts, "login answered without a token; logging in again");
                    tokio::time::sleep(wait).await;
                }
                other => break other,
            }
        };
        match result {
            Ok((url, raw)) => {
                let Some(token) = raw.token else {
                    return Err(Error::Protocol {
                        method: "POST".into(),
                        url: url.to_string(),
                        what: format!("login answered {} without an X-Auth-Token header", raw.status),
                    });
                };
                let epoch = self.inner.epochs.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::debug!(url = %url, "session opened");
                *state = AuthState::Session {
                    token: token.clone(),
                    location: raw.location,
                    epoch,
                };
                Ok(Authorization::Token { token, epoch })
            }
            // No session service here: fall back to Basic, which the first real request tests.
            Err(e) if matches!(e.status(), Some(404 | 405 | 501)) => {
                tracing::debug!("no session service; using Basic authentication");
                *state = AuthState::Basic;
                Ok(Authorization::Basic)
            }
            Err(e) => Err(e),
        }
    }

    /// With trust on first use, sets the pin before any credential leaves: an anonymous read of
    /// the service root makes the first handshake. Its HTTP answer does not matter, the
    /// certificate does.
    async fn ensure_pinned(&self) -> Result<()> {
        if !self.inner.first_use || self.inner.trusted.get().is_some() {
            return Ok(());
        }
        let read = self.read_root_anonymously().await;
        if self.inner.trusted.get().is_some() {
            return Ok(());
        }
        read?;
        Err(Error::Protocol {
            method: "GET".into(),
            url: self.url(request::SERVICE_ROOT)?.to_string(),
            what: "no TLS certificate was presented to trust on first use".into(),
        })
    }

    async fn forget_session(&self, epoch: u64) {
        let mut state = self.inner.auth.lock().await;
        if matches!(&*state, AuthState::Session { epoch: e, .. } if *e == epoch) {
            *state = AuthState::Pending;
        }
    }

    // ---- transport ----------------------------------------------------------------------

    async fn write(&self, method: Method, path: &str, body: Option<Value>) -> Result<Written> {
        let (url, raw) = self.execute(method.clone(), path, body.as_ref()).await?;
        let body = if raw.body.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            decode_json(method.as_str(), url.as_str(), &raw.body)?
        };
        Ok(Written {
            status: raw.status,
            location: raw.location.map(|l| ODataId::new(location_path(&l))),
            body,
        })
    }

    /// Sends with authentication, logging in again (up to [`MAX_RELOGINS`] times) when the
    /// session is refused. A 401 means the request was not processed, so a write is resent too.
    /// When that does not help, the error is [`Error::SessionExpired`], which tells an ended
    /// session apart from credentials refused at the first login.
    async fn execute(&self, method: Method, path: &str, body: Option<&Value>) -> Result<(Url, RawResponse)> {
        let mut relogins = 0;
        loop {
            let auth = match self.authorization().await {
                Err(e) if relogins > 0 && e.status() == Some(401) => {
                    return Err(self.session_expired(&method, path, true, e));
                }
                other => other?,
            };
            match self
                .send_with_retry(method.clone(), path, body, &auth, Replay::IfSafe)
                .await
            {
                Err(e) if e.status() == Some(401) => {
                    let Authorization::Token { epoch, .. } = auth else {
                        return Err(e);
                    };
                    if relogins == MAX_RELOGINS {
                        return Err(self.session_expired(&method, path, false, e));
                    }
                    relogins += 1;
                    tracing::debug!(relogin = relogins, "session rejected (401); logging in again");
                    self.forget_session(epoch).await;
                }
                other => return other,
            }
        }
    }

    fn session_expired(&self, method: &Method, path: &str, relogin_refused: bool, last: Error) -> Error {
        Error::SessionExpired {
            method: method.to_string(),
            url: self.url(path).map_or_else(|_| path.to_owned(), String::from),
            relogin_refused,
            last: Box::new(last),
        }
    }

    async fn send_with_retry(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        auth: &Authorization,
        replay: Replay,
    ) -> Result<(Url, RawResponse)> {
        let url = self.url(path)?;
        let policy = &self.inner.retry;
        let start = Instant::now();
        let mut attempts = 0u32;
        let mut overtime_used = false;
        loop {
            attempts += 1;
            let (err, retry_after, retryable) = match self.send_once(&method, &url, body, auth).await {
                Ok(raw) if is_success(raw.status) => return Ok((url, raw)),
                Ok(raw) => {
                    let err = status_error(&method, &url, &raw);
                    let busy = matches!(raw.status, 429 | 503) || err.has_code("SWC0700");
                    (err, raw.retry_after, busy)
                }
                Err(e) => {
                    let retryable = transport_retryable(&e, &method, replay);
                    (e, None, retryable)
                }
            };
            if !retryable {
                return Err(err);
            }
            let wait = policy.backoff(attempts - 1, retry_after, fastrand::f64());
            let timed_out = matches!(
                err,
                Error::Transport {
                    kind: TransportKind::Timeout,
                    ..
                }
            );
            let allowed = if policy.allows(attempts, start.elapsed(), wait) {
                true
            } else if timed_out && !overtime_used && policy.allows_after_timeout(attempts, wait) {
                overtime_used = true;
                true
            } else {
                false
            };
            if !allowed {
                if attempts == 1 {
                    return Err(err);
                }
                return Err(Error::RetriesExhausted {
                    method: method.to_string(),
                    url: url.to_string(),
                    attempts,
                    elapsed: start.elapsed(),
                    last: Box::new(err),
                });
            }
            tracing::debug!(%method, %url, attempt = attempts, wait_ms = wait.as_millis() as u64, error = %err, "retrying");
            tokio::time::sleep(wait).await;
        }
    }

    async fn send_once(
        &self,
        method: &Method,
        url: &Url,
        body: Option<&Value>,
        auth: &Authorization,
    ) -> Result<RawResponse> {
        self.inner.requests.fetch_add(1, Ordering::Relaxed);
        let mut req = self
            .inner
            .http
            .request(method.clone(), url.clone())
            .header("Accept", "application/json")
            .header("OData-Version", "4.0");
        if let Some(b) = body {
            let bytes = serde_json::to_vec(b).unwrap_or_default();
            req = req.header("Content-Type", "application/json").body(bytes);
        }
        req = match auth {
            Authorization::None => req,
            Authorization::Basic => match &self.inner.credentials {
                Some(c) => req.basic_auth(&c.username, Some(c.password.expose())),
                None => req,
            },
            Authorization::Token { token, .. } => req.header("X-Auth-Token", token.expose()),
        };
        tracing::trace!(%method, %url, "request");
        let mut resp = req.send().await.map_err(|e| self.transport_error(method, url, e))?;
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let location = header("Location");
        if (300..400).contains(&status) {
            return Err(Error::Redirect {
                method: method.to_string(),
                url: url.to_string(),
                status,
                location: location.map(|l| url.join(&l).map_or(l, String::from)),
            });
        }
        let retry_after = header("Retry-After").as_deref().and_then(parse_retry_after);
        let token = header("X-Auth-Token").map(Password::new);
        let limit = self.inner.max_body;
        let too_large = || Error::BodyTooLarge {
            method: method.to_string(),
            url: url.to_string(),
            limit,
        };
        if resp.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport_error(method, url, e))? {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(RawResponse {
            status,
            location,
            retry_after,
            token,
            body,
        })
    }

    fn transport_error(&self, method: &Method, url: &Url, e: reqwest::Error) -> Error {
        if let Some((expected, found)) = tls::find_pin_mismatch(&e) {
            return Error::PinMismatch {
                url: url.to_string(),
                expected: expected.to_string(),
                found: found.to_string(),
            };
        }
        let kind = if tls::is_certificate_error(&e) {
            TransportKind::Certificate
        } else if e.is_timeout() {
            TransportKind::Timeout
        } else if e.is_connect() {
            TransportKind::Connect
        } else {
            TransportKind::Interrupted
        };
        Error::Transport {
            method: method.to_string(),
            url: url.to_string(),
            kind,
            source: e,
        }
    }

    /// Resolves `path` against the base URL, refusing links to other hosts: a BMC must not be
    /// able to send our credentials elsewhere.
    fn url(&self, path: &str) -> Result<Url> {
        let url = self.inner.base.join(path).map_err(|e| Error::Config {
            what: format!("path {path:?}"),
            source: Some(Box::new(e)),
        })?;
        if url.origin() != self.inner.base.origin() {
            return Err(Error::Protocol {
                method: "-".into(),
                url: url.to_string(),
                what: format!("refusing to follow a link off {}", self.inner.base),
            });
        }
        Ok(url)
    }
}

fn is_success(status: u16) -> bool {
    (200..300).contains(&status)
}

fn status_error(method: &Method, url: &Url, raw: &RawResponse) -> Error {
    Error::Status {
        method: method.to_string(),
        url: url.to_string(),
        status: raw.status,
        body: RedfishError::from_body(&raw.body),
    }
}

/// A request that failed in transit is retried when repeating it cannot do harm: always when no
/// connection was made, for reads and deletes otherwise, and for what the caller marks
/// [`Replay::Always`]. An untrusted certificate will not become trusted by asking again.
fn transport_retryable(e: &Error, method: &Method, replay: Replay) -> bool {
    match e {
        Error::Transport {
            kind: TransportKind::Certificate,
            ..
        } => false,
        Error::Transport { kind, .. } => {
            *kind == TransportKind::Connect
                || replay == Replay::Always
                || matches!(*method, Method::GET | Method::HEAD | Method::DELETE)
        }
        _ => false,
    }
}

/// `Location` may be a full URL or a path; Redfish identifiers are paths.
fn location_path(location: &str) -> String {
    match Url::parse(location) {
        Ok(u) => u.path().to_owned(),
        Err(_) => location.to_owned(),
    }
}

fn to_value<B: Serialize + ?Sized>(body: &B) -> Result<Value> {
    serde_json::to_value(body).map_err(|e| Error::Config {
        what: "request body is not serialisable as JSON".into(),
        source: Some(Box::new(e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_rejects_bad_urls_and_embedded_credentials() {
        assert!(ClientBuilder::new("ftp://bmc").build().is_err());
        assert!(ClientBuilder::new("not a url").build().is_err());
        let e = ClientBuilder::new("https://root:calvin@bmc").build().unwrap_err();
        assert!(!e.to_string().contains("calvin"), "{e}");
    }

    #[test]
    fn links_off_the_bmc_are_refused() {
        let c = ClientBuilder::new("http://127.0.0.1:9").build().unwrap();
        assert!(c.url("/redfish/v1/Systems").is_ok());
        assert!(c.url("https://evil.invalid/redfish/v1").is_err());
        assert_eq!(
            location_path("https://127.0.0.1:9/redfish/v1/Jobs/JID_1"),
            "/redfish/v1/Jobs/JID_1"
        );
        assert_eq!(location_path("/redfish/v1/Jobs/JID_1"), "/redfish/v1/Jobs/JID_1");
    }
}
