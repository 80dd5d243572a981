//! What the host keeps of its network beyond the iDRAC attributes: the NTP servers.

/// The network's state.
#[derive(Debug, Default)]
pub(crate) struct Network {
    /// The iDRAC's NTP servers, as `NetworkProtocol` lists them.
    pub(crate) ntp_servers: Vec<String>,
}
