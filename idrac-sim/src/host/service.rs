//! The service's own documents (`/redfish`, the OData service document, `$metadata`, the
//! schema files, the service root with this host's service tag), every other document the tree
//! records, served as recorded, and what the emulator synthesised where.

use super::accounts::ACCOUNTS;
use super::core::Host;
use super::jobs::state::DMTF_JOBS;
use super::json::set;
use super::network::MANAGER_NIC;
use super::reply::{JSON, Reply, XML};
use super::sessions::SESSIONS;
use crate::route::{Route, exact, not_found, recorded, unrecorded};
use serde_json::{Value, json};

impl Host {
    /// What the emulator synthesised at `path` (the value of
    /// [`crate::synth::SYNTHESISED_HEADER`]): documents and members it added to the tree, and
    /// the OData documents it generates for a tree that records none.
    pub fn synthesised(&self, path: &str) -> Option<String> {
        let unrecorded = self.fixture.doc(path).is_none();
        let generated = match path {
            "/redfish/v1/$metadata" => self.fixture.text(path).is_none(),
            "/redfish"
            | "/redfish/v1/odata"
            | crate::synth::MANAGER_NICS
            | MANAGER_NIC
            | crate::synth::NETWORK_PROTOCOL
            | crate::synth::SUBSCRIPTIONS
            | crate::synth::CERTIFICATE_SERVICE
            | crate::synth::CERTIFICATE_LOCATIONS
            | crate::synth::HTTPS_CERTIFICATES => unrecorded,
            p if p == self.web_certificate_path() => unrecorded,
            // Account slots the tree does not record are rendered from a recorded one's shape.
            p if p.starts_with(ACCOUNTS) && p != ACCOUNTS => unrecorded,
            _ => false,
        };
        if generated {
            return Some("document".into());
        }
        // The job queues and the session collection are rendered from the host's state with
        // `@odata.context`, as a real iDRAC's are; where the tree recorded them without it, it
        // is the emulator's.
        let rendered = [
            redfish_client::oem::dell::OEM_JOBS,
            redfish_client::oem::dell::JOBS,
            DMTF_JOBS,
            SESSIONS,
        ];
        let context = rendered.contains(&path)
            && self
                .fixture
                .doc(path)
                .is_some_and(|d| d.get("@odata.context").is_none());
        match (self.fixture.completion.header(path), context) {
            (added, false) => added,
            (None, true) => Some("/@odata.context".into()),
            (Some(added), true) => Some(format!("{added}, /@odata.context")),
        }
    }

    /// The service root, with this host's service tag (an iLO's root names none).
    pub fn service_root(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        if self.fixture.bmc != crate::generation::Bmc::Ilo {
            set(&mut doc, &["Oem", "Dell", "ServiceTag"], json!(self.service_tag));
        }
        doc
    }
}

/// The service's own documents: `/redfish`, the OData service document and `$metadata`, the
/// schema files a tree records as text, and the service root.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(exact("/redfish"), |_, _| Reply::ok(json!({"v1": "/redfish/v1/"}))),
        Route::get(exact("/redfish/v1/$metadata"), |h, _| {
            Reply::ok_text(h.fixture.metadata(), XML)
        }),
        Route::get(exact("/redfish/v1/odata"), |h, _| {
            let root = h.fixture.doc("/redfish/v1").unwrap_or(&Value::Null);
            Reply::ok(crate::odata::service_document(&h.service_root(root)))
        })
        .when(unrecorded),
        Route::get(crate::route::Pattern::Any, |h, r| match h.fixture.text(r.path) {
            Some(t) => Reply::ok_text(t.clone(), XML),
            None => not_found(r.path),
        })
        .when(|h, r| h.fixture.text(r.path).is_some()),
        // The documents that show host state are kept rendered until that state changes
        // (`Host::cached`); the recorded ones that show none, once for the fleet (`served`).
        Route::get(exact("/redfish/v1"), |h, r| {
            h.cached(r.path, || Reply::ok(h.service_root(r.recorded_or_null(h))))
        }),
    ]
}

/// Every other document the tree records, served as recorded (a collection's members inline
/// with `$expand`): tried after every other route.
pub(crate) fn recorded_routes() -> Vec<Route> {
    vec![
        Route::get(crate::route::Pattern::Any, |h, r| {
            match h.fixture.served(r.path, r.expand, || {
                r.recorded(h).map(|d| expand_members(h, d, r.expand))
            }) {
                Some(d) => Reply::ok_rendered(d),
                None => not_found(r.path),
            }
        })
        .when(recorded),
    ]
}

/// Where an iLO keeps its registry files (lower case, as an iLO's routes see paths).
const ILO_REGISTRY_STORE: &str = "/redfish/v1/registrystore/";

/// An iLO's registry store: every file under `/redfish/v1/RegistryStore/` gzip-encoded, as HPE
/// documents that iLO sends them (the message registries the emulator adds included).
pub(crate) fn ilo_registry_store_routes() -> Vec<Route> {
    vec![
        Route::get(
            crate::route::Pattern::Prefix(ILO_REGISTRY_STORE.into()),
            |h, r| match h.fixture.gzipped(r.path) {
                Some(bytes) => Reply::ok_text(bytes, JSON).header("Content-Encoding", "gzip"),
                None => not_found(r.path),
            },
        )
        .when(recorded),
    ]
}

/// `$expand` on a recorded collection: members inline.
fn expand_members(host: &Host, doc: &Value, expand: bool) -> Value {
    if !expand || doc.get("Members").is_none() {
        return doc.clone();
    }
    let mut out = doc.clone();
    if let Some(members) = out["Members"].as_array_mut() {
        for m in members {
            if let Some(full) = m["@odata.id"]
                .as_str()
                .and_then(|id| host.fixture.doc(&host.fixture.canonical(id)))
            {
                *m = full.clone();
            }
        }
    }
    out
}
