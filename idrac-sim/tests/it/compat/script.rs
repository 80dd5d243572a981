//! A client that behaves as Dell's scripts do: `requests` with Basic credentials on every call
//! (or, with the scripts' `-x TOKEN`, the session token in `X-Auth-Token`) and certificate checks
//! off (`verify=False`), each call logged as `METHOD path -> status`, and every answer read the
//! way the scripts read it (`response.json()` must parse; a missing key is a `KeyError` that
//! stops the script). Their `time.sleep(n)` waits `n` × [`Script::pace`], so a transcript keeps
//! its loops' proportions to the emulator's POST.

use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;

/// One answer, read as the scripts read it.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) location: Option<String>,
    /// The `X-Auth-Token` header of a login.
    pub(super) token: Option<String>,
    /// `response.json()`: `Err` with the text when the body is not JSON.
    json: Result<Value, String>,
    what: String,
}

impl Answer {
    /// `response.json()`: the script dies on a body that is not JSON.
    pub(super) fn json(&self) -> Result<&Value, String> {
        self.json
            .as_ref()
            .map_err(|body| format!("{}: response.json() fails on {body:?}", self.what))
    }

    /// The body as text (`response.text`), whether JSON or not (an XML profile).
    pub(super) fn body(&self) -> String {
        match &self.json {
            Ok(v) => v.to_string(),
            Err(text) => text.clone(),
        }
    }

    /// `data[a][b]...`: a missing key is the script's `KeyError`.
    pub(super) fn at(&self, pointer: &str) -> Result<&Value, String> {
        self.json()?
            .pointer(pointer)
            .ok_or_else(|| format!("{}: KeyError {pointer}", self.what))
    }

    /// `data[a][b]` as a string (the scripts compare them with `==`).
    pub(super) fn text(&self, pointer: &str) -> Result<String, String> {
        let v = self.at(pointer)?;
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("{}: {pointer} is {v}, not a string", self.what))
    }

    /// The script's `if response.status_code in [...]` check: anything else ends it with FAIL.
    pub(super) fn expect(&self, codes: &[u16]) -> Result<&Self, String> {
        if codes.contains(&self.status) {
            Ok(self)
        } else {
            Err(format!(
                "{}: status {} (the script wants {codes:?}) body {}",
                self.what,
                self.status,
                self.json.as_ref().map_or_else(Clone::clone, Value::to_string)
            ))
        }
    }

    /// `response.headers['Location'].split("/")[-1]`.
    pub(super) fn location_id(&self) -> Result<String, String> {
        self.location
            .as_deref()
            .and_then(|l| l.rsplit('/').next())
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("{}: no Location header", self.what))
    }
}

/// How a script authenticates its calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Auth {
    /// `auth=(user, password)`: Basic, the scripts' default.
    Basic,
    /// `-x TOKEN`: `X-Auth-Token` on every call.
    Token(String),
    /// No credentials (the login itself).
    Anonymous,
}

/// One iDRAC as a script sees it.
pub(super) struct Script {
    base: String,
    http: reqwest::Client,
    pace: Duration,
    log: Mutex<Vec<String>>,
    auth: Mutex<Auth>,
}

impl Script {
    /// A script against `url` whose one second lasts `pace`.
    pub(super) fn new(url: &str, pace: Duration) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .tls_danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        Self {
            base: url.to_owned(),
            http,
            pace,
            log: Mutex::new(Vec::new()),
            auth: Mutex::new(Auth::Basic),
        }
    }

    /// A script run with `-x TOKEN`, the token made first as CreateXAuthTokenSessionREDFISH.py
    /// `--create` makes it (read at e7ba763): `GET /redfish/v1` with Basic credentials (the
    /// service root is open) for `RedfishVersion` (1.6.0 or later logs in at
    /// `SessionService/Sessions`), then the login `POST` without credentials, 201 required, the
    /// token from its headers. Logged in the transcript like every other call.
    pub(super) async fn with_session(url: &str, pace: Duration) -> Result<Self, String> {
        let s = Self::new(url, pace);
        let root = s.get("/redfish/v1").await?;
        root.expect(&[200])?;
        let version: u32 = root
            .text("/RedfishVersion")?
            .replace('.', "")
            .parse()
            .map_err(|e| format!("RedfishVersion: {e}"))?;
        let sessions = if version >= 160 {
            "/redfish/v1/SessionService/Sessions"
        } else {
            "/redfish/v1/Sessions"
        };
        s.use_auth(Auth::Anonymous);
        let login = s
            .post(sessions, serde_json::json!({"UserName": "root", "Password": "calvin"}))
            .await?;
        login.expect(&[201])?;
        let token = login.token.clone().ok_or("no X-Auth-Token header")?;
        s.use_auth(Auth::Token(token));
        Ok(s)
    }

    /// Authenticates the calls from here on as `auth` says.
    pub(super) fn use_auth(&self, auth: Auth) {
        *self.auth.lock().unwrap() = auth;
    }

    /// `time.sleep(seconds)`, scaled.
    pub(super) async fn sleep(&self, seconds: u32) {
        tokio::time::sleep(self.pace * seconds).await;
    }

    /// A request as `requests` sends it: Basic credentials, JSON body when given.
    pub(super) async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Answer, String> {
        let url = format!("{}{path}", self.base);
        let method_value = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
        let mut req = self.http.request(method_value, &url);
        req = match self.auth.lock().unwrap().clone() {
            Auth::Basic => req.basic_auth("root", Some("calvin")),
            Auth::Token(token) => req.header("X-Auth-Token", token),
            Auth::Anonymous => req,
        };
        if let Some(b) = body {
            req = req.header("content-type", "application/json").body(b.to_string());
        }
        let what = format!("{method} {path}");
        let r = req
            .send()
            .await
            .map_err(|e| format!("{what}: requests.ConnectionError ({e})"))?;
        let status = r.status().as_u16();
        let header = |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let (location, token) = (header("Location"), header("X-Auth-Token"));
        let text = r.text().await.map_err(|e| format!("{what}: reading the body: {e}"))?;
        let json = serde_json::from_str::<Value>(&text).map_err(|_| text.clone());
        self.log.lock().unwrap().push(format!("{what} -> {status}"));
        Ok(Answer {
            status,
            location,
            token,
            json,
            what,
        })
    }

    /// `GET path`.
    pub(super) async fn get(&self, path: &str) -> Result<Answer, String> {
        self.call("GET", path, None).await
    }

    /// `POST path` with a JSON body.
    pub(super) async fn post(&self, path: &str, body: Value) -> Result<Answer, String> {
        self.call("POST", path, Some(body)).await
    }

    /// `DELETE path`.
    pub(super) async fn delete(&self, path: &str) -> Result<Answer, String> {
        self.call("DELETE", path, None).await
    }

    /// `PATCH path` with a JSON body.
    pub(super) async fn patch(&self, path: &str, body: Value) -> Result<Answer, String> {
        self.call("PATCH", path, Some(body)).await
    }

    /// The transcript so far, one call a line.
    pub(super) fn transcript(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Calls made so far.
    pub(super) fn calls(&self) -> usize {
        self.log.lock().unwrap().len()
    }
}

/// Runs `flow` and fails the test with the script's error and its transcript.
pub(super) fn passed<T>(name: &str, scripts: &[&Script], result: Result<T, String>) -> T {
    let calls: usize = scripts.iter().map(|s| s.calls()).sum();
    match result {
        Ok(v) => {
            eprintln!("flow {name}: passed, {calls} requests");
            v
        }
        Err(e) => {
            let transcripts: Vec<String> = scripts.iter().map(|s| s.transcript()).collect();
            panic!("{name}: {e}\ntranscript:\n{}", transcripts.join("\n--\n"));
        }
    }
}
