//! Sessions: login (with the iDRAC's session limit), tokens, idle expiry, logout, and the
//! sessions collection.

use super::{Host, Reply};
use crate::messages::{self, idrac};
use serde_json::{Value, json};
use std::hash::{BuildHasher, Hasher};
use std::time::{Instant, SystemTime};

#[derive(Debug, Clone)]
pub(super) struct Session {
    token: String,
    last_used: Instant,
    pub(super) user: String,
    address: String,
}

impl Host {
    /// `POST SessionService/Sessions` from `address`, for an enabled account that may log in.
    pub fn login(&self, username: &str, password: &str, address: &str) -> Reply {
        let mut s = self.now();
        if Self::account_for(&s, username, password).is_none() {
            return Reply::error(401, vec![messages::sys415()]);
        }
        let timeout = self.config.session_timeout;
        s.sessions.retain(|_, sess| sess.last_used.elapsed() < timeout);
        if s.sessions.len() >= self.config.session_limit {
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
        s.session_seq += 1;
        let id = s.session_seq;
        let token = self.new_token(id);
        s.sessions.insert(
            id,
            Session {
                token: token.clone(),
                last_used: Instant::now(),
                user: username.to_owned(),
                address: address.to_owned(),
            },
        );
        self.stats.count_session();
        let location = format!("/redfish/v1/SessionService/Sessions/{id}");
        Reply::with_body(201, Some(Self::session_json(id, username, address)))
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

    fn session_json(id: u64, user: &str, address: &str) -> Value {
        json!({
            "@odata.context": "/redfish/v1/$metadata#Session.Session",
            "@odata.id": format!("/redfish/v1/SessionService/Sessions/{id}"),
            "@odata.type": "#Session.v1_6_0.Session",
            "ClientOriginIPAddress": address,
            "Description": "User Session",
            "Id": id.to_string(),
            "Name": "User Session",
            "Password": null,
            "SessionType": "Redfish",
            "UserName": user,
        })
    }

    /// The user of the live session `token` names (marking it used), if any.
    pub fn check_token(&self, token: &str) -> Option<String> {
        let mut s = self.now();
        let timeout = self.config.session_timeout;
        s.sessions.retain(|_, sess| sess.last_used.elapsed() < timeout);
        let sess = s.sessions.values_mut().find(|sess| sess.token == token)?;
        sess.last_used = Instant::now();
        Some(sess.user.clone())
    }

    /// Drops the session holding `token` (the `session-expiry` fault).
    pub fn expire_token(&self, token: &str) {
        self.lock().sessions.retain(|_, sess| sess.token != token);
    }

    /// Whether Basic credentials name an enabled account that may log in.
    pub fn check_basic(&self, username: &str, password: &str) -> bool {
        Self::account_for(&self.now(), username, password).is_some()
    }

    /// `DELETE SessionService/Sessions/<id>`.
    pub fn logout(&self, id: &str) -> Reply {
        let removed = id.parse::<u64>().ok().and_then(|n| self.lock().sessions.remove(&n));
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
            .iter()
            .map(|(id, sess)| {
                if expand {
                    Self::session_json(*id, &sess.user, &sess.address)
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
            .and_then(|n| s.sessions.get(&n).map(|sess| (n, sess)))
        {
            Some((n, sess)) => Reply::ok(Self::session_json(n, &sess.user, &sess.address)),
            None => Reply::error(
                404,
                vec![messages::not_found(&format!(
                    "/redfish/v1/SessionService/Sessions/{id}"
                ))],
            ),
        }
    }
}
