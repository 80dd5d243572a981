//! How an experiment reports where it is: each host's steps (a profile applied, the OS awaited,
//! a benchmark run) as [`Event`]s to an [`Observer`], which also hears the engine's events of
//! every apply and connection. The experiment never prints.

use std::fmt;

/// Receives an experiment's progress: the engine's events (its supertrait) and the
/// experiment's own. Called from many tasks at once; keep it quick.
pub trait Observer: rftune_engine::Observer {
    /// One experiment event.
    fn experiment(&self, event: &Event);
}

/// Ignores the experiment's events as it ignores the engine's.
impl Observer for rftune_engine::Silent {
    fn experiment(&self, _: &Event) {}
}

/// A host's experiment work entered a phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The host's name.
    pub host: String,
    /// What it is doing now.
    pub phase: Phase,
}

impl Event {
    /// `host` entered `phase`.
    pub fn new(host: &str, phase: Phase) -> Self {
        Self {
            host: host.to_owned(),
            phase,
        }
    }
}

impl fmt::Display for Event {
    /// `r7625-01: step 2 applies low-latency`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.host, self.phase)
    }
}

/// The phases of an experiment's step on a host, in order; the apply between the first two
/// reports the engine's phases.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Phase {
    /// A step applies its profile.
    Step {
        /// The step's number.
        index: usize,
        /// The profile.
        profile: String,
    },
    /// Waiting for the host's OS to answer.
    WaitingForOs,
    /// A step runs a benchmark (`storage`, `memory`).
    Benchmark {
        /// The step's number.
        index: usize,
        /// The benchmark.
        kind: String,
        /// How it runs when not through rftune on the host (`fio directly`).
        how: Option<String>,
    },
}

impl Phase {
    /// A stable name for logs and scripts (`experiment_step`, `waiting_for_os`, `benchmark`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Step { .. } => "experiment_step",
            Self::WaitingForOs => "waiting_for_os",
            Self::Benchmark { .. } => "benchmark",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Step { index, profile } => write!(f, "step {index} applies {profile}"),
            Self::WaitingForOs => f.write_str("waiting for the OS"),
            Self::Benchmark { index, kind, how: None } => write!(f, "step {index} runs the {kind} benchmark"),
            Self::Benchmark {
                index, how: Some(how), ..
            } => write!(f, "step {index} runs {how}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_as_one_line_per_host_with_stable_names() {
        let step = Event::new(
            "r1",
            Phase::Step {
                index: 2,
                profile: "low-latency".into(),
            },
        );
        assert_eq!(step.to_string(), "r1: step 2 applies low-latency");
        assert_eq!(step.phase.name(), "experiment_step");
        let bench = Phase::Benchmark {
            index: 2,
            kind: "storage".into(),
            how: None,
        };
        assert_eq!(bench.to_string(), "step 2 runs the storage benchmark");
        let direct = Phase::Benchmark {
            index: 2,
            kind: "storage".into(),
            how: Some("fio directly (no rftune on the host)".into()),
        };
        assert_eq!(direct.to_string(), "step 2 runs fio directly (no rftune on the host)");
        assert_eq!(
            (Phase::WaitingForOs.to_string().as_str(), Phase::WaitingForOs.name()),
            ("waiting for the OS", "waiting_for_os")
        );
    }
}
