//! The message registries an emulated iLO serves, so that a client can read what its ids mean:
//! iLO sends MessageIds and arguments only, and the text, severity and resolution are in the
//! registry each id names (HPE's "iLO RESTful API" documentation, "Redfish error responses and
//! messages"). Two registries, at the versions iLO 5 2.72 names ([`ILO`], [`BASE`]): `Base`
//! and `iLO`, each with an entry for every key the emulator answers with on an iLO.
//!
//! The keys, argument counts and severities are HPE's and DMTF's (DSP8011 registries; iLO 5's as
//! HPE's documentation lists them); the texts and resolutions are the emulator's own words.
//! Base also holds the few later Base keys the emulator's shared answers use that Base 1.4 does
//! not have (`PreconditionFailed`, `QueryCombinationInvalid`, `OperationNotAllowed`, …), with the
//! arguments the emulator sends. Each registry is listed in `/redfish/v1/Registries` as iLO lists
//! its own (a member named by its prefix, `Registry` with the full version) and kept as a file
//! under `/redfish/v1/RegistryStore/registries/en/`, which the iLO serves gzip-encoded.

use crate::messages::ilo::{BASE, ILO};
use redfish_client::resources::message_registry::{
    MessageRegistry, MessageRegistryFile, RegistryLocation, RegistryMessage,
};
use serde_json::{Value, json};

/// Where iLO keeps its registry files.
pub const STORE: &str = "/redfish/v1/RegistryStore/registries/en";

/// One message of a registry, as the emulator words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The key (the last part of the MessageId).
    pub key: &'static str,
    /// Arguments the text takes (`%1` … `%n`).
    pub args: u32,
    /// `OK`, `Warning` or `Critical`.
    pub severity: &'static str,
    /// The text.
    pub text: &'static str,
    /// What to do about it.
    pub resolution: &'static str,
}

const fn entry(
    key: &'static str,
    args: u32,
    severity: &'static str,
    text: &'static str,
    resolution: &'static str,
) -> Entry {
    Entry {
        key,
        args,
        severity,
        text,
        resolution,
    }
}

/// The Base registry's messages the emulator answers with.
pub const BASE_MESSAGES: &[Entry] = &[
    entry("AccountModified", 0, "OK", "The account was changed.", "None."),
    entry(
        "ActionNotSupported",
        1,
        "Critical",
        "This resource does not offer the action %1.",
        "Check the action's name and the resource it was sent to.",
    ),
    entry(
        "ActionParameterMissing",
        2,
        "Critical",
        "The action %1 needs the parameter %2.",
        "Send the action again with that parameter.",
    ),
    entry(
        "ActionParameterValueError",
        3,
        "Warning",
        "The value %1 is not one the parameter %2 of the action %3 takes.",
        "Send the action again with a value the parameter takes.",
    ),
    entry(
        "ActionParameterValueFormatError",
        3,
        "Warning",
        "The value %1 for the parameter %2 of the action %3 is not in a form it takes.",
        "Correct the value's form and send the action again.",
    ),
    entry(
        "ActionParameterValueTypeError",
        3,
        "Warning",
        "The value %1 for the parameter %2 of the action %3 is of the wrong type.",
        "Send a value of the parameter's type.",
    ),
    entry(
        "CreateLimitReachedForResource",
        0,
        "Critical",
        "No more resources of this kind can be created.",
        "Delete one that is no longer needed, then create it again.",
    ),
    entry(
        "EmptyJSON",
        0,
        "Warning",
        "The request body is an empty JSON object.",
        "Put the properties to change in the body.",
    ),
    entry(
        "EventSubscriptionLimitExceeded",
        0,
        "Critical",
        "No more event subscriptions can be made.",
        "Delete a subscription that is no longer needed first.",
    ),
    entry(
        "GeneralError",
        0,
        "Critical",
        "The request failed.",
        "See the answer's other messages, if any, then try again.",
    ),
    entry(
        "InsufficientPrivilege",
        0,
        "Critical",
        "This account is not allowed to do what was asked.",
        "Use an account with the privilege it needs.",
    ),
    entry(
        "InternalError",
        0,
        "Critical",
        "The service failed while handling the request.",
        "Try again; if it fails again, reset the management processor.",
    ),
    entry(
        "MalformedJSON",
        0,
        "Critical",
        "The request body is not valid JSON.",
        "Correct the JSON and send the request again.",
    ),
    entry(
        "NoOperation",
        0,
        "Warning",
        "The request asks for no change.",
        "Put the properties to change in the body.",
    ),
    entry(
        "NoValidSession",
        0,
        "Critical",
        "The request carries no valid session or credentials.",
        "Log in again and repeat the request.",
    ),
    entry(
        "OperationNotAllowed",
        0,
        "Critical",
        "This resource does not take that HTTP method.",
        "Use one of the methods its Allow header lists.",
    ),
    entry(
        "PreconditionFailed",
        0,
        "Critical",
        "The resource changed since the ETag sent was read.",
        "Read the resource again and send the change with its new ETag.",
    ),
    entry(
        "PropertyMissing",
        1,
        "Warning",
        "The request must include the property %1.",
        "Add the property and send the request again.",
    ),
    entry(
        "PropertyNotWritable",
        1,
        "Warning",
        "The property %1 cannot be written.",
        "Leave the property out of the request.",
    ),
    entry(
        "PropertyUnknown",
        1,
        "Warning",
        "The resource has no property %1.",
        "Check the property's name, or leave it out.",
    ),
    entry(
        "PropertyValueFormatError",
        2,
        "Warning",
        "The value %1 for the property %2 is not in a form it takes.",
        "Correct the value's form and send the request again.",
    ),
    entry(
        "PropertyValueNotInList",
        2,
        "Warning",
        "The property %2 does not take the value %1.",
        "Use one of the values the property lists.",
    ),
    entry(
        "PropertyValueOutOfRange",
        2,
        "Warning",
        "The value %1 is outside the range the property %2 takes.",
        "Use a value within the property's range.",
    ),
    entry(
        "PropertyValueTypeError",
        2,
        "Warning",
        "The value %1 for the property %2 is of the wrong type.",
        "Send a value of the property's type.",
    ),
    entry(
        "QueryCombinationInvalid",
        0,
        "Warning",
        "These query parameters cannot be used together.",
        "Leave one of them out.",
    ),
    entry(
        "QueryNotSupported",
        0,
        "Warning",
        "This service does not take that query.",
        "Send the request without it.",
    ),
    entry(
        "QueryNotSupportedOnResource",
        0,
        "Warning",
        "This resource does not take queries.",
        "Send the request without query parameters.",
    ),
    entry(
        "QueryParameterOutOfRange",
        3,
        "Warning",
        "The value %1 for the query parameter %2 is outside %3.",
        "Use a value within that range.",
    ),
    entry(
        "QueryParameterValueFormatError",
        2,
        "Warning",
        "The value %1 for the query parameter %2 is not in a form it takes.",
        "Correct the value's form.",
    ),
    entry(
        "QueryParameterValueTypeError",
        2,
        "Warning",
        "The value %1 for the query parameter %2 is of the wrong type.",
        "Send a value of the parameter's type.",
    ),
    entry(
        "ResourceAlreadyExists",
        3,
        "Critical",
        "A %1 whose %2 is %3 exists already.",
        "Change the existing one instead of creating it again.",
    ),
    entry(
        "ResourceMissingAtURI",
        1,
        "Critical",
        "Nothing is at %1.",
        "Check the URI; follow the service's links to find a resource.",
    ),
    entry(
        "ResourceNotFound",
        2,
        "Critical",
        "No %1 named %2 was found.",
        "Check the name and what was asked for.",
    ),
    entry(
        "ServiceTemporarilyUnavailable",
        1,
        "Critical",
        "The service cannot answer now; it asks to wait %1 seconds.",
        "Send the request again after that wait.",
    ),
    entry(
        "SessionLimitExceeded",
        0,
        "Critical",
        "No more sessions can be opened now.",
        "Log out of sessions no longer in use, or wait until they expire.",
    ),
    entry("Success", 0, "OK", "The request was carried out.", "None."),
    entry(
        "UnrecognizedRequestBody",
        0,
        "Warning",
        "The request body is not one this resource takes.",
        "Send the body the resource documents.",
    ),
];

/// The iLO registry's messages the emulator answers with.
pub const ILO_MESSAGES: &[Entry] = &[
    entry(
        "ActionParameterValueNotInList",
        2,
        "Warning",
        "The action does not take the value %1 for its parameter %2.",
        "Use one of the values the action lists for the parameter.",
    ),
    entry(
        "BiosPasswordMismatch",
        0,
        "Critical",
        "OldPassword is not the BIOS password set now.",
        "Send the BIOS password in force as OldPassword.",
    ),
    entry(
        "InvalidOperationForSystemState",
        0,
        "Warning",
        "The system's power state does not allow this operation.",
        "Check the system's power state, then ask for what it allows.",
    ),
    entry(
        "PropertyValueBadParam",
        0,
        "Warning",
        "A value in the request is not valid.",
        "Correct the value and send the request again.",
    ),
    entry(
        "PropertyValueIncompatible",
        3,
        "Warning",
        "The value %1 for %2 does not go with the value of %3.",
        "Change the setting it depends on first, or choose a value that goes with it.",
    ),
    entry(
        "SystemResetRequired",
        0,
        "Warning",
        "The change is kept and takes effect when the system is next reset.",
        "Reset the system to put the change in force.",
    ),
    entry(
        "UnauthorizedLoginAttempt",
        0,
        "Warning",
        "The login was refused: the user name or password is not accepted.",
        "Log in with an account's user name and its password.",
    ),
];

/// One registry the emulator serves.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    /// The registry prefix and version a MessageId carries (`iLO.2.15`).
    pub versioned: &'static str,
    /// Who publishes the registry it stands in for.
    pub owner: &'static str,
    /// Its messages.
    pub messages: &'static [Entry],
}

impl Served {
    /// The prefix (`iLO`).
    pub fn prefix(&self) -> &'static str {
        self.versioned.split('.').next().unwrap_or(self.versioned)
    }

    /// `Major.Minor.0`.
    pub fn version(&self) -> String {
        let version = self.versioned.split_once('.').map_or("", |(_, v)| v);
        format!("{version}.0")
    }

    /// The `Registries` member's path (`/redfish/v1/Registries/iLO`).
    pub fn member_path(&self) -> String {
        format!("/redfish/v1/Registries/{}", self.prefix())
    }

    /// The file's path (`/redfish/v1/RegistryStore/registries/en/iLO.json`).
    pub fn file_path(&self) -> String {
        format!("{STORE}/{}.json", self.prefix())
    }

    /// The `Registries` member: which registry, and where its file is.
    pub fn member(&self) -> Value {
        let registry = format!("{}.0", self.versioned);
        let doc = MessageRegistryFile {
            odata_id: Some(self.member_path()),
            id: Some(self.prefix().to_owned()),
            registry: Some(registry.clone()),
            languages: vec!["en".into()],
            location: vec![RegistryLocation {
                language: Some("en".into()),
                uri: Some(self.file_path()),
                publication_uri: None,
            }],
        };
        let mut doc = serde_json::to_value(doc).unwrap_or_default();
        doc["@odata.type"] = json!("#MessageRegistryFile.v1_0_4.MessageRegistryFile");
        doc["Name"] = json!(format!("{registry} Message Registry File"));
        doc["Description"] = json!(format!("Registry Definition File for {registry}"));
        doc
    }

    /// The registry file.
    pub fn file(&self) -> Value {
        let doc = MessageRegistry {
            id: Some(format!("{}.0", self.versioned)),
            name: Some(format!("{} Message Registry", self.prefix())),
            language: Some("en".into()),
            owning_entity: Some(self.owner.into()),
            registry_prefix: Some(self.prefix().into()),
            registry_version: Some(self.version()),
            messages: self
                .messages
                .iter()
                .map(|e| {
                    let message = RegistryMessage {
                        description: None,
                        message: Some(e.text.into()),
                        number_of_args: Some(e.args),
                        param_types: vec!["string".into(); e.args as usize],
                        resolution: Some(e.resolution.into()),
                        severity: Some(e.severity.into()),
                        message_severity: Some(e.severity.into()),
                    };
                    (e.key.to_owned(), message)
                })
                .collect(),
        };
        let mut doc = serde_json::to_value(doc).unwrap_or_default();
        doc["@odata.type"] = json!("#MessageRegistry.v1_0_0.MessageRegistry");
        doc["Description"] = json!(format!(
            "The {} messages rftune's emulator answers with, in its own words",
            self.prefix()
        ));
        doc
    }
}

/// The registries an emulated iLO serves.
pub fn served() -> [Served; 2] {
    [
        Served {
            versioned: BASE,
            owner: "DMTF",
            messages: BASE_MESSAGES,
        },
        Served {
            versioned: ILO,
            owner: "HPE",
            messages: ILO_MESSAGES,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ilo::TRANSLATED;
    use redfish_client::resources::message_registry::{MessageIdParts, substitute};
    use std::collections::BTreeSet;
    use std::path::Path;

    fn keys(messages: &[Entry]) -> BTreeSet<&'static str> {
        messages.iter().map(|e| e.key).collect()
    }

    #[test]
    fn each_text_takes_as_many_arguments_as_it_says_and_each_key_is_there_once() {
        for served in served() {
            assert_eq!(
                keys(served.messages).len(),
                served.messages.len(),
                "{}",
                served.versioned
            );
            for e in served.messages {
                let placeholders: BTreeSet<u32> = (1..=9).filter(|n| e.text.contains(&format!("%{n}"))).collect();
                assert_eq!(placeholders, (1..=e.args).collect(), "{}", e.key);
                assert!(!e.resolution.contains('%'), "{}: a resolution takes no argument", e.key);
                assert!(["OK", "Warning", "Critical"].contains(&e.severity), "{}", e.key);
            }
        }
    }

    #[test]
    fn the_files_decode_with_the_client_and_fill_in_an_ilo_message() {
        let [base, ilo] = served();
        let file: MessageRegistry = serde_json::from_value(ilo.file()).unwrap();
        assert_eq!(
            (file.registry_prefix.as_deref(), file.registry_version.as_deref()),
            (Some("iLO"), Some("2.15.0"))
        );
        let member: MessageRegistryFile = serde_json::from_value(ilo.member()).unwrap();
        assert_eq!(member.version(), Some(("iLO", 2, 15)));
        assert_eq!(
            member.uri("en"),
            Some("/redfish/v1/RegistryStore/registries/en/iLO.json")
        );
        let base: MessageRegistry = serde_json::from_value(base.file()).unwrap();
        let entry = &base.messages["PropertyValueNotInList"];
        assert_eq!(
            entry.text_with(&[json!("Sometimes"), json!("ProcSMT")]).as_deref(),
            Some("The property ProcSMT does not take the value Sometimes.")
        );
    }

    /// A registry a MessageId of the emulator's sources names.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Named {
        Base,
        Ilo,
    }

    /// The string literals in `text`.
    fn literals(text: &str) -> Vec<&str> {
        text.split('"').skip(1).step_by(2).collect()
    }

    /// The text of `let ident = …;` before `at` in `src`, if there is one.
    fn binding<'s>(src: &'s str, at: usize, ident: &str) -> Option<&'s str> {
        let start = src[..at].rfind(&format!("let {ident} ="))?;
        let end = src[start..].find(';').map_or(src.len(), |e| start + e);
        Some(&src[start..end])
    }

    /// The first argument of the call whose `(` is at `open`.
    fn first_argument(src: &str, open: usize) -> &str {
        let mut depth = 0usize;
        for (i, c) in src[open..].char_indices() {
            match c {
                '(' | '{' | '[' => depth += 1,
                ')' | '}' | ']' if depth == 1 => return &src[open + 1..open + i],
                ')' | '}' | ']' => depth -= 1,
                ',' if depth == 1 => return &src[open + 1..open + i],
                _ => {}
            }
        }
        ""
    }

    fn is_key(s: &str) -> bool {
        s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
    }

    /// The keys the argument `text` (found at `at` in `src`) can be: its literals, or those of
    /// the binding it names.
    fn keys_of<'s>(src: &'s str, at: usize, text: &'s str) -> Vec<&'s str> {
        let text = text.trim();
        let text = if text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            binding(src, at, text).unwrap_or_default()
        } else {
            text
        };
        literals(text).into_iter().filter(|l| is_key(l)).collect()
    }

    /// Every (registry, key) the source `src` names: the Base keys of `base(…)` calls (which an
    /// iLO answers at its Base version), and the keys after a registry placeholder in a format
    /// string (`"{ILO}.Key"`, `"{OUTCOME}.{id}"`, `"{}.Key", ilo::BASE`).
    fn named(src: &str) -> BTreeSet<(Named, String)> {
        let mut out = BTreeSet::new();
        for (at, _) in src.match_indices("base(") {
            let before = src[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') || src[..at].ends_with("fn ") {
                continue;
            }
            let open = at + "base".len();
            for key in keys_of(src, at, first_argument(src, open)) {
                out.insert((Named::Base, key.to_owned()));
            }
        }
        for (placeholder, registry) in [
            ("{ILO}.", Some(Named::Ilo)),
            ("{BASE}.", Some(Named::Base)),
            ("{OUTCOME}.", Some(Named::Base)),
            ("{}.", None),
        ] {
            for (at, _) in src.match_indices(placeholder) {
                let rest = &src[at + placeholder.len()..];
                let Some(end) = rest.find('"') else { continue };
                let (key, after) = (&rest[..end], &rest[end + 1..]);
                let registry = registry.or_else(|| {
                    let call = &after[..after.find(')').unwrap_or(after.len())];
                    if call.contains("ilo::ILO") {
                        Some(Named::Ilo)
                    } else if call.contains("ilo::BASE") {
                        Some(Named::Base)
                    } else {
                        None
                    }
                });
                let Some(registry) = registry else { continue };
                let keys: Vec<&str> = match key.strip_prefix('{').and_then(|k| k.strip_suffix('}')) {
                    Some(ident) => keys_of(src, at, ident),
                    None if is_key(key) => vec![key],
                    None => Vec::new(),
                };
                out.extend(keys.into_iter().map(|k| (registry, k.to_owned())));
            }
        }
        out
    }

    fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }

    #[test]
    fn the_reader_of_the_sources_finds_ids_as_the_emulator_writes_them() {
        let src = r#"
            base("Success", "Done.", &[], "None", None)
            messages::base(if known { "PropertyNotWritable" } else { "PropertyUnknown" }, &format!("{x}"))
            let code = if empty { "EmptyJSON" } else { "NoOperation" };
            messages::base(code, text, &[], "Add properties.", None)
            pub fn base(code: &str, text: &str) -> Value { message(&format!("{BASE}.{code}")) }
            ilo::message(&format!("{}.UnrecognizedRequestBody", ilo::BASE), &[])
            ilo::message(&format!("{}.UnauthorizedLoginAttempt", ilo::ILO), &[])
            let id = match problem { A => "PropertyValueTypeError", _ => "PropertyValueOutOfRange" };
            ilo::about(&format!("{OUTCOME}.{id}"), &[&shown, &name], &name)
            ilo::message(&format!("{ILO}.BiosPasswordMismatch"), &[])
            database("NotAnId")
        "#;
        let named = named(src);
        let found: Vec<(Named, &str)> = named.iter().map(|(r, k)| (*r, k.as_str())).collect();
        assert_eq!(
            found,
            [
                (Named::Base, "EmptyJSON"),
                (Named::Base, "NoOperation"),
                (Named::Base, "PropertyNotWritable"),
                (Named::Base, "PropertyUnknown"),
                (Named::Base, "PropertyValueOutOfRange"),
                (Named::Base, "PropertyValueTypeError"),
                (Named::Base, "Success"),
                (Named::Base, "UnrecognizedRequestBody"),
                (Named::Ilo, "BiosPasswordMismatch"),
                (Named::Ilo, "UnauthorizedLoginAttempt"),
            ]
        );
    }

    #[test]
    fn every_id_the_emulator_answers_with_on_an_ilo_has_an_entry_in_the_registry_it_names() {
        let mut files = Vec::new();
        sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
        let mut named_ids = BTreeSet::new();
        // This file names ids only in its examples.
        for (_, src) in files
            .iter()
            .filter(|(path, _)| !path.ends_with("message_registries.rs"))
        {
            named_ids.extend(named(src));
        }
        // What an iLO answers in place of other registries' ids.
        for (_, key, _) in TRANSLATED {
            named_ids.insert((Named::Ilo, key.to_owned()));
        }
        named_ids.insert((Named::Base, "GeneralError".to_owned()));
        // The reader found what the sources are known to name (so it is not reading nothing).
        for known in [
            (Named::Ilo, "BiosPasswordMismatch"),
            (Named::Ilo, "SystemResetRequired"),
            (Named::Ilo, "PropertyValueIncompatible"),
            (Named::Base, "UnrecognizedRequestBody"),
            (Named::Base, "ResourceMissingAtURI"),
            (Named::Base, "PropertyValueTypeError"),
            (Named::Base, "EmptyJSON"),
        ] {
            assert!(
                named_ids.contains(&(known.0, known.1.to_owned())),
                "{known:?} not found"
            );
        }
        let (base, ilo) = (keys(BASE_MESSAGES), keys(ILO_MESSAGES));
        let missing: Vec<String> = named_ids
            .iter()
            .filter(|(registry, key)| match registry {
                Named::Base => !base.contains(key.as_str()),
                Named::Ilo => !ilo.contains(key.as_str()),
            })
            .map(|(registry, key)| format!("{registry:?}.{key}"))
            .collect();
        assert!(missing.is_empty(), "ids without a registry entry: {missing:?}");
    }

    #[test]
    fn the_arguments_an_ilo_sends_are_as_many_as_the_registry_entry_takes() {
        use crate::messages::{self, ilo};
        let shaped = ilo::reshape(&[
            messages::not_found("/redfish/v1/Nowhere"),
            messages::property_missing("Boot"),
            messages::property_unknown("Bogus", "#/Boot/Bogus"),
            messages::property_not_changeable("Id", true, "#/Id"),
            messages::action_parameter("ComputerSystem.Reset", "ResetType", None, &["On"]),
            messages::action_parameter("ComputerSystem.Reset", "ResetType", Some("Off"), &["On"]),
            messages::sys415(),
            messages::no_valid_session(),
        ]);
        let more = [
            ilo::message(
                &format!("{ILO}.PropertyValueIncompatible"),
                &["\"Disabled\"", "ProcSMT", "WorkloadProfile"],
            ),
            ilo::message(
                &format!("{ILO}.ActionParameterValueNotInList"),
                &["Guest", "PasswordName"],
            ),
            ilo::message(&format!("{BASE}.PropertyValueNotInList"), &["[1]", "BootOrder"]),
        ];
        let registries: Vec<(Served, MessageRegistry)> = served()
            .into_iter()
            .map(|s| (s, serde_json::from_value(s.file()).unwrap()))
            .collect();
        for m in shaped.iter().chain(&more) {
            let id = m["MessageId"].as_str().unwrap();
            let parts = MessageIdParts::parse(id).unwrap();
            let (_, file) = registries
                .iter()
                .find(|(s, _)| s.versioned == format!("{}.{}.{}", parts.prefix, parts.major, parts.minor))
                .unwrap_or_else(|| panic!("{id}: no registry served"));
            let entry = &file.messages[parts.key];
            let args = m["MessageArgs"].as_array().map_or(0, Vec::len);
            assert_eq!(Some(args as u32), entry.number_of_args, "{id}");
            let text = substitute(
                entry.message.as_deref().unwrap(),
                m["MessageArgs"].as_array().unwrap_or(&Vec::new()),
            );
            assert!(!text.contains('%'), "{id}: {text}");
        }
    }
}
