//! The OData documents a Redfish service serves besides its resources: the service document
//! at `/redfish/v1/odata` and the metadata document at `/redfish/v1/$metadata`, generated from
//! the tree when it has none of its own, and where each schema they name is published (the
//! location the `JsonSchemas` files give too).
//!
//! The metadata document references each schema namespace the service's documents use at its
//! published location (DMTF's site, or Dell's for Dell's OEM schemas) rather than at a copy the
//! service serves, as real iDRACs do: validators resolve those URIs from their own schema cache.
//! Its entity container extends the service root's `ServiceContainer`, as DSP0266 asks.

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The OData service document: the service root and every resource linked from it, each by
/// the last segment of its URI (real iDRACs name `/redfish/v1/TaskService` "TaskService").
pub fn service_document(root: &Value) -> Value {
    let mut value = vec![json!({"kind": "Singleton", "name": "Service", "url": "/redfish/v1"})];
    if let Some(map) = root.as_object() {
        for (key, v) in map {
            if key.starts_with('@') || key == "Links" {
                continue;
            }
            let Some(url) = v.get("@odata.id").and_then(Value::as_str) else {
                continue;
            };
            let url = url.trim_end_matches('/');
            let name = url.rsplit('/').next().unwrap_or(key);
            value.push(json!({"kind": "Singleton", "name": name, "url": url}));
        }
    }
    json!({"@odata.context": "/redfish/v1/$metadata", "value": value})
}

/// The metadata document (CSDL XML) for `namespaces` (as [`crate::synth::namespaces`] gives
/// them), the service root's type naming the container it extends.
pub fn metadata(namespaces: &BTreeSet<String>, service_root_type: Option<&str>) -> String {
    // Namespaces by the schema file that defines them (`Bios` and `Bios.v1_2_1` in Bios_v1.xml).
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ns in namespaces {
        let base = ns.split('.').next().unwrap_or(ns).to_owned();
        files.entry(base).or_default().insert(ns.clone());
    }
    // Every Redfish schema builds on these two.
    files
        .entry("RedfishExtensions".into())
        .or_default()
        .insert("RedfishExtensions.v1_0_0".into());
    files.entry("Resource".into()).or_default().insert("Resource".into());
    let container = service_root_type
        .map(|t| t.trim_start_matches('#'))
        .and_then(|t| t.rsplit_once('.'))
        .map_or("ServiceRoot.v1_0_0".to_owned(), |(ns, _)| ns.to_owned());
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str("<edmx:Edmx xmlns:edmx=\"http://docs.oasis-open.org/odata/ns/edmx\" Version=\"4.0\">\n");
    for (file, names) in &files {
        let _ = writeln!(
            out,
            "  <edmx:Reference Uri=\"{}\">",
            quick_xml::escape::escape(publication(file, "_v1.xml"))
        );
        for ns in names {
            if ns == "RedfishExtensions.v1_0_0" {
                out.push_str("    <edmx:Include Namespace=\"RedfishExtensions.v1_0_0\" Alias=\"Redfish\"/>\n");
            } else {
                let _ = writeln!(
                    out,
                    "    <edmx:Include Namespace=\"{}\"/>",
                    quick_xml::escape::escape(ns)
                );
            }
        }
        out.push_str("  </edmx:Reference>\n");
    }
    out.push_str("  <edmx:DataServices>\n");
    out.push_str("    <Schema xmlns=\"http://docs.oasis-open.org/odata/ns/edm\" Namespace=\"Service\">\n");
    let _ = writeln!(
        out,
        "      <EntityContainer Name=\"Service\" Extends=\"{}.ServiceContainer\"/>",
        quick_xml::escape::escape(&container)
    );
    out.push_str("    </Schema>\n  </edmx:DataServices>\n</edmx:Edmx>\n");
    out
}

/// Where a namespace's schema is published: DMTF's site for DMTF schemas, Dell's for Dell's
/// OEM ones (the `PublicationUri` real `JsonSchemas` files name).
pub fn publication(namespace: &str, suffix: &str) -> String {
    if namespace.starts_with("Dell") || namespace.starts_with("OemManager") {
        format!("http://downloads.dell.com/redfish/bmc/schemas/{namespace}{suffix}")
    } else {
        format!("http://redfish.dmtf.org/schemas/v1/{namespace}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_document_names_each_linked_resource_by_its_uri() {
        let root = json!({"@odata.id": "/redfish/v1", "Systems": {"@odata.id": "/redfish/v1/Systems"},
                          "Tasks": {"@odata.id": "/redfish/v1/TaskService"}, "Links": {"Sessions": {"@odata.id": "/x"}},
                          "Vendor": "Dell"});
        let doc = service_document(&root);
        assert_eq!(doc["@odata.context"], "/redfish/v1/$metadata");
        let names: Vec<&str> = doc["value"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Service", "Systems", "TaskService"]);
    }

    #[test]
    fn metadata_references_published_schemas_and_extends_the_service_root() {
        let ns: BTreeSet<String> = ["Bios", "Bios.v1_2_1", "DellAttributes", "DellAttributes.v1_0_0"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        let xml = metadata(&ns, Some("#ServiceRoot.v1_15_0.ServiceRoot"));
        assert!(xml.contains("<edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/v1/Bios_v1.xml\">"));
        assert!(xml.contains("<edmx:Include Namespace=\"Bios.v1_2_1\"/>"));
        assert!(xml.contains("http://downloads.dell.com/redfish/bmc/schemas/DellAttributes_v1.xml"));
        assert!(xml.contains("Extends=\"ServiceRoot.v1_15_0.ServiceContainer\""));
        assert!(xml.contains("Alias=\"Redfish\""));
        assert!(xml.contains("http://redfish.dmtf.org/schemas/v1/Resource_v1.xml"));
    }
}
