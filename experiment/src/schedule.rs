//! The steps of each host: which profile, which repeat, in which order. Interleaved runs
//! A B A B (drift over time spreads over every profile), blocked A A B B (fewest reboots), and
//! random a permutation of the interleaved steps drawn from the experiment's seed and the host's
//! name, so every host has its own order and the same file always gives the same schedule
//! (which `resume` relies on). Hosts measured together (a file system's servers) share one
//! order.

use crate::spec::{Order, Spec};
use crate::stable_hash;
use host_bench::stats::SplitMix64;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One step: apply `profile`, then run every benchmark once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Position in the host's sequence, from 0.
    pub index: usize,
    /// Index into the experiment's profiles (0 is the baseline).
    pub profile: usize,
    /// Which repeat of this profile on this host, from 0, in the order they run.
    pub repeat: u32,
}

/// The steps of one host for `profiles` profiles measured `repeats` times each.
pub(crate) fn steps(profiles: usize, repeats: u32, order: Order, seed: u64, host: &str) -> Vec<Step> {
    let mut pairs: Vec<(usize, u32)> = match order {
        Order::Interleaved | Order::Random => (0..repeats).flat_map(|r| (0..profiles).map(move |p| (p, r))).collect(),
        Order::Blocked => (0..profiles).flat_map(|p| (0..repeats).map(move |r| (p, r))).collect(),
    };
    if order == Order::Random {
        let mut rng = SplitMix64::new(seed ^ stable_hash(host));
        // Fisher–Yates.
        for i in (1..pairs.len()).rev() {
            let j = rng.below(i + 1);
            pairs.swap(i, j);
        }
        // Number the repeats of each profile in the order they now run.
        let mut next = vec![0u32; profiles];
        for (p, r) in &mut pairs {
            *r = next[*p];
            next[*p] += 1;
        }
    }
    pairs
        .into_iter()
        .enumerate()
        .map(|(index, (profile, repeat))| Step { index, profile, repeat })
        .collect()
}

/// The steps of every host of `spec`, by host name. With a benchmark of every host at once (a
/// file system's servers), the hosts take their steps together: one order for all, drawn for
/// the experiment's name.
pub(crate) fn plan(spec: &Spec) -> BTreeMap<String, Vec<Step>> {
    let together = spec.benchmarks.filesystem.is_some();
    spec.hosts
        .iter()
        .map(|h| {
            let whose = if together { spec.name() } else { &h.name };
            (
                h.name.clone(),
                steps(
                    spec.profiles.len(),
                    spec.repeats,
                    spec.order,
                    spec.seed.unwrap_or(0),
                    whose,
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles_of(s: &[Step]) -> Vec<usize> {
        s.iter().map(|s| s.profile).collect()
    }

    #[test]
    fn interleaved_alternates() {
        let s = steps(2, 3, Order::Interleaved, 0, "h");
        assert_eq!(profiles_of(&s), [0, 1, 0, 1, 0, 1]);
        assert_eq!(s.iter().map(|s| s.repeat).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2]);
        assert!(s.iter().enumerate().all(|(i, s)| s.index == i));
    }

    #[test]
    fn blocked_groups() {
        let s = steps(3, 2, Order::Blocked, 0, "h");
        assert_eq!(profiles_of(&s), [0, 0, 1, 1, 2, 2]);
        assert_eq!(s.iter().map(|s| s.repeat).collect::<Vec<_>>(), [0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn random_is_a_deterministic_permutation_per_host() {
        let a = steps(3, 4, Order::Random, 42, "host-a");
        assert_eq!(a, steps(3, 4, Order::Random, 42, "host-a"));
        // Same multiset of profiles as interleaved, each repeat numbered 0..4 in running order.
        let mut sorted = profiles_of(&a);
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
        for p in 0..3 {
            let r: Vec<u32> = a.iter().filter(|s| s.profile == p).map(|s| s.repeat).collect();
            assert_eq!(r, [0, 1, 2, 3]);
        }
        // Another host or another seed gives another order; the interleaved order is not kept.
        assert_ne!(profiles_of(&a), profiles_of(&steps(3, 4, Order::Random, 42, "host-b")));
        assert_ne!(profiles_of(&a), profiles_of(&steps(3, 4, Order::Random, 43, "host-a")));
        assert_ne!(
            profiles_of(&a),
            profiles_of(&steps(3, 4, Order::Interleaved, 42, "host-a"))
        );
    }

    #[test]
    fn plan_covers_every_host() {
        let spec = crate::spec::Spec::parse(
            r#"
profiles = ["a", "b"]
repeats = 2
order = "blocked"
[[hosts]]
name = "x"
bmc = "http://127.0.0.1:1"
os = { transport = "local" }
[[hosts]]
name = "y"
bmc = "http://127.0.0.1:2"
os = { transport = "local" }
[benchmarks.memory]
"#,
        )
        .unwrap();
        let p = plan(&spec);
        assert_eq!(p.len(), 2);
        assert_eq!(profiles_of(&p["y"]), [0, 0, 1, 1]);
    }
}
