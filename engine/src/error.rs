//! The engine's failures: typed where a caller acts on them ([`HostError`] with a
//! [`HostErrorKind`], [`Interrupted`](crate::interrupt::Interrupted), a profile error), with
//! the chain of what was being done kept for people (`source()` links, printed with
//! [`report`]).

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
    /// Input that cannot be used as given: an inventory, an experiment file, a state file, an
    /// option.
    Invalid(String),
    /// What was being done when the failure below happened.
    Context {
        /// What was being done.
        what: String,
        /// The failure.
        source: Box<Error>,
    },
    /// A failure of the operating system or a library (I/O, JSON, TOML, ...).
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Host(e) => write!(f, "{e}")?,
            Self::Interrupted(e) => write!(f, "{e}")?,
            Self::Profile(e) => write!(f, "{e}")?,
            Self::Invalid(message) => f.write_str(message)?,
            Self::Context { what, .. } => f.write_str(what)?,
            Self::Other(e) => write!(f, "{e}")?,
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

impl std::error::Error for Error {
    /// The layer below: for the wrapping variants, what the wrapped error wraps.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Host(e) => std::error::Error::source(&**e),
            Self::Interrupted(e) => std::error::Error::source(e),
            Self::Profile(e) => std::error::Error::source(e),
            Self::Invalid(_) => None,
            Self::Context { source, .. } => Some(&**source),
            Self::Other(e) => e.source(),
        }
    }
}

impl From<crate::interrupt::Interrupted> for Error {
    fn from(e: crate::interrupt::Interrupted) -> Self {
        Self::Interrupted(e)
    }
}

impl From<bios_profiles::Error> for Error {
    fn from(e: bios_profiles::Error) -> Self {
        Self::Profile(e)
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

/// The kinds of [`HostError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HostErrorKind {
    /// A Redfish request failed (see the source for status and MessageIds).
    Redfish,
    /// The connection could not be set up (address, credentials, certificate trust).
    Connection,
    /// Other work is already staged (pending values or an open BIOS job).
    PendingWork,
    /// System Lockdown is on: the iDRAC refuses every configuration change.
    Lockdown,
    /// The profile cannot be applied to this host as written (validation errors, not
    /// targeted at its CPU or model).
    ProfileNotApplicable,
    /// A BIOS job failed or will never run.
    JobFailed,
    /// A job, a reboot or the host's return took longer than allowed.
    Timeout,
    /// A write's answer was lost and what the BMC did could not be established.
    OutcomeUnknown,
    /// The BMC answered with something rftune cannot use (no systems, no power reading).
    Unsupported,
    /// The host was left untouched: the run stopped starting hosts (a canary failed, or too
    /// many hosts had failed).
    NotStarted,
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

impl From<HostError> for Error {
    fn from(e: HostError) -> Self {
        Self::Host(Box::new(e))
    }
}

impl From<String> for Error {
    /// A message (a parser's) is input that cannot be used as given.
    fn from(message: String) -> Self {
        Self::Invalid(message)
    }
}

impl Error {
    /// Input that cannot be used as given.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }

    /// The host failure underneath any context, if this is one.
    pub fn host_error(&self) -> Option<&HostError> {
        match self {
            Self::Host(e) => Some(e),
            Self::Context { source, .. } => source.host_error(),
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
        match self {
            Self::Interrupted(e) => Some(e),
            Self::Context { source, .. } => source.interrupted(),
            _ => None,
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

/// Adds what was being done to a failure (and turns a missing value into an error).
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

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(what.into()))
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(what().into()))
    }
}

macro_rules! from_foreign {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Self::Other(Box::new(e))
            }
        }
    )*};
}

from_foreign!(
    std::io::Error,
    serde_json::Error,
    toml::de::Error,
    toml::ser::Error,
    url::ParseError,
    redfish_client::Error,
    tokio::sync::AcquireError,
    tokio::task::JoinError,
    host_bench::Error,
    redfish_client::tls::FingerprintParseError,
);

/// Returns early with [`Error::Invalid`] built like `format!`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::Invalid(format!($($arg)*)))
    };
}
pub(crate) use bail;

/// `text` without the `host: ` that a host's errors start with, for saying it once where the
/// host is already named.
pub(crate) fn without_host<'a>(host: &str, text: &'a str) -> &'a str {
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
        let missing: Result<u8> = None.context("no power reading");
        assert_eq!(missing.unwrap_err().to_string(), "no power reading");
        let io: Result<()> = Err(std::io::Error::other("disk full")).context("writing x");
        let io = io.unwrap_err();
        assert_eq!(report(&io), "writing x: disk full");
        assert_eq!(format!("{io:#}"), "writing x: disk full", "{{:#}} shows the chain");
        assert_eq!(io.to_string(), "writing x", "{{}} shows the layer");
    }
}
