//! `rftune nvme plan`: NVMe namespace sizing to trade capacity for over-provisioning, printed as
//! the nvme-cli sequence; `--execute` runs it after the controller's serial is confirmed,
//! recording the before-state in the state directory and verifying with `id-ns`.

use crate::Exit;
use crate::args::OutputFormat;
use crate::args::nvme::NvmeCommand;
use crate::render::{self, Table};
use anyhow::{Result, bail};
use host_bench::nvme::{self, NvmeCli, Sizing};
use rftune_engine::state::StateDirs;

/// Runs `rftune nvme ...`.
pub async fn run(cmd: &NvmeCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let NvmeCommand::Plan(args) = cmd;
    let cli = NvmeCli::default();
    let sizing = match (args.sectors, args.idema) {
        (Some(n), _) => Sizing::Sectors(n),
        (None, true) => Sizing::Idema,
        (None, false) => Sizing::Plain,
    };
    let capacity = match &args.size {
        Some(s) => nvme::parse_capacity(s)?,
        None => 0,
    };
    // --execute reads the controller or fails; a dry run without nvme-cli or a readable device
    // still shows the sizes and the sequence.
    let (plan, unread) = match (&args.device, args.execute) {
        (Some(device), true) => {
            let (ctrl, _) = cli.id_ctrl(device)?;
            (nvme::plan(device, &ctrl, capacity, args.lba, sizing, args.nsid)?, None)
        }
        (Some(device), false) => match cli.id_ctrl(device) {
            Ok((ctrl, _)) => (nvme::plan(device, &ctrl, capacity, args.lba, sizing, args.nsid)?, None),
            Err(e) => {
                let first = e.to_string().lines().next().unwrap_or_default().to_owned();
                let plan = nvme::offline(Some(device), capacity, args.lba, sizing, args.nsid)?;
                (plan, Some(format!("not read ({first})")))
            }
        },
        (None, _) => (
            nvme::offline(None, capacity, args.lba, sizing, args.nsid)?,
            Some("not read (no --device)".to_owned()),
        ),
    };
    let executed = if args.execute {
        let Some(serial) = &args.confirm_serial else {
            bail!("--execute needs --confirm-serial")
        };
        let dir = dirs.state.join("nvme");
        rftune_engine::state::ensure_private_dir(&dir)?;
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
            let mut t = Table::new(["", ""]);
            match (&plan.controller_info, &unread) {
                (Some(c), _) => {
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
                }
                (None, why) => {
                    t.row([
                        "Controller".to_owned(),
                        format!(
                            "{} {}: <cntlid>, namespace management and the drive's capacity come from `nvme id-ctrl` on --device",
                            plan.controller,
                            why.as_deref().unwrap_or("not read")
                        ),
                    ]);
                }
            }
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
                        "Run them with --device DEVICE --execute --confirm-serial {} (the before-state is saved first).\n",
                        plan.controller_info.as_ref().map_or("SERIAL", |c| c.serial.as_str())
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
    Ok(Exit::Success)
}
