//! One request on the wire and its retries: headers and authorization, the body cap, redirects
//! refused, failures mapped to [`Error`] with the absolute URL, and retries within the
//! client's [`RetryPolicy`](crate::RetryPolicy). Links off the BMC's origin are refused here.

use super::Client;
use super::wire::{self, Failure};
use crate::auth::{Authorization, Password};
use crate::error::{Error, Result, TransportKind};
use crate::resources::message::RedfishError;
use crate::retry::parse_retry_after;
use crate::tls;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use http::{HeaderValue, Method, header};
use http_body_util::Full;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use url::Url;

/// What the client calls itself in `User-Agent`.
const USER_AGENT: &str = concat!("rftune-redfish-client/", env!("CARGO_PKG_VERSION"));

/// A response as it came off the wire, before its body is decoded.
#[derive(Debug)]
pub(super) struct RawResponse {
    pub(super) status: u16,
    pub(super) location: Option<String>,
    pub(super) retry_after: Option<Duration>,
    pub(super) token: Option<Password>,
    /// Every other header, without the credentials a response can carry (`X-Auth-Token`, kept
    /// as [`Self::token`], and `Set-Cookie`), so none is ever printed.
    pub(super) headers: http::HeaderMap,
    pub(super) body: Vec<u8>,
}

/// A failed attempt, as the retry loop judges it.
struct Failed {
    err: Error,
    /// The server's `Retry-After`.
    retry_after: Option<Duration>,
    /// Whether asking again may help and cannot harm.
    retryable: bool,
}

impl Client {
    pub(super) async fn send_with_retry(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        auth: &Authorization,
        if_match: Option<&str>,
    ) -> Result<(Url, RawResponse)> {
        let url = self.url(path)?;
        let raw = self
            .retrying(&method, &url, || async {
                match self.send_once(&method, &url, body, auth, if_match).await {
                    Ok(raw) if is_success(raw.status) => Ok(raw),
                    Ok(raw) => {
                        let err = status_error(&method, &url, &raw);
                        let busy = matches!(raw.status, 429 | 503) || err.has_code("SWC0700");
                        Err(Failed {
                            err,
                            retry_after: raw.retry_after,
                            retryable: busy,
                        })
                    }
                    Err(err) => Err(Failed {
                        retryable: transport_retryable(&err, &method),
                        err,
                        retry_after: None,
                    }),
                }
            })
            .await?;
        Ok((url, raw))
    }

    /// Opens a connection to the BMC now (TCP, and TLS for `https://`) without sending a
    /// request, and keeps it for the next one; retried within the retry policy as a request
    /// that could not connect would be. Whether the BMC can be reached is then known before a
    /// request (a login) goes out. Its errors name the method `CONNECT` and the base URL.
    pub async fn connect(&self) -> Result<()> {
        let method = Method::CONNECT;
        let url = self.inner.base.clone();
        self.retrying(&method, &url, || async {
            self.inner.wire.warm().await.map_err(|failure| {
                let err = self.transport_error(&method, &url, failure);
                Failed {
                    retryable: transport_retryable(&err, &method),
                    err,
                    retry_after: None,
                }
            })
        })
        .await
    }

    /// Makes `attempt` until it succeeds, fails in a way not worth retrying, or the retry
    /// policy is spent (then [`Error::RetriesExhausted`] names `method` and `url`). The first
    /// retry after a failure to reach the BMC is said once per client.
    async fn retrying<T, F, Fut>(&self, method: &Method, url: &Url, mut attempt: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, Failed>>,
    {
        let policy = &self.inner.retry;
        let start = Instant::now();
        let mut attempts = 0u32;
        let mut overtime_used = false;
        loop {
            attempts += 1;
            let Failed {
                err,
                retry_after,
                retryable,
            } = match attempt().await {
                Ok(done) => return Ok(done),
                Err(failed) => failed,
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
            if attempts == 1
                && let Some(reason) = unreachable_reason(&err)
                && !self.inner.retry_announced.swap(true, Ordering::Relaxed)
            {
                // Retries are otherwise silent: said once per BMC, a host that is down shows
                // at once why the run waits, not only after the budget.
                let left = policy.max_elapsed.saturating_sub(start.elapsed()).as_secs_f64().ceil();
                let retrying = if left > 0.0 {
                    format!("retrying for up to {left} s")
                } else {
                    "trying once more".to_owned()
                };
                tracing::warn!("{}: {reason}, {retrying} (a BMC may be restarting)", url.authority());
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
        if_match: Option<&str>,
    ) -> Result<RawResponse> {
        let request = self.request(method, url, body, auth, if_match)?;
        self.inner.requests.fetch_add(1, Ordering::Relaxed);
        tracing::trace!(%method, %url, "request");
        let (parts, body) = self
            .inner
            .wire
            .exchange(request)
            .await
            .map_err(|failure| self.transport_error(method, url, failure))?;
        let status = parts.status.as_u16();
        let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
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
        let mut headers = parts.headers;
        headers.remove("X-Auth-Token");
        headers.remove(header::SET_COOKIE);
        let body = self.decoded(method, url, &mut headers, body)?;
        Ok(RawResponse {
            status,
            location,
            retry_after,
            token,
            headers,
            body,
        })
    }

    /// `body` as the service meant it: a gzip-encoded one inflated (HPE's iLO 5 sends its BIOS
    /// registry so even to a client that did not ask, as DMTF's Redfish-Mockup-Creator issue
    /// #58 records), within the same size cap as any body. Any other encoding is refused: a
    /// JSON decoder would only report garbage.
    fn decoded(&self, method: &Method, url: &Url, headers: &mut http::HeaderMap, body: Vec<u8>) -> Result<Vec<u8>> {
        let Some(encoding) = headers.get(header::CONTENT_ENCODING) else {
            return Ok(body);
        };
        let encoding = encoding.to_str().unwrap_or_default().trim().to_ascii_lowercase();
        match encoding.as_str() {
            "" | "identity" => {}
            "gzip" | "x-gzip" => {
                use std::io::Read as _;
                let limit = self.inner.max_body;
                let mut inflated = Vec::with_capacity(body.len().saturating_mul(4).min(limit));
                let read = flate2::read::GzDecoder::new(body.as_slice())
                    .take(limit as u64 + 1)
                    .read_to_end(&mut inflated);
                match read {
                    Ok(n) if n > limit => {
                        return Err(Error::BodyTooLarge {
                            method: method.to_string(),
                            url: url.to_string(),
                            limit,
                        });
                    }
                    Ok(_) => {}
                    Err(e) => {
                        return Err(Error::Protocol {
                            method: method.to_string(),
                            url: url.to_string(),
                            what: format!("the body is marked gzip-encoded but does not inflate: {e}"),
                        });
                    }
                }
                headers.remove(header::CONTENT_ENCODING);
                headers.remove(header::CONTENT_LENGTH);
                return Ok(inflated);
            }
            other => {
                return Err(Error::Protocol {
                    method: method.to_string(),
                    url: url.to_string(),
                    what: format!("the body is encoded as {other:?}, which rftune does not decode"),
                });
            }
        }
        Ok(body)
    }

    /// The HTTP/1.1 request for `method url`: origin-form target, `Host`, Redfish's headers,
    /// the JSON body, `If-Match` when a conditional write asks for it, and the credential
    /// (marked sensitive, so it is never printed).
    fn request(
        &self,
        method: &Method,
        url: &Url,
        body: Option<&Value>,
        auth: &Authorization,
        if_match: Option<&str>,
    ) -> Result<wire::Request> {
        let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let mut req = http::Request::builder()
            .method(method.clone())
            .uri(target)
            .header(header::HOST, url.authority())
            .header(header::USER_AGENT, USER_AGENT)
            .header(header::ACCEPT, "application/json")
            .header("OData-Version", "4.0");
        if let Some(tag) = if_match {
            let value = HeaderValue::try_from(tag)
                .map_err(|_| Error::config(format!("the ETag {tag:?} for {url} cannot be sent as If-Match")))?;
            req = req.header(header::IF_MATCH, value);
        }
        let credential = match auth {
            Authorization::None => None,
            Authorization::Basic => self.inner.credentials.as_ref().map(|c| {
                let pair = format!("{}:{}", c.username, c.password.expose());
                (header::AUTHORIZATION, format!("Basic {}", BASE64.encode(pair)))
            }),
            Authorization::Token { token, .. } => Some((
                header::HeaderName::from_static("x-auth-token"),
                token.expose().to_owned(),
            )),
        };
        if let Some((name, value)) = credential {
            let mut value = HeaderValue::try_from(value).map_err(|_| {
                Error::config(format!(
                    "the credential for {url} holds a character an HTTP header cannot carry"
                ))
            })?;
            value.set_sensitive(true);
            req = req.header(name, value);
        }
        let bytes = match body {
            Some(b) => {
                req = req.header(header::CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(b).unwrap_or_default())
            }
            None => Bytes::new(),
        };
        req.body(Full::new(bytes)).map_err(|e| Error::Config {
            what: format!("request {method} {url}"),
            source: Some(Box::new(e)),
        })
    }

    fn transport_error(&self, method: &Method, url: &Url, failure: Failure) -> Error {
        let (kind, source): (TransportKind, wire::Cause) = match failure {
            Failure::TooLarge => {
                return Error::BodyTooLarge {
                    method: method.to_string(),
                    url: url.to_string(),
                    limit: self.inner.max_body,
                };
            }
            Failure::Connect(e) => {
                if let Some((expected, found)) = tls::find_pin_mismatch(e.as_ref()) {
                    return Error::PinMismatch {
                        url: url.to_string(),
                        expected: expected.to_string(),
                        found: found.to_string(),
                    };
                }
                let kind = if tls::is_certificate_error(e.as_ref()) {
                    TransportKind::Certificate
                } else if tls::is_plain_http_answer(e.as_ref()) {
                    TransportKind::PlainHttp
                } else {
                    TransportKind::Connect
                };
                (kind, e)
            }
            Failure::NoSuchName(e) => (TransportKind::NoSuchName, e),
            Failure::TlsAnswer => (
                TransportKind::TlsAnswer,
                Box::new(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "it answered with a TLS record, not HTTP",
                )),
            ),
            Failure::ConnectTimeout(limit) => (
                TransportKind::Timeout,
                Box::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no connection within {limit:?}"),
                )),
            ),
            Failure::Timeout(limit) => (
                TransportKind::Timeout,
                Box::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no whole answer within {limit:?}"),
                )),
            ),
            Failure::Interrupted(e) => (TransportKind::Interrupted, e),
        };
        Error::Transport {
            method: method.to_string(),
            url: url.to_string(),
            kind,
            source,
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
/// connection was made, and for reads and deletes otherwise. An untrusted certificate will not
/// become trusted by asking again, a port will not change its protocol, and a name that does
/// not exist will not come to.
fn transport_retryable(e: &Error, method: &Method) -> bool {
    match e {
        Error::Transport {
            kind:
                TransportKind::Certificate | TransportKind::PlainHttp | TransportKind::TlsAnswer | TransportKind::NoSuchName,
            ..
        } => false,
        Error::Transport { kind, .. } => {
            *kind == TransportKind::Connect || matches!(*method, Method::GET | Method::HEAD | Method::DELETE)
        }
        _ => false,
    }
}

/// Why a BMC could not be reached, in a few words, when `err` is such a failure: the start
/// of the line that says the first retry.
fn unreachable_reason(err: &Error) -> Option<String> {
    let Error::Transport { kind, source, .. } = err else {
        return None;
    };
    let refused = source
        .downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused);
    match kind {
        TransportKind::Connect if refused => Some("connection refused".to_owned()),
        TransportKind::Connect => Some(format!("could not connect ({source})")),
        TransportKind::Timeout | TransportKind::Interrupted => Some(kind.to_string()),
        _ => None,
    }
}

/// An `ETag` as a BMC sent it, without the `-gzip` that Dell iDRACs append inside the quotes
/// when the request offered gzip (gofish strips it the same way; rftune offers no compression,
/// so this only guards a proxy that does): `W/"abc-gzip"` → `W/"abc"`.
pub(crate) fn sanitize_etag(tag: &str) -> String {
    let tag = tag.trim();
    match tag.strip_suffix("-gzip\"") {
        Some(head) => format!("{head}\""),
        None => tag.to_owned(),
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

    #[test]
    fn the_gzip_suffix_of_an_etag_is_taken_off_and_nothing_else() {
        assert_eq!(
            sanitize_etag("\"4a2ae25594ccaa28535062b7b6d58df0\""),
            "\"4a2ae25594ccaa28535062b7b6d58df0\""
        );
        assert_eq!(sanitize_etag("W/\"abc-gzip\""), "W/\"abc\"");
        assert_eq!(sanitize_etag(" \"abc-gzip\" "), "\"abc\"");
        assert_eq!(sanitize_etag("\"gzip\""), "\"gzip\"");
    }
}
