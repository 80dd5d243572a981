//! The job-engine examples under `contrib/`: valid YAML, consistent, and the Kubernetes Indexed
//! Job's own script run for every index against an emulated fleet, then merged.

use super::{Run, TempDir, sim, stderr, stdout};
use serde_json::Value;
use std::path::PathBuf;

fn contrib(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../contrib").join(path)
}

/// A Python with PyYAML: `RFTUNE_PYTHON` (.ci/run points it at its venv), else `python3`.
fn python() -> Option<String> {
    let python = std::env::var("RFTUNE_PYTHON").unwrap_or_else(|_| "python3".into());
    let found = std::process::Command::new(&python)
        .args(["-c", "import yaml"])
        .output()
        .is_ok_and(|o| o.status.success());
    rftune_tests::tool_available("PyYAML", found, "pip install pyyaml; .ci/run installs it").then_some(python)
}

/// Every document of a YAML file, through PyYAML's safe loader, as JSON.
fn yaml(python: &str, path: &str) -> Vec<Value> {
    let file = contrib(path);
    let out = std::process::Command::new(python)
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn env<'a>(container: &'a Value, name: &str) -> &'a Value {
    container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in the container's env"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_indexed_job_runs_its_shards_and_they_merge_into_the_fleet() {
    let Some(python) = python() else { return };
    let docs = yaml(&python, "k8s/indexed-job.yaml");
    let job = docs.iter().find(|d| d["kind"] == "Job").expect("a Job");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let shards: u64 = env(container, "RFTUNE_SHARDS")["value"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(job["spec"]["completions"], shards, "one pod per shard");
    assert_eq!(job["spec"]["parallelism"], shards);
    // The password comes from the Secret, and never appears in the command.
    assert_eq!(
        env(container, "RFTUNE_PASSWORD")["valueFrom"]["secretKeyRef"]["key"],
        "password"
    );
    let command: Vec<&str> = container["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(!command.concat().to_lowercase().contains("password"), "{command:?}");
    assert_eq!(command[..2], ["/bin/sh", "-c"]);
    let script = command[2];

    // Each pod's script, as the Job runs it (JOB_COMPLETION_INDEX 0..N), against 10 emulated
    // iDRACs; the results directory and inventory are the test's.
    let fleet = sim("r7625", 10, |_| {}).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let bin_dir = super::binary().parent().unwrap().to_owned();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    for index in 0..shards {
        let out = Run::command(tokio::process::Command::new("/bin/sh"), &["-c", script])
            .env("PATH", path.to_str().unwrap())
            .env("JOB_COMPLETION_INDEX", &index.to_string())
            .env("RFTUNE_SHARDS", &shards.to_string())
            .env("RFTUNE_INVENTORY_FILE", inventory.to_str().unwrap())
            .env("RFTUNE_PROFILE", "performance")
            .env("RESULTS_DIR", dir.0.to_str().unwrap())
            .output()
            .await;
        assert_eq!(out.status.code(), Some(0), "pod {index}: {}", stderr(&out));
    }
    let files: Vec<String> = (1..=shards).map(|k| format!("shard-{k}-of-{shards}.jsonl")).collect();
    let mut args = vec!["merge", "-o", "json"];
    args.extend(files.iter().map(String::as_str));
    let out = Run::new(&args).current_dir(&dir.0).output().await;
    assert_eq!(out.status.code(), Some(2), "the fleet drifts: {}", stderr(&out));
    let merged: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(merged["summary"]["hosts"], 10, "{}", merged["summary"]);
    assert_eq!(merged["summary"]["drift"], 10);
}

#[test]
fn the_awx_objects_wire_every_shard_to_the_merge() {
    let Some(python) = python() else { return };
    let play = &yaml(&python, "awx/job-template.yaml")[0][0];
    let tasks = play["tasks"].as_array().unwrap();
    let module = |name: &str| -> Vec<&Value> { tasks.iter().filter_map(|t| t.get(name)).collect() };
    // The credential reaches rftune by environment only.
    let injectors = &module("awx.awx.credential_type")[0]["injectors"];
    assert!(
        injectors["env"]["RFTUNE_PASSWORD"]
            .as_str()
            .unwrap()
            .contains("password")
    );
    assert!(injectors.get("extra_vars").is_none());
    // Shard nodes run the shard template with K/N and lead to the merge node.
    let nodes = module("awx.awx.workflow_job_template_node");
    let shard = nodes
        .iter()
        .find(|n| n["unified_job_template"] == "rftune diff shard")
        .unwrap();
    assert_eq!(shard["extra_data"]["rftune_shard"], "{{ item }}/{{ rftune_shards }}");
    assert_eq!(shard["success_nodes"], serde_json::json!(["merge"]));
    let merge = nodes.iter().find(|n| n["identifier"] == "merge").unwrap();
    assert_eq!(merge["all_parents_must_converge"], true);
    // The templates' playbooks exist and parse.
    for t in module("awx.awx.job_template") {
        let playbook = t["playbook"].as_str().unwrap().trim_start_matches("contrib/");
        let plays = yaml(&python, playbook);
        assert!(
            plays[0][0]["tasks"].as_array().is_some_and(|t| !t.is_empty()),
            "{playbook}"
        );
    }
}
