//! Ending the sessions of logins whose answers were lost. When the answer to a login is cut off
//! or arrives without its token, the service may still have opened a session; the client logs
//! in again, and the first session would stay open until the service's idle timeout (30 min on
//! real iDRACs), holding one of the few sessions a BMC allows. Once a new session is open, the
//! client lists the sessions and ends those it can prove are its own lost ones — nobody else's:
//!
//! - every login carries a `Context` (Session schema v1_5_0: "a client-supplied string that is
//!   stored with the session") unique to that login; where the service keeps it, exactly the
//!   sessions carrying it besides the new one are ours;
//! - where it keeps no `Context` but records `CreatedTime` (iDRAC 7.x does), the sessions of
//!   the same user, client address and session type as the new one, created in the seconds of
//!   this login before it, are ours, as long as there are no more of them than logins lost
//!   (more would mean someone else logged in then too, and nothing is ended);
//! - otherwise nothing is ended, and a warning says how many sessions may stay open.

use super::Client;
use crate::auth::{Authorization, Password};
use crate::error::Error;
use crate::request;
use http::Method;
use serde_json::Value;
use std::time::Duration;
use url::Url;

/// The logins of one [`Client::open_session`] whose answers were lost.
#[derive(Debug)]
pub(super) struct LostLogins {
    /// The `Context` every login of this attempt carries.
    context: String,
    /// How many answers were lost.
    count: u32,
    /// The time from the first login to the last lost answer.
    span: Duration,
}

impl LostLogins {
    pub(super) fn new() -> Self {
        Self {
            context: format!("rftune-{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
            count: 0,
            span: Duration::ZERO,
        }
    }

    /// The `Context` the logins carry.
    pub(super) fn context(&self) -> &str {
        &self.context
    }

    /// One more answer lost, `elapsed` after the first login went out.
    pub(super) fn note(&mut self, elapsed: Duration) {
        self.count += 1;
        self.span = elapsed;
    }

    /// Whether any answer was lost.
    pub(super) fn any(&self) -> bool {
        self.count > 0
    }
}

/// How a login ended, and the logins lost on the way (if any).
pub(super) struct OpenedSession {
    pub(super) result: crate::Result<(Url, super::transport::RawResponse)>,
    pub(super) lost: Option<LostLogins>,
}

/// Whether a login was refused because of its `Context` property (a service whose Session
/// schema predates it): a 400 naming an unknown or unwritable property.
pub(super) fn refuses_context(e: &Error) -> bool {
    e.status() == Some(400)
        && [
            "PropertyUnknown",
            "PropertyNotWritable",
            "PropertyValueNotInList",
            "PropertyValueTypeError",
        ]
        .iter()
        .any(|code| e.has_code(code))
}

/// What a session resource says about itself, as far as telling sessions apart goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SessionFacts {
    /// Its path.
    pub(super) path: String,
    pub(super) user: Option<String>,
    pub(super) address: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) context: Option<String>,
    /// `CreatedTime` as Unix seconds.
    pub(super) created: Option<i64>,
}

impl SessionFacts {
    fn of(doc: &Value) -> Option<Self> {
        let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(Self {
            path: text("@odata.id")?,
            user: text("UserName"),
            address: text("ClientOriginIPAddress"),
            kind: text("SessionType"),
            context: text("Context"),
            created: doc.get("CreatedTime").and_then(Value::as_str).and_then(unix_seconds),
        })
    }
}

/// Which of `others` (the service's sessions but the new one, `own`) are sessions of lost
/// logins: by `Context` where the service keeps it, else by user, address, type and creation
/// time within `span` (plus a second) before `own` was created, and then only when they are
/// no more than `lost`. Empty when neither tells them apart for certain.
pub(super) fn lost_sessions<'a>(
    own: &SessionFacts,
    others: &'a [SessionFacts],
    context: &str,
    lost: u32,
    span: Duration,
) -> Vec<&'a SessionFacts> {
    if own.context.as_deref() == Some(context) {
        return others
            .iter()
            .filter(|s| s.context.as_deref() == Some(context))
            .collect();
    }
    let Some(created) = own.created else {
        return Vec::new();
    };
    let earliest = created - i64::try_from(span.as_secs()).unwrap_or(i64::MAX / 2) - 1;
    let alike: Vec<&SessionFacts> = others
        .iter()
        .filter(|s| {
            s.user.is_some()
                && s.user == own.user
                && s.address == own.address
                && s.kind == own.kind
                && s.created.is_some_and(|t| (earliest..=created).contains(&t))
        })
        .collect();
    if alike.len() > lost as usize {
        return Vec::new();
    }
    alike
}

impl Client {
    /// Ends the sessions the lost logins of `lost` opened, with the new session (`token`, at
    /// `location`). Best effort: a failure here is logged, never the login's failure.
    pub(super) async fn end_lost_sessions(&self, token: &Password, location: Option<&str>, lost: &LostLogins) {
        let left = |why: &str| {
            tracing::warn!(
                url = %self.base_url(),
                "{} login answer(s) were lost; the session(s) they may have opened stay until the BMC's idle timeout: {why}",
                lost.count
            );
        };
        let Some(location) = location else {
            return left("the new session's Location was not given, so it cannot be told apart");
        };
        let auth = Authorization::Token {
            token: token.clone(),
            epoch: 0,
        };
        // A read through the new session directly (the client's own requests wait for the
        // login this is part of); an answer cut short is read again, as `Client::get` does.
        let read = |path: String| {
            let auth = auth.clone();
            async move {
                let mut attempts = 0u32;
                let start = std::time::Instant::now();
                loop {
                    attempts += 1;
                    let (url, raw) = self.send_with_retry(Method::GET, &path, None, &auth, None).await?;
                    let wait = self.inner.retry.backoff(attempts - 1, None, fastrand::f64());
                    match crate::error::decode_json::<Value>("GET", url.as_str(), &raw.body) {
                        Err(e) if e.is_garbled() && self.inner.retry.allows(attempts, start.elapsed(), wait) => {
                            tokio::time::sleep(wait).await;
                        }
                        other => return other,
                    }
                }
            }
        };
        let own_path = super::transport::location_path(location);
        let (own, listed) = tokio::join!(read(own_path.clone()), read(request::expand(request::SESSIONS, 1)));
        let (own, listed) = match (own, listed) {
            (Ok(o), Ok(l)) => (o, l),
            (Err(e), _) | (_, Err(e)) => return left(&format!("the sessions could not be read ({e})")),
        };
        let Some(own) = SessionFacts::of(&own) else {
            return left("the new session does not describe itself");
        };
        let mut others = Vec::new();
        for member in listed["Members"].as_array().into_iter().flatten() {
            let facts = match SessionFacts::of(member) {
                // Listed as a bare link (no $expand): read it.
                Some(f) if member.as_object().is_some_and(|o| o.len() == 1) => {
                    match read(f.path.clone()).await.ok().as_ref().and_then(SessionFacts::of) {
                        Some(full) => full,
                        None => continue,
                    }
                }
                Some(f) => f,
                None => continue,
            };
            if facts.path.trim_end_matches('/') != own_path.trim_end_matches('/') {
                others.push(facts);
            }
        }
        let ours = lost_sessions(&own, &others, lost.context(), lost.count, lost.span);
        if ours.is_empty() && own.context.as_deref() == Some(lost.context()) {
            // The service keeps the Context, and no other session carries it: the lost logins
            // opened none.
            return tracing::debug!("the lost login(s) opened no session");
        }
        if ours.is_empty() {
            return left(
                "the BMC records neither the login's Context nor its creation time, or others logged in as the same user meanwhile",
            );
        }
        for session in ours {
            match self
                .send_with_retry(Method::DELETE, &session.path, None, &auth, None)
                .await
            {
                Ok(_) => tracing::debug!(session = %session.path, "ended the session of a lost login"),
                Err(e) if e.status() == Some(404) => {}
                Err(e) => tracing::warn!(session = %session.path, "could not end the session of a lost login: {e}"),
            }
        }
    }
}

/// `2024-08-15T15:51:05-05:00` (RFC 3339, as Redfish's `DateTime`) as Unix seconds.
pub(super) fn unix_seconds(text: &str) -> Option<i64> {
    let (date, rest) = text.split_once('T')?;
    let mut d = date.split('-');
    let (y, m, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    let clock_len = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(clock_len);
    let clock = clock.split('.').next()?;
    let mut c = clock.split(':');
    let (hh, mm, ss): (i64, i64, i64) = (
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
        c.next()?.parse().ok()?,
    );
    let offset = match zone {
        "" | "Z" | "z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (oh, om) = z[1..].split_once(':')?;
            sign * (oh.parse::<i64>().ok()? * 3600 + om.parse::<i64>().ok()? * 60)
        }
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: u32, user: &str, address: &str, context: Option<&str>, created: Option<i64>) -> SessionFacts {
        SessionFacts {
            path: format!("/redfish/v1/SessionService/Sessions/{id}"),
            user: Some(user.into()),
            address: Some(address.into()),
            kind: Some("Redfish".into()),
            context: context.map(str::to_owned),
            created,
        }
    }

    #[test]
    fn redfish_date_times_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_seconds("2024-08-15T15:51:05-05:00"), Some(1_723_755_065));
        assert_eq!(unix_seconds("2024-08-15T20:51:05+00:00"), Some(1_723_755_065));
        assert_eq!(unix_seconds("2024-02-29T12:00:00.250Z"), Some(1_709_208_000));
        assert_eq!(unix_seconds("not a time"), None);
        assert_eq!(unix_seconds("2024-13-01T00:00:00Z"), None);
    }

    #[test]
    fn sessions_carrying_the_login_context_are_ours_and_no_others() {
        let ctx = "rftune-1";
        let own = session(9, "root", "10.0.0.5", Some(ctx), Some(100));
        let others = [
            session(7, "root", "10.0.0.5", Some(ctx), Some(99)),
            session(8, "root", "10.0.0.5", None, Some(99)),
            session(3, "root", "10.0.0.5", Some("rftune-other"), Some(99)),
        ];
        let ours = lost_sessions(&own, &others, ctx, 1, Duration::from_secs(2));
        assert_eq!(
            ours,
            [&others[0]],
            "only the one with our Context, even among look-alikes"
        );
    }

    #[test]
    fn without_a_context_the_creation_window_decides_and_ambiguity_ends_nothing() {
        let ctx = "rftune-1";
        let own = session(9, "root", "10.0.0.5", None, Some(1000));
        let lost = session(8, "root", "10.0.0.5", None, Some(998));
        let older = session(4, "root", "10.0.0.5", None, Some(400));
        let other_user = session(5, "admin", "10.0.0.5", None, Some(999));
        let elsewhere = session(6, "root", "10.0.0.9", None, Some(999));
        let others = [lost.clone(), older.clone(), other_user, elsewhere];
        let ours = lost_sessions(&own, &others, ctx, 1, Duration::from_secs(2));
        assert_eq!(ours, [&lost]);
        // Two look-alikes in the window for one lost login: someone else logged in too.
        let twin = session(7, "root", "10.0.0.5", None, Some(999));
        let crowded = [lost.clone(), twin];
        assert!(lost_sessions(&own, &crowded, ctx, 1, Duration::from_secs(2)).is_empty());
        // No creation times (iDRAC 6.x): nothing can be told apart.
        let bare = session(9, "root", "10.0.0.5", None, None);
        let untimed = [session(8, "root", "10.0.0.5", None, None)];
        assert!(lost_sessions(&bare, &untimed, ctx, 1, Duration::from_secs(2)).is_empty());
    }

    #[test]
    fn a_login_refused_for_its_context_is_told_apart_from_other_refusals() {
        let body = |id: &str| {
            crate::resources::message::RedfishError::from_body(
                format!(r#"{{"error":{{"code":"Base.1.0.GeneralError","message":"x","@Message.ExtendedInfo":[{{"MessageId":"{id}","Message":"m"}}]}}}}"#).as_bytes(),
            )
        };
        let status = |code: u16, id: &str| Error::Status {
            method: "POST".into(),
            url: "https://bmc/redfish/v1/SessionService/Sessions".into(),
            status: code,
            body: body(id),
        };
        assert!(refuses_context(&status(400, "Base.1.8.PropertyUnknown")));
        assert!(!refuses_context(&status(400, "IDRAC.2.4.RAC0218")));
        assert!(!refuses_context(&status(401, "Base.1.8.PropertyUnknown")));
    }
}
