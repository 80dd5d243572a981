//! `rftune profiles`: list, show, search, validate (exit codes), derive.

use super::{Run, TempDir, stderr, stdout};
use serde_json::Value;

#[tokio::test]
async fn list_and_show_explain_each_setting() {
    let out = Run::new(&["profiles", "list", "-o", "json"]).output().await;
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for n in [
        "performance",
        "hpc",
        "low-latency",
        "virtualization",
        "confidential-computing",
        "power-efficiency",
        "storage-io",
        "database",
        "ai-gpu",
        "virtualization-power",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let out = Run::new(&[
        "profiles",
        "show",
        "hpc",
        "--generation",
        "siena",
        "--model",
        "PowerEdge C6615",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let setting = doc["bios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["attribute"] == "ApbDis")
        .unwrap()
        .clone();
    assert_eq!(setting["value"], "Enabled");
    for field in ["why", "source", "confidence", "quote"] {
        assert!(
            setting[field].as_str().is_some_and(|s| !s.is_empty()),
            "{field}: {setting}"
        );
    }
    // The C6615 cannot do NPS 4: the workload's preference stays, with 4 ruled out by the
    // platform, whichever profile asked for it.
    let nps = doc["bios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["attribute"] == "NumaNodesPerSocket")
        .unwrap();
    assert_eq!(nps["prefer"], serde_json::json!(["4", "2", "1"]));
    assert_eq!(nps["excluded"][0]["value"], "4");
    assert_eq!(doc["limits"][0]["origin"], "base [platform c6615]");
    let out = Run::new(&["profiles", "show", "hpc", "--cpu", "7552", "--sockets", "2"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("SETTING") && text.contains("dell-ddr5-bandwidth"),
        "{text}"
    );
    assert!(
        text.contains("decided NumaNodesPerSocket: nps-layout [48 cores, 6x2x4, two sockets] rules out 4"),
        "{text}"
    );
    assert!(text.contains("4 | 2 | 1 (4 ruled out here)"), "{text}");
    assert!(text.contains("Sources (every stated setting quotes"), "{text}");
    assert!(
        text.contains(
            "quote (NumaNodesPerSocket (nps-layout: 48 cores, 6x2x4, two sockets)): \"48 | 6x2x4 | 2, 1 | 2, 1, 0\""
        ),
        "{text}"
    );
    assert!(
        text.contains("skipped PowerProfileSelect: applies to genoa, siena only; this host is rome"),
        "{text}"
    );
}

#[tokio::test]
async fn search_finds_settings_by_the_names_people_use() {
    let out = Run::new(&["profiles", "search", "c-states"]).output().await;
    assert!(stdout(&out).contains("ProcCStates"), "{}", stdout(&out));
    let out = Run::new(&["profiles", "search", "x2apic", "-o", "json"]).output().await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["settings"][0]["attributes"][0], "ProcX2Apic");
}

#[tokio::test]
async fn validate_exit_codes_clean_problems_and_errors() {
    let registry =
        rftune_tests::fixtures_dir().join("r7625/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry/index.json");
    let reg = registry.to_str().unwrap();
    let out = Run::new(&[
        "profiles",
        "validate",
        "low-latency",
        "--registry",
        reg,
        "--generation",
        "genoa",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let dir = TempDir::new();
    let bad = dir.0.join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"bad\"\ndescription = \"conflicts with a preset\"\nextends = \"performance\"\n\n[bios.ProcCStates]\nvalue = \"Enabled\"\nwhy = \"x\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n\n[bios.NumaNodesPerSocket]\nvalue = 4\nwhy = \"x\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n",
    )
    .unwrap();
    let out = Run::new(&[
        "profiles",
        "validate",
        bad.to_str().unwrap(),
        "--registry",
        reg,
        "--generation",
        "genoa",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("ProcCStates") && text.contains("PerfOptimized"), "{text}");
    assert!(text.contains("NumaNodesPerSocket"), "{text}");
    std::fs::write(&bad, "name = \"bad\"\ndescripton = \"typo\"\n").unwrap();
    let out = Run::new(&["profiles", "validate", bad.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad.toml:2"), "{}", stderr(&out));
}

#[tokio::test]
async fn show_lists_each_cited_source_with_title_scope_and_quotes_in_text_and_json() {
    let out = Run::new(&["profiles", "show", "low-latency", "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["schema"], "rftune.profile/v1");
    let sources = doc["sources"].as_array().unwrap();
    let note = sources.iter().find(|s| s["id"] == "dell-c6615-note").unwrap();
    assert!(note["title"].as_str().unwrap().contains("C6615"), "{note}");
    assert!(note["scope"].as_str().is_some_and(|s| !s.is_empty()), "{note}");
    assert!(
        note["quotes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["setting"] == "CorrEccSmi" && q["quote"].as_str().unwrap().contains("Latency")),
        "{note}"
    );
    // Every id a setting cites is explained.
    for s in doc["bios"].as_array().unwrap() {
        let id = s["source"].as_str().unwrap();
        assert!(
            sources.iter().any(|c| c["id"] == id && c["title"].is_string()),
            "{id} is not explained"
        );
    }
    let out = Run::new(&["profiles", "show", "low-latency"]).output().await;
    let text = stdout(&out);
    assert!(
        text.contains("  dell-c6615-note\n    title: PowerEdge C6615")
            && text.contains("    scope: ")
            && text.contains("    quote (CorrEccSmi): \"Latency-conscious"),
        "{text}"
    );
}

#[tokio::test]
async fn a_profile_file_may_declare_and_cite_its_own_sources() {
    let example = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/profile.toml");
    let out = Run::new(&["profiles", "show", example.to_str().unwrap(), "-o", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let own = doc["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "our-mpi-runbook")
        .unwrap()
        .clone();
    assert_eq!(own["declared_by_profile"], true);
    assert_eq!(own["publisher"], "Our HPC team");
    assert_eq!(own["cited_by"], serde_json::json!(["LogicalProc"]));
    // Redeclaring a shipped id is refused with the file and line.
    let dir = super::TempDir::new();
    let file = dir.0.join("mine.toml");
    let text = std::fs::read_to_string(&example)
        .unwrap()
        .replace("[sources.our-mpi-runbook]", "[sources.dell-c6615-note]")
        .replace("source = \"our-mpi-runbook\"", "source = \"dell-c6615-note\"");
    std::fs::write(&file, text).unwrap();
    let out = Run::new(&["profiles", "show", file.to_str().unwrap()]).output().await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("mine.toml") && err.contains("already a shipped source"),
        "{err}"
    );
}

#[tokio::test]
async fn a_model_is_matched_without_case_or_the_poweredge_prefix() {
    let show = async |model: &str| {
        let out = Run::new(&["profiles", "show", "performance", "--model", model])
            .output()
            .await;
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let full = show("PowerEdge C6615").await;
    assert!(full.contains("platform overrides: base [platform c6615]"), "{full}");
    for short in ["c6615", "C6615", "poweredge c6615"] {
        assert!(
            show(short).await.contains("platform overrides: base [platform c6615]"),
            "{short} is the C6615"
        );
    }
}

#[tokio::test]
async fn show_resolves_the_thread_count_pins_for_a_cpu_and_prints_the_sev_asid_split() {
    let show = async |args: &[&str]| {
        let out = Run::new(args).output().await;
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    // Two 64-core Milans with SMT on (performance) have 256 threads: the IOMMU stays on. The
    // cores come from the brand string; one socket has 128 threads and no such pin.
    let brand = "AMD EPYC 7763 64-Core Processor";
    let two = show(&["profiles", "show", "performance", "--cpu", brand, "--sockets", "2"]).await;
    assert!(
        two.lines()
            .any(|l| l.starts_with("IommuSupport") && l.contains("Enabled")),
        "{two}"
    );
    assert!(two.contains("limit IommuSupport: Disabled not possible"), "{two}");
    let one = show(&[
        "profiles",
        "show",
        "performance",
        "--cpu",
        "7763",
        "--sockets",
        "1",
        "--cores",
        "64",
    ])
    .await;
    // One socket: every workload keeps the IOMMU on anyway (base), but nothing rules Disabled out.
    assert!(
        one.lines()
            .any(|l| l.starts_with("IommuSupport") && l.contains("Enabled")),
        "{one}"
    );
    assert!(!one.contains("limit IommuSupport"), "{one}");
    // The split, with the CPU's maximum given as a parameter.
    let dir = TempDir::new();
    let file = dir.0.join("our-cc.toml");
    std::fs::write(
        &file,
        "name = \"our-cc\"\ndescription = \"SEV-SNP hosts\"\nextends = \"confidential-computing\"\n\n[parameters]\ncpu_max_sev_asids = 509\n",
    )
    .unwrap();
    let cc = show(&[
        "profiles",
        "show",
        file.to_str().unwrap(),
        "--cpu",
        "7763",
        "--sockets",
        "2",
    ])
    .await;
    assert!(
        cc.contains("split CpuMinSevAsid = 502: 501 ASIDs for SEV-ES/SNP, 8 for plain SEV, of 509"),
        "{cc}"
    );
}

#[tokio::test]
async fn validate_without_a_host_checks_names_and_tokens_offline_and_reports_every_missing_field() {
    let dir = TempDir::new();
    let file = dir.0.join("site.toml");
    std::fs::write(
        &file,
        "name = \"site\"\ndescription = \"typos\"\nextends = \"hpc\"\n\n[bios.NumaNodesPerSockt]\nvalue = \"Enabeld\"\nwhy = \"x\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n\n[bios.LogicalProc]\nvalue = \"Enabeld\"\nwhy = \"x\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n\n[bios.PowerProfileSelect]\nvalue = \"TurboMode\"\nwhy = \"x\"\nsource = \"amd-58011\"\nconfidence = \"inferred\"\n",
    )
    .unwrap();
    let out = Run::new(&["profiles", "validate", file.to_str().unwrap()])
        .output()
        .await;
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}{}", stderr(&out));
    assert!(
        text.contains("checked offline against the shipped catalog and the registries of c6615, r7525, r7625, r7725"),
        "{text}"
    );
    assert!(
        text.contains("error: NumaNodesPerSockt: not an attribute of the shipped catalog or the registries of c6615, r7525, r7625, r7725; did you mean NumaNodesPerSocket?"),
        "{text}"
    );
    assert!(
        text.contains("error: LogicalProc: \"Enabeld\"") && text.contains("did you mean Enabled?"),
        "{text}"
    );
    // A token no known registry offers but that resembles none: a host may still offer it.
    assert!(
        text.contains("warning: PowerProfileSelect: \"TurboMode\"")
            && text.contains("a host's own registry may still offer it"),
        "{text}"
    );
    let out = Run::new(&["profiles", "validate", file.to_str().unwrap(), "-o", "json"])
        .output()
        .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (doc["errors"].as_u64(), doc["checked_against_registry"].as_bool()),
        (Some(2), Some(false))
    );
    assert_eq!(doc["violations"][0]["kind"], "token_not_known");
    // Every missing field at once, each with its place.
    std::fs::write(
        &file,
        "name = \"site\"\ndescription = \"gaps\"\nextends = \"hpc\"\n\n[bios.ProcCStates]\nvalue = \"Enabled\"\n\n[bios.SysProfile]\nwhy = \"w\"\n",
    )
    .unwrap();
    let out = Run::new(&["profiles", "validate", file.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    for line in [
        "site.toml:5:1: ProcCStates has no `why`",
        "site.toml:5:1: ProcCStates has no `source`",
        "site.toml:5:1: ProcCStates has no `confidence`",
        "site.toml:8:1: SysProfile has no value",
        "site.toml:8:1: SysProfile has no `source`",
    ] {
        assert!(err.contains(line), "{line}: {err}");
    }
}

#[tokio::test]
async fn new_writes_a_commented_starting_file_that_extends_a_shipped_profile_and_validates() {
    let dir = TempDir::new();
    let file = dir.0.join("my-hpc.toml");
    let out = Run::new(&[
        "profiles",
        "new",
        "my-hpc",
        "--extends",
        "hpc",
        "--out",
        file.to_str().unwrap(),
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("extends = \"hpc\"") && text.contains("# [bios.LogicalProc]"),
        "{text}"
    );
    assert!(
        text.contains("#   NumaNodesPerSocket = 4 | 2 | 1 (stated, dell-ddr5-bandwidth)"),
        "{text}"
    );
    let out = Run::new(&["profiles", "validate", file.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // Uncommenting its leave example is a profile that leaves NPS alone.
    std::fs::write(
        &file,
        text.replace(
            "# [bios.NumaNodesPerSocket]\n# leave = true\n# why",
            "[bios.NumaNodesPerSocket]\nleave = true\nwhy",
        ),
    )
    .unwrap();
    let out = Run::new(&["profiles", "show", file.to_str().unwrap(), "-o", "json"])
        .output()
        .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["left"][0]["attribute"], "NumaNodesPerSocket", "{doc}");
    // An existing file is never replaced; an unknown parent is named.
    let out = Run::new(&[
        "profiles",
        "new",
        "x",
        "--extends",
        "hpc",
        "--out",
        file.to_str().unwrap(),
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1));
    let out = Run::new(&["profiles", "new", "x", "--extends", "hcp"]).output().await;
    assert!(stderr(&out).contains("did you mean hpc?"), "{}", stderr(&out));
}

#[tokio::test]
async fn show_and_list_say_what_they_decide_in_words_people_read() {
    // A CPU whose layout Dell's table has no row for says so.
    let out = Run::new(&["profiles", "show", "hpc", "--cpu", "7402P", "--sockets", "1"])
        .output()
        .await;
    let text = stdout(&out);
    assert!(
        text.contains("decided NumaNodesPerSocket: nps-layout [24 cores, 4x2x3]: no row:"),
        "{text}"
    );
    // A used value from a source that does not cover the host's generation is inferred there.
    assert!(
        text.contains("inferred here ProcTurboMode: used on genoa, the generations its source (idrac-r7615-capture) covers; inferred on rome"),
        "{text}"
    );
    let out = Run::new(&["profiles", "show", "ai-gpu", "--generation", "siena"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("this host is siena (model not given)"),
        "{}",
        stderr(&out)
    );
    let out = Run::new(&["profiles", "list"]).output().await;
    let text = stdout(&out);
    assert!(
        text.contains(
            "overrides for genoa; milan; milan with at most 255 threads; rome; rome with at most 255 threads"
        ),
        "{text}"
    );
}
