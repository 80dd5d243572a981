//! Power readings and the energy counter: the power model (`crate::power_model`) applied to the
//! host's phase, load, BIOS values and power cap, with noise on each reading.

pub(crate) mod state;

use super::core::{Host, State};
use super::json::set;
use super::reply::Reply;
use crate::power_model::{self, Phase};
use crate::route::{Request, Route, exact, not_found, suffix};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::Attributes;
use serde_json::{Value, json};
use std::time::Instant;

/// The chassis' power, its environment metrics and the input power sensor, with live readings.
pub(crate) fn routes() -> Vec<Route> {
    fn live(h: &Host, r: &Request<'_>, render: fn(&Host, &Value) -> Value) -> Reply {
        match r.recorded(h) {
            Some(d) => Reply::ok(render(h, d)),
            None => not_found(r.path),
        }
    }
    let chassis = redfish_client::oem::dell::CHASSIS;
    vec![
        Route::get(exact(format!("{chassis}/Power")), |h, r| live(h, r, Host::power)),
        Route::get(exact(format!("{chassis}/EnvironmentMetrics")), |h, r| {
            live(h, r, Host::environment_metrics)
        }),
        Route::get(suffix("/Sensors/SystemBoardPwrConsumption"), |h, r| {
            live(h, r, Host::power_sensor)
        }),
    ]
}

impl Host {
    /// Sets the simulated load (0..=1).
    pub fn set_load(&self, utilization: f64) {
        self.now().readings.utilization = utilization.clamp(0.0, 1.0);
    }

    fn phase(s: &State) -> Phase {
        match (s.power.on, s.power.post.is_some()) {
            (false, _) => Phase::Off,
            (true, true) => Phase::Booting,
            (true, false) => Phase::On,
        }
    }

    fn model_watts(&self, s: &State) -> f64 {
        let empty = Attributes::new();
        let system = s.dell_attributes.groups.get(&AttributeGroup::System).unwrap_or(&empty);
        power_model::watts(
            self.platform,
            Self::phase(s),
            s.readings.utilization,
            &s.bios.values,
            system,
        )
    }

    pub(crate) fn account_energy(&self, s: &mut State, now: Instant) {
        let dt = now.saturating_duration_since(s.readings.at).as_secs_f64();
        s.readings.joules += self.model_watts(s) * dt;
        s.readings.at = s.readings.at.max(now);
    }

    /// One noisy reading of the instantaneous draw, whole watts.
    pub fn reading(&self) -> f64 {
        let mut s = self.now();
        let w = self.model_watts(&s);
        let sample = s.rng.f64();
        power_model::with_noise(w, sample)
    }

    /// `Chassis/System.Embedded.1/Power` with live readings.
    pub fn power(&self, doc: &Value) -> Value {
        let watts = self.reading();
        let model = self.model_watts(&self.lock());
        let mut doc = doc.clone();
        if let Some(control) = doc.get_mut("PowerControl").and_then(|c| c.get_mut(0)) {
            set(control, &["PowerConsumedWatts"], json!(watts));
            set(control, &["PowerMetrics", "AverageConsumedWatts"], json!(model.round()));
            set(
                control,
                &["PowerMetrics", "MinConsumedWatts"],
                json!((model * 0.97).round()),
            );
            set(
                control,
                &["PowerMetrics", "MaxConsumedWatts"],
                json!((model * 1.03).round()),
            );
            let s = self.lock();
            if let Some(cap) = s
                .dell_attributes
                .groups
                .get(&AttributeGroup::System)
                .and_then(|a| a.get("ServerPwr.1.PowerCapValue"))
            {
                set(control, &["PowerLimit", "LimitInWatts"], cap.to_json());
            }
        }
        doc
    }

    /// `Chassis/System.Embedded.1/EnvironmentMetrics` with live readings: the power, and the
    /// energy counter where the tree has one (the real R750 on iDRAC 7.10 has none).
    pub fn environment_metrics(&self, doc: &Value) -> Value {
        let watts = self.reading();
        let mut doc = doc.clone();
        set(&mut doc, &["PowerWatts", "Reading"], json!(watts));
        if doc.get("EnergykWh").is_some() {
            let kwh = self.lock().readings.joules / 3.6e6;
            set(
                &mut doc,
                &["EnergykWh", "Reading"],
                json!((kwh * 1000.0).round() / 1000.0),
            );
        }
        doc
    }

    /// A sensor resource whose reading is the system input power.
    pub fn power_sensor(&self, doc: &Value) -> Value {
        let mut doc = doc.clone();
        set(&mut doc, &["Reading"], json!(self.reading()));
        doc
    }
}
