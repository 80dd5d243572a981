//! A model's personality: how its BMC answers HTTP beyond what every host shares — the routes
//! it serves (each concern's, in order), what it answers while its services restart, which
//! paths it opens without credentials, and the methods each path allows.
//!
//! Every tree the emulator serves today is an iDRAC9 ([`Personality::idrac9`]). Another BMC is
//! another personality built from the same concerns: iDRAC10 swaps the job and boot concerns'
//! routes for its own paths (and `Boot` written through the system's settings object), HPE's
//! iLO brings its own route set of lower-case paths with trailing slashes (matched without
//! regard to case, which [`Routes`] would learn) and its BIOS concern's full-copy settings
//! object without jobs. The server only asks the personality.

use crate::host::{self, Host, Reply};
use crate::route::{Request, Routes};
use axum::http::Method;
use redfish_client::oem::dell;

/// How one model's BMC answers.
#[derive(Debug, Clone)]
pub struct Personality {
    routes: Routes,
    gate: fn(&Host, &Request<'_>) -> Option<Reply>,
    open: fn(&Method, &str) -> bool,
    allow: fn(&Host, &str) -> Option<&'static str>,
}

impl Personality {
    /// An iDRAC9 (firmware 6.x and 7.x), as the built-in trees and the real R750 captures the
    /// emulator follows show it.
    pub fn idrac9() -> Self {
        Self {
            routes: Routes::of([
                host::service::routes(),
                host::sessions::routes(),
                host::system::routes(),
                host::power::routes(),
                host::manager::routes(),
                host::bios::routes(),
                host::boot::routes(),
                host::secure_boot::routes(),
                host::jobs::routes(),
                host::scp::routes(),
                host::dell_attributes::routes(),
                host::accounts::routes(),
                host::logs::routes(),
                host::events::routes(),
                host::network::routes(),
                host::certificates::routes(),
                host::chassis::routes(),
                host::readings::routes(),
                // Last: whatever else the tree records.
                host::service::recorded_routes(),
            ]),
            gate: host::manager::configuration_gate,
            open: idrac9_open,
            allow: idrac9_allow,
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

    /// Whether `method` on `path` is answered without credentials.
    pub fn is_open(&self, method: &Method, path: &str) -> bool {
        (self.open)(method, path)
    }

    /// The methods `path` answers, as `Allow` lists them; `None` for a path that names nothing.
    pub fn allow(&self, host: &Host, path: &str) -> Option<&'static str> {
        (self.allow)(host, path)
    }
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
