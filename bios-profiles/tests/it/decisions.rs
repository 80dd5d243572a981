//! The data-table decisions a resolved setting carries, as later output prints them: which NPS
//! row or population rule decided and why, what a read-back NPS 1 means, the SEV ASID split and
//! where the CPU's maximum came from; and the format additions that feed them.

use crate::{Fixture, attrs, library_with};
use bios_profiles::tables::{self, CpuLayout, SevRow, Tables};
use bios_profiles::{
    Confidence, DataTable, Generation, HostFacts, HostVerdict, Library, Outcome, Profile, Sources, Status, Unchecked,
    Wanted, diff, plan,
};
use redfish_client::resources::attribute_registry::AllowedValue;
use redfish_client::resources::bios::AttributeValue;
use redfish_client::resources::computer_system::Memory;
use serde_json::json;

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

/// The Milan fixture carrying two EPYC 7552s (six CCDs each) with NPS 4 still listed, and
/// `ProcCcds` offering `extra` CCD counts beyond the fixture's.
fn r7525_with_7552(extra_ccds: &[&str]) -> Fixture {
    let mut f = Fixture::load("r7525");
    for n in [1, 2] {
        f.current
            .insert(format!("Proc{n}Brand"), "AMD EPYC 7552 48-Core Processor".into());
        f.current
            .insert(format!("Proc{n}NumCores"), AttributeValue::Integer(48));
    }
    for a in &mut f.registry.registry_entries.attributes {
        if a.attribute_name == "ProcCcds" {
            for token in extra_ccds {
                a.values.push(AllowedValue {
                    value_name: (*token).to_owned(),
                    value_display_name: Some((*token).to_owned()),
                });
            }
        }
    }
    f
}

#[test]
fn the_nps_choice_names_the_layout_row_and_the_population_rule_that_decided() {
    let f = r7525_with_7552(&[]);
    let host = f.host().with_memory(&dimms(&[('A', 6), ('B', 6)]));
    let library = Library::shipped().unwrap();
    let hpc = library.resolve("hpc", &host).unwrap();
    let nps = &hpc.bios["NumaNodesPerSocket"];
    let layout = nps.decisions.iter().find(|d| d.table == DataTable::NpsLayout).unwrap();
    assert_eq!(layout.row, "48 cores, 6x2x4, two sockets");
    assert_eq!(layout.outcome, Outcome::RulesOut);
    assert_eq!(layout.rules_out, ["4".into()]);
    assert_eq!(layout.source, "dell-r6525-manual");
    assert_eq!(layout.quote.as_deref(), Some("48 | 6x2x4 | 2, 1 | 2, 1, 0"));
    // The CPU layout is our derivation from AMD's L3 sizes: the row is only as sure as that.
    assert_eq!(layout.confidence, Confidence::Inferred);
    let population = nps
        .decisions
        .iter()
        .find(|d| d.table == DataTable::NpsPopulation && d.outcome == Outcome::RulesOut)
        .unwrap();
    assert_eq!(population.row, "6 DIMMs per socket");
    assert_eq!(population.rules_out, ["2".into()]);
    // The diff carries the same rows on its choice, and the reason names them in order.
    let d = diff(&hpc, &f.state());
    let change = d.changes.iter().find(|c| c.attribute == "NumaNodesPerSocket").unwrap();
    assert_eq!(change.desired, "1".into());
    let choice = change.choice.as_ref().unwrap();
    assert_eq!(choice.decisions, nps.decisions);
    assert_eq!(
        choice.reason,
        "4 is not possible on this host (nps-layout: 48 cores, 6x2x4, two sockets): Dell's table gives the EPYC 7552 (48 cores, 6x2x4) NPS 2, 1, 0 on two sockets; 2 is not possible on this host (nps-population: 6 DIMMs per socket): this many DIMMs cannot fill four channels of each half alike (NPS 2) or all sixteen of the system (NPS 0), so the BIOS would fall back; NPS 4's two-channel interleave takes any population, and NPS 1 is the BIOS's default; using 1"
    );
    let json = serde_json::to_value(choice).unwrap();
    assert_eq!(json["decisions"][0]["table"], "nps-layout");
    assert_eq!(json["decisions"][0]["outcome"], "rules_out");
}

#[test]
fn an_nps_read_back_as_1_after_another_was_written_is_explained() {
    let f = r7525_with_7552(&[]);
    let host = f.host().with_memory(&dimms(&[('A', 8), ('B', 8)]));
    let hpc = Library::shipped().unwrap().resolve("hpc", &host).unwrap();
    let nps = &hpc.bios["NumaNodesPerSocket"];
    let note = nps.readback_note(&"2".into(), &"1".into()).unwrap();
    assert!(
        note.contains("fell back to NPS 1") && note.contains("UEFI0391"),
        "{note}"
    );
    assert_eq!(nps.readback_note(&"2".into(), &"2".into()), None);
    assert_eq!(nps.readback_note(&"2".into(), &"4".into()), None);
}

#[test]
fn four_dimms_rule_nps_2_out_and_twelve_warn_because_the_idrac_reports_no_channels() {
    let f = r7525_with_7552(&[]);
    let library = Library::shipped().unwrap();
    // Four DIMMs per socket cannot fill the four channels of each half: NPS 2 is ruled out, and
    // the row still warns, for NPS 1's four-channel exception depends on the slots.
    let host = f.host().with_memory(&dimms(&[('A', 4), ('B', 4)]));
    let hpc = library.resolve("hpc", &host).unwrap();
    let nps = &hpc.bios["NumaNodesPerSocket"];
    let row = nps
        .decisions
        .iter()
        .find(|d| d.table == DataTable::NpsPopulation && d.row == "4 DIMMs per socket")
        .unwrap();
    assert_eq!(row.outcome, Outcome::RulesOut);
    assert!(row.rules_out.contains(&"2".into()), "{row:?}");
    assert!(
        row.reason.contains("cannot fill the four channels of each half"),
        "{}",
        row.reason
    );
    assert!(nps.excluded.iter().any(|e| e.value == "2".into()));
    // The 7552 has no NPS 4 and the population no NPS 2: NPS 1 is what is left.
    assert_eq!(
        nps.wanted
            .candidates()
            .unwrap()
            .into_iter()
            .find(|v| !nps.excluded.iter().any(|e| &e.value == v)),
        Some("1".into())
    );
    // Twelve: it depends on which channels hold the second four, which the iDRAC does not say.
    let host = f.host().with_memory(&dimms(&[('A', 12), ('B', 12)]));
    let hpc = library.resolve("hpc", &host).unwrap();
    let nps = &hpc.bios["NumaNodesPerSocket"];
    let warning = nps
        .decisions
        .iter()
        .find(|d| d.table == DataTable::NpsPopulation && d.outcome == Outcome::Warning)
        .unwrap();
    assert_eq!(warning.row, "12 DIMMs per socket");
    assert!(warning.reason.contains("second four DIMMs"), "{}", warning.reason);
    assert!(!nps.excluded.iter().any(|e| e.value == "2".into()));
}

#[test]
fn genoa_s_undocumented_population_rules_warn_and_decide_nothing() {
    let r7625 = Fixture::load("r7625");
    let host = r7625.host().with_memory(&dimms(&[('A', 12), ('B', 10)]));
    let library = Library::shipped().unwrap();
    let hpc = library.resolve("hpc", &host).unwrap();
    let nps = &hpc.bios["NumaNodesPerSocket"];
    assert!(nps.excluded.is_empty(), "{:?}", nps.excluded);
    let warning = nps.decisions.iter().find(|d| d.outcome == Outcome::Warning).unwrap();
    assert_eq!(warning.row, "genoa, any population");
    assert!(warning.reason.contains("no NPS population rules"), "{}", warning.reason);
    // The diff keeps the warning on the choice although NPS 4 was the first choice.
    let d = diff(&hpc, &r7625.state());
    let change = d.changes.iter().find(|c| c.attribute == "NumaNodesPerSocket").unwrap();
    assert_eq!(change.desired, "4".into());
    assert!(
        change
            .choice
            .as_ref()
            .unwrap()
            .decisions
            .iter()
            .any(|d| d.outcome == Outcome::Warning)
    );
    // A profile that writes only NPS 1 gets no population warning.
    let performance = library.resolve("performance", &host).unwrap();
    assert!(performance.bios["NumaNodesPerSocket"].decisions.is_empty());
}

#[test]
fn a_host_whose_procccds_list_contradicts_the_cpu_table_does_not_get_the_layout_row() {
    let library = Library::shipped().unwrap();
    // The fixture lists ProcCcds up to 6, as a six-CCD part would: Dell's row applies.
    let fits = r7525_with_7552(&[]);
    let p = plan(&library.resolve("hpc", &fits.host()).unwrap(), &fits.state()).unwrap();
    assert_eq!(p.bios["NumaNodesPerSocket"], "2".into());
    // A host offering 8 CCDs is not the six-CCD part the table has: the row is set aside.
    let odd = r7525_with_7552(&["8"]);
    let profile = library.resolve("hpc", &odd.host()).unwrap();
    let p = plan(&profile, &odd.state()).unwrap();
    assert_eq!(p.bios["NumaNodesPerSocket"], "4".into());
    let choice = &p.choices["NumaNodesPerSocket"];
    let layout = choice
        .decisions
        .iter()
        .find(|d| d.table == DataTable::NpsLayout)
        .unwrap();
    assert_eq!(layout.outcome, Outcome::Warning);
    assert!(
        layout
            .reason
            .starts_with("this host's ProcCcds offers 8 CCDs where the CPU layout table gives 6"),
        "{}",
        layout.reason
    );
}

#[test]
fn a_24_core_3x2x4_layout_offers_nps_1_only_and_0_on_two_sockets() {
    // Dell's row for 24 cores on three CCDs; the CPU row here is a test's own (no shipped SKU
    // has this layout: it comes from down-coring).
    let mut t = tables::shipped().clone();
    t.cpu.push(CpuLayout {
        generation: Generation::Rome,
        models: vec!["7T22".into()],
        cores: 24,
        ccds: 3,
        ccxs_per_ccd: 2,
        source: "amd-epyc-specs".into(),
        confidence: Confidence::Inferred,
        quote: None,
    });
    let library = library_with(&[r#"
name = "any-nps"
description = "asks for every NPS"
extends = "performance"
[bios.NumaNodesPerSocket]
prefer = ["4", "2", "0", "1"]
why = "w"
source = "dell-r6525-manual"
confidence = "inferred"
"#])
    .with_tables(t);
    let left = |sockets: u32| {
        let mut bios = attrs(&[("Proc1Brand", "AMD EPYC 7T22 24-Core Processor")]);
        if sockets == 2 {
            bios.insert("Proc2Brand".to_owned(), "AMD EPYC 7T22 24-Core Processor".into());
        }
        bios.insert("Proc1NumCores".to_owned(), AttributeValue::Integer(24));
        let resolved = library.resolve("any-nps", &HostFacts::from_bios(&bios)).unwrap();
        let nps = &resolved.bios["NumaNodesPerSocket"];
        nps.wanted
            .candidates()
            .unwrap()
            .into_iter()
            .filter(|v| !nps.excluded.iter().any(|e| &e.value == v))
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(left(1), ["1"]);
    assert_eq!(left(2), ["0", "1"]);
}

#[test]
fn the_asid_split_carries_the_cpu_s_maximum_its_origin_and_the_plain_sev_consequence() {
    let milan = Fixture::load("r7525");
    let library = library_with(&[r#"
name = "our-cc"
description = "our SEV hosts"
extends = "confidential-computing"
[parameters]
cpu_max_sev_asids = 509
"#]);
    let resolved = library.resolve("our-cc", &milan.host()).unwrap();
    assert_eq!(resolved.parameters.cpu_max_sev_asids, Some(509));
    let setting = &resolved.bios["CpuMinSevAsid"];
    assert_eq!(setting.wanted, Wanted::Value(AttributeValue::Integer(502)));
    let split = setting.asid_split.as_ref().unwrap();
    assert_eq!(
        (split.max_asids, split.plain_sev, split.sev_es_snp, split.min_sev_asid),
        (509, 8, 501, 502)
    );
    assert_eq!(split.max_from, "parameter cpu_max_sev_asids = 509 of profile our-cc");
    assert!(
        split
            .reason
            .starts_with("ASIDs 1-501 (501) for SEV-ES and SEV-SNP guests, 502-509 (8) for plain SEV guests"),
        "{}",
        split.reason
    );
    // The plan and the diff carry the split on the choice.
    let p = plan(&resolved, &milan.state()).unwrap();
    assert_eq!(p.bios["CpuMinSevAsid"], AttributeValue::Integer(502));
    assert_eq!(p.choices["CpuMinSevAsid"].asid_split.as_ref(), Some(split));
    let d = diff(&resolved, &milan.state());
    let change = d.changes.iter().find(|c| c.attribute == "CpuMinSevAsid").unwrap();
    assert_eq!(change.choice.as_ref().unwrap().asid_split.as_ref(), Some(split));
    let json = serde_json::to_value(&resolved).unwrap();
    let cpu_min = json["bios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["attribute"] == "CpuMinSevAsid")
        .unwrap();
    assert_eq!(cpu_min["asid_split"]["plain_sev"], 8);
}

#[test]
fn a_sev_table_row_gives_the_maximum_and_says_it_depends_on_memory() {
    let mut t = tables::shipped().clone();
    t.sev.cpu.push(SevRow {
        models: vec!["7763".into()],
        max_asids: 253,
        memory_dependent: true,
        source: "dell-c6615-note".into(),
        confidence: Confidence::Inferred,
        quote: None,
    });
    let library = Library::shipped().unwrap().with_tables(t);
    let milan = Fixture::load("r7525");
    let resolved = library.resolve("confidential-computing", &milan.host()).unwrap();
    let split = resolved.bios["CpuMinSevAsid"].asid_split.clone().unwrap();
    assert_eq!(split.min_sev_asid, 246);
    assert!(split.max_from.contains("EPYC 7763") && split.max_from.contains("memory configuration"));
    // A maximum the fixed plain-SEV count would use up entirely is refused.
    let tiny = library_with(&[r#"
name = "tiny"
description = "a part with 8 ASIDs"
extends = "confidential-computing"
[parameters]
cpu_max_sev_asids = 8
"#]);
    let resolved = tiny.resolve("tiny", &milan.host()).unwrap();
    assert!(!resolved.bios.contains_key("CpuMinSevAsid"));
    let skipped = resolved
        .skipped
        .iter()
        .find(|s| s.setting.attribute == "CpuMinSevAsid")
        .unwrap();
    assert!(
        skipped.reason.contains("leave none for SEV-ES and SEV-SNP"),
        "{}",
        skipped.reason
    );
}

#[test]
fn the_shipped_tables_cite_known_sources_and_their_cpu_rows_name_their_generation() {
    let library = Library::shipped().unwrap();
    let t = library.tables();
    t.check_sources(library.sources()).unwrap();
    assert!(Tables::from_toml(tables::SHIPPED_TABLES, "tables.toml").is_ok());
    for row in &t.cpu {
        for model in &row.models {
            assert_eq!(
                Generation::from_cpu_model(&format!("AMD EPYC {model}")),
                Some(row.generation),
                "{model}"
            );
        }
        assert!(
            row.cores / row.ccds <= 8,
            "{:?}: Zen 2 and Zen 3 CCDs hold at most 8 cores",
            row.models
        );
    }
    // Every Rome layout row of Dell's Table 41 is there, and each Rome CPU row that has a row
    // uses its notation.
    let rome_rows: Vec<(u32, &str)> = t
        .nps
        .layout
        .iter()
        .filter(|r| r.generations.contains(&Generation::Rome))
        .map(|r| (r.cores, r.layout.as_str()))
        .collect();
    assert_eq!(
        rome_rows,
        [
            (64, "8x2x4"),
            (48, "6x2x4"),
            (32, "4x2x4"),
            (24, "3x2x4"),
            (16, "2x2x4"),
            (16, "4x2x2"),
            (8, "4x2x1"),
            (8, "2x2x2")
        ]
    );
    // The fixtures' ProcCcds lists agree with the CPU table where it has their CPU.
    for model in ["r7625", "r7525", "c6615"] {
        let f = Fixture::load(model);
        let Some(row) = t.cpu_layout(&f.host()) else { continue };
        let most = f
            .registry
            .registry_entries
            .attributes
            .iter()
            .find(|a| a.attribute_name == "ProcCcds")
            .and_then(|a| a.allowed_values().filter_map(|v| v.parse::<u32>().ok()).max());
        assert!(most.is_none_or(|m| m <= row.ccds), "{model}: {most:?} > {}", row.ccds);
    }
}

#[test]
fn the_format_refuses_a_split_with_no_plain_sev_asid_and_unknown_parameters() {
    let sources = Library::shipped().unwrap().sources().clone();
    let parse = |text: &str| Profile::from_toml(text, "p.toml", &sources).map(|_| ());
    let setting = "[bios.CpuMinSevAsid]\nsev_asids = { plain_sev = 0 }\nwhy = \"w\"\nsource = \"snapshot\"\nconfidence = \"inferred\"\n";
    let err = parse(&format!("name = \"p\"\ndescription = \"d\"\n{setting}")).unwrap_err();
    assert!(err.to_string().contains("at least one plain-SEV ASID"), "{err}");
    let err = parse("name = \"p\"\ndescription = \"d\"\n[parameters]\nmax_asids = 509\n").unwrap_err();
    assert!(err.to_string().contains("unknown field `max_asids`"), "{err}");
    let err = parse("name = \"p\"\ndescription = \"d\"\n[parameters]\ncpu_max_sev_asids = 0\n").unwrap_err();
    assert!(
        err.to_string().contains("`cpu_max_sev_asids` must be at least 1"),
        "{err}"
    );
    // Platforms may name generations and thread counts.
    let ok = parse(
        "name = \"p\"\ndescription = \"d\"\n[platform.big]\ngenerations = [\"genoa\"]\nmin_threads = 256\n[platform.big.bios.IommuSupport]\nvalue = \"Enabled\"\nwhy = \"w\"\nsource = \"snapshot\"\nconfidence = \"inferred\"\n",
    );
    assert!(ok.is_ok(), "{ok:?}");
}

#[test]
fn threads_count_smt_as_the_profile_leaves_it() {
    let bios = {
        let mut b = attrs(&[
            ("Proc1Brand", "AMD EPYC 9654 96-Core Processor"),
            ("Proc2Brand", "AMD EPYC 9654 96-Core Processor"),
            ("LogicalProc", "Enabled"),
        ]);
        b.insert("Proc1NumCores".to_owned(), AttributeValue::Integer(96));
        b
    };
    let host = HostFacts::from_bios(&bios);
    assert_eq!((host.smt, host.threads()), (Some(true), Some(384)));
    let library = Library::shipped().unwrap();
    // hpc turns SMT off: 192 threads, so base's pin for more than 255 does not apply.
    let hpc = library.resolve("hpc", &host).unwrap();
    assert_eq!(hpc.host.threads(), Some(192));
    assert!(!hpc.platforms.iter().any(|p| p.contains("over-255-threads")));
    let virt = library.resolve("virtualization", &host).unwrap();
    assert_eq!(virt.platforms, ["base [platform over-255-threads]"]);
    assert_eq!(HostFacts::default().threads(), None);
}

/// Issue 31: on Turin, where no source covers the BIOS settings, a diff compares what has
/// evidence (Dell's own preset, and the iDRAC settings, which do not depend on the CPU), says of
/// every other setting that it could not be checked for lack of evidence, and the host is
/// unverified, never in sync.
#[test]
fn a_bios_for_other_generations_reports_not_applicable_with_the_generation_rule() {
    let library = Library::shipped().unwrap();
    let turin = Fixture::load("r7625");
    let mut facts = turin.host();
    facts.cpu = Some("AMD EPYC 9965 192-Core Processor".into());
    facts.generation = Some(Generation::Turin);
    let resolved = library.resolve("performance", &facts).unwrap();
    let d = diff(&resolved, &turin.state());
    let checked: Vec<&str> = d
        .changes
        .iter()
        .filter(|c| c.status != Status::NotApplicable)
        .map(|c| c.attribute.as_str())
        .collect();
    assert_eq!(
        checked,
        ["SysProfile", "ServerPwr.1.PowerCapSetting"],
        "the preset and the power cap: {d:#?}"
    );
    let unchecked: Vec<&bios_profiles::Change> =
        d.changes.iter().filter(|c| c.status == Status::NotApplicable).collect();
    assert!(!unchecked.is_empty());
    for c in &unchecked {
        assert_eq!(c.not_applicable, Some(Unchecked::NoEvidence), "{c:#?}");
        assert!(
            c.note.as_deref().is_some_and(|n| n.starts_with("no Turin evidence")),
            "{c:#?}"
        );
    }
    assert_eq!(d.unverified(), unchecked.len());
    assert_eq!(
        d.verdict(),
        HostVerdict::Unverified,
        "nothing differs, but not proven in sync"
    );
    // The one source that covers Turin, AMD's 2026 accelerator-host table, backs ai-gpu's rows.
    let sources: &Sources = library.sources();
    let turin_sources: Vec<&str> = sources
        .iter()
        .filter(|s| s.generations.contains(&Generation::Turin))
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(turin_sources, ["amd-instinct-acceptance"]);
    let ai = library.resolve("ai-gpu", &facts).unwrap();
    let rows: Vec<&str> = ai.bios.keys().map(String::as_str).collect();
    assert_eq!(rows, ["DfCState", "IommuSupport", "SysProfile"]);
    assert!(
        ai.bios["DfCState"].source == "amd-instinct-acceptance"
            && ai.bios["IommuSupport"].source == "amd-instinct-acceptance"
    );
    assert_eq!(
        ai.bios["SysProfile"].wanted,
        Wanted::Value("PerfOptimized".into()),
        "Dell's preset"
    );
    // A host of a generation with evidence: every setting is checked, none is unverified.
    let genoa = library.resolve("performance", &turin.host()).unwrap();
    let g = diff(&genoa, &turin.state());
    assert_eq!(g.unverified(), 0);
    assert!(
        g.changes
            .iter()
            .filter(|c| c.status == Status::NotApplicable)
            .all(|c| c.not_applicable != Some(Unchecked::NoEvidence)),
        "{g:#?}"
    );
}

/// Want of evidence holds back the shipped recommendations, not the operator: on Turin a
/// profile of one's own that extends a shipped one gets its own settings checked and applied
/// (and a setting restricted to other generations is still excluded), while what it inherits
/// stays unverified.
#[test]
fn on_turin_a_profile_of_one_s_own_is_checked_where_the_shipped_recommendations_are_not() {
    let mut library = Library::shipped().unwrap();
    library
        .add_toml(
            r#"
name = "site-turin"
description = "our Turin nodes"
extends = "performance"
[bios.NumaNodesPerSocket]
value = 2
why = "Our scheduler places one job per half socket."
source = "site-benchmarks"
confidence = "used"
[bios.ProcCStates]
value = "Enabled"
generations = ["genoa"]
why = "Only our Genoa nodes idle long enough."
source = "site-benchmarks"
confidence = "used"
[sources.site-benchmarks]
title = "Our own runs"
publisher = "Site operations"
"#,
            "site-turin.toml",
        )
        .unwrap();
    let turin = Fixture::load("r7625");
    let mut facts = turin.host();
    facts.cpu = Some("AMD EPYC 9965 192-Core Processor".into());
    facts.generation = Some(Generation::Turin);
    let resolved = library.resolve("site-turin", &facts).unwrap();
    assert_eq!(resolved.bios["NumaNodesPerSocket"].wanted, Wanted::Value(2.into()));
    let d = diff(&resolved, &turin.state());
    let status = |name: &str| {
        d.changes
            .iter()
            .find(|c| c.attribute == name)
            .map(|c| (c.status, c.not_applicable))
    };
    assert_eq!(status("NumaNodesPerSocket"), Some((Status::Drift, None)), "{d:#?}");
    assert_eq!(
        status("ProcCStates"),
        Some((Status::NotApplicable, Some(Unchecked::Excluded))),
        "its own generation list still rules: {d:#?}"
    );
    assert_eq!(
        status("LogicalProc"),
        Some((Status::NotApplicable, Some(Unchecked::NoEvidence))),
        "inherited from a shipped profile: {d:#?}"
    );
    assert_eq!(d.verdict(), HostVerdict::Drift);
}

#[test]
fn the_sources_a_resolved_profile_lists_include_the_table_rows_that_decided() {
    let library = Library::shipped().unwrap();
    let f = r7525_with_7552(&[]);
    let hpc = library.resolve("hpc", &f.host()).unwrap();
    let citations = hpc.citations(library.sources());
    let manual = citations.iter().find(|c| c.id == "dell-r6525-manual").unwrap();
    assert_eq!(
        manual.cited_by,
        ["NumaNodesPerSocket (nps-layout: 48 cores, 6x2x4, two sockets)"]
    );
    assert_eq!(manual.quotes[0].quote, "48 | 6x2x4 | 2, 1 | 2, 1, 0");
}

#[test]
fn the_tables_say_which_written_nps_a_bios_replaces_with_nps_1_at_post() {
    let t = tables::shipped();
    // A two-socket EPYC 7552 with six DIMMs per socket: NPS 4 (the layout) and NPS 2 (the
    // population) come back as NPS 1; NPS 1 stays.
    let f = r7525_with_7552(&[]);
    let host = f.host().with_memory(&dimms(&[('A', 6), ('B', 6)]));
    let (value, why) = t.nps_after_post(&host, "4").unwrap();
    assert_eq!(value, "1".into());
    assert_eq!(why.table, DataTable::NpsLayout);
    assert!(why.readback.as_deref().unwrap().contains("UEFI0391"));
    assert_eq!(t.nps_after_post(&host, "2").unwrap().1.table, DataTable::NpsPopulation);
    assert!(t.nps_after_post(&host, "1").is_none());
    // Fully populated: NPS 2 stays. Genoa documents no fallback here: nothing is modelled.
    let full = f.host().with_memory(&dimms(&[('A', 8), ('B', 8)]));
    assert!(t.nps_after_post(&full, "2").is_none());
    let genoa = Fixture::load("r7625")
        .host()
        .with_memory(&dimms(&[('A', 12), ('B', 3)]));
    assert!(t.nps_after_post(&genoa, "4").is_none());
}
