//! The host's boot order and what changes it, as real iDRAC9s show it: one UEFI boot sequence
//! (FQDD, boot option, enabled) behind `Systems/…/Boot.BootOrder`, the `BootOptions`, Dell's
//! boot sources (`UefiBootSeq`, at `BootSources` and `Oem/Dell/DellBootSources`) and the BIOS
//! attributes `SetBootOrderEn`/`SetBootOrderDis`. Every change waits for a BIOS job at POST,
//! whichever way it came: BIOS attributes (`SetBootOrderEn`, `SetBootOrderDis`,
//! `SetBootOrderFqdd1..16`), a `Boot.BootOrder` PATCH of the system (it creates its job), or a
//! staged `UefiBootSeq` (committed by a job on `Bios/Settings`, or created with an apply time).
//! At the end of POST the boot device is chosen — a one-time override, else the BIOS's one-time
//! device, else the first enabled device — and what is used once is used up.

pub(crate) mod ilo;
pub(crate) mod state;

use super::core::{Host, State};
use super::jobs::state::ApplyTime;
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Request, Route, exact, not_found, prefix, recorded};
use redfish_client::oem::dell;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::{Value, json};
use state::{BootDev, list, reordered};

/// Dell's boot sources and their settings object (at either path), and the boot options.
pub(crate) fn routes() -> Vec<Route> {
    let mut routes = Vec::new();
    for sources in [dell::DELL_BOOT_SOURCES, dell::BOOT_SOURCES] {
        routes.push(Route::get(exact(sources), |h, r| match boot_sources_doc(h) {
            Some(d) => h.cached(r.path, || Reply::ok(h.boot_sources(r.path, d))),
            None => not_found(r.path),
        }));
        routes.push(Route::get(
            exact(format!("{sources}/Settings")),
            |h, r| match boot_sources_doc(h) {
                Some(_) => h.cached(r.path, || Reply::ok(h.boot_sources_settings(r.path))),
                None => not_found(r.path),
            },
        ));
        routes.push(Route::patch(
            exact(format!("{sources}/Settings")),
            |h, r| match boot_sources_doc(h) {
                Some(_) => r.with_json(|b| h.patch_boot_sources(b)),
                None => not_found(r.path),
            },
        ));
    }
    routes.push(
        Route::get(exact(dell::BOOT_OPTIONS), |h, r: &Request<'_>| {
            let key = format!("{}?expand={}", r.path, r.expand);
            h.cached(&key, || Reply::ok(h.boot_options(r.recorded_or_null(h), r.expand)))
        })
        .when(recorded),
    );
    routes.push(
        Route::get(prefix(dell::BOOT_OPTIONS), |h, r| {
            h.cached(r.path, || Reply::ok(h.boot_option(r.recorded_or_null(h))))
        })
        .when(recorded),
    );
    routes
}

/// The tree's boot sources document, at whichever path it records it: it serves both.
fn boot_sources_doc(host: &Host) -> Option<&Value> {
    host.fixture
        .doc(dell::DELL_BOOT_SOURCES)
        .or_else(|| host.fixture.doc(dell::BOOT_SOURCES))
}

impl Host {
    /// The boot sequence after a BIOS job applied `applied` (the values it took from pending):
    /// `SetBootOrderFqdd1..16` put their devices first; `SetBootOrderEn` sets the order and the
    /// enabled devices (those it leaves out, OS-created entries aside, go off, behind them);
    /// `SetBootOrderDis` turns devices off; a staged sequence replaces the order. Then the
    /// BIOS's own lists are brought in line, and the one-shot `SetBootOrderFqddN` read back
    /// empty, as on every real capture.
    pub(crate) fn apply_boot_changes(&self, s: &mut State, applied: &Attributes) {
        let mut seq = s.boot.sequence.clone();
        if let Some(staged) = s.boot.pending.take() {
            seq = staged;
        }
        let fqdds: Vec<String> = (1..=16)
            .filter_map(|n| {
                applied
                    .get(&format!("SetBootOrderFqdd{n}"))
                    .and_then(AttributeValue::as_str)
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
            })
            .collect();
        if !fqdds.is_empty() {
            seq = reordered(&seq, &fqdds);
        }
        if applied.contains_key(dell::SET_BOOT_ORDER_ENABLED) {
            let en = list(&s.bios.values, dell::SET_BOOT_ORDER_ENABLED);
            seq = reordered(&seq, &en);
            let (mut on, mut off): (Vec<BootDev>, Vec<BootDev>) = seq
                .into_iter()
                .partition(|d| d.os_created() && d.enabled || en.iter().any(|f| f.eq_ignore_ascii_case(&d.fqdd)));
            for d in &mut off {
                d.enabled = false;
            }
            on.append(&mut off);
            seq = on;
        }
        if applied.contains_key(dell::SET_BOOT_ORDER_DISABLED) {
            let dis = list(&s.bios.values, dell::SET_BOOT_ORDER_DISABLED);
            for d in &mut seq {
                if dis.iter().any(|f| f.eq_ignore_ascii_case(&d.fqdd)) {
                    d.enabled = false;
                }
            }
        }
        s.boot.sequence = seq;
        Self::bios_boot_lists(s);
    }

    /// `SetBootOrderEn`/`SetBootOrderDis` as the BIOS reports its sequence (OS-created entries
    /// are in neither, as on both real R750 captures), and `SetBootOrderFqdd1..16` empty.
    pub(crate) fn bios_boot_lists(s: &mut State) {
        let join = |on: bool| {
            s.boot
                .sequence
                .iter()
                .filter(|d| d.enabled == on && !d.os_created())
                .map(|d| d.fqdd.as_str())
                .collect::<Vec<_>>()
                .join(",")
        };
        let (en, dis) = (join(true), join(false));
        for (name, value) in [(dell::SET_BOOT_ORDER_ENABLED, en), (dell::SET_BOOT_ORDER_DISABLED, dis)] {
            if s.bios.values.contains_key(name) {
                s.bios.values.insert(name.to_owned(), value.into());
            }
        }
        for n in 1..=16 {
            let name = format!("SetBootOrderFqdd{n}");
            if s.bios.values.contains_key(&name) {
                s.bios.values.insert(name, "".into());
            }
        }
    }

    /// At the end of POST: the device this boot uses — a one-time override (used up), else the
    /// BIOS's one-time device (`OneTimeBootMode`, used up), else the first enabled device of the
    /// sequence — recorded in the stats (`booted`).
    pub(crate) fn choose_boot_device(&self, s: &mut State) {
        let once = s
            .boot
            .overrides
            .get("BootSourceOverrideEnabled")
            .and_then(Value::as_str)
            == Some("Once");
        let target = s
            .boot
            .overrides
            .get("BootSourceOverrideTarget")
            .and_then(Value::as_str)
            .unwrap_or("None")
            .to_owned();
        let booted = if once && target != "None" {
            s.boot
                .overrides
                .insert("BootSourceOverrideEnabled".into(), "Disabled".into());
            s.boot
                .overrides
                .insert("BootSourceOverrideTarget".into(), "None".into());
            if target == "UefiTarget" {
                let path = s
                    .boot
                    .overrides
                    .insert("UefiTargetBootSourceOverride".into(), Value::Null)
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                format!("UefiTarget {path} (once)")
            } else {
                format!("{target} (once)")
            }
        } else if s.bios.values.get("OneTimeBootMode").and_then(AttributeValue::as_str) == Some("OneTimeUefiBootSeq") {
            s.bios.values.insert("OneTimeBootMode".into(), "Disabled".into());
            let dev = s
                .bios
                .values
                .get("OneTimeUefiBootSeqDev")
                .and_then(AttributeValue::as_str)
                .unwrap_or_default();
            format!("{dev} (one-time BIOS setting)")
        } else {
            s.boot
                .sequence
                .iter()
                .find(|d| d.enabled)
                .map_or_else(|| "no boot device".to_owned(), |d| d.fqdd.clone())
        };
        self.stats.count_boot(&booted);
    }

    /// Dell's boot sources (either path) with the live sequence.
    pub fn boot_sources(&self, path: &str, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        doc["@odata.id"] = json!(path);
        doc["Attributes"] = json!({"UefiBootSeq": sequence_json(&s.boot.sequence)});
        doc
    }

    /// The boot sources' settings object: the staged sequence, or nothing.
    pub fn boot_sources_settings(&self, path: &str) -> Value {
        let s = self.now();
        let attributes = match &s.boot.pending {
            Some(seq) => json!({"UefiBootSeq": sequence_json(seq)}),
            None => json!({}),
        };
        json!({
            "@odata.id": path,
            "@odata.type": "#DellBootSources.v1_1_0.DellBootSources",
            "Actions": {"Oem": {"#DellManager.ClearPending": {
                "target": format!("{path}/Actions/Oem/DellManager.ClearPending")}}},
            "Attributes": attributes,
            "Description": "Boot Sources Pending Settings",
            "Id": "Settings",
            "Name": "Boot Sources Configuration Pending Settings",
        })
    }

    /// `PATCH …BootSources/Settings {"Attributes": {"UefiBootSeq": [...]}}` (badfish's and Dell's
    /// Ansible module's boot order): every entry must name a device of the sequence; the new
    /// order is by `Index`, with the given `Enabled` flags. Staged for a BIOS job: one created
    /// here when the body carries `@Redfish.SettingsApplyTime` (202 with its `Location`), else by
    /// `POST Jobs` on `Bios/Settings` (200).
    pub fn patch_boot_sources(&self, body: &Value) -> Reply {
        let Some(entries) = body.pointer("/Attributes/UefiBootSeq").and_then(Value::as_array) else {
            return Reply::error(400, vec![messages::property_missing("UefiBootSeq")]);
        };
        let apply_time = match body.get("@Redfish.SettingsApplyTime") {
            None => None,
            Some(v) => match ApplyTime::parse(v, std::time::SystemTime::now()) {
                Ok(t) => Some(t),
                Err(problem) => return Reply::error(400, vec![problem]),
            },
        };
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.has_open_bios() {
            return Reply::error(400, vec![messages::sys011()]);
        }
        let mut given: Vec<(u64, BootDev)> = Vec::new();
        for e in entries {
            let name = e.get("Name").and_then(Value::as_str).unwrap_or_default();
            let Some(dev) = s.boot.sequence.iter().find(|d| d.fqdd == name) else {
                return Reply::error(400, vec![boot016(&format!("#/Attributes/UefiBootSeq/{name}"))]);
            };
            let index = e.get("Index").and_then(Value::as_u64).unwrap_or(u64::MAX);
            let enabled = e.get("Enabled").and_then(Value::as_bool).unwrap_or(dev.enabled);
            given.push((index, BootDev { enabled, ..dev.clone() }));
        }
        given.sort_by_key(|(i, _)| *i);
        let mut seq: Vec<BootDev> = given.into_iter().map(|(_, d)| d).collect();
        let rest: Vec<BootDev> = s
            .boot
            .sequence
            .iter()
            .filter(|d| !seq.iter().any(|g| g.fqdd == d.fqdd))
            .cloned()
            .collect();
        seq.extend(rest);
        s.boot.pending = Some(seq);
        match apply_time {
            Some(apply) => {
                let location = self.create_bios_job(&mut s, &apply);
                Reply::with_body(202, Some(messages::success_body(vec![messages::sys413()])))
                    .header("Location", location)
            }
            None => Reply::ok(messages::success_body(vec![messages::sys413()])),
        }
    }

    /// `Boot.BootOrder` in a system PATCH (Dell's `ChangeBiosBootOrderREDFISH.py`, Dell's
    /// Ansible `idrac_boot`): every entry a boot option of the sequence, none twice; the listed
    /// ones go first. It stages a BIOS change, which the next BIOS job applies at POST.
    pub(crate) fn stage_boot_order(&self, s: &mut State, order: &[Value]) -> Result<(), Reply> {
        let mut first = Vec::new();
        for v in order {
            let Some(id) = v.as_str() else {
                return Err(Reply::error(400, vec![boot016("#/Boot/BootOrder")]));
            };
            let Some(dev) = s.boot.sequence.iter().find(|d| d.option.as_deref() == Some(id)) else {
                return Err(Reply::error(400, vec![boot016("#/Boot/BootOrder")]));
            };
            if first.contains(&dev.fqdd) {
                return Err(Reply::error(400, vec![boot016("#/Boot/BootOrder")]));
            }
            first.push(dev.fqdd.clone());
        }
        let base = s.boot.pending.clone().unwrap_or_else(|| s.boot.sequence.clone());
        let mut seq: Vec<BootDev> = first
            .iter()
            .filter_map(|f| base.iter().find(|d| &d.fqdd == f).cloned())
            .collect();
        seq.extend(base.iter().filter(|d| !first.contains(&d.fqdd)).cloned());
        s.boot.pending = Some(seq);
        Ok(())
    }

    /// Whether `path` is the UEFI device path of one of the host's boot options.
    pub(crate) fn known_device_path(&self, path: &str) -> bool {
        let options = format!("{}/BootOptions", self.fixture.places.system);
        let options = if self.fixture.doc(dell::BOOT_OPTIONS).is_some() {
            dell::BOOT_OPTIONS.to_owned()
        } else {
            self.fixture.canonical(&options)
        };
        self.fixture
            .doc(&options)
            .and_then(|d| d.get("Members"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| m.get("@odata.id").and_then(Value::as_str))
            .filter_map(|id| self.fixture.doc(&self.fixture.canonical(id)))
            .any(|o| o.get("UefiDevicePath").and_then(Value::as_str) == Some(path))
    }

    /// A boot option with its live `BootOptionEnabled`.
    pub fn boot_option(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        let id = doc.get("Id").and_then(Value::as_str).unwrap_or_default().to_owned();
        if let Some(d) = s
            .boot
            .sequence
            .iter()
            .find(|d| d.option.as_deref() == Some(id.as_str()))
        {
            doc["BootOptionEnabled"] = json!(d.enabled);
        }
        doc
    }

    /// The boot options collection, members inline with `$expand`.
    pub fn boot_options(&self, doc: &Value, expand: bool) -> Value {
        let mut doc = doc.clone();
        if let (true, Some(members)) = (expand, doc.get_mut("Members").and_then(Value::as_array_mut)) {
            for m in members.iter_mut() {
                if let Some(full) = m
                    .get("@odata.id")
                    .and_then(Value::as_str)
                    .and_then(|id| self.fixture.doc(id))
                {
                    *m = self.boot_option(full);
                }
            }
        }
        doc
    }
}

/// `Boot.BootOrder` of a sequence: its boot option references.
pub(crate) fn boot_order(sequence: &[BootDev]) -> Value {
    json!(sequence.iter().filter_map(|d| d.option.clone()).collect::<Vec<_>>())
}

/// The sequence as Dell's boot sources show it.
fn sequence_json(seq: &[BootDev]) -> Value {
    json!(
        seq.iter()
            .enumerate()
            .map(|(i, d)| json!({
                "Enabled": d.enabled,
                "Id": format!("BIOS.Setup.1-1#UefiBootSeq#{}#{i}", d.fqdd),
                "Index": i,
                "Name": d.fqdd,
            }))
            .collect::<Vec<_>>()
    )
}

/// BOOT016, the answer real iDRACs give a boot order naming a device they do not have (a
/// public Dell issue shows it for `Boot.BootOrder`).
pub(crate) fn boot016(related: &str) -> Value {
    idrac(
        "BOOT016",
        "Input source argument value for the boot device is incorrect or not found among the boot devices on the system.",
        &[],
        "Use the correct source argument value for the boot device and retry the operation.",
        Some(related),
    )
}
