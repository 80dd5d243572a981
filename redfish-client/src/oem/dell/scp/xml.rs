//! The XML form of an SCP, read with quick-xml: `<SystemConfiguration Model=".." ServiceTag=".."
//! TimeStamp="..">`, the export's notes as comments before the first component, `<Component
//! FQDD="..">` (nested for storage) holding `<Attribute Name="..">value</Attribute>`, and each
//! attribute an import skips written as a comment holding the element, as real exports do
//! (`<!-- <Attribute Name="ProcCStates">Disabled</Attribute> -->`).

use super::document::{Component, ScpAttribute, ScpDocument, ScpError};
use quick_xml::XmlVersion;
use quick_xml::escape::{escape, resolve_predefined_entity};
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::reader::Reader;
use std::fmt::Write as _;

/// The attribute `key` of an element, unescaped.
fn attr(e: &BytesStart<'_>, key: &str) -> Result<Option<String>, ScpError> {
    for a in e.attributes() {
        let a = a.map_err(|err| ScpError::new(format!("bad attribute: {err}")))?;
        if a.key.as_ref() == key {
            let v = a
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|err| ScpError::new(format!("bad value of {key}: {err}")))?;
            return Ok(Some(v.into_owned()));
        }
    }
    Ok(None)
}

/// The text an entity or character reference stands for.
fn reference(r: &BytesRef<'_>) -> Result<String, ScpError> {
    if let Some(c) = r
        .resolve_char_ref()
        .map_err(|e| ScpError::new(format!("bad character reference: {e}")))?
    {
        return Ok(c.to_string());
    }
    let name = r.xml10_content();
    resolve_predefined_entity(&name)
        .map(str::to_owned)
        .ok_or_else(|| ScpError::new(format!("unknown entity &{name};")))
}

/// The line of byte offset `at` in `text`.
fn line_at(text: &str, at: u64) -> usize {
    let at = usize::try_from(at).unwrap_or(usize::MAX).min(text.len());
    text.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1
}

/// An attribute being read: its name and the text so far.
struct Open {
    name: String,
    value: String,
}

/// Reads `<Attribute>` elements from a fragment (a comment's text, or a whole document's
/// component body); `Ok(None)` when the fragment holds anything else.
fn commented_attributes(fragment: &str) -> Option<Vec<ScpAttribute>> {
    let mut reader = Reader::from_str(fragment);
    let mut out = Vec::new();
    let mut open: Option<Open> = None;
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) if e.name().as_ref() == "Attribute" && open.is_none() => {
                open = Some(Open {
                    name: attr(&e, "Name").ok()??,
                    value: String::new(),
                });
            }
            Event::Empty(e) if e.name().as_ref() == "Attribute" && open.is_none() => {
                out.push(skipped(attr(&e, "Name").ok()??, String::new()));
            }
            Event::Text(t) => {
                let text = t.xml10_content();
                match open.as_mut() {
                    Some(o) => o.value.push_str(&text),
                    None if text.trim().is_empty() => {}
                    None => return None,
                }
            }
            Event::GeneralRef(r) => open.as_mut()?.value.push_str(&reference(&r).ok()?),
            Event::End(e) if e.name().as_ref() == "Attribute" => {
                let o = open.take()?;
                out.push(skipped(o.name, o.value));
            }
            Event::Eof => break,
            _ => return None,
        }
    }
    (open.is_none() && !out.is_empty()).then_some(out)
}

fn skipped(name: String, value: String) -> ScpAttribute {
    ScpAttribute {
        name,
        value,
        set_on_import: false,
        comment: None,
    }
}

/// Reads the XML form; errors name the line.
pub(super) fn parse(text: &str) -> Result<ScpDocument, ScpError> {
    let mut reader = Reader::from_str(text.trim_start_matches('\u{feff}'));
    let at = |reader: &Reader<&[u8]>, e: ScpError| ScpError {
        line: Some(line_at(text, reader.buffer_position())),
        ..e
    };
    let mut doc = ScpDocument::default();
    let mut in_root = false;
    let mut root_closed = false;
    let mut stack: Vec<Component> = Vec::new();
    let mut open: Option<Open> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| at(&reader, ScpError::new(format!("not well-formed XML: {e}"))))?;
        match event {
            Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            Event::Start(e) | Event::Empty(e) if root_closed => {
                let name = e.name().as_ref().to_owned();
                return Err(at(
                    &reader,
                    ScpError::new(format!("<{name}> after </SystemConfiguration>")),
                ));
            }
            Event::Start(e) if e.name().as_ref() == "SystemConfiguration" && !in_root => {
                in_root = true;
                doc.model = attr(&e, "Model").map_err(|x| at(&reader, x))?;
                doc.service_tag = attr(&e, "ServiceTag").map_err(|x| at(&reader, x))?;
                doc.timestamp = attr(&e, "TimeStamp").map_err(|x| at(&reader, x))?;
            }
            Event::Empty(e) if e.name().as_ref() == "SystemConfiguration" && !in_root => {
                doc.model = attr(&e, "Model").map_err(|x| at(&reader, x))?;
                doc.service_tag = attr(&e, "ServiceTag").map_err(|x| at(&reader, x))?;
                doc.timestamp = attr(&e, "TimeStamp").map_err(|x| at(&reader, x))?;
                root_closed = true;
            }
            Event::Start(e) | Event::Empty(e) if !in_root => {
                let name = e.name().as_ref().to_owned();
                return Err(at(
                    &reader,
                    ScpError::new(format!("the root element is <{name}>, not <SystemConfiguration>")),
                ));
            }
            Event::Start(e) if e.name().as_ref() == "Component" && open.is_none() => {
                let fqdd = attr(&e, "FQDD")
                    .map_err(|x| at(&reader, x))?
                    .ok_or_else(|| at(&reader, ScpError::new("a <Component> without FQDD")))?;
                stack.push(Component {
                    fqdd,
                    ..Component::default()
                });
            }
            Event::Empty(e) if e.name().as_ref() == "Component" && open.is_none() => {
                let fqdd = attr(&e, "FQDD")
                    .map_err(|x| at(&reader, x))?
                    .ok_or_else(|| at(&reader, ScpError::new("a <Component> without FQDD")))?;
                let c = Component {
                    fqdd,
                    ..Component::default()
                };
                match stack.last_mut() {
                    Some(parent) => parent.components.push(c),
                    None => doc.components.push(c),
                }
            }
            Event::End(e) if e.name().as_ref() == "Component" && open.is_none() => {
                let c = stack
                    .pop()
                    .ok_or_else(|| at(&reader, ScpError::new("</Component> without its <Component>")))?;
                match stack.last_mut() {
                    Some(parent) => parent.components.push(c),
                    None => doc.components.push(c),
                }
            }
            Event::Start(e) if e.name().as_ref() == "Attribute" && open.is_none() && !stack.is_empty() => {
                let name = attr(&e, "Name")
                    .map_err(|x| at(&reader, x))?
                    .ok_or_else(|| at(&reader, ScpError::new("an <Attribute> without Name")))?;
                open = Some(Open {
                    name,
                    value: String::new(),
                });
            }
            Event::Empty(e) if e.name().as_ref() == "Attribute" && open.is_none() && !stack.is_empty() => {
                let name = attr(&e, "Name")
                    .map_err(|x| at(&reader, x))?
                    .ok_or_else(|| at(&reader, ScpError::new("an <Attribute> without Name")))?;
                if let Some(c) = stack.last_mut() {
                    c.attributes.push(ScpAttribute::new(name, ""));
                }
            }
            Event::End(e) if e.name().as_ref() == "Attribute" => {
                let o = open
                    .take()
                    .ok_or_else(|| at(&reader, ScpError::new("</Attribute> without its <Attribute>")))?;
                if let Some(c) = stack.last_mut() {
                    c.attributes.push(ScpAttribute::new(o.name, o.value));
                }
            }
            Event::End(e) if e.name().as_ref() == "SystemConfiguration" && open.is_none() => {
                if let Some(c) = stack.last() {
                    let what = format!("<Component FQDD=\"{}\"> is not closed", c.fqdd);
                    return Err(at(&reader, ScpError::new(what)));
                }
                in_root = false;
                root_closed = true;
            }
            Event::Text(t) => match open.as_mut() {
                Some(o) => o.value.push_str(&t.xml10_content()),
                None if t.xml10_content().trim().is_empty() => {}
                None => {
                    let what = format!("text outside an <Attribute>: {:?}", t.xml10_content().trim());
                    return Err(at(&reader, ScpError::new(what)));
                }
            },
            Event::CData(t) => match open.as_mut() {
                Some(o) => o.value.push_str(&t.xml10_content()),
                None => return Err(at(&reader, ScpError::new("CDATA outside an <Attribute>"))),
            },
            Event::GeneralRef(r) => {
                let text = reference(&r).map_err(|x| at(&reader, x))?;
                match open.as_mut() {
                    Some(o) => o.value.push_str(&text),
                    None => return Err(at(&reader, ScpError::new("a reference outside an <Attribute>"))),
                }
            }
            Event::Comment(t) => {
                let text = t.xml10_content();
                match stack.last_mut() {
                    // Inside a component: an attribute the import skips, or a note.
                    Some(c) => {
                        if let Some(attrs) = commented_attributes(&text) {
                            c.attributes.extend(attrs);
                        }
                    }
                    None if in_root => doc.comments.push(text.trim().to_owned()),
                    None => {}
                }
            }
            Event::Start(e) | Event::Empty(e) => {
                let name = e.name().as_ref().to_owned();
                return Err(at(&reader, ScpError::new(format!("unexpected element <{name}>"))));
            }
            Event::End(e) => {
                let name = e.name().as_ref().to_owned();
                return Err(at(&reader, ScpError::new(format!("unexpected </{name}>"))));
            }
            Event::Eof => break,
        }
    }
    if in_root || !root_closed {
        return Err(ScpError {
            line: Some(line_at(text, text.len() as u64)),
            message: "the <SystemConfiguration> root element is not closed".into(),
        });
    }
    Ok(doc)
}

/// An attribute element, escaped for the document.
fn element(a: &ScpAttribute) -> String {
    format!(
        "<Attribute Name=\"{}\">{}</Attribute>",
        escape(a.name.as_str()),
        escape(a.value.as_str())
    )
}

fn write_component(out: &mut String, c: &Component, depth: usize) {
    let pad = " ".repeat(depth);
    let _ = writeln!(out, "{pad}<Component FQDD=\"{}\">", escape(c.fqdd.as_str()));
    for a in &c.attributes {
        if a.set_on_import {
            let _ = writeln!(out, "{pad} {}", element(a));
        } else {
            // A comment cannot hold "--"; the reference reads back as the same text.
            let _ = writeln!(out, "{pad} <!-- {} -->", element(a).replace("--", "-&#45;"));
        }
    }
    for n in &c.components {
        write_component(out, n, depth + 1);
    }
    let _ = writeln!(out, "{pad}</Component>");
}

/// Writes the XML form, laid out as an export is.
pub(super) fn write(doc: &ScpDocument) -> String {
    let mut out = String::from("<SystemConfiguration");
    for (key, value) in [
        ("Model", &doc.model),
        ("ServiceTag", &doc.service_tag),
        ("TimeStamp", &doc.timestamp),
    ] {
        if let Some(v) = value {
            let _ = write!(out, " {key}=\"{}\"", escape(v.as_str()));
        }
    }
    out.push_str(">\n");
    for c in &doc.comments {
        let _ = writeln!(out, "<!--{}-->", c.replace("--", "- -"));
    }
    for c in &doc.components {
        write_component(&mut out, c, 0);
    }
    out.push_str("</SystemConfiguration>\n");
    out
}
