//! `rftune nvme ...` arguments.

/// `rftune nvme ...`.
#[derive(Debug, clap::Subcommand)]
pub enum NvmeCommand {
    /// Size namespace 1 for a capacity and print the nvme-cli commands that recreate it (a dry
    /// run unless --execute). Recreating a namespace destroys all data on it.
    ///
    /// A dry run needs neither nvme-cli nor a device: without them the sequence shows
    /// /dev/nvmeX and <cntlid>, which `nvme id-ctrl` fills in when --device can be read.
    ///
    /// Sectors are capacity / LBA size by default (2.56TB / 512 = 5,000,000,000); --idema uses
    /// the IDEMA capacity points drives are marketed at (3.84TB → 7,501,476,528 sectors of 512 B);
    /// --sectors gives the count directly.
    Plan(NvmePlanArgs),
}

/// `rftune nvme plan`.
#[derive(Debug, clap::Args)]
pub struct NvmePlanArgs {
    /// The controller (/dev/nvme0) or one of its namespaces (/dev/nvme0n1); needed by
    /// --execute, optional for a dry run.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
    /// Namespace capacity: 3.20TB, 3200GB, 2.56T (decimal), or 2TiB (binary).
    #[arg(long, value_name = "CAPACITY", required_unless_present = "sectors")]
    pub size: Option<String>,
    /// LBA (sector) size in bytes: 512 or 4096.
    #[arg(long, default_value_t = 512, value_name = "BYTES")]
    pub lba: u32,
    /// Use the IDEMA capacity point for --size instead of plain division.
    #[arg(long, conflicts_with = "sectors")]
    pub idema: bool,
    /// Exact namespace size in sectors.
    #[arg(long, value_name = "N", conflicts_with = "size")]
    pub sectors: Option<u64>,
    /// The namespace to replace.
    #[arg(long, default_value_t = 1, value_name = "NSID")]
    pub nsid: u32,
    /// Run the sequence (destroys all data in the namespace). Needs --confirm-serial, and is
    /// refused unless the namespace's block device (/dev/nvmeXnNSID) exists here and is unused:
    /// the kernel must let rftune open it exclusively (nothing mounts or holds it, in any
    /// container), it is not mounted and does not back /.
    #[arg(long, requires_all = ["confirm_serial", "device"])]
    pub execute: bool,
    /// The controller's serial number (`sn` in `nvme id-ctrl`), confirming --execute.
    #[arg(long, value_name = "SERIAL")]
    pub confirm_serial: Option<String>,
}
