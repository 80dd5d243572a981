//! `rftune exporter --probe` (issue 36 item 9): the multi-target mode hands the BMC password
//! only to hosts its allowlist or inventory admits, serves configured profiles by name only,
//! and ends each probe within the scrape's timeout.

use super::{Run, sim, stderr};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.0 GET with extra header lines: status and body.
async fn get(addr: &str, path: &str, headers: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n{headers}\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head.split(' ').nth(1).unwrap().parse().unwrap(), body.to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn probe_checks_only_admitted_targets_with_configured_profiles_within_the_scrape_timeout() {
    // HTTPS hosts sharing one certificate; the second never answers.
    let fleet = sim("r7625", 3, |c| {
        c.tls = true;
        c.faults = vec!["timeout@2".parse().unwrap()];
    })
    .await;
    let hosts = fleet.hosts();
    let fp = fleet.fingerprint().unwrap().to_string();
    let addr_of = |i: usize| hosts[i].url.trim_start_matches("https://").to_owned();
    let (admitted, silent, unlisted) = (addr_of(0), addr_of(1), addr_of(2));

    // First-use trust would give the password to whoever answers: refused at start.
    let tofu = Run::new(&[
        "exporter",
        "--probe",
        "-p",
        "performance",
        "--allow-target",
        &admitted,
        "--trust-on-first-use",
    ])
    .output()
    .await;
    assert_eq!(tofu.status.code(), Some(1));
    assert!(stderr(&tofu).contains("--trust-on-first-use"), "{}", stderr(&tofu));

    let allow = format!("{admitted},{silent}");
    let run = Run::new(&[
        "exporter",
        "--probe",
        "-p",
        "performance",
        "--probe-profile",
        "hpc",
        "--allow-target",
        &allow,
        "--fingerprint",
        &fp,
        "--listen",
        "127.0.0.1:0",
    ]);
    let mut cmd = run.cmd;
    cmd.kill_on_drop(true);
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
    let sessions = |i: usize| super::stats(&fleet, i)["sessions_created"].as_u64().unwrap();

    // An admitted host, against a configured profile by name.
    let (status, text) = get(&addr, &format!("/probe?target={admitted}&profile=hpc"), "").await;
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains(&format!("rftune_check_success{{host=\"{admitted}\"}} 1")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "rftune_bios_drift_attributes{{host=\"{admitted}\",profile=\"hpc\"}}"
        )),
        "{text}"
    );
    assert!(text.contains("rftune_bios_unverified_attributes{"), "{text}");
    assert_eq!(sessions(0), 1);

    // A host the allowlist does not name never sees a request, whatever the caller asks.
    for target in [
        unlisted.clone(),
        format!("https://{unlisted}"),
        format!("{}.evil.example", admitted.split(':').next().unwrap()),
    ] {
        let (status, body) = get(&addr, &format!("/probe?target={target}"), "").await;
        assert_eq!(status, 403, "{target}: {body}");
    }
    assert_eq!(
        super::stats(&fleet, 2)["requests"]["total"],
        0,
        "not even the service root"
    );

    // A profile by path, or one not configured, is refused before any host is touched.
    for profile in ["/etc/passwd", "../profiles/hpc.toml", "low-latency"] {
        let (status, body) = get(&addr, &format!("/probe?target={admitted}&profile={profile}"), "").await;
        assert_eq!(status, 400, "{profile}: {body}");
        assert!(body.contains("performance, hpc"), "{body}");
    }
    assert_eq!(sessions(0), 1);

    // A host that never answers: the probe ends within the scrape's 2 s timeout (less 0.5 s),
    // not after --check-timeout's 60 s, as a failed check.
    let started = Instant::now();
    let (status, text) = get(
        &addr,
        &format!("/probe?target={silent}"),
        "X-Prometheus-Scrape-Timeout-Seconds: 2\r\n",
    )
    .await;
    let took = started.elapsed();
    assert_eq!(status, 200, "{text}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(
        took >= Duration::from_millis(1400),
        "took {took:?}: the probe had 1.5 s"
    );
    assert!(
        text.contains(&format!(
            "rftune_check_failed{{host=\"{silent}\",reason=\"timeout\"}} 1"
        )),
        "{text}"
    );
    let _ = child.kill().await;
}
