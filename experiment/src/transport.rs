//! How an experiment reaches a host's OS: its file's `os` entry as a host-bench [`Transport`]
//! (local, or the system `ssh` with a short connect timeout so a host that is down fails a
//! readiness probe quickly), and the host as the place fio runs when rftune is not installed
//! there, its refusals worded for experiments.

use crate::spec::OsAccess;
use host_bench::ssh::{OnHost, SshTarget, Transport};
use std::time::Duration;

impl From<&OsAccess> for Transport {
    fn from(os: &OsAccess) -> Self {
        match os {
            OsAccess::Local { .. } => Self::Local,
            OsAccess::Ssh {
                target, port, config, ..
            } => Self::Ssh(SshTarget {
                target: target.clone(),
                port: Some(*port),
                config: config.clone(),
                connect_timeout: Duration::from_secs(10),
            }),
        }
    }
}

/// The host behind `transport` as the place a storage benchmark runs without rftune there,
/// benchmark programs limited to `timeout`.
pub(crate) fn on_host(transport: &Transport, timeout: Duration) -> OnHost<'_> {
    OnHost {
        files_only:
            "without rftune on the host, experiments run fio only on files (the raw-device safety checks are rftune's)"
                .into(),
        ..OnHost::new(transport, timeout)
    }
}
