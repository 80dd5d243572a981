//! The `[boot]` section of a profile: the boot mode, the boot order as device references
//! (classes such as "the first PXE NIC" or exact FQDDs) and the devices to disable; the one
//! grammar of those references; and their resolution against a host's boot devices into the
//! BIOS attributes that stage them with the rest of the profile, in the same job.
//!
//! A Dell host's boot devices are what its BIOS lists in `SetBootOrderEn` (the enabled devices,
//! in boot order) and `SetBootOrderDis` (the disabled ones), by FQDD, as every real iDRAC9
//! capture shows them (two R750s, an AMD R7615). The order is staged, and judged, through those
//! same attributes: what is written is what the BIOS reads back, so `diff` shows boot drift as
//! attribute drift and `plan` writes it in the one PATCH.
//!
//! An HPE host keeps its boot order beside the BIOS, in HPE's boot settings: its devices by
//! structured boot string (`NIC.Slot.1.1.IPv4`, `NVMe.DriveBay.2.5`, as the recorded DL385
//! Gen10 Plus v2 names them) and the order as one list, `PersistentBootConfigOrder`, which has
//! no disabled devices. The engine carries that list beside the BIOS values under its own name,
//! so the order diffs, plans and verifies the same way; it is staged in HPE's settings object.

use crate::setting::{Confidence, Setting, Wanted, When};
use redfish_client::oem::{dell, hpe};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use redfish_client::resources::boot::BootOption;
use serde::{Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;

/// A kind of boot device, told by its name: a Dell FQDD's prefix, an HPE structured boot
/// string's prefix and protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceClass {
    /// A PXE or UEFI HTTP device (`NIC.PxeDevice.*`, `NIC.HttpDevice.*`), or another `NIC.*`
    /// (HPE: `NIC.*`, `OCP.*`).
    Network,
    /// A UEFI PXE device (`NIC.PxeDevice.N-1`; HPE: a network device's `….IPv4`, `….IPv6`).
    Pxe,
    /// A UEFI HTTP boot device (`NIC.HttpDevice.N-1`; HPE: `….Httpv4`, `….Httpv6`).
    Http,
    /// A disk or its controller (`Disk.*`, `RAID.*`, `AHCI.*`, `HardDisk.*`; HPE: `HD.*`,
    /// `NVMe.*`).
    Disk,
    /// An optical drive, the iDRAC's virtual one included (`Optical.*`; HPE: `CD.*`).
    Optical,
    /// A USB device or the iDRAC's virtual floppy (`USB.*`, `Floppy.*`; HPE: `Generic.USB.*`).
    Usb,
}

impl DeviceClass {
    /// Every class, as the grammar lists them.
    pub const ALL: [Self; 6] = [
        Self::Network,
        Self::Pxe,
        Self::Http,
        Self::Disk,
        Self::Optical,
        Self::Usb,
    ];

    /// The name in profile files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Network => "network",
            Self::Pxe => "pxe",
            Self::Http => "http",
            Self::Disk => "disk",
            Self::Optical => "optical",
            Self::Usb => "usb",
        }
    }

    /// Whether a device named `fqdd` (a Dell FQDD or an HPE structured boot string) belongs
    /// to this class.
    pub fn contains(self, fqdd: &str) -> bool {
        let has = |prefix: &str| starts_with_ignoring_case(fqdd, prefix);
        let protocol = |names: &[&str]| {
            fqdd.rsplit_once('.')
                .is_some_and(|(_, last)| names.iter().any(|n| last.eq_ignore_ascii_case(n)))
        };
        let hpe_network = has("NIC.") || has("OCP.");
        match self {
            Self::Network => hpe_network,
            Self::Pxe => has("NIC.PxeDevice.") || (hpe_network && protocol(&["IPv4", "IPv6"])),
            Self::Http => has("NIC.HttpDevice.") || (hpe_network && protocol(&["Httpv4", "Httpv6"])),
            Self::Disk => ["Disk.", "RAID.", "AHCI.", "HardDisk.", "HD.", "NVMe."]
                .iter()
                .any(|p| has(p)),
            Self::Optical => has("Optical.") || has("CD."),
            Self::Usb => has("USB.") || has("Floppy.") || has("Generic.USB."),
        }
    }
}

impl fmt::Display for DeviceClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which devices of a class a reference takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pick {
    /// The Nth (from 1), in the order of their FQDDs.
    Nth(usize),
    /// Every one not placed before, in the order of their FQDDs.
    All,
}

/// One entry of `[boot.order]` or `[boot.disabled]`: a device class with an optional pick
/// (`pxe`, `disk:2`, `network:*`), or one device by its FQDD (`NIC.PxeDevice.1-1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DeviceRef {
    /// Devices of a class.
    Class {
        /// The class.
        class: DeviceClass,
        /// Which of them.
        pick: Pick,
    },
    /// Exactly this device.
    Fqdd(String),
}

impl DeviceRef {
    /// Parses one reference. An FQDD is anything with a dot in it; otherwise a class name,
    /// optionally followed by `:N` (N ≥ 1) or `:*`. Case is ignored in class names.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty boot device reference".into());
        }
        if text.contains('.') {
            let valid = text.chars().all(|c| c.is_ascii_alphanumeric() || ".-:_".contains(c));
            if !valid {
                return Err(format!(
                    "`{text}` is not an FQDD: letters, digits, `.`, `-`, `:` and `_` only (e.g. NIC.PxeDevice.1-1)"
                ));
            }
            return Ok(Self::Fqdd(text.to_owned()));
        }
        let (name, pick) = match text.split_once(':') {
            None => (text, Pick::Nth(1)),
            Some((name, "*")) => (name, Pick::All),
            Some((name, n)) => match n.parse::<usize>() {
                Ok(n) if n >= 1 => (name, Pick::Nth(n)),
                _ => {
                    return Err(format!(
                        "`{text}`: after `:` comes a device number from 1, or `*` for all of them"
                    ));
                }
            },
        };
        let class = DeviceClass::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let classes: Vec<&str> = DeviceClass::ALL.iter().map(|c| c.as_str()).collect();
                format!(
                    "`{text}` is neither a device class ({}) nor an FQDD (which has dots, e.g. NIC.PxeDevice.1-1)",
                    classes.join(", ")
                )
            })?;
        Ok(Self::Class { class, pick })
    }
}

impl fmt::Display for DeviceRef {
    /// As written in files: `pxe` (for `pxe:1`), `disk:2`, `network:*`, `NIC.PxeDevice.1-1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Class {
                class,
                pick: Pick::Nth(1),
            } => write!(f, "{class}"),
            Self::Class {
                class,
                pick: Pick::Nth(n),
            } => write!(f, "{class}:{n}"),
            Self::Class { class, pick: Pick::All } => write!(f, "{class}:*"),
            Self::Fqdd(fqdd) => f.write_str(fqdd),
        }
    }
}

impl Serialize for DeviceRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One entry of `[boot]` with the evidence every setting carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootEntry<T> {
    /// What it asks for.
    pub value: T,
    /// Why, in one line.
    pub why: String,
    /// The id of the source that backs it.
    pub source: String,
    /// How sure we are.
    pub confidence: Confidence,
    /// The source's words (required when stated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// Which profile wrote it (`my-nodes [boot]`).
    pub origin: String,
}

/// A profile's `[boot]` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BootSection {
    /// `[boot.mode]`: the BIOS `BootMode` (`Uefi`, `Bios`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<BootEntry<String>>,
    /// `[boot.order]`: the devices that boot first, in this order; every other enabled device
    /// follows in its current order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<BootEntry<Vec<DeviceRef>>>,
    /// `[boot.disabled]`: devices taken out of the boot order (kept, but never booted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<BootEntry<Vec<DeviceRef>>>,
}

impl BootSection {
    /// No entry.
    pub fn is_empty(&self) -> bool {
        self.mode.is_none() && self.order.is_none() && self.disabled.is_none()
    }

    /// Whether resolving it needs the host's boot devices (an order or disabled devices).
    pub fn needs_devices(&self) -> bool {
        self.order.is_some() || self.disabled.is_some()
    }

    /// This section with `child`'s entries on top (a child's entry replaces its parent's).
    #[must_use]
    pub fn overlaid_with(self, child: &Self) -> Self {
        Self {
            mode: child.mode.clone().or(self.mode),
            order: child.order.clone().or(self.order),
            disabled: child.disabled.clone().or(self.disabled),
        }
    }

    /// The entries, each as a label (`boot.order`) and its value as written (`pxe, disk`)
    /// with its evidence, for listings and citations.
    pub fn entries(&self) -> Vec<(&'static str, BootEntry<String>)> {
        let list = |e: &BootEntry<Vec<DeviceRef>>| BootEntry {
            value: e.value.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
            why: e.why.clone(),
            source: e.source.clone(),
            confidence: e.confidence,
            quote: e.quote.clone(),
            origin: e.origin.clone(),
        };
        let mut out = Vec::new();
        if let Some(m) = &self.mode {
            out.push(("boot.mode", m.clone()));
        }
        if let Some(o) = &self.order {
            out.push(("boot.order", list(o)));
        }
        if let Some(d) = &self.disabled {
            out.push(("boot.disabled", list(d)));
        }
        out
    }
}

/// One boot device of a host, as its BIOS lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BootDevice {
    /// Its FQDD (`NIC.PxeDevice.1-1`, `RAID.SL.3-1`).
    pub fqdd: String,
    /// Whether the BIOS boots it (listed in `SetBootOrderEn`, not `SetBootOrderDis`).
    pub enabled: bool,
    /// Its boot option's display name, where the host's `BootOptions` tell it
    /// ([`BootDevices::label`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its boot option's reference (`Boot0000`), where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
}

impl BootDevice {
    /// The classes it belongs to.
    pub fn classes(&self) -> Vec<DeviceClass> {
        DeviceClass::ALL
            .into_iter()
            .filter(|c| c.contains(&self.fqdd))
            .collect()
    }
}

impl fmt::Display for BootDevice {
    /// `NIC.PxeDevice.1-1 (PXE Device 1: Integrated NIC 1 Port 1 Partition 1)`, with
    /// `, disabled` when it is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fqdd).and_then(|()| match (&self.name, self.enabled) {
            (Some(name), true) => write!(f, " ({name})"),
            (Some(name), false) => write!(f, " ({name}, disabled)"),
            (None, true) => Ok(()),
            (None, false) => f.write_str(" (disabled)"),
        })
    }
}

/// A host's boot devices: the enabled ones in boot order, then the disabled ones; and the
/// settings a boot order is written as on this host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BootDevices {
    /// The devices.
    pub devices: Vec<BootDevice>,
    /// The setting that holds the enabled devices in order (`SetBootOrderEn`,
    /// `PersistentBootConfigOrder`).
    #[serde(skip)]
    pub order_setting: &'static str,
    /// The setting that holds the disabled devices, where the host has one (`SetBootOrderDis`).
    #[serde(skip)]
    pub disabled_setting: Option<&'static str>,
}

/// The comma lists of FQDDs a BIOS attribute (and its `…2` continuation) holds.
fn fqdd_list(bios: &Attributes, name: &str) -> Vec<String> {
    [name.to_owned(), format!("{name}2")]
        .iter()
        .filter_map(|n| bios.get(n).and_then(AttributeValue::as_str))
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect()
}

impl BootDevices {
    /// The boot devices a BIOS lists in `SetBootOrderEn` and `SetBootOrderDis` (with their
    /// `…2` continuations, which 16G BIOSes add), or `None` when it lists no `SetBootOrderEn`:
    /// then the BIOS cannot stage a boot order with the profile's other values.
    pub fn from_bios(bios: &Attributes) -> Option<Self> {
        if !bios.contains_key(dell::SET_BOOT_ORDER_ENABLED) {
            return None;
        }
        let mut devices: Vec<BootDevice> = Vec::new();
        let mut add = |fqdd: String, enabled: bool| {
            if !devices.iter().any(|d| d.fqdd.eq_ignore_ascii_case(&fqdd)) {
                devices.push(BootDevice {
                    fqdd,
                    enabled,
                    name: None,
                    option: None,
                });
            }
        };
        for f in fqdd_list(bios, dell::SET_BOOT_ORDER_ENABLED) {
            add(f, true);
        }
        for f in fqdd_list(bios, dell::SET_BOOT_ORDER_DISABLED) {
            add(f, false);
        }
        Some(Self {
            devices,
            order_setting: dell::SET_BOOT_ORDER_ENABLED,
            disabled_setting: bios
                .contains_key(dell::SET_BOOT_ORDER_DISABLED)
                .then_some(dell::SET_BOOT_ORDER_DISABLED),
        })
    }

    /// The boot devices of an HPE host's boot settings: those of the boot order `order`, in
    /// that order, each named after its boot source (display name, boot option), then any
    /// source the order leaves out. Every one boots (the order has no disabled list).
    pub fn from_hpe(sources: &[hpe::BootSource], order: &[String]) -> Self {
        let mut devices: Vec<BootDevice> = Vec::new();
        let named = order
            .iter()
            .map(String::as_str)
            .chain(sources.iter().map(|s| s.structured_boot_string.as_str()));
        for name in named.map(str::trim).filter(|n| !n.is_empty()) {
            if devices.iter().any(|d| d.fqdd.eq_ignore_ascii_case(name)) {
                continue;
            }
            let source = sources
                .iter()
                .find(|s| s.structured_boot_string.eq_ignore_ascii_case(name));
            devices.push(BootDevice {
                fqdd: name.to_owned(),
                enabled: true,
                name: source.and_then(|s| s.boot_string.clone()),
                option: source.and_then(hpe::BootSource::option_reference),
            });
        }
        Self {
            devices,
            order_setting: hpe::BOOT_ORDER,
            disabled_setting: None,
        }
    }

    /// Names the devices after the host's boot options where the pairing is certain: a PXE or
    /// HTTP device N and the option whose display name starts `PXE Device N:` or
    /// `HTTP Device N:` (as real iDRACs name them), and a class with exactly one device and
    /// exactly one option that looks like it (a disk: `Disk`, `SSD`, `NVMe`, `RAID`,
    /// `boot volume`; an optical drive: `Optical`, `CD`, `DVD`). Others keep their FQDD only.
    pub fn label(&mut self, options: &[BootOption]) {
        for device in &mut self.devices {
            if let Some(prefix) = numbered_name(&device.fqdd)
                && let Some(o) = options
                    .iter()
                    .find(|o| o.display_name.as_deref().is_some_and(|n| n.starts_with(&prefix)))
            {
                device.name.clone_from(&o.display_name);
                device.option = Some(o.reference().to_owned());
            }
        }
        for (class, words) in [
            (
                DeviceClass::Disk,
                &["disk", "ssd", "nvme", "raid", "boot volume", "hard drive"][..],
            ),
            (DeviceClass::Optical, &["optical", "cd", "dvd"][..]),
        ] {
            let looks = |o: &&BootOption| {
                o.display_name.as_deref().is_some_and(|n| {
                    let n = n.to_ascii_lowercase();
                    !n.starts_with("unavailable:") && words.iter().any(|w| n.contains(w))
                })
            };
            let mine: Vec<usize> = (0..self.devices.len())
                .filter(|&i| class.contains(&self.devices[i].fqdd))
                .collect();
            let theirs: Vec<&BootOption> = options.iter().filter(looks).collect();
            if let ([i], [o]) = (mine.as_slice(), theirs.as_slice())
                && self.devices[*i].name.is_none()
            {
                self.devices[*i].name.clone_from(&o.display_name);
                self.devices[*i].option = Some(o.reference().to_owned());
            }
        }
    }

    /// Every device, for messages: `NIC.PxeDevice.1-1 (PXE Device 1: ...), RAID.SL.3-1`.
    pub fn describe(&self) -> String {
        if self.devices.is_empty() {
            return "no boot device".into();
        }
        self.devices
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The devices a reference names, in the order it takes them.
    fn select(&self, reference: &DeviceRef) -> Vec<&BootDevice> {
        match reference {
            DeviceRef::Fqdd(fqdd) => self
                .devices
                .iter()
                .filter(|d| d.fqdd.eq_ignore_ascii_case(fqdd))
                .collect(),
            DeviceRef::Class { class, pick } => {
                let mut members: Vec<&BootDevice> = self.devices.iter().filter(|d| class.contains(&d.fqdd)).collect();
                members.sort_by(|a, b| natural(&a.fqdd, &b.fqdd));
                match pick {
                    Pick::All => members,
                    Pick::Nth(n) => members.into_iter().nth(n - 1).into_iter().collect(),
                }
            }
        }
    }
}

/// Whether `text` starts with `prefix`, ignoring ASCII case (safe on any text from a BMC).
fn starts_with_ignoring_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// How a real iDRAC starts the display name of PXE or HTTP device N (`NIC.PxeDevice.1-1` is
/// `PXE Device 1: …`, `NIC.HttpDevice.1-1` is `HTTP Device 1: …`).
fn numbered_name(fqdd: &str) -> Option<String> {
    [("NIC.PxeDevice.", "PXE Device "), ("NIC.HttpDevice.", "HTTP Device ")]
        .into_iter()
        .find_map(|(kind, shown)| {
            if !starts_with_ignoring_case(fqdd, kind) {
                return None;
            }
            let n = fqdd.get(kind.len()..)?.split('-').next()?;
            (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).then(|| format!("{shown}{n}:"))
        })
}

/// FQDDs compared with their numbers as numbers: `Disk.Bay.2:…` before `Disk.Bay.10:…`,
/// `NIC.PxeDevice.1-1` before `NIC.PxeDevice.2-1`.
fn natural(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<(bool, String)> {
        let mut out: Vec<(bool, String)> = Vec::new();
        for c in s.chars() {
            let digit = c.is_ascii_digit();
            match out.last_mut() {
                Some((d, text)) if *d == digit => text.push(c),
                _ => out.push((digit, c.to_string())),
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let order = match (x.0, y.0) {
            (true, true) => {
                let (nx, ny) = (x.1.trim_start_matches('0'), y.1.trim_start_matches('0'));
                nx.len().cmp(&ny.len()).then_with(|| nx.cmp(ny))
            }
            _ => x.1.to_ascii_lowercase().cmp(&y.1.to_ascii_lowercase()),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    pa.len().cmp(&pb.len())
}

/// Why a `[boot]` section cannot be resolved for a host: one sentence naming the reference and
/// what the host has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootProblem(pub String);

impl fmt::Display for BootProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a setting made from `entry` carries: why, source, confidence, quote, origin.
fn backing<T>(e: &BootEntry<T>) -> (&str, &str, Confidence, Option<&str>, &str) {
    (
        e.why.as_str(),
        e.source.as_str(),
        e.confidence,
        e.quote.as_deref(),
        e.origin.as_str(),
    )
}

/// The devices `list` names, in order, without repeats; an error names a reference that
/// matches nothing, or one that names a device an earlier reference took.
fn resolve_list<'d>(
    list: &[DeviceRef],
    devices: &'d BootDevices,
    what: &str,
) -> Result<Vec<&'d BootDevice>, BootProblem> {
    let mut placed: Vec<&BootDevice> = Vec::new();
    for reference in list {
        let found = devices.select(reference);
        if found.is_empty() {
            let hint = match reference {
                DeviceRef::Class {
                    class: DeviceClass::Pxe | DeviceClass::Http | DeviceClass::Network,
                    ..
                } => {
                    "; a PXE or HTTP device the BIOS has turned off (PxeDevNEnDis, HttpDevNEnDis) has no boot entry until a job turns it on: enable it in an apply of its own first"
                }
                _ => "",
            };
            return Err(BootProblem(format!(
                "{what} `{reference}` matches no boot device on this host; it has {}{hint}",
                devices.describe()
            )));
        }
        let single = !matches!(reference, DeviceRef::Class { pick: Pick::All, .. });
        for device in found {
            if placed.iter().any(|p| p.fqdd == device.fqdd) {
                if single {
                    return Err(BootProblem(format!(
                        "{what} `{reference}` is {}, which an earlier entry already names",
                        device.fqdd
                    )));
                }
                continue;
            }
            placed.push(device);
        }
    }
    Ok(placed)
}

/// The settings that put `section` into effect on a host whose BIOS has the values `bios` and
/// whose boot devices are `devices` (`None` when it has no boot order rftune writes):
/// `BootMode`; the devices' order setting (`SetBootOrderEn`, `PersistentBootConfigOrder`), the
/// enabled devices in the new order (the ordered ones first, every other enabled device after
/// them in its current order, the disabled ones left out); the disabled setting
/// (`SetBootOrderDis`), where the host has one. `profile` names the profile the settings come
/// from.
pub fn resolve(
    section: &BootSection,
    bios: &Attributes,
    devices: Option<&BootDevices>,
    profile: &str,
) -> Result<Vec<Setting>, BootProblem> {
    let mut out = Vec::new();
    let setting = |attribute: &str, value: String, entry_why: (&str, &str, Confidence, Option<&str>, &str)| {
        let (why, source, confidence, quote, origin) = entry_why;
        Setting {
            attribute: attribute.to_owned(),
            wanted: Wanted::Value(AttributeValue::String(value)),
            why: why.to_owned(),
            source: source.to_owned(),
            confidence,
            confidence_note: None,
            quote: quote.map(str::to_owned),
            generations: Vec::new(),
            when: When::default(),
            origin: origin.to_owned(),
            excluded: Vec::new(),
            decisions: Vec::new(),
            asid_split: None,
            bound_from: None,
        }
    };
    if let Some(mode) = &section.mode {
        out.push(setting(dell::BOOT_MODE, mode.value.clone(), backing(mode)));
    }
    if !section.needs_devices() {
        return Ok(out);
    }
    let Some(devices) = devices else {
        return Err(BootProblem(format!(
            "profile {profile} orders boot devices, but this host's BIOS lists no {}: it cannot stage a boot order with the profile's values",
            dell::SET_BOOT_ORDER_ENABLED
        )));
    };
    if let Some(mode) = &section.mode {
        let current = bios.get(dell::BOOT_MODE).and_then(AttributeValue::as_str);
        if current.is_some_and(|c| !c.eq_ignore_ascii_case(&mode.value)) {
            return Err(BootProblem(format!(
                "profile {profile} changes the boot mode to {} (the host boots {}) and orders boot devices: the devices of the new mode are known only once it is in force; apply the mode in a profile of its own first",
                mode.value,
                current.unwrap_or_default()
            )));
        }
    }
    let ordered = match &section.order {
        Some(o) => resolve_list(&o.value, devices, "boot.order")?,
        None => Vec::new(),
    };
    let disabled = match &section.disabled {
        Some(d) => {
            if devices.disabled_setting.is_none() {
                let how = if devices.order_setting == hpe::BOOT_ORDER {
                    format!(
                        "this host's boot order ({}) lists only devices that boot: on an HPE host a device stops booting through its BIOS setting (such as Slot1NicBoot1 = Disabled), which [bios] can set",
                        hpe::BOOT_ORDER
                    )
                } else {
                    format!("this host's BIOS lists no {}", dell::SET_BOOT_ORDER_DISABLED)
                };
                return Err(BootProblem(format!(
                    "profile {profile} disables boot devices, but {how}"
                )));
            }
            resolve_list(&d.value, devices, "boot.disabled")?
        }
        None => Vec::new(),
    };
    if let Some(both) = ordered.iter().find(|o| disabled.iter().any(|d| d.fqdd == o.fqdd)) {
        return Err(BootProblem(format!(
            "{} is both in boot.order and in boot.disabled",
            both.fqdd
        )));
    }
    let is = |list: &[&BootDevice], d: &BootDevice| list.iter().any(|x| x.fqdd == d.fqdd);
    let mut enabled: Vec<&str> = ordered.iter().map(|d| d.fqdd.as_str()).collect();
    enabled.extend(
        devices
            .devices
            .iter()
            .filter(|d| d.enabled && !is(&ordered, d) && !is(&disabled, d))
            .map(|d| d.fqdd.as_str()),
    );
    let mut off: Vec<&str> = devices
        .devices
        .iter()
        .filter(|d| !d.enabled && !is(&ordered, d))
        .map(|d| d.fqdd.as_str())
        .collect();
    off.extend(disabled.iter().filter(|d| d.enabled).map(|d| d.fqdd.as_str()));
    let entry = section.order.as_ref().or(section.disabled.as_ref());
    if let Some(e) = entry {
        out.push(setting(devices.order_setting, enabled.join(","), backing(e)));
        if let Some(disabled_setting) = devices.disabled_setting {
            let dis = section.disabled.as_ref().unwrap_or(e);
            out.push(setting(disabled_setting, off.join(","), backing(dis)));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bios(en: &str, dis: &str) -> Attributes {
        let mut a = Attributes::new();
        a.insert("BootMode".into(), "Uefi".into());
        a.insert("SetBootOrderEn".into(), en.into());
        a.insert("SetBootOrderDis".into(), dis.into());
        a
    }

    fn entry<T>(value: T) -> BootEntry<T> {
        BootEntry {
            value,
            why: "w".into(),
            source: "s".into(),
            confidence: Confidence::Inferred,
            quote: None,
            origin: "p [boot]".into(),
        }
    }

    fn refs(list: &[&str]) -> Vec<DeviceRef> {
        list.iter().map(|r| DeviceRef::parse(r).unwrap()).collect()
    }

    fn order(list: &[&str]) -> BootSection {
        BootSection {
            order: Some(entry(refs(list))),
            ..BootSection::default()
        }
    }

    fn values(settings: &[Setting]) -> Vec<(String, String)> {
        settings
            .iter()
            .map(|s| (s.attribute.clone(), s.wanted.to_string()))
            .collect()
    }

    #[test]
    fn the_grammar_takes_classes_picks_and_fqdds_and_refuses_the_rest() {
        assert_eq!(
            DeviceRef::parse("pxe").unwrap(),
            DeviceRef::Class {
                class: DeviceClass::Pxe,
                pick: Pick::Nth(1)
            }
        );
        assert_eq!(DeviceRef::parse(" Disk:2 ").unwrap().to_string(), "disk:2");
        assert_eq!(DeviceRef::parse("network:*").unwrap().to_string(), "network:*");
        assert_eq!(DeviceRef::parse("pxe:1").unwrap().to_string(), "pxe");
        assert_eq!(
            DeviceRef::parse("Disk.Bay.2:Enclosure.Internal.0-1").unwrap(),
            DeviceRef::Fqdd("Disk.Bay.2:Enclosure.Internal.0-1".into())
        );
        for (bad, says) in [
            ("", "empty"),
            ("pxe:0", "a device number from 1"),
            ("pxe:first", "a device number from 1"),
            ("floppy", "neither a device class"),
            ("NIC.Pxe Device.1", "not an FQDD"),
        ] {
            let err = DeviceRef::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn classes_follow_the_fqdd_prefixes_real_idracs_use() {
        let d = |f: &str| BootDevice {
            fqdd: f.into(),
            enabled: true,
            name: None,
            option: None,
        };
        assert_eq!(
            d("NIC.PxeDevice.1-1").classes(),
            [DeviceClass::Network, DeviceClass::Pxe]
        );
        assert_eq!(
            d("NIC.HttpDevice.1-1").classes(),
            [DeviceClass::Network, DeviceClass::Http]
        );
        for disk in [
            "Disk.Bay.2:Enclosure.Internal.0-1",
            "RAID.SL.1-2",
            "AHCI.SL.6-2",
            "HardDisk.List.1-1",
        ] {
            assert_eq!(d(disk).classes(), [DeviceClass::Disk], "{disk}");
        }
        assert_eq!(d("Optical.iDRACVirtual.1-1").classes(), [DeviceClass::Optical]);
        assert_eq!(d("Floppy.iDRACVirtual.1-1").classes(), [DeviceClass::Usb]);
        assert!(
            d("Unknown.Unknown.2-1").classes().is_empty(),
            "OS-created entries have no class"
        );
    }

    /// The real R7615 (AMD 16G, iDRAC 7.00.60) lists `SetBootOrderEn =
    /// "RAID.SL.1-2,NIC.PxeDevice.1-1"`: PXE first means swapping them, and nothing else moves.
    #[test]
    fn pxe_first_on_a_real_r7615_s_list_moves_the_nic_ahead_of_the_raid() {
        let host = bios("RAID.SL.1-2,NIC.PxeDevice.1-1", "");
        let devices = BootDevices::from_bios(&host).unwrap();
        let settings = resolve(&order(&["pxe", "disk"]), &host, Some(&devices), "p").unwrap();
        assert_eq!(
            values(&settings),
            [
                ("SetBootOrderEn".to_owned(), "NIC.PxeDevice.1-1,RAID.SL.1-2".to_owned()),
                ("SetBootOrderDis".to_owned(), String::new())
            ]
        );
        assert_eq!(settings[0].origin, "p [boot]");
        // Asking for what the host already has resolves to its current values: in sync.
        let same = resolve(&order(&["disk"]), &host, Some(&devices), "p").unwrap();
        assert_eq!(same[0].wanted.to_string(), "RAID.SL.1-2,NIC.PxeDevice.1-1");
    }

    #[test]
    fn unnamed_devices_keep_their_order_behind_the_named_ones_and_disabled_ones_move() {
        let host = bios(
            "NIC.PxeDevice.2-1,Disk.Bay.10:Enclosure.Internal.0-1,NIC.PxeDevice.1-1,Disk.Bay.2:Enclosure.Internal.0-1,Optical.iDRACVirtual.1-1",
            "NIC.HttpDevice.1-1",
        );
        let devices = BootDevices::from_bios(&host).unwrap();
        // The first of a class is the lowest-numbered, whatever the current order.
        let s = resolve(&order(&["pxe", "disk"]), &host, Some(&devices), "p").unwrap();
        assert_eq!(
            s[0].wanted.to_string(),
            "NIC.PxeDevice.1-1,Disk.Bay.2:Enclosure.Internal.0-1,NIC.PxeDevice.2-1,Disk.Bay.10:Enclosure.Internal.0-1,Optical.iDRACVirtual.1-1"
        );
        // Naming a disabled device enables it; disabling takes one out.
        let mut section = order(&["http", "pxe:*"]);
        section.disabled = Some(entry(refs(&["optical"])));
        let s = resolve(&section, &host, Some(&devices), "p").unwrap();
        assert_eq!(
            values(&s),
            [
                (
                    "SetBootOrderEn".to_owned(),
                    "NIC.HttpDevice.1-1,NIC.PxeDevice.1-1,NIC.PxeDevice.2-1,Disk.Bay.10:Enclosure.Internal.0-1,Disk.Bay.2:Enclosure.Internal.0-1"
                        .to_owned()
                ),
                ("SetBootOrderDis".to_owned(), "Optical.iDRACVirtual.1-1".to_owned())
            ]
        );
    }

    #[test]
    fn a_reference_that_matches_nothing_names_what_the_host_has() {
        let host = bios("NIC.PxeDevice.1-1,RAID.SL.3-1", "");
        let mut devices = BootDevices::from_bios(&host).unwrap();
        let option = |id: &str, name: &str| -> BootOption {
            serde_json::from_value(serde_json::json!({
                "@odata.id": format!("/redfish/v1/Systems/System.Embedded.1/BootOptions/{id}"),
                "Id": id, "BootOptionReference": id, "DisplayName": name, "BootOptionEnabled": true
            }))
            .unwrap()
        };
        devices.label(&[
            option("Boot0000", "PXE Device 1: Integrated NIC 1 Port 1 Partition 1"),
            option("Boot0001", "Disk Controller: boot volume"),
            option("Boot0002", "Unavailable: ubuntu"),
        ]);
        assert_eq!(devices.devices[0].option.as_deref(), Some("Boot0000"));
        let err = resolve(&order(&["pxe:2"]), &host, Some(&devices), "p").unwrap_err();
        assert_eq!(
            err.to_string(),
            "boot.order `pxe:2` matches no boot device on this host; it has NIC.PxeDevice.1-1 (PXE Device 1: Integrated NIC 1 Port 1 Partition 1), RAID.SL.3-1 (Disk Controller: boot volume); a PXE or HTTP device the BIOS has turned off (PxeDevNEnDis, HttpDevNEnDis) has no boot entry until a job turns it on: enable it in an apply of its own first"
        );
        let err = resolve(&order(&["NIC.HttpDevice.1-1"]), &host, Some(&devices), "p").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("boot.order `NIC.HttpDevice.1-1` matches no boot device"),
            "{err}"
        );
        let err = resolve(&order(&["network", "pxe"]), &host, Some(&devices), "p").unwrap_err();
        assert_eq!(
            err.to_string(),
            "boot.order `pxe` is NIC.PxeDevice.1-1, which an earlier entry already names"
        );
    }

    #[test]
    fn a_bios_without_the_order_attributes_cannot_take_an_order_but_can_take_a_mode() {
        let mut host = Attributes::new();
        host.insert("BootMode".into(), "Uefi".into());
        assert_eq!(BootDevices::from_bios(&host), None);
        let err = resolve(&order(&["pxe"]), &host, None, "p").unwrap_err();
        assert!(err.to_string().contains("lists no SetBootOrderEn"), "{err}");
        let mode = BootSection {
            mode: Some(entry("Uefi".to_owned())),
            ..BootSection::default()
        };
        assert_eq!(
            values(&resolve(&mode, &host, None, "p").unwrap()),
            [("BootMode".to_owned(), "Uefi".to_owned())]
        );
        // A mode change and an order together are refused: the new mode's devices are unknown.
        let mut both = order(&["pxe"]);
        both.mode = Some(entry("Bios".to_owned()));
        let en = bios("NIC.PxeDevice.1-1", "");
        let devices = BootDevices::from_bios(&en).unwrap();
        let err = resolve(&both, &en, Some(&devices), "p").unwrap_err();
        assert!(err.to_string().contains("changes the boot mode to Bios"), "{err}");
    }

    /// Boot sources as the recorded DL385 Gen10 Plus v2 names them (numbers and strings of
    /// that shape, not its values).
    fn hpe_sources() -> Vec<hpe::BootSource> {
        [
            (
                "0021",
                "NIC.Slot.5.1.IPv4",
                "Slot 5 Port 1 : Network Adapter (PXE IPv4)",
            ),
            (
                "0027",
                "NIC.Slot.1.1.Httpv4",
                "Slot 1 Port 1 : Network Adapter (HTTP(S) IPv4)",
            ),
            ("000F", "NVMe.DriveBay.2.5", "NVMe Drive Port 7A Box 2 Bay 5"),
            ("0013", "Unknown.Unknown.200.1", "Windows Boot Manager"),
            ("0030", "HD.Slot.2.2", "Slot 2 : Smart Array - RAID1 Logical Drive 1"),
            ("0031", "OCP.Slot.10.1.IPv4", "OCP Slot 10 Port 1 : Adapter (PXE IPv4)"),
            ("0032", "Generic.USB.1.1", "Generic USB Boot"),
            ("0033", "CD.Virtual.2.1", "iLO Virtual USB 2 : Virtual CD/DVD ROM"),
        ]
        .into_iter()
        .map(|(n, s, b)| hpe::BootSource {
            structured_boot_string: s.into(),
            boot_string: Some(b.into()),
            boot_option_number: Some(n.into()),
            uefi_device_path: None,
        })
        .collect()
    }

    #[test]
    fn an_hpe_order_is_one_list_of_structured_boot_strings_with_no_disabled_devices() {
        let sources = hpe_sources();
        let listed: Vec<String> = sources.iter().map(|s| s.structured_boot_string.clone()).collect();
        let devices = BootDevices::from_hpe(&sources, &listed[..6]);
        assert_eq!(devices.devices.len(), 8, "the sources the order leaves out follow it");
        assert_eq!(devices.devices[0].option.as_deref(), Some("Boot0021"));
        let classes = |name: &str| {
            devices
                .devices
                .iter()
                .find(|d| d.fqdd == name)
                .map(BootDevice::classes)
                .unwrap()
        };
        assert_eq!(classes("NIC.Slot.5.1.IPv4"), [DeviceClass::Network, DeviceClass::Pxe]);
        assert_eq!(classes("OCP.Slot.10.1.IPv4"), [DeviceClass::Network, DeviceClass::Pxe]);
        assert_eq!(
            classes("NIC.Slot.1.1.Httpv4"),
            [DeviceClass::Network, DeviceClass::Http]
        );
        assert_eq!(classes("HD.Slot.2.2"), [DeviceClass::Disk]);
        assert_eq!(classes("NVMe.DriveBay.2.5"), [DeviceClass::Disk]);
        assert_eq!(classes("CD.Virtual.2.1"), [DeviceClass::Optical]);
        assert_eq!(classes("Generic.USB.1.1"), [DeviceClass::Usb]);
        assert!(classes("Unknown.Unknown.200.1").is_empty());

        let settings = resolve(&order(&["disk", "http"]), &Attributes::new(), Some(&devices), "p").unwrap();
        assert_eq!(
            values(&settings),
            [(
                "PersistentBootConfigOrder".to_owned(),
                "HD.Slot.2.2,NIC.Slot.1.1.Httpv4,NIC.Slot.5.1.IPv4,NVMe.DriveBay.2.5,Unknown.Unknown.200.1,OCP.Slot.10.1.IPv4,Generic.USB.1.1,CD.Virtual.2.1"
                    .to_owned()
            )]
        );
        let disabling = BootSection {
            disabled: Some(entry(refs(&["usb"]))),
            ..BootSection::default()
        };
        let err = resolve(&disabling, &Attributes::new(), Some(&devices), "p").unwrap_err();
        assert!(
            err.0.contains("lists only devices that boot") && err.0.contains("[bios]"),
            "{err}"
        );
    }

    #[test]
    fn fqdds_sort_with_their_numbers_as_numbers() {
        let mut v = vec!["Disk.Bay.10:E.0-1", "Disk.Bay.2:E.0-1", "Disk.Bay.1:E.0-1"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(v, ["Disk.Bay.1:E.0-1", "Disk.Bay.2:E.0-1", "Disk.Bay.10:E.0-1"]);
    }
}
