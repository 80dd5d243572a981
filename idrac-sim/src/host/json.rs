//! Setting a value deep in a recorded JSON document, whatever shape the document has.

use serde_json::Value;

/// Sets `value` at `path` in a recorded document, creating objects for missing or null steps.
/// A step that is some other JSON (a tree of an unexpected shape) leaves the document as it is:
/// data from a file must never panic the emulator.
pub(crate) fn set(doc: &mut Value, path: &[&str], value: Value) {
    let Some((last, steps)) = path.split_last() else { return };
    let mut at = doc;
    for step in steps {
        if at.is_null() {
            *at = Value::Object(serde_json::Map::new());
        }
        let Some(next) = at.as_object_mut().map(|o| o.entry(*step).or_insert(Value::Null)) else {
            return;
        };
        at = next;
    }
    if at.is_null() {
        *at = Value::Object(serde_json::Map::new());
    }
    if let Some(o) = at.as_object_mut() {
        o.insert((*last).to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents_of_an_unexpected_shape_are_left_alone_not_panicked_on() {
        let mut doc = json!({"PowerWatts": "n/a", "Oem": null});
        set(&mut doc, &["PowerWatts", "Reading"], json!(5));
        set(&mut doc, &["Oem", "Dell", "ServiceTag"], json!("T"));
        assert_eq!(doc, json!({"PowerWatts": "n/a", "Oem": {"Dell": {"ServiceTag": "T"}}}));
        let mut list = json!([1, 2]);
        set(&mut list, &["Attributes"], json!({}));
        assert_eq!(list, json!([1, 2]));
    }
}
