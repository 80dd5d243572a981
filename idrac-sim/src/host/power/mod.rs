//! Power and resets: `ComputerSystem.Reset`, `Chassis.Reset`, Dell's
//! `DellOemChassis.ExtendedReset` and `DellBIOSService.DeviceRecovery`, each starting a POST or
//! a shutdown on the host's clock.

pub(crate) mod state;

use super::core::Host;
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Pattern, Route, exact};
use redfish_client::oem::dell;
use redfish_client::resources::computer_system::ResetType;
use serde_json::Value;
use state::Shutdown;
use std::time::{Duration, Instant};

/// Dell's BIOS service, which recovers the BIOS.
const BIOS_SERVICE: &str = "/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellBIOSService";

/// The resets of the system and the chassis, and the BIOS recovery (which power-cycles).
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::post(
            exact(format!("{}/Actions/ComputerSystem.Reset", dell::SYSTEM)),
            |h, r| r.with_json(|b| h.reset(b)),
        ),
        Route::post(
            exact(format!("{BIOS_SERVICE}/Actions/DellBIOSService.DeviceRecovery")),
            |h, r| r.with_json(|b| h.bios_device_recovery(b)),
        ),
        Route::post(exact(format!("{}/Actions/Chassis.Reset", dell::CHASSIS)), |h, r| {
            r.with_json(|b| h.chassis_reset(b))
        }),
        Route::post(
            exact(format!("{}/Actions/Oem/DellOemChassis.ExtendedReset", dell::CHASSIS)),
            |h, r| r.with_json(|b| h.extended_reset(b)),
        ),
    ]
}

/// iLO's system reset, at the target the system advertises, with the reset types it lists;
/// 200 with `Success` in iLO's envelope (assumed: HPE documents that envelope for successes).
/// A reset the power state makes moot answers as on iDRAC, in iLO's shape.
pub(crate) fn ilo_routes() -> Vec<Route> {
    vec![
        Route::post(Pattern::Any, |h, r| {
            r.with_json(|b| {
                let system = h.fixture.doc(&h.fixture.places.system);
                let listed: Vec<&str> = system
                    .and_then(|d| d.pointer("/Actions/#ComputerSystem.Reset/ResetType@Redfish.AllowableValues"))
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let reply = match reset_type(b, "ComputerSystem.Reset", &listed) {
                    Ok(kind) => h.apply_reset(kind),
                    Err(refused) => refused,
                };
                if reply.status == 204 {
                    Reply::ok(messages::ilo::body(vec![messages::ilo::success()]))
                } else {
                    reply
                }
            })
        })
        .when(|h, r| {
            h.fixture
                .doc(&h.fixture.places.system)
                .and_then(|d| d.pointer("/Actions/#ComputerSystem.Reset/target"))
                .and_then(Value::as_str)
                .is_some_and(|t| h.fixture.canonical(t) == r.path)
        }),
    ]
}

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

/// The `ResetType` of a reset action's body, one of `allowed`.
pub(crate) fn reset_type(body: &Value, action: &str, allowed: &[&str]) -> Result<ResetType, Reply> {
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

impl Host {
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
        match reset_type(body, "ComputerSystem.Reset", &ALLOWED) {
            Ok(kind) => self.apply_reset(kind),
            Err(reply) => reply,
        }
    }

    fn apply_reset(&self, kind: ResetType) -> Reply {
        let mut s = self.change();
        let now = Instant::now();
        let graceful_delay = self.config.boot_time.mul_f64(0.3);
        match kind {
            ResetType::On if s.power.on => return already(true),
            ResetType::On => self.start_post(&mut s, now),
            ResetType::ForceOff | ResetType::GracefulShutdown if !s.power.on => return already(false),
            ResetType::ForceOff => s.power.off(),
            ResetType::GracefulShutdown => {
                if self.config.graceful_os {
                    s.power.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: false,
                    });
                }
            }
            ResetType::GracefulRestart => {
                if !s.power.on {
                    self.start_post(&mut s, now);
                } else if self.config.graceful_os {
                    s.power.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: true,
                    });
                }
            }
            ResetType::ForceRestart | ResetType::PowerCycle => {
                s.power.shutdown = None;
                self.start_post(&mut s, now);
            }
            ResetType::PushPowerButton => {
                if s.power.on {
                    s.power.shutdown = Some(Shutdown {
                        at: now + graceful_delay,
                        then_boot: false,
                    });
                } else {
                    self.start_post(&mut s, now);
                }
            }
            ResetType::Nmi => {}
        }
        self.stats.count_reset();
        Reply::with_body(204, None)
    }

    /// `Chassis.Reset` with the types a real R750 (iDRAC 7.10) offers: On, ForceOff, PowerCycle.
    pub fn chassis_reset(&self, body: &Value) -> Reply {
        match reset_type(body, "Chassis.Reset", &["On", "ForceOff", "PowerCycle"]) {
            Ok(kind) => self.apply_reset(kind),
            Err(reply) => reply,
        }
    }

    /// `DellOemChassis.ExtendedReset {"ResetType": "PowerCycle", "FinalPowerState": "On"|"Off"}`:
    /// a virtual AC power cycle that leaves the host on (through a POST) or off.
    pub fn extended_reset(&self, body: &Value) -> Reply {
        if let Err(reply) = reset_type(body, "DellOemChassis.ExtendedReset", &["PowerCycle"]) {
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
        s.power.off();
        if final_state == "On" {
            self.start_post(&mut s, Instant::now());
        }
        self.stats.count_reset();
        Reply::with_body(204, None)
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
        s.power.shutdown = None;
        self.start_post(&mut s, Instant::now());
        self.stats.count_reset();
        Reply::with_body(202, Some(messages::success_body(vec![messages::success()])))
    }

    /// Time until POST ends, if booting.
    pub fn boot_remaining(&self) -> Option<Duration> {
        let s = self.now();
        s.power
            .post
            .map(|b| self.config.boot_time.saturating_sub(b.started.elapsed()))
    }
}
