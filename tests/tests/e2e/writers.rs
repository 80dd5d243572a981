//! Every writer goes through one pipeline: an SCP import waits for an apply's lock on the same
//! host and the reverse, housekeeping writes are refused while another run holds the host, and
//! an import whose before-reboot hook fails leaves its host unrebooted with its import job
//! withdrawn.

use super::{Run, TempDir, sim, stats, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Short waits for the emulator's POST.
const WAITS: [&str; 6] = [
    "--graceful-timeout",
    "5s",
    "--job-timeout",
    "30s",
    "--boot-timeout",
    "30s",
];

/// Renders `profile` as an SCP for the host at `url` into `dir`.
async fn fragment(profile: &str, url: &str, dir: &Path) -> PathBuf {
    let file = dir.join(format!("{profile}.xml"));
    let f = file.display().to_string();
    let out = Run::new(&["scp", "render", "--profile", profile, "--bmc", url, "--out", &f])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    file
}

/// Waits until a run holds a host's lock in `state`: the holder writes who it is into the lock
/// file right after taking it.
async fn held(state: &Path) {
    let locks = state.join("locks");
    for _ in 0..600 {
        let taken = std::fs::read_dir(&locks)
            .into_iter()
            .flatten()
            .flatten()
            .any(|f| f.metadata().is_ok_and(|m| m.len() > 0));
        if taken {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no run took a lock in {}", locks.display());
}

/// The steps each run recorded in `state`'s audit log, in order: (run, step, outcome).
fn steps(state: &Path) -> Vec<(String, String, String)> {
    let log = std::fs::read_to_string(state.join("audit.log")).unwrap_or_default();
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (s("run"), s("step"), s("outcome"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_scp_import_waits_for_an_applys_lock_on_the_same_host_and_the_reverse() {
    for import_first in [false, true] {
        let fleet = sim("r7625", 1, |c| c.boot_time = Duration::from_secs(2)).await;
        let url = fleet.hosts()[0].url.clone();
        let dir = TempDir::new();
        let state = TempDir::new();
        let file = fragment("low-latency", &url, &dir.0).await;
        let f = file.display().to_string();
        let mut apply = vec!["apply", "--bmc", &url, "-p", "performance", "--reboot", "force"];
        let mut import = vec!["scp", "import", &f, "--bmc", &url, "--reboot", "force"];
        for args in [&mut apply, &mut import] {
            args.extend(WAITS);
            args.extend(["--lock-wait", "2m", "-o", "json"]);
        }
        let (first, second) = if import_first {
            (&import, &apply)
        } else {
            (&apply, &import)
        };
        let first = tokio::spawn(Run::new(first).state_dir(&state.0).output());
        held(&state.0).await;
        let second = Run::new(second).state_dir(&state.0).output().await;
        let first = first.await.unwrap();
        assert!(first.status.success(), "{}", stderr(&first));
        assert!(second.status.success(), "{}{}", stdout(&second), stderr(&second));
        assert!(
            stderr(&second).contains("waiting for another rftune run's lock on this host: pid"),
            "the waiting run says so and names the holder: {}",
            stderr(&second)
        );
        // Nothing of the second run was written before the first one's last step.
        let log = steps(&state.0);
        let first_run = log.first().map(|r| r.0.clone()).unwrap();
        let last_of_first = log.iter().rposition(|r| r.0 == first_run).unwrap();
        let writes = ["stage", "scp-import", "reboot", "snapshot", "replace"];
        let first_write_of_second = log
            .iter()
            .position(|r| r.0 != first_run && writes.contains(&r.1.as_str()))
            .unwrap_or(usize::MAX);
        assert!(
            last_of_first < first_write_of_second,
            "import first: {import_first}: {log:#?}"
        );
        let s = stats(&fleet, 0);
        assert_eq!(s["bios_patches"], 1, "the apply's one PATCH: {s}");
        assert_eq!(s["jobs_created"], 2, "the apply's BIOS job and the import job: {s}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn housekeeping_writes_are_refused_while_another_run_holds_the_host() {
    let fleet = sim("r7625", 1, |c| c.boot_time = Duration::from_secs(2)).await;
    let url = fleet.hosts()[0].url.clone();
    let state = TempDir::new();
    let mut apply = vec!["apply", "--bmc", url.as_str(), "-p", "performance", "--reboot", "force"];
    apply.extend(WAITS);
    let running = tokio::spawn(Run::new(&apply).state_dir(&state.0).output());
    held(&state.0).await;
    for args in [
        vec!["jobs", "delete", "JID_000000000001", "--bmc", url.as_str()],
        vec!["jobs", "clear-queue", "--bmc", url.as_str()],
        vec!["bios", "clear-pending", "--bmc", url.as_str()],
        vec!["power", "cycle", "--bmc", url.as_str(), "--force"],
    ] {
        let out = Run::new(&args).state_dir(&state.0).output().await;
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = format!("{}{}", stdout(&out), stderr(&out));
        assert!(
            err.contains("another rftune run holds the lock of 127.0.0.1:") && err.contains("rftune apply"),
            "{args:?}: {err}"
        );
    }
    let apply = running.await.unwrap();
    assert!(apply.status.success(), "{}", stderr(&apply));
    let s = stats(&fleet, 0);
    assert_eq!(s["resets"], 1, "only the apply's reboot: {s}");
    assert_eq!(
        s["requests"]["by_method"]["DELETE"].as_u64().unwrap_or_default(),
        s["sessions_created"].as_u64().unwrap_or_default(),
        "no job was deleted; every DELETE was a logout: {s}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_scp_import_whose_before_reboot_hook_fails_leaves_its_host_unrebooted() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    let dir = TempDir::new();
    let state = TempDir::new();
    let file = fragment("low-latency", &url, &dir.0).await;
    let f = file.display().to_string();
    let failed = dir.0.join("on-failure.txt");
    let on_failure = format!("echo \"$RFTUNE_PHASE $RFTUNE_PROFILE\" > {}", failed.display());
    let mut args = vec![
        "scp",
        "import",
        &f,
        "--bmc",
        &url,
        "--reboot",
        "force",
        "--before-reboot",
        "echo cannot drain >&2; exit 3",
        "--on-failure",
        &on_failure,
        "-o",
        "json",
    ];
    args.extend(WAITS);
    fleet.hosts()[0].host.stats.reset();
    let out = Run::new(&args).state_dir(&state.0).output().await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let err = doc["hosts"][0]["error"].as_str().unwrap_or_default();
    assert!(
        err.contains("the before-reboot hook failed (exit 3: cannot drain)")
            && err.contains("the host was not rebooted")
            && err.contains("import job"),
        "{err}"
    );
    let s = stats(&fleet, 0);
    assert_eq!(s["resets"], 0, "not rebooted: {s}");
    assert_eq!(
        std::fs::read_to_string(&failed).unwrap().trim(),
        "on-failure low-latency.xml",
        "the on-failure hook ran, told what was imported"
    );
    // The import job was withdrawn: nothing waits for the host's next reboot.
    let jobs = Run::new(&["jobs", "list", "--bmc", &url, "-o", "json"]).output().await;
    let jobs: Value = serde_json::from_str(&stdout(&jobs)).unwrap();
    assert_eq!(jobs["jobs"].as_array().map(Vec::len), Some(0), "{jobs}");
    let log = steps(&state.0);
    let hooks: Vec<&str> = log
        .iter()
        .filter(|r| r.1 == "hook" || r.1 == "unstage")
        .map(|r| r.2.as_str())
        .collect();
    assert_eq!(
        hooks,
        ["error", "ok", "ok"],
        "before-reboot failed, unstaged, on-failure ran: {log:#?}"
    );
}
