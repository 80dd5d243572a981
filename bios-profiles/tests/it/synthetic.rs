//! Validation, diff and plan on small registries built here, with answers worked out by hand.

use crate::{attrs, enumeration, registry, resolve_toml, rule};
use bios_profiles::{
    Error, Generation, HostFacts, HostView, ResolvedProfile, Severity, Status, ValidateOptions, Violation,
    ViolationKind, diff, plan, simulate, simulate_idrac, validate, validate_idrac,
};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde_json::json;
use std::collections::BTreeMap;

/// A small BIOS registry in Dell's shape, on a host at the Performance preset:
/// - `ProcCStates` is read-only unless `SysProfile = Custom`; PerfOptimized forces Disabled,
///   PerfPerWattOptimizedDapc forces Enabled.
/// - `ProcPwrPerf` is read-only under either preset (Dell's repeated-EQU list, an OR); the
///   presets force MaxPerf and SysDbpm.
/// - `MemPatrolScrub` is read-only unless Custom, and no preset forces it.
/// - `FixedSocPstate` is hidden and read-only while `ApbDis = Disabled`.
/// - `CpuAcpiCstC2Latency` (18..=1000) is read-only while `ProcCStates = Disabled`.
/// - `AgesaVersion` is read-only, statically.
pub(crate) fn bios_registry() -> AttributeRegistry {
    registry(
        vec![
            enumeration("SysProfile", &["PerfOptimized", "PerfPerWattOptimizedDapc", "Custom"]),
            enumeration("ProcCStates", &["Enabled", "Disabled"]),
            enumeration("ProcPwrPerf", &["MaxPerf", "SysDbpm", "OsDbpm"]),
            enumeration("MemPatrolScrub", &["Standard", "Extended", "Disabled"]),
            enumeration("ApbDis", &["Enabled", "Disabled"]),
            enumeration("FixedSocPstate", &["FixedSocPstate0", "FixedSocPstate1"]),
            enumeration("NumaNodesPerSocket", &["1", "2", "4"]),
            enumeration("MemTest", &["Enabled", "Disabled"]),
            json!({"AttributeName": "CpuAcpiCstC2Latency", "Type": "Integer", "LowerBound": 18, "UpperBound": 1000, "ScalarIncrement": 1}),
            json!({"AttributeName": "CpuMinSevAsid", "Type": "Integer", "LowerBound": 1, "UpperBound": 509, "ScalarIncrement": 4}),
            json!({"AttributeName": "AgesaVersion", "Type": "String", "ReadOnly": true, "MaxLength": 8}),
            json!({"AttributeName": "AssetTag", "Type": "String", "MaxLength": 4}),
        ],
        vec![
            rule(
                "ProcCStates",
                "ReadOnly",
                json!(true),
                &[("SysProfile", "NEQ", json!("Custom"))],
            ),
            rule(
                "ProcPwrPerf",
                "ReadOnly",
                json!(true),
                &[
                    ("SysProfile", "EQU", json!("PerfOptimized")),
                    ("SysProfile", "EQU", json!("PerfPerWattOptimizedDapc")),
                ],
            ),
            rule(
                "MemPatrolScrub",
                "ReadOnly",
                json!(true),
                &[("SysProfile", "NEQ", json!("Custom"))],
            ),
            rule(
                "ProcCStates",
                "CurrentValue",
                json!("Disabled"),
                &[("SysProfile", "EQU", json!("PerfOptimized"))],
            ),
            rule(
                "ProcCStates",
                "CurrentValue",
                json!("Enabled"),
                &[("SysProfile", "EQU", json!("PerfPerWattOptimizedDapc"))],
            ),
            rule(
                "ProcPwrPerf",
                "CurrentValue",
                json!("MaxPerf"),
                &[("SysProfile", "EQU", json!("PerfOptimized"))],
            ),
            rule(
                "ProcPwrPerf",
                "CurrentValue",
                json!("SysDbpm"),
                &[("SysProfile", "EQU", json!("PerfPerWattOptimizedDapc"))],
            ),
            rule(
                "FixedSocPstate",
                "Hidden",
                json!(true),
                &[("ApbDis", "EQU", json!("Disabled"))],
            ),
            rule(
                "FixedSocPstate",
                "ReadOnly",
                json!(true),
                &[("ApbDis", "EQU", json!("Disabled"))],
            ),
            rule(
                "CpuAcpiCstC2Latency",
                "ReadOnly",
                json!(true),
                &[("ProcCStates", "EQU", json!("Disabled"))],
            ),
        ],
    )
}

/// The host's current values, consistent with the registry's rules at PerfOptimized.
pub(crate) fn bios_current() -> Attributes {
    let mut a = attrs(&[
        ("SysProfile", "PerfOptimized"),
        ("ProcCStates", "Disabled"),
        ("ProcPwrPerf", "MaxPerf"),
        ("MemPatrolScrub", "Standard"),
        ("ApbDis", "Disabled"),
        ("FixedSocPstate", "FixedSocPstate0"),
        ("NumaNodesPerSocket", "1"),
        ("MemTest", "Enabled"),
        ("AgesaVersion", "1.0.0.B"),
        ("AssetTag", ""),
    ]);
    a.insert("CpuAcpiCstC2Latency".into(), AttributeValue::Integer(800));
    a.insert("CpuMinSevAsid".into(), AttributeValue::Integer(1));
    a
}

/// Validates `profile` leniently on the host of [`bios_registry`] and [`bios_current`].
pub(crate) fn validate_on_synthetic_host(profile: &ResolvedProfile) -> Vec<Violation> {
    let (registry, current) = (bios_registry(), bios_current());
    validate(
        profile,
        &HostView::new(&registry, &current),
        &ValidateOptions::default(),
    )
}

/// A profile named `name` with `(attribute, value)` BIOS settings (values are TOML literals).
pub(crate) fn profile(name: &str, settings: &[(&str, &str)]) -> String {
    let mut text = format!("name = \"{name}\"\ndescription = \"test\"\n");
    for (attribute, value) in settings {
        text.push_str(&format!(
            "[bios.{attribute}]\nvalue = {value}\nwhy = \"test\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n"
        ));
    }
    text
}

fn genoa() -> HostFacts {
    HostFacts {
        model: Some("PowerEdge R7625".into()),
        generation: Some(Generation::Genoa),
        cpu: None,
        ..Default::default()
    }
}

#[test]
fn diff_reports_each_status() {
    let mut text = profile(
        "statuses",
        &[
            ("SysProfile", "\"PerfPerWattOptimizedDapc\""), // drift
            ("ProcCStates", "\"Enabled\""),                 // forced by the Dapc preset
            ("ProcPwrPerf", "\"SysDbpm\""),                 // forced by the Dapc preset
            ("NumaNodesPerSocket", "\"1\""),                // in sync
            ("MemTest", "\"Disabled\""),                    // pending
            ("ApbDis", "\"Disabled\""),                     // in sync now, but pending Enabled
            ("DfCState", "\"Disabled\""),                   // not on this host
        ],
    );
    text.push_str(
        "[bios.EfficiencyOptimizedMode]\nvalue = \"Disabled\"\nwhy = \"t\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\ngenerations = [\"milan\"]\n",
    );
    let resolved = resolve_toml(&text, &genoa());
    let (reg, current) = (bios_registry(), bios_current());
    let pending = attrs(&[("MemTest", "Disabled"), ("ApbDis", "Enabled")]);
    let d = diff(&resolved, &HostView::new(&reg, &current).with_pending(&pending));
    let statuses: Vec<(&str, Status)> = d.changes.iter().map(|c| (c.attribute.as_str(), c.status)).collect();
    assert_eq!(
        statuses,
        [
            ("ApbDis", Status::PendingConflict),
            ("DfCState", Status::NotApplicable),
            ("EfficiencyOptimizedMode", Status::NotApplicable),
            ("MemTest", Status::Pending),
            ("NumaNodesPerSocket", Status::InSync),
            ("ProcCStates", Status::Forced),
            ("ProcPwrPerf", Status::Forced),
            ("SysProfile", Status::Drift),
        ]
    );
    let counts = d.counts();
    assert_eq!(
        [
            counts.in_sync,
            counts.drift,
            counts.pending,
            counts.pending_conflict,
            counts.not_applicable,
            counts.forced
        ],
        [1, 1, 1, 1, 2, 2]
    );
    assert!(!d.is_clean());
    insta::assert_json_snapshot!("diff_each_status", d);

    // The plan writes SysProfile (the presets then force C-states and CPU power) and MemTest
    // (pending values are not assumed to apply). ApbDis is already right.
    let plan = plan(&resolved, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(
        plan.bios,
        attrs(&[("MemTest", "Disabled"), ("SysProfile", "PerfPerWattOptimizedDapc")])
    );
    assert!(plan.unlocks.is_empty());
    let after = simulate(&HostView::new(&reg, &current), &plan);
    assert_eq!(after["ProcCStates"], "Enabled".into());
    assert_eq!(after["ProcPwrPerf"], "SysDbpm".into());
    assert!(diff(&resolved, &HostView::new(&reg, &after)).is_clean());
}

#[test]
fn plan_adds_the_unlock_a_profile_leaves_out() {
    let resolved = resolve_toml(
        &profile(
            "cstates",
            &[("ProcCStates", "\"Enabled\""), ("CpuAcpiCstC2Latency", "18")],
        ),
        &genoa(),
    );
    let (reg, current) = (bios_registry(), bios_current());
    // ProcCStates is read-only and forced to Disabled by PerfOptimized; only Custom frees it
    // (the Dapc preset would force Enabled, but keeps it read-only). C2 latency is read-only
    // while C-states are disabled, so it follows.
    assert!(validate(&resolved, &HostView::new(&reg, &current), &ValidateOptions::default()).is_empty());
    let p = plan(&resolved, &HostView::new(&reg, &current)).unwrap();
    let mut want = attrs(&[("ProcCStates", "Enabled"), ("SysProfile", "Custom")]);
    want.insert("CpuAcpiCstC2Latency".into(), 18.into());
    assert_eq!(p.bios, want);
    assert_eq!(p.unlocks.len(), 1);
    let unlock = &p.unlocks[0];
    assert_eq!(
        (unlock.attribute.as_str(), &unlock.value),
        ("SysProfile", &"Custom".into())
    );
    assert_eq!(unlock.frees, ["CpuAcpiCstC2Latency", "ProcCStates"]);
    assert_eq!(
        unlock.reason,
        "SysProfile = PerfOptimized (current value) forces ProcCStates = Disabled"
    );
    let after = simulate(&HostView::new(&reg, &current), &p);
    assert!(diff(&resolved, &HostView::new(&reg, &after)).is_clean());
    // Without the unlock, the firmware would refuse ProcCStates and the host would stay put.
    let mut without = p.clone();
    without.bios.remove("SysProfile");
    let stuck = simulate(&HostView::new(&reg, &current), &without);
    assert_eq!(stuck["ProcCStates"], "Disabled".into());
    assert_eq!(stuck["CpuAcpiCstC2Latency"], 800.into());
}

#[test]
fn a_preset_in_the_same_profile_that_forces_another_value_is_an_error() {
    let resolved = resolve_toml(
        &profile(
            "conflict",
            &[("SysProfile", "\"PerfOptimized\""), ("ProcCStates", "\"Enabled\"")],
        ),
        &genoa(),
    );
    let (reg, mut current) = (bios_registry(), bios_current());
    current.insert("SysProfile".into(), "Custom".into());
    current.insert("ProcCStates".into(), "Enabled".into());
    let violations = validate(&resolved, &HostView::new(&reg, &current), &ValidateOptions::default());
    assert_eq!(violations.len(), 1);
    let v = &violations[0];
    assert_eq!((v.attribute.as_str(), v.severity), ("ProcCStates", Severity::Error));
    assert!(matches!(v.kind, ViolationKind::PresetConflict { .. }));
    assert_eq!(
        v.to_string(),
        "ProcCStates: SysProfile = PerfOptimized forces ProcCStates = Disabled, but the profile asks for Enabled; set SysProfile = Custom in the profile"
    );
    let err = plan(&resolved, &HostView::new(&reg, &current)).unwrap_err();
    assert!(matches!(err, Error::Invalid { ref violations, .. } if violations.len() == 1));
    // The host is in sync on ProcCStates today, but the planned state would move it.
    let d = diff(&resolved, &HostView::new(&reg, &current));
    assert_eq!(d.changes[0].attribute, "ProcCStates");
    assert_eq!(d.changes[0].status, Status::InSync);
    assert_eq!(d.changes[1].status, Status::Drift);
}

#[test]
fn a_lock_the_profile_itself_sets_is_explained() {
    let resolved = resolve_toml(
        &profile(
            "locked",
            &[("SysProfile", "\"PerfOptimized\""), ("MemPatrolScrub", "\"Extended\"")],
        ),
        &genoa(),
    );
    let violations = validate_on_synthetic_host(&resolved);
    let messages: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        ["MemPatrolScrub: read-only while SysProfile = PerfOptimized; set SysProfile = Custom in the profile"]
    );
    // Setting it to the value it already has is fine, locked or not.
    let same = resolve_toml(
        &profile(
            "same",
            &[("SysProfile", "\"PerfOptimized\""), ("MemPatrolScrub", "\"Standard\"")],
        ),
        &genoa(),
    );
    assert!(validate_on_synthetic_host(&same).is_empty());
    let p = plan(&same, &HostView::new(&bios_registry(), &bios_current())).unwrap();
    assert!(p.is_empty());
}

#[test]
fn fixed_soc_pstate_is_hidden_unless_apbdis_is_enabled() {
    let (reg, current) = (bios_registry(), bios_current());
    let options = ValidateOptions::default();
    // The profile keeps ApbDis disabled and asks for another P-state: hidden.
    let hidden = resolve_toml(
        &profile(
            "hidden",
            &[("ApbDis", "\"Disabled\""), ("FixedSocPstate", "\"FixedSocPstate1\"")],
        ),
        &genoa(),
    );
    let messages: Vec<String> = validate(&hidden, &HostView::new(&reg, &current), &options)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        messages,
        ["FixedSocPstate: hidden while ApbDis = Disabled; set ApbDis = Enabled in the profile"]
    );
    // Leaving ApbDis out: the plan enables it to reach the P-state.
    let unlocked = resolve_toml(
        &profile("unlocked", &[("FixedSocPstate", "\"FixedSocPstate1\"")]),
        &genoa(),
    );
    let p = plan(&unlocked, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(
        p.bios,
        attrs(&[("ApbDis", "Enabled"), ("FixedSocPstate", "FixedSocPstate1")])
    );
    assert_eq!(
        p.unlocks[0].reason,
        "FixedSocPstate is hidden while ApbDis = Disabled (current value)"
    );
    // Both set by the profile: two plain writes.
    let both = resolve_toml(
        &profile(
            "both",
            &[("ApbDis", "\"Enabled\""), ("FixedSocPstate", "\"FixedSocPstate1\"")],
        ),
        &genoa(),
    );
    let p = plan(&both, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(p.bios.len(), 2);
    assert!(p.unlocks.is_empty());
    // The hidden value already matches: nothing to do, nothing wrong.
    let matching = resolve_toml(
        &profile(
            "matching",
            &[("ApbDis", "\"Disabled\""), ("FixedSocPstate", "\"FixedSocPstate0\"")],
        ),
        &genoa(),
    );
    assert!(validate(&matching, &HostView::new(&reg, &current), &options).is_empty());
    assert!(plan(&matching, &HostView::new(&reg, &current)).unwrap().is_empty());
}

#[test]
fn absent_attributes_are_not_applicable_unless_strict_and_typos_are_unknown() {
    let mut text = profile("absent", &[("DfCState", "\"Disabled\""), ("ProcCState", "\"Enabled\"")]);
    text.push_str(
        "[bios.PowerProfileSelect]\nvalue = \"HighPerformanceMode\"\nwhy = \"t\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\ngenerations = [\"genoa\"]\n",
    );
    let resolved = resolve_toml(&text, &genoa());
    let (reg, current) = (bios_registry(), bios_current());
    let lenient = validate(&resolved, &HostView::new(&reg, &current), &ValidateOptions::default());
    let summary: Vec<(&str, Severity)> = lenient.iter().map(|v| (v.attribute.as_str(), v.severity)).collect();
    assert_eq!(
        summary,
        [
            ("DfCState", Severity::Warning),
            ("PowerProfileSelect", Severity::Error),
            ("ProcCState", Severity::Error),
        ]
    );
    assert!(matches!(lenient[0].kind, ViolationKind::NotApplicable));
    assert!(matches!(
        lenient[1].kind,
        ViolationKind::UnknownAttribute {
            expected_on: Some(Generation::Genoa),
            ..
        }
    ));
    let ViolationKind::UnknownAttribute { suggestions, .. } = &lenient[2].kind else {
        panic!("{:?}", lenient[2])
    };
    assert_eq!(suggestions, &["ProcCStates"]);
    let strict = validate(
        &resolved,
        &HostView::new(&reg, &current),
        &ValidateOptions { strict: true },
    );
    assert_eq!(strict[0].severity, Severity::Error);
    // A warning does not block the plan; the absent setting is simply left out.
    let na = resolve_toml(
        &profile("na", &[("DfCState", "\"Disabled\""), ("MemTest", "\"Disabled\"")]),
        &genoa(),
    );
    let p = plan(&na, &HostView::new(&reg, &current)).unwrap();
    assert_eq!(p.bios, attrs(&[("MemTest", "Disabled")]));
}

#[test]
fn values_are_checked_against_type_list_bounds_step_and_length() {
    let resolved = resolve_toml(
        &profile(
            "values",
            &[
                ("NumaNodesPerSocket", "1"),
                ("ProcCStates", "\"enabled\""),
                ("CpuAcpiCstC2Latency", "\"800\""),
                ("CpuMinSevAsid", "3"),
                ("AssetTag", "\"RACK12\""),
                ("AgesaVersion", "\"2.0\""),
            ],
        ),
        &genoa(),
    );
    let violations = validate_on_synthetic_host(&resolved);
    let kinds: Vec<(String, String)> = violations
        .iter()
        .map(|v| {
            let kind = serde_json::to_value(&v.kind).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned();
            (v.attribute.clone(), kind)
        })
        .collect();
    let want = [
        ("AgesaVersion", "static_read_only"),
        ("AssetTag", "bad_length"),
        ("CpuAcpiCstC2Latency", "wrong_type"),
        ("CpuMinSevAsid", "not_on_increment"),
        ("NumaNodesPerSocket", "wrong_type"),
        ("ProcCStates", "not_in_list"),
    ];
    assert_eq!(kinds, want.map(|(a, k)| (a.to_owned(), k.to_owned())));
    let out_of_range = resolve_toml(&profile("range", &[("CpuAcpiCstC2Latency", "2000")]), &genoa());
    let v = validate_on_synthetic_host(&out_of_range);
    assert!(matches!(
        v[0].kind,
        ViolationKind::OutOfRange {
            lower: Some(18),
            upper: Some(1000),
            ..
        }
    ));
    // A static read-only attribute at the value it already has is only a check.
    let agesa = resolve_toml(&profile("agesa", &[("AgesaVersion", "\"1.0.0.B\"")]), &genoa());
    assert!(validate_on_synthetic_host(&agesa).is_empty());
}

/// A manager registry with the fixture's one dependency: the cap value is read-only while
/// capping is disabled.
pub(crate) fn manager_registry() -> AttributeRegistry {
    registry(
        vec![
            enumeration("ServerPwr.1.PowerCapSetting", &["Enabled", "Disabled"]),
            json!({"AttributeName": "ServerPwr.1.PowerCapValue", "Type": "Integer", "LowerBound": 400, "UpperBound": 1500}),
            enumeration(
                "ThermalSettings.1.ThermalProfile",
                &["Default Thermal Profile Settings", "Maximum Performance"],
            ),
            enumeration("Lockdown.1.SystemLockdown", &["Enabled", "Disabled"]),
        ],
        vec![rule(
            "ServerPwr.1.PowerCapValue",
            "ReadOnly",
            json!(true),
            &[("ServerPwr.1.PowerCapSetting", "EQU", json!("Disabled"))],
        )],
    )
}

pub(crate) fn idrac_current() -> BTreeMap<AttributeGroup, Attributes> {
    let mut system = attrs(&[
        ("ServerPwr.1.PowerCapSetting", "Disabled"),
        ("ThermalSettings.1.ThermalProfile", "Default Thermal Profile Settings"),
    ]);
    system.insert("ServerPwr.1.PowerCapValue".into(), 1400.into());
    BTreeMap::from([
        (AttributeGroup::System, system),
        (
            AttributeGroup::Idrac,
            attrs(&[("Lockdown.1.SystemLockdown", "Disabled")]),
        ),
    ])
}

/// A profile with iDRAC settings (`(group, attribute, value literal)`).
pub(crate) fn idrac_profile(name: &str, settings: &[(&str, &str, &str)]) -> String {
    let mut text = format!("name = \"{name}\"\ndescription = \"test\"\n");
    for (group, attribute, value) in settings {
        text.push_str(&format!(
            "[idrac.\"{attribute}\"]\ngroup = \"{group}\"\nvalue = {value}\nwhy = \"test\"\nsource = \"dell-c6615-note\"\nconfidence = \"inferred\"\n"
        ));
    }
    text
}

#[test]
fn idrac_settings_are_validated_diffed_and_planned() {
    let resolved = resolve_toml(
        &idrac_profile(
            "idrac",
            &[
                ("System", "ThermalSettings.1.ThermalProfile", "\"Maximum Performance\""),
                ("System", "ServerPwr.1.PowerCapSetting", "\"Disabled\""),
                ("System", "Lockdown.1.SystemLockdown", "\"Disabled\""),
                ("iDRAC", "ThermalSettings.1.FanSpeedOffset", "\"Low\""),
            ],
        ),
        &genoa(),
    );
    let (registry, current, idrac) = (bios_registry(), bios_current(), idrac_current());
    let host = HostView::new(&registry, &current).with_idrac(&idrac);
    let violations = validate_idrac(&resolved, &host, &manager_registry(), &ValidateOptions::default());
    let summary: Vec<(&str, Severity)> = violations.iter().map(|v| (v.attribute.as_str(), v.severity)).collect();
    assert_eq!(
        summary,
        [
            ("Lockdown.1.SystemLockdown", Severity::Error),
            ("ThermalSettings.1.FanSpeedOffset", Severity::Warning),
        ]
    );
    assert!(matches!(
        violations[0].kind,
        ViolationKind::WrongGroup {
            given: AttributeGroup::System,
            actual: AttributeGroup::Idrac
        }
    ));
    let d = diff(&resolved, &host);
    let statuses: Vec<(&str, Status)> = d.changes.iter().map(|c| (c.attribute.as_str(), c.status)).collect();
    assert_eq!(
        statuses,
        [
            ("Lockdown.1.SystemLockdown", Status::NotApplicable),
            ("ServerPwr.1.PowerCapSetting", Status::InSync),
            ("ThermalSettings.1.ThermalProfile", Status::Drift),
            ("ThermalSettings.1.FanSpeedOffset", Status::NotApplicable),
        ]
    );
    let p = plan(&resolved, &host).unwrap();
    assert!(p.bios.is_empty());
    assert_eq!(
        p.idrac,
        BTreeMap::from([(
            AttributeGroup::System,
            attrs(&[("ThermalSettings.1.ThermalProfile", "Maximum Performance")])
        )])
    );
    let after = simulate_idrac(&host, &p);
    assert!(diff(&resolved, &HostView { idrac: &after, ..host }).is_clean());
}

#[test]
fn idrac_locks_are_reported_not_unlocked() {
    // The cap value is read-only while capping is disabled; iDRAC plans carry no unlocks.
    let resolved = resolve_toml(
        &idrac_profile("cap", &[("System", "ServerPwr.1.PowerCapValue", "900")]),
        &genoa(),
    );
    let (registry, current, idrac) = (bios_registry(), bios_current(), idrac_current());
    let host = HostView::new(&registry, &current).with_idrac(&idrac);
    let violations = validate_idrac(&resolved, &host, &manager_registry(), &ValidateOptions::default());
    let messages: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "ServerPwr.1.PowerCapValue (System.Embedded.1): read-only while ServerPwr.1.PowerCapSetting = Disabled (current value); set ServerPwr.1.PowerCapSetting = Enabled in the profile"
        ]
    );
    let both = resolve_toml(
        &idrac_profile(
            "capped",
            &[
                ("System", "ServerPwr.1.PowerCapValue", "900"),
                ("System", "ServerPwr.1.PowerCapSetting", "\"Enabled\""),
            ],
        ),
        &genoa(),
    );
    assert!(validate_idrac(&both, &host, &manager_registry(), &ValidateOptions::default()).is_empty());
}

#[test]
fn a_rejected_value_is_never_replaced_by_an_unlock() {
    // The profile sets SysProfile, but misspelt: the plan must not pick Custom on its own.
    let resolved = resolve_toml(
        &profile("typo", &[("SysProfile", "\"Custm\""), ("ProcCStates", "\"Enabled\"")]),
        &genoa(),
    );
    let violations = validate_on_synthetic_host(&resolved);
    let messages: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "ProcCStates: SysProfile = PerfOptimized (current value) forces ProcCStates = Disabled, but the profile asks for Enabled; set SysProfile = Custom in the profile",
            "SysProfile: \"Custm\" is not allowed here; allowed: PerfOptimized, PerfPerWattOptimizedDapc, Custom; did you mean Custom?",
        ]
    );
}
