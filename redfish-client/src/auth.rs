//! Credentials and the session state behind them. Secrets never appear in `Debug` output.

use std::fmt;

/// A secret string: a password or a session token. `Debug` and `Display` print `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Wraps a secret.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

impl fmt::Display for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A user name and password for the BMC.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Credentials {
    /// The account, e.g. `root`.
    pub username: String,
    /// The password (redacted in `Debug`).
    pub password: Password,
}

impl Credentials {
    /// Builds credentials.
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            username: username.into(),
            password: Password::new(password),
        }
    }
}

/// How the client authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthMethod {
    /// A Redfish session (one login, `X-Auth-Token` afterwards, logout at the end); falls back
    /// to Basic when the service has no session service. Logs in again when a session expires
    /// (a few times per request at most); login and logout are retried like any request.
    #[default]
    Session,
    /// HTTP Basic on every request: no login round trip, nothing to log out.
    Basic,
}

/// Where the client stands with the service.
#[cfg(feature = "client")]
#[derive(Debug, Clone)]
pub(crate) enum AuthState {
    /// Not logged in yet (or logged out); the next request logs in.
    Pending,
    /// Logged in. `epoch` tells apart sessions so a stale 401 does not discard a fresh one.
    Session {
        token: Password,
        location: Option<String>,
        epoch: u64,
    },
    /// Basic auth on every request.
    Basic,
}

/// What to put on one request.
#[cfg(feature = "client")]
#[derive(Debug, Clone)]
pub(crate) enum Authorization {
    None,
    Basic,
    Token { token: Password, epoch: u64 },
}

#[cfg(all(test, feature = "client"))]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let c = Credentials::new("root", "calvin");
        let shown = format!(
            "{c:?} {} {:?}",
            c.password,
            Authorization::Token {
                token: Password::new("tok123"),
                epoch: 1
            }
        );
        assert!(!shown.contains("calvin") && !shown.contains("tok123"), "{shown}");
        assert!(shown.contains("root"));
    }
}
