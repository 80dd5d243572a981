//! What the host keeps of its iDRAC attributes: the values of each `DellAttributes` group, System
//! Lockdown among them.

use crate::fixture::Fixture;
use redfish_client::oem::dell::{AttributeGroup, SYSTEM_LOCKDOWN};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use std::collections::BTreeMap;

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

    /// Whether System Lockdown is on: no configuration change is accepted (SYS406).
    pub(crate) fn lockdown(&self) -> bool {
        self.groups
            .get(&AttributeGroup::Idrac)
            .and_then(|a| a.get(SYSTEM_LOCKDOWN))
            .and_then(AttributeValue::as_str)
            == Some("Enabled")
    }
}
