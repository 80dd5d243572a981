//! Behaviours of real iDRAC payloads that our own fixtures used to hide: hidden attributes
//! missing from `Bios`, conditions that join with OR across attributes, iDRAC 7.x `Value`
//! rules, and hosts whose CPU is not an AMD EPYC. Registries are built here, answers worked
//! out by hand.

use crate::synthetic::profile;
use crate::{attrs, enumeration, registry, resolve_toml, rule};
use bios_profiles::{
    Error, Generation, HostFacts, HostView, Library, Severity, Status, ValidateOptions, ViolationKind, diff, plan,
    simulate, validate,
};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::Attributes;
use serde_json::json;

fn genoa() -> HostFacts {
    HostFacts {
        model: Some("PowerEdge R7615".into()),
        generation: Some(Generation::Genoa),
        cpu: Some("AMD EPYC 9124 16-Core Processor".into()),
        ..Default::default()
    }
}

/// `Secret` has no rule and the BIOS does not list it; `FixedSocPstate` is hidden while
/// `ApbDis = Disabled` and so also missing from the listing.
fn hidden_registry() -> AttributeRegistry {
    registry(
        vec![
            enumeration("ApbDis", &["Enabled", "Disabled"]),
            enumeration("FixedSocPstate", &["P0", "P1"]),
            enumeration("Secret", &["On", "Off"]),
            enumeration("MemTest", &["Enabled", "Disabled"]),
        ],
        vec![rule(
            "FixedSocPstate",
            "Hidden",
            json!(true),
            &[("ApbDis", "EQU", json!("Disabled"))],
        )],
    )
}

/// What a real iDRAC lists: visible attributes only.
fn hidden_current() -> Attributes {
    attrs(&[("ApbDis", "Disabled"), ("MemTest", "Enabled")])
}

#[test]
fn an_attribute_the_bios_omits_is_hidden_in_diff_and_left_out_of_the_plan() {
    let reg = hidden_registry();
    let current = hidden_current();
    let p = resolve_toml(
        &profile("hid", &[("Secret", "\"Off\""), ("MemTest", "\"Disabled\"")]),
        &genoa(),
    );
    let violations = validate(&p, &HostView::new(&reg, &current), &ValidateOptions::default());
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].kind, ViolationKind::HiddenOnHost);
    assert_eq!(violations[0].severity, Severity::Warning);
    assert!(
        violations[0].to_string().contains("hidden on this host"),
        "{}",
        violations[0]
    );
    let strict = validate(&p, &HostView::new(&reg, &current), &ValidateOptions { strict: true });
    assert_eq!(strict[0].severity, Severity::Error);

    let d = diff(&p, &HostView::new(&reg, &current));
    let secret = d.changes.iter().find(|c| c.attribute == "Secret").unwrap();
    assert_eq!(secret.status, Status::NotApplicable);
    assert!(secret.note.as_deref().unwrap().contains("hidden on this host"));
    let planned = plan(&p, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(planned.bios, attrs(&[("MemTest", "Disabled")]));
}

#[test]
fn a_hidden_attribute_the_profile_makes_visible_is_written_in_the_same_plan() {
    let reg = hidden_registry();
    let current = hidden_current();
    let p = resolve_toml(
        &profile("apb", &[("ApbDis", "\"Enabled\""), ("FixedSocPstate", "\"P0\"")]),
        &genoa(),
    );
    assert!(validate(&p, &HostView::new(&reg, &current), &ValidateOptions::default()).is_empty());
    let d = diff(&p, &HostView::new(&reg, &current));
    let fixed = d.changes.iter().find(|c| c.attribute == "FixedSocPstate").unwrap();
    assert_eq!((fixed.status, fixed.current.as_ref()), (Status::Drift, None));
    let planned = plan(&p, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(planned.bios, attrs(&[("ApbDis", "Enabled"), ("FixedSocPstate", "P0")]));
    // After the job the BIOS shows it, and the diff is clean.
    let after = simulate(&HostView::new(&reg, &current), &planned);
    assert_eq!(after.get("FixedSocPstate"), Some(&"P0".into()));
    assert!(diff(&p, &HostView::new(&reg, &after)).is_clean());
}

#[test]
fn without_the_unhiding_value_a_rule_hidden_attribute_is_an_error_with_its_fix() {
    let reg = hidden_registry();
    let p = resolve_toml(
        &profile("fix", &[("ApbDis", "\"Disabled\""), ("FixedSocPstate", "\"P0\"")]),
        &genoa(),
    );
    let violations = validate(&p, &HostView::new(&reg, &hidden_current()), &ValidateOptions::default());
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].severity, Severity::Error);
    assert_eq!(
        violations[0].to_string(),
        "FixedSocPstate: hidden while ApbDis = Disabled; set ApbDis = Enabled in the profile"
    );
}

/// Real R750 rule: `HttpDev1Ip` is read-only when the device is disabled or DHCP is on.
fn http_registry() -> AttributeRegistry {
    registry(
        vec![
            enumeration("HttpDev1EnDis", &["Enabled", "Disabled"]),
            enumeration("HttpDev1DhcpEnDis", &["Enabled", "Disabled"]),
            json!({"AttributeName": "HttpDev1Ip", "Type": "String", "MaxLength": 15}),
        ],
        vec![rule(
            "HttpDev1Ip",
            "ReadOnly",
            json!(true),
            &[
                ("HttpDev1EnDis", "EQU", json!("Disabled")),
                ("HttpDev1DhcpEnDis", "EQU", json!("Enabled")),
            ],
        )],
    )
}

#[test]
fn one_holding_condition_of_an_or_rule_is_enough_to_lock_and_is_what_the_plan_unlocks() {
    let reg = http_registry();
    let current = attrs(&[
        ("HttpDev1EnDis", "Enabled"),
        ("HttpDev1DhcpEnDis", "Enabled"),
        ("HttpDev1Ip", ""),
    ]);
    let p = resolve_toml(&profile("ip", &[("HttpDev1Ip", "\"192.0.2.7\"")]), &genoa());
    // Under the old AND reading the IP was writable and the iDRAC would have refused the PATCH.
    let planned = plan(&p, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(
        planned.bios,
        attrs(&[("HttpDev1DhcpEnDis", "Disabled"), ("HttpDev1Ip", "192.0.2.7")])
    );
    assert_eq!(
        planned.unlocks[0].reason,
        "HttpDev1Ip is read-only while HttpDev1DhcpEnDis = Enabled (current value)"
    );
}

#[test]
fn an_or_rule_held_by_two_conditions_cannot_be_unlocked_by_one_change() {
    let reg = http_registry();
    let current = attrs(&[
        ("HttpDev1EnDis", "Disabled"),
        ("HttpDev1DhcpEnDis", "Enabled"),
        ("HttpDev1Ip", ""),
    ]);
    let p = resolve_toml(&profile("ip", &[("HttpDev1Ip", "\"192.0.2.7\"")]), &genoa());
    let violations = validate(&p, &HostView::new(&reg, &current), &ValidateOptions::default());
    assert_eq!(
        violations[0].to_string(),
        "HttpDev1Ip: read-only while HttpDev1EnDis = Disabled (current value) and HttpDev1DhcpEnDis = Enabled (current value); no single change frees it; set it in a separate step first, or drop it from the profile"
    );
    assert!(matches!(
        plan(&p, &HostView::new(&reg, &current)),
        Err(Error::Invalid { .. })
    ));
}

/// iDRAC 7.10's third rule kind: `ProcAts` may only be `Disabled` while virtualization is off.
fn ats_registry() -> AttributeRegistry {
    registry(
        vec![
            enumeration("ProcVirtualization", &["Enabled", "Disabled"]),
            enumeration("ProcAts", &["Enabled", "Disabled"]),
        ],
        vec![rule(
            "ProcAts",
            "Value",
            json!([{"ValueName": "Disabled", "ValueDisplayName": "Disabled"}]),
            &[("ProcVirtualization", "EQU", json!("Disabled"))],
        )],
    )
}

#[test]
fn a_value_outside_a_value_rules_list_is_an_error_naming_the_rule() {
    let reg = ats_registry();
    let current = attrs(&[("ProcVirtualization", "Enabled"), ("ProcAts", "Enabled")]);
    let p = resolve_toml(
        &profile(
            "ats",
            &[("ProcVirtualization", "\"Disabled\""), ("ProcAts", "\"Enabled\"")],
        ),
        &genoa(),
    );
    let violations = validate(&p, &HostView::new(&reg, &current), &ValidateOptions::default());
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(
        violations[0].to_string(),
        "ProcAts: \"Enabled\" is not allowed while ProcVirtualization = Disabled: the registry's rules allow only Disabled; set ProcVirtualization = Enabled in the profile"
    );
    // With virtualization on, the rule does not hold and the value is fine.
    let ok = resolve_toml(&profile("ats2", &[("ProcAts", "\"Disabled\"")]), &genoa());
    assert!(validate(&ok, &HostView::new(&reg, &current), &ValidateOptions::default()).is_empty());
}

#[test]
fn a_value_rule_on_the_hosts_own_value_is_freed_by_the_plan() {
    let reg = ats_registry();
    let current = attrs(&[("ProcVirtualization", "Disabled"), ("ProcAts", "Disabled")]);
    let p = resolve_toml(&profile("ats3", &[("ProcAts", "\"Enabled\"")]), &genoa());
    let planned = plan(&p, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(
        planned.bios,
        attrs(&[("ProcAts", "Enabled"), ("ProcVirtualization", "Enabled")])
    );
}

#[test]
fn an_amd_profile_refuses_an_intel_host_up_front_naming_its_cpu() {
    let library = Library::shipped().unwrap();
    let r750 = HostFacts {
        model: Some("PowerEdge R750".into()),
        generation: None,
        cpu: Some("Intel(R) Xeon(R) Gold 6354 CPU @ 3.00GHz".into()),
        ..Default::default()
    };
    let err = library.resolve("performance", &r750).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::NotTargeted { .. }), "{err:?}");
    assert!(
        text.contains("AMD EPYC") && text.contains("Intel(R) Xeon(R) Gold 6354"),
        "{text}"
    );
    // A profile for any CPU (iDRAC settings only) still applies.
    assert!(library.resolve("thermally-challenged", &r750).is_ok());
    // So does an AMD profile on a host whose CPU is unknown.
    assert!(library.resolve("performance", &HostFacts::default()).is_ok());
}
