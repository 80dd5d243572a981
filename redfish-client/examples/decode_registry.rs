//! Benchmark: decoding a BIOS attribute registry with the typed models (and building the
//! dependency evaluator over it). Run in release mode:
//!
//! ```text
//! cargo run --release -p redfish-client --example decode_registry [FILE] [ITERATIONS]
//! ```
//!
//! FILE defaults to the largest fixture registry (R7625). Prints the median and minimum time
//! per decode; real iDRAC registries are 0.9–1.3 MB, so the figure per MB is printed too.

use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::error::decode_json;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/r7625/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry/index.json"
        )
        .to_owned()
    });
    let iterations: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(200);
    let bytes = match std::fs::read(&file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("reading {file}: {e}");
            std::process::exit(1);
        }
    };
    let mut decode = Vec::with_capacity(iterations);
    let mut evaluate = Vec::with_capacity(iterations);
    let mut attributes = 0;
    for _ in 0..iterations {
        let start = Instant::now();
        let registry: AttributeRegistry = match decode_json("FILE", &file, &bytes) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        decode.push(start.elapsed());
        let start = Instant::now();
        let evaluator = DependencyEvaluator::new(&registry);
        let current = registry
            .registry_entries
            .attributes
            .iter()
            .filter_map(|a| {
                a.values
                    .first()
                    .map(|v| (a.attribute_name.clone(), v.value_name.as_str().into()))
            })
            .collect();
        let ev = evaluator.evaluate(&current);
        evaluate.push(start.elapsed());
        std::hint::black_box(ev.converged());
        attributes = registry.registry_entries.attributes.len();
    }
    let stats = |v: &mut Vec<Duration>| {
        v.sort();
        (v[v.len() / 2], v[0])
    };
    let (median, min) = stats(&mut decode);
    let (emedian, _) = stats(&mut evaluate);
    let mb = bytes.len() as f64 / 1e6;
    println!("registry: {file}");
    println!("size: {:.3} MB, {attributes} attributes, {iterations} iterations", mb);
    println!(
        "decode: median {:.3} ms, min {:.3} ms ({:.2} ms per MB)",
        ms(median),
        ms(min),
        ms(median) / mb
    );
    println!("evaluator build + evaluate: median {:.3} ms", ms(emedian));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
