//! The iDRAC itself: its clock, its restarts (`Manager.Reset`, Dell's `iDRACReset`, a reset
//! to defaults) and the outage they cause, what a restarting iDRAC answers, the Lifecycle
//! Controller's status, and Dell's service documents at their legacy path.

pub(crate) mod state;

use super::accounts::state::Accounts;
use super::core::Host;
use super::dell_attributes::group_at;
use super::json::set;
use super::reply::Reply;
use crate::clock;
use crate::messages::{self, idrac};
use crate::route::{Request, Route, exact};
use crate::synth::{DELL_SERVICES, IDRAC_CARD_SERVICE, TIME_SERVICE};
use redfish_client::oem::dell;
use serde_json::{Value, json};
use state::{Availability, Outage};
use std::time::{Instant, SystemTime};

/// iLO's own restart, at the target its Manager (the system's `ManagedBy`) advertises, with the
/// types it lists: sessions end and no connection is accepted for half a POST's length, and
/// nothing else changes: a restarting iLO leaves the BIOS settings written for the next system
/// reset pending (assumed: only the host's POST processes them, HPE's BIOS data model says
/// settings "do not take effect until the server is reset"). 200 with `Success` (assumed).
pub(crate) fn ilo_routes() -> Vec<Route> {
    fn target(h: &Host) -> Option<(String, Vec<String>)> {
        let system = h.fixture.doc(&h.fixture.places.system)?;
        let manager = system.pointer("/Links/ManagedBy/0/@odata.id")?.as_str()?;
        let action = h
            .fixture
            .doc(&h.fixture.canonical(manager))?
            .pointer("/Actions/#Manager.Reset")?;
        let types = action["ResetType@Redfish.AllowableValues"]
            .as_array()
            .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        Some((h.fixture.canonical(action["target"].as_str()?), types))
    }
    vec![
        Route::post(crate::route::Pattern::Any, |h, r| {
            r.with_json(|b| {
                let types = target(h).map(|(_, t)| t).unwrap_or_default();
                let types: Vec<&str> = types.iter().map(String::as_str).collect();
                if let Err(refused) = super::power::reset_type(b, "Manager.Reset", &types) {
                    return refused;
                }
                let mut s = h.change();
                s.sessions.open.clear();
                s.outage = Some(Outage::ilo_reset(Instant::now(), h.config.boot_time));
                Reply::ok(messages::ilo::body(vec![messages::ilo::success()]))
            })
        })
        .when(|h, r| target(h).is_some_and(|(t, _)| t == r.path)),
    ]
}

/// Where iDRAC9 firmware first put Dell's services; badfish and Dell's `ResetIdracREDFISH.py`
/// still use it, and a real iDRAC 3.x sample shows it.
const LEGACY_DELL: &str = "/redfish/v1/Dell/Managers/iDRAC.Embedded.1";

/// The Manager (with its clock), its resets and resets to defaults, its time, the Lifecycle
/// Controller's status, and Dell's job and Lifecycle Controller service documents at their
/// legacy path.
pub(crate) fn routes() -> Vec<Route> {
    let mut routes = vec![
        Route::post(
            exact(format!("{IDRAC_CARD_SERVICE}/Actions/DelliDRACCardService.iDRACReset")),
            |h, r| r.with_json(|b| h.idrac_card_reset(b)),
        ),
        Route::post(
            exact(format!(
                "{IDRAC_CARD_SERVICE}/Actions/DelliDRACCardService.iDRACResetCfg"
            )),
            |h, r| r.with_json(|b| h.reset_to_defaults("DelliDRACCardService.iDRACResetCfg", b)),
        ),
        Route::post(
            exact(format!("{}/Actions/Manager.ResetToDefaults", dell::MANAGER)),
            |h, r| r.with_json(|b| h.reset_to_defaults("Manager.ResetToDefaults", b)),
        ),
        Route::post(
            exact(format!("{TIME_SERVICE}/Actions/DellTimeService.ManageTime")),
            |h, r| r.with_json(|b| h.manage_time(b)),
        ),
        Route::get(exact(dell::MANAGER), with_clock),
        Route::post(exact(format!("{}/Actions/Manager.Reset", dell::MANAGER)), |h, r| {
            r.with_json(|b| h.manager_reset(b))
        }),
    ];
    for path in dell_service_action("DellLCService", "GetRemoteServicesAPIStatus") {
        routes.push(Route::post(exact(path), |h, _| Reply::ok(h.lc_status())));
    }
    for service in ["DellJobService", "DellLCService"] {
        routes.push(Route::get(exact(format!("{LEGACY_DELL}/{service}")), |h, r| {
            let at = format!("{DELL_SERVICES}/{}", r.id());
            match h
                .fixture
                .served(r.path, false, || h.fixture.doc(&at).map(legacy_service))
            {
                Some(d) => Reply::ok_rendered(d),
                None => crate::route::not_found(r.path),
            }
        }));
    }
    routes
}

/// `action` of Dell's `service` at both of its paths: under the Manager and the legacy one.
pub(crate) fn dell_service_action(service: &str, action: &str) -> [String; 2] {
    [DELL_SERVICES, LEGACY_DELL].map(|at| format!("{at}/{service}/Actions/{service}.{action}"))
}

/// Dell's service document at its legacy `/redfish/v1/Dell/Managers/...` path: the same
/// document with its own path and action targets.
fn legacy_service(doc: &Value) -> Value {
    let text = doc
        .to_string()
        .replace(&format!("{DELL_SERVICES}/"), &format!("{LEGACY_DELL}/"));
    serde_json::from_str(&text).unwrap_or_else(|_| doc.clone())
}

/// A recorded document that carries the iDRAC's clock, with `DateTime` now.
pub(crate) fn with_clock(host: &Host, request: &crate::route::Request<'_>) -> Reply {
    match request.recorded(host) {
        Some(d) => Reply::ok(host.with_clock(d)),
        None => crate::route::not_found(request.path),
    }
}

/// What a restarting iDRAC or Lifecycle Controller answers on the paths it cannot serve (the
/// Systems tree, the iDRAC attributes): 400 SWC0700, and the Systems collection empty while the
/// Lifecycle Controller restarts. `None` while it is ready.
pub(crate) fn configuration_gate(host: &Host, request: &Request<'_>) -> Option<Reply> {
    let path = request.path;
    let configuration =
        path.starts_with("/redfish/v1/Systems") || path.contains("/DellAttributes/") || group_at(path).is_some();
    if !configuration {
        return None;
    }
    match host.availability() {
        Availability::LcRestarting if *request.method == axum::http::Method::GET && path == "/redfish/v1/Systems" => {
            let mut empty = request
                .recorded(host)
                .cloned()
                .unwrap_or_else(|| json!({"@odata.id": path}));
            empty["Members"] = json!([]);
            empty["Members@odata.count"] = json!(0);
            Some(Reply::ok(empty))
        }
        Availability::LcRestarting | Availability::IdracStarting => Some(Reply::error(400, vec![messages::swc0700()])),
        Availability::Ready | Availability::Unreachable => None,
    }
}

impl Host {
    /// A document that carries the iDRAC's clock (`Manager`, `JobService`): `DateTime` is now.
    pub fn with_clock(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        if doc.get("DateTime").is_some() {
            set(&mut doc, &["DateTime"], json!(clock::with_offset(SystemTime::now())));
        }
        doc
    }

    /// `Manager.Reset {"ResetType": "GracefulRestart"}`: the iDRAC reboots. Sessions end; for
    /// half a POST's length no connection is accepted, then for a POST's length the
    /// configuration paths answer 400 SWC0700 and the Lifecycle Controller reports NotReady.
    /// The host keeps running.
    pub fn manager_reset(&self, body: &Value) -> Reply {
        if let Err(reply) = super::power::reset_type(body, "Manager.Reset", &["GracefulRestart"]) {
            return reply;
        }
        let mut s = self.change();
        s.sessions.open.clear();
        s.outage = Some(Outage::idrac_reset(Instant::now(), self.config.boot_time));
        Reply::with_body(204, None)
    }

    /// `DelliDRACCardService.iDRACReset {"Force": "Graceful"|"Force"}` (what Ironic's
    /// sushy-oem-idrac sends): the iDRAC restarts as after `Manager.Reset`.
    pub fn idrac_card_reset(&self, body: &Value) -> Reply {
        let force = body.get("Force").and_then(Value::as_str);
        if !matches!(force, Some("Graceful" | "Force")) {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "DelliDRACCardService.iDRACReset",
                    "Force",
                    force,
                    &["Force", "Graceful"],
                )],
            );
        }
        let mut s = self.change();
        s.sessions.open.clear();
        s.outage = Some(Outage::idrac_reset(Instant::now(), self.config.boot_time));
        Reply::ok(messages::success_body(vec![messages::success()]))
    }

    /// `Manager.ResetToDefaults {"ResetType": "ResetAll"|"PreserveNetworkAndUsers"}` and
    /// `DelliDRACCardService.iDRACResetCfg {"Force", "Preserve": "All"|"Default"|
    /// "ResetAllWithRootDefaults"}`: the iDRAC attributes return to the tree's values (keeping
    /// the network and user attributes and the accounts when asked to preserve them), then
    /// the iDRAC restarts. Assumed: that `Default` preserves network and users, and that a
    /// full reset leaves root with the configured password.
    pub fn reset_to_defaults(&self, action: &str, body: &Value) -> Reply {
        let (param, allowed): (&str, &[&str]) = if action == "Manager.ResetToDefaults" {
            ("ResetType", &["ResetAll", "PreserveNetworkAndUsers"])
        } else {
            ("Preserve", &["All", "Default", "ResetAllWithRootDefaults"])
        };
        let given = body.get(param).and_then(Value::as_str);
        let Some(kind) = given.filter(|g| allowed.contains(g)) else {
            return Reply::error(400, vec![messages::action_parameter(action, param, given, allowed)]);
        };
        let preserve = matches!(kind, "PreserveNetworkAndUsers" | "Default");
        let mut s = self.change();
        for (group, recorded) in &self.fixture.dell_attributes {
            let live = s.dell_attributes.groups.entry(*group).or_default();
            for (name, value) in recorded {
                let kept = preserve && ["IPv4.", "NIC.", "Users."].iter().any(|p| name.starts_with(p));
                if !kept {
                    live.insert(name.clone(), value.clone());
                }
            }
        }
        if !preserve {
            s.accounts = Accounts::new(&self.fixture, &self.config);
        }
        s.bios.view = None;
        s.sessions.open.clear();
        s.outage = Some(Outage::idrac_reset(Instant::now(), self.config.boot_time));
        Reply::ok(messages::success_body(vec![messages::success()]))
    }

    /// `DellTimeService.ManageTime {"GetRequest": true}`: the iDRAC's time (`TimeData`, ISO
    /// 8601). Setting the time is refused: the emulator's clock is the machine's.
    pub fn manage_time(&self, body: &Value) -> Reply {
        match body.get("GetRequest").and_then(Value::as_bool) {
            Some(true) => Reply::ok(serde_json::json!({
                "TimeData": crate::clock::with_offset(std::time::SystemTime::now()),
            })),
            other => Reply::error(
                400,
                vec![messages::action_parameter(
                    "DellTimeService.ManageTime",
                    "GetRequest",
                    other.map(|_| "false"),
                    &["true"],
                )],
            ),
        }
    }

    /// What a request to the Systems tree or the iDRAC attributes meets right now.
    pub fn availability(&self) -> Availability {
        let mut s = self.lock();
        self.fire_due(&mut s, Instant::now());
        Outage::availability(s.outage, Instant::now())
    }

    /// Whether the iDRAC accepts connections (it does not while it reboots).
    pub fn reachable(&self) -> bool {
        self.availability() != Availability::Unreachable
    }

    /// `DellLCService.GetRemoteServicesAPIStatus`: how Dell's guidance says to tell POST
    /// (`ServerStatus` InPOST, `Status` NotReady) and a restarting Lifecycle Controller
    /// (`LCStatus` NotReady) apart from a ready host.
    pub fn lc_status(&self) -> Value {
        let s = self.now();
        let lc_ready = s.outage.is_none();
        let (server, host_ready) = match (s.power.on, s.power.post.is_some()) {
            (false, _) => ("PoweredOff", true),
            (true, true) => ("InPOST", false),
            (true, false) => ("OutOfPOST", true),
        };
        let word = |ready: bool| if ready { "Ready" } else { "NotReady" };
        json!({
            "LCStatus": word(lc_ready && host_ready),
            "Status": word(lc_ready && host_ready),
            "ServerStatus": server,
            "RTStatus": "Ready",
            "TelemetryStatus": word(lc_ready),
            "@Message.ExtendedInfo": [idrac(
                "LC061",
                if lc_ready && host_ready { "Lifecycle Controller Remote Services is ready." } else { "Lifecycle Controller Remote Services is not ready." },
                &[],
                "No response action is required.",
                None,
            )],
        })
    }
}
