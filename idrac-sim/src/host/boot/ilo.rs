//! HPE's boot settings on an iLO (the recorded DL385 Gen10 Plus v2's `…/bios/oem/hpe/boot/` and
//! its settings object `…/boot/settings/`; HPE's python-ilorest-library and its published
//! examples PATCH `PersistentBootConfigOrder` there): the boot sources and the persistent boot
//! order by structured boot string. The order is the system's `Boot.BootOrder` seen through the
//! sources (one order, however it was written); the settings object is a full copy that takes
//! any PATCH, and the next POST processes it like the BIOS's own: an order that lists exactly
//! the boot sources is put in force, anything else is refused, and `@Redfish.Settings` records
//! `Time` and `Messages` (`Success`, then `PropertyValueNotInList` naming the order when
//! refused: the id an HP REST record shows for a refused order; its place here is assumed).

use super::super::bios::ilo::{settings_time, unrecognized_body};
use super::super::core::{Host, State};
use super::super::reply::Reply;
use crate::messages::ilo::{self, OUTCOME};
use crate::route::{Pattern, Route};
/// The order's name in the boot settings.
const BOOT_ORDER: &str = "PersistentBootConfigOrder";
use serde_json::{Value, json};
use std::time::Instant;

/// The boot settings' routes: the current order, its settings object, and PATCHes of it.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(Pattern::Any, |h, r| {
            h.cached(r.path, || Reply::ok(h.ilo_boot(r.recorded_or_null(h))))
        })
        .when(|h, r| h.ilo_boot_at().as_deref() == Some(r.path)),
        Route::get(Pattern::Any, |h, r| {
            h.cached(r.path, || Reply::ok(h.ilo_boot_settings(r.recorded_or_null(h))))
        })
        .when(|h, r| h.ilo_boot_settings_at().as_deref() == Some(r.path)),
        Route::patch(Pattern::Any, |h, r| r.with_json(|b| h.ilo_patch_boot_settings(b)))
            .when(|h, r| h.ilo_boot_settings_at().as_deref() == Some(r.path)),
    ]
}

impl Host {
    /// Where the BIOS links the boot settings (`Oem.Hpe.Links.Boot`), as the tree records it.
    fn ilo_boot_at(&self) -> Option<String> {
        let bios = self.fixture.doc(&self.fixture.places.bios)?;
        let link = bios.pointer("/Oem/Hpe/Links/Boot/@odata.id")?.as_str()?;
        Some(self.fixture.canonical(link))
    }

    /// Where the boot settings name their settings object.
    fn ilo_boot_settings_at(&self) -> Option<String> {
        let boot = self.fixture.doc(&self.ilo_boot_at()?)?;
        let at = boot.pointer("/@Redfish.Settings/SettingsObject/@odata.id")?.as_str()?;
        Some(self.fixture.canonical(at))
    }

    /// The boot sources the tree records: (structured boot string, boot option reference).
    fn ilo_boot_sources(&self) -> Vec<(String, String)> {
        let Some(boot) = self.ilo_boot_at().and_then(|at| self.fixture.doc(&at)) else {
            return Vec::new();
        };
        boot["BootSources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| {
                let name = s["StructuredBootString"].as_str()?;
                let number = s["BootOptionNumber"].as_str()?;
                Some((name.to_owned(), format!("Boot{number}")))
            })
            .collect()
    }

    /// The system's `Boot.BootOrder` in force (boot option references): as the last POST left
    /// it, else as the tree records it; `None` where the tree records none.
    fn ilo_system_order(&self, s: &State) -> Option<Vec<String>> {
        match &s.boot.order {
            Some(order) => Some(order.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()),
            None => self
                .fixture
                .doc(&self.fixture.places.system)
                .and_then(|d| d.pointer("/Boot/BootOrder"))
                .filter(|l| l.is_array())
                .map(string_list),
        }
    }

    /// The persistent order in force: the system's boot order through the sources.
    fn ilo_boot_order(&self, s: &State, recorded: &Value) -> Vec<String> {
        let sources = self.ilo_boot_sources();
        let Some(refs) = self.ilo_system_order(s) else {
            return string_list(&recorded[BOOT_ORDER]);
        };
        refs.iter()
            .filter_map(|r| {
                sources
                    .iter()
                    .find(|(_, option)| option == r)
                    .map(|(name, _)| name.clone())
            })
            .collect()
    }

    /// `GET …/boot/`: the order in force and what the last POST made of a staged one.
    pub fn ilo_boot(&self, recorded: &Value) -> Value {
        let s = self.now();
        let mut doc = recorded.clone();
        let order = self.ilo_boot_order(&s, recorded);
        doc[BOOT_ORDER] = json!(order);
        if let Some(outcome) = s.boot.hpe.outcome.as_ref().and_then(Value::as_object)
            && let Some(settings) = doc["@Redfish.Settings"].as_object_mut()
        {
            for (k, v) in outcome {
                settings.insert(k.clone(), v.clone());
            }
        }
        doc
    }

    /// `GET …/boot/settings/`: the whole order, as written or as in force.
    pub fn ilo_boot_settings(&self, recorded: &Value) -> Value {
        let s = self.now();
        let mut doc = recorded.clone();
        let order = match &s.boot.hpe.pending {
            Some(written) => written.clone(),
            None => json!(self.ilo_boot_order(&s, recorded)),
        };
        doc[BOOT_ORDER] = order;
        doc
    }

    /// `PATCH …/boot/settings/ {"PersistentBootConfigOrder": [...]}`: kept as sent for the
    /// next POST (like the BIOS settings object, it is not judged here; assumed), 200 with
    /// `SystemResetRequired`. A body without the order is refused.
    pub fn ilo_patch_boot_settings(&self, body: &Value) -> Reply {
        let Some(order) = body.get(BOOT_ORDER).filter(|o| o.is_array()) else {
            return unrecognized_body();
        };
        let mut s = self.change();
        s.boot.hpe.pending = Some(order.clone());
        Reply::ok(ilo::body(vec![ilo::system_reset_required()]))
    }

    /// What the POST does with a written order: an order listing exactly the boot sources, each
    /// once, is put in force (the system's `Boot.BootOrder` follows, boot options that are no
    /// source keeping their places after the sources); any other is refused and named.
    ///
    /// Faults as for the BIOS's settings: `job-fails` processes nothing (the order stays
    /// written, `Time` stays); `post-refuses` refuses the order as incompatible (assumed).
    pub(crate) fn ilo_boot_post(&self, s: &mut State, at: Instant) {
        if self.faults.job_fails {
            return;
        }
        let Some(written) = s.boot.hpe.pending.take() else {
            return;
        };
        let sources = self.ilo_boot_sources();
        let names = string_list(&written);
        let mut sorted_names = names.clone();
        sorted_names.sort();
        let mut sorted_sources: Vec<String> = sources.iter().map(|(n, _)| n.clone()).collect();
        sorted_sources.sort();
        let mut messages = vec![ilo::message(&format!("{OUTCOME}.Success"), &[])];
        let whole = names.len() == string_count(&written) && sorted_names == sorted_sources;
        if whole && self.faults.post_refuses {
            messages.push(ilo::about(
                &format!("{}.PropertyValueIncompatible", ilo::ILO),
                &[&written.to_string(), BOOT_ORDER, BOOT_ORDER],
                BOOT_ORDER,
            ));
        } else if whole {
            let current = self.ilo_system_order(s).unwrap_or_default();
            let mut refs: Vec<String> = names
                .iter()
                .filter_map(|n| sources.iter().find(|(name, _)| name == n).map(|(_, r)| r.clone()))
                .collect();
            refs.extend(current.into_iter().filter(|r| !sources.iter().any(|(_, o)| o == r)));
            s.boot.order = Some(refs.into_iter().map(Value::String).collect());
        } else {
            messages.push(ilo::about(
                &format!("{OUTCOME}.PropertyValueNotInList"),
                &[&written.to_string(), BOOT_ORDER],
                BOOT_ORDER,
            ));
        }
        let time = settings_time(s.boot.hpe.outcome.as_ref(), at);
        s.boot.hpe.outcome = Some(json!({"Messages": messages, "Time": time}));
    }
}

/// The strings of a JSON list (none for anything else).
fn string_list(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// How many entries a JSON list has (0 for anything else).
fn string_count(v: &Value) -> usize {
    v.as_array().map_or(0, Vec::len)
}
