//! A host's inventory (`rftune.inventory/v1`): identity, firmware, CPUs, DIMMs, power state,
//! pending BIOS values, open jobs and Secure Boot, and on request the latest Lifecycle-log
//! entries with who made each change, read with as few round trips as the service allows (the
//! reads run concurrently; the log is one more request). The system is required; the rest is
//! shown when the BMC serves it and listed as unread when it does not.

use crate::backend::{Actor, Job, Logged};
use crate::connect::Bmc;
use crate::error::Result;
use crate::lifecycle::Operation;
use crate::observe::Observer;
use redfish_client::resources::bios::{Attributes, BiosSettings};
use redfish_client::resources::computer_system::{ComputerSystem, Memory};
use redfish_client::resources::manager::Manager;
use serde::Serialize;

/// The schema id.
pub const SCHEMA: &str = "rftune.inventory/v1";

/// The `rftune.inventory/v1` document.
#[derive(Debug, Serialize)]
pub struct Inventory {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The host's name.
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
    /// The BMC as rftune recognised it (`Dell iDRAC10 (firmware 1.30.10.50)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bmc: Option<String>,
    /// The server's generation as the iDRAC's Manager names it (`17G Monolithic`), or as its
    /// model name tells (`17G`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
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
    /// The latest Lifecycle-log entries, newest first, when they were asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Vec<LifecycleEntry>>,
    /// UEFI Secure Boot, where the BMC has the resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secure_boot: Option<crate::secure_boot::SecureBootState>,
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

/// One Lifecycle-log entry.
#[derive(Debug, Clone, Serialize)]
pub struct LifecycleEntry {
    /// The entry's number in the log.
    pub id: String,
    /// When (ISO 8601, the iDRAC's clock and offset).
    pub created: Option<String>,
    /// `OK`, `Warning`, `Critical`.
    pub severity: Option<String>,
    /// The MessageId code, e.g. `RAC1195`.
    pub message_id: Option<String>,
    /// The message.
    pub message: Option<String>,
    /// Who acted, when the entry names them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub who: Option<Actor>,
}

impl From<Logged> for LifecycleEntry {
    fn from(Logged { entry: e, actor }: Logged) -> Self {
        Self {
            who: actor,
            message_id: e.code().map(str::to_owned),
            id: e.id,
            created: e.created,
            severity: e.severity,
            message: e.message.map(|m| m.trim().to_owned()),
        }
    }
}

/// Reads the inventory of one logged-in BMC, with the latest `lifecycle` Lifecycle-log entries
/// when it is above 0. The system is required; DIMMs, the iDRAC, pending values, jobs and the
/// log are shown when the BMC serves them, and listed as unread when it does not.
pub async fn collect(bmc: &Bmc, lifecycle: usize) -> Result<Inventory> {
    let root = bmc.service_root().await?;
    let backend = bmc.recognise().await?;
    let t = bmc;
    let client = &t.client;
    let mut partial = Partial::default();
    let mut inventory = match backend.places() {
        Some(places) => {
            let memory_id = places.system.join("Memory");
            let log = async {
                match backend.log() {
                    Some(log) if lifecycle > 0 => Some(log.latest(client, lifecycle).await),
                    _ => None,
                }
            };
            let jobs = async {
                match backend.jobs() {
                    Some(queue) => queue.list(client).await,
                    None => Ok(Vec::new()),
                }
            };
            let (system, memory, manager, pending, jobs, secure_boot, log) = tokio::join!(
                client.system(&places.system),
                client.expanded_members::<Memory>(memory_id.path()),
                client.get::<Manager>(places.manager.path()),
                client.get::<BiosSettings>(places.bios_settings.path()),
                jobs,
                secure_boot(client, places.secure_boot.path()),
                log,
            );
            let system = system.map_err(|e| t.explain(e, "reading the system"))?;
            t.note_model(system.model.as_deref());
            if let Ok(m) = &manager {
                t.note_manager(m);
            }
            let secure_boot = partial.keep("Secure Boot", secure_boot).flatten();
            let lifecycle = log.and_then(|l| partial.keep("Lifecycle log", l));
            let mut inventory = assemble(
                t,
                root.vendor.clone(),
                backend.service_tag(&root),
                system,
                partial.keep("DIMM inventory", memory).unwrap_or_default(),
                partial.keep("iDRAC", manager),
                partial
                    .keep("pending BIOS values", pending)
                    .map(|p| p.attributes)
                    .unwrap_or_default(),
                partial.keep("job queue", jobs).unwrap_or_default(),
            );
            inventory.lifecycle = lifecycle.map(|entries| entries.into_iter().map(LifecycleEntry::from).collect());
            inventory.secure_boot = secure_boot;
            inventory
        }
        None => {
            if lifecycle > 0 {
                partial.unread.push(Unread {
                    what: "Lifecycle log".to_owned(),
                    error: "the Lifecycle log is an iDRAC's, and this service is not laid out as one".to_owned(),
                });
            }
            let mut system = t.first_system().await?;
            counted_cores(client, &mut system, &mut partial).await;
            let secure_boot = match system.secure_boot.as_ref() {
                Some(link) => partial
                    .keep("Secure Boot", secure_boot(client, link.odata_id.path()).await)
                    .flatten(),
                None => None,
            };
            let memory = partial.keep("DIMM inventory", client.memory(&system).await);
            let bios = partial.keep("BIOS", client.bios(&system.bios_link()).await);
            let pending = match &bios {
                Some(b) => partial
                    .keep("pending BIOS values", client.pending_bios(b).await)
                    .map(|p| backend.pending().pending(&b.attributes, p.attributes)),
                None => None,
            };
            // An iDRAC's service tag is its system's SKU; other vendors' is the serial number.
            let tag = if backend.is_idrac() {
                system.sku.clone()
            } else {
                system.serial_number.clone().or_else(|| system.sku.clone())
            };
            let mut inventory = assemble(
                t,
                root.vendor.clone(),
                tag,
                system,
                memory.unwrap_or_default(),
                None,
                pending.unwrap_or_default(),
                Vec::new(),
            );
            inventory.secure_boot = secure_boot;
            inventory
        }
    };
    for u in &partial.unread {
        tracing::warn!("{}: could not read the {}: {}", t.name, u.what, u.error);
    }
    inventory.unread = partial.unread;
    Ok(inventory)
}

/// Fills the cores and threads a system's `ProcessorSummary` leaves out (an iLO's gives the
/// sockets and model only) from its processors, summed: one more request, where it links them.
async fn counted_cores(
    client: &redfish_client::Client,
    system: &mut redfish_client::resources::computer_system::ComputerSystem,
    partial: &mut Partial,
) {
    use redfish_client::resources::computer_system::{Processor, ProcessorSummary};
    let summary = system.processor_summary.as_ref();
    if summary.is_some_and(|s| s.core_count.is_some() && s.logical_processor_count.is_some()) {
        return;
    }
    let Some(link) = system.processors.as_ref() else { return };
    let read = client.expanded_members::<Processor>(link.odata_id.path()).await;
    let Some(cpus) = partial.keep("processors", read) else {
        return;
    };
    // An empty socket lists no cores: the populated ones are summed.
    let sum = |f: fn(&Processor) -> Option<u32>| -> Option<u32> {
        let each: Vec<u32> = cpus.iter().filter_map(f).collect();
        (!each.is_empty()).then(|| each.iter().sum())
    };
    let summary = system.processor_summary.get_or_insert_with(ProcessorSummary::default);
    summary.core_count = summary.core_count.or(sum(|c| c.total_cores));
    summary.logical_processor_count = summary.logical_processor_count.or(sum(|c| c.total_threads));
}

/// The Secure Boot state at `path`, or `None` when the BMC has no such resource.
async fn secure_boot(
    client: &redfish_client::Client,
    path: &str,
) -> redfish_client::Result<Option<crate::secure_boot::SecureBootState>> {
    match client
        .get::<redfish_client::resources::secure_boot::SecureBoot>(path)
        .await
    {
        Ok(sb) => Ok(Some((&sb).into())),
        Err(e) if e.status() == Some(404) => Ok(None),
        Err(e) => Err(e),
    }
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    bmc: &Bmc,
    vendor: Option<String>,
    service_tag: Option<String>,
    system: ComputerSystem,
    memory: Vec<Memory>,
    manager: Option<Manager>,
    pending_bios: Attributes,
    jobs: Vec<Job>,
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
    let generation = manager
        .as_ref()
        .and_then(|m| m.model.clone())
        .filter(|m| crate::backend::generation_of(m).is_some() && m.contains('G'))
        .or_else(|| {
            // Only a PowerEdge model name says its generation this way.
            system
                .model
                .as_deref()
                .filter(|_| bmc.backend().is_idrac())
                .and_then(crate::backend::generation_of)
                .map(|g| format!("{g}G"))
        });
    let bmc_firmware = manager
        .and_then(|m| m.firmware_version)
        .or_else(|| match bmc.backend().kind() {
            crate::backend::Kind::Ilo { firmware, .. } => firmware.clone(),
            _ => None,
        });
    Inventory {
        schema: SCHEMA,
        host: bmc.name.clone(),
        vendor,
        model: system.model,
        service_tag,
        bios_version: system.bios_version,
        generation,
        bmc: Some(bmc.backend().kind().to_string()),
        bmc_firmware,
        power_state: system.power_state.map(|p| format!("{p:?}")),
        processors: Processors {
            count: cpu.count,
            // HPE pads the brand string with spaces, as the BIOS reads it from the CPU.
            model: cpu.model.map(|m| m.trim().to_owned()),
            cores: cpu.core_count,
            threads: cpu.logical_processor_count,
        },
        memory: MemoryInventory {
            total_gib: system.memory_summary.and_then(|m| m.total_system_memory_gib),
            dimms,
        },
        pending_bios,
        lifecycle: None,
        open_jobs: jobs
            .into_iter()
            .filter(Job::holds_queue)
            .map(|j| JobSummary {
                message_id: j.message_code().map(str::to_owned),
                id: j.id,
                job_type: j.job_type,
                state: j.job_state,
                message: j.message,
            })
            .collect(),
        secure_boot: None,
        unread: Vec::new(),
    }
}

/// Inventory as a fleet [`Operation`]; the service root is read before logging in (it tells the
/// backend, and holds the service tag).
#[derive(Debug, Clone, Copy, Default)]
pub struct Collect {
    /// How many of the latest Lifecycle-log entries to read (0: none, no extra request).
    pub lifecycle: usize,
}

impl Operation for Collect {
    type Output = Inventory;

    fn reads_service_root_first(&self) -> bool {
        true
    }

    async fn run(&self, bmc: &mut Bmc, _: &dyn Observer) -> Result<Inventory> {
        collect(bmc, self.lifecycle).await
    }
}
