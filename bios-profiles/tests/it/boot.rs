//! `[boot]` on every fixture host: the order resolves against the BIOS's own device lists,
//! validates against the registry, goes into the one plan with the profile's other values, and
//! reads back clean once simulated; a child's boot entries replace its parent's.

use super::{Fixture, MODELS, library_with};
use bios_profiles::{BootDevices, Status, ValidateOptions, diff, plan, simulate, validate};

const DISK_FIRST: &str = r#"
name = "disk-first"
description = "boot the installed OS, PXE after it"
extends = "performance"
[boot.order]
devices = ["disk", "pxe"]
why = "The OS is installed: boot it, and fall back to the network."
source = "snapshot"
confidence = "inferred"
[boot.disabled]
devices = ["optical"]
why = "Nothing boots from the virtual optical drive here."
source = "snapshot"
confidence = "inferred"
"#;

const NETWORK_CHILD: &str = r#"
name = "network-first"
description = "the same, network first"
extends = "disk-first"
[boot.order]
devices = ["network", "disk"]
why = "Reinstall from the network at every boot."
source = "snapshot"
confidence = "inferred"
"#;

#[test]
fn a_boot_order_is_one_more_bios_value_in_the_profile_s_one_plan_on_every_fixture() {
    let library = library_with(&[DISK_FIRST]);
    for model in MODELS {
        let f = Fixture::load(model);
        let resolved = library.resolve("disk-first", &f.host()).unwrap();
        let devices = BootDevices::from_bios(&f.current).expect("every fixture lists SetBootOrderEn");
        let with_boot = resolved.with_boot(&f.current, Some(&devices)).unwrap();
        let en = &with_boot.bios["SetBootOrderEn"];
        assert_eq!(en.origin, "disk-first [boot]", "{model}");
        let first = en.wanted.to_string();
        assert!(first.split(',').next().unwrap().contains('.'), "{model}: {first}");
        assert!(
            !first.contains("Optical"),
            "{model}: the optical drive is disabled: {first}"
        );
        let host = f.state();
        let errors: Vec<String> = validate(&with_boot, &host, &ValidateOptions::default())
            .iter()
            .filter(|v| v.severity == bios_profiles::Severity::Error)
            .map(ToString::to_string)
            .collect();
        assert!(errors.is_empty(), "{model}: {errors:?}");
        let d = diff(&with_boot, &host);
        let change = d.changes.iter().find(|c| c.attribute == "SetBootOrderEn").unwrap();
        assert_eq!(change.status, Status::Drift, "{model}: the fixtures boot PXE first");
        let p = plan(&with_boot, &host).unwrap();
        assert!(
            p.bios.contains_key("SetBootOrderEn") && p.bios.contains_key("SetBootOrderDis"),
            "{model}: {p:?}"
        );
        assert!(
            p.bios.len() > 2,
            "{model}: the order rides with the profile's values: {p:?}"
        );
        let after = simulate(&host, &p);
        let clean = diff(&with_boot, &bios_profiles::HostView { bios: &after, ..host });
        assert!(
            clean.is_clean(),
            "{model}: {:?}",
            clean
                .changes
                .iter()
                .filter(|c| !c.status.is_clean())
                .collect::<Vec<_>>()
        );
        // Resolved again against the values after the job, the order asks for what is there.
        let devices = BootDevices::from_bios(&after).unwrap();
        let again = resolved.with_boot(&after, Some(&devices)).unwrap();
        assert_eq!(
            again.bios["SetBootOrderEn"].wanted.to_string(),
            first,
            "{model}: stable"
        );
    }
}

#[test]
fn a_child_s_boot_order_replaces_its_parent_s_and_keeps_the_parent_s_disabled_devices() {
    let library = library_with(&[DISK_FIRST, NETWORK_CHILD]);
    let f = Fixture::load("r7625");
    let resolved = library.resolve("network-first", &f.host()).unwrap();
    assert_eq!(resolved.boot.order.as_ref().unwrap().origin, "network-first [boot]");
    assert_eq!(resolved.boot.disabled.as_ref().unwrap().origin, "disk-first [boot]");
    let devices = BootDevices::from_bios(&f.current).unwrap();
    let with_boot = resolved.with_boot(&f.current, Some(&devices)).unwrap();
    assert_eq!(
        with_boot.bios["SetBootOrderEn"].wanted.to_string(),
        "NIC.PxeDevice.1-1,RAID.SL.3-1"
    );
    assert_eq!(
        with_boot.bios["SetBootOrderDis"].wanted.to_string(),
        "Optical.iDRACVirtual.1-1"
    );
    // Setting the same attribute in [bios] too is refused, naming both.
    let both = library_with(&[&format!(
        "{DISK_FIRST}[bios.SetBootOrderEn]\nvalue = \"RAID.SL.3-1\"\nwhy = \"w\"\nsource = \"snapshot\"\nconfidence = \"inferred\"\n"
    )]);
    let err = both
        .resolve("disk-first", &f.host())
        .unwrap()
        .with_boot(&f.current, Some(&devices))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("SetBootOrderEn is set both in [bios] (disk-first) and by [boot]"),
        "{err}"
    );
}
