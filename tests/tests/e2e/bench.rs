//! `rftune bench storage|memory|compare` and `rftune nvme plan` through the binary: a short real
//! fio run on a file, STREAM on small arrays with power from the emulator, refusals, and a fake
//! nvme-cli on PATH.

use super::{Run, TempDir, binary, client, sim, stats, stderr, stdout};

/// Under target/: tmpfs (often /tmp) refuses the O_DIRECT that fio's direct=1 needs.
fn work_dir() -> TempDir {
    TempDir::new_in(env!("CARGO_TARGET_TMPDIR"))
}

#[tokio::test(flavor = "multi_thread")]
async fn storage_suite_on_a_file_writes_json_csv_and_html_and_compares() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = work_dir();
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    let target = dir.0.join("bench.dat");
    let out_a = dir.0.join("a");
    let out = Run::new(&[
        "bench",
        "storage",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "8M",
        "--runtime",
        "1s",
        "--ramp",
        "0s",
        "--tests",
        "all",
        "--bmc",
        &url,
        "--idle",
        "0s",
        "--power-interval",
        "250ms",
        "--label",
        "baseline",
        "--out",
        out_a.to_str().unwrap(),
        "-o",
        "json",
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    // Off a terminal (stderr is a pipe here), one line per test, not minutes of silence.
    let err = stderr(&out);
    let steps: Vec<&str> = err.lines().filter(|l| l.ends_with(", run 1/1")).collect();
    assert_eq!(
        steps,
        [
            "rftune: seqread (1/7), run 1/1",
            "rftune: seqwrite (2/7), run 1/1",
            "rftune: randread (3/7), run 1/1",
            "rftune: randwrite (4/7), run 1/1",
            "rftune: randrw70 (5/7), run 1/1",
            "rftune: randrw50 (6/7), run 1/1",
            "rftune: randrw30 (7/7), run 1/1"
        ],
        "{}",
        stderr(&out)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["schema"], "rftune.bench/v1");
    assert_eq!(doc["kind"], "storage");
    assert_eq!(doc["valid"], true, "{}", doc["problems"]);
    assert_eq!(doc["bmc"]["model"], "PowerEdge R7625");
    assert!(doc["bmc"]["bios_attributes"]["SysProfile"].is_string());
    assert!(doc["host"]["logical_cpus"].as_u64().unwrap() >= 1);
    assert!(doc["storage"]["fio_version"].as_str().unwrap().starts_with("fio-"));
    let tests = doc["storage"]["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "seqread",
            "seqwrite",
            "randread",
            "randwrite",
            "randrw70",
            "randrw50",
            "randrw30"
        ]
    );
    for t in tests {
        assert!(t["iops"].as_f64().unwrap() > 0.0, "{t}");
        assert!(
            t["power_w"].as_f64().unwrap() > 0.0 && t["iops_per_watt"].as_f64().unwrap() > 0.0,
            "{t}"
        );
        assert!(t["runs"][0]["power_trace"].as_array().unwrap().len() >= 2, "{t}");
    }
    assert!(tests[4]["runs"][0]["metrics"]["read_lat"]["p99_us"].as_f64().is_some());
    assert!(
        tests[4]["runs"][0]["metrics"]["write_lat"]["p99_9_us"]
            .as_f64()
            .is_some()
    );
    for f in ["bench.json", "bench.csv", "report.html"] {
        assert!(out_a.join(f).exists(), "{f}");
    }
    let html = std::fs::read_to_string(out_a.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("Performance per watt"));
    let csv = std::fs::read_to_string(out_a.join("bench.csv")).unwrap();
    assert!(csv.contains("baseline,") && csv.contains(",randread,iops,"), "{csv}");

    // A second, table-output run without a BMC, then compare the two.
    let out_b = dir.0.join("b");
    let out = Run::new(&[
        "bench",
        "storage",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "8M",
        "--runtime",
        "1s",
        "--ramp",
        "0s",
        "--tests",
        "randread",
        "--repeat",
        "2",
        "--out",
        out_b.to_str().unwrap(),
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("randread"), "{}", stdout(&out));
    let a = out_a.join("bench.json");
    let b = out_b.join("bench.json");
    let c = compare_json(&a, &b, &[]).await;
    let iops = c["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["test"] == "randread" && x["metric"] == "iops")
        .unwrap();
    let (va, vb) = (iops["a"].as_f64().unwrap(), iops["b"].as_f64().unwrap());
    assert!(
        (iops["percent"].as_f64().unwrap() - (vb - va) / va * 100.0).abs() < 1e-6,
        "{iops}"
    );
    let table = Run::new(&["bench", "compare", a.to_str().unwrap(), b.to_str().unwrap()])
        .output()
        .await;
    assert!(stdout(&table).contains("iops (IO/s)"), "{}", stdout(&table));
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_bench_reports_stream_and_peak_from_the_dimm_inventory() {
    let dir = work_dir();
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    let out = Run::new(&[
        "bench",
        "memory",
        "--array-mib",
        "8",
        "--iterations",
        "3",
        "--bmc",
        &url,
        "--idle",
        "0s",
        "--out",
        dir.0.to_str().unwrap(),
        "-o",
        "json",
    ])
    .output()
    .await;
    // 8 MiB arrays are smaller than 4× any real LLC: a warning (the size was overridden), not
    // a failure.
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let m = &doc["memory"];
    assert_eq!(m["runs"][0]["validation"]["passed"], true);
    assert!(m["gbs"]["Triad"].as_f64().unwrap() > 0.0);
    let problems: Vec<String> = doc["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    // The emulated R7625 is not the machine this test runs on: its DIMMs score nothing here
    // (unless SMBIOS says this is that very R7625, when the peak is its 24 DDR5-4800 channels).
    let system: redfish_client::resources::computer_system::ComputerSystem =
        client(&url).get("/redfish/v1/Systems/System.Embedded.1").await.unwrap();
    let bmc = host_bench::host::MachineId {
        serial: doc["bmc"]["service_tag"].as_str().map(str::to_owned),
        uuid: system.uuid,
    };
    match host_bench::host::MachineId::local().same_machine(&bmc) {
        host_bench::host::SameMachine::Yes(_) => {
            assert_eq!(m["peak"]["source"], "dimm-inventory");
            assert!(
                (m["peak"]["gbs"].as_f64().unwrap() - 2.0 * 12.0 * 4800.0 * 8.0 / 1000.0).abs() < 1e-6,
                "{}",
                m["peak"]
            );
        }
        _ => {
            assert!(m["peak"].is_null() && m["triad_fraction_of_peak"].is_null(), "{m}");
            assert!(
                problems
                    .iter()
                    .any(|p| p.contains("no % of peak") && p.contains("--peak-gbs"))
                    && problems.iter().any(|p| p.contains("manages this host")),
                "{problems:?}"
            );
        }
    }
    // A run of well under a second spans less than one refresh of the BMC's power sensor.
    assert!(
        problems
            .iter()
            .any(|p| p.contains("power is unreliable") && p.contains("sensor periods")),
        "{problems:?}"
    );
    if m["llc_bytes"].as_u64().is_some_and(|llc| llc > 2 << 20) {
        let problems = doc["problems"].as_array().unwrap();
        assert!(
            problems.iter().any(|p| p.as_str().unwrap().contains("4×")),
            "{problems:?}"
        );
    }
    assert!(dir.0.join("report.html").exists());
    // The BMC's meter is built once per run: one EnvironmentMetrics read chooses the sensor, and
    // every other one is a reading in the document (no idle baseline with --idle 0s).
    let readings = m["power_trace"].as_array().unwrap().len() as u64;
    assert!(readings >= 2, "{m}");
    let environment_reads: u64 = stats(&fleet, 0)["requests"]["by_path"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("GET ") && k.ends_with("/EnvironmentMetrics"))
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert_eq!(environment_reads, 1 + readings, "sensor choice + readings");

    // --peak-gbs below the measured Triad makes the result implausible: exit 1.
    let out = Run::new(&[
        "bench",
        "memory",
        "--array-mib",
        "8",
        "--iterations",
        "2",
        "--peak-gbs",
        "0.001",
        "--out",
        dir.0.to_str().unwrap(),
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("implausible"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn storage_refuses_unknown_tests_and_writable_devices_without_consent() {
    let out = Run::new(&["bench", "storage", "--target", "/tmp/x", "--tests", "seqread,bogus"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unknown test \"bogus\""), "{}", stderr(&out));
    let out = Run::new(&["bench", "storage", "--target", "/tmp/x", "--destroy-data"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1), "--destroy-data requires --confirm-serial");
    // Device refusals are tested on pure functions and fake files in host-bench: no test
    // opens a real block device.
}

/// A fake `fio` first on PATH, returned as the PATH value: it appends its arguments to
/// `fio-calls.log`, answers `--version`, and for a run writes 4 KiB at `--offset` of its
/// `--filename` (creating the file, as the real fio lays one out), then fails.
fn fake_fio(dir: &TempDir) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.0.join("fake-fio-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        r#"#!/bin/sh
echo "$*" >> '{log}'
if [ "$1" = "--version" ]; then echo fio-3.33; exit 0; fi
file=; offset=0
for a in "$@"; do
  case "$a" in
    --filename=*) file="${{a#--filename=}}" ;;
    --offset=*) offset="${{a#--offset=}}" ;;
  esac
done
if [ -n "$file" ]; then
  head -c 4096 /dev/zero | tr '\0' X | dd of="$file" bs=4096 seek=$((offset / 4096)) count=1 conv=notrunc status=none
fi
echo "fio: simulated failure" >&2
exit 1
"#,
        log = dir.0.join("fio-calls.log").display()
    );
    let path = bin.join("fio");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// The fake fio's invocations other than `--version`: the runs that could have written.
fn fio_runs(dir: &TempDir) -> Vec<String> {
    std::fs::read_to_string(dir.0.join("fio-calls.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| *l != "--version")
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_size_with_an_unknown_unit_is_refused_before_fio_runs() {
    let dir = work_dir();
    let path = fake_fio(&dir);
    let target = dir.0.join("bench.dat");
    let out = Run::new(&[
        "bench",
        "storage",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "64Q",
        "--runtime",
        "1s",
        "--ramp",
        "0s",
        "--out",
        dir.0.join("out").to_str().unwrap(),
    ])
    .env("PATH", &path)
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("64Q") && err.contains("unknown unit"), "{err}");
    assert!(
        err.contains("KiB") && err.contains('G'),
        "the error lists the units: {err}"
    );
    assert_eq!(fio_runs(&dir), Vec::<String>::new(), "fio never ran");
    assert!(!target.exists(), "nothing was created");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bare_number_is_not_taken_for_seconds() {
    let dir = work_dir();
    let path = fake_fio(&dir);
    let out = Run::new(&[
        "bench",
        "storage",
        "--target",
        dir.0.join("bench.dat").to_str().unwrap(),
        "--size",
        "8M",
        "--runtime",
        "10",
    ])
    .env("PATH", &path)
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("\"10\"") && err.contains("10s"),
        "the error shows how to write it: {err}"
    );
    assert_eq!(fio_runs(&dir), Vec::<String>::new(), "fio never ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_path_under_dev_is_refused_and_nothing_is_created_there() {
    let dir = work_dir();
    let path = fake_fio(&dir);
    let target = std::path::PathBuf::from(format!("/dev/rftune-e2e-absent-{}", std::process::id()));
    let out = Run::new(&[
        "bench",
        "storage",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "8M",
        "--out",
        dir.0.join("out").to_str().unwrap(),
    ])
    .env("PATH", &path)
    .output()
    .await;
    let created = target.exists();
    let _ = std::fs::remove_file(&target);
    assert!(!created, "a regular file was created under /dev");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(target.to_str().unwrap()) && err.contains("existing block device"),
        "{err}"
    );
    assert_eq!(fio_runs(&dir), Vec::<String>::new(), "fio never ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_parent_directory_is_refused_not_created() {
    let dir = work_dir();
    let path = fake_fio(&dir);
    let target = dir.0.join("no").join("such").join("x.fio");
    let out = Run::new(&[
        "bench",
        "storage",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "8M",
        "--out",
        dir.0.join("out").to_str().unwrap(),
    ])
    .env("PATH", &path)
    .output()
    .await;
    assert!(!dir.0.join("no").exists(), "rftune created directories for the target");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let parent = dir.0.join("no").join("such");
    assert!(
        err.contains(&format!("{} does not exist", parent.display())) && err.contains("create it first"),
        "{err}"
    );
    assert_eq!(fio_runs(&dir), Vec::<String>::new(), "fio never ran");
}

/// Bytes no benchmark may change: a user's file with a recognisable pattern.
fn user_data() -> Vec<u8> {
    (0..256 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_existing_user_file_is_refused_without_overwrite() {
    let dir = work_dir();
    let path = fake_fio(&dir);
    let target = dir.0.join("checksummed.bin");
    std::fs::write(&target, user_data()).unwrap();
    let out = Run::new(&[
        "bench",
        "storage",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "8M",
        "--runtime",
        "1s",
        "--ramp",
        "0s",
        "--out",
        dir.0.join("out").to_str().unwrap(),
    ])
    .env("PATH", &path)
    .output()
    .await;
    assert!(
        std::fs::read(&target).unwrap() == user_data(),
        "the user's file was changed"
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(target.to_str().unwrap()) && err.contains("not created by rftune") && err.contains("--overwrite"),
        "{err}"
    );
    assert_eq!(fio_runs(&dir), Vec::<String>::new(), "fio never ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn overwrite_takes_over_a_user_file_and_fio_keeps_rftunes_mark() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = work_dir();
    let target = dir.0.join("scratch.bin");
    std::fs::write(&target, user_data()).unwrap();
    let run = |out_dir: &str, extra: Option<&str>| {
        let out_dir = dir.0.join(out_dir);
        let mut args = vec![
            "bench",
            "storage",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8M",
            "--runtime",
            "1s",
            "--ramp",
            "0s",
            "--tests",
            "seqwrite,randwrite",
            "--out",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
        args.push(out_dir.to_str().unwrap().to_owned());
        args.extend(extra.map(str::to_owned));
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            Run::new(&args).output().await
        }
    };
    let out = run("first", Some("--overwrite")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let head = std::fs::read(&target).unwrap();
    assert!(
        head.starts_with(b"rftune storage benchmark target"),
        "after fio wrote seqwrite and randwrite, the file still carries rftune's header"
    );
    // Now it is rftune's own file: the next run needs no --overwrite.
    let out = run("second", None).await;
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_size_beyond_the_free_space_is_refused_before_anything_is_written() {
    let dir = work_dir();
    let path = fake_fio(&dir);
    let target = dir.0.join("huge.fio");
    let out = Run::with_file_size_limit(
        64 * 1024,
        &[
            "bench",
            "storage",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "500T",
            "--out",
            dir.0.join("out").to_str().unwrap(),
        ],
    )
    .env("PATH", &path)
    .output()
    .await;
    assert!(!target.exists(), "a target file was left behind");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(target.to_str().unwrap()) && err.contains("500 TiB") && err.contains("available"),
        "{err}"
    );
    assert!(err.contains("smaller --size"), "the error says what to do: {err}");
    assert_eq!(fio_runs(&dir), Vec::<String>::new(), "fio never ran");
}

/// The first bytes of a file rftune created (its header's mark).
const RFTUNE_MARK: &[u8] = b"rftune storage benchmark target v1\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_run_removes_the_target_file_it_created_and_keeps_older_ones() {
    let dir = work_dir();
    let path = fake_fio(&dir);
    let run = |target: &std::path::Path| {
        Run::with_file_size_limit(
            64 * 1024,
            &[
                "bench",
                "storage",
                "--target",
                target.to_str().unwrap(),
                "--size",
                "8M",
                "--runtime",
                "1s",
                "--ramp",
                "0s",
                "--out",
                dir.0.join("out").to_str().unwrap(),
            ],
        )
        .env("PATH", &path)
        .output()
    };
    let target = dir.0.join("new.fio");
    let out = run(&target).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("simulated failure"), "{}", stderr(&out));
    assert!(!fio_runs(&dir).is_empty(), "fio ran and failed");
    assert!(!target.exists(), "the file this run created was left behind");
    // A file rftune created in an earlier run is not this run's to remove.
    let older = dir.0.join("older.fio");
    let mut bytes = RFTUNE_MARK.to_vec();
    bytes.resize(9 << 20, 7);
    std::fs::write(&older, &bytes).unwrap();
    let out = run(&older).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        std::fs::read(&older).unwrap().starts_with(RFTUNE_MARK),
        "kept, mark intact"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_stops_fio_removes_the_target_file_it_created_and_exits_130() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = work_dir();
    let target = dir.0.join("interrupted.fio");
    let out_dir = dir.0.join("out");
    let state = TempDir::new();
    let child = tokio::process::Command::new(binary())
        .args([
            "bench",
            "storage",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8M",
            "--runtime",
            "60s",
            "--ramp",
            "0s",
            "--tests",
            "randread",
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .env("RFTUNE_STATE_DIR", &state.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    // fio is running once the file is laid out and fio's output directory exists.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(out_dir.join("fio").exists() && target.metadata().is_ok_and(|m| m.len() == 9 << 20)) {
        assert!(std::time::Instant::now() < deadline, "fio never started");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    // Ctrl-C: the README promises exit 130.
    let killed = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = std::time::Instant::now();
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("rftune did not stop within 30 s of SIGINT")
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "fio was stopped, not run to the end of its 60 s"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted by SIGINT")
            && stderr(&out).contains("the file this run created was removed"),
        "{}",
        stderr(&out)
    );
    assert!(!target.exists(), "the file this run created was left behind");
}

const ID_CTRL: &str = r#"{"sn":"E2ESERIAL","mn":"FAKE NVME","cntlid":1,"oacs":8,"tnvmcap":3840755982336,"unvmcap":0}"#;

fn fake_nvme(dir: &TempDir) -> String {
    use std::os::unix::fs::PermissionsExt;
    let log = dir.0.join("calls.log");
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\ncase \"$1\" in\n  id-ctrl) echo '{ID_CTRL}' ;;\n  list-ns) echo '{{}}' ;;\n  create-ns) echo 'create-ns: Success, created nsid:1' ;;\n  id-ns) echo '{{\"nsze\":5000000000,\"flbas\":0,\"lbafs\":[{{\"ds\":9}}]}}' ;;\n  *) echo ok ;;\nesac\n",
        log.display()
    );
    let path = dir.0.join("nvme");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", dir.0.display(), std::env::var("PATH").unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn nvme_plan_prints_the_sequence_and_refuses_a_wrong_serial() {
    let dir = TempDir::new();
    let path = fake_nvme(&dir);
    let out = Run::new(&["nvme", "plan", "--device", "/dev/nvme987n1", "--size", "2.56TB"])
        .env("PATH", &path)
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("5000000000 sectors × 512 B"), "{text}");
    assert!(
        text.contains("nvme create-ns /dev/nvme987 -s 5000000000 -c 5000000000 -b 512"),
        "{text}"
    );
    let out = Run::new(&[
        "nvme",
        "plan",
        "--device",
        "/dev/nvme987",
        "--size",
        "3.84TB",
        "--idema",
        "-o",
        "json",
    ])
    .env("PATH", &path)
    .output()
    .await;
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["plan"]["sectors"], 7_501_476_528u64);
    let calls = || std::fs::read_to_string(dir.0.join("calls.log")).unwrap();
    assert!(
        calls().lines().all(|l| l.starts_with("id-ctrl")),
        "a plan only reads: {}",
        calls()
    );
    let out = Run::new(&[
        "nvme",
        "plan",
        "--device",
        "/dev/nvme987",
        "--size",
        "2.56TB",
        "--execute",
    ])
    .env("PATH", &path)
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "--execute needs --confirm-serial");
    let wrong = Run::new(&[
        "nvme",
        "plan",
        "--device",
        "/dev/nvme987",
        "--size",
        "2.56TB",
        "--execute",
        "--confirm-serial",
        "NOPE",
    ])
    .env("PATH", &path)
    .output()
    .await;
    assert_eq!(wrong.status.code(), Some(1));
    assert!(!calls().contains("delete-ns"), "{}", calls());
    // The right serial runs the sequence only after the device checks pass, which no test can
    // arrange (host-bench's nvme tests run it with a stand-in check).
}

#[tokio::test(flavor = "multi_thread")]
async fn nvme_execute_runs_no_destructive_command_on_a_namespace_that_fails_the_device_checks() {
    let dir = TempDir::new();
    let path = fake_nvme(&dir);
    // No such block device exists, so nothing can show that the namespace is unused.
    let out = Run::new(&[
        "nvme",
        "plan",
        "--device",
        "/dev/nvme987",
        "--size",
        "2.56TB",
        "--execute",
        "--confirm-serial",
        "E2ESERIAL",
    ])
    .env("PATH", &path)
    .output()
    .await;
    let calls = std::fs::read_to_string(dir.0.join("calls.log")).unwrap();
    assert_eq!(
        calls.lines().filter(|l| !l.starts_with("id-ctrl")).collect::<Vec<_>>(),
        Vec::<&str>::new(),
        "only reads ran"
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("/dev/nvme987n1") && err.contains("not a block device"),
        "{err}"
    );
}

/// `rftune bench memory` on tiny arrays, `repeat` times, into `dir/name`, with `extra`
/// arguments: its document's path and its stderr.
async fn tiny_stream(dir: &std::path::Path, name: &str, repeat: &str, extra: &[&str]) -> (std::path::PathBuf, String) {
    let out_dir = dir.join(name);
    let mut args = vec![
        "bench",
        "memory",
        "--array-mib",
        "2",
        "--iterations",
        "2",
        "--threads",
        "1",
        "--repeat",
        repeat,
        "--label",
        name,
        "--out",
        out_dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = Run::new(&args).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    (out_dir.join("bench.json"), stderr(&out))
}

/// `rftune bench compare A B -o json` with `extra` arguments, which must succeed: its document.
pub(super) async fn compare_json(a: &std::path::Path, b: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "bench",
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = Run::new(&args).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_gives_verdicts_only_with_intervals_and_says_within_noise_or_too_few_runs() {
    let dir = work_dir();
    let (one_a, _) = tiny_stream(&dir.0, "one-a", "1", &[]).await;
    let (one_b, _) = tiny_stream(&dir.0, "one-b", "1", &[]).await;
    let (three, _) = tiny_stream(&dir.0, "three", "3", &[]).await;
    let compare = async |a: &std::path::Path, b: &std::path::Path| {
        let doc = compare_json(a, b, &[]).await;
        assert_eq!(doc["schema"], "rftune.bench-compare/v1");
        doc["changes"].as_array().unwrap().clone()
    };
    // One run a side: whatever the change, no verdict.
    let rows = compare(&one_a, &one_b).await;
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r["verdict"], "too_few_runs", "{r}");
        assert!(r["bootstrap_percent"].is_null() && r["welch_percent"].is_null(), "{r}");
    }
    // Three runs against the same three runs: intervals around zero, within noise.
    let rows = compare(&three, &three).await;
    let triad = rows
        .iter()
        .find(|r| r["test"] == "Triad" && r["metric"] == "bandwidth")
        .unwrap();
    assert_eq!(
        (triad["n_a"].as_u64(), triad["n_b"].as_u64()),
        (Some(3), Some(3)),
        "{triad}"
    );
    assert_eq!(triad["verdict"], "no_clear_change", "{triad}");
    let b = &triad["bootstrap_percent"];
    assert!(
        b["low"].as_f64().unwrap() <= 0.0 && b["high"].as_f64().unwrap() >= 0.0,
        "{triad}"
    );
    // The table spells it for people.
    let out = Run::new(&["bench", "compare", three.to_str().unwrap(), three.to_str().unwrap()])
        .output()
        .await;
    assert!(stdout(&out).contains("within noise"), "{}", stdout(&out));
    let out = Run::new(&["bench", "compare", one_a.to_str().unwrap(), one_b.to_str().unwrap()])
        .output()
        .await;
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("bandwidth (GB/s)")).collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows.iter().all(|l| l.ends_with("too few runs (n < 2)")), "{text}");
}

#[tokio::test]
async fn nvme_plan_dry_run_needs_neither_nvme_cli_nor_a_device() {
    let empty = TempDir::new();
    for extra in [&[][..], &["--device", "/dev/nvme987n1"][..]] {
        let mut args = vec!["nvme", "plan", "--size", "3.84TB", "--idema"];
        args.extend_from_slice(extra);
        let out = Run::new(&args).env("PATH", empty.0.to_str().unwrap()).output().await;
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains("7501476528 sectors × 512 B")
                && text.contains("-s 7501476528 -c 7501476528 -b 512")
                && text.contains("-c <cntlid>")
                && text.contains("not read"),
            "{extra:?}: {text}"
        );
        assert!(!text.contains("Usage"), "no nvme-cli usage dump: {text}");
    }
    let out = Run::new(&["nvme", "plan", "--size", "3.84TB", "-o", "json"])
        .env("PATH", empty.0.to_str().unwrap())
        .output()
        .await;
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["plan"]["controller"], "/dev/nvmeX");
    assert!(doc["plan"]["controller_info"].is_null());
    // Executing still needs the device (and nvme-cli, and the serial).
    let out = Run::new(&["nvme", "plan", "--size", "3.84TB", "--execute", "--confirm-serial", "S"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--device"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_repeats_keep_their_own_power_so_compare_judges_performance_per_watt() {
    let dir = work_dir();
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = fleet.hosts()[0].url.clone();
    let mut docs = Vec::new();
    for name in ["a", "b"] {
        let power = ["--bmc", &url, "--idle", "0s", "--power-interval", "100ms"];
        let (doc, err) = tiny_stream(&dir.0, name, "3", &power).await;
        let steps: Vec<&str> = err.lines().filter(|l| l.starts_with("rftune: STREAM run")).collect();
        assert_eq!(
            steps,
            [
                "rftune: STREAM run 1/3",
                "rftune: STREAM run 2/3",
                "rftune: STREAM run 3/3"
            ]
        );
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();
        let per_run = json["memory"]["run_power"].as_array().unwrap();
        assert_eq!(per_run.len(), 3);
        assert!(
            per_run.iter().all(|p| p["average_w"].as_f64().unwrap() > 0.0),
            "{per_run:?}"
        );
        docs.push(doc);
    }
    let c = compare_json(&docs[0], &docs[1], &[]).await;
    for (test, metric) in [("Triad", "gbs_per_watt"), ("all", "power")] {
        let row = c["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["test"] == test && r["metric"] == metric)
            .unwrap();
        assert_eq!((row["n_a"].as_u64(), row["n_b"].as_u64()), (Some(3), Some(3)), "{row}");
        assert_ne!(row["verdict"], "too_few_runs", "{row}");
        assert!(row["bootstrap_percent"]["low"].is_number(), "{row}");
    }
}
