//! `rftune bench ...` arguments.

use super::{ConnectArgs, parse_duration};
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
    /// Change per metric between two bench documents (e.g. two BIOS profiles), judged like an
    /// experiment: each repeat is a sample, 95% intervals of the difference (bootstrap of
    /// medians, Welch's t; in percent), "better"/"worse" only when both exclude zero on one
    /// side, else "within noise"; "too few runs" below two repeats a side (use --repeat 3+).
    Compare(CompareArgs),
}

/// Options shared by the benchmarks.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Sample power from this server's BMC during the run and report performance per watt.
    #[arg(long, value_name = "URL")]
    pub bmc: Option<String>,
    /// How to connect to --bmc.
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Time between power readings.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub power_interval: Duration,
    /// Idle power baseline measured before the run (with --bmc).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub idle: Duration,
    /// Run everything this many times; results report the median and coefficient of variation.
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

/// `rftune bench compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline bench.json.
    pub a: PathBuf,
    /// The run to compare with it.
    pub b: PathBuf,
}
