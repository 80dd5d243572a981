//! The engine's failures, as variants a caller can match: a host's failure ([`HostError`] with
//! a [`HostErrorKind`]), a stop request, a profile that cannot be used, input that cannot be
//! used as given, a command that failed, a Redfish error kept as itself, and the system's and
//! libraries' own errors. The chain of what
//! was being done is kept as `source()` links, printed whole by [`report`] or `{:#}`.

use std::fmt::{self, Write as _};

/// The engine's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong. `{}` shows this layer; `{:#}` the whole chain joined by `: ` (as anyhow
/// does), so an error reads the same whether a caller wraps it or prints it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A host could not be brought to (or checked against) the profile.
    Host(Box<HostError>),
    /// A stop was requested (SIGINT, SIGTERM, or [`crate::interrupt::request`]).
    Interrupted(crate::interrupt::Interrupted),
    /// A profile could not be read or resolved.
    Profile(bios_profiles::Error),
    /// Input that cannot be used as given: an inventory, a snapshot, a state file, an option.
    /// The message names the input and what is wrong with it.
    BadInput(String),
    /// A command rftune runs (a hook around a reboot) failed, timed out, or could not be
    /// started.
    OsCommand(String),
    /// A Redfish request failed outside any one host's work (the client's own error, with its
    /// method, URL, status and MessageIds).
    Redfish(Box<redfish_client::Error>),
    /// A file or directory could not be read or written.
    Io(std::io::Error),
    /// JSON could not be read or written.
    Json(serde_json::Error),
    /// TOML could not be read.
    Toml(toml::de::Error),
    /// TOML could not be written.
    TomlWrite(toml::ser::Error),
    /// A URL could not be parsed.
    Url(url::ParseError),
    /// A certificate fingerprint could not be parsed.
    Fingerprint(redfish_client::tls::FingerprintParseError),
    /// A task of the engine's ended abnormally (it panicked or was cancelled).
    Task(tokio::task::JoinError),
    /// What was being done when the failure below happened.
    Context {
        /// What was being done.
        what: String,
        /// The failure.
        source: Box<Error>,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Host(e) => write!(f, "{e}")?,
            Self::Interrupted(e) => write!(f, "{e}")?,
            Self::Profile(e) => write!(f, "{e}")?,
            Self::BadInput(m) | Self::OsCommand(m) => f.write_str(m)?,
            Self::Redfish(e) => write!(f, "{e}")?,
            Self::Io(e) => write!(f, "{e}")?,
            Self::Json(e) => write!(f, "{e}")?,
            Self::Toml(e) => write!(f, "{e}")?,
            Self::TomlWrite(e) => write!(f, "{e}")?,
            Self::Url(e) => write!(f, "{e}")?,
            Self::Fingerprint(e) => write!(f, "{e}")?,
            Self::Task(e) => write!(f, "{e}")?,
            Self::Context { what, .. } => f.write_str(what)?,
        }
        if f.alternate() {
            let mut next = std::error::Error::source(self);
            while let Some(e) = next {
                write!(f, ": {e}")?;
                next = e.source();
            }
        }
        Ok(())
    }
}

/// The layer below: for the variants that wrap an error, what the wrapped error wraps (its own
/// text is this layer's), so a chain never prints a layer twice.
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Host(e) => e.source(),
            Self::Interrupted(e) => e.source(),
            Self::Profile(e) => e.source(),
            Self::Redfish(e) => e.source(),
            Self::Io(e) => e.source(),
            Self::Json(e) => e.source(),
            Self::Toml(e) => e.source(),
            Self::TomlWrite(e) => e.source(),
            Self::Url(e) => e.source(),
            Self::Fingerprint(e) => e.source(),
            Self::Task(e) => e.source(),
            Self::Context { source, .. } => Some(&**source),
            Self::BadInput(_) | Self::OsCommand(_) => None,
        }
    }
}

/// A failed operation on one host: which host, what kind of failure, what was attempted, and
/// what to do about it.
#[derive(Debug, thiserror::Error)]
#[error("{host}: {message}")]
pub struct HostError {
    /// The host's name (the inventory name, or `host:port`).
    pub host: String,
    /// What kind of failure, for callers that react to it.
    pub kind: HostErrorKind,
    /// What was attempted, or what is wrong.
    pub message: String,
    /// A suggestion for people, where one helps.
    pub hint: Option<String>,
    /// The BMC's error (method, URL, status, MessageIds), when the BMC answered or failed to.
    #[source]
    pub source: Option<redfish_client::Error>,
}

/// The kinds of [`HostError`], and of every failure a host's work can end in
/// ([`HostErrorKind::of`]): the one list a fleet document's `error_kind` takes its values from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostErrorKind {
    /// The BMC could not be reached: nothing listens at the address and port, the name does not
    /// resolve, the network has no route, or the port speaks the other protocol (`http://` to
    /// an HTTPS port or the reverse).
    Unreachable,
    /// The BMC rejected the credentials (a 401 at login, or a login again after the session
    /// ended), or there were none to send.
    Credentials,
    /// The BMC's certificate is not trusted: no CA vouches for it, it does not match the pinned
    /// fingerprint or known_hosts, or a pin was given for a plain-HTTP URL.
    Tls,
    /// A Redfish request failed: the BMC refused it (the source has the status and MessageIds),
    /// or its answer broke off or could not be read.
    Redfish,
    /// Other work is already staged (pending values or an open BIOS job).
    PendingWork,
    /// System Lockdown is on: the iDRAC refuses every configuration change.
    Lockdown,
    /// The profile cannot be applied to this host as written (validation errors, not
    /// targeted at its CPU or model).
    ProfileNotApplicable,
    /// A BIOS job failed or will never run.
    JobFailed,
    /// A job, a reboot or the host's return took longer than allowed, or the BMC did not answer
    /// a request in time.
    Timeout,
    /// A write's answer was lost and what the BMC did could not be established.
    OutcomeUnknown,
    /// The BMC answered with something rftune cannot use (no systems, no power reading).
    Unsupported,
    /// The host was left untouched: the run stopped starting hosts (a canary failed, too many
    /// hosts had failed, its credentials had been rejected too often, or a stop was requested
    /// before anything was written to it).
    NotStarted,
    /// The host changed since its plan was made (a value, a pending value or job, its BIOS or
    /// registry), or the BMC refused a conditional write (412): nothing was written.
    Stale,
    /// Another rftune run holds the host's lock.
    Locked,
    /// A hook around the reboot failed (its exit code and output are in the audit log).
    HookFailed,
    /// A profile was applied but the host does not show it afterwards.
    NotConverged,
    /// SIGINT or SIGTERM stopped the host's work after it had begun (where it stopped is in the
    /// message and the audit log).
    Interrupted,
    /// Anything else: a local file, a command on the host's OS, a failure of rftune itself.
    /// The message says which.
    Other,
}

impl HostErrorKind {
    /// Every kind, in the order of their documentation.
    pub const ALL: [Self; 18] = [
        Self::Unreachable,
        Self::Credentials,
        Self::Tls,
        Self::Redfish,
        Self::PendingWork,
        Self::Lockdown,
        Self::ProfileNotApplicable,
        Self::JobFailed,
        Self::Timeout,
        Self::OutcomeUnknown,
        Self::Unsupported,
        Self::NotStarted,
        Self::Stale,
        Self::Locked,
        Self::HookFailed,
        Self::NotConverged,
        Self::Interrupted,
        Self::Other,
    ];

    /// As JSON spells it (`unreachable`, `not_started`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unreachable => "unreachable",
            Self::Credentials => "credentials",
            Self::Tls => "tls",
            Self::Redfish => "redfish",
            Self::PendingWork => "pending_work",
            Self::Lockdown => "lockdown",
            Self::ProfileNotApplicable => "profile_not_applicable",
            Self::JobFailed => "job_failed",
            Self::Timeout => "timeout",
            Self::OutcomeUnknown => "outcome_unknown",
            Self::Unsupported => "unsupported",
            Self::NotStarted => "not_started",
            Self::Stale => "stale",
            Self::Locked => "locked",
            Self::HookFailed => "hook_failed",
            Self::NotConverged => "not_converged",
            Self::Interrupted => "interrupted",
            Self::Other => "other",
        }
    }

    /// The kind of any failure of a host's work: a [`HostError`]'s own, a Redfish error's
    /// as [`HostErrorKind::of_redfish`] judges it, and the engine's other errors by what they
    /// are.
    pub fn of(error: &Error) -> Self {
        match error.innermost() {
            Error::Host(e) => e.kind,
            Error::Redfish(e) => Self::of_redfish(e),
            Error::Interrupted(_) => Self::Interrupted,
            Error::Profile(_) => Self::ProfileNotApplicable,
            _ => Self::Other,
        }
    }

    /// The kind of a Redfish failure, judged on its last attempt: not reached, credentials
    /// refused (a 401, whatever else the answer says, or a login again refused), a certificate
    /// not trusted, a request that timed out; anything else the BMC answered is
    /// [`HostErrorKind::Redfish`].
    pub fn of_redfish(error: &redfish_client::Error) -> Self {
        use redfish_client::Error as E;
        use redfish_client::error::TransportKind as T;
        let last = error.last_attempt();
        match last {
            E::PinMismatch { .. }
            | E::Transport {
                kind: T::Certificate, ..
            } => Self::Tls,
            E::Transport {
                kind: T::Connect | T::NoSuchName | T::PlainHttp | T::TlsAnswer,
                ..
            } => Self::Unreachable,
            E::Transport { kind: T::Timeout, .. } => Self::Timeout,
            E::SessionExpired {
                relogin_refused: true, ..
            } => Self::Credentials,
            E::SessionExpired { .. } => Self::Redfish,
            _ if last.status() == Some(401) => Self::Credentials,
            _ => Self::Redfish,
        }
    }
}

impl fmt::Display for HostErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for HostErrorKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Read back as written (a plan file, a merged document); an unknown spelling is an error.
impl<'de> serde::Deserialize<'de> for HostErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::ALL.into_iter().find(|k| k.as_str() == text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown error kind {text:?} (expected one of {})",
                Self::ALL.map(Self::as_str).join(", ")
            ))
        })
    }
}

impl HostError {
    /// A failure of this kind on `host`, without a BMC error.
    pub fn new(host: impl Into<String>, kind: HostErrorKind, message: impl Into<String>) -> Self {
        Self {
            host: host.into(),
            kind,
            message: message.into(),
            hint: None,
            source: None,
        }
    }

    /// With a hint for people.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl From<redfish_client::Error> for Error {
    fn from(e: redfish_client::Error) -> Self {
        Self::Redfish(Box::new(e))
    }
}

impl From<HostError> for Error {
    fn from(e: HostError) -> Self {
        Self::Host(Box::new(e))
    }
}

macro_rules! from_error {
    ($($variant:ident($t:ty)),* $(,)?) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Self::$variant(e)
            }
        }
    )*};
}

from_error!(
    Interrupted(crate::interrupt::Interrupted),
    Profile(bios_profiles::Error),
    Io(std::io::Error),
    Json(serde_json::Error),
    Toml(toml::de::Error),
    TomlWrite(toml::ser::Error),
    Url(url::ParseError),
    Fingerprint(redfish_client::tls::FingerprintParseError),
    Task(tokio::task::JoinError),
);

impl Error {
    /// Input that cannot be used as given; `message` names the input and what is wrong.
    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::BadInput(message.into())
    }

    /// The host failure underneath any context, if this is one.
    pub fn host_error(&self) -> Option<&HostError> {
        match self.innermost() {
            Self::Host(e) => Some(e),
            _ => None,
        }
    }

    /// The kind of host failure, if this is one.
    pub fn kind(&self) -> Option<HostErrorKind> {
        self.host_error().map(|e| e.kind)
    }

    /// The hint for people, if there is one.
    pub fn hint(&self) -> Option<&str> {
        self.host_error()?.hint.as_deref()
    }

    /// The stop request underneath any context, if this is one.
    pub fn interrupted(&self) -> Option<&crate::interrupt::Interrupted> {
        match self.innermost() {
            Self::Interrupted(e) => Some(e),
            _ => None,
        }
    }

    /// The Redfish error underneath any context, whether a host's work explained it or not:
    /// its status, URL and MessageIds.
    pub fn redfish(&self) -> Option<&redfish_client::Error> {
        match self.innermost() {
            Self::Redfish(e) => Some(e),
            Self::Host(e) => e.source.as_ref(),
            _ => None,
        }
    }

    /// The error under every [`Error::Context`] layer.
    fn innermost(&self) -> &Self {
        match self {
            Self::Context { source, .. } => source.innermost(),
            other => other,
        }
    }

    /// This error below `what` was being done.
    #[must_use]
    pub fn context(self, what: impl Into<String>) -> Self {
        Self::Context {
            what: what.into(),
            source: Box::new(self),
        }
    }
}

/// An error and its sources on one line, joined by `: ` (what `{:#}` of anyhow shows).
pub fn report(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        let _ = write!(out, ": {e}");
        next = e.source();
    }
    out
}

/// Adds what was being done to a failure.
pub trait Context<T> {
    /// With `what` as the outer layer.
    fn context(self, what: impl Into<String>) -> Result<T>;
    /// With a lazily built `what` as the outer layer.
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.into().context(what))
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| e.into().context(what()))
    }
}

/// Returns early with [`Error::BadInput`] built like `format!`.
macro_rules! bad_input {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::BadInput(format!($($arg)*)))
    };
}
pub(crate) use bad_input;

/// `text` without the `host: ` that a host's errors start with, for saying it once where the
/// host is already named.
pub fn without_host<'a>(host: &str, text: &'a str) -> &'a str {
    text.strip_prefix(host)
        .and_then(|t| t.strip_prefix(": "))
        .unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_reads_like_the_chain_and_the_host_failure_stays_reachable() {
        let e: Error = HostError::new("r1", HostErrorKind::PendingWork, "2 BIOS value(s) already staged")
            .with_hint("rerun with --replace-pending")
            .into();
        let e = e.context("applying performance");
        assert_eq!(report(&e), "applying performance: r1: 2 BIOS value(s) already staged");
        assert_eq!(e.kind(), Some(HostErrorKind::PendingWork));
        assert_eq!(e.hint(), Some("rerun with --replace-pending"));
        let io: Result<()> = Err(std::io::Error::other("disk full")).context("writing x");
        let io = io.unwrap_err();
        assert_eq!(report(&io), "writing x: disk full");
        assert_eq!(format!("{io:#}"), "writing x: disk full", "{{:#}} shows the chain");
        assert_eq!(io.to_string(), "writing x", "{{}} shows the layer");
        assert!(matches!(io.innermost(), Error::Io(_)), "the I/O error is matchable");
    }

    #[test]
    fn every_failure_has_one_kind_spelled_once_and_read_back() {
        use redfish_client::Error as R;
        use redfish_client::error::TransportKind as T;
        let url = || "https://idrac/redfish/v1/SessionService/Sessions".to_owned();
        let transport = |kind| R::Transport {
            method: "POST".into(),
            url: url(),
            kind,
            source: Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        };
        let status = |status| R::Status {
            method: "POST".into(),
            url: url(),
            status,
            body: None,
        };
        let cases = [
            (transport(T::Connect), HostErrorKind::Unreachable),
            (transport(T::NoSuchName), HostErrorKind::Unreachable),
            (transport(T::TlsAnswer), HostErrorKind::Unreachable),
            (transport(T::PlainHttp), HostErrorKind::Unreachable),
            (transport(T::Certificate), HostErrorKind::Tls),
            (transport(T::Timeout), HostErrorKind::Timeout),
            (transport(T::Interrupted), HostErrorKind::Redfish),
            (
                R::PinMismatch {
                    url: url(),
                    expected: "sha256:aa".into(),
                    found: "sha256:bb".into(),
                },
                HostErrorKind::Tls,
            ),
            (status(401), HostErrorKind::Credentials),
            (status(400), HostErrorKind::Redfish),
            (
                R::RetriesExhausted {
                    method: "GET".into(),
                    url: url(),
                    attempts: 9,
                    elapsed: std::time::Duration::from_secs(60),
                    last: Box::new(transport(T::Connect)),
                },
                HostErrorKind::Unreachable,
            ),
            (
                R::SessionExpired {
                    method: "GET".into(),
                    url: url(),
                    relogin_refused: true,
                    last: Box::new(status(401)),
                },
                HostErrorKind::Credentials,
            ),
        ];
        for (err, kind) in cases {
            assert_eq!(HostErrorKind::of_redfish(&err), kind, "{err}");
            assert_eq!(HostErrorKind::of(&Error::from(err).context("reading")), kind);
        }
        let stop = crate::interrupt::Interrupted {
            host: "r1".into(),
            signal: 2,
            during: "before staging".into(),
        };
        assert_eq!(HostErrorKind::of(&Error::from(stop)), HostErrorKind::Interrupted);
        assert_eq!(HostErrorKind::of(&Error::bad_input("x")), HostErrorKind::Other);
        let spelled: std::collections::BTreeSet<&str> = HostErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(spelled.len(), HostErrorKind::ALL.len(), "one spelling each");
        for kind in HostErrorKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, kind.as_str());
            assert_eq!(serde_json::from_value::<HostErrorKind>(json).unwrap(), kind);
        }
        assert!(serde_json::from_value::<HostErrorKind>("gremlins".into()).is_err());
    }

    #[test]
    fn a_redfish_error_that_escapes_a_host_s_work_keeps_its_status() {
        let status = redfish_client::Error::Status {
            method: "PATCH".into(),
            url: "https://idrac/redfish/v1/Systems/System.Embedded.1/Bios/Settings".into(),
            status: 400,
            body: None,
        };
        let e = Error::from(status).context("staging");
        assert_eq!(e.redfish().and_then(redfish_client::Error::status), Some(400));
        assert_eq!(e.kind(), None, "not a host's failure");
    }
}
