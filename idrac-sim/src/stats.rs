//! Request counters behind `GET /_sim/stats`: what tests and benchmarks assert round trips on.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one host. `/_sim/...` calls are not counted; paths exclude query strings.
#[derive(Debug, Default)]
pub struct Stats {
    total: AtomicU64,
    by_method: Mutex<BTreeMap<String, u64>>,
    by_path: Mutex<BTreeMap<String, u64>>,
    bios_patches: AtomicU64,
    jobs_created: AtomicU64,
    resets: AtomicU64,
    sessions_created: AtomicU64,
    posts: AtomicU64,
    booted: Mutex<Vec<String>>,
}

impl Stats {
    /// Counts one request.
    pub fn record(&self, method: &str, path: &str) {
        self.total.fetch_add(1, Ordering::Relaxed);
        let bump = |m: &Mutex<BTreeMap<String, u64>>, key: &str| {
            let mut m = m.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match m.get_mut(key) {
                Some(n) => *n += 1,
                None => {
                    m.insert(key.to_owned(), 1);
                }
            }
        };
        bump(&self.by_method, method);
        bump(&self.by_path, &format!("{method} {path}"));
    }

    /// Counts a `PATCH Bios/Settings` (accepted or not).
    pub fn count_bios_patch(&self) {
        self.bios_patches.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a created job.
    pub fn count_job(&self) {
        self.jobs_created.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an accepted `ComputerSystem.Reset`.
    pub fn count_reset(&self) {
        self.resets.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a created session.
    pub fn count_session(&self) {
        self.sessions_created.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a POST (a boot of the host, whatever started it).
    pub fn count_post(&self) {
        self.posts.fetch_add(1, Ordering::Relaxed);
    }

    /// Records what a boot at the end of POST used (`Pxe (once)`, `NIC.PxeDevice.1-1`).
    pub fn count_boot(&self, device: &str) {
        self.booted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(device.to_owned());
    }

    /// What each boot so far used, in order.
    pub fn booted(&self) -> Vec<String> {
        self.booted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Requests counted so far.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Zeroes every counter.
    pub fn reset(&self) {
        for c in [
            &self.total,
            &self.bios_patches,
            &self.jobs_created,
            &self.resets,
            &self.sessions_created,
            &self.posts,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        for m in [&self.by_method, &self.by_path] {
            m.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
        }
        self.booted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// The `/_sim/stats` document, whose shape tests and benchmarks rely on.
    pub fn to_json(&self, service_tag: &str) -> Value {
        let map =
            |m: &Mutex<BTreeMap<String, u64>>| m.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "service_tag": service_tag,
            "requests": {"total": n(&self.total), "by_method": map(&self.by_method), "by_path": map(&self.by_path)},
            "bios_patches": n(&self.bios_patches),
            "jobs_created": n(&self.jobs_created),
            "resets": n(&self.resets),
            "sessions_created": n(&self.sessions_created),
            "posts": n(&self.posts),
            "booted": self.booted(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_method_and_path_and_resets() {
        let s = Stats::default();
        s.record("GET", "/redfish/v1");
        s.record("GET", "/redfish/v1");
        s.record("PATCH", "/redfish/v1/Systems/System.Embedded.1/Bios/Settings");
        s.count_bios_patch();
        let j = s.to_json("R760001");
        assert_eq!(j["requests"]["total"], 3);
        assert_eq!(j["requests"]["by_method"]["GET"], 2);
        assert_eq!(j["requests"]["by_path"]["GET /redfish/v1"], 2);
        assert_eq!(j["bios_patches"], 1);
        s.reset();
        assert_eq!(s.to_json("x")["requests"]["total"], 0);
    }
}
