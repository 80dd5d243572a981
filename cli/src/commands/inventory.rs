//! `rftune inventory`: identity, firmware, CPUs, DIMMs, power state, pending BIOS values and
//! open jobs, read with as few round trips as the service allows (reads run concurrently).

use crate::Outcome;
use crate::args::{InventoryArgs, OutputFormat};
use crate::render::{self, Table};
use anyhow::Result;
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, DellJob};
use redfish_client::resources::bios::{Attributes, BiosSettings};
use redfish_client::resources::computer_system::{ComputerSystem, Memory};
use redfish_client::resources::manager::Manager;
use rftune_engine::fleet;
use rftune_engine::state::StateDirs;
use rftune_engine::target::{self, Layout, Target};
use serde::Serialize;
use std::fmt::Write;
use std::sync::Arc;

/// The `rftune.inventory/v1` document.
#[derive(Debug, Serialize)]
pub struct Inventory {
    /// Always `rftune.inventory/v1`.
    pub schema: &'static str,
    /// The target's name.
    pub host: String,
    /// `Vendor` of the service root.
    pub vendor: Option<String>,
    /// e.g. `PowerEdge R7625`.
    pub model: Option<String>,
    /// Dell service tag.
    pub service_tag: Option<String>,
    /// Running BIOS version.
    pub bios_version: Option<String>,
    /// BMC firmware version.
    pub bmc_firmware: Option<String>,
    /// `On`, `Off`, ...
    pub power_state: Option<String>,
    /// CPU summary.
    pub processors: Processors,
    /// Memory summary and DIMMs.
    pub memory: MemoryInventory,
    /// Staged BIOS values that apply at the next reboot.
    pub pending_bios: Attributes,
    /// Jobs that have not finished.
    pub open_jobs: Vec<JobSummary>,
    /// Optional reads that failed: the rest of the inventory is what could be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<Unread>,
}

/// An optional part of the inventory the BMC did not serve.
#[derive(Debug, Clone, Serialize)]
pub struct Unread {
    /// What it is (`DIMM inventory`).
    pub what: String,
    /// Why: the request, its URL and status.
    pub error: String,
}

/// Collects failures of optional reads, keeping what could be read.
#[derive(Debug, Default)]
struct Partial {
    unread: Vec<Unread>,
}

impl Partial {
    /// The value, or `None` with the failure recorded.
    fn keep<T>(&mut self, what: &str, result: redfish_client::Result<T>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::debug!("{what}: {e}");
                self.unread.push(Unread {
                    what: what.to_owned(),
                    error: e.to_string(),
                });
                None
            }
        }
    }
}

/// CPU summary.
#[derive(Debug, Serialize)]
pub struct Processors {
    /// Sockets.
    pub count: Option<u32>,
    /// Model.
    pub model: Option<String>,
    /// Cores in total.
    pub cores: Option<u32>,
    /// Threads in total.
    pub threads: Option<u32>,
}

/// Memory summary.
#[derive(Debug, Serialize)]
pub struct MemoryInventory {
    /// Total GiB as the BMC reports it.
    pub total_gib: Option<f64>,
    /// Installed DIMMs.
    pub dimms: Vec<Dimm>,
}

/// One DIMM.
#[derive(Debug, Serialize)]
pub struct Dimm {
    /// e.g. `DIMM.Socket.A1`.
    pub id: String,
    /// MiB.
    pub capacity_mib: Option<u64>,
    /// MT/s.
    pub speed_mts: Option<u32>,
    /// `DDR5`, ...
    pub device_type: Option<String>,
}

/// A job that has not finished.
#[derive(Debug, Serialize)]
pub struct JobSummary {
    /// `JID_...`.
    pub id: String,
    /// e.g. `BIOSConfiguration`.
    pub job_type: Option<String>,
    /// e.g. `Scheduled`.
    pub state: String,
    /// The MessageId code, e.g. `JCP001`.
    pub message_id: Option<String>,
    /// The message.
    pub message: Option<String>,
}

/// Runs `rftune inventory` on one BMC or a fleet.
pub async fn run(args: &InventoryArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    let (entries, single) = super::targets(&args.target)?;
    let connect = Arc::new(crate::credentials::connect_config(&args.target.connect, &entries)?);
    let dirs_owned = Arc::new(dirs.clone());
    let progress = std::sync::Arc::new(crate::render::Progress::hosts("inventory", entries.len(), output));
    let results = fleet::run_all(
        entries,
        args.target.concurrency,
        |entry| {
            let connect = connect.clone();
            let dirs = dirs_owned.clone();
            let progress = progress.clone();
            async move {
                let mut target = target::connect(&entry, &connect, &dirs, &*progress).await?;
                let result = collect(&mut target).await;
                target.close().await;
                result
            }
        },
        |_, ok| progress.host_done(ok),
    )
    .await;
    progress.finish();
    if single {
        let inventory = results
            .into_iter()
            .next()
            .map(|r| r.result)
            .unwrap_or_else(|| Err(anyhow::anyhow!("no host")))?;
        match output {
            OutputFormat::Json => render::json(&inventory)?,
            OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => render::text(&table(&inventory))?,
        }
        return Ok(Outcome::Success);
    }
    let failed = results.iter().filter(|r| r.result.is_err()).count();
    match output {
        OutputFormat::Json => {
            let hosts: Vec<serde_json::Value> = results
                .iter()
                .map(|r| match &r.result {
                    Ok(inv) => serde_json::to_value(inv).unwrap_or_default(),
                    Err(e) => serde_json::json!({"host": r.entry.name, "error": format!("{e:#}")}),
                })
                .collect();
            render::json(&serde_json::json!({"schema": "rftune.inventory/v1", "hosts": hosts}))?;
        }
        OutputFormat::Table | OutputFormat::Junit | OutputFormat::Jsonl => render::text(&fleet_table(&results))?,
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} hosts could not be read (details above)", results.len());
    }
    Ok(Outcome::Success)
}

fn fleet_table(results: &[fleet::HostResult<Inventory, anyhow::Error>]) -> String {
    let mut t = Table::new([
        "HOST",
        "MODEL",
        "SERVICE TAG",
        "BIOS",
        "BMC",
        "POWER",
        "PENDING",
        "OPEN JOBS",
    ]);
    let mut errors = String::new();
    for r in results {
        match &r.result {
            Ok(i) => t.row([
                i.host.clone(),
                i.model.clone().unwrap_or_default(),
                i.service_tag.clone().unwrap_or_default(),
                i.bios_version.clone().unwrap_or_default(),
                i.bmc_firmware.clone().unwrap_or_default(),
                i.power_state.clone().unwrap_or_default(),
                i.pending_bios.len().to_string(),
                i.open_jobs.len().to_string(),
            ]),
            Err(e) => {
                t.row([r.entry.name.clone(), "error".to_owned()]);
                let _ = writeln!(errors, "{}: {e:#}", r.entry.name);
            }
        }
    }
    let mut out = t.render();
    if !errors.is_empty() {
        out.push('\n');
        out.push_str(&errors);
    }
    out
}

/// Reads the inventory of one target. The system is required; DIMMs, the iDRAC, pending
/// values and jobs are shown when the BMC serves them, and listed as unread when it does not.
pub async fn collect(target: &mut Target) -> Result<Inventory> {
    let root = target.service_root().await?;
    let layout = target.layout().await?;
    target.login().await?;
    let t = &*target;
    let client = &t.client;
    let mut partial = Partial::default();
    let mut inventory = match layout {
        Layout::Dell => {
            let system_id = ODataId::new(dell::SYSTEM);
            let memory_id = system_id.join("Memory");
            let idrac = client.dell();
            let (system, memory, manager, pending, jobs) = tokio::join!(
                client.system(&system_id),
                client.expanded_members::<Memory>(memory_id.path()),
                client.get::<Manager>(dell::MANAGER),
                client.get::<BiosSettings>(dell::BIOS_SETTINGS),
                idrac.jobs(),
            );
            let system = system.map_err(|e| t.explain(e, "reading the system"))?;
            assemble(
                t,
                root.vendor.clone(),
                dell::service_tag(&root).map(str::to_owned),
                system,
                partial.keep("DIMM inventory", memory).unwrap_or_default(),
                partial.keep("iDRAC", manager),
                partial
                    .keep("pending BIOS values", pending)
                    .map(|p| p.attributes)
                    .unwrap_or_default(),
                partial.keep("job queue", jobs).unwrap_or_default(),
            )
        }
        Layout::Generic => {
            let system = t.first_system().await?;
            let memory = partial.keep("DIMM inventory", client.memory(&system).await);
            let bios = partial.keep("BIOS", client.bios(&system.bios_link()).await);
            let pending = match &bios {
                Some(b) => partial
                    .keep("pending BIOS values", client.pending_bios(b).await)
                    .map(|p| super::bios::pending_changes(&b.attributes, p.attributes)),
                None => None,
            };
            let tag = system.sku.clone();
            assemble(
                t,
                root.vendor.clone(),
                tag,
                system,
                memory.unwrap_or_default(),
                None,
                pending.unwrap_or_default(),
                Vec::new(),
            )
        }
    };
    for u in &partial.unread {
        tracing::warn!("{}: could not read the {}: {}", t.name, u.what, u.error);
    }
    inventory.unread = partial.unread;
    Ok(inventory)
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    target: &Target,
    vendor: Option<String>,
    service_tag: Option<String>,
    system: ComputerSystem,
    memory: Vec<Memory>,
    manager: Option<Manager>,
    pending_bios: Attributes,
    jobs: Vec<DellJob>,
) -> Inventory {
    let cpu = system.processor_summary.clone().unwrap_or_default();
    let dimms = memory
        .into_iter()
        .filter(|m| m.capacity_mib.unwrap_or(0) > 0)
        .map(|m| Dimm {
            id: m.id,
            capacity_mib: m.capacity_mib,
            speed_mts: m.operating_speed_mhz,
            device_type: m.memory_device_type,
        })
        .collect();
    Inventory {
        schema: "rftune.inventory/v1",
        host: target.name.clone(),
        vendor,
        model: system.model,
        service_tag,
        bios_version: system.bios_version,
        bmc_firmware: manager.and_then(|m| m.firmware_version),
        power_state: system.power_state.map(|p| format!("{p:?}")),
        processors: Processors {
            count: cpu.count,
            model: cpu.model,
            cores: cpu.core_count,
            threads: cpu.logical_processor_count,
        },
        memory: MemoryInventory {
            total_gib: system.memory_summary.and_then(|m| m.total_system_memory_gib),
            dimms,
        },
        pending_bios,
        open_jobs: jobs
            .into_iter()
            .filter(DellJob::holds_queue)
            .map(|j| JobSummary {
                message_id: j.message_code().map(str::to_owned),
                id: j.id,
                job_type: j.job_type,
                state: j.job_state.to_string(),
                message: j.message,
            })
            .collect(),
        unread: Vec::new(),
    }
}

/// The single-host table.
pub fn table(inv: &Inventory) -> String {
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
    let num = |v: Option<u32>| v.map_or_else(|| "-".to_owned(), |n| n.to_string());
    let mut t = Table::new(["", ""]);
    t.row(["Host".to_owned(), inv.host.clone()]);
    t.row(["Model".to_owned(), show(&inv.model)]);
    t.row(["Service tag".to_owned(), show(&inv.service_tag)]);
    t.row(["BIOS".to_owned(), show(&inv.bios_version)]);
    t.row(["BMC firmware".to_owned(), show(&inv.bmc_firmware)]);
    t.row(["Power".to_owned(), show(&inv.power_state)]);
    t.row([
        "CPUs".to_owned(),
        format!(
            "{} × {} ({} cores, {} threads)",
            num(inv.processors.count),
            show(&inv.processors.model),
            num(inv.processors.cores),
            num(inv.processors.threads)
        ),
    ]);
    t.row(["Memory".to_owned(), memory_line(&inv.memory)]);
    let mut out = t.render().lines().skip(1).map(|l| format!("{l}\n")).collect::<String>();
    if inv.pending_bios.is_empty() {
        out.push_str("\nPending BIOS values: none\n");
    } else {
        let _ = writeln!(out, "\nPending BIOS values (apply at next reboot):");
        let mut p = Table::new(["ATTRIBUTE", "VALUE"]);
        for (k, v) in &inv.pending_bios {
            p.row([k.clone(), v.to_string()]);
        }
        out.push_str(&p.render());
    }
    if inv.open_jobs.is_empty() {
        out.push_str("Open jobs: none\n");
    } else {
        out.push_str("\nOpen jobs:\n");
        let mut j = Table::new(["JOB", "TYPE", "STATE", "MESSAGE"]);
        for job in &inv.open_jobs {
            j.row([
                job.id.clone(),
                show(&job.job_type),
                job.state.clone(),
                match (&job.message_id, &job.message) {
                    (Some(id), Some(m)) => format!("[{id}] {m}"),
                    (None, Some(m)) => m.clone(),
                    (Some(id), None) => format!("[{id}]"),
                    (None, None) => String::new(),
                },
            ]);
        }
        out.push_str(&j.render());
    }
    for u in &inv.unread {
        let _ = writeln!(out, "Not read: {} ({})", u.what, u.error);
    }
    out
}

/// `24 × 64 GiB DDR5 @ 4800 MT/s (1536 GiB)`; mixed populations are listed per size.
fn memory_line(mem: &MemoryInventory) -> String {
    let mut groups: std::collections::BTreeMap<(u64, String, u32), usize> = std::collections::BTreeMap::new();
    for d in &mem.dimms {
        let key = (
            d.capacity_mib.unwrap_or(0) / 1024,
            d.device_type.clone().unwrap_or_default(),
            d.speed_mts.unwrap_or(0),
        );
        *groups.entry(key).or_default() += 1;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|((gib, kind, speed), n)| format!("{n} × {gib} GiB {kind} @ {speed} MT/s"))
        .collect();
    let total = mem.total_gib.map(|t| format!(" ({t} GiB)")).unwrap_or_default();
    if parts.is_empty() {
        format!("no DIMMs listed{total}")
    } else {
        format!("{}{total}", parts.join(", "))
    }
}
