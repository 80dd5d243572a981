//! The recorded documents with this host's live values: service tag, power state, boot
//! override and progress, the iDRAC's clock, BIOS values (visible ones only) and pending values,
//! iDRAC attributes.

use super::{Host, Reply, State, XML};
use crate::clock;
use crate::route::{Route, exact, not_found, recorded, unrecorded};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::Attributes;
use serde_json::{Value, json};
use std::time::SystemTime;

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
            | crate::host::MANAGER_NIC
            | crate::synth::NETWORK_PROTOCOL
            | crate::synth::SUBSCRIPTIONS
            | crate::synth::CERTIFICATE_SERVICE
            | crate::synth::CERTIFICATE_LOCATIONS
            | crate::synth::HTTPS_CERTIFICATES => unrecorded,
            p if p == self.web_certificate_path() => unrecorded,
            // Account slots the tree does not record are rendered from a recorded one's shape.
            p if p.starts_with(crate::host::ACCOUNTS) && p != crate::host::ACCOUNTS => unrecorded,
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
            super::jobs::DMTF_JOBS,
            super::sessions::SESSIONS,
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

    /// The service root, with this host's service tag.
    pub fn service_root(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        set(&mut doc, &["Oem", "Dell", "ServiceTag"], json!(self.service_tag));
        doc
    }

    /// The system, with live power state and boot override. It answers during POST, as a real
    /// iDRAC's does (`PowerState` On); POST shows in `GetRemoteServicesAPIStatus`.
    pub fn system(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.on { "On" } else { "Off" }));
        set(&mut doc, &["SKU"], json!(self.service_tag));
        if let Some(v) = s.bios.get("SystemBiosVersion") {
            set(&mut doc, &["BiosVersion"], v.to_json());
        }
        for (k, v) in &s.boot_override {
            set(&mut doc, &["Boot", k], v.clone());
        }
        // A tree without Dell's boot sources keeps its recorded order.
        if doc.pointer("/Boot/BootOrder").is_some()
            && !s.boot_seq.is_empty()
            && s.boot_seq.iter().all(|d| d.option.is_some())
        {
            set(&mut doc, &["Boot", "BootOrder"], Self::boot_order(&s));
        }
        if doc.get("BootProgress").is_some() {
            let progress = match (s.on, s.boot) {
                (false, _) => "None",
                (true, Some(b)) if !b.job_done => "MemoryInitializationStarted",
                (true, Some(_)) => "SystemHardwareInitializationComplete",
                (true, None) => "OSRunning",
            };
            set(&mut doc, &["BootProgress", "LastState"], json!(progress));
        }
        doc
    }

    /// The chassis, with live power state and identify LED.
    pub fn chassis(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.on { "On" } else { "Off" }));
        set(&mut doc, &["SKU"], json!(self.service_tag));
        for (k, v) in &s.indicator {
            set(&mut doc, &[k], v.clone());
        }
        doc
    }

    /// A document that carries the iDRAC's clock (`Manager`, `JobService`): `DateTime` is now.
    pub fn with_clock(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        if doc.get("DateTime").is_some() {
            set(&mut doc, &["DateTime"], json!(clock::with_offset(SystemTime::now())));
        }
        doc
    }

    /// `Bios` with the current values of the attributes those values leave visible: like a real
    /// iDRAC, hidden attributes are not listed.
    pub fn bios(&self, doc: &Value) -> Value {
        let mut s = self.now();
        self.view(&mut s);
        let State {
            bios,
            view,
            reset_bios_pending,
            ..
        } = &*s;
        let visible: Attributes = bios
            .iter()
            .filter(|(k, _)| view.as_ref().is_none_or(|v| !v.hidden.contains(*k)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut doc = doc.clone();
        set(
            &mut doc,
            &["Attributes"],
            serde_json::to_value(&visible).unwrap_or_default(),
        );
        if doc.get("ResetBiosToDefaultsPending").is_some() {
            set(&mut doc, &["ResetBiosToDefaultsPending"], json!(reset_bios_pending));
        }
        doc
    }

    /// `Bios/Settings` with pending values.
    pub fn bios_settings(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(
            &mut doc,
            &["Attributes"],
            serde_json::to_value(&s.pending).unwrap_or_default(),
        );
        doc
    }

    /// A `DellAttributes` resource with live values.
    pub fn dell_attributes(&self, group: AttributeGroup, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        let mut values = s.dell.get(&group).cloned().unwrap_or_default();
        if group == AttributeGroup::Idrac {
            Self::users_attributes(&s, &mut values);
        }
        let values = serde_json::to_value(values).unwrap_or_default();
        set(&mut doc, &["Attributes"], values);
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
                .and_then(|id| host.fixture.doc(id.trim_end_matches('/')))
            {
                *m = full.clone();
            }
        }
    }
    out
}

/// Sets `value` at `path` in a recorded document, creating objects for missing or null steps.
/// A step that is some other JSON (a tree of an unexpected shape) leaves the document as it is:
/// data from a file must never panic the emulator.
pub(super) fn set(doc: &mut Value, path: &[&str], value: Value) {
    let Some((last, steps)) = path.split_last() else { return };
    let mut at = doc;
    for step in steps {
        if at.is_null() {
            *at = Value::Object(serde_json::Map::new());
        }
        let Some(next) = at.as_object_mut().map(|o| o.entry(*step).or_insert(Value::Null)) else {
            return;
        };
        at = next;
    }
    if at.is_null() {
        *at = Value::Object(serde_json::Map::new());
    }
    if let Some(o) = at.as_object_mut() {
        o.insert((*last).to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_of_an_unexpected_shape_are_left_alone_not_panicked_on() {
        let mut doc = json!({"PowerWatts": "n/a", "Oem": null});
        set(&mut doc, &["PowerWatts", "Reading"], json!(5));
        set(&mut doc, &["Oem", "Dell", "ServiceTag"], json!("T"));
        assert_eq!(doc, json!({"PowerWatts": "n/a", "Oem": {"Dell": {"ServiceTag": "T"}}}));
        let mut list = json!([1, 2]);
        set(&mut list, &["Attributes"], json!({}));
        assert_eq!(list, json!([1, 2]));
    }
}
