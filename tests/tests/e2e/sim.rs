//! `rftune sim` as a process: the listen lines, the inventory file, and serving.

use super::{Run, TempDir, binary, stderr, stdout};
use tokio::io::{AsyncBufReadExt, BufReader};

#[tokio::test(flavor = "multi_thread")]
async fn sim_prints_listen_lines_writes_inventory_and_serves() {
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    let mut child = tokio::process::Command::new(binary())
        .args([
            "sim",
            "--hosts",
            "3",
            "--listen",
            "127.0.0.1:0",
            "--exit-after",
            "120s",
            "--write-inventory",
        ])
        .arg(&inventory)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut urls = Vec::new();
    let mut fingerprints = Vec::new();
    for _ in 0..3 {
        let line = lines.next_line().await.unwrap().unwrap();
        let parts: Vec<&str> = line.split(' ').collect();
        assert_eq!(parts.len(), 5, "{line}");
        assert_eq!(
            (parts[0], parts[1], parts[3]),
            ("rftune-sim:", "listening", "fingerprint"),
            "{line}"
        );
        assert!(parts[2].starts_with("https://127.0.0.1:"), "{line}");
        assert!(parts[4].starts_with("sha256:") && parts[4].len() == 71, "{line}");
        urls.push(parts[2].to_owned());
        fingerprints.push(parts[4].to_owned());
    }
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), 1, "one certificate for the fleet");
    let inv = std::fs::read_to_string(&inventory).unwrap();
    for u in &urls {
        assert!(inv.contains(&format!("url = \"{u}\"")), "{inv}");
    }
    let out = Run::new(&[
        "bios",
        "get",
        "--bmc",
        &urls[2],
        "--fingerprint",
        &fingerprints[0],
        "-a",
        "SysProfile",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("PerfOptimized"));
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn sim_rejects_bad_fault_specs() {
    let out = Run::new(&["sim", "--fault", "explode"]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("known: 503, reset, timeout"), "{}", stderr(&out));
}

/// `rftune sim --lockdown`: every host starts locked, refuses BIOS writes with SYS406 and serves
/// a locked registry; PATCHing the lockdown attribute to Disabled opens it again.
#[tokio::test(flavor = "multi_thread")]
async fn sim_lockdown_starts_every_host_locked_until_lockdown_is_lifted() {
    use redfish_client::ODataId;
    use redfish_client::oem::dell::{self, AttributeGroup};
    use redfish_client::resources::bios::Attributes;

    let mut child = tokio::process::Command::new(binary())
        .args([
            "sim",
            "--lockdown",
            "--http",
            "--hosts",
            "2",
            "--listen",
            "127.0.0.1:0",
            "--exit-after",
            "120s",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut urls = Vec::new();
    for _ in 0..2 {
        let line = lines.next_line().await.unwrap().unwrap();
        urls.push(line.strip_prefix("rftune-sim: listening ").unwrap().to_owned());
    }
    let change: Attributes = [("MemTest".to_owned(), "Enabled".into())].into_iter().collect();
    for url in &urls {
        let c = super::client(url);
        let err = c
            .stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &change, None)
            .await
            .unwrap_err();
        assert!(err.has_code("SYS406"), "{url}: {err}");
        let registry = c.dell().bios_registry().await.unwrap();
        let mem_test = registry.attribute("MemTest").unwrap();
        assert_eq!(
            (mem_test.read_only, mem_test.immutable),
            (Some(true), Some(true)),
            "{url}"
        );
    }
    let c = super::client(&urls[1]);
    let unlock: Attributes = [("Lockdown.1.SystemLockdown".to_owned(), "Disabled".into())]
        .into_iter()
        .collect();
    c.dell().set_attributes(AttributeGroup::Idrac, &unlock).await.unwrap();
    c.stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &change, None)
        .await
        .unwrap();
    let registry = c.dell().bios_registry().await.unwrap();
    assert_eq!(registry.attribute("MemTest").unwrap().read_only, Some(false));
    let still_locked = super::client(&urls[0])
        .stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &change, None)
        .await;
    assert!(still_locked.unwrap_err().has_code("SYS406"), "hosts are independent");
    child.kill().await.unwrap();
}
