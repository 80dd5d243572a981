//! The ComputerSystem resource: its live power state, boot override, boot order and progress,
//! and `PATCH` of its `Boot` (the override applies at once; the order and the mode are staged
//! BIOS settings with their job).

use super::boot::boot016;
use super::core::Host;
use super::jobs::state::ApplyTime;
use super::json::set;
use super::reply::Reply;
use crate::messages;
use crate::route::{Route, exact};
use redfish_client::oem::dell;
use serde_json::{Value, json};

/// The system, read and written.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(exact(dell::SYSTEM), |h, r| {
            h.cached(r.path, || Reply::ok(h.system(r.recorded_or_null(h))))
        }),
        Route::patch(exact(dell::SYSTEM), |h, r| {
            r.with_json(|b| h.patch_system(b, r.recorded_or_null(h)))
        }),
    ]
}

impl Host {
    /// The system, with live power state and boot override. It answers during POST, as a real
    /// iDRAC's does (`PowerState` On); POST shows in `GetRemoteServicesAPIStatus`.
    pub fn system(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.power.on { "On" } else { "Off" }));
        set(&mut doc, &["SKU"], json!(self.service_tag));
        if let Some(v) = s.bios.values.get("SystemBiosVersion") {
            set(&mut doc, &["BiosVersion"], v.to_json());
        }
        for (k, v) in &s.boot.overrides {
            set(&mut doc, &["Boot", k], v.clone());
        }
        // A tree without Dell's boot sources keeps its recorded order.
        if doc.pointer("/Boot/BootOrder").is_some()
            && !s.boot.sequence.is_empty()
            && s.boot.sequence.iter().all(|d| d.option.is_some())
        {
            set(&mut doc, &["Boot", "BootOrder"], Self::boot_order(&s));
        }
        if doc.get("BootProgress").is_some() {
            let progress = match (s.power.on, s.power.post) {
                (false, _) => "None",
                (true, Some(b)) if !b.job_done => "MemoryInitializationStarted",
                (true, Some(_)) => "SystemHardwareInitializationComplete",
                (true, None) => "OSRunning",
            };
            set(&mut doc, &["BootProgress", "LastState"], json!(progress));
        }
        doc
    }

    /// `PATCH Systems/System.Embedded.1` with `Boot`: `BootSourceOverrideTarget`,
    /// `BootSourceOverrideEnabled` (Once, Continuous, Disabled), `UefiTargetBootSourceOverride`
    /// (a boot option's UEFI device path; BOOT016 otherwise) and `BootSourceOverrideMode`
    /// (UEFI, Legacy), checked against the allowable values the system lists; and
    /// `BootOrder` (boot option references). The override applies at once; `Once` is used up by
    /// the next boot. `BootOrder` and `BootSourceOverrideMode` are staged BIOS settings on
    /// iDRAC9: each queues a BIOS job (202 with its `Location`; SYS011 while one is open), so a
    /// one-time boot that sends the mode costs a job and its reboot, as a public report from a
    /// real R660 (iDRAC 7.10) describes. Other properties are refused as unknown or not writable.
    pub fn patch_system(&self, body: &Value, doc: &Value) -> Reply {
        let Some(fields) = body.as_object() else {
            return Reply::error(400, vec![messages::property_missing("Boot")]);
        };
        let mut problems = Vec::new();
        let mut boot = serde_json::Map::new();
        let mut order = None;
        for (key, value) in fields {
            if key != "Boot" {
                problems.push(messages::property_not_changeable(
                    key,
                    doc.get(key).is_some(),
                    &format!("#/{key}"),
                ));
                continue;
            }
            let Some(requested) = value.as_object() else {
                problems.push(messages::property_missing("Boot"));
                continue;
            };
            for (name, v) in requested {
                let allowed: Vec<String> = match name.as_str() {
                    "BootOrder" => {
                        match v.as_array() {
                            Some(list) => order = Some(list.clone()),
                            None => problems.push(boot016("#/Boot/BootOrder")),
                        }
                        continue;
                    }
                    "UefiTargetBootSourceOverride" => {
                        match v.as_str() {
                            Some(path) if self.known_device_path(path) => {
                                boot.insert(name.clone(), v.clone());
                            }
                            _ => problems.push(boot016("#/Boot/UefiTargetBootSourceOverride")),
                        }
                        continue;
                    }
                    "BootSourceOverrideTarget" => doc
                        .pointer("/Boot/BootSourceOverrideTarget@Redfish.AllowableValues")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
                        .unwrap_or_default(),
                    "BootSourceOverrideEnabled" => ["Once", "Continuous", "Disabled"].map(str::to_owned).to_vec(),
                    "BootSourceOverrideMode" => ["UEFI", "Legacy"].map(str::to_owned).to_vec(),
                    _ => {
                        problems.push(messages::property_unknown(name, &format!("#/Boot/{name}")));
                        continue;
                    }
                };
                match v.as_str() {
                    Some(text) if allowed.iter().any(|a| a == text) => {
                        boot.insert(name.clone(), v.clone());
                    }
                    _ => {
                        let shown = v.to_string();
                        problems.push(messages::base(
                            "PropertyValueNotInList",
                            &format!(
                                "The value {shown} for the property {name} is not in the list of acceptable values."
                            ),
                            &[&shown, name],
                            &format!("Choose one of {}.", allowed.join(", ")),
                            Some(&format!("#/Boot/{name}")),
                        ));
                    }
                }
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let staged = order.is_some() || boot.contains_key("BootSourceOverrideMode");
        if staged && s.jobs.has_open_bios() {
            return Reply::error(400, vec![messages::sys011()]);
        }
        let mut job = None;
        if let Some(order) = &order {
            match self.stage_boot_order(&mut s, order) {
                Ok(location) => job = Some(location),
                Err(reply) => return reply,
            }
        } else if boot.contains_key("BootSourceOverrideMode") {
            job = Some(self.create_bios_job(&mut s, &ApplyTime::OnReset));
        }
        // A target without an enable flag applies once, as on iDRAC.
        if boot.contains_key("BootSourceOverrideTarget") && !boot.contains_key("BootSourceOverrideEnabled") {
            boot.insert("BootSourceOverrideEnabled".into(), "Once".into());
        }
        s.boot.overrides.extend(boot);
        let body = messages::success_body(vec![messages::success()]);
        match job {
            Some(location) => Reply::with_body(202, Some(body)).header("Location", location),
            None => Reply::ok(body),
        }
    }
}
