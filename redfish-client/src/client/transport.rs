//! One request on the wire and its retries: headers and authorization, the body cap, redirects
//! refused, failures mapped to [`Error`] with the absolute URL, and retries within the
//! client's [`RetryPolicy`](crate::RetryPolicy). Links off the BMC's origin are refused here.

use super::Client;
use crate::auth::{Authorization, Password};
use crate::error::{Error, Result, TransportKind};
use crate::resources::message::RedfishError;
use crate::retry::parse_retry_after;
use crate::tls;
use reqwest::Method;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use url::Url;

/// Whether a request may be sent again after it failed in transit (it may have been applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Replay {
    /// When repeating it cannot do harm: reads and deletes, or when no connection was made.
    IfSafe,
    /// Always: a login, whose repetition at worst leaves an unused session to expire, which
    /// beats leaving the run without a session at all.
    Always,
}

/// A response as it came off the wire, before its body is decoded.
#[derive(Debug)]
pub(super) struct RawResponse {
    pub(super) status: u16,
    pub(super) location: Option<String>,
    pub(super) retry_after: Option<Duration>,
    pub(super) token: Option<Password>,
    pub(super) body: Vec<u8>,
}

impl Client {
    pub(super) async fn send_with_retry(
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
        // Held until the body is read, when the connection goes back to the pool for the next
        // request. Never closed, so acquiring cannot fail.
        let _wire = self.inner.wire.acquire().await.ok();
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
        } else if e.is_connect() && tls::is_plain_http_answer(&e) {
            TransportKind::PlainHttp
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
            // The URL is already in this error's own message.
            source: e.without_url(),
        }
    }

    /// Resolves `path` against the base URL, refusing links to other hosts: a BMC must not be
    /// able to send our credentials elsewhere.
    pub(crate) fn url(&self, path: &str) -> Result<Url> {
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

    /// An [`Error::Protocol`] about the answer to `method path`, naming the absolute URL (or
    /// the error that `path` cannot be resolved against the BMC's origin).
    pub(crate) fn protocol_error(&self, method: &str, path: &str, what: impl Into<String>) -> Error {
        match self.url(path) {
            Ok(url) => Error::Protocol {
                method: method.to_owned(),
                url: url.to_string(),
                what: what.into(),
            },
            Err(e) => e,
        }
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
            kind: TransportKind::Certificate | TransportKind::PlainHttp,
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
pub(super) fn location_path(location: &str) -> String {
    match Url::parse(location) {
        Ok(u) => u.path().to_owned(),
        Err(_) => location.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ClientBuilder;

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
