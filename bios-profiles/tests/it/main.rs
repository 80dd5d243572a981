//! Integration tests of bios-profiles.
#![allow(clippy::unwrap_used)]

mod boot;
mod decisions;
mod evidence;
mod hpe;
mod library;
mod real_shapes;
mod recommendations;
mod shipped;
mod snapshots;
mod switching;
mod synthetic;

use bios_profiles::{HostFacts, HostView, Library, ResolvedProfile};
use redfish_client::oem::dell::{AttributeGroup, DellAttributes};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{Attributes, Bios, BiosSettings};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The fixture models.
pub(crate) const MODELS: [&str; 3] = ["r7625", "r7525", "c6615"];

/// One fixture host, decoded.
pub(crate) struct Fixture {
    pub(crate) model: &'static str,
    pub(crate) registry: AttributeRegistry,
    pub(crate) current: Attributes,
    pub(crate) pending: Attributes,
    pub(crate) manager_registry: AttributeRegistry,
    pub(crate) idrac: BTreeMap<AttributeGroup, Attributes>,
}

impl Fixture {
    pub(crate) fn load(model: &'static str) -> Self {
        let root = rftune_tests::fixtures_dir().join(model).join("redfish/v1");
        let system = root.join("Systems/System.Embedded.1");
        let bios: Bios = read(&system.join("Bios/index.json"));
        let pending: BiosSettings = read(&system.join("Bios/Settings/index.json"));
        let idrac = AttributeGroup::ALL
            .into_iter()
            .map(|g| {
                let path = root.join(format!(
                    "Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/{}/index.json",
                    g.resource_id()
                ));
                let resource: DellAttributes = read(&path);
                (g, resource.attributes)
            })
            .collect();
        Self {
            model,
            registry: read(&system.join("Bios/BiosRegistry/index.json")),
            current: bios.attributes,
            pending: pending.attributes,
            manager_registry: read(
                &root.join("Registries/ManagerAttributeRegistry.v1_0_0/ManagerAttributeRegistry/index.json"),
            ),
            idrac,
        }
    }

    pub(crate) fn host(&self) -> HostFacts {
        HostFacts::from_bios(&self.current)
    }

    /// Everything the fixture's host shows.
    pub(crate) fn state(&self) -> HostView<'_> {
        HostView::new(&self.registry, &self.current)
            .with_pending(&self.pending)
            .with_idrac(&self.idrac)
    }
}

fn read<T: DeserializeOwned>(path: &Path) -> T {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The shipped library with `extra` profiles (TOML texts) added.
pub(crate) fn library_with(extra: &[&str]) -> Library {
    let mut library = Library::shipped().unwrap();
    for (i, text) in extra.iter().enumerate() {
        library.add_toml(text, &format!("test{i}.toml")).unwrap();
    }
    library
}

/// Resolves a one-off profile written in TOML for `host`.
pub(crate) fn resolve_toml(text: &str, host: &HostFacts) -> ResolvedProfile {
    let library = library_with(&[text]);
    let name = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("name = "))
        .map(|n| n.trim_matches('"').to_owned())
        .unwrap();
    library.resolve(&name, host).unwrap()
}

/// A registry in Dell's JSON shape.
pub(crate) fn registry(attributes: Vec<Value>, dependencies: Vec<Value>) -> AttributeRegistry {
    serde_json::from_value(json!({
        "Id": "SyntheticRegistry.v1_0_0",
        "RegistryEntries": {"Attributes": attributes, "Dependencies": dependencies}
    }))
    .unwrap()
}

/// An enumeration attribute definition.
pub(crate) fn enumeration(name: &str, values: &[&str]) -> Value {
    let values: Vec<Value> = values.iter().map(|v| json!({"ValueName": v})).collect();
    json!({"AttributeName": name, "Type": "Enumeration", "ReadOnly": false, "Hidden": false, "Value": values})
}

/// A `Map` dependency: `target.property = to` when any `(attribute, op, value)` holds (Dell
/// sends no `MapTerms`, and its conditions join with OR).
pub(crate) fn rule(target: &str, property: &str, to: Value, from: &[(&str, &str, Value)]) -> Value {
    let from: Vec<Value> = from
        .iter()
        .map(|(a, op, v)| json!({"MapFromAttribute": a, "MapFromCondition": op, "MapFromProperty": "CurrentValue", "MapFromValue": v}))
        .collect();
    json!({"DependencyFor": target, "Type": "Map", "Dependency": {
        "MapFrom": from, "MapToAttribute": target, "MapToProperty": property, "MapToValue": to}})
}

/// Attributes from string pairs.
pub(crate) fn attrs(pairs: &[(&str, &str)]) -> Attributes {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect()
}
