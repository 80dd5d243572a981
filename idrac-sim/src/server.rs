//! HTTP for one emulated BMC: authentication, faults, latency, request counting, readiness,
//! query options and conditional requests, then the answer of its personality's routes.

use crate::config::FaultKind;
use crate::host::{Caller, Host, JSON, Rendered, Reply};
use crate::messages;
use crate::personality::Personality;
use crate::protocol;
use crate::query::Query;
use crate::route::{Request, not_found};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The `tracing` target of the request log that [`SimConfig::log_requests`] turns on: one
/// event per request with the fields `host` (service tag), `method`, `uri` and `status`. The
/// emulator is a library and prints nothing itself; the application's subscriber shows them
/// at level `info` (`rftune` enables this target whatever its verbosity).
///
/// [`SimConfig::log_requests`]: crate::SimConfig::log_requests
pub const REQUEST_LOG: &str = "rftune_sim::requests";

/// One host as the server answers for it: its state and its model's personality.
#[derive(Debug, Clone)]
struct Bmc {
    host: Arc<Host>,
    personality: Arc<Personality>,
}

/// The router of one host, answering as `personality`.
pub fn router(host: Arc<Host>, personality: Arc<Personality>) -> axum::Router {
    axum::Router::new()
        .fallback(handle)
        .layer(axum::middleware::map_response(redfish_errors))
        .with_state(Bmc { host, personality })
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
        axum::http::HeaderValue::from_static(JSON),
    );
    out
}

async fn handle(
    axum::extract::State(bmc): axum::extract::State<Bmc>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    body: Bytes,
) -> Response {
    let Bmc { host, personality } = bmc;
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
    // One trailing slash or none, and on an iLO any spelling, names the same resource.
    let path = host.fixture.canonical(&path);
    if let Some(sim) = path.strip_prefix("/_sim") {
        return json_response(sim_endpoint(&host, &method, sim, &body), &Exchange::default());
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
    let mut exchange = Exchange {
        head,
        path: path.clone(),
        ..Exchange::default()
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
        _ => answer(
            &personality,
            &host,
            &effective,
            &path,
            query,
            &headers,
            &body,
            &address,
            &mut exchange,
        ),
    };
    if host.config.log_requests {
        tracing::info!(target: REQUEST_LOG, host = %host.service_tag, %method, %uri, status = reply.status);
    }
    let mut reply = personality.shape(reply);
    if personality.absolute_location() {
        absolute_location(&mut reply, &host, &headers);
    }
    exchange.allow = personality.allow(&host, &path);
    exchange.synthesised = host.synthesised(&path);
    exchange.advertises_basic = reply.status == 401 && personality.refuses_basic(&host).is_none();
    match fault {
        Some(FaultKind::Malformed) => truncated(reply),
        Some(FaultKind::Reset) => reset_midway(),
        _ => json_response(reply, &exchange),
    }
}

/// A relative `Location` made absolute with the address the client used (`Host`), as HPE's
/// authentication guide shows iLO's: `https://{IP-BMC}/redfish/v1/SessionService/Sessions/{item}/`.
fn absolute_location(reply: &mut Reply, host: &Host, headers: &HeaderMap) {
    let Some(authority) = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()) else {
        return;
    };
    let scheme = if host.config.tls { "https" } else { "http" };
    for (name, value) in &mut reply.headers {
        if *name == "Location" && value.starts_with('/') {
            *value = format!("{scheme}://{authority}{value}");
        }
    }
}

/// What the response headers need to know beyond the reply: the request, the methods the path
/// answers, and the tag of the resource before query options shaped the body.
#[derive(Debug, Default)]
struct Exchange {
    head: bool,
    path: String,
    allow: Option<&'static str>,
    etag: Option<HeaderValue>,
    /// What the emulator synthesised here ([`crate::synth::SYNTHESISED_HEADER`]).
    synthesised: Option<String>,
    /// A 401 names Basic in `WWW-Authenticate` (DSP0266), unless the BMC does not take Basic
    /// now (iDRAC10's `Unadvertised`).
    advertises_basic: bool,
}

/// Authentication, then the headers and query options that shape the answer, then the route.
#[allow(clippy::too_many_arguments)] // the parts of one request
fn answer(
    personality: &Personality,
    host: &Host,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &[u8],
    address: &str,
    exchange: &mut Exchange,
) -> Reply {
    // DSP0266: authentication is processed before any other header that affects the answer.
    let caller = match authenticate(personality, host, method, path, headers, address) {
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
    if let Some(failed) = precondition(personality, host, method, path, headers) {
        return failed;
    }
    let expand_members = options
        .expand
        .is_some_and(|e| e.scope != crate::query::ExpandScope::Links);
    let reply = route(personality, host, method, path, expand_members, body, &caller);
    if !get {
        host.audit(&caller, method.as_str(), path, body, &reply);
        return reply;
    }
    if reply.status != 200 || reply.text.is_some() {
        return reply;
    }
    let reply = reply.render();
    exchange.etag = etag(&reply);
    // If-None-Match naming the current tag: 304 without the body (optional in DSP0266; Dell's
    // API guide lists it for accounts and metadata, here it holds everywhere).
    if let (Some(tag), Some(wanted)) = (
        &exchange.etag,
        headers.get("If-None-Match").and_then(|v| v.to_str().ok()),
    ) {
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
    let read = |p: &str| route(personality, host, &Method::GET, p, false, &[], &caller).json();
    match crate::query::apply(doc, path, &options, page, &read) {
        Ok(shaped) => Reply::ok(shaped),
        Err(e) => Reply::error(e.status(), vec![e.message()]),
    }
}

/// Paths open without credentials: the service root and the login itself, as on iDRAC, and
/// the OData documents (DSP0266). The caller is the account the credentials name, or nobody.
fn authenticate(
    personality: &Personality,
    host: &Host,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    address: &str,
) -> Result<Caller, Reply> {
    let open = personality.is_open(method, path);
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
    if basic.is_some()
        && let Some(refused) = personality.refuses_basic(host)
    {
        return if open { Ok(caller(String::new())) } else { Err(refused) };
    }
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
/// else 412, so a client's read-modify-write cannot overwrite a change it did not see. A BMC
/// that refuses `If-Match` on actions answers 412 to any action POST that carries one.
fn precondition(
    personality: &Personality,
    host: &Host,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Option<Reply> {
    let wanted = headers.get("If-Match").and_then(|v| v.to_str().ok())?;
    if *method == Method::POST && path.contains("/Actions/") && personality.refuses_if_match_on_actions() {
        return Some(precondition_failed());
    }
    if *method != Method::PATCH {
        return None;
    }
    if wanted.trim() == "*" {
        return None;
    }
    let current = route(
        personality,
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
    (!matches).then(precondition_failed)
}

/// 412 `PreconditionFailed`.
fn precondition_failed() -> Reply {
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
}

/// The answer of the personality's route for `method` on `path`: 405 for a path that names
/// something but does not take that method, 404 for one that names nothing.
fn route(
    personality: &Personality,
    host: &Host,
    method: &Method,
    path: &str,
    expand: bool,
    body: &[u8],
    caller: &Caller,
) -> Reply {
    // Paths read for `$expand` and conditions come from documents' links, in their spelling.
    let path = &host.fixture.canonical(path);
    let request = Request {
        method,
        path,
        expand,
        body,
        caller,
    };
    if let Some(reply) = personality.answer(host, &request) {
        return reply;
    }
    if personality.allow(host, path).is_some() {
        return Reply::error(
            405,
            vec![messages::base(
                "OperationNotAllowed",
                &format!("The HTTP method {method} is not allowed on {path}."),
                &[],
                "Use a method the resource supports.",
                None,
            )],
        );
    }
    Reply::error(404, vec![messages::not_found(path)])
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

fn json_response(reply: Reply, exchange: &Exchange) -> Response {
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
        HeaderValue::from_static(protocol::cache_control(&exchange.path)),
    );
    if !exchange.path.is_empty() {
        resp = resp.header(
            axum::http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
    }
    if (status == StatusCode::OK || status == StatusCode::METHOD_NOT_ALLOWED)
        && let Some(allow) = exchange.allow
    {
        resp = resp.header(axum::http::header::ALLOW, HeaderValue::from_static(allow));
    }
    if status == StatusCode::UNAUTHORIZED && exchange.advertises_basic {
        resp = resp.header(
            axum::http::header::WWW_AUTHENTICATE,
            HeaderValue::from_static(protocol::WWW_AUTHENTICATE),
        );
    }
    if status == StatusCode::OK {
        let tag = exchange.etag.clone().or_else(|| etag(&reply));
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
        && let Some(mark) = exchange.synthesised.as_deref()
        && let Ok(v) = HeaderValue::from_str(mark)
    {
        resp = resp.header(crate::synth::SYNTHESISED_HEADER, v);
    }
    for (name, value) in &reply.headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp = resp.header(*name, v);
        }
    }
    let body = if exchange.head { Body::empty() } else { Body::from(body) };
    resp.body(body).unwrap_or_else(|_| Response::new(Body::empty()))
}

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
