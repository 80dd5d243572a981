//! The sweep and the sizes: the published defaults (files totalling more than twice the RAM of
//! every client and server, 8 MiB records, 2^21 metadata files at 1,024 per directory), the
//! quick mode for small machines, how threads are spread over clients (round robin, as the
//! papers do), and what each thread of a step gets.

use super::Test;
use serde::{Deserialize, Serialize};

/// Whose sizes a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The papers' sizes (options may still override some; the document lists them).
    Published,
    /// Scaled down for a small machine: every point whose data set is under twice the RAM is
    /// marked cache-affected.
    Quick,
}

/// Bytes in a GiB.
const GIB: u64 = 1 << 30;

/// The most threads a sweep of the defaults reaches (the papers' largest).
pub(crate) const MAX_DEFAULT_THREADS: u32 = 1024;

/// The most threads one fio run can have (fio 3.33's `REAL_MAX_JOBS`).
pub(crate) const FIO_MAX_JOBS: u32 = 4096;

/// Files per metadata directory (mdtest `-I 1024`).
pub(crate) const FILES_PER_DIR: u64 = 1024;

/// The sizes of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sizes {
    /// Bytes all threads of a step write in the sequential tests and lay out for the random
    /// test, split evenly between them.
    pub data_bytes: u64,
    /// Transfer size of the sequential tests (and of laying out the random test's files).
    pub record_bytes: u64,
    /// Transfer size of the random test.
    pub random_record_bytes: u64,
    /// Bytes of random I/O per operation and step, all threads together (the bounded total).
    pub random_io_bytes: u64,
    /// The longest a random operation may run, s (it ends at whichever bound comes first).
    pub random_runtime_s: u64,
    /// Metadata files per step, all threads together.
    pub md_files: u64,
    /// Metadata files per directory.
    pub md_files_per_dir: u64,
    /// The metadata file sizes, bytes (0: empty files).
    pub md_file_sizes: Vec<u64>,
}

impl Default for Sizes {
    fn default() -> Self {
        Self::published(0)
    }
}

impl Sizes {
    /// The papers' sizes for clients and servers whose largest RAM is `ram_bytes`: data of twice
    /// that (rounded up to a GiB), 8 MiB records, 4 KiB random transfers bounded at 4 GiB or
    /// five minutes per operation (the papers bound the random total without one figure for it),
    /// 2^21 metadata files of 0, 3 and 4 KiB.
    pub fn published(ram_bytes: u64) -> Self {
        Self {
            data_bytes: (2 * ram_bytes).div_ceil(GIB).max(1) * GIB,
            record_bytes: 8 << 20,
            random_record_bytes: 4 << 10,
            random_io_bytes: 4 * GIB,
            random_runtime_s: 300,
            md_files: 1 << 21,
            md_files_per_dir: FILES_PER_DIR,
            md_file_sizes: vec![0, 3 << 10, 4 << 10],
        }
    }

    /// Scaled down for a small machine: 1 GiB of data, 256 MiB or 30 s of random I/O,
    /// 2^14 metadata files.
    pub fn quick() -> Self {
        Self {
            data_bytes: GIB,
            random_io_bytes: 256 << 20,
            random_runtime_s: 30,
            md_files: 1 << 14,
            ..Self::published(0)
        }
    }

    /// Bytes each of `threads` threads writes in the sequential tests and lays out in the random
    /// one: an even share of the data in whole records, at least one.
    pub fn per_thread(&self, threads: u32) -> u64 {
        let record = self.record_bytes.max(1);
        (self.data_bytes / u64::from(threads.max(1)) / record).max(1) * record
    }

    /// Random I/O bytes per thread: an even share of the bounded total in whole transfers, at
    /// least one.
    pub fn random_per_thread(&self, threads: u32) -> u64 {
        let record = self.random_record_bytes.max(1);
        (self.random_io_bytes / u64::from(threads.max(1)) / record).max(1) * record
    }

    /// Metadata directories per thread: the files' directories shared evenly (mdtest's
    /// `files / 1,024 / threads`); 0 when there are fewer directories than threads.
    pub fn md_dirs_per_thread(&self, threads: u32) -> u64 {
        self.md_files / self.md_files_per_dir.max(1) / u64::from(threads.max(1))
    }

    /// The bytes a point's operations work on: what caches would have to hold to answer them.
    pub fn data_set(&self, test: Test, threads: u32, file_size: Option<u64>) -> u64 {
        match test {
            Test::NToN | Test::NTo1 | Test::Random => self.per_thread(threads) * u64::from(threads),
            Test::Metadata => {
                self.md_dirs_per_thread(threads) * self.md_files_per_dir * u64::from(threads) * file_size.unwrap_or(0)
            }
        }
    }

    /// The most bytes a step of `test` holds on the file system at once, for the free-space
    /// check (metadata files count at least a 4 KiB block each).
    pub fn footprint(&self, test: Test, threads: u32) -> u64 {
        match test {
            Test::Metadata => {
                let largest = self.md_file_sizes.iter().copied().max().unwrap_or(0);
                self.md_dirs_per_thread(threads)
                    * self.md_files_per_dir
                    * u64::from(threads)
                    * largest.div_ceil(4096).max(1)
                    * 4096
            }
            _ => self.data_set(test, threads, None),
        }
    }
}

/// The default sweep: 1, 2, 4 … up to `cores` (all clients' together) and at most `max` (1,024
/// for the papers' sizes, their largest; 8 in quick mode).
pub fn sweep(cores: u32, max: u32) -> Vec<u32> {
    let top = cores.clamp(1, max.max(1));
    std::iter::successors(Some(1u32), |t| t.checked_mul(2))
        .take_while(|t| *t <= top)
        .collect()
}

/// Threads per client when `threads` are spread round robin over `clients` clients (thread
/// `i` on client `i mod clients`), as the papers spread them over their compute nodes.
pub fn round_robin(threads: u32, clients: usize) -> Vec<u32> {
    let c = u32::try_from(clients.max(1)).unwrap_or(u32::MAX);
    (0..c)
        .map(|k| if k < threads % c { threads / c + 1 } else { threads / c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_data_is_twice_the_ram_in_whole_gib_and_split_in_whole_records() {
        let s = Sizes::published(24_000_000_000);
        assert_eq!(s.data_bytes, 45 * GIB, "48 GB is 44.7 GiB: rounded up");
        assert_eq!(s.per_thread(1), 45 * GIB);
        assert_eq!(s.per_thread(7) % s.record_bytes, 0);
        assert!(s.per_thread(7) * 7 <= s.data_bytes && s.per_thread(7) * 7 > s.data_bytes - 7 * s.record_bytes);
        // 2^21 files, 1,024 a directory: 2,048 directories, 2 per thread at 1,024 threads.
        assert_eq!(s.md_dirs_per_thread(1024), 2);
        assert_eq!(s.md_dirs_per_thread(3), 682);
        assert_eq!(s.data_set(Test::Metadata, 1024, Some(3072)), (1 << 21) * 3072);
        assert_eq!(s.footprint(Test::Metadata, 1), (1 << 21) * 4096);
        // A tiny data size still gives every thread a record.
        let tiny = Sizes {
            data_bytes: 1,
            ..Sizes::quick()
        };
        assert_eq!(tiny.per_thread(4), 8 << 20);
        assert_eq!(tiny.random_per_thread(1 << 20), 4096);
    }

    #[test]
    fn sweeps_double_up_to_the_cores_and_threads_go_round_robin() {
        assert_eq!(sweep(48, MAX_DEFAULT_THREADS), [1, 2, 4, 8, 16, 32]);
        assert_eq!(sweep(2, 8), [1, 2]);
        assert_eq!(sweep(100_000, MAX_DEFAULT_THREADS).last(), Some(&1024));
        assert_eq!(sweep(0, 8), [1]);
        assert_eq!(round_robin(7, 3), [3, 2, 2]);
        assert_eq!(round_robin(2, 3), [1, 1, 0]);
        assert_eq!(round_robin(512, 16), [32; 16]);
        assert_eq!(round_robin(5, 1), [5]);
    }
}
