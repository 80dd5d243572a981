//! SCP attribute names against the names of Dell's attribute resources: an SCP writes the
//! iDRAC, System and Lifecycle Controller attributes as `Group.N#Attr` (`ServerPwr.1#PowerCapSetting`)
//! where `DellAttributes` says `Group.N.Attr`; BIOS attributes carry their Redfish names
//! unchanged. Names of another shape (`HWC_1_2#Alert#SNMP` in the event filters, NIC and RAID
//! attributes without a group) have no `DellAttributes` counterpart.

use crate::oem::dell::AttributeGroup;

/// The BIOS component's FQDD.
pub const BIOS_FQDD: &str = "BIOS.Setup.1-1";

/// What a component configures, by its FQDD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ComponentKind {
    /// `BIOS.Setup.1-1`: the BIOS attributes.
    Bios,
    /// `iDRAC.Embedded.1`, `System.Embedded.1`, `LifecycleController.Embedded.1`: a
    /// `DellAttributes` group.
    Manager(AttributeGroup),
    /// Network adapters (`NIC.*`, `FC.*`, `InfiniBand.*`).
    Nic,
    /// Storage controllers and what hangs off them (`RAID.*`, `AHCI.*`, `NonRAID.*`,
    /// `PCIeSSD.*`, `Disk.*`, `Enclosure.*`).
    Storage,
    /// Alert filters (`EventFilters.*`).
    EventFilters,
    /// Anything else (`SupportAssist.Embedded.1`, ...).
    Other,
}

impl ComponentKind {
    /// The kind of the component `fqdd`.
    pub fn of(fqdd: &str) -> Self {
        if fqdd == BIOS_FQDD {
            return Self::Bios;
        }
        if let Some(g) = AttributeGroup::ALL.into_iter().find(|g| g.resource_id() == fqdd) {
            return Self::Manager(g);
        }
        let head = fqdd.split([':', '.']).next().unwrap_or_default();
        // A nested storage component names its parents after a colon.
        let outer = fqdd.rsplit(':').next().unwrap_or(fqdd);
        let outer_head = outer.split('.').next().unwrap_or_default();
        match head {
            "NIC" | "FC" | "InfiniBand" => Self::Nic,
            "EventFilters" => Self::EventFilters,
            "RAID" | "AHCI" | "NonRAID" | "PCIeSSD" | "Disk" | "Enclosure" | "BOSS" => Self::Storage,
            _ if matches!(outer_head, "RAID" | "AHCI" | "NonRAID" | "PCIeSSD" | "BOSS") => Self::Storage,
            _ => Self::Other,
        }
    }

    /// How a report names it: `BIOS`, `iDRAC`, `NIC`, `storage`, ...
    pub fn label(self) -> &'static str {
        match self {
            Self::Bios => "BIOS",
            Self::Manager(AttributeGroup::Idrac) => "iDRAC",
            Self::Manager(AttributeGroup::System) => "System",
            Self::Manager(AttributeGroup::LifecycleController) => "LifecycleController",
            Self::Nic => "NIC",
            Self::Storage => "storage",
            Self::EventFilters => "event filters",
            Self::Other => "other",
        }
    }
}

/// `Group.N#Attr` → `Group.N.Attr`, the `DellAttributes` name of an SCP attribute of the iDRAC,
/// System or Lifecycle Controller component; `None` for any other shape.
pub fn attribute_name(scp: &str) -> Option<String> {
    let (group, attr) = scp.split_once('#')?;
    let (base, index) = group.rsplit_once('.')?;
    let valid_base = !base.is_empty() && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let valid_index = !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit());
    let valid_attr = !attr.is_empty() && attr.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (valid_base && valid_index && valid_attr).then(|| format!("{group}.{attr}"))
}

/// `Group.N.Attr` → `Group.N#Attr`, the SCP name of a `DellAttributes` attribute; `None` for a
/// name of another shape.
pub fn scp_name(attribute: &str) -> Option<String> {
    let (base, rest) = attribute.split_once('.')?;
    let (index, attr) = rest.split_once('.')?;
    let candidate = format!("{base}.{index}#{attr}");
    // Exactly the names `attribute_name` maps back: the mapping is one rule, both ways.
    (attribute_name(&candidate).as_deref() == Some(attribute)).then_some(candidate)
}
