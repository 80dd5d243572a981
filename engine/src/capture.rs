//! Recording a BMC as a fixture tree: walks the resources rftune reads (service root, systems,
//! BIOS with its settings and registry, DIMMs and CPUs, managers with Dell attributes and job
//! queues, chassis power and environment metrics, the attribute registries), following links,
//! and writes them in the fixtures layout (`DIR/redfish/v1/<path>/index.json`) after
//! [`crate::sanitize`] has replaced every identifier. `capture.toml` records the firmware
//! versions and what was replaced, never the original values.
//!
//! The walk is breadth-first and one request at a time, in link order: the same service gives
//! the same tree. What a service marks as synthesised with [`SYNTHESISED_HEADER`] (`rftune sim`
//! marks what it adds to a tree that lacks it) is left out: a document marked `document` is not
//! written and its links are not followed, and the members it names by JSON pointer are removed
//! from the document before anything else reads it. So a capture of `rftune sim --fixture DIR`
//! holds what `DIR` recorded and nothing the emulator made up; `$metadata` and the other
//! non-JSON documents are never captured, since the emulator generates them from the tree.

use crate::error::{Context, Result, bad_input};
use crate::sanitize::Sanitizer;
use redfish_client::Client;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// At most this many resources are read: a guard against a service with endless links.
pub const MAX_RESOURCES: usize = 5000;

/// The response header with which a service says what in a document it made up rather than
/// recorded: `document` for the whole document, else the JSON pointers (RFC 6901) of the added
/// members, separated by `, ` (`rftune sim` sends it).
pub const SYNTHESISED_HEADER: &str = "X-Rftune-Synthesised";

/// The result of a walk.
#[derive(Debug, Default)]
pub struct Captured {
    /// Path → sanitized document.
    pub resources: BTreeMap<String, Value>,
    /// Linked resources the service did not serve: path and error.
    pub missing: Vec<(String, String)>,
    /// What was replaced.
    pub replaced: Vec<crate::sanitize::Replaced>,
    /// Documents the service marked as synthesised whole, left out.
    pub synthesised: Vec<String>,
}

/// A capture as an [`Operation`](crate::lifecycle::Operation): the service root first (read
/// anonymously), then every resource linked from it, `progress` told the count so far.
pub struct Walk<F> {
    /// Hears how many resources have been read.
    pub progress: F,
}

impl<F: Fn(usize) + Send + Sync> crate::lifecycle::Operation for Walk<F> {
    type Output = Captured;

    fn reads_service_root_first(&self) -> bool {
        true
    }

    async fn run(&self, bmc: &mut crate::connect::Bmc, _: &dyn crate::observe::Observer) -> Result<Captured> {
        walk(&bmc.client, &self.progress)
            .await
            .map_err(|e| e.context(format!("{}: capturing", bmc.name)))
    }
}

/// Walks `client`'s service from the root.
pub async fn walk(client: &Client, progress: impl Fn(usize)) -> Result<Captured> {
    let mut queue: VecDeque<String> = VecDeque::from(["/redfish/v1".to_owned()]);
    let mut seen: BTreeSet<String> = queue.iter().cloned().collect();
    let mut raw: BTreeMap<String, Value> = BTreeMap::new();
    let mut missing = Vec::new();
    let mut synthesised = Vec::new();
    while let Some(path) = queue.pop_front() {
        if raw.len() >= MAX_RESOURCES {
            bad_input!("stopped after {MAX_RESOURCES} resources: the service links more than a BMC should");
        }
        let doc = match client.get_answer::<Value>(&path).await {
            Ok(answer) => {
                let mark = answer.header(SYNTHESISED_HEADER).map(|m| m.trim().to_owned());
                let mut doc = answer.value;
                match mark.as_deref() {
                    Some("document") => {
                        synthesised.push(path);
                        continue;
                    }
                    Some(pointers) => remove_members(&mut doc, pointers),
                    None => {}
                }
                doc
            }
            // The root is required; anything else linked but not served is noted.
            Err(e) if path != "/redfish/v1" => {
                tracing::warn!("{path}: {e}");
                missing.push((path, e.to_string()));
                continue;
            }
            Err(e) => return Err(e).context("reading the service root"),
        };
        let mut links = Vec::new();
        collect_links(&doc, &mut links);
        for link in links {
            if wanted(&link) && seen.insert(link.clone()) {
                queue.push_back(link);
            }
        }
        raw.insert(path, doc);
        progress(raw.len());
    }
    let mut sanitizer = Sanitizer::default();
    for (path, doc) in &mut raw {
        if is_sessions(path) {
            // Our own session: an artifact of capturing.
            clear_members(doc);
        }
        stop_clock(doc);
        sanitizer.document(doc);
    }
    for doc in raw.values_mut() {
        sanitizer.residue(doc);
    }
    Ok(Captured {
        replaced: sanitizer.replaced(),
        resources: raw,
        missing,
        synthesised,
    })
}

/// Removes the members at `pointers` (`/Links/Oem/Dell/X, /Actions/Y`) from `doc`; a pointer
/// to nothing is ignored, as is the document's root.
fn remove_members(doc: &mut Value, pointers: &str) {
    // Last first, so removing one array element does not move the next one named.
    for pointer in pointers.split(',').map(str::trim).filter(|p| !p.is_empty()).rev() {
        let Some((parent, last)) = pointer.rsplit_once('/') else {
            continue;
        };
        let key = last.replace("~1", "/").replace("~0", "~");
        match doc.pointer_mut(parent) {
            Some(Value::Object(map)) => {
                map.remove(&key);
            }
            Some(Value::Array(items)) => {
                if let Ok(i) = key.parse::<usize>()
                    && i < items.len()
                {
                    items.remove(i);
                }
            }
            _ => {}
        }
    }
}

/// Writes `captured` under `dir` (which must not exist, or be empty) with `capture.toml`.
pub fn write(dir: &Path, captured: &Captured) -> Result<PathBuf> {
    if dir.exists() && std::fs::read_dir(dir).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bad_input!(
            "{} exists and is not empty; give a new directory, so no earlier capture is mixed in or overwritten",
            dir.display()
        );
    }
    for (path, doc) in &captured.resources {
        let file = file_for(dir, path)?;
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        let mut text = serde_json::to_string_pretty(doc)?;
        text.push('\n');
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    }
    let manifest = dir.join("capture.toml");
    std::fs::write(&manifest, manifest_text(captured)).with_context(|| format!("writing {}", manifest.display()))?;
    Ok(manifest)
}

/// `DIR/redfish/v1/<path>/index.json`, refusing paths that would leave `DIR`.
fn file_for(dir: &Path, path: &str) -> Result<PathBuf> {
    let rel = path.trim_start_matches('/');
    let mut out = dir.to_path_buf();
    for segment in rel.split('/') {
        let bad = segment.is_empty()
            || segment == "."
            || segment == ".."
            || segment.contains(['\\', '\0'])
            || segment.starts_with('~');
        if bad {
            bad_input!("refusing to write resource {path:?}: its path has an unsafe segment {segment:?}");
        }
        out.push(segment);
    }
    out.push("index.json");
    Ok(out)
}

fn manifest_text(captured: &Captured) -> String {
    let text = |path: &str, pointer: &str| {
        captured
            .resources
            .get(path)
            .and_then(|d| d.pointer(pointer))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    // The first system and manager, as their collections list them.
    let first = |collection: &str| text(collection, "/Members/0/@odata.id");
    let system = first("/redfish/v1/Systems").unwrap_or_default();
    let manager = first("/redfish/v1/Managers").unwrap_or_default();
    let bios_link = text(&system, "/Bios/@odata.id").unwrap_or_default();
    let bios = text(&bios_link, "/Attributes/SystemBiosVersion").or_else(|| text(&system, "/BiosVersion"));
    let mut doc = toml::Table::new();
    doc.insert("format".into(), "rftune capture 1".into());
    let mut put = |key: &str, value: Option<String>| {
        if let Some(v) = value {
            doc.insert(key.into(), v.into());
        }
    };
    put("model", text(&system, "/Model"));
    put("bmc_firmware", text(&manager, "/FirmwareVersion"));
    put("bios_version", bios);
    put("redfish_version", text("/redfish/v1", "/RedfishVersion"));
    doc.insert("resources".into(), (captured.resources.len() as i64).into());
    let replaced: Vec<toml::Value> = captured
        .replaced
        .iter()
        .map(|r| {
            let mut t = toml::Table::new();
            t.insert("kind".into(), r.kind.as_str().into());
            t.insert("distinct_values".into(), (r.distinct as i64).into());
            t.insert(
                "fields".into(),
                toml::Value::Array(r.fields.iter().map(|f| f.as_str().into()).collect()),
            );
            toml::Value::Table(t)
        })
        .collect();
    doc.insert("replaced".into(), toml::Value::Array(replaced));
    let missing: Vec<toml::Value> = captured
        .missing
        .iter()
        .map(|(path, why)| {
            let mut t = toml::Table::new();
            t.insert("path".into(), path.as_str().into());
            t.insert("error".into(), why.as_str().into());
            toml::Value::Table(t)
        })
        .collect();
    if !missing.is_empty() {
        doc.insert("not_served".into(), toml::Value::Array(missing));
    }
    if !captured.synthesised.is_empty() {
        let paths = captured
            .synthesised
            .iter()
            .map(|p| toml::Value::from(p.as_str()))
            .collect();
        doc.insert("synthesised_left_out".into(), toml::Value::Array(paths));
    }
    format!(
        "# Written by `rftune capture`: identifiers in the tree were replaced by placeholders;\n# the original values are not recorded anywhere.\n{}",
        toml::to_string(&doc).unwrap_or_default()
    )
}

/// Every resource link in `doc`: `@odata.id` values and registry file locations, without
/// fragments or queries, absolute under `/redfish/v1`.
fn collect_links(doc: &Value, out: &mut Vec<String>) {
    match doc {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("@odata.id" | "Uri", Value::String(s)) => {
                        let path = s.split(['#', '?']).next().unwrap_or_default().trim_end_matches('/');
                        if path.starts_with("/redfish/v1/") {
                            out.push(path.to_owned());
                        }
                    }
                    _ => collect_links(v, out),
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                collect_links(v, out);
            }
        }
        _ => {}
    }
}

/// Whether a linked resource is one rftune reads (or is on the way to one).
fn wanted(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/redfish/v1/") else {
        return false;
    };
    let s: Vec<&str> = rest.split('/').collect();
    let registry = |r: &str| r.starts_with("BiosAttributeRegistry") || r.starts_with("ManagerAttributeRegistry");
    let sensor = |n: &str| n.contains("PwrConsumption") || n.contains("InputPower") || n.contains("InletTemp");
    match s.as_slice() {
        ["Systems"] | ["Systems", _] => true,
        ["Systems", _, "Bios"] | ["Systems", _, "Bios", "Settings" | "BiosRegistry"] => true,
        ["Systems", _, "Memory" | "Processors"] | ["Systems", _, "Memory" | "Processors", _] => true,
        ["Systems", _, "BootOptions"] | ["Systems", _, "BootOptions", _] | ["Systems", _, "SecureBoot"] => true,
        ["Managers"] | ["Managers", _] => true,
        ["Managers", _, "Oem", vendor, rest @ ..] => crate::backend::reads_manager_oem(vendor, rest),
        ["Managers", _, "Jobs"] | ["Managers", _, "Jobs", _] => true,
        ["Chassis"] | ["Chassis", _] => true,
        [
            "Chassis",
            _,
            "Power" | "EnvironmentMetrics" | "PowerSubsystem" | "Sensors",
        ] => true,
        ["Chassis", _, "PowerSubsystem", "PowerSupplies"] | ["Chassis", _, "PowerSubsystem", "PowerSupplies", _] => {
            true
        }
        ["Chassis", _, "Sensors", name] => sensor(name),
        ["Registries"] => true,
        ["Registries", r, ..] => registry(r),
        ["SessionService"] | ["SessionService", "Sessions"] => true,
        ["JobService"] | ["JobService", "Jobs"] | ["JobService", "Jobs", _] => true,
        _ => false,
    }
}

/// The service's clock (`DateTime` of the Manager, JobService, TaskService, log services) is
/// recorded as one fixed time: a capture records a tree, not the moment it was taken, and the
/// emulator serving it keeps its own live clock.
pub const RECORDED_DATE_TIME: &str = "2000-01-01T00:00:00+00:00";

fn stop_clock(doc: &mut Value) {
    if let Some(t) = doc.get_mut("DateTime").filter(|t| t.is_string()) {
        *t = Value::from(RECORDED_DATE_TIME);
    }
}

fn is_sessions(path: &str) -> bool {
    path == "/redfish/v1/SessionService/Sessions"
}

fn clear_members(doc: &mut Value) {
    if let Some(map) = doc.as_object_mut() {
        if map.contains_key("Members") {
            map.insert("Members".into(), Value::Array(Vec::new()));
        }
        if map.contains_key("Members@odata.count") {
            map.insert("Members@odata.count".into(), 0.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_keeps_to_what_rftune_reads() {
        for yes in [
            "/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry",
            "/redfish/v1/Systems/System.Embedded.1/Memory/DIMM.Socket.A1",
            "/redfish/v1/Systems/System.Embedded.1/BootOptions/Boot0001",
            "/redfish/v1/Systems/System.Embedded.1/SecureBoot",
            "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1",
            "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs/JID_1",
            "/redfish/v1/Chassis/System.Embedded.1/Sensors/SystemBoardPwrConsumption",
            "/redfish/v1/Registries/ManagerAttributeRegistry.v1_0_0/ManagerAttributeRegistry.v1_0_0.json",
        ] {
            assert!(wanted(yes), "{yes}");
        }
        for no in [
            "/redfish/v1/UpdateService/FirmwareInventory",
            "/redfish/v1/Systems/System.Embedded.1/Storage",
            "/redfish/v1/Chassis/System.Embedded.1/Sensors/Fan1",
            "/redfish/v1/SessionService/Sessions/42",
            "/redfish/v1/Registries/Messages",
            "/somewhere/else",
        ] {
            assert!(!wanted(no), "{no}");
        }
    }

    #[test]
    fn a_capture_records_a_fixed_time_for_the_services_clock() {
        let mut manager = serde_json::json!({"DateTime": "2026-11-30T16:02:36+00:00", "DateTimeLocalOffset": "+00:00"});
        stop_clock(&mut manager);
        assert_eq!(
            manager,
            serde_json::json!({"DateTime": RECORDED_DATE_TIME, "DateTimeLocalOffset": "+00:00"})
        );
        let mut odd = serde_json::json!({"DateTime": 5});
        stop_clock(&mut odd);
        assert_eq!(odd, serde_json::json!({"DateTime": 5}), "only a time is replaced");
    }

    #[test]
    fn links_lose_fragments_and_queries() {
        let doc = serde_json::json!({"a": {"@odata.id": "/redfish/v1/Chassis/1/Power#/PowerControl/0"},
            "Location": [{"Uri": "/redfish/v1/Registries/X/X.json"}], "b": [{"@odata.id": "/redfish/v1/Jobs?$expand=*"}],
            "c": {"@odata.id": "https://elsewhere/redfish/v1/x"}});
        let mut links = Vec::new();
        collect_links(&doc, &mut links);
        links.sort();
        assert_eq!(
            links,
            [
                "/redfish/v1/Chassis/1/Power",
                "/redfish/v1/Jobs",
                "/redfish/v1/Registries/X/X.json"
            ]
        );
    }

    #[test]
    fn paths_that_would_leave_the_directory_are_refused() {
        let dir = Path::new("/tmp/cap");
        assert_eq!(
            file_for(dir, "/redfish/v1/Systems").unwrap(),
            Path::new("/tmp/cap/redfish/v1/Systems/index.json")
        );
        for bad in [
            "/redfish/v1/../../etc",
            "/redfish/v1//x",
            "/redfish/v1/./x",
            "/redfish/v1/a\\b",
        ] {
            assert!(file_for(dir, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn members_marked_synthesised_are_removed_by_their_json_pointers() {
        let mut doc = serde_json::json!({
            "Links": {"Oem": {"Dell": {"A": 1, "B/C": 2, "Kept": 3}}},
            "Actions": {"#Manager.ResetToDefaults": {}, "#Manager.Reset": {}},
            "List": [0, 1, 2],
        });
        remove_members(
            &mut doc,
            "/Links/Oem/Dell/A, /Links/Oem/Dell/B~1C, /Actions/#Manager.ResetToDefaults, /List/0, /List/2, /Nothing/Here, ",
        );
        assert_eq!(
            doc,
            serde_json::json!({
                "Links": {"Oem": {"Dell": {"Kept": 3}}},
                "Actions": {"#Manager.Reset": {}},
                "List": [1],
            })
        );
    }
}
