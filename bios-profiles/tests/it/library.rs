//! Resolution: `extends`, generation filters, platform overrides, user files and lookups.

use crate::library_with;
use bios_profiles::{Error, Generation, HostFacts, Library, Target, Wanted};
use redfish_client::oem::dell::AttributeGroup;

const PARENT: &str = r#"
name = "parent"
description = "p"
[bios.A]
value = "parent"
why = "w"
source = "dell-c6615-note"
confidence = "stated"
quote = "the words"
[bios.B]
value = "parent"
why = "w"
source = "amd-58011"
confidence = "inferred"
[bios.OnlyMilan]
value = "x"
why = "w"
source = "amd-58011"
confidence = "inferred"
generations = ["milan"]
[idrac."Lockdown.1.SystemLockdown"]
group = "iDRAC"
value = "Disabled"
why = "w"
source = "amd-58011"
confidence = "inferred"
[platform.sled]
models = ["PowerEdge C6615"]
[platform.sled.bios.C]
value = "sled"
why = "w"
source = "amd-58011"
confidence = "used"
"#;

const CHILD: &str = r#"
name = "child"
description = "c"
extends = "parent"
generations = ["milan", "genoa"]
[bios.A]
value = "child"
why = "w"
source = "amd-58011"
confidence = "inferred"
[bios.B]
value = "child-on-genoa"
why = "w"
source = "amd-58011"
confidence = "inferred"
generations = ["genoa"]
[bios.C]
value = "child"
why = "w"
source = "amd-58011"
confidence = "inferred"
"#;

fn host(model: Option<&str>, generation: Option<Generation>) -> HostFacts {
    HostFacts {
        model: model.map(str::to_owned),
        generation,
        ..HostFacts::default()
    }
}

#[test]
fn child_settings_win_and_skipped_children_keep_the_parent_value() {
    let library = library_with(&[PARENT, CHILD]);
    let milan = library.resolve("child", &host(None, Some(Generation::Milan))).unwrap();
    assert_eq!(milan.chain, ["parent", "child"]);
    assert_eq!(milan.bios["A"].wanted, Wanted::Value("child".into()));
    assert_eq!(milan.bios["A"].origin, "child");
    // The child's B is for Genoa only, so the parent's B stays and nothing is reported skipped.
    assert_eq!(milan.bios["B"].wanted, Wanted::Value("parent".into()));
    assert_eq!(milan.bios["OnlyMilan"].wanted, Wanted::Value("x".into()));
    assert!(milan.skipped.is_empty(), "{:?}", milan.skipped);

    let genoa = library.resolve("child", &host(None, Some(Generation::Genoa))).unwrap();
    assert_eq!(genoa.bios["B"].wanted, Wanted::Value("child-on-genoa".into()));
    assert!(!genoa.bios.contains_key("OnlyMilan"));
    assert_eq!(genoa.skipped.len(), 1);
    assert_eq!(genoa.skipped[0].target, Target::Bios);
    assert_eq!(genoa.skipped[0].reason, "applies to milan only; this host is genoa");
    let key = (AttributeGroup::Idrac, "Lockdown.1.SystemLockdown".to_owned());
    assert_eq!(genoa.idrac[&key].setting.origin, "parent");
}

#[test]
fn platform_overrides_apply_after_their_own_profile_and_before_children() {
    let library = library_with(&[PARENT, CHILD]);
    let sled = library.resolve("parent", &host(Some("PowerEdge C6615"), None)).unwrap();
    assert_eq!(sled.bios["C"].wanted, Wanted::Value("sled".into()));
    assert_eq!(sled.bios["C"].origin, "parent [platform sled]");
    assert_eq!(sled.platforms, ["parent [platform sled]"]);
    let child = library.resolve("child", &host(Some("poweredge c6615"), None)).unwrap();
    assert_eq!(child.bios["C"].wanted, Wanted::Value("child".into()));
    let rack = library.resolve("parent", &host(Some("PowerEdge R7625"), None)).unwrap();
    assert!(!rack.bios.contains_key("C"));
}

#[test]
fn unknown_facts_keep_every_setting() {
    let library = library_with(&[PARENT, CHILD]);
    let unknown = library.resolve("child", &HostFacts::default()).unwrap();
    assert_eq!(unknown.bios["B"].wanted, Wanted::Value("child-on-genoa".into()));
    assert!(unknown.bios.contains_key("OnlyMilan"));
    assert_eq!(unknown.bios["C"].origin, "child");
    assert!(unknown.platforms.is_empty(), "an unknown model matches no platform");
}

#[test]
fn profiles_refuse_hosts_they_do_not_target() {
    let library = library_with(&[PARENT, CHILD]);
    let err = library
        .resolve("child", &host(Some("PowerEdge R7525"), Some(Generation::Rome)))
        .unwrap_err();
    assert!(matches!(err, Error::NotTargeted { .. }));
    assert_eq!(
        err.to_string(),
        "profile `child` targets milan, genoa; any model; this host is PowerEdge R7525 (rome)"
    );
}

#[test]
fn names_are_unique_and_unknown_names_get_suggestions() {
    let mut library = library_with(&[PARENT]);
    let err = library.add_toml(PARENT, "again.toml").unwrap_err();
    assert!(matches!(err, Error::DuplicateProfile { .. }));
    let err = library.resolve("perfromance", &HostFacts::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no profile named `perfromance`; did you mean performance?"
    );
    let names: Vec<&str> = library.list().iter().map(|p| p.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
}

#[test]
fn files_load_by_path_and_resolve_against_the_library() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.toml");
    std::fs::write(
        &path,
        "name = \"mine\"\ndescription = \"d\"\nextends = \"performance\"\n[bios.NumaNodesPerSocket]\nvalue = \"2\"\nwhy = \"w\"\nsource = \"nvidia-net-tuning\"\nconfidence = \"inferred\"\n",
    )
    .unwrap();
    let library = Library::shipped().unwrap();
    let by_path = library.resolve(path.to_str().unwrap(), &HostFacts::default()).unwrap();
    assert_eq!(by_path.chain, ["base", "performance", "mine"]);
    assert_eq!(by_path.bios["NumaNodesPerSocket"].wanted, Wanted::Value("2".into()));
    assert!(library.get("mine").is_none(), "resolving a path does not add it");

    let mut library = library;
    assert_eq!(library.load_file(&path).unwrap().file, path.display().to_string());
    assert!(library.get("mine").is_some());
    let missing = library.load_file(&dir.join("missing.toml")).unwrap_err();
    assert!(matches!(missing, Error::Io { .. }));
    assert!(missing.to_string().starts_with("cannot read profile "));
    std::fs::remove_dir_all(&dir).unwrap();
}

const LIMITED: &str = r#"
name = "limited"
description = "a parent whose platform cannot do NPS 4"
[bios.NumaNodesPerSocket]
value = "1"
why = "w"
source = "amd-58011"
confidence = "inferred"
[platform.sled]
models = ["PowerEdge C6615"]
[platform.sled.unsupported.NumaNodesPerSocket]
values = ["4"]
why = "six channels"
source = "amd-58011"
confidence = "inferred"
[platform.rome48]
cpus = ["7552"]
[platform.rome48.unsupported.NumaNodesPerSocket]
values = ["4", "2"]
why = "six dies"
source = "amd-58011"
confidence = "inferred"
"#;

const WANTS_FOUR: &str = r#"
name = "wants-four"
description = "a child that asks for NPS 4 first"
extends = "limited"
[bios.NumaNodesPerSocket]
prefer = ["4", "2", "1"]
why = "w"
source = "amd-58011"
confidence = "inferred"
[bios.DynamicLinkWidthManagement]
accept = ["Force", "Forced"]
intent = "fixed width"
why = "w"
source = "amd-58011"
confidence = "inferred"
when = { sockets = 2 }
"#;

const INSISTS_ON_FOUR: &str = r#"
name = "insists"
description = "a child that writes NPS 4 as a fixed value"
extends = "limited"
[bios.NumaNodesPerSocket]
value = "4"
why = "w"
source = "amd-58011"
confidence = "inferred"
"#;

#[test]
fn a_platform_limit_beats_a_childs_choice_whichever_profile_wrote_it() {
    let library = library_with(&[LIMITED, WANTS_FOUR, INSISTS_ON_FOUR]);
    let sled = HostFacts {
        model: Some("PowerEdge C6615".into()),
        sockets: Some(1),
        ..HostFacts::default()
    };
    let resolved = library.resolve("wants-four", &sled).unwrap();
    // The choices stay as written; the platform's limit marks 4 as impossible here.
    let nps = &resolved.bios["NumaNodesPerSocket"];
    assert_eq!(nps.wanted, four_two_one());
    assert_eq!(nps.origin, "wants-four");
    assert_eq!(nps.excluded.len(), 1);
    assert_eq!(
        nps.excluded[0].reason,
        "4 is not possible on this platform (limited [platform sled]): six channels"
    );
    assert_eq!(resolved.limits.len(), 1);
    // The one-socket sled skips the two-socket setting, saying why.
    assert!(!resolved.bios.contains_key("DynamicLinkWidthManagement"));
    let skipped = resolved
        .skipped
        .iter()
        .find(|s| s.setting.attribute == "DynamicLinkWidthManagement")
        .unwrap();
    assert_eq!(skipped.reason, "applies when sockets = 2; this host has 1");

    // A fixed value the platform cannot take is left out with the reason, not written.
    let insists = library.resolve("insists", &sled).unwrap();
    assert!(!insists.bios.contains_key("NumaNodesPerSocket"));
    assert_eq!(
        insists.skipped[0].reason,
        "4 is not possible on this platform (limited [platform sled]): six channels"
    );

    // Limits match CPUs too, and several limits add up.
    let rome = HostFacts {
        cpu: Some("AMD EPYC 7552 48-Core Processor".into()),
        generation: Some(Generation::Rome),
        sockets: Some(2),
        ..HostFacts::default()
    };
    let resolved = library.resolve("wants-four", &rome).unwrap();
    let excluded: Vec<&str> = resolved.bios["NumaNodesPerSocket"]
        .excluded
        .iter()
        .filter_map(|e| e.value.as_str())
        .collect();
    assert_eq!(excluded, ["4", "2"]);
    assert!(resolved.bios.contains_key("DynamicLinkWidthManagement"));
    assert_eq!(resolved.platforms, ["limited [platform rome48]"]);

    // Without facts nothing is limited or skipped: the host's registry decides later.
    let unknown = library.resolve("wants-four", &HostFacts::default()).unwrap();
    assert!(unknown.bios["NumaNodesPerSocket"].excluded.is_empty());
    assert!(unknown.bios.contains_key("DynamicLinkWidthManagement") && unknown.limits.is_empty());
}

fn four_two_one() -> Wanted {
    Wanted::Prefer(vec!["4".into(), "2".into(), "1".into()])
}

#[test]
fn resolved_profiles_serialise_settings_as_ordered_lists() {
    let library = library_with(&[PARENT, CHILD]);
    let resolved = library.resolve("child", &host(None, Some(Generation::Genoa))).unwrap();
    let json = serde_json::to_value(&resolved).unwrap();
    let bios: Vec<&str> = json["bios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["attribute"].as_str().unwrap())
        .collect();
    assert_eq!(bios, ["A", "B", "C"]);
    assert_eq!(json["idrac"][0]["group"], "iDRAC");
    assert_eq!(json["idrac"][0]["attribute"], "Lockdown.1.SystemLockdown");
    assert_eq!(json["skipped"][0]["target"], "bios");
    assert_eq!(json["skipped"][0]["attribute"], "OnlyMilan");
    assert_eq!(json["host"]["generation"], "genoa");
    // The child's A replaces the parent's stated one; the parent's B is replaced on genoa too.
    let counts = resolved.confidence_counts();
    assert_eq!((counts.stated, counts.used, counts.inferred), (0, 0, 4));
    let milan = library.resolve("parent", &host(None, Some(Generation::Milan))).unwrap();
    let json = serde_json::to_value(&milan).unwrap();
    assert_eq!(json["bios"][0]["quote"], "the words");
    assert_eq!(milan.confidence_counts().stated, 1);
}

#[test]
fn shipped_profiles_describe_their_targets() {
    let library = Library::shipped().unwrap();
    assert_eq!(
        library.get("base").unwrap().targets(),
        "all EPYC generations; any model; overrides for PowerEdge C6615; at least 256 threads; bergamo, siena"
    );
    // Only a profile that may write a value the memory population can rule out needs the DIMMs
    // read: hpc prefers NPS 4, then 2, and NPS 2 needs four equal channels per half.
    let needs = |name: &str| library.needs_memory(library.get(name).unwrap());
    assert!(needs("hpc"), "hpc may write NPS 2");
    assert!(
        !needs("performance") && !needs("base") && !needs("ai-gpu"),
        "NPS 1 is never ruled out by the population"
    );
    assert_eq!(
        library.get("ai-gpu").unwrap().targets(),
        "rome, milan, genoa, bergamo, turin; any model; overrides for genoa; milan; milan with at most 255 threads; rome; rome with at most 255 threads; turin"
    );
    assert!(library.sources().get("amd-58011").unwrap().title.contains("58011"));
    // The documents the settings and tables cite, two real captures and an export, `snapshot`
    // and `scp` (what derived profiles cite).
    assert_eq!(library.sources().iter().count(), 25);
    assert!(library.sources().contains("snapshot"));
    assert!(library.sources().contains("scp"));
}

#[test]
fn a_memory_platform_with_settings_of_its_own_needs_the_dimms_read() {
    let mut library = Library::shipped().unwrap();
    library
        .add_toml(
            r#"
name = "half-populated"
description = "x"
extends = "performance"

[platform.sparse]
memory = "unbalanced"

[platform.sparse.bios.NumaNodesPerSocket]
value = "1"
why = "One node per socket when the channels are not all populated."
source = "dell-ddr5-bandwidth"
confidence = "inferred"
"#,
            "half-populated.toml",
        )
        .unwrap();
    // Without the DIMMs the platform could never match: its setting would silently never apply.
    assert!(library.needs_memory(library.get("half-populated").unwrap()));
}
