//! What the host keeps of its iDRAC attributes: the values of each `DellAttributes` group, System
//! Lockdown among them.

use crate::fixture::Fixture;
use redfish_client::oem::dell::{AttributeGroup, SYSTEM_LOCKDOWN};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use std::collections::BTreeMap;

/// The iDRAC attribute that turns HTTP Basic authentication on (Enabled), unadvertised
/// (Unadvertised, refused on iDRAC10 1.30.10.50, its default there) or off (Disabled).
const BASIC_AUTH_STATE: &str = "Redfish.1.BasicAuthState";

/// The iDRAC attributes, by group.
#[derive(Debug)]
pub(crate) struct DellAttributes {
    pub(crate) groups: BTreeMap<AttributeGroup, Attributes>,
}

impl DellAttributes {
    /// The tree's values, with System Lockdown on when the fleet starts locked.
    pub(crate) fn new(fixture: &Fixture, lockdown: bool) -> Self {
        let mut groups = fixture.dell_attributes.clone();
        if lockdown {
            groups
                .entry(AttributeGroup::Idrac)
                .or_default()
                .insert(SYSTEM_LOCKDOWN.to_owned(), "Enabled".into());
        }
        Self { groups }
    }

    /// Whether HTTP Basic authentication is on (`Redfish.1.BasicAuthState` Enabled, or a tree
    /// without the attribute, as before iDRAC 7.30.10.50 and 1.30.10.50 added it: Dell's scripts
    /// issue 383 cites Dell's knowledge base).
    pub(crate) fn basic_auth(&self) -> bool {
        self.groups
            .get(&AttributeGroup::Idrac)
            .and_then(|a| a.get(BASIC_AUTH_STATE))
            .and_then(AttributeValue::as_str)
            .is_none_or(|state| state == "Enabled")
    }

    /// Whether System Lockdown is on: no configuration change is accepted (SYS406).
    pub(crate) fn lockdown(&self) -> bool {
        self.groups
            .get(&AttributeGroup::Idrac)
            .and_then(|a| a.get(SYSTEM_LOCKDOWN))
            .and_then(AttributeValue::as_str)
            == Some("Enabled")
    }
}
