//! `ComputerSystem` with its processor and memory summaries, `Memory` (DIMMs) and `Processor`.

use super::Status;
use crate::odata::{Link, ODataId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A server as the BMC sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ComputerSystem {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// e.g. `System.Embedded.1`.
    #[serde(default)]
    pub id: String,
    /// e.g. `Dell Inc.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
    /// e.g. `PowerEdge R7625`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Dell puts the service tag here.
    #[serde(rename = "SKU", default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// Serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    /// The SMBIOS system UUID.
    #[serde(rename = "UUID", default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// OS host name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_name: Option<String>,
    /// Current power state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_state: Option<PowerState>,
    /// Running BIOS version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bios_version: Option<String>,
    /// CPU summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processor_summary: Option<ProcessorSummary>,
    /// Memory summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_summary: Option<MemorySummary>,
    /// The BIOS resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bios: Option<Link>,
    /// The boot order and the boot override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<super::boot::Boot>,
    /// The UEFI Secure Boot resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_boot: Option<Link>,
    /// The DIMM collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Link>,
    /// The processor collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processors: Option<Link>,
    /// Health.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Actions, raw (`#ComputerSystem.Reset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Map<String, Value>>,
    /// Vendor extensions, raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oem: Option<Map<String, Value>>,
}

impl ComputerSystem {
    /// The reset action target, falling back to the conventional path.
    pub fn reset_target(&self) -> ODataId {
        self.actions
            .as_ref()
            .and_then(|a| a.get("#ComputerSystem.Reset"))
            .and_then(|r| r.get("target"))
            .and_then(Value::as_str)
            .map(ODataId::new)
            .unwrap_or_else(|| self.odata_id.join("Actions/ComputerSystem.Reset"))
    }

    /// The BIOS resource, falling back to the conventional path.
    pub fn bios_link(&self) -> ODataId {
        self.bios
            .as_ref()
            .map(|l| l.odata_id.clone())
            .unwrap_or_else(|| self.odata_id.join("Bios"))
    }
}

/// `PowerState` of a system or chassis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PowerState {
    /// Powered on.
    On,
    /// Powered off.
    Off,
    /// Transitioning to on.
    PoweringOn,
    /// Transitioning to off.
    PoweringOff,
    /// Paused (rare).
    Paused,
    /// A value this client does not know.
    #[serde(other)]
    Unknown,
}

/// `ResetType` values for `ComputerSystem.Reset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResetType {
    /// Power on.
    On,
    /// Cut power immediately.
    ForceOff,
    /// Ask the OS to shut down.
    GracefulShutdown,
    /// Ask the OS to restart.
    GracefulRestart,
    /// Restart without asking the OS.
    ForceRestart,
    /// Power off, then on.
    PowerCycle,
    /// Simulate a press of the power button.
    PushPowerButton,
    /// Non-maskable interrupt.
    Nmi,
}

/// `ProcessorSummary`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ProcessorSummary {
    /// Sockets populated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Total cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_count: Option<u32>,
    /// Total hardware threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_processor_count: Option<u32>,
    /// CPU model string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// `MemorySummary`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MemorySummary {
    /// Installed memory in GiB (a float on some firmware).
    #[serde(rename = "TotalSystemMemoryGiB", default, skip_serializing_if = "Option::is_none")]
    pub total_system_memory_gib: Option<f64>,
}

/// One DIMM (`Memory` schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Memory {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// e.g. `DIMM.Socket.A1`.
    #[serde(default)]
    pub id: String,
    /// Capacity in MiB.
    #[serde(rename = "CapacityMiB", default, skip_serializing_if = "Option::is_none")]
    pub capacity_mib: Option<u64>,
    /// Speed it runs at, MT/s.
    #[serde(rename = "OperatingSpeedMhz", default, skip_serializing_if = "Option::is_none")]
    pub operating_speed_mhz: Option<u32>,
    /// `DDR4`, `DDR5`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_device_type: Option<String>,
    /// `RDIMM`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_module_type: Option<String>,
    /// Vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
    /// Part number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_number: Option<String>,
    /// Ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_count: Option<u32>,
    /// Socket/channel/slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_location: Option<MemoryLocation>,
    /// Presence and health.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Related resources: the processor the DIMM hangs off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<MemoryLinks>,
}

/// `Memory.Links`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MemoryLinks {
    /// The processor(s) this DIMM belongs to (`…/Processors/CPU.Socket.1` on iDRACs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processors: Vec<Link>,
}

impl Memory {
    /// The CPU socket (1-based): `MemoryLocation.Socket` where the BMC gives it, else the
    /// processor it links to (`CPU.Socket.2` → 2; what real iDRACs give), else the letter of
    /// Dell's `DIMM.Socket.B7` id (B → 2).
    pub fn socket(&self) -> Option<u32> {
        let number_after = |text: &str, prefix: &str| -> Option<u32> {
            let rest = text.rsplit('/').next()?.strip_prefix(prefix)?;
            rest.parse().ok()
        };
        self.memory_location
            .as_ref()
            .and_then(|l| l.socket)
            .or_else(|| {
                let cpu = self.links.as_ref()?.processors.first()?;
                number_after(cpu.odata_id.path(), "CPU.Socket.")
            })
            .or_else(|| {
                let letter = self
                    .id
                    .strip_prefix("DIMM.Socket.")?
                    .chars()
                    .next()?
                    .to_ascii_uppercase();
                letter
                    .is_ascii_uppercase()
                    .then(|| u32::from(letter) - u32::from('A') + 1)
            })
    }

    /// Whether the DIMM is present and in use: `Status.State` `Enabled`, or, without a state,
    /// a capacity above zero. Absent slots and DIMMs the BIOS disabled are not.
    pub fn is_enabled(&self) -> bool {
        match self.status.as_ref().and_then(|s| s.state.as_deref()) {
            Some(state) => state.eq_ignore_ascii_case("Enabled"),
            None => self.capacity_mib.is_some_and(|c| c > 0),
        }
    }
}

/// `Memory.MemoryLocation`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MemoryLocation {
    /// CPU socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<u32>,
    /// Memory channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<u32>,
    /// Slot on the channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
}

/// One CPU (`Processor` schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Processor {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// e.g. `CPU.Socket.1`.
    #[serde(default)]
    pub id: String,
    /// Model string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cores: Option<u32>,
    /// Threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_threads: Option<u32>,
    /// Rated maximum, MHz.
    #[serde(rename = "MaxSpeedMHz", default, skip_serializing_if = "Option::is_none")]
    pub max_speed_mhz: Option<u32>,
}
