//! `rftune capture` against the emulator: a sanitized tree in the fixtures layout, with
//! `capture.toml`, and no identifier of the captured host left in it.

use super::{Run, TempDir, client, sim, stderr, stdout};
use serde_json::Value;
use std::path::Path;

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn capture_writes_a_sanitized_tree_with_its_manifest() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let root_doc = client(url).service_root().await.unwrap();
    let tag = redfish_client::oem::dell::service_tag(&root_doc).unwrap().to_owned();
    assert!(tag.len() == 7, "{tag}");
    let work = TempDir::new();
    let out_dir = work.0.join("r7625-capture");
    let out = Run::new(&[
        "capture",
        "--bmc",
        url,
        "--out",
        out_dir.to_str().unwrap(),
        "-o",
        "json",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["schema"], "rftune.capture/v1");

    // The fixtures layout, with what rftune reads.
    let root = out_dir.join("redfish/v1");
    for rel in [
        "index.json",
        "Systems/System.Embedded.1/Bios/index.json",
        "Systems/System.Embedded.1/Bios/Settings/index.json",
        "Systems/System.Embedded.1/Bios/BiosRegistry/index.json",
        "Systems/System.Embedded.1/Memory/DIMM.Socket.A1/index.json",
        "Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1/index.json",
        "Chassis/System.Embedded.1/Power/index.json",
    ] {
        assert!(root.join(rel).is_file(), "{rel} missing");
    }
    // Everything from the host went through the sanitizer: its service tag, serial numbers
    // and UUIDs are gone, consistently replaced.
    let mut originals = vec![tag.clone()];
    // The emulator serves the fixture's UUID and serial number.
    let system: Value = serde_json::from_slice(
        &std::fs::read(rftune_tests::fixtures_dir().join("r7625/redfish/v1/Systems/System.Embedded.1/index.json"))
            .unwrap(),
    )
    .unwrap();
    originals.push(system["UUID"].as_str().unwrap().to_owned());
    originals.push(system["SerialNumber"].as_str().unwrap().to_owned());
    for file in files(&out_dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        for original in &originals {
            assert!(
                !text.to_ascii_lowercase().contains(&original.to_ascii_lowercase()),
                "{original} survived in {}",
                file.display()
            );
        }
    }
    let bios: Value =
        serde_json::from_slice(&std::fs::read(root.join("Systems/System.Embedded.1/Bios/index.json")).unwrap())
            .unwrap();
    let captured_system: Value =
        serde_json::from_slice(&std::fs::read(root.join("Systems/System.Embedded.1/index.json")).unwrap()).unwrap();
    assert_eq!(
        bios["Attributes"]["SystemServiceTag"], captured_system["SKU"],
        "consistent"
    );
    assert_eq!(bios["Attributes"]["SystemBiosVersion"], "1.6.10", "versions kept");

    // capture.toml: versions and the replaced fields, never the originals.
    let manifest = std::fs::read_to_string(out_dir.join("capture.toml")).unwrap();
    let doc: toml::Table = manifest.parse().unwrap();
    assert_eq!(doc["model"].as_str(), Some("PowerEdge R7625"));
    assert_eq!(doc["bmc_firmware"].as_str(), Some("7.00.60.00"));
    assert_eq!(doc["bios_version"].as_str(), Some("1.6.10"));
    let kinds: Vec<&str> = doc["replaced"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    for kind in ["service_tag", "serial_number", "uuid", "host_name"] {
        assert!(kinds.contains(&kind), "{kind} not listed: {manifest}");
    }
    assert!(!manifest.contains(&tag));

    // A second capture into the same directory is refused: nothing is mixed or overwritten.
    let again = Run::new(&["capture", "--bmc", url, "--out", out_dir.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("is not empty"), "{}", stdout(&again));
}

/// capture → `sim --fixture` → capture again gives the same tree: the sanitizer is consistent
/// and idempotent, and the emulator serves a captured tree as it was recorded.
#[tokio::test(flavor = "multi_thread")]
async fn a_capture_served_by_the_emulator_captures_to_the_same_tree() {
    let work = TempDir::new();
    let first = work.0.join("first");
    let second = work.0.join("second");
    {
        let fleet = sim("r7625", 1, |_| {}).await;
        let url = &fleet.hosts()[0].url;
        let out = Run::new(&["capture", "--bmc", url, "--out", first.to_str().unwrap()])
            .output()
            .await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let fleet = sim(first.to_str().unwrap(), 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let out = Run::new(&["capture", "--bmc", url, "--out", second.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let tree = |root: &Path| -> Vec<(String, String)> {
        files(root)
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "capture.toml"))
            .map(|f| {
                let rel = f.strip_prefix(root).unwrap().display().to_string();
                (rel, std::fs::read_to_string(&f).unwrap())
            })
            .collect()
    };
    let (a, b) = (tree(&first), tree(&second));
    assert_eq!(
        a.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        b.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        "the same files"
    );
    for ((path, x), (_, y)) in a.iter().zip(&b) {
        assert_eq!(x, y, "{path} differs between the two captures");
    }
}

/// Every property path of a document (array elements as `[]`), for comparing shapes whose
/// values the sanitizer and the host's live state change.
fn shape(v: &Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                shape(x, &p, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| shape(x, &format!("{at}/[]"), out)),
        _ => {}
    }
}

/// What the emulator adds to a tree (links to Dell services, the event service, schema files,
/// `@odata.context` on collections it renders) is marked `X-Rftune-Synthesised` and left out,
/// so a capture of the emulator holds exactly the tree it serves, in the same shapes.
#[tokio::test(flavor = "multi_thread")]
async fn a_capture_of_the_emulator_holds_what_its_tree_recorded_and_nothing_it_synthesised() {
    assert_eq!(
        rftune_engine::capture::SYNTHESISED_HEADER,
        idrac_sim::synth::SYNTHESISED_HEADER,
        "the emulator and capture agree on the header"
    );
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    // The emulator does add to this tree: the Manager links Dell services the tree lacks.
    let manager = client(url)
        .get_answer::<Value>(redfish_client::oem::dell::MANAGER)
        .await
        .unwrap();
    let marked = manager.header(idrac_sim::synth::SYNTHESISED_HEADER).unwrap_or_default();
    assert!(marked.contains("/Links/Oem/Dell/DelliDRACCardService"), "{marked}");
    assert!(manager.value.pointer("/Links/Oem/Dell/DelliDRACCardService").is_some());

    let work = TempDir::new();
    let out_dir = work.0.join("capture");
    let out = Run::new(&["capture", "--bmc", url, "--out", out_dir.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fixture = rftune_tests::fixtures_dir().join("r7625");
    let captured: Vec<_> = files(&out_dir)
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "index.json"))
        .collect();
    assert!(captured.len() > 50, "{}", captured.len());
    for file in captured {
        let rel = file.strip_prefix(&out_dir).unwrap();
        let recorded = fixture.join(rel);
        assert!(
            recorded.is_file(),
            "{} is not in the tree the emulator serves",
            rel.display()
        );
        let read = |p: &Path| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
        let (mut got, mut want) = (Default::default(), Default::default());
        shape(&read(&file), "", &mut got);
        shape(&read(&recorded), "", &mut want);
        assert_eq!(
            got.difference(&want).collect::<Vec<_>>(),
            Vec::<&String>::new(),
            "{}: properties the tree does not record",
            rel.display()
        );
        assert_eq!(
            want.difference(&got).collect::<Vec<_>>(),
            Vec::<&String>::new(),
            "{}: recorded properties lost",
            rel.display()
        );
    }
}

/// `doc` without the members that name the host (its address and serial number), which a
/// capture served back changes by design: what is left is what rftune read and judged.
fn without_host(mut doc: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("host");
                map.remove("service_tag");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut doc);
    doc
}

/// An iLO (the emulator's DL385 Gen10 Plus v2 on iLO 5) links its BIOS in lower case with
/// trailing slashes and keeps the registry gzip-encoded under `registrystore`, found through
/// `Registries`: its capture holds the BIOS, its settings object and that registry file, with
/// no identifier of the machine left, and `sim --fixture` serves it back as an iLO on which
/// `inventory`, `bios get` and `diff -p hpc` read what they read on the original; a capture of
/// that is the same tree.
#[tokio::test(flavor = "multi_thread")]
async fn an_ilo_capture_is_served_back_as_the_same_ilo() {
    let work = TempDir::new();
    let first = work.0.join("dl385");
    let second = work.0.join("again");
    let original = sim("dl385", 1, |_| {}).await;
    let url = &original.hosts()[0].url;
    let out = Run::new(&["capture", "--bmc", url, "--out", first.to_str().unwrap(), "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["not_served"], serde_json::json!([]), "{summary}");
    let root = first.join("redfish/v1");
    for rel in [
        "systems/1/bios/index.json",
        "systems/1/bios/settings/index.json",
        "Registries/BiosAttributeRegistryA42.v1_2_60/index.json",
        "registrystore/registries/en/biosattributeregistrya42.v1_2_60/index.json",
        "Systems/1/Memory/proc1dimm1/index.json",
    ] {
        assert!(root.join(rel).is_file(), "{rel} missing");
    }
    let registry: Value = serde_json::from_slice(
        &std::fs::read(root.join("registrystore/registries/en/biosattributeregistrya42.v1_2_60/index.json")).unwrap(),
    )
    .unwrap();
    assert!(
        registry["RegistryEntries"]["Attributes"].as_array().unwrap().len() > 40,
        "the registry decoded from gzip"
    );

    // The identifiers the emulator serves from the tree (and the serial number it serves as
    // the host's) are gone, in every file.
    let recorded = |rel: &str| -> Value {
        let file = rftune_tests::fixtures_dir().join("dl385/redfish/v1").join(rel);
        serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
    };
    let (tree_root, system, manager) = (
        recorded("index.json"),
        recorded("Systems/1/index.json"),
        recorded("Managers/1/index.json"),
    );
    let text = |v: &Value| v.as_str().unwrap().to_owned();
    let ilo = &tree_root["Oem"]["Hpe"]["Manager"][0];
    let originals = [
        text(&tree_root["UUID"]),
        text(&system["UUID"]),
        text(&manager["UUID"]),
        text(&system["SerialNumber"]),
        text(&recorded("Systems/1/Memory/proc1dimm1/index.json")["SerialNumber"]),
        text(&ilo["FQDN"]),
        text(&ilo["HostName"]),
    ];
    for file in files(&first) {
        let content = std::fs::read_to_string(&file).unwrap().to_ascii_lowercase();
        for original in &originals {
            assert!(
                !content.contains(&original.to_ascii_lowercase()),
                "{original} survived in {}",
                file.display()
            );
        }
    }

    let captured = sim(first.to_str().unwrap(), 1, |_| {}).await;
    let again = &captured.hosts()[0].url;
    let json = |args: &[&str], code: i32| {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = Run::new(&args).output().await;
            assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        }
    };
    let inventory = json(&["inventory", "--bmc", again, "-o", "json"], 0).await;
    assert_eq!(inventory["vendor"], "HPE");
    assert_eq!(inventory["bmc"], "HPE iLO 5 (firmware 2.72)");
    assert_eq!(
        without_host(inventory),
        without_host(json(&["inventory", "--bmc", url, "-o", "json"], 0).await)
    );

    let bios = json(&["bios", "get", "--bmc", again, "-o", "json"], 0).await;
    let was = json(&["bios", "get", "--bmc", url, "-o", "json"], 0).await;
    let tree_bios = recorded("systems/1/bios/index.json");
    for name in [
        "WorkloadProfile",
        "NumaMemoryDomainsPerSocket",
        "ProcSMT",
        "PatrolScrubDuration",
    ] {
        assert_eq!(bios["attributes"][name], tree_bios["Attributes"][name], "{name}");
    }
    assert_eq!(bios["attributes"], was["attributes"]);

    // The same drift, judged the same way, in HPE's names.
    let diff = json(&["diff", "--bmc", again, "-p", "hpc", "-o", "json"], 2).await;
    let original_diff = json(&["diff", "--bmc", url, "-p", "hpc", "-o", "json"], 2).await;
    assert!(
        diff["hosts"][0]["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["attribute"] == "WorkloadProfile" && c["status"] == "drift"),
        "{diff}"
    );
    assert_eq!(without_host(diff), without_host(original_diff));

    // Served back, it captures to the same tree.
    let out = Run::new(&["capture", "--bmc", again, "--out", second.to_str().unwrap()])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let tree = |dir: &Path| -> Vec<(String, String)> {
        files(dir)
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "capture.toml"))
            .map(|f| {
                let rel = f.strip_prefix(dir).unwrap().display().to_string();
                (rel, std::fs::read_to_string(&f).unwrap())
            })
            .collect()
    };
    assert_eq!(tree(&first), tree(&second));
}
