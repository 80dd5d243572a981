//! OData plumbing shared by every Redfish resource: identifiers, links and collections.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The `@odata.id` of a resource: an absolute path such as `/redfish/v1/Systems/System.Embedded.1`.
///
/// Kept as a string because services differ in trailing slashes and fragments; [`ODataId::path`]
/// gives the part to request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ODataId(String);

impl ODataId {
    /// Wraps a path or URL as an identifier.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The identifier as given by the service.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The part to request: without a `#fragment`, and without a trailing slash.
    pub fn path(&self) -> &str {
        let no_fragment = self.0.split('#').next().unwrap_or_default();
        match no_fragment.strip_suffix('/') {
            Some(p) if !p.is_empty() => p,
            _ => no_fragment,
        }
    }

    /// The last path segment, which Redfish uses as the member `Id` (e.g. `JID_123456789012`).
    pub fn last_segment(&self) -> &str {
        self.path().rsplit('/').next().unwrap_or_default()
    }

    /// Appends a path segment (`/redfish/v1/Systems` + `System.Embedded.1`).
    pub fn join(&self, segment: &str) -> Self {
        Self(format!("{}/{}", self.path(), segment.trim_start_matches('/')))
    }
}

impl fmt::Display for ODataId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ODataId {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl From<String> for ODataId {
    fn from(s: String) -> Self {
        Self(s)
    }
}

/// A reference to another resource: `{"@odata.id": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Where the resource lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
}

impl Link {
    /// A link to `id`.
    pub fn new(id: impl Into<ODataId>) -> Self {
        Self { odata_id: id.into() }
    }
}

/// A resource collection. `T` is [`Link`] for plain listings or a full resource when the
/// collection was read with `$expand`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collection<T> {
    /// The collection's own identifier.
    #[serde(rename = "@odata.id", default, skip_serializing_if = "Option::is_none")]
    pub odata_id: Option<ODataId>,
    /// Display name.
    #[serde(rename = "Name", default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The members on this page. Required: a collection without `Members` is a decode error,
    /// not an empty collection (a job queue that reads as "no jobs" when it was not reported).
    #[serde(rename = "Members")]
    pub members: Vec<T>,
    /// The total count the service reports across pages.
    #[serde(rename = "Members@odata.count", default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The next page, when the service pages the collection.
    #[serde(rename = "Members@odata.nextLink", default, skip_serializing_if = "Option::is_none")]
    pub next_link: Option<String>,
}

impl<T> Default for Collection<T> {
    fn default() -> Self {
        Self {
            odata_id: None,
            name: None,
            members: Vec::new(),
            count: None,
            next_link: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_strips_fragment_and_trailing_slash() {
        let id = ODataId::new("/redfish/v1/Chassis/System.Embedded.1/Power#/PowerControl/0");
        assert_eq!(id.path(), "/redfish/v1/Chassis/System.Embedded.1/Power");
        assert_eq!(ODataId::new("/redfish/v1/").path(), "/redfish/v1");
        assert_eq!(ODataId::new("/").path(), "/");
    }

    #[test]
    fn last_segment_is_member_id() {
        let id = ODataId::new("/redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_123/");
        assert_eq!(id.last_segment(), "JID_123");
        assert_eq!(
            id.join("/x").as_str(),
            "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_123/x"
        );
    }

    #[test]
    fn collection_requires_members_and_nothing_else() {
        let err = serde_json::from_str::<Collection<Link>>(r#"{"Name":"Jobs"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `Members`"), "{err}");
        let c: Collection<Link> = serde_json::from_str(r#"{"Members":[]}"#).unwrap();
        assert!(c.members.is_empty() && c.name.is_none() && c.next_link.is_none());
    }
}
