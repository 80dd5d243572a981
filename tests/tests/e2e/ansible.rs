//! The Ansible collection in `contrib/ansible` (`rftune.bios`) run by the real `ansible-playbook`
//! against emulated iDRACs over HTTPS with a pinned fingerprint: check mode reports drift and
//! writes nothing (the emulator's counters prove it), an apply converges, a second apply changes
//! nothing, a failing host stops the rolling play with its reason, and the facts and diff
//! modules return rftune's documents. `.ci/run` installs ansible-core into a venv and points
//! `RFTUNE_ANSIBLE_PLAYBOOK` at its `ansible-playbook`; without it each test prints one
//! `skipped:` line and passes, unless `RFTUNE_REQUIRE_TOOLS=1`.

use super::{TempDir, binary, sim, stats};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The emulated iDRACs' password: distinctive, so the tests can prove it never leaks.
const PASSWORD: &str = "ansible-vaulted-Pw-7f3e";

/// The `ansible-playbook` to run (`RFTUNE_ANSIBLE_PLAYBOOK`, else on `PATH`), or `None` after
/// printing why the test is skipped.
fn require_ansible() -> Option<PathBuf> {
    rftune_tests::require_tool(
        "ansible-playbook",
        "RFTUNE_ANSIBLE_PLAYBOOK",
        "set RFTUNE_ANSIBLE_PLAYBOOK to its path or put it on PATH; .ci/run installs ansible-core from PyPI",
    )
}

/// The collection tree (`ANSIBLE_COLLECTIONS_PATH`).
fn collections() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../contrib/ansible")
}

/// An emulated fleet with an Ansible inventory of it, a state directory, and an `rftune`
/// wrapper that records every argv it is run with.
struct Setup {
    fleet: idrac_sim::Fleet,
    dir: TempDir,
    inventory: PathBuf,
    argv_log: PathBuf,
}

/// Ansible's inventory name of host `i`.
fn name(i: usize) -> String {
    format!("r7625-{i}")
}

async fn setup(hosts: usize, faults: &[&str]) -> Setup {
    let fleet = sim("r7625", hosts, |c| {
        c.tls = true;
        c.password = PASSWORD.to_owned();
        c.boot_time = Duration::from_millis(300);
        c.faults = faults.iter().map(|f| f.parse().unwrap()).collect();
    })
    .await;
    let dir = TempDir::new();
    let argv_log = dir.0.join("argv.log");
    let wrapper = dir.0.join("rftune");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            argv_log.display(),
            binary().display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut inventory = String::from("poweredge:\n  hosts:\n");
    for (i, h) in fleet.hosts().iter().enumerate() {
        inventory.push_str(&format!("    {}:\n      rftune_bmc_url: \"{}\"\n", name(i), h.url));
    }
    inventory.push_str(&format!(
        "  vars:\n    rftune_profile: hpc\n    rftune_bmc_fingerprint: \"{}\"\n    rftune_bmc_password: \"{PASSWORD}\"\n    rftune_state_dir: \"{}\"\n    rftune_path: \"{}\"\n",
        fleet.fingerprint().unwrap(),
        dir.0.join("state").display(),
        wrapper.display()
    ));
    let path = dir.0.join("inventory.yml");
    std::fs::write(&path, inventory).unwrap();
    Setup {
        fleet,
        dir,
        inventory: path,
        argv_log,
    }
}

struct Play {
    code: Option<i32>,
    output: String,
}

impl Play {
    /// The PLAY RECAP: per host, its counters (`ok`, `changed`, `failed`, ...).
    fn recap(&self) -> BTreeMap<String, BTreeMap<String, u32>> {
        let mut out = BTreeMap::new();
        let Some((_, recap)) = self.output.split_once("PLAY RECAP") else {
            return out;
        };
        for line in recap.lines() {
            let Some((host, counters)) = line.split_once(" : ") else {
                continue;
            };
            let counters = counters
                .split_whitespace()
                .filter_map(|c| c.split_once('='))
                .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
                .collect();
            out.insert(host.trim().to_owned(), counters);
        }
        out
    }

    /// `(changed, failed)` of `host` in the recap.
    fn counts(&self, host: &str) -> (u32, u32) {
        let recap = self.recap();
        let h = recap
            .get(host)
            .unwrap_or_else(|| panic!("{host} not in the recap:\n{}", self.output));
        (h["changed"], h["failed"])
    }
}

/// Runs `ansible-playbook ARGS` with the collection on its path, Ansible's own files under the
/// test's directory, and no inherited RFTUNE_* settings.
async fn play(ansible: &Path, setup: &Setup, args: &[&str]) -> Play {
    let home = setup.dir.0.join("ansible-home");
    let mut cmd = tokio::process::Command::new(ansible);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("RFTUNE_") || k.starts_with("ANSIBLE_") {
            cmd.env_remove(&k);
        }
    }
    cmd.arg("-i")
        .arg(&setup.inventory)
        .args(args)
        .env("ANSIBLE_COLLECTIONS_PATH", collections())
        .env("ANSIBLE_COLLECTIONS_SCAN_SYS_PATH", "false")
        .env("ANSIBLE_HOME", &home)
        .env("ANSIBLE_LOCAL_TEMP", home.join("tmp"))
        .env("ANSIBLE_REMOTE_TEMP", home.join("tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_FORCE_COLOR", "0")
        .env("ANSIBLE_STDOUT_CALLBACK", "default")
        .env("LC_ALL", "C.UTF-8")
        .current_dir(&setup.dir.0)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(300), cmd.output())
        .await
        .expect("ansible-playbook finished within 5 minutes")
        .unwrap();
    Play {
        code: out.status.code(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// Per host: (BIOS PATCHes, jobs created, resets).
fn writes(fleet: &idrac_sim::Fleet) -> Vec<(u64, u64, u64)> {
    (0..fleet.hosts().len())
        .map(|i| {
            let s = stats(fleet, i);
            let n = |k: &str| s[k].as_u64().unwrap();
            (n("bios_patches"), n("jobs_created"), n("resets"))
        })
        .collect()
}

/// PATCH requests of any kind a host received.
fn patches(fleet: &idrac_sim::Fleet, host: usize) -> u64 {
    stats(fleet, host)["requests"]["by_method"]["PATCH"]
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn rolling_apply_playbook_checks_without_writing_converges_then_changes_nothing() {
    let Some(ansible) = require_ansible() else { return };
    let setup = setup(3, &[]).await;
    let hosts = setup.fleet.hosts().len();

    // Check mode: every host would change, the diff names the drifting attributes, and the
    // emulators saw no write at all.
    let check = play(&ansible, &setup, &["rftune.bios.rolling_apply", "--check", "--diff"]).await;
    assert_eq!(check.code, Some(0), "{}", check.output);
    for i in 0..hosts {
        assert_eq!(check.counts(&name(i)), (1, 0), "{}", check.output);
        assert_eq!(patches(&setup.fleet, i), 0, "check mode sent a PATCH to host {i}");
    }
    assert_eq!(writes(&setup.fleet), vec![(0, 0, 0); hosts]);
    assert!(
        check.output.contains("\"BIOS.NumaNodesPerSocket\""),
        "the diff shows the attributes in drift:\n{}",
        check.output
    );

    // Apply: one PATCH, one job and one reboot per host, each host converged and verified.
    let apply = play(&ansible, &setup, &["rftune.bios.rolling_apply"]).await;
    assert_eq!(apply.code, Some(0), "{}", apply.output);
    for i in 0..hosts {
        assert_eq!(apply.counts(&name(i)), (1, 0), "{}", apply.output);
    }
    let after_apply = writes(&setup.fleet);
    for (i, (patches, jobs, resets)) in after_apply.iter().enumerate() {
        assert_eq!((*patches, *jobs), (1, 1), "host {i}: one BIOS PATCH and one job");
        assert!(*resets >= 1, "host {i} was rebooted into its job");
    }

    // Again: in sync everywhere, changed=0, and not one more write.
    let again = play(&ansible, &setup, &["rftune.bios.rolling_apply", "-v"]).await;
    assert_eq!(again.code, Some(0), "{}", again.output);
    for i in 0..hosts {
        assert_eq!(again.counts(&name(i)), (0, 0), "{}", again.output);
    }
    assert_eq!(writes(&setup.fleet), after_apply, "the second apply wrote nothing");
    assert!(again.output.contains("\"outcome\": \"in_sync\""), "{}", again.output);

    // The password went to rftune on stdin: never in its argv, never in Ansible's output.
    let argv = std::fs::read_to_string(&setup.argv_log).unwrap();
    assert!(argv.lines().count() >= 3 * hosts, "{argv}");
    assert!(argv.lines().all(|l| l.contains("--password-stdin")), "{argv}");
    for text in [&argv, &check.output, &apply.output, &again.output] {
        assert!(!text.contains(PASSWORD), "the password leaked:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rolling_apply_stops_at_a_failing_host_and_names_its_reason() {
    let Some(ansible) = require_ansible() else { return };
    // The second host's BIOS job fails during POST (SYS051).
    let setup = setup(3, &["job-fails@2"]).await;
    let out = play(&ansible, &setup, &["rftune.bios.rolling_apply"]).await;
    assert_eq!(
        out.code,
        Some(2),
        "ansible-playbook exits 2 when a host failed:\n{}",
        out.output
    );
    assert_eq!(out.counts(&name(0)), (1, 0), "{}", out.output);
    assert_eq!(out.counts(&name(1)).1, 1, "{}", out.output);
    assert!(
        !out.recap().contains_key(&name(2)),
        "max_fail_percentage 0 stops the play before the next batch:\n{}",
        out.output
    );
    assert_eq!(
        stats(&setup.fleet, 2)["requests"]["total"],
        0,
        "host 2 was never contacted"
    );
    // The failure names rftune's host, the job and its MessageId.
    let host1 = setup.fleet.hosts()[1].addr.to_string();
    let failure = out
        .output
        .lines()
        .find(|l| l.starts_with(&format!("fatal: [{}", name(1))))
        .unwrap_or_else(|| panic!("no fatal line for {}:\n{}", name(1), out.output));
    assert!(failure.contains(&host1) && failure.contains("[SYS051]"), "{failure}");
    // The values were staged and the host rebooted before the job failed: a change, which
    // rftune's `written` tells the module.
    assert!(
        failure.contains("\"changed\": true") && failure.contains("\"written\": true"),
        "{failure}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn facts_and_diff_modules_return_rftunes_documents_and_failures_carry_the_message_id() {
    let Some(ansible) = require_ansible() else { return };
    let setup = setup(1, &[]).await;
    let playbook = setup.dir.0.join("check.yml");
    std::fs::write(
        &playbook,
        r#"
- hosts: poweredge
  gather_facts: false
  tasks:
    - name: Inventory
      rftune.bios.rftune_facts:
        bmc: "{{ rftune_bmc_url }}"
        fingerprint: "{{ rftune_bmc_fingerprint }}"
        password: "{{ rftune_bmc_password }}"
        state_dir: "{{ rftune_state_dir }}"
        rftune_path: "{{ rftune_path }}"
      delegate_to: localhost
    - name: Facts
      ansible.builtin.debug:
        msg: "FACTS {{ rftune_inventory.service_tag }} {{ rftune_inventory.model }} {{ rftune_inventory.memory.dimms | length }} DIMMs"
    - name: Diff
      rftune.bios.rftune_diff:
        bmc: "{{ rftune_bmc_url }}"
        fingerprint: "{{ rftune_bmc_fingerprint }}"
        password: "{{ rftune_bmc_password }}"
        state_dir: "{{ rftune_state_dir }}"
        rftune_path: "{{ rftune_path }}"
        profile: hpc
      delegate_to: localhost
      register: drift
    - name: Drift
      ansible.builtin.debug:
        msg: "DRIFT {{ drift.drift }} {{ drift.status }} {{ drift.counts.drift }} changed={{ drift.changed }}"
    - name: Wrong password
      rftune.bios.rftune_diff:
        bmc: "{{ rftune_bmc_url }}"
        fingerprint: "{{ rftune_bmc_fingerprint }}"
        password: not-the-password
        state_dir: "{{ rftune_state_dir }}"
        rftune_path: "{{ rftune_path }}"
        profile: hpc
      delegate_to: localhost
"#,
    )
    .unwrap();
    let out = play(&ansible, &setup, &[playbook.to_str().unwrap()]).await;
    assert_eq!(out.code, Some(2), "{}", out.output);
    let tag = &setup.fleet.hosts()[0].host.service_tag;
    assert!(
        out.output.contains(&format!("FACTS {tag} PowerEdge R7625 ")),
        "{}",
        out.output
    );
    let drift = out
        .output
        .lines()
        .find(|l| l.contains("DRIFT "))
        .unwrap_or_else(|| panic!("{}", out.output));
    assert!(drift.contains("DRIFT True drift "), "{drift}");
    assert!(drift.ends_with("changed=False\""), "diff is read-only: {drift}");
    assert!(!drift.contains("DRIFT True drift 0 "), "{drift}");
    assert_eq!(patches(&setup.fleet, 0), 0);
    // The refused login: the host, the MessageId and the resolution, and not the password.
    let host = setup.fleet.hosts()[0].addr.to_string();
    let failure = out
        .output
        .lines()
        .find(|l| l.starts_with("fatal: [r7625-0"))
        .unwrap_or_else(|| panic!("{}", out.output));
    assert!(
        failure.contains(&host) && failure.contains("HTTP 401: [SYS415]"),
        "{failure}"
    );
    assert!(
        failure.contains("Resolution: Enter valid user name and password"),
        "{failure}"
    );
    assert!(!out.output.contains("not-the-password"), "{}", out.output);
}

#[tokio::test(flavor = "multi_thread")]
async fn reboot_none_stages_once_and_a_rerun_that_adopts_its_values_changes_nothing() {
    let Some(ansible) = require_ansible() else { return };
    let setup = setup(1, &[]).await;
    let args = ["rftune.bios.rolling_apply", "-e", "rftune_reboot=none", "-v"];

    // The first run stages the values in one PATCH and leaves the job for the next reboot.
    let first = play(&ansible, &setup, &args).await;
    assert_eq!(first.code, Some(0), "{}", first.output);
    assert_eq!(first.counts(&name(0)), (1, 0), "{}", first.output);
    assert!(
        first.output.contains("\"outcome\": \"not_converged\""),
        "{}",
        first.output
    );
    let staged = writes(&setup.fleet);
    assert_eq!(staged, vec![(1, 1, 0)], "one PATCH, one job, no reboot");

    // Run again, and in check mode: rftune adopts its own staged values; nothing is written,
    // so nothing changed.
    let again = play(&ansible, &setup, &args).await;
    assert_eq!(again.code, Some(0), "{}", again.output);
    assert!(again.output.contains("\"adopted\": true"), "{}", again.output);
    assert_eq!(again.counts(&name(0)), (0, 0), "{}", again.output);
    let check = play(&ansible, &setup, &[&args[..], &["--check"]].concat()).await;
    assert_eq!(check.code, Some(0), "{}", check.output);
    assert!(check.output.contains("\"outcome\": \"planned\""), "{}", check.output);
    assert_eq!(check.counts(&name(0)), (0, 0), "{}", check.output);
    assert_eq!(writes(&setup.fleet), staged, "the reruns wrote nothing");
    assert_eq!(patches(&setup.fleet, 0), 1, "one PATCH in total");
}

#[tokio::test(flavor = "multi_thread")]
async fn facts_with_an_empty_or_wrong_password_fail_naming_the_host_and_reason() {
    let Some(ansible) = require_ansible() else { return };
    let setup = setup(1, &[]).await;
    let playbook = setup.dir.0.join("facts.yml");
    std::fs::write(
        &playbook,
        r#"
- hosts: poweredge
  gather_facts: false
  tasks:
    - name: Inventory with an empty password
      rftune.bios.rftune_facts:
        bmc: "{{ rftune_bmc_url }}"
        fingerprint: "{{ rftune_bmc_fingerprint }}"
        password: ""
        state_dir: "{{ rftune_state_dir }}"
        rftune_path: "{{ rftune_path }}"
      delegate_to: localhost
      ignore_errors: true
    - name: Inventory with a wrong password
      rftune.bios.rftune_facts:
        bmc: "{{ rftune_bmc_url }}"
        fingerprint: "{{ rftune_bmc_fingerprint }}"
        password: not-the-password
        state_dir: "{{ rftune_state_dir }}"
        rftune_path: "{{ rftune_path }}"
      delegate_to: localhost
"#,
    )
    .unwrap();
    let out = play(&ansible, &setup, &[playbook.to_str().unwrap()]).await;
    assert_eq!(out.code, Some(2), "{}", out.output);
    let host = setup.fleet.hosts()[0].addr.to_string();
    let fatal: Vec<&str> = out
        .output
        .lines()
        .filter(|l| l.starts_with("fatal: [r7625-0"))
        .collect();
    assert_eq!(fatal.len(), 2, "{}", out.output);
    // An empty password is refused before rftune runs, naming the BMC.
    let url = &setup.fleet.hosts()[0].url;
    assert!(fatal[0].contains(&format!("{url}: password is empty")), "{}", fatal[0]);
    let failure = fatal[1];
    let msg = failure
        .split_once("\"msg\": \"")
        .map(|(_, m)| m.split_once("\", \"").map_or(m, |(m, _)| m))
        .unwrap_or_else(|| panic!("no msg: {failure}"));
    assert!(msg.contains(&host) && msg.contains("[SYS415]"), "{msg}");
    assert!(msg.contains("Resolution: Enter valid user name and password"), "{msg}");
    assert!(!out.output.contains("not-the-password"), "{}", out.output);
}

#[tokio::test(flavor = "multi_thread")]
async fn dells_option_names_work_and_a_bmc_that_cannot_be_reached_is_unreachable_not_failed() {
    let Some(ansible) = require_ansible() else { return };
    let setup = setup(1, &[]).await;
    let ca = setup.dir.0.join("ca.pem");
    std::fs::write(&ca, setup.fleet.certificate_pem().unwrap()).unwrap();
    let gone = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let playbook = setup.dir.0.join("dell.yml");
    std::fs::write(
        &playbook,
        format!(
            r#"
- hosts: poweredge
  gather_facts: false
  tasks:
    - name: Diff with the options as Dell's collection names them
      rftune.bios.rftune_diff:
        idrac_ip: "{{{{ rftune_bmc_url | regex_replace('^https://', '') }}}}"
        idrac_user: root
        idrac_password: "{{{{ rftune_bmc_password }}}}"
        validate_certs: false
        state_dir: "{{{{ rftune_state_dir }}}}"
        rftune_path: "{{{{ rftune_path }}}}"
        profile: hpc
      delegate_to: localhost
      register: dell
    - name: Dell
      ansible.builtin.debug:
        msg: "DELL {{{{ dell.status }}}}"
    - name: A CA file under Dell's name
      rftune.bios.rftune_diff:
        bmc: "{{{{ rftune_bmc_url }}}}"
        ca_path: "{ca}"
        password: "{{{{ rftune_bmc_password }}}}"
        state_dir: "{{{{ rftune_state_dir }}}}"
        rftune_path: "{{{{ rftune_path }}}}"
        profile: hpc
      delegate_to: localhost
      ignore_errors: true
    - name: A BMC nothing listens on
      rftune.bios.rftune_diff:
        bmc: "{gone}"
        password: "{{{{ rftune_bmc_password }}}}"
        retry_for: 0s
        state_dir: "{{{{ rftune_state_dir }}}}"
        rftune_path: "{{{{ rftune_path }}}}"
        profile: hpc
      delegate_to: localhost
      ignore_unreachable: true
    - name: A wrong password
      rftune.bios.rftune_diff:
        bmc: "{{{{ rftune_bmc_url }}}}"
        fingerprint: "{{{{ rftune_bmc_fingerprint }}}}"
        password: not-the-password
        state_dir: "{{{{ rftune_state_dir }}}}"
        rftune_path: "{{{{ rftune_path }}}}"
        profile: hpc
      delegate_to: localhost
      ignore_errors: true
"#,
            ca = ca.display()
        ),
    )
    .unwrap();
    let out = play(&ansible, &setup, &[playbook.to_str().unwrap()]).await;
    assert_eq!(out.code, Some(0), "every failure was expected: {}", out.output);
    assert!(out.output.contains("DELL drift"), "{}", out.output);
    let argv = std::fs::read_to_string(&setup.argv_log).unwrap();
    let runs: Vec<&str> = argv.lines().collect();
    let url = &setup.fleet.hosts()[0].url;
    assert!(
        runs[0].contains(&format!("--bmc {url} ")) && runs[0].contains("--insecure"),
        "idrac_ip means https://, validate_certs: false means --insecure: {}",
        runs[0]
    );
    assert!(runs[1].contains(&format!("--ca-cert {}", ca.display())), "{}", runs[1]);
    // Nothing listens: unreachable, with rftune's kind, not a failed task.
    let unreachable = out
        .output
        .lines()
        .find(|l| l.contains("UNREACHABLE!"))
        .unwrap_or_else(|| panic!("{}", out.output));
    assert!(unreachable.contains("\"error_kind\": \"unreachable\""), "{unreachable}");
    assert!(
        unreachable.contains(gone.trim_start_matches("http://")),
        "{unreachable}"
    );
    // A refused password fails the task, with its kind.
    let failed: Vec<&str> = out
        .output
        .lines()
        .filter(|l| l.starts_with("fatal: [r7625-0") && l.contains("FAILED!"))
        .collect();
    assert!(
        failed.iter().any(|l| l.contains("\"error_kind\": \"credentials\"")),
        "{}",
        out.output
    );
}
