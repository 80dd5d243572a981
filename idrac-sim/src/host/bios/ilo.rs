//! The BIOS as HPE's iLO keeps it (HPE redfishdocs "BIOS data model"; NVIDIA libredfish
//! tests/mockups/hpe, a DL385 Gen10 Plus v2 on iLO 5 2.72): the settings object is a full copy
//! of every setting, a PATCH of it answers 200 with `SystemResetRequired` and takes anything (no
//! job, no apply time, no validation), and the next POST of the host processes it: each value is
//! checked against the registry and the registry's rules for the planned state, the valid ones
//! applied, and `@Redfish.Settings` records `Time` and `Messages` (`Success` alone when all were
//! applied, an entry with `RelatedProperties` for each that was not). `Bios.ResetBios` and
//! `RestoreManufacturingDefaults` bring the registry's defaults back at that POST;
//! `Bios.ChangePassword` takes effect there too. Each action is served at the target the
//! resource advertises (the recorded `Bios.ChangePasswords`, plural, included).

use super::super::core::{Host, State};
use super::super::reply::Reply;
use crate::clock::{parse_iso8601, wall, with_offset};
use crate::messages::ilo::{self, ILO, OUTCOME};
use crate::route::{Pattern, Request, Route};
use axum::http::Method;
use redfish_client::dependencies::{DependencyEvaluator, Flag};
use redfish_client::resources::attribute_registry::ValueProblem;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::{Value, json};
use std::time::Instant;

/// The BIOS's routes on an iLO: the current values, the settings object, its two actions at
/// their advertised targets, and the registry file, gzip-encoded.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(Pattern::Any, |h, r| {
            h.cached(r.path, || Reply::ok(h.ilo_bios(r.recorded_or_null(h))))
        })
        .when(|h, r| r.path == h.fixture.places.bios),
        Route::get(Pattern::Any, |h, r| {
            h.cached(r.path, || Reply::ok(h.ilo_settings(r.recorded_or_null(h))))
        })
        .when(|h, r| r.path == h.fixture.places.settings),
        Route::patch(Pattern::Any, |h, r| r.with_json(|b| h.ilo_patch_settings(b)))
            .when(|h, r| r.path == h.fixture.places.settings),
        Route::new(Method::POST, Pattern::Any, |h, _| h.ilo_reset_bios())
            .when(|h, r| advertised(h, r, "#Bios.ResetBios")),
        Route::post(Pattern::Any, |h, r| r.with_json(|b| h.ilo_change_password(b)))
            .when(|h, r| advertised(h, r, "#Bios.ChangePassword")),
        Route::get(Pattern::Any, |h, _| {
            Reply::ok_text(h.fixture.bios_registry_gzip(), super::super::reply::JSON).header("Content-Encoding", "gzip")
        })
        .when(|h, r| r.path == h.fixture.places.registry),
    ]
}

/// 400 `UnrecognizedRequestBody`, for a settings PATCH without what the object holds.
pub(crate) fn unrecognized_body() -> Reply {
    Reply::with_body(
        400,
        Some(ilo::body(vec![ilo::message(
            &format!("{}.UnrecognizedRequestBody", ilo::BASE),
            &[],
        )])),
    )
}

/// The `Time` a POST at `at` records in a settings object's outcome, whose last outcome was
/// `previous`: at least a second after that one's. A real POST takes longer than the settings
/// time's one-second resolution; the emulator's may not, and a time that did not move reads as
/// "not processed".
pub(crate) fn settings_time(previous: Option<&Value>, at: Instant) -> String {
    let mut when = wall(at);
    let previous = previous.and_then(|o| o["Time"].as_str()).and_then(parse_iso8601);
    if let Some(next) = previous.map(|p| p + std::time::Duration::from_secs(1))
        && when < next
    {
        when = next;
    }
    with_offset(when)
}

/// A guard: the request's path is the target the BIOS advertises for `action`.
fn advertised(host: &Host, request: &Request<'_>, action: &str) -> bool {
    host.fixture
        .doc(&host.fixture.places.bios)
        .and_then(|b| b["Actions"][action]["target"].as_str())
        .is_some_and(|target| host.fixture.canonical(target) == request.path)
}

/// A tag of `attributes` and the writes counted against them: 32 hex digits, as iLO's tags of
/// UEFI-provided resources are.
fn tag(attributes: &Attributes, writes: u64, salt: &str) -> String {
    let text = serde_json::to_vec(&(attributes, writes, salt)).unwrap_or_default();
    let fnv = |offset: u64| {
        text.iter()
            .fold(offset, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
    };
    format!(
        "W/\"{:016X}{:016X}\"",
        fnv(0xcbf2_9ce4_8422_2325),
        fnv(0x8422_2325_cbf2_9ce4)
    )
}

impl Host {
    /// The settings object's values: every current value with the written ones over it.
    fn ilo_full_copy(s: &State) -> Attributes {
        let mut all = s.bios.values.clone();
        all.extend(s.bios.pending.clone());
        all
    }

    /// `GET …/bios/`: every current value, the last processing's `@Redfish.Settings`, and
    /// `Oem.Hpe.SettingsObject.UnmodifiedETag`, the settings object's tag as the last POST left
    /// it (equal to the settings' own tag while nothing was written since).
    pub fn ilo_bios(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        doc["Attributes"] = serde_json::to_value(&s.bios.values).unwrap_or_default();
        doc["@odata.etag"] = json!(tag(&s.bios.values, 0, "current"));
        if let Some(outcome) = &s.bios.outcome
            && let Some(settings) = doc["@Redfish.Settings"].as_object_mut()
            && let Some(outcome) = outcome.as_object()
        {
            for (k, v) in outcome {
                settings.insert(k.clone(), v.clone());
            }
        }
        if doc.pointer("/Oem/Hpe").is_some() {
            doc["Oem"]["Hpe"]["SettingsObject"]["UnmodifiedETag"] =
                json!(tag(&s.bios.values, s.bios.writes_at_post, "settings"));
        }
        doc
    }

    /// `GET …/bios/settings/`: a full copy of every setting, the written values over the current
    /// ones.
    pub fn ilo_settings(&self, doc: &Value) -> Value {
        let s = self.now();
        let all = Self::ilo_full_copy(&s);
        let mut doc = doc.clone();
        doc["@odata.etag"] = json!(tag(&all, s.bios.settings_writes, "settings"));
        doc["Attributes"] = serde_json::to_value(&all).unwrap_or_default();
        doc
    }

    /// `PATCH …/bios/settings/ {"Attributes": {...}}`: every value is kept as sent, known or
    /// not, valid or not (HPE's BIOS data model: the pending area takes them all and the next
    /// POST judges them), and the answer is 200 with `SystemResetRequired`. Other members of
    /// the body (`@Redfish.SettingsApplyTime`, which gofish sends) are ignored (assumed).
    pub fn ilo_patch_settings(&self, body: &Value) -> Reply {
        self.stats.count_bios_patch();
        let Some(requested) = body.get("Attributes").and_then(Value::as_object) else {
            // Assumed: a body without an `Attributes` object is refused as Base's
            // UnrecognizedRequestBody.
            return unrecognized_body();
        };
        let mut s = self.change();
        for (name, value) in requested {
            s.bios.pending.insert(name.clone(), AttributeValue::from(value.clone()));
        }
        s.bios.settings_writes += 1;
        Reply::ok(ilo::body(vec![ilo::system_reset_required()]))
    }

    /// `Bios.ResetBios` (with no body, `{}`, or iLO 5's `{"Action": "Bios.ResetBios"}`): the
    /// registry's defaults return at the next POST.
    pub fn ilo_reset_bios(&self) -> Reply {
        let mut s = self.change();
        s.bios.reset_pending = true;
        s.bios.settings_writes += 1;
        Reply::ok(ilo::body(vec![ilo::system_reset_required()]))
    }

    /// `Bios.ChangePassword {"PasswordName": "Administrator"|"User", "OldPassword",
    /// "NewPassword"}`: the old password must match (empty while none is set), else 400
    /// `BiosPasswordMismatch`; the new one takes effect at the next POST (assumed, as the
    /// answer: 200 with `SystemResetRequired`).
    pub fn ilo_change_password(&self, body: &Value) -> Reply {
        let name = body.get("PasswordName").and_then(Value::as_str);
        let new = body.get("NewPassword").and_then(Value::as_str);
        let (Some(name @ ("Administrator" | "User")), Some(new)) = (name, new) else {
            let (param, value) = match name {
                Some("Administrator" | "User") => ("NewPassword", "null".to_owned()),
                other => ("PasswordName", other.unwrap_or("null").to_owned()),
            };
            return Reply::with_body(
                400,
                Some(ilo::body(vec![ilo::message(
                    &format!("{ILO}.ActionParameterValueNotInList"),
                    &[&value, param],
                )])),
            );
        };
        let old = body.get("OldPassword").and_then(Value::as_str).unwrap_or_default();
        let mut s = self.change();
        if old != s.bios.passwords.get(name).map_or("", String::as_str) {
            return Reply::with_body(
                400,
                Some(ilo::body(vec![ilo::message(
                    &format!("{ILO}.BiosPasswordMismatch"),
                    &[],
                )])),
            );
        }
        s.bios.password_pending.insert(name.to_owned(), new.to_owned());
        Reply::ok(ilo::body(vec![ilo::system_reset_required()]))
    }

    /// What an iLO's POST does with the settings: nothing when nothing was written (`Time`
    /// stays, as the recorded host's did across later boots); otherwise the defaults first when
    /// asked (`Bios.ResetBios`, `RestoreManufacturingDefaults` or `RestoreDefaults` = Yes), then
    /// each written value that the registry knows, that is writable and valid and that the
    /// rules of the planned state neither force elsewhere nor lock, with every value those
    /// rules force; the rest stay as they were, each named in `Messages` after `Success`.
    ///
    /// The message ids for a value not applied: `PropertyUnknown` as HPE documents it; for a
    /// value of the wrong type or not in the list, for a read-only attribute, and for one a
    /// preset forces or locks (iLO's `PropertyValueIncompatible`, naming the attribute whose
    /// value decides), assumed.
    pub(crate) fn ilo_post(&self, s: &mut State, at: Instant) {
        let wrote = s.bios.settings_writes != s.bios.writes_at_post || !s.bios.pending.is_empty();
        if !wrote && !s.bios.reset_pending && s.bios.password_pending.is_empty() {
            return;
        }
        // The `job-fails` fault on an iLO: this POST processes nothing, so `Time` stays and
        // the values stay written ("outcome unknown" to a client).
        if self.faults.job_fails {
            return;
        }
        let written = std::mem::take(&mut s.bios.pending);
        let settings_tag = {
            let mut all = s.bios.values.clone();
            all.extend(written.clone());
            tag(&all, s.bios.settings_writes, "settings")
        };
        let restore = ["RestoreManufacturingDefaults", "RestoreDefaults"]
            .iter()
            .any(|n| written.get(*n).and_then(AttributeValue::as_str) == Some("Yes"));
        let mut base = s.bios.values.clone();
        if s.bios.reset_pending || restore {
            for attr in &self.registry().registry_entries.attributes {
                if let (Some(held), Some(default)) = (base.get_mut(&attr.attribute_name), &attr.default_value) {
                    *held = default.clone();
                }
            }
            s.bios.passwords.clear();
        }
        let mut messages = vec![ilo::message(&format!("{OUTCOME}.Success"), &[])];
        let mut accepted = Attributes::new();
        for (name, value) in written {
            let shown = value.to_string();
            let Some(attr) = self.registry().attribute(&name) else {
                messages.push(ilo::about(&format!("{OUTCOME}.PropertyUnknown"), &[&name], &name));
                continue;
            };
            if attr.read_only == Some(true) {
                messages.push(ilo::about(&format!("{OUTCOME}.PropertyNotWritable"), &[&name], &name));
                continue;
            }
            if let Err(problem) = attr.check(&value) {
                let id = match problem {
                    ValueProblem::WrongType { .. } => "PropertyValueTypeError",
                    ValueProblem::NotInList { .. } => "PropertyValueNotInList",
                    _ => "PropertyValueOutOfRange",
                };
                messages.push(ilo::about(&format!("{OUTCOME}.{id}"), &[&shown, &name], &name));
                continue;
            }
            accepted.insert(name, value);
        }
        // The `post-refuses` fault: the BIOS refuses the first value it would have taken, as
        // incompatible with itself (the message assumed, as for a preset's lock below).
        if self.faults.post_refuses
            && let Some(name) = accepted.keys().next().cloned()
            && let Some(value) = accepted.remove(&name)
        {
            messages.push(ilo::about(
                &format!("{ILO}.PropertyValueIncompatible"),
                &[&value.to_string(), &name, &name],
                &name,
            ));
        }
        // The write-only triggers read back as No.
        for trigger in ["RestoreManufacturingDefaults", "RestoreDefaults"] {
            if accepted.remove(trigger).is_some() && base.contains_key(trigger) {
                base.insert(trigger.to_owned(), "No".into());
            }
        }
        let evaluator = DependencyEvaluator::new(self.registry());
        let mut candidate = base.clone();
        candidate.extend(accepted.clone());
        let planned = evaluator.evaluate(&candidate);
        let mut refused = Vec::new();
        for (name, value) in &accepted {
            let lands = planned.values().get(name) == Some(value);
            let locked = planned.is_read_only(name) && base.get(name) != Some(value);
            if lands && !locked {
                continue;
            }
            let cause = planned
                .forced(name)
                .and_then(|f| f.rule.map_from.first())
                .or_else(|| {
                    planned
                        .causes(name, Flag::ReadOnly)
                        .first()
                        .and_then(|rule| rule.map_from.first())
                })
                .map_or("WorkloadProfile", |c| c.map_from_attribute.as_str());
            messages.push(ilo::about(
                &format!("{ILO}.PropertyValueIncompatible"),
                &[&value.to_string(), name, cause],
                name,
            ));
            refused.push(name.clone());
        }
        for name in &refused {
            candidate.insert(name.clone(), base.get(name).cloned().unwrap_or(AttributeValue::Null));
            if !base.contains_key(name) {
                candidate.remove(name);
            }
        }
        let applied = evaluator.evaluate(&candidate);
        for (name, value) in applied.values() {
            // Only attributes this host has: a rule's target that is not here stays absent.
            if let Some(held) = s.bios.values.get_mut(name) {
                *held = value.clone();
                s.bios.inferred.remove(name);
            }
        }
        let passwords = std::mem::take(&mut s.bios.password_pending);
        for (name, new) in passwords {
            if new.is_empty() {
                s.bios.passwords.remove(&name);
            } else {
                s.bios.passwords.insert(name, new);
            }
        }
        s.bios.reset_pending = false;
        s.bios.writes_at_post = s.bios.settings_writes;
        s.bios.view = None;
        s.bios.outcome = Some(json!({
            "ETag": settings_tag.trim_start_matches("W/\"").chars().take(8).collect::<String>(),
            "Messages": messages,
            "Time": settings_time(s.bios.outcome.as_ref(), at),
        }));
    }
}
