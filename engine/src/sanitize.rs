//! Scrubbing identifiers out of captured Redfish documents, so a capture of real hardware can
//! be shared as a test fixture: service tags, serial numbers, asset tags, MAC and IP addresses,
//! UUIDs, host names and user names are replaced by placeholders, and so are what an HPE iLO
//! adds: the MACs and NVMe EUI-64s inside UEFI device paths (`MAC(B47AF1C0FFEE,0x1)`), the
//! BIOS's contact fields (`AdminName`, `ServiceEmail`, ...), boot URLs, and the manager's
//! license key.
//!
//! Replacement is consistent (one original, one placeholder, in every document and inside
//! longer strings) and idempotent: placeholders and documentation addresses (RFC 5737, RFC 3849,
//! RFC 7042) are left as they are, so sanitizing a sanitized tree changes nothing. That is what lets `capture → sim --fixture → capture` reproduce a tree.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::Ipv6Addr;

/// What kind of identifier was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdentifierKind {
    /// A Dell service tag (`SystemServiceTag`, `SKU`, `ServiceTag`, registry `SystemId`).
    ServiceTag,
    /// A serial number or Dell express service code.
    Serial,
    /// An asset tag.
    AssetTag,
    /// A MAC address (also bare, as a UEFI device path's `MAC(…)` node holds it), or an
    /// EUI-64 (an NVMe namespace's, in a device path's `NVMe(…)` node).
    Mac,
    /// An IPv4 address.
    Ipv4,
    /// An IPv6 address.
    Ipv6,
    /// A UUID or GUID.
    Uuid,
    /// A host or domain name.
    HostName,
    /// A user account name.
    UserName,
    /// Who runs or services the machine, as typed into the BIOS (HPE's `AdminName`,
    /// `AdminEmail`, `ServicePhone`, `ServerOtherInfo`, `CustomPostMessage`, ...).
    Contact,
    /// A URL a site points its machines at (HPE's `UrlBootFile`, `IpxeStartupUrl`, the pre-boot
    /// proxy): its host names the site.
    Url,
    /// A license or activation key (iLO's `Oem.Hpe.License.LicenseKey`, shown with its last
    /// group in clear).
    LicenseKey,
    /// A BIOS password's hash or salt (`SHA256SetupPassword`, ...), which real iDRACs list in
    /// `GET Bios`: removed, never replaced.
    PasswordHash,
}

impl IdentifierKind {
    /// The name used in `capture.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ServiceTag => "service_tag",
            Self::Serial => "serial_number",
            Self::AssetTag => "asset_tag",
            Self::Mac => "mac_address",
            Self::Ipv4 => "ipv4_address",
            Self::Ipv6 => "ipv6_address",
            Self::Uuid => "uuid",
            Self::HostName => "host_name",
            Self::UserName => "user_name",
            Self::Contact => "contact",
            Self::Url => "url",
            Self::LicenseKey => "license_key",
            Self::PasswordHash => "password_hash",
        }
    }
}

/// Replaces identifiers in documents, remembering every replacement.
#[derive(Debug, Default)]
pub struct Sanitizer {
    mapping: HashMap<(IdentifierKind, String), String>,
    counts: BTreeMap<IdentifierKind, usize>,
    fields: BTreeMap<IdentifierKind, BTreeSet<String>>,
}

/// What one kind of replacement amounted to, for `capture.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// The kind.
    pub kind: IdentifierKind,
    /// How many distinct originals were replaced.
    pub distinct: usize,
    /// The property names (JSON keys) where they were found.
    pub fields: Vec<String>,
}

impl Sanitizer {
    /// Sanitizes one document in place.
    pub fn document(&mut self, doc: &mut Value) {
        self.walk(doc, "");
    }

    /// After every document went through [`Sanitizer::document`]: replaces the originals seen
    /// anywhere else in `doc` (inside descriptions, names, other fields) with their
    /// placeholders.
    pub fn residue(&self, doc: &mut Value) {
        let mut pairs: Vec<(&str, &str)> = self
            .mapping
            .iter()
            .filter(|((kind, original), _)| {
                original.len() >= 4 && !matches!(kind, IdentifierKind::Ipv4 | IdentifierKind::Ipv6)
            })
            .map(|((_, original), placeholder)| (original.as_str(), placeholder.as_str()))
            .collect();
        // Longest first, so a host name is replaced before a shorter tag inside it.
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(b.0)));
        replace_strings(doc, &|s: &str| replace_all(s, &pairs));
    }

    /// What was replaced, by kind.
    pub fn replaced(&self) -> Vec<Replaced> {
        self.counts
            .iter()
            .map(|(kind, distinct)| Replaced {
                kind: *kind,
                distinct: *distinct,
                fields: self.fields.get(kind).into_iter().flatten().cloned().collect(),
            })
            .collect()
    }

    fn walk(&mut self, value: &mut Value, key: &str) {
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    self.walk(v, k);
                }
            }
            Value::Array(items) => {
                for v in items {
                    self.walk(v, key);
                }
            }
            Value::String(s) => {
                if let Some(new) = self.string(key, s) {
                    *s = new;
                }
            }
            _ => {}
        }
    }

    /// The sanitized form of string `s` found under `key`, when it changes.
    fn string(&mut self, key: &str, s: &str) -> Option<String> {
        if s.is_empty() || key.starts_with("@odata") {
            return None;
        }
        if crate::backend::is_secret_bios_attribute(key) {
            return self.replace(IdentifierKind::PasswordHash, key, s);
        }
        if let Some(kind) = kind_of_field(key, s) {
            return if says_nothing(s) {
                None
            } else {
                self.replace(kind, key, s)
            };
        }
        // Addresses and UUIDs wherever they appear, except in version numbers.
        let lower = key.to_ascii_lowercase();
        let versionish = ["version", "firmware", "revision", "build"]
            .iter()
            .any(|w| lower.contains(w));
        let mut changed = false;
        let mut out = String::with_capacity(s.len());
        let mut at = 0;
        for token in tokens(s) {
            let before = &s[..at];
            at += match token {
                Token::Other(t) | Token::Candidate(t) => t.len(),
            };
            let replacement = match token {
                Token::Other(t) => t.to_owned(),
                Token::Candidate(t) if t.contains('.') && t.contains(':') && !versionish => {
                    // An IPv4 address with a port (`192.168.1.5:443`): each part on its own.
                    let parts: Vec<String> = t
                        .split(':')
                        .map(|part| {
                            if is_ipv4(part)
                                && let Some(r) = self.replace(IdentifierKind::Ipv4, key, part)
                            {
                                changed = true;
                                return r;
                            }
                            part.to_owned()
                        })
                        .collect();
                    parts.join(":")
                }
                Token::Candidate(t) => {
                    let kind = if is_mac(t) || is_eui64(t) || (is_bare_mac(t) && names_a_mac(before)) {
                        Some(IdentifierKind::Mac)
                    } else if is_uuid(t) {
                        Some(IdentifierKind::Uuid)
                    } else if !versionish && is_ipv4(t) {
                        Some(IdentifierKind::Ipv4)
                    } else if (lower.contains("ipv6") || lower.contains("address")) && t.parse::<Ipv6Addr>().is_ok() {
                        Some(IdentifierKind::Ipv6)
                    } else {
                        None
                    };
                    match kind.and_then(|k| self.replace(k, key, t)) {
                        Some(r) => {
                            changed = true;
                            r
                        }
                        None => t.to_owned(),
                    }
                }
            };
            out.push_str(&replacement);
        }
        changed.then_some(out)
    }

    fn replace(&mut self, kind: IdentifierKind, key: &str, original: &str) -> Option<String> {
        if is_placeholder(kind, original) {
            return None;
        }
        let entry = (kind, original.to_owned());
        let placeholder = if let Some(p) = self.mapping.get(&entry) {
            p.clone()
        } else {
            let n = self.counts.entry(kind).or_default();
            *n += 1;
            let p = placeholder(kind, *n, original);
            self.mapping.insert(entry, p.clone());
            p
        };
        self.fields.entry(kind).or_default().insert(key.to_owned());
        Some(placeholder)
    }
}

/// The kind of identifier a property holds by its name, for those recognised by name.
fn kind_of_field(key: &str, value: &str) -> Option<IdentifierKind> {
    let k = key.to_ascii_lowercase();
    let last = k.rsplit('.').next().unwrap_or(&k);
    if last.contains("servicetag") || last == "nodeid" {
        return Some(IdentifierKind::ServiceTag);
    }
    // An HPE registry's `SystemId` is the ROM family (`A42`), the same on every machine of it.
    if last == "systemid" && !is_rom_family(value) {
        return Some(IdentifierKind::ServiceTag);
    }
    if last == "sku" && value.len() == 7 && value.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Some(IdentifierKind::ServiceTag);
    }
    if last.contains("serialnumber") || last == "serial" || last == "expressservicecode" {
        return Some(IdentifierKind::Serial);
    }
    // Not HPE's `AssetTagProtection` (Locked, Unlocked), a setting about the tag.
    if last.ends_with("assettag") {
        return Some(IdentifierKind::AssetTag);
    }
    // iLO: `ServerFQDN`, the BIOS's and the root's `ServerName`, the certificate's
    // `CertCommonName` (`ILO` and the serial number by default).
    if last.contains("hostname")
        || last.contains("dnsracname")
        || last.contains("domainname")
        || last.ends_with("fqdn")
        || last == "servername"
        || last == "certcommonname"
    {
        return Some(IdentifierKind::HostName);
    }
    const CONTACT: [&str; 10] = [
        "adminname",
        "adminemail",
        "adminphone",
        "adminotherinfo",
        "servicename",
        "serviceemail",
        "servicephone",
        "serviceotherinfo",
        "serverotherinfo",
        "custompostmessage",
    ];
    if CONTACT.contains(&last) {
        return Some(IdentifierKind::Contact);
    }
    if last.ends_with("url") || last.starts_with("urlbootfile") || last == "prebootnetworkproxy" {
        return Some(IdentifierKind::Url);
    }
    if last == "licensekey" || last == "activationkey" {
        return Some(IdentifierKind::LicenseKey);
    }
    if last.ends_with("username") || last == "user" {
        return (value != "root").then_some(IdentifierKind::UserName);
    }
    None
}

/// Whether a field's value is the firmware's word for "none" rather than a value (a ProLiant's
/// processors record `AssetTag` "Unknown"): replacing it would mark nothing, and the residue
/// pass would then replace that word wherever it appears (a DIMM's `PartNumber` "Unknown").
fn says_nothing(value: &str) -> bool {
    const NOTHING: [&str; 10] = [
        "unknown",
        "none",
        "n/a",
        "na",
        "not specified",
        "not available",
        "notavailable",
        "not applicable",
        "default string",
        "to be filled by o.e.m.",
    ];
    let v = value.trim();
    v.is_empty() || NOTHING.iter().any(|n| v.eq_ignore_ascii_case(n))
}

/// Whether `value` is already a placeholder or a documentation value that needs no scrubbing.
fn is_placeholder(kind: IdentifierKind, value: &str) -> bool {
    let digits_after = |prefix: &str| {
        value
            .strip_prefix(prefix)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    };
    match kind {
        IdentifierKind::ServiceTag => digits_after("SVC"),
        IdentifierKind::Serial => digits_after("SN"),
        IdentifierKind::AssetTag => digits_after("asset-"),
        IdentifierKind::UserName => digits_after("user-"),
        IdentifierKind::Contact => digits_after("contact-"),
        IdentifierKind::LicenseKey => digits_after("license-"),
        IdentifierKind::Url => value
            .strip_prefix("http://host-")
            .and_then(|r| r.strip_suffix(".example.invalid/"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        IdentifierKind::HostName => {
            // The documentation domain itself is no one's (`DNSDomainName = example.invalid`).
            value == "localhost"
                || value == "example.invalid"
                || value
                    .strip_prefix("host-")
                    .and_then(|r| r.strip_suffix(".example.invalid"))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        }
        IdentifierKind::Mac => {
            // Compared without separators: `00:00:5E:00:53:01`, `00-00-5e-00-53-01` and a device
            // path's `00005E005301` are one documentation address (RFC 7042), as is the
            // documentation EUI-64 `00-00-5E-EF-10-00-00-01`.
            let hex: String = value
                .chars()
                .filter(char::is_ascii_hexdigit)
                .map(|c| c.to_ascii_uppercase())
                .collect();
            hex.starts_with("00005E0053")
                || hex.starts_with("00005EEF10")
                || (hex.len() == 12 && hex.starts_with("02000000"))
                || hex.bytes().all(|b| b == b'0')
        }
        IdentifierKind::Uuid => {
            value.starts_with("00000000-0000-4000-8000-") || value.bytes().all(|b| b == b'0' || b == b'-')
        }
        IdentifierKind::Ipv4 => {
            let keep = ["192.0.2.", "198.51.100.", "203.0.113.", "127.", "255.", "0.0.0.0"];
            keep.iter().any(|p| value.starts_with(p))
        }
        IdentifierKind::Ipv6 => {
            let lower = value.to_ascii_lowercase();
            lower.starts_with("2001:db8:") || lower == "::" || lower == "::1"
        }
        IdentifierKind::PasswordHash => value.is_empty(),
    }
}

fn placeholder(kind: IdentifierKind, n: usize, original: &str) -> String {
    match kind {
        IdentifierKind::ServiceTag => format!("SVC{n:04}"),
        IdentifierKind::Serial => format!("SN{n:08}"),
        IdentifierKind::AssetTag => format!("asset-{n}"),
        IdentifierKind::UserName => format!("user-{n}"),
        IdentifierKind::Contact => format!("contact-{n}"),
        IdentifierKind::LicenseKey => format!("license-{n}"),
        IdentifierKind::Url => format!("http://host-{n}.example.invalid/"),
        IdentifierKind::HostName => format!("host-{n}.example.invalid"),
        IdentifierKind::Mac => {
            // In the original's shape: its separator (none in a device path), its case, and
            // eight groups for an EUI-64 (RFC 7042's documentation range 00-00-5E-EF-10-…).
            let sep = if original.contains('-') {
                "-"
            } else if original.contains(':') {
                ":"
            } else {
                ""
            };
            let text = if original.chars().filter(char::is_ascii_hexdigit).count() == 16 {
                format!(
                    "00:00:5E:EF:10:{:02X}:{:02X}:{:02X}",
                    (n >> 16) & 0xff,
                    (n >> 8) & 0xff,
                    n & 0xff
                )
            } else if n < 256 {
                format!("00:00:5E:00:53:{n:02X}")
            } else {
                format!("02:00:00:00:{:02X}:{:02X}", (n >> 8) & 0xff, n & 0xff)
            };
            let text = text.replace(':', sep);
            if original.chars().any(|c| c.is_ascii_lowercase()) {
                text.to_ascii_lowercase()
            } else {
                text
            }
        }
        IdentifierKind::Ipv4 => match n {
            1..=254 => format!("192.0.2.{n}"),
            255..=508 => format!("198.51.100.{}", n - 254),
            _ => format!("203.0.113.{}", (n - 508) % 254 + 1),
        },
        IdentifierKind::Ipv6 => format!("2001:db8::{n:x}"),
        IdentifierKind::Uuid => format!("00000000-0000-4000-8000-{n:012}"),
        IdentifierKind::PasswordHash => String::new(),
    }
}

enum Token<'a> {
    Candidate(&'a str),
    Other(&'a str),
}

/// Splits `s` into runs that could be an address or UUID (hex digits, `:`, `.`, `-`) and the
/// rest.
fn tokens(s: &str) -> Vec<Token<'_>> {
    let candidate = |c: char| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | '-');
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_candidate = None;
    for (i, c) in s.char_indices() {
        let is = candidate(c);
        match in_candidate {
            None => in_candidate = Some(is),
            Some(prev) if prev != is => {
                out.push(if prev {
                    Token::Candidate(&s[start..i])
                } else {
                    Token::Other(&s[start..i])
                });
                start = i;
                in_candidate = Some(is);
            }
            _ => {}
        }
    }
    if let Some(prev) = in_candidate {
        out.push(if prev {
            Token::Candidate(&s[start..])
        } else {
            Token::Other(&s[start..])
        });
    }
    out
}

fn is_mac(t: &str) -> bool {
    let parts: Vec<&str> = t.split([':', '-']).collect();
    let sep_ok = !(t.contains(':') && t.contains('-'));
    sep_ok
        && parts.len() == 6
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// An EUI-64 written as eight groups of two hex digits (`D5-2E-01-21-9A-38-25-00`, an NVMe
/// namespace's in a UEFI device path).
fn is_eui64(t: &str) -> bool {
    let parts: Vec<&str> = t.split([':', '-']).collect();
    !(t.contains(':') && t.contains('-'))
        && parts.len() == 8
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Twelve hex digits: a MAC without separators, when [`names_a_mac`] says so.
fn is_bare_mac(t: &str) -> bool {
    t.len() == 12 && t.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether the text before a token opens a UEFI device path's MAC node (`…/MAC(`), which holds
/// the address without separators.
fn names_a_mac(before: &str) -> bool {
    before
        .len()
        .checked_sub(4)
        .and_then(|i| before.get(i..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case("mac("))
}

/// An HPE ROM family (`A42`, `U46`): a letter and two digits.
fn is_rom_family(value: &str) -> bool {
    matches!(value.as_bytes(), [letter, d1, d2] if letter.is_ascii_alphabetic() && d1.is_ascii_digit() && d2.is_ascii_digit())
}

fn is_uuid(t: &str) -> bool {
    let parts: Vec<&str> = t.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_ipv4(t: &str) -> bool {
    let parts: Vec<&str> = t.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// `haystack` with every ASCII-case-insensitive occurrence of an original replaced by its
/// placeholder, in one pass (a placeholder is never searched again), longest original first at
/// each position. An occurrence written in lower case gets the placeholder in lower case
/// (`r7625a1.example.invalid` → `svc0001.example.invalid`).
fn replace_all(haystack: &str, pairs: &[(&str, &str)]) -> String {
    let lower = haystack.to_ascii_lowercase();
    let lowered: Vec<(String, &str, &str)> = pairs
        .iter()
        .filter(|(o, _)| !o.is_empty())
        .map(|(o, p)| (o.to_ascii_lowercase(), *o, *p))
        .filter(|(l, _, _)| lower.contains(l.as_str()))
        .collect();
    if lowered.is_empty() {
        return haystack.to_owned();
    }
    let mut out = String::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        let hit = lowered.iter().find(|(l, _, _)| lower[i..].starts_with(l.as_str()));
        match hit {
            Some((l, original, placeholder)) => {
                let occurrence = &haystack[i..i + l.len()];
                let all_lower = occurrence.chars().all(|c| !c.is_ascii_uppercase());
                if all_lower && occurrence != *original {
                    out.push_str(&placeholder.to_ascii_lowercase());
                } else {
                    out.push_str(placeholder);
                }
                i += l.len();
            }
            None => {
                let c = haystack[i..].chars().next().unwrap_or_default();
                out.push(c);
                i += c.len_utf8().max(1);
            }
        }
    }
    out
}

fn replace_strings(value: &mut Value, f: &dyn Fn(&str) -> String) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if !k.starts_with("@odata") {
                    replace_strings(v, f);
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                replace_strings(v, f);
            }
        }
        Value::String(s) => {
            let new = f(s);
            if new != *s {
                *s = new;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "@odata.id": "/redfish/v1/Systems/System.Embedded.1",
            "SKU": "TST4T4G",
            "SerialNumber": "CN7016319N0123",
            "AssetTag": "rack12-slot4",
            "UUID": "4c4c4544-0035-3410-8050-c6c04f314733",
            "HostName": "db07.corp.acme.com",
            "BiosVersion": "1.8.2",
            "Description": "db07.corp.acme.com, service tag TST4T4G",
            "Oem": {"Dell": {"DellSystem": {"ChassisServiceTag": "TST4T4G", "NodeID": "TST4T4G",
                                            "ExpressServiceCode": "33102857187"}}},
            "EthernetInterfaces": [{"MACAddress": "B0:7B:25:DE:1A:2C", "IPv4Addresses": [{"Address": "10.1.2.3",
                                    "SubnetMask": "255.255.255.0", "Gateway": "10.1.2.1"}],
                                    "IPv6Addresses": [{"Address": "fe80::b27b:25ff:fede:1a2c"}]}],
            "Attributes": {"Users.3.UserName": "opsadmin", "Users.2.UserName": "root",
                           "NIC.1.DNSRacName": "idrac-db07", "Info.1.Version": "7.10.30.00",
                           "IPv4.1.Address": "10.1.2.50", "NIC.1.MACAddress": "b0-7b-25-de-1a-2d"},
            "FirmwareVersion": "7.10.30.00"
        })
    }

    #[test]
    fn every_identifier_is_replaced_consistently_and_versions_are_kept() {
        let mut s = Sanitizer::default();
        let mut doc = sample();
        s.document(&mut doc);
        s.residue(&mut doc);
        let text = doc.to_string();
        for original in [
            "TST4T4G",
            "CN7016319N0123",
            "rack12-slot4",
            "4c4c4544",
            "db07",
            "acme",
            "B0:7B:25",
            "b0-7b-25",
            "10.1.2",
            "fe80::b27b",
            "opsadmin",
            "33102857187",
        ] {
            assert!(!text.contains(original), "{original} survived: {text}");
        }
        assert_eq!(doc["SKU"], "SVC0001");
        assert_eq!(
            doc["Oem"]["Dell"]["DellSystem"]["ChassisServiceTag"], "SVC0001",
            "consistent"
        );
        assert_eq!(
            doc["Description"].as_str().unwrap(),
            format!("{}, service tag SVC0001", doc["HostName"].as_str().unwrap()),
            "originals inside other strings"
        );
        assert!(doc["HostName"].as_str().unwrap().ends_with(".example.invalid"));
        assert_eq!(
            doc["Attributes"]["Users.2.UserName"], "root",
            "the factory account stays"
        );
        assert_eq!(doc["Attributes"]["Info.1.Version"], "7.10.30.00");
        assert_eq!(doc["FirmwareVersion"], "7.10.30.00");
        assert_eq!(doc["BiosVersion"], "1.8.2");
        assert_eq!(
            doc["EthernetInterfaces"][0]["IPv4Addresses"][0]["SubnetMask"],
            "255.255.255.0"
        );
        let mac = doc["Attributes"]["NIC.1.MACAddress"].as_str().unwrap();
        assert!(mac.starts_with("00-00-5e-00-53-"), "format kept: {mac}");
        assert_eq!(doc["@odata.id"], "/redfish/v1/Systems/System.Embedded.1");
        let kinds: Vec<&str> = s.replaced().iter().map(|r| r.kind.as_str()).collect();
        assert!(kinds.contains(&"service_tag") && kinds.contains(&"mac_address") && kinds.contains(&"user_name"));
        let tags = s
            .replaced()
            .into_iter()
            .find(|r| r.kind == IdentifierKind::ServiceTag)
            .unwrap();
        assert_eq!(tags.distinct, 1);
        assert!(tags.fields.contains(&"SKU".to_owned()) && tags.fields.contains(&"NodeID".to_owned()));
    }

    /// A real R750's `GET Bios` (iDRAC 6.00 capture) lists a setup password's SHA-256 hash and
    /// salt in clear: a capture keeps neither, anywhere.
    #[test]
    fn a_password_hash_and_its_salt_are_removed_from_a_capture() {
        let hash = "19D2C4E0A77A4C4BF4DC0D2C3B3F0E9A8D4A5D0C8E7F6A5B4C3D2E1F0A9B2812";
        let mut bios = serde_json::json!({"Attributes": {
            "SHA256SetupPassword": hash, "SHA256SetupPasswordSalt": "4EB3B565", "SetupPassword": null,
            "PasswordStatus": "Unlocked", "SHA256SystemPassword": ""}});
        let mut other = serde_json::json!({"Description": format!("hash {hash} seen")});
        let mut s = Sanitizer::default();
        s.document(&mut bios);
        s.residue(&mut other);
        assert_eq!(bios["Attributes"]["SHA256SetupPassword"], "");
        assert_eq!(bios["Attributes"]["SHA256SetupPasswordSalt"], "");
        assert_eq!(bios["Attributes"]["PasswordStatus"], "Unlocked");
        assert!(!other.to_string().contains(hash), "{other}");
        let kinds: Vec<&str> = s.replaced().iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["password_hash"]);
    }

    #[test]
    fn sanitizing_twice_changes_nothing() {
        let mut once = sample();
        let mut s = Sanitizer::default();
        s.document(&mut once);
        s.residue(&mut once);
        let mut twice = once.clone();
        let mut again = Sanitizer::default();
        again.document(&mut twice);
        again.residue(&mut twice);
        assert_eq!(once, twice);
        assert!(again.replaced().is_empty());
    }

    #[test]
    fn a_service_tag_inside_other_text_is_replaced_whatever_its_case() {
        let mut s = Sanitizer::default();
        let mut docs = [
            json!({"SKU": "R7625A1"}),
            json!({"Description": "Server r7625a1 in rack 4"}),
        ];
        for d in &mut docs {
            s.document(d);
        }
        for d in &mut docs {
            s.residue(d);
        }
        assert_eq!(docs[1]["Description"], "Server svc0001 in rack 4");
    }

    #[test]
    fn a_placeholder_is_never_searched_again() {
        let mut s = Sanitizer::default();
        let mut docs = [
            json!({"NIC.1.DNSRacName": "idrac-db07", "NIC.1.DNSDomainName": "corp.acme.com"}),
            json!({"HostName": "db07.corp.acme.com", "Note": "idrac-db07.corp.acme.com"}),
        ];
        for d in &mut docs {
            s.document(d);
        }
        for d in &mut docs {
            s.residue(d);
        }
        let host = docs[1]["HostName"].as_str().unwrap();
        assert_eq!(host.matches("example.invalid").count(), 1, "{host}");
        let note = docs[1]["Note"].as_str().unwrap();
        assert!(!note.contains("acme") && !note.contains("db07"), "{note}");
    }

    /// What an iLO 5 tree holds that tells its machine, its site or its owner, in the shapes a
    /// recorded DL385 Gen10 Plus v2 shows them (the values are made up): none survives, the ROM
    /// family and part numbers stay, and a second pass changes nothing.
    #[test]
    fn an_ilos_identifiers_are_replaced_and_its_rom_family_kept() {
        let serial = "CZJ2041XYZ";
        let mut docs = [
            json!({"@odata.id": "/redfish/v1", "UUID": "9b1e7c2a-3f4d-5e6f-8a9b-0c1d2e3f4a5b",
                "Oem": {"Hpe": {"Manager": [{"ManagerType": "iLO 5", "HostName": "ILOCZJ2041XYZ",
                                             "FQDN": "ilo-r7u12.dc1.acme.com"}],
                                "Sessions": {"CertCommonName": "ilo-r7u12.dc1.acme.com", "ServerName": "compute017"}}}}),
            json!({"@odata.id": "/redfish/v1/Systems/1", "SerialNumber": serial, "SKU": "P38411-B21",
                "UUID": "37333850-3534-5A43-4A32-303431585A59", "BiosVersion": "A42 v2.60 (08/11/2022)",
                "Oem": {"Hpe": {"PCASerialNumber": "PWABC0D1EF2345", "ServerFQDN": "compute017.dc1.acme.com"}},
                "Boot": {"UefiTargetBootSourceOverride@Redfish.AllowableValues": [
                    "PciRoot(0x7)/Pci(0x1,0x1)/Pci(0x0,0x0)/MAC(B47AF1C0FFEE,0x1)/IPv4(0.0.0.0)/Uri()",
                    "PciRoot(0x0)/Pci(0x3,0x2)/Pci(0x0,0x0)/NVMe(0x1,A1-B2-C3-D4-E5-F6-07-18)",
                    "HD(1,GPT,5A0C2E8B-1F3D-4C6E-9A7B-0D1E2F3A4B5C,0x800,0x219800)/\\EFI\\boot.efi"]}}),
            json!({"@odata.id": "/redfish/v1/Managers/1", "UUID": "0f1e2d3c-4b5a-5968-8776-a5b4c3d2e1f0",
                "Oem": {"Hpe": {"License": {"LicenseKey": "XXXXX-XXXXX-XXXXX-XXXXX-Q7W2K", "LicenseString": "iLO Advanced"}}}}),
            json!({"@odata.id": "/redfish/v1/systems/1/bios/", "Attributes": {
                "SerialNumber": serial, "ProductId": "P38411-B21", "ServerName": "compute017",
                "ServerAssetTag": "ACME-000417", "AdminName": "Jane Operator", "AdminEmail": "jane@acme.com",
                "AdminPhone": "+1 555 0100", "ServiceOtherInfo": "Rack 7 U12", "ServiceName": "",
                "AssetTagProtection": "Unlocked",
                "UrlBootFile": "https://deploy.acme.com/boot/grubx64.efi", "Ipv4Address": "10.20.30.40",
                "WorkloadProfile": "GeneralPowerEfficientCompute"}}),
            json!({"@odata.id": "/redfish/v1/Systems/1/Processors/1", "Oem": {"Hpe": {"AssetTag": "Unknown"}}}),
            json!({"@odata.id": "/redfish/v1/Systems/1/Memory/proc1dimm8", "Oem": {"Hpe": {"PartNumber": "Unknown"}}}),
            json!({"Id": "BiosAttributeRegistryA42.v1_2_60", "SupportedSystems": [
                {"ProductName": "ProLiant DL385 Gen10 Plus v2", "SystemId": "A42", "FirmwareVersion": "A42 v2.60 (08/11/2022)"}]}),
        ];
        let mut s = Sanitizer::default();
        for d in &mut docs {
            s.document(d);
        }
        for d in &mut docs {
            s.residue(d);
        }
        let text = serde_json::to_string(&docs).unwrap().to_ascii_lowercase();
        for original in [
            serial,
            "9b1e7c2a",
            "37333850",
            "0f1e2d3c",
            "5a0c2e8b",
            "acme",
            "compute017",
            "PWABC0D1EF2345",
            "B47AF1C0FFEE",
            "A1-B2-C3-D4",
            "Q7W2K",
            "Jane",
            "555 0100",
            "Rack 7",
            "10.20.30",
        ] {
            assert!(
                !text.contains(&original.to_ascii_lowercase()),
                "{original} survived: {text}"
            );
        }
        let boot = &docs[1]["Boot"]["UefiTargetBootSourceOverride@Redfish.AllowableValues"];
        assert_eq!(
            boot[0], "PciRoot(0x7)/Pci(0x1,0x1)/Pci(0x0,0x0)/MAC(00005E005301,0x1)/IPv4(0.0.0.0)/Uri()",
            "a device path's MAC keeps its shape"
        );
        assert_eq!(
            boot[1],
            "PciRoot(0x0)/Pci(0x3,0x2)/Pci(0x0,0x0)/NVMe(0x1,00-00-5E-EF-10-00-00-02)"
        );
        let bios = &docs[3]["Attributes"];
        assert_eq!(bios["SerialNumber"], docs[1]["SerialNumber"], "consistent");
        assert_eq!(bios["ServerName"], docs[0]["Oem"]["Hpe"]["Sessions"]["ServerName"]);
        assert_eq!(bios["ServiceName"], "", "nothing to hide in an empty field");
        assert_eq!(bios["UrlBootFile"], "http://host-1.example.invalid/");
        for (kept, at) in [
            ("P38411-B21", &bios["ProductId"]),
            ("GeneralPowerEfficientCompute", &bios["WorkloadProfile"]),
            ("Unlocked", &bios["AssetTagProtection"]),
            ("Unknown", &docs[4]["Oem"]["Hpe"]["AssetTag"]),
            ("Unknown", &docs[5]["Oem"]["Hpe"]["PartNumber"]),
            ("A42", &docs[6]["SupportedSystems"][0]["SystemId"]),
            ("A42 v2.60 (08/11/2022)", &docs[1]["BiosVersion"]),
            ("iLO Advanced", &docs[2]["Oem"]["Hpe"]["License"]["LicenseString"]),
        ] {
            assert_eq!(at, kept);
        }
        let kinds: Vec<&str> = s.replaced().iter().map(|r| r.kind.as_str()).collect();
        for kind in [
            "serial_number",
            "uuid",
            "mac_address",
            "host_name",
            "contact",
            "url",
            "license_key",
        ] {
            assert!(kinds.contains(&kind), "{kind} not in {kinds:?}");
        }
        assert!(!kinds.contains(&"service_tag"), "{kinds:?}");
        let mut again = Sanitizer::default();
        let mut twice = docs.clone();
        for d in &mut twice {
            again.document(d);
        }
        for d in &mut twice {
            again.residue(d);
        }
        assert_eq!(twice, docs);
        assert!(again.replaced().is_empty(), "{:?}", again.replaced());
    }

    #[test]
    fn tokens_find_addresses_inside_text() {
        let mut s = Sanitizer::default();
        let mut doc = json!({"Message": "Login from 10.9.8.7 failed (MAC aa:bb:cc:dd:ee:ff)",
                             "URLString": "https://10.9.8.7:443"});
        s.document(&mut doc);
        assert_eq!(doc["Message"], "Login from 192.0.2.1 failed (MAC 00:00:5e:00:53:01)");
        assert_eq!(
            doc["URLString"], "https://192.0.2.1:443",
            "the same address, with its port"
        );
    }
}
