//! Vendor extensions. Resources keep `Oem` as a raw JSON map; vendor modules decode their own
//! entry. Generic code never imports a vendor module.

use serde_json::{Map, Value};

#[cfg(feature = "dell")]
pub mod dell;
#[cfg(feature = "hpe")]
pub mod hpe;

/// The entry for `vendor` in an `Oem` map (e.g. `"Dell"`), if present.
pub fn vendor_section<'a>(oem: Option<&'a Map<String, Value>>, vendor: &str) -> Option<&'a Value> {
    oem?.get(vendor)
}
