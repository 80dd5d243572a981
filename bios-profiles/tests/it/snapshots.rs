//! Snapshots of every message a user can get: validation problems and profile file errors.

use crate::synthetic::{
    bios_current, bios_registry, idrac_current, idrac_profile, manager_registry, profile, validate_on_synthetic_host,
};
use crate::{library_with, resolve_toml};
use bios_profiles::{
    Error, Generation, HostFacts, HostView, Library, ValidateOptions, Violation, plan, validate, validate_idrac,
};

fn genoa() -> HostFacts {
    HostFacts {
        model: Some("PowerEdge R7625".into()),
        generation: Some(Generation::Genoa),
        cpu: None,
        ..Default::default()
    }
}

fn render(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("{}: {v}", v.severity))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every BIOS violation kind, from three profiles (some kinds exclude each other on one attribute).
#[test]
fn validation_messages() {
    let locks = profile(
        "locks",
        &[
            ("SysProfile", "\"PerfOptimized\""),
            ("ProcCStates", "\"Enabled\""),            // preset conflict
            ("MemPatrolScrub", "\"Extended\""),        // read-only
            ("ApbDis", "\"Disabled\""),                //
            ("FixedSocPstate", "\"FixedSocPstate1\""), // hidden
            ("AgesaVersion", "\"2.0\""),               // statically read-only
            ("DfCState", "\"Disabled\""),              // not applicable
            ("ProcCState", "\"Enabled\""),             // unknown, with suggestions
            ("Frobnicate", "\"Enabled\""),             // unknown, nothing similar
        ],
    );
    let mut values = profile(
        "values",
        &[
            ("NumaNodesPerSocket", "1"),        // integer for an enumeration
            ("CpuAcpiCstC2Latency", "\"800\""), // string for an integer
            ("MemTest", "\"disabled\""),        // not in the list
            ("CpuMinSevAsid", "3"),             // off the step
            ("AssetTag", "\"RACK12\""),         // too long
        ],
    );
    values.push_str(
        "[bios.PowerProfileSelect]\nvalue = \"HighPerformanceMode\"\nwhy = \"t\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\ngenerations = [\"genoa\"]\n",
    );
    let range = profile(
        "range",
        &[("SysProfile", "\"Custom\""), ("CpuAcpiCstC2Latency", "2000")],
    );
    let mut out = String::new();
    for (text, strict) in [(&locks, false), (&values, false), (&range, false), (&locks, true)] {
        let resolved = resolve_toml(text, &genoa());
        let options = ValidateOptions { strict };
        let violations = validate(&resolved, &HostView::new(&bios_registry(), &bios_current()), &options);
        out.push_str(&format!(
            "## {} (strict: {strict})\n{}\n\n",
            resolved.name,
            render(&violations)
        ));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn validation_as_json() {
    let resolved = resolve_toml(
        &profile(
            "json",
            &[
                ("SysProfile", "\"PerfOptimized\""),
                ("ProcCStates", "\"Enabled\""),
                ("FixedSocPstate", "\"FixedSocPstate1\""),
                ("ApbDis", "\"Disabled\""),
                ("NumaNodesPerSocket", "1"),
            ],
        ),
        &genoa(),
    );
    let violations = validate_on_synthetic_host(&resolved);
    insta::assert_json_snapshot!(violations);
}

#[test]
fn idrac_validation_messages() {
    let resolved = resolve_toml(
        &idrac_profile(
            "idrac",
            &[
                ("System", "ServerPwr.1.PowerCapValue", "900"),             // read-only
                ("System", "Lockdown.1.SystemLockdown", "\"Disabled\""),    // wrong group
                ("System", "ServerPwr.1.PowerCapSettings", "\"Disabled\""), // typo
                ("System", "ThermalSettings.1.ThermalProfile", "\"Max Performance\""), // not in list
                ("System", "ThermalSettings.1.FanSpeedOffset", "\"Low\""),  // not applicable
            ],
        ),
        &genoa(),
    );
    let (registry, current, idrac) = (bios_registry(), bios_current(), idrac_current());
    let host = HostView::new(&registry, &current).with_idrac(&idrac);
    let violations = validate_idrac(&resolved, &host, &manager_registry(), &ValidateOptions::default());
    insta::assert_snapshot!(render(&violations));
}

#[test]
fn plan_refusal_message() {
    let resolved = resolve_toml(
        &profile(
            "refused",
            &[
                ("SysProfile", "\"PerfOptimized\""),
                ("ProcCStates", "\"Enabled\""),
                ("MemTest", "1"),
            ],
        ),
        &genoa(),
    );
    let err = plan(&resolved, &HostView::new(&bios_registry(), &bios_current())).unwrap_err();
    insta::assert_snapshot!(err.to_string());
}

const GOOD_SETTING: &str = "value = \"Disabled\"\nwhy = \"w\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n";

/// The error of adding `text` as `name.toml` to the shipped library.
fn add_error(name: &str, text: &str) -> String {
    let mut library = Library::shipped().unwrap();
    library.add_toml(text, &format!("{name}.toml")).unwrap_err().to_string()
}

#[test]
fn toml_syntax_error_has_line_and_column() {
    let text = format!("name = \"broken\"\ndescription = \"d\"\n[bios.ProcCStates\n{GOOD_SETTING}");
    insta::assert_snapshot!(add_error("broken", &text));
}

#[test]
fn unterminated_string_has_line_and_column() {
    let text = format!("name = \"broken\"\ndescription = \"d\n[bios.ProcCStates]\n{GOOD_SETTING}");
    insta::assert_snapshot!(add_error("broken", &text));
}

#[test]
fn unknown_key_is_an_error_with_line_and_column() {
    let text = "name = \"typo\"\ndescription = \"d\"\n[bios.ProcCStates]\nvaule = \"Disabled\"\nwhy = \"w\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n";
    insta::assert_snapshot!(add_error("typo", text));
}

#[test]
fn unknown_top_level_key_is_an_error() {
    let text = "name = \"typo\"\ndescription = \"d\"\nextend = \"base\"\n";
    insta::assert_snapshot!(add_error("typo", text));
}

#[test]
fn unknown_source_id_is_an_error() {
    let text = "name = \"cites\"\ndescription = \"d\"\n[bios.ProcCStates]\nvalue = \"Disabled\"\nwhy = \"w\"\nsource = \"amd-58101\"\nconfidence = \"inferred\"\n";
    insta::assert_snapshot!(add_error("cites", text));
}

#[test]
fn bad_confidence_and_generation_are_errors() {
    let confidence = "name = \"c\"\ndescription = \"d\"\n[bios.ProcCStates]\nvalue = \"Disabled\"\nwhy = \"w\"\nsource = \"amd-58011\"\nconfidence = \"certain\"\n";
    let generation = format!(
        "name = \"g\"\ndescription = \"d\"\ngenerations = [\"genoa\", \"zen5\"]\n[bios.ProcCStates]\n{GOOD_SETTING}"
    );
    let float = "name = \"f\"\ndescription = \"d\"\n[bios.CpuAcpiCstC2Latency]\nvalue = 18.5\nwhy = \"w\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n";
    let group = "name = \"i\"\ndescription = \"d\"\n[idrac.\"ServerPwr.1.PowerCapSetting\"]\ngroup = \"Server\"\nvalue = \"Disabled\"\nwhy = \"w\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n";
    let duplicate = format!(
        "name = \"dup\"\ndescription = \"d\"\n[bios.ProcCStates]\n{GOOD_SETTING}[bios.ProcCStates]\n{GOOD_SETTING}"
    );
    let out = [
        add_error("confidence", confidence),
        add_error("generation", &generation),
        add_error("float", float),
        add_error("group", group),
        add_error("duplicate", &duplicate),
        add_error("performance", "name = \"performance\"\ndescription = \"mine\"\n"),
    ]
    .join("\n");
    insta::assert_snapshot!(out);
}

#[test]
fn cyclic_extends_is_spelled_out() {
    let library = library_with(&[
        "name = \"a\"\ndescription = \"d\"\nextends = \"b\"\n",
        "name = \"b\"\ndescription = \"d\"\nextends = \"c\"\n",
        "name = \"c\"\ndescription = \"d\"\nextends = \"a\"\n",
        "name = \"self\"\ndescription = \"d\"\nextends = \"self\"\n",
    ]);
    let err = library.resolve("a", &HostFacts::default()).unwrap_err();
    assert!(matches!(err, Error::ExtendsCycle { ref cycle } if cycle.len() == 4));
    let selfish = library.resolve("self", &HostFacts::default()).unwrap_err();
    insta::assert_snapshot!(format!("{err}\n{selfish}"));
}

#[test]
fn unknown_parent_points_at_extends() {
    let library = library_with(&["name = \"orphan\"\ndescription = \"d\"\n\nextends = \"perfomance\"\n"]);
    let err = library.resolve("orphan", &HostFacts::default()).unwrap_err();
    insta::assert_snapshot!(err.to_string());
}

/// Escapes `text` for use as a literal in an insta filter regex.
fn regex_literal(text: &str) -> String {
    text.chars()
        .map(|c| {
            if "\\.+*?()|[]{}^$#&-~".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[test]
fn errors_in_user_files_name_the_file() {
    let dir_tmp = tempfile::tempdir().unwrap();
    let dir = dir_tmp.path().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("site.toml");
    std::fs::write(
        &path,
        "name = \"site\"\ndescription = \"d\"\n\n[bios.ProcCStates]\nvalue = \"Disabled\"\n",
    )
    .unwrap();
    let library = Library::shipped().unwrap();
    let err = library
        .resolve(path.to_str().unwrap(), &HostFacts::default())
        .unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    insta::with_settings!({filters => vec![(regex_literal(&dir.display().to_string()).as_str(), "[TMP]")]}, {
        insta::assert_snapshot!(err.to_string());
    });
}
