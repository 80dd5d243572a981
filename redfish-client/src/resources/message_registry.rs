//! Message registries (DMTF DSP8011, the `MessageRegistry` schema): the file a MessageId's
//! registry prefix and version name, holding each message's text with `%1`, `%2`, … for its
//! arguments, its argument count, severity and resolution; and the `MessageRegistryFile`
//! members of `/redfish/v1/Registries` that say where each file is (`Location[].Uri`).
//!
//! A MessageId is `RegistryPrefix.MajorVersion.MinorVersion.MessageKey` (DSP0266 "Redfish
//! Specification", the MessageId format): [`MessageIdParts`] takes it apart, [`choose`] finds
//! the registry for it among a service's members. Everything is decoded leniently: a property of
//! the wrong shape reads as absent, and one message entry that does not decode is left out
//! rather than failing the whole registry.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A message registry file (`Base.json`, iLO's `iLO.json`, …).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MessageRegistry {
    /// e.g. `Base.1.4.0`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A human-readable name.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The language of the texts, e.g. `en`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Who publishes it, e.g. `DMTF` or `HPE`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub owning_entity: Option<String>,
    /// The prefix MessageIds of this registry start with, e.g. `Base` or `iLO`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub registry_prefix: Option<String>,
    /// `Major.Minor.Errata`, e.g. `1.4.0`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub registry_version: Option<String>,
    /// The messages by key (the last part of a MessageId).
    #[serde(default, deserialize_with = "lenient::messages")]
    pub messages: BTreeMap<String, RegistryMessage>,
}

/// One message of a registry.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RegistryMessage {
    /// What the message means, for people who read the registry.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The text, with `%1`, `%2`, … where its arguments go.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How many arguments the text takes.
    #[serde(
        default,
        deserialize_with = "lenient::count",
        skip_serializing_if = "Option::is_none"
    )]
    pub number_of_args: Option<u32>,
    /// The type of each argument (`string`, `number`).
    #[serde(default, deserialize_with = "lenient::texts", skip_serializing_if = "Vec::is_empty")]
    pub param_types: Vec<String>,
    /// What to do about it.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub resolution: Option<String>,
    /// `OK`, `Warning` or `Critical` (older registries).
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// The DMTF 1.x replacement for `Severity`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub message_severity: Option<String>,
}

impl RegistryMessage {
    /// The text with `args` in place of `%1`, `%2`, …; `None` when the entry has no text.
    pub fn text_with(&self, args: &[Value]) -> Option<String> {
        self.message.as_deref().map(|m| substitute(m, args))
    }
}

/// `template` with the `n`th argument (1-based) in place of each `%n`: a string as it is, any
/// other value as JSON. A placeholder without its argument stays as written, so a message
/// sent with too few arguments still says where something is missing.
pub fn substitute(template: &str, args: &[Value]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let arg = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| args.get(i));
        match arg {
            Some(Value::String(s)) => out.push_str(s),
            Some(other) => out.push_str(&other.to_string()),
            None => out.push_str(&rest[at..at + 1 + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// A member of `/redfish/v1/Registries`: which registry it is and where its files are.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MessageRegistryFile {
    /// Where the member itself lives.
    #[serde(
        rename = "@odata.id",
        default,
        deserialize_with = "lenient::text",
        skip_serializing_if = "Option::is_none"
    )]
    pub odata_id: Option<String>,
    /// e.g. `Base` (iLO) or `Base.1.12.0`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The registry with its version, e.g. `Base.1.4.0` or `iLO.2.15`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
    /// The languages its files are in.
    #[serde(default, deserialize_with = "lenient::texts", skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    /// Where each language's file is.
    #[serde(
        default,
        deserialize_with = "lenient::locations",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub location: Vec<RegistryLocation>,
}

/// One `Location[]` entry of a [`MessageRegistryFile`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RegistryLocation {
    /// The language, e.g. `en`.
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The file on the service itself. HPE's iLO 4 wrote it as `{"extref": "…"}`, which reads
    /// the same.
    #[serde(default, deserialize_with = "lenient::uri", skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Where the publisher keeps the file (off the service; never fetched by rftune).
    #[serde(default, deserialize_with = "lenient::text", skip_serializing_if = "Option::is_none")]
    pub publication_uri: Option<String>,
}

impl MessageRegistryFile {
    /// The registry's prefix and version, from `Registry` (else `Id`): `Base.1.4.0` →
    /// (`Base`, 1, 4).
    pub fn version(&self) -> Option<(&str, u32, u32)> {
        [self.registry.as_deref(), self.id.as_deref()]
            .into_iter()
            .flatten()
            .find_map(registry_version)
    }

    /// The file on the service in `language` (an entry without a language counts as that
    /// language), else the first file on the service.
    pub fn uri(&self, language: &str) -> Option<&str> {
        let on_service = || self.location.iter().filter(|l| l.uri.is_some());
        on_service()
            .find(|l| {
                l.language
                    .as_deref()
                    .is_none_or(|lang| lang.eq_ignore_ascii_case(language))
            })
            .or_else(|| on_service().next())
            .and_then(|l| l.uri.as_deref())
    }
}

/// The parts of a MessageId: `iLO.2.15.SystemResetRequired` → prefix `iLO`, version 2.15, key
/// `SystemResetRequired`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageIdParts<'a> {
    /// The registry prefix.
    pub prefix: &'a str,
    /// The registry's major version.
    pub major: u32,
    /// The registry's minor version.
    pub minor: u32,
    /// The message key within the registry.
    pub key: &'a str,
}

impl<'a> MessageIdParts<'a> {
    /// Takes `id` apart; `None` for an id that is not `Prefix.Major.Minor.Key` (an errata
    /// number before the key, `Base.1.4.0.Success`, is tolerated and ignored).
    pub fn parse(id: &'a str) -> Option<Self> {
        let (rest, key) = id.rsplit_once('.')?;
        let (prefix, major, minor) = registry_version(rest)?;
        (!key.is_empty()).then_some(Self {
            prefix,
            major,
            minor,
            key,
        })
    }
}

/// `Base.1.4.0`, `Base.1.4` or `iLO.2.15` → (prefix, major, minor).
fn registry_version(name: &str) -> Option<(&str, u32, u32)> {
    let mut parts = name.split('.');
    let prefix = parts.next().filter(|p| !p.is_empty())?;
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    match parts.next() {
        None => {}
        Some(errata) if errata.bytes().all(|b| b.is_ascii_digit()) && parts.next().is_none() => {}
        Some(_) => return None,
    }
    Some((prefix, major, minor))
}

/// The member of `members` that holds the registry `prefix` at `major.minor`: that version
/// when listed, else the highest minor version of the same major one. Minor versions of a
/// registry only add messages (DSP0266), so a later minor still defines every key of an earlier
/// one; an earlier one is taken only when nothing later is listed, and may lack the key. A
/// different major version is never taken: its messages may mean something else. The prefix is
/// matched without regard to case (services spell `iLO` and `ILO`).
pub fn choose<'m>(
    members: &'m [MessageRegistryFile],
    prefix: &str,
    major: u32,
    minor: u32,
) -> Option<&'m MessageRegistryFile> {
    members
        .iter()
        .filter_map(|m| m.version().map(|v| (m, v)))
        .filter(|(_, (p, ma, _))| p.eq_ignore_ascii_case(prefix) && *ma == major)
        .max_by_key(|(_, (_, _, mi))| (*mi == minor, *mi))
        .map(|(m, _)| m)
}

mod lenient {
    //! Decoders that read a value of the wrong shape as absent.
    use super::{RegistryLocation, RegistryMessage};
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;
    use std::collections::BTreeMap;

    pub(super) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => Some(s),
            _ => None,
        })
    }

    pub(super) fn texts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Array(a) => a
                .into_iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
    }

    pub(super) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
        Ok(Value::deserialize(d)?.as_u64().and_then(|n| u32::try_from(n).ok()))
    }

    /// A string, or iLO 4's `{"extref": "…"}`.
    pub(super) fn uri<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => Some(s),
            Value::Object(o) => o.get("extref").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        })
    }

    pub(super) fn locations<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RegistryLocation>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Array(a) => a
                .into_iter()
                .filter(Value::is_object)
                .filter_map(|v| serde_json::from_value(v).ok())
                .collect(),
            _ => Vec::new(),
        })
    }

    pub(super) fn messages<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, RegistryMessage>, D::Error> {
        let Value::Object(entries) = Value::deserialize(d)? else {
            return Ok(BTreeMap::new());
        };
        Ok(entries
            .into_iter()
            .filter(|(_, v)| v.is_object())
            .filter_map(|(k, v)| match serde_json::from_value(v) {
                Ok(entry) => Some((k, entry)),
                Err(e) => {
                    tracing::debug!("ignoring the registry message {k}: {e}");
                    None
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_take_their_arguments_and_missing_ones_stay() {
        let args = [json!("\"Lit\""), json!("LocationIndicatorActive"), json!(3)];
        assert_eq!(
            substitute("The value %1 for %2 is wrong (%3 times).", &args),
            "The value \"Lit\" for LocationIndicatorActive is wrong (3 times)."
        );
        // %10 is the tenth argument, not the first followed by a 0.
        let ten: Vec<Value> = (1..=10).map(|n| json!(format!("a{n}"))).collect();
        assert_eq!(substitute("%10/%1", &ten), "a10/a1");
        assert_eq!(substitute("%2 of %1", &[json!("x")]), "%2 of x");
        assert_eq!(substitute("100% sure, %", &[]), "100% sure, %");
        assert_eq!(substitute("%0 and %", &[json!("x")]), "%0 and %");
    }

    #[test]
    fn a_message_id_is_taken_apart_and_odd_ones_are_not() {
        assert_eq!(
            MessageIdParts::parse("iLO.2.15.SystemResetRequired"),
            Some(MessageIdParts {
                prefix: "iLO",
                major: 2,
                minor: 15,
                key: "SystemResetRequired"
            })
        );
        assert_eq!(
            MessageIdParts::parse("Base.1.4.0.Success").map(|p| (p.minor, p.key)),
            Some((4, "Success"))
        );
        for odd in [
            "SYS011",
            "Base.Success",
            "Base.1.x.Success",
            "Base.1.4.",
            ".1.4.Success",
            "A.1.2.3.4.K",
        ] {
            assert_eq!(MessageIdParts::parse(odd), None, "{odd}");
        }
    }

    fn member(registry: &str) -> MessageRegistryFile {
        MessageRegistryFile {
            registry: Some(registry.into()),
            ..MessageRegistryFile::default()
        }
    }

    #[test]
    fn the_exact_version_wins_else_the_highest_minor_of_the_same_major() {
        let members = [
            member("Base.1.4.0"),
            member("Base.1.12.1"),
            member("Base.2.0.0"),
            member("iLO.2.15"),
        ];
        let pick = |p, ma, mi| choose(&members, p, ma, mi).and_then(|m| m.registry.as_deref());
        assert_eq!(pick("Base", 1, 4), Some("Base.1.4.0"), "exact");
        assert_eq!(pick("Base", 1, 0), Some("Base.1.12.1"), "a later minor of major 1");
        assert_eq!(pick("Base", 1, 18), Some("Base.1.12.1"), "the highest there is");
        assert_eq!(pick("Base", 2, 1), Some("Base.2.0.0"));
        assert_eq!(pick("Base", 3, 0), None, "never another major version");
        assert_eq!(pick("ILO", 2, 14), Some("iLO.2.15"), "prefix without regard to case");
        assert_eq!(pick("IDRAC", 2, 9), None);
        // `Id` when `Registry` is missing; a member naming no version is never taken.
        let by_id = [MessageRegistryFile {
            id: Some("Base.1.4.0".into()),
            ..MessageRegistryFile::default()
        }];
        assert!(choose(&by_id, "Base", 1, 4).is_some());
        assert_eq!(choose(&[member("Base")], "Base", 1, 4), None);
    }

    #[test]
    fn a_registry_decodes_leniently() {
        let doc = json!({
            "Id": "iLO.2.15.0", "RegistryPrefix": "iLO", "RegistryVersion": "2.15.0", "Language": 7,
            "Messages": {
                "BiosPasswordMismatch": {"Message": "Old password wrong.", "NumberOfArgs": 0,
                    "Resolution": "Send the right one.", "Severity": "Critical"},
                "Odd": {"Message": ["not", "text"], "NumberOfArgs": -1, "ParamTypes": "string"},
                "Junk": 5
            }
        });
        let reg: MessageRegistry = serde_json::from_value(doc).unwrap();
        assert_eq!(reg.registry_prefix.as_deref(), Some("iLO"));
        assert_eq!(reg.language, None, "a number is not a language");
        assert_eq!(reg.messages.len(), 2, "an entry that is not an object is left out");
        let entry = &reg.messages["BiosPasswordMismatch"];
        assert_eq!(entry.text_with(&[]).as_deref(), Some("Old password wrong."));
        assert_eq!(entry.number_of_args, Some(0));
        let odd = &reg.messages["Odd"];
        assert_eq!((odd.message.as_deref(), odd.number_of_args), (None, None));
        assert!(odd.param_types.is_empty());
        let empty: MessageRegistry = serde_json::from_value(json!({"Messages": []})).unwrap();
        assert!(empty.messages.is_empty());
    }

    #[test]
    fn a_member_names_its_file_on_the_service_in_english_first() {
        let m: MessageRegistryFile = serde_json::from_value(json!({
            "@odata.id": "/redfish/v1/Registries/Base/", "Id": "Base", "Registry": "Base.1.4.0",
            "Location": [
                {"Language": "ja", "Uri": "/redfish/v1/RegistryStore/registries/ja/Base.json"},
                {"Language": "en", "PublicationUri": "https://redfish.dmtf.org/registries/Base.1.4.0.json"},
                {"Language": "en", "Uri": "/redfish/v1/RegistryStore/registries/en/Base.json"},
                "junk"
            ]
        }))
        .unwrap();
        assert_eq!(m.version(), Some(("Base", 1, 4)));
        assert_eq!(m.uri("en"), Some("/redfish/v1/RegistryStore/registries/en/Base.json"));
        assert_eq!(m.uri("de"), Some("/redfish/v1/RegistryStore/registries/ja/Base.json"));
        let ilo4: MessageRegistryFile = serde_json::from_value(json!({
            "Location": [{"Language": "en", "Uri": {"extref": "/redfish/v1/registrystore/registries/en/base.json/"}}]
        }))
        .unwrap();
        assert_eq!(
            ilo4.uri("en"),
            Some("/redfish/v1/registrystore/registries/en/base.json/")
        );
        let published_only: MessageRegistryFile = serde_json::from_value(json!({
            "Location": [{"Language": "en", "PublicationUri": "https://redfish.dmtf.org/registries/Base.1.0.0.json"}]
        }))
        .unwrap();
        assert_eq!(published_only.uri("en"), None, "nothing on the service to read");
    }
}
