//! Where a storage benchmark runs: this machine ([`Local`]), or a host reached by a remote command
//! (any [`Exec`] that implements only [`Exec::run`]: its provided methods do the file work with
//! POSIX tools over it). fio's runner ([`crate::fio::Fio`]) and the storage run
//! ([`crate::run`]) go through this trait, so one code path benchmarks a host whether or not
//! rftune is installed on it, under the same rules for file targets ([`crate::target`]).
//!
//! Raw block devices are benchmarked only where [`Exec::files_only`] is `None`: the checks that
//! make writing a device safe ([`crate::device`]: the kernel's exclusive open, mounts in every
//! namespace, signatures) need rftune's own code on that machine.

use crate::filesystem::mount;
use crate::host::HostInfo;
use crate::target::{self, Found, Parent, TargetKind};
use crate::{Error, Result, Stop, device};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::{Duration, Instant};

/// A boxed future that can cross threads: what [`Exec`]'s methods return, so the trait stays
/// usable as `&dyn Exec`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a command did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error, lossily decoded.
    pub stderr: String,
}

impl Output {
    /// Whether it exited with 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Standard output as text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Why a machine reached only through commands benchmarks files and never raw devices: what
/// [`Exec::files_only`] says unless an implementor words it for its own case.
pub const FILES_ONLY: &str = "raw devices are benchmarked only by rftune on the host itself, whose safety checks run there; fio runs only on files here";

/// How long the short commands of a remote benchmark (reads, listings, `mkdir`) may take.
const SHORT: Duration = Duration::from_secs(60);

/// How long laying out a file target on a remote host may take.
const LAYOUT: Duration = Duration::from_secs(3600);

/// Paths per command when creating or removing many over a shell (well under any `ARG_MAX`).
const CHUNK: usize = 500;

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory (not a symbolic link to one).
    Dir,
    /// Anything else: a symbolic link, a device, a socket, a FIFO.
    Other,
}

/// One entry of a directory listing ([`Exec::entries`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path relative to the directory listed.
    pub path: PathBuf,
    /// What it is.
    pub kind: EntryKind,
}

/// A machine to run a storage benchmark on. Implementors give [`Exec::describe`] and
/// [`Exec::run`]; the other methods have POSIX-shell implementations over `run` (`sh -c`,
/// `cat`, `df -P`, `head`), which [`Local`] replaces with direct system calls.
pub trait Exec: Send + Sync {
    /// How messages name the machine: `this host`, `ssh bench@10.0.0.5:22`.
    fn describe(&self) -> String;

    /// Runs `argv` to completion; a non-zero exit is an `Ok` [`Output`]. It is stopped after
    /// `timeout`, or when that is `None` (benchmark programs) after the machine's own limit if
    /// it has one.
    fn run<'a>(&'a self, argv: &'a [String], timeout: Option<Duration>) -> BoxFuture<'a, Result<Output>>;

    /// Why only files can be benchmarked here (`None` when raw devices can be too, after
    /// [`Exec::claim_device`]'s checks). The reason completes refusals of anything else.
    fn files_only(&self) -> Option<String> {
        Some(FILES_ONLY.into())
    }

    /// Runs `argv` and fails unless it exits with 0, quoting the end of its error output.
    fn run_ok<'a>(&'a self, argv: &'a [String], timeout: Option<Duration>) -> BoxFuture<'a, Result<Output>> {
        Box::pin(async move {
            let out = self.run(argv, timeout).await?;
            if out.success() {
                return Ok(out);
            }
            Err(program_failed(
                format!("{} ({})", shown(argv), self.describe()),
                out.code,
                &out.stderr,
            ))
        })
    }

    /// The text of the file at `path`; `None` when there is none.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(async move {
            let q = quote_path(path)?;
            let out = self
                .run(&sh(&format!("[ -f {q} ] || exit 3; cat -- {q}")), Some(SHORT))
                .await?;
            match out.code {
                Some(3) => Ok(None),
                _ if out.success() => Ok(Some(out.stdout_text())),
                _ => Err(program_failed(
                    format!("cat {} ({})", path.display(), self.describe()),
                    out.code,
                    &out.stderr,
                )),
            }
        })
    }

    /// The texts of fio's per-second IOPS logs written with `--write_iops_log=<prefix>` (one
    /// file per job).
    fn iops_logs<'a>(&'a self, prefix: &'a Path) -> BoxFuture<'a, Result<Vec<String>>> {
        Box::pin(async move {
            let script = format!(
                "for f in {}_iops.*.log; do [ -f \"$f\" ] && cat -- \"$f\"; done; true",
                quote_path(prefix)?
            );
            Ok(vec![self.run_ok(&sh(&script), Some(SHORT)).await?.stdout_text()])
        })
    }

    /// Removes what an earlier fio run of a test left: its JSON `output` and the IOPS logs with
    /// `prefix`.
    fn clear_outputs<'a>(&'a self, output: &'a Path, prefix: &'a Path) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let script = format!("rm -f -- {} {}_iops.*.log", quote_path(output)?, quote_path(prefix)?);
            self.run_ok(&sh(&script), Some(SHORT)).await.map(drop)
        })
    }

    /// Creates a directory and its parents.
    fn create_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let argv = ["mkdir", "-p", "--"]
                .map(String::from)
                .into_iter()
                .chain([path_arg(path)]);
            self.run_ok(&argv.collect::<Vec<_>>(), Some(SHORT)).await.map(drop)
        })
    }

    /// Removes a file (nothing when it is already gone).
    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let argv = ["rm", "-f", "--"].map(String::from).into_iter().chain([path_arg(path)]);
            self.run_ok(&argv.collect::<Vec<_>>(), Some(SHORT)).await.map(drop)
        })
    }

    /// What is at `path`, as [`target::observe`] says locally. Over a shell, a regular file's
    /// `allocated` is its length, which is what a layout appends to.
    fn observe<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Found>> {
        Box::pin(async move {
            let q = quote_path(path)?;
            let script = format!(
                "if [ -f {q} ]; then echo file $(wc -c < {q}); head -c {n} -- {q}; \
                 elif [ -b {q} ]; then echo block; elif [ -d {q} ]; then echo dir; elif [ -e {q} ]; then echo other; \
                 elif [ -d \"$(dirname -- {q})\" ]; then echo missing; elif [ -e \"$(dirname -- {q})\" ]; then echo not-dir; \
                 else echo no-dir; fi",
                n = target::MAGIC.len()
            );
            let out = self.run_ok(&sh(&script), Some(SHORT)).await?;
            let split = out.stdout.iter().position(|b| *b == b'\n').unwrap_or(out.stdout.len());
            let first = String::from_utf8_lossy(&out.stdout[..split]).into_owned();
            let mut words = first.split_whitespace();
            Ok(match (words.next(), words.next().map(str::parse::<u64>)) {
                (Some("file"), Some(Ok(len))) => Found::RegularFile {
                    ours: out.stdout.get(split + 1..) == Some(target::MAGIC),
                    allocated: len,
                },
                (Some("block"), _) => Found::BlockDevice,
                (Some("dir"), _) => Found::Directory,
                (Some("other"), _) => Found::Other("special file"),
                (Some("missing"), _) => Found::Missing {
                    parent: Parent::Directory,
                },
                (Some("not-dir"), _) => Found::Missing {
                    parent: Parent::NotADirectory,
                },
                (Some("no-dir"), _) => Found::Missing {
                    parent: Parent::Missing,
                },
                _ => {
                    return Err(Error::Parse {
                        what: format!("what is at {} on {}", path.display(), self.describe()),
                        detail: format!("unexpected answer {first:?}"),
                    });
                }
            })
        })
    }

    /// Whether `path` counts as under `/dev` ([`target::under_dev`]); over a shell, judged on the
    /// path alone.
    fn under_dev(&self, path: &Path) -> bool {
        target::lexically_under_dev(path)
    }

    /// Bytes available to unprivileged users and total bytes of the filesystem holding `path`.
    fn space<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<(u64, u64)>> {
        Box::pin(async move {
            let argv = ["df", "-Pk", "--"]
                .map(String::from)
                .into_iter()
                .chain([path_arg(path)]);
            let out = self.run_ok(&argv.collect::<Vec<_>>(), Some(SHORT)).await?;
            parse_df(&out.stdout_text())
        })
    }

    /// Lays a file target out as [`target::prepare`] does: a new file is created exclusively
    /// with rftune's header and `size` bytes of data after it (and removed again if that
    /// fails); rftune's own file is extended to `size`. Over a shell the data comes from
    /// `/dev/urandom`.
    fn lay_out<'a>(&'a self, path: &'a Path, kind: TargetKind, size: u64) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let q = quote_path(path)?;
            let end = target::HEADER_BYTES.saturating_add(size);
            let script = match kind {
                TargetKind::NewFile => {
                    let header = target::header(&crate::utc_now());
                    let text_len = header.iter().position(|b| *b == 0).unwrap_or(header.len());
                    let text = shell_quote(&String::from_utf8_lossy(&header[..text_len]))?;
                    // `set -C`: the file is created exclusively, and removed again only if this
                    // created it.
                    format!(
                        "set -C; printf '%s' {text} > {q} || exit 3; \
                         {{ head -c {pad} /dev/zero >> {q} && head -c {size} /dev/urandom >> {q}; }} || {{ rm -f -- {q}; exit 1; }}",
                        pad = target::HEADER_BYTES as usize - text_len
                    )
                }
                TargetKind::OwnFile { .. } => format!(
                    "need=$(( {end} - $(wc -c < {q}) )); if [ \"$need\" -gt 0 ]; then head -c \"$need\" /dev/urandom >> {q}; fi"
                ),
                TargetKind::Overwrite { .. } | TargetKind::Device => {
                    return Err(Error::Refused(format!(
                        "{}: {}",
                        path.display(),
                        self.files_only().unwrap_or_default()
                    )));
                }
            };
            self.run_ok(&sh(&script), Some(LAYOUT))
                .await
                .map(drop)
                .map_err(|e| Error::Failed {
                    what: format!("laying out {} on {}", path.display(), self.describe()),
                    source: Box::new(e),
                })
        })
    }

    /// What the OS shows about the host. Over a shell: the host name and kernel (`uname -nr`),
    /// the logical CPUs (`nproc`), the memory (`MemTotal`) and the CPU model (`model name`).
    fn host_info(&self) -> BoxFuture<'_, Result<HostInfo>> {
        Box::pin(async move {
            let script = "uname -nr; nproc 2>/dev/null || echo; sed -n 's/^MemTotal: *\\([0-9]*\\) kB$/\\1/p' /proc/meminfo; \
                          sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1";
            let text = self.run_ok(&sh(script), Some(SHORT)).await?.stdout_text();
            let mut lines = text.lines();
            let mut uname = lines.next().unwrap_or_default().split_whitespace();
            let mut number = || lines.next().and_then(|l| l.trim().parse::<u64>().ok());
            let (logical_cpus, memory_bytes) = (number(), number());
            let cpu_model = lines.next().map(str::trim).filter(|m| !m.is_empty()).map(str::to_owned);
            Ok(HostInfo {
                hostname: uname.next().map(str::to_owned),
                kernel: uname.next().map(str::to_owned),
                logical_cpus: logical_cpus.map_or(0, |n| n as usize),
                memory_bytes: memory_bytes.map(|kib| kib * 1024),
                cpu_model,
                ..HostInfo::default()
            })
        })
    }

    /// Which mounted file system holds the directory `dir`, as [`mount::observe_local`] reads it.
    fn mount<'a>(&'a self, dir: &'a Path) -> BoxFuture<'a, Result<mount::Observed>> {
        Box::pin(async move {
            let out = self.run(&sh(&mount::script(&quote_path(dir)?)), Some(SHORT)).await?;
            match out.code {
                Some(3) => Err(Error::Refused(format!(
                    "{} on {} is not a directory that can be entered",
                    dir.display(),
                    self.describe()
                ))),
                Some(0) => mount::parse_observed(&out.stdout_text()),
                code => Err(program_failed(
                    format!("reading the mount of {} ({})", dir.display(), self.describe()),
                    code,
                    &out.stderr,
                )),
            }
        })
    }

    /// What is in the directory `dir` (paths relative to it; every level below it when
    /// `recursive`), never following a symbolic link; `None` when there is no such directory.
    fn entries<'a>(&'a self, dir: &'a Path, recursive: bool) -> BoxFuture<'a, Result<Option<Vec<Entry>>>> {
        Box::pin(async move {
            let q = quote_path(dir)?;
            let depth = if recursive { "" } else { " -maxdepth 1" };
            let script =
                format!("[ -d {q} ] && [ ! -L {q} ] || exit 3; find {q} -mindepth 1{depth} -printf '%y %P\\0'");
            let out = self.run(&sh(&script), Some(LAYOUT)).await?;
            match out.code {
                Some(3) => Ok(None),
                Some(0) => Ok(Some(
                    out.stdout
                        .split(|b| *b == 0)
                        .filter_map(|item| {
                            let text = String::from_utf8_lossy(item);
                            let (kind, path) = text.split_once(' ')?;
                            Some(Entry {
                                path: PathBuf::from(path),
                                kind: match kind {
                                    "f" => EntryKind::File,
                                    "d" => EntryKind::Dir,
                                    _ => EntryKind::Other,
                                },
                            })
                        })
                        .collect(),
                )),
                code => Err(program_failed(
                    format!("listing {} ({})", dir.display(), self.describe()),
                    code,
                    &out.stderr,
                )),
            }
        })
    }

    /// Creates the file `path` holding `text`, failing if anything is there already.
    fn create_new<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let script = format!("set -C; printf '%s' {} > {}", shell_quote(text)?, quote_path(path)?);
            self.run_ok(&sh(&script), Some(SHORT)).await.map(drop)
        })
    }

    /// Creates the directory `path`, failing if anything is there already or its parent is
    /// missing.
    fn make_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let argv = ["mkdir", "--"].map(String::from).into_iter().chain([path_arg(path)]);
            self.run_ok(&argv.collect::<Vec<_>>(), Some(SHORT)).await.map(drop)
        })
    }

    /// Creates the directories `paths` with their parents (a few hundred to a command).
    fn create_dirs<'a>(&'a self, paths: &'a [PathBuf]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for chunk in paths.chunks(CHUNK) {
                let argv = ["mkdir", "-p", "--"]
                    .map(String::from)
                    .into_iter()
                    .chain(chunk.iter().map(|p| path_arg(p)));
                self.run_ok(&argv.collect::<Vec<_>>(), Some(SHORT)).await?;
            }
            Ok(())
        })
    }

    /// Removes the files `paths` (nothing for one that is already gone).
    fn remove_files<'a>(&'a self, paths: &'a [PathBuf]) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for chunk in paths.chunks(CHUNK) {
                let argv = ["rm", "-f", "--"]
                    .map(String::from)
                    .into_iter()
                    .chain(chunk.iter().map(|p| path_arg(p)));
                self.run_ok(&argv.collect::<Vec<_>>(), Some(SHORT)).await?;
            }
            Ok(())
        })
    }

    /// Removes the directory `path` if it is empty; whether it is gone.
    fn remove_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let q = quote_path(path)?;
            let script = format!("rmdir -- {q} 2>/dev/null && exit 0; [ -e {q} ] && exit 4; exit 0");
            match self.run(&sh(&script), Some(SHORT)).await?.code {
                Some(0) => Ok(true),
                Some(4) => Ok(false),
                code => Err(program_failed(
                    format!("rmdir {} ({})", path.display(), self.describe()),
                    code,
                    "",
                )),
            }
        })
    }

    /// Removes each of the directories `paths` that is empty, in the order given (a few hundred
    /// to a command over a shell); the number gone. One that is not empty stays.
    fn remove_dirs<'a>(&'a self, paths: &'a [PathBuf]) -> BoxFuture<'a, Result<u64>> {
        Box::pin(async move {
            let mut gone = 0;
            for chunk in paths.chunks(CHUNK) {
                let mut script = String::from("n=0; for d in");
                for p in chunk {
                    script.push(' ');
                    script.push_str(&quote_path(p)?);
                }
                script.push_str(
                    "; do if rmdir -- \"$d\" 2>/dev/null || [ ! -e \"$d\" ]; then n=$((n+1)); fi; done; echo $n",
                );
                let out = self.run_ok(&sh(&script), Some(SHORT)).await?;
                gone += out.stdout_text().trim().parse::<u64>().map_err(|_| Error::Parse {
                    what: format!("rmdir on {}", self.describe()),
                    detail: format!("unexpected answer {:?}", out.stdout_text()),
                })?;
            }
            Ok(gone)
        })
    }

    /// Checks that the raw device at `path` may be benchmarked (written when `writes`) and holds
    /// it exclusively for the run ([`device::check_for_writing`]). Refused where
    /// [`Exec::files_only`] says so.
    fn claim_device<'a>(
        &'a self,
        path: &'a Path,
        _writes: bool,
        _consent: &'a device::Consent,
    ) -> BoxFuture<'a, Result<Option<device::Claim>>> {
        let why = self.files_only().unwrap_or_default();
        Box::pin(async move { Err(Error::Refused(format!("{}: {why}", path.display()))) })
    }
}

/// `sh -c script`: whatever the login shell is, scripts run in a POSIX shell.
pub fn sh(script: &str) -> [String; 3] {
    ["sh".to_owned(), "-c".to_owned(), script.to_owned()]
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

fn quote_path(path: &Path) -> Result<String> {
    shell_quote(&path_arg(path))
}

/// A program that did not succeed, worded alike wherever it ran: `program` names it (with where
/// it ran, or the fio test), `code` is its exit status (`None`: ended by a signal), and the last
/// five non-empty lines of its `messages` say why.
pub fn program_failed(program: impl Into<String>, code: Option<i32>, messages: &str) -> Error {
    let lines: Vec<&str> = messages.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let mut detail = format!("exited with {}", code.map_or("a signal".to_owned(), |c| c.to_string()));
    if !lines.is_empty() {
        detail.push_str(": ");
        detail.push_str(&lines[lines.len().saturating_sub(5)..].join(" | "));
    }
    Error::Program {
        program: program.into(),
        detail,
    }
}

/// Quotes one argument for a POSIX shell, as shlex does (plain words as they are, the rest in
/// single or double quotes). An argument holding a NUL byte, which no command line can carry,
/// is refused rather than cut short.
pub fn shell_quote(arg: &str) -> Result<String> {
    shlex::try_quote(arg).map(std::borrow::Cow::into_owned).map_err(|_| {
        Error::Refused(format!(
            "{arg:?} holds a NUL byte, which no shell command line can carry"
        ))
    })
}

/// A command line for a POSIX shell from an argument vector, refused like [`shell_quote`].
pub fn command_line(argv: &[String]) -> Result<String> {
    shlex::try_join(argv.iter().map(String::as_str)).map_err(|_| {
        Error::Refused(format!(
            "{} holds a NUL byte, which no shell command line can carry",
            shown(argv)
        ))
    })
}

/// The command line of `argv` for messages: quoted as [`command_line`] quotes it, a NUL byte
/// shown as it is.
pub fn shown(argv: &[String]) -> String {
    shlex::Quoter::new()
        .allow_nul(true)
        .join(argv.iter().map(String::as_str))
        .unwrap_or_else(|_| argv.join(" "))
}

/// Available and total bytes from `df -Pk` (POSIX format, KiB).
fn parse_df(text: &str) -> Result<(u64, u64)> {
    let fields: Vec<&str> = text.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    let kib = |i: usize| -> Result<u64> {
        let v: u64 = fields.get(i).and_then(|f| f.parse().ok()).ok_or_else(|| Error::Parse {
            what: "df output".into(),
            detail: format!("unexpected: {text:?}"),
        })?;
        Ok(v.saturating_mul(1024))
    };
    Ok((kib(3)?, kib(1)?))
}

/// Runs blocking `work` on a thread meant for it, so that async callers (sampling power, say)
/// keep running meanwhile.
pub(crate) async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| Error::Program {
        program: "benchmark thread".into(),
        detail: e.to_string(),
    })?
}

/// This machine: programs run as child processes, files are read and laid out directly, and raw
/// devices pass [`device`]'s checks. A [`Stop`] request sends a running program SIGINT (fio then
/// stops its jobs) and kills it if it has not ended ten seconds later; no program starts
/// after one.
#[derive(Debug, Clone, Default)]
pub struct Local {
    /// Shared with whoever may ask the run to stop (the user's Ctrl-C).
    pub stop: Stop,
}

/// How long a program gets to stop after SIGINT before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

impl Local {
    /// A machine whose programs stop when `stop` is requested.
    pub fn new(stop: Stop) -> Self {
        Self { stop }
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl Exec for Local {
    fn describe(&self) -> String {
        "this host".into()
    }

    fn files_only(&self) -> Option<String> {
        None
    }

    fn run<'a>(&'a self, argv: &'a [String], timeout: Option<Duration>) -> BoxFuture<'a, Result<Output>> {
        let (argv, stop) = (argv.to_vec(), self.stop.clone());
        Box::pin(blocking(move || run_child(&argv, &stop, timeout)))
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<String>>> {
        ready(match std::fs::read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(crate::io_err(format!("reading {}", path.display()))(e)),
        })
    }

    fn iops_logs<'a>(&'a self, prefix: &'a Path) -> BoxFuture<'a, Result<Vec<String>>> {
        ready(Ok(log_files(prefix)
            .into_iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect()))
    }

    fn clear_outputs<'a>(&'a self, output: &'a Path, prefix: &'a Path) -> BoxFuture<'a, Result<()>> {
        let _ = std::fs::remove_file(output);
        for p in log_files(prefix) {
            let _ = std::fs::remove_file(p);
        }
        ready(Ok(()))
    }

    fn create_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<()>> {
        ready(std::fs::create_dir_all(path).map_err(crate::io_err(format!("creating {}", path.display()))))
    }

    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<()>> {
        ready(match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(crate::io_err(format!("removing {}", path.display()))(e))
            }
            _ => Ok(()),
        })
    }

    fn observe<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Found>> {
        ready(target::observe(path))
    }

    fn under_dev(&self, path: &Path) -> bool {
        target::under_dev(path)
    }

    fn space<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<(u64, u64)>> {
        ready(crate::sys::filesystem_space(path).map_err(crate::io_err(format!(
            "reading the free space of the filesystem holding {}",
            path.display()
        ))))
    }

    fn lay_out<'a>(&'a self, path: &'a Path, kind: TargetKind, size: u64) -> BoxFuture<'a, Result<()>> {
        let (path, stop) = (path.to_owned(), self.stop.clone());
        Box::pin(blocking(move || target::prepare(&path, kind, size, &stop)))
    }

    fn host_info(&self) -> BoxFuture<'_, Result<HostInfo>> {
        ready(Ok(HostInfo::collect()))
    }

    fn mount<'a>(&'a self, dir: &'a Path) -> BoxFuture<'a, Result<mount::Observed>> {
        ready(mount::observe_local(dir))
    }

    fn entries<'a>(&'a self, dir: &'a Path, recursive: bool) -> BoxFuture<'a, Result<Option<Vec<Entry>>>> {
        let dir = dir.to_owned();
        Box::pin(blocking(move || local_entries(&dir, recursive)))
    }

    fn create_new<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<()>> {
        use std::io::Write;
        ready(
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(crate::io_err(format!("creating {}", path.display()))),
        )
    }

    fn make_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<()>> {
        ready(std::fs::create_dir(path).map_err(crate::io_err(format!("creating {}", path.display()))))
    }

    fn create_dirs<'a>(&'a self, paths: &'a [PathBuf]) -> BoxFuture<'a, Result<()>> {
        ready(
            paths.iter().try_for_each(|p| {
                std::fs::create_dir_all(p).map_err(crate::io_err(format!("creating {}", p.display())))
            }),
        )
    }

    fn remove_files<'a>(&'a self, paths: &'a [PathBuf]) -> BoxFuture<'a, Result<()>> {
        let paths = paths.to_vec();
        Box::pin(blocking(move || {
            for p in &paths {
                match std::fs::remove_file(p) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(crate::io_err(format!("removing {}", p.display()))(e));
                    }
                    _ => {}
                }
            }
            Ok(())
        }))
    }

    fn remove_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<bool>> {
        ready(match std::fs::remove_dir(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => Ok(false),
            Err(e) => Err(crate::io_err(format!("removing {}", path.display()))(e)),
        })
    }

    fn remove_dirs<'a>(&'a self, paths: &'a [PathBuf]) -> BoxFuture<'a, Result<u64>> {
        let paths = paths.to_vec();
        Box::pin(blocking(move || {
            let mut gone = 0;
            for p in &paths {
                match std::fs::remove_dir(p) {
                    Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => {}
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(crate::io_err(format!("removing {}", p.display()))(e));
                    }
                    _ => gone += 1,
                }
            }
            Ok(gone)
        }))
    }

    fn claim_device<'a>(
        &'a self,
        path: &'a Path,
        writes: bool,
        consent: &'a device::Consent,
    ) -> BoxFuture<'a, Result<Option<device::Claim>>> {
        ready(device::check_for_writing(path, writes, consent, device::open_exclusive))
    }
}

/// [`Exec::entries`] here: `symlink_metadata`, so no link is followed.
fn local_entries(dir: &Path, recursive: bool) -> Result<Option<Vec<Entry>>> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => return Ok(None),
    }
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let here = dir.join(&rel);
        for item in std::fs::read_dir(&here).map_err(crate::io_err(format!("listing {}", here.display())))? {
            let item = item.map_err(crate::io_err(format!("listing {}", here.display())))?;
            let kind = match item.file_type() {
                Ok(t) if t.is_file() => EntryKind::File,
                Ok(t) if t.is_dir() => EntryKind::Dir,
                _ => EntryKind::Other,
            };
            let path = rel.join(item.file_name());
            if recursive && kind == EntryKind::Dir {
                pending.push(path.clone());
            }
            out.push(Entry { path, kind });
        }
    }
    Ok(Some(out))
}

/// Runs `argv` as a child process with both pipes drained while it runs (a chatty program never
/// blocks on a full pipe), honouring `stop` and `timeout`.
fn run_child(argv: &[String], stop: &Stop, timeout: Option<Duration>) -> Result<Output> {
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::BadInput("no command to run".into()));
    };
    let name = format!("{program} {}", args.first().map_or("", String::as_str));
    let interrupted = || Error::Interrupted(format!("{} was stopped", name.trim_end()));
    if stop.requested() {
        return Err(interrupted());
    }
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    crate::sys::default_sigint(&mut command);
    let mut child = command
        .spawn()
        .map_err(crate::io_err(format!("running {program} (is {program} installed?)")))?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (status, out, err) = std::thread::scope(|scope| {
        let out = scope.spawn(move || read_all(stdout));
        let err = scope.spawn(move || read_all(stderr));
        let status = wait(&mut child, stop, timeout);
        (status, out.join().unwrap_or_default(), err.join().unwrap_or_default())
    });
    let status = status.map_err(crate::io_err(format!("waiting for {program}")))?;
    if stop.requested() {
        return Err(interrupted());
    }
    let Some(status) = status else {
        return Err(Error::Program {
            program: name.trim_end().to_owned(),
            detail: format!(
                "did not finish within {}",
                humantime::format_duration(timeout.unwrap_or_default())
            ),
        });
    };
    Ok(Output {
        code: status.code(),
        stdout: out,
        stderr: String::from_utf8_lossy(&err).into_owned(),
    })
}

/// Waits for the child; on a stop request sends it SIGINT and kills it after [`STOP_GRACE`].
/// `None` when it was killed for outliving `timeout`.
fn wait(
    child: &mut std::process::Child,
    stop: &Stop,
    timeout: Option<Duration>,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let started = Instant::now();
    let mut interrupted_at: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if timeout.is_some_and(|t| started.elapsed() > t) {
            child.kill()?;
            child.wait()?;
            return Ok(None);
        }
        if stop.requested() {
            match interrupted_at {
                None => {
                    crate::sys::interrupt(child)?;
                    interrupted_at = Some(Instant::now());
                }
                Some(at) if at.elapsed() > STOP_GRACE => {
                    child.kill()?;
                    return child.wait().map(Some);
                }
                Some(_) => {}
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_all(pipe: Option<impl std::io::Read>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(mut p) = pipe {
        let _ = p.read_to_end(&mut buf);
    }
    buf
}

fn log_files(prefix: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (prefix.parent(), prefix.file_name()) else {
        return Vec::new();
    };
    let start = format!("{}_iops.", stem.to_string_lossy());
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&start) && n.ends_with(".log"))
        })
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_output_gives_available_and_total_bytes() {
        let text = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n\
                    /dev/vda         263174212 16474096 235000000       7% /\n";
        assert_eq!(parse_df(text).unwrap(), (235_000_000 * 1024, 263_174_212 * 1024));
        assert!(parse_df("df: /nope: No such file or directory\n").is_err());
    }

    #[test]
    fn a_failed_program_is_reported_with_its_status_and_last_five_lines() {
        let messages = "one\n\ntwo\nthree\n  four  \nfive\nsix\n";
        let e = program_failed("fio (randread)", Some(1), messages).to_string();
        assert_eq!(
            e,
            "fio (randread) failed: exited with 1: two | three | four | five | six"
        );
        let e = program_failed("sleep 5 (this host)", None, "").to_string();
        assert_eq!(e, "sleep 5 (this host) failed: exited with a signal");
    }

    #[test]
    fn shell_quoting_round_trips_through_sh() {
        let nasty = ["plain", "", "a b", "it's", "$(echo pwned)", "`x`", "a\"b", "x;y", "*"];
        let argv: Vec<String> = std::iter::once("printf".to_owned())
            .chain(std::iter::once("%s\\n".to_owned()))
            .chain(nasty.iter().map(|s| (*s).to_owned()))
            .collect();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(command_line(&argv).unwrap())
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().collect::<Vec<_>>(), nasty);
    }

    /// The shell implementations, run through a local `sh`: what a remote host would do.
    struct Shell(Local);

    impl Exec for Shell {
        fn describe(&self) -> String {
            "a shell".into()
        }

        fn run<'a>(&'a self, argv: &'a [String], timeout: Option<Duration>) -> BoxFuture<'a, Result<Output>> {
            self.0.run(argv, timeout)
        }
    }

    fn temp_dir(tag: &str) -> PathBuf {
        // Kept on drop: the test removes it.
        let dir = tempfile::Builder::new().prefix(tag).tempdir().unwrap().keep();
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn the_shell_implementation_sees_what_the_local_one_sees() {
        let dir = temp_dir("observe");
        let awkward = dir.join("it's a file");
        let shell = Shell(Local::default());
        let local = Local::default();
        for (path, ours) in [(dir.join("ours.fio"), true), (awkward.clone(), false)] {
            let mut bytes = if ours {
                target::header("t")
            } else {
                b"user data".to_vec()
            };
            bytes.resize(bytes.len() + 100, 1);
            std::fs::write(&path, &bytes).unwrap();
            let found = shell.observe(&path).await.unwrap();
            assert_eq!(
                found,
                Found::RegularFile {
                    ours,
                    allocated: bytes.len() as u64
                }
            );
            assert!(matches!(local.observe(&path).await.unwrap(), Found::RegularFile { ours: o, .. } if o == ours));
        }
        for path in [
            dir.join("new"),
            dir.join("no/new"),
            awkward.join("x"),
            dir.clone(),
            PathBuf::from("/dev/null"),
        ] {
            let (s, l) = (shell.observe(&path).await.unwrap(), local.observe(&path).await.unwrap());
            match l {
                Found::Other(_) => assert_eq!(s, Found::Other("special file"), "{}", path.display()),
                l => assert_eq!(s, l, "{}", path.display()),
            }
        }
        // Reading, listing fio's logs, clearing them.
        let prefix = dir.join("it's");
        std::fs::write(dir.join("it's_iops.1.log"), "1000, 5, 0, 4096, 0\n").unwrap();
        std::fs::write(dir.join("it's_iops.2.log"), "1000, 7, 0, 4096, 0\n").unwrap();
        let logs = shell.iops_logs(&prefix).await.unwrap();
        assert_eq!(
            crate::fio::parse_iops_logs(logs.iter().map(String::as_str)),
            vec![(1.0, 12.0)]
        );
        assert_eq!(
            shell.read(&dir.join("it's_iops.1.log")).await.unwrap().unwrap().len(),
            20
        );
        assert_eq!(shell.read(&dir.join("absent")).await.unwrap(), None);
        shell.clear_outputs(&dir.join("absent.json"), &prefix).await.unwrap();
        assert!(shell.iops_logs(&prefix).await.unwrap().concat().is_empty());
        let (available, total) = shell.space(&dir).await.unwrap();
        assert!(available > 0 && total >= available);
        assert!(shell.host_info().await.unwrap().kernel.is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn the_shell_layout_creates_exclusively_and_extends_only_rftunes_file() {
        let dir = temp_dir("layout");
        let shell = Shell(Local::default());
        let file = dir.join("t.fio");
        shell.lay_out(&file, TargetKind::NewFile, 1 << 20).await.unwrap();
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(bytes.len() as u64, target::HEADER_BYTES + (1 << 20));
        assert!(bytes.starts_with(target::MAGIC));
        let e = shell.lay_out(&file, TargetKind::NewFile, 1 << 20).await.unwrap_err();
        assert!(e.to_string().contains("laying out"), "{e}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            bytes,
            "an existing file is never recreated"
        );
        shell
            .lay_out(&file, TargetKind::OwnFile { allocated: 0 }, 2 << 20)
            .await
            .unwrap();
        let grown = std::fs::read(&file).unwrap();
        assert_eq!(grown.len() as u64, target::HEADER_BYTES + (2 << 20));
        assert_eq!(grown[..bytes.len()], bytes[..]);
        assert!(
            shell
                .lay_out(&file, TargetKind::Overwrite { allocated: 0 }, 1 << 20)
                .await
                .is_err()
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn the_shell_file_operations_do_what_the_local_ones_do() {
        let shell = Shell(Local::default());
        let local = Local::default();
        for (name, exec) in [("shell", &shell as &dyn Exec), ("local", &local)] {
            let dir = temp_dir(name);
            let tree = [dir.join("a/b"), dir.join("it's/c")];
            exec.create_dirs(&tree).await.unwrap();
            exec.create_new(&dir.join("a/b/f"), "one 'line'\n").await.unwrap();
            assert!(
                exec.create_new(&dir.join("a/b/f"), "again").await.is_err(),
                "{name}: exclusive"
            );
            assert_eq!(std::fs::read_to_string(dir.join("a/b/f")).unwrap(), "one 'line'\n");
            exec.make_dir(&dir.join("m")).await.unwrap();
            assert!(exec.make_dir(&dir.join("m")).await.is_err(), "{name}: exclusive");
            assert!(
                exec.make_dir(&dir.join("no/parent")).await.is_err(),
                "{name}: no parents"
            );
            std::os::unix::fs::symlink(dir.join("a"), dir.join("m/link")).unwrap();
            let mut all: Vec<(String, EntryKind)> = exec
                .entries(&dir, true)
                .await
                .unwrap()
                .unwrap()
                .into_iter()
                .map(|e| (e.path.display().to_string(), e.kind))
                .collect();
            all.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(
                all,
                [
                    ("a".into(), EntryKind::Dir),
                    ("a/b".into(), EntryKind::Dir),
                    ("a/b/f".into(), EntryKind::File),
                    ("it's".into(), EntryKind::Dir),
                    ("it's/c".into(), EntryKind::Dir),
                    ("m".into(), EntryKind::Dir),
                    ("m/link".into(), EntryKind::Other),
                ],
                "{name}: the link is listed, not followed"
            );
            assert_eq!(exec.entries(&dir.join("m"), false).await.unwrap().unwrap().len(), 1);
            assert_eq!(exec.entries(&dir.join("missing"), true).await.unwrap(), None);
            assert_eq!(
                exec.entries(&dir.join("m/link"), true).await.unwrap(),
                None,
                "{name}: a link is no directory"
            );
            assert!(!exec.remove_dir(&dir.join("a/b")).await.unwrap(), "{name}: not empty");
            let (full, empty) = (dir.join("it's"), dir.join("it's/c"));
            assert_eq!(
                exec.remove_dirs(&[empty.clone(), full.clone(), dir.join("gone")])
                    .await
                    .unwrap(),
                3,
                "{name}: the deepest first, then its emptied parent; one already gone counts"
            );
            assert!(!full.exists());
            exec.remove_files(&[dir.join("a/b/f"), dir.join("a/b/gone")])
                .await
                .unwrap();
            assert!(exec.remove_dir(&dir.join("a/b")).await.unwrap());
            assert!(exec.remove_dir(&dir.join("a/b")).await.unwrap(), "{name}: gone already");
            let observed = exec.mount(&dir).await.unwrap();
            assert!(mount::identify(&observed).is_some(), "{name}");
            assert!(exec.mount(&dir.join("missing")).await.is_err());
            std::fs::remove_dir_all(dir).unwrap();
        }
        let info = shell.host_info().await.unwrap();
        assert!(info.logical_cpus >= 1 && info.memory_bytes.unwrap_or(0) > 0, "{info:?}");
        assert_eq!(
            info.cpu_model,
            HostInfo::collect().cpu_model,
            "the shell reads the model the OS shows"
        );
    }

    #[tokio::test]
    async fn a_local_program_is_stopped_by_its_timeout() {
        let local = Local::default();
        let argv = ["sleep", "5"].map(String::from);
        let started = Instant::now();
        let e = local.run(&argv, Some(Duration::from_millis(200))).await.unwrap_err();
        assert!(e.to_string().contains("did not finish"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(4));
        let out = local
            .run(&["sh", "-c", "echo hi; exit 3"].map(String::from), None)
            .await
            .unwrap();
        assert_eq!((out.code, out.stdout_text().as_str()), (Some(3), "hi\n"));
    }
}
