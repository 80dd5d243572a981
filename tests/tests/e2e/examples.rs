//! The files under `examples/` load, validate and run as their comments say.

use super::{Run, TempDir, sim, stderr, stdout};
use rftune_experiment::spec::Spec;
use serde_json::Value;
use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

#[test]
fn the_example_experiment_validates_with_its_profiles() {
    let spec = Spec::load(&examples().join("experiment.toml")).unwrap();
    assert_eq!(spec.profiles.len(), 3);
    assert!(
        spec.profiles[2].ends_with("examples/profile.toml"),
        "the custom profile is found beside the file: {:?}",
        spec.profiles
    );
    assert!(spec.benchmarks.storage.is_some() && spec.benchmarks.memory.is_some());
}

#[tokio::test]
async fn the_experiment_help_shows_the_example_file() {
    let out = Run::new(&["experiment", "run", "--help"]).output().await;
    assert!(out.status.success());
    let help = stdout(&out);
    let example = std::fs::read_to_string(examples().join("experiment.toml")).unwrap();
    for line in example
        .lines()
        .filter(|l| l.starts_with('[') || l.starts_with("profiles"))
    {
        assert!(help.contains(line), "{line} missing from the help:\n{help}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_example_inventory_and_profile_diff_emulated_hosts() {
    // The inventory names the ports of `rftune sim --hosts 3 --http`; the test's emulator
    // takes free ports, so only the URLs are swapped.
    let fleet = sim("r7625", 3, |_| {}).await;
    let dir = TempDir::new();
    let mut text = std::fs::read_to_string(examples().join("inventory.toml")).unwrap();
    for (i, h) in fleet.hosts().iter().enumerate() {
        text = text.replace(&format!("http://127.0.0.1:900{}", i + 1), &h.url);
    }
    let inventory = dir.0.join("inventory.toml");
    std::fs::write(&inventory, text).unwrap();
    let profile = examples().join("profile.toml");
    let out = Run::new(&[
        "diff",
        "--inventory",
        inventory.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--tag",
        "rack12",
        "-o",
        "json",
    ])
    .state_dir(&dir.0.join("state"))
    .output()
    .await;
    assert_eq!(out.status.code(), Some(2), "drift: {}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let text = doc.to_string();
    assert!(
        text.contains("r7625-0001") && text.contains("r7625-0002") && !text.contains("r7625-0003"),
        "the tags select hosts: {text}"
    );
    assert!(
        text.contains("LogicalProc"),
        "the profile's own setting is judged: {text}"
    );
    let out = Run::new(&["profiles", "show", profile.to_str().unwrap()])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("hpc-smt-off"));
}
