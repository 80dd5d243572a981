//! What one client learned of its service's message registries: the members of
//! `/redfish/v1/Registries` and the registry files read, kept for the client's life so that a
//! run reads each at most once (a failed read included); and the order in which members the
//! collection gave as bare links are read. No IO: `messages` reads, this keeps.

use crate::resources::message_registry::{MessageRegistry, MessageRegistryFile};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The registries one client read.
#[derive(Debug, Default)]
pub(super) struct Lookup {
    /// The `Registries` collection: `None` until read (an empty one after a failed read).
    pub(super) listing: Option<Listing>,
    /// Registry files by their URI; `None` for one that could not be read or decoded.
    pub(super) files: HashMap<String, Option<Arc<MessageRegistry>>>,
}

/// The members of `Registries`.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// Members read (inline in the collection, or one by one).
    pub(super) known: Vec<MessageRegistryFile>,
    /// Members the collection gave as bare links and not read yet.
    pub(super) unread: Vec<String>,
}

impl Listing {
    /// Takes in one page of the collection's members: inline ones decoded (one that does not
    /// decode is left out), bare links kept to be read when needed.
    pub(super) fn add(&mut self, members: Vec<Value>) {
        for member in members {
            let bare = member.as_object().is_some_and(|o| o.len() == 1);
            match member.get("@odata.id").and_then(Value::as_str) {
                Some(link) if bare => self.unread.push(link.to_owned()),
                _ => match serde_json::from_value::<MessageRegistryFile>(member) {
                    Ok(m) => self.known.push(m),
                    Err(e) => tracing::debug!("a registry member does not decode: {e}"),
                },
            }
        }
    }

    /// The unread links, taken out, in the order to read them for the registry `prefix`:
    /// those whose last segment starts with it (without regard to case) first, then the
    /// others, each group in the collection's order.
    pub(super) fn take_unread(&mut self, prefix: &str) -> Vec<String> {
        let prefix = prefix.to_ascii_lowercase();
        let named = |link: &String| {
            link.trim_end_matches('/')
                .rsplit('/')
                .next()
                .is_some_and(|name| name.to_ascii_lowercase().starts_with(&prefix))
        };
        let (mut first, rest): (Vec<String>, Vec<String>) = self.unread.drain(..).partition(named);
        first.extend(rest);
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inline_members_are_kept_and_links_read_the_prefix_named_first() {
        let mut listing = Listing::default();
        listing.add(vec![
            json!({"@odata.id": "/redfish/v1/Registries/BiosAttributeRegistryA42.v1_2_60"}),
            json!({"@odata.id": "/redfish/v1/Registries/Base/", "Registry": "Base.1.4.0"}),
            json!({"@odata.id": "/redfish/v1/Registries/HpeCommon/"}),
            json!({"@odata.id": "/redfish/v1/Registries/iLO/"}),
            json!({"@odata.id": "/redfish/v1/Registries/iLOEvents/"}),
            json!("junk"),
        ]);
        assert_eq!(listing.known.len(), 1);
        assert_eq!(listing.known[0].version(), Some(("Base", 1, 4)));
        assert_eq!(
            listing.take_unread("ILO"),
            [
                "/redfish/v1/Registries/iLO/",
                "/redfish/v1/Registries/iLOEvents/",
                "/redfish/v1/Registries/BiosAttributeRegistryA42.v1_2_60",
                "/redfish/v1/Registries/HpeCommon/",
            ]
        );
        assert!(listing.unread.is_empty(), "taken out");
    }
}
