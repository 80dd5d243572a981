//! The ComputerSystem resource: its live power state, boot override, boot order and progress,
//! and the writes of its `Boot` (the override applies at once; the order and the mode are staged
//! BIOS settings with their job): on the system itself on iDRAC9, through the system's settings
//! object (`@Redfish.Settings`) on iDRAC10, where the system's `Boot` is read-only.

use super::boot::{boot_order, boot016};
use super::core::{Host, State};
use super::jobs::state::ApplyTime;
use super::json::set;
use super::reply::Reply;
use crate::messages;
use crate::route::{Pattern, Request, Route, exact, recorded};
use redfish_client::oem::dell;
use serde_json::{Map, Value, json};

/// The system's settings object, where iDRAC10 takes `Boot` (the System's
/// `@Redfish.Settings.SettingsObject`).
pub(crate) const SYSTEM_SETTINGS: &str = "/redfish/v1/Systems/System.Embedded.1/Settings";

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

/// iDRAC10's: a `PATCH` of `Boot` on the system answers what a real iDRAC10 answers (400
/// `Base.1.18.PropertyNotWritable`, dsx-ai-factory/libredfish PR 33; bmclib PR 461 on an R6715,
/// gofish issue 511 on an R470), and the settings object takes it instead. Other system PATCHes
/// go on to [`routes`].
pub(crate) fn idrac10_routes() -> Vec<Route> {
    vec![
        Route::patch(exact(dell::SYSTEM), |_, _| {
            Reply::with_body(400, Some(messages::idrac10::boot_not_writable()))
        })
        .when(writes_boot),
        Route::get(exact(SYSTEM_SETTINGS), |h, r| {
            h.cached(r.path, || Reply::ok(h.system_settings(r.recorded_or_null(h))))
        })
        .when(recorded),
        Route::patch(exact(SYSTEM_SETTINGS), |h, r| {
            r.with_json(|b| h.patch_system_settings(b, r.recorded_or_null(h)))
        })
        .when(recorded),
    ]
}

/// iLO's: the system found through the `Systems` collection, with its live power state, the
/// POST state iLO reports in `Oem.Hpe.PostState`, and `Boot` written on the system itself.
pub(crate) fn ilo_routes() -> Vec<Route> {
    let here = |h: &Host, r: &Request<'_>| r.path == h.fixture.places.system;
    vec![
        Route::get(Pattern::Any, |h, r| {
            h.cached(r.path, || Reply::ok(h.ilo_system(r.recorded_or_null(h))))
        })
        .when(here),
        Route::patch(Pattern::Any, |h, r| {
            r.with_json(|b| h.ilo_patch_system(b, r.recorded_or_null(h)))
        })
        .when(here),
    ]
}

/// A guard: the request's body names `Boot`.
fn writes_boot(_: &Host, request: &Request<'_>) -> bool {
    serde_json::from_slice::<Value>(request.body).is_ok_and(|b| b.get("Boot").is_some())
}

/// What a `Boot` write asks for, checked.
#[derive(Debug, Default)]
struct BootRequest {
    /// Override properties to apply at once (and `BootSourceOverrideMode` on iDRAC9).
    overrides: Map<String, Value>,
    /// `BootOrder`, to stage.
    order: Option<Vec<Value>>,
}

impl BootRequest {
    /// Whether the request stages a BIOS change (which a BIOS job applies).
    fn stages(&self) -> bool {
        self.order.is_some() || self.overrides.contains_key("BootSourceOverrideMode")
    }
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
        Self::live_boot(&s, &mut doc, false);
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

    /// The system's settings object (iDRAC10): the override in force and the boot order a BIOS
    /// job will apply, else the current one (assumed: no public payload shows the object while
    /// a change is staged).
    pub fn system_settings(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        Self::live_boot(&s, &mut doc, true);
        doc
    }

    /// The system on an iLO: power, serial number, the live `Boot`, and `Oem.Hpe.PostState`
    /// through a reset as HPE's `HpeComputerSystemExt` schema names the phases: `PowerOff`,
    /// `InPost` until the settings are processed, `InPostDiscoveryComplete` ("the point at
    /// which it has been deemed safe to read and write the BIOS configuration") until POST
    /// ends, then `FinishedPost`.
    pub fn ilo_system(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.power.on { "On" } else { "Off" }));
        set(&mut doc, &["SerialNumber"], json!(self.service_tag));
        for (k, v) in &s.boot.overrides {
            if k != "BootOrder" {
                set(&mut doc, &["Boot", k], v.clone());
            }
        }
        if let Some(order) = &s.boot.order {
            set(&mut doc, &["Boot", "BootOrder"], json!(order));
        }
        let post = match (s.power.on, s.power.post) {
            (false, _) => "PowerOff",
            (true, Some(b)) if !b.job_done => "InPost",
            (true, Some(_)) => "InPostDiscoveryComplete",
            (true, None) => "FinishedPost",
        };
        if doc.pointer("/Oem/Hpe").is_some() {
            set(&mut doc, &["Oem", "Hpe", "PostState"], json!(post));
        }
        doc
    }

    /// `PATCH` of the system on an iLO: the boot override applies at once; `BootOrder` (the
    /// standard route, assumed accepted: HPE's tools use the OEM boot resource) must list the
    /// same boot options in another order and waits for the next POST, as HPE's boot order
    /// does. 200 with `Success`, or `SystemResetRequired` when an order waits (assumed).
    pub fn ilo_patch_system(&self, body: &Value, doc: &Value) -> Reply {
        let request = match self.boot_request(body, doc, doc, false) {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        let mut s = self.change();
        let mut message = messages::ilo::success();
        if let Some(order) = request.order {
            let current = s.boot.order.clone().unwrap_or_else(|| {
                doc.pointer("/Boot/BootOrder")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            });
            let mut sorted_new: Vec<String> = order.iter().map(Value::to_string).collect();
            let mut sorted_now: Vec<String> = current.iter().map(Value::to_string).collect();
            sorted_new.sort();
            sorted_now.sort();
            if sorted_new != sorted_now {
                let shown = Value::Array(order).to_string();
                return Reply::with_body(
                    400,
                    Some(messages::ilo::body(vec![messages::ilo::message(
                        &format!("{}.PropertyValueNotInList", messages::ilo::BASE),
                        &[&shown, "BootOrder"],
                    )])),
                );
            }
            s.boot.order_pending = Some(order);
            message = messages::ilo::system_reset_required();
        }
        Self::apply_override(&mut s, request.overrides);
        Reply::ok(messages::ilo::body(vec![message]))
    }

    /// An iLO's POST puts a written boot order in force.
    pub(crate) fn ilo_apply_boot_order(&self, s: &mut State) {
        if let Some(order) = s.boot.order_pending.take() {
            s.boot.order = Some(order);
        }
    }

    /// `doc`'s `Boot` with the live override and order (`staged`: the order a job will apply).
    fn live_boot(s: &State, doc: &mut Value, staged: bool) {
        for (k, v) in &s.boot.overrides {
            set(doc, &["Boot", k], v.clone());
        }
        let sequence = match (&s.boot.pending, staged) {
            (Some(pending), true) => pending,
            _ => &s.boot.sequence,
        };
        // A tree without Dell's boot sources keeps its recorded order.
        if doc.pointer("/Boot/BootOrder").is_some()
            && !sequence.is_empty()
            && sequence.iter().all(|d| d.option.is_some())
        {
            set(doc, &["Boot", "BootOrder"], boot_order(sequence));
        }
    }

    /// Reads a `{"Boot": {...}}` write: `BootSourceOverrideTarget` (checked against the
    /// allowable values `targets_doc` lists), `BootSourceOverrideEnabled` (Once, Continuous,
    /// Disabled), `UefiTargetBootSourceOverride` (a boot option's UEFI device path; BOOT016
    /// otherwise), `BootOrder` (boot option references, checked when staged) and, where
    /// `mode_writable`, `BootSourceOverrideMode` (UEFI, Legacy). Other properties are refused as
    /// unknown or not writable.
    fn boot_request(
        &self,
        body: &Value,
        doc: &Value,
        targets_doc: &Value,
        mode_writable: bool,
    ) -> Result<BootRequest, Reply> {
        let Some(fields) = body.as_object() else {
            return Err(Reply::error(400, vec![messages::property_missing("Boot")]));
        };
        let mut problems = Vec::new();
        let mut request = BootRequest::default();
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
                            Some(list) => request.order = Some(list.clone()),
                            None => problems.push(boot016("#/Boot/BootOrder")),
                        }
                        continue;
                    }
                    "UefiTargetBootSourceOverride" => {
                        match v.as_str() {
                            Some(path) if self.known_device_path(path) => {
                                request.overrides.insert(name.clone(), v.clone());
                            }
                            _ => problems.push(boot016("#/Boot/UefiTargetBootSourceOverride")),
                        }
                        continue;
                    }
                    "BootSourceOverrideTarget" => targets_doc
                        .pointer("/Boot/BootSourceOverrideTarget@Redfish.AllowableValues")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
                        .unwrap_or_default(),
                    "BootSourceOverrideEnabled" => ["Once", "Continuous", "Disabled"].map(str::to_owned).to_vec(),
                    "BootSourceOverrideMode" if mode_writable => ["UEFI", "Legacy"].map(str::to_owned).to_vec(),
                    // 17G boots UEFI only: Dell's Ansible idrac_boot documents the mode as
                    // read-only there [the refusal assumed].
                    "BootSourceOverrideMode" => {
                        problems.push(messages::property_not_changeable(
                            name,
                            true,
                            "#/Boot/BootSourceOverrideMode",
                        ));
                        continue;
                    }
                    _ => {
                        problems.push(messages::property_unknown(name, &format!("#/Boot/{name}")));
                        continue;
                    }
                };
                match v.as_str() {
                    Some(text) if allowed.iter().any(|a| a == text) => {
                        request.overrides.insert(name.clone(), v.clone());
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
        if problems.is_empty() {
            Ok(request)
        } else {
            Err(Reply::error(400, problems))
        }
    }

    /// The override of `request`, applied now: `Once` (also implied by a target alone, as on
    /// iDRAC) is used up by the next boot.
    fn apply_override(s: &mut State, mut overrides: Map<String, Value>) {
        if overrides.contains_key("BootSourceOverrideTarget") && !overrides.contains_key("BootSourceOverrideEnabled") {
            overrides.insert("BootSourceOverrideEnabled".into(), "Once".into());
        }
        s.boot.overrides.extend(overrides);
    }

    /// `PATCH Systems/System.Embedded.1` with `Boot` (iDRAC9): the override applies at once;
    /// `BootOrder` and `BootSourceOverrideMode` are staged BIOS settings, each queuing a BIOS job
    /// (SYS011 while one is open), so a one-time boot that sends the mode costs a job and its
    /// reboot, as a public report from a real R660 (iDRAC 7.10) describes (ironcore-dev/
    /// metal-operator issue 81).
    ///
    /// The answer is 200 with the job's `Location` when one was queued: Dell's own Ansible
    /// `idrac_boot` took only a 200 from this PATCH before it looked the job up in the queue
    /// (dellemc-openmanage-ansible-modules up to 9.7), and Dell's `ChangeBiosBootOrderREDFISH.py`
    /// takes 200 or 202 and reads the job from `Location`. A 200 is also what DSP0266 asks of a
    /// PATCH that succeeded, and what redfishtool's `setBootOverride` handles (it sends the mode
    /// with the target).
    pub fn patch_system(&self, body: &Value, doc: &Value) -> Reply {
        let request = match self.boot_request(body, doc, doc, true) {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if request.stages() && s.jobs.has_open_bios() {
            return Reply::error(400, vec![messages::sys011()]);
        }
        if let Some(order) = &request.order
            && let Err(refused) = self.stage_boot_order(&mut s, order)
        {
            return refused;
        }
        let job = request
            .stages()
            .then(|| self.create_bios_job(&mut s, &ApplyTime::OnReset));
        Self::apply_override(&mut s, request.overrides);
        let reply = Reply::ok(messages::success_body(vec![messages::success()]));
        match job {
            Some(location) => reply.header("Location", location),
            None => reply,
        }
    }

    /// `PATCH Systems/System.Embedded.1/Settings` (iDRAC10): the one-time override applies at
    /// once, 200 and no job (Dell's `SetNextOneTimeBootDeviceREDFISH.py` wants a 200 there;
    /// bmclib PR 461 saw 200 on an R6715); `BootOrder` is staged for a BIOS job: a new one (202
    /// with its `Location`: Dell's Ansible `idrac_boot` took 200 or 202 from this PATCH once it
    /// wrote 17G's settings object, and Dell's `ChangeBiosBootOrderREDFISH.py` reads the job
    /// from `Location`; the 202 assumed), or the scheduled one it joins (200, no job, as
    /// iDRAC10 merges BIOS writes: bmclib PR 467). The targets are the ones the settings object
    /// lists (Dell's scripts read them there on iDRAC10).
    pub fn patch_system_settings(&self, body: &Value, doc: &Value) -> Reply {
        let request = match self.boot_request(body, doc, doc, false) {
            Ok(r) => r,
            Err(refused) => return refused,
        };
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let mut job = None;
        if let Some(order) = &request.order {
            if s.jobs.closed_to_writes().is_some() {
                return Reply::with_body(400, Some(messages::idrac10::sys011("BootOrder")));
            }
            let joins = s.jobs.has_open_bios();
            if let Err(refused) = self.stage_boot_order(&mut s, order) {
                return refused;
            }
            if !joins {
                job = Some(self.create_bios_job(&mut s, &ApplyTime::OnReset));
            }
        }
        Self::apply_override(&mut s, request.overrides);
        let body = messages::success_body(vec![messages::success()]);
        match job {
            Some(location) => Reply::with_body(202, Some(body)).header("Location", location),
            None => Reply::ok(body),
        }
    }
}
