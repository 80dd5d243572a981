//! The shipped profiles on the fixture hosts: they validate, and their plans lead to clean diffs.

use crate::{Fixture, MODELS};
use bios_profiles::library::SHIPPED_PROFILES;
use bios_profiles::{
    Confidence, Generation, HostView, Library, Plan, ResolvedProfile, Severity, Status, ValidateOptions, ViolationKind,
    Wanted, catalog, diff, plan, simulate, simulate_idrac, validate, validate_idrac,
};
use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::resources::bios::AttributeValue;
use std::collections::BTreeSet;

/// Every (profile, fixture) pair the profile targets, resolved for the fixture host.
fn targeted() -> Vec<(ResolvedProfile, &'static Fixture)> {
    static FIXTURES: std::sync::OnceLock<Vec<Fixture>> = std::sync::OnceLock::new();
    let fixtures = FIXTURES.get_or_init(|| MODELS.into_iter().map(Fixture::load).collect());
    let library = Library::shipped().unwrap();
    let mut out = Vec::new();
    for profile in library.list() {
        for fixture in fixtures {
            if profile.targets_host(&fixture.host()) {
                out.push((library.resolve(&profile.name, &fixture.host()).unwrap(), fixture));
            }
        }
    }
    out
}

#[test]
fn fixture_hosts_are_the_documented_machines() {
    let facts: Vec<(String, Option<Generation>)> = MODELS
        .into_iter()
        .map(|m| {
            let h = Fixture::load(m).host();
            (h.model.unwrap(), h.generation)
        })
        .collect();
    assert_eq!(
        facts,
        [
            ("PowerEdge R7625".to_owned(), Some(Generation::Genoa)),
            ("PowerEdge R7525".to_owned(), Some(Generation::Milan)),
            ("PowerEdge C6615".to_owned(), Some(Generation::Siena)),
        ]
    );
}

#[test]
fn every_profile_file_is_embedded_and_named_after_its_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/dell");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.ends_with(".toml")
                && !["sources.toml", "catalog.toml", "tables.toml", "managed.toml"].contains(&n.as_str())
        })
        .map(|n| format!("profiles/dell/{n}"))
        .collect();
    let embedded: BTreeSet<String> = SHIPPED_PROFILES.iter().map(|(p, _)| (*p).to_owned()).collect();
    assert_eq!(on_disk, embedded);
    let library = Library::shipped().unwrap();
    for (path, _) in SHIPPED_PROFILES {
        let stem = path.trim_start_matches("profiles/dell/").trim_end_matches(".toml");
        let profile = library
            .get(stem)
            .unwrap_or_else(|| panic!("{path} is not named {stem}"));
        assert_eq!(profile.file, *path);
    }
    assert!(library.list().len() >= 9);
}

#[test]
fn every_shipped_attribute_is_in_the_catalog() {
    let catalog = catalog::shipped().unwrap();
    let library = Library::shipped().unwrap();
    for profile in library.list() {
        for setting in profile.settings() {
            assert!(
                catalog.by_attribute(&setting.attribute).is_some(),
                "{}: {} missing from catalog.toml",
                profile.name,
                setting.attribute
            );
        }
    }
}

#[test]
fn every_workload_profile_chooses_a_system_profile_and_no_power_cap_unless_efficiency() {
    let library = Library::shipped().unwrap();
    for profile in library.list() {
        if profile.name == "base" || profile.cpu == Some(bios_profiles::Cpu::Any) {
            continue;
        }
        let resolved = library.resolve(&profile.name, &Default::default()).unwrap();
        assert!(resolved.bios.contains_key("SysProfile"), "{}", profile.name);
        let cap = resolved
            .idrac
            .values()
            .find(|s| s.setting.attribute == "ServerPwr.1.PowerCapSetting");
        let keeps_the_sites_cap = ["power-efficiency", "power-efficiency-gpu", "virtualization-power"];
        if keeps_the_sites_cap.contains(&profile.name.as_str()) {
            assert!(cap.is_none(), "{}", profile.name);
            assert!(
                resolved
                    .left
                    .iter()
                    .any(|l| l.attribute == "ServerPwr.1.PowerCapSetting"),
                "{} leaves the cap alone on purpose, saying why",
                profile.name
            );
        } else {
            assert_eq!(
                cap.unwrap().setting.wanted,
                Wanted::Value("Disabled".into()),
                "{}",
                profile.name
            );
        }
    }
}

/// Attributes a fixture does not have although a shipped profile sets them there, with the
/// reason: strict validation may report these as not applicable, and nothing else.
const ABSENT_ON_FIXTURE: &[(&str, &str, &str)] = &[
    (
        "r7625",
        "DynamicLinkWidthManagement",
        "the Genoa fixture models no xGMI option (fixtures/README.md); real two-socket Genoa hosts have one",
    ),
    ("r7625", "DlwmForcedWidth", "the same xGMI option"),
];

#[test]
fn every_shipped_profile_validates_strictly_on_every_fixture_it_targets() {
    let pairs = targeted();
    let library = Library::shipped().unwrap();
    let expected: usize = MODELS
        .into_iter()
        .map(|m| {
            let host = Fixture::load(m).host();
            library.list().iter().filter(|p| p.targets_host(&host)).count()
        })
        .sum();
    assert_eq!(pairs.len(), expected);
    // Every profile but ai-gpu (no Siena accelerator host) targets every fixture.
    assert_eq!(expected, library.list().len() * MODELS.len() - 1);
    let strict = ValidateOptions { strict: true };
    for (profile, fixture) in pairs {
        let context = format!("{} on {}", profile.name, fixture.model);
        let lenient = validate(&profile, &fixture.state(), &ValidateOptions::default());
        assert!(
            lenient.iter().all(|v| v.severity == Severity::Warning),
            "{context}: {lenient:#?}"
        );
        for v in validate(&profile, &fixture.state(), &strict) {
            let expected = ABSENT_ON_FIXTURE
                .iter()
                .any(|(m, a, _)| *m == fixture.model && *a == v.attribute);
            assert!(expected && v.kind == ViolationKind::NotApplicable, "{context}: {v}");
        }
        let idrac = validate_idrac(&profile, &fixture.state(), &fixture.manager_registry, &strict);
        assert!(idrac.is_empty(), "{context}: {idrac:#?}");
    }
}

/// The attributes of `plan` that are read-only or hidden in the state the plan produces.
fn locked_entries(fixture: &Fixture, plan: &Plan) -> Vec<String> {
    let evaluator = DependencyEvaluator::new(&fixture.registry);
    let mut planned = fixture.current.clone();
    planned.extend(plan.bios.clone());
    let evaluation = evaluator.evaluate(&planned);
    plan.bios
        .keys()
        .filter(|k| evaluation.is_read_only(k) || evaluation.is_hidden(k))
        .cloned()
        .collect()
}

fn clean_after(profile: &ResolvedProfile, fixture: &Fixture, plan: &Plan) -> bool {
    let after = simulate(&fixture.state(), plan);
    let idrac_after = simulate_idrac(&fixture.state(), plan);
    diff(
        profile,
        &HostView::new(&fixture.registry, &after).with_idrac(&idrac_after),
    )
    .is_clean()
}

#[test]
fn plans_of_shipped_profiles_lead_to_clean_diffs_and_are_minimal() {
    let mut planned_writes = 0;
    for (profile, fixture) in targeted() {
        let context = format!("{} on {}", profile.name, fixture.model);
        let plan = plan(&profile, &fixture.state()).unwrap();
        assert!(locked_entries(fixture, &plan).is_empty(), "{context}: {plan:#?}");
        assert!(clean_after(&profile, fixture, &plan), "{context}: {plan:#?}");

        // Minimal: dropping any single entry leaves the host unclean.
        for name in plan.bios.keys() {
            let mut smaller = plan.clone();
            smaller.bios.remove(name);
            smaller.unlocks.retain(|u| &u.attribute != name);
            assert!(
                !clean_after(&profile, fixture, &smaller) || plan.is_unlock(name),
                "{context}: {name} is not needed"
            );
        }
        for (group, values) in &plan.idrac {
            for name in values.keys() {
                let mut smaller = plan.clone();
                smaller.idrac.get_mut(group).unwrap().remove(name);
                assert!(
                    !clean_after(&profile, fixture, &smaller),
                    "{context}: {name} is not needed"
                );
            }
        }

        // The plan writes exactly the drifted attributes (plus unlocks); forced ones are left to the BIOS.
        let before = diff(&profile, &fixture.state());
        let drifted: BTreeSet<&str> = before
            .with_status(Status::Drift)
            .map(|c| c.attribute.as_str())
            .collect();
        let written: BTreeSet<&str> = plan
            .bios
            .keys()
            .filter(|k| !plan.is_unlock(k))
            .chain(plan.idrac.values().flat_map(|v| v.keys()))
            .map(String::as_str)
            .collect();
        assert_eq!(drifted, written, "{context}");
        for forced in before.with_status(Status::Forced) {
            assert!(!plan.bios.contains_key(&forced.attribute), "{context}");
        }
        planned_writes += plan.bios.len();
    }
    // The fixtures start from other presets, so most pairs have work to do.
    assert!(planned_writes > 50, "{planned_writes}");
}

#[test]
fn forced_and_skipped_settings_show_in_the_diff() {
    let library = Library::shipped().unwrap();
    // r7525 is on PerfPerWattOptimizedDapc: choosing PerfOptimized forces C-states off.
    let milan = Fixture::load("r7525");
    let profile = library.resolve("performance", &milan.host()).unwrap();
    let d = diff(&profile, &milan.state());
    let status = |name: &str| d.changes.iter().find(|c| c.attribute == name).unwrap().status;
    assert_eq!(status("SysProfile"), Status::Drift);
    assert_eq!(status("ProcCStates"), Status::Forced);
    assert_eq!(status("ProcPwrPerf"), Status::Forced);
    assert_eq!(status("PowerProfileSelect"), Status::NotApplicable);
    assert_eq!(status("EfficiencyOptimizedMode"), Status::Forced);
    assert_eq!(status("ServerPwr.1.PowerCapSetting"), Status::InSync);
    let skipped = d.changes.iter().find(|c| c.attribute == "PowerProfileSelect").unwrap();
    assert_eq!(
        skipped.note.as_deref(),
        Some("applies to genoa, siena only; this host is milan")
    );
    let forced = d.changes.iter().find(|c| c.attribute == "ProcCStates").unwrap();
    assert_eq!(
        forced.note.as_deref(),
        Some("set by the BIOS because SysProfile = PerfOptimized")
    );
    insta::assert_json_snapshot!("diff_performance_on_r7525", d);
    let plan = plan(&profile, &milan.state()).unwrap();
    insta::assert_json_snapshot!("plan_performance_on_r7525", plan);
}

/// Dell's bandwidth note's R7525: two 48-core EPYC 7552s (six CCDs each). The fixture is a Milan R7525, so
/// this changes what the CPU decides: the brand, the core count, NPS 4 gone from the value list
/// (Dell's table: setup does not offer what the CPU cannot do). The fixture's xGMI tokens are
/// already the ones real hosts spell (`Force`).
fn r7525_with_epyc_7552() -> Fixture {
    let mut f = Fixture::load("r7525");
    for n in [1, 2] {
        f.current
            .insert(format!("Proc{n}Brand"), "AMD EPYC 7552 48-Core Processor".into());
        f.current
            .insert(format!("Proc{n}NumCores"), AttributeValue::Integer(48));
    }
    for a in &mut f.registry.registry_entries.attributes {
        if a.attribute_name == "NumaNodesPerSocket" {
            a.values.retain(|v| v.value_name != "4");
        }
    }
    f
}

/// `hpc` on a host: its diff before any change, its plan, and the change for `attribute`.
fn hpc_on(fixture: &Fixture) -> (bios_profiles::ResolvedProfile, bios_profiles::Diff, Plan) {
    let library = Library::shipped().unwrap();
    let profile = library.resolve("hpc", &fixture.host()).unwrap();
    let d = diff(&profile, &fixture.state());
    let p = plan(&profile, &fixture.state()).unwrap();
    assert!(clean_after(&profile, fixture, &p), "{}: {p:#?}", fixture.model);
    (profile, d, p)
}

fn change<'d>(d: &'d bios_profiles::Diff, attribute: &str) -> &'d bios_profiles::Change {
    d.changes.iter().find(|c| c.attribute == attribute).unwrap()
}

#[test]
fn hpc_takes_nps_4_where_the_host_offers_it_and_says_why_where_it_does_not() {
    // R7625, two EPYC 9654s: NPS 4 is offered; the first choice is taken as it is.
    let r7625 = Fixture::load("r7625");
    let (_, d, p) = hpc_on(&r7625);
    let nps = change(&d, "NumaNodesPerSocket");
    assert_eq!(nps.desired, "4".into());
    assert!(nps.choice.as_ref().unwrap().is_first_choice());
    assert_eq!(p.bios["NumaNodesPerSocket"], "4".into());
    assert_eq!(change(&d, "CcxAsNumaDomain").desired, "Disabled".into());
    // Two sockets: the xGMI links are forced to full width with the registry's token (`Force`,
    // as a real two-socket Genoa export spells it) and x16, in the same PATCH.
    let dlwm = change(&d, "DynamicLinkWidthManagement");
    assert_eq!(
        (dlwm.status, &dlwm.desired),
        (Status::Drift, &"Force".into()),
        "{dlwm:?}"
    );
    assert_eq!(p.bios["DynamicLinkWidthManagement"], "Force".into());
    assert_eq!(
        p.bios["DlwmForcedWidth"],
        "x16".into(),
        "the width a hidden attribute gets once DLWM is Force"
    );

    // C6615, one EPYC 8534P with six channels: the platform rules NPS 4 out, so 2.
    let c6615 = Fixture::load("c6615");
    let (profile, d, p) = hpc_on(&c6615);
    assert_eq!(
        profile.platforms,
        ["base [platform c6615]", "base [platform two-ccx-dies]"]
    );
    let nps = change(&d, "NumaNodesPerSocket");
    assert_eq!(nps.desired, "2".into());
    assert_eq!(
        nps.choice.as_ref().unwrap().reason,
        "4 is not possible on this platform (base [platform c6615]): Six memory channels do not split into four equal NUMA nodes, and NPS 0 exists only on two sockets.; using 2"
    );
    assert!(
        nps.note.as_deref().unwrap().starts_with("chose 2: 4 is not possible"),
        "{nps:?}"
    );
    assert_eq!(p.bios["NumaNodesPerSocket"], "2".into());
    assert_eq!(p.choices["NumaNodesPerSocket"].chosen, Some("2".into()));
    // One socket: the xGMI settings do not apply, and say so.
    let dlwm = change(&d, "DynamicLinkWidthManagement");
    assert_eq!(dlwm.status, Status::NotApplicable);
    assert_eq!(dlwm.note.as_deref(), Some("applies when sockets = 2; this host has 1"));

    // R7525 with EPYC 7552s: neither Dell's table for the CPU nor the host's list has NPS 4.
    let r7525 = r7525_with_epyc_7552();
    assert_eq!(r7525.host().generation, Some(Generation::Rome));
    assert_eq!((r7525.host().sockets, r7525.host().cores), (Some(2), Some(48)));
    let (profile, d, p) = hpc_on(&r7525);
    // No platform override any more: Dell's per-layout NPS table decides, as data.
    assert!(profile.platforms.is_empty(), "{:?}", profile.platforms);
    let nps = change(&d, "NumaNodesPerSocket");
    assert_eq!(nps.desired, "2".into());
    let choice = nps.choice.as_ref().unwrap();
    assert!(
        choice
            .reason
            .starts_with("4 is not possible on this host (nps-layout: 48 cores, 6x2x4, two sockets): Dell's table gives the EPYC 7552 (48 cores, 6x2x4) NPS 2, 1, 0 on two sockets"),
        "{nps:?}"
    );
    assert_eq!(
        choice.decisions[0].quote.as_deref(),
        Some("48 | 6x2x4 | 2, 1 | 2, 1, 0")
    );
    // The xGMI tokens come from the registry: `Force`, never a guessed `Forced`.
    assert_eq!(p.bios["DynamicLinkWidthManagement"], "Force".into());
    assert_eq!(p.bios["DlwmForcedWidth"], "x16".into());
    assert_eq!(
        p.choices["DynamicLinkWidthManagement"].reason,
        "token Force: this host's name for socket-to-socket links held at a fixed width"
    );
    insta::assert_json_snapshot!("plan_hpc_on_r7525_with_epyc_7552", p);
}

#[test]
fn a_token_the_host_does_not_offer_leaves_the_setting_out_instead_of_failing_the_patch() {
    // A registry that offers neither `Force` nor `Forced`: the setting is unavailable (a
    // warning, an error only when strict) and the plan carries the rest.
    let mut r7525 = r7525_with_epyc_7552();
    for a in &mut r7525.registry.registry_entries.attributes {
        if a.attribute_name == "DynamicLinkWidthManagement" {
            a.values.retain(|v| v.value_name == "Unforced");
        }
    }
    let library = Library::shipped().unwrap();
    let profile = library.resolve("hpc", &r7525.host()).unwrap();
    let violations = validate(&profile, &r7525.state(), &ValidateOptions::default());
    let dlwm = violations
        .iter()
        .find(|v| v.attribute == "DynamicLinkWidthManagement")
        .unwrap();
    assert_eq!(dlwm.severity, Severity::Warning);
    assert_eq!(
        dlwm.to_string(),
        "DynamicLinkWidthManagement: unavailable on this host: none of Force, Forced (socket-to-socket links held at a fixed width) is offered by this host (it offers Unforced); left as is"
    );
    let strict = validate(&profile, &r7525.state(), &ValidateOptions { strict: true });
    assert!(
        strict
            .iter()
            .any(|v| v.attribute == "DynamicLinkWidthManagement" && v.severity == Severity::Error)
    );
    let p = plan(&profile, &r7525.state()).unwrap();
    assert!(!p.bios.contains_key("DynamicLinkWidthManagement"));
    assert!(p.bios.contains_key("NumaNodesPerSocket"));
    // The width only exists while the links are forced, so it is unavailable as well.
    assert!(!p.bios.contains_key("DlwmForcedWidth"));
    assert_eq!(
        p.choices["DlwmForcedWidth"].reason,
        "it depends on DynamicLinkWidthManagement, which is unavailable on this host; left as is"
    );
    assert!(clean_after(&profile, &r7525, &p));
    let d = diff(&profile, &r7525.state());
    let c = change(&d, "DynamicLinkWidthManagement");
    assert_eq!(c.status, Status::NotApplicable);
    assert!(
        c.note
            .as_deref()
            .unwrap()
            .starts_with("unavailable on this host: none of Force, Forced")
    );
}

#[test]
fn confidential_computing_enables_snp_on_milan_and_later_only() {
    let library = Library::shipped().unwrap();
    let rome = bios_profiles::HostFacts {
        model: None,
        generation: Some(Generation::Rome),
        cpu: None,
        ..Default::default()
    };
    let cc = library.resolve("confidential-computing", &rome).unwrap();
    assert_eq!(cc.chain, ["base", "virtualization", "confidential-computing"]);
    assert!(!cc.bios.contains_key("Snp") && !cc.bios.contains_key("Rmp"));
    assert!(cc.skipped.iter().any(|s| s.setting.attribute == "Snp"));
    assert_eq!(cc.bios["Sme"].wanted, Wanted::Value("Enabled".into()));
    assert_eq!(cc.bios["IommuSupport"].wanted, Wanted::Value("Enabled".into()));
    let genoa = Fixture::load("r7625");
    let cc = library.resolve("confidential-computing", &genoa.host()).unwrap();
    let plan = plan(&cc, &genoa.state()).unwrap();
    // Snp, Rmp and CpuMinSevAsid are read-only on the host today (Sme is off); one job
    // sets them all because the planned state enables Sme.
    for name in ["Sme", "Snp", "Rmp"] {
        assert!(plan.bios.contains_key(name), "{name}: {plan:#?}");
    }
    assert!(plan.unlocks.is_empty());
    // The fixture's CPU has no row in the SEV table and no operator gave its maximum: the
    // split is left as the host has it, saying why, instead of taking the registry's bound.
    assert!(!plan.bios.contains_key("CpuMinSevAsid"));
    let skipped = cc
        .skipped
        .iter()
        .find(|s| s.setting.attribute == "CpuMinSevAsid")
        .unwrap();
    assert!(
        skipped
            .reason
            .starts_with("the maximum SEV ASID count of the EPYC 9654 is not known here"),
        "{}",
        skipped.reason
    );
}

/// The sub-settings Dell's System Profile presets set on AMD hosts (the preset rules of Dell's
/// registries; a real R6515 and R7615 show the values), by the generations that have them.
fn preset_controlled(generation: Generation) -> Vec<&'static str> {
    let mut names = vec![
        "ProcPwrPerf",
        "ProcCStates",
        "ProcTurboMode",
        "MemFrequency",
        "MemPatrolScrub",
        "MemRefreshRate",
        "PcieAspmL1",
        "DeterminismSlider",
    ];
    names.push(match generation {
        Generation::Rome | Generation::Milan => "EfficiencyOptimizedMode",
        _ => "PowerProfileSelect",
    });
    names
}

#[test]
fn every_profile_that_selects_custom_makes_each_preset_controlled_setting_explicit() {
    // Dell: select Performance first, then Custom. Switching to Custom alone keeps whatever the
    // old preset left in the sub-settings, so a Custom profile must name each of them.
    let library = Library::shipped().unwrap();
    let custom = Wanted::Value("Custom".into());
    let mut checked = 0;
    for profile in library.list() {
        for generation in [
            Generation::Rome,
            Generation::Milan,
            Generation::Genoa,
            Generation::Siena,
        ] {
            let host = bios_profiles::HostFacts {
                generation: Some(generation),
                ..Default::default()
            };
            if !profile.targets_host(&host) {
                continue;
            }
            let resolved = library.resolve(&profile.name, &host).unwrap();
            if resolved.bios.get("SysProfile").map(|s| &s.wanted) != Some(&custom) {
                continue;
            }
            for name in preset_controlled(generation) {
                assert!(
                    resolved.bios.contains_key(name),
                    "{} on {generation} selects Custom but leaves {name} to the old preset",
                    profile.name
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
    // The same against what the fixtures' registries say the presets force.
    for (profile, fixture) in targeted() {
        if profile.bios.get("SysProfile").map(|s| &s.wanted) != Some(&custom) {
            continue;
        }
        let forced_by_presets: BTreeSet<&str> = fixture
            .registry
            .registry_entries
            .dependencies
            .iter()
            .filter_map(|d| d.dependency.as_ref())
            .filter(|m| m.map_from.iter().any(|c| c.map_from_attribute == "SysProfile"))
            .map(|m| m.map_to_attribute.as_str())
            .collect();
        for name in forced_by_presets {
            assert!(
                profile.bios.contains_key(name),
                "{} on {}: {name} is preset-controlled",
                profile.name,
                fixture.model
            );
        }
    }
}

#[test]
fn every_fixed_token_was_seen_on_a_real_host_and_the_rest_come_from_the_registry() {
    let library = Library::shipped().unwrap();
    let catalog = catalog::shipped().unwrap();
    let (mut fixed, mut chosen) = (0, 0);
    for profile in library.list() {
        for s in profile.settings() {
            match &s.wanted {
                Wanted::Value(AttributeValue::String(token)) => {
                    assert!(
                        catalog.evidence(&s.attribute, token).is_some(),
                        "{}: {} = {token} was never seen on a real host; list it under `accept`",
                        profile.name,
                        s.attribute
                    );
                    fixed += 1;
                }
                Wanted::Value(_) => fixed += 1,
                Wanted::Prefer(_) | Wanted::Accept { .. } | Wanted::Derive(_) | Wanted::SevAsids { .. } => chosen += 1,
            }
        }
    }
    assert!(fixed > 80 && chosen >= 12, "{fixed} fixed, {chosen} chosen per host");
    // The tokens the evidence marks as varying or unverified are never fixed.
    for profile in library.list() {
        for s in profile.settings() {
            let varying = [
                "DynamicLinkWidthManagement",
                "DlwmForcedWidth",
                "FixedSocPstate",
                "NumaNodesPerSocket",
            ];
            let unverified = [
                "PerformanceDeterminism",
                "PerfDeterminism",
                "EfficiencyMode",
                "MaxIOPerformanceMode",
            ];
            if let Wanted::Value(v) = &s.wanted {
                assert!(
                    !varying.contains(&s.attribute.as_str()) || s.attribute == "NumaNodesPerSocket" && *v == "1".into(),
                    "{}: {} is fixed",
                    profile.name,
                    s.attribute
                );
                assert!(!unverified.iter().any(|u| *v == (*u).into()), "{}: {v}", profile.name);
            }
        }
    }
}

#[test]
fn stated_settings_quote_a_source_this_library_holds_words_of() {
    let library = Library::shipped().unwrap();
    // Sources whose words are quoted here; the others (AMD 58011, Dell's Intel note, ...) can
    // back only used or inferred settings, and their notes say so.
    let held = [
        "dell-c6615-note",
        "dell-ddr5-bandwidth",
        "dell-r6525-manual",
        "dell-r7515-manual",
        "dell-r6515-manual",
        "dell-mlperf-bios",
        "amd-instinct-host",
        "amd-instinct-host-7002",
        "amd-instinct-host-7003",
        "vmware-epyc",
        "dell-pixstor-me5",
    ];
    for source in library.sources().iter().filter(|s| !held.contains(&s.id.as_str())) {
        // A document we hold no words of says so; payloads and snapshots are not documents.
        let note = source.note.as_deref().unwrap_or_default().to_lowercase();
        let says_so = note.contains("not quoted") || note.contains("not held");
        assert!(
            says_so
                || source.id.ends_with("-capture")
                || source.id.ends_with("-export")
                || source.id == "snapshot"
                || source.id == "scp",
            "{}",
            source.id
        );
    }
    let mut stated = 0;
    for profile in library.list() {
        let limits = profile.platforms.values().flat_map(|p| p.unsupported.values());
        for (attribute, source, confidence, quote) in profile
            .settings()
            .map(|s| (&s.attribute, &s.source, s.confidence, &s.quote))
            .chain(limits.map(|u| (&u.attribute, &u.source, u.confidence, &u.quote)))
        {
            if confidence == Confidence::Stated {
                assert!(
                    held.contains(&source.as_str()),
                    "{}: {attribute} stated from {source}",
                    profile.name
                );
                assert!(
                    quote.as_deref().is_some_and(|q| q.len() >= 10),
                    "{}: {attribute}",
                    profile.name
                );
                stated += 1;
            }
        }
    }
    assert!(stated >= 45, "{stated}");
}

#[test]
fn the_new_workloads_apply_their_sourced_settings_to_the_fixture_hosts() {
    let library = Library::shipped().unwrap();
    let r7625 = Fixture::load("r7625");
    let value = |p: &ResolvedProfile, name: &str| p.bios[name].wanted.clone();

    // AI/GPU host on a two-socket Genoa: AMD's accelerator-host table.
    let ai = library.resolve("ai-gpu", &r7625.host()).unwrap();
    for (name, want) in [
        ("ProcCStates", "Enabled"),
        ("LogicalProc", "Disabled"),
        ("NumaNodesPerSocket", "1"),
        ("IommuSupport", "Enabled"),
        ("SriovGlobalEnable", "Enabled"),
        ("ProcConfigTdp", "Maximum"),
        ("ApbDis", "Enabled"),
    ] {
        assert_eq!(value(&ai, name), Wanted::Value(want.into()), "ai-gpu {name}");
        assert_eq!(ai.bios[name].source, "amd-instinct-host", "ai-gpu {name}");
    }
    let p = plan(&ai, &r7625.state()).unwrap();
    assert!(clean_after(&ai, &r7625, &p));
    assert_eq!(p.bios["SriovGlobalEnable"], "Enabled".into());
    assert_eq!(p.bios["FixedSocPstate"], "FixedSocPstate0".into());
    // Not for the Siena sled: no accelerator host there.
    assert!(library.resolve("ai-gpu", &Fixture::load("c6615").host()).is_err());

    // Database: the Performance preset's values in Custom (the preset may lock the fabric it
    // pins), SMT on, NPS 1, L3 not split.
    let db = library.resolve("database", &r7625.host()).unwrap();
    assert_eq!(value(&db, "SysProfile"), Wanted::Value("Custom".into()));
    assert_eq!(value(&db, "ApbDis"), Wanted::Value("Enabled".into()));
    assert_eq!(value(&db, "NumaNodesPerSocket"), Wanted::Value("1".into()));
    assert_eq!(value(&db, "CcxAsNumaDomain"), Wanted::Value("Disabled".into()));
    assert_eq!(value(&db, "LogicalProc"), Wanted::Value("Enabled".into()));
    let idrac_cap = db
        .idrac
        .values()
        .find(|s| s.setting.attribute == "ServerPwr.1.PowerCapSetting");
    assert_eq!(idrac_cap.unwrap().value(), Some(&"Disabled".into()));

    // Virtualization for power-performance: the virtualization profile with OS DBPM.
    let vp = library.resolve("virtualization-power", &r7625.host()).unwrap();
    assert_eq!(vp.chain, ["base", "virtualization", "virtualization-power"]);
    assert_eq!(value(&vp, "ProcPwrPerf"), Wanted::Value("OsDbpm".into()));
    assert_eq!(value(&vp, "ProcCStates"), Wanted::Value("Enabled".into()));
    assert_eq!(value(&vp, "SysProfile"), Wanted::Value("Custom".into()));
    let p = plan(&vp, &r7625.state()).unwrap();
    assert_eq!(p.bios["ProcPwrPerf"], "OsDbpm".into());

    // Low latency trades ECC SMIs for latency and says so; everyone keeps error logging on.
    let ll = library.resolve("low-latency", &r7625.host()).unwrap();
    assert_eq!(value(&ll, "CorrEccSmi"), Wanted::Value("Disabled".into()));
    assert!(ll.bios["CorrEccSmi"].why.starts_with("A stated trade-off"));
    for profile in library.list().iter().filter(|p| p.cpu != Some(bios_profiles::Cpu::Any)) {
        let resolved = library.resolve(&profile.name, &r7625.host()).unwrap();
        assert_eq!(
            value(&resolved, "CECriticalSEL"),
            Wanted::Value("Enabled".into()),
            "{}",
            profile.name
        );
    }
}
