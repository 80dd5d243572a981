//! How long decoding a recorded attribute registry takes: `decode_json` (what the client
//! uses) against decoding with JSON-path tracking, which `decode_json` keeps for failures, and
//! against parsing into an untyped `serde_json::Value` (the floor of any JSON decode).
//!
//! ```sh
//! cargo run --release -p redfish-client --example decode_speed -- \
//!     fixtures/r7625/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry/index.json 50
//! ```

use redfish_client::resources::attribute_registry::AttributeRegistry;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: decode_speed REGISTRY.json [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: u32 = args.next().and_then(|n| n.parse().ok()).unwrap_or(50);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let time = |f: &dyn Fn() -> bool| {
        let mut best = f64::INFINITY;
        for _ in 0..rounds {
            let start = Instant::now();
            assert!(f(), "the registry decodes");
            best = best.min(start.elapsed().as_secs_f64() * 1e3);
        }
        best
    };
    let plain = time(&|| redfish_client::error::decode_json::<AttributeRegistry>("GET", "u", &bytes).is_ok());
    let tracked = time(&|| {
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        serde_path_to_error::deserialize::<_, AttributeRegistry>(de).is_ok()
    });
    let untyped = time(&|| serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
    println!(
        "{path}: {} KiB; best of {rounds}: decode_json {plain:.2} ms, with path tracking {tracked:.2} ms ({:.2}x), \
         serde_json::Value {untyped:.2} ms (typed/untyped {:.2}x)",
        bytes.len() / 1024,
        tracked / plain,
        plain / untyped
    );
}
