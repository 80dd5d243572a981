//! How sure each recommendation is on a given host — per candidate, per generation its source
//! covers — and the fourth audit's findings about what the shipped profiles ask: the
//! power-performance virtualization host, the Milan power run, databases on a preset that locks
//! the fabric, AMD's newest accelerator-host table, Siena's two-CCX dies.

use crate::{Fixture, attrs, library_with, rule};
use bios_profiles::{
    Confidence, Generation, HostFacts, HostView, Library, Status, ValidateOptions, Wanted, diff, plan, simulate,
    validate,
};
use redfish_client::resources::bios::AttributeValue;
use serde_json::json;

fn host(brand: &str, sockets: u32, cores: u32) -> HostFacts {
    let mut bios = attrs(&[("Proc1Brand", brand), ("LogicalProc", "Enabled")]);
    if sockets == 2 {
        bios.insert("Proc2Brand".to_owned(), brand.into());
    }
    bios.insert("Proc1NumCores".to_owned(), AttributeValue::Integer(i64::from(cores)));
    HostFacts::from_bios(&bios)
}

#[test]
fn a_stated_preference_s_fallback_is_inferred_where_the_host_rules_the_first_choice_out() {
    let library = Library::shipped().unwrap();
    // A Genoa R7625 whose registry does not offer NPS 4: hpc falls back to 2.
    let mut r7625 = Fixture::load("r7625");
    for a in &mut r7625.registry.registry_entries.attributes {
        if a.attribute_name == "NumaNodesPerSocket" {
            a.values.retain(|v| v.value_name != "4");
        }
    }
    let hpc = library.resolve("hpc", &r7625.host()).unwrap();
    assert_eq!(hpc.bios["NumaNodesPerSocket"].confidence, Confidence::Stated);
    let d = diff(&hpc, &r7625.state());
    let nps = d.changes.iter().find(|c| c.attribute == "NumaNodesPerSocket").unwrap();
    assert_eq!(nps.desired, "2".into());
    assert_eq!(nps.confidence, Confidence::Inferred, "{nps:?}");
    assert_eq!(nps.choice.as_ref().unwrap().confidence, Confidence::Inferred);
    assert_eq!(
        nps.confidence_note.as_deref(),
        Some("stated for 4, the first choice; 2, taken in its place on this host, is our fallback")
    );
    // Where NPS 4 is offered, it keeps the note's confidence.
    let full = Fixture::load("r7625");
    let d = diff(&hpc, &full.state());
    let nps = d.changes.iter().find(|c| c.attribute == "NumaNodesPerSocket").unwrap();
    assert_eq!((nps.desired.clone(), nps.confidence), ("4".into(), Confidence::Stated));
    // A table that rules 4 out makes the resolved setting inferred before any registry is read
    // (the C6615's six channels), and says why.
    let c6615 = library.resolve("hpc", &Fixture::load("c6615").host()).unwrap();
    let setting = &c6615.bios["NumaNodesPerSocket"];
    assert_eq!(setting.confidence, Confidence::Inferred);
    assert!(setting.confidence_note.is_some(), "{setting:?}");
}

#[test]
fn used_and_stated_hold_only_on_the_generations_their_source_covers() {
    let library = Library::shipped().unwrap();
    // The Performance preset's values were seen on a real Genoa R7615 only.
    let genoa = library.resolve("performance", &Fixture::load("r7625").host()).unwrap();
    assert_eq!(genoa.bios["ProcPwrPerf"].confidence, Confidence::Used);
    assert_eq!(genoa.bios["ProcPwrPerf"].confidence_note, None);
    let milan = library.resolve("performance", &Fixture::load("r7525").host()).unwrap();
    let s = &milan.bios["ProcPwrPerf"];
    assert_eq!(s.confidence, Confidence::Inferred);
    assert_eq!(
        s.confidence_note.as_deref(),
        Some("used on genoa, the generations its source (idrac-r7615-capture) covers; inferred on milan")
    );
    // Bergamo takes Genoa's settings, but no Bergamo host was observed: inferred there too.
    let bergamo = library
        .resolve("performance", &host("AMD EPYC 9754 128-Core Processor", 2, 128))
        .unwrap();
    assert_eq!(bergamo.bios["ProcPwrPerf"].confidence, Confidence::Inferred);
    // A glossary tied to no generation keeps its confidence everywhere.
    assert_eq!(milan.bios["LogicalProc"].confidence, Confidence::Stated);
    // The file's own counts do not change: they describe what each source says where it speaks.
    let counts = library.get("performance").unwrap().confidence_counts();
    assert!(counts.used >= 7, "{counts:?}");
}

#[test]
fn virtualization_power_keeps_power_efficiency_s_fabric_and_link_values_and_the_site_s_cap() {
    let library = Library::shipped().unwrap();
    // The C6615 of Dell's power-performance record starts on Performance Per Watt (DAPC), with
    // the fabric in efficiency mode and ASPM L1 on.
    let c6615 = Fixture::load("c6615");
    let vp = library.resolve("virtualization-power", &c6615.host()).unwrap();
    let d = diff(&vp, &c6615.state());
    let status = |name: &str| d.changes.iter().find(|c| c.attribute == name).unwrap().status;
    assert_eq!(status("PowerProfileSelect"), Status::InSync);
    assert_eq!(status("PcieAspmL1"), Status::InSync);
    assert!(!d.changes.iter().any(|c| c.attribute == "ServerPwr.1.PowerCapSetting"));
    assert_eq!(vp.left[0].attribute, "ServerPwr.1.PowerCapSetting");
    // It differs from power-efficiency only where virtualization needs it.
    let pe = library.resolve("power-efficiency", &c6615.host()).unwrap();
    for name in [
        "PowerProfileSelect",
        "PcieAspmL1",
        "ApbDis",
        "ProcPwrPerf",
        "ProcCStates",
        "DfCState",
    ] {
        assert_eq!(vp.bios[name].wanted, pe.bios[name].wanted, "{name}");
    }
    // On Rome it takes the R7515 power run's link and efficiency values, as power-efficiency.
    let rome = library
        .resolve("virtualization-power", &host("AMD EPYC 7542 32-Core Processor", 1, 32))
        .unwrap();
    assert_eq!(rome.bios["EfficiencyOptimizedMode"].confidence, Confidence::Used);
    assert_eq!(rome.bios["PcieAspmL1"].wanted, Wanted::Value("Enabled".into()));
}

#[test]
fn the_milan_power_run_s_untaken_settings_are_named_and_turbo_off_is_an_opt_in_variant() {
    let library = Library::shipped().unwrap();
    let note = library.sources().get("dell-mlperf-bios").unwrap().note.clone().unwrap();
    for words in [
        "Turbo Boost Disabled",
        "XGMI Max Speed 16 GT/s",
        "NPS 4",
        "Virtualization Technology Disabled",
    ] {
        assert!(note.contains(words), "the source says what was not taken: {words}");
    }
    let milan = host("AMD EPYC 7763 64-Core Processor", 2, 64);
    let pe = library.resolve("power-efficiency", &milan).unwrap();
    assert_eq!(pe.bios["ProcTurboMode"].wanted, Wanted::Value("Enabled".into()));
    let gpu = library.resolve("power-efficiency-gpu", &milan).unwrap();
    let turbo = &gpu.bios["ProcTurboMode"];
    assert_eq!(turbo.wanted, Wanted::Value("Disabled".into()));
    assert_eq!(
        (turbo.source.as_str(), turbo.confidence),
        ("dell-mlperf-bios", Confidence::Used)
    );
    assert_eq!(turbo.quote.as_deref(), Some("Turbo Boost | Disabled"));
    let genoa = library
        .resolve("power-efficiency-gpu", &host("AMD EPYC 9654 96-Core Processor", 2, 96))
        .unwrap();
    assert_eq!(genoa.bios["ProcTurboMode"].confidence, Confidence::Inferred);
}

#[test]
fn database_pins_the_fabric_in_custom_where_the_performance_preset_locks_it() {
    // A real R750 (Intel) locks and forces Uncore Frequency, ApbDis's Intel counterpart, under
    // every preset; give the R7625 the same rule for ApbDis.
    let mut r7625 = Fixture::load("r7625");
    let lock = [
        rule(
            "ApbDis",
            "ReadOnly",
            json!(true),
            &[("SysProfile", "NEQ", json!("Custom"))],
        ),
        rule(
            "ApbDis",
            "CurrentValue",
            json!("Disabled"),
            &[("SysProfile", "EQU", json!("PerfOptimized"))],
        ),
    ];
    for r in lock {
        r7625
            .registry
            .registry_entries
            .dependencies
            .push(serde_json::from_value(r).unwrap());
    }
    let library = Library::shipped().unwrap();
    let db = library.resolve("database", &r7625.host()).unwrap();
    let problems = validate(&db, &r7625.state(), &ValidateOptions::default());
    assert!(
        problems.iter().all(|v| v.severity == bios_profiles::Severity::Warning),
        "{problems:#?}"
    );
    let p = plan(&db, &r7625.state()).unwrap();
    assert_eq!(p.bios["SysProfile"], "Custom".into());
    assert_eq!(p.bios["ApbDis"], "Enabled".into());
    let after = simulate(&r7625.state(), &p);
    assert!(diff(&db, &HostView::new(&r7625.registry, &after)).is_clean());
    // Every value the preset would have given is still asked for, from a real host on it.
    for name in [
        "ProcPwrPerf",
        "ProcCStates",
        "PcieAspmL1",
        "DeterminismSlider",
        "PowerProfileSelect",
    ] {
        assert_eq!(db.bios[name].source, "idrac-r7615-capture", "{name}");
    }
}

#[test]
fn virtualization_s_nps_1_is_our_reading_not_a_statement() {
    let library = Library::shipped().unwrap();
    let virt = library.get("virtualization").unwrap();
    let nps = &virt.bios["NumaNodesPerSocket"];
    assert_eq!(
        (nps.source.as_str(), nps.confidence),
        ("vmware-epyc", Confidence::Inferred)
    );
}

#[test]
fn ai_gpu_follows_amd_s_2026_table_on_genoa_and_the_older_tables_where_it_does_not_reach() {
    let library = Library::shipped().unwrap();
    let source = library.sources().get("amd-instinct-acceptance").unwrap();
    assert_eq!(source.date.as_deref(), Some("2026"));
    assert_eq!(
        source.generations,
        [Generation::Genoa, Generation::Bergamo, Generation::Turin]
    );
    assert!(source.note.as_deref().unwrap().contains("MI3xx"));
    let genoa = library
        .resolve("ai-gpu", &host("AMD EPYC 9654 96-Core Processor", 2, 96))
        .unwrap();
    let df = &genoa.bios["DfCState"];
    assert_eq!(df.wanted, Wanted::Value("Disabled".into()));
    assert_eq!(
        (df.source.as_str(), df.confidence),
        ("amd-instinct-acceptance", Confidence::Inferred)
    );
    assert_eq!(genoa.bios["IommuSupport"].wanted, Wanted::Value("Enabled".into()));
    // Rome and Milan keep their own tables: IOMMU off below 256 threads.
    let milan = library
        .resolve("ai-gpu", &host("AMD EPYC 7543 32-Core Processor", 2, 32))
        .unwrap();
    assert_eq!(milan.bios["IommuSupport"].wanted, Wanted::Value("Disabled".into()));
    assert_eq!(milan.bios["IommuSupport"].source, "amd-instinct-host-7003");
    // Every dated AMD table names the generation it speaks for.
    for id in ["amd-instinct-host", "amd-instinct-host-7003", "amd-instinct-host-7002"] {
        assert!(!library.sources().get(id).unwrap().generations.is_empty(), "{id}");
    }
}

#[test]
fn l3_as_numa_stays_off_on_siena_s_two_ccx_dies_whatever_the_workload() {
    let library = library_with(&[]);
    let c6615 = Fixture::load("c6615");
    assert_eq!(c6615.host().generation, Some(Generation::Siena));
    for name in ["performance", "low-latency", "storage-io", "power-efficiency"] {
        let resolved = library.resolve(name, &c6615.host()).unwrap();
        let ccx = &resolved.bios["CcxAsNumaDomain"];
        assert_eq!(ccx.wanted, Wanted::Value("Disabled".into()), "{name}");
        assert_eq!(ccx.origin, "base [platform two-ccx-dies]", "{name}");
    }
}

#[test]
fn hpc_enables_enhanced_preferred_io_on_milan_as_storage_io_and_ai_gpu_do() {
    let library = Library::shipped().unwrap();
    let milan = host("AMD EPYC 7763 64-Core Processor", 2, 64);
    for name in ["hpc", "storage-io", "ai-gpu"] {
        let resolved = library.resolve(name, &milan).unwrap();
        assert_eq!(
            resolved.bios["PcieEnhancedPreferredIo"].wanted,
            Wanted::Value("Enabled".into()),
            "{name}"
        );
    }
    // Elsewhere base keeps it off on Rome and Milan: a switch away turns it off again.
    let performance = library.resolve("performance", &milan).unwrap();
    assert_eq!(performance.bios["PcieEnhancedPreferredIo"].origin, "base");
    assert_eq!(
        performance.bios["PcieEnhancedPreferredIo"].wanted,
        Wanted::Value("Disabled".into())
    );
}
