//! Reports: a real two-test run summarised, rendered to CSV and HTML, and compared.

use super::TempDir;
use host_bench::exec::Local;
use host_bench::fio::{Fio, IoEngine, Options, TESTS};
use host_bench::power::Sample;
use host_bench::report::{self, BenchReport, RunReport, Storage, TestReport};

async fn storage_report(label: &str, scale: f64) -> BenchReport {
    let dir = TempDir::new("report");
    let opts = Options {
        target: dir.0.join("t.dat"),
        size: Some(4 << 20),
        offset: 0,
        runtime_s: 1,
        ramp_s: 0,
        numjobs: 1,
        ioengine: IoEngine::IoUring,
    };
    let run = Fio::new(&Local::default())
        .run(&TESTS[2], &opts, &dir.0, "")
        .await
        .unwrap();
    let trace = vec![Sample { t_s: 0.0, watts: 400.0 }, Sample { t_s: 1.0, watts: 420.0 }];
    let mut metrics = run.metrics.clone();
    metrics.iops *= scale;
    let runs = vec![RunReport {
        metrics,
        power: host_bench::power::stats(&trace),
        power_trace: trace,
        iops_trace: run.iops_trace.clone(),
    }];
    BenchReport {
        schema: report::SCHEMA.into(),
        kind: "storage".into(),
        label: Some(label.into()),
        tool_version: "test".into(),
        started_at: host_bench::utc_now(),
        finished_at: host_bench::utc_now(),
        host: host_bench::host::HostInfo::collect(),
        bmc: None,
        storage: Some(Storage {
            target: opts.target.display().to_string(),
            target_kind: "file".into(),
            size: Some("4M".into()),
            runtime_s: 1,
            ramp_s: 0,
            numjobs: 1,
            ioengine: "io_uring".into(),
            fio_version: None,
            precondition: None,
            tests: vec![TestReport::new(&TESTS[2], 1, run.engine, run.fallback, runs)],
        }),
        memory: None,
        filesystem: None,
        power_caveat: Some(host_bench::power::CAVEAT.into()),
        valid: true,
        problems: vec![],
    }
}

#[tokio::test]
async fn report_renders_csv_html_and_round_trips() {
    if !rftune_tests::fio_available() {
        return;
    }
    let r = storage_report("baseline", 1.0).await;
    let t = &r.storage.as_ref().unwrap().tests[0];
    assert!(t.valid, "{:?}", t.problems);
    assert_eq!(t.power_w, Some(410.0));
    assert!((t.iops_per_watt.unwrap() - t.iops / 410.0).abs() < 1e-9);
    let json = serde_json::to_string(&r).unwrap();
    let back: BenchReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.figures().len(), r.figures().len());
    assert_eq!(serde_json::to_value(&r).unwrap()["schema"], "rftune.bench/v1");
    let csv = r.csv();
    assert!(csv.starts_with("label,started_at,hostname,kind,test,metric,value,unit\n"));
    assert!(csv.contains(",storage,randread,iops,"), "{csv}");
    assert!(csv.contains(",randread,iops_per_watt,"), "{csv}");
    let html = r.html();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg") && html.contains("polyline"));
    assert!(!html.contains("src=") && !html.contains("href="), "no external assets");
    // Real fio output: every chart readable, and randread's read latency percentiles charted.
    rftune_tests::markup::assert_well_formed_xml(&html);
    let charts = rftune_tests::markup::charts(&html);
    for c in &charts {
        rftune_tests::markup::assert_readable(c);
    }
    let latency = charts
        .iter()
        .find(|c| rftune_tests::markup::chart_title(c).starts_with("Read completion latency"))
        .expect("a read latency chart");
    assert!(
        latency.contains(">randread<") && latency.contains(">p99.9<"),
        "{latency}"
    );
    assert_eq!(
        latency.matches("class=\"value\"").count(),
        3,
        "p50, p99 and p99.9 of one test"
    );
}
