//! Test support shared by every crate's integration tests: [`MockBmc`], a wiremock server that
//! serves a fixture tree the way an iDRAC would for reads — sessions and Basic auth, `$expand`
//! on collections, Redfish error bodies — so tests only mount the writes and faults they assert.
//!
//! [`tls::SwitchingTlsBmc`] is an HTTPS server whose certificate changes between connections,
//! for what a wiremock server cannot fake. The end-to-end tests of the `rftune` binary live in
//! `tests/e2e/`.

pub mod markup;
pub mod tls;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The factory account the mock accepts.
pub const USERNAME: &str = "root";
/// The factory password the mock accepts.
pub const PASSWORD: &str = "calvin";

/// Whether a test can use a system tool it needs (fio, sshd, badfish). When `found` is false it
/// prints one line, `skipped: TOOL not installed (HINT)`, and returns false, so `cargo test`
/// passes on a machine with only the Rust toolchain; with `RFTUNE_REQUIRE_TOOLS=1` (`.ci/run`
/// sets it) a missing tool fails the test instead, so CI always runs everything.
pub fn tool_available(tool: &str, found: bool, hint: &str) -> bool {
    if found {
        return true;
    }
    assert!(
        std::env::var("RFTUNE_REQUIRE_TOOLS").as_deref() != Ok("1"),
        "{tool} not installed ({hint}) and RFTUNE_REQUIRE_TOOLS=1"
    );
    // Straight to stderr, not `eprintln!`: the test harness captures the print macros of a
    // passing test, and this line must be seen.
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "skipped: {tool} not installed ({hint})");
    false
}

/// Whether `program` is an executable file on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// For tests that run the real fio: see [`tool_available`].
pub fn fio_available() -> bool {
    tool_available("fio", on_path("fio"), "apt-get install fio; .ci/run installs it")
}

/// The directories of `rftune bench fs`'s fio servers on this machine (`rftune-fio-*` in /tmp
/// and in the temporary directory), as they are now: a test compares them before and after a
/// run to see every server stopped.
pub fn fio_server_dirs() -> std::collections::BTreeSet<PathBuf> {
    [PathBuf::from("/tmp"), std::env::temp_dir()]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rftune-fio-"))
        })
        .collect()
}

/// For tests that start their own OpenSSH server: see [`tool_available`].
pub fn sshd_available() -> bool {
    tool_available(
        "sshd",
        std::path::Path::new("/usr/sbin/sshd").is_file(),
        "apt-get install openssh-server; .ci/run installs it",
    )
}

/// The workspace's `fixtures/` directory.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Every `index.json` under a fixture model, as (resource path, file path).
pub fn fixture_files(model: &str) -> Vec<(String, PathBuf)> {
    let root = fixtures_dir().join(model);
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "index.json") {
                let rel = p
                    .parent()
                    .and_then(|d| d.strip_prefix(&root).ok())
                    .map(|r| r.to_string_lossy().into_owned());
                if let Some(rel) = rel {
                    out.push((format!("/{rel}"), p));
                }
            }
        }
    }
    out.sort();
    out
}

/// A Redfish error body with one iDRAC-style message.
pub fn redfish_error(message_id: &str, message: &str, resolution: &str) -> Value {
    json!({"error": {
        "code": "Base.1.12.GeneralError",
        "message": "A general error has occurred. See ExtendedInfo for more information",
        "@Message.ExtendedInfo": [{
            "MessageId": message_id, "Message": message, "MessageArgs": [],
            "RelatedProperties": [], "Resolution": resolution, "Severity": "Critical"
        }]
    }})
}

/// A wiremock server serving a fixture model's tree.
pub struct MockBmc {
    /// The server; mount further mocks on it (they take precedence when given priority < 5).
    pub server: MockServer,
    logins: Arc<AtomicU64>,
}

impl MockBmc {
    /// Starts a server for `model` (`r7625`, `r7525`, `c6615`).
    pub async fn start(model: &str) -> Self {
        let server = MockServer::start().await;
        let logins = Arc::new(AtomicU64::new(0));
        let tree = Tree {
            root: fixtures_dir().join(model),
        };
        Mock::given(wiremock::matchers::method("POST"))
            .and(wiremock::matchers::path("/redfish/v1/SessionService/Sessions"))
            .respond_with(Login { logins: logins.clone() })
            .with_priority(10)
            .named("login")
            .mount(&server)
            .await;
        Mock::given(wiremock::matchers::method("DELETE"))
            .and(wiremock::matchers::path_regex(
                "^/redfish/v1/SessionService/Sessions/.+",
            ))
            .respond_with(ResponseTemplate::new(200))
            .with_priority(10)
            .named("logout")
            .mount(&server)
            .await;
        Mock::given(wiremock::matchers::method("GET"))
            .respond_with(tree)
            .with_priority(10)
            .named("fixture tree")
            .mount(&server)
            .await;
        Self { server, logins }
    }

    /// The base URL, e.g. `http://127.0.0.1:43123`.
    pub fn url(&self) -> String {
        self.server.uri()
    }

    /// Successful logins so far.
    pub fn logins(&self) -> u64 {
        self.logins.load(Ordering::Relaxed)
    }

    /// Requests received, as `METHOD /path` in order.
    pub async fn requests(&self) -> Vec<String> {
        self.server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .map(|r| format!("{} {}", r.method, r.url.path()))
            .collect()
    }
}

/// Whether the request carries the mock's credentials (Basic) or a session token it issued.
fn authorised(req: &Request) -> bool {
    let header = |name: &str| req.headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(token) = header("X-Auth-Token") {
        return token.starts_with("token-");
    }
    // "root:calvin" in base64.
    header("Authorization") == Some("Basic cm9vdDpjYWx2aW4=")
}

fn unauthorised() -> ResponseTemplate {
    ResponseTemplate::new(401).set_body_json(redfish_error(
        "IDRAC.2.9.SYS415",
        "Unable to complete the operation because an invalid username and/or password is entered, and therefore authentication failed.",
        "Enter valid user name and password and retry the operation.",
    ))
}

struct Login {
    logins: Arc<AtomicU64>,
}

impl Respond for Login {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        if body["UserName"] != USERNAME || body["Password"] != PASSWORD {
            return unauthorised();
        }
        let n = self.logins.fetch_add(1, Ordering::Relaxed) + 1;
        let location = format!("/redfish/v1/SessionService/Sessions/{n}");
        ResponseTemplate::new(201)
            .insert_header("X-Auth-Token", format!("token-{n}").as_str())
            .insert_header("Location", location.as_str())
            .set_body_json(json!({"@odata.id": location, "Id": n.to_string(), "UserName": USERNAME}))
    }
}

struct Tree {
    root: PathBuf,
}

impl Tree {
    fn load(&self, path: &str) -> Option<Value> {
        let rel = path.trim_matches('/');
        if rel.split('/').any(|seg| seg == ".." || seg.is_empty()) {
            return None;
        }
        let text = std::fs::read_to_string(self.root.join(rel).join("index.json")).ok()?;
        serde_json::from_str(&text).ok()
    }
}

impl Respond for Tree {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let path = req.url.path();
        // iDRAC serves the service root without authentication.
        if path.trim_end_matches('/') != "/redfish/v1" && !authorised(req) {
            return unauthorised();
        }
        let Some(mut doc) = self.load(path) else {
            return ResponseTemplate::new(404).set_body_json(redfish_error(
                "IDRAC.2.9.SYS403",
                "Unable to complete the operation because the resource is not found.",
                "Enter the correct resource and retry the operation.",
            ));
        };
        let expand = req.url.query().is_some_and(|q| q.contains("$expand"));
        if expand && let Some(members) = doc.get_mut("Members").and_then(Value::as_array_mut) {
            for m in members.iter_mut() {
                if let Some(full) = m["@odata.id"].as_str().and_then(|id| self.load(id)) {
                    *m = full;
                }
            }
        }
        ResponseTemplate::new(200).set_body_json(doc)
    }
}

/// A system tool a test runs, looked up as `env_var` (its path; a path that is not a file
/// counts as missing), else `program` on `PATH`. `None` after [`tool_available`] printed why
/// the test is skipped (or failed it, with `RFTUNE_REQUIRE_TOOLS=1`).
pub fn require_tool(program: &str, env_var: &str, hint: &str) -> Option<PathBuf> {
    let found = match std::env::var_os(env_var) {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
        None => std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        }),
    };
    tool_available(program, found.is_some(), hint)
        .then_some(found)
        .flatten()
}

/// A temporary directory (tempfile's), empty when made and removed with everything in it on
/// drop; unique per call, so parallel tests never share one.
#[derive(Debug)]
pub struct TempDir(pub PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl TempDir {
    /// Creates a fresh directory under the system's temporary directory.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::new_in(std::env::temp_dir())
    }

    /// Creates a fresh directory under `base` (target/ for fio, whose direct=1 tmpfs refuses).
    pub fn new_in(base: impl AsRef<Path>) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("rftune-test-")
            .tempdir_in(base)
            .expect("creating a temporary directory");
        Self(dir.path().to_owned(), dir)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.0
    }
}
