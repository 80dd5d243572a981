//! The engine's public API against emulated iDRACs started in-process on 127.0.0.1: connecting
//! (`connect`), reading a host (`read`) and judging it against a profile (`assess`), as a
//! provisioning program calls them. Each test starts its own emulator, which stops when the
//! test ends.
#![allow(clippy::unwrap_used)]

use redfish_client::oem::dell;
use redfish_client::resources::bios::Attributes;
use redfish_client::{Credentials, ODataId};
use rftune_engine::assess::{self, AssessOptions, LoadedProfile};
use rftune_engine::backend::Kind;
use rftune_engine::connect::{self, Bmc as Target, ConnectConfig};
use rftune_engine::fleet::BmcEntry;
use rftune_engine::observe::Silent;
use rftune_engine::state::StateDirs;
use rftune_engine::{Error, HostErrorKind};
use rftune_engine::{control, read, wait};
use rftune_tests::TempDir;
use std::collections::BTreeSet;
use std::time::Duration;

/// One plain-HTTP emulated iDRAC (model `model`, faults `faults`) and a scratch state directory.
struct Bench {
    fleet: idrac_sim::Fleet,
    dirs: StateDirs,
    _scratch: TempDir,
}

async fn bench(model: &str, faults: &[&str]) -> Bench {
    let fleet = idrac_sim::Fleet::start(idrac_sim::SimConfig {
        model: idrac_sim::ModelSource::Builtin(model.into()),
        tls: false,
        boot_time: Duration::from_millis(300),
        faults: faults.iter().map(|f| f.parse().unwrap()).collect(),
        ..idrac_sim::SimConfig::default()
    })
    .await
    .unwrap();
    let scratch = TempDir::new();
    let dirs = StateDirs::resolve(Some(scratch.path())).unwrap();
    Bench {
        fleet,
        dirs,
        _scratch: scratch,
    }
}

/// Stages `SysProfile = PerfPerWattOptimizedOs` on `target`, as an apply would before its job.
async fn stage_sys_profile(target: &Target) {
    let values: Attributes = [("SysProfile".to_owned(), "PerfPerWattOptimizedOs".into())]
        .into_iter()
        .collect();
    target
        .client
        .stage_settings(&ODataId::new(dell::BIOS_SETTINGS), &values, None)
        .await
        .unwrap();
}

/// The id of the job at `job` (`…/Jobs/JID_…` → `JID_…`).
fn job_id(job: &ODataId) -> String {
    job.as_str().rsplit('/').next().unwrap().to_owned()
}

impl Bench {
    fn entry(&self) -> BmcEntry {
        let host = &self.fleet.hosts()[0];
        BmcEntry {
            name: host.name.clone(),
            ..BmcEntry::from_url(&host.url).unwrap()
        }
    }

    async fn connect_as(&self, password: &str) -> Result<Target, Error> {
        let mut config = ConnectConfig::new(Credentials::new("root", password));
        config.retry_for = Duration::ZERO;
        config.timeout = Duration::from_secs(10);
        connect::connect(&self.entry(), &config, &self.dirs, &Silent).await
    }

    async fn connect(&self) -> Target {
        self.connect_as("calvin").await.unwrap()
    }
}

fn host_error(err: &Error) -> &rftune_engine::HostError {
    err.host_error()
        .unwrap_or_else(|| panic!("expected a host error, got {err:#}"))
}

#[tokio::test]
async fn a_connected_target_knows_it_is_an_idrac_and_what_system_it_manages() {
    let b = bench("r7625", &[]).await;
    let target = b.connect().await;
    assert!(
        !target.recognised(),
        "nothing read yet: the iDRAC's places are only presumed"
    );
    assert_eq!(target.recognise().await.unwrap().kind(), &Kind::Idrac9);
    let system = target.first_system().await.unwrap();
    assert_eq!(system.model.as_deref(), Some("PowerEdge R7625"));
    assert_eq!(target.bios_id().await.unwrap(), ODataId::new(dell::BIOS));
}

#[tokio::test]
async fn a_wrong_password_is_a_credentials_error_naming_the_host_and_the_idrac_message() {
    let b = bench("r7625", &[]).await;
    let target = b.connect_as("not-the-password").await.unwrap();
    let err = target.login().await.unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains(&target.name), "{text}");
    let he = host_error(&err);
    assert_eq!(he.kind, HostErrorKind::Credentials, "{text}");
    assert!(he.hint.is_some(), "a wrong password comes with a hint: {text}");
}

#[tokio::test]
async fn reading_a_host_twice_fetches_its_registry_once() {
    let b = bench("r7525", &[]).await;
    let target = b.connect().await;
    let cache = b.dirs.registry_cache();
    let groups = BTreeSet::from([dell::AttributeGroup::System]);
    let first = read::read_state(&target, &cache, &groups, true).await.unwrap();
    let second = read::read_state(&target, &cache, &groups, true).await.unwrap();
    assert!(!first.registry_cached);
    assert!(
        second.registry_cached,
        "the second read takes the registry from the cache"
    );
    assert_eq!(first.model.as_deref(), Some("PowerEdge R7525"));
    assert_eq!(first.bios.get("SysProfile"), second.bios.get("SysProfile"));
    assert!(first.idrac.contains_key(&dell::AttributeGroup::System));
    assert_eq!(first.lockdown, Some(false));
    assert!(!first.in_lockdown());
    assert_eq!(read::describe_pending(&first), None, "a fresh host has nothing pending");
}

#[tokio::test]
async fn staged_values_and_their_job_are_described_for_the_user() {
    let b = bench("r7625", &[]).await;
    let target = b.connect().await;
    let cache = b.dirs.registry_cache();
    stage_sys_profile(&target).await;
    let state = read::read_state(&target, &cache, &BTreeSet::new(), true).await.unwrap();
    assert_eq!(
        read::describe_pending(&state).as_deref(),
        Some("1 pending BIOS value(s): SysProfile=PerfPerWattOptimizedOs")
    );
    let job = target.client.dell().create_bios_job().await.unwrap();
    let state = read::read_state(&target, &cache, &BTreeSet::new(), true).await.unwrap();
    let described = read::describe_pending(&state).unwrap();
    let id = job_id(&job);
    assert!(
        described.starts_with(&format!("BIOS job {id} (Scheduled")),
        "{described}"
    );
    assert!(
        described.ends_with("with pending value(s) SysProfile=PerfPerWattOptimizedOs"),
        "{described}"
    );
}

#[tokio::test]
async fn a_failing_bios_job_is_a_job_failure_and_a_missing_one_times_out() {
    let b = bench("r7625", &["job-fails"]).await;
    let target = b.connect().await;
    stage_sys_profile(&target).await;
    let job = target.client.dell().create_bios_job().await.unwrap();
    let id = job_id(&job);
    let rebooted = control::reboot(
        &target,
        control::RebootPolicy::Force,
        Duration::from_secs(30),
        &Silent,
        &|_, _| {},
    )
    .await
    .unwrap();
    assert!(rebooted);
    let err = wait::wait_for_job(&target, &id, Duration::from_secs(30), &Silent)
        .await
        .unwrap_err();
    assert_eq!(host_error(&err).kind, HostErrorKind::JobFailed, "{err:#}");

    let err = wait::wait_for_job(&target, "JID_000000000000", Duration::from_millis(300), &Silent)
        .await
        .unwrap_err();
    let he = host_error(&err);
    assert_eq!(he.kind, HostErrorKind::Timeout, "{err:#}");
    assert!(format!("{err:#}").contains("JID_000000000000"), "{err:#}");
}

#[test]
fn a_mistyped_profile_name_is_refused_with_a_suggestion() {
    let err = LoadedProfile::load("perfromance").unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains("perfromance") && text.contains("performance"), "{text}");
    // A profile whose choice depends on DIMM population asks for the DIMMs; others do not.
    assert!(LoadedProfile::load("hpc").unwrap().needs_memory());
    assert!(!LoadedProfile::load("performance").unwrap().needs_memory());
}

#[tokio::test]
async fn assessing_a_host_resolves_the_profile_for_its_generation_and_memory() {
    let b = bench("r7625", &[]).await;
    let target = b.connect().await;
    let cache = b.dirs.registry_cache();
    let performance = assess::assess(
        &target,
        &LoadedProfile::load("performance").unwrap(),
        &cache,
        AssessOptions {
            jobs: true,
            strict: false,
        },
    )
    .await
    .unwrap();
    assert_eq!(performance.errors().count(), 0);
    // A Rome/Milan-only attribute is not applicable on Genoa, and says so.
    let rome_only = performance
        .diff
        .changes
        .iter()
        .find(|c| c.attribute == "EfficiencyOptimizedMode")
        .unwrap();
    assert_eq!(rome_only.status, bios_profiles::Status::NotApplicable);
    assert!(
        rome_only.note.as_deref().unwrap_or_default().contains("genoa"),
        "{rome_only:?}"
    );
    // hpc asks for four NUMA nodes per socket, which a fully populated R7625 can have.
    let hpc = assess::assess(
        &target,
        &LoadedProfile::load("hpc").unwrap(),
        &cache,
        AssessOptions {
            jobs: true,
            strict: false,
        },
    )
    .await
    .unwrap();
    let nps = hpc
        .diff
        .changes
        .iter()
        .find(|c| c.attribute == "NumaNodesPerSocket")
        .unwrap();
    assert_eq!(nps.desired, "4".into(), "{nps:?}");
    assert_eq!(nps.status, bios_profiles::Status::Drift, "{nps:?}");
}

/// The audit records of `host` in the log under `dirs`, as (step, outcome) pairs.
fn audit_steps(dirs: &StateDirs, host: &str) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(dirs.state.join("audit.log")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["host"] == host)
        .map(|r| {
            let text = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (text("step"), text("outcome"), r["detail"].to_string())
        })
        .collect()
}

#[tokio::test]
async fn a_login_or_connection_that_fails_in_a_fleet_apply_leaves_an_audit_record_and_no_write() {
    use rftune_engine::{Access, ApplyOptions, ApplyRun, Limits};
    use std::sync::Arc;
    let b = bench("r7625", &[]).await;
    let mut config = ConnectConfig::new(Credentials::new("root", "not-the-password"));
    config.retry_for = Duration::ZERO;
    let access = Access::new(config, b.dirs.clone(), Arc::new(Silent));
    let profile = LoadedProfile::load("hpc").unwrap();
    let run = Arc::new(ApplyRun::new(profile, &b.dirs, ApplyOptions::default(), 1).unwrap());
    // The second host's port has nothing listening.
    let gone = BmcEntry {
        name: "gone".into(),
        ..BmcEntry::from_url("http://127.0.0.1:9").unwrap()
    };
    let hosts = [b.entry(), gone];
    let op = run.clone();
    let results = access
        .fleet_collected(&hosts, &Limits::default(), Some(run.audit()), op, |_, _| {})
        .await;
    let kinds = [HostErrorKind::Credentials, HostErrorKind::Unreachable];
    for (r, kind) in results.iter().zip(kinds) {
        let e = r.result.as_ref().unwrap_err();
        assert_eq!(e.kind(), Some(kind), "{e:#}");
        assert!(
            !run.audit().wrote(&r.entry.name),
            "nothing was written to {}",
            r.entry.name
        );
    }
    let refused = audit_steps(&b.dirs, &hosts[0].name);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!((refused[0].0.as_str(), refused[0].1.as_str()), ("login", "error"));
    assert!(
        refused[0].2.contains("SYS415"),
        "the iDRAC's MessageId is recorded: {refused:?}"
    );
    let unreachable = audit_steps(&b.dirs, "gone");
    assert_eq!(unreachable.len(), 1, "{unreachable:?}");
    assert_eq!(
        (unreachable[0].0.as_str(), unreachable[0].1.as_str()),
        ("connect", "error")
    );
    // And the BMC saw no write: the apply never got past the login.
    let stats = b.fleet.hosts()[0].host.stats.to_json("x");
    assert_eq!(stats["bios_patches"], 0, "{stats}");
}
