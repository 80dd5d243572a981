//! Running commands on a host's operating system: locally (rftune runs on the host) or through
//! the system `ssh` client with the user's own configuration, keys and agent (`BatchMode=yes`:
//! ssh never asks for a password and fails instead). Also: waiting until the OS answers, copying
//! a result file back, what the OS shows about SMT, NUMA and idle states, which BIOS values that
//! contradicts, and the host as the place host-bench's storage run works through these commands
//! when rftune is not installed there ([`OnHost`]).

use crate::error::{Context, Result, bad_input};
use host_bench::host::OsView;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to reach one host's OS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Commands run here.
    Local,
    /// Commands run through `ssh`.
    Ssh(SshTarget),
}

/// An ssh destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SshTarget {
    /// `user@host` or a `Host` alias.
    pub(crate) target: String,
    /// Port.
    pub(crate) port: u16,
    /// `ssh -F` configuration file, instead of the user's.
    pub(crate) config: Option<PathBuf>,
    /// `ConnectTimeout`, so an unreachable host fails a readiness probe quickly.
    pub(crate) connect_timeout: Duration,
}

use host_bench::exec::{Output, command_line, program_failed, sh, shell_quote, shown};

impl From<&super::spec::OsAccess> for Transport {
    fn from(os: &super::spec::OsAccess) -> Self {
        match os {
            super::spec::OsAccess::Local { .. } => Self::Local,
            super::spec::OsAccess::Ssh {
                target, port, config, ..
            } => Self::Ssh(SshTarget {
                target: target.clone(),
                port: *port,
                config: config.clone(),
                connect_timeout: Duration::from_secs(10),
            }),
        }
    }
}

/// The arguments of the system `ssh` that run `argv` on `t`: batch mode (keys or agent only,
/// never a password prompt), the port, an optional configuration file, `--` so the target can
/// never be read as an option, the target, and the remote command as one shell-quoted argument.
pub(crate) fn ssh_args(t: &SshTarget, argv: &[String]) -> Result<Vec<String>> {
    let mut a = vec![
        "-o".to_owned(),
        "BatchMode=yes".to_owned(),
        "-o".to_owned(),
        format!("ConnectTimeout={}", t.connect_timeout.as_secs().max(1)),
        "-p".to_owned(),
        t.port.to_string(),
    ];
    if let Some(c) = &t.config {
        a.push("-F".to_owned());
        a.push(c.display().to_string());
    }
    a.push("--".to_owned());
    a.push(t.target.clone());
    a.push(command_line(argv)?);
    Ok(a)
}

impl Transport {
    /// How messages name it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Local => "local".to_owned(),
            Self::Ssh(t) => format!("ssh {}:{}", t.target, t.port),
        }
    }

    /// Runs `argv` on the host, killing it after `timeout`.
    pub(crate) async fn run(&self, argv: &[String], timeout: Duration) -> Result<Output> {
        let Some((program, args)) = argv.split_first() else {
            bad_input!("no command to run");
        };
        let mut cmd = match self {
            Self::Local => {
                let mut c = tokio::process::Command::new(program);
                c.args(args);
                c
            }
            Self::Ssh(t) => {
                let mut c = tokio::process::Command::new("ssh");
                c.args(ssh_args(t, argv)?);
                c
            }
        };
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let what = format!("{} ({})", shown(argv), self.describe());
        let child = cmd.spawn().with_context(|| format!("starting {what}"))?;
        let out = tokio::time::timeout(timeout, child.wait_with_output())
            .await
            .map_err(|_| {
                crate::Error::OsCommand(format!(
                    "{what} did not finish within {}",
                    humantime::format_duration(timeout)
                ))
            })?
            .with_context(|| format!("running {what}"))?;
        Ok(Output {
            code: out.status.code(),
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// Runs `argv` and fails unless it exits with 0, quoting the end of its error output.
    pub(crate) async fn run_ok(&self, argv: &[String], timeout: Duration) -> Result<Output> {
        let out = self.run(argv, timeout).await?;
        if !out.success() {
            return Err(program_failed(format!("{} ({})", shown(argv), self.describe()), out.code, &out.stderr).into());
        }
        Ok(out)
    }

    /// Runs a POSIX shell script on the host (`sh -c`, whatever the login shell is).
    pub(crate) async fn script(&self, script: &str, timeout: Duration) -> Result<Output> {
        self.run_ok(&sh(script), timeout).await
    }

    /// Runs `true` every `interval` until it succeeds; returns how long that took.
    pub(crate) async fn wait_ready(&self, timeout: Duration, interval: Duration) -> Result<Duration> {
        let start = Instant::now();
        loop {
            let left = timeout.saturating_sub(start.elapsed());
            let attempt = left.min(Duration::from_secs(30)).max(Duration::from_millis(100));
            let last = match self.run(&["true".to_owned()], attempt).await {
                Ok(o) if o.success() => return Ok(start.elapsed()),
                Ok(o) => o.stderr.trim().to_owned(),
                Err(e) => crate::error::report(&e),
            };
            if start.elapsed() + interval > timeout {
                return Err(crate::Error::OsCommand(format!(
                    "the OS did not answer over {} within {}: {last}",
                    self.describe(),
                    humantime::format_duration(timeout)
                )));
            }
            tokio::time::sleep(interval).await;
        }
    }

    /// The host's file `remote` (read directly locally, `head -c` over ssh), refused when it is
    /// larger than `limit` bytes.
    pub(crate) async fn fetch(&self, remote: &str, limit: u64, timeout: Duration) -> Result<Vec<u8>> {
        let bytes = match self {
            Self::Local => crate::state::read_capped(Path::new(remote), limit, "file")?.into_bytes(),
            Self::Ssh(_) => {
                let argv = ["head", "-c", &limit.saturating_add(1).to_string(), "--", remote].map(str::to_owned);
                self.run_ok(&argv, timeout).await?.stdout
            }
        };
        if bytes.len() as u64 > limit {
            bad_input!(
                "{remote} on {} is larger than {limit} bytes (is this the right file?)",
                self.describe()
            );
        }
        Ok(bytes)
    }

    /// What the OS shows about SMT, NUMA nodes, sockets and idle states.
    pub(crate) async fn os_view(&self, timeout: Duration) -> Result<OsView> {
        let out = self.script(OsView::SCRIPT, timeout).await?;
        Ok(OsView::parse(&out.stdout_text()))
    }
}

impl Transport {
    /// Whether `program` can be run on the host; an error when the host did not answer the
    /// question (the command did not start, was killed, or ssh itself failed with 255).
    pub(crate) async fn has_program(&self, program: &str) -> Result<bool> {
        let probe = format!("command -v {} >/dev/null", shell_quote(program)?);
        let out = self.run(&sh(&probe), Duration::from_secs(30)).await?;
        match out.code {
            Some(0) => Ok(true),
            Some(255) if matches!(self, Self::Ssh(_)) => Err(crate::Error::OsCommand(format!(
                "looking for {program} over {} failed: {}",
                self.describe(),
                out.stderr.trim()
            ))),
            Some(_) => Ok(false),
            None => Err(crate::Error::OsCommand(format!(
                "looking for {program} over {} was killed",
                self.describe()
            ))),
        }
    }
}

/// The host's OS as the place a storage benchmark runs when rftune is not installed there:
/// host-bench's fio runner and storage run work through the transport's commands, fio runs
/// limited to `timeout`. Files only: the raw-device safety checks are rftune's own code.
#[derive(Debug)]
pub(crate) struct OnHost<'a> {
    /// How the host is reached.
    pub(crate) transport: &'a Transport,
    /// The longest a benchmark program may run.
    pub(crate) timeout: Duration,
}

impl host_bench::exec::Exec for OnHost<'_> {
    fn describe(&self) -> String {
        self.transport.describe()
    }

    fn files_only(&self) -> Option<String> {
        Some(
            "without rftune on the host, experiments run fio only on files (the raw-device safety checks are rftune's)"
                .into(),
        )
    }

    fn run<'a>(
        &'a self,
        argv: &'a [String],
        timeout: Option<Duration>,
    ) -> host_bench::exec::BoxFuture<'a, host_bench::Result<Output>> {
        Box::pin(async move {
            self.transport
                .run(argv, timeout.unwrap_or(self.timeout))
                .await
                .map_err(|e| host_bench::Error::Program {
                    program: shown(argv),
                    detail: crate::error::report(&e),
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
            port: 2222,
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
        let a = ssh_args(&ssh(), &argv).unwrap();
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
        assert!(
            ssh_args(&ssh(), &nul).is_err(),
            "a NUL byte cannot cross a command line"
        );
        assert!(!a.iter().any(|x| x.contains("assword")));
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
        assert!(err.to_string().contains("did not finish"), "{err}");
        assert!(t.run(&[], Duration::from_secs(1)).await.is_err());
        assert!(
            t.run(&["/nonexistent/rftune-test".into()], Duration::from_secs(1))
                .await
                .is_err()
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
        let dir_tmp = tempfile::tempdir().unwrap();
        let dir = dir_tmp.path().to_path_buf();
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("bench.json");
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
        std::fs::remove_dir_all(dir).ok();
    }

    #[tokio::test]
    async fn readiness_gives_up_after_the_timeout() {
        let t = Transport::Ssh(SshTarget {
            target: "nobody@127.0.0.1".into(),
            port: 1,
            config: Some(PathBuf::from("/dev/null")),
            connect_timeout: Duration::from_secs(1),
        });
        let err = t
            .wait_ready(Duration::from_millis(300), Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("did not answer"), "{err}");
    }
}
