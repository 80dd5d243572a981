//! fio's own servers on the clients of a run with several, so that every client starts each
//! step together and the aggregate is fio's (its "All clients" group): one `fio --server` per
//! client for the whole run, reached by fio's front end here, always stopped.
//!
//! fio's server runs any job it is sent and asks nobody who sends it, and it binds its TCP port
//! with `SO_REUSEPORT` (a second server on a taken port shares it silently, measured on fio
//! 3.33). So it never listens on a port: each server listens on a Unix socket in a directory
//! only the user can enter (`mkdir` under `umask 077`, a name no one can guess), which is
//! loopback in the strictest sense, and the front end reaches it through the SSH connection the
//! experiment opens to hosts ([`crate::ssh::SshTarget`]: batch mode, the user's keys) forwarding
//! a local socket in a private directory here (`ssh -L LOCAL:REMOTE`). A client that is this
//! host runs its server under `sh` and is reached at its socket directly.
//!
//! The server lives as long as the connection that started it: its shell waits on the
//! connection's standard input and stops fio and removes its directory when that closes (the
//! run ended, or ssh died), or on SIGHUP/SIGTERM. A server whose connection ended mid-run is
//! [`Servers::lost`], which the run reports with where it stopped.

use crate::exec::{command_line, sh};
use crate::ssh::Transport;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

/// How long a server may take to listen.
const START: Duration = Duration::from_secs(60);

/// How long a server gets to stop once its connection's input closes.
const STOP: Duration = Duration::from_secs(10);

/// The shell script that runs a server on a client: the server's directory `dir` (created
/// exclusively, private), fio listening on `dir/fio.sock`, `ready` once it does, and everything
/// stopped and removed when standard input closes or the shell is told to stop. The shell leads
/// a process group of its own (ssh's sessions are; here it is started so), and stops the whole
/// group: fio's server runs each job in a child of its own, which must not outlive it.
fn script(dir: &str, alloc_kib: Option<u64>) -> String {
    let alloc = alloc_kib.map(|k| format!(" --alloc-size={k}")).unwrap_or_default();
    let stop = "trap '' HUP INT TERM; kill -TERM 0 2>/dev/null; wait; rm -rf \"$d\"";
    format!(
        "umask 077; d={dir}; mkdir \"$d\" || exit 3; \
         fio --server=sock:\"$d\"/fio.sock{alloc} >\"$d\"/log 2>&1 </dev/null & pid=$!; \
         trap '{stop_quoted}; exit 1' HUP INT TERM; \
         i=0; while [ ! -S \"$d\"/fio.sock ]; do \
           if ! kill -0 $pid 2>/dev/null; then cat \"$d\"/log >&2; rm -rf \"$d\"; exit 4; fi; \
           i=$((i+1)); if [ $i -gt 600 ]; then kill $pid; rm -rf \"$d\"; exit 5; fi; sleep 0.1; \
         done; \
         echo ready; cat >/dev/null; {stop}; exit 0",
        stop_quoted = stop.replace('\'', "'\\''")
    )
}

/// A name nobody can guess, for the servers' directories.
fn token() -> String {
    use std::hash::BuildHasher;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // `RandomState` draws its keys from the OS's randomness.
    let a = std::collections::hash_map::RandomState::new().hash_one((std::process::id(), now));
    let b = std::collections::hash_map::RandomState::new().hash_one(now);
    format!("{a:016x}{b:016x}")
}

/// One client's server.
struct Server {
    /// How messages name the client.
    client: String,
    /// `ssh`, or `sh` for this host.
    child: tokio::process::Child,
    /// Where the front end connects.
    socket: PathBuf,
    /// The end of what the connection said on stderr.
    stderr: Arc<Mutex<String>>,
}

/// The servers of a run, one per client in the run's order.
pub(crate) struct Servers {
    servers: Vec<Server>,
    /// The private directory here holding the forwarded sockets.
    local_dir: PathBuf,
}

impl Servers {
    /// Starts a server on every client reached through `transports` (in the run's order),
    /// each with `alloc_kib` for fio's `--alloc-size`; stops those already started if one fails.
    pub(crate) async fn start(transports: &[&Transport], alloc_kib: Option<u64>) -> Result<Self> {
        let token = token();
        let local_dir = std::env::temp_dir().join(format!("rftune-fio-{token}"));
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&local_dir)
                .map_err(crate::io_err(format!("creating {}", local_dir.display())))?;
        }
        let mut started = Self {
            servers: Vec::new(),
            local_dir,
        };
        for (k, transport) in transports.iter().enumerate() {
            match started.start_one(k, transport, &token, alloc_kib).await {
                Ok(server) => started.servers.push(server),
                Err(e) => {
                    started.stop().await;
                    return Err(e);
                }
            }
        }
        Ok(started)
    }

    async fn start_one(&self, k: usize, transport: &Transport, token: &str, alloc_kib: Option<u64>) -> Result<Server> {
        let remote_dir = format!("/tmp/rftune-fio-{token}-{k}");
        let script = script(&remote_dir, alloc_kib);
        let remote_socket = format!("{remote_dir}/fio.sock");
        let (mut command, socket) = match transport {
            Transport::Local => {
                let mut c = tokio::process::Command::new("sh");
                // A process group of its own, which the script stops as a whole.
                c.args(["-c", &script]).process_group(0);
                (c, PathBuf::from(&remote_socket))
            }
            Transport::Ssh(target) => {
                let local = self.local_dir.join(format!("c{k}.sock"));
                let mut c = tokio::process::Command::new("ssh");
                c.args(target.options())
                    .args([
                        "-o",
                        "ExitOnForwardFailure=yes",
                        "-o",
                        "StreamLocalBindUnlink=yes",
                        "-o",
                        "ServerAliveInterval=10",
                        "-o",
                        "ServerAliveCountMax=3",
                        "-L",
                    ])
                    .arg(format!("{}:{remote_socket}", local.display()))
                    .arg("--")
                    .arg(&target.target)
                    .arg(command_line(&sh(&script))?);
                (c, local)
            }
        };
        let client = transport.describe();
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(crate::io_err(format!("starting fio's server on {client}")))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let keep = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut text) = keep.lock() {
                        text.push_str(&String::from_utf8_lossy(&buf[..n]));
                        let excess = text.len().saturating_sub(4096);
                        if excess > 0 {
                            let cut = (excess..text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(0);
                            text.drain(..cut);
                        }
                    }
                }
            });
        }
        let mut server = Server {
            client,
            child,
            socket,
            stderr,
        };
        let ready = match server.child.stdout.take() {
            Some(out) => {
                let mut lines = tokio::io::BufReader::new(out).lines();
                tokio::time::timeout(START, lines.next_line()).await
            }
            None => Ok(Ok(None)),
        };
        match ready {
            Ok(Ok(Some(line))) if line.trim() == "ready" => Ok(server),
            Ok(_) => {
                // Give the stderr reader a moment to collect the reason.
                let status = tokio::time::timeout(Duration::from_secs(5), server.child.wait()).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                let code = match status {
                    Ok(Ok(s)) => s.code().map_or("a signal".to_owned(), |c| c.to_string()),
                    _ => "no exit".to_owned(),
                };
                Err(Error::NoAnswer(format!(
                    "fio's server on {} did not start (exited with {code}): {}",
                    server.client,
                    server.said()
                )))
            }
            Err(_) => {
                let _ = server.child.start_kill();
                Err(Error::NoAnswer(format!(
                    "fio's server on {} did not listen within {}",
                    server.client,
                    humantime::format_duration(START)
                )))
            }
        }
    }

    /// The front end's arguments for these servers: `--client=sock:SOCKET JOBFILE` for each
    /// client with a job file in `jobs` (`None`: no thread of the step runs there).
    pub(crate) fn front_end_args(&self, jobs: &[Option<&Path>]) -> Vec<String> {
        let mut out = Vec::new();
        for (server, job) in self.servers.iter().zip(jobs) {
            if let Some(job) = job {
                out.push(format!("--client=sock:{}", server.socket.display()));
                out.push(job.display().to_string());
            }
        }
        out
    }

    /// Where the front end reaches each client, in the run's order, as fio's output names them.
    pub(crate) fn sockets(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.socket.display().to_string()).collect()
    }

    /// The first server whose connection has ended, with what it said: `ssh user@host:22 (ssh
    /// exited with 255: Connection reset by peer)`.
    pub(crate) fn lost(&mut self) -> Option<String> {
        self.servers.iter_mut().find_map(|s| {
            let status = s.child.try_wait().ok().flatten()?;
            let code = status.code().map_or("a signal".to_owned(), |c| c.to_string());
            let said = s.said();
            Some(format!(
                "{} (the connection ended with {code}{})",
                s.client,
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {said}")
                }
            ))
        })
    }

    /// Stops every server: closes its connection's input (the server's shell then stops fio and
    /// removes its directory), kills what has not ended after a grace period, and removes the
    /// local sockets' directory.
    pub(crate) async fn stop(mut self) {
        for s in &mut self.servers {
            drop(s.child.stdin.take());
        }
        for s in &mut self.servers {
            if tokio::time::timeout(STOP, s.child.wait()).await.is_err() {
                let _ = s.child.kill().await;
            }
        }
        let _ = std::fs::remove_dir_all(&self.local_dir);
    }
}

impl Server {
    /// The last lines its connection wrote on stderr, on one line.
    fn said(&self) -> String {
        let text = self.stderr.lock().map(|t| t.clone()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_and_the_script_is_private_and_stops_with_its_input() {
        assert_ne!(token(), token());
        assert_eq!(token().len(), 32);
        let s = script("/tmp/rftune-fio-x-0", Some(4096));
        assert!(
            s.starts_with("umask 077; d=/tmp/rftune-fio-x-0; mkdir \"$d\" || exit 3;"),
            "{s}"
        );
        assert!(s.contains("fio --server=sock:\"$d\"/fio.sock --alloc-size=4096 "));
        assert!(s.contains("echo ready; cat >/dev/null; trap '' HUP INT TERM; kill -TERM 0"));
        assert!(!s.contains("ip:") && !s.contains("0.0.0.0"), "never a TCP port");
    }

    #[tokio::test]
    async fn a_local_server_listens_privately_and_is_gone_once_stopped() {
        if !rftune_tests::fio_available() {
            return;
        }
        let servers = Servers::start(&[&Transport::Local], None).await.unwrap();
        let socket = servers.servers[0].socket.clone();
        let dir = socket.parent().unwrap().to_owned();
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        assert!(std::fs::metadata(&socket).unwrap().file_type().is_socket());
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        let args = servers.front_end_args(&[Some(Path::new("j.fio"))]);
        assert_eq!(
            args,
            [format!("--client=sock:{}", socket.display()), "j.fio".to_owned()]
        );
        servers.stop().await;
        assert!(!dir.exists(), "the server removed its directory when its input closed");
    }
}
