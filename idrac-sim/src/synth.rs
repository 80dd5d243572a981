//! Completing a tree: the documents and links a real iDRAC serves that a tree may lack, added
//! from the tree's own identity when it does not have them, and recorded as synthesised so
//! that nobody mistakes them for captured data (the server marks them with
//! [`SYNTHESISED_HEADER`]; `rftune capture` can leave them out). A tree that has a document
//! keeps it as recorded; a link is added to a recorded document only where the tree lacks it.
//!
//! An iLO's tree gets only the message registries its answers name
//! ([`crate::message_registries`]; [`complete_ilo`]): iLO sends MessageIds without their text.
//!
//! What is added to an iDRAC's tree here is the static part: the role definitions (shapes of the real R750's
//! `AccountService/Roles`), the log service a real Manager lists beside SEL and Lifecycle log
//! (`FaultList`), the event service, the Dell services a real Manager links under
//! `Links.Oem.Dell` (names and paths of the R750 captures, each offering only the actions the
//! emulator implements), `Manager.ResetToDefaults`, the Manager's `EthernetInterfaces` and
//! `NetworkProtocol` links and the `JsonSchemas` files. What changes with the host's state
//! (accounts, log entries, subscriptions, the iDRAC's network settings) is rendered by the host.

use crate::odata::publication;
use crate::served::{RENDERED_TYPES, SCP_TARGETS};
use redfish_client::oem::dell;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The response header that marks what the emulator synthesised: `document` for a whole
/// document, else the JSON pointers (RFC 6901) of the members it added to a recorded one,
/// separated by `, `.
pub const SYNTHESISED_HEADER: &str = "X-Rftune-Synthesised";

/// What [`complete`] added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    /// Documents added whole.
    pub documents: BTreeSet<String>,
    /// Members added to recorded documents: path → JSON pointers.
    pub members: BTreeMap<String, Vec<String>>,
}

impl Completion {
    /// The value of [`SYNTHESISED_HEADER`] for `path`, if anything there is synthesised.
    pub fn header(&self, path: &str) -> Option<String> {
        if self.documents.contains(path) {
            return Some("document".into());
        }
        self.members.get(path).map(|m| m.join(", "))
    }
}

/// The Manager.
const MANAGER: &str = dell::MANAGER;
/// Dell's services and collections under the Manager (where the emulator's synthesised ones live
/// too).
pub(crate) const DELL_SERVICES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell";
/// The roles collection.
pub const ROLES: &str = "/redfish/v1/AccountService/Roles";
/// The event service.
pub const EVENT_SERVICE: &str = "/redfish/v1/EventService";
/// The event subscriptions collection.
pub const SUBSCRIPTIONS: &str = "/redfish/v1/EventService/Subscriptions";
/// The Manager's log services.
pub const LOG_SERVICES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices";
/// The schema files collection.
pub const JSON_SCHEMAS: &str = "/redfish/v1/JsonSchemas";
/// The Manager's network interfaces.
pub const MANAGER_NICS: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/EthernetInterfaces";
/// The Manager's network services.
pub const NETWORK_PROTOCOL: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol";
/// Dell's iDRAC card service (iDRAC reset and reset to defaults).
pub const IDRAC_CARD_SERVICE: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DelliDRACCardService";
/// The certificate service.
pub const CERTIFICATE_SERVICE: &str = "/redfish/v1/CertificateService";
/// Where every certificate the certificate service knows is listed.
pub const CERTIFICATE_LOCATIONS: &str = "/redfish/v1/CertificateService/CertificateLocations";
/// The web server's certificates.
pub const HTTPS_CERTIFICATES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/NetworkProtocol/HTTPS/Certificates";
/// Dell's time service.
pub const TIME_SERVICE: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellTimeService";

/// Whether the tree's iDRAC takes the 7.x shapes (firmware 7.x, or iDRAC10), which picks the
/// schema versions of the documents added (6.00 and 7.10 captures).
fn is_7x(docs: &HashMap<String, Value>) -> bool {
    crate::generation::newer_shapes(docs.get(MANAGER))
}

/// Adds to `docs` what the tree lacks (see the module docs) and says what it added.
pub fn complete(docs: &mut HashMap<String, Value>) -> Completion {
    let mut c = Completion::default();
    let new = is_7x(docs);
    roles(docs, &mut c);
    event_service(docs, &mut c, new);
    // The certificate service is rendered by each host (it describes the certificate the
    // fleet serves); the service root links it as a real one does.
    add_member(
        docs,
        &mut c,
        "/redfish/v1",
        &["CertificateService"],
        link(CERTIFICATE_SERVICE),
    );
    fault_list(docs, &mut c, new);
    manager(docs, &mut c, new);
    json_schemas(docs, &mut c);
    c
}

/// The `Registries` collection on an iLO (whose tree is keyed by lower-case paths).
const ILO_REGISTRIES: &str = "/redfish/v1/registries";

/// Adds to an iLO's tree (keyed by lower-case paths) the message registries its answers name,
/// where the tree records none of that prefix: each registry's member of `Registries` (listed
/// there, `Members@odata.count` counting it) and its file. A tree without a `Registries`
/// collection gets one, linked from the service root.
pub fn complete_ilo(docs: &mut HashMap<String, Value>) -> Completion {
    let mut c = Completion::default();
    if !docs.contains_key(ILO_REGISTRIES) {
        add_document(
            docs,
            &mut c,
            ILO_REGISTRIES,
            collection(
                "/redfish/v1/Registries",
                "MessageRegistryFileCollection",
                "Registry File Repository",
                &[],
            ),
        );
        add_member(
            docs,
            &mut c,
            "/redfish/v1",
            &["Registries"],
            link("/redfish/v1/Registries"),
        );
    }
    for served in crate::message_registries::served() {
        let recorded = docs
            .get(ILO_REGISTRIES)
            .and_then(|d| d["Members"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|m| m["@odata.id"].as_str())
            .filter_map(|id| docs.get(id.trim_end_matches('/').to_ascii_lowercase().as_str()))
            .any(|member| {
                member["Registry"]
                    .as_str()
                    .and_then(|r| r.split('.').next())
                    .is_some_and(|prefix| prefix.eq_ignore_ascii_case(served.prefix()))
            });
        if recorded {
            continue;
        }
        let member_path = served.member_path();
        add_document(docs, &mut c, &member_path.to_ascii_lowercase(), served.member());
        add_document(docs, &mut c, &served.file_path().to_ascii_lowercase(), served.file());
        let Some(listing) = docs.get_mut(ILO_REGISTRIES).and_then(Value::as_object_mut) else {
            continue;
        };
        let Some(members) = listing.get_mut("Members").and_then(Value::as_array_mut) else {
            continue;
        };
        members.push(link(&member_path));
        let (index, count) = (members.len() - 1, members.len());
        listing.insert("Members@odata.count".into(), json!(count));
        if !c.documents.contains(ILO_REGISTRIES) {
            c.members
                .entry(ILO_REGISTRIES.to_owned())
                .or_default()
                .push(format!("/Members/{index}"));
        }
    }
    c
}

/// Inserts a document the tree lacks.
fn add_document(docs: &mut HashMap<String, Value>, c: &mut Completion, path: &str, doc: Value) {
    if !docs.contains_key(path) {
        docs.insert(path.to_owned(), doc);
        c.documents.insert(path.to_owned());
    }
}

/// Sets `value` at `steps` in the recorded document at `path` when nothing is there, creating
/// objects on the way; records the pointer of the outermost member it added (an object it
/// created on the way, else the member itself), so that removing the marked members gives the
/// recorded document back. A document of an unexpected shape is left alone.
fn add_member(docs: &mut HashMap<String, Value>, c: &mut Completion, path: &str, steps: &[&str], value: Value) {
    let Some(doc) = docs.get_mut(path) else { return };
    let Some((last, parents)) = steps.split_last() else {
        return;
    };
    let mut at = doc;
    let mut created = None;
    for (depth, step) in parents.iter().enumerate() {
        let Some(map) = at.as_object_mut() else { return };
        if !map.contains_key(*step) {
            created.get_or_insert(depth);
        }
        at = map
            .entry((*step).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let Some(map) = at.as_object_mut() else { return };
    if map.contains_key(*last) {
        return;
    }
    map.insert((*last).to_owned(), value);
    if c.documents.contains(path) {
        return;
    }
    let outermost = &steps[..=created.unwrap_or(parents.len())];
    let pointer: String = outermost
        .iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect();
    let marked = c.members.entry(path.to_owned()).or_default();
    // A member inside one already marked (an object created for an earlier member) is covered.
    let covered = marked
        .iter()
        .any(|m| *m == pointer || pointer.starts_with(&format!("{m}/")));
    if !covered {
        marked.push(pointer);
    }
}

fn link(path: &str) -> Value {
    json!({ "@odata.id": path })
}

/// A collection document.
fn collection(path: &str, kind: &str, name: &str, members: &[String]) -> Value {
    let members: Vec<Value> = members.iter().map(|m| link(m)).collect();
    json!({
        "@odata.context": format!("/redfish/v1/$metadata#{kind}.{kind}"),
        "@odata.id": path,
        "@odata.type": format!("#{kind}.{kind}"),
        "Description": name,
        "Members": members,
        "Members@odata.count": members.len(),
        "Name": name,
    })
}

/// The four roles a real iDRAC 9 lists, with their privileges (R750 captures, 6.00 and 7.10).
pub const ROLE_PRIVILEGES: [(&str, &[&str]); 4] = [
    (
        "Administrator",
        &[
            "Login",
            "ConfigureManager",
            "ConfigureUsers",
            "ConfigureComponents",
            "ConfigureSelf",
        ],
    ),
    ("Operator", &["Login", "ConfigureComponents", "ConfigureSelf"]),
    ("ReadOnly", &["Login", "ConfigureSelf"]),
    ("None", &[]),
];

fn roles(docs: &mut HashMap<String, Value>, c: &mut Completion) {
    if !docs.contains_key("/redfish/v1/AccountService") {
        return;
    }
    add_member(docs, c, "/redfish/v1/AccountService", &["Roles"], link(ROLES));
    let ids: Vec<String> = ROLE_PRIVILEGES.iter().map(|(r, _)| format!("{ROLES}/{r}")).collect();
    add_document(
        docs,
        c,
        ROLES,
        collection(ROLES, "RoleCollection", "Roles Collection", &ids),
    );
    for (role, privileges) in ROLE_PRIVILEGES {
        let path = format!("{ROLES}/{role}");
        let mut doc = json!({
            "@odata.context": "/redfish/v1/$metadata#Role.Role",
            "@odata.id": path,
            "@odata.type": "#Role.v1_3_1.Role",
            "AssignedPrivileges": privileges,
            "AssignedPrivileges@odata.count": privileges.len(),
            "Description": format!("{role} User Role"),
            "Id": role,
            "IsPredefined": true,
            "Name": "User Role",
            "RoleId": role,
        });
        if role == "Administrator" {
            // The iDRAC privileges beyond Redfish's, as the real Administrator role lists them.
            let oem = [
                "ClearLogs",
                "AccessVirtualConsole",
                "AccessVirtualMedia",
                "TestAlerts",
                "ExecuteDebugCommands",
            ];
            doc["OemPrivileges"] = json!(oem);
            doc["OemPrivileges@odata.count"] = json!(oem.len());
        }
        add_document(docs, c, &path, doc);
    }
}

fn event_service(docs: &mut HashMap<String, Value>, c: &mut Completion, new: bool) {
    add_member(docs, c, "/redfish/v1", &["EventService"], link(EVENT_SERVICE));
    let version = if new { "v1_10_0" } else { "v1_7_1" };
    add_document(
        docs,
        c,
        EVENT_SERVICE,
        json!({
            "@odata.context": "/redfish/v1/$metadata#EventService.EventService",
            "@odata.id": EVENT_SERVICE,
            "@odata.type": format!("#EventService.{version}.EventService"),
            "Actions": {"#EventService.SubmitTestEvent": {
                "EventType@Redfish.AllowableValues": ["Alert"],
                "target": format!("{EVENT_SERVICE}/Actions/EventService.SubmitTestEvent"),
            }},
            "DeliveryRetryAttempts": 3,
            "DeliveryRetryIntervalSeconds": 5,
            "Description": "Event subscriptions and their delivery",
            "EventFormatTypes": ["Event", "MetricReport"],
            "EventFormatTypes@odata.count": 2,
            "EventTypesForSubscription": ["Alert", "MetricReport", "Other"],
            "EventTypesForSubscription@odata.count": 3,
            "Id": "EventService",
            "Name": "Event Service",
            "ServiceEnabled": true,
            "Status": {"Health": "OK", "HealthRollup": "OK", "State": "Enabled"},
            "Subscriptions": link(SUBSCRIPTIONS),
        }),
    );
}

fn fault_list(docs: &mut HashMap<String, Value>, c: &mut Completion, new: bool) {
    let path = format!("{LOG_SERVICES}/FaultList");
    let Some(listed) = docs.get(LOG_SERVICES).and_then(|d| d["Members"].as_array()) else {
        return;
    };
    let listed = listed.iter().any(|m| m["@odata.id"] == path.as_str());
    if !listed
        && !docs.contains_key(&path)
        && let Some(members) = docs.get_mut(LOG_SERVICES).and_then(|d| d["Members"].as_array_mut())
    {
        members.push(link(&path));
        let n = members.len();
        if let Some(d) = docs.get_mut(LOG_SERVICES) {
            d["Members@odata.count"] = json!(n);
        }
        c.members
            .entry(LOG_SERVICES.to_owned())
            .or_default()
            .push(format!("/Members/{}", n - 1));
    }
    let version = if new { "v1_4_0" } else { "v1_2_0" };
    add_document(
        docs,
        c,
        &path,
        json!({
            "@odata.context": "/redfish/v1/$metadata#LogService.LogService",
            "@odata.id": path,
            "@odata.type": format!("#LogService.{version}.LogService"),
            "DateTime": null,
            "DateTimeLocalOffset": "+00:00",
            "Description": "Faults of the devices that roll up health",
            "Entries": link(&format!("{path}/Entries")),
            "Id": "FaultList",
            "LogEntryType": "SEL",
            "MaxNumberOfRecords": 500_000,
            "Name": "FaultListEntries",
            "OverWritePolicy": "WrapsWhenFull",
            "ServiceEnabled": true,
        }),
    );
}

/// The Dell services a real Manager links under `Links.Oem.Dell` (R750, 6.00 and 7.10), with
/// their paths; the collections are empty here and the services offer only what the emulator
/// implements.
fn dell_links() -> Vec<(&'static str, String)> {
    let system_dell = "/redfish/v1/Systems/System.Embedded.1/Oem/Dell";
    vec![
        (
            "DellLicensableDeviceCollection",
            format!("{DELL_SERVICES}/DellLicensableDevices"),
        ),
        ("DellLicenseCollection", format!("{DELL_SERVICES}/DellLicenses")),
        (
            "DellLicenseManagementService",
            format!("{DELL_SERVICES}/DellLicenseManagementService"),
        ),
        (
            "DellOpaqueManagementDataCollection",
            format!("{DELL_SERVICES}/DellOpaqueManagementData"),
        ),
        (
            "DellPersistentStorageService",
            format!("{DELL_SERVICES}/DellPersistentStorageService"),
        ),
        (
            "DellSwitchConnectionCollection",
            "/redfish/v1/Systems/System.Embedded.1/NetworkPorts/Oem/Dell/DellSwitchConnections".to_owned(),
        ),
        (
            "DellSwitchConnectionService",
            format!("{system_dell}/DellSwitchConnectionService"),
        ),
        (
            "DellSystemManagementService",
            format!("{system_dell}/DellSystemManagementService"),
        ),
        (
            "DellSystemQuickSyncCollection",
            format!("{DELL_SERVICES}/DellSystemQuickSync"),
        ),
        ("DellTimeService", TIME_SERVICE.to_owned()),
        ("DellUSBDeviceCollection", format!("{DELL_SERVICES}/DellUSBDevices")),
        ("DelliDRACCardService", IDRAC_CARD_SERVICE.to_owned()),
        ("DellvFlashCollection", format!("{DELL_SERVICES}/DellvFlash")),
    ]
}

fn manager(docs: &mut HashMap<String, Value>, c: &mut Completion, new: bool) {
    if !docs.contains_key(MANAGER) {
        return;
    }
    // A real Manager types its OEM links `DellOemLinks`; the documents below exist only where
    // the emulator adds them, so the links are added with them.
    for (name, path) in dell_links() {
        if docs.contains_key(&path) {
            add_member(docs, c, MANAGER, &["Links", "Oem", "Dell", name], link(&path));
            continue;
        }
        let kind = name.strip_suffix("Collection").map(|base| format!("{base}Collection"));
        let doc = match kind {
            Some(kind) => collection(&path, &kind, &format!("{name} of this iDRAC"), &[]),
            None => service(&path, name, new),
        };
        add_document(docs, c, &path, doc);
        add_member(docs, c, MANAGER, &["Links", "Oem", "Dell", name], link(&path));
    }
    add_member(
        docs,
        c,
        MANAGER,
        &["Actions", "#Manager.ResetToDefaults"],
        json!({
            "ResetType@Redfish.AllowableValues": ["ResetAll", "PreserveNetworkAndUsers"],
            "target": format!("{MANAGER}/Actions/Manager.ResetToDefaults"),
        }),
    );
    add_member(docs, c, MANAGER, &["EthernetInterfaces"], link(MANAGER_NICS));
    add_member(docs, c, MANAGER, &["NetworkProtocol"], link(NETWORK_PROTOCOL));
    scp_actions(docs, c, new);
}

/// The Manager's Server Configuration Profile actions, keyed as the firmware writes them
/// (`#OemManager.ExportSystemConfiguration` on the 7.10 capture,
/// `#OemManager.v1_4_0.OemManager#OemManager.ExportSystemConfiguration` on 6.00), with the
/// `EID_674_Manager.*` targets and the parameter values both captures list. A Manager that
/// records any of them keeps what it records.
fn scp_actions(docs: &mut HashMap<String, Value>, c: &mut Completion, new: bool) {
    let recorded = docs
        .get(MANAGER)
        .and_then(|m| m.pointer("/Actions/Oem"))
        .and_then(Value::as_object)
        .is_some_and(|oem| oem.keys().any(|k| k.contains("SystemConfiguration")));
    if recorded {
        return;
    }
    let key = |action: &str| {
        if new {
            format!("#OemManager.{action}")
        } else {
            format!("#OemManager.v1_4_0.OemManager#OemManager.{action}")
        }
    };
    let target = |action: &str| format!("{MANAGER}/Actions/Oem/EID_674_Manager.{action}");
    let share = |targets: &[&str]| {
        json!({
            "IgnoreCertificateWarning@Redfish.AllowableValues": ["Disabled", "Enabled"],
            "ProxySupport@Redfish.AllowableValues": ["Disabled", "EnabledProxyDefault", "Enabled"],
            "ProxyType@Redfish.AllowableValues": ["HTTP", "SOCKS4"],
            "ShareType@Redfish.AllowableValues": ["LOCAL", "NFS", "CIFS", "HTTP", "HTTPS"],
            "Target@Redfish.AllowableValues": targets,
        })
    };
    let all = SCP_TARGETS;
    let export = json!({
        "ExportFormat@Redfish.AllowableValues": ["XML", "JSON"],
        "ExportUse@Redfish.AllowableValues": ["Default", "Clone", "Replace"],
        "IncludeInExport@Redfish.AllowableValues": ["Default", "IncludeReadOnly", "IncludePasswordHashValues", "IncludeCustomTelemetry"],
        "ShareParameters": share(&all),
        "target": target("ExportSystemConfiguration"),
    });
    let import = json!({
        "ExecutionMode@Redfish.AllowableValues": ["Default", "DeployOnSledInsert", "InstantDeploy"],
        "HostPowerState@Redfish.AllowableValues": ["On", "Off"],
        "ImportSystemConfiguration@Redfish.AllowableValues": ["TimeToWait", "ImportBuffer"],
        "ShareParameters": share(&all),
        "ShutdownType@Redfish.AllowableValues": ["Graceful", "Forced", "NoReboot"],
        "target": target("ImportSystemConfiguration"),
    });
    let preview = json!({
        "ImportSystemConfigurationPreview@Redfish.AllowableValues": ["ImportBuffer"],
        "ShareParameters": share(&["ALL"]),
        "target": target("ImportSystemConfigurationPreview"),
    });
    for (action, body) in [
        ("ExportSystemConfiguration", export),
        ("ImportSystemConfiguration", import),
        ("ImportSystemConfigurationPreview", preview),
    ] {
        add_member(docs, c, MANAGER, &["Actions", "Oem", &key(action)], body);
    }
}

/// A Dell service document, with the actions the emulator implements for it.
fn service(path: &str, name: &str, new: bool) -> Value {
    let version = match name {
        "DelliDRACCardService" if new => "v1_7_1",
        "DelliDRACCardService" => "v1_5_0",
        "DellTimeService" => "v1_0_1",
        "DellSwitchConnectionService" => "v1_0_0",
        _ => "v1_1_0",
    };
    let action = |a: &str, extra: Value| {
        let mut v = extra;
        v["target"] = json!(format!("{path}/Actions/{name}.{a}"));
        (format!("#{name}.{a}"), v)
    };
    let actions: Vec<(String, Value)> = match name {
        // The two a client of the iDRAC itself uses (Ironic's sushy-oem-idrac resets with
        // iDRACReset), with the parameters the R750 captures list.
        "DelliDRACCardService" => vec![
            action(
                "iDRACReset",
                json!({"Force@Redfish.AllowableValues": ["Force", "Graceful"]}),
            ),
            action(
                "iDRACResetCfg",
                json!({"Force@Redfish.AllowableValues": ["Force", "Graceful"],
                       "Preserve@Redfish.AllowableValues": ["All", "Default", "ResetAllWithRootDefaults"]}),
            ),
        ],
        "DellTimeService" => vec![action("ManageTime", json!({}))],
        _ => Vec::new(),
    };
    let mut doc = json!({
        "@odata.context": format!("/redfish/v1/$metadata#{name}.{name}"),
        "@odata.id": path,
        "@odata.type": format!("#{name}.{version}.{name}"),
        "Description": format!("{name} of this iDRAC"),
        "Id": name,
        "Name": name,
    });
    if !actions.is_empty() {
        doc["Actions"] = Value::Object(actions.into_iter().collect());
    }
    doc
}

/// The namespaces and versions of every typed document (`#Bios.v1_2_1.Bios` gives `Bios` and
/// `Bios.v1_2_1`), plus those of the documents the host renders from its state.
pub fn namespaces(docs: &HashMap<String, Value>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |t: &str| {
        let t = t.trim_start_matches('#');
        if let Some((ns, _)) = t.rsplit_once('.') {
            out.insert(ns.to_owned());
            if let Some((base, _)) = ns.split_once('.') {
                out.insert(base.to_owned());
            }
        }
    };
    for doc in docs.values() {
        if let Some(t) = doc.get("@odata.type").and_then(Value::as_str) {
            add(t);
        }
    }
    for t in RENDERED_TYPES {
        add(t);
    }
    out
}

fn json_schemas(docs: &mut HashMap<String, Value>, c: &mut Completion) {
    if docs.contains_key(JSON_SCHEMAS) {
        return;
    }
    add_member(docs, c, "/redfish/v1", &["JsonSchemas"], link(JSON_SCHEMAS));
    let names: Vec<String> = namespaces(docs).into_iter().collect();
    let members: Vec<String> = names.iter().map(|n| format!("{JSON_SCHEMAS}/{n}")).collect();
    add_document(
        docs,
        c,
        JSON_SCHEMAS,
        collection(JSON_SCHEMAS, "JsonSchemaFileCollection", "Schema Repository", &members),
    );
    for name in names {
        let path = format!("{JSON_SCHEMAS}/{name}");
        let schema = match name.split_once('.') {
            Some((base, _)) => format!("#{name}.{base}"),
            None => format!("#{name}.{name}"),
        };
        add_document(
            docs,
            c,
            &path,
            json!({
                "@odata.context": "/redfish/v1/$metadata#JsonSchemaFile.JsonSchemaFile",
                "@odata.id": path,
                "@odata.type": "#JsonSchemaFile.v1_1_4.JsonSchemaFile",
                "Description": format!("{name} Schema File Location"),
                "Id": name,
                "Languages": ["en"],
                "Languages@odata.count": 1,
                // The emulator serves no schema file of its own: the published one is the copy.
                "Location": [{"Language": "en", "PublicationUri": publication(&name, ".json")}],
                "Location@odata.count": 1,
                "Name": format!("{name} Schema File"),
                "Schema": schema,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> HashMap<String, Value> {
        let mut docs = HashMap::new();
        docs.insert(
            "/redfish/v1".to_owned(),
            json!({"@odata.type": "#ServiceRoot.v1_15_0.ServiceRoot"}),
        );
        docs.insert(
            MANAGER.to_owned(),
            json!({"@odata.type": "#Manager.v1_17_0.Manager", "FirmwareVersion": "7.00.60.00",
                   "Links": {"Oem": {"Dell": {"DellJobService": {"@odata.id": "x"}}}}}),
        );
        docs.insert("/redfish/v1/AccountService".to_owned(), json!({"Accounts": {}}));
        docs.insert(
            LOG_SERVICES.to_owned(),
            json!({"Members": [{"@odata.id": format!("{LOG_SERVICES}/Sel")}], "Members@odata.count": 1}),
        );
        docs
    }

    #[test]
    fn a_tree_is_completed_with_marked_documents_and_members() {
        let mut docs = tree();
        let c = complete(&mut docs);
        assert_eq!(c.header(ROLES).as_deref(), Some("document"));
        assert_eq!(docs[ROLES]["Members@odata.count"], 4);
        let manager = c.header(MANAGER).unwrap();
        assert!(manager.contains("/Links/Oem/Dell/DelliDRACCardService"), "{manager}");
        // The tree's Manager has no Actions: the object added is marked, not each action in it.
        let marked: Vec<&str> = manager.split(", ").collect();
        assert!(marked.contains(&"/Actions"), "{manager}");
        assert!(!marked.iter().any(|m| m.starts_with("/Actions/")), "{manager}");
        assert!(!manager.contains("DellJobService"), "recorded links are not claimed");
        assert_eq!(docs[LOG_SERVICES]["Members@odata.count"], 2);
        assert_eq!(c.header(LOG_SERVICES).as_deref(), Some("/Members/1"));
        assert!(docs.contains_key(&format!("{JSON_SCHEMAS}/Manager.v1_17_0")));
        assert!(docs.contains_key(&format!("{JSON_SCHEMAS}/Role.v1_3_1")));
        assert!(c.header("/redfish/v1/Systems").is_none());
    }

    #[test]
    fn completing_a_completed_tree_adds_nothing() {
        let mut docs = tree();
        complete(&mut docs);
        let before = docs.clone();
        let again = complete(&mut docs);
        assert_eq!(docs, before);
        assert!(again.documents.is_empty() && again.members.is_empty(), "{again:?}");
    }

    #[test]
    fn what_a_tree_records_is_kept() {
        let mut docs = tree();
        docs.insert(ROLES.to_owned(), json!({"Members": [], "Recorded": true}));
        let c = complete(&mut docs);
        assert_eq!(docs[ROLES]["Recorded"], true);
        assert!(c.header(ROLES).is_none());
    }
}
