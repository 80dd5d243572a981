//! `rftune apply` (converge one host or a fleet on a profile, with one reboot per host) and
//! `rftune restore` (apply a snapshot back, as the profile derived from it): one engine run per
//! command, its hosts streamed to `-o json`/`-o jsonl` as they finish, or shown as a table.

use crate::Exit;
use crate::args::{ApplyArgs, ApplyFlags, OutputFormat, RestoreArgs};
use crate::config::{self, Hosts};
use crate::documents::{ApplyReport, ApplySummary, DocumentKind, apply_entry};
use crate::render::group::Blocks;
use crate::render::{self, Line, Progress, SummaryBody};
use anyhow::Result;
use rftune_engine::assess::LoadedProfile;
use rftune_engine::audit::AuditLog;
use rftune_engine::converge::ApplyRun;
use rftune_engine::converge::HostApply;
use rftune_engine::fleet::HostResult;
use rftune_engine::fleet::{self, BmcEntry};
use rftune_engine::lifecycle::Access;
use rftune_engine::lifecycle::Operation;
use rftune_engine::plan::PlanDocument;
use rftune_engine::restore::{Pick, RestoreRun, Restored, SnapshotIndex};
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// Runs `rftune apply` (of a profile, or of a plan file with `--plan`).
pub async fn run(args: &ApplyArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    if let Some(file) = &args.plan {
        let (plan, profile) = load_plan(file, args.max_plan_age)?;
        let hosts = plan_hosts(&plan, &args.target, file)?;
        // The password first: a prompt must not meet a spinner.
        let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
        let mut options = config::apply_options(&args.flags);
        options.follow_plan(&plan.options)?;
        let run = ApplyRun::new(profile, dirs, options, args.flags.max_unavailable)?.with_plan(Arc::new(plan));
        let applied = Applied::of(Arc::new(run), Some(file.display().to_string()));
        let blocks = Blocks::per_host(args.layout.per_host);
        return converge_run(applied, hosts, &args.flags, blocks, connect, dirs, output).await;
    }
    let hosts = Hosts::of(&args.target)?;
    let Some(name) = &args.profile else {
        anyhow::bail!("give --profile NAME|FILE, or --plan FILE");
    };
    let profile = LoadedProfile::load(name)?;
    converge(profile, hosts, args, dirs, output).await
}

/// Reads a plan file and the profile it was made from, refusing it whole when its integrity
/// check fails, it was made by another rftune version, from a profile that changed since, or
/// more than `max_age` ago.
fn load_plan(file: &std::path::Path, max_age: std::time::Duration) -> Result<(PlanDocument, LoadedProfile)> {
    let text = rftune_engine::state::read_capped(file, rftune_engine::state::MAX_DOCUMENT_BYTES, "plan")?;
    let name = file.display().to_string();
    let plan = PlanDocument::parse(&text, &name)?;
    let profile = LoadedProfile::load(&plan.profile)?;
    plan.check(&name, &profile, max_age, std::time::SystemTime::now())?;
    Ok((plan, profile))
}

/// The hosts `apply --plan` applies: the plan's own, in its order. With `--inventory` each is
/// its inventory entry (credentials file, pinned fingerprint, node; at the URL the plan was
/// made for, else refused), narrowed by `--tag`, `--limit` and `--shard`; without one, the
/// URLs the plan names, narrowed by `--limit` and `--shard`; with `--bmc`, that one host,
/// which the plan must hold. Says on stderr which it used.
fn plan_hosts(plan: &PlanDocument, target: &crate::args::TargetArgs, file: &std::path::Path) -> Result<Hosts> {
    let name = file.display().to_string();
    let planned = plan
        .hosts
        .iter()
        .map(|h| {
            Ok(BmcEntry {
                name: h.host.clone(),
                ..BmcEntry::from_url(&h.url)?
            })
        })
        .collect::<Result<Vec<BmcEntry>>>()?;
    let mismatch = |entry: &BmcEntry| -> Result<()> {
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
            Some(_) => Ok(()),
        }
    };
    if target.bmc.is_some() {
        let hosts = Hosts::of(target)?;
        hosts.entries.iter().try_for_each(mismatch)?;
        return Ok(hosts);
    }
    let entries = if let Some(path) = &target.inventory {
        let source = path.display().to_string();
        let inventory = rftune_engine::fleet::read_inventory(path)?;
        for p in &planned {
            let Some(entry) = inventory.iter().find(|e| e.name == p.name) else {
                anyhow::bail!(
                    "plan {name} holds {}, which {source} does not list: apply the plan without --inventory to reach the hosts at the URLs it names, or add the host",
                    p.name
                );
            };
            mismatch(entry)?;
        }
        let in_plan: Vec<BmcEntry> = inventory
            .iter()
            .filter(|e| plan.host(&e.name).is_some())
            .cloned()
            .collect();
        let chosen = config::select(target, in_plan, &source)?;
        // The plan's order.
        let entries: Vec<BmcEntry> = planned
            .iter()
            .filter_map(|p| chosen.iter().find(|e| e.name == p.name).cloned())
            .collect();
        note!(
            "rftune: applying {} of the {} host(s) of plan {name}, with the credentials and pins of {source}",
            entries.len(),
            planned.len()
        );
        entries
    } else {
        if !target.tags.is_empty() {
            anyhow::bail!("--tag needs --inventory: a plan records no tags");
        }
        let limit = rftune_engine::fleet::Limit::parse(&target.limit)?;
        let chosen = limit.select(&planned, planned.clone(), &format!("plan {name}"))?;
        let entries = match target.shard {
            Some(shard) => shard.select(chosen),
            None => chosen,
        };
        note!(
            "rftune: applying {} of the {} host(s) of plan {name}, at the URLs it names (no --inventory: the run's credentials and certificate trust)",
            entries.len(),
            planned.len()
        );
        entries
    };
    Ok(Hosts::fleet(entries, target))
}

/// Runs `rftune restore`: each host gets the snapshot of its service tag that `--before` or
/// `--run` chooses (or the one `--snapshot` file), derived into a profile (every attribute
/// writable under the snapshot's own values, and the iDRAC attributes rftune manages) and
/// applied with apply's rules and limits.
pub async fn restore(args: &RestoreArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let (index, pick, hosts, label) = if let Some(file) = &args.snapshot {
        let (index, snap) = SnapshotIndex::one(file, args.any_host)?;
        let hosts = if args.target.bmc.is_some() {
            Hosts::of(&args.target)?
        } else {
            Hosts::one(BmcEntry {
                name: snap.host.clone(),
                ..BmcEntry::from_url(&snap.url)?
            })
        };
        let label = format!(
            "restore-{}",
            snap.host.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
        );
        (index, Pick::Latest, hosts, label)
    } else {
        if args.target.bmc.is_none() && args.target.inventory.is_none() && std::env::var_os("RFTUNE_BMC").is_none() {
            anyhow::bail!(
                "give --inventory FILE (each host gets its own snapshot, matched by service tag) or --bmc URL, or one --snapshot FILE"
            );
        }
        let pick = match (&args.before, &args.run) {
            (Some(t), _) => Pick::before(t, std::time::SystemTime::now())?,
            (None, Some(r)) => Pick::Run(r.clone()),
            (None, None) => Pick::Latest,
        };
        let dir = args
            .snapshot_dir
            .clone()
            .unwrap_or_else(|| dirs.state.join("snapshots"));
        // Which run took a snapshot is in the audit log of the state directory.
        let audit_log = matches!(pick, Pick::Run(_)).then(|| dirs.state.join("audit.log"));
        let index = SnapshotIndex::read_dir(&dir, audit_log.as_deref())?;
        let hosts = Hosts::of(&args.target)?;
        if output == OutputFormat::Table {
            note!(
                "rftune: restoring {} host(s), each to {} of its service tag, among the {} snapshot(s) in {}",
                hosts.entries.len(),
                pick.describe(),
                index.len(),
                dir.display()
            );
        }
        (index, pick, hosts, "restore".to_owned())
    };
    // The password first: a prompt must not meet a spinner.
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let options = config::apply_options(&args.flags);
    let run = Arc::new(RestoreRun::new(index, pick, dirs, options, args.flags.max_unavailable)?);
    let audit = run.audit().clone();
    let applied = Applied {
        op: run,
        audit,
        label,
        plan: None,
    };
    let blocks = Blocks::per_host(args.layout.per_host);
    converge_run(applied, hosts, &args.flags, blocks, connect, dirs, output).await
}

/// Applies `profile` to `hosts` with the flags and provisioning steps of `args`: the engine's
/// fleet apply, rendered as `output` says.
async fn converge(
    profile: LoadedProfile,
    hosts: Hosts,
    args: &ApplyArgs,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Exit> {
    // The passwords first (the BMC's, then any BIOS one): a prompt must not meet a spinner.
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let flags = &args.flags;
    let mut options = config::apply_options(flags);
    config::provision_options(&args.provision, &mut options)?;
    let run = Arc::new(ApplyRun::new(profile, dirs, options, flags.max_unavailable)?);
    let blocks = Blocks::per_host(args.layout.per_host);
    converge_run(Applied::of(run, None), hosts, flags, blocks, connect, dirs, output).await
}

/// A run to carry out (an apply or a restore), its audit log, what it applies (the profile's
/// name, or `restore`) and the plan file it follows, if any.
struct Applied<O> {
    op: Arc<O>,
    audit: AuditLog,
    label: String,
    plan: Option<String>,
}

impl Applied<ApplyRun> {
    /// The apply `run`, following the plan file `plan` if any.
    fn of(run: Arc<ApplyRun>, plan: Option<String>) -> Self {
        Self {
            audit: run.audit().clone(),
            label: run.profile.name().to_owned(),
            op: run,
            plan,
        }
    }
}

/// A host's result in an apply-shaped run: its apply, and what else its entry says.
trait HostOutcome: Send + 'static {
    /// The apply, and the entry's extra field (name and value), if any.
    fn split(self) -> (HostApply, Option<(&'static str, serde_json::Value)>);
}

impl HostOutcome for HostApply {
    fn split(self) -> (HostApply, Option<(&'static str, serde_json::Value)>) {
        (self, None)
    }
}

impl HostOutcome for Restored {
    fn split(self) -> (HostApply, Option<(&'static str, serde_json::Value)>) {
        let from = serde_json::to_value(&self.from).unwrap_or_default();
        (self.apply, Some(("restored_from", from)))
    }
}

/// `r` as an apply's result, and its entry's extra field.
fn split<T: HostOutcome>(r: HostResult<T>) -> (HostResult<HostApply>, Option<(&'static str, serde_json::Value)>) {
    let HostResult { entry, result } = r;
    match result {
        Ok(t) => {
            let (apply, extra) = t.split();
            (
                HostResult {
                    entry,
                    result: Ok(apply),
                },
                extra,
            )
        }
        Err(e) => (HostResult { entry, result: Err(e) }, None),
    }
}

/// The entry of `r` in the document, counted in `summary`.
fn entry_of<T: HostOutcome>(audit: &AuditLog, r: HostResult<T>, summary: &mut ApplySummary) -> serde_json::Value {
    let (r, extra) = split(r);
    let mut entry = apply_entry(audit, &r, summary);
    if let Some((field, value)) = extra {
        entry[field] = value;
    }
    entry
}

/// Carries out `applied` on `hosts`, rendered as `output` says.
async fn converge_run<O>(
    applied: Applied<O>,
    hosts: Hosts,
    flags: &ApplyFlags,
    blocks: Blocks,
    connect: rftune_engine::connect::ConnectConfig,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Exit>
where
    O: Operation + 'static,
    O::Output: HostOutcome,
{
    let Applied { op, audit, label, plan } = applied;
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
    let audit = &audit;
    let entries = &hosts.entries;
    let shard = hosts.shard.map(|s| s.to_string());
    let audit_log = audit.path().display().to_string();
    let profile = label.as_str();
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
                let host = entry_of(audit, r, &mut summary);
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
                document.entry(i, &entry_of(audit, r, &mut report.summary));
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
    let (results, extras): (Vec<HostResult<HostApply>>, Vec<_>) = results.into_iter().map(split).unzip();
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
    let mut text = restored_from(&results, &extras);
    text.push_str(&render::apply::table(&report, &results, blocks));
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
        text.push_str(&render::plan::hosts(&planned, false, blocks));
        text.push_str(&format!("plan: {}\n", render::plan::summary(&planned)));
    }
    render::text(&text)?;
    report.summary.exit(&report.audit_log)
}

/// Which snapshot each restored host was given, one line each (empty for an apply).
fn restored_from(results: &[HostResult<HostApply>], extras: &[Option<(&'static str, serde_json::Value)>]) -> String {
    let mut out = String::new();
    for (r, extra) in results.iter().zip(extras) {
        if let Some(("restored_from", from)) = extra {
            let run = from["run"].as_str().map(|r| format!(", run {r}")).unwrap_or_default();
            out.push_str(&format!(
                "{}: snapshot {} (taken {}, {}{run})\n",
                r.entry.name,
                from["file"].as_str().unwrap_or_default(),
                from["taken_at"].as_str().unwrap_or_default(),
                from["reason"].as_str().unwrap_or_default(),
            ));
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}
