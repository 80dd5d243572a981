//! Moving a host between shipped profiles: whichever shipped workload profile a host had before,
//! applying another leaves it as a host that only ever had that one. Checked three ways: the
//! managed set is exactly what the shipped workload profiles set, every one of them sets all of
//! it (or leaves a knob alone on purpose), and every ordered pair applied in turn on a host of
//! each generation ends where the second alone does.

use crate::{Fixture, MODELS, library_with};
use bios_profiles::{
    Generation, HostFacts, HostView, Library, ManagedSet, Plan, ResolvedProfile, Status, Target, Unchecked, diff, plan,
    simulate, simulate_idrac,
};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use std::collections::{BTreeMap, BTreeSet};

/// What a host shows: its BIOS values (`GET …/Bios` lists no hidden attribute) and its iDRAC
/// attribute groups.
#[derive(Clone, PartialEq, Debug)]
struct State {
    bios: Attributes,
    idrac: BTreeMap<AttributeGroup, Attributes>,
}

/// A host of one generation: a fixture, or a fixture with another CPU of the same socket.
struct Host {
    label: String,
    fixture: Fixture,
}

impl Host {
    fn of(model: &'static str) -> Self {
        Self {
            label: model.to_owned(),
            fixture: Fixture::load(model),
        }
    }

    /// `model` with `brand` CPUs of `cores` cores in every socket.
    fn with_cpu(model: &'static str, brand: &str, cores: i64) -> Self {
        let mut fixture = Fixture::load(model);
        let sockets = fixture.host().sockets.unwrap_or(1);
        for n in 1..=sockets {
            fixture.current.insert(format!("Proc{n}Brand"), brand.into());
            fixture
                .current
                .insert(format!("Proc{n}NumCores"), AttributeValue::Integer(cores));
        }
        Self {
            label: format!("{model} with {brand}"),
            fixture,
        }
    }

    fn start(&self) -> State {
        State {
            bios: self.fixture.current.clone(),
            idrac: self.fixture.idrac.clone(),
        }
    }
}

/// One host per generation, both socket counts among them.
fn hosts() -> Vec<Host> {
    vec![
        Host::with_cpu("r7525", "AMD EPYC 7742 64-Core Processor", 64),
        Host::of("r7525"),
        Host::of("r7625"),
        Host::with_cpu("r7625", "AMD EPYC 9754 128-Core Processor", 128),
        Host::of("c6615"),
        Host::with_cpu("r7625", "AMD EPYC 9755 128-Core Processor", 128),
    ]
}

/// The shipped workload profiles: every shipped profile whose chain reaches `base`.
fn workloads(library: &Library) -> Vec<String> {
    let root = &ManagedSet::shipped().unwrap().workloads_extend;
    library
        .list()
        .into_iter()
        .filter(|p| {
            let mut at = p.extends.clone();
            while let Some(parent) = at {
                if &parent == root {
                    return true;
                }
                at = library.get(&parent).and_then(|q| q.extends.clone());
            }
            false
        })
        .map(|p| p.name.clone())
        .collect()
}

fn resolve(library: &Library, name: &str, state: &State) -> ResolvedProfile {
    library.resolve(name, &HostFacts::from_bios(&state.bios)).unwrap()
}

fn plan_on(profile: &ResolvedProfile, host: &Host, state: &State) -> Plan {
    let view = HostView::new(&host.fixture.registry, &state.bios).with_idrac(&state.idrac);
    plan(profile, &view)
        .unwrap_or_else(|e| panic!("{} on {} ({}): {e}", profile.name, host.label, state.bios["SysProfile"]))
}

/// `state` after applying `name` (the plan's PATCH, job and reboot).
fn apply(library: &Library, name: &str, host: &Host, state: &State) -> State {
    let profile = resolve(library, name, state);
    let p = plan_on(&profile, host, state);
    let view = HostView::new(&host.fixture.registry, &state.bios).with_idrac(&state.idrac);
    State {
        bios: simulate(&view, &p),
        idrac: simulate_idrac(&view, &p),
    }
}

/// The attributes whose values differ between `a` and `b`, except knobs `profile` leaves alone:
/// on purpose, or for lack of evidence for the host's generation (Turin).
fn differences(a: &State, b: &State, profile: &ResolvedProfile) -> Vec<String> {
    let left = |target: Target, name: &str| {
        profile.left.iter().any(|l| l.target == target && l.attribute == name)
            || profile
                .skipped
                .iter()
                .any(|s| s.target == target && s.setting.attribute == name && s.kind == Unchecked::NoEvidence)
    };
    let show = |v: Option<&AttributeValue>| v.map_or_else(|| "(hidden)".to_owned(), ToString::to_string);
    let mut out = Vec::new();
    let names: BTreeSet<&String> = a.bios.keys().chain(b.bios.keys()).collect();
    for name in names {
        if a.bios.get(name) != b.bios.get(name) && !left(Target::Bios, name) {
            out.push(format!(
                "{name}: {} vs {}",
                show(a.bios.get(name)),
                show(b.bios.get(name))
            ));
        }
    }
    for (group, attributes) in &a.idrac {
        for (name, value) in attributes {
            let other = b.idrac.get(group).and_then(|g| g.get(name));
            if other != Some(value) && !left(Target::Idrac(*group), name) {
                out.push(format!("{group}.{name}: {value} vs {}", show(other)));
            }
        }
    }
    out
}

#[test]
fn the_managed_set_is_exactly_what_the_shipped_workload_profiles_set() {
    let library = Library::shipped().unwrap();
    let managed = ManagedSet::shipped().unwrap();
    let names = workloads(&library);
    assert!(names.len() >= 11, "{names:?}");
    for generation in Generation::ALL {
        for sockets in [1, 2] {
            // 96 cores with SMT: past 255 threads on two sockets, below it on one.
            let host = HostFacts {
                generation: Some(generation),
                sockets: Some(sockets),
                cores: Some(96),
                ..HostFacts::default()
            };
            let mut set: BTreeSet<(Target, String)> = BTreeSet::new();
            for name in &names {
                if !library.get(name).unwrap().targets_host(&host) {
                    continue;
                }
                let r = library.resolve(name, &host).unwrap();
                set.extend(r.bios.keys().map(|k| (Target::Bios, k.clone())));
                set.extend(r.idrac.keys().map(|(g, k)| (Target::Idrac(*g), k.clone())));
            }
            let listed: BTreeSet<(Target, String)> = managed
                .on(generation, Some(sockets))
                .map(|k| (k.target, k.attribute.clone()))
                .collect();
            assert_eq!(
                listed.difference(&set).collect::<Vec<_>>(),
                Vec::<&(Target, String)>::new(),
                "managed.toml lists knobs no shipped workload profile sets on {generation}, {sockets} socket(s)"
            );
            assert_eq!(
                set.difference(&listed).collect::<Vec<_>>(),
                Vec::<&(Target, String)>::new(),
                "shipped workload profiles set knobs managed.toml does not list on {generation}, {sockets} socket(s)"
            );
        }
    }
}

#[test]
fn every_shipped_workload_profile_sets_or_leaves_every_managed_knob() {
    let library = Library::shipped().unwrap();
    let managed = ManagedSet::shipped().unwrap();
    for name in workloads(&library) {
        for generation in Generation::ALL {
            for (sockets, cores) in [(1, 16), (1, 96), (2, 16), (2, 96)] {
                let host = HostFacts {
                    generation: Some(generation),
                    sockets: Some(sockets),
                    cores: Some(cores),
                    ..HostFacts::default()
                };
                if !library.get(&name).unwrap().targets_host(&host) {
                    continue;
                }
                let r = library.resolve(&name, &host).unwrap();
                let unmanaged: Vec<&str> = managed.unmanaged_by(&r).iter().map(|k| k.attribute.as_str()).collect();
                assert!(
                    unmanaged.is_empty(),
                    "{name} on {generation}, {sockets} socket(s) of {cores} cores neither sets nor leaves {unmanaged:?}"
                );
            }
        }
    }
}

#[test]
fn overlays_touch_no_managed_knob_and_every_shipped_profile_is_base_an_overlay_or_a_workload() {
    let library = Library::shipped().unwrap();
    let managed = ManagedSet::shipped().unwrap();
    let names = workloads(&library);
    for overlay in &managed.overlays {
        let p = library
            .get(overlay)
            .unwrap_or_else(|| panic!("overlay {overlay} is not shipped"));
        assert!(p.extends.is_none() && !names.contains(overlay), "{overlay}");
        for s in p.settings() {
            let target = p
                .idrac
                .get(&s.attribute)
                .map_or(Target::Bios, |i| Target::Idrac(i.group));
            assert!(
                managed.knob(target, &s.attribute).is_none(),
                "overlay {overlay} sets the managed knob {}",
                s.attribute
            );
        }
    }
    for p in library.list() {
        let kind_known =
            p.name == managed.workloads_extend || managed.overlays.contains(&p.name) || names.contains(&p.name);
        assert!(
            kind_known,
            "{} is neither base, an overlay nor a workload profile",
            p.name
        );
    }
}

/// The ordered pairs of `names` checked on `host`: for each, the second applied after the first
/// ends where the second alone does. Returns how many pairs were checked.
fn pairs_on(library: &Library, names: &[String], host: &Host) -> usize {
    let start = host.start();
    let facts = host.fixture.host();
    let targeted: Vec<&String> = names
        .iter()
        .filter(|n| library.get(n).unwrap().targets_host(&facts))
        .collect();
    let after: BTreeMap<&String, State> = targeted.iter().map(|n| (*n, apply(library, n, host, &start))).collect();
    let mut pairs = 0;
    for second in &targeted {
        let only = &after[second];
        let profile = resolve(library, second, only);
        for first in targeted.iter().filter(|f| *f != second) {
            let moved = apply(library, second, host, &after[first]);
            let differ = differences(&moved, only, &profile);
            assert!(
                differ.is_empty(),
                "{second} after {first} differs from {second} alone on {}: {}",
                host.label,
                differ.join("; ")
            );
            pairs += 1;
        }
    }
    pairs
}

#[test]
fn every_ordered_pair_of_shipped_workload_profiles_ends_where_the_second_alone_does() {
    let library = Library::shipped().unwrap();
    let names = workloads(&library);
    let hosts = hosts();
    // One thread per host: about 700 plans, each judged on a full registry.
    let pairs: usize = std::thread::scope(|scope| {
        let runs: Vec<_> = hosts
            .iter()
            .map(|host| scope.spawn(|| pairs_on(&library, &names, host)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).sum()
    });
    // 11 workload profiles on five hosts (110 ordered pairs each), 10 on Siena (no ai-gpu).
    assert_eq!(pairs, 5 * 110 + 90);
}

/// Confidential computing with the ASID split resolved (the CPU's maximum given).
const MY_CC: &str = r#"
name = "my-cc"
description = "confidential computing on EPYC 9654s"
extends = "confidential-computing"
[parameters]
cpu_max_sev_asids = 509
"#;

#[test]
fn a_move_off_confidential_computing_shows_every_change_with_a_note_and_turns_it_all_off() {
    let library = library_with(&[MY_CC]);
    let host = Host::of("r7625");
    let cc = apply(&library, "my-cc", &host, &host.start());
    for (name, value) in [
        ("Sme", "Enabled".into()),
        ("Snp", "Enabled".into()),
        ("Rmp", "Enabled".into()),
        ("CpuMinSevAsid", AttributeValue::Integer(502)),
    ] {
        assert_eq!(cc.bios[name], value, "{name} after my-cc");
    }
    let performance = resolve(&library, "performance", &cc);
    let d = diff(
        &performance,
        &HostView::new(&host.fixture.registry, &cc.bios).with_idrac(&cc.idrac),
    );
    let line = |name: &str| d.changes.iter().find(|c| c.attribute == name).unwrap();
    assert_eq!(line("Sme").status, Status::Drift);
    for (name, desired) in [
        ("Snp", "Disabled".into()),
        ("Rmp", "Disabled".into()),
        ("CpuMinSevAsid", AttributeValue::Integer(1)),
    ] {
        let c = line(name);
        assert_eq!(c.desired, desired, "{name}");
        assert!(!c.status.is_clean(), "{name} is listed as a change: {c:?}");
        assert!(
            c.note
                .as_deref()
                .is_some_and(|n| n.contains("Sme = Disabled") || n.contains("Snp = Disabled")),
            "{name} says why it goes with SME: {c:?}"
        );
    }
    let after = apply(&library, "performance", &host, &cc);
    let fresh = apply(&library, "performance", &host, &host.start());
    assert_eq!(differences(&after, &fresh, &performance), Vec::<String>::new());
}

#[test]
fn overlays_survive_a_workload_switch() {
    let library = Library::shipped().unwrap();
    let host = Host::of("r7625");
    let hot = apply(&library, "thermally-challenged", &host, &host.start());
    let hpc = apply(&library, "hpc", &host, &hot);
    let performance = apply(&library, "performance", &host, &hpc);
    let system = &performance.idrac[&AttributeGroup::System];
    assert_eq!(
        system["ThermalSettings.1.ThermalProfile"],
        "Maximum Performance".into(),
        "the overlay's cooling stays through two workload switches"
    );
    assert_eq!(system["ThermalSettings.1.FanSpeedOffset"], "Low".into());
}

#[test]
fn a_knob_left_alone_keeps_what_the_host_has_and_a_user_profile_can_leave_any() {
    const SMT_AS_IS: &str = r#"
name = "hpc-smt-as-is"
description = "hpc, SMT as each host has it"
extends = "hpc"
[bios.LogicalProc]
leave = true
why = "Our nodes run SMT per job class."
"#;
    let library = library_with(&[SMT_AS_IS]);
    let host = Host::of("r7625");
    let resolved = resolve(&library, "hpc-smt-as-is", &host.start());
    assert!(!resolved.bios.contains_key("LogicalProc"));
    let left = &resolved.left[0];
    assert_eq!(
        (left.attribute.as_str(), left.origin.as_str()),
        ("LogicalProc", "hpc-smt-as-is")
    );
    let after = apply(&library, "hpc-smt-as-is", &host, &host.start());
    assert_eq!(
        after.bios["LogicalProc"],
        "Enabled".into(),
        "hpc alone turns SMT off; left alone, it stays on"
    );
    // power-efficiency keeps the site's power cap: a cap set before it survives its apply.
    let mut capped = host.start();
    capped
        .idrac
        .get_mut(&AttributeGroup::System)
        .unwrap()
        .insert("ServerPwr.1.PowerCapSetting".into(), "Enabled".into());
    let efficient = apply(&library, "power-efficiency", &host, &capped);
    assert_eq!(
        efficient.idrac[&AttributeGroup::System]["ServerPwr.1.PowerCapSetting"],
        "Enabled".into()
    );
    let pe = resolve(&library, "power-efficiency", &capped);
    assert_eq!(
        pe.left.iter().map(|l| l.attribute.as_str()).collect::<Vec<_>>(),
        ["ServerPwr.1.PowerCapSetting"]
    );
    let _ = MODELS;
}
