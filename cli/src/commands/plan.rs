//! `rftune plan`: what an apply of a profile would do to each host, read-only, written as a
//! plan file (`rftune.plan/v1`) for review and `rftune apply --plan`, and shown as a table (or
//! printed whole with `-o json`).

use crate::Exit;
use crate::args::{OutputFormat, PlanArgs};
use crate::config::{self, Hosts};
use crate::render::{self, Progress};
use anyhow::{Context, Result};
use rftune_engine::assess::LoadedProfile;
use rftune_engine::converge::{ApplyOptions, ApplyRun};
use rftune_engine::lifecycle::Access;
use rftune_engine::plan::{self, PlanDocument};
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// Runs `rftune plan`.
pub async fn run(args: &PlanArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let profile = LoadedProfile::load(&args.profile)?;
    let hosts = Hosts::of(&args.target)?;
    let options = ApplyOptions {
        reboot: config::reboot_policy(args.reboot),
        replace_pending: args.replace_pending,
        strict: args.strict,
        apply_time: config::settings_apply_time(
            args.apply_time,
            args.maintenance_start.as_ref(),
            args.maintenance_duration,
        ),
        dry_run: true,
        ..ApplyOptions::default()
    };
    let plan_options = options.plan_options();
    let run = Arc::new(ApplyRun::new(profile, dirs, options, 1)?);
    // The password first: a prompt must not meet a spinner.
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let progress = Arc::new(if hosts.single {
        Progress::spinner(output)
    } else {
        Progress::hosts("plan", hosts.entries.len(), output)
    });
    let access = Access::new(connect, dirs.clone(), progress.clone());
    let limits = hosts.limits();
    let op = run.clone();
    let results = access
        .fleet_collected(&hosts.entries, &limits, Some(run.audit()), op, |_, ok| {
            progress.host_done(ok)
        })
        .await;
    progress.finish();
    let planned = results
        .into_iter()
        .map(|r| match r.result {
            Ok(h) => h.planned.map(|p| *p).unwrap_or_else(|| {
                plan::failed_host(
                    &r.entry.name,
                    &r.entry.url,
                    &rftune_engine::Error::bad_input("no plan was made"),
                )
            }),
            Err(e) => plan::failed_host(&r.entry.name, &r.entry.url, &e),
        })
        .collect();
    let doc = PlanDocument::new(
        &run.profile,
        &args.profile,
        plan_options,
        hosts.shard.map(|s| s.to_string()),
        planned,
    );
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    std::fs::write(&args.out, &text).with_context(|| format!("writing the plan {}", args.out.display()))?;
    if output == OutputFormat::Json {
        render::text(&text)?;
    } else {
        let mut out = render::plan::table(&doc, args.all, render::group::Blocks::per_host(args.layout.per_host));
        out.push_str(&format!(
            "plan written to {} ({}); apply it with `rftune apply --plan {}` and the same host selection\n",
            args.out.display(),
            doc.integrity,
            args.out.display()
        ));
        render::text(&out)?;
    }
    if doc.summary.error > 0 {
        anyhow::bail!(
            "{} of {} host(s) could not be planned (see each above); the plan's apply refuses them",
            doc.summary.error,
            doc.summary.hosts
        );
    }
    Ok(if doc.summary.change > 0 {
        Exit::Drift
    } else {
        Exit::Success
    })
}
