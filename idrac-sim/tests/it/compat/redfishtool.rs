//! DMTF's redfishtool (PyPI `redfishtool`, pinned by `.ci/run`) run unchanged against the
//! emulator. Its one-time boot override, `Systems -1 setBootOverride Once Pxe`, reads the
//! system's `Boot`, PATCHes the target with `Enabled` and the current `BootSourceOverrideMode`
//! (with the `If-Match` of its read), and then reads `Boot` from the answer: a 200 (a resource,
//! or a message after which it reads the system again) or a 204. The emulator once answered
//! that PATCH 202, which redfishtool does not handle: it died with `KeyError: 'Boot'`.
//! Without the tool each test prints one `skipped:` line and passes, unless
//! `RFTUNE_REQUIRE_TOOLS=1`.

use idrac_sim::{Fleet, SimConfig};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// The `redfishtool` of a venv with PyPI's package.
fn require_redfishtool() -> Option<PathBuf> {
    rftune_tests::require_tool(
        "redfishtool",
        "RFTUNE_REDFISHTOOL",
        "set RFTUNE_REDFISHTOOL to the redfishtool of a venv with PyPI's redfishtool; .ci/run installs one",
    )
}

/// Runs redfishtool with `args` against host 0 over HTTPS (redfishtool does not check
/// certificates), the emulator's test account given in a config file rather than argv; its
/// exit code and output.
async fn run(tool: &std::path::Path, fleet: &Fleet, args: &[&str]) -> (Option<i32>, String) {
    let dir = rftune_tests::TempDir::new();
    let config = dir.0.join("redfishtool.json");
    std::fs::write(&config, r#"{"user": "root", "password": "calvin"}"#).unwrap();
    super::finished(
        tokio::process::Command::new(tool)
            .args(["-r", &fleet.hosts()[0].addr.to_string(), "-S", "Always", "-c"])
            .arg(&config)
            .args(args)
            // requests would let a CA bundle in the environment override redfishtool's verify=False.
            .env_remove("REQUESTS_CA_BUNDLE")
            .env_remove("CURL_CA_BUNDLE"),
        Duration::from_secs(120),
    )
    .await
}

#[tokio::test]
async fn redfishtool_sets_a_one_time_pxe_boot_and_prints_the_boot_it_set() {
    let Some(tool) = require_redfishtool() else { return };
    let fleet = Fleet::start(SimConfig::default()).await.unwrap();
    let (code, text) = run(&tool, &fleet, &["Systems", "-1", "setBootOverride", "Once", "Pxe"]).await;
    assert!(!text.contains("Traceback"), "{text}");
    assert_eq!(code, Some(0), "{text}");
    // What it prints is the system's Boot after the PATCH.
    let start = text.find('{').unwrap_or_else(|| panic!("no JSON in {text}"));
    let printed: Value = serde_json::from_str(&text[start..]).unwrap();
    assert_eq!(printed["Boot"]["BootSourceOverrideTarget"], "Pxe", "{text}");
    assert_eq!(printed["Boot"]["BootSourceOverrideEnabled"], "Once", "{text}");
    let host = &fleet.hosts()[0].host;
    let system = host.system(&serde_json::json!({"Boot": {}}));
    assert_eq!(system["Boot"]["BootSourceOverrideTarget"], "Pxe");
    // The mode it sends along queues a BIOS job on iDRAC9 (ironcore-dev/metal-operator issue 81).
    assert_eq!(host.stats.to_json("x")["jobs_created"], 1);
    eprintln!(
        "flow redfishtool setBootOverride Once Pxe: passed, {} requests",
        host.stats.total()
    );
}
