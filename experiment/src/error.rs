//! The experiment's failures, as variants a caller can match: its own (a file that cannot be
//! used as given, a run refused before it started, a profile that did not converge, a host
//! without the programs a benchmark needs), and the engine's and host-bench's passed on as they
//! are. `Display` is this layer; causes are `source()` links, so [`report`] or `{:#}` of anyhow
//! print the chain once, as the engine's errors do.

pub use rftune_engine::error::report;

/// The experiment's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine's failure (a host's, a profile's, the audit log's, a state file's), as the
    /// engine words it.
    #[error(transparent)]
    Engine(#[from] rftune_engine::Error),
    /// A command on a host's OS or a benchmark failed (host-bench's error, as it words it).
    #[error(transparent)]
    Bench(#[from] host_bench::Error),
    /// Input that cannot be used as given: an experiment file, a state file, results that
    /// cannot be compared. The message names the input and what is wrong with it.
    #[error("{0}")]
    BadInput(String),
    /// The experiment was not started because a host cannot take one of its profiles (or
    /// cannot be changed at all); nothing was written to any host. One line per host and
    /// profile.
    #[error("the experiment was not started (nothing was changed on any host):\n  {}", .0.join("\n  "))]
    PreflightRefused(Vec<String>),
    /// A profile was applied but the host does not show it afterwards: the summary says what
    /// is left.
    #[error("{0}")]
    NotConverged(String),
    /// The host lacks the program a benchmark runs with (rftune, or fio for storage).
    #[error("{0}")]
    MissingProgram(String),
    /// A file or directory could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// JSON could not be read or written.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// What was being done when the failure below happened.
    #[error("{what}")]
    Context {
        /// What was being done.
        what: String,
        /// The failure.
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// Input that cannot be used as given; `message` names the input and what is wrong.
    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::BadInput(message.into())
    }

    /// This error below `what` was being done.
    #[must_use]
    pub fn context(self, what: impl Into<String>) -> Self {
        Self::Context {
            what: what.into(),
            source: Box::new(self),
        }
    }
}

/// Adds what was being done to a failure.
pub trait Context<T> {
    /// With `what` as the outer layer.
    fn context(self, what: impl Into<String>) -> Result<T>;
    /// With a lazily built `what` as the outer layer.
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.into().context(what))
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| e.into().context(what()))
    }
}

/// Returns early with [`Error::BadInput`] built like `format!`.
macro_rules! bad_input {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::BadInput(format!($($arg)*)))
    };
}
pub(crate) use bad_input;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_reads_as_the_engine_s_would_and_names_each_layer_once() {
        let engine: rftune_engine::Error = rftune_engine::HostError::new(
            "r1",
            rftune_engine::HostErrorKind::PendingWork,
            "2 BIOS value(s) already staged",
        )
        .into();
        let e = Error::from(engine.context("applying performance")).context("applying the profile");
        assert_eq!(
            report(&e),
            "applying the profile: applying performance: r1: 2 BIOS value(s) already staged"
        );
        let io: Result<()> = Err(std::io::Error::other("disk full")).context("writing state.json");
        assert_eq!(report(&io.unwrap_err()), "writing state.json: disk full");
        let refused = Error::PreflightRefused(vec!["h1: profile \"a\": no".into(), "h2: locked".into()]);
        assert_eq!(
            refused.to_string(),
            "the experiment was not started (nothing was changed on any host):\n  h1: profile \"a\": no\n  h2: locked"
        );
    }
}
