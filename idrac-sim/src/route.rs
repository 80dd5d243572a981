//! The route table: which handler answers a method on a path. Each concern of a host declares
//! its own routes; a [`Personality`](crate::personality::Personality) puts them in order, and the
//! first route whose method, pattern and guard take a request answers it.

use crate::host::{Caller, Host, Reply};
use crate::messages;
use axum::http::Method;
use serde_json::Value;

/// What a handler sees of a request: authenticated, its query options read, its path
/// normalised (no repeated or trailing slash).
#[derive(Debug)]
pub struct Request<'a> {
    /// The method (`HEAD` is answered as `GET`).
    pub method: &'a Method,
    /// The path.
    pub path: &'a str,
    /// `$expand` asks for members inline.
    pub expand: bool,
    /// The raw body.
    pub body: &'a [u8],
    /// Who asks.
    pub caller: &'a Caller,
}

impl Request<'_> {
    /// The last segment of the path: a member's id.
    pub fn id(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or_default()
    }

    /// The path without its last segment: the collection a member is in.
    pub fn collection(&self) -> &str {
        self.path.rsplit_once('/').map_or(self.path, |(c, _)| c)
    }

    /// `answer` given the body as JSON, or 400 MalformedJSON.
    pub fn with_json(&self, answer: impl FnOnce(&Value) -> Reply) -> Reply {
        match serde_json::from_slice::<Value>(self.body) {
            Ok(body) => answer(&body),
            Err(_) => Reply::error(
                400,
                vec![messages::base(
                    "MalformedJSON",
                    "The request body submitted was malformed JSON and could not be parsed by the receiving service.",
                    &[],
                    "Ensure that the request body is valid JSON and resubmit the request.",
                    None,
                )],
            ),
        }
    }

    /// The tree's document at the request's path.
    pub fn recorded<'h>(&self, host: &'h Host) -> Option<&'h Value> {
        host.fixture.doc(self.path)
    }

    /// The tree's document at the request's path, or `null` for a tree that lacks it.
    pub fn recorded_or_null<'h>(&self, host: &'h Host) -> &'h Value {
        self.recorded(host).unwrap_or(&Value::Null)
    }
}

/// Answers a request that a route took.
pub type Handler = fn(&Host, &Request<'_>) -> Reply;

/// Whether a route takes a request its pattern matched (what the host holds decides).
pub type Guard = fn(&Host, &Request<'_>) -> bool;

/// The paths a route answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// This path.
    Exact(String),
    /// A member of this collection: one more segment, not empty.
    Member(String),
    /// Any path that starts with this text.
    Prefix(String),
    /// Any path that ends with this text.
    Suffix(String),
    /// Every path (the guard decides).
    Any,
}

impl Pattern {
    /// Whether `path` is one of the pattern's.
    pub fn matches(&self, path: &str) -> bool {
        match self {
            Self::Exact(p) => path == p,
            Self::Member(c) => path
                .strip_prefix(c.as_str())
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|id| !id.is_empty() && !id.contains('/')),
            Self::Prefix(p) => path.starts_with(p.as_str()),
            Self::Suffix(s) => path.ends_with(s.as_str()),
            Self::Any => true,
        }
    }
}

/// `path` exactly.
pub fn exact(path: impl Into<String>) -> Pattern {
    Pattern::Exact(path.into())
}

/// A member of `collection`.
pub fn member(collection: impl Into<String>) -> Pattern {
    Pattern::Member(collection.into())
}

/// Any path under `prefix` (the text, not only whole segments).
pub fn prefix(prefix: impl Into<String>) -> Pattern {
    Pattern::Prefix(prefix.into())
}

/// Any path ending with `suffix`.
pub fn suffix(suffix: impl Into<String>) -> Pattern {
    Pattern::Suffix(suffix.into())
}

/// One route: a method on the paths of a pattern, taken when the guard agrees.
#[derive(Debug, Clone)]
pub struct Route {
    method: Method,
    pattern: Pattern,
    guard: Option<Guard>,
    handler: Handler,
}

impl Route {
    /// `method` on `pattern`, answered by `handler`.
    pub fn new(method: Method, pattern: Pattern, handler: Handler) -> Self {
        Self {
            method,
            pattern,
            guard: None,
            handler,
        }
    }

    /// `GET` (and so `HEAD`).
    pub fn get(pattern: Pattern, handler: Handler) -> Self {
        Self::new(Method::GET, pattern, handler)
    }

    /// `POST`.
    pub fn post(pattern: Pattern, handler: Handler) -> Self {
        Self::new(Method::POST, pattern, handler)
    }

    /// `PATCH`.
    pub fn patch(pattern: Pattern, handler: Handler) -> Self {
        Self::new(Method::PATCH, pattern, handler)
    }

    /// `DELETE`.
    pub fn delete(pattern: Pattern, handler: Handler) -> Self {
        Self::new(Method::DELETE, pattern, handler)
    }

    /// The same route, taken only when `guard` agrees; otherwise the routes after it are tried.
    #[must_use]
    pub fn when(mut self, guard: Guard) -> Self {
        self.guard = Some(guard);
        self
    }

    /// Whether this route takes `request`.
    fn takes(&self, host: &Host, request: &Request<'_>) -> bool {
        self.method == *request.method
            && self.pattern.matches(request.path)
            && self.guard.is_none_or(|guard| guard(host, request))
    }
}

/// Routes in the order they are tried.
#[derive(Debug, Clone, Default)]
pub struct Routes(Vec<Route>);

impl Routes {
    /// The routes of `groups`, in order.
    pub fn of(groups: impl IntoIterator<Item = Vec<Route>>) -> Self {
        Self(groups.into_iter().flatten().collect())
    }

    /// The answer of the first route that takes `request`, or `None` when none does.
    pub fn answer(&self, host: &Host, request: &Request<'_>) -> Option<Reply> {
        self.0
            .iter()
            .find(|route| route.takes(host, request))
            .map(|route| (route.handler)(host, request))
    }
}

/// A guard: the tree records a document at the path.
pub fn recorded(host: &Host, request: &Request<'_>) -> bool {
    request.recorded(host).is_some()
}

/// A guard: the tree records no document at the path (the host renders one).
pub fn unrecorded(host: &Host, request: &Request<'_>) -> bool {
    request.recorded(host).is_none()
}

/// 404 for `path`.
pub fn not_found(path: &str) -> Reply {
    Reply::error(404, vec![messages::not_found(path)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostFaults;
    use std::sync::Arc;

    #[test]
    fn the_first_route_that_takes_a_request_answers_and_a_refusing_guard_passes_it_on() {
        let fixture = Arc::new(crate::fixture::Fixture::builtin("r7625").unwrap());
        let host = Host::new(0, fixture, Arc::default(), HostFaults::default());
        let routes = Routes::of([
            vec![
                Route::get(exact("/a"), |_, _| Reply::with_body(201, None)).when(|_, _| false),
                Route::post(exact("/a"), |_, _| Reply::with_body(204, None)),
                Route::get(member("/c"), |_, r| Reply::ok(Value::from(r.id()))),
            ],
            vec![Route::get(Pattern::Any, |_, _| Reply::with_body(202, None)).when(recorded)],
        ]);
        let caller = Caller {
            user: String::new(),
            address: String::new(),
        };
        let answer = |method: &Method, path: &str| {
            let request = Request {
                method,
                path,
                expand: false,
                body: &[],
                caller: &caller,
            };
            routes.answer(&host, &request).map(|r| (r.status, r.body))
        };
        assert_eq!(answer(&Method::POST, "/a"), Some((204, None)));
        assert_eq!(answer(&Method::GET, "/c/7"), Some((200, Some(Value::from("7")))));
        assert_eq!(
            answer(&Method::GET, "/redfish/v1/Systems"),
            Some((202, None)),
            "the catch-all takes what the tree records"
        );
        assert_eq!(
            answer(&Method::GET, "/a"),
            None,
            "the guard refused and nothing else takes it"
        );
        assert_eq!(answer(&Method::DELETE, "/c/7"), None);
    }

    #[test]
    fn a_member_is_one_more_segment_and_a_prefix_is_text() {
        let jobs = member("/redfish/v1/Jobs");
        assert!(jobs.matches("/redfish/v1/Jobs/JID_1"));
        assert!(!jobs.matches("/redfish/v1/Jobs"));
        assert!(!jobs.matches("/redfish/v1/Jobs/"));
        assert!(!jobs.matches("/redfish/v1/Jobs/JID_1/Steps"));
        assert!(!jobs.matches("/redfish/v1/JobsX/1"));
        assert!(prefix("/redfish/v1/Jobs").matches("/redfish/v1/JobsX/1"));
        assert!(suffix("/Sensors/Power").matches("/redfish/v1/Chassis/1/Sensors/Power"));
        assert!(exact("/redfish").matches("/redfish") && !exact("/redfish").matches("/redfish/v1"));
    }
}
