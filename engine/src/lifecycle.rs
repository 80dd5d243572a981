//! The life of one host's work, the same for every operation: connect, read the service root
//! first when the operation needs it (anonymously, before any credential is sent), log in, run
//! the operation, and always log out. Where the work is audited, a connection or login that
//! failed is recorded, and so is the end of work that failed, so every host a run touched has
//! its records. A fleet runs the same life once per host, within [`Limits`].

use crate::audit::{AuditLog, Step};
use crate::connect::{self, Bmc, ConnectConfig};
use crate::error::Result;
use crate::fleet::{BmcEntry, HostResult, Limits};
use crate::observe::Observer;
use crate::state::StateDirs;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// One piece of work on one connected, logged-in BMC: apply, diff, a power action, an
/// inventory, a snapshot. The lifecycle around it is [`Access::one`]'s and [`Access::fleet`]'s.
pub trait Operation: Send + Sync {
    /// What the work gives for one host.
    type Output: Send;

    /// Whether the service root is read before logging in (for work that needs the BMC's
    /// layout or chassis): one more request, sent without credentials.
    fn reads_service_root_first(&self) -> bool {
        false
    }

    /// The work, on a BMC that is logged in. It may log out itself when it is done with the
    /// BMC early ([`Bmc::close`] is idempotent).
    fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> impl Future<Output = Result<Self::Output>> + Send;
}

/// How a run reaches its hosts, shared by all of them: the connection settings (credentials
/// resolved), the state directories (known_hosts) and who hears of progress.
#[derive(Clone)]
pub struct Access {
    /// How to connect.
    pub connect: Arc<ConnectConfig>,
    /// The state directories (known_hosts lives there).
    pub dirs: Arc<StateDirs>,
    /// Told of each host's progress and of notices (a certificate trusted on first use).
    pub observer: Arc<dyn Observer>,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("connect", &self.connect)
            .field("dirs", &self.dirs)
            .finish_non_exhaustive()
    }
}

impl Access {
    /// Access with these settings.
    pub fn new(connect: ConnectConfig, dirs: StateDirs, observer: Arc<dyn Observer>) -> Self {
        Self {
            connect: Arc::new(connect),
            dirs: Arc::new(dirs),
            observer,
        }
    }

    /// Runs `op` on the host of `entry`: connected, logged in, logged out afterwards whatever
    /// happened. With `audit`, a failed connection or login and a failed operation are recorded
    /// (and a login that worked, so the log shows where each host's work began).
    pub async fn one<O: Operation>(&self, entry: &BmcEntry, audit: Option<&AuditLog>, op: &O) -> Result<O::Output> {
        let mut bmc = self.open(entry, audit, op.reads_service_root_first()).await?;
        let result = op.run(&mut bmc, &*self.observer).await;
        bmc.close().await;
        result.map_err(|e| recorded(audit, &entry.name, Step::Done, e))
    }

    /// The first half of [`Access::one`], for work that keeps a host open across steps of its
    /// own (applies between benchmarks): connected, its service root read first when `read_root`, logged in,
    /// recorded in `audit` as `one` does. The caller logs out ([`Bmc::close`]).
    pub async fn open(&self, entry: &BmcEntry, audit: Option<&AuditLog>, read_root: bool) -> Result<Bmc> {
        let bmc = match connect::connect(entry, &self.connect, &self.dirs, &*self.observer).await {
            Ok(bmc) => bmc,
            Err(e) => return Err(recorded(audit, &entry.name, Step::Connect, e)),
        };
        if read_root && let Err(e) = bmc.service_root().await {
            return Err(recorded(audit, &entry.name, Step::Connect, e));
        }
        if let Err(e) = bmc.login().await {
            bmc.close().await;
            // The login is the first request a BMC usually sees: one that never got an
            // answer, or a certificate that was refused, failed to connect.
            let step = if never_reached(&e) { Step::Connect } else { Step::Login };
            return Err(recorded(audit, &entry.name, step, e));
        }
        if let Some(audit) = audit
            && let Err(e) = audit.record(&entry.name, Step::Login, Value::Null, "ok", Value::Null)
        {
            bmc.close().await;
            return Err(e);
        }
        Ok(bmc)
    }

    /// [`Access::one`] for every host of `entries`, at most `limits.concurrency` at a time, with
    /// the canaries and failure limit of `limits`; each host's result goes to `sink` as the
    /// host finishes (with its position in `entries`), and none is kept here.
    pub async fn fleet<O: Operation + 'static>(
        &self,
        entries: &[BmcEntry],
        limits: &Limits,
        audit: Option<&AuditLog>,
        op: Arc<O>,
        sink: impl FnMut(usize, HostResult<O::Output>),
    ) where
        O::Output: 'static,
    {
        let audit = audit.cloned();
        let visit = |entry: BmcEntry| {
            let (access, audit, op) = (self.clone(), audit.clone(), op.clone());
            async move { access.one(&entry, audit.as_ref(), &*op).await }
        };
        crate::fleet::for_each_limited(entries, limits, visit, sink).await;
    }

    /// [`Access::fleet`], with every host's result returned in inventory order once all are
    /// done; `on_done` hears of each as it finishes (for progress).
    pub async fn fleet_collected<O: Operation + 'static>(
        &self,
        entries: &[BmcEntry],
        limits: &Limits,
        audit: Option<&AuditLog>,
        op: Arc<O>,
        on_done: impl Fn(&BmcEntry, bool),
    ) -> Vec<HostResult<O::Output>>
    where
        O::Output: 'static,
    {
        let mut results: Vec<Option<HostResult<O::Output>>> = entries.iter().map(|_| None).collect();
        self.fleet(entries, limits, audit, op, |i, r| {
            on_done(&r.entry, r.result.is_ok());
            results[i] = Some(r);
        })
        .await;
        results.into_iter().flatten().collect()
    }
}

/// Whether `error` means the BMC was never reached (nothing listening, a TLS handshake that
/// failed or was refused, plain HTTP on an `https://` URL), rather than answering.
fn never_reached(error: &crate::Error) -> bool {
    use redfish_client::error::TransportKind;
    matches!(
        error.redfish().map(redfish_client::Error::last_attempt),
        Some(redfish_client::Error::Transport {
            kind: TransportKind::Connect | TransportKind::Certificate | TransportKind::PlainHttp,
            ..
        }) | Some(redfish_client::Error::PinMismatch { .. })
    )
}

/// `error`, recorded as the end of `step` for `host` when the work is audited. A failure to
/// write the record is logged, not returned: the host's own error is what the caller needs.
fn recorded(audit: Option<&AuditLog>, host: &str, step: Step, error: crate::Error) -> crate::Error {
    if let Some(audit) = audit {
        let detail = Value::String(crate::error::report(&error));
        if let Err(e) = audit.record(host, step, Value::Null, "error", detail) {
            tracing::warn!("{host}: {}", crate::error::report(&e));
        }
    }
    error
}
