//! What the host keeps of its chassis: the identify LED as last written.

use serde_json::Value;

/// The chassis' state.
#[derive(Debug, Default)]
pub(crate) struct Chassis {
    /// The identify LED's properties as last PATCHed (`LocationIndicatorActive`, `IndicatorLED`).
    pub(crate) indicator: serde_json::Map<String, Value>,
}
