//! The shipped profiles on an HPE ProLiant host: the HPE binding of the managed set, held to the
//! managed set and to a registry derived from a real DL385 Gen10 Plus v2 (EPYC 7763, ROM A42
//! v2.60), and each shipped workload profile bound, validated and applied there.

use crate::library_with;
use bios_profiles::binding::{Binding, KnobOutcome, SHIPPED_HPE};
use bios_profiles::{
    BoundProfile, Generation, HostFacts, HostView, Library, ManagedSet, Severity, ValidateOptions, Vendor, Wanted,
    bind, diff, plan, simulate, validate,
};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{AttributeValue, Attributes};

/// The derived registry and the recorded host's values of the attributes in it.
fn a42() -> (AttributeRegistry, Attributes) {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let read = |name: &str| std::fs::read_to_string(data.join(name)).unwrap();
    (
        serde_json::from_str(&read("hpe-a42-registry.json")).unwrap(),
        serde_json::from_str(&read("hpe-a42-current.json")).unwrap(),
    )
}

/// The recorded host: a DL385 Gen10 Plus v2 with two 64-core EPYC 7763, SMT on.
fn dl385() -> HostFacts {
    HostFacts {
        model: Some("ProLiant DL385 Gen10 Plus v2".into()),
        generation: Some(Generation::Milan),
        cpu: Some("AMD EPYC 7763 64-Core Processor".into()),
        sockets: Some(2),
        cores: Some(64),
        smt: Some(true),
        memory: None,
    }
}

fn bound(name: &str) -> BoundProfile {
    let resolved = Library::shipped().unwrap().resolve(name, &dl385()).unwrap();
    bind(&resolved, Vendor::Hpe).unwrap()
}

fn value(b: &BoundProfile, attribute: &str) -> Wanted {
    b.profile
        .bios
        .get(attribute)
        .unwrap_or_else(|| panic!("{attribute} is not written"))
        .wanted
        .clone()
}

fn fixed(s: &str) -> Wanted {
    Wanted::Value(s.into())
}

fn outcome<'a>(b: &'a BoundProfile, knob: &str) -> &'a KnobOutcome {
    &b.knobs.iter().find(|k| k.knob == knob).unwrap().outcome
}

/// The shipped workload profiles (every shipped profile whose chain reaches `base`).
fn workloads() -> Vec<String> {
    let library = Library::shipped().unwrap();
    let root = &ManagedSet::shipped().unwrap().workloads_extend;
    library
        .list()
        .into_iter()
        .filter(|p| p.name != *root)
        .filter(|p| {
            library
                .resolve(&p.name, &dl385())
                .is_ok_and(|r| r.chain.first() == Some(root))
        })
        .map(|p| p.name.clone())
        .collect()
}

#[test]
fn the_hpe_binding_has_one_entry_per_managed_knob_and_no_other() {
    let binding = Binding::shipped(Vendor::Hpe).unwrap().unwrap();
    let managed = ManagedSet::shipped().unwrap();
    for knob in &managed.knobs {
        assert!(
            binding.knob(knob.target, &knob.attribute).is_some(),
            "{} has no HPE entry",
            knob.attribute
        );
    }
    // A knob may sit in one group per set of generations (DfCState on Genoa and on Turin).
    let distinct: std::collections::BTreeSet<_> = managed.knobs.iter().map(|k| (k.target, &k.attribute)).collect();
    assert_eq!(binding.knobs().count(), distinct.len());
    // A knob dropped from the file is refused when the file loads.
    let without = SHIPPED_HPE.replace("[bios.MemTest]", "[bios.MemTestGone]");
    let err = Binding::from_toml(&without, "binding.toml", managed)
        .unwrap_err()
        .to_string();
    assert!(err.contains("bios.MemTest: a managed knob with no entry"), "{err}");
    assert!(err.contains("bios.MemTestGone: not a knob of the managed set"), "{err}");
}

#[test]
fn every_hpe_attribute_and_token_the_binding_writes_is_in_the_a42_registry() {
    let binding = Binding::shipped(Vendor::Hpe).unwrap().unwrap();
    let (registry, _) = a42();
    let problems = binding.check_registry(&registry);
    // Only SEV-SNP, which HPE documents for Gen11 and the Milan ROM does not offer.
    let summary: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        summary,
        ["bios.Snp (AmdSecureNestedPaging): the registry has no such attribute (only the vendor's document lists it)"]
    );
    assert_eq!(problems[0].severity, Severity::Warning);
}

/// The problems a binding file (the shipped one, edited) has against the derived registry.
fn problems_of(text: &str) -> Vec<String> {
    let (registry, _) = a42();
    let binding = Binding::from_toml(text, "binding.toml", ManagedSet::shipped().unwrap()).unwrap();
    binding
        .check_registry(&registry)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_wrong_token_or_a_missing_preset_escape_is_caught_against_the_registry() {
    let typo = SHIPPED_HPE.replace(
        "{ \"1\" = \"OneMemoryDomainPerSocket\"",
        "{ \"1\" = \"OneMemoryDomain\"",
    );
    let problems = problems_of(&typo);
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("bios.NumaNodesPerSocket (NumaMemoryDomainsPerSocket): OneMemoryDomain:")),
        "{problems:?}"
    );
    // ApplicationPowerBoost is locked by HPE's presets: a binding that forgets the escape is wrong.
    let escape = "enable = [\"custom-workload-profile\"]\n";
    let start = SHIPPED_HPE.find("[bios.ApbDis]").unwrap();
    let line = start + SHIPPED_HPE[start..].find(escape).unwrap();
    let forgetful = format!("{}{}", &SHIPPED_HPE[..line], &SHIPPED_HPE[line + escape.len()..]);
    let problems = problems_of(&forgetful);
    assert!(
        problems.iter().any(|p| p.starts_with("bios.ApbDis (ApplicationPowerBoost): the registry's rules on AMDPerformanceWorkloadProfile and WorkloadProfile lock or force it: add `custom-workload-profile`")),
        "{problems:?}"
    );
}

#[test]
fn hpc_on_a_milan_hpe_host_writes_hpe_attributes_with_their_enabling_writes() {
    let b = bound("hpc");
    assert_eq!(b.vendor, Vendor::Hpe);
    // NPS 4, else 2, else 1, as HPE's memory domains.
    assert_eq!(
        value(&b, "NumaMemoryDomainsPerSocket"),
        Wanted::Prefer(vec![
            "FourMemoryDomainsPerSocket".into(),
            "TwoMemoryDomainsPerSocket".into(),
            "OneMemoryDomainPerSocket".into()
        ])
    );
    // Power determinism, under manual determinism control.
    assert_eq!(value(&b, "PerformanceDeterminism"), fixed("PowerDeterministic"));
    assert_eq!(value(&b, "DeterminismControl"), fixed("DeterminismCtrlManual"));
    // ApbDis Enabled (fabric pinned) is HPE's Infinity Fabric Power Management Disabled.
    assert_eq!(value(&b, "ApplicationPowerBoost"), fixed("Disabled"));
    assert!(matches!(
        outcome(&b, "ApbDis"),
        KnobOutcome::Bound { inverted: true, .. }
    ));
    assert_eq!(
        value(&b, "InfinityFabricPstate"),
        Wanted::Accept {
            intent: "data fabric held at P0, its fastest state".into(),
            tokens: vec!["P0".into()]
        }
    );
    // The forced xGMI width: Dell's Force is carried by the width knob.
    assert_eq!(
        value(&b, "XGMIForceLinkWidth"),
        Wanted::Accept {
            intent: "x16 links".into(),
            tokens: vec!["x16".into()]
        }
    );
    assert!(
        matches!(outcome(&b, "DynamicLinkWidthManagement"), KnobOutcome::Carried { by, .. } if by == "DlwmForcedWidth")
    );
    for (attribute, want) in [
        ("ProcSMT", "Disabled"),
        ("MinProcIdlePower", "NoCStates"),
        ("PowerRegulator", "StaticHighPerf"),
        ("LastLevelCacheAsNUMANode", "Disabled"),
        ("ProcX2Apic", "ForceEnabled"),
        ("ProcAmdIoVt", "Enabled"),
        ("MemRefreshRate", "Refreshx1"),
        ("MaxMemBusFreqMHz", "Auto"),
        ("Nbio0LclkDpmLevel", "StaticHigh"),
        ("Nbio7LclkDpmLevel", "StaticHigh"),
        ("MinimumSevAsid", "1"),
        ("WorkloadProfile", "Custom"),
    ] {
        let expected = if attribute == "MinimumSevAsid" {
            Wanted::Value(AttributeValue::Integer(1))
        } else {
            fixed(want)
        };
        assert_eq!(value(&b, attribute), expected, "{attribute}");
    }
    // Dell's "no workload bundle" is AMD's profile Disabled, which the escape asks for too.
    assert_eq!(
        value(&b, "AMDPerformanceWorkloadProfile"),
        Wanted::Accept {
            intent: "no workload profile on top of the System Profile".into(),
            tokens: vec!["Disabled".into()]
        }
    );
    // No Dell name is left among the values written.
    for dell in [
        "ApbDis",
        "NumaNodesPerSocket",
        "LogicalProc",
        "SysProfile",
        "DeterminismSlider",
    ] {
        assert!(!b.profile.bios.contains_key(dell), "{dell} is still written");
    }
    // What HPE has no equivalent for is not applicable, with the reason.
    let skipped = |name: &str| {
        b.profile
            .skipped
            .iter()
            .find(|s| s.setting.attribute == name)
            .map(|s| s.reason.clone())
            .unwrap_or_else(|| panic!("{name} is not skipped"))
    };
    assert!(skipped("PcieAspmL1").starts_with("no HPE equivalent: HPE sets PCIe ASPM per slot"));
    assert!(skipped("ProcCcds").contains("cores per processor"));
    assert!(skipped("ServerPwr.1.PowerCapSetting").starts_with("no HPE equivalent: An iDRAC setting"));
    assert!(b.profile.idrac.is_empty());
}

#[test]
fn performance_on_hpe_keeps_its_sub_settings_and_says_dells_preset_has_no_counterpart() {
    let b = bound("performance");
    let reason = &b
        .profile
        .skipped
        .iter()
        .find(|s| s.setting.attribute == "SysProfile")
        .unwrap()
        .reason;
    assert_eq!(
        reason,
        "HPE has no counterpart of PerfOptimized for WorkloadProfile; it binds Custom"
    );
    // Its sub-settings are written one by one, under the Custom escape.
    assert_eq!(value(&b, "WorkloadProfile"), fixed("Custom"));
    assert_eq!(value(&b, "PowerRegulator"), fixed("StaticHighPerf"));
    assert_eq!(value(&b, "ApplicationPowerBoost"), fixed("Enabled"));
    assert_eq!(
        value(&b, "NumaMemoryDomainsPerSocket"),
        fixed("OneMemoryDomainPerSocket")
    );
    assert_eq!(
        value(&b, "XGMIForceLinkWidth"),
        Wanted::Accept {
            intent: "link width managed by the DLWM engine".into(),
            tokens: vec!["Auto".into()]
        }
    );
}

/// Every shipped workload profile, bound for the recorded host, validates against its registry
/// without an error, and after the plan is applied the host is in sync (what HPE lacks is
/// reported not applicable, which is in sync).
#[test]
fn every_shipped_workload_profile_bound_for_the_milan_hpe_host_validates_and_converges() {
    let (registry, current) = a42();
    let host = HostView::new(&registry, &current);
    let managed = ManagedSet::shipped().unwrap();
    let names = workloads();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let b = bound(&name);
        let errors: Vec<String> = validate(&b.profile, &host, &ValidateOptions::default())
            .into_iter()
            .filter(|v| v.severity == Severity::Error)
            .map(|v| v.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        let planned = plan(&b.profile, &host).unwrap();
        assert!(
            planned.unlocks.is_empty(),
            "{name}: the binding's escape leaves nothing to unlock"
        );
        let after = simulate(&host, &planned);
        let d = diff(&b.profile, &HostView { bios: &after, ..host });
        assert!(
            d.is_clean(),
            "{name}: {:?}",
            d.changes
                .iter()
                .filter(|c| !c.status.is_clean())
                .map(|c| (&c.attribute, c.status, &c.note))
                .collect::<Vec<_>>()
        );
        // Every managed knob of a two-socket Milan host is accounted for: bound, carried,
        // left alone on purpose, or not applicable with a reason.
        for knob in managed.on(Generation::Milan, Some(2)) {
            let accounted = b
                .knobs
                .iter()
                .any(|k| k.knob == knob.attribute && k.target == knob.target)
                || b.profile.left.iter().any(|l| l.attribute == knob.attribute)
                || b.profile.skipped.iter().any(|s| s.setting.attribute == knob.attribute);
            let gated = knob.matters_while.is_some();
            assert!(
                accounted || gated,
                "{name}: {} is neither bound nor reported",
                knob.attribute
            );
        }
    }
}

#[test]
fn a_profile_naming_an_hpe_attribute_itself_keeps_it_and_it_wins_over_the_binding() {
    let library = library_with(&[r#"
        name = "hpc-two-domains"
        description = "hpc with two NUMA domains per socket and manual control left as HPE sets it"
        extends = "hpc"
        [bios.NumaMemoryDomainsPerSocket]
        value = "TwoMemoryDomainsPerSocket"
        why = "Our MPI ranks are placed per half socket."
        source = "dell-ddr5-bandwidth"
        confidence = "inferred"
        [bios.NumaGroupSizeOpt]
        value = "Flat"
        why = "Our Windows hosts need flat groups."
        source = "dell-ddr5-bandwidth"
        confidence = "inferred"
        [bios.DeterminismControl]
        value = "DeterminismCtrlAuto"
        why = "We keep the fused determinism."
        source = "dell-ddr5-bandwidth"
        confidence = "inferred"
    "#]);
    let resolved = library.resolve("hpc-two-domains", &dl385()).unwrap();
    let b = bind(&resolved, Vendor::Hpe).unwrap();
    assert_eq!(
        value(&b, "NumaMemoryDomainsPerSocket"),
        fixed("TwoMemoryDomainsPerSocket")
    );
    assert_eq!(value(&b, "NumaGroupSizeOpt"), fixed("Flat"));
    assert_eq!(value(&b, "DeterminismControl"), fixed("DeterminismCtrlAuto"));
    assert!(
        matches!(outcome(&b, "NumaNodesPerSocket"), KnobOutcome::Overridden { attributes } if attributes == &["NumaMemoryDomainsPerSocket"])
    );
    let manual = b.enabled.iter().find(|e| e.attribute == "DeterminismControl").unwrap();
    assert!(!manual.added, "the profile's own DeterminismControl wins");
}

#[test]
fn an_hpe_attribute_named_like_a_dell_knob_keeps_its_hpe_value_when_no_dell_token_maps() {
    // As a profile derived from an HPE host's snapshot names it: HPE's own WorkloadProfile (its
    // preset selector), not Dell's workload profile bound to AMDPerformanceWorkloadProfile.
    let library = library_with(&[r#"
        name = "from-an-hpe-snapshot"
        description = "values of an HPE host"
        [bios.WorkloadProfile]
        value = "GeneralPowerEfficientCompute"
        why = "the value on the host when snapshotted"
        source = "dell-ddr5-bandwidth"
        confidence = "used"
    "#]);
    let resolved = library.resolve("from-an-hpe-snapshot", &dl385()).unwrap();
    let b = bind(&resolved, Vendor::Hpe).unwrap();
    assert_eq!(value(&b, "WorkloadProfile"), fixed("GeneralPowerEfficientCompute"));
    assert!(
        !b.profile.bios.contains_key("AMDPerformanceWorkloadProfile"),
        "{:?}",
        b.profile.bios.keys()
    );
    assert!(b.profile.skipped.is_empty(), "{:?}", b.profile.skipped);
    // A Dell token still binds as Dell's knob.
    let dell = bound("hpc");
    assert!(dell.knobs.iter().any(|k| k.knob == "WorkloadProfile"));
}

#[test]
fn on_dell_a_bound_profile_is_the_resolved_profile_unchanged() {
    let resolved = Library::shipped().unwrap().resolve("hpc", &dl385()).unwrap();
    let b = bind(&resolved, Vendor::Dell).unwrap();
    assert_eq!(b.profile, resolved);
    assert!(b.knobs.is_empty() && b.enabled.is_empty());
    assert!(Binding::shipped(Vendor::Dell).unwrap().is_none());
}

/// Why the escape is there: under the recorded host's preset (GeneralPowerEfficientCompute),
/// HPE's rules force the fabric and power values back, so hpc without Custom cannot be planned.
#[test]
fn without_the_custom_escape_the_hosts_preset_forces_hpcs_values_back() {
    let (registry, current) = a42();
    let host = HostView::new(&registry, &current);
    let mut b = bound("hpc");
    b.profile.bios.remove("WorkloadProfile");
    b.profile.bios.remove("AMDPerformanceWorkloadProfile");
    let forced: Vec<String> = validate(&b.profile, &host, &ValidateOptions::default())
        .into_iter()
        .filter(|v| v.severity == Severity::Error)
        .map(|v| v.attribute)
        .collect();
    assert_eq!(
        forced,
        [
            "ApplicationPowerBoost",
            "InfinityFabricPstate",
            "MinProcIdlePower",
            "PowerRegulator"
        ]
    );
    let err = plan(&b.profile, &host).unwrap_err().to_string();
    assert!(
        err.contains(
            "WorkloadProfile = GeneralPowerEfficientCompute (current value) forces ApplicationPowerBoost = Enabled"
        ),
        "{err}"
    );
}
