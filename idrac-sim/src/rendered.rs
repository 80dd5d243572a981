//! [`Rendered`]: a document serialized once with its `ETag`, shared by the fixture (documents
//! every host serves alike) and the hosts (documents kept until their state changes). A leaf:
//! it knows neither.

use axum::body::Bytes;
use axum::http::HeaderValue;
use serde_json::Value;

/// A JSON body serialized once, with its weak `ETag`: what the emulator keeps of a document
/// until the state it shows changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The serialized body.
    pub body: Bytes,
    /// `W/"<FNV-1a of the body>"`.
    pub etag: HeaderValue,
    /// The document's `@odata.type` (`#ComputerSystem.v1_20_0.ComputerSystem`), which names the
    /// schema a `Link: rel=describedby` header points at.
    pub odata_type: Option<String>,
}

impl Rendered {
    /// Serializes `doc` and hashes it; a document that carries its own `@odata.etag` keeps
    /// that as its `ETag` (DSP0266: the header and the property name the same version).
    pub fn of(doc: &Value) -> Self {
        let mut rendered = Self::new(Bytes::from(serde_json::to_vec(doc).unwrap_or_default()));
        rendered.odata_type = doc.get("@odata.type").and_then(Value::as_str).map(str::to_owned);
        if let Some(tag) = doc
            .get("@odata.etag")
            .and_then(Value::as_str)
            .and_then(|t| HeaderValue::from_str(t).ok())
        {
            rendered.etag = tag;
        }
        rendered
    }

    /// Hashes a serialized body (its `@odata.type` unknown).
    pub fn new(body: Bytes) -> Self {
        // FNV-1a: stable across processes, unlike the standard library's hasher.
        let hash = body.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let etag = HeaderValue::from_str(&format!("W/\"{hash:016x}\"")).unwrap_or(HeaderValue::from_static("W/\"0\""));
        Self {
            body,
            etag,
            odata_type: None,
        }
    }
}
