//! Sessions: login (falling back to Basic where there is no session service), trust on first
//! use settled before any credential leaves, re-login when a session is refused, and logout.

use super::Client;
use super::reap::{LostLogins, OpenedSession};
use super::transport::RawResponse;
use crate::auth::{AuthMethod, AuthState, Authorization};
use crate::error::{Error, Result};
use crate::request;
use http::Method;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Instant;
use url::Url;

/// New sessions one request may open after its session was refused (401). More than one,
/// because a BMC under load can expire a fresh session too; bounded, because a service that
/// refuses every new session is not going to accept the next one.
const MAX_RELOGINS: u32 = 3;

impl Client {
    /// Whether a session is currently open.
    pub async fn has_session(&self) -> bool {
        matches!(*self.inner.auth.lock().await, AuthState::Session { .. })
    }

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
        match self.send_with_retry(Method::DELETE, &location, None, &auth, None).await {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.status(), Some(401 | 404)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Ends the session, if one is open, on a task of its own: for a caller whose work was
    /// abandoned mid-way (a timeout or a stop dropped it) and that cannot wait for the answer.
    /// A BMC allows few sessions, and one left open blocks others until it expires. Does
    /// nothing without a session, or outside a tokio runtime.
    pub fn logout_in_background(&self) {
        // Locked means in use, so possibly mid-login: log out once that is done.
        let open = self
            .inner
            .auth
            .try_lock()
            .map_or(true, |state| matches!(*state, AuthState::Session { .. }));
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if open {
            let client = self.clone();
            runtime.spawn(async move {
                if let Err(e) = client.logout().await {
                    tracing::debug!(url = %client.base_url(), "logout of an abandoned session failed: {e}");
                }
            });
        }
    }

    async fn authorization(&self) -> Result<Authorization> {
        let Some(creds) = &self.inner.credentials else {
            return Ok(Authorization::None);
        };
        let mut state = self.inner.auth.lock().await;
        // Every request awaits this function, so each of its futures holds this one's state:
        // the login path (pinning, the login itself, ending lost sessions: several requests of
        // its own) goes on the heap, where it costs only while a login is under way.
        if !matches!(&*state, AuthState::Session { .. }) {
            Box::pin(self.ensure_pinned()).await?;
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
        let login = Box::pin(self.open_session(creds)).await;
        let (result, lost) = (login.result, login.lost);
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
                if let Some(lost) = lost {
                    // Still holding the session state: the sessions of lost answers are ended
                    // before any other request of this client goes out on the new session.
                    Box::pin(self.end_lost_sessions(&token, raw.location.as_deref(), &lost)).await;
                }
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

    /// `POST SessionService/Sessions` until a session is opened, within the retry policy. A
    /// login whose answer was lost (cut off, timed out, or without its token) is sent again:
    /// without a session the run cannot go on. The service may have opened a session for the
    /// lost one, whose token never arrived; those are counted, and each login carries a
    /// `Context` of its own so that [`Client::end_lost_sessions`] can find them afterwards.
    async fn open_session(&self, creds: &crate::auth::Credentials) -> OpenedSession {
        let mut lost = LostLogins::new();
        let start = Instant::now();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let mut body = serde_json::json!({"UserName": creds.username, "Password": creds.password.expose()});
            if self.inner.sends_context.load(Ordering::Relaxed) {
                body["Context"] = Value::String(lost.context().to_owned());
            }
            let result = self
                .send_with_retry(Method::POST, request::SESSIONS, Some(&body), &Authorization::None, None)
                .await;
            let wait = self.inner.retry.backoff(attempts - 1, None, fastrand::f64());
            let again = self.inner.retry.allows(attempts, start.elapsed(), wait);
            match result {
                // A service whose Session schema predates `Context` may refuse the property:
                // nothing was opened, so log in again without it (and never send it again).
                Err(e)
                    if super::reap::refuses_context(&e) && self.inner.sends_context.swap(false, Ordering::Relaxed) =>
                {
                    tracing::debug!("the session service refuses a login Context; logging in without one");
                }
                Ok((_, ref raw)) if raw.token.is_none() && again => {
                    lost.note(start.elapsed());
                    tracing::debug!(attempt = attempts, "login answered without a token; logging in again");
                    tokio::time::sleep(wait).await;
                }
                Err(ref e) if e.write_outcome_unknown() && matches!(e, Error::Transport { .. }) && again => {
                    lost.note(start.elapsed());
                    tracing::debug!(attempt = attempts, error = %e, "the answer to a login was lost; logging in again");
                    tokio::time::sleep(wait).await;
                }
                other => {
                    return OpenedSession {
                        result: other,
                        lost: lost.any().then_some(lost),
                    };
                }
            }
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
        Err(self.protocol_error(
            "GET",
            request::SERVICE_ROOT,
            "no TLS certificate was presented to trust on first use",
        ))
    }

    async fn forget_session(&self, epoch: u64) {
        let mut state = self.inner.auth.lock().await;
        if matches!(&*state, AuthState::Session { epoch: e, .. } if *e == epoch) {
            *state = AuthState::Pending;
        }
    }

    /// Sends with authentication, logging in again (up to [`MAX_RELOGINS`] times) when the
    /// session is refused. A 401 means the request was not processed, so a write is resent too.
    /// When that does not help, the error is [`Error::SessionExpired`], which tells an ended
    /// session apart from credentials refused at the first login.
    /// `if_match` makes a write conditional: the service answers 412 when the resource's
    /// `ETag` is no longer that one. Its errors are as the service sent them; reads and writes
    /// go through [`Client::execute`], which fills in messages sent without their text.
    pub(super) async fn send_authenticated(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        if_match: Option<&str>,
    ) -> Result<(Url, RawResponse)> {
        let mut relogins = 0;
        loop {
            let auth = match self.authorization().await {
                Err(e) if relogins > 0 && e.status() == Some(401) => {
                    return Err(self.session_expired(&method, path, true, e));
                }
                other => other?,
            };
            match self.send_with_retry(method.clone(), path, body, &auth, if_match).await {
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

    /// The error for a request whose session ended and could not be restored. Only reached
    /// after `path` was sent, so it resolves against the BMC's origin.
    fn session_expired(&self, method: &Method, path: &str, relogin_refused: bool, last: Error) -> Error {
        match self.url(path) {
            Ok(url) => Error::SessionExpired {
                method: method.to_string(),
                url: url.to_string(),
                relogin_refused,
                last: Box::new(last),
            },
            Err(e) => e,
        }
    }
}
