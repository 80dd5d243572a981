//! `rftune nvme plan`: NVMe namespace sizing to trade capacity for over-provisioning, printed as
//! the nvme-cli sequence; `--execute` runs it after the controller's serial is confirmed,
//! recording the before-state in the state directory and verifying with `id-ns`.

use crate::Outcome;
use crate::args::OutputFormat;
use crate::render::{self, Table};
use crate::state::StateDirs;
use anyhow::{Result, bail};
use host_bench::nvme::{self, NvmeCli, Sizing};

/// `rftune nvme ...`.
#[derive(Debug, clap::Subcommand)]
pub enum NvmeCommand {
    /// Size namespace 1 for a capacity and print the nvme-cli commands that recreate it (a dry
    /// run unless --execute). Recreating a namespace destroys all data on it.
    ///
    /// Sectors are capacity / LBA size by default (2.56TB / 512 = 5,000,000,000); --idema uses
    /// the IDEMA capacity points drives are marketed at (3.84TB → 7,501,476,528 sectors of 512 B);
    /// --sectors gives the count directly.
    Plan(NvmePlanArgs),
}

/// `rftune nvme plan`.
#[derive(Debug, clap::Args)]
pub struct NvmePlanArgs {
    /// The controller (/dev/nvme0) or one of its namespaces (/dev/nvme0n1).
    #[arg(long, value_name = "DEVICE")]
    pub device: String,
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
    #[arg(long, requires = "confirm_serial")]
    pub execute: bool,
    /// The controller's serial number (`sn` in `nvme id-ctrl`), confirming --execute.
    #[arg(long, value_name = "SERIAL")]
    pub confirm_serial: Option<String>,
}

/// Runs `rftune nvme ...`.
pub async fn run(cmd: &NvmeCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let NvmeCommand::Plan(args) = cmd;
    let cli = NvmeCli::default();
    let (ctrl, _) = cli.id_ctrl(&args.device)?;
    let sizing = match (args.sectors, args.idema) {
        (Some(n), _) => Sizing::Sectors(n),
        (None, true) => Sizing::Idema,
        (None, false) => Sizing::Plain,
    };
    let capacity = match &args.size {
        Some(s) => nvme::parse_capacity(s)?,
        None => 0,
    };
    let plan = nvme::plan(&args.device, &ctrl, capacity, args.lba, sizing, args.nsid)?;
    let executed = if args.execute {
        let Some(serial) = &args.confirm_serial else {
            bail!("--execute needs --confirm-serial")
        };
        let dir = dirs.state.join("nvme");
        crate::state::ensure_private_dir(&dir)?;
        Some(cli.execute(&plan, serial, &dir, |ns| {
            host_bench::device::ensure_unused(ns, host_bench::device::open_exclusive)
        })?)
    } else {
        None
    };
    match output {
        OutputFormat::Json => render::json(&serde_json::json!({
            "schema": "rftune.nvme-plan/v1",
            "plan": plan,
            "executed": executed,
        }))?,
        _ => {
            let c = &plan.controller_info;
            let mut t = Table::new(["", ""]);
            t.row([
                "Controller".to_owned(),
                format!("{} ({} {}, cntlid {})", plan.controller, c.model, c.serial, c.cntlid),
            ]);
            t.row([
                "Capacity".to_owned(),
                format!(
                    "total {} B, unallocated {} B",
                    c.tnvmcap.map_or("?".into(), |v| v.to_string()),
                    c.unvmcap.map_or("?".into(), |v| v.to_string())
                ),
            ]);
            t.row([
                "Namespace".to_owned(),
                format!(
                    "{} sectors × {} B = {} B ({})",
                    plan.sectors, plan.lba, plan.bytes, plan.method
                ),
            ]);
            let mut out: String = t.render().lines().skip(1).map(|l| format!("{l}\n")).collect();
            match &executed {
                None => {
                    out.push_str("\nDry run. These commands destroy all data in the namespace:\n");
                    for cmd in &plan.commands {
                        out.push_str(&format!("  nvme {}\n", cmd.join(" ")));
                    }
                    out.push_str(&format!(
                        "Run them with --execute --confirm-serial {} (the before-state is saved first).\n",
                        c.serial
                    ));
                }
                Some(x) => {
                    out.push_str(&format!(
                        "\nDone: namespace {} has {} sectors of {} B (verified with id-ns). Before-state: {}\n",
                        x.nsid,
                        x.verified.nsze,
                        x.verified.lba,
                        x.before_state.display()
                    ));
                }
            }
            render::text(&out)?;
        }
    }
    Ok(Outcome::Success)
}
