//! The settings catalog: human setting names mapped to attribute names, searchable.
//!
//! Each entry of `profiles/dell/catalog.toml` gives a BIOS or iDRAC setting's name as setup and
//! Dell's documents spell it, the attribute(s) behind it, where it is, what it does, and the
//! value tokens seen on real hosts or real registries, with the generation and the payload.
//! Profiles write a token as a fixed `value` only when it was seen (or is the other half of an
//! `Enabled`/`Disabled` switch seen with one of them); otherwise they `accept` candidate tokens
//! and the host's registry picks one.

use crate::error::{Error, Result};
use crate::host::Generation;
use redfish_client::resources::attribute_registry::AttributeRegistry;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The shipped catalog file.
pub const SHIPPED_CATALOG: &str = include_str!("../profiles/dell/catalog.toml");

/// One setting as a person knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogEntry {
    /// The name setup and Dell's documents use (`C-States`).
    pub name: String,
    /// The attribute(s) behind it (`ProcCStates`); empty when no Dell attribute name for it was
    /// ever seen, and the entry gives `display_names` instead.
    #[serde(default)]
    pub attributes: Vec<String>,
    /// The names a registry's `DisplayName` gives it (`Write Data CRC`), by which
    /// [`Catalog::resolve`] finds the attribute on a host whose name for it is not known here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub display_names: Vec<String>,
    /// Where it is in setup or the iDRAC (`System BIOS > System Profile Settings`).
    pub menu: String,
    /// What it does, in a sentence or two.
    pub description: String,
    /// Other names people search for.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Value tokens seen on real hosts or in real registries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<SeenToken>,
}

/// A value token seen on a real host or in a real registry, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeenToken {
    /// The attribute (one of the entry's).
    pub attribute: String,
    /// The token exactly as the host spelled it.
    pub token: String,
    /// The AMD generations of the hosts it was seen on; empty when it was seen on another
    /// CPU's registry for the same Dell attribute (an Intel R750's value list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generations: Vec<Generation>,
    /// The payload or document it was seen in.
    #[serde(rename = "where")]
    pub seen_in: String,
}

/// Why a fixed token can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence<'a> {
    /// It was seen, here.
    Seen(&'a SeenToken),
    /// It is `Enabled` or `Disabled`, and the other of the two was seen for the same attribute
    /// (Dell's on/off switches take exactly this pair: 190 of the 223 enumerations with an
    /// `Enabled` value on a real R750 registry, and every one of the processor and memory
    /// switches).
    SwitchPair(&'a SeenToken),
}

/// The catalog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    /// Entries, in file order.
    #[serde(rename = "setting", default)]
    pub entries: Vec<CatalogEntry>,
}

impl Catalog {
    /// Parses a catalog file: a list of `[[setting]]` tables, each naming an attribute or a
    /// display name to find one by.
    pub fn from_toml(text: &str, file: &str) -> Result<Self> {
        let catalog: Self = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        if let Some(e) = catalog
            .entries
            .iter()
            .find(|e| e.attributes.is_empty() && e.display_names.is_empty())
        {
            return Err(Error::Format {
                file: file.to_owned(),
                position: None,
                message: format!("setting `{}` names no attribute and no display name", e.name),
            });
        }
        Ok(catalog)
    }

    /// The attribute `entry` is on the host whose registry is `registry`: one of its attribute
    /// names the registry defines, else the attribute whose `DisplayName` is one of its display
    /// names (ignoring case and spacing). `None` when the host has neither.
    pub fn resolve<'r>(&self, entry: &CatalogEntry, registry: &'r AttributeRegistry) -> Option<&'r str> {
        if let Some(a) = entry.attributes.iter().find_map(|a| registry.attribute(a)) {
            return Some(a.attribute_name.as_str());
        }
        let squash = |s: &str| s.split_whitespace().collect::<String>().to_ascii_lowercase();
        let wanted: Vec<String> = entry.display_names.iter().map(|d| squash(d)).collect();
        registry
            .registry_entries
            .attributes
            .iter()
            .find(|a| a.display_name.as_deref().is_some_and(|d| wanted.contains(&squash(d))))
            .map(|a| a.attribute_name.as_str())
    }

    /// The entry for an attribute name (exact, then case-insensitive).
    pub fn by_attribute(&self, attribute: &str) -> Option<&CatalogEntry> {
        self.entries
            .iter()
            .find(|e| e.attributes.iter().any(|a| a == attribute))
            .or_else(|| {
                self.entries
                    .iter()
                    .find(|e| e.attributes.iter().any(|a| a.eq_ignore_ascii_case(attribute)))
            })
    }

    /// The tokens seen for `attribute`.
    pub fn seen(&self, attribute: &str) -> impl Iterator<Item = &SeenToken> {
        self.entries
            .iter()
            .flat_map(|e| e.seen.iter())
            .filter(move |t| t.attribute == attribute)
    }

    /// What backs writing `token` to `attribute` as a fixed value, if anything.
    pub fn evidence(&self, attribute: &str, token: &str) -> Option<Evidence<'_>> {
        if let Some(seen) = self.seen(attribute).find(|t| t.token == token) {
            return Some(Evidence::Seen(seen));
        }
        let other = match token {
            "Enabled" => "Disabled",
            "Disabled" => "Enabled",
            _ => return None,
        };
        self.seen(attribute)
            .find(|t| t.token == other)
            .map(Evidence::SwitchPair)
    }

    /// Entries matching every word of `query` (case-insensitive) in the name, an alias, an
    /// attribute or the description, best first: exact names and attributes, then prefixes,
    /// then substrings, then description hits. An empty query lists everything.
    pub fn search(&self, query: &str) -> Vec<&CatalogEntry> {
        let query = query.trim().to_lowercase();
        let mut scored: Vec<(u32, &CatalogEntry)> = self
            .entries
            .iter()
            .filter_map(|e| score(e, &query).map(|s| (s, e)))
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        scored.into_iter().map(|(_, e)| e).collect()
    }
}

fn score(entry: &CatalogEntry, query: &str) -> Option<u32> {
    if query.is_empty() {
        return Some(0);
    }
    let name = entry.name.to_lowercase();
    let attributes: Vec<String> = entry.attributes.iter().map(|a| a.to_lowercase()).collect();
    let aliases: Vec<String> = entry.aliases.iter().map(|a| a.to_lowercase()).collect();
    let description = entry.description.to_lowercase();
    let mut total = 0;
    if attributes.iter().any(|a| a == query) {
        total += 200;
    } else if name == query || aliases.iter().any(|a| a == query) {
        total += 150;
    }
    for word in query.split_whitespace() {
        let best = if attributes.iter().any(|a| a == word) {
            100
        } else if name.split(|c: char| !c.is_alphanumeric()).any(|w| w == word) {
            70
        } else if attributes.iter().any(|a| a.starts_with(word)) {
            60
        } else if aliases.iter().any(|a| a.split_whitespace().any(|w| w == word)) {
            50
        } else if name.contains(word)
            || attributes.iter().any(|a| a.contains(word))
            || aliases.iter().any(|a| a.contains(word))
        {
            40
        } else if description.contains(word) {
            10
        } else {
            return None;
        };
        total += best;
    }
    Some(total)
}

/// The shipped catalog, parsed once.
pub fn shipped() -> Result<&'static Catalog> {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    if let Some(catalog) = CATALOG.get() {
        return Ok(catalog);
    }
    let parsed = Catalog::from_toml(SHIPPED_CATALOG, "profiles/dell/catalog.toml")?;
    Ok(CATALOG.get_or_init(|| parsed))
}

/// Searches the shipped catalog (see [`Catalog::search`]).
pub fn search(query: &str) -> Vec<&'static CatalogEntry> {
    shipped().map(|c| c.search(query)).unwrap_or_default()
}

/// Whether the shipped catalog lists `attribute` (a known name, absent on some hosts).
pub(crate) fn knows_attribute(attribute: &str) -> bool {
    shipped().is_ok_and(|c| c.entries.iter().any(|e| e.attributes.iter().any(|a| a == attribute)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_catalog_parses_and_has_unique_attributes() {
        let catalog = shipped().unwrap();
        assert!(catalog.entries.len() >= 40);
        let mut seen = std::collections::BTreeSet::new();
        for e in &catalog.entries {
            assert!(!e.attributes.is_empty() || !e.display_names.is_empty(), "{}", e.name);
            assert!(!e.description.trim().is_empty(), "{}", e.name);
            for a in &e.attributes {
                assert!(seen.insert(a.clone()), "{a} listed twice");
            }
        }
    }

    #[test]
    fn search_ranks_exact_attribute_and_name_hits_first() {
        let first = |q: &str| search(q).first().map(|e| e.name.clone());
        assert_eq!(first("ProcCStates").as_deref(), Some("C-States"));
        assert_eq!(first("c-states").as_deref(), Some("C-States"));
        assert_eq!(first("smt").as_deref(), Some("Logical Processor"));
        assert_eq!(first("numa nodes").as_deref(), Some("NUMA Nodes Per Socket"));
        assert_eq!(first("power cap").as_deref(), Some("Power Capping"));
        assert_eq!(first("fan").as_deref(), Some("Fan Speed Offset"));
        let prefetchers = search("prefetcher");
        assert_eq!(prefetchers.len(), 5);
        assert!(search("no such thing anywhere").is_empty());
        assert_eq!(search("").len(), shipped().unwrap().entries.len());
    }

    #[test]
    fn every_seen_token_belongs_to_its_entry_and_says_where() {
        for e in &shipped().unwrap().entries {
            for t in &e.seen {
                assert!(e.attributes.contains(&t.attribute), "{}: {}", e.name, t.attribute);
                assert!(!t.token.is_empty() && !t.seen_in.trim().is_empty(), "{}: {t:?}", e.name);
            }
        }
    }

    #[test]
    fn fixed_tokens_are_backed_by_a_sighting_or_the_other_half_of_a_switch() {
        let catalog = Catalog::from_toml(
            r#"
[[setting]]
name = "C-States"
attributes = ["ProcCStates"]
menu = "m"
description = "d"
[[setting.seen]]
attribute = "ProcCStates"
token = "Disabled"
generations = ["genoa"]
where = "R7615 GET /Bios"
"#,
            "c.toml",
        )
        .unwrap();
        assert!(matches!(
            catalog.evidence("ProcCStates", "Disabled"),
            Some(Evidence::Seen(_))
        ));
        assert!(matches!(
            catalog.evidence("ProcCStates", "Enabled"),
            Some(Evidence::SwitchPair(t)) if t.token == "Disabled"
        ));
        assert_eq!(catalog.evidence("ProcCStates", "Autonomous"), None);
        assert_eq!(catalog.evidence("ProcTurboMode", "Enabled"), None);
    }

    /// Dell's XE8545 power run lists "XGMI Max Speed" and "Write Data CRC" by their setup names:
    /// the catalog finds them on a host by the registry's display name.
    #[test]
    fn settings_known_by_display_name_resolve_from_the_host_registry() {
        let catalog = shipped().unwrap();
        let entry = |name: &str| catalog.entries.iter().find(|e| e.name == name).unwrap();
        let registry: AttributeRegistry = serde_json::from_value(serde_json::json!({"RegistryEntries": {
            "Attributes": [
                {"AttributeName": "WriteDataCrc", "DisplayName": "Write Data CRC", "Type": "Enumeration",
                 "Value": [{"ValueName": "Enabled"}, {"ValueName": "Disabled"}]},
                {"AttributeName": "XgmiLinkMaxSpeed", "DisplayName": "xGMI  max speed", "Type": "Enumeration",
                 "Value": [{"ValueName": "Auto"}]}]}}))
        .unwrap();
        assert_eq!(
            catalog.resolve(entry("Write Data CRC"), &registry),
            Some("WriteDataCrc")
        );
        let xgmi = entry("xGMI Max Speed");
        assert!(xgmi.attributes.is_empty(), "no Dell name for it has been seen");
        assert_eq!(catalog.resolve(xgmi, &registry), Some("XgmiLinkMaxSpeed"));
        let empty: AttributeRegistry = serde_json::from_value(serde_json::json!({"RegistryEntries": {}})).unwrap();
        assert_eq!(catalog.resolve(xgmi, &empty), None);
        assert_eq!(
            search("xgmi speed").first().map(|e| e.name.as_str()),
            Some("xGMI Max Speed")
        );
    }

    #[test]
    fn attribute_lookup_is_exact_then_case_insensitive() {
        let catalog = shipped().unwrap();
        assert_eq!(catalog.by_attribute("ApbDis").unwrap().attributes, ["ApbDis"]);
        assert_eq!(catalog.by_attribute("apbdis").unwrap().attributes, ["ApbDis"]);
        assert!(knows_attribute("DfCState"));
        assert!(!knows_attribute("dfcstate"));
    }
}
