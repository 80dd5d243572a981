//! `rftune apply` (converge one host or a fleet on a profile, with one reboot per host) and
//! `rftune restore` (apply a snapshot back, as the profile derived from it): one engine run per
//! command, its hosts streamed to `-o json`/`-o jsonl` as they finish, or shown as a table.

use crate::Exit;
use crate::args::{ApplyArgs, ApplyFlags, ConnectArgs, OutputFormat, RestoreArgs};
use crate::config::{self, Hosts};
use crate::documents::{ApplyReport, ApplySummary, DocumentKind, apply_entry};
use crate::render::{self, Line, Progress, SummaryBody};
use anyhow::Result;
use rftune_engine::assess::LoadedProfile;
use rftune_engine::converge::ApplyRun;
use rftune_engine::derive;
use rftune_engine::fleet::{self, BmcEntry};
use rftune_engine::lifecycle::Access;
use rftune_engine::plan::PlanDocument;
use rftune_engine::snapshot::Snapshot;
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// Runs `rftune apply` (of a profile, or of a plan file with `--plan`).
pub async fn run(args: &ApplyArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let hosts = Hosts::of(&args.target)?;
    if let Some(file) = &args.plan {
        let (plan, profile) = load_plan(file, &hosts, args.max_plan_age)?;
        // The password first: a prompt must not meet a spinner.
        let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
        let mut options = config::apply_options(&args.flags);
        options.follow_plan(&plan.options)?;
        let run = ApplyRun::new(profile, dirs, options, args.flags.max_unavailable)?.with_plan(Arc::new(plan));
        let applied = Applied {
            run: Arc::new(run),
            plan: Some(file.display().to_string()),
        };
        return converge_run(applied, hosts, &args.flags, connect, dirs, output).await;
    }
    let Some(name) = &args.profile else {
        anyhow::bail!("give --profile NAME|FILE, or --plan FILE");
    };
    let profile = LoadedProfile::load(name)?;
    converge(
        profile,
        hosts,
        &args.flags,
        Some(&args.provision),
        &args.target.connect,
        dirs,
        output,
    )
    .await
}

/// Reads a plan file and the profile it was made from, refusing it whole when its integrity
/// check fails, it was made by another rftune version, from a profile that changed since, or
/// more than `max_age` ago, or when it does not cover the hosts selected (with their URLs).
fn load_plan(
    file: &std::path::Path,
    hosts: &Hosts,
    max_age: std::time::Duration,
) -> Result<(PlanDocument, LoadedProfile)> {
    let text = rftune_engine::state::read_capped(file, rftune_engine::state::MAX_DOCUMENT_BYTES, "plan")?;
    let name = file.display().to_string();
    let plan = PlanDocument::parse(&text, &name)?;
    let profile = LoadedProfile::load(&plan.profile)?;
    plan.check(&name, &profile, max_age, std::time::SystemTime::now())?;
    for entry in &hosts.entries {
        match plan.host(&entry.name) {
            None => anyhow::bail!(
                "plan {name} has no entry for {}: plan every host you apply (`rftune plan` with the same host selection)",
                entry.name
            ),
            Some(h) if h.url != entry.url => anyhow::bail!(
                "plan {name} was made for {} at {}, not at {}: make a new plan",
                entry.name,
                h.url,
                entry.url
            ),
            Some(_) => {}
        }
    }
    Ok((plan, profile))
}

/// Runs `rftune restore`: derives a profile from the snapshot (every attribute writable under
/// the snapshot's own values, and the iDRAC attributes rftune manages) and applies it.
pub async fn restore(args: &RestoreArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let snap = Snapshot::load(&args.snapshot)?;
    let url = args.bmc.clone().unwrap_or_else(|| snap.url.clone());
    let entry = BmcEntry {
        name: snap.host.clone(),
        ..BmcEntry::from_url(&url)?
    };
    // The registry decides what is restorable: read it from the host once (it is cached).
    let access = config::access_one(&args.connect, &entry, dirs)?;
    let profile = derive::restore_profile(&access, &entry, &snap, &args.snapshot, args.any_host).await?;
    converge(
        profile,
        Hosts::one(entry),
        &args.flags,
        None,
        &args.connect,
        dirs,
        output,
    )
    .await
}

/// Applies `profile` to `hosts`: the engine's fleet apply, rendered as `output` says.
async fn converge(
    profile: LoadedProfile,
    hosts: Hosts,
    flags: &ApplyFlags,
    provision: Option<&crate::args::boot::ProvisionFlags>,
    connect: &ConnectArgs,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Exit> {
    // The passwords first (the BMC's, then any BIOS one): a prompt must not meet a spinner.
    let connect = crate::credentials::connect_config(connect, &hosts.entries)?;
    let mut options = config::apply_options(flags);
    if let Some(p) = provision {
        config::provision_options(p, &mut options)?;
    }
    let run = Arc::new(ApplyRun::new(profile, dirs, options, flags.max_unavailable)?);
    converge_run(Applied { run, plan: None }, hosts, flags, connect, dirs, output).await
}

/// A run to carry out, and the plan file it applies, if any.
struct Applied {
    run: Arc<ApplyRun>,
    plan: Option<String>,
}

/// Carries out `applied` on `hosts`, rendered as `output` says.
async fn converge_run(
    applied: Applied,
    hosts: Hosts,
    flags: &ApplyFlags,
    connect: rftune_engine::connect::ConnectConfig,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Exit> {
    let Applied { run, plan } = applied;
    let progress = Arc::new(if hosts.single {
        Progress::spinner(output)
    } else {
        Progress::hosts("apply", hosts.entries.len(), output)
    });
    let access = Access::new(connect, dirs.clone(), progress.clone());
    // Canaries first, in inventory order; the engine leaves the rest untouched if one fails.
    let limits = fleet::Limits {
        max_failures: flags.max_failures,
        canaries: flags.canary,
        ..hosts.limits()
    };
    let audit = run.audit();
    let entries = &hosts.entries;
    let shard = hosts.shard.map(|s| s.to_string());
    let op = run.clone();
    let audit_log = audit.path().display().to_string();
    let profile = run.profile.name();
    let mut summary = ApplySummary {
        hosts: entries.len(),
        ..ApplySummary::default()
    };
    if output == OutputFormat::Jsonl {
        // Each host is written as it finishes and dropped; only the counters stay.
        let mut lines = render::JsonLines::default();
        access
            .fleet(entries, &limits, Some(audit), op, |_, r| {
                progress.host_done(r.result.is_ok());
                let host = apply_entry(audit, &r, &mut summary);
                lines.line(&Line {
                    schema: DocumentKind::Apply.host_schema(),
                    profile,
                    dry_run: Some(flags.dry_run),
                    shard: None,
                    body: &host,
                });
            })
            .await;
        progress.finish();
        lines.line(&Line {
            schema: DocumentKind::Apply.summary_schema(),
            profile,
            dry_run: Some(flags.dry_run),
            shard: shard.as_deref(),
            body: SummaryBody {
                summary: &summary,
                audit_log: Some(&audit_log),
            },
        });
        lines.finish()?;
        return summary.exit(&audit_log);
    }
    let mut report = ApplyReport {
        schema: DocumentKind::Apply.schema(),
        profile: profile.to_owned(),
        dry_run: flags.dry_run,
        shard,
        hosts: Vec::new(),
        summary,
        audit_log,
        plan,
    };
    if output == OutputFormat::Json {
        // Each host's entry is written once every host before it in the inventory is done:
        // only the entries of hosts that finished early are held, serialised.
        let mut document = render::JsonDocument::start(&report, "hosts")?;
        access
            .fleet(entries, &limits, Some(audit), op, |i, r| {
                progress.host_done(r.result.is_ok());
                document.entry(i, &apply_entry(audit, &r, &mut report.summary));
            })
            .await;
        progress.finish();
        document.finish(&report)?;
        return report.summary.exit(&report.audit_log);
    }
    let results = access
        .fleet_collected(entries, &limits, Some(audit), op, |_, ok| progress.host_done(ok))
        .await;
    progress.finish();
    if hosts.single
        && let Some(Err(_)) = results.first().map(|r| &r.result)
    {
        // One host: its error is the message, on stderr.
        let failed = results.into_iter().next().map(|r| r.result);
        note!("rftune: every step is in the audit log {}", audit.path().display());
        return Err(match failed {
            Some(Err(e)) => e.into(),
            _ => anyhow::anyhow!("apply failed"),
        });
    }
    report.hosts = results
        .iter()
        .map(|r| apply_entry(audit, r, &mut report.summary))
        .collect();
    // Table or JUnit (JSON and JSON lines were streamed above).
    let mut text = render::apply::table(&report, &results);
    if flags.dry_run {
        // A dry run is a plan without a file: the plan's view of each host follows.
        let planned: Vec<_> = results
            .iter()
            .map(|r| match &r.result {
                Ok(h) => h.planned.as_deref().cloned().unwrap_or_else(|| {
                    rftune_engine::plan::failed_host(
                        &r.entry.name,
                        &r.entry.url,
                        &rftune_engine::Error::bad_input("no plan was made"),
                    )
                }),
                Err(e) => rftune_engine::plan::failed_host(&r.entry.name, &r.entry.url, e),
            })
            .collect();
        text.push_str("\nplan:\n");
        text.push_str(&render::plan::hosts(&planned, false));
        text.push_str(&format!("plan: {}\n", render::plan::summary(&planned)));
    }
    render::text(&text)?;
    report.summary.exit(&report.audit_log)
}
