//! [`ClientBuilder`]: the client's configuration, checked when it is built and before any IO.

use super::wire::{Wire, WireConfig};
use super::{Client, Inner};
use crate::auth::{AuthMethod, AuthState, Credentials};
use crate::error::{Error, Result};
use crate::retry::RetryPolicy;
use crate::tls::{self, Observed, TlsVerification, Trusted};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use url::Url;

/// Default cap on a response body: the largest real BIOS registries are ~1.3 MB.
pub const DEFAULT_MAX_BODY: usize = 64 * 1024 * 1024;

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
    connections: usize,
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
            connections: 1,
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

    /// Requests on the wire at once, each on its own connection (default 1). With one, every
    /// request of the client shares a single keep-alive connection: one TLS handshake per BMC
    /// instead of one per concurrent request. Real iDRACs speak HTTP/1.1 only, where a
    /// connection carries one request at a time, and gain nothing from parallel requests that
    /// the extra handshakes do not cost again.
    pub fn connections(mut self, n: usize) -> Self {
        self.connections = n;
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
        if self.connections == 0 {
            return Err(Error::config("a client needs at least one connection"));
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
        // Plain HTTP has no certificate to check: no verifier is built for it.
        let tls = match base.scheme() {
            "https" => Some(Arc::new(tls::client_config(
                &self.tls,
                observed.clone(),
                trusted.clone(),
            )?)),
            _ => None,
        };
        let config = WireConfig {
            tls,
            connections: self.connections,
            connect_timeout: self.connect_timeout,
            timeout: self.timeout,
            max_body: self.max_body,
        };
        let wire = Wire::new(&base, config).map_err(Error::config)?;
        Ok(Client {
            inner: Arc::new(Inner {
                wire,
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
                sends_context: std::sync::atomic::AtomicBool::new(true),
                retry_announced: std::sync::atomic::AtomicBool::new(false),
                messages: tokio::sync::Mutex::default(),
            }),
        })
    }
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
}
