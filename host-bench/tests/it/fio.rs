//! fio: parsing its real output, the canned sample with warnings, and short real runs.

use super::TempDir;
use host_bench::exec::Local;
use host_bench::fio::{self, Fio, IoEngine, Options, TESTS};

fn options(dir: &TempDir) -> Options {
    Options {
        target: dir.0.join("target.dat"),
        size: Some(4 << 20),
        offset: 0,
        runtime_s: 1,
        ramp_s: 0,
        numjobs: 1,
        ioengine: IoEngine::IoUring,
    }
}

#[test]
fn canned_output_with_warnings_before_and_after_the_json_parses() {
    let text = include_str!("../data/fio-3.33-randrw70-with-warnings.txt");
    let out = fio::parse(text).unwrap();
    assert_eq!(out.version.as_deref(), Some("fio-3.33"));
    assert_eq!(out.jobs.len(), 1);
    let job = &out.jobs[0];
    assert_eq!((job.name.as_str(), job.error), ("seqread", 0));
    assert_eq!(job.options.get("rwmixread").map(String::as_str), Some("70"));
    let m = out.metrics();
    assert!(m.read_iops > 0.0 && m.write_iops > 0.0, "{m:?}");
    assert!((m.iops - (m.read_iops + m.write_iops)).abs() < 1e-9);
    let lat = m.read_lat.unwrap();
    assert!(lat.p50_us.unwrap() <= lat.p99_us.unwrap() && lat.p99_us.unwrap() <= lat.p99_9_us.unwrap());
    assert!(m.errors.is_empty());
}

#[tokio::test]
async fn real_fio_output_parses_and_mixed_tests_report_both_directions() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = TempDir::new("fio");
    let local = Local::default();
    let fio = Fio::new(&local);
    assert!(fio.version().await.unwrap().starts_with("fio-"));
    let run = fio.run(&TESTS[5], &options(&dir), &dir.0, "").await.unwrap();
    let m = &run.metrics;
    assert!(m.read_iops > 0.0 && m.write_iops > 0.0, "{m:?}");
    assert!(m.bw_bytes > 0.0 && m.read_lat.is_some() && m.write_lat.is_some());
    assert_eq!(run.output.jobs[0].options.get("rw").map(String::as_str), Some("randrw"));
    assert!(m.usr_cpu + m.sys_cpu > 0.0);
    // The JSON file fio wrote parses on its own too.
    let text = std::fs::read_to_string(dir.0.join("randrw50.json")).unwrap();
    assert_eq!(fio::parse(&text).unwrap().jobs.len(), 1);
}

#[tokio::test]
async fn a_failing_fio_is_an_error_naming_the_test() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = TempDir::new("fio-bad");
    let opts = Options {
        target: dir.0.join("missing-dir").join("x"),
        size: None,
        ..options(&dir)
    };
    let err = Fio::new(&Local::default())
        .run(&TESTS[0], &opts, &dir.0, "")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("seqread"), "{err}");
}

#[tokio::test]
async fn a_missing_fio_binary_is_reported() {
    let dir = TempDir::new("fio-none");
    let program = dir.0.join("no-such-fio").display().to_string();
    let local = Local::default();
    let fio = Fio {
        program: &program,
        ..Fio::new(&local)
    };
    assert!(fio.run(&TESTS[0], &options(&dir), &dir.0, "").await.is_err());
    assert!(fio.version().await.is_err());
}

#[tokio::test]
async fn preconditioning_writes_twice_and_checks_steady_state() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = TempDir::new("fio-pre");
    let p = Fio::new(&Local::default())
        .precondition(&options(&dir), &dir.0, 1, 5)
        .await
        .unwrap();
    assert_eq!(p.sequential_passes, 2);
    assert_eq!(p.rounds_iops.len(), 5);
    assert!(p.steady_state.is_some());
}

#[tokio::test]
async fn fio_never_writes_over_rftunes_header() {
    if !rftune_tests::fio_available() {
        return;
    }
    use host_bench::target::{self, HEADER_BYTES, MAGIC, TargetKind};
    let dir = TempDir::new("fio-header");
    let opts = Options {
        offset: HEADER_BYTES,
        ..options(&dir)
    };
    target::prepare(
        &opts.target,
        TargetKind::NewFile,
        opts.size.unwrap(),
        &host_bench::Stop::default(),
    )
    .unwrap();
    let header = std::fs::read(&opts.target).unwrap()[..HEADER_BYTES as usize].to_vec();
    assert!(header.starts_with(MAGIC));
    let local = Local::default();
    let fio = Fio::new(&local);
    for spec in TESTS.iter().filter(|t| t.writes()) {
        fio.run(spec, &opts, &dir.0, "").await.unwrap();
    }
    fio.precondition(&opts, &dir.0, 1, 5).await.unwrap();
    let after = std::fs::read(&opts.target).unwrap();
    assert_eq!(
        after.len() as u64,
        HEADER_BYTES + opts.size.unwrap(),
        "fio did not resize the file"
    );
    assert!(after[..HEADER_BYTES as usize] == header[..], "the header is intact");
    assert!(matches!(
        target::observe(&opts.target).unwrap(),
        target::Found::RegularFile { ours: true, .. }
    ));
}

#[tokio::test]
async fn a_stop_request_interrupts_a_running_fio_within_seconds() {
    if !rftune_tests::fio_available() {
        return;
    }
    let dir = TempDir::new("fio-stop");
    let opts = Options {
        runtime_s: 60,
        ..options(&dir)
    };
    let local = Local::default();
    let stop = local.stop.clone();
    let started = std::time::Instant::now();
    let running = tokio::spawn(async move { Fio::new(&local).run(&TESTS[2], &opts, &dir.0, "").await });
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    stop.request();
    let err = running.await.unwrap().unwrap_err();
    assert!(matches!(err, host_bench::Error::Interrupted(_)), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "fio stopped long before its 60 s: {:?}",
        started.elapsed()
    );
}
