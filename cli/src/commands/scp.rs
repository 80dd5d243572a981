//! `rftune scp export|import|render`: Server Configuration Profiles through the engine's `scp`
//! operations, over one host or a fleet, rendered as tables or `-o json` documents.

use crate::Exit;
use crate::args::scp::{ExportArgs, ImportArgs, RenderArgs, ScpCommand, ScpFormatArg};
use crate::args::{ApplyTimeArg, OutputFormat};
use crate::config::Hosts;
use crate::documents::{SCP_EXPORT_SCHEMA, SCP_IMPORT_SCHEMA, SCP_PREVIEW_SCHEMA, SCP_RENDER_SCHEMA};
use crate::render::{self, Progress};
use anyhow::Result;
use rftune_engine::assess::LoadedProfile;
use rftune_engine::fleet::{HostResult, Limits};
use rftune_engine::lifecycle::{Access, Operation};
use rftune_engine::scp::export::{Export, ExportOptions};
use rftune_engine::scp::import::{ImportOutcome, ImportRun, Preview};
use rftune_engine::scp::profile::Render;
use rftune_engine::scp::{Format, ScpFile, parse_targets};
use rftune_engine::state::StateDirs;
use serde_json::{Value, json};
use std::sync::Arc;

/// Runs an `scp` subcommand.
pub async fn run(cmd: &ScpCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        ScpCommand::Export(a) => export(a, dirs, output).await,
        ScpCommand::Import(a) if a.preview => preview(a, dirs, output).await,
        ScpCommand::Import(a) => import(a, dirs, output).await,
        ScpCommand::Render(a) => render_fragment(a, dirs, output).await,
    }
}

fn format_of(f: ScpFormatArg) -> Format {
    match f {
        ScpFormatArg::Xml => Format::Xml,
        ScpFormatArg::Json => Format::Json,
    }
}

/// The hosts of a command and how it reaches them.
struct Reach<'a> {
    hosts: &'a Hosts,
    connect: &'a crate::args::ConnectArgs,
    limits: Limits,
    audit: Option<&'a rftune_engine::audit::AuditLog>,
}

/// Runs `op` on the hosts (the password resolved before the progress display starts) and
/// returns every host's result in inventory order.
async fn on_hosts<O: Operation + 'static>(
    what: &str,
    reach: &Reach<'_>,
    dirs: &StateDirs,
    output: OutputFormat,
    op: Arc<O>,
) -> Result<Vec<HostResult<O::Output>>>
where
    O::Output: 'static,
{
    let Reach {
        hosts,
        connect,
        limits,
        audit,
    } = reach;
    let connect = crate::credentials::connect_config(connect, &hosts.entries)?;
    let progress = Arc::new(if hosts.single {
        Progress::spinner(output)
    } else {
        Progress::hosts(what, hosts.entries.len(), output)
    });
    let access = Access::new(connect, dirs.clone(), progress.clone());
    let results = access
        .fleet_collected(&hosts.entries, limits, *audit, op, |_, ok| progress.host_done(ok))
        .await;
    progress.finish();
    Ok(results)
}

/// A host's entry of a document: its name, then its result's fields or its error.
fn entry<T: serde::Serialize>(r: &HostResult<T>) -> Value {
    let mut v = match &r.result {
        Ok(out) => serde_json::to_value(out).unwrap_or(Value::Null),
        Err(e) => crate::documents::Failure::of(e, false).entry(&r.entry.name),
    };
    if let Some(map) = v.as_object_mut() {
        map.insert("host".into(), json!(r.entry.name));
        map.insert("status".into(), json!(if r.result.is_ok() { "ok" } else { "error" }));
    }
    v
}

/// The error of a single host's failure, or of a fleet's failed hosts once the output is out.
fn failed<T>(results: Vec<HostResult<T>>, single: bool, what: &str) -> Result<Vec<HostResult<T>>> {
    let errors = results.iter().filter(|r| r.result.is_err()).count();
    if single && errors == 1 {
        let first = results.into_iter().next().map(|r| r.result);
        return Err(match first {
            Some(Err(e)) => e.into(),
            _ => anyhow::anyhow!("{what} failed"),
        });
    }
    Ok(results)
}

fn fleet_error<T>(results: &[HostResult<T>], what: &str) -> Result<()> {
    let errors = results.iter().filter(|r| r.result.is_err()).count();
    if errors > 0 {
        anyhow::bail!(
            "{errors} of {} host(s) failed to {what} (see each host above)",
            results.len()
        );
    }
    Ok(())
}

async fn export(args: &ExportArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let targets = parse_targets(&args.target)?;
    let format = format_of(args.format);
    let hosts = Hosts::of(&args.target_hosts)?;
    let op = Arc::new(Export(Arc::new(ExportOptions {
        targets: targets.clone(),
        format,
        sanitize: args.sanitize,
        dir: args.dir.clone(),
        timeout: args.export_timeout,
    })));
    let reach = Reach {
        hosts: &hosts,
        connect: &args.target_hosts.connect,
        limits: hosts.limits(),
        audit: None,
    };
    let results = on_hosts("scp export", &reach, dirs, output, op).await?;
    let results = if output == OutputFormat::Table {
        failed(results, hosts.single, "export")?
    } else {
        results
    };
    if output == OutputFormat::Json {
        let exported = results.iter().filter(|r| r.result.is_ok()).count();
        render::json(&json!({
            "schema": SCP_EXPORT_SCHEMA, "dir": args.dir, "format": format.extension(), "targets": targets,
            "sanitized": args.sanitize, "hosts": results.iter().map(entry).collect::<Vec<_>>(),
            "summary": {"hosts": results.len(), "exported": exported, "error": results.len() - exported},
        }))?;
    } else {
        render::text(&render::scp::export_table(&results))?;
    }
    fleet_error(&results, "export")?;
    Ok(Exit::Success)
}

async fn preview(args: &ImportArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let file = Arc::new(ScpFile::load(&args.file)?);
    let hosts = Hosts::of(&args.target_hosts)?;
    let op = Arc::new(Preview {
        file: file.clone(),
        timeout: args.flags.job_timeout,
    });
    let reach = Reach {
        hosts: &hosts,
        connect: &args.target_hosts.connect,
        limits: hosts.limits(),
        audit: None,
    };
    let results = on_hosts("scp preview", &reach, dirs, output, op).await?;
    let results = if output == OutputFormat::Table {
        failed(results, hosts.single, "preview")?
    } else {
        results
    };
    let changes = |r: &HostResult<rftune_engine::scp::import::Previewed>| {
        r.result
            .as_ref()
            .is_ok_and(|p| p.components.iter().any(|c| c.applied > 0 || c.failed > 0))
    };
    let would_fail = results
        .iter()
        .filter(|r| {
            r.result
                .as_ref()
                .is_ok_and(|p| p.components.iter().any(|c| c.failed > 0))
        })
        .count();
    if output == OutputFormat::Json {
        render::json(&json!({
            "schema": SCP_PREVIEW_SCHEMA, "file": file.name,
            "hosts": results.iter().map(entry).collect::<Vec<_>>(),
            "summary": {"hosts": results.len(), "changes": results.iter().filter(|r| changes(r)).count(),
                        "would_fail": would_fail, "error": results.iter().filter(|r| r.result.is_err()).count()},
        }))?;
    } else {
        render::text(&render::scp::preview_text(&file.name, &results))?;
    }
    fleet_error(&results, "preview")?;
    if would_fail > 0 {
        anyhow::bail!(
            "on {would_fail} of {} host(s) the iDRAC says some of {} would not apply (see above)",
            results.len(),
            file.name
        );
    }
    Ok(if results.iter().any(changes) {
        Exit::Drift
    } else {
        Exit::Success
    })
}

async fn import(args: &ImportArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    if args.flags.dry_run {
        anyhow::bail!("an import has no --dry-run: --preview asks the iDRAC what it would change");
    }
    if args.flags.apply_time != ApplyTimeArg::OnReset {
        anyhow::bail!(
            "an import runs at once and rftune reboots into it; --apply-time and maintenance windows are for apply"
        );
    }
    let targets = parse_targets(&args.target)?;
    let file = ScpFile::load(&args.file)?;
    let hosts = Hosts::of(&args.target_hosts)?;
    let options = crate::config::apply_options(&args.flags).write_options();
    let audit = rftune_engine::audit::AuditLog::open(&dirs.state)?;
    let writes =
        rftune_engine::write::Writes::new("scp import", options, audit, &dirs.state, args.flags.max_unavailable);
    let run = Arc::new(ImportRun::new(file, targets, dirs.registry_cache(), writes));
    let limits = Limits {
        max_failures: args.flags.max_failures,
        canaries: args.flags.canary,
        ..hosts.limits()
    };
    let audit = run.writes.audit.clone();
    let audit_log = audit.path().display().to_string();
    let op = run.clone();
    let reach = Reach {
        hosts: &hosts,
        connect: &args.target_hosts.connect,
        limits,
        audit: Some(&audit),
    };
    let results = on_hosts("scp import", &reach, dirs, output, op).await?;
    if output == OutputFormat::Table && hosts.single && results.first().is_some_and(|r| r.result.is_err()) {
        note!("rftune: every step is in the audit log {audit_log}");
    }
    let results = if output == OutputFormat::Table {
        failed(results, hosts.single, "import")?
    } else {
        results
    };
    let count = |o: ImportOutcome| {
        results
            .iter()
            .filter(|r| r.result.as_ref().is_ok_and(|h| h.outcome == o))
            .count()
    };
    let not_converged = count(ImportOutcome::NotConverged);
    if output == OutputFormat::Json {
        render::json(&json!({
            "schema": SCP_IMPORT_SCHEMA, "file": run.file.name, "audit_log": audit_log,
            "hosts": results.iter().map(entry).collect::<Vec<_>>(),
            "summary": {"hosts": results.len(), "imported": count(ImportOutcome::Imported),
                        "in_sync": count(ImportOutcome::InSync), "not_converged": not_converged,
                        "error": results.iter().filter(|r| r.result.is_err()).count()},
        }))?;
    } else {
        render::text(&render::scp::import_text(&run.file.name, &results, &audit_log))?;
    }
    fleet_error(&results, "import")?;
    Ok(if not_converged > 0 { Exit::Drift } else { Exit::Success })
}

async fn render_fragment(args: &RenderArgs, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    let profile = Arc::new(LoadedProfile::load(&args.profile)?);
    let entry = rftune_engine::fleet::BmcEntry::from_url(&args.bmc)?;
    let access = crate::config::access_one(&args.connect, &entry, dirs)?;
    let cache = Arc::new(dirs.registry_cache());
    let rendered = access
        .one(
            &entry,
            None,
            &Render {
                profile: profile.clone(),
                cache,
            },
        )
        .await?;
    let format = format_of(args.format);
    let text = rendered.document.to_text(format);
    if output == OutputFormat::Json {
        render::json(&json!({
            "schema": SCP_RENDER_SCHEMA, "host": entry.name, "profile": profile.name(),
            "format": format.extension(), "document": text, "skipped": rendered.skipped,
        }))?;
        return Ok(Exit::Success);
    }
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            let n: usize = rendered.document.components.iter().map(|c| c.attributes.len()).sum();
            note!(
                "rftune: wrote {n} attribute(s) of profile {} for {} to {}",
                profile.name(),
                entry.name,
                path.display()
            );
        }
        None => render::text(&text)?,
    }
    for s in &rendered.skipped {
        note!("rftune: left out {}: {}", s.attribute, s.reason);
    }
    Ok(Exit::Success)
}
