//! The JSON form of an SCP: `{"SystemConfiguration": {"Comments": [{"Comment": ...}], "Model",
//! "ServiceTag", "TimeStamp", "Components": [{"FQDD", "Attributes": [{"Name", "Value",
//! "Set On Import", "Comment"}]}]}}`, as real iDRAC exports write it (every value a string).

use super::document::{Component, ScpAttribute, ScpDocument, ScpError, value_text};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Serialize, Deserialize)]
struct Root {
    #[serde(rename = "SystemConfiguration")]
    system: System,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct System {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    comments: Vec<CommentEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    service_tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_stamp: Option<String>,
    #[serde(default)]
    components: Vec<JsonComponent>,
}

#[derive(Serialize, Deserialize)]
struct CommentEntry {
    #[serde(rename = "Comment", default)]
    comment: String,
}

#[derive(Serialize, Deserialize)]
struct JsonComponent {
    #[serde(rename = "FQDD")]
    fqdd: String,
    #[serde(rename = "Attributes", default)]
    attributes: Vec<JsonAttribute>,
    #[serde(rename = "Components", default, skip_serializing_if = "Vec::is_empty")]
    components: Vec<JsonComponent>,
}

#[derive(Serialize, Deserialize)]
struct JsonAttribute {
    #[serde(rename = "Name")]
    name: String,
    #[serde(rename = "Value", default)]
    value: Value,
    #[serde(rename = "Set On Import", default, skip_serializing_if = "Option::is_none")]
    set_on_import: Option<Value>,
    #[serde(rename = "Comment", default, skip_serializing_if = "Option::is_none")]
    comment: Option<String>,
}

/// Reads the JSON form; errors name the line and the JSON path.
pub(super) fn parse(text: &str) -> Result<ScpDocument, ScpError> {
    let de = &mut serde_json::Deserializer::from_str(text.trim_start_matches('\u{feff}'));
    let root: Root = serde_path_to_error::deserialize(de).map_err(|e| ScpError {
        line: Some(e.inner().line()),
        message: format!("{} (at {})", e.inner(), e.path()),
    })?;
    let s = root.system;
    Ok(ScpDocument {
        model: s.model,
        service_tag: s.service_tag,
        timestamp: s.time_stamp,
        comments: s.comments.into_iter().map(|c| c.comment).collect(),
        components: s.components.into_iter().map(component).collect(),
    })
}

fn component(c: JsonComponent) -> Component {
    Component {
        fqdd: c.fqdd,
        attributes: c
            .attributes
            .into_iter()
            .map(|a| ScpAttribute {
                name: a.name,
                value: value_text(&a.value),
                // Hand-written profiles often leave it out: an import applies those.
                set_on_import: a.set_on_import.as_ref().is_none_or(|v| match v {
                    Value::Bool(b) => *b,
                    other => !value_text(other).eq_ignore_ascii_case("false"),
                }),
                comment: a.comment,
            })
            .collect(),
        components: c.components.into_iter().map(component).collect(),
    }
}

fn json_component(c: &Component) -> JsonComponent {
    JsonComponent {
        fqdd: c.fqdd.clone(),
        attributes: c
            .attributes
            .iter()
            .map(|a| JsonAttribute {
                name: a.name.clone(),
                value: Value::String(a.value.clone()),
                set_on_import: Some(Value::String(if a.set_on_import { "True" } else { "False" }.to_owned())),
                comment: a.comment.clone(),
            })
            .collect(),
        components: c.components.iter().map(json_component).collect(),
    }
}

/// Writes the JSON form, indented as an export is.
pub(super) fn write(doc: &ScpDocument) -> String {
    let root = Root {
        system: System {
            comments: doc
                .comments
                .iter()
                .map(|c| CommentEntry { comment: c.clone() })
                .collect(),
            model: doc.model.clone(),
            service_tag: doc.service_tag.clone(),
            time_stamp: doc.timestamp.clone(),
            components: doc.components.iter().map(json_component).collect(),
        },
    };
    let mut text = serde_json::to_string_pretty(&root).unwrap_or_default();
    text.push('\n');
    text
}
