//! How long the dependency evaluator takes on a recorded registry and BIOS: indexing the
//! registry (`DependencyEvaluator::new` with the listing), and one evaluation of the recorded
//! values. A drift check makes several evaluations per distinct host (the plan, then each
//! candidate value that might unlock a blocked setting), so this is most of a single host's
//! check.
//!
//! ```sh
//! cargo run --release -p redfish-client --example evaluate_speed -- \
//!     fixtures/r7625/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry/index.json \
//!     fixtures/r7625/redfish/v1/Systems/System.Embedded.1/Bios/index.json 500
//! ```

use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::error::decode_json;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::Bios;
use std::time::{Duration, Instant};

fn read<T: serde::de::DeserializeOwned>(path: &str) -> T {
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    decode_json("FILE", path, &bytes).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    })
}

/// The median of `rounds` timings of `f`.
fn median(rounds: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[times.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (registry_path, bios_path, rounds) = match args.as_slice() {
        [r, b] => (r, b, 500),
        [r, b, n] => (r, b, n.parse().unwrap_or(500)),
        _ => {
            eprintln!("usage: evaluate_speed REGISTRY.json BIOS.json [ROUNDS]");
            std::process::exit(2);
        }
    };
    let registry: AttributeRegistry = read(registry_path);
    let bios: Bios = read(bios_path);
    let index = median(rounds, || {
        std::hint::black_box(DependencyEvaluator::new(&registry).with_listing(bios.attributes.keys()));
    });
    let evaluator = DependencyEvaluator::new(&registry).with_listing(bios.attributes.keys());
    let evaluate = median(rounds, || {
        std::hint::black_box(evaluator.evaluate(&bios.attributes));
    });
    println!(
        "{} attributes, {} dependencies, {} values: index {index:?}, evaluate {evaluate:?} (median of {rounds})",
        registry.registry_entries.attributes.len(),
        registry.registry_entries.dependencies.len(),
        bios.attributes.len()
    );
}
