//! Server Configuration Profiles (SCP): the document an iDRAC exports and imports through its
//! `OemManager` actions, as one model read from and written to both of its formats (JSON and
//! XML), the mapping of its attribute names onto the names `DellAttributes` and the BIOS use,
//! and the task an export, preview or import runs as. IO-free except `client` (the actions).
//!
//! The shapes follow real exports: a JSON export's every `Value` is a string and an attribute
//! the import would skip says `"Set On Import": "False"`; an XML export writes such an attribute
//! as a comment (`<!-- <Attribute Name="X">v</Attribute> -->`) and nests storage components.

#[cfg(feature = "client")]
mod client;
mod document;
mod json;
mod names;
pub mod task;
mod xml;

#[cfg(feature = "client")]
pub use client::{Actions, Polled, get_actions, poll, start};
pub use document::{Component, Format, ScpAttribute, ScpDocument, ScpError, value_text};
pub use names::{BIOS_FQDD, ComponentKind, attribute_name, scp_name};

/// The `ShareParameters.Target` values a real Manager lists for export and import, in the
/// iDRAC's spelling (R750, iDRAC 6.00 and 7.10).
pub const TARGETS: [&str; 13] = [
    "ALL",
    "IDRAC",
    "BIOS",
    "NIC",
    "RAID",
    "FC",
    "InfiniBand",
    "SupportAssist",
    "EventFilters",
    "System",
    "LifecycleController",
    "AHCI",
    "PCIeSSD",
];

impl ScpDocument {
    /// Reads an SCP in either format (told apart by its first character).
    pub fn parse(text: &str) -> Result<(Self, Format), ScpError> {
        match Format::of(text) {
            Some(Format::Json) => json::parse(text).map(|d| (d, Format::Json)),
            Some(Format::Xml) => xml::parse(text).map(|d| (d, Format::Xml)),
            None => Err(ScpError::new(
                "not a Server Configuration Profile: the text is neither JSON nor XML",
            )),
        }
    }

    /// The document in `format`, as an iDRAC writes it.
    pub fn to_text(&self, format: Format) -> String {
        match format {
            Format::Json => json::write(self),
            Format::Xml => xml::write(self),
        }
    }
}

#[cfg(test)]
mod tests;
