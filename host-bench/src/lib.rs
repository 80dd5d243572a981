//! On-host benchmarks and their statistics, with no HTTP and no terminal (other hosts are
//! reached only through commands): the storage and memory runs end to end ([`run`]: checks,
//! preconditioning, repeats, power around each run, the document), the seven-test fio storage
//! suite of Dell's R7525 NVMe namespace note ([`fio`]) on this host or a remote one ([`exec`];
//! commands run here or over the system `ssh`: [`ssh`]), the file-system sweeps of Dell's HPC
//! storage designs ([`filesystem`]), STREAM memory kernels ([`stream`]), power statistics from
//! BMC readings ([`power`]), every statistic rftune computes ([`stats`]), NVMe namespace sizing
//! ([`nvme`]), raw-device safety checks ([`device`]), what a storage target is and whether it
//! may be written ([`target`]), sizes ([`units`]), what the OS shows about the host ([`host`])
//! and the `rftune.bench/v1` report with its reader, CSV rows and HTML page ([`report`]), and
//! the SVG charts of every HTML report ([`chart`]).
//!
//! ```no_run
//! let samples = [
//!     host_bench::power::Sample { t_s: 0.0, watts: 400.0 },
//!     host_bench::power::Sample { t_s: 1.0, watts: 420.0 },
//! ];
//! assert_eq!(host_bench::power::energy_joules(&samples), 410.0);
//! ```

pub mod chart;
pub mod device;
pub mod exec;
pub mod exposition;
pub mod filesystem;
pub mod fio;
pub mod host;
pub mod nvme;
pub mod power;
pub mod report;
pub mod run;
pub mod ssh;
pub mod stats;
pub mod stream;
mod sys;
pub mod target;
pub mod units;

/// What can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or device could not be read or written.
    #[error("{what}")]
    Io {
        /// What was attempted, naming the path.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A program's output could not be understood.
    #[error("{what}: {detail}")]
    Parse {
        /// Which output.
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// An external program failed.
    #[error("{program} failed: {detail}")]
    Program {
        /// The program and arguments.
        program: String,
        /// Exit status and the end of its error output.
        detail: String,
    },
    /// A safety check refused the operation.
    #[error("refused: {0}")]
    Refused(String),
    /// The arguments do not make sense together.
    #[error("{0}")]
    BadInput(String),
    /// A [`Stop`] was requested while this was running.
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// A step failed; `what` says which, and what was done about it (a target file removed).
    #[error("{what}")]
    Failed {
        /// The step, and what became of what it left.
        what: String,
        /// Why it failed.
        #[source]
        source: Box<Error>,
    },
    /// A command on a host's OS gave no usable answer: it outlived its time limit or was
    /// killed, or the host did not answer at all. The message names the command and how the
    /// host was reached.
    #[error("{0}")]
    NoAnswer(String),
    /// The power readings failed (the [`run::PowerSource`]'s own error, shown as it is).
    #[error(transparent)]
    Power(power::PowerError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let what = what.into();
    move |source| Error::Io { what, source }
}

/// A request to stop long work early (the user pressed Ctrl-C): shared by clones, checked
/// between fio runs and layout chunks, and passed to a running fio as SIGINT, on which fio
/// stops its jobs.
#[derive(Debug, Clone, Default)]
pub struct Stop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Stop {
    /// Asks everything holding a clone to stop.
    pub fn request(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether a stop was requested.
    pub fn requested(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The current UTC time as RFC 3339 with milliseconds (benchmark documents and samples).
pub fn utc_now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// The current UTC time as RFC 3339 to the second (audit records, snapshots, file names): the
/// one other form of "now" rftune writes.
pub fn utc_now_seconds() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
