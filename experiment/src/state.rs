//! The experiment's progress, kept in `state.json` in its output directory: the experiment as it
//! was started (so `resume` follows the same schedule even if the file changed), and per host
//! how many steps have finished, what each produced and which failed. The file is written whole
//! to a private temporary file, synced and renamed, so a kill at any moment leaves either the
//! previous or the new state; a half-written temporary file is never read.

use crate::error::{Context, Result, bad_input};
use crate::schedule::Step;
use crate::spec::Spec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The state file's name in the output directory.
pub const STATE_FILE: &str = "state.json";

/// The `schema` of the state file.
pub const STATE_SCHEMA: &str = "rftune.experiment-state/v1";

/// The whole state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Always [`STATE_SCHEMA`].
    pub schema: String,
    /// The experiment as started.
    pub spec: Spec,
    /// UTC start of the first run.
    pub started_at: String,
    /// Per host, by name.
    pub hosts: BTreeMap<String, HostProgress>,
    /// Steps that were skipped, with the reason.
    #[serde(default)]
    pub failures: Vec<Failure>,
}

/// One host's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostProgress {
    /// Steps finished (done or skipped): the next step to run has this index.
    pub finished: usize,
    /// What each finished step produced, in order.
    pub steps: Vec<StepRecord>,
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// Applied, verified and benchmarked.
    Done,
    /// Not benchmarked (the apply failed, the OS did not come back, a benchmark failed).
    Skipped,
}

/// What one step produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step.
    pub step: Step,
    /// The profile's name.
    pub profile: String,
    /// How it ended.
    pub outcome: StepOutcome,
    /// `rftune.bench/v1` documents, relative to the output directory.
    #[serde(default)]
    pub results: Vec<PathBuf>,
    /// BIOS attributes in force while benchmarking.
    #[serde(default)]
    pub bios: BTreeMap<String, serde_json::Value>,
    /// What the OS showed.
    #[serde(default)]
    pub os: Option<host_bench::host::OsView>,
    /// BIOS values the OS contradicts.
    #[serde(default)]
    pub contradictions: Vec<String>,
    /// Why the step was skipped.
    #[serde(default)]
    pub reason: Option<String>,
    /// UTC end.
    pub finished_at: String,
}

/// A step that was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The host.
    pub host: String,
    /// The profile.
    pub profile: String,
    /// The step's index.
    pub step: usize,
    /// Why.
    pub reason: String,
}

impl State {
    /// A fresh state for `spec`, every host at step 0.
    pub fn new(spec: Spec) -> Self {
        let hosts = spec
            .hosts
            .iter()
            .map(|h| (h.name.clone(), HostProgress::default()))
            .collect();
        Self {
            schema: STATE_SCHEMA.to_owned(),
            spec,
            started_at: host_bench::utc_now_seconds(),
            hosts,
            failures: Vec::new(),
        }
    }

    /// The state file in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(STATE_FILE)
    }

    /// Reads the state of the experiment in `dir`.
    pub fn load(dir: &Path) -> Result<Self> {
        let path = Self::path(dir);
        let bytes = std::fs::read(&path).with_context(|| {
            format!(
                "reading {} (is {} an experiment's output directory?)",
                path.display(),
                dir.display()
            )
        })?;
        let state: Self =
            serde_json::from_slice(&bytes).with_context(|| format!("{} is not an experiment state", path.display()))?;
        if state.schema != STATE_SCHEMA {
            bad_input!(
                "{} has schema {:?}; this rftune reads {STATE_SCHEMA:?}",
                path.display(),
                state.schema
            );
        }
        // The experiment file was checked when the run began; a state edited since is checked
        // again (its durations and sizes, among the rest).
        state
            .spec
            .validate()
            .with_context(|| format!("{} holds an experiment that is no longer valid", path.display()))?;
        Ok(state)
    }

    /// Writes the state atomically (private temporary file, fsync, rename), creating `dir`.
    pub fn save(&self, dir: &Path) -> Result<()> {
        rftune_engine::state::ensure_private_dir(dir)?;
        let bytes = serde_json::to_vec_pretty(self)?;
        Ok(rftune_engine::state::write_private(&Self::path(dir), &bytes)?)
    }

    /// The index of the next step `host` has to run (0 for an unknown host).
    pub fn position(&self, host: &str) -> usize {
        self.hosts.get(host).map_or(0, |h| h.finished)
    }

    /// The steps of `host` that have not finished.
    pub fn remaining<'a>(&self, host: &str, steps: &'a [Step]) -> &'a [Step] {
        steps.get(self.position(host)..).unwrap_or(&[])
    }

    /// Records that `host` finished its next step; a skipped step is also a failure. Refuses a
    /// record out of order, which would mean two runs work on the same directory.
    pub fn record(&mut self, host: &str, record: StepRecord) -> Result<()> {
        let h = self.hosts.entry(host.to_owned()).or_default();
        if record.step.index != h.finished {
            bad_input!(
                "{host}: step {} finished but step {} was next; is another rftune working on this experiment?",
                record.step.index,
                h.finished
            );
        }
        if record.outcome == StepOutcome::Skipped {
            self.failures.push(Failure {
                host: host.to_owned(),
                profile: record.profile.clone(),
                step: record.step.index,
                reason: record.reason.clone().unwrap_or_else(|| "unknown".into()),
            });
        }
        h.finished += 1;
        h.steps.push(record);
        Ok(())
    }

    /// Whether every host has finished every step of `plan`.
    pub fn complete(&self, plan: &BTreeMap<String, Vec<Step>>) -> bool {
        plan.iter().all(|(host, steps)| self.position(host) >= steps.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule;

    fn spec() -> Spec {
        Spec::parse(
            r#"
profiles = ["a", "b"]
repeats = 2
[[hosts]]
name = "x"
bmc = "http://127.0.0.1:1"
os = { transport = "local" }
[[hosts]]
name = "y"
bmc = "http://127.0.0.1:2"
os = { transport = "ssh", target = "u@h" }
[benchmarks.memory]
"#,
        )
        .unwrap()
    }

    fn record(step: Step, outcome: StepOutcome) -> StepRecord {
        StepRecord {
            step,
            profile: ["a", "b"][step.profile].into(),
            outcome,
            results: vec![PathBuf::from(format!("results/x/{}.json", step.index))],
            bios: BTreeMap::from([("LogicalProc".into(), serde_json::json!("Enabled"))]),
            os: None,
            contradictions: Vec::new(),
            reason: (outcome == StepOutcome::Skipped).then(|| "apply failed: SYS011".into()),
            finished_at: "2025-01-01T00:00:00Z".into(),
        }
    }

    fn tempdir(tag: &str) -> PathBuf {
        // Kept on drop: the test removes it.
        let d = tempfile::Builder::new().prefix(tag).tempdir().unwrap().keep();
        std::fs::remove_dir_all(&d).ok();
        d
    }

    #[test]
    fn save_load_and_resume_position() {
        let dir = tempdir("resume");
        let spec = spec();
        let plan = schedule::plan(&spec);
        let mut st = State::new(spec);
        assert_eq!(st.remaining("x", &plan["x"]).len(), 4);
        st.record("x", record(plan["x"][0], StepOutcome::Done)).unwrap();
        st.record("x", record(plan["x"][1], StepOutcome::Skipped)).unwrap();
        st.save(&dir).unwrap();

        let back = State::load(&dir).unwrap();
        assert_eq!(back, st);
        assert_eq!(back.position("x"), 2);
        assert_eq!(back.position("y"), 0);
        assert_eq!(back.remaining("x", &plan["x"]), &plan["x"][2..]);
        assert_eq!(back.remaining("y", &plan["y"]), &plan["y"][..]);
        assert_eq!(back.failures.len(), 1);
        assert_eq!(back.failures[0].profile, "b");
        assert!(back.failures[0].reason.contains("SYS011"));
        assert!(!back.complete(&plan));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(State::path(&dir)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_half_written_temporary_file_is_ignored() {
        let dir = tempdir("torn");
        let spec = spec();
        let plan = schedule::plan(&spec);
        let mut st = State::new(spec);
        st.record("y", record(plan["y"][0], StepOutcome::Done)).unwrap();
        st.save(&dir).unwrap();
        // A run killed while writing the next state leaves a torn temporary file behind.
        let full = serde_json::to_vec_pretty(&st).unwrap();
        std::fs::write(dir.join("state.tmp"), &full[..full.len() / 2]).unwrap();
        let back = State::load(&dir).unwrap();
        assert_eq!(back.position("y"), 1);
        // And the next save replaces it.
        st.record("y", record(plan["y"][1], StepOutcome::Done)).unwrap();
        st.save(&dir).unwrap();
        assert_eq!(State::load(&dir).unwrap().position("y"), 2);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn out_of_order_records_and_foreign_files_are_refused() {
        let spec = spec();
        let plan = schedule::plan(&spec);
        let mut st = State::new(spec);
        let err = st.record("x", record(plan["x"][1], StepOutcome::Done)).unwrap_err();
        assert!(err.to_string().contains("step 0 was next"), "{err}");

        let dir = tempdir("foreign");
        std::fs::create_dir_all(&dir).unwrap();
        assert!(State::load(&dir).unwrap_err().to_string().contains("output directory"));
        std::fs::write(State::path(&dir), b"{\"schema\": \"other/v1\"}").unwrap();
        assert!(State::load(&dir).is_err());
        let mut v = serde_json::to_value(&st).unwrap();
        v["schema"] = "rftune.experiment-state/v9".into();
        std::fs::write(State::path(&dir), serde_json::to_vec(&v).unwrap()).unwrap();
        assert!(crate::error::report(&State::load(&dir).unwrap_err()).contains("v9"));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn complete_when_every_host_is_done() {
        let spec = spec();
        let plan = schedule::plan(&spec);
        let mut st = State::new(spec);
        for (host, steps) in &plan {
            for s in steps {
                st.record(host, record(*s, StepOutcome::Done)).unwrap();
            }
        }
        assert!(st.complete(&plan));
        assert!(st.remaining("x", &plan["x"]).is_empty());
    }
}
