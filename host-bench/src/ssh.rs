//! Commands on a host's operating system, run here or through the system `ssh` client with the
//! user's own configuration, keys and agent (`BatchMode=yes`: ssh never asks for a password and
//! fails instead): the ssh arguments, waiting until the OS answers, copying a file back, what
//! the OS shows ([`OsView`]), and the host as the place a storage benchmark runs when rftune is
//! not installed there ([`OnHost`], an [`Exec`] over these commands). No HTTP: BMCs are
//! reached elsewhere.

use crate::exec::{BoxFuture, Exec, Output, command_line, program_failed, sh, shell_quote, shown};
use crate::host::OsView;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to reach one host's OS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Commands run here.
    Local,
    /// Commands run through `ssh`.
    Ssh(SshTarget),
}

/// An ssh destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// `user@host` or a `Host` alias.
    pub target: String,
    /// Port; `None`: the ssh configuration's for the target (22 unless it says otherwise).
    pub port: Option<u16>,
    /// `ssh -F` configuration file, instead of the user's.
    pub config: Option<PathBuf>,
    /// `ConnectTimeout`, so an unreachable host fails a readiness probe quickly.
    pub connect_timeout: Duration,
}

impl SshTarget {
    /// The destination `[USER@]HOST[:PORT]` (or a `Host` alias, `[IPv6]:PORT` in brackets) and
    /// the port it names, if any; refused when ssh could read it as an option (a leading `-`)
    /// or it holds whitespace.
    pub fn parse(text: &str) -> Result<(String, Option<u16>)> {
        let bad = || {
            Error::BadInput(format!(
                "ssh destination {text:?}: give [USER@]HOST[:PORT] or a Host alias of your ssh configuration \
                 (no spaces, no leading '-')"
            ))
        };
        if text.is_empty() || text.starts_with('-') || text.chars().any(char::is_whitespace) {
            return Err(bad());
        }
        let (user, host) = text.rsplit_once('@').map_or(("", text), |(u, h)| (u, h));
        let (host, port) = if let Some(rest) = host.strip_prefix('[') {
            let (addr, after) = rest.split_once(']').ok_or_else(bad)?;
            match after.strip_prefix(':') {
                Some(p) => (addr, Some(p)),
                None if after.is_empty() => (addr, None),
                None => return Err(bad()),
            }
        } else {
            match host.split_once(':') {
                Some((h, p)) if !p.contains(':') => (h, Some(p)),
                _ => (host, None),
            }
        };
        let port = match port {
            Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad)?),
            None => None,
        };
        if host.is_empty() || host.starts_with('-') || user.starts_with('-') {
            return Err(bad());
        }
        let target = if user.is_empty() {
            host.to_owned()
        } else {
            format!("{user}@{host}")
        };
        Ok((target, port))
    }

    /// The options every connection to this target takes: batch mode (keys or agent only,
    /// never a password prompt), the connect timeout, the port and an optional configuration
    /// file. What follows them (`--`, the target, a command, or a forwarding) is the caller's.
    pub fn options(&self) -> Vec<String> {
        let mut a = vec![
            "-o".to_owned(),
            "BatchMode=yes".to_owned(),
            "-o".to_owned(),
            format!("ConnectTimeout={}", self.connect_timeout.as_secs().max(1)),
        ];
        if let Some(port) = self.port {
            a.push("-p".to_owned());
            a.push(port.to_string());
        }
        if let Some(c) = &self.config {
            a.push("-F".to_owned());
            a.push(c.display().to_string());
        }
        a
    }

    /// The arguments of the system `ssh` that run `argv` here: the [options](Self::options),
    /// `--` so the target can never be read as an option, the target, and the remote command as
    /// one shell-quoted argument (refused when an argument holds a NUL byte).
    pub fn args(&self, argv: &[String]) -> Result<Vec<String>> {
        let mut a = self.options();
        a.push("--".to_owned());
        a.push(self.target.clone());
        a.push(command_line(argv)?);
        Ok(a)
    }
}

impl Transport {
    /// How messages name it: `local`, `ssh bench@10.0.0.5:22`.
    pub fn describe(&self) -> String {
        match self {
            Self::Local => "local".to_owned(),
            Self::Ssh(SshTarget {
                target,
                port: Some(port),
                ..
            }) => format!("ssh {target}:{port}"),
            Self::Ssh(t) => format!("ssh {}", t.target),
        }
    }

    /// Runs `argv` on the host, killing it after `timeout`; a non-zero exit is an `Ok`
    /// [`Output`].
    pub async fn run(&self, argv: &[String], timeout: Duration) -> Result<Output> {
        let Some((program, args)) = argv.split_first() else {
            return Err(Error::BadInput("no command to run".into()));
        };
        let mut cmd = match self {
            Self::Local => {
                let mut c = tokio::process::Command::new(program);
                c.args(args);
                c
            }
            Self::Ssh(t) => {
                let mut c = tokio::process::Command::new("ssh");
                c.args(t.args(argv)?);
                c
            }
        };
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let what = format!("{} ({})", shown(argv), self.describe());
        let child = cmd.spawn().map_err(crate::io_err(format!("starting {what}")))?;
        let out = tokio::time::timeout(timeout, child.wait_with_output())
            .await
            .map_err(|_| {
                Error::NoAnswer(format!(
                    "{what} did not finish within {}",
                    humantime::format_duration(timeout)
                ))
            })?
            .map_err(crate::io_err(format!("running {what}")))?;
        Ok(Output {
            code: out.status.code(),
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// Runs `argv` and fails unless it exits with 0, quoting the end of its error output.
    pub async fn run_ok(&self, argv: &[String], timeout: Duration) -> Result<Output> {
        let out = self.run(argv, timeout).await?;
        if !out.success() {
            return Err(program_failed(
                format!("{} ({})", shown(argv), self.describe()),
                out.code,
                &out.stderr,
            ));
        }
        Ok(out)
    }

    /// Runs a POSIX shell script on the host (`sh -c`, whatever the login shell is).
    pub async fn script(&self, script: &str, timeout: Duration) -> Result<Output> {
        self.run_ok(&sh(script), timeout).await
    }

    /// Runs `true` every `interval` until it succeeds; returns how long that took.
    pub async fn wait_ready(&self, timeout: Duration, interval: Duration) -> Result<Duration> {
        let start = Instant::now();
        loop {
            let left = timeout.saturating_sub(start.elapsed());
            let attempt = left.min(Duration::from_secs(30)).max(Duration::from_millis(100));
            let last = match self.run(&["true".to_owned()], attempt).await {
                Ok(o) if o.success() => return Ok(start.elapsed()),
                Ok(o) => o.stderr.trim().to_owned(),
                Err(e) => chain(&e),
            };
            if start.elapsed() + interval > timeout {
                return Err(Error::NoAnswer(format!(
                    "the OS did not answer over {} within {}: {last}",
                    self.describe(),
                    humantime::format_duration(timeout)
                )));
            }
            tokio::time::sleep(interval).await;
        }
    }

    /// Copies the host's file `remote` back (read directly locally, `head -c` over ssh),
    /// refused when it is larger than `limit` bytes.
    pub async fn fetch(&self, remote: &str, limit: u64, timeout: Duration) -> Result<Vec<u8>> {
        let bytes = match self {
            Self::Local => read_capped(Path::new(remote), limit)?,
            Self::Ssh(_) => {
                let argv = ["head", "-c", &limit.saturating_add(1).to_string(), "--", remote].map(str::to_owned);
                self.run_ok(&argv, timeout).await?.stdout
            }
        };
        if bytes.len() as u64 > limit {
            return Err(Error::BadInput(format!(
                "{remote} on {} is larger than {limit} bytes (is this the right file?)",
                self.describe()
            )));
        }
        Ok(bytes)
    }

    /// What the OS shows about SMT, NUMA nodes, sockets and idle states.
    pub async fn os_view(&self, timeout: Duration) -> Result<OsView> {
        let out = self.script(OsView::SCRIPT, timeout).await?;
        Ok(OsView::parse(&out.stdout_text()))
    }

    /// Whether `program` can be run on the host; an error when the host did not answer the
    /// question (the command did not start, was killed, or ssh itself failed with 255).
    pub async fn has_program(&self, program: &str) -> Result<bool> {
        let probe = format!("command -v {} >/dev/null", shell_quote(program)?);
        let out = self.run(&sh(&probe), Duration::from_secs(30)).await?;
        match out.code {
            Some(0) => Ok(true),
            Some(255) if matches!(self, Self::Ssh(_)) => Err(Error::NoAnswer(format!(
                "looking for {program} over {} failed: {}",
                self.describe(),
                out.stderr.trim()
            ))),
            Some(_) => Ok(false),
            None => Err(Error::NoAnswer(format!(
                "looking for {program} over {} was killed",
                self.describe()
            ))),
        }
    }
}

/// An error and its sources on one line, joined by `: `.
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    std::iter::successors(Some(err), |e| e.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// The local file at `path`, refused before it is read when it is larger than `limit` bytes.
fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let io = || crate::io_err(format!("reading file {}", path.display()));
    let size = std::fs::metadata(path).map_err(io())?.len();
    if size > limit {
        return Err(Error::BadInput(format!(
            "file {} is {size} bytes; the limit is {limit} bytes (is this the right file?)",
            path.display()
        )));
    }
    std::fs::read(path).map_err(io())
}

/// The host's OS as the place a storage benchmark runs when rftune is not installed there:
/// host-bench's fio runner and storage run work through the transport's commands (the shell
/// implementations of [`Exec`]), benchmark programs limited to `timeout`. Files only: the
/// raw-device safety checks are rftune's own code, which is not on the host.
#[derive(Debug)]
pub struct OnHost<'a> {
    /// How the host is reached.
    pub transport: &'a Transport,
    /// The longest a benchmark program may run.
    pub timeout: Duration,
    /// Why only files are benchmarked, as refusals of anything else say it.
    pub files_only: String,
}

impl<'a> OnHost<'a> {
    /// The host behind `transport`, programs limited to `timeout`, refusals saying
    /// [`crate::exec::FILES_ONLY`].
    pub fn new(transport: &'a Transport, timeout: Duration) -> Self {
        Self {
            transport,
            timeout,
            files_only: crate::exec::FILES_ONLY.to_owned(),
        }
    }
}

impl Exec for OnHost<'_> {
    fn describe(&self) -> String {
        self.transport.describe()
    }

    fn files_only(&self) -> Option<String> {
        Some(self.files_only.clone())
    }

    /// The transport's run, its failure worded as a failed program (`fio … failed: …`).
    fn run<'a>(&'a self, argv: &'a [String], timeout: Option<Duration>) -> BoxFuture<'a, Result<Output>> {
        Box::pin(async move {
            self.transport
                .run(argv, timeout.unwrap_or(self.timeout))
                .await
                .map_err(|e| Error::Program {
                    program: shown(argv),
                    detail: chain(&e),
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssh() -> SshTarget {
        SshTarget {
            target: "bench@10.0.0.5".into(),
            port: Some(2222),
            config: Some(PathBuf::from("/tmp/ssh config")),
            connect_timeout: Duration::from_secs(5),
        }
    }

    #[test]
    fn ssh_arguments_are_batch_mode_with_one_quoted_command() {
        let argv: Vec<String> = [
            "rftune",
            "bench",
            "storage",
            "--target",
            "/tmp/my file",
            "--label",
            "it's",
        ]
        .map(String::from)
        .into();
        let a = ssh().args(&argv).unwrap();
        assert_eq!(
            a[..10],
            [
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=5",
                "-p",
                "2222",
                "-F",
                "/tmp/ssh config",
                "--",
                "bench@10.0.0.5",
            ]
        );
        // One argument the remote shell splits back into exactly `argv`.
        assert_eq!(a.len(), 11);
        assert_eq!(shlex::split(&a[10]), Some(argv.clone()), "{}", a[10]);
        let nul = [String::from("echo"), String::from("a\0b")];
        assert!(ssh().args(&nul).is_err(), "a NUL byte cannot cross a command line");
        assert!(!a.iter().any(|x| x.contains("assword")));
    }

    #[test]
    fn destinations_are_user_host_and_port_and_never_an_option() {
        assert_eq!(
            SshTarget::parse("bench@10.0.0.5").unwrap(),
            ("bench@10.0.0.5".into(), None)
        );
        assert_eq!(SshTarget::parse("node7:2222").unwrap(), ("node7".into(), Some(2222)));
        assert_eq!(
            SshTarget::parse("u@[fe80::1]:2200").unwrap(),
            ("u@fe80::1".into(), Some(2200))
        );
        assert_eq!(SshTarget::parse("fe80::1").unwrap(), ("fe80::1".into(), None));
        for bad in ["", "-oProxyCommand=x", "a b", "u@-x", "h:0", "h:port", "[::1]x"] {
            assert!(SshTarget::parse(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn local_runs_commands_and_reports_failures() {
        let t = Transport::Local;
        let out = t
            .run(&sh("echo hi; echo err >&2; exit 3"), Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stdout_text(), "hi\n");
        assert_eq!(out.stderr, "err\n");
        let err = t
            .run_ok(&sh("echo boom >&2; exit 1"), Duration::from_secs(10))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("exited with 1: boom"), "{err}");
        let err = t
            .run(&["sleep".into(), "5".into()], Duration::from_millis(200))
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "sleep 5 (local) did not finish within 200ms");
        assert!(t.run(&[], Duration::from_secs(1)).await.is_err());
        let err = t
            .run(&["/nonexistent/rftune-test".into()], Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(
            chain(&err).starts_with("starting /nonexistent/rftune-test (local): "),
            "{}",
            chain(&err)
        );
    }

    #[tokio::test]
    async fn programs_are_found_or_definitely_absent() {
        let t = Transport::Local;
        assert!(t.has_program("sh").await.unwrap());
        assert!(!t.has_program("rftune-no-such-program").await.unwrap());
    }

    #[tokio::test]
    async fn local_readiness_fetch_and_os_view() {
        let t = Transport::Local;
        assert!(
            t.wait_ready(Duration::from_secs(5), Duration::from_millis(50))
                .await
                .unwrap()
                < Duration::from_secs(5)
        );
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("bench.json");
        std::fs::write(&src, b"{\"schema\":\"rftune.bench/v1\"}").unwrap();
        let remote = src.display().to_string();
        let bytes = t.fetch(&remote, 1 << 20, Duration::from_secs(5)).await.unwrap();
        assert_eq!(bytes, std::fs::read(&src).unwrap());
        let e = t.fetch(&remote, 8, Duration::from_secs(5)).await.unwrap_err();
        assert!(e.to_string().contains("limit is 8 bytes"), "{e}");
        assert!(
            t.fetch("/nonexistent/x", 1 << 20, Duration::from_secs(5))
                .await
                .is_err()
        );
        // The real machine: Linux always has at least one CPU and one NUMA node.
        let view = t.os_view(Duration::from_secs(10)).await.unwrap();
        assert!(view.logical_cpus.unwrap_or(0) >= 1, "{view:?}");
        assert!(view.numa_nodes.unwrap_or(0) >= 1, "{view:?}");
    }

    #[tokio::test]
    async fn readiness_gives_up_after_the_timeout() {
        let t = Transport::Ssh(SshTarget {
            target: "nobody@127.0.0.1".into(),
            port: Some(1),
            config: Some(PathBuf::from("/dev/null")),
            connect_timeout: Duration::from_secs(1),
        });
        let err = t
            .wait_ready(Duration::from_millis(300), Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("did not answer"), "{err}");
    }

    #[tokio::test]
    async fn on_the_host_only_files_are_benchmarked_and_programs_fail_by_name() {
        let t = Transport::Local;
        let host = OnHost::new(&t, Duration::from_millis(200));
        assert_eq!(host.describe(), "local");
        assert_eq!(host.files_only().as_deref(), Some(crate::exec::FILES_ONLY));
        let consent = crate::device::Consent::default();
        let e = host
            .claim_device(Path::new("/dev/null"), true, &consent)
            .await
            .unwrap_err();
        assert!(e.to_string().contains(crate::exec::FILES_ONLY), "{e}");
        // A program outliving the host's limit fails as that program, saying why.
        let e = host.run(&["sleep".into(), "5".into()], None).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "sleep 5 failed: sleep 5 (local) did not finish within 200ms"
        );
    }
}
