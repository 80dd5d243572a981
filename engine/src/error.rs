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
    /// The host changed since its plan was made (a value, a pending value or job, its BIOS or
    /// registry), or the BMC refused a conditional write (412): nothing was written.
    Stale,
    /// Another rftune run holds the host's lock.
    Locked,
    /// A hook around the reboot failed (its exit code and output are in the audit log).
    HookFailed,
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
