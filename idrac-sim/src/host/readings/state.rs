//! What the host keeps for its power readings: the simulated load and the energy counter.

use crate::fixture::Fixture;
use serde_json::Value;
use std::time::Instant;

/// The readings' state.
#[derive(Debug)]
pub(crate) struct Readings {
    /// The simulated load (0..=1).
    pub(crate) utilization: f64,
    /// Energy drawn so far, in joules, counted up to `at`.
    pub(crate) joules: f64,
    pub(crate) at: Instant,
}

impl Readings {
    /// Idle, the energy counter going on from the tree's recorded value (zero without one).
    pub(crate) fn new(fixture: &Fixture, now: Instant) -> Self {
        Self {
            utilization: 0.0,
            joules: fixture
                .doc("/redfish/v1/Chassis/System.Embedded.1/EnvironmentMetrics")
                .and_then(|d| d.pointer("/EnergykWh/Reading"))
                .and_then(Value::as_f64)
                .filter(|kwh| kwh.is_finite() && *kwh >= 0.0)
                .map_or(0.0, |kwh| kwh * 3.6e6),
            at: now,
        }
    }
}
