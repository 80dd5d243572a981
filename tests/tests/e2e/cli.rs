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
    // Without a state directory the demo uses a scratch one and removes it.
    let out = Run::new(&["demo", "--boot-time", "1s"])
        .env_remove("RFTUNE_PASSWORD")
        .env_remove("RFTUNE_STATE_DIR")
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
    // The scratch state directory is gone at the end: the last line does not point into it.
    assert!(text.contains("scratch directory, removed now"), "{text}");
    assert!(!text.contains("Snapshot and audit log: /"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_power_sampling_interval_below_100ms_is_refused_before_connecting() {
    let out = Run::new(&[
        "power",
        "--bmc",
        "http://127.0.0.1:9",
        "--interval",
        "0s",
        "--duration",
        "1s",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("at least 100ms"), "{}", stderr(&out));
}

#[tokio::test]
async fn each_commands_help_lists_global_options_under_their_own_heading() {
    for cmd in [
        &["apply", "--help"][..],
        &["nvme", "plan", "--help"][..],
        &["bench", "storage", "--help"][..],
    ] {
        let out = Run::new(cmd).output().await;
        assert!(out.status.success());
        let text = stdout(&out);
        let global = text
            .find("\nGlobal options:\n")
            .unwrap_or_else(|| panic!("{cmd:?}: {text}"));
        let verbose = text.find("--verbose").unwrap();
        let own = text.find("\nOptions:\n").unwrap();
        assert!(
            own < global && global < verbose,
            "{cmd:?}: globals after the command's own: {text}"
        );
        assert!(!text[..global].contains("--log-format"), "{cmd:?}: {text}");
    }
}

#[tokio::test]
async fn demo_refuses_json_output_instead_of_printing_a_table() {
    let out = Run::new(&["demo", "-o", "json"]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("no JSON output") && stderr(&out).contains("-o json"),
        "{}",
        stderr(&out)
    );
}
