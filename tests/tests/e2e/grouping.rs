//! A fleet's tables say each thing once (issue 36 item 1): hosts whose results read the same
//! share one block that names them, hosts that differ get a block per difference, failures of
//! one cause share a line, `--per-host` gives every host its own block, and `-o json` keeps
//! every host.

use super::fleet_failures::closed_port;
use super::{Run, TempDir, client, sim, stderr, stdout};
use redfish_client::oem::dell;
use serde_json::{Value, json};

/// The lines of `text` that contain `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(needle)).collect()
}

/// Runs rftune with `args` then `extra`, in `state`.
async fn run(args: &[&str], extra: &[&str], state: &std::path::Path) -> std::process::Output {
    let all: Vec<&str> = args.iter().chain(extra).copied().collect();
    Run::new(&all).state_dir(state).output().await
}

#[tokio::test(flavor = "multi_thread")]
async fn twelve_identical_hosts_are_one_block_naming_them_and_per_host_gives_each_its_own() {
    let fleet = sim("r7625", 12, |_| {}).await;
    let dir = TempDir::new();
    let inventory = dir.0.join("fleet.toml");
    std::fs::write(&inventory, fleet.inventory_toml()).unwrap();
    let inv = inventory.to_str().unwrap();
    let plan_file = dir.0.join("plan.json");
    let names = "  hosts: r7625-0001, r7625-0002, r7625-0003, r7625-0004, r7625-0005 and 7 more";

    // diff: one heading for the twelve, what they share, their names, the drift once.
    let diff = ["diff", "--inventory", inv, "-p", "performance"];
    let out = run(&diff, &[], &dir.0).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(
        lines_with(&table, " hosts ("),
        ["12 hosts (PowerEdge R7625, BIOS 1.6.10) vs performance: 41 in_sync, 1 drift, 2 not_applicable"],
        "{table}"
    );
    assert_eq!(lines_with(&table, "  hosts: "), [names], "{table}");
    assert_eq!(lines_with(&table, "CECriticalSEL").len(), 1, "{table}");
    assert!(table.contains("12 hosts: 0 in sync, 12 drift, 0 error"), "{table}");
    let grouped = table.lines().count();

    // A warning (hpc's NPS one) is said once for the group too.
    let out = run(&["diff", "--inventory", inv, "-p", "hpc"], &[], &dir.0).await;
    let table = stdout(&out);
    assert_eq!(lines_with(&table, " hosts (").len(), 1, "{table}");
    assert_eq!(lines_with(&table, "warning: Dell's manuals").len(), 1, "{table}");

    // --per-host: every host its own heading and rows, as before grouping.
    let out = run(&diff, &["--per-host"], &dir.0).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let each = stdout(&out);
    for host in fleet.hosts() {
        assert_eq!(
            lines_with(&each, &format!("{} (", host.name)).len(),
            1,
            "{} has its own heading: {each}",
            host.name
        );
    }
    assert_eq!(lines_with(&each, "CECriticalSEL").len(), 12, "{each}");
    assert!(!each.contains("  hosts: "), "{each}");
    assert!(
        grouped * 5 < each.lines().count(),
        "{grouped} lines grouped, {} per host",
        each.lines().count()
    );

    // -o json keeps every host, grouped or not.
    let out = run(&diff, &["-o", "json"], &dir.0).await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 12, "{doc}");
    for (entry, host) in hosts.iter().zip(fleet.hosts()) {
        assert_eq!(entry["host"], host.name.as_str());
        assert_eq!(entry["status"], "drift");
        assert_eq!(entry["service_tag"], host.host.service_tag.as_str());
    }

    // plan: one block with the PATCH and the NPS warning once; no "reading" line per host on
    // stderr (not a terminal here), one count instead.
    let plan = [
        "plan",
        "--inventory",
        inv,
        "-p",
        "hpc",
        "--out",
        plan_file.to_str().unwrap(),
    ];
    let out = run(&plan, &[], &dir.0).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(lines_with(&table, "12 hosts (").len(), 1, "{table}");
    assert!(
        table.contains("12 hosts (PowerEdge R7625, BIOS 1.6.10, BiosAttributeRegistry.v1_0_3): change, reboots once\n"),
        "{table}"
    );
    assert_eq!(lines_with(&table, "PATCH Bios/Settings").len(), 1, "{table}");
    assert_eq!(lines_with(&table, "NumaNodesPerSocket: ").len(), 1, "{table}");
    assert!(table.contains("planned from each host's own state"), "{table}");
    let err = stderr(&out);
    assert!(!err.contains(": reading"), "{err}");
    let counts = lines_with(&err, "rftune: plan: 12/12 hosts done, 0 failed (");
    assert_eq!(counts.len(), 1, "{err}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&plan_file).unwrap()).unwrap();
    assert_eq!(
        saved["hosts"].as_array().unwrap().len(),
        12,
        "the plan file has every host"
    );

    // apply --dry-run: the apply's block and the plan's, each once.
    let dry = ["apply", "--inventory", inv, "-p", "hpc", "--dry-run"];
    let out = run(&dry, &[], &dir.0).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(
        lines_with(&table, "12 hosts: planned: 9 BIOS value(s); would reboot the host once"),
        ["12 hosts: planned: 9 BIOS value(s); would reboot the host once (graceful)"],
        "{table}"
    );
    assert_eq!(lines_with(&table, "  hosts: "), [names, names], "{table}");
    assert_eq!(lines_with(&table, "choice: NumaNodesPerSocket = 4").len(), 1, "{table}");
    assert!(!stderr(&out).contains(": reading"), "{}", stderr(&out));
    let out = run(&dry, &["--per-host"], &dir.0).await;
    let each = stdout(&out);
    assert_eq!(lines_with(&each, "choice: NumaNodesPerSocket = 4").len(), 12, "{each}");
    let out = run(&dry, &["-o", "json"], &dir.0).await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 12, "{doc}");
    assert!(hosts.iter().all(|h| h["outcome"] == "planned"), "{doc}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_that_differ_get_a_block_each_way_and_unreachable_hosts_share_one_line() {
    let fleet = sim("r7625", 6, |_| {}).await;
    // Hosts 5 and 6 have a value staged behind rftune's back: their diff reads differently.
    for host in &fleet.hosts()[4..] {
        client(&host.url)
            .patch(dell::BIOS_SETTINGS, &json!({"Attributes": {"LogicalProc": "Disabled"}}))
            .await
            .unwrap();
    }
    let dir = TempDir::new();
    let mut inventory = fleet.inventory_toml();
    let gone: Vec<String> = (0..2).map(|_| format!("http://127.0.0.1:{}", closed_port())).collect();
    for (i, url) in gone.iter().enumerate() {
        inventory.push_str(&format!("\n[[bmc]]\nname = \"gone-{}\"\nurl = {url:?}\n", i + 1));
    }
    let path = dir.0.join("fleet.toml");
    std::fs::write(&path, inventory).unwrap();
    let diff = [
        "diff",
        "--inventory",
        path.to_str().unwrap(),
        "-p",
        "performance",
        "--retry-for",
        "1s",
    ];
    let out = run(&diff, &[], &dir.0).await;
    assert_eq!(out.status.code(), Some(1), "a host failed: {}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(
        lines_with(&table, "  hosts: "),
        [
            "  hosts: r7625-0001, r7625-0002, r7625-0003, r7625-0004",
            "  hosts: r7625-0005, r7625-0006"
        ],
        "{table}"
    );
    assert!(
        table.contains("4 hosts (PowerEdge R7625, BIOS 1.6.10) vs performance: "),
        "{table}"
    );
    assert!(
        table.contains("2 hosts (PowerEdge R7625, BIOS 1.6.10) vs performance: "),
        "{table}"
    );
    let pending = lines_with(&table, "LogicalProc");
    assert_eq!(pending.len(), 1, "{table}");
    assert!(pending[0].contains("Disabled"), "{table}");
    // One line for both unreachable hosts, their own addresses set aside.
    let failed = lines_with(&table, "gone-");
    assert_eq!(failed.len(), 1, "{table}");
    assert!(
        failed[0].starts_with("error on 2 hosts (gone-1, gone-2): ")
            && failed[0].contains(": gave up after retrying: ")
            && failed[0].contains("<BMC>")
            && failed[0].to_lowercase().contains("connection refused"),
        "{table}"
    );
    for url in &gone {
        assert!(!table.contains(url.trim_start_matches("http://")), "{table}");
    }

    // --per-host: each failure on its own line, with its own address.
    let out = run(&diff, &["--per-host"], &dir.0).await;
    let each = stdout(&out);
    for (i, url) in gone.iter().enumerate() {
        let line = lines_with(&each, &format!("gone-{}: error: ", i + 1));
        assert_eq!(line.len(), 1, "{each}");
        assert!(line[0].contains(url.trim_start_matches("http://")), "{each}");
    }

    // -o json: every host, the unreachable ones with their kind.
    let out = run(&diff, &["-o", "json"], &dir.0).await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 8, "{doc}");
    for h in &hosts[6..] {
        assert_eq!(h["status"], "error", "{h}");
        assert_eq!(h["error_kind"], "unreachable", "{h}");
    }
}
