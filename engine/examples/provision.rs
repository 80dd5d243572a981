//! What a provisioning tool writes with the rftune engine: read each new server's facts,
//! choose a profile for it, bring each host from its BIOS defaults to that profile with its
//! boot order (the disk first, the network after it) with at most one host rebooting at a time,
//! react to typed outcomes — here, another tool's pending BIOS change on one host, which the
//! program inspects and then replaces — and finally boot every host once from the network to
//! install it. Everything goes through the engine's front door ([`Access`] runs each host's
//! work and logs out, and audits what writes).
//!
//! It runs against three emulated iDRACs it starts on 127.0.0.1 (no hardware, no network):
//!
//! ```sh
//! cargo run -p rftune-engine --example provision
//! ```

use redfish_client::oem::dell;
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::{Client, Credentials, ODataId};
use rftune_engine::boot::{OnceRun, OnceTarget};
use rftune_engine::write::{RebootSlots, WriteOptions, Writes};
use rftune_engine::{
    Access, ApplyOptions, ApplyOutcome, ApplyRun, Assess, BmcEntry, ConnectConfig, Error, Event, HostApply,
    HostErrorKind, HostResult, Limits, LoadedProfile, Observer, Result, StateDirs,
};
use std::collections::BTreeMap;
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
    .map_err(|e| Error::bad_input(format!("starting the emulated iDRACs: {e}")))?;
    let scratch = tempfile::tempdir()?;
    let dirs = StateDirs::resolve(Some(scratch.path()))?;
    let access = Access::new(
        ConnectConfig::new(Credentials::new("root", "calvin")),
        dirs.clone(),
        Arc::new(Log),
    );
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
    let other = Client::builder(&fleet.hosts()[2].url)
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
    let facts = Arc::new(Assess {
        profile: Arc::new(LoadedProfile::load("hpc")?),
        cache: Arc::new(dirs.registry_cache()),
        strict: false,
    });
    let mut plans = Vec::new();
    for entry in &entries {
        let a = access.one(entry, None, &*facts).await?;
        let host = &a.profile.host;
        // Two-socket Genoa nodes run HPC; anything else the general performance profile.
        let profile = if host.sockets == Some(2) { "hpc" } else { "performance" };
        println!(
            "{}: {host}, {} socket(s) → {profile}",
            entry.name,
            host.sockets.unwrap_or(0)
        );
        plans.push((entry.clone(), profile));
    }

    // 2. Converge from the defaults, one reboot at a time; refuse other people's pending work at
    //    first.
    println!("\n== converge");
    let reboots = RebootSlots::new(1);
    let mut retry = Vec::new();
    for r in converge(&access, &dirs, &reboots, false, &plans).await? {
        match r.result {
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
            Err(e) => return Err(e),
        }
    }
    for r in converge(&access, &dirs, &reboots, true, &retry).await? {
        let done = r.result?;
        println!("{}: {:?}: {}", r.entry.name, done.outcome, done.summary);
        if !matches!(done.outcome, ApplyOutcome::Converged | ApplyOutcome::InSync) {
            return Err(Error::bad_input(format!("{} did not converge", r.entry.name)));
        }
    }
    // 3. Install: every host boots once from the network, now (one reboot each, one at a time;
    //    the override sends only its target and Enabled, so no BIOS job comes with it).
    println!("\n== one-time PXE boot");
    let writes = WriteOptions {
        graceful_timeout: Duration::from_secs(30),
        boot_timeout: Duration::from_secs(60),
        ..WriteOptions::default()
    };
    let audit = rftune_engine::audit::AuditLog::open(&dirs.state)?;
    let once = Arc::new(OnceRun {
        target: OnceTarget::parse("Pxe")?,
        writes: Writes::new("boot once", writes, audit, &dirs.state, 1),
    });
    let limits = Limits {
        concurrency: 3,
        ..Limits::default()
    };
    for r in access.fleet_collected(&entries, &limits, None, once, |_, _| {}).await {
        let done = r.result?;
        println!("{}: {}", done.host, done.summary);
        if done.consumed != Some(true) {
            return Err(Error::bad_input(format!(
                "{} did not boot once from the network",
                done.host
            )));
        }
    }
    let audited = std::fs::read_to_string(dirs.state.join("audit.log"))?.lines().count();
    println!("\nevery host converged from its defaults and booted once from the network; {audited} audit records");
    Ok(())
}

/// The site's profile on top of a shipped one: its values, and the boot order this site wants
/// (the installed OS first, the network as the fallback), resolved per host against its boot
/// devices and staged in the same job.
fn site_profile(base: &str) -> Result<LoadedProfile> {
    let text = format!(
        "name = \"site-{base}\"\ndescription = \"{base}, booting the installed OS first\"\nextends = \"{base}\"\n[boot.order]\ndevices = [\"disk\", \"pxe\"]\nwhy = \"The OS is on the disk; the network is the fallback.\"\nsource = \"snapshot\"\nconfidence = \"inferred\"\n"
    );
    LoadedProfile::from_toml(&text, &format!("site-{base}.toml"))
}

/// Applies each host's profile: one run per profile (one audit log, one registry cache), one
/// reboot limiter shared by every profile's hosts, up to three hosts read at once.
async fn converge(
    access: &Access,
    dirs: &StateDirs,
    reboots: &RebootSlots,
    replace_pending: bool,
    plans: &[(BmcEntry, &'static str)],
) -> Result<Vec<HostResult<HostApply>>> {
    let mut by_profile: BTreeMap<&str, Vec<BmcEntry>> = BTreeMap::new();
    for (entry, profile) in plans {
        by_profile.entry(profile).or_default().push(entry.clone());
    }
    // From the BIOS defaults (a reset, proven finished: one reboot), then the profile (a second).
    let options = ApplyOptions {
        graceful_timeout: Duration::from_secs(30),
        job_timeout: Duration::from_secs(60),
        boot_timeout: Duration::from_secs(60),
        replace_pending,
        from_defaults: true,
        ..ApplyOptions::default()
    };
    let limits = Limits {
        concurrency: 3,
        ..Limits::default()
    };
    let mut results = Vec::new();
    for (profile, entries) in by_profile {
        let run = Arc::new(ApplyRun::new(site_profile(profile)?, dirs, options.clone(), 1)?.sharing(reboots));
        let done = access
            .fleet_collected(&entries, &limits, Some(run.audit()), run.clone(), |_, _| {})
            .await;
        results.extend(done);
    }
    // In the order the hosts were planned, whatever profile each got.
    results.sort_by_key(|r| plans.iter().position(|(e, _)| e.name == r.entry.name));
    Ok(results)
}
