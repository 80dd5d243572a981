//! Serde models of the DMTF Redfish schemas rftune reads, one file per schema.
//!
//! Every property is optional (firmware omits and nulls things freely), collections default to
//! empty, and closed enums carry an `Unknown` variant so new firmware values still decode.

pub mod attribute_registry;
pub mod bios;
pub mod boot;
pub mod chassis;
pub mod computer_system;
pub mod log_entry;
pub mod manager;
pub mod message;
pub mod message_registry;
pub mod power;
pub mod secure_boot;
pub mod service_root;
pub mod task;

use serde::{Deserialize, Serialize};

/// The common `Status` object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Status {
    /// `Enabled`, `Absent`, `StandbyOffline`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// `OK`, `Warning`, `Critical`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
    /// Health including subordinate resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_rollup: Option<String>,
}
