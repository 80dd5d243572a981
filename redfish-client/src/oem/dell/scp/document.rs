//! The SCP document model both formats read into and write from: its formats, the document,
//! its components (nested for storage) and attributes, and the error of a document that could
//! not be read.

use super::names::ComponentKind;
use serde_json::Value;

/// The two formats of an SCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// `{"SystemConfiguration": {...}}`.
    Json,
    /// `<SystemConfiguration ...>...</SystemConfiguration>`.
    Xml,
}

impl Format {
    /// As `ExportFormat` spells it: `JSON`, `XML`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Json => "JSON",
            Self::Xml => "XML",
        }
    }

    /// The file extension: `json`, `xml`.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Xml => "xml",
        }
    }

    /// The format `text` is in, by its first character that is not whitespace (or a byte
    /// order mark): `{` is JSON, `<` is XML.
    pub fn of(text: &str) -> Option<Self> {
        match text
            .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
            .chars()
            .next()
        {
            Some('{') => Some(Self::Json),
            Some('<') => Some(Self::Xml),
            _ => None,
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "json" => Ok(Self::Json),
            "xml" => Ok(Self::Xml),
            other => Err(format!("{other:?} is not an SCP format: give json or xml")),
        }
    }
}

/// One SCP document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScpDocument {
    /// `Model`, e.g. `PowerEdge R7625`.
    pub model: Option<String>,
    /// `ServiceTag`.
    pub service_tag: Option<String>,
    /// `TimeStamp`, as the iDRAC writes it (`Wed Feb  3 06:53:31 2021`).
    pub timestamp: Option<String>,
    /// The document's comments (`Export type is Normal,JSON,Selective`, ...).
    pub comments: Vec<String>,
    /// The components, in document order.
    pub components: Vec<Component>,
}

/// One component (`FQDD`), with its attributes and nested components (storage: disks in
/// enclosures in controllers).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Component {
    /// `BIOS.Setup.1-1`, `iDRAC.Embedded.1`, `NIC.Slot.3-1-1`, ...
    pub fqdd: String,
    /// Attributes, in document order (a name may repeat: `IncludedPhysicalDiskID`).
    pub attributes: Vec<ScpAttribute>,
    /// Nested components.
    pub components: Vec<Component>,
}

/// One attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScpAttribute {
    /// The SCP name: `LogicalProc`, `ServerPwr.1#PowerCapSetting`, `HWC_1_2#Alert#SNMP`.
    pub name: String,
    /// The value, as text (SCP values are strings, integers too).
    pub value: String,
    /// Whether an import applies it (`Set On Import`; in XML, not commented out).
    pub set_on_import: bool,
    /// The JSON export's `Comment` (`Read and Write`, `Read Only`, `Always Read Only`); XML has
    /// no place for it.
    pub comment: Option<String>,
}

impl ScpAttribute {
    /// An attribute an import applies, without a comment.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
            set_on_import: true,
            comment: None,
        }
    }

    /// Whether the export says the attribute cannot be written (`Read Only`, `Always Read
    /// Only`).
    pub fn read_only(&self) -> bool {
        self.comment
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().contains("read only"))
    }
}

impl Component {
    /// What the component configures, by its FQDD.
    pub fn kind(&self) -> ComponentKind {
        ComponentKind::of(&self.fqdd)
    }

    /// Every attribute of this component and of those nested in it, with the FQDD it is under.
    pub fn all_attributes(&self) -> Vec<(&str, &ScpAttribute)> {
        let mut out: Vec<(&str, &ScpAttribute)> = self.attributes.iter().map(|a| (self.fqdd.as_str(), a)).collect();
        for c in &self.components {
            out.extend(c.all_attributes());
        }
        out
    }
}

/// A document that could not be read, with the line where that is known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ScpError {
    /// What is wrong.
    pub message: String,
    /// The line, where the parser says.
    pub line: Option<usize>,
}

impl ScpError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            line: None,
        }
    }
}

impl ScpDocument {
    /// The top-level or nested component `fqdd`.
    pub fn component(&self, fqdd: &str) -> Option<&Component> {
        fn find<'a>(list: &'a [Component], fqdd: &str) -> Option<&'a Component> {
            list.iter()
                .find_map(|c| (c.fqdd == fqdd).then_some(c).or_else(|| find(&c.components, fqdd)))
        }
        find(&self.components, fqdd)
    }

    /// Every attribute with the FQDD of the component it is in, nested ones included.
    pub fn all_attributes(&self) -> Vec<(&str, &ScpAttribute)> {
        self.components.iter().flat_map(Component::all_attributes).collect()
    }

    /// Every attribute's value, in place: `f(fqdd, attribute)`.
    pub fn for_each_attribute_mut(&mut self, f: &mut impl FnMut(&str, &mut ScpAttribute)) {
        fn walk(c: &mut Component, f: &mut impl FnMut(&str, &mut ScpAttribute)) {
            for a in &mut c.attributes {
                f(&c.fqdd, a);
            }
            for n in &mut c.components {
                walk(n, f);
            }
        }
        for c in &mut self.components {
            walk(c, f);
        }
    }
}

/// An attribute value as SCP text: strings as they are, numbers and booleans as written,
/// `null` empty.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        other => other.to_string(),
    }
}
