//! The verbs that took one host taking a fleet (issue 36 item 5): a rollback of one apply run
//! from the snapshot directory in one command, each host its own snapshot; `--limit` with
//! exclusions; `bios get`, `jobs list` and `power` over an inventory; a bare `--bmc` address.

use super::{Run, TempDir, sim, stats, stderr, stdout};
use serde_json::Value;

/// Every host's value of `attribute`, by host name, from `rftune bios get --inventory -o json`.
async fn values(inventory: &str, state: &std::path::Path, attribute: &str) -> Vec<(String, Value)> {
    let out = Run::new(&["bios", "get", "--inventory", inventory, "-a", attribute, "-o", "json"])
        .state_dir(state)
        .output()
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["schema"], "rftune.bios/v1");
    doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_owned(),
                h["attributes"][attribute].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_command_rolls_a_fleet_back_to_the_snapshots_one_apply_run_took_leaving_out_the_excluded_host() {
    let fleet = sim("r7625", 3, |_| {}).await;
    let hosts = fleet.hosts();
    let dir = TempDir::new();
    let state = dir.0.join("state");
    let inv = dir.0.join("fleet.toml");
    std::fs::write(&inv, fleet.inventory_toml()).unwrap();
    let inv = inv.to_str().unwrap();
    let factory = values(inv, &state, "SysProfile").await;
    let apply = |profile: &'static str| {
        Run::new(&[
            "apply",
            "--inventory",
            inv,
            "-p",
            profile,
            "--reboot",
            "force",
            "--max-unavailable",
            "3",
        ])
        .state_dir(&state)
        .output()
    };
    // Two applies: the latest snapshots hold the first one's state, which is the bad one here.
    let first = apply("hpc").await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let log = std::fs::read_to_string(state.join("audit.log")).unwrap();
    let run: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    let run = run["run"].as_str().unwrap().to_owned();
    let second = apply("low-latency").await;
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let applied = values(inv, &state, "SysProfile").await;
    assert_ne!(applied, factory, "the applies changed SysProfile");
    let excluded = hosts[2].name.as_str();
    let limit = format!("r7625-*,!{excluded}");
    let restore = |dry: bool| {
        let mut args = vec![
            "restore",
            "--inventory",
            inv,
            "--run",
            &run,
            "--limit",
            &limit,
            "--reboot",
            "force",
            "--max-unavailable",
            "2",
            "-o",
            "json",
        ];
        if dry {
            args.push("--dry-run");
        }
        Run::new(&args).state_dir(&state).output()
    };

    // The dry run shows each host's snapshot and what it would write, and writes nothing.
    let patches: Vec<Value> = (0..3).map(|i| stats(&fleet, i)["bios_patches"].clone()).collect();
    let dry = restore(true).await;
    assert_eq!(dry.status.code(), Some(2), "changes planned: {}", stderr(&dry));
    let doc: Value = serde_json::from_str(&stdout(&dry)).unwrap();
    let entries = doc["hosts"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "the excluded host is not addressed: {doc}");
    for (entry, host) in entries.iter().zip(hosts) {
        assert_eq!(entry["host"], host.name.as_str());
        assert_eq!(entry["outcome"], "planned");
        assert!(
            entry["bios"]["SysProfile"].is_string(),
            "the plan writes SysProfile back: {entry}"
        );
        let from = &entry["restored_from"];
        assert_eq!(from["run"], run.as_str(), "{from}");
        assert_eq!(
            from["service_tag"],
            host.host.service_tag.as_str(),
            "its own snapshot: {from}"
        );
        assert_eq!(from["reason"], "before apply of hpc");
    }
    let after: Vec<Value> = (0..3).map(|i| stats(&fleet, i)["bios_patches"].clone()).collect();
    assert_eq!(after, patches, "a dry run writes nothing");

    let done = restore(false).await;
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    let doc: Value = serde_json::from_str(&stdout(&done)).unwrap();
    assert_eq!(doc["summary"]["converged"], 2, "{doc}");
    let now = values(inv, &state, "SysProfile").await;
    assert_eq!(
        now[..2],
        factory[..2],
        "hosts 1 and 2 are back where the hpc run found them"
    );
    assert_eq!(now[2], applied[2], "the excluded host kept its values");

    // A mistyped exclusion would keep the host it meant to leave out: refused, with the name.
    let typo = Run::new(&["diff", "--inventory", inv, "-p", "hpc", "--limit", "!r7625-00003"])
        .state_dir(&state)
        .output()
        .await;
    assert_eq!(typo.status.code(), Some(1));
    let err = stderr(&typo);
    assert!(
        err.contains("\"r7625-00003\" matches no host") && err.contains("did you mean r7625-0003"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn power_jobs_and_bios_read_a_whole_inventory_and_a_failed_host_has_its_error_kind() {
    let fleet = sim("r7625", 3, |_| {}).await;
    let hosts = fleet.hosts();
    let dir = TempDir::new();
    // The third host is given a wrong password: its entry fails, the others are read.
    let wrong = dir.0.join("wrong.toml");
    std::fs::write(&wrong, "username = \"root\"\npassword = \"not-calvin\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o600)).unwrap();
    let inventory = fleet.inventory_toml().replace(
        &format!("name = \"{}\"\n", hosts[2].name),
        &format!("name = \"{}\"\ncredentials = \"wrong.toml\"\n", hosts[2].name),
    );
    let inv = dir.0.join("fleet.toml");
    std::fs::write(&inv, inventory).unwrap();
    let inv = inv.to_str().unwrap();

    let power = Run::new(&["power", "--inventory", inv, "-o", "json"]).output().await;
    assert_eq!(power.status.code(), Some(1), "a host failed: {}", stderr(&power));
    let doc: Value = serde_json::from_str(&stdout(&power)).unwrap();
    assert_eq!(doc["schema"], "rftune.power/v1");
    assert_eq!(doc["summary"], serde_json::json!({"hosts": 3, "done": 2, "error": 1}));
    assert!(doc["hosts"][0]["stats"]["mean_w"].as_f64().unwrap() > 0.0, "{doc}");
    assert_eq!(doc["hosts"][2]["error_kind"], "credentials", "{doc}");

    let table = Run::new(&["power", "--inventory", inv, "--limit", &format!("!{}", hosts[2].name)])
        .output()
        .await;
    assert_eq!(table.status.code(), Some(0), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.contains(&hosts[0].name) && !text.contains(&hosts[2].name),
        "{text}"
    );
    assert!(text.contains("2 hosts: 2 read ("), "{text}");

    let jobs = Run::new(&["jobs", "list", "--inventory", inv, "--limit", "r7625-000[12]"])
        .output()
        .await;
    assert_eq!(jobs.status.code(), Some(0), "{}", stderr(&jobs));
    assert!(
        stdout(&jobs).contains("2 hosts: 0 with 0 job(s), 2 with none open"),
        "{}",
        stdout(&jobs)
    );

    // Identical values are one table, headed by the hosts that share it.
    let bios = Run::new(&["bios", "get", "--inventory", inv, "-a", "SysProfile"])
        .output()
        .await;
    assert_eq!(bios.status.code(), Some(1), "{}", stderr(&bios));
    let text = stdout(&bios);
    assert_eq!(text.matches("ATTRIBUTE").count(), 1, "{text}");
    assert!(
        text.contains(&format!("2 host(s): {}, {}", hosts[0].name, hosts[1].name)),
        "{text}"
    );
    assert!(text.contains(&format!("{}: error:", hosts[2].name)), "{text}");

    // A bare address means https://: this plain-HTTP emulator answers so, at once.
    let bare = hosts[0].url.trim_start_matches("http://");
    let out = Run::new(&["power", "--bmc", bare, "--retry-for", "0s"]).output().await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(&format!("https://{bare}")), "{}", stderr(&out));
}
