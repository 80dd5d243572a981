//! `rftune experiment`: compare BIOS profiles on real hosts. For each host, in the order the
//! experiment file asks for, apply a profile through the iDRAC, wait for the OS, check what the
//! OS shows against the BIOS values in force, run the benchmarks on the host, and keep the
//! `rftune.bench/v1` documents; then compare the profiles with confidence intervals.
//!
//! The parts: [`spec`] (the experiment file), [`schedule`] (the ordered steps per host),
//! [`state`] (progress in the output directory, for `resume`), [`transport`] (commands on the
//! host's OS: local or the system `ssh`), [`stats`] (medians, bootstrap and Welch intervals,
//! verdicts) and [`report`] (the `rftune.experiment/v1` document, HTML and text).

pub mod fio_direct;
pub mod report;
pub mod run;
pub mod schedule;
pub mod spec;
pub mod state;
pub mod stats;
pub mod transport;

/// The `schema` of the experiment report document.
pub const SCHEMA: &str = "rftune.experiment/v1";

/// A small seeded pseudo-random generator (SplitMix64, Steele et al. 2014): the same seed gives
/// the same sequence on every platform and Rust version, which the randomised order and the
/// bootstrap need so that `resume` and `report` reproduce earlier results exactly. Not for
/// anything secret.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index in `0..n` (`0` when `n` is 0), without modulo bias worth noticing:
    /// Lemire's multiply-shift on 64 bits.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A stable 64-bit hash of text (FNV-1a), to derive per-host seeds that do not change between
/// Rust versions the way `DefaultHasher` may.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_hash_is_fnv1a() {
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn splitmix_matches_the_reference_sequence() {
        // Reference values of SplitMix64 seeded with 1234567 (from the algorithm's C code).
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = SplitMix64::new(7);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let i = r.below(5);
            assert!(i < 5);
            seen[i] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(r.below(0), 0);
    }
}
