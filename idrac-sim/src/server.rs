//! HTTP for one emulated iDRAC: authentication, faults, latency, request counting, and the
//! routing of iDRAC paths to [`Host`] operations. Unlisted GETs serve the fixture documents.

use crate::config::FaultKind;
use crate::host::{Availability, Caller, Host, Rendered, Reply};
use crate::messages;
use crate::protocol;
use crate::query::Query;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use redfish_client::oem::dell::{self, AttributeGroup};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const SESSIONS: &str = crate::host::SESSIONS;
const SESSIONS_MEMBERS: &str = "/redfish/v1/SessionService/Sessions/Members";
/// The DMTF view of the job queue.
const DMTF_JOBS: &str = crate::host::DMTF_JOBS;
const JOB_SERVICE: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellJobService";
const LC_SERVICE: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellLCService";
/// Where iDRAC9 firmware first put Dell's services; badfish and Dell's `ResetIdracREDFISH.py`
/// still use it, and a real iDRAC 3.x sample shows it.
const LEGACY_DELL: &str = "/redfish/v1/Dell/Managers/iDRAC.Embedded.1";
const BIOS_SERVICE: &str = "/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellBIOSService";

/// The `tracing` target of the request log that [`SimConfig::log_requests`] turns on: one
/// event per request with the fields `host` (service tag), `method`, `uri` and `status`. The
/// emulator is a library and prints nothing itself; the application's subscriber shows them
/// at level `info` (`rftune` enables this target whatever its verbosity).
///
/// [`SimConfig::log_requests`]: crate::SimConfig::log_requests
pub const REQUEST_LOG: &str = "rftune_sim::requests";

/// The router of one host.
pub fn router(host: Arc<Host>) -> axum::Router {
    axum::Router::new()
        .fallback(handle)
        .layer(axum::middleware::map_response(redfish_errors))
        .with_state(host)
}

/// Errors raised before a request reaches the emulator (a body over the size limit, a chunked
/// body that breaks off) come from the HTTP layer as plain text: answer them in Redfish JSON
/// with a MessageId, as every other error.
async fn redfish_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (text, resolution) = match status.as_u16() {
        413 => (
            "The request body is larger than this service accepts.",
            "Send a smaller request body.",
        ),
        400 => (
            "The request body could not be read: it was cut off or its chunked encoding is invalid.",
            "Resend the request with a complete body.",
        ),
        _ => (
            status.canonical_reason().unwrap_or("The request failed."),
            "Retry the request.",
        ),
    };
    let body = messages::error_body(vec![messages::base("GeneralError", text, &[], resolution, None)]);
    let mut out = (status, axum::Json(body)).into_response();
    out.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json;odata.metadata=minimal;charset=utf-8"),
    );
    out
}

async fn handle(
    axum::extract::State(host): axum::extract::State<Arc<Host>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    body: Bytes,
) -> Response {
    // The client's address, for the Lifecycle log and sessions (loopback when the router is
    // served without connection info).
    let address = extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or_else(|| "127.0.0.1".to_owned(), |c| c.0.ip().to_string());
    // Repeated slashes name the same resource: Dell's file-import script polls
    // `TaskService/Tasks//JID_...`, which a real iDRAC answers.
    let mut path = String::with_capacity(uri.path().len());
    for c in uri.path().chars() {
        if !(c == '/' && path.ends_with('/')) {
            path.push(c);
        }
    }
    let path = path.trim_end_matches('/').to_owned();
    let path = if path.is_empty() { "/".to_owned() } else { path };
    if let Some(sim) = path.strip_prefix("/_sim") {
        return json_response(sim_endpoint(&host, &method, sim, &body), &Served::default());
    }
    // A rebooting iDRAC answers nothing, not even on a connection opened before the reset.
    if !host.reachable() {
        return reset_midway();
    }
    host.stats.record(method.as_str(), &path);
    if let Some(lat) = host.config.latency {
        let span = lat.max.saturating_sub(lat.min);
        let wait = lat.min + span.mul_f64(host.draw());
        tokio::time::sleep(wait).await;
    }
    let token = headers.get("X-Auth-Token").and_then(|v| v.to_str().ok());
    let mut fault = None;
    for &(kind, rate) in &host.faults.request {
        if host.draw() < rate && (kind != FaultKind::SessionExpiry || token.is_some()) {
            fault = Some(kind);
            break;
        }
    }
    // Every URL answers HEAD as it answers GET, without the body (Dell's API guide: "All URLs
    // support the HEAD method").
    let head = method == Method::HEAD;
    let effective = if head { Method::GET } else { method.clone() };
    let query = uri.query().unwrap_or_default();
    let mut served = Served {
        head,
        path: path.clone(),
        ..Served::default()
    };
    let reply = match fault {
        Some(FaultKind::Unavailable) => Reply::error(
            503,
            vec![messages::base(
                "ServiceTemporarilyUnavailable",
                "The service is temporarily unavailable.",
                &["1"],
                "Retry in 1 seconds.",
                None,
            )],
        )
        .header("Retry-After", "1"),
        Some(FaultKind::Timeout) => {
            tokio::time::sleep(Duration::from_secs(600)).await;
            Reply::error(504, Vec::new())
        }
        Some(FaultKind::SessionExpiry) => {
            if let Some(t) = token {
                host.expire_token(t);
            }
            Reply::error(401, vec![messages::no_valid_session()])
        }
        _ => answer(&host, &effective, &path, query, &headers, &body, &address, &mut served),
    };
    if host.config.log_requests {
        tracing::info!(target: REQUEST_LOG, host = %host.service_tag, %method, %uri, status = reply.status);
    }
    served.allow = protocol::allowed(&host, &path);
    served.synthesised = host.synthesised(&path);
    match fault {
        Some(FaultKind::Malformed) => truncated(reply),
        Some(FaultKind::Reset) => reset_midway(),
        _ => json_response(reply, &served),
    }
}

/// What the response headers need to know beyond the reply: the request, the methods the path
/// answers, and the tag of the resource before query options shaped the body.
#[derive(Debug, Default)]
struct Served {
    head: bool,
    path: String,
    allow: Option<&'static str>,
    etag: Option<HeaderValue>,
    /// What the emulator synthesised here ([`crate::synth::SYNTHESISED_HEADER`]).
    synthesised: Option<String>,
}

/// Authentication, then the headers and query options that shape the answer, then the route.
#[allow(clippy::too_many_arguments)] // the parts of one request
fn answer(
    host: &Host,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &[u8],
    address: &str,
    served: &mut Served,
) -> Reply {
    // DSP0266: authentication is processed before any other header that affects the answer.
    let caller = match authenticate(host, method, path, headers, address) {
        Ok(c) => c,
        Err(denied) => {
            host.audit(
                &Caller {
                    user: basic_user(headers).unwrap_or_default(),
                    address: address.to_owned(),
                },
                method.as_str(),
                path,
                body,
                &denied,
            );
            return denied;
        }
    };
    if let Some(forbidden) = host.authorize(&caller, method.as_str(), path, body) {
        return forbidden;
    }
    if let Some(refused) = protocol::odata_version(headers) {
        return refused;
    }
    let get = *method == Method::GET;
    // Query options shape reads; other methods ignore them.
    let options = if get {
        match Query::parse(query) {
            Ok(q) => q,
            Err(e) => return Reply::error(e.status(), vec![e.message()]),
        }
    } else {
        Query::default()
    };
    if let Some(failed) = precondition(host, method, path, headers) {
        return failed;
    }
    let expand_members = options
        .expand
        .is_some_and(|e| e.scope != crate::query::ExpandScope::Links);
    let reply = route(host, method, path, expand_members, body, &caller);
    if !get {
        host.audit(&caller, method.as_str(), path, body, &reply);
        return reply;
    }
    if reply.status != 200 || reply.text.is_some() {
        return reply;
    }
    let reply = reply.render();
    served.etag = etag(&reply);
    // If-None-Match naming the current tag: 304 without the body (optional in DSP0266; Dell's
    // API guide lists it for accounts and metadata, here it holds everywhere).
    if let (Some(tag), Some(wanted)) = (&served.etag, headers.get("If-None-Match").and_then(|v| v.to_str().ok())) {
        let tag = tag.to_str().unwrap_or_default().trim_start_matches("W/");
        if wanted
            .split(',')
            .any(|w| w.trim() == "*" || w.trim().trim_start_matches("W/") == tag)
        {
            return Reply::with_body(304, None);
        }
    }
    let page = protocol::page_size(path);
    if options.is_empty() && page.is_none() {
        return reply;
    }
    let Some(doc) = reply.json() else { return reply };
    let read = |p: &str| route(host, &Method::GET, p, false, &[], &caller).json();
    match crate::query::apply(doc, path, &options, page, &read) {
        Ok(shaped) => Reply::ok(shaped),
        Err(e) => Reply::error(e.status(), vec![e.message()]),
    }
}

/// Paths open without credentials: the service root and the login itself, as on iDRAC, and
/// the OData documents (DSP0266). The caller is the account the credentials name, or nobody.
fn authenticate(host: &Host, method: &Method, path: &str, headers: &HeaderMap, address: &str) -> Result<Caller, Reply> {
    let open = matches!(
        path,
        "/redfish" | "/redfish/v1" | "/redfish/v1/odata" | "/redfish/v1/$metadata"
    ) || (method == Method::POST && (path == SESSIONS || path == SESSIONS_MEMBERS));
    let caller = |user: String| Caller {
        user,
        address: address.to_owned(),
    };
    if let Some(token) = headers.get("X-Auth-Token").and_then(|v| v.to_str().ok()) {
        return match host.check_token(token) {
            Some(user) => Ok(caller(user)),
            None if open => Ok(caller(String::new())),
            None => Err(Reply::error(401, vec![messages::no_valid_session()])),
        };
    }
    let basic = basic_credentials(headers);
    match basic.as_ref() {
        Some((user, pass)) if host.check_basic(user, pass) => Ok(caller(user.clone())),
        _ if open => Ok(caller(String::new())),
        Some(_) => Err(Reply::error(401, vec![messages::sys415()])),
        None => Err(Reply::error(401, vec![messages::no_valid_session()])),
    }
}

/// The user name and password of a Basic `Authorization` header.
fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let raw = headers
        .get("Authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b.trim()).ok())
        .and_then(|raw| String::from_utf8(raw).ok())?;
    let (user, pass) = raw.split_once(':')?;
    Some((user.to_owned(), pass.to_owned()))
}

fn basic_user(headers: &HeaderMap) -> Option<String> {
    basic_credentials(headers).map(|(u, _)| u)
}

/// `If-Match` on a write: the resource's current `ETag` (as a `GET` would give it) must match,
/// else 412, so a client's read-modify-write cannot overwrite a change it did not see.
fn precondition(host: &Host, method: &Method, path: &str, headers: &HeaderMap) -> Option<Reply> {
    if *method != Method::PATCH {
        return None;
    }
    let wanted = headers.get("If-Match").and_then(|v| v.to_str().ok())?;
    if wanted.trim() == "*" {
        return None;
    }
    let current = route(
        host,
        &Method::GET,
        path,
        false,
        &[],
        &Caller {
            user: String::new(),
            address: String::new(),
        },
    );
    let tag = etag(&current)?;
    let tag = tag.to_str().ok()?;
    let matches = wanted
        .split(',')
        .any(|w| w.trim().trim_start_matches("W/") == tag.trim_start_matches("W/"));
    (!matches).then(|| {
        Reply::error(
            412,
            vec![messages::base(
                "PreconditionFailed",
                "The ETag supplied did not match the ETag required to change this resource.",
                &[],
                "Try the operation again using the appropriate ETag.",
                None,
            )],
        )
    })
}

/// A path under the Systems tree, or one that reads or writes iDRAC attributes: what a
/// restarting iDRAC or Lifecycle Controller cannot serve.
fn needs_configuration_services(path: &str) -> bool {
    path.starts_with("/redfish/v1/Systems") || path.contains("/DellAttributes/") || legacy_attributes(path).is_some()
}

/// The legacy `Managers/<id>/Attributes` paths: iDRAC.Embedded.1 is on a real R750 (serving
/// the DellAttributes document); Dell says System.Embedded.1 and LifecycleController.Embedded.1
/// answered there too.
fn legacy_attributes(path: &str) -> Option<AttributeGroup> {
    let id = path
        .strip_prefix("/redfish/v1/Managers/")?
        .strip_suffix("/Attributes")?;
    AttributeGroup::ALL.into_iter().find(|g| g.resource_id() == id)
}

/// Dell's service document at its legacy `/redfish/v1/Dell/Managers/...` path: the same
/// document with its own path and action targets.
fn legacy_service(doc: &Value) -> Value {
    let text = doc.to_string().replace(
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/",
        &format!("{LEGACY_DELL}/"),
    );
    serde_json::from_str(&text).unwrap_or_else(|_| doc.clone())
}

#[allow(clippy::too_many_lines)] // one match over every routed path reads best whole
fn route(host: &Host, method: &Method, path: &str, expand: bool, body: &[u8], caller: &Caller) -> Reply {
    let doc = |p: &str| host.fixture.doc(p);
    let json_body = || serde_json::from_slice::<Value>(body).ok();
    let bad_json = || {
        Reply::error(
            400,
            vec![messages::base(
                "MalformedJSON",
                "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
                &[],
                "Ensure that the request body is valid JSON and resubmit the request.",
                None,
            )],
        )
    };
    macro_rules! with_body {
        ($f:expr) => {
            match json_body() {
                Some(b) => $f(&b),
                None => bad_json(),
            }
        };
    }
    let get = *method == Method::GET;
    let post = *method == Method::POST;
    let patch = *method == Method::PATCH;
    let delete = *method == Method::DELETE;
    if needs_configuration_services(path) {
        match host.availability() {
            Availability::LcRestarting if get && path == "/redfish/v1/Systems" => {
                let mut empty = doc(path).cloned().unwrap_or_else(|| json!({"@odata.id": path}));
                empty["Members"] = json!([]);
                empty["Members@odata.count"] = json!(0);
                return Reply::ok(empty);
            }
            Availability::LcRestarting | Availability::IdracStarting => {
                return Reply::error(400, vec![messages::swc0700()]);
            }
            Availability::Ready | Availability::Unreachable => {}
        }
    }
    let job = [dell::JOBS, dell::OEM_JOBS, DMTF_JOBS]
        .into_iter()
        .find_map(|collection| {
            let id = path.strip_prefix(collection)?.strip_prefix('/')?;
            (!id.is_empty() && !id.contains('/')).then_some((collection, id))
        });
    let job_id = job.map(|(_, id)| id);
    let job_collection = job.map_or(dell::JOBS, |(c, _)| c);
    let group = if path.contains("/DellAttributes/") {
        AttributeGroup::ALL.into_iter().find(|g| g.path() == path)
    } else {
        legacy_attributes(path)
    };
    let session_id = path
        .strip_prefix(SESSIONS)
        .and_then(|r| r.strip_prefix('/'))
        .filter(|id| !id.is_empty() && !id.contains('/'));
    // Dell's services at either of their paths.
    let service_action = |service: &str, action: &str| {
        path == format!(
            "{}/{service}/Actions/{service}.{action}",
            "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell"
        ) || path == format!("{LEGACY_DELL}/{service}/Actions/{service}.{action}")
    };
    match path {
        // The documents that show host state are kept rendered until that state changes
        // (`Host::cached`); the recorded ones that show none, once for the fleet (`served`).
        "/redfish" if get => Reply::ok(json!({"v1": "/redfish/v1/"})),
        "/redfish/v1/$metadata" if get => Reply::ok_text(host.fixture.metadata(), XML),
        "/redfish/v1/odata" if get && doc(path).is_none() => Reply::ok(crate::odata::service_document(
            &host.service_root(doc("/redfish/v1").unwrap_or(&Value::Null)),
        )),
        p if get && host.fixture.text(p).is_some() => match host.fixture.text(p) {
            Some(t) => Reply::ok_text(t.clone(), XML),
            None => not_found(p),
        },
        "/redfish/v1" if get => host.cached(path, || Reply::ok(host.service_root(doc(path).unwrap_or(&Value::Null)))),
        // DSP0266: a POST to a collection's `Members` is a POST to the collection.
        SESSIONS | SESSIONS_MEMBERS if post => with_body!(|b: &Value| host.login_with_context(
            b["UserName"].as_str().unwrap_or_default(),
            b["Password"].as_str().unwrap_or_default(),
            &caller.address,
            b["Context"].as_str(),
        )),
        SESSIONS if get => Reply::ok(host.sessions(expand)),
        _ if session_id.is_some() && get => host.session(session_id.unwrap_or_default()),
        _ if session_id.is_some() && delete => host.logout(session_id.unwrap_or_default()),
        dell::SYSTEM if get => host.cached(path, || Reply::ok(host.system(doc(path).unwrap_or(&Value::Null)))),
        dell::SYSTEM if patch => with_body!(|b: &Value| host.patch_system(b, doc(path).unwrap_or(&Value::Null))),
        p if post && p == format!("{}/Actions/ComputerSystem.Reset", dell::SYSTEM) => {
            with_body!(|b: &Value| host.reset(b))
        }
        dell::BIOS if get => host.cached(path, || Reply::ok(host.bios(doc(path).unwrap_or(&Value::Null)))),
        p if get && is_boot_sources(p) => match boot_sources_doc(host) {
            Some(d) => host.cached(path, || Reply::ok(host.boot_sources(p, d))),
            None => not_found(p),
        },
        p if (get || patch) && p.strip_suffix("/Settings").is_some_and(is_boot_sources) => {
            match boot_sources_doc(host) {
                None => not_found(p),
                Some(_) if get => host.cached(path, || Reply::ok(host.boot_sources_settings(p))),
                Some(_) => with_body!(|b: &Value| host.patch_boot_sources(b)),
            }
        }
        dell::BOOT_OPTIONS if get && doc(path).is_some() => {
            let key = format!("{path}?expand={expand}");
            host.cached(&key, || {
                Reply::ok(host.boot_options(doc(path).unwrap_or(&Value::Null), expand))
            })
        }
        p if get && p.starts_with(dell::BOOT_OPTIONS) && doc(p).is_some() => {
            host.cached(path, || Reply::ok(host.boot_option(doc(p).unwrap_or(&Value::Null))))
        }
        dell::SECURE_BOOT if get && doc(path).is_some() => {
            host.cached(path, || Reply::ok(host.secure_boot(doc(path).unwrap_or(&Value::Null))))
        }
        p if post
            && p == format!("{}/Actions/SecureBoot.ResetKeys", dell::SECURE_BOOT)
            && doc(dell::SECURE_BOOT).is_some() =>
        {
            with_body!(|b: &Value| host.reset_keys(b))
        }
        p if post && p == format!("{}/Actions/Bios.ResetBios", dell::BIOS) => host.reset_bios(),
        p if post && p == format!("{}/Actions/Bios.ChangePassword", dell::BIOS) => {
            with_body!(|b: &Value| host.change_password(b))
        }
        p if post && p == format!("{BIOS_SERVICE}/Actions/DellBIOSService.DeviceRecovery") => {
            with_body!(|b: &Value| host.bios_device_recovery(b))
        }
        dell::BIOS_SETTINGS if get => host.cached(path, || {
            Reply::ok(host.bios_settings(doc(path).unwrap_or(&Value::Null)))
        }),
        dell::BIOS_SETTINGS if patch => with_body!(|b: &Value| host.patch_bios(b)),
        dell::BIOS_REGISTRY if get => host.bios_registry(),
        dell::CLEAR_PENDING if post => host.clear_pending(),
        dell::JOBS | dell::OEM_JOBS if get => Reply::ok(host.jobs(path, expand)),
        dell::JOBS | dell::OEM_JOBS if post => with_body!(|b: &Value| host.create_job_for(b)),
        DMTF_JOBS if get => Reply::ok(host.dmtf_jobs(expand)),
        p if post && scp_action(p) == Some("ExportSystemConfiguration") => {
            with_body!(|b: &Value| host.scp_export(caller, b))
        }
        p if post && scp_action(p) == Some("ImportSystemConfigurationPreview") => {
            with_body!(|b: &Value| host.scp_preview(caller, b))
        }
        p if post && scp_action(p) == Some("ImportSystemConfiguration") => {
            with_body!(|b: &Value| host.scp_import(caller, b))
        }
        crate::host::TASKS if get => Reply::ok(host.scp_tasks(doc(path))),
        p if get && host.scp_task_exists(p) => host.scp_task(p.rsplit('/').next().unwrap_or_default()),
        _ if job_id.is_some() && get => host.job(job_collection, job_id.unwrap_or_default()),
        _ if job_id.is_some() && delete => host.delete_job(job_id.unwrap_or_default()),
        _ if post && service_action("DellJobService", "DeleteJobQueue") => {
            with_body!(|b: &Value| host.delete_job_queue(b))
        }
        _ if post && service_action("DellJobService", "CreateRebootJob") => {
            with_body!(|b: &Value| host.create_reboot_job(b))
        }
        _ if post && service_action("DellJobService", "SetupJobQueue") => {
            with_body!(|b: &Value| host.setup_job_queue(b))
        }
        _ if post && service_action("DellLCService", "GetRemoteServicesAPIStatus") => Reply::ok(host.lc_status()),
        p if get && (p == format!("{LEGACY_DELL}/DellJobService") || p == format!("{LEGACY_DELL}/DellLCService")) => {
            let oem = if p.ends_with("DellJobService") {
                JOB_SERVICE
            } else {
                LC_SERVICE
            };
            match host.fixture.served(p, false, || doc(oem).map(legacy_service)) {
                Some(d) => Reply::ok_rendered(d),
                None => not_found(p),
            }
        }
        _ if group.is_some() && get => {
            let g = group.unwrap_or(AttributeGroup::System);
            host.cached(path, || {
                Reply::ok(host.dell_attributes(g, doc(&g.path()).unwrap_or(&Value::Null)))
            })
        }
        _ if group.is_some() && patch => {
            let g = group.unwrap_or(AttributeGroup::System);
            with_body!(|b: &Value| host.patch_dell_attributes(caller, g, b))
        }
        crate::host::ACCOUNTS | crate::host::LEGACY_ACCOUNTS if get => Reply::ok(host.accounts()),
        p if (p.starts_with(crate::host::ACCOUNTS) || p.starts_with(crate::host::LEGACY_ACCOUNTS))
            && (get || patch)
            && host.account(p).is_some() =>
        {
            if get {
                host.account(p).unwrap_or_else(|| not_found(p))
            } else {
                with_body!(|b: &Value| host.patch_account(caller, p, b))
            }
        }
        p if get && host.log_entries(p).is_some() => Reply::ok(host.log_entries(p).unwrap_or_default()),
        p if get && p.starts_with(crate::host::LCLOG_ENTRIES) && host.log_entry(p).is_some() => {
            Reply::ok(host.log_entry(p).unwrap_or_default())
        }
        crate::synth::SUBSCRIPTIONS if get => Reply::ok(host.subscriptions()),
        crate::synth::SUBSCRIPTIONS if post => with_body!(|b: &Value| host.subscribe(b)),
        p if p.starts_with(crate::synth::SUBSCRIPTIONS) && (get || delete) && host.subscription(p).is_some() => {
            if get {
                Reply::ok(host.subscription(p).unwrap_or_default())
            } else {
                host.unsubscribe(p)
            }
        }
        p if post && p == format!("{}/Actions/EventService.SubmitTestEvent", crate::synth::EVENT_SERVICE) => {
            host.submit_test_event()
        }
        crate::synth::MANAGER_NICS if get && doc(path).is_none() => Reply::ok(host.manager_nics()),
        crate::host::MANAGER_NIC if get && doc(path).is_none() => Reply::ok(host.manager_nic()),
        crate::host::MANAGER_NIC if patch && doc(path).is_none() => {
            with_body!(|b: &Value| host.patch_manager_nic(caller, b))
        }
        crate::synth::CERTIFICATE_SERVICE if get && doc(path).is_none() => Reply::ok(host.certificate_service()),
        crate::synth::CERTIFICATE_LOCATIONS if get && doc(path).is_none() => Reply::ok(host.certificate_locations()),
        p if get && p == crate::synth::HTTPS_CERTIFICATES && doc(p).is_none() => Reply::ok(host.web_certificates()),
        p if get && p == host.web_certificate_path() && doc(p).is_none() => host
            .web_certificate()
            .map_or_else(|| Reply::error(404, vec![messages::not_found(p)]), Reply::ok),
        p if post
            && p == format!(
                "{}/Actions/CertificateService.GenerateCSR",
                crate::synth::CERTIFICATE_SERVICE
            ) =>
        {
            with_body!(|b: &Value| host.generate_csr(b))
        }
        p if post
            && p == format!(
                "{}/Actions/Oem/DellCertificateService.GetLastGeneratedCSR",
                crate::synth::CERTIFICATE_SERVICE
            ) =>
        {
            host.last_generated_csr()
        }
        p if post
            && (p
                == format!(
                    "{}/Actions/CertificateService.ReplaceCertificate",
                    crate::synth::CERTIFICATE_SERVICE
                )
                || p == format!(
                    "{}/Actions/Oem/DellCertificateService.GenerateCSRAndImport",
                    crate::synth::CERTIFICATE_SERVICE
                )) =>
        {
            host.certificate_not_replaced(p.rsplit('/').next().unwrap_or(p))
        }
        crate::synth::NETWORK_PROTOCOL if get && doc(path).is_none() => Reply::ok(host.network_protocol()),
        crate::synth::NETWORK_PROTOCOL if patch && doc(path).is_none() => {
            with_body!(|b: &Value| host.patch_network_protocol(caller, b))
        }
        p if post
            && p == format!(
                "{}/Actions/DelliDRACCardService.iDRACReset",
                crate::synth::IDRAC_CARD_SERVICE
            ) =>
        {
            with_body!(|b: &Value| host.idrac_card_reset(b))
        }
        p if post
            && p == format!(
                "{}/Actions/DelliDRACCardService.iDRACResetCfg",
                crate::synth::IDRAC_CARD_SERVICE
            ) =>
        {
            with_body!(|b: &Value| host.reset_to_defaults("DelliDRACCardService.iDRACResetCfg", b))
        }
        p if post && p == format!("{}/Actions/Manager.ResetToDefaults", dell::MANAGER) => {
            with_body!(|b: &Value| host.reset_to_defaults("Manager.ResetToDefaults", b))
        }
        p if post && p == format!("{}/Actions/DellTimeService.ManageTime", crate::synth::TIME_SERVICE) => {
            with_body!(|b: &Value| host.manage_time(b))
        }
        dell::MANAGER | "/redfish/v1/JobService" | "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog" if get => {
            match doc(path) {
                Some(d) => Reply::ok(host.with_clock(d)),
                None => not_found(path),
            }
        }
        p if post && p == format!("{}/Actions/Manager.Reset", dell::MANAGER) => {
            with_body!(|b: &Value| host.manager_reset(b))
        }
        dell::CHASSIS if get => host.cached(path, || Reply::ok(host.chassis(doc(path).unwrap_or(&Value::Null)))),
        dell::CHASSIS if patch => {
            with_body!(|b: &Value| host.patch_chassis(caller, b, doc(path).unwrap_or(&Value::Null)))
        }
        p if post && p == format!("{}/Actions/Chassis.Reset", dell::CHASSIS) => {
            with_body!(|b: &Value| host.chassis_reset(b))
        }
        p if post && p == format!("{}/Actions/Oem/DellOemChassis.ExtendedReset", dell::CHASSIS) => {
            with_body!(|b: &Value| host.extended_reset(b))
        }
        p if get && p == format!("{}/Power", dell::CHASSIS) => match doc(p) {
            Some(d) => Reply::ok(host.power(d)),
            None => not_found(p),
        },
        p if get && p == format!("{}/EnvironmentMetrics", dell::CHASSIS) => match doc(p) {
            Some(d) => Reply::ok(host.environment_metrics(d)),
            None => not_found(p),
        },
        p if get && p.ends_with("/Sensors/SystemBoardPwrConsumption") => match doc(p) {
            Some(d) => Reply::ok(host.power_sensor(d)),
            None => not_found(p),
        },
        p if get && doc(p).is_some() => match host
            .fixture
            .served(p, expand, || doc(p).map(|d| expand_members(host, d, expand)))
        {
            Some(d) => Reply::ok_rendered(d),
            None => not_found(p),
        },
        p if protocol::allowed(host, p).is_some() => Reply::error(
            405,
            vec![messages::base(
                "OperationNotAllowed",
                &format!("The HTTP method {method} is not allowed on {p}."),
                &[],
                "Use a method the resource supports.",
                None,
            )],
        ),
        p => not_found(p),
    }
}

/// The SCP action a POST names: `…/Actions/Oem/EID_674_Manager.<action>` (iDRAC 9, the target
/// the Manager lists) or `…/Actions/Oem/OemManager.<action>` (where Dell's scripts post on
/// iDRAC 10).
fn scp_action(path: &str) -> Option<&str> {
    let rest = path.strip_prefix(dell::MANAGER)?.strip_prefix("/Actions/Oem/")?;
    rest.strip_prefix("EID_674_Manager.")
        .or_else(|| rest.strip_prefix("OemManager."))
}

/// Whether `path` is one of the two paths of Dell's boot sources.
fn is_boot_sources(path: &str) -> bool {
    path == crate::host::DELL_BOOT_SOURCES || path == crate::host::BOOT_SOURCES
}

/// The tree's boot sources document, at whichever path it records it: it serves both.
fn boot_sources_doc(host: &Host) -> Option<&Value> {
    host.fixture
        .doc(crate::host::DELL_BOOT_SOURCES)
        .or_else(|| host.fixture.doc(crate::host::BOOT_SOURCES))
}

fn not_found(path: &str) -> Reply {
    Reply::error(404, vec![messages::not_found(path)])
}

/// `$expand` on a recorded collection: members inline.
fn expand_members(host: &Host, doc: &Value, expand: bool) -> Value {
    if !expand || doc.get("Members").is_none() {
        return doc.clone();
    }
    let mut out = doc.clone();
    if let Some(members) = out["Members"].as_array_mut() {
        for m in members {
            if let Some(full) = m["@odata.id"]
                .as_str()
                .and_then(|id| host.fixture.doc(id.trim_end_matches('/')))
            {
                *m = full.clone();
            }
        }
    }
    out
}

fn sim_endpoint(host: &Host, method: &Method, path: &str, body: &[u8]) -> Reply {
    match (method.as_str(), path) {
        ("GET", "/stats") => {
            // Changes due by now (a POST ending, and the boot it makes) are counted first.
            host.availability();
            Reply::ok(host.stats.to_json(&host.service_tag))
        }
        ("POST", "/stats/reset") => {
            host.stats.reset();
            Reply::with_body(204, None)
        }
        ("POST", "/load") => {
            let u = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v["utilization"].as_f64());
            match u {
                Some(u) if (0.0..=1.0).contains(&u) => {
                    host.set_load(u);
                    Reply::with_body(204, None)
                }
                _ => Reply::error(
                    400,
                    vec![messages::base(
                        "PropertyValueOutOfRange",
                        "utilization must be a number within 0.0..=1.0",
                        &[],
                        "Send {\"utilization\": 0.5}.",
                        None,
                    )],
                ),
            }
        }
        _ => not_found(&format!("/_sim{path}")),
    }
}

/// The weak `ETag` of a 200 answer with a body: a hash of the body, so it changes with the
/// resource.
fn etag(reply: &Reply) -> Option<HeaderValue> {
    if reply.status != 200 || reply.text.is_some() {
        return None;
    }
    match (&reply.rendered, &reply.body) {
        (Some(r), _) => Some(r.etag.clone()),
        (None, Some(v)) => Some(Rendered::of(v).etag),
        (None, None) => None,
    }
}

fn json_response(reply: Reply, served: &Served) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let reply = if status == StatusCode::OK && reply.text.is_none() {
        reply.render()
    } else {
        reply
    };
    let (body, media_type): (Bytes, Option<&'static str>) = match (&reply.text, &reply.rendered, &reply.body) {
        (Some((text, media)), _, _) => (text.clone(), Some(*media)),
        (None, Some(r), _) => (r.body.clone(), Some(JSON)),
        (None, None, Some(v)) => (Bytes::from(serde_json::to_vec(v).unwrap_or_default()), Some(JSON)),
        (None, None, None) => (Bytes::new(), None),
    };
    let mut resp = Response::builder().status(status);
    if let Some(media) = media_type {
        resp = resp.header(axum::http::header::CONTENT_TYPE, HeaderValue::from_static(media));
    }
    resp = resp.header(
        axum::http::HeaderName::from_static("odata-version"),
        HeaderValue::from_static("4.0"),
    );
    resp = resp.header(
        axum::http::header::CACHE_CONTROL,
        HeaderValue::from_static(protocol::cache_control(&served.path)),
    );
    if !served.path.is_empty() {
        resp = resp.header(
            axum::http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
    }
    if (status == StatusCode::OK || status == StatusCode::METHOD_NOT_ALLOWED)
        && let Some(allow) = served.allow
    {
        resp = resp.header(axum::http::header::ALLOW, HeaderValue::from_static(allow));
    }
    if status == StatusCode::UNAUTHORIZED {
        resp = resp.header(
            axum::http::header::WWW_AUTHENTICATE,
            HeaderValue::from_static(protocol::WWW_AUTHENTICATE),
        );
    }
    if status == StatusCode::OK {
        let tag = served.etag.clone().or_else(|| etag(&reply));
        if let Some(tag) = tag {
            resp = resp.header(axum::http::header::ETAG, tag);
        }
        let odata_type = match (&reply.rendered, &reply.body) {
            (Some(r), _) => r.odata_type.clone(),
            (None, Some(v)) => v.get("@odata.type").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        };
        if let Some(link) = odata_type.as_deref().and_then(protocol::described_by) {
            resp = resp.header(axum::http::header::LINK, link);
        }
    }
    if status == StatusCode::OK
        && let Some(mark) = served.synthesised.as_deref()
        && let Ok(v) = HeaderValue::from_str(mark)
    {
        resp = resp.header(crate::synth::SYNTHESISED_HEADER, v);
    }
    for (name, value) in &reply.headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp = resp.header(*name, v);
        }
    }
    let body = if served.head { Body::empty() } else { Body::from(body) };
    resp.body(body).unwrap_or_else(|_| Response::new(Body::empty()))
}

/// The media type of `$metadata` and the schema files, as Dell's API guide gives it.
const XML: &str = "application/xml;charset=utf-8";

/// The media type of every JSON answer, as a real iDRAC sends it.
const JSON: &str = "application/json;odata.metadata=minimal;charset=utf-8";

/// The `malformed` fault: the real answer, cut in the middle.
fn truncated(reply: Reply) -> Response {
    let full = match (reply.rendered, reply.body) {
        (Some(r), _) => r.body.to_vec(),
        (None, Some(v)) => serde_json::to_vec(&v).unwrap_or_default(),
        (None, None) => b"{}".to_vec(),
    };
    let cut = full[..full.len() / 2].to_vec();
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .body(Body::from(cut))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// The `reset` fault: headers and a first chunk, then the connection is torn down.
fn reset_midway() -> Response {
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(b"{\"@odata.id\":\"/redfish/v1")),
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "rftune-sim: injected connection reset",
        )),
    ];
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .body(Body::from_stream(futures_util::stream::iter(chunks)))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}
