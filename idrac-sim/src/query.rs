//! OData query options as a real iDRAC advertises them in `ProtocolFeaturesSupported`
//! (`SelectQuery`, `FilterQuery`, `OnlyMemberQuery`, `ExpandQuery` with `ExpandAll`, `NoLinks`,
//! `Links`, `Levels` and `MaxLevels` 1, no `ExcerptQuery`), plus `$top`/`$skip` paging, which
//! Dell's own Lifecycle-log script relies on. Parsing and applying are pure: the server gives
//! [`apply`] the rendered document and a way to read other documents.
//!
//! The rules followed, from DSP0266 ("Query parameters"): unknown parameters without `$` are
//! ignored; an unsupported `$` parameter gets 501; a value that is invalid, or given to a
//! parameter that takes none (`only`), gets 400; options are applied in the order `$filter`,
//! `$skip`, `$top`, `$expand`, `$select`; `Members@odata.count` is the count of every member the
//! filter kept, whatever the paging.

use crate::messages;
use serde_json::{Map, Value};

/// The deepest `$levels` served (`ExpandQuery.MaxLevels` on the real R750s).
pub const MAX_LEVELS: u32 = 1;

/// Which references `$expand` replaces by the documents they name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpandScope {
    /// `*`: every reference.
    All,
    /// `.`: every reference outside `Links`.
    NoLinks,
    /// `~`: only the references under `Links`.
    Links,
}

/// `$expand=<scope>($levels=N)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expand {
    /// What to expand.
    pub scope: ExpandScope,
    /// How deep (1 = the references of this document).
    pub levels: u32,
}

/// The parsed query options of one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    /// `$select`: property paths (`Attributes/Lockdown.1.SystemLockdown` is `["Attributes",
    /// "Lockdown.1.SystemLockdown"]`).
    pub select: Option<Vec<Vec<String>>>,
    /// `$filter` on collection members.
    pub filter: Option<Filter>,
    /// `$expand`.
    pub expand: Option<Expand>,
    /// `only`: the sole member of a collection instead of the collection.
    pub only: bool,
    /// `$top`: at most this many members.
    pub top: Option<usize>,
    /// `$skip`: members skipped first.
    pub skip: Option<usize>,
}

/// Why a query cannot be answered, with the status and Base message DSP0266 asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// A `$` parameter the service does not support: 501.
    Unsupported(String),
    /// A value of the wrong format, or a value given to `only`: 400.
    Format {
        /// The parameter.
        param: String,
        /// The value as sent.
        value: String,
    },
    /// A value of the wrong type (`$top=x`): 400.
    Type {
        /// The parameter.
        param: String,
        /// The value as sent.
        value: String,
    },
    /// A value outside what the service allows (`$levels=3`, `$skip` past the end): 400.
    OutOfRange {
        /// The parameter.
        param: String,
        /// The value as sent.
        value: String,
        /// The range allowed, as text.
        range: String,
    },
    /// `only` with other options: 400.
    Combination,
    /// A collection-only option (`only`, `$filter`) on a resource that is not a collection: 400.
    NotOnResource,
}

impl QueryError {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        match self {
            Self::Unsupported(_) => 501,
            _ => 400,
        }
    }

    /// The Base message (Base 1.12, the registry a real iDRAC 7.10 serves).
    pub fn message(&self) -> Value {
        let fix = "Correct the value for the query parameter in the request and resubmit the request if the operation failed.";
        match self {
            // Base 1.12 has no message naming the parameter (QueryParameterUnsupported came
            // later): QueryNotSupported, with the parameter in the text's resolution.
            Self::Unsupported(p) => messages::base(
                "QueryNotSupported",
                "Querying is not supported by the implementation.",
                &[],
                &format!("Remove the query parameter {p} and resubmit the request."),
                None,
            ),
            Self::Format { param, value } => messages::base(
                "QueryParameterValueFormatError",
                &format!(
                    "The value '{value}' for the parameter {param} is of a different format than the parameter can accept."
                ),
                &[value, param],
                fix,
                None,
            ),
            Self::Type { param, value } => messages::base(
                "QueryParameterValueTypeError",
                &format!(
                    "The value '{value}' for the query parameter {param} is of a different type than the parameter can accept."
                ),
                &[value, param],
                fix,
                None,
            ),
            Self::OutOfRange { param, value, range } => messages::base(
                "QueryParameterOutOfRange",
                &format!("The value '{value}' for the query parameter {param} is out of range {range}."),
                &[value, param, range],
                "Reduce the value for the query parameter to a value that is within range, such as a start or count value that is within bounds of the number of resources in a collection or a page that is within the range of valid pages.",
                None,
            ),
            Self::Combination => messages::base(
                "QueryCombinationInvalid",
                "Two or more query parameters in the request cannot be used together.",
                &[],
                "Remove one or more of the query parameters and resubmit the request if the operation failed.",
                None,
            ),
            Self::NotOnResource => messages::base(
                "QueryNotSupportedOnResource",
                "Querying is not supported on the requested resource.",
                &[],
                "Remove the query parameters and resubmit the request if the operation failed.",
                None,
            ),
        }
    }
}

impl Query {
    /// Parses the raw query string (`a=b&c`), percent-decoded.
    pub fn parse(raw: &str) -> Result<Self, QueryError> {
        let mut q = Self::default();
        for part in raw.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = match part.split_once('=') {
                Some((n, v)) => (decode(n), Some(decode(v))),
                None => (decode(part), None),
            };
            let format = |v: &str| QueryError::Format {
                param: name.clone(),
                value: v.to_owned(),
            };
            let value_of = || value.clone().filter(|v| !v.is_empty()).ok_or_else(|| format(""));
            match name.as_str() {
                "$select" => {
                    let v = value_of()?;
                    let paths: Vec<Vec<String>> = v
                        .split(',')
                        .map(|p| p.trim().split('/').map(str::to_owned).collect::<Vec<_>>())
                        .collect();
                    if paths.iter().any(|p| p.iter().any(String::is_empty)) {
                        return Err(format(&v));
                    }
                    q.select = Some(paths);
                }
                "$filter" => {
                    let v = value_of()?;
                    q.filter = Some(Filter::parse(&v).ok_or_else(|| format(&v))?);
                }
                "$expand" => {
                    let v = value_of()?;
                    q.expand = Some(parse_expand(&v).map_err(|e| match e {
                        ExpandError::Format => format(&v),
                        ExpandError::Levels(l) => QueryError::OutOfRange {
                            param: "$levels".into(),
                            value: l,
                            range: format!("1 to {MAX_LEVELS}"),
                        },
                    })?);
                }
                "$top" | "$skip" => {
                    let v = value_of()?;
                    let n = v.parse::<usize>().map_err(|_| QueryError::Type {
                        param: name.clone(),
                        value: v.clone(),
                    })?;
                    if name == "$top" {
                        q.top = Some(n);
                    } else {
                        q.skip = Some(n);
                    }
                }
                "only" => {
                    if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                        return Err(format(v));
                    }
                    q.only = true;
                }
                n if n.starts_with('$') => return Err(QueryError::Unsupported(n.to_owned())),
                // DSP0266: parameters without `$` that the service does not know are ignored
                // (`excerpt` among them: ExcerptQuery is false).
                _ => {}
            }
        }
        let others =
            q.select.is_some() || q.filter.is_some() || q.expand.is_some() || q.top.is_some() || q.skip.is_some();
        if q.only && others {
            return Err(QueryError::Combination);
        }
        Ok(q)
    }

    /// Whether no option was given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

enum ExpandError {
    Format,
    Levels(String),
}

fn parse_expand(v: &str) -> Result<Expand, ExpandError> {
    let v = v.trim();
    let (head, options) = match v.split_once('(') {
        Some((h, rest)) => (h.trim(), Some(rest.strip_suffix(')').ok_or(ExpandError::Format)?)),
        None => (v, None),
    };
    let scope = match head {
        "*" => ExpandScope::All,
        "." => ExpandScope::NoLinks,
        "~" => ExpandScope::Links,
        _ => return Err(ExpandError::Format),
    };
    let mut levels = 1;
    if let Some(options) = options {
        for option in options.split(';').map(str::trim).filter(|o| !o.is_empty()) {
            let (k, n) = option.split_once('=').ok_or(ExpandError::Format)?;
            if k.trim() != "$levels" {
                return Err(ExpandError::Format);
            }
            let n = n.trim();
            levels = n.parse::<u32>().map_err(|_| ExpandError::Format)?;
            if levels == 0 || levels > MAX_LEVELS {
                return Err(ExpandError::Levels(n.to_owned()));
            }
        }
    }
    Ok(Expand { scope, levels })
}

/// A `$filter` expression: comparisons of member properties with literals, joined by `and`,
/// `or`, `not` and parentheses (DSP0266's `eq`, `ne`, `gt`, `ge`, `lt`, `le`).
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `path op literal`.
    Compare(Vec<String>, Op, Value),
    /// Both hold.
    And(Box<Filter>, Box<Filter>),
    /// Either holds.
    Or(Box<Filter>, Box<Filter>),
    /// Does not hold.
    Not(Box<Filter>),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `eq`.
    Eq,
    /// `ne`.
    Ne,
    /// `gt`.
    Gt,
    /// `ge`.
    Ge,
    /// `lt`.
    Lt,
    /// `le`.
    Le,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Open,
    Close,
    Word(String),
    Text(String),
}

fn tokens(s: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            '\'' => {
                let mut text = String::new();
                i += 1;
                loop {
                    let c = *chars.get(i)?;
                    if c == '\'' {
                        if chars.get(i + 1) == Some(&'\'') {
                            text.push('\'');
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    text.push(c);
                    i += 1;
                }
                out.push(Token::Text(text));
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !matches!(chars[i], '(' | ')' | '\'') {
                    i += 1;
                }
                out.push(Token::Word(chars[start..i].iter().collect()));
            }
        }
    }
    Some(out)
}

impl Filter {
    /// Parses an expression; `None` when it is not one.
    pub fn parse(s: &str) -> Option<Self> {
        let toks = tokens(s)?;
        let mut at = 0;
        let f = Self::or(&toks, &mut at)?;
        (at == toks.len()).then_some(f)
    }

    fn or(t: &[Token], at: &mut usize) -> Option<Self> {
        let mut left = Self::and(t, at)?;
        while matches!(t.get(*at), Some(Token::Word(w)) if w == "or") {
            *at += 1;
            left = Self::Or(Box::new(left), Box::new(Self::and(t, at)?));
        }
        Some(left)
    }

    fn and(t: &[Token], at: &mut usize) -> Option<Self> {
        let mut left = Self::unary(t, at)?;
        while matches!(t.get(*at), Some(Token::Word(w)) if w == "and") {
            *at += 1;
            left = Self::And(Box::new(left), Box::new(Self::unary(t, at)?));
        }
        Some(left)
    }

    fn unary(t: &[Token], at: &mut usize) -> Option<Self> {
        match t.get(*at)? {
            Token::Word(w) if w == "not" => {
                *at += 1;
                Some(Self::Not(Box::new(Self::unary(t, at)?)))
            }
            Token::Open => {
                *at += 1;
                let inner = Self::or(t, at)?;
                if t.get(*at) != Some(&Token::Close) {
                    return None;
                }
                *at += 1;
                Some(inner)
            }
            Token::Word(path) => {
                let path: Vec<String> = path.split('/').map(str::to_owned).collect();
                if path.iter().any(String::is_empty) {
                    return None;
                }
                let op = match t.get(*at + 1)? {
                    Token::Word(o) => match o.as_str() {
                        "eq" => Op::Eq,
                        "ne" => Op::Ne,
                        "gt" => Op::Gt,
                        "ge" => Op::Ge,
                        "lt" => Op::Lt,
                        "le" => Op::Le,
                        _ => return None,
                    },
                    _ => return None,
                };
                let literal = match t.get(*at + 2)? {
                    Token::Text(s) => Value::from(s.clone()),
                    Token::Word(w) => match w.as_str() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        "null" => Value::Null,
                        n => serde_json::from_str::<serde_json::Number>(n).ok().map(Value::Number)?,
                    },
                    _ => return None,
                };
                *at += 3;
                Some(Self::Compare(path, op, literal))
            }
            _ => None,
        }
    }

    /// Whether `member` satisfies the expression. A missing property compares as null.
    pub fn matches(&self, member: &Value) -> bool {
        match self {
            Self::And(a, b) => a.matches(member) && b.matches(member),
            Self::Or(a, b) => a.matches(member) || b.matches(member),
            Self::Not(a) => !a.matches(member),
            Self::Compare(path, op, literal) => {
                let mut at = member;
                for step in path {
                    at = at.get(step).unwrap_or(&Value::Null);
                }
                let order = match (at, literal) {
                    (Value::Number(a), Value::Number(b)) => {
                        a.as_f64().zip(b.as_f64()).and_then(|(a, b)| a.partial_cmp(&b))
                    }
                    // iDRAC filters its Lifecycle log by the message's code (`MessageId eq
                    // 'UEFI0157'`, as Dell's Ansible `idrac_bios` asks) although entries carry
                    // the registry's prefix (`IDRAC.2.9.UEFI0157`): assumed from that module.
                    (Value::String(a), Value::String(b))
                        if path.last().is_some_and(|p| p == "MessageId")
                            && a.rsplit('.').next() == Some(b.as_str()) =>
                    {
                        Some(std::cmp::Ordering::Equal)
                    }
                    (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                    (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
                    (Value::Null, Value::Null) => Some(std::cmp::Ordering::Equal),
                    _ => None,
                };
                match op {
                    Op::Eq => order == Some(std::cmp::Ordering::Equal),
                    Op::Ne => order != Some(std::cmp::Ordering::Equal),
                    Op::Gt => order == Some(std::cmp::Ordering::Greater),
                    Op::Ge => matches!(order, Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)),
                    Op::Lt => order == Some(std::cmp::Ordering::Less),
                    Op::Le => matches!(order, Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)),
                }
            }
        }
    }
}

/// Whether `v` is a bare reference (`{"@odata.id": "..."}`), which `$expand` replaces.
fn is_reference(v: &Value) -> Option<&str> {
    let map = v.as_object()?;
    if map.len() != 1 {
        return None;
    }
    map.get("@odata.id")?.as_str()
}

/// Applies `query` to the document served at `path`. `read` gives another document by path
/// (a member to filter on or inline), `None` when it is not served. `page` is the most members
/// one answer carries (the Lifecycle log's 50; `None` for all): a longer collection gets
/// `Members@odata.nextLink` to the next page.
pub fn apply(
    mut doc: Value,
    path: &str,
    query: &Query,
    page: Option<usize>,
    read: &dyn Fn(&str) -> Option<Value>,
) -> Result<Value, QueryError> {
    let is_collection = doc.get("Members").is_some_and(Value::is_array);
    if (query.only || query.filter.is_some()) && !is_collection {
        return Err(QueryError::NotOnResource);
    }
    if query.only {
        let members = doc["Members"].as_array().cloned().unwrap_or_default();
        if let [one] = members.as_slice() {
            // DSP0266: a collection of exactly one member answers with that member.
            let member = match is_reference(one) {
                Some(id) => read(id.trim_end_matches('/')),
                None => Some(one.clone()),
            };
            if let Some(m) = member {
                return Ok(m);
            }
        }
        return Ok(doc);
    }
    if is_collection {
        page_members(&mut doc, path, query, page, read)?;
    }
    if let Some(expand) = query.expand {
        expand_references(&mut doc, expand.scope, false, read);
    }
    if let Some(select) = &query.select {
        doc = if is_collection {
            let mut out = doc;
            if let Some(members) = out["Members"].as_array_mut() {
                for m in members.iter_mut().filter(|m| is_reference(m).is_none()) {
                    *m = selected(m, select);
                }
            }
            keep_only(
                &mut out,
                select,
                &["Members", "Members@odata.count", "Members@odata.nextLink"],
            );
            out
        } else {
            selected(&doc, select)
        };
    }
    Ok(doc)
}

fn page_members(
    doc: &mut Value,
    path: &str,
    query: &Query,
    page: Option<usize>,
    read: &dyn Fn(&str) -> Option<Value>,
) -> Result<(), QueryError> {
    let mut members = doc["Members"].as_array().cloned().unwrap_or_default();
    if let Some(filter) = &query.filter {
        members.retain(|m| match is_reference(m) {
            Some(id) => read(id.trim_end_matches('/')).is_some_and(|full| filter.matches(&full)),
            None => filter.matches(m),
        });
    }
    let total = members.len();
    let skip = query.skip.unwrap_or(0);
    if skip > total {
        return Err(QueryError::OutOfRange {
            param: "$skip".into(),
            value: skip.to_string(),
            range: format!("0 to {total}"),
        });
    }
    let wanted = query.top.unwrap_or(usize::MAX);
    let take = page.map_or(wanted, |p| wanted.min(p));
    let rest: Vec<Value> = members.into_iter().skip(skip).collect();
    let more = rest.len() > take && take < wanted;
    let shown: Vec<Value> = rest.into_iter().take(take).collect();
    let next = skip + shown.len();
    doc["Members"] = Value::Array(shown);
    doc["Members@odata.count"] = Value::from(total);
    if let Some(map) = doc.as_object_mut() {
        map.remove("Members@odata.nextLink");
        if more {
            map.insert(
                "Members@odata.nextLink".into(),
                Value::from(format!("{path}?$skip={next}")),
            );
        }
    }
    Ok(())
}

fn expand_references(v: &mut Value, scope: ExpandScope, under_links: bool, read: &dyn Fn(&str) -> Option<Value>) {
    match v {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key.starts_with('@') {
                    continue;
                }
                let in_links = under_links || key == "Links";
                if let Some(id) = is_reference(child) {
                    let wanted = match scope {
                        ExpandScope::All => true,
                        ExpandScope::NoLinks => !in_links,
                        ExpandScope::Links => in_links,
                    };
                    if wanted && let Some(full) = read(id.split('#').next().unwrap_or(id).trim_end_matches('/')) {
                        *child = full;
                    }
                } else {
                    expand_references(child, scope, in_links, read);
                }
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                if let Some(id) = is_reference(item) {
                    let wanted = match scope {
                        ExpandScope::All => true,
                        ExpandScope::NoLinks => !under_links,
                        ExpandScope::Links => under_links,
                    };
                    // Fragment references (`Power#/PowerControl/0`) name part of a document
                    // already inline.
                    if wanted
                        && !id.contains('#')
                        && let Some(full) = read(id.trim_end_matches('/'))
                    {
                        *item = full;
                    }
                } else {
                    expand_references(item, scope, under_links, read);
                }
            }
        }
        _ => {}
    }
}

/// The properties `select` names, with the OData annotations every answer keeps
/// (`@odata.id`, `@odata.type`, `@odata.context`, `@odata.etag`).
fn selected(doc: &Value, select: &[Vec<String>]) -> Value {
    let mut out = doc.clone();
    keep_only(&mut out, select, &[]);
    out
}

fn keep_only(doc: &mut Value, select: &[Vec<String>], also: &[&str]) {
    let Some(map) = doc.as_object_mut() else { return };
    let mut kept = Map::new();
    for (k, v) in std::mem::take(map) {
        if k.starts_with("@odata.") || also.contains(&k.as_str()) {
            kept.insert(k, v);
            continue;
        }
        let deeper: Vec<Vec<String>> = select
            .iter()
            .filter(|p| p.first() == Some(&k))
            .map(|p| p[1..].to_vec())
            .collect();
        if deeper.is_empty() {
            continue;
        }
        if deeper.iter().any(Vec::is_empty) {
            kept.insert(k, v);
        } else {
            let mut v = v;
            keep_only(&mut v, &deeper, &[]);
            kept.insert(k, v);
        }
    }
    *map = kept;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(q: &str) -> Result<Query, QueryError> {
        Query::parse(q)
    }

    #[test]
    fn unknown_dollar_parameters_are_refused_and_others_ignored() {
        assert_eq!(parse("$rpvunknown").unwrap_err().status(), 501);
        assert_eq!(
            parse("$orderby=Id").unwrap_err(),
            QueryError::Unsupported("$orderby".into())
        );
        assert!(parse("excerpt&foo=bar").unwrap().is_empty());
    }

    #[test]
    fn only_takes_no_value_and_no_company() {
        assert_eq!(
            parse("only=foo").unwrap_err(),
            QueryError::Format {
                param: "only".into(),
                value: "foo".into()
            }
        );
        assert_eq!(parse("only&$select=Id").unwrap_err(), QueryError::Combination);
        assert!(parse("only").unwrap().only);
    }

    #[test]
    fn expand_scopes_and_levels_are_read_and_bounded() {
        let e = parse("$expand=*($levels=1)").unwrap().expand.unwrap();
        assert_eq!((e.scope, e.levels), (ExpandScope::All, 1));
        assert_eq!(parse("$expand=.").unwrap().expand.unwrap().scope, ExpandScope::NoLinks);
        assert_eq!(parse("$expand=~").unwrap().expand.unwrap().scope, ExpandScope::Links);
        assert_eq!(
            parse("$expand=%2A%28%24levels%3D1%29").unwrap().expand.unwrap().scope,
            ExpandScope::All
        );
        assert!(matches!(
            parse("$expand=*($levels=2)"),
            Err(QueryError::OutOfRange { .. })
        ));
        assert!(matches!(parse("$expand=Members"), Err(QueryError::Format { .. })));
    }

    #[test]
    fn top_and_skip_must_be_counts() {
        assert!(matches!(parse("$top=x"), Err(QueryError::Type { .. })));
        let q = parse("$top=2&$skip=1").unwrap();
        assert_eq!((q.top, q.skip), (Some(2), Some(1)));
    }

    #[test]
    fn filters_compare_nested_properties_with_literals() {
        let f = Filter::parse("Severity eq 'Critical' and (Oem/Dell/Category eq 'Audit' or not Id lt 3)").unwrap();
        let entry =
            |sev: &str, cat: &str, id: i64| json!({"Severity": sev, "Id": id, "Oem": {"Dell": {"Category": cat}}});
        assert!(f.matches(&entry("Critical", "Audit", 1)));
        assert!(f.matches(&entry("Critical", "Configuration", 5)));
        assert!(!f.matches(&entry("Critical", "Configuration", 1)));
        assert!(!f.matches(&entry("OK", "Audit", 1)));
        assert!(
            Filter::parse("Name eq 'it''s'")
                .unwrap()
                .matches(&json!({"Name": "it's"}))
        );
        assert!(
            Filter::parse("Created ge '2024-01-01'")
                .unwrap()
                .matches(&json!({"Created": "2024-08-15T15:51:30-05:00"}))
        );
        for bad in ["Severity", "Severity eq", "Severity xx 'a'", "(Id eq 1", "Id eq 1 and"] {
            assert!(Filter::parse(bad).is_none(), "{bad}");
        }
    }

    fn collection(n: usize) -> Value {
        let members: Vec<Value> = (0..n).map(|i| json!({"@odata.id": format!("/c/{i}")})).collect();
        json!({"@odata.id": "/c", "Members": members, "Members@odata.count": n})
    }

    fn read(p: &str) -> Option<Value> {
        let i: i64 = p.strip_prefix("/c/")?.parse().ok()?;
        Some(json!({"@odata.id": p, "Id": i, "Name": format!("member {i}"), "Links": {"Peer": {"@odata.id": "/c/0"}}}))
    }

    #[test]
    fn paging_keeps_the_total_count_and_links_the_next_page() {
        let q = parse("$skip=2&$top=3").unwrap();
        let out = apply(collection(10), "/c", &q, None, &read).unwrap();
        assert_eq!(
            out["Members"],
            json!([{"@odata.id": "/c/2"}, {"@odata.id": "/c/3"}, {"@odata.id": "/c/4"}])
        );
        assert_eq!(out["Members@odata.count"], 10);
        assert!(out.get("Members@odata.nextLink").is_none(), "$top asked for three");
        let paged = apply(collection(120), "/c", &Query::default(), Some(50), &read).unwrap();
        assert_eq!(paged["Members"].as_array().unwrap().len(), 50);
        assert_eq!(paged["Members@odata.nextLink"], "/c?$skip=50");
        let last = apply(collection(120), "/c", &parse("$skip=100").unwrap(), Some(50), &read).unwrap();
        assert_eq!(last["Members"].as_array().unwrap().len(), 20);
        assert!(last.get("Members@odata.nextLink").is_none());
        let past = apply(collection(10), "/c", &parse("$skip=11").unwrap(), None, &read).unwrap_err();
        assert!(
            past.message()["Message"]
                .as_str()
                .unwrap()
                .contains("query parameter $skip is out of range")
        );
    }

    #[test]
    fn filter_reads_linked_members_and_keeps_them_as_links() {
        let q = parse("$filter=Id ge 8").unwrap();
        let out = apply(collection(10), "/c", &q, None, &read).unwrap();
        assert_eq!(out["Members"], json!([{"@odata.id": "/c/8"}, {"@odata.id": "/c/9"}]));
        assert_eq!(out["Members@odata.count"], 2);
        assert_eq!(
            apply(json!({"Id": 1}), "/x", &q, None, &read).unwrap_err(),
            QueryError::NotOnResource
        );
    }

    #[test]
    fn expand_select_and_only_shape_the_answer() {
        let exp = apply(
            collection(2),
            "/c",
            &parse("$expand=*($levels=1)&$select=Name").unwrap(),
            None,
            &read,
        )
        .unwrap();
        assert_eq!(exp["Members"][1], json!({"@odata.id": "/c/1", "Name": "member 1"}));
        let doc = read("/c/3").unwrap();
        let links = apply(doc.clone(), "/c/3", &parse("$expand=~").unwrap(), None, &read).unwrap();
        assert_eq!(links["Links"]["Peer"]["Name"], "member 0");
        let no_links = apply(doc.clone(), "/c/3", &parse("$expand=.").unwrap(), None, &read).unwrap();
        assert_eq!(no_links["Links"]["Peer"], json!({"@odata.id": "/c/0"}));
        let sel = apply(
            json!({"@odata.id": "/a", "@odata.type": "#A", "Attributes": {"X.1.Y": 1, "Z.1.W": 2}, "Id": "a"}),
            "/a",
            &parse("$select=Attributes/X.1.Y").unwrap(),
            None,
            &read,
        )
        .unwrap();
        assert_eq!(
            sel,
            json!({"@odata.id": "/a", "@odata.type": "#A", "Attributes": {"X.1.Y": 1}})
        );
        let one = apply(collection(1), "/c", &parse("only").unwrap(), None, &read).unwrap();
        assert_eq!(one["Name"], "member 0");
        let many = apply(collection(3), "/c", &parse("only").unwrap(), None, &read).unwrap();
        assert_eq!(
            many["Members@odata.count"], 3,
            "only with several members answers the collection"
        );
    }
}
