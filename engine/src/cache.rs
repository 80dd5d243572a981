//! The attribute-registry cache: registries are ~1 MB and, for a given model and BIOS version,
//! their definitions never change, so a warm run reads them from
//! `$XDG_CACHE_HOME/rftune/registries/` instead of the BMC. Within a run, each model and
//! version is fetched or read at most once and shared by every host (a fleet of one model
//! holds one decoded registry, not one per host).
//!
//! A registry also carries per-host state: its `ReadOnly`/`Hidden`/`Immutable` flags describe
//! the values of the host that served it, System Lockdown marks almost everything read-only,
//! and `SupportedSystems[].SystemId` is that host's service tag. So:
//! - only what is static is kept for other hosts: flags that rules target are recomputed per
//!   host from its own values by the dependency evaluator, the service tag is dropped, and a
//!   registry served by a host in System Lockdown is never cached or shared;
//! - a cached or shared registry serves a host only if it is the registry that host names
//!   (`Bios.AttributeRegistry`), for its model and BIOS version (`SupportedSystems`), and if it
//!   defines every attribute the host lists. Otherwise the host's own registry is fetched, so
//!   a stale, corrupt or tampered copy (one BMC serving a doctored registry) cannot decide
//!   another host's plan;
//! - `--refresh-registry` ignores the disk copy and replaces it.
//!
//! Decoding a disk copy takes ~2 ms, as long as a warm single-host drift check's network
//! part. [`RegistryCache::prefetch_newest`] starts decoding the copy written last on a thread
//! of its own when the run begins, so the first host of that model and version finds it
//! decoded, or nearly, once its values are in.

use crate::error::Result;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::Attributes;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The cache directory and this run's decoded registries, which clones share, with the BIOS
/// checks made against them (hosts that share a registry and the values that matter to a
/// check share the check: [`bios_profiles::memo`]).
#[derive(Debug, Default, Clone)]
pub struct RegistryCache {
    dir: PathBuf,
    refresh: bool,
    loaded: Arc<Mutex<HashMap<String, Slot>>>,
    checks: Arc<bios_profiles::CheckMemo>,
    prefetched: Arc<Mutex<Option<Prefetched>>>,
}

type Slot = Arc<tokio::sync::OnceCell<Shared>>;

/// A disk copy being decoded ahead of need, and where its decoding will be sent.
#[derive(Debug)]
struct Prefetched {
    path: PathBuf,
    decoded: tokio::sync::oneshot::Receiver<Option<AttributeRegistry>>,
}

/// A registry this run's hosts share, with its attribute names sorted: every host's listing is
/// checked against them.
#[derive(Debug)]
struct Shared {
    registry: Arc<AttributeRegistry>,
    names: Vec<String>,
}

impl Shared {
    fn new(registry: AttributeRegistry) -> Self {
        let names = sorted_names(&registry);
        Self {
            registry: Arc::new(registry),
            names,
        }
    }

    fn fits(&self, info: &HostRegistryInfo<'_>) -> Result<(), String> {
        fits_named(&self.registry, &self.names, info)
    }
}

/// What a host says about itself, which a registry must match to serve it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostRegistryInfo<'a> {
    /// `SystemModelName`.
    pub model: &'a str,
    /// `SystemBiosVersion`.
    pub bios_version: &'a str,
    /// `Bios.AttributeRegistry` (`BiosAttributeRegistry.v1_0_3`), when the host names it.
    pub registry_id: Option<&'a str>,
    /// The host's current BIOS values.
    pub values: &'a Attributes,
    /// Whether the host is in System Lockdown (its registry's flags then reflect lockdown).
    pub lockdown: bool,
}

/// Where a registry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegistrySource {
    /// This run's memory or the disk cache: no request.
    Cache,
    /// The host itself.
    Fetched,
}

impl RegistryCache {
    /// A cache under `cache_dir`; with `refresh`, disk copies are ignored and replaced.
    pub fn new(cache_dir: &Path, refresh: bool) -> Self {
        Self {
            dir: cache_dir.join("registries"),
            refresh,
            loaded: Arc::default(),
            checks: Arc::default(),
            prefetched: Arc::default(),
        }
    }

    /// Starts decoding the disk copy written last, on a thread of its own: the copy a fleet of
    /// one model and BIOS version needs, whose first host then finds it decoded instead of
    /// decoding it after its reads. When the run needs another copy, or none, the cost is one
    /// decode off the hosts' path. Does nothing with `--refresh-registry` or an empty cache.
    pub fn prefetch_newest(&self) {
        if self.refresh {
            return;
        }
        let Some(path) = newest_file(&self.dir) else { return };
        let (send, decoded) = tokio::sync::oneshot::channel();
        let started = std::thread::Builder::new().name("registry-prefetch".into()).spawn({
            let path = path.clone();
            move || {
                let _ = send.send(decode_file(&path));
            }
        });
        if started.is_ok() {
            *self
                .prefetched
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Prefetched { path, decoded });
        }
    }

    /// The BIOS checks of this run, shared by the hosts they hold for.
    pub fn checks(&self) -> &bios_profiles::CheckMemo {
        &self.checks
    }

    fn path(&self, model: &str, bios_version: &str) -> PathBuf {
        self.dir.join(format!(
            "{}--{}.json",
            crate::state::path_component(model),
            crate::state::path_component(bios_version)
        ))
    }

    /// The registry for the host `info` describes: from this run's memory, else the disk
    /// cache, else `fetch` (whose result is then stored and shared, unless the host is in
    /// System Lockdown). Concurrent callers for the same key wait for one fetch. A copy that
    /// does not match the host is not used: the host's own registry is fetched instead.
    pub(crate) async fn get_or_fetch<F, Fut>(
        &self,
        info: HostRegistryInfo<'_>,
        fetch: F,
    ) -> Result<(Arc<AttributeRegistry>, RegistrySource)>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<AttributeRegistry>>,
    {
        let key = format!(
            "{}\0{}\0{}",
            info.model,
            info.bios_version,
            info.registry_id.unwrap_or_default()
        );
        let slot = {
            let loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            loaded.get(&key).cloned()
        };
        if let Some(slot) = slot
            && let Some(shared) = slot.get()
        {
            if shared.fits(&info).is_ok() {
                return Ok((shared.registry.clone(), RegistrySource::Cache));
            }
            return Ok((Arc::new(fetch().await?), RegistrySource::Fetched));
        }
        if info.lockdown {
            // Its flags describe lockdown: use a clean copy if one exists, never keep this one.
            if let Some(r) = self.read_fitting(&info).await {
                return Ok((Arc::new(r), RegistrySource::Cache));
            }
            return Ok((Arc::new(fetch().await?), RegistrySource::Fetched));
        }
        let slot = {
            let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            loaded.entry(key).or_default().clone()
        };
        let mut source = RegistrySource::Cache;
        let registry = slot
            .get_or_try_init(|| async {
                let fetch = &fetch;
                if let Some(r) = self.read_fitting(&info).await {
                    return Ok(Shared::new(r));
                }
                source = RegistrySource::Fetched;
                let r = fetch().await.map_err(Unshared::Failed)?;
                match fits(&r, &info) {
                    Ok(()) => {
                        let r = statics(r);
                        self.write(info.model, info.bios_version, &r);
                        Ok::<_, Unshared>(Shared::new(r))
                    }
                    Err(why) => {
                        // The host's own registry disagrees with its own values: use it for this
                        // host only, and share nothing.
                        tracing::warn!(
                            "the BIOS attribute registry of {} {} does not match its BIOS ({why}); not caching it",
                            info.model,
                            info.bios_version
                        );
                        Err(Unshared::OwnOnly(r))
                    }
                }
            })
            .await;
        match registry {
            Ok(r) => {
                if source == RegistrySource::Cache && r.fits(&info).is_err() {
                    // Another host filled the slot with a copy that does not fit this one.
                    return Ok((Arc::new(fetch().await?), RegistrySource::Fetched));
                }
                Ok((r.registry.clone(), source))
            }
            Err(Unshared::OwnOnly(own)) => Ok((Arc::new(own), RegistrySource::Fetched)),
            Err(Unshared::Failed(e)) => Err(e),
        }
    }

    /// The disk copy for the host, if present, readable, fitting, and not to be refreshed:
    /// the prefetched decoding when it is of this copy, else read now.
    async fn read_fitting(&self, info: &HostRegistryInfo<'_>) -> Option<AttributeRegistry> {
        if self.refresh {
            return None;
        }
        let path = self.path(info.model, info.bios_version);
        let r = match self.take_prefetched(&path) {
            Some(decoded) => decoded.await.ok().flatten()?,
            None => decode_file(&path)?,
        };
        match fits(&r, info) {
            Ok(()) => Some(r),
            Err(why) => {
                tracing::warn!(
                    "ignoring the cached registry for {} {}: {why}",
                    info.model,
                    info.bios_version
                );
                None
            }
        }
    }

    /// The prefetched decoding, if it is of `path` and nobody took it yet.
    fn take_prefetched(&self, path: &Path) -> Option<tokio::sync::oneshot::Receiver<Option<AttributeRegistry>>> {
        let mut prefetched = self
            .prefetched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if prefetched.as_ref().is_some_and(|p| p.path == path) {
            return prefetched.take().map(|p| p.decoded);
        }
        None
    }

    /// The registry on disk, if present and readable (a corrupt entry counts as absent).
    pub fn read(&self, model: &str, bios_version: &str) -> Option<AttributeRegistry> {
        decode_file(&self.path(model, bios_version))
    }

    /// Stores a registry on disk; failures only cost a refetch next time, so they are logged.
    pub fn write(&self, model: &str, bios_version: &str, registry: &AttributeRegistry) {
        let result = crate::state::ensure_private_dir(&self.dir)
            .and_then(|()| Ok(serde_json::to_vec(registry)?))
            .and_then(|bytes| crate::state::write_private(&self.path(model, bios_version), &bytes));
        if let Err(e) = result {
            tracing::warn!("could not cache the registry for {model} {bios_version}: {e:#}");
        }
    }
}

/// The registry in `path`, if present and readable (a corrupt file counts as absent).
fn decode_file(path: &Path) -> Option<AttributeRegistry> {
    let bytes = std::fs::read(path).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::warn!("ignoring a corrupt cached registry {}: {e}", path.display());
            None
        }
    }
}

/// The `.json` file in `dir` modified last.
fn newest_file(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let path = entry.path();
            let modified = entry.metadata().ok()?.modified().ok()?;
            (path.extension()? == "json").then_some((modified, path))
        })
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, path)| path)
}

/// Why a registry from elsewhere cannot serve this host; `Ok` when it can.
fn fits(registry: &AttributeRegistry, info: &HostRegistryInfo<'_>) -> Result<(), String> {
    fits_named(registry, &sorted_names(registry), info)
}

/// The names of the attributes `registry` defines, sorted as a `BTreeMap` orders its keys.
fn sorted_names(registry: &AttributeRegistry) -> Vec<String> {
    let mut names: Vec<String> = registry
        .registry_entries
        .attributes
        .iter()
        .map(|a| a.attribute_name.clone())
        .collect();
    names.sort_unstable();
    names
}

/// [`fits`], given the registry's [`sorted_names`].
fn fits_named(registry: &AttributeRegistry, names: &[String], info: &HostRegistryInfo<'_>) -> Result<(), String> {
    if let Some(id) = info.registry_id
        && !registry.id.is_empty()
        && registry.id != id
    {
        return Err(format!("it is {}, the host names {id}", registry.id));
    }
    for system in &registry.supported_systems {
        let product = system.product_name.as_deref();
        let firmware = system.firmware_version.as_deref();
        if product.is_some_and(|p| !p.trim().eq_ignore_ascii_case(info.model.trim()))
            || firmware.is_some_and(|f| f.trim() != info.bios_version.trim())
        {
            return Err(format!(
                "it is for {} BIOS {}, the host is {} BIOS {}",
                product.unwrap_or("?"),
                firmware.unwrap_or("?"),
                info.model,
                info.bios_version
            ));
        }
    }
    // Both lists are sorted: one walk along the registry's names finds each listed one.
    let mut defined = names.iter().peekable();
    let missing: Vec<&str> = info
        .values
        .keys()
        .filter(|name| {
            while defined.next_if(|d| d < name).is_some() {}
            defined.peek() != Some(name)
        })
        .map(String::as_str)
        .take(3)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "it does not define attribute(s) the host lists: {}",
            missing.join(", ")
        ));
    }
    Ok(())
}

/// The part of a registry that holds for every host of its model and BIOS version: without the
/// serving host's service tag (`SupportedSystems[].SystemId`).
fn statics(mut registry: AttributeRegistry) -> AttributeRegistry {
    for system in &mut registry.supported_systems {
        system.system_id = None;
    }
    registry
}

impl crate::state::StateDirs {
    /// The registry cache for this run (honouring `--refresh-registry`).
    pub fn registry_cache(&self) -> RegistryCache {
        RegistryCache::new(&self.cache, self.refresh_registry)
    }
}

/// The marker error of a registry that serves only the host that sent it.
/// Why a registry slot stays empty: the fetch failed, or the host's registry fits only itself
/// (it disagrees with the host's own values), so it serves that host and is shared with none.
#[derive(Debug)]
enum Unshared {
    Failed(crate::Error),
    OwnOnly(AttributeRegistry),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn temp_dir(tag: &str) -> PathBuf {
        // Kept on drop: the test removes it.
        let dir = tempfile::Builder::new().prefix(tag).tempdir().unwrap().keep();
        std::fs::remove_dir_all(&dir).ok();
        dir
    }

    fn registry(model: &str, version: &str, tag: &str) -> AttributeRegistry {
        serde_json::from_value(serde_json::json!({
            "Id": "BiosAttributeRegistry.v1_0_3",
            "SupportedSystems": [{"ProductName": model, "FirmwareVersion": version, "SystemId": tag}],
            "RegistryEntries": {"Attributes": [
                {"AttributeName": "SysProfile", "Type": "Enumeration"},
                {"AttributeName": "SystemServiceTag", "Type": "String", "ReadOnly": true}]}
        }))
        .unwrap()
    }

    fn values(tag: &str) -> Attributes {
        [
            ("SysProfile".to_owned(), "PerfOptimized".into()),
            ("SystemServiceTag".to_owned(), tag.into()),
        ]
        .into_iter()
        .collect()
    }

    fn info<'a>(model: &'a str, version: &'a str, values: &'a Attributes) -> HostRegistryInfo<'a> {
        HostRegistryInfo {
            model,
            bios_version: version,
            registry_id: Some("BiosAttributeRegistry.v1_0_3"),
            values,
            lockdown: false,
        }
    }

    #[test]
    fn a_registry_fits_only_a_host_whose_every_listed_attribute_it_defines() {
        let r = registry("PowerEdge R7625", "1.6.10", "ABC1234");
        let shared = Shared::new(r.clone());
        let mut host = values("ABC1234");
        assert_eq!(fits(&r, &info("PowerEdge R7625", "1.6.10", &host)), Ok(()));
        assert_eq!(shared.fits(&info("PowerEdge R7625", "1.6.10", &host)), Ok(()));
        // Before, between and after the names it defines.
        for extra in ["AcPwrRcvry", "SysProfileX", "ZzzLast"] {
            host.insert(extra.to_owned(), "x".into());
        }
        let why = "it does not define attribute(s) the host lists: AcPwrRcvry, SysProfileX, ZzzLast";
        assert_eq!(fits(&r, &info("PowerEdge R7625", "1.6.10", &host)), Err(why.to_owned()));
        assert_eq!(
            shared.fits(&info("PowerEdge R7625", "1.6.10", &host)),
            Err(why.to_owned())
        );
    }

    #[tokio::test]
    async fn keyed_by_model_and_version_fetched_once_and_stored_without_the_service_tag() {
        let dir = temp_dir("key");
        let fetches = AtomicUsize::new(0);
        let fetch = |version: &'static str| {
            let fetches = &fetches;
            move || async move {
                fetches.fetch_add(1, Ordering::SeqCst);
                Ok(registry("PowerEdge R7625", version, "ABC1234"))
            }
        };
        let host = values("ABC1234");
        let c = RegistryCache::new(&dir, false);
        let (r, source) = c
            .get_or_fetch(info("PowerEdge R7625", "1.6.10", &host), fetch("1.6.10"))
            .await
            .unwrap();
        assert_eq!(source, RegistrySource::Fetched);
        let (again, source) = c
            .get_or_fetch(info("PowerEdge R7625", "1.6.10", &host), fetch("1.6.10"))
            .await
            .unwrap();
        assert!(
            source == RegistrySource::Cache && Arc::ptr_eq(&r, &again),
            "shared in memory"
        );
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        let on_disk = std::fs::read_to_string(c.path("PowerEdge R7625", "1.6.10")).unwrap();
        assert!(
            !on_disk.contains("ABC1234"),
            "the serving host's service tag is not cached"
        );
        // A new run reads the disk copy; another version is fetched; --refresh-registry refetches.
        let fresh = RegistryCache::new(&dir, false);
        let hit = fresh.get_or_fetch(info("PowerEdge R7625", "1.6.10", &host), fetch("1.6.10"));
        assert_eq!(hit.await.unwrap().1, RegistrySource::Cache);
        let other = fresh.get_or_fetch(info("PowerEdge R7625", "1.7.0", &host), fetch("1.7.0"));
        assert_eq!(other.await.unwrap().1, RegistrySource::Fetched);
        let refresh = RegistryCache::new(&dir, true);
        let again = refresh.get_or_fetch(info("PowerEdge R7625", "1.6.10", &host), fetch("1.6.10"));
        assert_eq!(again.await.unwrap().1, RegistrySource::Fetched);
        assert_eq!(fetches.load(Ordering::SeqCst), 3);
        std::fs::write(fresh.path("PowerEdge R7625", "1.6.10"), "{").unwrap();
        assert!(
            fresh.read("PowerEdge R7625", "1.6.10").is_none(),
            "corrupt entries count as absent"
        );
        std::fs::remove_dir_all(dir).ok();
    }

    impl RegistryCache {
        /// Whether a prefetch is waiting to be taken, its decoding done.
        fn prefetch_decoded(&self) -> bool {
            let prefetched = self.prefetched.lock().unwrap();
            prefetched.as_ref().is_some_and(|p| !p.decoded.is_empty())
        }
    }

    /// A run decodes the copy written last ahead of need, and the first host of its model and
    /// version takes that decoding: the file is corrupt by then, so a read would have failed
    /// and the host's registry been fetched. A host of another copy reads its own;
    /// `--refresh-registry` decodes nothing ahead.
    #[tokio::test]
    async fn the_copy_written_last_is_decoded_ahead_and_serves_its_hosts() {
        let dir = temp_dir("prefetch");
        let c = RegistryCache::new(&dir, false);
        c.write("PowerEdge R7525", "2.1", &registry("PowerEdge R7525", "2.1", "X"));
        c.write("PowerEdge R7625", "1.6.10", &registry("PowerEdge R7625", "1.6.10", "Y"));
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let older = std::fs::File::options()
            .write(true)
            .open(c.path("PowerEdge R7525", "2.1"))
            .unwrap();
        older.set_modified(hour_ago).unwrap();
        let fetches = AtomicUsize::new(0);
        let fetch = |model: &'static str, version: &'static str| {
            let fetches = &fetches;
            move || async move {
                fetches.fetch_add(1, Ordering::SeqCst);
                Ok(registry(model, version, "Z"))
            }
        };

        let run = RegistryCache::new(&dir, false);
        run.prefetch_newest();
        let started = std::time::Instant::now();
        while !run.prefetch_decoded() {
            assert!(started.elapsed().as_secs() < 30, "the prefetch never finished");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        std::fs::write(run.path("PowerEdge R7625", "1.6.10"), "{").unwrap();
        let host = values("ABC1234");
        let genoa = run.get_or_fetch(
            info("PowerEdge R7625", "1.6.10", &host),
            fetch("PowerEdge R7625", "1.6.10"),
        );
        assert_eq!(genoa.await.unwrap().1, RegistrySource::Cache);
        let milan = run.get_or_fetch(info("PowerEdge R7525", "2.1", &host), fetch("PowerEdge R7525", "2.1"));
        assert_eq!(milan.await.unwrap().1, RegistrySource::Cache);
        assert_eq!(fetches.load(Ordering::SeqCst), 0);

        let refresh = RegistryCache::new(&dir, true);
        refresh.prefetch_newest();
        assert!(refresh.prefetched.lock().unwrap().is_none());
        std::fs::remove_dir_all(dir).ok();
    }

    #[tokio::test]
    async fn a_copy_that_does_not_fit_the_host_is_not_used() {
        let dir = temp_dir("fit");
        let c = RegistryCache::new(&dir, false);
        // A doctored copy on disk: right key, but for another model.
        c.write("PowerEdge R7625", "1.6.10", &registry("PowerEdge R750", "1.6.10", "X"));
        let host = values("ABC1234");
        let fetched = AtomicUsize::new(0);
        let fetch = || async {
            fetched.fetch_add(1, Ordering::SeqCst);
            Ok(registry("PowerEdge R7625", "1.6.10", "ABC1234"))
        };
        let (r, source) = c
            .get_or_fetch(info("PowerEdge R7625", "1.6.10", &host), fetch)
            .await
            .unwrap();
        assert_eq!(source, RegistrySource::Fetched);
        assert_eq!(r.supported_systems[0].product_name.as_deref(), Some("PowerEdge R7625"));
        // A host listing an attribute the shared copy lacks gets its own registry.
        let mut odd = host.clone();
        odd.insert("Extra".into(), "x".into());
        let fetch_odd = || async {
            let mut r = registry("PowerEdge R7625", "1.6.10", "ODD0001");
            r.registry_entries
                .attributes
                .push(serde_json::from_value(serde_json::json!({"AttributeName": "Extra", "Type": "String"})).unwrap());
            Ok(r)
        };
        let (own, source) = c
            .get_or_fetch(info("PowerEdge R7625", "1.6.10", &odd), fetch_odd)
            .await
            .unwrap();
        assert_eq!(source, RegistrySource::Fetched);
        assert!(own.attribute("Extra").is_some());
        assert_eq!(fetched.load(Ordering::SeqCst), 1);
        std::fs::remove_dir_all(dir).ok();
    }

    #[tokio::test]
    async fn a_registry_from_a_host_in_lockdown_is_never_cached() {
        let dir = temp_dir("lock");
        let c = RegistryCache::new(&dir, false);
        let host = values("LOCK001");
        let locked = HostRegistryInfo {
            lockdown: true,
            ..info("PowerEdge R7625", "1.6.10", &host)
        };
        let fetch = || async { Ok(registry("PowerEdge R7625", "1.6.10", "LOCK001")) };
        assert_eq!(c.get_or_fetch(locked, fetch).await.unwrap().1, RegistrySource::Fetched);
        assert!(c.read("PowerEdge R7625", "1.6.10").is_none(), "not on disk");
        let other = values("FREE001");
        let fetch = || async { Ok(registry("PowerEdge R7625", "1.6.10", "FREE001")) };
        let (_, source) = c
            .get_or_fetch(info("PowerEdge R7625", "1.6.10", &other), fetch)
            .await
            .unwrap();
        assert_eq!(source, RegistrySource::Fetched, "not shared in memory either");
        std::fs::remove_dir_all(dir).ok();
    }
}
