//! Inputs and state that must not hurt: host-independent profile errors reported once before
//! any BMC is contacted, oversized files refused before they are read, and a shared state
//! directory left as it was given.

use super::{Run, TempDir, sim, stats, stderr};

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_profile_is_reported_once_before_any_host_is_contacted() {
    let fleet = sim("r7625", 3, |_| {}).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let profile = dir.0.join("mine.toml");
    std::fs::write(
        &profile,
        "name = \"mine\"\ndescription = \"x\"\nextends = \"performanse\"\n",
    )
    .unwrap();
    for command in ["diff", "apply"] {
        let out = Run::new(&[
            command,
            "--inventory",
            inventory.to_str().unwrap(),
            "-p",
            profile.to_str().unwrap(),
        ])
        .state_dir(&dir.0)
        .output()
        .await;
        assert_eq!(out.status.code(), Some(1), "{command}");
        let err = stderr(&out);
        assert_eq!(
            err.matches("performanse").count(),
            1,
            "{command}: once, not per host: {err}"
        );
        assert!(err.contains("did you mean performance"), "{err}");
    }
    for host in 0..3 {
        assert_eq!(stats(&fleet, host)["requests"]["total"], 0, "host {host} was contacted");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_profile_and_inventory_files_are_refused_before_they_are_read() {
    let dir = TempDir::new();
    let profile = dir.0.join("huge.toml");
    // Sparse files: the size alone decides, nothing is read.
    std::fs::File::create(&profile).unwrap().set_len(16 << 20).unwrap();
    let out = Run::new(&["profiles", "validate", profile.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("profiles are limited to 1048576 bytes"),
        "{}",
        stderr(&out)
    );
    let inventory = dir.0.join("fleet.toml");
    std::fs::File::create(&inventory).unwrap().set_len(1 << 30).unwrap();
    let out = Run::new(&["diff", "--inventory", inventory.to_str().unwrap(), "-p", "performance"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the limit is 33554432 bytes"), "{}", stderr(&out));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_shared_state_directory_keeps_its_mode_and_rftunes_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let shared = TempDir::new();
    std::fs::set_permissions(&shared.0, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let out = Run::new(&["apply", "--bmc", url, "-p", "low-latency", "--reboot", "force"])
        .state_dir(&shared.0)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&shared.0), 0o1777, "the given directory is not changed");
    assert_eq!(mode(&shared.0.join("audit.log")), 0o600);
    assert_eq!(mode(&shared.0.join("snapshots")), 0o700);
}
