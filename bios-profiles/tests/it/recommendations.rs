//! What the shipped recommendations ask of hosts shaped like real ones: Dell's power-run
//! configuration on registries modelled on real R6515/R7615 payloads and real Dell preset rules,
//! NPS by CPU layout and memory population, the SEV ASID split, the pins a Custom profile needs,
//! AMD's own accelerator-host tables per generation, Bergamo and Turin, and what `stated` means.
//! Only the crate's long-standing API is used here, so each test also runs against older profiles.

use crate::{Fixture, attrs, enumeration, library_with, registry, rule};
use bios_profiles::{
    Confidence, Error, Generation, HostFacts, HostView, Library, Status, ValidateOptions, Wanted, catalog, diff, plan,
    simulate, validate,
};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use redfish_client::resources::computer_system::Memory;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The sub-settings Dell's System Profile presets control, with the value each preset gives
/// where a real host shows it: Performance on a real R7615 (Genoa) and in a real R6515's
/// configuration export (Rome), Performance Per Watt (OS) on a real R6515 (Rome). The fifth
/// entry is EfficiencyOptimizedMode on Rome/Milan and PowerProfileSelect on Genoa.
const PRESETS: &[(&str, &str, &str)] = &[
    // (attribute, PerfOptimized, PerfPerWattOptimizedOs)
    ("ProcPwrPerf", "MaxPerf", "OsDbpm"),
    ("ProcCStates", "Disabled", "Enabled"),
    ("ProcTurboMode", "Enabled", "Enabled"),
    ("MemFrequency", "MaxPerf", "MaxPerf"),
    ("MemPatrolScrub", "Standard", "Standard"),
    ("MemRefreshRate", "1x", "1x"),
    ("PcieAspmL1", "Disabled", "Enabled"),
    ("DeterminismSlider", "PowerDeterminism", "PowerDeterminism"),
];

/// Dell's preset rules in the shape of the real R750 registries: for each preset-controlled
/// attribute, a `CurrentValue` map per value listing the presets that force it (`EQU`, joined
/// with OR) and a `ReadOnly` map while `SysProfile NEQ Custom`. Only values a real AMD host
/// shows under a preset are forced; a preset no AMD payload shows forces nothing here.
fn preset_rules(presets: &[(&str, Option<&str>, Option<&str>)]) -> Vec<Value> {
    let mut out = Vec::new();
    for (attribute, perf, ppw_os) in presets {
        let mut by_value: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        if let Some(v) = perf {
            by_value.entry(v).or_default().push("PerfOptimized");
        }
        if let Some(v) = ppw_os {
            by_value.entry(v).or_default().push("PerfPerWattOptimizedOs");
        }
        for (value, presets) in by_value {
            let from: Vec<(&str, &str, Value)> = presets.iter().map(|p| ("SysProfile", "EQU", json!(p))).collect();
            out.push(rule(attribute, "CurrentValue", json!(value), &from));
        }
        out.push(rule(
            attribute,
            "ReadOnly",
            json!(true),
            &[("SysProfile", "NEQ", json!("Custom"))],
        ));
    }
    out
}

fn with_display(name: &str, values: &[(&str, &str)]) -> Value {
    let values: Vec<Value> = values
        .iter()
        .map(|(n, d)| json!({"ValueName": n, "ValueDisplayName": d}))
        .collect();
    json!({"AttributeName": name, "Type": "Enumeration", "ReadOnly": false, "Hidden": false, "Value": values})
}

fn string(name: &str) -> Value {
    json!({"AttributeName": name, "Type": "String", "ReadOnly": true, "MaxLength": 64})
}

/// The BIOS of Dell's R7515 power run (one EPYC 7542, Rome) with the attribute names and tokens
/// a real R6515 shows (its `GET /Bios` on Performance Per Watt (OS)), `ProcConfigTdp` as Dell's
/// power run shows it (Maximum, Minimum; the real R6515's CPU offers no cTDP), and
/// `WorkloadProfile` offering only the `NotAvailable` the real R6515 shows.
fn rome_power_run() -> (AttributeRegistry, Attributes) {
    let switch = |name: &str| enumeration(name, &["Enabled", "Disabled"]);
    let reg = registry(
        vec![
            enumeration(
                "SysProfile",
                &[
                    "PerfPerWattOptimizedDapc",
                    "PerfPerWattOptimizedOs",
                    "PerfOptimized",
                    "Custom",
                ],
            ),
            enumeration("ProcPwrPerf", &["MaxPerf", "SysDbpm", "OsDbpm"]),
            switch("ProcCStates"),
            switch("ProcTurboMode"),
            enumeration("MemFrequency", &["MaxPerf"]),
            enumeration("MemPatrolScrub", &["Standard", "Extended", "Disabled"]),
            enumeration("MemRefreshRate", &["1x", "2x"]),
            switch("PcieAspmL1"),
            enumeration("DeterminismSlider", &["PowerDeterminism"]),
            switch("EfficiencyOptimizedMode"),
            switch("ApbDis"),
            enumeration("WorkloadProfile", &["NotAvailable"]),
            with_display("ProcConfigTdp", &[("Maximum", "Maximum"), ("Minimum", "Minimum")]),
            switch("LogicalProc"),
            switch("ProcVirtualization"),
            switch("IommuSupport"),
            switch("ProcX2Apic"),
            switch("TransparentSme"),
            switch("CcxAsNumaDomain"),
            enumeration("NumaNodesPerSocket", &["1", "2", "4"]),
            switch("MemTest"),
            switch("CorrEccSmi"),
            switch("CECriticalSEL"),
            switch("L1StreamHwPrefetcher"),
            switch("L2StreamHwPrefetcher"),
            enumeration("DramRefreshDelay", &["Minimum", "Performance"]),
            enumeration("MadtCoreEnumeration", &["Linear", "RoundRobin"]),
            enumeration("ProcCcds", &["All", "1", "2"]),
            enumeration("CcdCores", &["All", "1", "2", "3"]),
            switch("PcieEnhancedPreferredIo"),
            switch("SriovGlobalEnable"),
            string("Proc1Brand"),
            string("SystemModelName"),
            json!({"AttributeName": "Proc1NumCores", "Type": "Integer", "ReadOnly": true, "LowerBound": 0, "UpperBound": 65535}),
        ],
        {
            let mut presets: Vec<(&str, Option<&str>, Option<&str>)> =
                PRESETS.iter().map(|(a, p, o)| (*a, Some(*p), Some(*o))).collect();
            presets.push(("EfficiencyOptimizedMode", Some("Disabled"), Some("Disabled")));
            preset_rules(&presets)
        },
    );
    let mut current = attrs(&[
        ("SystemModelName", "PowerEdge R7515"),
        ("Proc1Brand", "AMD EPYC 7542 32-Core Processor"),
        ("SysProfile", "PerfPerWattOptimizedOs"),
        ("ProcPwrPerf", "OsDbpm"),
        ("ProcCStates", "Enabled"),
        ("ProcTurboMode", "Enabled"),
        ("MemFrequency", "MaxPerf"),
        ("MemPatrolScrub", "Standard"),
        ("MemRefreshRate", "1x"),
        ("PcieAspmL1", "Enabled"),
        ("DeterminismSlider", "PowerDeterminism"),
        ("EfficiencyOptimizedMode", "Disabled"),
        ("ApbDis", "Disabled"),
        ("WorkloadProfile", "NotAvailable"),
        ("ProcConfigTdp", "Maximum"),
        ("LogicalProc", "Enabled"),
        ("ProcVirtualization", "Enabled"),
        ("IommuSupport", "Enabled"),
        ("ProcX2Apic", "Enabled"),
        ("TransparentSme", "Disabled"),
        ("CcxAsNumaDomain", "Disabled"),
        ("NumaNodesPerSocket", "1"),
        ("MemTest", "Disabled"),
        ("CorrEccSmi", "Enabled"),
        ("CECriticalSEL", "Enabled"),
        ("L1StreamHwPrefetcher", "Enabled"),
        ("L2StreamHwPrefetcher", "Enabled"),
        ("DramRefreshDelay", "Minimum"),
        ("MadtCoreEnumeration", "Linear"),
        ("ProcCcds", "All"),
        ("CcdCores", "All"),
        ("PcieEnhancedPreferredIo", "Disabled"),
        ("SriovGlobalEnable", "Disabled"),
    ]);
    current.insert("Proc1NumCores".to_owned(), AttributeValue::Integer(32));
    (reg, current)
}

/// A Genoa host with the names and tokens a real R7615 shows on the Performance preset, and the
/// preset rules in the real shape: Performance forces what the R7615 shows; no AMD payload shows
/// what Performance Per Watt (OS) gives PowerProfileSelect, so that preset only locks it.
/// `EfficiencyMode` and `MaxIOPerformanceMode` are offered as Dell's glossary names the modes;
/// no real host has shown those tokens.
fn genoa_r7615() -> (AttributeRegistry, Attributes) {
    let switch = |name: &str| enumeration(name, &["Enabled", "Disabled"]);
    let mut presets: Vec<(&str, Option<&str>, Option<&str>)> =
        PRESETS.iter().map(|(a, p, _)| (*a, Some(*p), None)).collect();
    presets.push(("PowerProfileSelect", Some("HighPerformanceMode"), None));
    let reg = registry(
        vec![
            enumeration(
                "SysProfile",
                &[
                    "PerfPerWattOptimizedDapc",
                    "PerfPerWattOptimizedOs",
                    "PerfOptimized",
                    "Custom",
                ],
            ),
            enumeration("ProcPwrPerf", &["MaxPerf", "SysDbpm", "OsDbpm"]),
            switch("ProcCStates"),
            switch("ProcTurboMode"),
            enumeration("MemFrequency", &["MaxPerf"]),
            enumeration("MemPatrolScrub", &["Standard", "Extended", "Disabled"]),
            enumeration("MemRefreshRate", &["1x", "2x"]),
            switch("PcieAspmL1"),
            enumeration("DeterminismSlider", &["PowerDeterminism"]),
            with_display(
                "PowerProfileSelect",
                &[
                    ("HighPerformanceMode", "High Performance Mode"),
                    ("EfficiencyMode", "Efficiency Mode"),
                    ("MaxIOPerformanceMode", "Maximum IO Performance Mode"),
                ],
            ),
            switch("ApbDis"),
            enumeration(
                "WorkloadProfile",
                &["NotConfigured", "HpcProfile", "LowLatencyOptimizedProfile"],
            ),
            enumeration("ProcConfigTdp", &["Maximum"]),
            switch("DfCState"),
            switch("Snp"),
            switch("Rmp"),
            string("Proc1Brand"),
        ],
        preset_rules(&presets),
    );
    let mut current = attrs(&[
        ("Proc1Brand", "AMD EPYC 9124 16-Core Processor"),
        ("SysProfile", "PerfOptimized"),
        ("PowerProfileSelect", "HighPerformanceMode"),
        ("ApbDis", "Disabled"),
        ("WorkloadProfile", "NotConfigured"),
        ("ProcConfigTdp", "Maximum"),
        ("DfCState", "Enabled"),
        ("Snp", "Disabled"),
        ("Rmp", "Disabled"),
    ]);
    for (attribute, perf, _) in PRESETS {
        current.insert((*attribute).to_owned(), (*perf).into());
    }
    (reg, current)
}

#[test]
fn power_efficiency_reaches_dell_s_r7515_power_run_on_a_registry_shaped_like_real_payloads() {
    let (reg, current) = rome_power_run();
    let library = Library::shipped().unwrap();
    let host = HostFacts::from_bios(&current);
    assert_eq!(host.generation, Some(Generation::Rome));
    let profile = library.resolve("power-efficiency", &host).unwrap();
    let state = HostView::new(&reg, &current);
    let problems = validate(&profile, &state, &ValidateOptions::default());
    assert!(
        problems.iter().all(|v| v.severity == bios_profiles::Severity::Warning),
        "{problems:#?}"
    );
    let p = plan(&profile, &state).unwrap();
    assert_eq!(p.bios.get("SysProfile"), Some(&"Custom".into()), "{p:#?}");
    let after = simulate(&state, &p);
    // Dell's R7515 power run: Custom, OS DBPM, ASPM L1 and Efficiency Optimized Mode on, cTDP at
    // its minimum; the preset would have kept Efficiency Optimized Mode off.
    for (attribute, want) in [
        ("SysProfile", "Custom"),
        ("ProcPwrPerf", "OsDbpm"),
        ("PcieAspmL1", "Enabled"),
        ("EfficiencyOptimizedMode", "Enabled"),
        ("ProcConfigTdp", "Minimum"),
        ("DeterminismSlider", "PowerDeterminism"),
        ("ApbDis", "Disabled"),
    ] {
        assert_eq!(after.get(attribute), Some(&want.into()), "{attribute}");
    }
    assert!(diff(&profile, &HostView::new(&reg, &after)).is_clean());
    // The real R6515 lists only NotAvailable: the workload profile is left alone, saying why.
    let d = diff(&profile, &state);
    let workload = d.changes.iter().find(|c| c.attribute == "WorkloadProfile").unwrap();
    assert_eq!(workload.status, Status::NotApplicable);
    // The cooling of both power runs, from the iDRAC: an overlay beside the profile, so that no
    // workload switch undoes a site's cooling; power-efficiency itself sets none.
    assert!(profile.idrac.is_empty(), "{:?}", profile.idrac);
    let cooling = library.resolve("minimum-power-cooling", &host).unwrap();
    let idrac: BTreeMap<&str, (&AttributeValue, Confidence)> = cooling
        .idrac
        .values()
        .filter_map(|s| Some((s.setting.attribute.as_str(), (s.value()?, s.setting.confidence))))
        .collect();
    assert_eq!(
        idrac.get("ThermalSettings.1.ThermalProfile"),
        Some(&(&"Minimum Power".into(), Confidence::Used))
    );
    assert_eq!(
        idrac.get("ThermalSettings.1.FanSpeedOffset"),
        Some(&(&"Off".into(), Confidence::Used))
    );
    // The R7515 run's values are `used` on Rome only.
    assert_eq!(profile.bios["EfficiencyOptimizedMode"].confidence, Confidence::Used);
    let milan = HostFacts {
        generation: Some(Generation::Milan),
        ..HostFacts::default()
    };
    let on_milan = library.resolve("power-efficiency", &milan).unwrap();
    assert_eq!(
        on_milan.bios["EfficiencyOptimizedMode"].confidence,
        Confidence::Inferred
    );
    assert_eq!(on_milan.bios["ProcConfigTdp"].wanted, Wanted::Value("Maximum".into()));
}

#[test]
fn power_efficiency_on_genoa_asks_nothing_of_a_sub_setting_its_preset_would_lock() {
    let (reg, current) = genoa_r7615();
    let library = Library::shipped().unwrap();
    let profile = library
        .resolve("power-efficiency", &HostFacts::from_bios(&current))
        .unwrap();
    let state = HostView::new(&reg, &current);
    let p = plan(&profile, &state).unwrap();
    assert_eq!(p.bios.get("SysProfile"), Some(&"Custom".into()));
    assert_eq!(p.bios.get("PowerProfileSelect"), Some(&"EfficiencyMode".into()));
    let after = simulate(&state, &p);
    assert!(diff(&profile, &HostView::new(&reg, &after)).is_clean());
    assert_eq!(after.get("WorkloadProfile"), Some(&"NotConfigured".into()));
}

/// Sources that show what a preset gives on a real host, by the preset.
const PRESET_EVIDENCE: &[(&str, &str)] = &[
    ("PerfOptimized", "idrac-r7615-capture"),
    ("PerfOptimized", "idrac-r6515-export"),
    ("PerfPerWattOptimizedOs", "idrac-r6515-capture"),
];

#[test]
fn a_profile_on_a_preset_lists_only_what_real_hosts_on_that_preset_show() {
    let library = Library::shipped().unwrap();
    let controlled: BTreeSet<&str> = PRESETS
        .iter()
        .map(|(a, _, _)| *a)
        .chain(["EfficiencyOptimizedMode", "PowerProfileSelect"])
        .collect();
    let mut checked = 0;
    for profile in library.list() {
        let Some(Wanted::Value(AttributeValue::String(preset))) = profile.bios.get("SysProfile").map(|s| &s.wanted)
        else {
            continue;
        };
        if preset == "Custom" {
            continue;
        }
        for s in profile
            .bios
            .values()
            .filter(|s| controlled.contains(s.attribute.as_str()))
        {
            let shown = PRESET_EVIDENCE
                .iter()
                .any(|(p, source)| p == preset && *source == s.source);
            assert!(
                shown && s.confidence == Confidence::Used,
                "{} on preset {preset} asks {} = {} from {} ({}): no real host on that preset shows it, and the preset locks it",
                profile.name,
                s.attribute,
                s.wanted,
                s.source,
                s.confidence
            );
            checked += 1;
        }
    }
    // performance's six (database runs the same values in Custom, where nothing locks them).
    assert!(checked >= 6, "{checked}");
}

#[test]
fn the_power_run_sources_say_what_dell_s_r7515_run_did() {
    let library = Library::shipped().unwrap();
    let note = library.sources().get("dell-mlperf-bios").unwrap().note.clone().unwrap();
    for said in [
        "Configurable TDP Minimum",
        "PCI ASPM L1 Enabled",
        "Efficiency Optimized Mode Enabled",
        "Fan Speed Offset Off",
    ] {
        assert!(note.contains(said), "{note}");
    }
    assert!(!note.contains("did not lower"), "{note}");
    let profile = library.get("power-efficiency").unwrap();
    assert_eq!(profile.bios["SysProfile"].wanted, Wanted::Value("Custom".into()));
}

fn dimms(per_socket: &[(char, u32)]) -> Vec<Memory> {
    per_socket
        .iter()
        .flat_map(|&(letter, n)| {
            (1..=n).map(move |i| {
                serde_json::from_value(json!({
                    "@odata.id": format!("/redfish/v1/Systems/System.Embedded.1/Memory/DIMM.Socket.{letter}{i}"),
                    "Id": format!("DIMM.Socket.{letter}{i}"),
                    "CapacityMiB": 65536,
                    "Status": {"State": "Enabled", "Health": "OK"},
                }))
                .unwrap()
            })
        })
        .collect()
}

fn host(brand: &str, sockets: u32, cores: u32) -> HostFacts {
    let mut bios = attrs(&[("Proc1Brand", brand), ("LogicalProc", "Enabled")]);
    if sockets == 2 {
        bios.insert("Proc2Brand".to_owned(), brand.into());
    }
    bios.insert("Proc1NumCores".to_owned(), AttributeValue::Integer(i64::from(cores)));
    HostFacts::from_bios(&bios)
}

/// The NPS values `hpc` has left on `host`, in its order of preference.
fn hpc_nps(host: &HostFacts) -> Vec<String> {
    let library = Library::shipped().unwrap();
    let resolved = library.resolve("hpc", host).unwrap();
    let Some(nps) = resolved.bios.get("NumaNodesPerSocket") else {
        return Vec::new();
    };
    nps.wanted
        .candidates()
        .unwrap()
        .into_iter()
        .filter(|v| !nps.excluded.iter().any(|e| &e.value == v))
        .map(|v| v.to_string())
        .collect()
}

#[test]
fn nps_4_takes_any_population_so_uneven_dimms_no_longer_rule_it_out() {
    // Two EPYC 9654s with one DIMM missing: Dell documents no 12-channel rule, nothing is
    // ruled out for the population.
    let genoa = host("AMD EPYC 9654 96-Core Processor", 2, 96).with_memory(&dimms(&[('A', 12), ('B', 11)]));
    assert_eq!(hpc_nps(&genoa), ["4", "2", "1"]);
    // Two EPYC 7763s with six DIMMs each: NPS 4's two-channel interleave takes any population,
    // NPS 2 needs four equal channels per half.
    let milan = host("AMD EPYC 7763 64-Core Processor", 2, 64).with_memory(&dimms(&[('A', 6), ('B', 6)]));
    assert_eq!(hpc_nps(&milan), ["4", "1"]);
}

#[test]
fn dell_s_per_layout_table_and_the_population_rules_decide_together() {
    // EPYC 7552 (6x2x4): Dell's table offers no NPS 4; with six DIMMs per socket NPS 2 cannot
    // interleave as preferred either, so hpc is left with NPS 1.
    let sparse = host("AMD EPYC 7552 48-Core Processor", 2, 48).with_memory(&dimms(&[('A', 6), ('B', 6)]));
    assert_eq!(hpc_nps(&sparse), ["1"]);
    let full = host("AMD EPYC 7552 48-Core Processor", 2, 48).with_memory(&dimms(&[('A', 8), ('B', 8)]));
    assert_eq!(hpc_nps(&full), ["2", "1"]);
    // Sockets populated differently cannot take NPS 0, whoever asks for it.
    let nps0 = library_with(&[r#"
name = "one-domain"
description = "one NUMA domain for the whole system"
extends = "performance"
[bios.NumaNodesPerSocket]
prefer = ["0", "1"]
why = "w"
source = "dell-r6525-manual"
confidence = "inferred"
"#]);
    let uneven = host("AMD EPYC 7763 64-Core Processor", 2, 64).with_memory(&dimms(&[('A', 8), ('B', 16)]));
    let resolved = nps0.resolve("one-domain", &uneven).unwrap();
    let excluded: Vec<String> = resolved.bios["NumaNodesPerSocket"]
        .excluded
        .iter()
        .map(|e| e.value.to_string())
        .collect();
    assert_eq!(excluded, ["0"]);
}

#[test]
fn dell_table_41_rules_nps_by_cores_and_ccd_layout_on_rome() {
    // 16 cores as 2x2x4 (EPYC 7282) and 8 as 2x2x2 (EPYC 7252): NPS 2 or 1, never 4.
    assert_eq!(hpc_nps(&host("AMD EPYC 7282 16-Core Processor", 1, 16)), ["2", "1"]);
    assert_eq!(hpc_nps(&host("AMD EPYC 7252 8-Core Processor", 2, 8)), ["2", "1"]);
    // 16 cores as 4x2x2 (EPYC 7302) and 64 as 8x2x4 (EPYC 7702) offer NPS 4.
    assert_eq!(
        hpc_nps(&host("AMD EPYC 7302 16-Core Processor", 1, 16)),
        ["4", "2", "1"]
    );
    assert_eq!(
        hpc_nps(&host("AMD EPYC 7702 64-Core Processor", 2, 64)),
        ["4", "2", "1"]
    );
    // 24 cores as 4x2x3 (the real R6515's EPYC 7402P) has no row: the registry decides.
    assert_eq!(
        hpc_nps(&host("AMD EPYC 7402P 24-Core Processor", 1, 24)),
        ["4", "2", "1"]
    );
    // One socket never takes NPS 0, per the table's one-socket column.
    let library = library_with(&[r#"
name = "zero"
description = "asks for NPS 0"
extends = "performance"
[bios.NumaNodesPerSocket]
prefer = ["0", "1"]
why = "w"
source = "dell-r6525-manual"
confidence = "inferred"
"#]);
    let one = library
        .resolve("zero", &host("AMD EPYC 7702P 64-Core Processor", 1, 64))
        .unwrap();
    let excluded: Vec<String> = one.bios["NumaNodesPerSocket"]
        .excluded
        .iter()
        .map(|e| e.value.to_string())
        .collect();
    assert_eq!(excluded, ["0"]);
}

/// Glossary sentences that say what an option does, not which value to use for what: they
/// back inferred settings only.
const DEFINITIONS: &[&str] = &[
    "When enabled, PCIe Advanced State Power Management (ASPM) can reduce overall system power while slightly reducing system performance.",
    "High Performance Mode (default): Favors core performance.",
    "Efficiency Mode: Configures the system for power efficiency.",
    "Maximum IO. Performance Mode: Sets up Data Fabric to maximize IO sub-system performance.",
    "When enabled, a specific hard-fused Data Fabric (SoC) P-state is forced for optimizing workloads sensitive to latency or throughput.",
    "For higher performance and power savings, when disabled, P-states will be automatically managed by the Application Power Management",
    "Additional power savings can be achieved by reducing the memory frequency at the expense of reduced performance.",
    "the refresh rate can be set to 2X, however this may have a negative impact on memory subsystem performance under certain circumstances.",
    "Compared to the traditional xAPIC architecture, x2APIC extends processor addressability and enhances interrupt delivery performance.",
    "This field enables or disables AMD secure encryption features such as Secure Memory Encryption (SME) and Secure Encrypted Virtualization (SEV).",
    "OS DBPM is another Performance Per Watt option that relies on the operating system to dynamically control individual core frequency.",
    "Performance Per Watt OS mode optimizes the performance/watt efficiency with a bias towards performance.",
    "Logging these rare errors can help identify marginal components",
    "Custom allows the user to individually modify any of the low-level settings that are preset and unchangeable in any of the other four preset modes.",
];

#[test]
fn stated_means_the_source_recommends_that_value_for_that_purpose() {
    let library = Library::shipped().unwrap();
    for profile in library.list() {
        for s in profile.settings() {
            let Some(quote) = &s.quote else { continue };
            if s.confidence == Confidence::Stated {
                assert!(
                    !DEFINITIONS.contains(&quote.as_str()),
                    "{}: {} is stated from a definition: {quote}",
                    profile.name,
                    s.attribute
                );
                // Footnote [1] says to start from Performance and then switch to Custom: it
                // backs no setting that stays on Performance.
                assert!(
                    !quote.starts_with("Select Performance Profile first"),
                    "{}",
                    profile.name
                );
            }
        }
    }
}

#[test]
fn one_source_row_has_one_confidence_wherever_it_is_quoted() {
    let library = Library::shipped().unwrap();
    let mut seen: BTreeMap<(String, String), (Confidence, String)> = BTreeMap::new();
    for profile in library.list() {
        let limits = profile.platforms.values().flat_map(|p| p.unsupported.values());
        let all = profile
            .settings()
            .map(|s| (&s.attribute, &s.source, s.confidence, &s.quote))
            .chain(limits.map(|u| (&u.attribute, &u.source, u.confidence, &u.quote)));
        for (attribute, source, confidence, quote) in all {
            let Some(quote) = quote else { continue };
            let here = format!("{} {attribute}", profile.name);
            if let Some((other, where_)) = seen.get(&(source.clone(), quote.clone())) {
                assert_eq!(
                    *other, confidence,
                    "{source} \"{quote}\" is {other} in {where_} and {confidence} in {here}"
                );
            } else {
                seen.insert((source.clone(), quote.clone()), (confidence, here));
            }
        }
    }
    assert!(seen.len() > 40, "{}", seen.len());
}

#[test]
fn ai_gpu_follows_amd_s_own_host_table_for_rome_and_milan() {
    let library = Library::shipped().unwrap();
    let cases = [
        ("AMD EPYC 7702 64-Core Processor", 64, "amd-instinct-host-7002"),
        ("AMD EPYC 7763 64-Core Processor", 64, "amd-instinct-host-7003"),
    ];
    for (brand, cores, source) in cases {
        let resolved = library.resolve("ai-gpu", &host(brand, 2, cores)).unwrap();
        for name in [
            "ProcCStates",
            "DeterminismSlider",
            "ApbDis",
            "FixedSocPstate",
            "DynamicLinkWidthManagement",
            "DlwmForcedWidth",
            "LogicalProc",
            "PcieEnhancedPreferredIo",
            "IommuSupport",
        ] {
            let s = &resolved.bios[name];
            assert_eq!(s.source, source, "{brand} {name}");
            assert_eq!(s.confidence, Confidence::Stated, "{brand} {name}");
        }
        // SMT off: two 64-core sockets have 128 threads, and AMD's table keeps the IOMMU off.
        assert_eq!(resolved.bios["IommuSupport"].wanted, Wanted::Value("Disabled".into()));
        assert_eq!(
            resolved.bios["PcieEnhancedPreferredIo"].wanted,
            Wanted::Value("Enabled".into())
        );
        // NPS 1 for software that is not NUMA-aware: stated by AMD's 7002 page; on Milan only
        // carried over (the MI200 page's NPS advice is NPS 4 for most HPC workloads).
        let nps = &resolved.bios["NumaNodesPerSocket"];
        assert_eq!(nps.wanted, Wanted::Value("1".into()), "{brand}");
        assert_eq!(
            (nps.source.as_str(), nps.confidence),
            if source == "amd-instinct-host-7002" {
                (source, Confidence::Stated)
            } else {
                (source, Confidence::Inferred)
            },
            "{brand}"
        );
        // No EPYC 9004 row applies to these generations.
        assert!(
            resolved.bios.values().all(|s| s.source != "amd-instinct-host"),
            "{brand}"
        );
        // The GPU's bus is host-specific: the Preferred I/O bus is never named.
        assert!(!resolved.bios.contains_key("PciePreferredIoBus"));
    }
    let genoa = library
        .resolve("ai-gpu", &host("AMD EPYC 9654 96-Core Processor", 2, 96))
        .unwrap();
    assert_eq!(genoa.bios["ProcCStates"].source, "amd-instinct-host");
    assert_eq!(genoa.bios["IommuSupport"].wanted, Wanted::Value("Enabled".into()));
}

#[test]
fn storage_io_enables_enhanced_preferred_io_where_the_bios_family_shows_it() {
    let library = Library::shipped().unwrap();
    let milan = library
        .resolve("storage-io", &host("AMD EPYC 7763 64-Core Processor", 1, 64))
        .unwrap();
    assert_eq!(
        milan.bios["PcieEnhancedPreferredIo"].wanted,
        Wanted::Value("Enabled".into())
    );
    assert!(!milan.bios.contains_key("PciePreferredIoBus"));
    let genoa = library
        .resolve("storage-io", &host("AMD EPYC 9654 96-Core Processor", 1, 96))
        .unwrap();
    assert!(!genoa.bios.contains_key("PcieEnhancedPreferredIo"));
    // Its SMT choice is what Dell's pixstor NVMe nodes ship with: used on Rome, where Dell's
    // R7525s ran, inferred on Milan, saying so.
    let smt = &milan.bios["LogicalProc"];
    assert_eq!(
        (smt.source.as_str(), smt.confidence),
        ("dell-pixstor-me5", Confidence::Inferred)
    );
    assert!(smt.confidence_note.as_deref().unwrap().contains("rome"), "{smt:?}");
    let rome = library
        .resolve("storage-io", &host("AMD EPYC 7302 16-Core Processor", 2, 16))
        .unwrap();
    assert_eq!(rome.bios["LogicalProc"].confidence, Confidence::Used);
    assert!(rome.bios["LogicalProc"].quote.as_deref().unwrap().contains("64C/64T"));
}

#[test]
fn every_custom_profile_pins_no_workload_profile_on_top() {
    let library = Library::shipped().unwrap();
    let mut checked = 0;
    for profile in library.list() {
        let resolved = library.resolve(&profile.name, &HostFacts::default()).unwrap();
        if resolved.bios.get("SysProfile").map(|s| &s.wanted) != Some(&Wanted::Value("Custom".into())) {
            continue;
        }
        let workload = resolved
            .bios
            .get("WorkloadProfile")
            .unwrap_or_else(|| panic!("{} leaves a workload profile on top of Custom", profile.name));
        assert_eq!(
            workload.wanted.first(),
            Some("NotConfigured".into()),
            "{}",
            profile.name
        );
        checked += 1;
    }
    assert!(checked >= 7, "{checked}");
}

#[test]
fn the_iommu_stays_on_past_255_hardware_threads() {
    let library = Library::shipped().unwrap();
    // Two 64-core sockets with SMT on (the performance profile keeps it): 256 threads.
    let big = host("AMD EPYC 7763 64-Core Processor", 2, 64);
    let performance = library.resolve("performance", &big).unwrap();
    assert_eq!(performance.bios["IommuSupport"].wanted, Wanted::Value("Enabled".into()));
    assert!(performance.bios["IommuSupport"].why.contains("iommu=pt"));
    // SMT off (hpc): 128 threads; every workload profile keeps the IOMMU on anyway (base), so a
    // host moved off a profile that had it off gets it back.
    let hpc = library.resolve("hpc", &big).unwrap();
    assert_eq!(hpc.bios["IommuSupport"].origin, "base");
    assert_eq!(hpc.bios["IommuSupport"].wanted, Wanted::Value("Enabled".into()));
    // A profile of one's own that turns it off on such a host is set aside, saying why.
    let mine = library_with(&[r#"
name = "no-iommu"
description = "IOMMU off"
extends = "performance"
[bios.IommuSupport]
value = "Disabled"
why = "w"
source = "amd-58011"
confidence = "inferred"
"#]);
    let resolved = mine.resolve("no-iommu", &big).unwrap();
    assert!(!resolved.bios.contains_key("IommuSupport"));
    let skipped = resolved
        .skipped
        .iter()
        .find(|s| s.setting.attribute == "IommuSupport")
        .unwrap();
    assert!(skipped.reason.contains("255"), "{}", skipped.reason);
}

#[test]
fn bergamo_takes_genoa_s_settings_with_ccx_as_numa_kept_off() {
    let library = Library::shipped().unwrap();
    let bergamo = host("AMD EPYC 9754 128-Core Processor", 2, 128);
    assert_eq!(bergamo.generation, Some(Generation::Bergamo));
    for profile in library.list() {
        let resolved = library.resolve(&profile.name, &bergamo).unwrap();
        if profile.cpu == Some(bios_profiles::Cpu::Any) {
            // The cooling overlays set iDRAC settings only.
            continue;
        }
        assert_eq!(
            resolved.bios.get("CcxAsNumaDomain").map(|s| &s.wanted),
            Some(&Wanted::Value("Disabled".into())),
            "{}",
            profile.name
        );
    }
    // A setting written for Genoa applies to Bergamo.
    let performance = library.resolve("performance", &bergamo).unwrap();
    assert_eq!(
        performance.bios["PowerProfileSelect"].wanted,
        Wanted::Value("HighPerformanceMode".into())
    );
}

/// On Turin a setting applies only where evidence covers Turin: a Dell preset (every workload
/// profile selects the one closest to it), AMD's 2026 accelerator-host rows (ai-gpu), and the
/// iDRAC settings, which do not depend on the CPU; every other BIOS setting is left as the host
/// has it, for lack of evidence, and counts toward the host's `unverified`.
#[test]
fn a_turin_host_is_recognised_and_every_setting_is_left_alone_for_lack_of_evidence() {
    let library = Library::shipped().unwrap();
    let turin = host("AMD EPYC 9575F 64-Core Processor", 2, 64);
    assert_eq!(turin.generation, Some(Generation::Turin));
    for profile in library.list() {
        let resolved = library
            .resolve(&profile.name, &turin)
            .unwrap_or_else(|e| panic!("{}: {e}", profile.name));
        for (name, s) in &resolved.bios {
            let preset = name == "SysProfile" && s.wanted != Wanted::Value("Custom".into());
            let evidence = preset || s.source == "amd-instinct-acceptance" || profile.name == "turin-site";
            assert!(evidence, "{}: {name} applies on Turin without evidence", profile.name);
        }
        for s in &resolved.skipped {
            if s.reason.starts_with("no Turin evidence") {
                assert_eq!(
                    s.kind,
                    bios_profiles::Unchecked::NoEvidence,
                    "{}: {}",
                    profile.name,
                    s.reason
                );
            }
            assert!(
                matches!(s.target, bios_profiles::Target::Bios),
                "{}: the iDRAC setting {} is skipped on Turin ({})",
                profile.name,
                s.setting.attribute,
                s.reason
            );
        }
    }
    for (name, preset) in [
        ("performance", "PerfOptimized"),
        ("hpc", "PerfOptimized"),
        ("ai-gpu", "PerfOptimized"),
        ("virtualization", "PerfPerWattOptimizedOs"),
        ("confidential-computing", "PerfPerWattOptimizedOs"),
        ("power-efficiency-gpu", "PerfPerWattOptimizedOs"),
    ] {
        let r = library.resolve(name, &turin).unwrap();
        assert_eq!(r.bios["SysProfile"].wanted, Wanted::Value(preset.into()), "{name}");
    }
    let performance = library.resolve("performance", &turin).unwrap();
    assert_eq!(performance.bios.keys().collect::<Vec<_>>(), ["SysProfile"]);
    assert!(
        performance
            .idrac
            .keys()
            .any(|(_, a)| a == "ServerPwr.1.PowerCapSetting"),
        "the power cap does not depend on the CPU"
    );
    // A setting that names Turin itself applies there.
    let mine = library_with(&[r#"
name = "turin-site"
description = "our own Turin evidence"
extends = "performance"
[bios.NumaNodesPerSocket]
value = "1"
why = "Our R7725s run NPS 1."
source = "snapshot"
confidence = "used"
generations = ["turin"]
"#]);
    let resolved = mine.resolve("turin-site", &turin).unwrap();
    assert_eq!(
        resolved.bios.keys().collect::<Vec<_>>(),
        ["NumaNodesPerSocket", "SysProfile"],
        "its own Turin row and performance's preset"
    );
}

#[test]
fn real_attribute_names_are_in_the_catalog_with_the_tokens_real_payloads_show() {
    let catalog = catalog::shipped().unwrap();
    for name in [
        "PciePreferredIoBus",
        "PcieEnhancedPreferredIo",
        "MemoryInterleaving",
        "DfPstateFreqOptimizer",
        "DfPstateLatencyOptimizer",
        "BoostFMax",
        "ControlledTurbo",
        "Hsmp",
        "PcieSpeedPmmControl",
        "MmioLimit",
        "MemOpMode",
        "OppSrefEn",
        "EqBypassToHighestRate",
    ] {
        assert!(catalog.by_attribute(name).is_some(), "{name}");
        assert!(catalog.seen(name).next().is_some(), "{name} has no seen token");
    }
    assert!(catalog.by_attribute("ControlledTurboMinusBin").is_some());
    let hits = catalog::search("preferred io");
    assert!(
        hits.iter()
            .any(|e| e.attributes.contains(&"PciePreferredIoBus".to_owned())),
        "{hits:?}"
    );
}

#[test]
fn base_says_why_16g_hosts_drift_on_correctable_error_logging() {
    let library = Library::shipped().unwrap();
    let base = library.get("base").unwrap();
    let why = &base.bios["CECriticalSEL"].why;
    assert!(why.contains("16G") && why.contains("Disabled"), "{why}");
}

#[test]
fn the_sev_asid_split_never_takes_the_registry_bound_as_the_cpu_s_maximum() {
    let library = Library::shipped().unwrap();
    // Dell's unified registry defines CpuMinSevAsid as 1..510 whatever the CPU (both real R750
    // registries); the Milan fixture with that bound.
    let mut milan = Fixture::load("r7525");
    for a in &mut milan.registry.registry_entries.attributes {
        if a.attribute_name == "CpuMinSevAsid" {
            a.upper_bound = Some(510);
        }
    }
    let resolved = library.resolve("confidential-computing", &milan.host()).unwrap();
    let p = plan(&resolved, &milan.state()).unwrap();
    assert_ne!(p.bios.get("CpuMinSevAsid"), Some(&AttributeValue::Integer(510)));
    assert!(!p.bios.contains_key("CpuMinSevAsid"), "{p:#?}");
    let d = diff(&resolved, &milan.state());
    let asid = d.changes.iter().find(|c| c.attribute == "CpuMinSevAsid").unwrap();
    assert_eq!(asid.status, Status::NotApplicable);
    assert!(asid.note.as_deref().unwrap().contains("cpu_max_sev_asids"), "{asid:?}");
    // The operator gives the maximum: all but 8 ASIDs go to SEV-ES and SEV-SNP guests.
    let mine = library_with(&[r#"
name = "our-cc"
description = "our SEV hosts"
extends = "confidential-computing"
[parameters]
cpu_max_sev_asids = 509
"#]);
    let resolved = mine.resolve("our-cc", &milan.host()).unwrap();
    let p = plan(&resolved, &milan.state()).unwrap();
    assert_eq!(p.bios.get("CpuMinSevAsid"), Some(&AttributeValue::Integer(502)));
}

#[test]
fn the_boot_section_refuses_what_it_does_not_know_like_every_other_key() {
    // `[boot]` takes three entries, each a table with its evidence; anything else is refused.
    let mut library = Library::shipped().unwrap();
    let err = library
        .add_toml("name = \"b\"\ndescription = \"d\"\n[boot]\nmode = \"Uefi\"\n", "b.toml")
        .unwrap_err();
    assert!(matches!(err, Error::Format { .. }), "{err:?}");
    assert!(err.to_string().starts_with("b.toml:4:"), "{err}");
    let err = library
        .add_toml(
            "name = \"b\"\ndescription = \"d\"\n[boot.next]\nvalue = \"Pxe\"\n",
            "b.toml",
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown field `next`, expected one of `mode`, `order`, `disabled`"),
        "{err}"
    );
}

#[test]
fn the_r6515_shaped_host_keeps_its_own_registry_tokens() {
    // A check of the test registry itself: what the preset rules force is what real hosts show.
    let (reg, current) = rome_power_run();
    let state = HostView::new(&reg, &current);
    let performance = Library::shipped()
        .unwrap()
        .resolve("performance", &HostFacts::from_bios(&current))
        .unwrap();
    let p = plan(&performance, &state).unwrap();
    let after = simulate(&state, &p);
    for (attribute, perf, _) in PRESETS {
        assert_eq!(after.get(*attribute), Some(&(*perf).into()), "{attribute}");
    }
    assert_eq!(after.get("EfficiencyOptimizedMode"), Some(&"Disabled".into()));
}
