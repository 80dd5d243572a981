//! fio job files, one per client, phase and step, holding everything fio can express: the
//! transfers, the direct and buffered modes, fsync inside the timing, the shared file's
//! segments, and the metadata engines of fio 3.33 (`filecreate` opens with `O_CREAT`,
//! `filestat` calls `stat(2)`, `filedelete` calls `unlink(2)`; none writes data, so files with
//! data are created and read with `psync`). What fio cannot express, the directory tree, the
//! run builds ([`super::layout`]).
//!
//! Every job runs as threads with group reporting, so fio's own aggregate (all I/O over the
//! slowest thread's time, as mdtest and IOR count) is the point's figure; page-cache
//! invalidation is off, as in IOzone and mdtest, so the data set's size alone keeps caches from
//! answering, and the document says where it was too small for that. fio's client/server mode
//! would put the client's address in front of every file name it makes up (`unique_filename`);
//! the names are already unique per client (`c<client>.<job>`, a thread's own directory), so
//! that is off, and cleanup knows every name. Files are created when
//! the job opens them (`create_on_open`), inside the timing, never laid out beforehand; phases
//! that read allow fio to create nothing.

use super::sizes::Sizes;
use super::{Op, Test, layout};
use std::fmt::Write;
use std::path::Path;

/// What a fio run of a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Lays the random test's files out, sequentially with direct I/O (not measured).
    LayOut,
    /// One measured operation.
    Measure(Op),
}

/// One step of a sweep: a test at a thread count.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step<'a> {
    /// The test.
    pub test: Test,
    /// Threads across all clients.
    pub threads: u32,
    /// Threads per client ([`super::round_robin`]).
    pub per_client: Vec<u32>,
    /// Metadata: the files' size.
    pub file_size: u64,
    /// The run's root directory, as every client sees it.
    pub root: &'a Path,
    /// The run's sizes.
    pub sizes: &'a Sizes,
}

/// A job file for one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFile {
    /// Its text.
    pub text: String,
    /// KiB for fio's `--alloc-size` when its default shared-memory pool cannot hold the job's
    /// files (fio 3.33 aborts with "smalloc OOM" past about half a million `psync` files).
    pub alloc_kib: Option<u64>,
}

/// fio's longest option value (fio 3.33 refuses longer ones), with room to spare.
const MAX_LINE: usize = 4000;

/// One writer's part of the N-to-1 shared file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The client it runs on.
    pub client: usize,
    /// Its fio clone number on that client (`$jobnum`).
    pub job: u32,
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// The N-to-1 options of client `client` of `clients`: `offset` and `offset_increment`. Thread
/// `i` of the step (client `i mod C`, clone `i div C` there) writes segment `i`, as IOR's rank
/// `i` does; fio numbers clones from 0 on every client, so each client's offset starts at its
/// own first segment.
fn n_to_1_offsets(client: usize, clients: usize, block: u64) -> (u64, u64) {
    (client as u64 * block, clients as u64 * block)
}

/// Every writer's range in the N-to-1 file, as the job files place them.
pub fn n_to_1_ranges(per_client: &[u32], block: u64) -> Vec<Range> {
    let mut out = Vec::new();
    for (client, n) in per_client.iter().enumerate() {
        let (offset, increment) = n_to_1_offsets(client, per_client.len(), block);
        for job in 0..*n {
            let start = offset + u64::from(job) * increment;
            out.push(Range {
                client,
                job,
                start,
                end: start + block,
            });
        }
    }
    out
}

impl Step<'_> {
    /// The job file of `phase` for client `client`.
    pub(crate) fn job(&self, phase: Phase, client: usize) -> JobFile {
        let mut g = vec![
            "thread".to_owned(),
            "group_reporting".to_owned(),
            "invalidate=0".to_owned(),
            "unique_filename=0".to_owned(),
        ];
        let n = self.per_client.get(client).copied().unwrap_or(0);
        let dir = self.root.join(layout::test_dir(self.test));
        let s = self.sizes;
        match (self.test, phase) {
            (Test::Metadata, Phase::Measure(op)) => return self.metadata(op, client),
            (Test::Metadata, Phase::LayOut) => {}
            (Test::NToN | Test::Random, _) => {
                g.push(format!("directory={}", fio_path(&dir)));
                g.push(format!("filename_format={}", layout::per_thread_pattern(client)));
                g.push(format!("size={}", s.per_thread(self.threads)));
            }
            (Test::NTo1, _) => {
                let block = s.per_thread(self.threads);
                let (offset, increment) = n_to_1_offsets(client, self.per_client.len(), block);
                g.push(format!("filename={}", fio_path(&dir.join(layout::SHARED))));
                g.push(format!("size={block}"));
                g.push(format!("offset={offset}"));
                g.push(format!("offset_increment={increment}"));
            }
        }
        g.push("ioengine=psync".into());
        g.push("create_on_open=1".into());
        let random = self.test == Test::Random;
        match (phase, random) {
            (Phase::LayOut, _) | (Phase::Measure(Op::Write), false) => {
                g.push(format!("bs={}", s.record_bytes));
                g.push("rw=write".into());
                g.push("end_fsync=1".into());
            }
            (Phase::Measure(op), true) => {
                g.push(format!("bs={}", s.random_record_bytes));
                g.push(format!("rw={}", if op == Op::Write { "randwrite" } else { "randread" }));
                g.push(format!("io_size={}", s.random_per_thread(self.threads)));
                g.push(format!("runtime={}", s.random_runtime_s.max(1)));
                g.push("norandommap".into());
                g.push("randrepeat=0".into());
                g.push("allow_file_create=0".into());
            }
            (Phase::Measure(_), false) => {
                g.push(format!("bs={}", s.record_bytes));
                g.push("rw=read".into());
                g.push("allow_file_create=0".into());
            }
        }
        if random {
            g.push("direct=1".into());
        }
        let mut text = String::from("[global]\n");
        for line in g {
            let _ = writeln!(text, "{line}");
        }
        let name = match phase {
            Phase::LayOut => "lay-out".to_owned(),
            Phase::Measure(op) => op.name().to_owned(),
        };
        let _ = write!(text, "[{}-{name}]\nnumjobs={n}\n", self.test.name());
        JobFile { text, alloc_kib: None }
    }

    /// A metadata phase: one section per thread of this client, each listing its files
    /// (`d<j>/f<k>` under its own directory), since fio 3.33 can spread a job's files over
    /// several directories only by naming them.
    fn metadata(&self, op: Op, client: usize) -> JobFile {
        let size = self.file_size;
        let empty = size == 0;
        // Empty files: the engines' one fake transfer per file; fio needs a size for it.
        let bs = if empty { 4096 } else { size };
        let (engine, rw) = match op {
            Op::Create | Op::Write if empty => ("filecreate", "write"),
            Op::Create | Op::Write => ("psync", "write"),
            Op::Stat => ("filestat", "read"),
            // Reading an empty file is opening and closing it (mdtest reads zero bytes).
            Op::Read if empty => ("filecreate", "read"),
            Op::Read => ("psync", "read"),
            Op::Remove => ("filedelete", "read"),
        };
        let mut text = format!(
            "[global]\nthread\ngroup_reporting\ninvalidate=0\nunique_filename=0\nioengine={engine}\nrw={rw}\nbs={bs}\nfilesize={bs}\n\
             openfiles=1\nfile_service_type=sequential\ncreate_on_open=1\n"
        );
        if !matches!(op, Op::Create | Op::Write) {
            text.push_str("allow_file_create=0\n");
        }
        let dirs = self.sizes.md_dirs_per_thread(self.threads);
        let per_dir = self.sizes.md_files_per_dir;
        let mut files = 0;
        for thread in layout::threads_of(client, &self.per_client) {
            let _ = writeln!(
                text,
                "[t{thread}]\ndirectory={}",
                fio_path(
                    &self
                        .root
                        .join(layout::test_dir(Test::Metadata))
                        .join(layout::thread_dir(thread))
                )
            );
            let mut line = String::new();
            for d in 0..dirs {
                for f in 0..per_dir {
                    let name = layout::md_file(d, f);
                    if line.len() + name.len() + 1 > MAX_LINE {
                        let _ = writeln!(text, "filename={line}");
                        line.clear();
                    }
                    if !line.is_empty() {
                        line.push(':');
                    }
                    line.push_str(&name);
                    files += 1;
                }
            }
            if !line.is_empty() {
                let _ = writeln!(text, "filename={line}");
            }
        }
        JobFile {
            text,
            alloc_kib: alloc_kib(files),
        }
    }
}

/// fio's `--alloc-size` (KiB) for a job of `files` files, when its default pool is too small:
/// 8 pools of this size; about 500 bytes a `psync` file (measured on fio 3.33), doubled.
pub(crate) fn alloc_kib(files: u64) -> Option<u64> {
    let alloc = files / 8;
    (alloc > 16 << 10).then_some(alloc)
}

/// A path as fio reads it in a file name (`:` separates names there).
fn fio_path(p: &Path) -> String {
    p.to_string_lossy().replace(':', "\\:")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filesystem::sizes::round_robin;

    fn option<'a>(text: &'a str, key: &str) -> Option<&'a str> {
        text.lines().find_map(|l| l.strip_prefix(&format!("{key}=")))
    }

    #[test]
    fn no_two_n_to_1_writers_overlap_and_together_they_cover_the_file() {
        for clients in 1..=5 {
            for threads in 1..=24 {
                let per_client = round_robin(threads, clients);
                let sizes = Sizes {
                    data_bytes: u64::from(threads) * (3 << 20),
                    record_bytes: 1 << 20,
                    ..Sizes::quick()
                };
                let root = Path::new("/pfs/rftune-fs");
                let step = Step {
                    test: Test::NTo1,
                    threads,
                    per_client: per_client.clone(),
                    file_size: 0,
                    root,
                    sizes: &sizes,
                };
                let block = sizes.per_thread(threads);
                // The ranges as each client's job file states them.
                let mut ranges = Vec::new();
                for client in 0..clients {
                    let text = step.job(Phase::Measure(Op::Write), client).text;
                    let num = |k: &str| option(&text, k).unwrap().parse::<u64>().unwrap();
                    assert_eq!(num("size"), block);
                    for job in 0..num("numjobs") {
                        let start = num("offset") + job * num("offset_increment");
                        ranges.push((start, start + num("size")));
                    }
                    assert_eq!(option(&text, "filename"), Some("/pfs/rftune-fs/n-to-1/shared"));
                }
                assert_eq!(
                    ranges,
                    n_to_1_ranges(&per_client, block)
                        .iter()
                        .map(|r| (r.start, r.end))
                        .collect::<Vec<_>>()
                );
                ranges.sort_unstable();
                assert_eq!(ranges.len(), threads as usize);
                assert_eq!(ranges[0].0, 0);
                for w in ranges.windows(2) {
                    assert_eq!(w[0].1, w[1].0, "{clients} clients, {threads} threads: {ranges:?}");
                }
                assert_eq!(ranges.last().unwrap().1, u64::from(threads) * block);
            }
        }
    }

    /// Each writer's range as fio's `--debug=io` shows its writes: thread id → (first byte, end).
    fn written(debug: &str) -> std::collections::BTreeMap<String, (u64, u64)> {
        let mut out = std::collections::BTreeMap::new();
        for line in debug
            .lines()
            .filter(|l| l.contains("fill: io_u") && l.contains("ddir=1"))
        {
            let tid = line.split_whitespace().nth(1).unwrap().to_owned();
            let field = |k: &str| {
                let v = line.split(&format!("{k}=0x")).nth(1).unwrap();
                u64::from_str_radix(v.split(',').next().unwrap(), 16).unwrap()
            };
            let (off, len) = (field("off"), field("len"));
            let e = out.entry(tid).or_insert((off, off + len));
            *e = (e.0.min(off), e.1.max(off + len));
        }
        out
    }

    #[test]
    fn fio_writes_every_n_to_1_segment_where_the_job_files_place_it() {
        if !rftune_tests::fio_available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let sizes = Sizes {
            data_bytes: 5 << 20,
            record_bytes: 1 << 20,
            ..Sizes::quick()
        };
        // Five threads over two clients, run here one client after the other as two fio runs:
        // each starts its clone numbers at 0, as fio does on every client.
        let step = Step {
            test: Test::NTo1,
            threads: 5,
            per_client: round_robin(5, 2),
            file_size: 0,
            root: dir.path(),
            sizes: &sizes,
        };
        std::fs::create_dir(dir.path().join("n-to-1")).unwrap();
        let mut ranges = Vec::new();
        for client in 0..2 {
            let job = dir.path().join(format!("c{client}.fio"));
            std::fs::write(&job, step.job(Phase::Measure(Op::Write), client).text).unwrap();
            let out = std::process::Command::new("fio")
                .args(["--debug=io", "--output-format=json"])
                .arg(&job)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let writers = written(&text);
            assert_eq!(writers.len(), step.per_client[client] as usize, "{text}");
            ranges.extend(writers.into_values());
        }
        ranges.sort_unstable();
        let expected: Vec<(u64, u64)> = (0..5).map(|i| (i << 20, (i + 1) << 20)).collect();
        assert_eq!(
            ranges, expected,
            "every writer its own segment, none overlapping, none missing"
        );
        assert_eq!(
            std::fs::metadata(dir.path().join("n-to-1/shared")).unwrap().len(),
            5 << 20
        );
    }

    #[test]
    fn sequential_jobs_time_fsync_and_reads_create_nothing() {
        let sizes = Sizes::quick();
        let step = Step {
            test: Test::NToN,
            threads: 4,
            per_client: vec![2, 2],
            file_size: 0,
            root: Path::new("/p:fs/r"),
            sizes: &sizes,
        };
        let w = step.job(Phase::Measure(Op::Write), 1).text;
        for want in [
            "directory=/p\\:fs/r/n-to-n",
            "filename_format=c1.$jobnum",
            "size=268435456",
            "bs=8388608",
            "rw=write",
            "end_fsync=1",
            "create_on_open=1",
            "invalidate=0",
            "numjobs=2",
            "group_reporting",
        ] {
            assert!(w.lines().any(|l| l == want), "{want} missing:\n{w}");
        }
        assert!(!w.contains("direct=1") && !w.contains("allow_file_create"));
        let r = step.job(Phase::Measure(Op::Read), 0).text;
        assert!(r.contains("rw=read\n") && r.contains("allow_file_create=0\n") && !r.contains("end_fsync"));
        let random = Step {
            test: Test::Random,
            ..step.clone()
        };
        let lay = random.job(Phase::LayOut, 0).text;
        assert!(lay.contains("rw=write\n") && lay.contains("direct=1\n") && lay.contains("bs=8388608\n"));
        let rr = random.job(Phase::Measure(Op::Read), 0).text;
        for want in [
            "rw=randread",
            "bs=4096",
            "io_size=67108864",
            "runtime=30",
            "direct=1",
            "allow_file_create=0",
        ] {
            assert!(rr.lines().any(|l| l == want), "{want} missing:\n{rr}");
        }
        assert!(random.job(Phase::Measure(Op::Write), 0).text.contains("rw=randwrite\n"));
    }

    #[test]
    fn metadata_threads_list_their_files_in_directories_of_1024() {
        let sizes = Sizes {
            md_files: 6 * 1024,
            ..Sizes::quick()
        };
        let step = Step {
            test: Test::Metadata,
            threads: 3,
            per_client: round_robin(3, 2),
            file_size: 3072,
            root: Path::new("/pfs/rftune-fs"),
            sizes: &sizes,
        };
        let create = step.job(Phase::Measure(Op::Create), 0);
        let t = &create.text;
        // Client 0 runs threads 0 and 2 of the round robin.
        assert!(
            t.contains("[t0]\ndirectory=/pfs/rftune-fs/metadata/t0\n") && t.contains("[t2]\n") && !t.contains("[t1]")
        );
        let names: Vec<&str> = t
            .lines()
            .filter_map(|l| l.strip_prefix("filename="))
            .flat_map(|l| l.split(':'))
            .collect();
        assert_eq!(names.len(), 2 * 2 * 1024, "two threads, two directories each");
        assert_eq!((names[0], names[1024], names[2047]), ("d0/f0", "d1/f0", "d1/f1023"));
        assert!(t.lines().all(|l| l.len() <= MAX_LINE + "filename=".len()));
        assert!(t.contains("ioengine=psync\nrw=write\nbs=3072\nfilesize=3072\n") && !t.contains("allow_file_create"));
        assert_eq!(create.alloc_kib, None);
        let empty = Step {
            file_size: 0,
            ..step.clone()
        };
        for (op, engine) in [
            (Op::Create, "ioengine=filecreate\nrw=write\nbs=4096"),
            (Op::Stat, "ioengine=filestat\nrw=read\nbs=4096"),
            (Op::Read, "ioengine=filecreate\nrw=read\nbs=4096"),
            (Op::Remove, "ioengine=filedelete\nrw=read\nbs=4096"),
        ] {
            let text = empty.job(Phase::Measure(op), 1).text;
            assert!(text.contains(engine), "{op:?}:\n{}", &text[..300.min(text.len())]);
            assert_eq!(text.contains("allow_file_create=0"), op != Op::Create);
        }
        let big = Sizes::published(0);
        let one = Step {
            threads: 1,
            per_client: vec![1],
            sizes: &big,
            ..step
        };
        assert_eq!(one.job(Phase::Measure(Op::Stat), 0).alloc_kib, Some((1 << 21) / 8));
    }
}
