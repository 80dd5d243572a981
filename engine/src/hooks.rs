//! Commands run around a host's reboot: `before-reboot` (drain the node) once the host holds
//! its reboot slot and its values are staged, `after-verify` (bring it back) once it is
//! verified, `on-failure` when anything after a `before-reboot` failed. Each runs through
//! `/bin/sh -c` with the host in its environment (`RFTUNE_HOST`, `RFTUNE_BMC`,
//! `RFTUNE_SERVICE_TAG`, `RFTUNE_PROFILE`, `RFTUNE_PHASE`, and `RFTUNE_NODE` when the inventory
//! names the host's OS node) and none of rftune's own settings: every other `RFTUNE_*`
//! variable — the BMC password, credentials files, BIOS passwords — is removed, standard input
//! is closed (it may carry the password of `--password-stdin`), and the command is killed with
//! its process group after the time limit.

use crate::error::Result;
use serde::Serialize;
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// The commands of a run, and how long each may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hooks {
    /// Run once the host holds its reboot slot and its values are staged, before the reboot.
    /// Failing stops the host before the reboot.
    pub before_reboot: Option<String>,
    /// Run once the host is back and verified in sync, for hosts whose `before_reboot` ran.
    pub after_verify: Option<String>,
    /// Run when a host whose `before_reboot` ran did not end verified (that hook failed, the
    /// reboot, job or verification failed, or the run was stopped).
    pub on_failure: Option<String>,
    /// The longest a hook may run before it is killed (and counts as failed).
    pub timeout: Duration,
}

impl Default for Hooks {
    /// No hooks; 10 minutes each.
    fn default() -> Self {
        Self {
            before_reboot: None,
            after_verify: None,
            on_failure: None,
            timeout: Duration::from_secs(600),
        }
    }
}

impl Hooks {
    /// Whether any hook is set.
    pub fn any(&self) -> bool {
        self.before_reboot.is_some() || self.after_verify.is_some() || self.on_failure.is_some()
    }

    /// The command of `phase`, if set.
    pub fn command(&self, phase: HookPoint) -> Option<&str> {
        match phase {
            HookPoint::BeforeReboot => self.before_reboot.as_deref(),
            HookPoint::AfterVerify => self.after_verify.as_deref(),
            HookPoint::OnFailure => self.on_failure.as_deref(),
        }
    }
}

/// When a hook runs (`RFTUNE_PHASE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookPoint {
    /// Before the reboot.
    BeforeReboot,
    /// After the host was verified.
    AfterVerify,
    /// After a failure, for a host whose before-reboot hook ran.
    OnFailure,
}

impl HookPoint {
    /// `before-reboot`, `after-verify`, `on-failure` (the value of `RFTUNE_PHASE`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BeforeReboot => "before-reboot",
            Self::AfterVerify => "after-verify",
            Self::OnFailure => "on-failure",
        }
    }
}

/// What a hook is told about its host.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The inventory name (`RFTUNE_HOST`).
    pub host: &'a str,
    /// The BMC's URL (`RFTUNE_BMC`).
    pub bmc: &'a str,
    /// The service tag, when known (`RFTUNE_SERVICE_TAG`).
    pub service_tag: Option<&'a str>,
    /// The profile applied (`RFTUNE_PROFILE`).
    pub profile: &'a str,
    /// The OS node name from the inventory (`RFTUNE_NODE`), e.g. for `kubectl drain`.
    pub node: Option<&'a str>,
    /// What failed, for `on-failure` (`RFTUNE_ERROR`).
    pub error: Option<&'a str>,
}

/// How a hook ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ran {
    /// `before-reboot`, `after-verify` or `on-failure`.
    pub phase: &'static str,
    /// Its exit code (`None`: killed by a signal, or by the time limit).
    pub exit: Option<i32>,
    /// Killed after the time limit.
    pub timed_out: bool,
    /// How long it ran, in seconds.
    pub seconds: f64,
    /// The end of its standard output (at most [`OUTPUT_KEPT`] bytes).
    pub stdout: String,
    /// The end of its standard error (at most [`OUTPUT_KEPT`] bytes).
    pub stderr: String,
}

/// How much of a hook's output the audit log keeps (its end: where the error usually is).
pub const OUTPUT_KEPT: usize = 8 << 10;

impl Ran {
    /// Whether it succeeded (exit 0 in time).
    pub fn ok(&self) -> bool {
        self.exit == Some(0) && !self.timed_out
    }

    /// `exit 3: <the last line of its stderr>`, `killed after 10m`, for messages.
    pub fn failure(&self, timeout: Duration) -> String {
        let how = match (self.timed_out, self.exit) {
            (true, _) => format!("killed after {}", humantime::format_duration(timeout)),
            (false, Some(code)) => format!("exit {code}"),
            (false, None) => "killed by a signal".to_owned(),
        };
        let last = self
            .stderr
            .lines()
            .rev()
            .chain(self.stdout.lines().rev())
            .find(|l| !l.trim().is_empty());
        match last {
            Some(line) => format!("{how}: {}", line.trim()),
            None => how,
        }
    }
}

/// The environment of a hook: `inherited` without any `RFTUNE_*` variable (rftune's own
/// settings, its secrets among them), plus the host's.
pub fn environment(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    phase: HookPoint,
    ctx: &Context<'_>,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(k, _)| !k.to_string_lossy().to_ascii_uppercase().starts_with("RFTUNE_"))
        .collect();
    let mut set = |k: &str, v: Option<&str>| {
        if let Some(v) = v {
            env.push((k.into(), v.into()));
        }
    };
    set("RFTUNE_HOST", Some(ctx.host));
    set("RFTUNE_BMC", Some(ctx.bmc));
    set("RFTUNE_SERVICE_TAG", ctx.service_tag);
    set("RFTUNE_PROFILE", Some(ctx.profile));
    set("RFTUNE_PHASE", Some(phase.as_str()));
    set("RFTUNE_NODE", ctx.node);
    set("RFTUNE_ERROR", ctx.error);
    env
}

/// Runs `command` for `phase` through `/bin/sh -c`, at most `timeout`; its output is kept
/// (the end of it) for the audit log. An error only when it could not be started.
pub async fn run(command: &str, phase: HookPoint, ctx: &Context<'_>, timeout: Duration) -> Result<Ran> {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .env_clear()
        .envs(environment(std::env::vars_os(), phase, ctx))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let start = Instant::now();
    let child = cmd.spawn().map_err(|e| {
        crate::Error::OsCommand(format!(
            "{}: the {} hook could not be started: {e}",
            ctx.host,
            phase.as_str()
        ))
    })?;
    let group = child.id();
    let (output, timed_out) = match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(out) => (Some(out?), false),
        Err(_) => {
            kill_group(group);
            (None, true)
        }
    };
    let text = |bytes: &[u8]| {
        let from = bytes.len().saturating_sub(OUTPUT_KEPT);
        String::from_utf8_lossy(&bytes[from..]).into_owned()
    };
    Ok(Ran {
        phase: phase.as_str(),
        exit: output.as_ref().and_then(|o| o.status.code()),
        timed_out,
        seconds: (start.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        stdout: output.as_ref().map(|o| text(&o.stdout)).unwrap_or_default(),
        stderr: output.as_ref().map(|o| text(&o.stderr)).unwrap_or_default(),
    })
}

/// Kills the hook's whole process group (a shell and what it started), not only the shell.
fn kill_group(group: Option<u32>) {
    let Some(pid) = group
        .and_then(|g| i32::try_from(g).ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context<'static> {
        Context {
            host: "r7625-0001",
            bmc: "https://10.0.0.1",
            service_tag: Some("ABC1234"),
            profile: "performance",
            node: Some("worker-1"),
            error: None,
        }
    }

    #[test]
    fn the_environment_names_the_host_and_holds_none_of_rftunes_secrets() {
        let inherited = [
            ("PATH", "/usr/bin"),
            ("KUBECONFIG", "/etc/kube.conf"),
            ("RFTUNE_PASSWORD", "calvin"),
            ("RFTUNE_CREDENTIALS", "/root/idrac.toml"),
            ("RFTUNE_BIOS_PASSWORD", "s3cret"),
            ("rftune_password", "lower"),
            ("RFTUNE_HOST", "spoofed"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = environment(inherited, HookPoint::BeforeReboot, &ctx());
        let get = |k: &str| {
            env.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(get("PATH").as_deref(), Some("/usr/bin"));
        assert_eq!(
            get("KUBECONFIG").as_deref(),
            Some("/etc/kube.conf"),
            "the user's own tools keep theirs"
        );
        for secret in [
            "RFTUNE_PASSWORD",
            "RFTUNE_CREDENTIALS",
            "RFTUNE_BIOS_PASSWORD",
            "rftune_password",
        ] {
            assert_eq!(get(secret), None, "{secret}");
        }
        assert!(env.iter().all(|(_, v)| v != "calvin" && v != "s3cret"));
        assert_eq!(
            get("RFTUNE_HOST").as_deref(),
            Some("r7625-0001"),
            "ours, not the inherited one"
        );
        assert_eq!(env.iter().filter(|(n, _)| n == "RFTUNE_HOST").count(), 1);
        assert_eq!(get("RFTUNE_PHASE").as_deref(), Some("before-reboot"));
        assert_eq!(get("RFTUNE_NODE").as_deref(), Some("worker-1"));
        assert_eq!(get("RFTUNE_ERROR"), None);
    }

    #[tokio::test]
    async fn a_hook_reports_its_exit_and_output_and_is_killed_after_its_time_limit() {
        let ran = run(
            "echo drained $RFTUNE_NODE; echo almost >&2; exit 3",
            HookPoint::BeforeReboot,
            &ctx(),
            Duration::from_secs(20),
        )
        .await
        .unwrap();
        assert!(!ran.ok());
        assert_eq!((ran.exit, ran.timed_out), (Some(3), false));
        assert_eq!(ran.stdout, "drained worker-1\n");
        assert_eq!(ran.failure(Duration::from_secs(20)), "exit 3: almost");
        let ran = run(
            "sleep 30 & sleep 30",
            HookPoint::AfterVerify,
            &ctx(),
            Duration::from_millis(200),
        )
        .await
        .unwrap();
        assert!(ran.timed_out && !ran.ok());
        assert_eq!(ran.failure(Duration::from_millis(200)), "killed after 200ms");
        assert!(
            ran.seconds < 20.0,
            "the whole group was killed, the run did not wait for it"
        );
    }
}
