//! [`Reply`]: what an operation answers, before HTTP.

use crate::messages;
pub use crate::rendered::Rendered;
use axum::body::Bytes;
use serde_json::Value;
use std::sync::Arc;

/// The media type of `$metadata` and the schema files, as Dell's API guide gives it.
pub const XML: &str = "application/xml;charset=utf-8";

/// The media type of every JSON answer, as a real iDRAC sends it.
pub const JSON: &str = "application/json;odata.metadata=minimal;charset=utf-8";

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
    /// A body that is not JSON (`$metadata`, a recorded schema file), with its media type;
    /// served instead of the others.
    pub text: Option<(Bytes, &'static str)>,
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
            text: None,
        }
    }

    /// 200 with a body that is not JSON.
    pub fn ok_text(body: Bytes, media_type: &'static str) -> Self {
        Self {
            text: Some((body, media_type)),
            ..Self::with_body(200, None)
        }
    }

    /// The JSON body, whichever way it is held (parsed again from a rendering).
    pub fn json(&self) -> Option<Value> {
        match (&self.body, &self.rendered) {
            (Some(v), _) => Some(v.clone()),
            (None, Some(r)) => serde_json::from_slice(&r.body).ok(),
            (None, None) => None,
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
            (None, Some(doc)) if self.status == 200 && self.text.is_none() => Self {
                rendered: Some(Arc::new(Rendered::of(doc))),
                body: None,
                ..self
            },
            _ => self,
        }
    }
}
