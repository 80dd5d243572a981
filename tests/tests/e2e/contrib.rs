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

/// The exporter Deployment's own arguments start an exporter whose probe path answers, with the
/// password from the Secret only; the test swaps in its inventory and a free port.
#[tokio::test(flavor = "multi_thread")]
async fn the_exporter_deployment_runs_the_exporter_it_describes() {
    use tokio::io::AsyncBufReadExt;
    let Some(python) = python() else { return };
    let docs = yaml(&python, "k8s/exporter.yaml");
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").expect("a Deployment");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        env(container, "RFTUNE_PASSWORD")["valueFrom"]["secretKeyRef"]["key"],
        "password"
    );
    let probe = &container["readinessProbe"]["httpGet"];
    assert_eq!(probe["port"], "metrics");
    let port = &container["ports"][0];
    assert_eq!(port["name"], "metrics");
    let service = docs.iter().find(|d| d["kind"] == "Service").expect("a Service");
    assert_eq!(service["spec"]["ports"][0]["port"], port["containerPort"]);
    let mut args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert!(!args.concat().to_lowercase().contains("password"), "{args:?}");
    assert_eq!(args[0], "exporter");
    let fleet = sim("r7625", 3, |_| {}).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let mut swap = |flag: &str, value: &str| {
        let at = args
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("no {flag}"));
        args[at + 1] = value.to_owned();
    };
    swap("--inventory", inventory.to_str().unwrap());
    swap("--listen", "127.0.0.1:0");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = Run::new(&args).cmd;
    let mut child = cmd.spawn().unwrap();
    drop(child.stdin.take());
    let mut line = String::new();
    tokio::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .await
        .unwrap();
    let addr = line
        .strip_prefix("rftune-exporter: listening http://")
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no listening line: {line:?}"));
    let path = probe["path"].as_str().unwrap();
    let (status, body) = super::exporter::get(addr, path).await;
    assert_eq!(status, 200, "{body}");
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().unwrap().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(std::time::Duration::from_secs(120), child.wait())
        .await
        .expect("the exporter stops after SIGTERM")
        .unwrap();
    assert_eq!(status.code(), Some(143));
}
