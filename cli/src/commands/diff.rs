//! `rftune diff`: desired (profile) vs current vs pending, per attribute, per host. Read-only:
//! the engine's fleet diff, each host streamed to `-o json`/`-o jsonl` as it finishes.

use crate::Exit;
use crate::args::{DiffArgs, OutputFormat};
use crate::config::Hosts;
use crate::documents::{DiffReport, DiffSummary, DocumentKind, HostDiff, host_diff};
use crate::render::{self, Line, SummaryBody};
use anyhow::Result;
use rftune_engine::assess::{Assess, LoadedProfile};
use rftune_engine::lifecycle::Access;
use rftune_engine::state::StateDirs;
use std::sync::Arc;

/// The profile `diff --scp FILE` compares with: the file's BIOS and iDRAC attributes, typed by
/// the first host's registry and iDRAC values (read once; the registry is cached).
async fn scp_profile(
    file: &std::path::Path,
    hosts: &Hosts,
    connect: &rftune_engine::ConnectConfig,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<LoadedProfile> {
    use redfish_client::oem::dell::AttributeGroup;
    use rftune_engine::scp::profile::{Typing, comparison_profile};
    let scp = rftune_engine::scp::ScpFile::load(file)?;
    let Some(first) = hosts.entries.first() else {
        anyhow::bail!("no host to compare {} with", file.display());
    };
    let access = Access::new(connect.clone(), dirs.clone(), Arc::new(crate::render::Notices));
    let read = rftune_engine::read::ReadState {
        cache: Arc::new(dirs.registry_cache()),
        groups: AttributeGroup::ALL.into_iter().collect(),
        jobs: false,
    };
    let state = access.one(first, None, &read).await?;
    let typing = Typing {
        registry: Some(&state.registry),
        idrac: Some(&state.idrac),
    };
    let (loaded, derived) = comparison_profile(&scp.document, &scp.name, typing)?;
    if output == OutputFormat::Table {
        let left: Vec<String> = derived
            .dropped_counts()
            .into_iter()
            .map(|(reason, n)| format!("{n} {}", reason.describe()))
            .collect();
        note!(
            "rftune: comparing with {} BIOS and {} iDRAC setting(s) of {}; left out: {}",
            derived.bios.len(),
            derived.idrac.values().map(|a| a.len()).sum::<usize>(),
            scp.name,
            if left.is_empty() {
                "nothing".to_owned()
            } else {
                left.join("; ")
            }
        );
    }
    Ok(loaded)
}

/// Runs `rftune diff`.
pub async fn run(args: &DiffArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    // First, so the registry decodes while the profile is parsed and the hosts are read.
    let cache = Arc::new(dirs.registry_cache());
    cache.prefetch_newest();
    let hosts = Hosts::of(&args.target)?;
    let connect = crate::credentials::connect_config(&args.target.connect, &hosts.entries)?;
    let profile = Arc::new(match (&args.profile, &args.scp) {
        (Some(name), _) => LoadedProfile::load(name)?,
        (None, Some(file)) => scp_profile(file, &hosts, &connect, dirs, output).await?,
        (None, None) => anyhow::bail!("give --profile NAME or --scp FILE"),
    });
    let progress = Arc::new(render::Progress::hosts("diff", hosts.entries.len(), output));
    let access = Access::new(connect, dirs.clone(), progress.clone());
    let op = Arc::new(Assess {
        profile: profile.clone(),
        cache,
        strict: args.strict,
    });
    let shard = hosts.shard.map(|s| s.to_string());
    let limits = hosts.limits();
    let entries = &hosts.entries;
    let name = profile.name();
    if output == OutputFormat::Jsonl {
        // Each host is written as it finishes and dropped; only the counters stay.
        let mut summary = DiffSummary {
            hosts: entries.len(),
            ..DiffSummary::default()
        };
        let mut lines = render::JsonLines::default();
        access
            .fleet(entries, &limits, None, op, |_, r| {
                progress.host_done(r.result.is_ok());
                let host = host_diff(name, &r);
                summary.count(host.status);
                lines.line(&Line {
                    schema: DocumentKind::Diff.host_schema(),
                    profile: name,
                    dry_run: None,
                    shard: None,
                    body: &host,
                });
            })
            .await;
        progress.finish();
        lines.line(&Line {
            schema: DocumentKind::Diff.summary_schema(),
            profile: name,
            dry_run: None,
            shard: shard.as_deref(),
            body: SummaryBody {
                summary: &summary,
                audit_log: None,
            },
        });
        lines.finish()?;
        return summary.exit();
    }
    if output == OutputFormat::Json {
        // Each host's entry is written once every host before it in the inventory is done:
        // only the entries of hosts that finished early are held, serialised.
        let mut report = DiffReport {
            schema: DocumentKind::Diff.schema(),
            profile: name.to_owned(),
            shard,
            hosts: Vec::new(),
            summary: DiffSummary::default(),
        };
        let mut document = render::JsonDocument::start(&report, "hosts")?;
        report.summary.hosts = entries.len();
        access
            .fleet(entries, &limits, None, op, |i, r| {
                progress.host_done(r.result.is_ok());
                let host = host_diff(name, &r);
                report.summary.count(host.status);
                document.entry(i, &host);
            })
            .await;
        progress.finish();
        document.finish(&report)?;
        return report.summary.exit();
    }
    // Each host's assessment (its BIOS values, pending values, registry) becomes its report
    // entry as soon as it arrives, so only the entries are held until the end.
    let mut found: Vec<Option<HostDiff>> = entries.iter().map(|_| None).collect();
    let mut failed_alone = None;
    access
        .fleet(entries, &limits, None, op, |i, r| {
            progress.host_done(r.result.is_ok());
            match r.result {
                // One host: its error is the message, on stderr.
                Err(e) if hosts.single && output == OutputFormat::Table => failed_alone = Some(e),
                _ => found[i] = Some(host_diff(name, &r)),
            }
        })
        .await;
    progress.finish();
    if let Some(e) = failed_alone {
        return Err(e.into());
    }
    let report = DiffReport::of(name, shard, found.into_iter().flatten().collect());
    match output {
        OutputFormat::Json | OutputFormat::Jsonl => render::json(&report)?,
        OutputFormat::Junit => render::text(&render::diff::junit(&report))?,
        OutputFormat::Table => {
            let blocks = render::group::Blocks::per_host(args.layout.per_host);
            render::text(&render::diff::table(&report, args.all, blocks, entries))?;
        }
    }
    report.summary.exit()
}
