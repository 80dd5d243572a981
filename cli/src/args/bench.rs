//! `rftune bench ...` arguments.

use super::common::{ConnectArgs, parse_duration};
use std::path::PathBuf;
use std::time::Duration;

/// `rftune bench ...`.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Dell's seven-test fio suite for NVMe (sequential read/write 128k QD16, random read/write 4k QD32,
    /// random 70/30, 50/50, 30/70 mixes 4k QD32) on a file or block device.
    ///
    /// A file target is the safe default: rftune creates it (after checking that its filesystem
    /// keeps 1%, at least 256 MiB, free afterwards), removes it again if the run fails or is
    /// interrupted, and will not overwrite a file it did not create unless --overwrite is given. Writing to a raw device destroys its data: it is
    /// refused while the device is mounted (in any container: the kernel's exclusive open must
    /// succeed, and is held for the run), in use by device-mapper/MD/LVM, or holds `/`, and
    /// otherwise needs --destroy-data and --confirm-serial with the device's serial.
    Storage(StorageArgs),
    /// STREAM Copy/Scale/Add/Triad: one pinned thread per core, arrays ≥ 4× the last-level cache,
    /// best of the iterations after the first, results validated.
    Memory(MemoryArgs),
    /// A mounted file system as Dell's HPC storage papers measure one: N-to-N and N-to-1
    /// sequential throughput, N-to-N random IOPS with direct I/O, and metadata rates, each a
    /// curve over a sweep of thread counts, with fio.
    ///
    /// The tests (each thread count a step, every step run --repeat times):
    ///
    ///   n-to-n    each thread writes, then reads, its own file in 8 MiB records, fsync timed
    ///             (IOzone -i0/-i1 -c -e -w -r 8M -+n)
    ///   n-to-1    all threads write, then read, one shared file, each its own segment
    ///             (IOR -a POSIX -w/-r -s 1 -t 8m -b SIZE -e)
    ///   random    files laid out with direct I/O, then 4 KiB random reads and writes with
    ///             direct I/O on a bounded total (IOzone -i2 -I -O -r 4k)
    ///   metadata  create, stat, read, remove of empty, 3 KiB and 4 KiB files, 1,024 a
    ///             directory (mdtest -F -u -L -I 1024 -z 1 -w/-e SIZE)
    ///
    /// The published sizes make the data of a step more than twice the RAM of every client and
    /// server, so caches cannot answer: 2 × this host's RAM (and --server-memory) by default.
    /// --quick scales everything down for a small machine; either way each point whose data
    /// set was smaller is marked cache-affected. Each curve's peak is its highest median; its
    /// plateau starts at the first thread count from which every point to the end of the sweep
    /// stays within 5% of the peak.
    ///
    /// Safety: --target must be an existing, empty directory on the file system you mean to
    /// test: named with --fs-type, or else a mount point of its own (a mount point whose file
    /// system is not mounted would fill the one underneath). The run creates only
    /// rftune-fs-manifest.json and rftune-fs/ there and removes both when it ends, also on
    /// Ctrl-C (exit 130); after a killed run, --cleanup removes them and nothing else. More
    /// threads than cores, too little free space, and a non-empty target are refused.
    ///
    /// With --bmc (repeatable) or --inventory, every server's power is read around each fio
    /// run: each point gets the summed watts and its work per watt.
    ///
    /// Client hosts: without --client, this host runs every thread. With --client (repeatable),
    /// the threads are spread round robin over those hosts (thread i on client i mod N, as the
    /// papers spread them over their compute nodes) and fio's own client/server mode runs
    /// every step on all of them at once, its aggregate the figure. rftune reaches each over
    /// ssh (batch mode: your keys or agent, never a password; --ssh-config for another
    /// configuration), starts `fio --server` there on a Unix socket in a private directory,
    /// forwards it here through that ssh connection, and stops it when the run ends. The
    /// clients must run the same fio version as this host and see the same file system at
    /// --target (rftune checks: the first writes its manifest, every other reads it back).
    /// A lost ssh connection stops the run, names the client and the step, and cleans up
    /// through a client that still answers.
    #[command(visible_alias = "filesystem", verbatim_doc_comment)]
    Fs(FsArgs),
    /// Change per metric between two bench documents (e.g. two BIOS profiles), judged like an
    /// experiment: each repeat is a sample, 95% intervals of the difference (bootstrap of
    /// medians, Welch's t; in percent), "better"/"worse" only when both exclude zero on one
    /// side, else "within noise"; "too few runs" below two repeats a side (use --repeat 3+).
    /// File-system runs compare curve against curve: each point of each curve is a row, and
    /// each curve's peak and plateau are set side by side.
    ///
    /// Exit codes: 0, or 2 with --fail-on worse when a row got worse (for CI); 1 on errors.
    Compare(CompareArgs),
}

/// Options shared by the benchmarks of this host's own power.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Sample power from this server's BMC during the run and report performance per watt.
    #[arg(long, value_name = "URL")]
    pub bmc: Option<String>,
    /// How to connect to --bmc.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Repeats, power sampling and where results go.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options every benchmark takes.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Time between power readings.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub power_interval: Duration,
    /// Idle power baseline measured before the run (with --bmc).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub idle: Duration,
    /// Run everything this many times; results report the median and coefficient of variation
    /// (file-system points: the median and, from two repeats on, its 95% interval).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// A name for this run in reports and comparisons, e.g. the BIOS profile applied.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Directory for bench.json, bench.csv, report.html (and fio's raw output); default
    /// ./rftune-bench-KIND-UTCTIME.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `rftune bench storage`.
#[derive(Debug, clap::Args)]
pub struct StorageArgs {
    /// File (created at --size, with rftune's 1 MiB header in front; its directory must exist)
    /// or block device. An existing file is used only if rftune created it, or with
    /// --overwrite. A path under /dev must be an existing block device.
    #[arg(long, value_name = "FILE|DEVICE")]
    pub target: PathBuf,
    /// Bytes of the target to use: 4G, 512M, 2TiB (K, M, G, T, P and KiB…PiB are powers of
    /// 1024), or a number of bytes; default 4G for a file, the whole device for a device.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub size: Option<u64>,
    /// Measured time per test.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub runtime: Duration,
    /// Time each test runs before measuring (excluded from results and power).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub ramp: Duration,
    /// fio jobs per test (outstanding I/O = numjobs × iodepth).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub numjobs: u32,
    /// I/O engine; io_uring falls back to libaio when the kernel refuses it.
    #[arg(long, value_enum, default_value_t = EngineArg::IoUring)]
    pub ioengine: EngineArg,
    /// Tests to run, comma-separated: seqread, seqwrite, randread, randwrite, randrw70,
    /// randrw50, randrw30, or all.
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub tests: String,
    /// Write the target twice sequentially, then run 4k random-write rounds (--runtime each)
    /// until the SNIA steady-state test passes, before measuring.
    #[arg(long)]
    pub precondition: bool,
    /// Most steady-state rounds when preconditioning.
    #[arg(long, default_value_t = 25, value_name = "N")]
    pub ss_rounds: usize,
    /// Benchmark an existing file that rftune did not create, destroying its contents. Without
    /// it, a file target must be new (rftune creates it) or one rftune created earlier, which
    /// it recognises by the header in the file's first MiB (fio never writes there).
    #[arg(long)]
    pub overwrite: bool,
    /// Allow writing to a raw block device, destroying its data (needs --confirm-serial).
    #[arg(long, requires = "confirm_serial")]
    pub destroy_data: bool,
    /// The device's serial (/sys/block/DEV/device/serial or wwid), confirming --destroy-data.
    #[arg(long, value_name = "SERIAL")]
    pub confirm_serial: Option<String>,
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// `--size`, parsed before anything runs.
fn parse_size(text: &str) -> Result<u64, String> {
    host_bench::units::parse_size(text).map_err(|e| e.to_string())
}

/// fio engine choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// Linux io_uring.
    #[value(name = "io_uring")]
    IoUring,
    /// Linux native AIO.
    Libaio,
}

/// `rftune bench memory`.
#[derive(Debug, clap::Args)]
pub struct MemoryArgs {
    /// MiB per array, or auto (4× the total last-level cache).
    #[arg(long, default_value = "auto", value_name = "N|auto")]
    pub array_mib: String,
    /// Worker threads (default: one per physical core), pinned one per core.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Passes over the four kernels; the first is not counted.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    pub iterations: u32,
    /// Use non-temporal (streaming) stores: the labelled "nt-stores" variant (x86_64).
    #[arg(long)]
    pub nt_stores: bool,
    /// Theoretical peak in GB/s, instead of deriving it from the BMC's DIMM inventory.
    #[arg(long, value_name = "GB/S")]
    pub peak_gbs: Option<f64>,
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
}

/// `rftune bench fs`.
#[derive(Debug, clap::Args)]
pub struct FsArgs {
    /// An existing, empty directory on the mounted file system to test (rftune creates only
    /// rftune-fs-manifest.json and rftune-fs/ in it, and removes both when it ends).
    #[arg(long, value_name = "DIR")]
    pub target: PathBuf,
    /// The type the target's file system must have, as the kernel names it (findmnt -T DIR):
    /// ext4, xfs, nfs4, lustre, gpfs, beegfs, tmpfs; glusterfs matches fuse.glusterfs. Without
    /// it the target must be a mount point itself (its device differs from its parent's).
    #[arg(long, value_name = "TYPE")]
    pub fs_type: Option<String>,
    /// Remove what a killed run left in --target, as its manifest declares it, and nothing
    /// else (whatever rftune did not create stays, with the directories holding it); then exit.
    #[arg(long)]
    pub cleanup: bool,
    /// Tests to run, comma-separated: n-to-n, n-to-1, random, metadata, or all.
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub tests: String,
    /// The sweep: thread counts, comma-separated, e.g. 1,2,4,8 (threads of all clients).
    /// Default 1, 2, 4 … up to the cores, at most 1024 (the papers' largest; 8 with --quick).
    #[arg(long, value_name = "LIST", value_delimiter = ',', num_args = 1)]
    pub threads: Option<Vec<u32>>,
    /// Allow more threads than cores (the points are marked; they measure some context
    /// switching too).
    #[arg(long)]
    pub oversubscribe: bool,
    /// Sizes for a small machine: 1 GiB of data per step, random I/O bounded at 256 MiB or
    /// 30 s, 16,384 metadata files (the options below still override them).
    #[arg(long)]
    pub quick: bool,
    /// Data per step of the sequential and random tests, split evenly between the threads.
    /// Default twice the largest RAM of this host and --server-memory, in whole GiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub data_size: Option<u64>,
    /// The largest RAM of the file system's servers: the default data size also exceeds
    /// twice that, and smaller data sets are marked cache-affected.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub server_memory: Option<u64>,
    /// Transfer size of the sequential tests (default 8M).
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub record_size: Option<u64>,
    /// Transfer size of the random test (default 4K).
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub random_record_size: Option<u64>,
    /// Random I/O per operation and step, all threads together (default 4G; 256M with --quick).
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub random_io: Option<u64>,
    /// The longest a random operation runs, whatever --random-io says (default 5m; 30s with
    /// --quick).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub random_runtime: Option<Duration>,
    /// Metadata files per step, all threads together, 1,024 a directory, each thread its own
    /// directories (default 2097152, the papers' 2^21; 16384 with --quick).
    #[arg(long, value_name = "N")]
    pub md_files: Option<u64>,
    /// Metadata file sizes, comma-separated (default 0,3K,4K: empty files, and files that do
    /// and do not fit in a 4 KiB inode beside its metadata on GPFS).
    #[arg(long, value_name = "LIST", value_delimiter = ',', num_args = 1, value_parser = parse_bytes)]
    pub md_file_sizes: Option<Vec<u64>>,
    /// A client host to run threads on, over ssh (repeatable): [USER@]HOST[:PORT] or a Host
    /// alias of your ssh configuration. Default: this host alone, without ssh.
    #[arg(long = "client", value_name = "[USER@]HOST[:PORT]")]
    pub clients: Vec<String>,
    /// An ssh configuration file for --client (ssh -F), instead of ~/.ssh/config.
    #[arg(long, value_name = "FILE", requires = "clients")]
    pub ssh_config: Option<PathBuf>,
    /// A BMC of the file system's servers whose power to read around each step (repeatable):
    /// each point then has the watts summed over them and its work per watt.
    #[arg(long = "bmc", value_name = "URL")]
    pub bmcs: Vec<String>,
    /// The servers' BMCs from a TOML inventory (its [[bmc]] entries), instead of --bmc.
    #[arg(long, value_name = "FILE", conflicts_with = "bmcs")]
    pub inventory: Option<PathBuf>,
    /// Only inventory entries carrying this tag (repeatable: all must match).
    #[arg(long = "tag", value_name = "TAG", requires = "inventory")]
    pub tags: Vec<String>,
    /// How to connect to the BMCs.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Repeats, power sampling and where results go.
    #[command(flatten)]
    pub run: RunArgs,
}

/// A size that may be small or zero (`--md-file-sizes 0,3K`).
fn parse_bytes(text: &str) -> Result<u64, String> {
    host_bench::units::parse_bytes(text).map_err(|e| e.to_string())
}

/// `rftune bench compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline bench.json.
    pub a: PathBuf,
    /// The run to compare with it.
    pub b: PathBuf,
    /// Exit 2 when a compared row got worse (both 95% intervals on the worse side): for CI,
    /// after the table or document is printed.
    #[arg(long, value_enum, value_name = "VERDICT")]
    pub fail_on: Option<FailOn>,
    /// Compare only these metrics (repeatable), e.g. --metric iops --metric bandwidth; the
    /// rest are neither shown nor judged.
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
}

/// Which verdict fails `bench compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A row judged worse.
    Worse,
}
