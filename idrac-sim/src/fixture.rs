//! A fixture tree loaded once and shared by every emulated host: the raw documents by path,
//! and the typed pieces the behaviour needs (registries, initial values, identity).

use redfish_client::error::decode_json;
use redfish_client::oem::dell::{self, AttributeGroup};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{Attributes, Bios};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

/// Where the manager (iDRAC) attribute registry lives in the fixtures. Its shape on real iDRACs
/// is unverified (fixtures/README.md).
pub const MANAGER_REGISTRY: &str = "/redfish/v1/Registries/ManagerAttributeRegistry.v1_0_0/ManagerAttributeRegistry";

/// The names of the embedded fixture trees.
pub fn builtin_models() -> Vec<&'static str> {
    let mut models: Vec<&str> = EMBEDDED.iter().map(|(m, _, _)| *m).collect();
    models.dedup();
    models
}

/// A fixture tree that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// No embedded tree by that name.
    #[error("no built-in fixture {0:?}; built-in models: {1}")]
    UnknownModel(String, String),
    /// A file could not be read.
    #[error("reading fixture {path}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A document is not what the emulator needs.
    #[error("fixture {path}: {what}")]
    Invalid {
        /// The resource.
        path: String,
        /// What is wrong.
        what: String,
    },
}

/// The parsed tree.
#[derive(Debug)]
pub struct Fixture {
    /// Model directory name (`r7625`) or the directory path.
    pub name: String,
    docs: HashMap<String, Value>,
    /// The BIOS attribute registry.
    pub bios_registry: AttributeRegistry,
    /// The iDRAC attribute registry, when the tree has one.
    pub manager_registry: Option<AttributeRegistry>,
    /// BIOS values at start.
    pub bios: Attributes,
    /// DellAttributes values at start.
    pub dell_attributes: BTreeMap<AttributeGroup, Attributes>,
    /// Service tag of the recorded machine.
    pub service_tag: String,
    /// e.g. `PowerEdge R7625`.
    pub model: String,
    /// CPU sockets.
    pub sockets: u32,
    /// CPU model string.
    pub cpu_model: String,
}

impl Fixture {
    /// An embedded tree (`r7625`, `r7525`, `c6615`).
    pub fn builtin(model: &str) -> Result<Self, FixtureError> {
        let docs: Vec<(String, &str)> = EMBEDDED
            .iter()
            .filter(|(m, _, _)| *m == model)
            .map(|(_, p, text)| ((*p).to_owned(), *text))
            .collect();
        if docs.is_empty() {
            return Err(FixtureError::UnknownModel(
                model.to_owned(),
                builtin_models().join(", "),
            ));
        }
        let mut parsed = HashMap::new();
        for (path, text) in docs {
            parsed.insert(path.clone(), parse(&path, text.as_bytes())?);
        }
        Self::from_docs(model.to_owned(), parsed)
    }

    /// A tree in a directory (`DIR/redfish/v1/.../index.json`).
    pub fn from_dir(dir: &Path) -> Result<Self, FixtureError> {
        let mut parsed = HashMap::new();
        let mut stack = vec![dir.to_owned()];
        while let Some(d) = stack.pop() {
            let entries = std::fs::read_dir(&d).map_err(|e| FixtureError::Io {
                path: d.display().to_string(),
                source: e,
            })?;
            for entry in entries.flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n == "index.json") {
                    let rel = p
                        .parent()
                        .and_then(|x| x.strip_prefix(dir).ok())
                        .map(|r| format!("/{}", r.to_string_lossy()))
                        .unwrap_or_default();
                    let bytes = std::fs::read(&p).map_err(|e| FixtureError::Io {
                        path: p.display().to_string(),
                        source: e,
                    })?;
                    parsed.insert(rel.clone(), parse(&rel, &bytes)?);
                }
            }
        }
        Self::from_docs(dir.display().to_string(), parsed)
    }

    fn from_docs(name: String, docs: HashMap<String, Value>) -> Result<Self, FixtureError> {
        let typed = |path: &str| -> Result<&Value, FixtureError> {
            docs.get(path).ok_or_else(|| FixtureError::Invalid {
                path: path.to_owned(),
                what: "missing".into(),
            })
        };
        let decode = |path: &str, v: &Value| -> Result<Vec<u8>, FixtureError> {
            serde_json::to_vec(v).map_err(|e| FixtureError::Invalid {
                path: path.to_owned(),
                what: e.to_string(),
            })
        };
        let bios_doc = typed(dell::BIOS)?;
        let bios: Bios =
            decode_json("FILE", dell::BIOS, &decode(dell::BIOS, bios_doc)?).map_err(|e| FixtureError::Invalid {
                path: dell::BIOS.into(),
                what: e.to_string(),
            })?;
        let reg_doc = typed(dell::BIOS_REGISTRY)?;
        let bios_registry: AttributeRegistry =
            decode_json("FILE", dell::BIOS_REGISTRY, &decode(dell::BIOS_REGISTRY, reg_doc)?).map_err(|e| {
                FixtureError::Invalid {
                    path: dell::BIOS_REGISTRY.into(),
                    what: e.to_string(),
                }
            })?;
        let manager_registry = match docs.get(MANAGER_REGISTRY) {
            Some(v) => Some(
                decode_json("FILE", MANAGER_REGISTRY, &decode(MANAGER_REGISTRY, v)?).map_err(|e| {
                    FixtureError::Invalid {
                        path: MANAGER_REGISTRY.into(),
                        what: e.to_string(),
                    }
                })?,
            ),
            None => None,
        };
        let mut dell_attributes = BTreeMap::new();
        for group in AttributeGroup::ALL {
            if let Some(doc) = docs.get(&group.path()) {
                let attrs: Attributes = serde_json::from_value(doc["Attributes"].clone()).unwrap_or_default();
                dell_attributes.insert(group, attrs);
            }
        }
        let root = typed("/redfish/v1")?;
        let system = typed(dell::SYSTEM)?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let service_tag = root["Oem"]["Dell"]["ServiceTag"]
            .as_str()
            .or_else(|| system["SKU"].as_str())
            .unwrap_or("SIM0000")
            .to_owned();
        Ok(Self {
            name,
            bios: bios.attributes,
            bios_registry,
            manager_registry,
            dell_attributes,
            service_tag,
            model: text(&system["Model"]),
            sockets: system["ProcessorSummary"]["Count"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(1),
            cpu_model: text(&system["ProcessorSummary"]["Model"]),
            docs,
        })
    }

    /// The recorded document at `path` (no trailing slash, no query).
    pub fn doc(&self, path: &str) -> Option<&Value> {
        self.docs.get(path)
    }
}

fn parse(path: &str, bytes: &[u8]) -> Result<Value, FixtureError> {
    serde_json::from_slice(bytes).map_err(|e| FixtureError::Invalid {
        path: path.to_owned(),
        what: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_model_loads() {
        assert_eq!(builtin_models(), vec!["c6615", "r7525", "r7625"]);
        for m in builtin_models() {
            let f = Fixture::builtin(m).unwrap();
            assert!(f.bios.len() > 100, "{m}");
            assert!(f.manager_registry.is_some(), "{m}");
            assert_eq!(f.dell_attributes.len(), 3, "{m}");
        }
        let r = Fixture::builtin("r7625").unwrap();
        assert_eq!(
            (r.sockets, r.service_tag.as_str(), r.model.as_str()),
            (2, "R7625A1", "PowerEdge R7625")
        );
        assert!(matches!(Fixture::builtin("r9999"), Err(FixtureError::UnknownModel(..))));
    }

    #[test]
    fn a_directory_tree_loads_like_the_embedded_one() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/c6615");
        let f = Fixture::from_dir(&dir).unwrap();
        assert_eq!(f.bios, Fixture::builtin("c6615").unwrap().bios);
    }
}
