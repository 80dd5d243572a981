//! `rftune experiment` with the OS reached locally: two profiles on two emulated hosts, a host
//! whose apply fails, a kill in the middle and a resume.

use super::{Run, TempDir, binary, sim, stats, stderr, stdout};
use serde_json::Value;

fn spec(dir: &std::path::Path, urls: &[String], repeats: u32) -> std::path::PathBuf {
    let mut text = format!(
        "profiles = [\"performance\", \"low-latency\"]\nrepeats = {repeats}\norder = \"interleaved\"\nreboot = \"force\"\n\n\
         [timeouts]\ngraceful = \"5s\"\njob = \"5s\"\nboot = \"20s\"\nos = \"10s\"\nbench = \"120s\"\n\n\
         [benchmarks.memory]\narray_mib = 2\nthreads = 1\niterations = 2\n"
    );
    for (i, u) in urls.iter().enumerate() {
        text.push_str(&format!(
            "\n[[hosts]]\nname = \"host{i}\"\nbmc = \"{u}\"\nos = {{ transport = \"local\" }}\n"
        ));
    }
    let file = dir.join("ab.toml");
    std::fs::write(&file, text).unwrap();
    file
}

#[tokio::test(flavor = "multi_thread")]
async fn two_profiles_on_two_hosts_with_one_failing_apply() {
    // Host 1's BIOS jobs get stuck (PR30): its steps are skipped, never benchmarked.
    let fleet = sim("r7525", 2, |c| c.faults = vec!["stuck-job@2".parse().unwrap()]).await;
    let dir = TempDir::new();
    let urls: Vec<String> = fleet.hosts().iter().map(|h| h.url.clone()).collect();
    spec(&dir.0, &urls, 1);
    // Run from the file's directory with a relative path: results land once under ab-results/,
    // and the report reads them back.
    let out = Run::new(&["experiment", "run", "ab.toml"])
        .current_dir(&dir.0)
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert!(
        !dir.0.join("ab-results/ab-results").exists(),
        "the output dir is not prefixed twice"
    );
    assert!(
        stderr(&out).contains("repeats = 1: each profile runs once per host"),
        "one repeat is warned about up front: {}",
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("BOOTSTRAP 95% (%)") && text.contains("WELCH 95% (%)") && text.contains("too few runs"),
        "both intervals in percent, and one run gives no verdict: {text}"
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "some steps were skipped: {}{}",
        stdout(&out),
        stderr(&out)
    );
    let results = dir.0.join("ab-results");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(results.join("state.json")).unwrap()).unwrap();
    let host0 = &state["hosts"]["host0"]["steps"];
    assert_eq!(host0.as_array().unwrap().len(), 2);
    assert!(
        host0.as_array().unwrap().iter().all(|s| s["outcome"] == "done"),
        "{host0}"
    );
    assert_eq!(
        host0[1]["bios"]["SysProfile"], "Custom",
        "the BIOS values in force are recorded"
    );
    let host1 = &state["hosts"]["host1"]["steps"];
    assert!(
        host1
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["outcome"] == "skipped" && s["results"] == serde_json::json!([])),
        "{host1}"
    );
    assert!(
        state["failures"][0]["reason"].as_str().unwrap().contains("PR30"),
        "{}",
        state["failures"]
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("experiment.json")).unwrap()).unwrap();
    assert_eq!(report["schema"], "rftune.experiment/v1");
    assert!(report.to_string().contains("gbs_per_watt"), "perf/W is compared too");
    let html = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("low-latency"),
        "self-contained report with charts"
    );
    // The report can be rebuilt from the directory alone.
    let out = Run::new(&["experiment", "report", results.to_str().unwrap(), "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_experiment_resumes_after_its_last_finished_step() {
    let fleet = sim("r7625", 1, |c| c.boot_time = std::time::Duration::from_millis(1500)).await;
    let dir = TempDir::new();
    let file = spec(&dir.0, &[fleet.hosts()[0].url.clone()], 2);
    let results = dir.0.join("ab-results");
    let mut child = tokio::process::Command::new(binary())
        .args(["experiment", "run", file.to_str().unwrap()])
        .env("RFTUNE_PASSWORD", "calvin")
        .env("RFTUNE_STATE_DIR", dir.0.join("state"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let finished = |results: &std::path::Path| -> usize {
        std::fs::read_to_string(results.join("state.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["hosts"]["host0"]["steps"].as_array().map(Vec::len))
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while finished(&results) < 1 {
        assert!(std::time::Instant::now() < deadline, "no step finished");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    child.kill().await.unwrap();
    let done_before = finished(&results);
    assert!(done_before < 4, "killed in the middle");
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "run refuses a started experiment");
    assert!(stderr(&out).contains("experiment resume"), "{}", stderr(&out));
    let out = Run::new(&["experiment", "resume", results.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    let failures = std::fs::read_to_string(results.join("state.json")).unwrap_or_default();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}\n{failures}",
        stdout(&out),
        stderr(&out)
    );
    let state: Value = serde_json::from_str(&std::fs::read_to_string(results.join("state.json")).unwrap()).unwrap();
    let steps = state["hosts"]["host0"]["steps"].as_array().unwrap().clone();
    let indices: Vec<u64> = steps.iter().map(|s| s["step"]["index"].as_u64().unwrap()).collect();
    assert_eq!(indices, vec![0, 1, 2, 3], "every step once, in order");
}

#[tokio::test(flavor = "multi_thread")]
async fn benchmarks_run_on_the_host_over_ssh() {
    let ssh_client = rftune_tests::on_path("ssh");
    if !rftune_tests::sshd_available()
        || !rftune_tests::tool_available("ssh", ssh_client, "apt-get install openssh-client; .ci/run installs it")
    {
        return;
    }
    let fleet = sim("r7625", 1, |_| {}).await;
    let dir = TempDir::new();
    let ssh = super::bench_clients::sshd(&dir.0.join("sshd"), "127.0.0.1", "").await;
    let client_config = super::bench_clients::ssh_config(&dir.0, &[("bench-host", &ssh)]);
    let text = format!(
        "profiles = [\"performance\", \"low-latency\"]\nrepeats = 1\nreboot = \"force\"\n\n\
         [timeouts]\ngraceful = \"5s\"\njob = \"20s\"\nboot = \"20s\"\nos = \"20s\"\nbench = \"120s\"\n\n\
         [benchmarks.memory]\narray_mib = 2\nthreads = 1\niterations = 2\n\n\
         [[hosts]]\nname = \"remote\"\nbmc = \"{}\"\nos = {{ transport = \"ssh\", target = \"bench-host\", port = {}, config = \"{}\", rftune = \"{}\" }}\n",
        fleet.hosts()[0].url,
        ssh.port,
        client_config.display(),
        binary().display()
    );
    let file = dir.0.join("ssh.toml");
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let results = dir.0.join("ssh-results");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(results.join("state.json")).unwrap()).unwrap();
    let steps = state["hosts"]["remote"]["steps"].as_array().unwrap().clone();
    assert_eq!(steps.len(), 2);
    for s in &steps {
        assert_eq!(s["outcome"], "done", "{s}");
        let file = s["results"][0].as_str().unwrap();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(doc["schema"], "rftune.bench/v1", "copied back over ssh");
        assert!(s["os"]["idle_states"].is_array(), "the OS view came over ssh: {s}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_rftune_on_the_host_fio_runs_directly_on_files_only() {
    if !rftune_tests::fio_available() {
        return;
    }
    let fleet = sim("r7625", 1, |_| {}).await;
    let dir = TempDir::new();
    let target = dir.0.join("fio.dat");
    let write = |name: &str, target: &str| {
        let text = format!(
            "profiles = [\"performance\", \"low-latency\"]\nrepeats = 1\nreboot = \"force\"\n\n\
             [timeouts]\ngraceful = \"5s\"\njob = \"20s\"\nboot = \"20s\"\nos = \"10s\"\nbench = \"120s\"\n\n\
             [benchmarks.storage]\ntarget = \"{target}\"\nsize = \"16M\"\nruntime = \"1s\"\nramp = \"0s\"\ntests = \"randread,randwrite\"\n\n\
             [[hosts]]\nname = \"bare\"\nbmc = \"{}\"\nos = {{ transport = \"local\", rftune = \"/nonexistent/rftune\" }}\n",
            fleet.hosts()[0].url
        );
        let file = dir.0.join(format!("{name}.toml"));
        std::fs::write(&file, text).unwrap();
        file
    };
    let file = write("bare", target.to_str().unwrap());
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.0.join("bare-results/state.json")).unwrap()).unwrap();
    let step = &state["hosts"]["bare"]["steps"][0];
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(step["results"][0].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(doc["schema"], "rftune.bench/v1");
    assert!(
        doc["power_caveat"].as_str().unwrap().contains("fio run directly"),
        "{}",
        doc["power_caveat"]
    );
    let tests = doc["storage"]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2);
    assert!(
        std::fs::read(&target)
            .unwrap()
            .starts_with(b"rftune storage benchmark target v1\n"),
        "the step created the target with rftune's header, and fio (run twice) kept it"
    );
    assert!(
        tests
            .iter()
            .all(|t| t["iops"].as_f64().unwrap() > 0.0 && t["power_w"].as_f64().is_some()),
        "{tests:?}"
    );
    // A block device is refused without rftune's safety checks: the step is skipped, not run.
    let file = write("device", "/dev/null");
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let state = std::fs::read_to_string(dir.0.join("device-results/state.json")).unwrap();
    assert!(state.contains("experiments run fio only on files"), "{state}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_rftune_on_the_host_an_existing_user_file_is_not_benchmarked() {
    if !rftune_tests::fio_available() {
        return;
    }
    let fleet = sim("r7625", 1, |_| {}).await;
    let dir = TempDir::new();
    let target = dir.0.join("precious.db");
    let data: Vec<u8> = (0..64 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&target, &data).unwrap();
    let text = format!(
        "profiles = [\"performance\", \"low-latency\"]\nrepeats = 1\nreboot = \"force\"\n\n\
         [timeouts]\ngraceful = \"5s\"\njob = \"20s\"\nboot = \"20s\"\nos = \"10s\"\nbench = \"120s\"\n\n\
         [benchmarks.storage]\ntarget = \"{}\"\nsize = \"16M\"\nruntime = \"1s\"\nramp = \"0s\"\ntests = \"randwrite\"\n\n\
         [[hosts]]\nname = \"bare\"\nbmc = \"{}\"\nos = {{ transport = \"local\", rftune = \"/nonexistent/rftune\" }}\n",
        target.display(),
        fleet.hosts()[0].url
    );
    let file = dir.0.join("user-file.toml");
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert!(std::fs::read(&target).unwrap() == data, "the user's file was changed");
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let state = std::fs::read_to_string(dir.0.join("user-file-results/state.json")).unwrap();
    assert!(state.contains("not created by rftune"), "{state}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_is_set_up_once_for_all_its_steps() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let dir = TempDir::new();
    let file = spec(&dir.0, &[fleet.hosts()[0].url.clone()], 2);
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.0.join("ab-results/state.json")).unwrap()).unwrap();
    let steps = state["hosts"]["host0"]["steps"].as_array().unwrap().clone();
    assert_eq!(steps.len(), 4);
    let mut readings = 0;
    for s in &steps {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(s["results"][0].as_str().unwrap()).unwrap()).unwrap();
        readings += doc["memory"]["power_trace"].as_array().unwrap().len() as u64;
    }
    // The host's own answers in the preflight told its backend (the service root is not read),
    // and one EnvironmentMetrics read chooses the power sensor for all four steps; every other
    // read is a reading in a document.
    let by_path = stats(&fleet, 0)["requests"]["by_path"].clone();
    assert_eq!(by_path["GET /redfish/v1"], Value::Null, "{by_path}");
    assert_eq!(
        by_path["GET /redfish/v1/Chassis/System.Embedded.1/EnvironmentMetrics"].as_u64(),
        Some(1 + readings),
        "{by_path}"
    );
    // One audit run id for the whole experiment, applies included.
    let audit = std::fs::read_to_string(dir.0.join("state/audit.log")).unwrap();
    let runs: std::collections::BTreeSet<String> = audit
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["run"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(runs.len(), 1, "{audit}");
    assert!(
        audit.contains("\"step\":\"stage\"") && audit.contains("experiment:step"),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_that_does_not_load_stops_the_run_before_anything_is_written() {
    let dir = TempDir::new();
    let file = spec(&dir.0, &["http://127.0.0.1:1".to_owned()], 1);
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"low-latency\"", "\"low-latency-typo\"");
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("low-latency-typo"), "{}", stderr(&out));
    assert!(
        !dir.0.join("ab-results/state.json").exists(),
        "nothing to resume: the experiment never started"
    );
}

/// Requests that change a host: any PATCH, POST (resets, jobs) or DELETE the emulator counted.
fn writes(fleet: &idrac_sim::Fleet, host: usize) -> Vec<String> {
    let by_path = stats(fleet, host)["requests"]["by_path"].clone();
    by_path
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !k.starts_with("GET ") && !k.starts_with("HEAD ") && !k.contains("/Sessions"))
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_typo_in_the_second_profile_fails_with_its_line_before_any_host_is_touched() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let dir = TempDir::new();
    let file = spec(&dir.0, &[fleet.hosts()[0].url.clone()], 1);
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"low-latency\"", "\"low-latncy\"");
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("ab.toml") && err.contains("line 1") && err.contains("low-latncy") && err.contains("low-latency"),
        "the file, the line, the typo and a suggestion: {err}"
    );
    assert_eq!(writes(&fleet, 0), Vec::<String>::new(), "nothing reached the BMC");
    assert!(!dir.0.join("ab-results/state.json").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_the_hosts_registry_refuses_stops_the_run_before_the_baseline_reboots_anything() {
    // The second profile is a file of ours (relative to the experiment file) asking for a value
    // the R7625's registry does not offer: only the host's registry can tell.
    let fleet = sim("r7625", 2, |_| {}).await;
    let dir = TempDir::new();
    let urls: Vec<String> = fleet.hosts().iter().map(|h| h.url.clone()).collect();
    let file = spec(&dir.0, &urls, 1);
    std::fs::write(
        dir.0.join("ours.toml"),
        "name = \"ours\"\ndescription = \"A value no registry offers\"\nextends = \"performance\"\n\n\
         [bios.SysProfile]\nvalue = \"TurboEverything\"\nwhy = \"A test.\"\nsource = \"dell-c6615-note\"\nconfidence = \"inferred\"\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"low-latency\"", "\"ours.toml\"");
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["experiment", "run", "ab.toml"])
        .current_dir(&dir.0)
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("host0") && err.contains("host1") && err.contains("SysProfile") && err.contains("TurboEverything"),
        "every host and the setting it refuses: {err}"
    );
    for host in 0..2 {
        assert_eq!(
            writes(&fleet, host),
            Vec::<String>::new(),
            "nothing reached host {host}"
        );
    }
    assert!(!dir.0.join("ab-results/state.json").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn benchmark_options_are_checked_with_their_lines_before_anything_runs() {
    let dir = TempDir::new();
    let file = spec(&dir.0, &["http://127.0.0.1:1".to_owned()], 1);
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "[benchmarks.memory]",
        "[benchmarks.storage]\ntarget = \"rftune.fio\"\ntests = \"randred\"\nruntime = \"10\"\n\n[benchmarks.memory]",
    );
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["experiment", "run", file.to_str().unwrap()])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    for needle in [
        "line 14: benchmarks.storage.target",
        "line 15: benchmarks.storage.tests: unknown test \"randred\"",
        "line 16: benchmarks.storage.runtime",
        "give a unit",
    ] {
        assert!(err.contains(needle), "{needle} missing from: {err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_cannot_be_reached_is_named_once_in_its_error() {
    let dir = TempDir::new();
    let file = spec(&dir.0, &["http://127.0.0.1:1".to_owned()], 2);
    let out = Run::new(&["experiment", "run", file.to_str().unwrap(), "--retry-for", "1s"])
        .state_dir(&dir.0.join("state"))
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("host0: logging in"), "{err}");
    assert!(!err.contains("host0: host0:"), "the host is named once: {err}");
}
