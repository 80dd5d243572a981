//! Sessions: login (with the iDRAC's session limit), tokens, idle expiry, logout, and the
//! sessions collection.

pub(crate) mod state;

use super::core::Host;
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Route, exact, member};
use serde_json::{Value, json};
use state::Session;
use std::hash::{BuildHasher, Hasher};
use std::time::{Instant, SystemTime};

/// The sessions collection.
pub(crate) const SESSIONS: &str = "/redfish/v1/SessionService/Sessions";
/// The sessions collection's `Members`: DSP0266 makes a POST there a POST to the collection.
pub(crate) const SESSIONS_MEMBERS: &str = "/redfish/v1/SessionService/Sessions/Members";

/// iDRAC10's logout: 204 without a body (assumed: Dell's scripts accept 200 or 204, and Dell PR
/// 364 adapted `CreateXAuthTokenSessionREDFISH.py --delete` to iDRAC 10 without showing the
/// answer).
pub(crate) fn idrac10_routes() -> Vec<Route> {
    vec![Route::delete(member(SESSIONS), |h, r| {
        let out = h.logout(r.id());
        if out.status == 200 {
            Reply::with_body(204, None)
        } else {
            out
        }
    })]
}

/// iLO's sessions collection, as the routes see its path (lower case).
pub(crate) const ILO_SESSIONS: &str = "/redfish/v1/sessionservice/sessions";

/// iLO's sessions: the same accounts and limits, with iLO's ids (the user name and 24 hex
/// digits, `root0000000066ab958288190bb4` on the recorded host), a `Location` with a trailing
/// slash (made absolute by the server, as HPE's authentication guide shows it), and iLO's
/// session document.
pub(crate) fn ilo_routes() -> Vec<Route> {
    vec![
        Route::post(exact(ILO_SESSIONS), |h, r| {
            r.with_json(|b| {
                h.ilo_login(
                    b["UserName"].as_str().unwrap_or_default(),
                    b["Password"].as_str().unwrap_or_default(),
                    &r.caller.address,
                )
            })
        }),
        Route::get(exact(ILO_SESSIONS), |h, r| Reply::ok(h.ilo_sessions(&r.caller.user))),
        Route::get(member(ILO_SESSIONS), |h, r| h.ilo_session(r.id())),
        Route::delete(member(ILO_SESSIONS), |h, r| match ilo_number(r.id()) {
            Some(n) => match h.logout(&n.to_string()) {
                out if out.status == 200 => {
                    Reply::ok(crate::messages::ilo::body(vec![crate::messages::ilo::success()]))
                }
                out => out,
            },
            None => crate::route::not_found(r.path),
        }),
    ]
}

/// The session number in an iLO session id (its last 24 hex digits).
fn ilo_number(id: &str) -> Option<u64> {
    let hex = id.get(id.len().checked_sub(24)?..)?;
    u64::from_str_radix(hex, 16).ok()
}

/// Login, the sessions collection, a session, logout.
pub(crate) fn routes() -> Vec<Route> {
    let login = |h: &Host, r: &crate::route::Request<'_>| {
        r.with_json(|b| {
            h.login(
                b["UserName"].as_str().unwrap_or_default(),
                b["Password"].as_str().unwrap_or_default(),
                &r.caller.address,
                b["Context"].as_str(),
            )
        })
    };
    vec![
        Route::post(exact(SESSIONS), login),
        Route::post(exact(SESSIONS_MEMBERS), login),
        Route::get(exact(SESSIONS), |h, r| Reply::ok(h.sessions(r.expand))),
        Route::get(member(SESSIONS), |h, r| h.session(r.id())),
        Route::delete(member(SESSIONS), |h, r| h.logout(r.id())),
    ]
}

impl Host {
    /// `POST SessionService/Sessions` from `address`, for an enabled account that may log in,
    /// with the client's `Context` for the session. Assumed: no public capture
    /// shows whether an iDRAC keeps a `Context` sent at login (its published Session schema
    /// defines the property; the sessions recorded on real iDRACs were opened without one);
    /// the emulator keeps it as the schema describes.
    pub fn login(&self, username: &str, password: &str, address: &str, context: Option<&str>) -> Reply {
        let mut s = self.now();
        if s.accounts.may_log_in(username, password).is_none() {
            return Reply::error(401, vec![messages::sys415()]);
        }
        let timeout = self.config.session_timeout;
        s.sessions.open.retain(|_, sess| sess.last_used.elapsed() < timeout);
        if s.sessions.open.len() >= self.config.session_limit {
            return Reply::error(
                400,
                vec![idrac(
                    "RAC0218",
                    "The maximum number of user sessions is reached.",
                    &[],
                    "Close one or more sessions and retry the operation.",
                    None,
                )],
            );
        }
        s.sessions.seq += 1;
        let id = s.sessions.seq;
        let token = self.new_token(id);
        let session = Session {
            token: token.clone(),
            last_used: Instant::now(),
            user: username.to_owned(),
            address: address.to_owned(),
            context: context.map(str::to_owned),
            created: crate::clock::with_offset(SystemTime::now()),
        };
        let doc = Self::session_json(id, &session);
        s.sessions.open.insert(id, session);
        self.stats.count_session();
        let location = format!("/redfish/v1/SessionService/Sessions/{id}");
        Reply::with_body(201, Some(doc))
            .header("X-Auth-Token", token)
            .header("Location", location)
    }

    /// 128 bits from this process's random keys, the session number and the time.
    fn new_token(&self, id: u64) -> String {
        let half = |salt: u64| {
            let mut h = self.tokens.build_hasher();
            h.write_u64(id);
            h.write_u64(salt);
            h.write_u128(
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            h.finish()
        };
        format!("{:016x}{:016x}", half(1), half(2))
    }

    /// A session as a real iDRAC 7.10 lists one (`CreatedTime` included), with the login's
    /// `Context` when it sent one.
    fn session_json(id: u64, sess: &Session) -> Value {
        let mut doc = json!({
            "@odata.context": "/redfish/v1/$metadata#Session.Session",
            "@odata.id": format!("/redfish/v1/SessionService/Sessions/{id}"),
            "@odata.type": "#Session.v1_6_0.Session",
            "ClientOriginIPAddress": sess.address,
            "CreatedTime": sess.created,
            "Description": "User Session",
            "Id": id.to_string(),
            "Name": "User Session",
            "Password": null,
            "SessionType": "Redfish",
            "UserName": sess.user,
        });
        if let Some(c) = &sess.context {
            doc["Context"] = json!(c);
        }
        doc
    }

    /// The user of the live session `token` names (marking it used), if any.
    pub fn check_token(&self, token: &str) -> Option<String> {
        let mut s = self.now();
        let timeout = self.config.session_timeout;
        s.sessions.open.retain(|_, sess| sess.last_used.elapsed() < timeout);
        let sess = s.sessions.open.values_mut().find(|sess| sess.token == token)?;
        sess.last_used = Instant::now();
        Some(sess.user.clone())
    }

    /// Drops the session holding `token` (the `session-expiry` fault).
    pub fn expire_token(&self, token: &str) {
        self.lock().sessions.open.retain(|_, sess| sess.token != token);
    }

    /// Whether Basic credentials name an enabled account that may log in.
    pub fn check_basic(&self, username: &str, password: &str) -> bool {
        self.now().accounts.may_log_in(username, password).is_some()
    }

    /// `POST SessionService/Sessions` on an iLO. A refused login answers 401 with iLO's
    /// `UnauthorizedLoginAttempt`, a full session table 400 with Base's `SessionLimitExceeded`
    /// (both assumed: no public iLO payload shows them).
    pub fn ilo_login(&self, username: &str, password: &str, address: &str) -> Reply {
        use crate::messages::ilo;
        let reply = self.login(username, password, address, None);
        let number = reply
            .headers
            .iter()
            .find(|(k, _)| *k == "Location")
            .and_then(|(_, v)| v.rsplit('/').next()?.parse::<u64>().ok());
        let (Some(number), 201) = (number, reply.status) else {
            let id = if reply.status == 401 {
                format!("{}.UnauthorizedLoginAttempt", ilo::ILO)
            } else {
                format!("{}.SessionLimitExceeded", ilo::BASE)
            };
            return Reply::with_body(reply.status, Some(ilo::body(vec![ilo::message(&id, &[])])));
        };
        let s = self.now();
        let Some(session) = s.sessions.open.get(&number) else {
            return Reply::with_body(
                500,
                Some(ilo::body(vec![ilo::message(
                    &format!("{}.InternalError", ilo::BASE),
                    &[],
                )])),
            );
        };
        let doc = Self::ilo_session_json(number, session, true);
        let token = session.token.clone();
        let location = format!("{}/", doc["@odata.id"].as_str().unwrap_or_default());
        Reply::with_body(201, Some(doc))
            .header("X-Auth-Token", token)
            .header("Location", location)
    }

    /// An iLO session document, its `Oem.Hpe` as the recorded ones carry it.
    fn ilo_session_json(number: u64, sess: &Session, mine: bool) -> Value {
        let id = format!("{}{number:024x}", sess.user.to_ascii_lowercase());
        json!({
            "@odata.context": "/redfish/v1/$metadata#Session.Session",
            "@odata.id": format!("/redfish/v1/SessionService/Sessions/{id}"),
            "@odata.type": "#Session.v1_0_0.Session",
            "Id": id,
            "Name": "User Session",
            "Description": "Manager User Session",
            "UserName": sess.user,
            "Oem": {"Hpe": {
                "@odata.type": "#HpeiLOSession.v2_1_0.HpeiLOSession",
                "LoginTime": sess.created,
                "MySession": mine,
                "UserIP": sess.address,
                "UserTag": "REST",
                "UserType": "Local",
            }},
        })
    }

    /// iLO's sessions collection, with `Oem.Hpe.Links.MySession` for `user`'s newest session.
    pub fn ilo_sessions(&self, user: &str) -> Value {
        let s = self.now();
        let members: Vec<Value> = s
            .sessions
            .open
            .iter()
            .map(|(n, sess)| json!({"@odata.id": Self::ilo_session_json(*n, sess, false)["@odata.id"]}))
            .collect();
        let mine = s
            .sessions
            .open
            .iter()
            .rev()
            .find(|(_, sess)| sess.user == user)
            .map(|(n, sess)| Self::ilo_session_json(*n, sess, true)["@odata.id"].clone());
        let mut doc = json!({
            "@odata.context": "/redfish/v1/$metadata#SessionCollection.SessionCollection",
            "@odata.id": "/redfish/v1/SessionService/Sessions",
            "@odata.type": "#SessionCollection.SessionCollection",
            "Description": "Manager User Sessions", "Name": "Sessions",
            "Members": members, "Members@odata.count": s.sessions.open.len(),
        });
        if let Some(mine) = mine {
            doc["Oem"] = json!({"Hpe": {"Links": {"MySession": {"@odata.id": mine}}}});
        }
        doc
    }

    /// `GET SessionService/Sessions/<id>` on an iLO.
    pub fn ilo_session(&self, id: &str) -> Reply {
        let s = self.now();
        let found = ilo_number(id).and_then(|n| s.sessions.open.get(&n).map(|sess| (n, sess)));
        match found {
            Some((n, sess)) if Self::ilo_session_json(n, sess, false)["Id"] == id => {
                Reply::ok(Self::ilo_session_json(n, sess, false))
            }
            _ => crate::route::not_found(&format!("/redfish/v1/SessionService/Sessions/{id}")),
        }
    }

    /// `DELETE SessionService/Sessions/<id>`.
    pub fn logout(&self, id: &str) -> Reply {
        let removed = id
            .parse::<u64>()
            .ok()
            .and_then(|n| self.lock().sessions.open.remove(&n));
        match removed {
            Some(_) => Reply::ok(messages::success_body(vec![messages::sys413()])),
            None => Reply::error(
                404,
                vec![messages::not_found(&format!(
                    "/redfish/v1/SessionService/Sessions/{id}"
                ))],
            ),
        }
    }

    /// The sessions collection; with `$expand`, the sessions inline.
    pub fn sessions(&self, expand: bool) -> Value {
        let s = self.now();
        let members: Vec<Value> = s
            .sessions
            .open
            .iter()
            .map(|(id, sess)| {
                if expand {
                    Self::session_json(*id, sess)
                } else {
                    json!({"@odata.id": format!("/redfish/v1/SessionService/Sessions/{id}")})
                }
            })
            .collect();
        json!({"@odata.context": "/redfish/v1/$metadata#SessionCollection.SessionCollection",
               "@odata.id": "/redfish/v1/SessionService/Sessions", "@odata.type": "#SessionCollection.SessionCollection",
               "Description": "Session Collection",
               "Name": "Session Collection", "Members@odata.count": members.len(), "Members": members})
    }

    /// `GET SessionService/Sessions/<id>`.
    pub fn session(&self, id: &str) -> Reply {
        let s = self.now();
        match id
            .parse::<u64>()
            .ok()
            .and_then(|n| s.sessions.open.get(&n).map(|sess| (n, sess)))
        {
            Some((n, sess)) => Reply::ok(Self::session_json(n, sess)),
            None => Reply::error(
                404,
                vec![messages::not_found(&format!(
                    "/redfish/v1/SessionService/Sessions/{id}"
                ))],
            ),
        }
    }
}
