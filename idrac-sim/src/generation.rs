//! Which iDRAC a tree records, read from its Manager: what picks a host's personality and the
//! shapes of the documents the emulator adds.
//!
//! The Manager's `Model` names the server generation ("16G Monolithic", "17G Monolithic"): 17G
//! and later run iDRAC10, as Dell's Ansible collection reads it (the number before `G`). A
//! Manager whose `Model` says nothing of the kind is read by its firmware: iDRAC10 is 1.x,
//! iDRAC9 is 3.x to 7.x.

use serde_json::Value;

/// The iDRAC a tree records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idrac {
    /// iDRAC9 (14G to 16G, firmware 3.x to 7.x), and any tree that does not say.
    Nine,
    /// iDRAC10 (17G, firmware 1.x).
    Ten,
}

/// The iDRAC the Manager document `manager` describes.
pub fn of(manager: Option<&Value>) -> Idrac {
    let Some(manager) = manager else { return Idrac::Nine };
    if let Some(generation) = manager["Model"].as_str().and_then(server_generation) {
        return if generation >= 17 { Idrac::Ten } else { Idrac::Nine };
    }
    match firmware_major(manager) {
        Some(1) => Idrac::Ten,
        _ => Idrac::Nine,
    }
}

/// Whether the documents the emulator adds take the iDRAC 7.x shapes (schema versions, paths):
/// firmware 7.x, iDRAC10 (which keeps them, assumed) and a tree that does not say; 6.x and
/// older take the 6.00 capture's.
pub fn newer_shapes(manager: Option<&Value>) -> bool {
    of(manager) == Idrac::Ten || manager.and_then(firmware_major).is_none_or(|major| major >= 7)
}

/// The number before `G` in a Manager's `Model` ("17G Monolithic" → 17).
fn server_generation(model: &str) -> Option<u32> {
    let at = model.find('G')?;
    let digits = &model[..at];
    let start = digits.rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    digits[start..].parse().ok()
}

fn firmware_major(manager: &Value) -> Option<u32> {
    manager["FirmwareVersion"].as_str()?.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_generation_in_the_model_decides_and_the_firmware_only_when_the_model_does_not_say() {
        let manager = |model: &str, firmware: &str| json!({"Model": model, "FirmwareVersion": firmware});
        assert_eq!(of(Some(&manager("17G Monolithic", "1.30.10.50"))), Idrac::Ten);
        assert_eq!(of(Some(&manager("18G DCS", "2.00.00.00"))), Idrac::Ten);
        assert_eq!(of(Some(&manager("16G Monolithic", "7.10.30.00"))), Idrac::Nine);
        assert_eq!(of(Some(&manager("15G Monolithic", "1.00.00.00"))), Idrac::Nine);
        assert_eq!(of(Some(&manager("", "1.20.70.50"))), Idrac::Ten);
        assert_eq!(of(Some(&manager("iDRAC", "7.00.60.00"))), Idrac::Nine);
        assert_eq!(of(None), Idrac::Nine);
        assert!(newer_shapes(Some(&manager("17G Monolithic", "1.30.10.50"))));
        assert!(newer_shapes(Some(&manager("16G Monolithic", "7.00.60.00"))));
        assert!(!newer_shapes(Some(&manager("15G Monolithic", "6.10.30.00"))));
        assert!(newer_shapes(None));
    }
}
