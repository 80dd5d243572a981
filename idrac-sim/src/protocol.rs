//! The HTTP rules every answer follows, whatever the resource: the methods a URI allows
//! (`Allow`), the `OData-Version` a request may ask for, `Cache-Control`, the
//! `Link: <…>; rel=describedby` header, `WWW-Authenticate` on 401, and how many members one
//! page of a collection carries.
//!
//! Sources: DSP0266 ("Response headers": Allow on 405 and on GET/HEAD, Cache-Control, Link
//! rel=describedby matching the `@odata.type` version, WWW-Authenticate when credentials are
//! missing or invalid; "Request headers": an unsupported OData-Version is refused with 412),
//! and Dell's iDRAC Redfish API guide ("HTTP headers": Cache-Control on all responses, metadata
//! cacheable and instrumentation not; "HTTP methods": every URL supports HEAD).

use crate::host::Reply;
use crate::messages;
use axum::http::{HeaderMap, HeaderValue};

/// The challenge sent with every 401 (Basic is what every client here uses; the realm is the
/// emulator's choice).
pub const WWW_AUTHENTICATE: &str = "Basic realm=\"RedfishService\"";

/// The OData version the service speaks.
pub const ODATA_VERSION: &str = "4.0";

/// Members per page of the Lifecycle log: Dell's GetIdracLcLogsREDFISH.py reads the log 50
/// entries at a time (`$skip=50`, `100`, …), the page a real iDRAC serves.
pub const LOG_PAGE: usize = 50;

/// 412 for a request asking for an OData version other than 4.0 (DSP0266, "OData-Version":
/// services reject a version they do not support with 412 Precondition Failed).
pub fn odata_version(headers: &HeaderMap) -> Option<Reply> {
    let asked = headers.get("OData-Version")?.to_str().unwrap_or("?").trim();
    (asked != ODATA_VERSION).then(|| {
        Reply::error(
            412,
            vec![messages::base(
                "GeneralError",
                &format!(
                    "The requested OData-Version {asked} is not supported; this service speaks OData-Version 4.0."
                ),
                &[],
                "Send OData-Version: 4.0, or leave the header out, and resubmit the request.",
                None,
            )],
        )
    })
}

/// `Cache-Control`: the metadata documents may be cached, everything else shows live state.
pub fn cache_control(path: &str) -> &'static str {
    if path == "/redfish/v1/$metadata" || path == "/redfish/v1/odata" || path.starts_with("/redfish/v1/JsonSchemas") {
        "max-age=86400"
    } else {
        "no-cache"
    }
}

/// `Link: </redfish/v1/JsonSchemas/ComputerSystem.v1_20_0>; rel=describedby` for a document of
/// type `#ComputerSystem.v1_20_0.ComputerSystem`: the schema file resource the service lists
/// under `JsonSchemas`, versioned as the `@odata.type` is.
pub fn described_by(odata_type: &str) -> Option<HeaderValue> {
    let t = odata_type.strip_prefix('#')?;
    let (namespace, _) = t.rsplit_once('.')?;
    if namespace.is_empty()
        || !namespace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
    {
        return None;
    }
    HeaderValue::from_str(&format!("</redfish/v1/JsonSchemas/{namespace}>; rel=describedby")).ok()
}

/// How many members one answer for `path` carries: the log entry collections page, every
/// other collection comes whole.
pub fn page_size(path: &str) -> Option<usize> {
    let log = path.starts_with("/redfish/v1/Managers/") && path.ends_with("/Entries") && path.contains("/LogServices/");
    (log || path == crate::host::logs::LEGACY_LCLOG).then_some(LOG_PAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_link_carries_the_version_of_the_type() {
        let link = described_by("#ComputerSystem.v1_20_0.ComputerSystem").unwrap();
        assert_eq!(
            link,
            "</redfish/v1/JsonSchemas/ComputerSystem.v1_20_0>; rel=describedby"
        );
        let collection = described_by("#ComputerSystemCollection.ComputerSystemCollection").unwrap();
        assert_eq!(
            collection,
            "</redfish/v1/JsonSchemas/ComputerSystemCollection>; rel=describedby"
        );
        assert!(described_by("nonsense").is_none());
        assert!(described_by("#Bad Type.v1.X").is_none());
    }

    #[test]
    fn only_version_4_0_is_accepted() {
        let mut h = HeaderMap::new();
        assert!(odata_version(&h).is_none());
        h.insert("OData-Version", HeaderValue::from_static("4.0"));
        assert!(odata_version(&h).is_none());
        h.insert("OData-Version", HeaderValue::from_static("4.1"));
        assert_eq!(odata_version(&h).unwrap().status, 412);
    }

    #[test]
    fn log_entries_page_and_metadata_is_cacheable() {
        assert_eq!(
            page_size("/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries"),
            Some(50)
        );
        assert_eq!(page_size("/redfish/v1/Systems"), None);
        assert_eq!(cache_control("/redfish/v1/$metadata"), "max-age=86400");
        assert_eq!(cache_control("/redfish/v1/Systems/System.Embedded.1"), "no-cache");
    }
}
