//! The crate's one error type. Every variant that comes from a request carries the method and
//! URL; HTTP failures carry the decoded Redfish error with its MessageIds.

use crate::resources::message::RedfishError;
use std::fmt;
use std::time::Duration;

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, with enough context to act on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request could not be sent, or the response could not be read.
    #[cfg(feature = "client")]
    #[error("{method} {url}: {kind}")]
    Transport {
        /// HTTP method.
        method: String,
        /// Full URL.
        url: String,
        /// A classification for messages and retry decisions.
        kind: TransportKind,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The server's TLS certificate does not match the pinned fingerprint.
    #[error(
        "{url}: TLS certificate fingerprint {found} does not match the expected {expected}; the BMC's certificate changed or this is not the BMC you trust"
    )]
    PinMismatch {
        /// Full URL.
        url: String,
        /// The pinned fingerprint.
        expected: String,
        /// The fingerprint presented.
        found: String,
    },
    /// The service answered with a non-success status.
    #[error("{method} {url}: HTTP {status}{}", Detail(body.as_ref()))]
    Status {
        /// HTTP method.
        method: String,
        /// Full URL.
        url: String,
        /// HTTP status code.
        status: u16,
        /// The decoded Redfish error body, when there was one.
        body: Option<RedfishError>,
    },
    /// The response is not the JSON the model expects.
    #[error("{method} {url}: response does not decode as {target} at `{path}`")]
    Decode {
        /// HTTP method.
        method: String,
        /// Full URL.
        url: String,
        /// The Rust type being decoded.
        target: &'static str,
        /// JSON path of the failure (`RegistryEntries.Attributes[3].Type`).
        path: String,
        /// The decoder's error.
        #[source]
        source: serde_json::Error,
    },
    /// The service answered with a redirect (3xx). Redfish needs none, and following one could
    /// carry the password or the session token to another server, so none is followed.
    #[error(
        "{method} {url}: HTTP {status} redirect to {}; refused: a Redfish service has no reason to redirect, and following it could send credentials elsewhere",
        location.as_deref().unwrap_or("nowhere (no Location header)")
    )]
    Redirect {
        /// HTTP method.
        method: String,
        /// Full URL of the request.
        url: String,
        /// HTTP status code (301, 302, 303, 307, 308, ...).
        status: u16,
        /// Where the service pointed, resolved against `url` when it was relative.
        location: Option<String>,
    },
    /// The response body is larger than the configured cap.
    #[error("{method} {url}: response body exceeds the {limit}-byte limit")]
    BodyTooLarge {
        /// HTTP method.
        method: String,
        /// Full URL.
        url: String,
        /// The cap in bytes.
        limit: usize,
    },
    /// Retrying stopped at the attempt or time bound; `last` is the final failure (and names
    /// the method and URL, so this layer's message does not repeat them).
    #[error("gave up after {attempts} attempts in {:.1}s", elapsed.as_secs_f64())]
    RetriesExhausted {
        /// HTTP method.
        method: String,
        /// Full URL.
        url: String,
        /// Attempts made.
        attempts: u32,
        /// Time spent.
        elapsed: Duration,
        /// The last failure.
        #[source]
        last: Box<Error>,
    },
    /// A session that had been opened was refused (HTTP 401), and logging in again did not
    /// restore it: the new login was refused (`relogin_refused`; the credentials changed or
    /// the account was locked meanwhile), or every new session was refused as well. Unlike a
    /// 401 on the first login, this does not mean the credentials were wrong to begin with.
    #[error(
        "{method} {url}: the session ended (HTTP 401 on an established session) and {}",
        if *relogin_refused { "logging in again was refused" } else { "new sessions were refused as well" }
    )]
    SessionExpired {
        /// HTTP method of the request the session was refused for.
        method: String,
        /// Full URL of that request.
        url: String,
        /// Whether the login that should have replaced the session was refused.
        relogin_refused: bool,
        /// The final failure: the refused login, or the last 401.
        #[source]
        last: Box<Error>,
    },
    /// The service answered successfully but not as Redfish requires (e.g. a login without a token).
    #[error("{method} {url}: {what}")]
    Protocol {
        /// HTTP method.
        method: String,
        /// Full URL.
        url: String,
        /// What was wrong.
        what: String,
    },
    /// A BMC job ended badly or stopped making progress.
    #[error("job {job_id}: {state}{}", job_message(message_id.as_deref(), message.as_deref()))]
    JobFailed {
        /// Job id (`JID_...`).
        job_id: String,
        /// The state it ended in (e.g. `Failed`, or `Scheduled (stuck)`).
        state: String,
        /// The job's MessageId (e.g. `PR30`).
        message_id: Option<String>,
        /// The job's message.
        message: Option<String>,
    },
    /// The client was configured with something unusable (bad URL, unreadable CA file, ...).
    #[error("invalid client configuration: {what}")]
    Config {
        /// What is wrong.
        what: String,
        /// The underlying error, if any.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

/// Why a request could not complete at the transport level.
#[cfg(feature = "client")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// No connection could be made (refused, unreachable, a resolver failing for now, TLS
    /// handshake).
    Connect,
    /// The per-request timeout elapsed.
    Timeout,
    /// The connection broke while sending or receiving.
    Interrupted,
    /// The server's certificate was not trusted (unknown issuer, self-signed, wrong name, expired).
    Certificate,
    /// An `https://` request reached a server that answered in plain HTTP.
    PlainHttp,
    /// An `http://` request reached a server that answered in TLS: the port serves `https://`.
    TlsAnswer,
    /// The host name does not resolve: no such name, or none with an address. A resolver that
    /// failed for now (`EAI_AGAIN`) is [`TransportKind::Connect`] and retried.
    NoSuchName,
}

#[cfg(feature = "client")]
impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "could not connect",
            Self::Timeout => "timed out",
            Self::Interrupted => "connection interrupted",
            Self::Certificate => "the server's TLS certificate is not trusted",
            Self::PlainHttp => "the server speaks plain HTTP, not HTTPS, on this port",
            Self::TlsAnswer => "the server speaks HTTPS (TLS), not plain HTTP, on this port",
            Self::NoSuchName => "the host name does not resolve",
        })
    }
}

struct Detail<'a>(Option<&'a RedfishError>);

impl fmt::Display for Detail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(body) => write!(f, ": {body}"),
            None => Ok(()),
        }
    }
}

fn job_message(id: Option<&str>, message: Option<&str>) -> String {
    match (id, message) {
        (Some(id), Some(m)) => format!(" [{}] {m}", crate::resources::message::message_code(id)),
        (Some(id), None) => format!(" [{}]", crate::resources::message::message_code(id)),
        (None, Some(m)) => format!(": {m}"),
        (None, None) => String::new(),
    }
}

impl Error {
    /// The HTTP status, for [`Error::Status`] and [`Error::Redirect`] (also inside
    /// [`Error::RetriesExhausted`] and [`Error::SessionExpired`]).
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } | Self::Redirect { status, .. } => Some(*status),
            Self::RetriesExhausted { last, .. } | Self::SessionExpired { last, .. } => last.status(),
            _ => None,
        }
    }

    /// The absolute URL (scheme, host and path) of the request that failed, for every error
    /// that concerns a request; `None` for [`Error::JobFailed`] and [`Error::Config`].
    pub fn url(&self) -> Option<&str> {
        match self {
            #[cfg(feature = "client")]
            Self::Transport { url, .. } => Some(url),
            Self::PinMismatch { url, .. }
            | Self::Status { url, .. }
            | Self::Decode { url, .. }
            | Self::Redirect { url, .. }
            | Self::BodyTooLarge { url, .. }
            | Self::RetriesExhausted { url, .. }
            | Self::SessionExpired { url, .. }
            | Self::Protocol { url, .. } => Some(url),
            Self::JobFailed { .. } | Self::Config { .. } => None,
        }
    }

    /// Whether the request's timeout elapsed before the answer was in (`Error::Transport`
    /// of kind `Timeout`, also inside [`Error::RetriesExhausted`] and
    /// [`Error::SessionExpired`]). A job that stopped making progress is
    /// [`Error::JobFailed`], not a timeout.
    pub fn is_timeout(&self) -> bool {
        match self {
            #[cfg(feature = "client")]
            Self::Transport { kind, .. } => *kind == TransportKind::Timeout,
            Self::RetriesExhausted { last, .. } | Self::SessionExpired { last, .. } => last.is_timeout(),
            _ => false,
        }
    }

    /// Whether the response body was cut short (JSON that ends too early): worth reading
    /// again. A body that is not JSON at all (an HTML error page behind a 200) or JSON of the
    /// wrong shape would read the same again, so it fails at once.
    pub fn is_garbled(&self) -> bool {
        match self {
            Self::Decode { source, .. } => source.classify() == serde_json::error::Category::Eof,
            _ => false,
        }
    }

    /// Whether a conditional write was refused because the resource changed since its `ETag`
    /// was read (HTTP 412 Precondition Failed): nothing was applied, and sending it again
    /// would only meet the same refusal.
    pub fn precondition_failed(&self) -> bool {
        self.last_attempt().status() == Some(412)
    }

    /// Whether a failed write may still have been applied: the request went out and the
    /// answer was lost, cut, garbled or a gateway error. A refusal with a status, or a
    /// connection that never opened, means nothing was applied. Judged on the last attempt.
    pub fn write_outcome_unknown(&self) -> bool {
        match self.last_attempt() {
            #[cfg(feature = "client")]
            Self::Transport { kind, .. } => matches!(kind, TransportKind::Timeout | TransportKind::Interrupted),
            Self::Status { status, .. } => matches!(status, 500 | 502 | 504),
            Self::Decode { .. } | Self::BodyTooLarge { .. } | Self::Protocol { .. } => true,
            _ => false,
        }
    }

    /// The failure itself: the last attempt's error when retries ran out, else `self` (an
    /// [`Error::SessionExpired`] stays itself: what it wraps is not the whole story).
    pub fn last_attempt(&self) -> &Error {
        match self {
            Self::RetriesExhausted { last, .. } => last.last_attempt(),
            other => other,
        }
    }

    /// The decoded Redfish error body, if the service sent one.
    pub fn redfish(&self) -> Option<&RedfishError> {
        match self {
            Self::Status { body, .. } => body.as_ref(),
            Self::RetriesExhausted { last, .. } | Self::SessionExpired { last, .. } => last.redfish(),
            _ => None,
        }
    }

    /// Whether the service's error carries the MessageId code (e.g. `SYS011`).
    pub fn has_code(&self, code: &str) -> bool {
        self.redfish().is_some_and(|e| e.has_code(code))
    }

    pub(crate) fn decode<T>(method: &str, url: &str, err: serde_path_to_error::Error<serde_json::Error>) -> Self {
        let path = err.path().to_string();
        Self::Decode {
            method: method.to_owned(),
            url: url.to_owned(),
            target: short_type_name::<T>(),
            path,
            source: err.into_inner(),
        }
    }

    #[cfg(feature = "client")]
    pub(crate) fn config(what: impl Into<String>) -> Self {
        Self::Config {
            what: what.into(),
            source: None,
        }
    }
}

/// `redfish_client::resources::bios::Bios` → `Bios`.
fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// Decodes JSON into `T`, naming the JSON path on failure. Used by the client and available to
/// IO-free users (the emulator, tests) for files and request bodies.
///
/// A body that decodes is decoded once, plainly: path tracking costs about as much again (a
/// 1.2 MB registry), so it runs only on a failure, to explain it.
pub fn decode_json<T: serde::de::DeserializeOwned>(method: &str, url: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).or_else(|plain| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let value = serde_path_to_error::deserialize(&mut de).map_err(|e| Error::decode::<T>(method, url, e))?;
        // The plain decode also failed on what follows the value (trailing garbage): an error.
        de.end().map_err(|_| Error::Decode {
            method: method.to_owned(),
            url: url.to_owned(),
            target: short_type_name::<T>(),
            path: String::new(),
            source: plain,
        })?;
        Ok(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::bios::Bios;

    #[test]
    fn decode_error_names_path_and_type() {
        let err = decode_json::<Bios>(
            "GET",
            "https://bmc/redfish/v1/Systems/1/Bios",
            br#"{"@odata.id":"/b","Attributes":[1]}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "GET https://bmc/redfish/v1/Systems/1/Bios: response does not decode as Bios at `Attributes`"
        );
        let truncated = decode_json::<Bios>("GET", "u", br#"{"@odata.id":"/b","Attributes":{"A":"#).unwrap_err();
        assert!(matches!(truncated, Error::Decode { .. }), "{truncated}");
        assert!(truncated.is_garbled(), "a body cut short is worth reading again");
        let html = decode_json::<Bios>("GET", "u", b"<html><body>Service Unavailable</body></html>").unwrap_err();
        assert!(!html.is_garbled(), "an HTML page would read the same again");
        // Trailing garbage after a value that decodes is still an error.
        let trailing = decode_json::<Bios>("GET", "u", br#"{"@odata.id":"/b","Attributes":{}} x"#).unwrap_err();
        assert!(matches!(trailing, Error::Decode { .. }), "{trailing}");
    }

    fn status(code: u16) -> Error {
        Error::Status {
            method: "PATCH".into(),
            url: "https://bmc/x".into(),
            status: code,
            body: None,
        }
    }

    #[test]
    fn a_refused_write_is_known_not_applied_and_a_lost_answer_is_not() {
        assert!(!status(400).write_outcome_unknown(), "the iDRAC said no");
        assert!(!status(503).write_outcome_unknown(), "not processed");
        assert!(
            status(502).write_outcome_unknown() && status(504).write_outcome_unknown(),
            "a gateway lost it"
        );
        let garbled = Error::Protocol {
            method: "PATCH".into(),
            url: "https://bmc/x".into(),
            what: "not JSON".into(),
        };
        assert!(garbled.write_outcome_unknown());
        let wrapped = Error::RetriesExhausted {
            method: "PATCH".into(),
            url: "https://bmc/x".into(),
            attempts: 3,
            elapsed: std::time::Duration::from_secs(1),
            last: Box::new(status(400)),
        };
        assert!(!wrapped.write_outcome_unknown(), "judged on the last attempt");
    }

    #[test]
    fn status_error_shows_message_ids() {
        let body = RedfishError::from_body(
            br#"{"error":{"@Message.ExtendedInfo":[{"MessageId":"IDRAC.2.9.SYS426","Message":"The value Fast for ProcCStates is not in the list.","Resolution":"Enter a value from the list."},{"MessageId":"Base.1.12.PropertyValueNotInList","Message":"The value Fast is not in the list of acceptable values."}]}}"#,
        );
        let err = Error::Status {
            method: "PATCH".into(),
            url: "https://bmc/x".into(),
            status: 400,
            body,
        };
        assert!(err.has_code("SYS426") && err.has_code("PropertyValueNotInList"));
        assert_eq!(
            err.to_string(),
            "PATCH https://bmc/x: HTTP 400: [SYS426] The value Fast for ProcCStates is not in the list. Resolution: Enter a value from the list.; [PropertyValueNotInList] The value Fast is not in the list of acceptable values."
        );
        assert_eq!(err.status(), Some(400));
    }

    const URL: &str = "https://bmc.example/redfish/v1/Systems/System.Embedded.1/Bios";

    /// A transport failure of `kind`, with an I/O error as its cause.
    #[cfg(feature = "client")]
    fn transport(kind: TransportKind) -> Error {
        Error::Transport {
            method: "GET".into(),
            url: URL.into(),
            kind,
            source: Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
        }
    }

    fn retries_exhausted(last: Error) -> Error {
        Error::RetriesExhausted {
            method: "GET".into(),
            url: URL.into(),
            attempts: 6,
            elapsed: Duration::from_secs(60),
            last: Box::new(last),
        }
    }

    fn session_expired(last: Error) -> Error {
        Error::SessionExpired {
            method: "GET".into(),
            url: URL.into(),
            relogin_refused: false,
            last: Box::new(last),
        }
    }

    /// Every variant (and each wrapper around a status and a timeout) with what `status()`,
    /// `is_timeout()` and `url()` must say of it.
    fn every_variant() -> Vec<(Error, Option<u16>, bool, Option<&'static str>)> {
        let status = |code| Error::Status {
            method: "GET".into(),
            url: URL.into(),
            status: code,
            body: None,
        };
        let mut cases = vec![
            (
                Error::PinMismatch {
                    url: URL.into(),
                    expected: "sha256:aa".into(),
                    found: "sha256:bb".into(),
                },
                None,
                false,
                Some(URL),
            ),
            (status(503), Some(503), false, Some(URL)),
            (
                decode_json::<Bios>("GET", URL, b"[]").unwrap_err(),
                None,
                false,
                Some(URL),
            ),
            (
                Error::Redirect {
                    method: "GET".into(),
                    url: URL.into(),
                    status: 307,
                    location: Some("https://elsewhere.example/".into()),
                },
                Some(307),
                false,
                Some(URL),
            ),
            (
                Error::BodyTooLarge {
                    method: "GET".into(),
                    url: URL.into(),
                    limit: 1,
                },
                None,
                false,
                Some(URL),
            ),
            (retries_exhausted(status(503)), Some(503), false, Some(URL)),
            (session_expired(status(401)), Some(401), false, Some(URL)),
            (
                Error::Protocol {
                    method: "POST".into(),
                    url: URL.into(),
                    what: "no token".into(),
                },
                None,
                false,
                Some(URL),
            ),
            (
                Error::JobFailed {
                    job_id: "JID_1".into(),
                    state: "Failed".into(),
                    message_id: None,
                    message: None,
                },
                None,
                false,
                None,
            ),
            (
                Error::Config {
                    what: "bad URL".into(),
                    source: None,
                },
                None,
                false,
                None,
            ),
        ];
        #[cfg(feature = "client")]
        cases.extend([
            (transport(TransportKind::Timeout), None, true, Some(URL)),
            (transport(TransportKind::Connect), None, false, Some(URL)),
            (transport(TransportKind::Interrupted), None, false, Some(URL)),
            (transport(TransportKind::Certificate), None, false, Some(URL)),
            (
                retries_exhausted(transport(TransportKind::Timeout)),
                None,
                true,
                Some(URL),
            ),
            (
                session_expired(transport(TransportKind::Timeout)),
                None,
                true,
                Some(URL),
            ),
        ]);
        cases
    }

    #[test]
    fn status_timeout_and_url_are_answered_for_every_variant() {
        for (err, status, timeout, url) in every_variant() {
            assert_eq!(err.status(), status, "status of {err:?}");
            assert_eq!(err.is_timeout(), timeout, "is_timeout of {err:?}");
            assert_eq!(err.url(), url, "url of {err:?}");
        }
    }

    #[test]
    fn job_failure_message() {
        let e = Error::JobFailed {
            job_id: "JID_1".into(),
            state: "Scheduled (stuck)".into(),
            message_id: Some("IDRAC.2.9.PR30".into()),
            message: Some("Job processing initialization failure.".into()),
        };
        assert_eq!(
            e.to_string(),
            "job JID_1: Scheduled (stuck) [PR30] Job processing initialization failure."
        );
    }
}
