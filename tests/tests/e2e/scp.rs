//! `rftune scp` against the emulator: an export derived into a profile and rendered back, a
//! rendered profile previewed and imported (requests, jobs and reboots counted), partial
//! failure, pending work, a fleet's rolling import, `diff --scp`, and what an export file is
//! (private, never overwritten, sanitized on request).

use super::{Run, TempDir, client, sim, stats, stderr, stdout};
use redfish_client::ODataId;
use redfish_client::oem::dell::scp::ScpDocument;
use redfish_client::resources::bios::Attributes;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// `rftune scp export` of one host into `dir`; returns the file.
async fn export(url: &str, dir: &Path, format: &str, extra: &[&str]) -> std::path::PathBuf {
    let d = dir.display().to_string();
    let mut args = vec!["scp", "export", "--bmc", url, "--dir", &d, "--format", format];
    args.extend_from_slice(extra);
    let out = Run::new(&args).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let name = url.trim_start_matches("http://").replace(':', "_");
    dir.join(format!("{name}.{format}"))
}

fn attributes(doc: &ScpDocument) -> BTreeMap<String, String> {
    doc.all_attributes()
        .into_iter()
        .filter(|(_, a)| a.set_on_import)
        .map(|(_, a)| (a.name.replace('#', "."), a.value.clone()))
        .collect()
}

/// The settings of a derived profile: attribute → value as written in the TOML.
fn settings(toml_text: &str) -> BTreeMap<String, String> {
    let v: toml::Table = toml_text.parse().unwrap();
    let mut out = BTreeMap::new();
    for section in ["bios", "idrac"] {
        for (name, s) in v.get(section).and_then(|t| t.as_table()).into_iter().flatten() {
            let value = match &s["value"] {
                toml::Value::String(t) => t.clone(),
                other => other.to_string(),
            };
            out.insert(name.clone(), value);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn an_emulator_export_derived_into_a_profile_renders_back_unchanged_where_the_host_has_no_say() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let file = export(url, &dir.0, "json", &[]).await;
    let f = file.display().to_string();
    // The catalog's settings, and one named setting besides them.
    let out = Run::new(&[
        "profiles",
        "derive",
        "--from-scp",
        &f,
        "--name",
        "golden",
        "--attribute",
        "SerialComm",
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let derived = stdout(&out);
    for never in [
        "UserName",
        "Users.2",
        "IPv4.1.Address",
        "MACAddress",
        "DNSRacName",
        "R7625A1",
        "192.0.2",
    ] {
        assert!(!derived.contains(never), "{never} in the derived profile:\n{derived}");
    }
    assert!(stderr(&out).contains("the host's identity"), "{}", stderr(&out));
    let profile = dir.0.join("golden.toml");
    std::fs::write(&profile, &derived).unwrap();
    let p = profile.display().to_string();
    let out = Run::new(&["profiles", "validate", &p, "--bmc", url]).output().await;
    assert!(
        out.status.success(),
        "the derived profile validates against the host it came from: {}",
        stdout(&out)
    );
    let out = Run::new(&["scp", "render", "--profile", &p, "--bmc", url, "--format", "json"])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (rendered, _) = ScpDocument::parse(&stdout(&out)).unwrap();
    let rendered = attributes(&rendered);
    let wanted = settings(&derived);
    let unchanged: Vec<&String> = wanted.keys().filter(|k| rendered.get(*k) == wanted.get(*k)).collect();
    let left_out: Vec<&String> = wanted.keys().filter(|k| !rendered.contains_key(*k)).collect();
    let changed: Vec<&String> = wanted
        .keys()
        .filter(|k| rendered.get(*k).is_some_and(|v| Some(v) != wanted.get(*k)))
        .collect();
    eprintln!(
        "round trip: {} settings derived, {} rendered unchanged, left out {left_out:?} ({}), changed {changed:?}",
        wanted.len(),
        unchanged.len(),
        stderr(&out).trim()
    );
    assert!(
        changed.is_empty(),
        "the host's registry chose the same values: {changed:?}"
    );
    for name in &left_out {
        assert!(stderr(&out).contains(name.as_str()), "{name} left out without a reason");
    }
    assert!(wanted.len() > 30 && unchanged.len() + left_out.len() == wanted.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rendered_profile_imports_with_one_reboot_in_rftunes_slot_and_a_second_import_changes_nothing() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let fragment = dir.0.join("low-latency.xml");
    let f = fragment.display().to_string();
    let out = Run::new(&["scp", "render", "--profile", "low-latency", "--bmc", url, "--out", &f])
        .output()
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = Run::new(&["scp", "import", &f, "--preview", "--bmc", url])
        .output()
        .await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "a preview that would change something exits 2: {}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("LogicalProc: Enabled → Disabled"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("SYS087"), "{}", stdout(&out));
    fleet.hosts()[0].host.stats.reset();
    let state = TempDir::new();
    let import = |extra: &'static [&'static str]| {
        let mut args = vec![
            "scp",
            "import",
            &f,
            "--bmc",
            url,
            "--reboot",
            "force",
            "--job-timeout",
            "20s",
            "--boot-timeout",
            "20s",
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        Run::new(&args).state_dir(&state.0).output()
    };
    let out = import(&[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let host = &doc["hosts"][0];
    assert_eq!(host["outcome"], "imported", "{doc}");
    assert_eq!(host["rebooted"], true);
    assert!(host["snapshot"].as_str().is_some_and(|s| Path::new(s).exists()));
    let bios = host["report"]["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fqdd"] == "BIOS.Setup.1-1")
        .unwrap();
    assert!(bios["applied"].as_u64().unwrap() >= 5 && bios["failed"] == 0, "{bios}");
    let s = stats(&fleet, 0);
    eprintln!(
        "import: {} requests, {} job(s), {} reset(s), {} BIOS PATCH(es)",
        s["requests"]["total"], s["jobs_created"], s["resets"], s["bios_patches"]
    );
    assert_eq!(s["jobs_created"], 1, "one import job");
    assert_eq!(s["resets"], 1, "one reboot, rftune's (ForceRestart)");
    assert_eq!(s["bios_patches"], 0, "the import, not a PATCH, changed the BIOS");
    let audit = std::fs::read_to_string(state.0.join("audit.log")).unwrap();
    for step in ["\"snapshot\"", "\"scp-import\"", "\"reboot\"", "\"job\""] {
        assert!(audit.contains(step), "{step} not in the audit log");
    }
    assert!(audit.contains("\"NoReboot\""), "the iDRAC was told not to reboot");
    assert!(
        !audit.contains("<Attribute"),
        "the audit log records the file's hash, not its text"
    );
    let out = Run::new(&["diff", "--profile", "low-latency", "--bmc", url])
        .output()
        .await;
    assert!(out.status.success(), "in sync after the import: {}", stdout(&out));
    fleet.hosts()[0].host.stats.reset();
    let out = import(&[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["hosts"][0]["outcome"], "in_sync");
    assert_eq!(stats(&fleet, 0)["resets"], 0, "nothing to change, no reboot");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_import_that_applies_only_part_of_the_profile_is_an_error_listing_what_failed() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let file = dir.0.join("partial.xml");
    std::fs::write(
        &file,
        "<SystemConfiguration>\n<Component FQDD=\"BIOS.Setup.1-1\">\n <Attribute Name=\"LogicalProc\">Disabled</Attribute>\n <Attribute Name=\"NoSuchAttribute\">On</Attribute>\n</Component>\n<Component FQDD=\"NIC.Slot.3-1-1\">\n <Attribute Name=\"LegacyBootProto\">PXE</Attribute>\n</Component>\n</SystemConfiguration>\n",
    )
    .unwrap();
    let f = file.display().to_string();
    let out = Run::new(&[
        "scp",
        "import",
        &f,
        "--bmc",
        url,
        "--reboot",
        "force",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("CompletedWithErrors") && err.contains("SYS055"), "{err}");
    assert!(err.contains("BIOS.Setup.1-1 NoSuchAttribute = On"), "{err}");
    assert!(err.contains("NIC.Slot.3-1-1 LegacyBootProto = PXE"), "{err}");
    assert!(
        !err.contains("LogicalProc ="),
        "what applied is not listed as failed: {err}"
    );
    let bios = client(url)
        .bios(&ODataId::new(redfish_client::oem::dell::BIOS))
        .await
        .unwrap();
    assert_eq!(
        bios.attributes["LogicalProc"],
        "Disabled".into(),
        "the part that could apply did"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_work_stops_an_import_until_it_is_replaced() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let c = client(url);
    let staged: Attributes = [("MemTest".to_owned(), "Enabled".into())].into_iter().collect();
    c.stage_settings(&ODataId::new(redfish_client::oem::dell::BIOS_SETTINGS), &staged, None)
        .await
        .unwrap();
    let dir = TempDir::new();
    let file = dir.0.join("one.json");
    std::fs::write(
        &file,
        r#"{"SystemConfiguration": {"Components": [{"FQDD": "BIOS.Setup.1-1", "Attributes": [{"Name": "LogicalProc", "Value": "Disabled"}]}]}}"#,
    )
    .unwrap();
    let f = file.display().to_string();
    let args = [
        "scp",
        "import",
        &f,
        "--bmc",
        url,
        "--reboot",
        "force",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
    ];
    let out = Run::new(&args).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--replace-pending"), "{}", stderr(&out));
    assert_eq!(stats(&fleet, 0)["jobs_created"], 0, "nothing was sent");
    let mut replace = args.to_vec();
    replace.push("--replace-pending");
    let out = Run::new(&replace).output().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let bios = c.bios(&ODataId::new(redfish_client::oem::dell::BIOS)).await.unwrap();
    assert_eq!(bios.attributes["LogicalProc"], "Disabled".into());
    assert_eq!(
        bios.attributes["MemTest"],
        "Disabled".into(),
        "the replaced value was discarded"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_imports_within_its_rolling_limits_and_a_failed_canary_touches_no_other_host() {
    let fleet = sim("r7625", 3, |c| c.faults = vec!["job-fails@1".parse().unwrap()]).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    let mut text = String::new();
    for (i, h) in fleet.hosts().iter().enumerate() {
        text.push_str(&format!("[[bmc]]\nname = \"host-{i}\"\nurl = \"{}\"\n\n", h.url));
    }
    std::fs::write(&inventory, text).unwrap();
    let file = dir.0.join("one.json");
    std::fs::write(
        &file,
        r#"{"SystemConfiguration": {"Components": [{"FQDD": "BIOS.Setup.1-1", "Attributes": [{"Name": "LogicalProc", "Value": "Disabled"}]}]}}"#,
    )
    .unwrap();
    let (f, inv) = (file.display().to_string(), inventory.display().to_string());
    let out = Run::new(&[
        "scp",
        "import",
        &f,
        "--inventory",
        &inv,
        "--canary",
        "1",
        "--max-unavailable",
        "1",
        "--reboot",
        "force",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["hosts"][0]["status"], "error", "{doc}");
    for i in 1..3 {
        assert_eq!(stats(&fleet, i)["jobs_created"], 0, "host {i} was left untouched");
    }
    // Without the failing canary, both others import, one reboot slot at a time.
    let rest = dir.0.join("rest.toml");
    let mut text = String::new();
    for (i, h) in fleet.hosts().iter().enumerate().skip(1) {
        text.push_str(&format!("[[bmc]]\nname = \"host-{i}\"\nurl = \"{}\"\n\n", h.url));
    }
    std::fs::write(&rest, text).unwrap();
    let r = rest.display().to_string();
    let out = Run::new(&[
        "scp",
        "import",
        &f,
        "--inventory",
        &r,
        "--max-unavailable",
        "1",
        "--reboot",
        "force",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["summary"]["imported"], 2, "{doc}");
}

#[tokio::test(flavor = "multi_thread")]
async fn diff_compares_hosts_with_an_scp_directly() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let file = export(url, &dir.0, "xml", &["--target", "BIOS,IDRAC,System"]).await;
    let f = file.display().to_string();
    let out = Run::new(&["diff", "--scp", &f, "--bmc", url]).output().await;
    assert!(
        out.status.success(),
        "a host is in sync with its own export: {}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("left out"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "<Attribute Name=\"LogicalProc\">Enabled</Attribute>",
        "<Attribute Name=\"LogicalProc\">Disabled</Attribute>",
    );
    let changed = dir.0.join("changed.xml");
    std::fs::write(&changed, text).unwrap();
    let c = changed.display().to_string();
    let out = Run::new(&["diff", "--scp", &c, "--bmc", url, "-o", "json"])
        .output()
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let drift: Vec<&Value> = doc["hosts"][0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "drift")
        .collect();
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert_eq!(drift[0]["attribute"], "LogicalProc");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_export_is_private_never_overwritten_and_sanitized_only_on_request() {
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let file = export(url, &dir.0, "xml", &[]).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "an export can hold secrets");
    }
    let raw = std::fs::read_to_string(&file).unwrap();
    assert!(
        raw.contains("ServiceTag=\"R7625A1\""),
        "raw: the host's own, to import again"
    );
    let d = dir.0.display().to_string();
    let out = Run::new(&["scp", "export", "--bmc", url, "--dir", &d]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("exists"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        raw,
        "the earlier export is intact"
    );
    let shared = TempDir::new();
    let clean = export(url, &shared.0, "json", &["--sanitize"]).await;
    let text = std::fs::read_to_string(clean).unwrap();
    // (The tree's addresses and MACs are documentation ones, which the sanitizer keeps.)
    for gone in ["R7625A1", "idrac-r7625a1", "r7625a1.example.invalid"] {
        assert!(!text.contains(gone), "{gone} left in the sanitized export");
    }
    assert!(text.contains("\"LogicalProc\""), "settings stay");
}

/// The `ansible-playbook` of an installation holding Dell's collection (`dellemc.openmanage`,
/// shipped in PyPI's community `ansible` package), from `RFTUNE_DELL_ANSIBLE_PLAYBOOK`; `None`
/// after printing why the test is skipped (a failure with `RFTUNE_REQUIRE_TOOLS=1`).
fn require_dell_ansible() -> Option<std::path::PathBuf> {
    let playbook = std::env::var_os("RFTUNE_DELL_ANSIBLE_PLAYBOOK")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_file());
    // The collection lives beside the playbook's Python, in ansible_collections.
    let has_collection = playbook.as_ref().is_some_and(|p| {
        let python = p.with_file_name("python");
        std::process::Command::new(python)
            .args(["-c", "import ansible_collections.dellemc.openmanage"])
            .status()
            .is_ok_and(|s| s.success())
    });
    rftune_tests::tool_available(
        "dellemc.openmanage (Ansible)",
        has_collection,
        "set RFTUNE_DELL_ANSIBLE_PLAYBOOK to the ansible-playbook of a venv with PyPI's `ansible` package",
    )
    .then_some(playbook)
    .flatten()
}

/// Runs `play` (YAML) with Dell's collection; returns the JSON callback's document.
async fn dell_play(playbook: &Path, dir: &Path, play: &str, check: bool) -> Value {
    let file = dir.join("play.yml");
    std::fs::write(&file, play).unwrap();
    let mut cmd = tokio::process::Command::new(playbook);
    cmd.arg(&file)
        .env("ANSIBLE_STDOUT_CALLBACK", "ansible.posix.json")
        .env("ANSIBLE_LOCALHOST_WARNING", "False")
        .env("ANSIBLE_INVENTORY_UNPARSED_WARNING", "False")
        .env("ANSIBLE_HOME", dir.join("ansible-home"))
        .kill_on_drop(true);
    if check {
        cmd.arg("--check");
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(300), cmd.output())
        .await
        .expect("the play ended within 5 minutes")
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// The result of the first task of the play.
fn task_result(doc: &Value) -> &Value {
    &doc["plays"][0]["tasks"][0]["hosts"]["localhost"]
}

#[tokio::test(flavor = "multi_thread")]
async fn dells_ansible_module_exports_previews_and_imports_through_the_emulator() {
    let Some(playbook) = require_dell_ansible() else { return };
    let fleet = sim("r7625", 1, |c| c.tls = true).await;
    let port = fleet.hosts()[0].addr.port();
    let dir = TempDir::new();
    let share = dir.0.display().to_string();
    let task = |body: &str| {
        format!(
            "- hosts: localhost\n  gather_facts: false\n  tasks:\n    - dellemc.openmanage.idrac_server_config_profile:\n        idrac_ip: 127.0.0.1\n        idrac_port: {port}\n        idrac_user: root\n        idrac_password: calvin\n        validate_certs: false\n        share_name: \"{share}\"\n        job_wait: true\n{body}"
        )
    };
    let export = task(
        "        command: export\n        scp_file: exported.json\n        export_format: JSON\n        scp_components: [IDRAC, BIOS]\n",
    );
    let doc = dell_play(&playbook, &dir.0, &export, false).await;
    let r = task_result(&doc);
    assert_eq!(
        r["msg"], "Successfully exported the Server Configuration Profile.",
        "{r}"
    );
    let exported = std::fs::read_to_string(dir.0.join("exported.json")).unwrap();
    let (profile, _) = ScpDocument::parse(&exported).unwrap();
    assert_eq!(
        profile.components.iter().map(|c| c.fqdd.as_str()).collect::<Vec<_>>(),
        ["iDRAC.Embedded.1", "BIOS.Setup.1-1"]
    );
    let mut edited: Value = serde_json::from_str(&exported).unwrap();
    let mut found = false;
    for c in edited["SystemConfiguration"]["Components"].as_array_mut().unwrap() {
        for a in c["Attributes"].as_array_mut().into_iter().flatten() {
            if a["Name"] == "LogicalProc" && a["Value"] == "Enabled" {
                a["Value"] = "Disabled".into();
                found = true;
            }
        }
    }
    assert!(found, "the export holds LogicalProc Enabled");
    std::fs::write(dir.0.join("edited.json"), edited.to_string()).unwrap();
    let import = task(
        "        command: import\n        scp_file: edited.json\n        scp_components: [ALL]\n        shutdown_type: Graceful\n",
    );
    // Check mode is the module's preview.
    let doc = dell_play(&playbook, &dir.0, &import, true).await;
    let r = task_result(&doc);
    assert_eq!(r["msg"], "Changes found to be applied.", "{r}");
    assert_eq!(r["changed"], true);
    let doc = dell_play(&playbook, &dir.0, &import, false).await;
    let r = task_result(&doc);
    assert_eq!(
        r["msg"], "Successfully imported the Server Configuration Profile.",
        "{r}"
    );
    assert_eq!(r["changed"], true, "{r}");
    assert_eq!(r["scp_status"]["MessageId"], "SYS053", "{r}");
    let bios = fleet.hosts()[0].host.snapshot().0;
    assert_eq!(bios["LogicalProc"], "Disabled".into());
    let doc = dell_play(&playbook, &dir.0, &import, true).await;
    assert_eq!(task_result(&doc)["msg"], "No changes found to be applied.", "{doc}");
    eprintln!(
        "dellemc.openmanage against the emulator: export, check-mode preview, import, preview again; {} requests",
        stats(&fleet, 0)["requests"]["total"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_import_of_idrac_attributes_alone_still_waits_for_rftunes_reboot() {
    // A NoReboot import job pauses for a reboot whatever it changes (Dell's Ansible
    // documentation), so rftune takes a reboot slot once the iDRAC pauses it.
    let fleet = sim("r7625", 1, |_| {}).await;
    let url = &fleet.hosts()[0].url;
    let dir = TempDir::new();
    let file = dir.0.join("thermal.xml");
    std::fs::write(
        &file,
        "<SystemConfiguration>\n<Component FQDD=\"System.Embedded.1\">\n <Attribute Name=\"ThermalSettings.1#ThermalProfile\">Maximum Performance</Attribute>\n</Component>\n</SystemConfiguration>\n",
    )
    .unwrap();
    let f = file.display().to_string();
    let out = Run::new(&[
        "scp",
        "import",
        &f,
        "--bmc",
        url,
        "--reboot",
        "force",
        "--job-timeout",
        "20s",
        "--boot-timeout",
        "20s",
        "-o",
        "json",
    ])
    .output()
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["hosts"][0]["rebooted"], true, "{doc}");
    assert_eq!(stats(&fleet, 0)["resets"], 1);
    let system = client(url)
        .dell()
        .attributes(redfish_client::oem::dell::AttributeGroup::System)
        .await
        .unwrap();
    assert_eq!(
        system.attributes["ThermalSettings.1.ThermalProfile"],
        "Maximum Performance".into()
    );
}

#[tokio::test]
async fn deriving_an_scp_that_holds_no_setting_a_profile_can_take_is_an_error_saying_why() {
    let dir = TempDir::new();
    let file = dir.0.join("idrac-only.json");
    let scp = serde_json::json!({"SystemConfiguration": {"Model": "PowerEdge R640", "Components": [
        {"FQDD": "iDRAC.Embedded.1", "Attributes": [
            {"Name": "IPv4.1#Address", "Value": "192.0.2.10", "Set On Import": "True", "Comment": "Read and Write"},
            {"Name": "NIC.1#DNSRacName", "Value": "idrac-lab", "Set On Import": "True", "Comment": "Read and Write"}]}]}});
    std::fs::write(&file, scp.to_string()).unwrap();
    let out = Run::new(&[
        "profiles",
        "derive",
        "--from-scp",
        file.to_str().unwrap(),
        "--name",
        "x",
    ])
    .output()
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "no empty profile is written");
    let err = stderr(&out);
    assert!(
        err.contains("idrac-only.json holds no BIOS or iDRAC setting a profile can take")
            && err.contains("2 the host's identity"),
        "{err}"
    );
}
