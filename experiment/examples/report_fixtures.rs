//! Writes the three HTML reports rftune produces — a storage and a memory bench report
//! (`rftune bench storage|memory`) and an experiment report (`rftune experiment run|report`) —
//! from fixed, made-up but realistic results, so they can be looked at without hardware:
//! `benches/report_screenshots.sh` renders them in a headless browser.
//!
//! ```sh
//! cargo run -p rftune-experiment --example report_fixtures -- /tmp/rftune-reports
//! ```
//!
//! The results are deterministic (a fixed pseudo-random sequence supplies the run-to-run noise
//! of about ±1%), and go through the same reader as real documents (`host_bench::report::parse`).

use host_bench::report::{self, BenchReport};
use rftune_experiment::compare::{self, Method};
use rftune_experiment::report as experiment;
use rftune_experiment::spec::Spec;
use serde_json::{Value, json};
use std::path::PathBuf;

/// A fixed pseudo-random sequence in [-1, 1].
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// `v` within ±`fraction`.
    fn around(&mut self, v: f64, fraction: f64) -> f64 {
        v * (1.0 + fraction * self.next())
    }
}

/// (name, IOPS, block bytes, read share, p50 µs, p99 µs, p99.9 µs)
const TESTS: [(&str, f64, f64, f64, f64, f64, f64); 7] = [
    ("seqread", 52_000.0, 131_072.0, 1.0, 290.0, 610.0, 1_350.0),
    ("seqwrite", 21_500.0, 131_072.0, 0.0, 720.0, 1_900.0, 4_800.0),
    ("randread", 1_020_000.0, 4096.0, 1.0, 88.0, 190.0, 420.0),
    ("randwrite", 410_000.0, 4096.0, 0.0, 24.0, 960.0, 3_900.0),
    ("randrw70", 640_000.0, 4096.0, 0.7, 110.0, 420.0, 1_800.0),
    ("randrw50", 520_000.0, 4096.0, 0.5, 120.0, 520.0, 2_300.0),
    ("randrw30", 470_000.0, 4096.0, 0.3, 130.0, 640.0, 2_900.0),
];

fn host() -> Value {
    json!({
        "hostname": "r7625-lab-07", "kernel": "6.1.0-28-amd64", "cpu_model": "AMD EPYC 9354 32-Core Processor",
        "logical_cpus": 128, "cores": 64, "smt_active": true, "numa_nodes": 2,
        "cpuidle_states": ["POLL", "C1", "C2"], "llc_bytes": 268_435_456u64
    })
}

fn bmc() -> Value {
    json!({"host": "127.0.0.1:8443", "model": "PowerEdge R7625", "service_tag": "FX7Q2K3",
           "bios_version": "1.9.3", "idrac_firmware": "7.10.50.00", "power_sensor": "PowerControl/0/PowerConsumedWatts"})
}

fn latency(noise: &mut Noise, scale: f64, p50: f64, p99: f64, p999: f64) -> Value {
    json!({"mean_us": noise.around(p50 * 1.2 * scale, 0.02), "p50_us": noise.around(p50 * scale, 0.02),
           "p99_us": noise.around(p99 * scale, 0.03), "p99_9_us": noise.around(p999 * scale, 0.05)})
}

/// A storage document: the suite's seven fio tests, `repeats` each, with traces. `speed` scales
/// IOPS (and divides latency), `watts` is the loaded power.
fn storage(label: &str, seed: u64, speed: f64, watts: f64, repeats: usize) -> Value {
    let mut noise = Noise(seed);
    let runtime = 60.0;
    let tests: Vec<Value> = TESTS
        .iter()
        .enumerate()
        .map(|(ti, (name, iops, bs, read, p50, p99, p999))| {
            let runs: Vec<Value> = (0..repeats)
                .map(|_| {
                    let run_iops = noise.around(iops * speed, 0.01);
                    let w = noise.around(watts + 8.0 * ti as f64, 0.01);
                    let trace: Vec<Value> = (0..=runtime as usize)
                        .step_by(2)
                        .map(|t| json!({"t_s": t as f64 + 0.4, "watts": noise.around(w, 0.01)}))
                        .collect();
                    let iops_trace: Vec<Value> = (1..=runtime as usize)
                        .map(|t| json!([t as f64, noise.around(run_iops, 0.012)]))
                        .collect();
                    let lat = |noise: &mut Noise, share: f64| {
                        if share > 0.0 {
                            latency(noise, 1.0 / speed, *p50, *p99, *p999)
                        } else {
                            Value::Null
                        }
                    };
                    json!({
                        "metrics": {
                            "iops": run_iops, "read_iops": run_iops * read, "write_iops": run_iops * (1.0 - read),
                            "bw_bytes": run_iops * bs, "read_bw_bytes": run_iops * bs * read,
                            "write_bw_bytes": run_iops * bs * (1.0 - read),
                            "read_lat": lat(&mut noise, *read), "write_lat": lat(&mut noise, 1.0 - read),
                            "usr_cpu": 4.0, "sys_cpu": 11.0, "errors": []
                        },
                        "power": {"n": trace.len(), "min_w": w * 0.99, "max_w": w * 1.01, "mean_w": w, "stddev_w": w * 0.005,
                                  "duration_s": runtime, "energy_j": w * runtime, "average_w": w},
                        "power_trace": trace,
                        "iops_trace": iops_trace
                    })
                })
                .collect();
            let pick = |f: &dyn Fn(&Value) -> f64| {
                let xs: Vec<f64> = runs.iter().map(f).collect();
                host_bench::stats::median(&xs).unwrap_or(0.0)
            };
            let iops_m = pick(&|r| r["metrics"]["iops"].as_f64().unwrap_or(0.0));
            let w_m = pick(&|r| r["power"]["average_w"].as_f64().unwrap_or(0.0));
            json!({
                "name": name, "rw": name, "bs": if *bs > 4096.0 { "128k" } else { "4k" }, "iodepth": 32,
                "outstanding_io": 128, "ioengine": "io_uring", "iops": iops_m, "bw_bytes": iops_m * bs,
                "cv_iops": 0.006, "power_w": w_m, "energy_j": w_m * runtime, "iops_per_watt": iops_m / w_m,
                "mbps_per_watt": iops_m * bs / 1e6 / w_m, "valid": true, "problems": [], "runs": runs
            })
        })
        .collect();
    json!({
        "schema": report::SCHEMA, "kind": "storage", "label": label, "tool_version": report::TOOL_VERSION,
        "started_at": "2026-11-30T09:00:00.000Z", "finished_at": "2026-11-30T09:24:30.000Z",
        "host": host(), "bmc": bmc(),
        "storage": {"target": "/dev/nvme1n1", "target_kind": "device", "size": null, "runtime_s": 60, "ramp_s": 5,
                    "numjobs": 4, "ioengine": "io_uring", "fio_version": "fio-3.33", "tests": tests},
        "power_caveat": host_bench::power::CAVEAT, "valid": true, "problems": []
    })
}

fn memory() -> Value {
    let mut noise = Noise(7);
    let base = [("Copy", 318.0), ("Scale", 312.0), ("Add", 331.0), ("Triad", 333.0)];
    let runs: Vec<Value> = (0..5)
        .map(|_| {
            let kernels: Vec<Value> = base
                .iter()
                .map(|(k, g)| json!({"name": k, "best_gbs": noise.around(*g, 0.008), "avg_s": 0.05, "min_s": 0.049, "max_s": 0.052}))
                .collect();
            json!({"variant": "standard", "elements": 400_000_000u64, "array_bytes": 3_200_000_000u64, "threads": 64,
                   "cpus": [], "iterations": 20, "kernels": kernels,
                   "validation": {"passed": true, "relative_errors": [0.0, 0.0, 0.0]}})
        })
        .collect();
    let gbs: serde_json::Map<String, Value> = base.iter().map(|(k, g)| ((*k).to_owned(), json!(g))).collect();
    let cv: serde_json::Map<String, Value> = base.iter().map(|(k, _)| ((*k).to_owned(), json!(0.004))).collect();
    let trace: Vec<Value> = (0..=90)
        .map(|t| json!({"t_s": f64::from(t), "watts": noise.around(if t % 18 < 15 { 512.0 } else { 430.0 }, 0.01)}))
        .collect();
    json!({
        "schema": report::SCHEMA, "kind": "memory", "label": "nps4-performance", "tool_version": report::TOOL_VERSION,
        "started_at": "2026-11-30T10:00:00.000Z", "finished_at": "2026-11-30T10:01:31.000Z",
        "host": host(), "bmc": bmc(),
        "memory": {"variant": "standard", "elements": 400_000_000u64, "array_mib": 3051.8, "llc_bytes": 268_435_456u64,
                   "threads": 64, "gbs": gbs, "cv": cv,
                   "peak": {"gbs": 460.8, "source": "dimm-inventory", "sockets": []},
                   "triad_fraction_of_peak": 333.0 / 460.8, "power_w": 497.0, "triad_gbs_per_watt": 333.0 / 497.0,
                   "power_trace": trace, "runs": runs},
        "power_caveat": host_bench::power::CAVEAT, "valid": true, "problems": []
    })
}

fn experiment_report() -> Result<experiment::ExperimentReport, Box<dyn std::error::Error>> {
    let spec = Spec::parse(
        r#"
name = "nps-and-cstates"
profiles = ["dell-default", "hpc-nps4", "hpc-nps4-no-cstates"]
repeats = 3
[[hosts]]
name = "r7625-lab-07"
bmc = "https://127.0.0.1:8443"
os = { transport = "local" }
[[hosts]]
name = "r7625-lab-08"
bmc = "https://127.0.0.1:8444"
os = { transport = "local" }
[benchmarks.storage]
target = "/dev/nvme1n1"
"#,
    )?;
    // (speed, watts) per profile: NPS4 helps, disabling C-states costs power for little.
    let effect = [(1.0, 402.0), (1.09, 409.0), (1.1, 451.0)];
    let mut observations = Vec::new();
    for (hi, host) in spec.hosts.iter().enumerate() {
        for (pi, profile) in spec.profiles.iter().enumerate() {
            for r in 0..3u64 {
                let (speed, watts) = effect[pi];
                let seed = 1000 * hi as u64 + 10 * pi as u64 + r;
                let mut doc = storage(profile, seed, speed * if hi == 1 { 0.97 } else { 1.0 }, watts, 1);
                // An experiment step runs a few tests.
                if let Some(tests) = doc["storage"]["tests"].as_array_mut() {
                    tests.retain(|t| ["randread", "randwrite", "randrw70"].contains(&t["name"].as_str().unwrap_or("")));
                }
                let bench: BenchReport = report::parse(&doc.to_string())?;
                observations.extend(compare::observations(&bench, &host.name, profile));
            }
        }
    }
    let mut r = experiment::build(&spec, &observations, Method::default());
    r.contradictions.push(experiment::Note {
        host: "r7625-lab-08".into(),
        profile: "hpc-nps4".into(),
        step: 4,
        text: "NumaNodesPerSocket is 4 but the OS reports 2 NUMA nodes".into(),
    });
    Ok(r)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "target/report-fixtures".into()),
    );
    std::fs::create_dir_all(&dir)?;
    for (name, doc) in [
        ("storage", storage("nps4-performance", 42, 1.0, 405.0, 3)),
        ("memory", memory()),
    ] {
        let bench = report::parse(&doc.to_string())?;
        std::fs::write(dir.join(format!("{name}.json")), serde_json::to_vec_pretty(&bench)?)?;
        std::fs::write(dir.join(format!("{name}.html")), bench.html())?;
    }
    let r = experiment_report()?;
    std::fs::write(dir.join("experiment.json"), serde_json::to_vec_pretty(&r)?)?;
    std::fs::write(dir.join("experiment.html"), experiment::html(&r))?;
    println!("{}", dir.display());
    Ok(())
}
