//! What a provisioning tool writes with the rftune engine: read each new server's facts,
//! choose a profile for it, converge the fleet with at most one host rebooting at a time, and
//! react to typed outcomes — here, another tool's pending BIOS change on one host, which the
//! program inspects and then replaces.
//!
//! It runs against three emulated iDRACs it starts on 127.0.0.1 (no hardware, no network):
//!
//! ```sh
//! cargo run -p rftune-engine --example provision
//! ```

use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::{Client, Credentials, ODataId};
use rftune_engine::assess::{self, Chosen};
use rftune_engine::converge::{self, ApplyOptions, Outcome, Run};
use rftune_engine::fleet::{self, BmcEntry};
use rftune_engine::observe::{Event, Observer};
use rftune_engine::state::StateDirs;
use rftune_engine::target::{self, ConnectConfig};
use rftune_engine::{HostErrorKind, Result};
use std::sync::Arc;
use std::time::Duration;

/// Logs each host's phases, as a provisioning tool would into its own log.
struct Log;

impl Observer for Log {
    fn event(&self, event: &Event) {
        println!("  [{event}]");
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match provision().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn provision() -> Result<()> {
    let fleet = idrac_sim::Fleet::start(idrac_sim::SimConfig {
        hosts: 3,
        tls: false,
        boot_time: Duration::from_millis(500),
        ..idrac_sim::SimConfig::default()
    })
    .await
    .map_err(|e| rftune_engine::Error::invalid(format!("starting the emulated iDRACs: {e}")))?;
    let scratch = std::env::temp_dir().join(format!("rftune-provision-{}", std::process::id()));
    let dirs = StateDirs::resolve(Some(&scratch))?;
    let config = Arc::new(ConnectConfig::new(Credentials::new("root", "calvin")));
    let entries: Vec<BmcEntry> = fleet
        .hosts()
        .iter()
        .map(|h| {
            BmcEntry::from_url(&h.url).map(|e| BmcEntry {
                name: h.name.clone(),
                ..e
            })
        })
        .collect::<Result<_>>()?;

    // Another tool left a BIOS change pending on the last host.
    let last = &fleet.hosts()[2];
    let other = Client::builder(&last.url)
        .credentials(Credentials::new("root", "calvin"))
        .build()?;
    let foreign: Attributes = [("SysProfile".to_owned(), "PerfPerWattOptimizedOs".into())]
        .into_iter()
        .collect();
    other
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &foreign,
            Some(&SettingsApplyTime::on_reset()),
        )
        .await?;

    // 1. Facts: which profile each host gets.
    println!("== facts");
    let mut plans = Vec::new();
    for entry in &entries {
        let host = target::connect(entry, &config, &dirs, &Log).await?;
        host.login().await?;
        let hpc = Chosen::load("hpc")?;
        let a = assess::assess(&host, &hpc, &dirs.registry_cache(), true, false).await?;
        host.close().await;
        let facts = &a.profile.host;
        // Two-socket Genoa nodes run HPC; anything else the general performance profile.
        let profile = if facts.sockets == Some(2) { "hpc" } else { "performance" };
        println!(
            "{}: {facts}, {} socket(s) → {profile}",
            entry.name,
            facts.sockets.unwrap_or(0)
        );
        plans.push((entry.clone(), profile));
    }

    // 2. Converge, one reboot at a time; refuse other people's pending work at first.
    println!("\n== converge");
    let reboots = Arc::new(tokio::sync::Semaphore::new(1));
    let converge_all = |replace_pending: bool, plans: Vec<(BmcEntry, &'static str)>| {
        let (config, dirs, reboots) = (config.clone(), dirs.clone(), reboots.clone());
        async move {
            // One run per profile: one audit run id and one registry cache for the fleet, and
            // one reboot limiter shared by every profile's hosts.
            let mut runs = std::collections::BTreeMap::new();
            for (_, profile) in &plans {
                if !runs.contains_key(profile) {
                    let options = ApplyOptions {
                        graceful_timeout: Duration::from_secs(30),
                        job_timeout: Duration::from_secs(60),
                        boot_timeout: Duration::from_secs(60),
                        replace_pending,
                        ..ApplyOptions::default()
                    };
                    let mut run = Run::new(Chosen::load(profile)?, &dirs, options, 1)?;
                    run.reboots = reboots.clone();
                    runs.insert(*profile, Arc::new(run));
                }
            }
            let work: Vec<(BmcEntry, Arc<Run>)> = plans.into_iter().map(|(e, p)| (e, runs[p].clone())).collect();
            let runs_by_host: std::collections::BTreeMap<String, Arc<Run>> =
                work.iter().map(|(e, r)| (e.name.clone(), r.clone())).collect();
            let entries = work.into_iter().map(|(e, _)| e).collect();
            Ok::<_, rftune_engine::Error>(
                fleet::run_all(
                    entries,
                    3,
                    |entry| {
                        let (config, dirs) = (config.clone(), dirs.clone());
                        let run = runs_by_host[&entry.name].clone();
                        async move {
                            let host = target::connect(&entry, &config, &dirs, &Log).await?;
                            host.login().await?;
                            let result = converge::apply_host(&run, &host, &Log).await;
                            host.close().await;
                            result
                        }
                    },
                    |_, _| {},
                )
                .await,
            )
        }
    };
    let mut retry = Vec::new();
    for r in converge_all(false, plans.clone()).await? {
        match &r.result {
            Ok(done) => println!("{}: {:?}: {}", r.entry.name, done.outcome, done.summary),
            // A typed outcome to act on: someone else's work is pending on this host.
            Err(e) if e.kind() == Some(HostErrorKind::PendingWork) => {
                println!("{}: refused, other work is pending; replacing it", r.entry.name);
                let profile = plans
                    .iter()
                    .find(|(e, _)| e.name == r.entry.name)
                    .map_or("performance", |p| p.1);
                retry.push((r.entry.clone(), profile));
            }
            Err(e) => return Err(rftune_engine::Error::invalid(rftune_engine::error::report(e))),
        }
    }
    for r in converge_all(true, retry).await? {
        let done = r.result?;
        println!("{}: {:?}: {}", r.entry.name, done.outcome, done.summary);
        if !matches!(done.outcome, Outcome::Converged | Outcome::InSync) {
            return Err(rftune_engine::Error::invalid(format!(
                "{} did not converge",
                r.entry.name
            )));
        }
    }
    let audited = std::fs::read_to_string(dirs.state.join("audit.log"))?.lines().count();
    println!("\nevery host converged; {audited} audit records");
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
