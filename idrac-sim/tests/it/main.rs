//! End-to-end tests of the emulator through `redfish-client`, and raw HTTP where the client
//! would hide a detail (status codes, headers, bodies).
#![allow(clippy::unwrap_used)]

mod accounts;
mod bios;
mod certificates;
mod compat;
mod completion;
mod conformance;
mod faults;
mod fleet;
mod idrac10;
mod ilo;
mod lifecycle;
mod power;
mod realism;
mod surface;

use idrac_sim::generation::Bmc;
use idrac_sim::{Fleet, SimConfig};
use redfish_client::{AuthMethod, Client, Credentials, RetryPolicy, TlsVerification};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The built-in models that are Dell's (every one but the HPE ProLiant), for the tests of
/// what iDRAC serves.
fn dell_models() -> Vec<&'static str> {
    idrac_sim::fixture::builtin_models()
        .into_iter()
        .filter(|m| idrac_sim::fixture::Fixture::builtin(m).is_ok_and(|f| f.bmc != Bmc::Ilo))
        .collect()
}

/// Plain-HTTP single host with a short POST.
fn config() -> SimConfig {
    SimConfig {
        tls: false,
        boot_time: Duration::from_millis(400),
        ..SimConfig::default()
    }
}

async fn start(config: SimConfig) -> Fleet {
    let fleet = Fleet::start(config).await.unwrap();
    for h in fleet.hosts() {
        let token = (h.host.fixture.bmc == Bmc::Idrac10).then(String::new);
        sessions().lock().unwrap().insert(h.url.clone(), token);
    }
    fleet
}

/// For each host a test started: `None` where the raw helpers send Basic credentials, as
/// Dell's scripts do by default; a session token (empty until the first request logs in) where
/// the BMC refuses Basic (iDRAC10 1.30.10.50 leaves it Unadvertised).
fn sessions() -> &'static Mutex<HashMap<String, Option<String>>> {
    static SESSIONS: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    SESSIONS.get_or_init(Mutex::default)
}

/// `request` to the host at `url` with its credentials: Basic, or the session of a host that
/// refuses Basic (logging in on its first request).
async fn authorized(request: reqwest::RequestBuilder, url: &str) -> reqwest::RequestBuilder {
    let known = sessions().lock().unwrap().get(url).cloned().flatten();
    match known {
        None => request.basic_auth("root", Some("calvin")),
        Some(token) if !token.is_empty() => request.header("X-Auth-Token", token),
        Some(_) => {
            let token = login(url).await.headers()["X-Auth-Token"].to_str().unwrap().to_owned();
            sessions().lock().unwrap().insert(url.to_owned(), Some(token.clone()));
            request.header("X-Auth-Token", token)
        }
    }
}

fn client(fleet: &Fleet, host: usize) -> Client {
    let tls = fleet
        .fingerprint()
        .map_or(TlsVerification::System, TlsVerification::Pinned);
    Client::builder(&fleet.hosts()[host].url)
        .credentials(Credentials::new("root", "calvin"))
        .auth_method(AuthMethod::Session)
        .tls(tls)
        .retry(RetryPolicy {
            max_attempts: 40,
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(100),
            max_elapsed: Duration::from_secs(20),
        })
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// Raw HTTP (Basic auth) for status codes and headers.
fn raw() -> reqwest::Client {
    // reqwest is built without a default crypto provider in this workspace.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

/// `POST SessionService/Sessions` as root.
async fn login(url: &str) -> reqwest::Response {
    raw()
        .post(format!("{url}/redfish/v1/SessionService/Sessions"))
        .json(&serde_json::json!({"UserName": "root", "Password": "calvin"}))
        .send()
        .await
        .unwrap()
}

/// `method` on `path` over raw HTTP (Basic auth, or a session where the host refuses Basic;
/// `body` as JSON): the status and the JSON body (`null` when there is none).
async fn call(url: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = authorized(raw().request(method, format!("{url}{path}")), url).await;
    if let Some(b) = body {
        req = req.json(&b);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// A raw `GET` (see [`call`]).
async fn get(url: &str, path: &str) -> (u16, Value) {
    call(url, "GET", path, None).await
}

/// A raw `POST` of `body` (see [`call`]).
async fn post(url: &str, path: &str, body: Value) -> (u16, Value) {
    call(url, "POST", path, Some(body)).await
}

/// Polls `f` until it returns `Some`, for at most 20 s (a bound, not a timing assertion).
async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
