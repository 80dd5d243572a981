//! Help, version, completions and argument errors: no BMC needed.

use super::{Run, stderr, stdout};

#[tokio::test]
async fn help_explains_exit_codes_and_credentials() {
    let out = Run::new(&["--help"]).output().await;
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("Exit codes: 0 success"), "{text}");
    assert!(text.contains("RFTUNE_PASSWORD"), "{text}");
    let out = Run::new(&["bios", "get", "--help"]).output().await;
    assert!(stdout(&out).contains("--password-stdin"));
    assert!(!stdout(&out).contains("--password "), "no password flag exists");
}

#[tokio::test]
async fn completions_are_generated() {
    let out = Run::new(&["completions", "bash"]).output().await;
    assert!(out.status.success());
    assert!(stdout(&out).contains("_rftune()"));
}

#[tokio::test]
async fn usage_errors_exit_1_not_the_drift_code() {
    let out = Run::new(&[
        "inventory",
        "--bmc",
        "http://127.0.0.1:1",
        "--insecure",
        "--ca-cert",
        "x.pem",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "usage errors are errors, not drift");
    assert!(stderr(&out).contains("cannot be used with"));
}

#[tokio::test(flavor = "multi_thread")]
async fn demo_tells_the_whole_story_offline() {
    let out = Run::new(&["demo", "--boot-time", "1s"])
        .env_remove("RFTUNE_PASSWORD")
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    for step in [
        "== 1. Inventory",
        "vs low-latency",
        "rebooted once, verified in sync",
        "Completed (PR19)",
        "0 BIOS PATCH, 0 reset",
        "Power at idle",
    ] {
        assert!(text.contains(step), "{step} missing:\n{text}");
    }
}
