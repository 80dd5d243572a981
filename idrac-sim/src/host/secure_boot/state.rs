//! What the host keeps of UEFI Secure Boot: a key reset waiting for POST, whether the keys were
//! deleted, and whether the running boot was verified.

use crate::fixture::Fixture;

/// Secure Boot's state.
#[derive(Debug)]
pub(crate) struct SecureBoot {
    /// A key reset (`ResetKeysType`) waiting for POST.
    pub(crate) keys_pending: Option<String>,
    /// The keys were deleted (no platform key).
    pub(crate) keys_deleted: bool,
    /// The running boot was verified by Secure Boot.
    pub(crate) verified: bool,
}

impl SecureBoot {
    /// As the tree records it: the running boot verified where the BIOS has Secure Boot on.
    pub(crate) fn new(fixture: &Fixture) -> Self {
        Self {
            keys_pending: None,
            keys_deleted: false,
            verified: fixture.bios.get("SecureBoot").and_then(|v| v.as_str()) == Some("Enabled"),
        }
    }
}
