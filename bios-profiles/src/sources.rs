//! The documents profile settings cite, by id (`profiles/dell/sources.toml`).

use crate::error::{Error, Result};
use crate::host::Generation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One cited document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The id settings cite (`amd-58011`).
    #[serde(skip_deserializing)]
    pub id: String,
    /// The document's title.
    pub title: String,
    /// Who published it.
    pub publisher: String,
    /// What kind of evidence it gives, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where to read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// When it was published or last revised (`2026`, `2022-09`), where that matters to which
    /// source wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The CPU generations it covers: a payload's or a published configuration's own host, a
    /// vendor table's processor series. Empty: not tied to a generation (a glossary, generic
    /// advice). A `stated` or `used` setting citing it is only as sure on the generations it
    /// covers: elsewhere resolution makes it `inferred`, saying so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generations: Vec<Generation>,
}

impl Source {
    /// Whether the source speaks for `generation`: it names it, or it is tied to no generation.
    pub fn covers(&self, generation: Generation) -> bool {
        self.generations.is_empty() || self.generations.contains(&generation)
    }
}

/// The set of known sources.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Sources {
    by_id: BTreeMap<String, Source>,
}

impl Sources {
    /// Parses a sources file: one table per id, with `title`, `publisher` and an optional `note`.
    pub fn from_toml(text: &str, file: &str) -> Result<Self> {
        let mut by_id: BTreeMap<String, Source> = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        for (id, source) in &mut by_id {
            source.id.clone_from(id);
        }
        Ok(Self { by_id })
    }

    /// These sources and `extra` (a profile's own; an id already here keeps its entry).
    pub fn with(&self, extra: impl IntoIterator<Item = Source>) -> Self {
        let mut by_id = self.by_id.clone();
        for s in extra {
            by_id.entry(s.id.clone()).or_insert(s);
        }
        Self { by_id }
    }

    /// The source with this id.
    pub fn get(&self, id: &str) -> Option<&Source> {
        self.by_id.get(id)
    }

    /// Whether `id` is known.
    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Every source, by id.
    pub fn iter(&self) -> impl Iterator<Item = &Source> {
        self.by_id.values()
    }

    /// Every id, sorted.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.by_id.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profiles_own_sources_join_without_replacing_the_librarys() {
        let s = Sources::from_toml("[a]\ntitle = \"T\"\npublisher = \"P\"\n", "s.toml").unwrap();
        let own = |id: &str, title: &str| Source {
            id: id.into(),
            title: title.into(),
            publisher: "Us".into(),
            note: None,
            url: None,
            date: None,
            generations: Vec::new(),
        };
        let merged = s.with([own("b", "Ours"), own("a", "Not this")]);
        assert_eq!(merged.get("b").unwrap().title, "Ours");
        assert_eq!(merged.get("a").unwrap().title, "T");
        assert!(!s.contains("b"), "the library's own list is unchanged");
    }

    #[test]
    fn sources_parse_and_reject_unknown_keys() {
        let s = Sources::from_toml("[a]\ntitle = \"T\"\npublisher = \"P\"\n", "s.toml").unwrap();
        assert_eq!(s.get("a").unwrap().id, "a");
        assert!(s.contains("a") && !s.contains("b"));
        let err = Sources::from_toml("[a]\ntitle = \"T\"\npublisher = \"P\"\npages = 1\n", "s.toml").unwrap_err();
        assert!(
            err.to_string().starts_with("s.toml:4:1: unknown field `pages`"),
            "{err}"
        );
    }
}
