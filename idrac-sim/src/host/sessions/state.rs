//! What the host keeps of its sessions: each open session (token, user, client, when created and
//! last used), and the count that numbers new ones.

use std::collections::BTreeMap;
use std::time::Instant;

/// The open sessions, by number.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    pub(crate) open: BTreeMap<u64, Session>,
    pub(crate) seq: u64,
}

/// One open session.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) token: String,
    pub(crate) last_used: Instant,
    pub(crate) user: String,
    pub(crate) address: String,
    /// The login's `Context` (Session v1_5_0), kept as DMTF's schema says a service keeps it.
    pub(crate) context: Option<String>,
    /// `CreatedTime`, as iDRAC 7.x records it.
    pub(crate) created: String,
}
