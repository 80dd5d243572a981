//! The file-system benchmarks of Dell's HPC storage designs (the "Dell Validated Design for HPC
//! PixStor Storage" papers and the Ready Solutions before them), run with fio against a
//! directory on a mounted file system: N-to-N and N-to-1 sequential throughput, N-to-N random
//! IOPS with direct I/O, and metadata rates (create, stat, read, remove of empty, 3 KiB and
//! 4 KiB files, 1,024 per directory), each as a curve over a sweep of thread counts.
//!
//! By job: the tests and operations (here), the sweep and sizes (`sizes`), fio's job files
//! (`job`), the names the run creates, its manifest and the cleanup that removes exactly those
//! (`layout`), which file system holds the target (`mount`), and the run itself with its
//! refusals (`run`). The document's part is [`crate::report::FileSystemBench`].
//!
//! The clients are this host, running fio itself, or several machines each running fio's
//! server (`servers`), started and reached from here over SSH, so that fio's client/server
//! mode starts every client's share of a step together and its aggregate is the point's
//! figure. Threads are spread over the clients round robin; everything per client (threads,
//! the N-to-1 ranges, file names) is computed per client.

mod job;
mod layout;
pub mod mount;
mod run;
mod servers;
mod sizes;

pub use job::{JobFile, Phase, Range, n_to_1_ranges};
pub use layout::{Cleanup, MANIFEST, ROOT, cleanup};
pub use run::{Client, FsRun, FsSettings, run};
pub use sizes::{Method, Sizes, round_robin, sweep};

use serde::{Deserialize, Serialize};

/// One test of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Test {
    /// Each thread writes, then reads, its own file in large records, close and fsync timed.
    #[serde(rename = "n-to-n")]
    NToN,
    /// All threads write, then read, one shared file, each its own contiguous segment.
    #[serde(rename = "n-to-1")]
    NTo1,
    /// Files written sequentially with direct I/O, then 4 KiB random reads and writes with
    /// direct I/O on a bounded total.
    #[serde(rename = "random")]
    Random,
    /// Files only: create, stat, read, remove, 1,024 files per directory.
    #[serde(rename = "metadata")]
    Metadata,
}

impl Test {
    /// The suite, in the papers' order.
    pub const ALL: [Self; 4] = [Self::NToN, Self::NTo1, Self::Random, Self::Metadata];

    /// Its name on the command line and in documents.
    pub fn name(self) -> &'static str {
        match self {
            Self::NToN => "n-to-n",
            Self::NTo1 => "n-to-1",
            Self::Random => "random",
            Self::Metadata => "metadata",
        }
    }

    /// Its name for people.
    pub fn title(self) -> &'static str {
        match self {
            Self::NToN => "N-to-N sequential",
            Self::NTo1 => "N-to-1 sequential",
            Self::Random => "N-to-N random",
            Self::Metadata => "Metadata",
        }
    }

    /// The published command it follows.
    pub fn published(self) -> &'static str {
        match self {
            Self::NToN => "IOzone -i0 / -i1 -c -e -w -r 8M -+n",
            Self::NTo1 => "IOR -a POSIX -w / -r -s 1 -t 8m -b SIZE -e",
            Self::Random => "IOzone -i2 -I -O -r 4k",
            Self::Metadata => "mdtest -F -u -L -I 1024 -z 1 -w / -e SIZE",
        }
    }

    /// Its operations, in the order they run.
    pub fn ops(self) -> &'static [Op] {
        match self {
            Self::NToN | Self::NTo1 => &[Op::Write, Op::Read],
            Self::Random => &[Op::Read, Op::Write],
            Self::Metadata => &[Op::Create, Op::Stat, Op::Read, Op::Remove],
        }
    }

    /// What its curves measure.
    pub fn measure(self) -> Measure {
        match self {
            Self::NToN | Self::NTo1 => Measure::Bandwidth,
            Self::Random => Measure::Iops,
            Self::Metadata => Measure::Ops,
        }
    }

    /// The tests of a comma-separated list (`all` for the suite), in the suite's order.
    pub fn select(list: &str) -> crate::Result<Vec<Self>> {
        let names: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if names.contains(&"all") {
            return Ok(Self::ALL.to_vec());
        }
        if let Some(unknown) = names.iter().find(|n| !Self::ALL.iter().any(|t| t.name() == **n)) {
            let known: Vec<&str> = Self::ALL.iter().map(|t| t.name()).collect();
            return Err(crate::Error::BadInput(format!(
                "unknown test {unknown:?}; known: all, {}",
                known.join(", ")
            )));
        }
        let chosen: Vec<Self> = Self::ALL.into_iter().filter(|t| names.contains(&t.name())).collect();
        if chosen.is_empty() {
            return Err(crate::Error::BadInput("no tests selected".into()));
        }
        Ok(chosen)
    }
}

/// One operation of a test: a curve of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Writing data (sequential or random).
    Write,
    /// Reading data; for metadata, opening (and for files with data, reading) each file.
    Read,
    /// Creating files (with their data, for files that have some).
    Create,
    /// `stat(2)` of each file.
    Stat,
    /// `unlink(2)` of each file.
    Remove,
}

impl Op {
    /// Its name in documents.
    pub fn name(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Read => "read",
            Self::Create => "create",
            Self::Stat => "stat",
            Self::Remove => "remove",
        }
    }
}

/// The quantity a test's curves show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// GB/s (10⁹ bytes per second), fio's aggregate bandwidth.
    Bandwidth,
    /// I/O operations per second.
    Iops,
    /// File operations per second.
    Ops,
}

impl Measure {
    /// The metric's name in figures.
    pub fn metric(self) -> &'static str {
        match self {
            Self::Bandwidth => "bandwidth",
            Self::Iops => "iops",
            Self::Ops => "ops",
        }
    }

    /// What it is, for people: `bandwidth`, `IOPS`, `file operations per second`.
    pub fn title(self) -> &'static str {
        match self {
            Self::Bandwidth => "bandwidth",
            Self::Iops => "IOPS",
            Self::Ops => "file operations per second",
        }
    }

    /// Its unit.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Bandwidth => "GB/s",
            Self::Iops => "IO/s",
            Self::Ops => "op/s",
        }
    }

    /// The figure of work per watt: its name and unit.
    pub fn per_watt(self) -> (&'static str, &'static str) {
        match self {
            Self::Bandwidth => ("mbps_per_watt", "MB/s/W"),
            Self::Iops => ("iops_per_watt", "IO/s/W"),
            Self::Ops => ("ops_per_watt", "op/s/W"),
        }
    }

    /// A value of work per watt from a value of this measure and watts (bandwidth per watt in
    /// MB/s, the unit storage documents use).
    pub fn per_watt_value(self, value: f64, watts: f64) -> f64 {
        match self {
            Self::Bandwidth => value * 1000.0 / watts,
            Self::Iops | Self::Ops => value / watts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_are_chosen_by_name_in_the_suites_order() {
        assert_eq!(Test::select("metadata,n-to-n").unwrap(), [Test::NToN, Test::Metadata]);
        assert_eq!(Test::select("all").unwrap().len(), 4);
        let e = Test::select("n-to-n,mdtest").unwrap_err().to_string();
        assert!(e.contains("\"mdtest\"") && e.contains("n-to-1"), "{e}");
        assert!(Test::select(" , ").is_err());
        assert_eq!(serde_json::to_value(Test::NTo1).unwrap(), "n-to-1");
        assert_eq!(
            Measure::Bandwidth.per_watt_value(2.0, 400.0),
            5.0,
            "2 GB/s at 400 W is 5 MB/s per W"
        );
    }
}
