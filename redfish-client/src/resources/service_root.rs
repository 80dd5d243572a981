//! `ServiceRoot`: the entry point at `/redfish/v1`.

use crate::odata::Link;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The Redfish service root.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ServiceRoot {
    /// Usually `RootService`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Protocol version, e.g. `1.17.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redfish_version: Option<String>,
    /// Who made the service (`Dell` on an iDRAC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// e.g. `Integrated Dell Remote Access Controller`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// Service UUID.
    #[serde(rename = "UUID", default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The systems collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub systems: Option<Link>,
    /// The managers (BMCs) collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managers: Option<Link>,
    /// The chassis collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chassis: Option<Link>,
    /// The session service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_service: Option<Link>,
    /// Registries (attribute and message registries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registries: Option<Link>,
    /// The DMTF job service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_service: Option<Link>,
    /// `Links.Sessions`: where to log in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<ServiceRootLinks>,
    /// Query parameters the service supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_features_supported: Option<ProtocolFeatures>,
    /// Vendor extensions, raw; see `oem::dell` for typed access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oem: Option<Map<String, Value>>,
}

/// `ServiceRoot.Links`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ServiceRootLinks {
    /// The sessions collection (login target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Link>,
}

/// `ProtocolFeaturesSupported`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ProtocolFeatures {
    /// `$expand` support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expand_query: Option<ExpandQuery>,
    /// `$select` support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select_query: Option<bool>,
    /// `$filter` support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_query: Option<bool>,
}

/// `ProtocolFeaturesSupported.ExpandQuery`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExpandQuery {
    /// `$expand=*` support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expand_all: Option<bool>,
    /// `$levels` support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<bool>,
    /// Deepest `$levels` allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_levels: Option<u32>,
}
