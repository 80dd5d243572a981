//! rftune's experiments: compare BIOS profiles on real hosts, as a library over the engine
//! (`rftune experiment` is its command line). For each host, in the order the experiment file
//! asks for, apply a profile through the engine's apply (one reboot, verified), wait for the OS,
//! check what the OS shows against the BIOS values in force, run the benchmarks on the host, and
//! keep the `rftune.bench/v1` documents; then compare the profiles with confidence intervals.
//!
//! The parts: [`spec`] (the experiment file), [`schedule`] (the ordered steps per host),
//! [`run`] (the steps, host by host in parallel), [`state`] (progress in the output directory,
//! for `resume`), `transport` (the file's way to the host's OS as host-bench's ssh transport,
//! and the place fio runs when rftune is not installed there), [`compare`] (profiles against the
//! baseline: medians, intervals from `host_bench::stats`, verdicts; `bench compare` uses it too)
//! and [`report`] (the `rftune.experiment/v1` document, HTML and text). Progress goes to an
//! [`Observer`] (the engine's, plus the experiment's own [`observe::Phase`]s); failures are an
//! [`Error`] that passes the engine's on as they are.

pub mod compare;
pub mod error;
pub mod observe;
pub mod report;
pub mod run;
pub mod schedule;
pub mod spec;
pub mod state;
pub(crate) mod transport;

pub use error::{Error, Result};
pub use observe::Observer;

/// The `schema` of the experiment report document.
pub const SCHEMA: &str = "rftune.experiment/v1";

/// A stable 64-bit hash of text (the engine's FNV-1a), to derive per-host seeds that do not
/// change between Rust versions the way `DefaultHasher` may.
pub fn stable_hash(text: &str) -> u64 {
    rftune_engine::hash::fnv1a64(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_hash_is_fnv1a() {
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
