//! The life of one host's work, the same for every operation: connect, read the service root
//! first when the operation needs it (anonymously, before any credential is sent), log in, run
//! the operation, and always log out. Where the work is audited, a connection or login that
//! failed is recorded, and so is the end of work that failed, so every host a run touched has
//! its records. A fleet runs the same life once per host, within [`Limits`], and sends each
//! credential to one host at a time until a host accepts it.

use crate::audit::{AuditLog, Step};
use crate::connect::{self, Bmc, ConnectConfig};
use crate::error::{HostError, HostErrorKind, Result};
use crate::fleet::{BmcEntry, HostResult, Limits, Outcome};
use crate::observe::{Event, Observer};
use crate::state::StateDirs;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

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
        let (bmc, result) = self.work(entry, audit, op, None).await;
        if let Some(bmc) = bmc {
            bmc.close().await;
        }
        result
    }

    /// [`Access::one`] up to its logout: the BMC (when it was opened) comes back with the
    /// result, for the caller to close. Logs in through `logins` when given.
    async fn work<O: Operation>(
        &self,
        entry: &BmcEntry,
        audit: Option<&AuditLog>,
        op: &O,
        logins: Option<&Logins>,
    ) -> (Option<Bmc>, Result<O::Output>) {
        let mut bmc = match self
            .open_through(entry, audit, op.reads_service_root_first(), logins)
            .await
        {
            Ok(bmc) => bmc,
            Err(e) => return (None, Err(e)),
        };
        let result = op.run(&mut bmc, &*self.observer).await;
        (
            Some(bmc),
            result.map_err(|e| recorded(audit, &entry.name, Step::Done, e)),
        )
    }

    /// The first half of [`Access::one`], for work that keeps a host open across steps of its
    /// own (applies between benchmarks): connected, its service root read first when `read_root`, logged in,
    /// recorded in `audit` as `one` does. The caller logs out ([`Bmc::close`]).
    pub async fn open(&self, entry: &BmcEntry, audit: Option<&AuditLog>, read_root: bool) -> Result<Bmc> {
        self.open_through(entry, audit, read_root, None).await
    }

    /// [`Access::open`], logging in through `logins` when given. A fleet's host connects first
    /// (no request, no credential; the login reuses the connection): a BMC that cannot be
    /// reached then fails without holding its credential's turn, which covers only the login
    /// itself, and fails alike whether or not the credential was accepted by then.
    async fn open_through(
        &self,
        entry: &BmcEntry,
        audit: Option<&AuditLog>,
        read_root: bool,
        logins: Option<&Logins>,
    ) -> Result<Bmc> {
        let bmc = match connect::connect(entry, &self.connect, &self.dirs, &*self.observer).await {
            Ok(bmc) => bmc,
            Err(e) => return Err(recorded(audit, &entry.name, Step::Connect, e)),
        };
        if read_root && let Err(e) = bmc.service_root().await {
            return Err(recorded(audit, &entry.name, Step::Connect, e));
        }
        let credential = logins.map(|l| (l, l.credential(entry)));
        if credential.is_some()
            && let Err(e) = bmc.client.connect().await
        {
            return Err(recorded(
                audit,
                &entry.name,
                Step::Connect,
                bmc.explain(e, "connecting"),
            ));
        }
        let login = match &credential {
            Some((logins, credential)) => logins.login(&bmc, credential, &*self.observer).await,
            None => bmc.login().await,
        };
        if let Err(e) = login {
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
    /// the canaries and failure limit of `limits`; each host's result goes to `sink` as soon as
    /// the host has it, before its logout is answered (with its position in `entries`), and
    /// none is kept here.
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
        // One host cannot storm: it logs in as `one` does, its hint said with its error.
        let logins = (entries.len() > 1).then(|| Arc::new(Logins::new(limits.max_login_rejections)));
        let visit = |entry: BmcEntry| {
            let (access, audit, op, logins) = (self.clone(), audit.clone(), op.clone(), logins.clone());
            async move {
                let (bmc, result) = access.work(&entry, audit.as_ref(), &*op, logins.as_deref()).await;
                Outcome {
                    result,
                    then: bmc.map(|bmc| {
                        Box::pin(async move { bmc.close().await }) as std::pin::Pin<Box<dyn Future<Output = ()> + Send>>
                    }),
                }
            }
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

/// The credentials of one fleet run and how their logins went. A wrong password sent to a
/// whole fleet at once is as many failed logins as hosts, within milliseconds, and an iDRAC
/// that checks passwords against a directory (AD, LDAP) counts each against the account,
/// which locks after a few. So each distinct credential (the run's, or the credentials file an
/// inventory entry names) goes to one host first, and to the rest at once only after a host
/// accepted it; after `limit` hosts rejected it, to no further host: those are left untouched
/// ([`HostErrorKind::NotStarted`], saying why). The first rejection of each credential is told
/// once, with its hint, to the observer.
///
/// A login that has not been answered within [`TURN`] no longer holds the others back (a hung
/// BMC would otherwise stall the fleet for its timeout), but logins of a credential no host has
/// accepted never number more than `limit` in flight and rejected together: however slowly
/// BMCs answer, a wrong password costs at most `limit` failed logins.
///
/// With Basic authentication there is no login to hold back: each request carries the
/// credentials.
struct Logins {
    limit: usize,
    credentials: Mutex<HashMap<Option<PathBuf>, Arc<Credential>>>,
}

/// How long the login holding a credential's turn may take before the next host's starts too.
/// Logins answer within a second or two.
const TURN: std::time::Duration = std::time::Duration::from_secs(2);

/// How one credential has fared in a run.
struct Credential {
    /// Held by the login going first while no host has accepted the credential (for [`TURN`]
    /// at most).
    turn: tokio::sync::Mutex<()>,
    /// Logins that may still be sent while no host accepted the credential: `limit` at first,
    /// one used up for good by each rejection.
    chances: tokio::sync::Semaphore,
    /// A host accepted it: logins go ahead at once.
    accepted: AtomicBool,
    /// The hosts that rejected it, in order.
    rejected_by: Mutex<Vec<String>>,
}

impl Credential {
    fn accepted(&self) -> bool {
        self.accepted.load(Ordering::SeqCst)
    }

    fn rejections(&self) -> Vec<String> {
        self.rejected_by.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Logins {
    /// No credential tried yet; each may be rejected by `limit` hosts (at least 1).
    fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            credentials: Mutex::new(HashMap::new()),
        }
    }

    /// The credential `entry` logs in with: its own credentials file, or the run's.
    fn credential(&self, entry: &BmcEntry) -> Arc<Credential> {
        let mut all = self
            .credentials
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.entry(entry.credentials.clone())
            .or_insert_with(|| {
                Arc::new(Credential {
                    turn: tokio::sync::Mutex::new(()),
                    chances: tokio::sync::Semaphore::new(self.limit),
                    accepted: AtomicBool::new(false),
                    rejected_by: Mutex::new(Vec::new()),
                })
            })
            .clone()
    }

    /// Logs `bmc` in with `credential` when its turn comes, or refuses to send the credential
    /// once too many hosts rejected it.
    async fn login(&self, bmc: &Bmc, credential: &Credential, observer: &dyn Observer) -> Result<()> {
        let mut chance = None;
        let mut turn = None;
        if !credential.accepted() {
            // Both wait while the credential is in doubt; acceptance opens them for everyone.
            chance = credential.chances.acquire().await.ok();
            if !credential.accepted() {
                turn = Some(credential.turn.lock().await);
            }
        }
        if credential.accepted() {
            (chance, turn) = (None, None);
        }
        let rejected_by = credential.rejections();
        if rejected_by.len() >= self.limit {
            return Err(HostError::new(
                &bmc.name,
                HostErrorKind::NotStarted,
                format!(
                    "not started: {} rejected the credentials for {}, so they were sent to no further host (--max-login-rejections {})",
                    rejected_by.join(", "),
                    user(bmc),
                    self.limit
                ),
            )
            .into());
        }
        let login = bmc.login();
        tokio::pin!(login);
        let result = match turn {
            Some(turn) => tokio::select! {
                result = &mut login => result,
                () = tokio::time::sleep(TURN) => {
                    drop(turn);
                    login.await
                }
            },
            None => login.await,
        };
        match &result {
            Ok(()) => {
                credential.accepted.store(true, Ordering::SeqCst);
                // Everyone waiting goes ahead, past the turn and the chances.
                credential.chances.close();
            }
            Err(e) if e.kind() == Some(HostErrorKind::Credentials) => {
                if let Some(chance) = chance.take() {
                    chance.forget();
                }
                let rejections = {
                    let mut rejected = credential
                        .rejected_by
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    rejected.push(bmc.name.clone());
                    rejected.len()
                };
                if rejections == self.limit {
                    // Hosts still waiting for a chance learn that none is left.
                    credential.chances.close();
                }
                if rejections == 1 {
                    let hint = e.hint().unwrap_or("the BMC rejected the credentials");
                    let next = if credential.accepted() {
                        String::new()
                    } else {
                        format!(
                            "; until a host accepts them they go to one host at a time, and to none after {} rejections",
                            self.limit
                        )
                    };
                    observer.event(&Event::notice(&bmc.name, format!("{hint} (user {}){next}", user(bmc))));
                }
                if rejections == self.limit {
                    observer.event(&Event::notice(
                        &bmc.name,
                        format!(
                            "{rejections} hosts rejected the credentials for {}; the hosts not logged in yet are left untouched (not started)",
                            user(bmc)
                        ),
                    ));
                }
            }
            Err(_) => {}
        }
        drop(chance);
        result
    }
}

/// Whom `bmc` logs in as, for messages.
fn user(bmc: &Bmc) -> &str {
    bmc.client.username().unwrap_or(connect::credentials::DEFAULT_USERNAME)
}

/// Whether `error` means the BMC was never reached (nothing listening, a name that does not
/// resolve, a TLS handshake that failed or was refused, the other protocol on the port), rather
/// than answering.
fn never_reached(error: &crate::Error) -> bool {
    use redfish_client::error::TransportKind;
    matches!(
        error.redfish().map(redfish_client::Error::last_attempt),
        Some(redfish_client::Error::Transport {
            kind: TransportKind::Connect
                | TransportKind::NoSuchName
                | TransportKind::Certificate
                | TransportKind::PlainHttp
                | TransportKind::TlsAnswer,
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
