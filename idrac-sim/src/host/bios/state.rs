//! What the host keeps of its BIOS: a value for every registry attribute, the values staged for
//! the next BIOS job, passwords, a reset to defaults waiting for POST, and what the current
//! values make of the registry.

use crate::fixture::Fixture;
use crate::rendered::Rendered;
use redfish_client::resources::bios::Attributes;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The BIOS's state.
#[derive(Debug)]
pub(crate) struct Bios {
    /// A value for every registry attribute, hidden ones included.
    pub(crate) values: Attributes,
    /// Attributes whose value the tree did not give and nothing has set since
    /// ([`Fixture::hidden_bios`]): a rule that reads one is unknown, so the registry's recorded
    /// flag stands.
    pub(crate) inferred: BTreeSet<String>,
    /// What the current values make of the registry, until they change.
    pub(crate) view: Option<View>,
    /// Values staged on `Bios/Settings` for the next BIOS job.
    pub(crate) pending: Attributes,
    /// `Bios.ResetBios` was called: the next POST restores the defaults.
    pub(crate) reset_pending: bool,
    /// BIOS passwords set so far (none at start), and changes waiting for a BIOS job.
    pub(crate) passwords: BTreeMap<String, String>,
    pub(crate) password_pending: BTreeMap<String, String>,
    /// iLO: writes to the settings object so far, and their count when a POST last processed
    /// the settings (the settings' `@odata.etag` and `UnmodifiedETag` derive from them, so
    /// any write, even one that puts the current values back, reads as pending until POST).
    pub(crate) settings_writes: u64,
    pub(crate) writes_at_post: u64,
    /// iLO: the `@Redfish.Settings` the last POST that processed settings wrote (`Time`,
    /// `Messages`, `ETag`); the tree's until one does.
    pub(crate) outcome: Option<serde_json::Value>,
}

impl Bios {
    /// The BIOS as the tree records it, for the host with `service_tag`.
    pub(crate) fn new(fixture: &Fixture, service_tag: &str) -> Self {
        Self {
            values: Self::defaults(fixture, service_tag),
            inferred: fixture.hidden_bios.keys().cloned().collect(),
            view: None,
            pending: Attributes::new(),
            reset_pending: false,
            passwords: BTreeMap::new(),
            password_pending: BTreeMap::new(),
            settings_writes: 0,
            writes_at_post: 0,
            outcome: None,
        }
    }

    /// The BIOS values a host starts with, and returns to after `Bios.ResetBios`: the tree's
    /// values (the inferred ones for attributes it does not list), with this host's tag.
    pub(crate) fn defaults(fixture: &Fixture, service_tag: &str) -> Attributes {
        let mut bios = fixture.hidden_bios.clone();
        bios.extend(fixture.bios.clone());
        if bios.contains_key("SystemServiceTag") {
            bios.insert("SystemServiceTag".to_owned(), service_tag.into());
        }
        bios
    }

    /// The values rules may read: every value but the inferred guesses.
    pub(crate) fn known(&self) -> Attributes {
        self.values
            .iter()
            .filter(|(k, _)| !self.inferred.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// What the current values make of the registry: computed on demand, dropped whenever BIOS
/// values or System Lockdown change.
#[derive(Debug, Default)]
pub(crate) struct View {
    pub(crate) hidden: BTreeSet<String>,
    pub(crate) read_only: BTreeSet<String>,
    /// The served registry, once rendered.
    pub(crate) registry: Option<Arc<Rendered>>,
}
