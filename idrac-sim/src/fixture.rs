//! A fixture tree loaded once and shared by every emulated host: the raw documents by path,
//! and the typed pieces the behaviour needs (registries, initial values, identity).
//!
//! A tree is any directory in the DMTF mockup layout, `DIR/redfish/v1/<path>/index.json`: the
//! embedded models, a tree `rftune capture` wrote, or a public Redfish mockup. The documents that
//! carry behaviour are found as a client finds them ([`Places`]): iDRAC's fixed paths, else the
//! first member of the `Systems` collection, its `Bios` link, the BIOS's settings object and the
//! registry file the `Registries` collection points to. An iLO's tree is keyed by lower-case
//! paths, as iLO matches paths without regard to case. Real iDRACs leave
//! hidden attributes out of `GET …/Bios`, so a tree rarely says what a hidden attribute holds;
//! [`unlisted_values`] decides it, the same way for every tree: from the flags the registry
//! recorded where rules tell, else [`inferred_value`] (the fixture generator keeps its hidden
//! values equal to it).

use crate::rendered::Rendered;
use crate::synth::{self, Completion};
use axum::body::Bytes;
use redfish_client::dependencies::{DependencyEvaluator, Evaluation, Flag};
use redfish_client::oem::dell::{self, AttributeGroup};
use redfish_client::resources::attribute_registry::{Attribute, AttributeProperty, AttributeRegistry, AttributeType};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::generation::Bmc;

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

/// Where real iDRACs serve the manager (iDRAC) attribute registry, and where Dell's scripts
/// read it (R750 capture, iDRAC 6.00).
pub const MANAGER_REGISTRY: &str =
    "/redfish/v1/Registries/ManagerAttributeRegistry/ManagerAttributeRegistry.v1_0_0.json";

/// Registry pointers (`MessageRegistryFile`) whose `Location[].Uri` may name the manager
/// registry in other trees.
const MANAGER_REGISTRY_POINTERS: [&str; 2] = [
    "/redfish/v1/Registries/ManagerAttributeRegistry",
    "/redfish/v1/Registries/ManagerAttributeRegistry.v1_0_0",
];

/// Larger fixture files are refused rather than read (the largest real registry is ~7 MB).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Distinct rendered registries kept per tree before the cache starts over.
const MAX_RENDERED: usize = 64;

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
    /// A file or directory could not be read.
    #[error("reading fixture {path}")]
    Io {
        /// The file or directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A document is not what the emulator needs.
    #[error("fixture {path}: {what}")]
    Invalid {
        /// The file (or, for an embedded tree, `model:/redfish/v1/...`).
        path: String,
        /// What is wrong.
        what: String,
    },
}

/// The flags one host shows for one registry attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntryFlags {
    /// `ReadOnly`.
    pub read_only: bool,
    /// `Hidden`.
    pub hidden: bool,
    /// `Immutable`.
    pub immutable: bool,
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
    /// BIOS values at start, as `GET …/Bios` lists them (visible attributes only on real iDRACs).
    pub bios: Attributes,
    /// Values assumed for the registry's attributes that `Bios` does not list ([`unlisted_values`]).
    pub hidden_bios: Attributes,
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
    /// Populated DIMMs per socket, from the `Memory` collection (socket 1 first; empty when the
    /// tree records none).
    pub dimms_per_socket: Vec<usize>,
    /// The BMC the tree records (its root's `Oem.Hpe`, else its Manager's `Model`, else its
    /// firmware).
    pub bmc: Bmc,
    /// Where the documents the emulator gives behaviour to are.
    pub places: Places,
    /// Documents gzip-encoded (an iLO sends its registry files so), each once asked for.
    gzipped: Mutex<HashMap<String, Bytes>>,
    /// Registry attribute names in document order (the key of a rendering).
    registry_names: Vec<String>,
    /// Rendered registries by their flags, shared by every host of the fleet.
    rendered: Mutex<HashMap<Vec<u8>, Arc<Rendered>>>,
    /// Recorded documents served as they are, serialized on first use and shared by every
    /// host: by path and whether members were expanded.
    served: Mutex<HashMap<String, [Option<Arc<Rendered>>; 2]>>,
    /// What the emulator added to the tree ([`synth::complete`]).
    pub completion: Completion,
    /// Recorded documents that are not JSON (`DIR/redfish/v1/$metadata/index.xml`, schema
    /// files), by path.
    texts: HashMap<String, Bytes>,
    /// The metadata document generated for a tree that records none.
    metadata: OnceLock<Bytes>,
}

/// Where a tree keeps the documents the emulator gives behaviour to, as paths the routes see
/// (no trailing slash; lower case on an iLO).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// The ComputerSystem.
    pub system: String,
    /// The BIOS's current values.
    pub bios: String,
    /// The BIOS's settings object (pending values).
    pub settings: String,
    /// The BIOS attribute registry file.
    pub registry: String,
}

/// `path` as the routes of a tree of `bmc` see it: no trailing slash, and lower case on an iLO,
/// which matches paths without regard to case.
pub fn canonical(bmc: Bmc, path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    let trimmed = if trimmed.is_empty() { "/" } else { trimmed };
    if bmc == Bmc::Ilo {
        trimmed.to_ascii_lowercase()
    } else {
        trimmed.to_owned()
    }
}

/// An iLO tree keyed by lower-case paths. A public capture may hold one resource under two
/// spellings (`Systems/1/Bios` and `systems/1/bios`): the document recorded at its own
/// `@odata.id` wins.
fn fold_case(docs: HashMap<String, Value>) -> HashMap<String, Value> {
    let mut folded: HashMap<String, (bool, String, Value)> = HashMap::new();
    for (path, doc) in docs {
        let own = doc["@odata.id"]
            .as_str()
            .is_some_and(|id| canonical(Bmc::Idrac9, id) == path);
        let key = canonical(Bmc::Ilo, &path);
        let better = match folded.get(&key) {
            None => true,
            // Deterministic whatever the walk's order: the own spelling, else the first path.
            Some((held_own, held_path, _)) => (own && !held_own) || (own == *held_own && path < *held_path),
        };
        if better {
            folded.insert(key, (own, path, doc));
        }
    }
    folded.into_iter().map(|(k, (_, _, doc))| (k, doc)).collect()
}

/// Populated DIMMs per socket in the `Memory` collection of the system at `system`: a DIMM's
/// socket is the processor it links (what real iDRACs give), else its `MemoryLocation.Socket`
/// (iLO's), else the letter of Dell's `DIMM.Socket.<letter>` id; an absent or empty slot does
/// not count.
fn dimms_per_socket(docs: &HashMap<String, Value>, system: &str, bmc: Bmc) -> Vec<usize> {
    let collection = canonical(bmc, &format!("{system}/Memory"));
    let Some(members) = docs.get(&collection).and_then(|c| c["Members"].as_array()) else {
        return Vec::new();
    };
    let mut counts: Vec<usize> = Vec::new();
    for member in members {
        let Some(dimm) = member["@odata.id"].as_str().and_then(|p| docs.get(&canonical(bmc, p))) else {
            continue;
        };
        let present = dimm["CapacityMiB"].as_u64().unwrap_or(0) > 0 && dimm["Status"]["State"] != "Absent";
        let socket = dimm["Links"]["Processors"][0]["@odata.id"]
            .as_str()
            .and_then(|p| p.rsplit('.').next())
            .and_then(|n| n.parse::<usize>().ok())
            .or_else(|| {
                dimm["MemoryLocation"]["Socket"]
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
            })
            .or_else(|| {
                let letter = dimm["Id"].as_str()?.strip_prefix("DIMM.Socket.")?.chars().next()?;
                letter
                    .is_ascii_uppercase()
                    .then(|| usize::from(letter as u8 - b'A') + 1)
            });
        if let (true, Some(socket)) = (present, socket.filter(|s| *s >= 1)) {
            if counts.len() < socket {
                counts.resize(socket, 0);
            }
            counts[socket - 1] += 1;
        }
    }
    counts
}

/// What a host assumes for an attribute whose value the tree does not give (real iDRACs never
/// list hidden values): the registry's `DefaultValue`, else the first enumeration value, else
/// the lower bound (0 without one), `false` for booleans, null for passwords, `""` otherwise.
pub fn inferred_value(attr: &Attribute) -> AttributeValue {
    if let Some(v) = &attr.default_value
        && *v != AttributeValue::Null
    {
        return v.clone();
    }
    match attr.kind {
        AttributeType::Enumeration => attr
            .values
            .first()
            .map_or_else(|| AttributeValue::from(""), |v| v.value_name.clone().into()),
        AttributeType::Integer => {
            let lower = attr.lower_bound.unwrap_or(0);
            match i64::try_from(lower) {
                Ok(i) => AttributeValue::Integer(i),
                Err(_) => AttributeValue::from(Value::from(u64::try_from(lower).unwrap_or(u64::MAX))),
            }
        }
        AttributeType::Password => AttributeValue::Null,
        AttributeType::Boolean => AttributeValue::Bool(false),
        AttributeType::String | AttributeType::Unknown => AttributeValue::from(""),
    }
}

/// Values for the registry's attributes that `listed` (a `GET …/Bios`) leaves out: for a
/// hidden switch that other attributes' `ReadOnly`/`Hidden` rules test, the value under which
/// those rules give the flags the registry recorded (real registries record the flags in force:
/// an R750's `PxeDev5Interface` is `ReadOnly`, which only `PxeDev5EnDis = Disabled` explains,
/// although `Enabled` is listed first); for every other attribute, [`inferred_value`].
pub fn unlisted_values(registry: &AttributeRegistry, listed: &Attributes) -> Attributes {
    let attributes = &registry.registry_entries.attributes;
    let mut values: Attributes = listed.clone();
    let mut unlisted = Attributes::new();
    for a in attributes.iter().filter(|a| !listed.contains_key(&a.attribute_name)) {
        let v = inferred_value(a);
        values.insert(a.attribute_name.clone(), v.clone());
        unlisted.insert(a.attribute_name.clone(), v);
    }
    // The flag rules each unlisted switch takes part in, by the attributes they flag.
    let mut tested_by: BTreeMap<&str, Vec<(&str, Flag)>> = BTreeMap::new();
    for rule in registry
        .registry_entries
        .dependencies
        .iter()
        .filter_map(|d| d.dependency.as_ref())
    {
        let flag = match rule.map_to_property {
            AttributeProperty::ReadOnly | AttributeProperty::GrayOut => Flag::ReadOnly,
            AttributeProperty::Hidden => Flag::Hidden,
            _ => continue,
        };
        for c in &rule.map_from {
            let name = c.map_from_attribute.as_str();
            if c.map_from_property == AttributeProperty::CurrentValue && unlisted.contains_key(name) {
                tested_by
                    .entry(name)
                    .or_default()
                    .push((rule.map_to_attribute.as_str(), flag));
            }
        }
    }
    if tested_by.is_empty() {
        return unlisted;
    }
    let evaluator = DependencyEvaluator::new(registry);
    let recorded = |name: &str, flag: Flag| {
        evaluator.attribute(name).map(|a| match flag {
            Flag::ReadOnly => a.is_read_only(),
            Flag::Hidden => a.is_hidden(),
        })
    };
    let mismatches = |evaluation: &Evaluation<'_>, targets: &[(&str, Flag)]| {
        targets
            .iter()
            .filter(|(target, flag)| {
                let now = match flag {
                    Flag::ReadOnly => evaluation.is_read_only(target),
                    Flag::Hidden => evaluation.is_hidden(target),
                };
                recorded(target, *flag).is_some_and(|r| r != now)
            })
            .count()
    };
    // One evaluation with every guess; only a switch whose rules then disagree with the
    // registry tries its other values.
    let mut evaluation = evaluator.evaluate(&values);
    for (name, targets) in &tested_by {
        let wrong = mismatches(&evaluation, targets);
        if wrong == 0 {
            continue;
        }
        let Some(attr) = evaluator.attribute(name) else {
            continue;
        };
        let candidates: Vec<AttributeValue> = match attr.kind {
            AttributeType::Enumeration => attr.allowed_values().map(AttributeValue::from).collect(),
            AttributeType::Boolean => vec![AttributeValue::Bool(false), AttributeValue::Bool(true)],
            _ => continue,
        };
        // Each candidate is tried in place of the guess, which is put back unless one wins.
        let guess = values.get(*name).cloned();
        let mut best: Option<(usize, AttributeValue, Evaluation<'_>)> = None;
        for candidate in candidates {
            values.insert((*name).to_owned(), candidate.clone());
            let tried = evaluator.evaluate(&values);
            let score = mismatches(&tried, targets);
            if score < best.as_ref().map_or(wrong, |b| b.0) {
                let done = score == 0;
                best = Some((score, candidate, tried));
                if done {
                    break;
                }
            }
        }
        match best {
            Some((_, value, tried)) => {
                values.insert((*name).to_owned(), value.clone());
                unlisted.insert((*name).to_owned(), value);
                evaluation = tried;
            }
            None => match guess {
                Some(guess) => {
                    values.insert((*name).to_owned(), guess);
                }
                None => {
                    values.remove(*name);
                }
            },
        }
    }
    unlisted
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
        let locate = |path: &str| format!("{model}:{path}");
        let mut parsed = HashMap::new();
        for (path, text) in docs {
            parsed.insert(path.clone(), parse(&locate(&path), text.as_bytes())?);
        }
        Self::from_docs(model.to_owned(), parsed, HashMap::new(), &locate)
    }

    /// A tree in a directory: `DIR/redfish/v1/<path>/index.json`. Other files are ignored.
    pub fn from_dir(dir: &Path) -> Result<Self, FixtureError> {
        let root_file = dir.join("redfish/v1/index.json");
        if !root_file.is_file() {
            let hint = if dir.join("index.json").is_file() && dir.ends_with("redfish/v1") {
                format!(
                    "; give the directory that holds redfish/v1 ({})",
                    dir.parent().and_then(Path::parent).unwrap_or(dir).display()
                )
            } else {
                String::new()
            };
            return Err(FixtureError::Invalid {
                path: root_file.display().to_string(),
                what: format!("missing: a fixture tree is laid out as DIR/redfish/v1/<path>/index.json{hint}"),
            });
        }
        let mut parsed = HashMap::new();
        let mut texts = HashMap::new();
        let mut stack = vec![dir.to_owned()];
        while let Some(d) = stack.pop() {
            let entries = std::fs::read_dir(&d).map_err(|e| FixtureError::Io {
                path: d.display().to_string(),
                source: e,
            })?;
            for entry in entries {
                let entry = entry.map_err(|e| FixtureError::Io {
                    path: d.display().to_string(),
                    source: e,
                })?;
                let p = entry.path();
                // file_type does not follow symlinks: a linked directory cannot loop the walk.
                let kind = entry.file_type().map_err(|e| FixtureError::Io {
                    path: p.display().to_string(),
                    source: e,
                })?;
                if kind.is_dir() {
                    stack.push(p);
                } else if p.file_name().is_some_and(|n| n == "index.json") {
                    let Some(rel) = resource_path(dir, &p) else { continue };
                    parsed.insert(rel, read_document(&p)?);
                } else if p.file_name().is_some_and(|n| n == "index.xml") {
                    // The mockup layout of a document that is not JSON: `$metadata`, the CSDL
                    // schema files a real iDRAC serves under `Schemas/`.
                    let Some(rel) = resource_path(dir, &p) else { continue };
                    texts.insert(rel, Bytes::from(read_bytes(&p)?));
                }
            }
        }
        let locate = |path: &str| {
            let mut file = PathBuf::from(dir);
            file.push(path.trim_start_matches('/'));
            file.push("index.json");
            file.display().to_string()
        };
        Self::from_docs(dir.display().to_string(), parsed, texts, &locate)
    }

    fn from_docs(
        name: String,
        mut docs: HashMap<String, Value>,
        texts: HashMap<String, Bytes>,
        locate: &dyn Fn(&str) -> String,
    ) -> Result<Self, FixtureError> {
        let bmc = crate::generation::of(docs.get("/redfish/v1"), docs.get(dell::MANAGER));
        // iLO's documents are neither iDRAC's nor completed with iDRAC's: an iLO gets the
        // message registries its answers name.
        let completion = if bmc == Bmc::Ilo {
            docs = fold_case(docs);
            synth::complete_ilo(&mut docs)
        } else {
            synth::complete(&mut docs)
        };
        let texts: HashMap<String, Bytes> = texts.into_iter().map(|(p, t)| (canonical(bmc, &p), t)).collect();
        let invalid = |path: &str, what: String| FixtureError::Invalid {
            path: locate(path),
            what,
        };
        let required = |path: &str, what: &str| -> Result<&Value, FixtureError> {
            let doc = docs
                .get(path)
                .ok_or_else(|| invalid(path, format!("missing; the emulator needs {what}")))?;
            if doc.is_object() {
                Ok(doc)
            } else {
                Err(invalid(
                    path,
                    format!("is not a JSON object; the emulator needs {what}"),
                ))
            }
        };
        let root = required("/redfish/v1", "the service root")?;
        let places = places(&docs, bmc).map_err(|(path, what)| invalid(&path, what))?;
        let system = required(&places.system, "the ComputerSystem")?;
        let bios_doc = required(&places.bios, "the BIOS current values")?;
        let listed = bios_doc
            .get("Attributes")
            .filter(|a| a.is_object())
            .ok_or_else(|| invalid(&places.bios, "has no `Attributes` object".into()))?;
        let bios: Attributes = typed(listed).map_err(|e| invalid(&places.bios, format!("`Attributes`: {e}")))?;
        let reg_doc = required(&places.registry, "the BIOS attribute registry")?;
        let bios_registry: AttributeRegistry = typed(reg_doc).map_err(|e| invalid(&places.registry, e))?;
        if bios_registry.registry_entries.attributes.is_empty() {
            return Err(invalid(
                &places.registry,
                "`RegistryEntries.Attributes` is empty or missing".into(),
            ));
        }
        let registry_names: Vec<String> = reg_doc["RegistryEntries"]["Attributes"]
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| e["AttributeName"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        // iLO lists every attribute it has; one the registry defines and `Bios` lacks is not on
        // this host (an empty slot's), so nothing is inferred for it.
        let hidden_bios = if bmc == Bmc::Ilo {
            Attributes::new()
        } else {
            unlisted_values(&bios_registry, &bios)
        };
        let manager_path = manager_registry_path(&docs);
        let manager_registry = match manager_path.as_deref().and_then(|p| docs.get(p).map(|d| (p, d))) {
            Some((path, doc)) => Some(typed::<AttributeRegistry>(doc).map_err(|e| invalid(path, e))?),
            None => None,
        };
        let mut dell_attributes = BTreeMap::new();
        for group in AttributeGroup::ALL {
            let path = group.path();
            if let Some(doc) = docs.get(&path) {
                let attrs = doc
                    .get("Attributes")
                    .filter(|a| a.is_object())
                    .ok_or_else(|| invalid(&path, "has no `Attributes` object".into()))?;
                let attrs: Attributes = typed(attrs).map_err(|e| invalid(&path, format!("`Attributes`: {e}")))?;
                dell_attributes.insert(group, attrs);
            }
        }
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        // iLO has no service tag: the serial number is what tells one ProLiant from another.
        let service_tag = root["Oem"]["Dell"]["ServiceTag"]
            .as_str()
            .or_else(|| system["SerialNumber"].as_str().filter(|_| bmc == Bmc::Ilo))
            .or_else(|| system["SKU"].as_str())
            .filter(|t| !t.is_empty())
            .unwrap_or("SIM0000")
            .to_owned();
        Ok(Self {
            name,
            bios,
            hidden_bios,
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
            dimms_per_socket: dimms_per_socket(&docs, &places.system, bmc),
            bmc,
            places,
            gzipped: Mutex::default(),
            docs,
            registry_names,
            rendered: Mutex::new(HashMap::new()),
            served: Mutex::new(HashMap::new()),
            completion,
            texts,
            metadata: OnceLock::new(),
        })
    }

    /// The BIOS registry file as an iLO sends it, gzip-encoded whatever the client accepts (HPE's
    /// BIOS data model: "BIOS Attribute Registries are compressed JSON resources(gzip)"; that
    /// iLO ignores `Accept-Encoding` is assumed), compressed once for the fleet.
    pub fn bios_registry_gzip(&self) -> Bytes {
        self.gzipped(&self.places.registry).unwrap_or_default()
    }

    /// The document at `path` gzip-encoded, compressed once for the fleet; `None` when the
    /// tree has none there. An iLO sends its registry files so (HPE's "Redfish error responses
    /// and messages": the message registry files are compressed).
    pub fn gzipped(&self, path: &str) -> Option<Bytes> {
        use std::io::Write as _;
        let doc = self.docs.get(path)?;
        let mut cache = self.gzipped.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(hit) = cache.get(path) {
            return Some(hit.clone());
        }
        let json = serde_json::to_vec(doc).unwrap_or_default();
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing to a Vec cannot fail.
        let _ = encoder.write_all(&json);
        let bytes = Bytes::from(encoder.finish().unwrap_or_default());
        // Bounded: one entry per document of the tree.
        cache.insert(path.to_owned(), bytes.clone());
        Some(bytes)
    }

    /// `path` as this tree's routes see it ([`canonical`]).
    pub fn canonical(&self, path: &str) -> String {
        canonical(self.bmc, path)
    }

    /// A recorded document that is not JSON, by path.
    pub fn text(&self, path: &str) -> Option<&Bytes> {
        self.texts.get(path)
    }

    /// `$metadata`: the tree's own, else one generated for the namespaces its documents use.
    pub fn metadata(&self) -> Bytes {
        if let Some(recorded) = self.texts.get("/redfish/v1/$metadata") {
            return recorded.clone();
        }
        self.metadata
            .get_or_init(|| {
                let root_type = self.docs.get("/redfish/v1").and_then(|r| r["@odata.type"].as_str());
                Bytes::from(crate::odata::metadata(&synth::namespaces(&self.docs), root_type))
            })
            .clone()
    }

    /// The recorded document at `path` (no trailing slash, no query).
    pub fn doc(&self, path: &str) -> Option<&Value> {
        self.docs.get(path)
    }

    /// The document served at `path`, as `render` makes it from the tree alone (no host
    /// state), serialized once for the fleet. `None` (not kept) when `render` finds none.
    pub fn served(&self, path: &str, expand: bool, render: impl FnOnce() -> Option<Value>) -> Option<Arc<Rendered>> {
        let mut cache = self.served.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(hit) = cache.get(path).and_then(|e| e[usize::from(expand)].as_ref()) {
            return Some(hit.clone());
        }
        let rendered = Arc::new(Rendered::of(&render()?));
        // Bounded: one entry per path a document is served at.
        cache.entry(path.to_owned()).or_default()[usize::from(expand)] = Some(rendered.clone());
        Some(rendered)
    }

    /// The BIOS registry document with each attribute's flags set by `flags`, serialized. Hosts
    /// whose flags are equal share one rendering, so a fleet holds one copy per distinct state
    /// rather than one per host (a real registry is up to 1.2 MB).
    pub fn render_bios_registry(&self, flags: &dyn Fn(&str) -> EntryFlags) -> Arc<Rendered> {
        let key: Vec<u8> = self
            .registry_names
            .iter()
            .map(|n| {
                let f = flags(n);
                u8::from(f.read_only) | (u8::from(f.hidden) << 1) | (u8::from(f.immutable) << 2)
            })
            .collect();
        let mut cache = self.rendered.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(body) = cache.get(&key) {
            return body.clone();
        }
        let mut doc = self.docs.get(&self.places.registry).cloned().unwrap_or(Value::Null);
        if let Some(entries) = doc["RegistryEntries"]["Attributes"].as_array_mut() {
            for (entry, code) in entries.iter_mut().zip(&key) {
                if let Some(obj) = entry.as_object_mut() {
                    obj.insert("ReadOnly".into(), Value::Bool(code & 1 != 0));
                    obj.insert("Hidden".into(), Value::Bool(code & 2 != 0));
                    obj.insert("Immutable".into(), Value::Bool(code & 4 != 0));
                }
            }
        }
        let body = Arc::new(Rendered::of(&doc));
        if cache.len() >= MAX_RENDERED {
            cache.clear();
        }
        cache.insert(key, body.clone());
        body
    }
}

/// Where the documents with behaviour are, or the path and what is missing there.
fn places(docs: &HashMap<String, Value>, bmc: Bmc) -> Result<Places, (String, String)> {
    let at = |path: &str| canonical(bmc, path);
    let link =
        |doc: Option<&Value>, pointer: &str| doc.and_then(|d| d.pointer(pointer)).and_then(Value::as_str).map(at);
    let system = if docs.contains_key(dell::SYSTEM) {
        dell::SYSTEM.to_owned()
    } else {
        let systems = link(docs.get("/redfish/v1"), "/Systems/@odata.id").unwrap_or_else(|| at("/redfish/v1/Systems"));
        link(docs.get(&systems), "/Members/0/@odata.id").ok_or_else(|| {
            (
                systems.clone(),
                "lists no member; the emulator needs a ComputerSystem (iDRAC's System.Embedded.1, or the first member of Systems)".to_owned(),
            )
        })?
    };
    let bios = link(docs.get(&system), "/Bios/@odata.id").unwrap_or_else(|| dell::BIOS.to_owned());
    let settings = link(docs.get(&bios), "/@Redfish.Settings/SettingsObject/@odata.id")
        .unwrap_or_else(|| dell::BIOS_SETTINGS.to_owned());
    let registry = if docs.contains_key(dell::BIOS_REGISTRY) {
        dell::BIOS_REGISTRY.to_owned()
    } else {
        let id = docs
            .get(&bios)
            .and_then(|b| b["AttributeRegistry"].as_str())
            .ok_or_else(|| {
                (
                    bios.clone(),
                    "names no `AttributeRegistry`; the emulator needs the BIOS attribute registry".to_owned(),
                )
            })?;
        registry_file(docs, bmc, id).ok_or_else(|| {
            (
                at(&format!("/redfish/v1/Registries/{id}")),
                format!("missing, or its `Location` names no file in the tree; the emulator needs the BIOS attribute registry {id}"),
            )
        })?
    };
    Ok(Places {
        system,
        bios,
        settings,
        registry,
    })
}

/// The registry file of registry `id`, as a client finds it: the `Registries` member of that id
/// (or, failing that, the member whose `Registry` names it), its English `Location` first.
fn registry_file(docs: &HashMap<String, Value>, bmc: Bmc, id: &str) -> Option<String> {
    let direct = docs.get(&canonical(bmc, &format!("/redfish/v1/Registries/{id}")));
    let listed = || {
        docs.get(&canonical(bmc, "/redfish/v1/Registries"))?["Members"]
            .as_array()?
            .iter()
            .filter_map(|m| m["@odata.id"].as_str())
            .filter_map(|p| docs.get(&canonical(bmc, p)))
            .find(|m| m["Registry"].as_str() == Some(id) || m["Id"].as_str() == Some(id))
    };
    let pointer = direct.or_else(listed)?;
    let mut locations: Vec<&Value> = pointer["Location"].as_array()?.iter().collect();
    locations.sort_by_key(|l| l["Language"].as_str() != Some("en"));
    locations
        .into_iter()
        .filter_map(|l| l["Uri"].as_str())
        .map(|u| canonical(bmc, u))
        .find(|u| docs.contains_key(u))
}

/// Where the manager registry is: the fixtures' path, or where a registry pointer says.
fn manager_registry_path(docs: &HashMap<String, Value>) -> Option<String> {
    if docs.contains_key(MANAGER_REGISTRY) {
        return Some(MANAGER_REGISTRY.to_owned());
    }
    MANAGER_REGISTRY_POINTERS
        .iter()
        .filter_map(|p| docs.get(*p))
        .flat_map(|pointer| pointer["Location"].as_array().cloned().unwrap_or_default())
        .filter_map(|loc| loc["Uri"].as_str().map(|u| u.trim_end_matches('/').to_owned()))
        .find(|uri| docs.contains_key(uri))
}

/// `/redfish/v1/...` for `DIR/redfish/v1/.../index.json`.
fn resource_path(dir: &Path, file: &Path) -> Option<String> {
    let rel = file.parent()?.strip_prefix(dir).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(format!("/{}", parts.join("/")))
}

fn read_document(file: &Path) -> Result<Value, FixtureError> {
    parse(&file.display().to_string(), &read_bytes(file)?)
}

/// A fixture file's bytes, refusing files over [`MAX_FILE_BYTES`].
fn read_bytes(file: &Path) -> Result<Vec<u8>, FixtureError> {
    let shown = file.display().to_string();
    let size = std::fs::metadata(file)
        .map_err(|e| FixtureError::Io {
            path: shown.clone(),
            source: e,
        })?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(FixtureError::Invalid {
            path: shown,
            what: format!("{size} bytes; fixture documents larger than {MAX_FILE_BYTES} bytes are refused"),
        });
    }
    std::fs::read(file).map_err(|e| FixtureError::Io {
        path: shown.clone(),
        source: e,
    })
}

fn parse(shown: &str, bytes: &[u8]) -> Result<Value, FixtureError> {
    serde_json::from_slice(bytes).map_err(|e| FixtureError::Invalid {
        path: shown.to_owned(),
        what: format!("not JSON: {e}"),
    })
}

/// Decodes a document into its model, naming the JSON path of the first mismatch.
fn typed<T: serde::de::DeserializeOwned>(doc: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(doc).map_err(|e| {
        let at = e.path().to_string();
        format!(
            "does not decode as {} at `{at}`: {}",
            std::any::type_name::<T>().rsplit("::").next().unwrap_or("a document"),
            e.into_inner()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_model_loads() {
        assert_eq!(builtin_models(), vec!["c6615", "dl385", "r7525", "r7625", "r7725"]);
        for m in builtin_models().into_iter().filter(|m| *m != "dl385") {
            let f = Fixture::builtin(m).unwrap();
            assert!(f.bios.len() > 100, "{m}");
            assert!(f.manager_registry.is_some(), "{m}");
            assert_eq!(f.dell_attributes.len(), 3, "{m}");
        }
        let r = Fixture::builtin("r7625").unwrap();
        assert_eq!(
            (r.sockets, r.service_tag.as_str(), r.model.as_str(), r.bmc),
            (2, "R7625A1", "PowerEdge R7625", Bmc::Idrac9)
        );
        let r = Fixture::builtin("r7725").unwrap();
        assert_eq!(
            (r.sockets, r.cpu_model.as_str(), r.model.as_str(), r.bmc),
            (2, "AMD EPYC 9965 192-Core Processor", "PowerEdge R7725", Bmc::Idrac10)
        );
        assert!(matches!(Fixture::builtin("r9999"), Err(FixtureError::UnknownModel(..))));
    }

    #[test]
    fn a_directory_tree_loads_like_the_embedded_one() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/c6615");
        let f = Fixture::from_dir(&dir).unwrap();
        let builtin = Fixture::builtin("c6615").unwrap();
        assert_eq!(f.bios, builtin.bios);
        assert_eq!(f.hidden_bios, builtin.hidden_bios);
    }

    /// A mockup whose system is not at iDRAC's path is found through its Systems collection;
    /// one whose collection lists nothing is refused, saying where and what is missing.
    #[test]
    fn a_tree_without_system_embedded_1_is_found_through_its_links_or_refused_with_the_reason() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/dl385");
        let f = Fixture::from_dir(&dir).unwrap();
        assert_eq!(f.bmc, Bmc::Ilo);
        assert_eq!(
            f.places.registry,
            "/redfish/v1/registrystore/registries/en/biosattributeregistrya42.v1_2_60"
        );
        assert_eq!((f.sockets, f.dimms_per_socket.clone()), (2, vec![8, 8]));
        assert!(f.doc("/redfish/v1/systems/1/bios").is_some() && f.doc("/redfish/v1/Systems/1").is_none());
        let empty = tempfile::tempdir().unwrap();
        let root = empty.path().join("redfish/v1");
        std::fs::create_dir_all(root.join("Systems")).unwrap();
        std::fs::write(
            root.join("index.json"),
            r#"{"@odata.id": "/redfish/v1", "Systems": {"@odata.id": "/redfish/v1/Systems"}}"#,
        )
        .unwrap();
        std::fs::write(root.join("Systems/index.json"), r#"{"Members": []}"#).unwrap();
        let err = Fixture::from_dir(empty.path()).unwrap_err().to_string();
        assert!(err.contains("Systems") && err.contains("lists no member"), "{err}");
    }

    /// The generator keeps hidden values equal to what the emulator infers; the trees list only
    /// visible attributes, so every other registry attribute gets an inferred value.
    #[test]
    fn unlisted_attributes_get_the_inferred_value_the_generator_used() {
        let f = Fixture::builtin("r7525").unwrap();
        // Exactly the registry's Hidden entries are unlisted (172 on r7525: the rules' targets
        // plus the registry-only attributes real Dell registries carry).
        let mut hidden: Vec<&str> = f
            .bios_registry
            .registry_entries
            .attributes
            .iter()
            .filter(|a| a.hidden == Some(true))
            .map(|a| a.attribute_name.as_str())
            .collect();
        hidden.sort_unstable();
        let mut names: Vec<&str> = f.hidden_bios.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, hidden);
        assert!(names.len() > 150, "{}", names.len());
        // Hidden by a rule (DLWM unforced, ApbDis off), synthetic, and registry-only entries of
        // each type.
        assert_eq!(f.hidden_bios["DlwmForcedWidth"], "x16".into());
        assert_eq!(f.hidden_bios["FixedSocPstate"], "FixedSocPstate0".into());
        assert_eq!(f.hidden_bios["SyntheticU64Register"], AttributeValue::Integer(0));
        assert_eq!(f.hidden_bios["PxeDev5EnDis"], "Disabled".into());
        assert_eq!(f.hidden_bios["HttpDev1v6Address"], "".into());
        assert_eq!(f.hidden_bios["Proc3NumCores"], AttributeValue::Integer(0));
        assert_eq!(f.hidden_bios["OldSysPassword"], AttributeValue::Null);
        // AcPwrRcvryUserDelay is listed now, as real R6515 and R7615 hosts list it.
        assert_eq!(f.bios["AcPwrRcvryUserDelay"], AttributeValue::Integer(60));
        assert_eq!(
            f.hidden_bios.len() + f.bios.len(),
            f.bios_registry.registry_entries.attributes.len()
        );
    }

    #[test]
    fn inference_prefers_the_default_then_the_type() {
        let attr = |v: Value| -> Attribute { serde_json::from_value(v).unwrap() };
        let cases = [
            (
                attr(
                    serde_json::json!({"AttributeName": "A", "Type": "Enumeration", "DefaultValue": "B",
                                        "Value": [{"ValueName": "A"}, {"ValueName": "B"}]}),
                ),
                AttributeValue::from("B"),
            ),
            (
                attr(serde_json::json!({"AttributeName": "A", "Type": "Enumeration",
                                        "Value": [{"ValueName": "X"}, {"ValueName": "Y"}]})),
                "X".into(),
            ),
            (
                attr(
                    serde_json::json!({"AttributeName": "A", "Type": "Integer", "LowerBound": 18446744073709551615_u64}),
                ),
                AttributeValue::from(serde_json::json!(18446744073709551615_u64)),
            ),
            (
                attr(serde_json::json!({"AttributeName": "A", "Type": "Integer"})),
                AttributeValue::Integer(0),
            ),
            (
                attr(serde_json::json!({"AttributeName": "A", "Type": "String"})),
                "".into(),
            ),
            (
                attr(serde_json::json!({"AttributeName": "A", "Type": "Password"})),
                AttributeValue::Null,
            ),
        ];
        for (a, want) in cases {
            assert_eq!(inferred_value(&a), want, "{a:?}");
        }
    }

    /// Real registries record the flags in force, so a hidden switch's value shows through the
    /// rules that test it (the R750's PXE devices 5-16: `Enabled` listed first, sub-options
    /// recorded ReadOnly, which only `Disabled` explains).
    #[test]
    fn a_hidden_switch_takes_the_value_its_rules_recorded_flags_require() {
        let registry: AttributeRegistry = serde_json::from_value(serde_json::json!({
            "Id": "BiosAttributeRegistry.test",
            "RegistryEntries": {
                "Attributes": [
                    {"AttributeName": "Dev5EnDis", "Type": "Enumeration", "Hidden": true, "ReadOnly": false,
                     "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}]},
                    {"AttributeName": "Dev5Port", "Type": "String", "Hidden": false, "ReadOnly": true},
                    {"AttributeName": "Dev6EnDis", "Type": "Enumeration", "Hidden": true, "ReadOnly": false,
                     "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}]},
                    {"AttributeName": "Dev6Port", "Type": "String", "Hidden": false, "ReadOnly": false},
                    {"AttributeName": "Unrelated", "Type": "Enumeration", "Hidden": true, "ReadOnly": false,
                     "Value": [{"ValueName": "On"}, {"ValueName": "Off"}]}
                ],
                "Dependencies": [
                    {"DependencyFor": "Dev5Port", "Type": "Map", "Dependency": {
                        "MapFrom": [{"MapFromAttribute": "Dev5EnDis", "MapFromCondition": "EQU",
                                     "MapFromProperty": "CurrentValue", "MapFromValue": "Disabled"}],
                        "MapToAttribute": "Dev5Port", "MapToProperty": "ReadOnly", "MapToValue": true}},
                    {"DependencyFor": "Dev6Port", "Type": "Map", "Dependency": {
                        "MapFrom": [{"MapFromAttribute": "Dev6EnDis", "MapFromCondition": "EQU",
                                     "MapFromProperty": "CurrentValue", "MapFromValue": "Disabled"}],
                        "MapToAttribute": "Dev6Port", "MapToProperty": "ReadOnly", "MapToValue": true}}
                ]
            }
        }))
        .unwrap();
        let listed: Attributes = [("Dev5Port", "NIC.1"), ("Dev6Port", "NIC.2")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), AttributeValue::from(v)))
            .collect();
        let hidden = unlisted_values(&registry, &listed);
        // Dev5Port is recorded read-only: only Dev5EnDis = Disabled explains it.
        assert_eq!(hidden["Dev5EnDis"], "Disabled".into());
        // Dev6Port is recorded writable: the first listed value fits and stays.
        assert_eq!(hidden["Dev6EnDis"], "Enabled".into());
        // No rule tests it: inferred as before.
        assert_eq!(hidden["Unrelated"], "On".into());
        assert_eq!(hidden.len(), 3);
    }
}
