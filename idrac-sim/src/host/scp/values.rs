//! SCP text values and attribute values: an SCP carries every value as text, the registry types
//! each attribute.

use redfish_client::oem::dell::scp::value_text;
use redfish_client::resources::attribute_registry::AttributeType;
use redfish_client::resources::bios::AttributeValue;

/// An SCP text value as the registry types the attribute.
pub(crate) fn typed(kind: AttributeType, text: &str) -> AttributeValue {
    match kind {
        AttributeType::Integer => text
            .trim()
            .parse::<i64>()
            .map_or_else(|_| AttributeValue::from(text), AttributeValue::from),
        AttributeType::Boolean if text.eq_ignore_ascii_case("true") => AttributeValue::Bool(true),
        AttributeType::Boolean if text.eq_ignore_ascii_case("false") => AttributeValue::Bool(false),
        _ => AttributeValue::from(text),
    }
}

/// A current value as SCP text.
pub(crate) fn text_of(v: &AttributeValue) -> String {
    value_text(&v.to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scp_values_take_the_registry_type() {
        assert_eq!(typed(AttributeType::Integer, "42"), AttributeValue::from(42));
        assert_eq!(typed(AttributeType::Integer, "x"), AttributeValue::from("x"));
        assert_eq!(typed(AttributeType::Enumeration, "1"), AttributeValue::from("1"));
        assert_eq!(typed(AttributeType::Boolean, "True"), AttributeValue::Bool(true));
    }
}
