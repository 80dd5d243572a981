//! What a profile needs to know about a host: its AMD EPYC generation, CPU model, sockets and
//! cores, its PowerEdge model and, when a profile asks, how its memory channels are populated
//! ([`HostFacts`]); and what the host shows, which a resolved profile is judged against
//! ([`HostView`]).

use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use redfish_client::resources::computer_system::Memory;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// An AMD EPYC server CPU generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Generation {
    /// EPYC 7002 (Zen 2; PowerEdge 14G/15G such as R6525, R7525, R6515, R7515).
    Rome,
    /// EPYC 7003 (Zen 3; 15G).
    Milan,
    /// EPYC 9004 (Zen 4; 16G such as R6625, R7625, R6615, R7615).
    Genoa,
    /// EPYC 97x4 (Zen 4c, the cloud-native 9004 parts).
    Bergamo,
    /// EPYC 8004 (Zen 4c, single socket, six DDR5 channels; C6615).
    Siena,
    /// EPYC 9005 (Zen 5; 17G).
    Turin,
}

impl Generation {
    /// Every generation, oldest first.
    pub const ALL: [Self; 6] = [
        Self::Rome,
        Self::Milan,
        Self::Genoa,
        Self::Bergamo,
        Self::Siena,
        Self::Turin,
    ];

    /// The name used in profile files (`genoa`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rome => "rome",
            Self::Milan => "milan",
            Self::Genoa => "genoa",
            Self::Bergamo => "bergamo",
            Self::Siena => "siena",
            Self::Turin => "turin",
        }
    }

    /// DDR memory channels per socket: 8 on Rome and Milan, 12 on Genoa, Bergamo and Turin,
    /// 6 on Siena.
    pub fn channels_per_socket(self) -> u32 {
        match self {
            Self::Rome | Self::Milan => 8,
            Self::Genoa | Self::Bergamo | Self::Turin => 12,
            Self::Siena => 6,
        }
    }

    /// AMD's series name (`EPYC 9004`).
    pub fn series(self) -> &'static str {
        match self {
            Self::Rome => "EPYC 7002",
            Self::Milan => "EPYC 7003",
            Self::Genoa => "EPYC 9004",
            Self::Bergamo => "EPYC 97x4",
            Self::Siena => "EPYC 8004",
            Self::Turin => "EPYC 9005",
        }
    }

    /// The generation of a CPU brand string such as `AMD EPYC 9654 96-Core Processor`.
    ///
    /// The model number's first digit is the family (7, 8 or 9) and its fourth the generation:
    /// 7xx2 Rome, 7xx3 Milan, 9xx4 Genoa except 97x4 Bergamo, 8xx4 Siena, 9xx5 Turin. Letters
    /// inside or after the number (`7H12`, `9684X`, `8534P`) are allowed. Anything else —
    /// Naples, EPYC 4004/4005, other vendors — gives `None`.
    pub fn from_cpu_model(brand: &str) -> Option<Self> {
        let mut words = brand.split_whitespace();
        words.by_ref().find(|w| w.eq_ignore_ascii_case("EPYC"))?;
        let number: Vec<char> = words.next()?.chars().take(4).collect();
        let [family, second, _, generation] = number.as_slice() else {
            return None;
        };
        if !number.iter().all(char::is_ascii_alphanumeric) {
            return None;
        }
        match (family, generation) {
            ('7', '2') => Some(Self::Rome),
            ('7', '3') => Some(Self::Milan),
            ('9', '4') if *second == '7' => Some(Self::Bergamo),
            ('9', '4') => Some(Self::Genoa),
            ('8', '4') => Some(Self::Siena),
            ('9', '5') => Some(Self::Turin),
            _ => None,
        }
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`Generation`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown generation `{0}`; expected one of rome, milan, genoa, bergamo, siena, turin")]
pub struct UnknownGeneration(pub String);

impl FromStr for Generation {
    type Err = UnknownGeneration;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|g| g.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownGeneration(s.to_owned()))
    }
}

/// Whether a `ProcNBrand` value names a CPU (an empty socket may read `Not Installed`).
fn names_a_cpu(brand: &str) -> bool {
    let lower = brand.to_ascii_lowercase();
    !(lower.contains("not installed") || lower.contains("not present") || lower == "n/a")
}

/// Renders a list of generations for messages: `rome, milan`.
pub(crate) fn list(generations: &[Generation]) -> String {
    generations.iter().map(|g| g.as_str()).collect::<Vec<_>>().join(", ")
}

/// The facts about a host that decide which settings of a profile apply.
///
/// All of them come from BIOS attributes real AMD PowerEdge hosts list (`SystemModelName`,
/// `Proc1Brand`, `Proc2Brand`, `Proc1NumCores`); each is `None` when the host does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostFacts {
    /// The PowerEdge model (`PowerEdge R7625`), when known.
    pub model: Option<String>,
    /// The CPU generation, when known.
    pub generation: Option<Generation>,
    /// The CPU brand string (`AMD EPYC 9654 96-Core Processor`), when known.
    pub cpu: Option<String>,
    /// Populated processor sockets: how many `ProcNBrand` attributes name a CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    /// Cores per processor (`Proc1NumCores`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// Whether each core runs two hardware threads (`LogicalProc`). Resolution replaces the
    /// host's current value with the one the profile writes, so conditions on threads judge
    /// the host as it will be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smt: Option<bool>,
    /// How the DIMMs sit on the memory channels, when the `Memory` collection was read (only
    /// for profiles that depend on it: one more request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryPopulation>,
}

/// Populated DIMMs per socket, read from the system's `Memory` collection.
///
/// Real iDRACs list only the DIMMs that are present (a real R750 with 16 of its 32 slots filled
/// lists `DIMM.Socket.A1`..`A8` and `B1`..`B8`) and give no channel number, so the population
/// is judged per socket: balanced when every socket holds the same number of DIMMs, a whole
/// multiple of its channels (1 or 2 DIMMs per channel on every channel) — Dell: "a
/// fully balanced configuration requires all DIMM channels to be populated".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemoryPopulation {
    /// Enabled DIMMs by socket (1-based).
    pub dimms_per_socket: BTreeMap<u32, u32>,
    /// Channels per socket of the host's CPU generation, when it is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channels_per_socket: Option<u32>,
}

impl MemoryPopulation {
    /// Counts the enabled DIMMs of `dimms` by socket ([`Memory::socket`],
    /// [`Memory::is_enabled`]). Real iDRACs list only the DIMMs present, so the host's `sockets`
    /// (when known) are counted from 1 with zero DIMMs: a socket left empty shows. DIMMs whose
    /// socket cannot be told are not counted.
    pub fn from_dimms(dimms: &[Memory], generation: Option<Generation>, sockets: Option<u32>) -> Self {
        let mut dimms_per_socket: BTreeMap<u32, u32> = (1..=sockets.unwrap_or(0)).map(|n| (n, 0)).collect();
        for dimm in dimms.iter().filter(|d| d.is_enabled()) {
            if let Some(socket) = dimm.socket() {
                *dimms_per_socket.entry(socket).or_insert(0) += 1;
            }
        }
        Self {
            dimms_per_socket,
            channels_per_socket: generation.map(Generation::channels_per_socket),
        }
    }

    /// Whether every populated socket has every channel filled alike; `None` when the
    /// channel count (the CPU generation) is unknown.
    pub fn balanced(&self) -> Option<bool> {
        let channels = self.channels_per_socket?;
        let mut counts = self.dimms_per_socket.values();
        let Some(&first) = counts.next() else {
            return Some(false);
        };
        Some(first > 0 && first % channels == 0 && counts.all(|&n| n == first))
    }
}

impl fmt::Display for MemoryPopulation {
    /// `12 + 11 DIMMs on 12 channels per socket (unbalanced)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts: Vec<String> = self.dimms_per_socket.values().map(u32::to_string).collect();
        let counts = if counts.is_empty() {
            "0".to_owned()
        } else {
            counts.join(" + ")
        };
        write!(f, "{counts} DIMMs")?;
        if let Some(channels) = self.channels_per_socket {
            write!(f, " on {channels} channels per socket")?;
        }
        match self.balanced() {
            Some(true) => f.write_str(" (balanced)"),
            Some(false) => f.write_str(" (unbalanced)"),
            None => Ok(()),
        }
    }
}

/// The highest `ProcNBrand` index looked at (Dell's AMD servers have one or two sockets; 17G
/// registries number them from 0, earlier ones from 1).
const MAX_SOCKETS: u32 = 8;

impl HostFacts {
    /// Reads the model from `SystemModelName`, the CPU and its generation from the first
    /// socket's `ProcNBrand` (`Proc0Brand` on 17G registries, which number processors from 0,
    /// `Proc1Brand` before), the sockets from the `ProcNBrand` attributes that name a CPU (an
    /// empty socket says "Not Installed"), the cores per processor from the first socket's
    /// `ProcNNumCores` and SMT from `LogicalProc` (HPE's `ProcSMT`).
    pub fn from_bios(attributes: &Attributes) -> Self {
        let text = |name: &str| {
            attributes
                .get(name)
                .and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        // The first socket: `Proc0` where the registry numbers from 0 (17G), else `Proc1`.
        let first = if attributes.contains_key("Proc0Brand") { 0 } else { 1 };
        let installed_at = |n: u32| text(&format!("Proc{n}Brand")).is_some_and(names_a_cpu);
        let cpu = (first..=MAX_SOCKETS)
            .find(|n| installed_at(*n))
            .and_then(|n| text(&format!("Proc{n}Brand")));
        let sockets = cpu.map(|_| (first..=MAX_SOCKETS).filter(|n| installed_at(*n)).count());
        let cores_of = |n: u32| {
            attributes
                .get(&format!("Proc{n}NumCores"))
                .and_then(AttributeValue::as_i64)
                .and_then(|c| u32::try_from(c).ok())
                .filter(|c| *c > 0)
        };
        Self {
            model: text("SystemModelName").map(str::to_owned),
            generation: cpu.and_then(Generation::from_cpu_model),
            cpu: cpu.map(str::to_owned),
            sockets: sockets.and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0),
            cores: (first..=MAX_SOCKETS).filter(|n| installed_at(*n)).find_map(cores_of),
            // Dell's `LogicalProc`, HPE's `ProcSMT`: the same switch, the same tokens.
            smt: match text("LogicalProc").or_else(|| text("ProcSMT")) {
                Some("Enabled") => Some(true),
                Some("Disabled") => Some(false),
                _ => None,
            },
            memory: None,
        }
    }

    /// Hardware threads of the whole system: sockets × cores × threads per core, when all
    /// three are known. Past 255 Linux needs x2APIC, and with it the IOMMU.
    pub fn threads(&self) -> Option<u32> {
        let per_core = if self.smt? { 2 } else { 1 };
        self.sockets?.checked_mul(self.cores?)?.checked_mul(per_core)
    }

    /// These facts with the memory population counted from the host's DIMMs.
    pub fn with_memory(mut self, dimms: &[Memory]) -> Self {
        self.memory = Some(MemoryPopulation::from_dimms(dimms, self.generation, self.sockets));
        self
    }

    /// Whether the memory population is known to be balanced (`Some(true)`), known not to be
    /// (`Some(false)`), or unknown.
    pub fn memory_balanced(&self) -> Option<bool> {
        self.memory.as_ref().and_then(MemoryPopulation::balanced)
    }

    /// The CPU's model number (`7552`, `9684X`, `8534P`): the word after `EPYC` in the brand.
    pub fn cpu_model_number(&self) -> Option<&str> {
        let mut words = self.cpu.as_deref()?.split_whitespace();
        words.by_ref().find(|w| w.eq_ignore_ascii_case("EPYC"))?;
        words.next()
    }

    /// Whether the host's CPU model number is `number` (case-insensitive).
    pub fn is_cpu(&self, number: &str) -> bool {
        self.cpu_model_number()
            .is_some_and(|n| n.eq_ignore_ascii_case(number.trim()))
    }

    /// Whether the host's CPU is known and is not an AMD EPYC this project knows (Rome or
    /// later): an Intel Xeon, a Naples or EPYC 4004 part.
    pub fn is_other_cpu(&self) -> bool {
        self.cpu.is_some() && self.generation.is_none()
    }

    /// Whether the host is this model: case-insensitive, surrounding spaces and a leading
    /// "PowerEdge" ignored (`c6615` is `PowerEdge C6615`).
    pub fn is_model(&self, model: &str) -> bool {
        fn bare(m: &str) -> &str {
            let m = m.trim();
            match m.get(..9) {
                Some(prefix) if prefix.eq_ignore_ascii_case("poweredge") => m[9..].trim_start(),
                _ => m,
            }
        }
        self.model
            .as_deref()
            .is_some_and(|m| bare(m).eq_ignore_ascii_case(bare(model)))
    }
}

impl fmt::Display for HostFacts {
    /// `PowerEdge R7625 (genoa)`, `siena (model not given)`, `of unknown model and CPU
    /// generation`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.model, self.generation, &self.cpu) {
            (Some(m), Some(g), _) => write!(f, "{m} ({g})"),
            (Some(m), None, Some(cpu)) => write!(f, "{m} ({cpu})"),
            (Some(m), None, None) => write!(f, "{m} (unknown CPU generation)"),
            (None, Some(g), _) => write!(f, "{g} (model not given)"),
            (None, None, Some(cpu)) => write!(f, "{cpu} (model not given)"),
            (None, None, None) => f.write_str("of unknown model and CPU generation"),
        }
    }
}

/// What a host shows, borrowed from whoever read it: the state that validation, diff, plan and
/// simulation judge a resolved profile against.
///
/// [`HostView::new`] starts from a registry and current BIOS values, with nothing pending and
/// no iDRAC attributes; a caller that read more adds it (`.with_pending(..)`,
/// `.with_idrac(..)`), or replaces a part with struct update syntax
/// (`HostView { bios: &after, ..host }`).
#[derive(Debug, Clone, Copy)]
pub struct HostView<'a> {
    /// The BIOS attribute registry.
    pub registry: &'a AttributeRegistry,
    /// The BIOS's current values (`GET …/Bios`, which on an iDRAC lists only visible
    /// attributes).
    pub bios: &'a Attributes,
    /// The BIOS values pending for the next reboot (`…/Bios/Settings`).
    pub pending: &'a Attributes,
    /// The iDRAC's `DellAttributes`, by group.
    pub idrac: &'a BTreeMap<AttributeGroup, Attributes>,
}

static NO_ATTRIBUTES: Attributes = Attributes::new();
static NO_GROUPS: BTreeMap<AttributeGroup, Attributes> = BTreeMap::new();

impl<'a> HostView<'a> {
    /// A host with this BIOS `registry` and current `bios` values, nothing pending and no iDRAC
    /// attributes.
    pub fn new(registry: &'a AttributeRegistry, bios: &'a Attributes) -> Self {
        Self {
            registry,
            bios,
            pending: &NO_ATTRIBUTES,
            idrac: &NO_GROUPS,
        }
    }

    /// The same host with `pending` BIOS values.
    #[must_use]
    pub fn with_pending(self, pending: &'a Attributes) -> Self {
        Self { pending, ..self }
    }

    /// The same host with these iDRAC attribute groups.
    #[must_use]
    pub fn with_idrac(self, idrac: &'a BTreeMap<AttributeGroup, Attributes>) -> Self {
        Self { idrac, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brand_strings_map_to_generations() {
        let cases = [
            ("AMD EPYC 7702 64-Core Processor", Some(Generation::Rome)),
            ("AMD EPYC 7H12 64-Core Processor", Some(Generation::Rome)),
            ("AMD EPYC 7763 64-Core Processor", Some(Generation::Milan)),
            ("AMD EPYC 73F3 16-Core Processor", Some(Generation::Milan)),
            ("AMD EPYC 9654 96-Core Processor", Some(Generation::Genoa)),
            ("AMD EPYC 9684X 96-Core Processor", Some(Generation::Genoa)),
            ("AMD EPYC 9174F 16-Core Processor", Some(Generation::Genoa)),
            ("AMD EPYC 9754 128-Core Processor", Some(Generation::Bergamo)),
            ("AMD EPYC 9734 112-Core Processor", Some(Generation::Bergamo)),
            ("AMD EPYC 8534P 64-Core Processor", Some(Generation::Siena)),
            ("AMD EPYC 9965 192-Core Processor", Some(Generation::Turin)),
            ("  amd epyc 9575F 64-Core Processor ", Some(Generation::Turin)),
            ("AMD EPYC 7601 32-Core Processor", None),
            ("AMD EPYC 4584PX 16-Core Processor", None),
            ("AMD EPYC Processor", None),
            ("AMD EPYC 96", None),
            ("Intel(R) Xeon(R) Gold 6430", None),
            ("", None),
        ];
        for (brand, want) in cases {
            assert_eq!(Generation::from_cpu_model(brand), want, "{brand}");
        }
    }

    #[test]
    fn host_facts_come_from_bios_attributes() {
        let attrs: Attributes = [
            ("SystemModelName".to_owned(), "PowerEdge C6615".into()),
            ("Proc1Brand".to_owned(), "AMD EPYC 8534P 64-Core Processor".into()),
        ]
        .into_iter()
        .collect();
        let host = HostFacts::from_bios(&attrs);
        assert_eq!(host.model.as_deref(), Some("PowerEdge C6615"));
        assert_eq!(host.generation, Some(Generation::Siena));
        assert!(host.is_model("poweredge c6615 "));
        assert!(host.is_model("c6615") && host.is_model("C6615") && !host.is_model("c6625"));
        let bare = HostFacts {
            model: Some("c6615".into()),
            ..HostFacts::default()
        };
        assert!(
            bare.is_model("PowerEdge C6615"),
            "a model given without the prefix matches profiles that use it"
        );
        assert_eq!(host.to_string(), "PowerEdge C6615 (siena)");
        let empty = HostFacts::from_bios(&Attributes::new());
        assert_eq!(empty, HostFacts::default());
        assert_eq!(empty.to_string(), "of unknown model and CPU generation");
        let siena = HostFacts {
            generation: Some(Generation::Siena),
            ..HostFacts::default()
        };
        assert_eq!(siena.to_string(), "siena (model not given)");
        let intel: Attributes = [
            ("SystemModelName".to_owned(), "PowerEdge R750".into()),
            (
                "Proc1Brand".to_owned(),
                "Intel(R) Xeon(R) Gold 6354 CPU @ 3.00GHz".into(),
            ),
        ]
        .into_iter()
        .collect();
        let intel = HostFacts::from_bios(&intel);
        assert!(intel.is_other_cpu() && !host.is_other_cpu());
        assert_eq!(
            intel.to_string(),
            "PowerEdge R750 (Intel(R) Xeon(R) Gold 6354 CPU @ 3.00GHz)"
        );
    }

    /// 17G registries number processors from 0 (`Proc0Brand`, as Dell's R770 registry does): a
    /// one-socket R6715 is one socket of its CPU, a two-socket R7725 two, and the cores are the
    /// first socket's, never a generation-neutral guess.
    #[test]
    fn processors_numbered_from_zero_are_read_as_17g_registries_number_them() {
        let attrs = |rows: &[(&str, &str)], cores: i64| -> Attributes {
            let mut a: Attributes = rows.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect();
            a.insert("Proc0NumCores".into(), cores.into());
            a.insert("LogicalProc".into(), "Enabled".into());
            a
        };
        let turin = "AMD EPYC 9965 192-Core Processor";
        let two = HostFacts::from_bios(&attrs(&[("Proc0Brand", turin), ("Proc1Brand", turin)], 192));
        assert_eq!((two.sockets, two.cores, two.threads()), (Some(2), Some(192), Some(768)));
        assert_eq!(two.generation, Some(Generation::Turin));
        let one = HostFacts::from_bios(&attrs(
            &[
                ("Proc0Brand", "AMD EPYC 9555 64-Core Processor"),
                ("Proc1Brand", "Not Installed"),
            ],
            64,
        ));
        assert_eq!((one.sockets, one.cores), (Some(1), Some(64)));
        assert_eq!(one.cpu_model_number(), Some("9555"));
    }

    #[test]
    fn sockets_cores_and_model_number_come_from_the_processor_attributes() {
        let two: Attributes = [
            ("Proc1Brand".to_owned(), "AMD EPYC 7552 48-Core Processor   ".into()),
            ("Proc2Brand".to_owned(), "AMD EPYC 7552 48-Core Processor".into()),
            ("Proc1NumCores".to_owned(), AttributeValue::Integer(48)),
        ]
        .into_iter()
        .collect();
        let host = HostFacts::from_bios(&two);
        assert_eq!((host.sockets, host.cores), (Some(2), Some(48)));
        assert_eq!(host.cpu_model_number(), Some("7552"));
        assert!(host.is_cpu("7552") && !host.is_cpu("7542"));
        // An empty second socket, as some BIOSes name it, is not a socket.
        let one: Attributes = [
            ("Proc1Brand".to_owned(), "AMD EPYC 8534P 64-Core Processor".into()),
            ("Proc2Brand".to_owned(), "Not Installed".into()),
            ("Proc1NumCores".to_owned(), "64".into()),
        ]
        .into_iter()
        .collect();
        let host = HostFacts::from_bios(&one);
        assert_eq!(host.sockets, Some(1));
        assert_eq!(host.cores, None, "a core count that is not an integer is not a fact");
        assert!(host.is_cpu("8534p"));
        // Without Proc1Brand nothing is known about the sockets.
        let none = HostFacts::from_bios(
            &[("Proc1NumCores".to_owned(), AttributeValue::Integer(0))]
                .into_iter()
                .collect(),
        );
        assert_eq!((none.sockets, none.cores, none.cpu_model_number()), (None, None, None));
    }

    fn dimm(id: &str, state: Option<&str>) -> Memory {
        serde_json::from_value(serde_json::json!({
            "@odata.id": format!("/redfish/v1/Systems/System.Embedded.1/Memory/{id}"),
            "Id": id,
            "CapacityMiB": 32768,
            "Status": state.map(|s| serde_json::json!({"State": s, "Health": "OK"})),
        }))
        .unwrap()
    }

    fn dimms(sockets: &[(char, u32)]) -> Vec<Memory> {
        sockets
            .iter()
            .flat_map(|&(letter, n)| (1..=n).map(move |i| dimm(&format!("DIMM.Socket.{letter}{i}"), Some("Enabled"))))
            .collect()
    }

    #[test]
    fn memory_is_balanced_when_every_channel_of_every_socket_holds_the_same_dimms() {
        let genoa = Some(Generation::Genoa);
        let full = MemoryPopulation::from_dimms(&dimms(&[('A', 12), ('B', 12)]), genoa, Some(2));
        assert_eq!(full.dimms_per_socket, BTreeMap::from([(1, 12), (2, 12)]));
        assert_eq!(full.balanced(), Some(true));
        assert_eq!(full.to_string(), "12 + 12 DIMMs on 12 channels per socket (balanced)");
        // Two DIMMs per channel is balanced too; the real R750's 16 on 2x8 channels likewise.
        let two_dpc = MemoryPopulation::from_dimms(&dimms(&[('A', 16), ('B', 16)]), Some(Generation::Milan), Some(2));
        assert_eq!(two_dpc.balanced(), Some(true));
        // One DIMM missing, or channels left empty: unbalanced. One full socket is balanced.
        let short = MemoryPopulation::from_dimms(&dimms(&[('A', 12), ('B', 11)]), genoa, Some(2));
        assert_eq!(short.balanced(), Some(false));
        assert_eq!(
            short.to_string(),
            "12 + 11 DIMMs on 12 channels per socket (unbalanced)"
        );
        let eight = MemoryPopulation::from_dimms(&dimms(&[('A', 8), ('B', 8)]), genoa, Some(2));
        assert_eq!(eight.balanced(), Some(false));
        let one_socket = MemoryPopulation::from_dimms(&dimms(&[('A', 12)]), genoa, Some(1));
        assert_eq!(one_socket.balanced(), Some(true));
        // A DIMM the BIOS disabled does not count; nor does one whose socket is unknown.
        let mut list = dimms(&[('A', 6)]);
        list[5] = dimm("DIMM.Socket.A6", Some("Disabled"));
        list.push(dimm("NVDIMM.Slot.1", Some("Enabled")));
        let siena = MemoryPopulation::from_dimms(&list, Some(Generation::Siena), Some(1));
        assert_eq!(siena.dimms_per_socket, BTreeMap::from([(1, 5)]));
        assert_eq!(siena.balanced(), Some(false));
        // No DIMM at all is not balanced; an unknown generation is unknown.
        assert_eq!(MemoryPopulation::from_dimms(&[], genoa, None).balanced(), Some(false));
        assert_eq!(
            MemoryPopulation::from_dimms(&dimms(&[('A', 12)]), None, Some(1)).balanced(),
            None
        );
        assert_eq!(
            HostFacts::default().with_memory(&dimms(&[('A', 12)])).memory_balanced(),
            None
        );
        // Real iDRACs list only present DIMMs: all 12 on socket 1 of a two-socket host leave
        // socket 2 empty, which is not balanced.
        let lopsided = MemoryPopulation::from_dimms(&dimms(&[('A', 12)]), genoa, Some(2));
        assert_eq!(lopsided.dimms_per_socket, BTreeMap::from([(1, 12), (2, 0)]));
        assert_eq!(lopsided.balanced(), Some(false));
        let facts = HostFacts {
            generation: genoa,
            sockets: Some(2),
            ..HostFacts::default()
        };
        assert_eq!(facts.with_memory(&dimms(&[('A', 12)])).memory_balanced(), Some(false));
    }

    #[test]
    fn the_socket_comes_from_the_processor_link_real_idracs_give() {
        // The shape of a real R750 DIMM: no MemoryLocation, Links.Processors to CPU.Socket.N.
        let real: Memory = serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/Systems/System.Embedded.1/Memory/DIMM.Socket.B3",
            "Id": "DIMM.Socket.B3",
            "CapacityMiB": 32768,
            "Links": {"Processors": [{"@odata.id": "/redfish/v1/Systems/System.Embedded.1/Processors/CPU.Socket.2"}]},
            "Status": {"Health": "OK", "State": "Enabled"},
        }))
        .unwrap();
        assert_eq!(real.socket(), Some(2));
        assert!(real.is_enabled());
        // Without the link, Dell's id names the socket; MemoryLocation wins where given.
        assert_eq!(dimm("DIMM.Socket.C1", Some("Enabled")).socket(), Some(3));
        let mut located = dimm("DIMM.Socket.A1", Some("Enabled"));
        located.memory_location = Some(redfish_client::resources::computer_system::MemoryLocation {
            socket: Some(2),
            ..Default::default()
        });
        assert_eq!(located.socket(), Some(2));
        assert_eq!(dimm("NVDIMM.Slot.1", Some("Enabled")).socket(), None);
        assert!(!dimm("DIMM.Socket.A2", Some("Absent")).is_enabled());
    }

    #[test]
    fn generation_names_round_trip() {
        for g in Generation::ALL {
            assert_eq!(g.as_str().parse::<Generation>(), Ok(g));
        }
        assert!("zen5".parse::<Generation>().is_err());
    }
}
