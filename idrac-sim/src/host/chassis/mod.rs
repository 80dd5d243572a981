//! The chassis' identify LED: `LocationIndicatorActive` (iDRAC 7.x) and the deprecated
//! `IndicatorLED`, written by `PATCH Chassis/System.Embedded.1` as Dell's
//! SetChassisIndicatorLedREDFISH.py does (it expects 200). A property is writable only where the
//! tree's chassis records it: both R750 captures show `IndicatorLED` `Lit`, the 7.10 one also
//! `LocationIndicatorActive` `false`. Assumed: the two are kept apart (the captures show `Lit`
//! beside `false`, so neither follows the other), a change is audited as RAC1195 on the
//! property's name, and System Lockdown does not stop it (identifying a server is not a
//! configuration change).

pub(crate) mod state;

use super::caller::Caller;
use super::core::Host;
use super::json::set;
use super::reply::Reply;
use crate::messages;
use crate::route::{Route, exact};
use redfish_client::oem::dell::CHASSIS;
use serde_json::{Value, json};

/// The values `IndicatorLED` takes (Chassis schema).
const LED_STATES: [&str; 3] = ["Lit", "Blinking", "Off"];

/// The chassis, with live power state and identify LED, and its LED written.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(exact(CHASSIS), |h, r| {
            h.cached(r.path, || Reply::ok(h.chassis(r.recorded_or_null(h))))
        }),
        Route::patch(exact(CHASSIS), |h, r| {
            r.with_json(|b| h.patch_chassis(r.caller, b, r.recorded_or_null(h)))
        }),
    ]
}

impl Host {
    /// The chassis, with live power state and identify LED.
    pub fn chassis(&self, doc: &Value) -> Value {
        let s = self.now();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerState"], json!(if s.power.on { "On" } else { "Off" }));
        set(&mut doc, &["SKU"], json!(self.service_tag));
        for (k, v) in &s.chassis.indicator {
            set(&mut doc, &[k], v.clone());
        }
        doc
    }

    /// `PATCH Chassis/System.Embedded.1`: the identify LED, nothing else.
    pub fn patch_chassis(&self, caller: &Caller, body: &Value, doc: &Value) -> Reply {
        let Some(fields) = body.as_object().filter(|f| !f.is_empty()) else {
            return Reply::error(400, vec![messages::property_missing("LocationIndicatorActive")]);
        };
        let mut problems = Vec::new();
        let mut changes = Vec::new();
        for (key, value) in fields {
            let recorded = doc.get(key).is_some();
            let valid = match key.as_str() {
                "LocationIndicatorActive" => value.is_boolean(),
                "IndicatorLED" => value.as_str().is_some_and(|v| LED_STATES.contains(&v)),
                _ => {
                    problems.push(messages::property_not_changeable(key, recorded, &format!("#/{key}")));
                    continue;
                }
            };
            if !recorded {
                problems.push(messages::property_unknown(key, &format!("#/{key}")));
            } else if !valid {
                problems.push(messages::property_value_format_error(key, &format!("#/{key}")));
            } else {
                changes.push((key.clone(), value.clone()));
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        let mut s = self.change();
        for (key, value) in changes {
            Self::audit_change(&mut s, caller, &format!("System.Embedded.1#{key}"));
            s.chassis.indicator.insert(key, value);
        }
        Reply::ok(messages::success_body(vec![messages::success()]))
    }
}
