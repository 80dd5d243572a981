//! What the host keeps of its boot: the UEFI boot sequence in force (FQDD, boot option,
//! enabled), one staged for the next BIOS job, and the system's one-time boot override.

use redfish_client::oem::dell;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::Value;

/// The boot's state.
#[derive(Debug)]
pub(crate) struct Boot {
    /// `Boot` of the ComputerSystem as last written (the one-time boot override).
    pub(crate) overrides: serde_json::Map<String, Value>,
    /// The UEFI boot sequence in force.
    pub(crate) sequence: Vec<BootDev>,
    /// A boot sequence staged for the next BIOS job (boot sources, `Boot.BootOrder`).
    pub(crate) pending: Option<Vec<BootDev>>,
    /// iLO: `Boot.BootOrder` as the last POST left it (the tree's until one changes it), and
    /// one written since, for the next POST.
    pub(crate) order: Option<Vec<Value>>,
    pub(crate) order_pending: Option<Vec<Value>>,
    /// iLO: HPE's boot settings (the persistent order staged there, and the last outcome).
    pub(crate) hpe: HpeBoot,
}

/// What an iLO's boot settings object holds beyond the order in force.
#[derive(Debug, Default)]
pub(crate) struct HpeBoot {
    /// `PersistentBootConfigOrder` as written for the next POST, as sent.
    pub(crate) pending: Option<Value>,
    /// `Time` and `Messages` of the last POST that processed a written order.
    pub(crate) outcome: Option<Value>,
}

impl Boot {
    /// The boot as the tree records it.
    pub(crate) fn new(fixture: &crate::fixture::Fixture) -> Self {
        Self {
            overrides: fixture
                .doc(&fixture.places.system)
                .and_then(|d| d.get("Boot"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            sequence: initial_sequence(fixture),
            pending: None,
            order: None,
            order_pending: None,
            hpe: HpeBoot::default(),
        }
    }
}

/// One device of the UEFI boot sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BootDev {
    /// Its FQDD (`NIC.PxeDevice.1-1`).
    pub(crate) fqdd: String,
    /// Its boot option (`Boot0000`), where the tree pairs one.
    pub(crate) option: Option<String>,
    /// Whether it boots.
    pub(crate) enabled: bool,
}

impl BootDev {
    /// An entry an OS created (`Unknown.Unknown.N-1`): never in `SetBootOrderEn`/`Dis`.
    pub(crate) fn os_created(&self) -> bool {
        self.fqdd.starts_with("Unknown.")
    }
}

/// The boot sequence a tree records: Dell's `UefiBootSeq` (either path) in `Index` order, each
/// paired by position with `Boot.BootOrder` when both list as many (as on both real iDRAC9
/// captures, and as Dell's own Ansible module pairs them).
pub(crate) fn initial_sequence(fixture: &crate::fixture::Fixture) -> Vec<BootDev> {
    let sources = [dell::DELL_BOOT_SOURCES, dell::BOOT_SOURCES].into_iter().find_map(|p| {
        fixture
            .doc(p)
            .and_then(|d| d.pointer("/Attributes/UefiBootSeq"))
            .and_then(Value::as_array)
    });
    let mut seq: Vec<(u64, String, bool)> = sources
        .into_iter()
        .flatten()
        .filter_map(|e| {
            Some((
                e.get("Index")?.as_u64()?,
                e.get("Name")?.as_str()?.to_owned(),
                e.get("Enabled").and_then(Value::as_bool).unwrap_or(true),
            ))
        })
        .collect();
    seq.sort_by_key(|(i, _, _)| *i);
    let order: Vec<String> = fixture
        .doc(dell::SYSTEM)
        .and_then(|d| d.pointer("/Boot/BootOrder"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let paired = order.len() == seq.len();
    seq.into_iter()
        .enumerate()
        .map(|(i, (_, fqdd, enabled))| BootDev {
            fqdd,
            option: paired.then(|| order[i].clone()),
            enabled,
        })
        .collect()
}

/// The comma list of a BIOS attribute.
pub(crate) fn list(bios: &Attributes, name: &str) -> Vec<String> {
    bios.get(name)
        .and_then(AttributeValue::as_str)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `seq` with the devices `first` names (in that order, enabled) ahead of the others.
pub(crate) fn reordered(seq: &[BootDev], first: &[String]) -> Vec<BootDev> {
    let mut out: Vec<BootDev> = first
        .iter()
        .filter_map(|f| seq.iter().find(|d| d.fqdd.eq_ignore_ascii_case(f)))
        .map(|d| BootDev {
            enabled: true,
            ..d.clone()
        })
        .collect();
    let rest: Vec<BootDev> = seq
        .iter()
        .filter(|d| !out.iter().any(|o| o.fqdd == d.fqdd))
        .cloned()
        .collect();
    out.extend(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(fqdd: &str, enabled: bool) -> BootDev {
        BootDev {
            fqdd: fqdd.into(),
            option: None,
            enabled,
        }
    }

    #[test]
    fn named_devices_move_to_the_front_enabled_and_the_rest_keep_their_order() {
        let seq = [dev("A.1", true), dev("B.1", false), dev("C.1", true)];
        let got: Vec<(String, bool)> = reordered(&seq, &["B.1".into(), "Z.9".into()])
            .into_iter()
            .map(|d| (d.fqdd, d.enabled))
            .collect();
        assert_eq!(
            got,
            [
                ("B.1".to_owned(), true),
                ("A.1".to_owned(), true),
                ("C.1".to_owned(), true)
            ]
        );
    }
}
