//! Many BMCs: the inventory file (`[[bmc]]` entries with `name`, `url`, `fingerprint`,
//! `credentials`, `tags`, `node`; see the README), selection by tag, and running one operation per host
//! with bounded concurrency, where one host's failure never stops the others.

use crate::error::{Context, Result, bad_input};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use url::Url;

mod address;
mod select;
mod shard;

pub use address::bmc_url;
pub use select::Limit;
pub use shard::Shard;

/// One `[[bmc]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BmcEntry {
    /// Unique name; defaults to the URL's `host:port`.
    #[serde(default)]
    pub name: String,
    /// The BMC's URL.
    pub url: String,
    /// Pinned certificate fingerprint.
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// A credentials file for this BMC (relative to the inventory file).
    #[serde(default)]
    pub credentials: Option<PathBuf>,
    /// Free-form labels, for `--tag`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The host's name in its operating system's cluster (e.g. its Kubernetes node), given to
    /// hooks as `RFTUNE_NODE`.
    #[serde(default)]
    pub node: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InventoryFile {
    #[serde(default)]
    bmc: Vec<BmcEntry>,
}

impl BmcEntry {
    /// An entry for a `--bmc URL` given on the command line (a bare host name or address
    /// means `https://`: [`bmc_url`]).
    pub fn from_url(url: &str) -> Result<Self> {
        let url = bmc_url(url)?;
        let parsed = Url::parse(&url)
            .with_context(|| format!("--bmc {url:?} is not a URL (expected e.g. https://idrac.example)"))?;
        Ok(Self {
            name: host_key(&parsed),
            url,
            fingerprint: None,
            credentials: None,
            tags: Vec::new(),
            node: None,
        })
    }
}

/// `host:port` of a URL, the key of known_hosts.
pub fn host_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port_or_known_default() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    }
}

/// Reads an inventory file: names default to `host:port` and must be unique; credentials paths
/// are resolved against the file's directory.
pub fn read_inventory(path: &Path) -> Result<Vec<BmcEntry>> {
    let text = crate::state::read_capped(path, crate::state::MAX_INVENTORY_BYTES, "inventory")?;
    let file: InventoryFile =
        toml::from_str(&text).map_err(|e| crate::Error::bad_input(format!("inventory {}: {e}", path.display())))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(file.bmc.len());
    for (i, mut entry) in file.bmc.into_iter().enumerate() {
        let url = Url::parse(&entry.url).with_context(|| {
            format!(
                "inventory {}: entry {} has an invalid url {:?}",
                path.display(),
                i + 1,
                entry.url
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            bad_input!(
                "inventory {}: entry {} url must be http:// or https://",
                path.display(),
                i + 1
            );
        }
        if entry.name.is_empty() {
            entry.name = host_key(&url);
        }
        if !seen.insert(entry.name.clone()) {
            bad_input!(
                "inventory {}: the name {:?} appears twice; names must be unique",
                path.display(),
                entry.name
            );
        }
        if let Some(c) = &entry.credentials
            && c.is_relative()
        {
            entry.credentials = Some(base.join(c));
        }
        out.push(entry);
    }
    if out.is_empty() {
        bad_input!("inventory {} lists no [[bmc]] entries", path.display());
    }
    Ok(out)
}

/// Keeps the entries carrying every one of `tags`.
pub fn filter_tags(entries: Vec<BmcEntry>, tags: &[String]) -> Vec<BmcEntry> {
    entries
        .into_iter()
        .filter(|e| tags.iter().all(|t| e.tags.contains(t)))
        .collect()
}

/// The outcome of one host's operation.
#[derive(Debug)]
pub struct HostResult<T, E = crate::Error> {
    /// The entry it ran for.
    pub entry: BmcEntry,
    /// What it produced.
    pub result: Result<T, E>,
}

/// How a rollout proceeds over a fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Hosts worked on at the same time.
    pub concurrency: usize,
    /// Once this many hosts have failed, start no further host.
    pub max_failures: Option<usize>,
    /// The first this many hosts go first; if one of them fails, no other host starts.
    pub canaries: usize,
    /// Hosts that may reject one credential (the run's, or an inventory entry's file) before no
    /// further host is sent it; the hosts not logged in by then are left untouched. Until a
    /// host accepts a credential, it goes to one host at a time, so a wrong password costs at
    /// most this many failed logins whatever the concurrency.
    pub max_login_rejections: usize,
}

impl Default for Limits {
    /// 512 at a time (a fleet's reads wait on round trips, not CPU), no failure limit, no
    /// canaries, and 3 rejected logins per credential: a wrong password is found out, and a
    /// directory account (AD, LDAP) that locks after a handful of failures is not locked by it.
    fn default() -> Self {
        Self {
            concurrency: 512,
            max_failures: None,
            canaries: 0,
            max_login_rejections: 3,
        }
    }
}

/// The result of a host left untouched: `why` it was not started.
fn not_started<T, E: From<crate::Error>>(name: String, why: String) -> Result<T, E> {
    let e = crate::HostError::new(name, crate::HostErrorKind::NotStarted, why);
    Err(E::from(crate::Error::from(e)))
}

/// What a host's work ends with: its result, and what is left to do once the result is
/// handed over (the BMC's logout), still within the host's turn.
pub struct Outcome<T, E = crate::Error> {
    /// The host's result.
    pub result: Result<T, E>,
    /// Work after the result, such as a logout: the result goes to the caller before it, so
    /// whatever the result holds (a host's decoded values) is not kept for another round
    /// trip, while the host keeps its slot of `--concurrency` until this is done too.
    pub then: Option<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl<T, E> From<Result<T, E>> for Outcome<T, E> {
    fn from(result: Result<T, E>) -> Self {
        Self { result, then: None }
    }
}

/// What happened to a host in flight: its result came, or its task ended.
enum Event<T, E> {
    Result(usize, Result<T, E>),
    Ended(Result<tokio::task::Id, tokio::task::JoinError>),
}

/// The next [`Event`] of the hosts in flight, results first: a task sends its result before it
/// ends, so a task that ended without one had none to give. `None` once no task is left and
/// every result was taken.
async fn next_event<T, E>(
    set: &mut tokio::task::JoinSet<()>,
    results: &mut tokio::sync::mpsc::UnboundedReceiver<(usize, Result<T, E>)>,
) -> Option<Event<T, E>> {
    if set.is_empty() {
        return results.try_recv().ok().map(|(i, r)| Event::Result(i, r));
    }
    tokio::select! {
        biased;
        Some((i, r)) = results.recv() => Some(Event::Result(i, r)),
        Some(ended) = set.join_next_with_id() => Some(Event::Ended(ended.map(|(id, ())| id))),
    }
}

/// Runs `op` for every entry within `limits` and hands each host's result to `sink` as soon as
/// the host has it (in the order hosts finish, with the entry's position in `entries`), keeping
/// none of them: a caller keeps only what it chooses, e.g. counters. Hosts start in inventory
/// order; the canaries finish before any other host starts, and after a failed canary or
/// `max_failures` failed hosts, the hosts not started yet are left untouched and reported as
/// [`crate::HostErrorKind::NotStarted`]. Every entry is handed over exactly once, also the hosts
/// left untouched. A host's [`Outcome::then`] runs after its result was handed over, before its
/// slot goes to the next host.
pub async fn for_each_limited<T, E, F, Fut>(
    entries: &[BmcEntry],
    limits: &Limits,
    op: F,
    mut sink: impl FnMut(usize, HostResult<T, E>),
) where
    T: Send + 'static,
    E: From<crate::Error> + Send + 'static,
    F: Fn(BmcEntry) -> Fut,
    Fut: Future<Output = Outcome<T, E>> + Send + 'static,
{
    let limit = Arc::new(tokio::sync::Semaphore::new(limits.concurrency.max(1)));
    let max_failures = limits.max_failures;
    let failed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut set = tokio::task::JoinSet::new();
    let (results_tx, mut results) = tokio::sync::mpsc::unbounded_channel();
    // The hosts in flight, by task (at most `concurrency`), to name a task that panicked.
    let mut running = std::collections::HashMap::new();
    // Whether each host's result was handed over: a task that panics after its result (in its
    // `then`) lost nothing the caller is owed.
    let mut handed = vec![false; entries.len()];
    let mut failed_canary: Option<String> = None;
    let mut record = |running: &mut std::collections::HashMap<tokio::task::Id, usize>,
                      failed_canary: &mut Option<String>,
                      event: Event<T, E>| {
        let (i, result) = match event {
            Event::Result(i, r) => (i, r),
            Event::Ended(Ok(id)) => {
                running.remove(&id);
                return;
            }
            Event::Ended(Err(e)) => {
                // Each task's id goes into `running` right after it is spawned, before the set
                // is polled again, and leaves it only here.
                let i = running
                    .remove(&e.id())
                    .expect("a task the set hands back was recorded in `running` when spawned");
                if handed[i] {
                    tracing::warn!("{}: the task was lost after its result: {e}", entries[i].name);
                    return;
                }
                let lost = crate::Error::Task(e).context(format!("{}: the task was lost", entries[i].name));
                (i, Err(E::from(lost)))
            }
        };
        handed[i] = true;
        if i < limits.canaries && result.is_err() && failed_canary.is_none() {
            *failed_canary = Some(entries[i].name.clone());
        }
        sink(
            i,
            HostResult {
                entry: entries[i].clone(),
                result,
            },
        );
    };
    // Hosts start in inventory order: each waits for a slot here, not in its own task, where
    // the scheduler could let a later host overtake it (a canary or --max-failures depends on
    // the order). Finished hosts are recorded while waiting, so progress keeps moving.
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 && i == limits.canaries {
            // The canaries finish first; one that failed stops the rollout (unless a stop
            // request did, which each host reports itself).
            while let Some(event) = next_event(&mut set, &mut results).await {
                record(&mut running, &mut failed_canary, event);
            }
            if let Some(canary) = failed_canary.clone()
                && crate::interrupt::received().is_none()
            {
                for (j, e) in entries.iter().enumerate().skip(i) {
                    let why = format!("not started: the canary {canary} failed");
                    sink(
                        j,
                        HostResult {
                            entry: e.clone(),
                            result: not_started(e.name.clone(), why),
                        },
                    );
                }
                return;
            }
        }
        let permit = loop {
            tokio::select! {
                // A host that has its result hands it over before the next one starts, so
                // results are not held on top of the `concurrency` hosts in flight.
                biased;
                Some(event) = next_event(&mut set, &mut results) => record(&mut running, &mut failed_canary, event),
                permit = limit.clone().acquire_owned() => break permit,
            }
        };
        // On the heap: a future moved into an `async move` block and awaited there is kept
        // twice in the task (rustc does not overlap the captured value with the awaiting
        // state), so an unboxed host future would cost each host in flight its size again.
        let fut = Box::pin(op(entry.clone()));
        let failed = failed.clone();
        let results_tx = results_tx.clone();
        let name = entry.name.clone();
        let handle = set.spawn(async move {
            let _permit = permit;
            let failures = failed.load(std::sync::atomic::Ordering::SeqCst);
            // The receiver lives until every task has ended, unless the whole run was dropped.
            let hand_over = |result| drop(results_tx.send((i, result)));
            if let Some(max) = max_failures
                && failures >= max
            {
                let why = format!("not started: {failures} host(s) had failed (at most {max} may)");
                return hand_over(not_started(name, why));
            }
            // After Ctrl-C or SIGTERM, hosts not started yet stay untouched.
            if let Some(signal) = crate::interrupt::received() {
                let why = format!(
                    "not started: {} came before it started; nothing was sent to it",
                    crate::interrupt::signal_name(signal)
                );
                return hand_over(not_started(name, why));
            }
            let Outcome { result, then } = fut.await;
            if result.is_err() {
                failed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            hand_over(result);
            if let Some(then) = then {
                then.await;
            }
        });
        running.insert(handle.id(), i);
    }
    while let Some(event) = next_event(&mut set, &mut results).await {
        record(&mut running, &mut failed_canary, event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (PathBuf, PathBuf) {
        // Kept on drop: each test's files live on until the process ends.
        let dir = tempfile::tempdir().unwrap().keep();
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("fleet.toml");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn reads_the_product_format() {
        let (dir, p) = write(
            r#"
[[bmc]]
name = "r7625-0001"
url = "https://127.0.0.1:9001"
fingerprint = "sha256:abc"
credentials = "creds/idrac.toml"
tags = ["rack12"]

[[bmc]]
url = "https://127.0.0.1:9002"
"#,
        );
        let e = read_inventory(&p).unwrap();
        assert_eq!(e[0].name, "r7625-0001");
        assert_eq!(
            e[0].credentials.as_deref(),
            Some(dir.join("creds/idrac.toml").as_path())
        );
        assert_eq!(e[1].name, "127.0.0.1:9002");
        assert_eq!(filter_tags(e, &["rack12".into()]).len(), 1);
    }

    #[test]
    fn rejects_duplicates_typos_and_empty_files() {
        let (_, p) = write("[[bmc]]\nurl = \"https://a:1\"\n[[bmc]]\nurl = \"https://a:1\"\n");
        assert!(read_inventory(&p).unwrap_err().to_string().contains("appears twice"));
        let (_, p) = write("[[bmc]]\nurl = \"https://a:1\"\nfingerprnt = \"x\"\n");
        let err = read_inventory(&p).unwrap_err().to_string();
        assert!(err.contains("fingerprnt") && err.contains("line 3"), "{err}");
        let (_, p) = write("");
        assert!(read_inventory(&p).unwrap_err().to_string().contains("no [[bmc]]"));
    }

    fn entries_of(n: u16) -> Vec<BmcEntry> {
        (0..n)
            .map(|i| BmcEntry::from_url(&format!("http://127.0.0.1:{}", 9000 + i)).unwrap())
            .collect()
    }

    /// Every host's result in inventory order, as a caller keeping them all collects them.
    async fn collected<T, F, Fut>(entries: Vec<BmcEntry>, limits: &Limits, op: F) -> Vec<HostResult<T>>
    where
        T: Send + 'static,
        F: Fn(BmcEntry) -> Fut,
        Fut: Future<Output = crate::Result<T>> + Send + 'static,
    {
        let mut results: Vec<Option<HostResult<T>>> = std::iter::repeat_with(|| None).take(entries.len()).collect();
        let op = |entry| {
            let fut = op(entry);
            async move { Outcome::from(fut.await) }
        };
        for_each_limited(&entries, limits, op, |i, r| results[i] = Some(r)).await;
        results.into_iter().flatten().collect()
    }

    #[tokio::test]
    async fn a_failed_canary_stops_the_rollout_and_a_good_one_lets_it_go_on() {
        let limits = Limits {
            concurrency: 4,
            canaries: 2,
            ..Limits::default()
        };
        let started = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = started.clone();
        // The second canary fails: hosts 2.. never start.
        let results = collected(entries_of(5), &limits, move |e| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(e.name.clone());
                if e.name.ends_with("9001") {
                    Err(crate::Error::bad_input("boom"))
                } else {
                    Ok(())
                }
            }
        })
        .await;
        assert_eq!(started.lock().unwrap().len(), 2, "only the canaries started");
        for r in &results[2..] {
            let e = r.result.as_ref().unwrap_err();
            assert_eq!(e.kind(), Some(crate::HostErrorKind::NotStarted));
            assert!(
                e.to_string().contains("not started: the canary 127.0.0.1:9001 failed"),
                "{e}"
            );
        }
        // Good canaries: every host runs.
        let results = collected(entries_of(5), &limits, |_| async { Ok::<_, crate::Error>(()) }).await;
        assert!(results.iter().all(|r| r.result.is_ok()));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn hosts_start_in_inventory_order() {
        let entries: Vec<BmcEntry> = (0..40)
            .map(|i| BmcEntry::from_url(&format!("http://127.0.0.1:{}", 9000 + i)).unwrap())
            .collect();
        let started = Arc::new(std::sync::Mutex::new(Vec::new()));
        let order = started.clone();
        // One at a time: each host is admitted only after the one before it.
        let limits = Limits {
            concurrency: 1,
            ..Limits::default()
        };
        collected(entries, &limits, move |e| {
            let order = order.clone();
            async move {
                order.lock().unwrap().push(e.name.clone());
                tokio::task::yield_now().await;
                Ok::<_, crate::Error>(())
            }
        })
        .await;
        let started = started.lock().unwrap().clone();
        let expected: Vec<String> = (0..40).map(|i| format!("127.0.0.1:{}", 9000 + i)).collect();
        assert_eq!(started, expected);
    }

    #[tokio::test]
    async fn after_max_failures_no_further_host_starts() {
        // One at a time, every host fails: after two, the rest stay untouched.
        let limits = Limits {
            concurrency: 1,
            max_failures: Some(2),
            ..Limits::default()
        };
        let results = collected(entries_of(6), &limits, |_| async {
            Err::<(), _>(crate::Error::bad_input("boom"))
        })
        .await;
        let kinds: Vec<Option<crate::HostErrorKind>> = results
            .iter()
            .map(|r| r.result.as_ref().err().and_then(crate::Error::kind))
            .collect();
        assert_eq!(kinds[..2], [None, None], "the first two ran and failed");
        assert!(
            kinds[2..].iter().all(|k| *k == Some(crate::HostErrorKind::NotStarted)),
            "{kinds:?}"
        );
    }

    #[tokio::test]
    async fn for_each_hands_over_each_host_as_it_finishes() {
        // Host 0 finishes only after the sink has received host 1: results are streamed, not
        // held until the last host is done.
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let rx = Arc::new(tokio::sync::Mutex::new(Some(rx)));
        let mut tx = Some(tx);
        let entries = entries_of(3);
        let mut order = Vec::new();
        for_each_limited(
            &entries,
            &Limits::default(),
            move |e| {
                let rx = rx.clone();
                let work = async move {
                    if e.name.ends_with("9000") {
                        let rx = rx.lock().await.take();
                        if let Some(rx) = rx {
                            rx.await.map_err(|_| crate::Error::bad_input("host 1 never arrived"))?;
                        }
                    }
                    if e.name.ends_with("9002") {
                        return Err(crate::Error::bad_input("boom"));
                    }
                    Ok(e.name.clone())
                };
                async move { Outcome::from(work.await) }
            },
            |i, r| {
                if i == 1
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(());
                }
                order.push((i, r.entry.name.clone(), r.result.is_ok()));
            },
        )
        .await;
        assert_eq!(order.len(), 3, "every host once: {order:?}");
        assert_eq!(order.last().map(|o| o.0), Some(0), "host 0 came last: {order:?}");
        assert!(order.contains(&(0, "127.0.0.1:9000".into(), true)), "{order:?}");
        assert!(order.contains(&(2, "127.0.0.1:9002".into(), false)), "{order:?}");
    }

    #[tokio::test]
    async fn a_result_is_handed_over_before_the_work_after_it_which_keeps_the_slot() {
        // One slot: host 0's result reaches the sink while its `then` (a logout) still waits
        // for that very handover, and host 1 starts only once that `then` is done.
        let events = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let rx = Arc::new(std::sync::Mutex::new(Some(rx)));
        let mut tx = Some(tx);
        let limits = Limits {
            concurrency: 1,
            ..Limits::default()
        };
        let seen = events.clone();
        for_each_limited(
            &entries_of(2),
            &limits,
            move |e| {
                let (events, rx) = (seen.clone(), rx.lock().unwrap().take());
                async move {
                    events.lock().unwrap().push(format!("{} started", e.name));
                    let then = rx.map(|rx| {
                        Box::pin(async move {
                            let handed = rx.await.is_ok();
                            events
                                .lock()
                                .unwrap()
                                .push(format!("then, after the handover: {handed}"));
                        }) as std::pin::Pin<Box<dyn Future<Output = ()> + Send>>
                    });
                    Outcome::<_, crate::Error> { result: Ok(()), then }
                }
            },
            |i, _| {
                events.lock().unwrap().push(format!("{i} handed over"));
                if let Some(tx) = tx.take() {
                    let _ = tx.send(());
                }
            },
        )
        .await;
        assert_eq!(
            *events.lock().unwrap(),
            [
                "127.0.0.1:9000 started",
                "0 handed over",
                "then, after the handover: true",
                "127.0.0.1:9001 started",
                "1 handed over"
            ]
        );
    }
}
