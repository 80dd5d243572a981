//! The shipped profiles on the fixture hosts: they validate, and their plans lead to clean diffs.

use crate::{Fixture, MODELS};
use bios_profiles::library::SHIPPED_PROFILES;
use bios_profiles::{
    Generation, Library, Plan, ResolvedProfile, Status, ValidateOptions, catalog, diff, plan, simulate, simulate_idrac,
    validate, validate_idrac,
};
use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::resources::bios::Attributes;
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
        .filter(|n| n.ends_with(".toml") && n != "sources.toml" && n != "catalog.toml")
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
        if ["base", "thermally-challenged"].contains(&profile.name.as_str()) {
            continue;
        }
        let resolved = library.resolve(&profile.name, &Default::default()).unwrap();
        assert!(resolved.bios.contains_key("SysProfile"), "{}", profile.name);
        let cap = resolved
            .idrac
            .values()
            .find(|s| s.setting.attribute == "ServerPwr.1.PowerCapSetting");
        if profile.name == "power-efficiency" {
            assert!(cap.is_none());
        } else {
            assert_eq!(
                cap.unwrap().setting.wanted,
                bios_profiles::Wanted::Value("Disabled".into()),
                "{}",
                profile.name
            );
        }
    }
}

#[test]
fn every_shipped_profile_validates_strictly_on_every_fixture_it_targets() {
    let pairs = targeted();
    assert_eq!(
        pairs.len(),
        9 * MODELS.len(),
        "every shipped profile targets every fixture"
    );
    let strict = ValidateOptions { strict: true };
    for (profile, fixture) in pairs {
        let bios = validate(&profile, &fixture.registry, &fixture.current, &strict);
        assert!(bios.is_empty(), "{} on {}: {bios:#?}", profile.name, fixture.model);
        let idrac = validate_idrac(&profile, &fixture.manager_registry, &fixture.idrac, &strict);
        assert!(idrac.is_empty(), "{} on {}: {idrac:#?}", profile.name, fixture.model);
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
    let after = simulate(&fixture.current, plan, &fixture.registry);
    let idrac_after = simulate_idrac(&fixture.idrac, plan);
    diff(profile, &fixture.registry, &after, &Attributes::new(), &idrac_after).is_clean()
}

#[test]
fn plans_of_shipped_profiles_lead_to_clean_diffs_and_are_minimal() {
    let mut planned_writes = 0;
    for (profile, fixture) in targeted() {
        let context = format!("{} on {}", profile.name, fixture.model);
        let plan = plan(&profile, &fixture.registry, &fixture.current, &fixture.idrac).unwrap();
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
        let before = diff(
            &profile,
            &fixture.registry,
            &fixture.current,
            &fixture.pending,
            &fixture.idrac,
        );
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
    let d = diff(&profile, &milan.registry, &milan.current, &milan.pending, &milan.idrac);
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
        Some("applies to genoa, bergamo, siena, turin only; this host is milan")
    );
    let forced = d.changes.iter().find(|c| c.attribute == "ProcCStates").unwrap();
    assert_eq!(
        forced.note.as_deref(),
        Some("set by the BIOS because SysProfile = PerfOptimized")
    );
    insta::assert_json_snapshot!("diff_performance_on_r7525", d);
    let plan = plan(&profile, &milan.registry, &milan.current, &milan.idrac).unwrap();
    insta::assert_json_snapshot!("plan_performance_on_r7525", plan);
}

#[test]
fn c6615_gets_the_platform_override_unless_the_workload_sets_nps() {
    let library = Library::shipped().unwrap();
    let sled = Fixture::load("c6615").host();
    let latency = library.resolve("low-latency", &sled).unwrap();
    let nps = &latency.bios["NumaNodesPerSocket"];
    assert_eq!(nps.wanted, bios_profiles::Wanted::Value("1".into()));
    assert_eq!(nps.origin, "base [platform c6615]");
    assert_eq!(latency.platforms, ["base [platform c6615]"]);
    // A child profile's own setting beats its parent's platform override.
    let hpc = library.resolve("hpc", &sled).unwrap();
    assert_eq!(
        hpc.bios["NumaNodesPerSocket"].wanted,
        bios_profiles::Wanted::Value("4".into())
    );
    assert_eq!(hpc.bios["NumaNodesPerSocket"].origin, "hpc");
    // Not a C6615: no override.
    let rack = library.resolve("low-latency", &Fixture::load("r7625").host()).unwrap();
    assert!(!rack.bios.contains_key("NumaNodesPerSocket"));
    assert!(rack.platforms.is_empty());
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
    assert_eq!(cc.bios["Sme"].wanted, bios_profiles::Wanted::Value("Enabled".into()));
    assert_eq!(
        cc.bios["IommuSupport"].wanted,
        bios_profiles::Wanted::Value("Enabled".into())
    );
    let genoa = Fixture::load("r7625");
    let cc = library.resolve("confidential-computing", &genoa.host()).unwrap();
    let plan = plan(&cc, &genoa.registry, &genoa.current, &genoa.idrac).unwrap();
    // Snp, Rmp and CpuMinSevAsid are read-only on the host today (Sme is off); one job
    // sets them all because the planned state enables Sme.
    for name in ["Sme", "Snp", "Rmp", "CpuMinSevAsid"] {
        assert!(plan.bios.contains_key(name), "{name}: {plan:#?}");
    }
    assert!(plan.unlocks.is_empty());
}
