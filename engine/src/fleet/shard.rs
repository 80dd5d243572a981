//! `--shard K/N`: one of N processes takes a stable share of the inventory, so a job engine
//! (a Kubernetes Indexed Job, a Slurm array, AWX) can split a fleet without any coordination.
//!
//! A host belongs to shard `jump(mix(fnv1a64(name)), N) + 1`: the 64-bit FNV-1a hash of its
//! inventory `name` (UTF-8 bytes), the SplitMix64 finaliser to spread names that differ in one
//! character, then Lamping and Veach's jump consistent hash. Every step is fixed integer (and,
//! for jump, IEEE double) arithmetic, so the answer is the same on every platform, Rust version
//! and run — unlike `std`'s `DefaultHasher`, whose algorithm may change. A host's shard depends
//! only on its own name and N: adding or removing hosts never moves another host, and going
//! from N to N+1 shards moves only about 1/(N+1) of the hosts (those go to the new shard).

use super::BmcEntry;
use crate::error::Result;
use crate::hash::fnv1a64;
use std::fmt;
use std::str::FromStr;

/// One share of a fleet: shard `index` of `count`, both counted from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// Shard `index` (1 ≤ index ≤ count) of `count`.
    pub fn new(index: u32, count: u32) -> Result<Self> {
        if count == 0 {
            return Err(crate::Error::bad_input(format!(
                "shard {index}/0: the number of shards N must be at least 1 (e.g. 1/4 … 4/4)"
            )));
        }
        if index == 0 {
            return Err(crate::Error::bad_input(format!(
                "shard 0/{count}: shards count from 1, so K must be 1 to {count} (a 0-based index such as JOB_COMPLETION_INDEX needs +1)"
            )));
        }
        if index > count {
            return Err(crate::Error::bad_input(format!(
                "shard {index}/{count}: there are only {count} shard(s), so K must be 1 to {count}"
            )));
        }
        Ok(Self { index, count })
    }

    /// Which shard (from 1).
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many shards.
    pub fn count(self) -> u32 {
        self.count
    }

    /// The shard (from 1) that the host called `name` belongs to among `count` (at least 1).
    pub fn of(name: &str, count: u32) -> u32 {
        jump(mix(fnv1a64(name.as_bytes())), count.max(1)) + 1
    }

    /// Whether the host called `name` is in this shard.
    pub fn contains(self, name: &str) -> bool {
        Self::of(name, self.count) == self.index
    }

    /// The entries in this shard, in their order.
    pub fn select(self, entries: Vec<BmcEntry>) -> Vec<BmcEntry> {
        entries.into_iter().filter(|e| self.contains(&e.name)).collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = crate::Error;

    /// `K/N`, e.g. `2/4`.
    fn from_str(s: &str) -> Result<Self> {
        let parse = |part: &str| part.trim().parse::<u32>().ok();
        match s.split_once('/').map(|(k, n)| (parse(k), parse(n))) {
            Some((Some(k), Some(n))) => Self::new(k, n),
            _ => Err(crate::Error::bad_input(format!(
                "shard {s:?} is not K/N: give this process's shard K and the number of shards N, e.g. 2/4"
            ))),
        }
    }
}

/// The SplitMix64 finaliser: every input bit affects every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Jump consistent hash (Lamping and Veach, 2014): a bucket in `0..buckets` (`buckets` ≥ 1).
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
fn jump(mut key: u64, buckets: u32) -> u32 {
    let (mut b, mut j): (i64, i64) = (-1, 0);
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        // (b + 1) · 2³¹ / ((key >> 33) + 1): both operands are exact in a double.
        j = ((b + 1) as f64 * ((1_u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    u32::try_from(b).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(range: std::ops::Range<u32>) -> Vec<String> {
        range.map(|i| format!("r7625-{:04}", i + 1)).collect()
    }

    fn entries(names: &[String]) -> Vec<BmcEntry> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| BmcEntry {
                name: n.clone(),
                ..BmcEntry::from_url(&format!("http://127.0.0.1:{}", 9000 + i)).unwrap()
            })
            .collect()
    }

    #[test]
    fn every_host_is_in_exactly_one_shard_and_shards_are_balanced() {
        let all = names(0..4000);
        let mut seen = std::collections::BTreeMap::new();
        for k in 1..=4 {
            let shard = Shard::new(k, 4).unwrap();
            let picked = shard.select(entries(&all));
            // 4000 names: each shard holds a quarter, within a few percent.
            assert!((900..=1100).contains(&picked.len()), "shard {shard}: {}", picked.len());
            for e in picked {
                assert!(seen.insert(e.name.clone(), k).is_none(), "{} in two shards", e.name);
            }
        }
        assert_eq!(seen.len(), all.len(), "every host in some shard");
        // One shard is the whole fleet, in order.
        let one = Shard::new(1, 1).unwrap().select(entries(&all));
        assert_eq!(one.len(), all.len());
        assert_eq!(one[17].name, all[17]);
    }

    #[test]
    fn adding_hosts_moves_none_and_adding_a_shard_moves_few() {
        let before = names(0..1000);
        let after = names(0..1200);
        for n in [1, 3, 4, 16] {
            for k in 1..=n {
                let shard = Shard::new(k, n).unwrap();
                let was: Vec<String> = shard.select(entries(&before)).into_iter().map(|e| e.name).collect();
                // The grown inventory, listed in another order and on other ports.
                let mut grown = entries(&after);
                grown.reverse();
                let is: Vec<String> = shard.select(grown).into_iter().map(|e| e.name).collect();
                assert!(was.iter().all(|h| is.contains(h)), "shard {shard} lost a host");
                assert!(
                    is.iter().all(|h| was.contains(h) || !before.contains(h)),
                    "shard {shard} gained an old host"
                );
            }
        }
        // 4 → 5 shards: about a fifth of the hosts move, all of them to the new shard 5.
        let moved: Vec<&String> = after.iter().filter(|n| Shard::of(n, 4) != Shard::of(n, 5)).collect();
        assert!((180..=300).contains(&moved.len()), "{} of 1200 moved", moved.len());
        assert!(moved.iter().all(|n| Shard::of(n, 5) == 5));
    }

    #[test]
    fn the_hash_is_pinned() {
        // FNV-1a's own vectors are pinned in `crate::hash`.
        // Jump hash: the same key always lands in bucket 0 of 1, and buckets stay in range.
        assert_eq!(jump(12345, 1), 0);
        assert!((0..100).all(|k| jump(mix(k), 7) < 7));
        // The shards of a few names (computed independently, in Python, when this was written):
        // a change here would reshuffle every sharded fleet, so it must be deliberate.
        let pinned: Vec<u32> = ["r7625-0001", "r7625-0002", "idrac-a.example", "127.0.0.1:9001", ""]
            .iter()
            .map(|n| Shard::of(n, 4))
            .collect();
        assert_eq!(pinned, PINNED);
    }

    const PINNED: [u32; 5] = [4, 1, 2, 4, 1];

    #[test]
    fn k_of_n_is_checked_with_clear_errors() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard::new(2, 4).unwrap());
        assert_eq!(" 1 / 1 ".parse::<Shard>().unwrap().to_string(), "1/1");
        let err = |s: &str| s.parse::<Shard>().unwrap_err().to_string();
        assert!(
            err("0/4").contains("count from 1, so K must be 1 to 4"),
            "{}",
            err("0/4")
        );
        assert!(
            err("5/4").contains("only 4 shard(s), so K must be 1 to 4"),
            "{}",
            err("5/4")
        );
        assert!(err("1/0").contains("N must be at least 1"), "{}", err("1/0"));
        for bad in ["", "4", "a/b", "1/4/2", "-1/4", "1/"] {
            assert!(err(bad).contains("is not K/N"), "{bad}: {}", err(bad));
        }
    }
}
