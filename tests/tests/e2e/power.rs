//! `rftune power` against the in-process emulator under a scripted load.

use super::{Run, sim, stderr, stdout};
use std::time::Duration;

/// `POST /_sim/load` over plain HTTP (no client library needed for one request).
async fn set_load(url: &str, utilization: f64) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let hostport = url.trim_start_matches("http://");
    let body = format!("{{\"utilization\": {utilization}}}");
    let mut s = tokio::net::TcpStream::connect(hostport).await.unwrap();
    let req = format!(
        "POST /_sim/load HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).await.unwrap();
    assert!(resp.starts_with("HTTP/1.1 204"), "{resp}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sampling_follows_the_load_and_energy_is_the_trapezoid_sum() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    set_load(&url, 0.0).await;
    let run = Run::new(&[
        "power",
        "--bmc",
        &url,
        "--interval",
        "250ms",
        "--duration",
        "3s",
        "--format",
        "json",
    ])
    .output();
    let script = async {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        set_load(&url, 1.0).await;
    };
    let (out, ()) = tokio::join!(run, script);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["schema"], "rftune.power/v1");
    assert_eq!(doc["sensor"], "EnvironmentMetrics.PowerWatts");
    let samples: Vec<(f64, f64)> = doc["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["t_s"].as_f64().unwrap(), s["watts"].as_f64().unwrap()))
        .collect();
    assert_eq!(samples.len(), 13, "readings at 0, 0.25, ..., 3 s");
    assert_eq!(doc["stats"]["n"], 13);
    assert!(
        samples.windows(2).all(|w| w[1].0 > w[0].0),
        "client timestamps increase"
    );
    let by_hand: f64 = samples
        .windows(2)
        .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0))
        .sum();
    let energy = doc["stats"]["energy_j"].as_f64().unwrap();
    assert!((energy - by_hand).abs() < 1e-6 * by_hand, "{energy} vs {by_hand}");
    let span = samples.last().unwrap().0 - samples[0].0;
    assert!((doc["stats"]["average_w"].as_f64().unwrap() - energy / span).abs() < 1e-6);
    let (first, last) = (samples[0].1, samples.last().unwrap().1);
    assert!(last > first * 1.3, "load raised the reading: {first} W → {last} W");
    assert_eq!(
        doc["stats"]["min_w"].as_f64().unwrap(),
        samples.iter().map(|s| s.1).fold(f64::MAX, f64::min)
    );
    assert!(doc["caveat"].as_str().unwrap().contains("BMC readings"));
}

#[tokio::test(flavor = "multi_thread")]
async fn one_reading_falls_back_to_power_control_and_prints_prometheus() {
    let fleet = sim("r7525", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    let out = Run::new(&["power", "--bmc", &url, "--format", "prometheus"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("# TYPE rftune_power_watts gauge"), "{text}");
    let line = text.lines().find(|l| l.starts_with("rftune_power_watts{")).unwrap();
    assert!(
        line.contains("sensor=\"Power.PowerControl.PowerConsumedWatts\""),
        "{line}"
    );
    let watts: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(watts > 50.0, "{line}");
    let table = Run::new(&["power", "--bmc", &url]).output().await;
    assert!(table.status.success(), "{}", stderr(&table));
    assert!(
        stdout(&table).contains("Power.PowerControl.PowerConsumedWatts"),
        "{}",
        stdout(&table)
    );
    let csv = Run::new(&[
        "power",
        "--bmc",
        &url,
        "--duration",
        "1s",
        "--interval",
        "500ms",
        "--format",
        "csv",
    ])
    .output()
    .await;
    assert_eq!(stdout(&csv).lines().count(), 1 + 3, "{}", stdout(&csv));
}

#[tokio::test(flavor = "multi_thread")]
async fn global_json_output_selects_the_json_document() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    let out = Run::new(&["power", "--bmc", &url, "-o", "json"]).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (doc["schema"].as_str(), doc["stats"]["n"].as_u64()),
        (Some("rftune.power/v1"), Some(1))
    );
}

/// `power off|on|cycle` on a fleet: each host switched, a host already in the asked state left
/// alone, every switch in the audit log.
#[tokio::test(flavor = "multi_thread")]
async fn power_off_on_and_cycle_switch_a_fleet_and_leave_hosts_already_there_alone() {
    let fleet = super::sim("r7625", 2, |c| c.boot_time = std::time::Duration::from_millis(500)).await;
    let dir = super::TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let inv = inventory.to_str().unwrap();
    let on = |i: usize| fleet.hosts()[i].host.snapshot().2;
    let run = |args: &[&str]| Run::new(args).state_dir(&dir.0);

    let out = run(&[
        "power",
        "off",
        "--inventory",
        inv,
        "--graceful-timeout",
        "5s",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "rftune.power-action/v1");
    assert_eq!(doc["hosts"][0]["result"], "shut down", "{doc}");
    assert!(!on(0) && !on(1));

    let out = run(&["power", "off", "--inventory", inv, "-o", "json"]).output().await;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["hosts"][1]["result"], "already off", "{doc}");

    let url = fleet.hosts()[0].url.clone();
    let out = run(&["power", "on", "--bmc", &url]).output().await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("powered on"), "{}", stdout(&out));
    assert!(on(0) && !on(1));

    let resets = |i: usize| super::stats(&fleet, i)["resets"].as_u64().unwrap();
    let before = resets(0);
    let out = run(&["power", "cycle", "--inventory", inv, "--graceful-timeout", "5s"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        on(0) && on(1),
        "both on after the cycle (host 1 was off: just powered on)"
    );
    assert!(resets(0) >= before + 2, "host 0 went down and up");
    let audit = std::fs::read_to_string(dir.0.join("audit.log")).unwrap();
    assert_eq!(audit.matches("\"step\":\"power-off\"").count(), 4, "{audit}");
    assert_eq!(audit.matches("\"step\":\"power-cycle\"").count(), 2, "{audit}");
}
