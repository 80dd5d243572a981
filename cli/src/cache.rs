//! The attribute-registry cache: registries are 1 MB and never change for a given model and
//! BIOS version, so a warm run reads them from `$XDG_CACHE_HOME/rftune/registries/` instead of
//! the BMC.

use redfish_client::resources::attribute_registry::AttributeRegistry;
use std::path::{Path, PathBuf};

/// The cache directory.
#[derive(Debug, Clone)]
pub struct RegistryCache {
    dir: PathBuf,
}

impl RegistryCache {
    /// A cache under `cache_dir`.
    pub fn new(cache_dir: &Path) -> Self {
        Self {
            dir: cache_dir.join("registries"),
        }
    }

    fn path(&self, model: &str, bios_version: &str) -> PathBuf {
        let safe = |s: &str| {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        };
        self.dir.join(format!("{}--{}.json", safe(model), safe(bios_version)))
    }

    /// The cached registry, if present and readable (a corrupt entry counts as absent).
    pub fn get(&self, model: &str, bios_version: &str) -> Option<AttributeRegistry> {
        let bytes = std::fs::read(self.path(model, bios_version)).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("ignoring a corrupt cached registry for {model} {bios_version}: {e}");
                None
            }
        }
    }

    /// Stores a registry; failures only cost a refetch next time, so they are logged, not raised.
    pub fn put(&self, model: &str, bios_version: &str, registry: &AttributeRegistry) {
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

    #[test]
    fn keyed_by_model_and_version() {
        let dir = std::env::temp_dir().join(format!("rftune-cache-{}", std::process::id()));
        let c = RegistryCache::new(&dir);
        assert!(c.get("PowerEdge R7625", "1.6.10").is_none());
        let r = AttributeRegistry {
            id: "BiosAttributeRegistry.v1_0_3".into(),
            ..AttributeRegistry::default()
        };
        c.put("PowerEdge R7625", "1.6.10", &r);
        assert_eq!(c.get("PowerEdge R7625", "1.6.10").unwrap().id, r.id);
        assert!(c.get("PowerEdge R7625", "1.7.0").is_none());
        std::fs::write(c.path("PowerEdge R7625", "1.6.10"), "{").unwrap();
        assert!(c.get("PowerEdge R7625", "1.6.10").is_none());
        std::fs::remove_dir_all(dir).ok();
    }
}
