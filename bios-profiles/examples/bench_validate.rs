//! Times resolve, validate, diff and plan of the largest shipped profile on the r7625 fixture.
//!
//! `cargo run -p bios-profiles --release --example bench_validate [ITERATIONS]`

use bios_profiles::{HostFacts, HostView, Library, ValidateOptions, diff, plan, validate, validate_idrac};
use redfish_client::oem::dell::{AttributeGroup, DellAttributes};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{Bios, BiosSettings};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::error::Error;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

fn read<T: DeserializeOwned>(path: &Path) -> Result<T, Box<dyn Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_json::from_str(&text)?)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn main() -> Result<(), Box<dyn Error>> {
    let iterations: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(2000)
        .max(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/r7625/redfish/v1");
    let system = root.join("Systems/System.Embedded.1");
    let registry_path = system.join("Bios/BiosRegistry/index.json");
    let registry: AttributeRegistry = read(&registry_path)?;
    let current = read::<Bios>(&system.join("Bios/index.json"))?.attributes;
    let pending = read::<BiosSettings>(&system.join("Bios/Settings/index.json"))?.attributes;
    let manager_registry: AttributeRegistry =
        read(&root.join("Registries/ManagerAttributeRegistry.v1_0_0/ManagerAttributeRegistry/index.json"))?;
    let mut idrac = BTreeMap::new();
    for group in AttributeGroup::ALL {
        let path = root.join(format!(
            "Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/{}/index.json",
            group.resource_id()
        ));
        idrac.insert(group, read::<DellAttributes>(&path)?.attributes);
    }

    let library = Library::shipped()?;
    let host = HostFacts::from_bios(&current);
    let mut largest = None;
    for profile in library.list() {
        if !profile.targets_host(&host) {
            continue;
        }
        let count = library.resolve(&profile.name, &host)?.settings().count();
        if largest.as_ref().is_none_or(|(_, c)| count > *c) {
            largest = Some((profile.name.clone(), count));
        }
    }
    let (name, settings) = largest.ok_or("no shipped profile targets the fixture")?;
    let options = ValidateOptions::default();
    let state = HostView::new(&registry, &current)
        .with_pending(&pending)
        .with_idrac(&idrac);

    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations + iterations / 10 {
        let start = Instant::now();
        let resolved = library.resolve(&name, &host)?;
        let violations = validate(&resolved, &state, &options);
        let idrac_violations = validate_idrac(&resolved, &state, &manager_registry, &options);
        let d = diff(&resolved, &state);
        let p = plan(&resolved, &state)?;
        black_box((violations, idrac_violations, d, p));
        // The first tenth warms caches and is not counted.
        if i >= iterations / 10 {
            samples.push(start.elapsed());
        }
    }
    let registry_text = std::fs::read_to_string(&registry_path)?;
    let mut parse = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        black_box(serde_json::from_str::<AttributeRegistry>(&registry_text)?);
        parse.push(start.elapsed());
    }

    let entries = registry.registry_entries.attributes.len();
    let rules = registry.registry_entries.dependencies.len();
    println!(
        "profile {name} ({settings} settings) vs r7625 registry ({entries} attributes, {rules} dependencies, {} KiB)",
        registry_text.len() / 1024
    );
    let mut sorted = samples.clone();
    sorted.sort_unstable();
    println!(
        "resolve + validate + validate_idrac + diff + plan: median {:?}, p90 {:?}, min {:?} over {} iterations",
        median(samples),
        sorted[sorted.len() * 9 / 10],
        sorted[0],
        sorted.len()
    );
    println!("for scale, decoding the registry JSON once: median {:?}", median(parse));
    Ok(())
}
