//! [`Reply`]: what an operation answers, before HTTP.

use crate::messages;
use axum::body::Bytes;
use axum::http::HeaderValue;
use serde_json::Value;
use std::sync::Arc;

/// An HTTP-agnostic answer: status, extra headers, JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers (`Location`, `Retry-After`, `X-Auth-Token`).
    pub headers: Vec<(&'static str, String)>,
    /// Body; `None` for an empty body (or when `rendered` carries it).
    pub body: Option<Value>,
    /// A body already serialized (a cached document, the BIOS registry); served instead of
    /// `body`.
    pub rendered: Option<Arc<Rendered>>,
}

/// A JSON body serialized once, with its weak `ETag`: what the emulator keeps of a document
/// until the state it shows changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The serialized body.
    pub body: Bytes,
    /// `W/"<FNV-1a of the body>"`.
    pub etag: HeaderValue,
}

impl Rendered {
    /// Serializes `doc` and hashes it.
    pub fn of(doc: &Value) -> Self {
        Self::new(Bytes::from(serde_json::to_vec(doc).unwrap_or_default()))
    }

    /// Hashes a serialized body.
    pub fn new(body: Bytes) -> Self {
        // FNV-1a: stable across processes, unlike the standard library's hasher.
        let hash = body.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let etag = HeaderValue::from_str(&format!("W/\"{hash:016x}\"")).unwrap_or(HeaderValue::from_static("W/\"0\""));
        Self { body, etag }
    }
}

impl Reply {
    /// 200 with a body.
    pub fn ok(body: Value) -> Self {
        Self::with_body(200, Some(body))
    }

    /// 200 with a JSON body serialized earlier.
    pub fn ok_rendered(body: Arc<Rendered>) -> Self {
        Self {
            rendered: Some(body),
            ..Self::with_body(200, None)
        }
    }

    /// A status with a body, or none.
    pub fn with_body(status: u16, body: Option<Value>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body,
            rendered: None,
        }
    }

    /// A status with an `{"error": ...}` body.
    pub fn error(status: u16, messages: Vec<Value>) -> Self {
        Self::with_body(status, Some(messages::error_body(messages)))
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The same answer with its body serialized (a 200 with a body only, the answers worth
    /// keeping; others come back as they are).
    pub fn render(self) -> Self {
        match (&self.rendered, &self.body) {
            (None, Some(doc)) if self.status == 200 => Self {
                rendered: Some(Arc::new(Rendered::of(doc))),
                body: None,
                ..self
            },
            _ => self,
        }
    }
}
