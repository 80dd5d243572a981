//! Every fixture file decodes with the typed model its `@odata.type` names, and the trees are
//! internally consistent (every BIOS attribute defined by the registry, every value allowed).

use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::error::decode_json;
use redfish_client::odata::{Collection, Link};
use redfish_client::oem::dell::{DellAttributes, DellJob};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{Bios, BiosSettings};
use redfish_client::resources::chassis::Chassis;
use redfish_client::resources::computer_system::{ComputerSystem, Memory, Processor};
use redfish_client::resources::manager::Manager;
use redfish_client::resources::power::{EnvironmentMetrics, Power, Sensor};
use redfish_client::resources::service_root::ServiceRoot;
use serde_json::Value;

const MODELS: [&str; 3] = ["r7625", "r7525", "c6615"];

fn check<T: serde::de::DeserializeOwned>(file: &str, bytes: &[u8]) {
    if let Err(e) = decode_json::<T>("FILE", file, bytes) {
        panic!("{e}");
    }
}

#[test]
fn every_fixture_decodes_with_the_model_its_odata_type_names() {
    let mut decoded = 0;
    for model in MODELS {
        let files = rftune_tests::fixture_files(model);
        assert!(files.len() > 30, "{model}: only {} files", files.len());
        for (resource, file) in files {
            let bytes = std::fs::read(&file).unwrap();
            let doc: Value = serde_json::from_slice(&bytes).unwrap();
            let name = file.display().to_string();
            assert_eq!(
                doc["@odata.id"].as_str(),
                Some(resource.as_str()),
                "{name}: @odata.id matches its path"
            );
            let odata_type = doc["@odata.type"].as_str().unwrap_or_default();
            let schema = odata_type.trim_start_matches('#').split('.').next().unwrap_or_default();
            match schema {
                "ServiceRoot" => check::<ServiceRoot>(&name, &bytes),
                "ComputerSystem" => check::<ComputerSystem>(&name, &bytes),
                "Memory" => check::<Memory>(&name, &bytes),
                "Processor" => check::<Processor>(&name, &bytes),
                "Bios" if resource.ends_with("/Settings") => check::<BiosSettings>(&name, &bytes),
                "Bios" => check::<Bios>(&name, &bytes),
                "DellBios" => check::<BiosSettings>(&name, &bytes),
                "AttributeRegistry" => check::<AttributeRegistry>(&name, &bytes),
                "Manager" => check::<Manager>(&name, &bytes),
                "DellAttributes" => check::<DellAttributes>(&name, &bytes),
                "DellJob" => check::<DellJob>(&name, &bytes),
                "Chassis" => check::<Chassis>(&name, &bytes),
                "Power" => check::<Power>(&name, &bytes),
                "EnvironmentMetrics" => check::<EnvironmentMetrics>(&name, &bytes),
                "Sensor" => check::<Sensor>(&name, &bytes),
                s if s.ends_with("Collection") => check::<Collection<Link>>(&name, &bytes),
                // Resources rftune does not model (SessionService, JobService, registry pointers,
                // Dell services, PowerSubsystem) must at least be JSON objects with an id.
                _ => assert!(doc.is_object(), "{name}"),
            }
            decoded += 1;
        }
    }
    assert!(decoded > 100);
}

fn load<T: serde::de::DeserializeOwned>(model: &str, resource: &str) -> T {
    let path = rftune_tests::fixtures_dir()
        .join(model)
        .join(resource.trim_start_matches('/'))
        .join("index.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    decode_json("FILE", &path.display().to_string(), &bytes).unwrap()
}

#[test]
fn bios_values_fit_their_registry_and_its_dependencies() {
    for model in MODELS {
        let bios: Bios = load(model, "/redfish/v1/Systems/System.Embedded.1/Bios");
        let registry: AttributeRegistry = load(model, "/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry");
        let index = registry.index();
        // Real iDRACs list exactly the attributes that are not Hidden.
        for (name, attr) in &index {
            assert_eq!(
                bios.attributes.contains_key(*name),
                !attr.is_hidden(),
                "{model}: {name} is listed iff it is not hidden"
            );
        }
        for (name, value) in &bios.attributes {
            let attr = index
                .get(name.as_str())
                .unwrap_or_else(|| panic!("{model}: {name} not in registry"));
            if !attr.write_only.unwrap_or(false) {
                attr.check(value)
                    .unwrap_or_else(|p| panic!("{model}: {name} = {value}: {p}"));
            }
        }
        // The registry's flags describe the current values: re-evaluating must reproduce them,
        // and no preset may force a value other than the current one.
        let ev = DependencyEvaluator::new(&registry)
            .with_listing(bios.attributes.keys())
            .evaluate(&bios.attributes);
        assert!(ev.converged(), "{model}");
        assert_eq!(
            ev.values(),
            &bios.attributes,
            "{model}: current values are stable under the rules"
        );
        for attr in &registry.registry_entries.attributes {
            let n = attr.attribute_name.as_str();
            assert_eq!(ev.is_read_only(n), attr.is_read_only(), "{model}: {n} ReadOnly");
            assert_eq!(ev.is_hidden(n), attr.is_hidden(), "{model}: {n} Hidden");
        }
    }
}

#[test]
fn fixtures_carry_the_documented_amd_attribute_types() {
    let bios: Bios = load("r7625", "/redfish/v1/Systems/System.Embedded.1/Bios");
    assert_eq!(bios.attributes["CpuMinSevAsid"].as_i64(), Some(1));
    assert_eq!(bios.attributes["CpuAcpiCstC2Latency"].as_i64(), Some(800));
    assert_eq!(bios.attributes["NumaNodesPerSocket"].as_str(), Some("1"));
    assert_eq!(bios.attributes["SysProfile"].as_str(), Some("PerfOptimized"));
    let milan: Bios = load("r7525", "/redfish/v1/Systems/System.Embedded.1/Bios");
    assert!(milan.attributes.contains_key("DynamicLinkWidthManagement"));
    assert!(!milan.attributes.contains_key("DfCState"));
}
