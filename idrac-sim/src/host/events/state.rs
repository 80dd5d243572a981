//! What the host keeps of its event service: the subscriptions, as served, and the count that
//! names new ones.

use serde_json::Value;
use std::collections::BTreeMap;

/// The event subscriptions.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    /// By id, as served.
    pub(crate) subscriptions: BTreeMap<String, Value>,
    pub(crate) seq: u64,
}
