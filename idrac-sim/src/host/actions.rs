//! Power and reset actions: `ComputerSystem.Reset`, `Chassis.Reset`, Dell's
//! `DellOemChassis.ExtendedReset`, `Manager.Reset` (the iDRAC itself restarts),
//! `DellBIOSService.DeviceRecovery`, and `PATCH` of the system's boot override.

use super::{Host, Reply, State};
use super::{Outage, Shutdown};
use crate::messages::{self, idrac};
use crate::route::{Route, exact};
use crate::synth::{IDRAC_CARD_SERVICE, TIME_SERVICE};
use redfish_client::oem::dell;
use redfish_client::resources::computer_system::ResetType;
use serde_json::Value;
use std::time::Instant;

/// 409 for a reset that asks for the power state the host is in. A real iDRAC answers "Server
/// is already powered ON." with PSU501 (Informational); PSU502 for OFF is assumed.
fn already(on: bool) -> Reply {
    let (code, text) = if on {
        ("PSU501", "Server is already powered ON.")
    } else {
        ("PSU502", "Server is already powered OFF.")
    };
    Reply::error(
        409,
        vec![idrac(
            code,
            text,
            &[],
            "No response action is required.",
            Some("#/ResetType"),
        )],
    )
}

/// Dell's BIOS service, which recovers the BIOS.
const BIOS_SERVICE: &str = "/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellBIOSService";

/// The system resource (its boot override is written here) and the resets of the system, the
/// chassis and the iDRAC.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(exact(dell::SYSTEM), |h, r| {
            h.cached(r.path, || Reply::ok(h.system(r.recorded_or_null(h))))
        }),
        Route::patch(exact(dell::SYSTEM), |h, r| {
            r.with_json(|b| h.patch_system(b, r.recorded_or_null(h)))
        }),
        Route::post(
            exact(format!("{}/Actions/ComputerSystem.Reset", dell::SYSTEM)),
            |h, r| r.with_json(|b| h.reset(b)),
        ),
        Route::post(
            exact(format!("{BIOS_SERVICE}/Actions/DellBIOSService.DeviceRecovery")),
            |h, r| r.with_json(|b| h.bios_device_recovery(b)),
        ),
        Route::post(
            exact(format!("{IDRAC_CARD_SERVICE}/Actions/DelliDRACCardService.iDRACReset")),
            |h, r| r.with_json(|b| h.idrac_card_reset(b)),
        ),
        Route::post(
            exact(format!(
                "{IDRAC_CARD_SERVICE}/Actions/DelliDRACCardService.iDRACResetCfg"
            )),
            |h, r| r.with_json(|b| h.reset_to_defaults("DelliDRACCardService.iDRACResetCfg", b)),
        ),
        Route::post(
            exact(format!("{}/Actions/Manager.ResetToDefaults", dell::MANAGER)),
            |h, r| r.with_json(|b| h.reset_to_defaults("Manager.ResetToDefaults", b)),
        ),
        Route::post(
            exact(format!("{TIME_SERVICE}/Actions/DellTimeService.ManageTime")),
            |h, r| r.with_json(|b| h.manage_time(b)),
        ),
        Route::get(exact(dell::MANAGER), with_clock),
        Route::post(exact(format!("{}/Actions/Manager.Reset", dell::MANAGER)), |h, r| {
            r.with_json(|b| h.manager_reset(b))
        }),
        Route::post(exact(format!("{}/Actions/Chassis.Reset", dell::CHASSIS)), |h, r| {
            r.with_json(|b| h.chassis_reset(b))
        }),
        Route::post(
            exact(format!("{}/Actions/Oem/DellOemChassis.ExtendedReset", dell::CHASSIS)),
            |h, r| r.with_json(|b| h.extended_reset(b)),
        ),
    ]
}

/// Dell's services under the Manager.
const DELL_SERVICES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell";
/// Where iDRAC9 firmware first put Dell's services; badfish and Dell's `ResetIdracREDFISH.py`
/// still use it, and a real iDRAC 3.x sample shows it.
const LEGACY_DELL: &str = "/redfish/v1/Dell/Managers/iDRAC.Embedded.1";

/// `action` of Dell's `service` at both of its paths: under the Manager and the legacy one.
pub(crate) fn dell_service_action(service: &str, action: &str) -> [String; 2] {
    [DELL_SERVICES, LEGACY_DELL].map(|at| format!("{at}/{service}/Actions/{service}.{action}"))
}

/// Dell's Lifecycle Controller status, and Dell's job and Lifecycle Controller service
/// documents at their legacy path.
pub(crate) fn lc_routes() -> Vec<Route> {
    let mut routes: Vec<Route> = dell_service_action("DellLCService", "GetRemoteServicesAPIStatus")
        .into_iter()
        .map(|p| Route::post(exact(p), |h, _| Reply::ok(h.lc_status())))
        .collect();
    for service in ["DellJobService", "DellLCService"] {
        routes.push(Route::get(exact(format!("{LEGACY_DELL}/{service}")), |h, r| {
            let service = r.id();
            let at = format!("{DELL_SERVICES}/{service}");
            match h
                .fixture
                .served(r.path, false, || h.fixture.doc(&at).map(legacy_service))
            {
                Some(d) => Reply::ok_rendered(d),
                None => crate::route::not_found(r.path),
            }
        }));
    }
    routes
}

/// Dell's service document at its legacy `/redfish/v1/Dell/Managers/...` path: the same
/// document with its own path and action targets.
fn legacy_service(doc: &Value) -> Value {
    let text = doc
        .to_string()
        .replace(&format!("{DELL_SERVICES}/"), &format!("{LEGACY_DELL}/"));
    serde_json::from_str(&text).unwrap_or_else(|_| doc.clone())
}

/// A recorded document that carries the iDRAC's clock, with `DateTime` now.
pub(crate) fn with_clock(host: &Host, request: &crate::route::Request<'_>) -> Reply {
    match request.recorded(host) {
        Some(d) => Reply::ok(host.with_clock(d)),
        None => crate::route::not_found(request.path),
    }
}

impl Host {
    fn reset_type(body: &Value, action: &str, allowed: &[&str]) -> Result<ResetType, Reply> {
        let given = body.get("ResetType").and_then(Value::as_str);
        let kind = given
            .filter(|g| allowed.contains(g))
            .and_then(|g| serde_json::from_value::<ResetType>(Value::from(g)).ok());
        kind.ok_or_else(|| {
            Reply::error(
                400,
                vec![messages::action_parameter(action, "ResetType", given, allowed)],
            )
        })
    }

    /// `ComputerSystem.Reset`. A reset asking for the state the host is in (`On` while on, in
    /// POST or shutting down; `ForceOff` or `GracefulShutdown` while off) gets 409, all alike.
    pub fn reset(&self, body: &Value) -> Reply {
        const ALLOWED: [&str; 8] = [
            "On",
            "ForceOff",
            "ForceRestart",
            "GracefulRestart",
            "GracefulShutdown",
            "PushPowerButton",
            "Nmi",
            "PowerCycle",
        ];
        match Self::reset_type(body, "ComputerSystem.Reset", &ALLOWED) {
            Ok(kind) => self.apply_reset(kind),
            Err(reply) => reply,
        }
    }

    fn apply_reset(&self, kind: ResetType) -> Reply {
        let mut s = self.change();
        let now = Instant::now();
        let graceful_delay = self.config.boot_time.mul_f64(0.3);
        match kind {
            ResetType::On if s.on => return already(true),
            ResetType::On => self.start_boot(&mut s, now),
            ResetType::ForceOff | ResetType::GracefulShutdown if !s.on => return already(false),
            ResetType::ForceOff => Self::power_off(&mut s),
            ResetType::GracefulShutdown => {
                if self.config.graceful_os {
                    s.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: false,
                    });
                }
            }
            ResetType::GracefulRestart => {
                if !s.on {
                    self.start_boot(&mut s, now);
                } else if self.config.graceful_os {
                    s.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: true,
                    });
                }
            }
            ResetType::ForceRestart | ResetType::PowerCycle => {
                s.shutdown = None;
                self.start_boot(&mut s, now);
            }
            ResetType::PushPowerButton => {
                if s.on {
                    s.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: false,
                    });
                } else {
                    self.start_boot(&mut s, now);
                }
            }
            ResetType::Nmi => {}
        }
        self.stats.count_reset();
        Reply::with_body(204, None)
    }

    fn power_off(s: &mut State) {
        s.on = false;
        s.boot = None;
        s.shutdown = None;
    }

    /// `Chassis.Reset` with the types a real R750 (iDRAC 7.10) offers: On, ForceOff, PowerCycle.
    pub fn chassis_reset(&self, body: &Value) -> Reply {
        match Self::reset_type(body, "Chassis.Reset", &["On", "ForceOff", "PowerCycle"]) {
            Ok(kind) => self.apply_reset(kind),
            Err(reply) => reply,
        }
    }

    /// `DellOemChassis.ExtendedReset {"ResetType": "PowerCycle", "FinalPowerState": "On"|"Off"}`:
    /// a virtual AC power cycle that leaves the host on (through a POST) or off.
    pub fn extended_reset(&self, body: &Value) -> Reply {
        if let Err(reply) = Self::reset_type(body, "DellOemChassis.ExtendedReset", &["PowerCycle"]) {
            return reply;
        }
        let final_state = body.get("FinalPowerState").and_then(Value::as_str).unwrap_or("On");
        if !matches!(final_state, "On" | "Off") {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "DellOemChassis.ExtendedReset",
                    "FinalPowerState",
                    Some(final_state),
                    &["On", "Off"],
                )],
            );
        }
        let mut s = self.change();
        Self::power_off(&mut s);
        if final_state == "On" {
            self.start_boot(&mut s, Instant::now());
        }
        self.stats.count_reset();
        Reply::with_body(204, None)
    }

    /// `Manager.Reset {"ResetType": "GracefulRestart"}`: the iDRAC reboots. Sessions end; for
    /// half a POST's length no connection is accepted, then for a POST's length the
    /// configuration paths answer 400 SWC0700 and the Lifecycle Controller reports NotReady.
    /// The host keeps running.
    pub fn manager_reset(&self, body: &Value) -> Reply {
        if let Err(reply) = Self::reset_type(body, "Manager.Reset", &["GracefulRestart"]) {
            return reply;
        }
        let mut s = self.change();
        s.sessions.clear();
        s.outage = Some(Outage::idrac_reset(Instant::now(), self.config.boot_time));
        Reply::with_body(204, None)
    }

    /// `DelliDRACCardService.iDRACReset {"Force": "Graceful"|"Force"}` (what Ironic's
    /// sushy-oem-idrac sends): the iDRAC restarts as after `Manager.Reset`.
    pub fn idrac_card_reset(&self, body: &Value) -> Reply {
        let force = body.get("Force").and_then(Value::as_str);
        if !matches!(force, Some("Graceful" | "Force")) {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "DelliDRACCardService.iDRACReset",
                    "Force",
                    force,
                    &["Force", "Graceful"],
                )],
            );
        }
        let mut s = self.change();
        s.sessions.clear();
        s.outage = Some(Outage::idrac_reset(Instant::now(), self.config.boot_time));
        Reply::ok(messages::success_body(vec![messages::success()]))
    }

    /// `Manager.ResetToDefaults {"ResetType": "ResetAll"|"PreserveNetworkAndUsers"}` and
    /// `DelliDRACCardService.iDRACResetCfg {"Force", "Preserve": "All"|"Default"|
    /// "ResetAllWithRootDefaults"}`: the iDRAC attributes return to the tree's values (keeping
    /// the network and user attributes and the accounts when asked to preserve them), then
    /// the iDRAC restarts. Assumed: that `Default` preserves network and users, and that a
    /// full reset leaves root with the configured password.
    pub fn reset_to_defaults(&self, action: &str, body: &Value) -> Reply {
        let (param, allowed): (&str, &[&str]) = if action == "Manager.ResetToDefaults" {
            ("ResetType", &["ResetAll", "PreserveNetworkAndUsers"])
        } else {
            ("Preserve", &["All", "Default", "ResetAllWithRootDefaults"])
        };
        let given = body.get(param).and_then(Value::as_str);
        let Some(kind) = given.filter(|g| allowed.contains(g)) else {
            return Reply::error(400, vec![messages::action_parameter(action, param, given, allowed)]);
        };
        let preserve = matches!(kind, "PreserveNetworkAndUsers" | "Default");
        let mut s = self.change();
        for (group, recorded) in &self.fixture.dell_attributes {
            let live = s.dell.entry(*group).or_default();
            for (name, value) in recorded {
                let kept = preserve && ["IPv4.", "NIC.", "Users."].iter().any(|p| name.starts_with(p));
                if !kept {
                    live.insert(name.clone(), value.clone());
                }
            }
        }
        if !preserve {
            s.accounts = Self::initial_accounts(&self.fixture, &self.config);
        }
        s.view = None;
        s.sessions.clear();
        s.outage = Some(Outage::idrac_reset(Instant::now(), self.config.boot_time));
        Reply::ok(messages::success_body(vec![messages::success()]))
    }

    /// `DellTimeService.ManageTime {"GetRequest": true}`: the iDRAC's time (`TimeData`, ISO
    /// 8601). Setting the time is refused: the emulator's clock is the machine's.
    pub fn manage_time(&self, body: &Value) -> Reply {
        match body.get("GetRequest").and_then(Value::as_bool) {
            Some(true) => Reply::ok(serde_json::json!({
                "TimeData": crate::clock::with_offset(std::time::SystemTime::now()),
            })),
            other => Reply::error(
                400,
                vec![messages::action_parameter(
                    "DellTimeService.ManageTime",
                    "GetRequest",
                    other.map(|_| "false"),
                    &["true"],
                )],
            ),
        }
    }

    /// `DellBIOSService.DeviceRecovery {"Device": "BIOS"}`: the BIOS is recovered from its
    /// backup image, which power-cycles the host (assumed); the settings stay.
    pub fn bios_device_recovery(&self, body: &Value) -> Reply {
        let device = body.get("Device").and_then(Value::as_str);
        if device != Some("BIOS") {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "DellBIOSService.DeviceRecovery",
                    "Device",
                    device,
                    &["BIOS"],
                )],
            );
        }
        let mut s = self.change();
        s.shutdown = None;
        self.start_boot(&mut s, Instant::now());
        self.stats.count_reset();
        Reply::with_body(202, Some(messages::success_body(vec![messages::success()])))
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
                            None => problems.push(super::boot::boot016("#/Boot/BootOrder")),
                        }
                        continue;
                    }
                    "UefiTargetBootSourceOverride" => {
                        match v.as_str() {
                            Some(path) if self.known_device_path(path) => {
                                boot.insert(name.clone(), v.clone());
                            }
                            _ => problems.push(super::boot::boot016("#/Boot/UefiTargetBootSourceOverride")),
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
        if Self::lockdown(&s) {
            return Reply::error(400, vec![messages::sys406()]);
        }
        let staged = order.is_some() || boot.contains_key("BootSourceOverrideMode");
        if staged && s.jobs.values().any(super::jobs::Job::is_open_bios) {
            return Reply::error(400, vec![messages::sys011()]);
        }
        let mut job = None;
        if let Some(order) = &order {
            match self.stage_boot_order(&mut s, order) {
                Ok(location) => job = Some(location),
                Err(reply) => return reply,
            }
        } else if boot.contains_key("BootSourceOverrideMode") {
            job = Some(self.create_bios_job(&mut s, &super::jobs::ApplyTime::OnReset));
        }
        // A target without an enable flag applies once, as on iDRAC.
        if boot.contains_key("BootSourceOverrideTarget") && !boot.contains_key("BootSourceOverrideEnabled") {
            boot.insert("BootSourceOverrideEnabled".into(), "Once".into());
        }
        s.boot_override.extend(boot);
        let body = messages::success_body(vec![messages::success()]);
        match job {
            Some(location) => Reply::with_body(202, Some(body)).header("Location", location),
            None => Reply::ok(body),
        }
    }
}
