//! `rftune exporter` against an emulated fleet with faults, its `/metrics` read by the real
//! exposition parser (the Python `prometheus_client` package's), and the Grafana dashboard in
//! `contrib/grafana` checked against the metrics it queries.

use super::{Run, TempDir, sim, stderr, stdout};
use rftune_engine::watch::metrics::FAMILIES;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// A Python with `prometheus_client`: `RFTUNE_PYTHON` (.ci/run points it at its venv, where
/// it installs a pinned version), else `python3` on PATH.
fn prometheus_parser() -> Option<PathBuf> {
    let hint = "pip install prometheus-client; .ci/run installs it into target/ansible-venv";
    let python = rftune_tests::require_tool("python3", "RFTUNE_PYTHON", hint)?;
    let found = std::process::Command::new(&python)
        .args(["-c", "import prometheus_client.parser"])
        .output()
        .is_ok_and(|o| o.status.success());
    rftune_tests::tool_available("prometheus_client (Python)", found, hint).then_some(python)
}

/// Parses an exposition with `prometheus_client.parser.text_string_to_metric_families`, which
/// raises on anything outside the format, and checks that every family has a type and help.
/// Returns `{family: {"type", "samples": [[name, labels, value], …]}}`.
fn parse(python: &Path, text: &str) -> Value {
    const SCRIPT: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = {}
for f in text_string_to_metric_families(sys.stdin.read()):
    assert f.type in ("gauge", "counter"), "%s has type %s" % (f.name, f.type)
    assert f.documentation, "%s has no help" % f.name
    assert f.name not in out, "%s announced twice" % f.name
    out[f.name] = {"type": f.type, "samples": [[s.name, s.labels, s.value] for s in f.samples]}
print(json.dumps(out))
"#;
    let mut child = std::process::Command::new(python)
        .args(["-c", SCRIPT])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "prometheus_client refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The value of the sample `name` of `family` whose labels include `labels`.
fn value(parsed: &Value, family: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let name = family;
    let family = family.strip_suffix("_total").unwrap_or(family);
    parsed[family]["samples"].as_array()?.iter().find_map(|s| {
        let matches = s[0] == name && labels.iter().all(|(k, v)| s[1][k] == *v);
        matches.then(|| s[2].as_f64().unwrap())
    })
}

/// One HTTP/1.0 GET (the server closes the connection after answering): status and body.
pub(super) async fn get(addr: &str, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// Polls `/healthz` until `done` holds for it (a guard, not a timing assertion: it only stops a
/// broken exporter from hanging the test).
async fn wait_for_health(addr: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    loop {
        let (status, body) = get(addr, "/healthz").await;
        assert_eq!(status, 200, "{body}");
        let health: Value = serde_json::from_str(&body).unwrap();
        if done(&health) {
            return health;
        }
        assert!(tokio::time::Instant::now() < deadline, "never {what}: {health}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_exporter_serves_a_faulty_100_host_fleet_and_stops_cleanly_on_sigterm() {
    let Some(python) = prometheus_parser() else { return };
    // Host 7 never answers; host 5's BIOS jobs get stuck at PR30; host 9 refuses the password
    // its inventory entry gives; host 1 is brought in sync; the rest drift from `performance`.
    let fleet = sim("r7625", 100, |c| {
        c.faults = vec!["timeout@7".parse().unwrap(), "stuck-job@5".parse().unwrap()];
    })
    .await;
    let hosts = fleet.hosts();
    let name = |i: usize| hosts[i].name.as_str();
    let apply = |url: &str| Run::new(&["apply", "--bmc", url, "-p", "performance", "--reboot", "force"]).output();
    let synced = apply(&hosts[0].url).await;
    assert_eq!(synced.status.code(), Some(0), "{}", stderr(&synced));
    let stuck = apply(&hosts[4].url).await;
    assert_eq!(stuck.status.code(), Some(1), "the job is stuck: {}", stderr(&stuck));
    let dir = TempDir::new();
    let wrong = dir.0.join("wrong.toml");
    std::fs::write(&wrong, "username = \"root\"\npassword = \"not-calvin\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o600)).unwrap();
    let inventory = fleet.inventory_toml().replace(
        &format!("name = \"{}\"\n", name(8)),
        &format!("name = \"{}\"\ncredentials = \"wrong.toml\"\n", name(8)),
    );
    let inv = dir.0.join("fleet.toml");
    std::fs::write(&inv, inventory).unwrap();

    let run = Run::new(&[
        "exporter",
        "--inventory",
        inv.to_str().unwrap(),
        "--profile",
        "performance",
        "--listen",
        "127.0.0.1:0",
        "--interval",
        "10m",
        "--check-timeout",
        "30s",
    ]);
    let mut cmd = run.cmd;
    let mut child = cmd.spawn().unwrap();
    drop(child.stdin.take());
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).await.unwrap();
    let addr = line
        .strip_prefix("rftune-exporter: listening http://")
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no listening line: {line:?}"))
        .to_owned();

    // The 99 hosts that answer are all in while the silent one's check is still running: a BMC
    // that stops answering holds up no other host.
    let health = wait_for_health(&addr, "checked 99 hosts", |h| h["checked"].as_u64() >= Some(99)).await;
    assert_eq!(health["status"], "ok");
    assert_eq!(health["hosts"], 100);
    assert_eq!(
        health["first_round_complete"], false,
        "the 99 hosts that answer finish long before the silent one's 30 s: {health}"
    );
    let (status, early) = get(&addr, "/metrics").await;
    assert_eq!(status, 200);
    let early = parse(&python, &early);
    assert_eq!(value(&early, "rftune_exporter_checks_in_flight", &[]), Some(1.0));
    assert_eq!(value(&early, "rftune_check_success", &[("host", name(6))]), None);
    assert_eq!(
        value(&early, "rftune_hosts", &[("state", "unknown")]),
        Some(1.0),
        "only the silent host is not checked yet"
    );

    // Then it times out, and every host has a result.
    wait_for_health(&addr, "completed the first round", |h| {
        h["first_round_complete"] == true
    })
    .await;
    let (status, text) = get(&addr, "/metrics").await;
    assert_eq!(status, 200);
    let m = parse(&python, &text);
    let served: BTreeSet<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    let documented: BTreeSet<&str> = FAMILIES.iter().map(|f| f.strip_suffix("_total").unwrap_or(f)).collect();
    assert_eq!(served, documented);
    assert_eq!(m["rftune_checks"]["type"], "counter");

    let host = |i: usize| [("host", name(i))];
    // In sync, drifting, stuck.
    assert_eq!(value(&m, "rftune_bios_drift_attributes", &host(0)), Some(0.0));
    assert_eq!(value(&m, "rftune_check_success", &host(0)), Some(1.0));
    let drift = value(&m, "rftune_bios_drift_attributes", &host(1)).unwrap();
    assert!(drift > 0.0, "{drift}");
    assert_eq!(
        value(
            &m,
            "rftune_bios_attributes",
            &[("host", name(1)), ("profile", "performance"), ("status", "drift")]
        ),
        Some(drift)
    );
    assert_eq!(
        value(&m, "rftune_idrac_jobs", &[("host", name(4)), ("state", "stuck")]),
        Some(1.0)
    );
    assert_eq!(
        value(&m, "rftune_idrac_jobs", &[("host", name(1)), ("state", "stuck")]),
        Some(0.0)
    );
    assert!(value(&m, "rftune_bios_pending_attributes", &host(4)).unwrap() > 0.0);
    assert_eq!(value(&m, "rftune_bios_pending_attributes", &host(1)), Some(0.0));
    assert!(value(&m, "rftune_power_watts", &host(1)).unwrap() > 0.0);
    assert_eq!(
        value(
            &m,
            "rftune_bios_info",
            &[("host", name(1)), ("model", "PowerEdge R7625")]
        ),
        Some(1.0)
    );
    // The silent host timed out, the one with the wrong password could not log in; neither
    // shows values it could not read.
    assert_eq!(value(&m, "rftune_check_success", &host(6)), Some(0.0));
    assert_eq!(
        value(&m, "rftune_check_failed", &[("host", name(6)), ("reason", "timeout")]),
        Some(1.0)
    );
    assert_eq!(value(&m, "rftune_check_success", &host(8)), Some(0.0));
    assert_eq!(
        value(
            &m,
            "rftune_check_failed",
            &[("host", name(8)), ("reason", "connection")]
        ),
        Some(1.0)
    );
    for i in [6, 8] {
        assert_eq!(value(&m, "rftune_bios_drift_attributes", &host(i)), None);
        assert_eq!(value(&m, "rftune_power_watts", &host(i)), None);
        assert_eq!(
            value(&m, "rftune_checks_total", &[("host", name(i)), ("result", "failure")]),
            Some(1.0)
        );
    }
    let hosts_in = |state| value(&m, "rftune_hosts", &[("profile", "performance"), ("state", state)]);
    assert_eq!(
        [
            hosts_in("in_sync"),
            hosts_in("drift"),
            hosts_in("error"),
            hosts_in("unknown")
        ],
        [Some(1.0), Some(97.0), Some(2.0), Some(0.0)]
    );

    // SIGTERM: no more checks or scrapes, a clean stop, exit 143 as every rftune command.
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(120), child.wait())
        .await
        .expect("the exporter stops after SIGTERM")
        .unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).await.unwrap();
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(
        err.contains("SIGTERM received") && err.contains("exporter stopped"),
        "{err}"
    );
    assert!(!err.contains("error:") && !err.contains("panicked"), "{err}");
    assert!(
        !err.contains("calvin") && !err.contains("not-calvin"),
        "no password in the log: {err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exporter_once_prints_one_round_and_exits_with_the_fleet_code() {
    let fleet = sim("r7625", 3, |_| {}).await;
    let dir = TempDir::new();
    let inv = dir.0.join("fleet.toml");
    std::fs::write(&inv, fleet.inventory_toml()).unwrap();
    let out = Run::new(&[
        "exporter",
        "--once",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        "performance",
    ])
    .output()
    .await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "every host drifts: {}", stderr(&out));
    assert!(
        text.contains("rftune_hosts{profile=\"performance\",state=\"drift\"} 3\n"),
        "{text}"
    );
    for h in fleet.hosts() {
        assert!(
            text.contains(&format!("rftune_check_success{{host=\"{}\"}} 1\n", h.name)),
            "{text}"
        );
    }
    let wrong = Run::new(&[
        "exporter",
        "--once",
        "--inventory",
        inv.to_str().unwrap(),
        "-p",
        "performance",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(stderr(&wrong).contains("Prometheus text"), "{}", stderr(&wrong));
}

/// Every metric a panel of the Grafana dashboard queries is one the exporter serves.
#[test]
fn the_grafana_dashboard_is_json_and_queries_only_served_metrics() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../contrib/grafana/rftune-dashboard.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let mut exprs = Vec::new();
    collect_exprs(&dashboard, &mut exprs);
    assert!(exprs.len() >= 6, "panels with queries: {exprs:?}");
    let served: BTreeSet<&str> = FAMILIES.iter().copied().collect();
    let mut used = BTreeSet::new();
    for expr in &exprs {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "no rftune metric in {expr:?}");
        for n in names {
            assert!(
                served.contains(n.as_str()),
                "{expr:?} queries {n}, which the exporter does not serve"
            );
            used.insert(n);
        }
    }
    for needed in [
        "rftune_bios_drift_attributes",
        "rftune_check_success",
        "rftune_bios_pending_attributes",
        "rftune_idrac_jobs",
        "rftune_power_watts",
        "rftune_check_last_success_timestamp_seconds",
    ] {
        assert!(used.contains(needed), "no panel shows {needed}");
    }
    // Variables and anything else that names a metric, too.
    for n in metric_names(&std::fs::read_to_string(&path).unwrap()) {
        assert!(
            served.contains(n.as_str()),
            "the dashboard names {n}, which the exporter does not serve"
        );
    }
    let uid = dashboard["uid"].as_str().unwrap_or_default();
    assert!(!uid.is_empty() && dashboard["title"].is_string());
}

fn collect_exprs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("expr", Value::String(s)) => out.push(s.clone()),
                    _ => collect_exprs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_exprs(v, out)),
        _ => {}
    }
}

/// The `rftune_…` identifiers in a PromQL expression.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("rftune_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    names
}
