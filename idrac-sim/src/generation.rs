//! Which BMC a tree records, read from its service root and Manager: what picks a host's
//! personality and the shapes of the documents the emulator adds.
//!
//! HPE's iLO names itself in the service root's `Oem.Hpe.Manager[0].ManagerType` ("iLO 5"), as
//! HPE's python-ilorest-library reads it. For Dell, the Manager's `Model` names the server
//! generation ("16G Monolithic", "17G Monolithic"): 17G and later run iDRAC10, as Dell's Ansible
//! collection reads it (the number before `G`). A Manager whose `Model` says nothing of the kind
//! is read by its firmware: iDRAC10 is 1.x, iDRAC9 is 3.x to 7.x.

use serde_json::Value;

/// The BMC a tree records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bmc {
    /// iDRAC9 (14G to 16G, firmware 3.x to 7.x), and any tree that does not say.
    Idrac9,
    /// iDRAC10 (17G, firmware 1.x).
    Idrac10,
    /// HPE's iLO (the iLO 5 of a ProLiant Gen10 Plus is what is modelled; a later iLO is served
    /// the same way).
    Ilo,
}

/// The BMC a tree's service root `root` and Manager `manager` describe (the Manager at Dell's
/// path: an iLO tree is told by its root).
pub fn of(root: Option<&Value>, manager: Option<&Value>) -> Bmc {
    let ilo = root
        .and_then(|r| r.pointer("/Oem/Hpe/Manager/0/ManagerType"))
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("iLO"));
    if ilo {
        return Bmc::Ilo;
    }
    let Some(manager) = manager else { return Bmc::Idrac9 };
    if let Some(generation) = manager["Model"].as_str().and_then(server_generation) {
        return if generation >= 17 { Bmc::Idrac10 } else { Bmc::Idrac9 };
    }
    match firmware_major(manager) {
        Some(1) => Bmc::Idrac10,
        _ => Bmc::Idrac9,
    }
}

/// Whether the documents the emulator adds take the iDRAC 7.x shapes (schema versions, paths):
/// firmware 7.x, iDRAC10 (which keeps them, assumed) and a tree that does not say; 6.x and
/// older take the 6.00 capture's.
pub fn newer_shapes(manager: Option<&Value>) -> bool {
    of(None, manager) == Bmc::Idrac10 || manager.and_then(firmware_major).is_none_or(|major| major >= 7)
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
        let of = |manager: Option<&Value>| of(None, manager);
        assert_eq!(of(Some(&manager("17G Monolithic", "1.30.10.50"))), Bmc::Idrac10);
        assert_eq!(of(Some(&manager("18G DCS", "2.00.00.00"))), Bmc::Idrac10);
        assert_eq!(of(Some(&manager("16G Monolithic", "7.10.30.00"))), Bmc::Idrac9);
        assert_eq!(of(Some(&manager("15G Monolithic", "1.00.00.00"))), Bmc::Idrac9);
        assert_eq!(of(Some(&manager("", "1.20.70.50"))), Bmc::Idrac10);
        assert_eq!(of(Some(&manager("iDRAC", "7.00.60.00"))), Bmc::Idrac9);
        assert_eq!(of(None), Bmc::Idrac9);
        assert!(newer_shapes(Some(&manager("17G Monolithic", "1.30.10.50"))));
        assert!(newer_shapes(Some(&manager("16G Monolithic", "7.00.60.00"))));
        assert!(!newer_shapes(Some(&manager("15G Monolithic", "6.10.30.00"))));
        assert!(newer_shapes(None));
    }

    #[test]
    fn an_ilo_names_itself_in_the_service_root() {
        let root = json!({"Vendor": "HPE", "Oem": {"Hpe": {"Manager": [{"ManagerType": "iLO 5"}]}}});
        assert_eq!(of(Some(&root), None), Bmc::Ilo);
        let dell = json!({"Vendor": "Dell", "Oem": {"Dell": {"ServiceTag": "ABC1234"}}});
        assert_eq!(of(Some(&dell), None), Bmc::Idrac9);
    }
}
