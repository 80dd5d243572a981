//! `rftune experiment run|resume|report`: A/B-test BIOS profiles on real hosts — apply, reboot,
//! benchmark on the host, compare with confidence intervals.

use crate::Outcome;
use crate::args::{ExperimentCommand, OutputFormat};
use crate::experiment::report;
use crate::experiment::spec::Spec;
use crate::experiment::state::State;
use crate::experiment::stats::Method;
use crate::render;
use crate::state::StateDirs;
use anyhow::{Context, Result, bail};

/// Runs an `experiment` subcommand.
pub async fn run(cmd: &ExperimentCommand, dirs: &StateDirs, output: OutputFormat) -> Result<Outcome> {
    match cmd {
        ExperimentCommand::Run { file, connect } => {
            let spec = Spec::load(file)?;
            let dir = spec.output.clone().context("the experiment has no output directory")?;
            if State::path(&dir).exists() {
                bail!(
                    "{} already holds an experiment; continue it with `rftune experiment resume {}` or choose another output",
                    dir.display(),
                    dir.display()
                );
            }
            crate::experiment::run::run(State::new(spec), &dir, connect, dirs, output).await
        }
        ExperimentCommand::Resume { dir, connect } => {
            let state = State::load(dir)?;
            crate::experiment::run::run(state, dir, connect, dirs, output).await
        }
        ExperimentCommand::Report { dir, resamples } => {
            let state = State::load(dir)?;
            let method = Method {
                seed: state.spec.seed.unwrap_or(0),
                resamples: *resamples,
                ..Method::default()
            };
            let r = report::from_state(&state, dir, method);
            let files = report::write(dir, &r)?;
            match output {
                OutputFormat::Json => render::json(&r)?,
                _ => {
                    render::text(&report::text(&r))?;
                    for f in files {
                        render::text(&format!("wrote {}\n", f.display()))?;
                    }
                }
            }
            Ok(Outcome::Success)
        }
    }
}
