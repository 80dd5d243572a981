//! The async HTTP client, split by job:
//!
//! - `builder`: [`ClientBuilder`], the configuration checked once (URL, TLS, timeouts, retry
//!   bounds, body cap) before any IO;
//! - `wire`: the connections to the BMC (at most [`ClientBuilder::connections`], reused, one
//!   request at a time on each) and one HTTP/1.1 exchange on them, within the timeouts;
//! - `transport`: one request on the wire (headers, body cap, redirects refused, the error it
//!   maps to) and its retries within the [`RetryPolicy`](crate::RetryPolicy); links off the
//!   BMC's origin are refused here;
//! - `session`: login (Basic fallback, trust on first use before any credential leaves),
//!   re-login on 401, logout;
//! - `reap`: ending the sessions of logins whose answers were lost (and only those);
//! - `reads`: generic and typed reads (`get`, collections with `$expand`, the typed resources);
//! - `writes`: `PATCH`/`POST`/`DELETE`, staging settings and resets, and what they answer
//!   ([`Written`], [`Staged`]);
//! - `messages`: error messages a service sent without their text (HPE's iLO), filled in from
//!   the message registries it serves; `registries` keeps what was read, once per client.
//!
//! Dell's actions live in `oem::dell`, on the handle `Client::dell` returns.

mod builder;
mod messages;
mod reads;
mod reap;
mod registries;
mod session;
mod transport;
mod wire;
mod writes;

pub use builder::{ClientBuilder, DEFAULT_MAX_BODY};
pub use reads::Answer;
pub use writes::{Staged, Written};

use crate::auth::{AuthMethod, AuthState, Credentials};
use crate::retry::RetryPolicy;
use crate::tls::{Fingerprint, Observed, Trusted};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use url::Url;

/// A Redfish client for one service. Cheap to clone; clones share the session.
#[derive(Clone, Debug)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    wire: wire::Wire,
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
    /// Logins carry a `Context` (until a service refuses one).
    sends_context: std::sync::atomic::AtomicBool,
    /// A retry after a failure to reach the BMC was said (once per client).
    retry_announced: std::sync::atomic::AtomicBool,
    /// The message registries read so far, for errors sent without their text.
    messages: tokio::sync::Mutex<registries::Lookup>,
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
    /// with [`TrustOnFirstUse`](crate::TlsVerification::TrustOnFirstUse) the certificate of the
    /// first handshake once it happened (what a known_hosts file should record). `None` for the
    /// other modes.
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

    /// How the client was configured to authenticate.
    pub fn auth_method(&self) -> AuthMethod {
        self.inner.method
    }
}
