//! Multi-target mode, as Prometheus' blackbox exporter and the iDRAC exporters work: a
//! scraper names a BMC (`/probe?target=…&profile=…`) and gets that host's check, made then.
//!
//! The scraper is not trusted with the BMC credentials: a target is checked only when the
//! inventory lists it (by name or address; the entry's URL, pin and credentials file are used)
//! or an allowlist pattern admits it (HTTPS only, trusted through the run's pin or CA, never
//! on first use, so a name that resolves elsewhere meets a certificate it cannot present).
//! Profiles are the ones configured at start, chosen by name: a probe never reads a file.
//! Probes in flight are bounded; each ends within its deadline (the scrape's timeout).

use super::check::Checker;
use super::{Failure, HostRecord, Reason};
use crate::assess::LoadedProfile;
use crate::fleet::{BmcEntry, Limit, host_key};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Why a probe was not made: the HTTP status to answer and the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// 400 (a bad request), 403 (a target not admitted), 503 (no probe slot in time).
    pub status: u16,
    /// What to tell the scraper.
    pub message: String,
}

impl Refused {
    fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
}

/// Which targets a probe may check: the inventory's hosts, and what the allowlist admits.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    inventory: Vec<BmcEntry>,
    allow: Option<Limit>,
}

impl Admission {
    /// The hosts of `inventory`, and the addresses `allow` patterns admit (globs over the host
    /// and `host:port`, `!` to exclude; none: only the inventory's hosts).
    pub fn new(inventory: Vec<BmcEntry>, allow: &[String]) -> crate::Result<Self> {
        let allow = if allow.is_empty() {
            None
        } else {
            Some(Limit::parse(allow)?)
        };
        Ok(Self { inventory, allow })
    }

    /// The host `target` names (an inventory name, a URL, or a bare host name or address), if
    /// admitted.
    pub fn admit(&self, target: &str) -> Result<BmcEntry, Refused> {
        let target = target.trim();
        if target.is_empty() {
            return Err(Refused::new(
                400,
                "give ?target=HOST (an iDRAC's address or inventory name)",
            ));
        }
        if let Some(e) = self.inventory.iter().find(|e| e.name == target) {
            return Ok(e.clone());
        }
        let url = crate::fleet::bmc_url(target)
            .ok()
            .and_then(|u| url::Url::parse(&u).ok())
            .ok_or_else(|| Refused::new(400, format!("target {target:?} is not a host name, address or URL")))?;
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(Refused::new(
                400,
                format!("target {target:?}: give the BMC's address alone, without a path"),
            ));
        }
        let key = host_key(&url);
        let listed = self
            .inventory
            .iter()
            .find(|e| url::Url::parse(&e.url).is_ok_and(|u| host_key(&u) == key));
        if let Some(e) = listed {
            return Ok(e.clone());
        }
        let not_admitted = || {
            Refused::new(
                403,
                format!(
                    "target {target:?} is neither in the inventory nor admitted by --allow-target: this exporter sends its BMC credentials to no other host"
                ),
            )
        };
        let Some(allow) = &self.allow else {
            return Err(not_admitted());
        };
        if url.scheme() != "https" {
            return Err(Refused::new(
                403,
                format!("target {target:?}: a target outside the inventory is reached over HTTPS only"),
            ));
        }
        let entry = BmcEntry::from_url(url.as_str().trim_end_matches('/')).map_err(|_| not_admitted())?;
        if allow.admits(&entry) {
            Ok(entry)
        } else {
            Err(not_admitted())
        }
    }
}

/// At most this many targets' records are kept (their counters, power source, job progress);
/// beyond it, the longest unprobed is forgotten.
const KEPT: usize = 10_000;

/// What every probe shares.
pub struct Prober {
    /// Which targets may be checked.
    pub admission: Admission,
    /// The profiles a probe may name, by name; the first is the default.
    pub profiles: Vec<Arc<LoadedProfile>>,
    /// How checks are made (its profile is replaced by the probe's).
    pub checker: Checker,
    /// The longest a check may take, whatever the scrape allows.
    pub timeout: Duration,
    /// How long a running job may show no progress before it counts as stuck.
    pub stuck_after: Duration,
    slots: Arc<Semaphore>,
    max_probes: usize,
    in_flight: std::sync::atomic::AtomicUsize,
    records: Mutex<HashMap<(String, String), HostRecord>>,
}

impl std::fmt::Debug for Prober {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prober")
            .field("admission", &self.admission)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Prober {
    /// A prober admitting by `admission`, checking with `checker` against one of `profiles`
    /// (the first when a probe names none), at most `max_probes` at once, each within
    /// `timeout`.
    pub fn new(
        admission: Admission,
        profiles: Vec<Arc<LoadedProfile>>,
        checker: Checker,
        timeout: Duration,
        stuck_after: Duration,
        max_probes: usize,
    ) -> Self {
        Self {
            admission,
            profiles,
            checker,
            timeout,
            stuck_after,
            slots: Arc::new(Semaphore::new(max_probes.max(1))),
            max_probes: max_probes.max(1),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            records: Mutex::new(HashMap::new()),
        }
    }

    /// Probes running now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The names probes may choose among.
    pub fn profile_names(&self) -> Vec<&str> {
        self.profiles.iter().map(|p| p.name()).collect()
    }

    /// The profile a probe names (by name only), or the default.
    fn profile(&self, name: Option<&str>) -> Result<Arc<LoadedProfile>, Refused> {
        let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) else {
            return self
                .profiles
                .first()
                .cloned()
                .ok_or_else(|| Refused::new(400, "no profile configured"));
        };
        self.profiles.iter().find(|p| p.name() == name).cloned().ok_or_else(|| {
            Refused::new(
                400,
                format!(
                    "profile {name:?} is not one this exporter serves ({}): profiles are configured by name when it starts, and a probe never reads a file",
                    self.profile_names().join(", ")
                ),
            )
        })
    }

    /// The time a probe may take: the scrape's timeout (`X-Prometheus-Scrape-Timeout-Seconds`)
    /// less half a second for the answer to travel (at least half of it), within the
    /// configured timeout.
    pub fn deadline(&self, scrape_timeout: Option<&str>) -> Duration {
        let scrape = scrape_timeout
            .and_then(|t| t.trim().parse::<f64>().ok())
            .filter(|t| t.is_finite() && *t > 0.0)
            .map(|t| Duration::from_secs_f64((t - 0.5).max(t / 2.0)));
        scrape.map_or(self.timeout, |s| s.min(self.timeout))
    }

    /// Checks `target` against `profile` within `deadline`, and renders its metrics. A check
    /// that fails or runs out of time is metrics too (`rftune_check_success 0` and why), as a
    /// blackbox probe is; a target not admitted, a profile not configured or no free slot
    /// before the deadline are refusals.
    pub async fn probe(&self, target: &str, profile: Option<&str>, deadline: Duration) -> Result<String, Refused> {
        let entry = self.admission.admit(target)?;
        let profile = self.profile(profile)?;
        let started = Instant::now();
        let _slot = tokio::time::timeout(deadline, self.slots.clone().acquire_owned())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or_else(|| {
                Refused::new(
                    503,
                    format!(
                        "every probe slot (--max-probes {}) stayed busy for the scrape's {}",
                        self.max_probes,
                        humantime::format_duration(deadline)
                    ),
                )
            })?;
        self.in_flight.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let key = (entry.name.clone(), profile.name().to_owned());
        let sensor = self.records().get(&key).and_then(|r| r.sensor);
        let checker = Checker {
            profile: profile.clone(),
            ..self.checker.clone()
        };
        let left = deadline.saturating_sub(started.elapsed());
        let result = match tokio::time::timeout(left, checker.check(&entry, sensor)).await {
            Ok(Ok(finding)) => Ok(finding),
            Ok(Err(e)) => Err(Failure {
                reason: Reason::of(&e),
                message: crate::error::without_host(&entry.name, &format!("{e:#}")).to_owned(),
            }),
            Err(_) => Err(Failure {
                reason: Reason::Timeout,
                message: format!(
                    "the probe took longer than the scrape allows ({}) and was abandoned",
                    humantime::format_duration(deadline)
                ),
            }),
        };
        self.in_flight.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        let now = Instant::now();
        let mut records = self.records();
        if records.len() >= KEPT && !records.contains_key(&key) {
            let oldest = records
                .iter()
                .min_by_key(|(_, r)| r.last.as_ref().map(|l| l.finished))
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                records.remove(&oldest);
            }
        }
        let record = records
            .entry(key)
            .or_insert_with(|| HostRecord::new(entry.name.clone()));
        record.record(result, now - started, now, SystemTime::now(), self.stuck_after);
        Ok(super::metrics::render_probe(profile.name(), record))
    }

    fn records(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), HostRecord>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(allow: &[&str]) -> Admission {
        let inventory = vec![BmcEntry {
            name: "r7625-0001".into(),
            ..BmcEntry::from_url("http://127.0.0.1:9001").unwrap()
        }];
        let allow: Vec<String> = allow.iter().map(|s| (*s).to_owned()).collect();
        Admission::new(inventory, &allow).unwrap()
    }

    #[test]
    fn only_the_inventory_and_the_allowlist_are_admitted() {
        let a = admission(&["*.idrac.example", "10.1.2.*:443", "!bad.idrac.example"]);
        assert_eq!(a.admit("r7625-0001").unwrap().url, "http://127.0.0.1:9001");
        assert_eq!(a.admit("http://127.0.0.1:9001").unwrap().name, "r7625-0001");
        assert_eq!(a.admit("r1.idrac.example").unwrap().url, "https://r1.idrac.example");
        assert_eq!(a.admit("https://10.1.2.3").unwrap().url, "https://10.1.2.3");
        let refused = |t: &str| a.admit(t).unwrap_err();
        assert_eq!(refused("bad.idrac.example").status, 403);
        assert_eq!(refused("evil.example").status, 403);
        assert_eq!(refused("r1.idrac.example.evil.example").status, 403);
        assert_eq!(refused("10.1.2.3:8443").status, 403);
        assert_eq!(refused("http://r1.idrac.example").status, 403, "HTTPS only");
        assert_eq!(refused("127.0.0.1:9002").status, 403, "the inventory's port only");
        assert_eq!(
            a.admit("127.0.0.1:9001").unwrap().url,
            "http://127.0.0.1:9001",
            "the inventory's URL for its host"
        );
        assert_eq!(refused("https://r1.idrac.example/redfish/v1").status, 400);
        assert_eq!(refused("root:calvin@r1.idrac.example").status, 400);
        assert_eq!(refused("").status, 400);
        let none = admission(&[]);
        assert_eq!(
            none.admit("r1.idrac.example").unwrap_err().status,
            403,
            "no allowlist: the inventory only"
        );
    }
}
