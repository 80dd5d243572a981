//! Who asks: the account and the client address a request comes from, as the Lifecycle log and
//! sessions name them.

/// Who asked for a change, as the Lifecycle log names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The account's user name (`root`), empty for an unauthenticated request.
    pub user: String,
    /// The client's address.
    pub address: String,
}

impl Caller {
    /// The interface every request here comes through, as the real USR0030 names it.
    pub const INTERFACE: &'static str = "REDFISH";
}
