//! The attribute-registry cache: registries are 1 MB and never change for a given model and
//! BIOS version, so a warm run reads them from `$XDG_CACHE_HOME/rftune/registries/` instead of
//! the BMC. Within a run, each model and version is fetched or read at most once and shared by
//! every host (a fleet of one model holds one decoded registry, not one per host).

use anyhow::Result;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The cache directory and this run's decoded registries.
#[derive(Debug, Default)]
pub struct RegistryCache {
    dir: PathBuf,
    loaded: Mutex<HashMap<String, Slot>>,
}

type Slot = Arc<tokio::sync::OnceCell<Arc<AttributeRegistry>>>;

impl RegistryCache {
    /// A cache under `cache_dir`.
    pub fn new(cache_dir: &Path) -> Self {
        Self {
            dir: cache_dir.join("registries"),
            loaded: Mutex::default(),
        }
    }

    fn path(&self, model: &str, bios_version: &str) -> PathBuf {
        self.dir.join(format!(
            "{}--{}.json",
            crate::state::path_component(model),
            crate::state::path_component(bios_version)
        ))
    }

    /// The registry of `model` at `bios_version`: from this run's memory, else the disk cache,
    /// else `fetch` (whose result is then stored). Concurrent callers for the same key wait for
    /// one fetch. The flag says whether no fetch was needed.
    pub async fn get_or_fetch<F, Fut>(
        &self,
        model: &str,
        bios_version: &str,
        fetch: F,
    ) -> Result<(Arc<AttributeRegistry>, bool)>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<AttributeRegistry>>,
    {
        let slot = {
            let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            loaded.entry(format!("{model}\0{bios_version}")).or_default().clone()
        };
        let mut fetched = false;
        let registry = slot
            .get_or_try_init(|| async {
                if let Some(r) = self.read(model, bios_version) {
                    return Ok(Arc::new(r));
                }
                fetched = true;
                let r = fetch().await?;
                self.write(model, bios_version, &r);
                Ok::<_, anyhow::Error>(Arc::new(r))
            })
            .await?;
        Ok((registry.clone(), !fetched))
    }

    /// The registry on disk, if present and readable (a corrupt entry counts as absent).
    pub fn read(&self, model: &str, bios_version: &str) -> Option<AttributeRegistry> {
        let bytes = std::fs::read(self.path(model, bios_version)).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("ignoring a corrupt cached registry for {model} {bios_version}: {e}");
                None
            }
        }
    }

    /// Stores a registry on disk; failures only cost a refetch next time, so they are logged.
    pub fn write(&self, model: &str, bios_version: &str, registry: &AttributeRegistry) {
        let result = std::fs::create_dir_all(&self.dir)
            .map_err(anyhow::Error::from)
            .and_then(|()| Ok(serde_json::to_vec(registry)?))
            .and_then(|bytes| crate::snapshot::write_private(&self.path(model, bios_version), &bytes));
        if let Err(e) = result {
            tracing::warn!("could not cache the registry for {model} {bios_version}: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn keyed_by_model_and_version_fetched_once() {
        let dir = std::env::temp_dir().join(format!("rftune-cache-{}", std::process::id()));
        let fetches = AtomicUsize::new(0);
        let fetch = || async {
            fetches.fetch_add(1, Ordering::SeqCst);
            Ok(AttributeRegistry {
                id: "BiosAttributeRegistry.v1_0_3".into(),
                ..AttributeRegistry::default()
            })
        };
        let c = RegistryCache::new(&dir);
        assert!(c.read("PowerEdge R7625", "1.6.10").is_none());
        let (r, cached) = c.get_or_fetch("PowerEdge R7625", "1.6.10", fetch).await.unwrap();
        assert!(!cached);
        let (again, cached) = c.get_or_fetch("PowerEdge R7625", "1.6.10", fetch).await.unwrap();
        assert!(cached && Arc::ptr_eq(&r, &again), "shared in memory");
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        // A new run reads the disk copy; another version is fetched.
        let fresh = RegistryCache::new(&dir);
        assert!(fresh.get_or_fetch("PowerEdge R7625", "1.6.10", fetch).await.unwrap().1);
        assert!(!fresh.get_or_fetch("PowerEdge R7625", "1.7.0", fetch).await.unwrap().1);
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
        std::fs::write(fresh.path("PowerEdge R7625", "1.6.10"), "{").unwrap();
        assert!(
            fresh.read("PowerEdge R7625", "1.6.10").is_none(),
            "corrupt entries count as absent"
        );
        std::fs::remove_dir_all(dir).ok();
    }
}
