//! `rftune demo`: the story on an emulated R7625, offline, in under a minute — inventory, diff
//! against a shipped profile, apply with one reboot, verify, a second apply that does nothing,
//! and the power draw before and after.

use crate::Exit;
use crate::args::{DemoArgs, OutputFormat};
use crate::documents::{DiffReport, host_diff};
use crate::render::{self, Progress};
use anyhow::{Context, Result};
use idrac_sim::{Fleet, SimConfig};
use redfish_client::{Client, Credentials, ODataId, TlsVerification};
use rftune_engine::assess::{self, AssessOptions, Assessment, LoadedProfile};
use rftune_engine::connect::Bmc;
use rftune_engine::converge::{self, ApplyOptions, ApplyRun};
use rftune_engine::fleet::HostResult;
use rftune_engine::state::StateDirs;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Runs `rftune demo`.
pub async fn run(args: &DemoArgs, dirs: &StateDirs, state_dir_given: bool) -> Result<Exit> {
    let started = Instant::now();
    // A private scratch directory, removed when the demo ends (however it ends).
    let scratch = if state_dir_given {
        None
    } else {
        Some(
            tempfile::Builder::new()
                .prefix("rftune-demo-")
                .tempdir()
                .context("creating a scratch state directory")?,
        )
    };
    let dirs = match &scratch {
        Some(d) => StateDirs {
            state: d.path().to_owned(),
            cache: d.path().join("cache"),
            refresh_registry: false,
        },
        None => dirs.clone(),
    };
    let say = |s: &str| render::text(&format!("{s}\n"));
    let fleet = Fleet::start(SimConfig {
        model: args
            .model
            .parse()
            .unwrap_or_else(|e: std::convert::Infallible| match e {}),
        boot_time: args.boot_time,
        ..SimConfig::default()
    })
    .await
    .context("starting the emulated iDRAC")?;
    let sim = &fleet.hosts()[0];
    let fingerprint = fleet.fingerprint().context("the emulator serves HTTPS")?;
    say(&format!(
        "== An emulated iDRAC9 ({}) is serving {}",
        args.model, sim.url
    ))?;
    say(&format!(
        "   its self-signed certificate is pinned by fingerprint: {fingerprint}\n"
    ))?;
    let client = Client::builder(&sim.url)
        .credentials(Credentials::new("root", "calvin"))
        .tls(TlsVerification::Pinned(fingerprint))
        .build()?;
    let bmc = Bmc::from_client(sim.name.clone(), client);
    bmc.service_root().await?;
    bmc.login().await?;

    say("== 1. Inventory")?;
    let inventory = rftune_engine::inventory::collect(&bmc, 0).await?;
    render::text(&render::inventory::table(&inventory))?;

    let profile = LoadedProfile::load(&args.profile)?;
    let cache = dirs.registry_cache();
    say(&format!(
        "\n== 2. Diff against the shipped profile `{}`",
        profile.name()
    ))?;
    let before = assess::assess(&bmc, &profile, &cache, AssessOptions::default()).await?;
    render::text(&render::diff::table(
        &one_host(profile.name(), sim, before),
        false,
        render::group::Blocks::PerHost,
        &[],
    ))?;

    let chassis = ODataId::new(redfish_client::oem::dell::CHASSIS);
    let watts_before = idle_watts(&bmc, &chassis).await?;

    say("\n== 3. Apply: one PATCH with ApplyTime OnReset, a graceful reboot, the BIOS job during POST, verify")?;
    let options = ApplyOptions {
        graceful_timeout: Duration::from_secs(30),
        job_timeout: Duration::from_secs(60),
        boot_timeout: Duration::from_secs(60),
        ..ApplyOptions::default()
    };
    let run = ApplyRun::new(profile, &dirs, options, 1)?;
    let progress = Progress::spinner(OutputFormat::Table);
    let applied = converge::apply_host(&run, &bmc, &progress).await;
    progress.finish();
    let applied = applied?;
    say(&format!("   {}: {}", sim.name, applied.summary))?;
    for u in &applied.unlocks {
        say(&format!("   unlock: {u}"))?;
    }
    if let Some(job) = &applied.job {
        say(&format!("   BIOS job {job}: Scheduled → Running → Completed (PR19)"))?;
    }

    say("\n== 4. Verify: diff again")?;
    let after = assess::assess(&bmc, &run.profile, &run.cache, AssessOptions::default()).await?;
    let clean = after.diff.is_clean();
    render::text(&render::diff::table(
        &one_host(run.profile.name(), sim, after),
        false,
        render::group::Blocks::PerHost,
        &[],
    ))?;

    say("\n== 5. Apply again: idempotent")?;
    sim.host.stats.reset();
    let again = converge::apply_host(&run, &bmc, &Progress::spinner(OutputFormat::Json)).await?;
    let stats = sim.host.stats.to_json(&sim.host.service_tag);
    say(&format!(
        "   {}: {} ({} requests, {} BIOS PATCH, {} reset)",
        sim.name, again.summary, stats["requests"]["total"], stats["bios_patches"], stats["resets"]
    ))?;

    let watts_after = idle_watts(&bmc, &chassis).await?;
    say("\n== 6. Power at idle, from the iDRAC (emulated readings follow the settings)")?;
    say(&format!(
        "   before: {watts_before:.0} W   after: {watts_after:.0} W   ({:+.0} W)",
        watts_after - watts_before
    ))?;
    bmc.close().await;
    let mut end = String::new();
    let _ = write!(end, "\nDone in {:.1} s.", started.elapsed().as_secs_f64(),);
    if scratch.is_some() {
        end.push_str(
            " The snapshot and audit log went to a scratch directory, removed now; pass --state-dir DIR to keep them.",
        );
    } else {
        let _ = write!(end, " Snapshot and audit log: {}", dirs.state.display());
    }
    say(&end)?;
    drop(scratch);
    Ok(if clean { Exit::Success } else { Exit::Drift })
}

/// The diff document of the emulated host's assessment.
fn one_host(profile: &str, sim: &idrac_sim::RunningHost, assessment: Assessment) -> DiffReport {
    let entry = rftune_engine::fleet::BmcEntry {
        name: sim.name.clone(),
        url: sim.url.clone(),
        fingerprint: None,
        credentials: None,
        tags: Vec::new(),
        node: None,
    };
    let result = HostResult {
        entry,
        result: Ok(assessment),
    };
    DiffReport::of(profile, None, vec![host_diff(profile, &result)])
}

/// The median of five idle readings.
async fn idle_watts(bmc: &Bmc, chassis: &ODataId) -> Result<f64> {
    let mut readings = Vec::new();
    for _ in 0..5 {
        let (_, watts) =
            rftune_engine::meter::read_best(bmc, chassis, Some(host_bench::power::Sensor::PowerControl)).await?;
        readings.push(watts);
    }
    readings.sort_by(f64::total_cmp);
    readings
        .get(readings.len() / 2)
        .copied()
        .context("the iDRAC reported no power reading")
}
