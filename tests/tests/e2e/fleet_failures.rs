//! Failures at fleet scale, as a user meets them: connection mistakes said at once (a name that
//! does not exist, `http://` to an HTTPS port) or their retries said as they start (a refused
//! port), a wrong password sent to few hosts rather than to all, the error kind of every
//! failed host in JSON, and the hosts a stop left untouched counted as not started.

use super::{Run, TempDir, sim, stderr, stdout};
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::AsyncBufReadExt;

/// A port on loopback where nothing listens: bound, then let go.
pub(super) fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_that_does_not_exist_fails_at_once_with_its_hint_and_is_not_retried() {
    // A 64-character label is no DNS name (63 at most): the system resolver answers EAI_NONAME
    // without asking any server, as it does for a name that does not exist.
    let url = format!("http://{}.example", "a".repeat(64));
    let start = Instant::now();
    let out = Run::new(&["diff", "--bmc", &url, "-p", "hpc", "--retry-for", "10m"])
        .output()
        .await;
    let took = start.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the host name does not resolve"), "{err}");
    assert!(err.contains("hint: no such host name: check the spelling of"), "{err}");
    assert!(!err.contains("retrying") && !err.contains("gave up after"), "{err}");
    // Not a timing test: a retried name would have taken the ten minutes of --retry-for.
    assert!(took < Duration::from_secs(300), "{took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_says_it_is_retrying_as_the_first_retry_starts() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let mut run = Run::new(&["diff", "--bmc", &url, "-p", "hpc", "--retry-for", "10m"]);
    let mut child = run.cmd.spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    // The line comes at the first retry, not when the ten minutes are spent: read until it
    // does, then stop the run.
    let said = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("retrying") {
                return line;
            }
        }
        String::new()
    })
    .await
    .expect("no line about retrying within two minutes of a ten-minute budget");
    child.kill().await.unwrap();
    let hostport = url.trim_start_matches("http://");
    assert!(
        said.contains(&format!("{hostport}: connection refused, retrying for up to"))
            && said.contains("(a BMC may be restarting)"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn http_to_an_https_port_says_so_at_once_without_retrying() {
    let fleet = idrac_sim::Fleet::start(idrac_sim::SimConfig::default()).await.unwrap();
    let http = fleet.hosts()[0].url.replacen("https://", "http://", 1);
    let start = Instant::now();
    let out = Run::new(&["inventory", "--bmc", &http, "--retry-for", "10m"])
        .output()
        .await;
    let took = start.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("speaks HTTPS (TLS), not plain HTTP"), "{err}");
    let https = http.replacen("http://", "https://", 1);
    assert!(
        err.contains(&format!("hint: this port serves HTTPS: use {https}")),
        "{err}"
    );
    assert!(!err.contains("retrying") && !err.contains("gave up after"), "{err}");
    assert!(took < Duration::from_secs(300), "{took:?}");
}

/// Login attempts and sessions opened on every host of `fleet` (the login is `POST` on the
/// sessions collection).
fn logins(fleet: &idrac_sim::Fleet) -> (u64, u64) {
    (0..fleet.hosts().len())
        .map(|i| super::stats(fleet, i))
        .map(|s| {
            let posts = s["requests"]["by_path"]["POST /redfish/v1/SessionService/Sessions"]
                .as_u64()
                .unwrap_or(0);
            (posts, s["sessions_created"].as_u64().unwrap())
        })
        .fold((0, 0), |(a, b), (p, c)| (a + p, b + c))
}

/// The hosts of a fleet document by `error_kind`.
fn kinds(doc: &Value) -> std::collections::BTreeMap<String, usize> {
    let mut kinds = std::collections::BTreeMap::new();
    for h in doc["hosts"].as_array().unwrap() {
        let kind = h["error_kind"].as_str().unwrap_or("none").to_owned();
        *kinds.entry(kind).or_default() += 1;
    }
    kinds
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_password_reaches_three_of_fifty_bmcs_and_each_other_credential_goes_on() {
    let fleet = sim("r7625", 50, |_| {}).await;
    let dir = TempDir::new();
    // The first ten hosts log in with a credentials file of their own, holding the right
    // password; the run's password (RFTUNE_PASSWORD) is wrong for the other forty.
    let creds = dir.0.join("good.toml");
    std::fs::write(&creds, "username = \"root\"\npassword = \"calvin\"\n").unwrap();
    std::fs::set_permissions(&creds, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut inventory = String::new();
    for (i, h) in fleet.hosts().iter().enumerate() {
        inventory.push_str(&format!("[[bmc]]\nname = {:?}\nurl = {:?}\n", h.name, h.url));
        if i < 10 {
            inventory.push_str("credentials = \"good.toml\"\n");
        }
    }
    let path = dir.0.join("fleet.toml");
    std::fs::write(&path, inventory).unwrap();
    let out = Run::new(&["diff", "--inventory", path.to_str().unwrap(), "-p", "hpc", "-o", "json"])
        .env("RFTUNE_PASSWORD", "not-the-password")
        .output()
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let (attempts, opened) = logins(&fleet);
    assert_eq!((attempts, opened), (13, 10), "3 rejected logins, 10 accepted: {err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by_kind = kinds(&doc);
    assert_eq!(by_kind.get("credentials"), Some(&3), "{by_kind:?}");
    assert_eq!(by_kind.get("not_started"), Some(&37), "{by_kind:?}");
    assert_eq!(
        by_kind.get("none"),
        Some(&10),
        "the good credential's hosts: {by_kind:?}"
    );
    let untouched = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["error_kind"] == "not_started")
        .unwrap();
    let why = untouched["error"].as_str().unwrap();
    assert!(
        why.contains(
            "rejected the credentials for root, so they were sent to no further host (--max-login-rejections 3)"
        ),
        "{why}"
    );
    // The hint once for the run, not once per host.
    assert_eq!(
        err.matches("check RFTUNE_USERNAME and the password").count(),
        1,
        "{err}"
    );

    // --max-login-rejections 1: the first rejection is the last.
    for h in fleet.hosts() {
        h.host.stats.reset();
    }
    let out = Run::new(&[
        "diff",
        "--inventory",
        path.to_str().unwrap(),
        "-p",
        "hpc",
        "--max-login-rejections",
        "1",
        "-o",
        "json",
    ])
    .env("RFTUNE_PASSWORD", "not-the-password")
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(logins(&fleet), (11, 10), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn every_failed_host_carries_its_error_kind_in_json_and_jsonl() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let dir = TempDir::new();
    let path = dir.0.join("fleet.toml");
    let gone = format!("http://127.0.0.1:{}", closed_port());
    std::fs::write(
        &path,
        format!(
            "[[bmc]]\nname = \"up\"\nurl = {:?}\n\n[[bmc]]\nname = \"gone\"\nurl = {gone:?}\n",
            fleet.hosts()[0].url
        ),
    )
    .unwrap();
    let inventory = path.to_str().unwrap();
    let expect = |line: &Value| match line["host"].as_str() {
        Some("gone") => {
            assert_eq!(line["error_kind"], "unreachable", "{line}");
            assert!(line["error"].as_str().unwrap().contains("Connection refused"), "{line}");
        }
        Some("up") => assert!(line.get("error_kind").is_none(), "{line}"),
        _ => {}
    };
    let run = |command: &[&str], output: &str| {
        let mut args = command.to_vec();
        args.extend(["--inventory", inventory, "--retry-for", "0s", "-o", output]);
        // In the scratch directory: plan writes its file where it runs.
        Run::new(&args).state_dir(&dir.0).current_dir(&dir.0).output()
    };
    let commands: [&[&str]; 5] = [
        &["diff", "-p", "hpc"],
        &["inventory"],
        &["snapshot"],
        &["apply", "-p", "hpc", "--dry-run"],
        &["plan", "-p", "hpc"],
    ];
    for command in commands {
        let out = run(command, "json").await;
        assert_eq!(out.status.code(), Some(1), "{command:?}: {}", stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let entries = doc["hosts"].as_array().or(doc["snapshots"].as_array()).unwrap();
        assert_eq!(entries.len(), 2, "{command:?}: {doc}");
        entries.iter().for_each(expect);
    }
    let out = run(&["diff", "-p", "hpc"], "jsonl").await;
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{}", stdout(&out));
    lines.iter().for_each(expect);
}

#[tokio::test(flavor = "multi_thread")]
async fn after_sigint_in_a_rolling_apply_the_hosts_never_written_to_are_not_started() {
    let fleet = sim("r7625", 12, |c| c.boot_time = Duration::from_secs(3)).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let mut run = Run::new(&[
        "apply",
        "--inventory",
        inventory.to_str().unwrap(),
        "-p",
        "hpc",
        "--reboot",
        "force",
        "--max-unavailable",
        "1",
        "-o",
        "json",
    ])
    .state_dir(&dir.0);
    let mut child = run.cmd.spawn().unwrap();
    drop(child.stdin.take());
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    // Interrupt as soon as the first host stages its values: the others wait for the one
    // reboot slot, nothing written to them.
    tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("staging") {
                return;
            }
        }
    })
    .await
    .expect("a host started staging");
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        rest.push_str(&line);
        rest.push('\n');
    }
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(130), "{rest}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = &doc["summary"];
    let not_started = summary["not_started"].as_u64().unwrap();
    assert!(not_started >= 10, "at most two hosts were written to: {summary} {rest}");
    for h in doc["hosts"].as_array().unwrap() {
        match h["outcome"].as_str().unwrap() {
            "not_started" => {
                assert_eq!(h["written"], false, "{h}");
                assert_eq!(h["error_kind"], "not_started", "{h}");
            }
            // The host that was staging when the stop came: written to, so not untouched.
            "error" => {
                assert_eq!(h["written"], true, "{h}");
                assert_eq!(h["error_kind"], "interrupted", "{h}");
            }
            _ => {}
        }
    }
    let counted: u64 = ["converged", "in_sync", "not_converged", "not_started", "error"]
        .iter()
        .map(|k| summary[k].as_u64().unwrap())
        .sum();
    assert_eq!(counted, 12, "every host counted once: {summary}");
}

#[tokio::test]
async fn every_error_kind_is_documented_in_the_help_and_the_readme() {
    let help = stdout(&Run::new(&["--help"]).output().await);
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    for kind in rftune_engine::HostErrorKind::ALL.map(rftune_engine::HostErrorKind::as_str) {
        assert!(help.contains(kind), "--help does not name {kind}:\n{help}");
        assert!(
            readme.contains(&format!("| `{kind}` |")),
            "the README's table lacks {kind}"
        );
    }
}
