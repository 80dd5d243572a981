//! The BIOS: `Bios` with its visible values, `Bios/Settings` with the pending ones, the
//! registry as the current values make it (`registry`), `PATCH Bios/Settings` validated like
//! iDRAC, `DellManager.ClearPending`, `Bios.ResetBios` (defaults at the next POST) and
//! `Bios.ChangePassword` (applied by the next BIOS job). What POST makes of an NPS the memory
//! cannot take is `numa`.
//!
//! One pending BIOS job at a time: iDRAC9 refuses any BIOS write while one is open (SYS011; a
//! Dell maintainer in dell/iDRAC-Redfish-Scripting issue 249), iDRAC10 merges successive
//! `Bios/Settings` PATCHes into the job that is scheduled (bmclib PR 467: every pairwise order
//! of writes merged on three R6715s; dsx-ai-factory/libredfish PR 97: 200 without a job) and
//! refuses them only while that job was created by a SecureBoot PATCH (or runs), with the body
//! a real R6715 returned.

pub(crate) mod ilo;
pub(crate) mod numa;
mod registry;
pub(crate) mod state;

use super::core::{Host, State};
use super::jobs::state::ApplyTime;
use super::json::set;
use super::refusals::{hidden, not_allowed_now, read_only, unknown_attribute, value_problem};
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Route, exact};
use redfish_client::oem::dell;
use redfish_client::resources::attribute_registry::AttributeType;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::{Value, json};
use std::time::SystemTime;

/// What a BIOS write meets while a BIOS job is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenJob {
    /// iDRAC9: refused with SYS011.
    Refuses,
    /// iDRAC10: the values join the scheduled job, unless no write may join it.
    Merges,
}

/// iDRAC10's `PATCH Bios/Settings`, which merges into the scheduled job.
pub(crate) fn idrac10_routes() -> Vec<Route> {
    vec![Route::patch(exact(dell::BIOS_SETTINGS), |h, r| {
        r.with_json(|b| h.patch_bios_meeting(b, OpenJob::Merges))
    })]
}

/// The BIOS, its settings object and registry, and its actions.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(exact(dell::BIOS), |h, r| {
            h.cached(r.path, || Reply::ok(h.bios(r.recorded_or_null(h))))
        }),
        Route::post(exact(format!("{}/Actions/Bios.ResetBios", dell::BIOS)), |h, _| {
            h.reset_bios()
        }),
        Route::post(exact(format!("{}/Actions/Bios.ChangePassword", dell::BIOS)), |h, r| {
            r.with_json(|b| h.change_password(b))
        }),
        Route::get(exact(dell::BIOS_SETTINGS), |h, r| {
            h.cached(r.path, || Reply::ok(h.bios_settings(r.recorded_or_null(h))))
        }),
        Route::patch(exact(dell::BIOS_SETTINGS), |h, r| r.with_json(|b| h.patch_bios(b))),
        Route::get(exact(dell::BIOS_REGISTRY), |h, _| h.bios_registry()),
        Route::post(exact(dell::CLEAR_PENDING), |h, _| h.clear_pending()),
    ]
}

impl Host {
    /// `Bios` with the current values of the attributes those values leave visible: like a real
    /// iDRAC, hidden attributes are not listed.
    pub fn bios(&self, doc: &Value) -> Value {
        let mut s = self.now();
        self.view(&mut s);
        let bios = &s.bios;
        let visible: Attributes = bios
            .values
            .iter()
            .filter(|(k, _)| bios.view.as_ref().is_none_or(|v| !v.hidden.contains(*k)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut doc = doc.clone();
        set(
            &mut doc,
            &["Attributes"],
            serde_json::to_value(&visible).unwrap_or_default(),
        );
        if doc.get("ResetBiosToDefaultsPending").is_some() {
            set(&mut doc, &["ResetBiosToDefaultsPending"], json!(bios.reset_pending));
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
            serde_json::to_value(&s.bios.pending).unwrap_or_default(),
        );
        doc
    }

    /// `PATCH Bios/Settings` as iDRAC9 takes it: validate like iDRAC, stage, and create a job
    /// when the body carries `@Redfish.SettingsApplyTime` (a maintenance window must lie ahead
    /// of the Manager's clock); SYS011 while a BIOS job is open.
    pub fn patch_bios(&self, body: &Value) -> Reply {
        self.patch_bios_meeting(body, OpenJob::Refuses)
    }

    /// `PATCH Bios/Settings`, meeting an open BIOS job as `open` says. An apply time the BIOS's
    /// `@Redfish.Settings` does not list is refused (iDRAC10's lists OnReset only).
    pub(crate) fn patch_bios_meeting(&self, body: &Value, open: OpenJob) -> Reply {
        self.stats.count_bios_patch();
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let Some(requested) = body.get("Attributes").and_then(Value::as_object) else {
            return Reply::error(400, vec![messages::property_missing("Attributes")]);
        };
        let merging = match open {
            _ if !s.jobs.has_open_bios() => false,
            OpenJob::Refuses => return Reply::error(400, vec![messages::sys011()]),
            OpenJob::Merges if s.jobs.closed_to_writes().is_some() => {
                let first = requested.keys().next().map_or("Attributes", String::as_str);
                return Reply::with_body(400, Some(messages::idrac10::sys011(first)));
            }
            OpenJob::Merges => true,
        };
        let apply_time = match body.get("@Redfish.SettingsApplyTime") {
            None => None,
            Some(v) => match ApplyTime::parse(v, SystemTime::now()).and_then(|t| self.offered(t)) {
                Ok(t) => Some(t),
                Err(problem) => return Reply::error(400, vec![problem]),
            },
        };
        let patch: Attributes = requested
            .iter()
            .map(|(k, v)| (k.clone(), AttributeValue::from(v.clone())))
            .collect();
        let mut problems = Vec::new();
        // The planned state: current, pending and this request.
        let mut candidate = s.bios.known();
        candidate.extend(s.bios.pending.clone());
        candidate.extend(patch.clone());
        let evaluation = self.evaluate(&candidate);
        for (name, value) in &patch {
            let Some(attr) = self.registry().attribute(name) else {
                problems.extend(unknown_attribute(name));
                continue;
            };
            if let Err(p) = attr.check(value) {
                problems.extend(value_problem(name, value, &p));
                continue;
            }
            if evaluation.is_hidden(name) {
                problems.extend(hidden(name));
            } else if evaluation.is_read_only(name) {
                problems.extend(read_only(name));
            } else if let Some(allowed) = evaluation.allowed(name)
                && !allowed.values.iter().any(|v| Some(v.as_str()) == value.as_str())
            {
                problems.extend(not_allowed_now(name, value, allowed));
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        s.bios.pending.extend(patch);
        match apply_time {
            // Merged into the scheduled job: 200 and no job in the headers, as the newer iDRACs
            // answer (dsx-ai-factory/libredfish PR 97).
            _ if merging => Reply::ok(messages::success_body(vec![messages::sys413()])),
            None => Reply::ok(messages::success_body(vec![messages::sys413()])),
            Some(apply) => {
                let location = self.create_bios_job(&mut s, &apply);
                Reply::with_body(202, Some(messages::success_body(vec![messages::sys413()])))
                    .header("Location", location)
            }
        }
    }

    /// `apply`, when the BIOS's `@Redfish.Settings.SupportedApplyTimes` lists it (or lists
    /// nothing); otherwise the refusal (assumed: Base PropertyValueNotInList, as for a value a
    /// property does not take).
    fn offered(&self, apply: ApplyTime) -> Result<ApplyTime, Value> {
        let listed = self
            .fixture
            .doc(dell::BIOS)
            .and_then(|b| b.pointer("/@Redfish.Settings/SupportedApplyTimes"))
            .and_then(Value::as_array);
        let Some(listed) = listed else { return Ok(apply) };
        let names: Vec<&str> = listed.iter().filter_map(Value::as_str).collect();
        let name = apply.name();
        if names.contains(&name) {
            return Ok(apply);
        }
        Err(messages::base(
            "PropertyValueNotInList",
            &format!("The value {name} for the property ApplyTime is not in the list of acceptable values."),
            &[name, "ApplyTime"],
            &format!("Use one of {} (the BIOS's SupportedApplyTimes).", names.join(", ")),
            Some("#/@Redfish.SettingsApplyTime/ApplyTime"),
        ))
    }

    /// `DellManager.ClearPending` (refused while a BIOS job exists).
    pub fn clear_pending(&self) -> Reply {
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.has_open_bios() {
            return Reply::error(
                400,
                vec![idrac(
                    "BIOS011",
                    "Unable to clear the pending values because a configuration job is scheduled or running.",
                    &[],
                    "Delete the configuration job and retry the operation.",
                    None,
                )],
            );
        }
        s.bios.pending.clear();
        s.bios.password_pending.clear();
        s.boot.pending = None;
        Reply::ok(messages::success_body(vec![messages::sys413()]))
    }

    /// `Bios.ResetBios {}`: the defaults return at the next POST, with or without a job;
    /// `ResetBiosToDefaultsPending` and `LCAttributes.1.BIOSRTDRequested` show it until then.
    pub fn reset_bios(&self) -> Reply {
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        s.bios.reset_pending = true;
        self.set_rtd_flag(&mut s, true);
        Reply::ok(messages::success_body(vec![messages::success()]))
    }

    /// `Bios.ChangePassword {"PasswordName", "OldPassword", "NewPassword"}` for a `Password`
    /// attribute of the registry. The old password must match (empty while none is set); the
    /// change waits, like pending values, for a BIOS job (`POST Jobs` accepts it as pending work).
    pub fn change_password(&self, body: &Value) -> Reply {
        let passwords: Vec<&str> = self
            .registry()
            .registry_entries
            .attributes
            .iter()
            .filter(|a| a.kind == AttributeType::Password)
            .map(|a| a.attribute_name.as_str())
            .collect();
        let name = body.get("PasswordName").and_then(Value::as_str);
        let Some(name) = name.filter(|n| passwords.contains(n)) else {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "Bios.ChangePassword",
                    "PasswordName",
                    name,
                    &passwords,
                )],
            );
        };
        let Some(new) = body.get("NewPassword").and_then(Value::as_str) else {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "Bios.ChangePassword",
                    "NewPassword",
                    None,
                    &["the new password"],
                )],
            );
        };
        let old = body.get("OldPassword").and_then(Value::as_str).unwrap_or_default();
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.has_open_bios() {
            return Reply::error(400, vec![messages::sys011()]);
        }
        let current = s.bios.passwords.get(name).map_or("", String::as_str);
        if old != current {
            // The real EEMI registry's message for a wrong old password; the 400 is assumed
            // (a public Dell issue shows BIOS018 with 400).
            return Reply::error(
                400,
                vec![idrac(
                    "BIOS021",
                    "Cannot authenticate BIOS password.",
                    &[],
                    "Retry the operation with correct old BIOS password.",
                    Some("#/OldPassword"),
                )],
            );
        }
        if let Some(attr) = self.registry().attribute(name)
            && attr.check(&AttributeValue::from(new)).is_err()
        {
            return Reply::error(
                400,
                vec![idrac(
                    "BIOS018",
                    "Invalid BIOS Password.",
                    &[name],
                    "Retry the operation with a BIOS password that conforms with system BIOS password requirements.",
                    Some("#/NewPassword"),
                )],
            );
        }
        s.bios.password_pending.insert(name.to_owned(), new.to_owned());
        Reply::ok(messages::success_body(vec![messages::success()]))
    }
}

impl Host {
    /// Where a real iDRAC shows a BIOS password's SHA-256 hash and salt (`SHA256SetupPassword`,
    /// `SHA256SetupPasswordSalt` for `SetupPassword`; `SHA256SystemPassword…` for
    /// `SysPassword`): a fresh salt and the hash of salt and password once one is set, empty
    /// once cleared. Only where the BIOS lists them.
    pub(crate) fn password_hash(s: &mut State, name: &str, new: &str) {
        use sha2::Digest as _;
        let stem = match name {
            "SetupPassword" => "SHA256SetupPassword",
            "SysPassword" => "SHA256SystemPassword",
            _ => return,
        };
        let salt_name = format!("{stem}Salt");
        if !s.bios.values.contains_key(stem) {
            return;
        }
        let (hash, salt) = if new.is_empty() {
            (String::new(), String::new())
        } else {
            let salt: String = (0..32).map(|_| format!("{:02X}", s.rng.u8(..))).collect();
            let digest = sha2::Sha256::digest(format!("{salt}{new}").as_bytes());
            let hash: String = digest.iter().map(|b| format!("{b:02X}")).collect();
            (hash, salt)
        };
        s.bios.values.insert(stem.to_owned(), hash.into());
        if s.bios.values.contains_key(&salt_name) {
            s.bios.values.insert(salt_name, salt.into());
        }
    }
}
