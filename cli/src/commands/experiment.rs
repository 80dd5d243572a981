//! `rftune experiment run|resume|report`: A/B-test BIOS profiles on real hosts — apply, reboot,
//! benchmark on the host, compare with confidence intervals.

use crate::Exit;
use crate::args::{ExperimentCommand, OutputFormat};
use crate::render;
use anyhow::{Context, Result, bail};
use rftune_engine::state::StateDirs;
use rftune_experiment::compare::Method;
use rftune_experiment::spec::Spec;
use rftune_experiment::state::State;
use rftune_experiment::{report, run};
use std::path::Path;
use std::sync::Arc;

/// Runs an `experiment` subcommand.
pub async fn run(cmd: &ExperimentCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Exit> {
    match cmd {
        ExperimentCommand::Run { file, connect } => {
            let spec = Spec::load(file)?;
            for w in spec.warnings() {
                tracing::warn!("{}: {w}", file.display());
            }
            let dir = spec.output.clone().context("the experiment has no output directory")?;
            if State::path(&dir).exists() {
                bail!(
                    "{} already holds an experiment; continue it with `rftune experiment resume {}` or choose another output",
                    dir.display(),
                    dir.display()
                );
            }
            execute(State::new(spec), &dir, connect, dirs, output).await
        }
        ExperimentCommand::Resume { dir, connect } => execute(State::load(dir)?, dir, connect, dirs, output).await,
        ExperimentCommand::Report { dir, resamples } => {
            let state = State::load(dir)?;
            let method = Method {
                seed: state.spec.seed.unwrap_or(0),
                resamples: *resamples,
                ..Method::default()
            };
            let r = report::from_state(&state, dir, method);
            let files = report::write(dir, &r)?;
            show(&r, &files, output)?;
            unreadable(&r, dir)?;
            Ok(Exit::Success)
        }
    }
}

/// Runs (or resumes) the experiment in `dir` with a spinner, the password resolved once, then
/// reports.
async fn execute(
    state: State,
    dir: &Path,
    connect: &crate::args::ConnectArgs,
    dirs: &StateDirs,
    output: OutputFormat,
) -> Result<Exit> {
    let entries: Vec<_> = state.spec.hosts.iter().map(|h| h.entry()).collect();
    let config = crate::credentials::connect_config(connect, &entries)?;
    let bar = Arc::new(render::Progress::spinner(output));
    let done = run::run(state, dir, config, dirs.clone(), bar.clone()).await;
    bar.finish();
    finish(done?, dir, output)
}

/// Prints the report of a run, names the hosts that stopped early (with how to continue them),
/// and maps the result to the exit code: 0 when every step finished, 2 when some failed or are
/// left.
fn finish(done: run::Finished, dir: &Path, output: OutputFormat) -> Result<Exit> {
    show(&done.report, &done.files, output)?;
    for e in &done.stopped_early {
        note!("rftune: {e}");
    }
    let resume = (!done.stopped_early.is_empty()).then(|| {
        format!(
            "{} host(s) stopped early; `rftune experiment resume {}` continues after the last finished step",
            done.stopped_early.len(),
            dir.display()
        )
    });
    if let Err(e) = unreadable(&done.report, dir) {
        if let Some(resume) = &resume {
            note!("rftune: {resume}");
        }
        return Err(e);
    }
    if let Some(resume) = resume {
        bail!("{resume}");
    }
    Ok(if done.complete { Exit::Success } else { Exit::Drift })
}

/// Results the report could not read are an error, never a report that says "No results."
/// and exits 0.
fn unreadable(report: &report::ExperimentReport, dir: &Path) -> Result<()> {
    if report.problems.is_empty() {
        return Ok(());
    }
    bail!(
        "{} result file(s) of {} could not be read ({}); the report leaves them out",
        report.problems.len(),
        dir.display(),
        report.problems.join("; ")
    )
}

/// Prints a report (JSON, or text and the files written).
fn show(report: &report::ExperimentReport, files: &[std::path::PathBuf], output: OutputFormat) -> Result<()> {
    match output {
        OutputFormat::Json => render::json(report)?,
        _ => {
            render::text(&report::text(report))?;
            for f in files {
                render::text(&format!("wrote {}\n", f.display()))?;
            }
        }
    }
    Ok(())
}
