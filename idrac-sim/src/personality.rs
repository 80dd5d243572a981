//! A model's personality: how its BMC answers HTTP beyond what every host shares — the routes
//! it serves (each concern's, in order), what it answers while its services restart, which
//! paths it opens without credentials, the methods each path allows, which credentials it
//! takes and which conditions it honours.
//!
//! A host's personality comes from its tree ([`Personality::of`]): an iDRAC9
//! ([`Personality::idrac9`]), an iDRAC10 ([`Personality::idrac10`]), which is built from the
//! same concerns with some of their routes swapped for iDRAC10's own, or HPE's iLO
//! ([`Personality::ilo`]): its own routes (found where its tree's links point, paths matched
//! without regard to case through [`Fixture::canonical`]), the service's shared ones, and iLO's
//! error envelope. The server only asks the personality.

use crate::fixture::Fixture;
use crate::generation::Bmc;
use crate::host::{self, Host, Reply};
use crate::route::{Request, Route, Routes};
use axum::http::Method;
use redfish_client::oem::dell;

/// How one model's BMC answers.
#[derive(Debug, Clone)]
pub struct Personality {
    routes: Routes,
    gate: fn(&Host, &Request<'_>) -> Option<Reply>,
    open: fn(&Method, &str) -> bool,
    allow: fn(&Host, &str) -> Option<&'static str>,
    basic: fn(&Host) -> Option<Reply>,
    /// An action POST that carries `If-Match` is refused (412).
    if_match_on_actions: bool,
    /// An error answer in this BMC's shape.
    shape: fn(Reply) -> Reply,
    /// `Location` answers are absolute URLs.
    absolute_location: bool,
}

impl Personality {
    /// The personality of the iDRAC `fixture` records (its Manager's `Model`, else its
    /// firmware: [`crate::generation`]).
    pub fn of(fixture: &Fixture) -> Self {
        match fixture.bmc {
            Bmc::Idrac9 => Self::idrac9(),
            Bmc::Idrac10 => Self::idrac10(),
            Bmc::Ilo => Self::ilo(),
        }
    }

    /// An iDRAC9 (firmware 6.x and 7.x), as the built-in trees and the real R750 captures the
    /// emulator follows show it.
    pub fn idrac9() -> Self {
        Self {
            routes: Routes::of(concerns([
                host::jobs::routes(),
                host::scp::routes(),
                host::dell_attributes::routes(),
            ])),
            gate: host::manager::configuration_gate,
            open: idrac9_open,
            allow: idrac9_allow,
            basic: |_| None,
            if_match_on_actions: false,
            shape: |reply| reply,
            absolute_location: false,
        }
    }

    /// An iDRAC10 (17G, firmware 1.x), as the public reports about it show it (each route names
    /// its source): `Boot` read-only on the system and written through its settings object,
    /// BIOS writes merging into the scheduled job (except after a SecureBoot PATCH), jobs at
    /// `Oem/Dell/Jobs` and `JobService/Jobs` only, SCP targets as lists, accounts created by
    /// POST and deleted by DELETE, no `Managers/<id>/Attributes`, HTTP Basic refused while
    /// `Redfish.1.BasicAuthState` is not Enabled (401 `Base.1.18.AccessDenied`, dell/iDRAC-
    /// Redfish-Scripting issue 371; firmware 1.30.10.50 makes it Unadvertised), and `If-Match`
    /// on an action POST refused with 412 whatever the tag (gofish issue 510 on an R470,
    /// ironcore-dev/metal-operator 1020 on an R770 and an R6715; the 412 body assumed).
    pub fn idrac10() -> Self {
        // iDRAC10's own routes go first: the first route that takes a request answers it.
        let own = [
            host::sessions::idrac10_routes(),
            host::system::idrac10_routes(),
            host::bios::idrac10_routes(),
            host::secure_boot::idrac10_routes(),
            host::accounts::idrac10_routes(),
        ];
        let shared = concerns([
            host::jobs::idrac10_routes(),
            host::scp::idrac10_routes(),
            host::dell_attributes::idrac10_routes(),
        ]);
        Self {
            routes: Routes::of(own.into_iter().chain(shared)),
            gate: host::manager::configuration_gate,
            open: idrac9_open,
            allow: idrac10_allow,
            basic: |h| {
                (!h.basic_auth_enabled())
                    .then(|| Reply::with_body(401, Some(crate::messages::idrac10::access_denied())))
            },
            if_match_on_actions: true,
            shape: |reply| reply,
            absolute_location: false,
        }
    }

    /// HPE's iLO 5 as the recorded DL385 Gen10 Plus v2 (NVIDIA libredfish tests/mockups/hpe)
    /// and HPE's redfishdocs show it: the system, BIOS and actions where the tree's links and
    /// advertised targets point, any spelling of a path; sessions with iLO's ids and an absolute
    /// `Location` (HPE's authentication guide); a full-copy BIOS settings object that takes any
    /// value and is processed at the next POST, with no job queue; the registry file
    /// gzip-encoded, and the message registries its ids name listed and served too; Basic
    /// accepted; errors in iLO's envelope (ids and arguments only), and 405 without a body, as
    /// the recording shows one.
    pub fn ilo() -> Self {
        let own = [
            host::sessions::ilo_routes(),
            host::system::ilo_routes(),
            host::power::ilo_routes(),
            host::manager::ilo_routes(),
            host::bios::ilo::routes(),
            host::boot::ilo::routes(),
            host::service::ilo_registry_store_routes(),
        ];
        Self {
            routes: Routes::of(
                own.into_iter()
                    .chain([host::service::routes(), host::service::recorded_routes()]),
            ),
            gate: |_, _| None,
            open: |method, path| {
                matches!(
                    path,
                    "/redfish" | "/redfish/v1" | "/redfish/v1/odata" | "/redfish/v1/$metadata"
                ) || (method == Method::POST && path == host::sessions::ILO_SESSIONS)
            },
            allow: ilo_allow,
            basic: |_| None,
            if_match_on_actions: false,
            shape: ilo_error,
            absolute_location: true,
        }
    }

    /// The answer of the first route that takes `request`; `None` when no route does. While
    /// the BMC's services restart, the paths that need them answer as it does then.
    pub fn answer(&self, host: &Host, request: &Request<'_>) -> Option<Reply> {
        if let Some(refused) = (self.gate)(host, request) {
            return Some(refused);
        }
        self.routes.answer(host, request)
    }

    /// The answer to HTTP Basic credentials when this BMC does not take them now; `None` when it
    /// does (and then advertises Basic in `WWW-Authenticate`).
    pub fn refuses_basic(&self, host: &Host) -> Option<Reply> {
        (self.basic)(host)
    }

    /// An answer as this BMC words it: errors in its envelope.
    pub fn shape(&self, reply: Reply) -> Reply {
        (self.shape)(reply)
    }

    /// Whether `Location` answers are absolute URLs.
    pub fn absolute_location(&self) -> bool {
        self.absolute_location
    }

    /// Whether an action POST carrying `If-Match` is refused with 412.
    pub fn refuses_if_match_on_actions(&self) -> bool {
        self.if_match_on_actions
    }

    /// Whether `method` on `path` is answered without credentials.
    pub fn is_open(&self, method: &Method, path: &str) -> bool {
        (self.open)(method, path)
    }

    /// The methods `path` answers, as `Allow` lists them; `None` for a path that names nothing.
    pub fn allow(&self, host: &Host, path: &str) -> Option<&'static str> {
        (self.allow)(host, path)
    }
}

/// Every concern's routes in the order an iDRAC tries them, with the job queue's, the SCP
/// actions' and the iDRAC attributes' of `generation` (the concerns whose paths differ between
/// iDRAC9 and iDRAC10).
fn concerns(generation: [Vec<Route>; 3]) -> Vec<Vec<Route>> {
    let [jobs, scp, attributes] = generation;
    vec![
        host::service::routes(),
        host::sessions::routes(),
        host::system::routes(),
        host::power::routes(),
        host::manager::routes(),
        host::bios::routes(),
        host::boot::routes(),
        host::secure_boot::routes(),
        jobs,
        scp,
        attributes,
        host::accounts::routes(),
        host::logs::routes(),
        host::events::routes(),
        host::network::routes(),
        host::certificates::routes(),
        host::chassis::routes(),
        host::readings::routes(),
        // Last: whatever else the tree records.
        host::service::recorded_routes(),
    ]
}

/// The service root and the login itself, as on iDRAC, and the OData documents (DSP0266).
fn idrac9_open(method: &Method, path: &str) -> bool {
    matches!(
        path,
        "/redfish" | "/redfish/v1" | "/redfish/v1/odata" | "/redfish/v1/$metadata"
    ) || (method == Method::POST && (path == host::sessions::SESSIONS || path == host::sessions::SESSIONS_MEMBERS))
}

/// The methods an iDRAC9 path allows: actions take POST, the resources the emulator writes
/// PATCH, collections it creates in POST, members it deletes DELETE; accounts are written by
/// PATCH and never deleted (so DMTF's tools clear a slot instead).
fn idrac9_allow(host: &Host, path: &str) -> Option<&'static str> {
    const READ: &str = "GET, HEAD";
    const READ_WRITE: &str = "GET, HEAD, PATCH";
    const READ_CREATE: &str = "GET, HEAD, POST";
    const READ_DELETE: &str = "GET, HEAD, DELETE";
    if path.contains("/Actions/") {
        return Some("POST");
    }
    let member_of = |collection: &str| {
        path.strip_prefix(collection)
            .and_then(|r| r.strip_prefix('/'))
            .is_some_and(|id| !id.is_empty() && !id.contains('/'))
    };
    let write = [
        dell::SYSTEM,
        dell::CHASSIS,
        dell::BIOS_SETTINGS,
        crate::synth::NETWORK_PROTOCOL,
        host::network::MANAGER_NIC,
    ];
    if write.contains(&path) || path.contains("/DellAttributes/") || host::dell_attributes::group_at(path).is_some() {
        return Some(READ_WRITE);
    }
    if path == host::sessions::SESSIONS
        || path == dell::JOBS
        || path == dell::OEM_JOBS
        || path == crate::synth::SUBSCRIPTIONS
    {
        return Some(READ_CREATE);
    }
    if member_of(host::accounts::ACCOUNTS) || member_of(host::accounts::LEGACY_ACCOUNTS) {
        return host.account(path).map(|_| READ_WRITE);
    }
    if member_of(crate::synth::SUBSCRIPTIONS) {
        return host.subscription(path).map(|_| READ_DELETE);
    }
    if member_of(host::scp::TASKS) {
        return host.scp_task_exists(path).then_some(READ);
    }
    if member_of(host::logs::LCLOG_ENTRIES) {
        return host.log_entry(path).map(|_| READ);
    }
    if member_of(host::sessions::SESSIONS)
        || member_of(dell::JOBS)
        || member_of(dell::OEM_JOBS)
        || member_of(host::jobs::DMTF_JOBS)
    {
        return Some(READ_DELETE);
    }
    (host.fixture.doc(path).is_some() || DYNAMIC.contains(&path)).then_some(READ)
}

/// The methods an iDRAC10 path allows: iDRAC9's, without the paths it dropped (the non-OEM job
/// queue, the Manager's `Attributes`, the `EID_674_Manager` SCP targets), with the
/// system's settings object written by PATCH, its SecureBoot by PATCH, and accounts created by
/// POST and deleted by DELETE.
fn idrac10_allow(host: &Host, path: &str) -> Option<&'static str> {
    let gone = path == dell::JOBS
        || path.starts_with(&format!("{}/", dell::JOBS))
        || path.contains("/Actions/Oem/EID_674_Manager.")
        || (host::dell_attributes::group_at(path).is_some() && !path.contains("/DellAttributes/"));
    if gone {
        return None;
    }
    match path {
        host::system::SYSTEM_SETTINGS if host.fixture.doc(path).is_some() => Some("GET, HEAD, PATCH"),
        dell::SECURE_BOOT if host.fixture.doc(path).is_some() => Some("GET, HEAD, PATCH"),
        host::accounts::ACCOUNTS => Some("GET, HEAD, POST"),
        _ if path.starts_with(&format!("{}/", host::accounts::ACCOUNTS)) && host.account(path).is_some() => {
            Some("GET, HEAD, PATCH, DELETE")
        }
        _ => idrac9_allow(host, path),
    }
}

/// An error answer in iLO's envelope: the messages' ids and arguments, a Base id at iLO's
/// Base version; 405 without a body.
fn ilo_error(reply: Reply) -> Reply {
    if reply.status < 400 {
        return reply;
    }
    if reply.status == 405 {
        return Reply { body: None, ..reply };
    }
    let ilo_shaped = reply
        .body
        .as_ref()
        .is_some_and(|b| b.pointer("/error/code").and_then(serde_json::Value::as_str) == Some("iLO.0.10.ExtendedInfo"));
    let Some(entries) = reply
        .body
        .as_ref()
        .and_then(|b| b.pointer("/error/@Message.ExtendedInfo"))
        .and_then(serde_json::Value::as_array)
        .filter(|_| !ilo_shaped)
    else {
        return reply;
    };
    let body = crate::messages::ilo::body(crate::messages::ilo::reshape(entries));
    Reply {
        body: Some(body),
        ..reply
    }
}

/// The methods an iLO path allows: the settings object is written, the sessions collection
/// takes a login, a session is deleted, an action takes POST, the system is written (its
/// `Boot`), everything else the tree records is read.
fn ilo_allow(host: &Host, path: &str) -> Option<&'static str> {
    let places = &host.fixture.places;
    let advertised = [&places.system, &places.bios].into_iter().any(|doc| {
        host.fixture
            .doc(doc)
            .and_then(|d| d["Actions"].as_object())
            .is_some_and(|actions| {
                actions
                    .values()
                    .filter_map(|a| a["target"].as_str())
                    .any(|t| host.fixture.canonical(t) == path)
            })
    });
    if advertised {
        return Some("POST");
    }
    if *path == places.settings {
        return Some("GET, HEAD, POST, PATCH");
    }
    if *path == places.system {
        return Some("GET, HEAD, PATCH");
    }
    if path == host::sessions::ILO_SESSIONS {
        return Some("GET, HEAD, POST");
    }
    if path.starts_with(&format!("{}/", host::sessions::ILO_SESSIONS)) {
        return Some("GET, HEAD, DELETE");
    }
    (host.fixture.doc(path).is_some() || path == "/redfish").then_some("GET, HEAD")
}

/// Read-only paths an iDRAC9 serves from its state or generates, not from a tree's documents.
const DYNAMIC: [&str; 15] = [
    "/redfish",
    host::accounts::ACCOUNTS,
    host::accounts::LEGACY_ACCOUNTS,
    host::logs::LCLOG_ENTRIES,
    host::logs::LEGACY_LCLOG,
    host::logs::SEL_ENTRIES,
    host::logs::FAULT_ENTRIES,
    host::network::MANAGER_NIC,
    crate::synth::MANAGER_NICS,
    crate::synth::NETWORK_PROTOCOL,
    "/redfish/v1/odata",
    "/redfish/v1/$metadata",
    host::jobs::DMTF_JOBS,
    "/redfish/v1/Dell/Managers/iDRAC.Embedded.1/DellJobService",
    "/redfish/v1/Dell/Managers/iDRAC.Embedded.1/DellLCService",
];
