//! Recording a BMC as a fixture tree: walks the resources rftune reads (service root, systems,
//! BIOS with its settings and registry, DIMMs and CPUs, managers with Dell attributes and job
//! queues, chassis power and environment metrics, the attribute registries), following links,
//! and writes them in the fixtures layout (`DIR/redfish/v1/<path>/index.json`) after
//! [`crate::sanitize`] has replaced every identifier. `capture.toml` records the firmware
//! versions and what was replaced, never the original values.
//!
//! Which links the walk follows is decided by path without regard to case or a trailing slash
//! (an iLO links `/redfish/v1/systems/1/bios/` from `Systems/1`, and answers any spelling): one
//! resource linked under two spellings is read once, and written at the first spelling met.
//! A registry file is followed from the `Registries` member that locates it (iLO keeps it under
//! `/redfish/v1/registrystore/`), in English when the member offers several languages.
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
    let mut seen: BTreeSet<String> = queue.iter().map(|p| same_resource(p)).collect();
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
        links.retain(|l| wanted(l));
        links.extend(located_registry_file(&path, &doc));
        for link in links {
            if seen.insert(same_resource(&link)) {
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
            forget_sessions(doc, path);
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
    // A link may spell a path otherwise than the walk met it first (case, a trailing slash).
    let resource = |path: &str| {
        captured.resources.get(path).or_else(|| {
            let key = same_resource(path);
            captured
                .resources
                .iter()
                .find(|(p, _)| same_resource(p) == key)
                .map(|(_, d)| d)
        })
    };
    let text = |path: &str, pointer: &str| {
        resource(path)
            .and_then(|d| d.pointer(pointer))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    // The first system and manager, as their collections (linked from the root) list them.
    let first = |collection: &str| {
        let link = text("/redfish/v1", &format!("/{collection}/@odata.id"))
            .unwrap_or_else(|| format!("/redfish/v1/{collection}"));
        text(&link, "/Members/0/@odata.id")
    };
    let system = first("Systems").unwrap_or_default();
    let manager = first("Managers").unwrap_or_default();
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
                    ("@odata.id" | "Uri", Value::String(s)) => out.extend(link_path(s)),
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

/// The key under which the walk knows a path: services that link one resource under several
/// spellings (iLO: `Systems/1`, `systems/1/`) answer them alike, so case and a trailing slash
/// do not make another resource.
fn same_resource(path: &str) -> String {
    path.trim_end_matches('/').to_ascii_lowercase()
}

/// A link as the path of a resource under `/redfish/v1`: without fragment, query or trailing
/// slash; `None` for anything else (another origin, the root itself).
fn link_path(link: &str) -> Option<String> {
    let path = link.split(['#', '?']).next().unwrap_or_default().trim_end_matches('/');
    path.starts_with("/redfish/v1/").then(|| path.to_owned())
}

/// Whether a linked resource is one rftune reads (or is on the way to one), by its path without
/// regard to case or a trailing slash.
fn wanted(path: &str) -> bool {
    let path = same_resource(path);
    let Some(rest) = path.strip_prefix("/redfish/v1/") else {
        return false;
    };
    let s: Vec<&str> = rest.split('/').collect();
    let sensor = |n: &str| n.contains("pwrconsumption") || n.contains("inputpower") || n.contains("inlettemp");
    match s.as_slice() {
        ["systems"] | ["systems", _] => true,
        ["systems", _, "bios"] | ["systems", _, "bios", "settings" | "biosregistry"] => true,
        ["systems", _, "memory" | "processors"] | ["systems", _, "memory" | "processors", _] => true,
        ["systems", _, "bootoptions"] | ["systems", _, "bootoptions", _] | ["systems", _, "secureboot"] => true,
        ["managers"] | ["managers", _] => true,
        ["managers", _, "oem", vendor, rest @ ..] => crate::backend::reads_manager_oem(vendor, rest),
        ["managers", _, "jobs"] | ["managers", _, "jobs", _] => true,
        ["chassis"] | ["chassis", _] => true,
        [
            "chassis",
            _,
            "power" | "environmentmetrics" | "powersubsystem" | "sensors",
        ] => true,
        ["chassis", _, "powersubsystem", "powersupplies"] | ["chassis", _, "powersubsystem", "powersupplies", _] => {
            true
        }
        ["chassis", _, "sensors", name] => sensor(name),
        ["registries"] => true,
        ["registries", r, ..] => is_attribute_registry(r),
        ["sessionservice"] | ["sessionservice", "sessions"] => true,
        ["jobservice"] | ["jobservice", "jobs"] | ["jobservice", "jobs", _] => true,
        _ => false,
    }
}

/// Whether a registry's name (lower case) is one of the attribute registries rftune reads.
fn is_attribute_registry(name: &str) -> bool {
    name.starts_with("biosattributeregistry") || name.starts_with("managerattributeregistry")
}

/// The registry file that `doc`, read at `path`, locates when it is the `Registries` member of
/// an attribute registry (`Registries/BiosAttributeRegistryA42.v1_2_60`): its English
/// `Location`, else its first. An iLO keeps the file outside `Registries`
/// (`/redfish/v1/registrystore/registries/en/…`) and offers it in several languages, of which
/// one is what a reader takes.
fn located_registry_file(path: &str, doc: &Value) -> Option<String> {
    let key = same_resource(path);
    let name = key.strip_prefix("/redfish/v1/registries/")?;
    if name.contains('/') || !is_attribute_registry(name) {
        return None;
    }
    let locations = doc.get("Location")?.as_array()?;
    fn uri(location: &Value) -> Option<&str> {
        location.get("Uri").and_then(Value::as_str)
    }
    let chosen = locations
        .iter()
        .find(|l| l.get("Language").and_then(Value::as_str) == Some("en") && uri(l).is_some())
        .or_else(|| locations.iter().find(|l| uri(l).is_some()))?;
    link_path(uri(chosen)?)
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
    same_resource(path) == "/redfish/v1/sessionservice/sessions"
}

/// The sessions collection without its members and without any link to one of them (iLO's
/// `Oem.Hpe.Links.MySession` names the capturing session, whose id starts with the user name);
/// an object left empty by that removal goes too.
fn forget_sessions(doc: &mut Value, collection: &str) {
    clear_members(doc);
    remove_links_under(doc, &format!("{}/", same_resource(collection)));
}

/// Removes from `value` every object member or array element that links (`@odata.id`) to a
/// path under `prefix` (lower case); says whether it removed anything.
fn remove_links_under(value: &mut Value, prefix: &str) -> bool {
    let links_under = |v: &Value| {
        v.get("@odata.id")
            .and_then(Value::as_str)
            .is_some_and(|id| same_resource(id).starts_with(prefix))
    };
    match value {
        Value::Object(map) => {
            let before = map.len();
            map.retain(|_, v| !links_under(v));
            let mut removed = map.len() != before;
            let mut emptied = Vec::new();
            for (k, v) in map.iter_mut() {
                if remove_links_under(v, prefix) {
                    removed = true;
                    if v.as_object().is_some_and(serde_json::Map::is_empty) {
                        emptied.push(k.clone());
                    }
                }
            }
            for k in emptied {
                map.remove(&k);
            }
            removed
        }
        Value::Array(items) => {
            let before = items.len();
            items.retain(|v| !links_under(v));
            let mut removed = items.len() != before;
            for v in items.iter_mut() {
                removed |= remove_links_under(v, prefix);
            }
            removed
        }
        _ => false,
    }
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

    /// An iLO links the BIOS family in lower case with a trailing slash and the rest
    /// capitalised (the recorded DL385 Gen10 Plus v2 on iLO 5); a Gen11 links everything in
    /// lower case. Whatever the spelling, the walk keeps what it keeps on an iDRAC.
    #[test]
    fn the_walk_keeps_an_ilos_resources_whatever_their_case_or_trailing_slash() {
        for yes in [
            "/redfish/v1/systems/1/bios",
            "/redfish/v1/systems/1/bios/",
            "/redfish/v1/systems/1/bios/settings/",
            "/redfish/v1/systems/1/Bios/settings",
            "/redfish/v1/Systems/1/BIOS/Settings",
            "/redfish/v1/systems/1/",
            "/redfish/v1/systems/",
            "/redfish/v1/Systems/1/Memory/proc1dimm1",
            "/redfish/v1/managers/1/",
            "/redfish/v1/chassis/1/power/",
            "/redfish/v1/registries/",
            "/redfish/v1/Registries/BiosAttributeRegistryA42.v1_2_60",
            "/redfish/v1/registries/biosattributeregistrya42.v1_2_60/",
            "/redfish/v1/sessionservice/sessions/",
            "/redfish/v1/managers/idrac.embedded.1/oem/dell/dellattributes/idrac.embedded.1",
        ] {
            assert!(wanted(yes), "{yes}");
        }
        for no in [
            "/redfish/v1/systems/1/bios/oem/hpe/baseconfigs/",
            "/redfish/v1/systems/1/smartstorageconfig",
            "/redfish/v1/Managers/1/LicenseService",
            "/redfish/v1/registries/ilo.v2_2/",
            // Followed from its Registries member only, not by its path.
            "/redfish/v1/registrystore/registries/en/biosattributeregistrya42.v1_2_60/",
            "/redfish/v1/sessionservice/sessions/1",
        ] {
            assert!(!wanted(no), "{no}");
        }
        assert_eq!(
            same_resource("/redfish/v1/systems/1/Bios/"),
            same_resource("/redfish/v1/Systems/1/bios")
        );
        assert!(is_sessions("/redfish/v1/sessionservice/sessions/"));
    }

    /// An iLO's Registries member locates its BIOS registry under `registrystore`, in three
    /// languages (a real iLO 5's `BiosAttributeRegistryU46.v1_1_56`): the English file is
    /// followed; a member of any other registry locates nothing the walk follows.
    #[test]
    fn the_registry_file_is_followed_from_its_registries_member_in_english() {
        let member = serde_json::json!({
            "@odata.id": "/redfish/v1/Registries/BiosAttributeRegistryA42.v1_2_60/",
            "Location": [
                {"Language": "ja", "Uri": "/redfish/v1/registrystore/registries/ja/biosattributeregistrya42.v1_2_60/"},
                {"Language": "en", "Uri": "/redfish/v1/registrystore/registries/en/biosattributeregistrya42.v1_2_60/"},
                {"Language": "zh", "Uri": "/redfish/v1/registrystore/registries/zh/biosattributeregistrya42.v1_2_60/"}
            ]
        });
        assert_eq!(
            located_registry_file("/redfish/v1/Registries/BiosAttributeRegistryA42.v1_2_60", &member).as_deref(),
            Some("/redfish/v1/registrystore/registries/en/biosattributeregistrya42.v1_2_60")
        );
        let only_ja =
            serde_json::json!({"Location": [{"Language": "ja", "Uri": "/redfish/v1/registrystore/registries/ja/x/"}]});
        assert_eq!(
            located_registry_file("/redfish/v1/registries/biosattributeregistryx/", &only_ja).as_deref(),
            Some("/redfish/v1/registrystore/registries/ja/x")
        );
        let messages = serde_json::json!({"Location": [{"Language": "en", "Uri": "/redfish/v1/registrystore/messages/en/ilo.v2_2/"}]});
        assert_eq!(
            located_registry_file("/redfish/v1/Registries/iLO.v2_2", &messages),
            None
        );
        assert_eq!(
            located_registry_file("/redfish/v1/Systems/1", &member),
            None,
            "only a Registries member locates"
        );
        let elsewhere = serde_json::json!({"Location": [{"Language": "en", "Uri": "https://example.invalid/r.json"}]});
        assert_eq!(
            located_registry_file("/redfish/v1/Registries/BiosAttributeRegistryX", &elsewhere),
            None
        );
    }

    /// The capturing session is an artifact: gone from the members, and gone where an iLO
    /// links it again (`Oem.Hpe.Links.MySession`, whose id names the user), with the objects
    /// that held nothing else; other links stay.
    #[test]
    fn the_capturing_session_leaves_no_trace_in_the_sessions_collection() {
        let mut doc = serde_json::json!({
            "@odata.id": "/redfish/v1/SessionService/Sessions/",
            "Members": [{"@odata.id": "/redfish/v1/SessionService/Sessions/opsadmin0000000000000001/"}],
            "Members@odata.count": 1,
            "Oem": {"Hpe": {
                "@odata.type": "#HpeiLOSessionsSummary.v2_0_0.HpeiLOSessionsSummary",
                "Links": {"MySession": {"@odata.id": "/redfish/v1/sessionservice/sessions/opsadmin0000000000000001/"}}
            }},
            "Links": {"Service": {"@odata.id": "/redfish/v1/SessionService"}}
        });
        forget_sessions(&mut doc, "/redfish/v1/SessionService/Sessions");
        assert_eq!(
            doc,
            serde_json::json!({
                "@odata.id": "/redfish/v1/SessionService/Sessions/",
                "Members": [],
                "Members@odata.count": 0,
                "Oem": {"Hpe": {"@odata.type": "#HpeiLOSessionsSummary.v2_0_0.HpeiLOSessionsSummary"}},
                "Links": {"Service": {"@odata.id": "/redfish/v1/SessionService"}}
            })
        );
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
