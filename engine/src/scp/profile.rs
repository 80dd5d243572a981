//! Profiles ⇄ SCP. [`derive()`] writes a profile from an SCP's BIOS and iDRAC (System, iDRAC,
//! Lifecycle Controller) attributes, under the `scp` source id with the file's name in each
//! `why`; everything it leaves out is reported with its reason ([`Dropped`]), never lost
//! silently: NIC and RAID content, attributes an import would skip, read-only ones, names that
//! map to no Dell attribute, a host's identity and secrets. [`render`] writes the SCP fragment a
//! resolved profile means for one host: the values that host's registry chose.
//!
//! SCP values are text; a profile types them as the registry does (`CpuMinSevAsid = 1`,
//! `NumaNodesPerSocket = "1"`). With a registry (given, or read from a host) each value takes
//! its attribute's type; without one a value is text unless it is all digits and the catalog
//! has seen no token for its attribute, and every value typed that way is listed as assumed.

use super::sensitive::{self, Sensitive};
use super::{BIOS_FQDD, Component, ComponentKind, ScpAttribute, ScpDocument, attribute_name, scp_name};
use crate::assess::{Assessment, LoadedProfile};
use crate::connect::Bmc;
use crate::derive::{toml_key, toml_string, toml_value};
use crate::error::{Result, bad_input};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::attribute_registry::{AttributeRegistry, AttributeType};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Which of the SCP's attributes become settings (a snapshot's: [`crate::derive::Selection`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScpSelection {
    /// The tunable settings rftune knows (the settings catalog), as `derive --snapshot` takes.
    Catalog,
    /// The catalog's, and these (BIOS or iDRAC names, in either spelling).
    CatalogAnd(Vec<String>),
    /// Every BIOS and iDRAC attribute an import would apply (`diff --scp`).
    All,
}

/// Why an attribute of the SCP is not in the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// A NIC, storage, event-filter or other component: a profile holds BIOS and iDRAC
    /// attributes only.
    NotInProfiles,
    /// The import would skip it (`Set On Import` False, commented out in XML).
    NotSetOnImport,
    /// The export says it cannot be written.
    ReadOnly,
    /// A secret (password, hash, key, community string).
    Secret,
    /// The host's identity (addresses, names, accounts, certificates, MACs, IQNs).
    Identity,
    /// An iDRAC-component name of no `Group.N#Attr` shape (`HWC_1_2#Alert#SNMP`).
    Unmapped,
    /// Not a catalog setting (name it with `--attribute`).
    NotInCatalog,
}

impl DropReason {
    /// A phrase for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Self::NotInProfiles => {
                "NIC, RAID and other device settings: a profile holds BIOS and iDRAC attributes only"
            }
            Self::NotSetOnImport => "skipped on import (Set On Import False, or commented out)",
            Self::ReadOnly => "read-only",
            Self::Secret => "a secret (never in a profile)",
            Self::Identity => "the host's identity (never in a profile)",
            Self::Unmapped => "no Dell attribute of that name (not Group.N#Attr)",
            Self::NotInCatalog => "not a catalog setting (name it with --attribute)",
        }
    }
}

/// One attribute left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// The component.
    pub component: String,
    /// The SCP name.
    pub name: String,
    /// Why.
    pub reason: DropReason,
}

/// How values get their types.
#[derive(Debug, Clone, Copy, Default)]
pub struct Typing<'a> {
    /// The host's BIOS attribute registry.
    pub registry: Option<&'a AttributeRegistry>,
    /// A host's current iDRAC values (their JSON types), by group.
    pub idrac: Option<&'a BTreeMap<AttributeGroup, Attributes>>,
}

/// A profile derived from an SCP.
#[derive(Debug, Clone, Serialize)]
pub struct Derived {
    /// The profile, TOML.
    #[serde(skip)]
    pub toml: String,
    /// The BIOS settings taken.
    pub bios: Attributes,
    /// The iDRAC settings taken, by group.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// What was left out, and why.
    pub dropped: Vec<Dropped>,
    /// Values typed as integers without a registry (assumed).
    pub assumed_integers: Vec<String>,
}

impl Derived {
    /// How many were dropped for each reason, in reason order.
    pub fn dropped_counts(&self) -> BTreeMap<DropReason, usize> {
        let mut out = BTreeMap::new();
        for d in &self.dropped {
            *out.entry(d.reason).or_default() += 1;
        }
        out
    }
}

/// The attributes the settings catalog knows (BIOS and iDRAC names).
fn catalog() -> Result<(BTreeSet<String>, BTreeSet<String>)> {
    let catalog = bios_profiles::catalog::shipped()?;
    let known = catalog
        .entries
        .iter()
        .flat_map(|e| e.attributes.iter().cloned())
        .collect();
    // Attributes the catalog saw enumeration tokens for: never integers.
    let tokens = catalog
        .entries
        .iter()
        .flat_map(|e| e.seen.iter().map(|s| s.attribute.clone()))
        .collect();
    Ok((known, tokens))
}

/// `value` as `kind` types it; `None` when the text does not parse as that type.
fn as_type(kind: AttributeType, text: &str) -> Option<AttributeValue> {
    match kind {
        AttributeType::Integer => text.trim().parse::<i64>().ok().map(AttributeValue::from),
        AttributeType::Boolean => match text.to_ascii_lowercase().as_str() {
            "true" => Some(AttributeValue::Bool(true)),
            "false" => Some(AttributeValue::Bool(false)),
            _ => None,
        },
        _ => Some(AttributeValue::from(text)),
    }
}

fn digits(text: &str) -> Option<i64> {
    let t = text.trim();
    (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .then(|| t.parse().ok())
        .flatten()
}

/// Every attribute of the document with the component kind it belongs to.
fn walk(doc: &ScpDocument) -> Vec<(ComponentKind, &str, &ScpAttribute)> {
    fn visit<'a>(c: &'a Component, top: ComponentKind, out: &mut Vec<(ComponentKind, &'a str, &'a ScpAttribute)>) {
        for a in &c.attributes {
            out.push((top, c.fqdd.as_str(), a));
        }
        for n in &c.components {
            visit(n, top, out);
        }
    }
    let mut out = Vec::new();
    for c in &doc.components {
        visit(c, c.kind(), &mut out);
    }
    out
}

/// The profile of `doc` (read from `file`) named `name`: the settings `selection` takes, typed
/// by `typing`, everything else listed as dropped.
pub fn derive(
    doc: &ScpDocument,
    file: &str,
    name: &str,
    description: Option<&str>,
    selection: &ScpSelection,
    typing: Typing<'_>,
) -> Result<Derived> {
    let (known, tokens) = catalog()?;
    let named: BTreeSet<String> = match selection {
        ScpSelection::CatalogAnd(n) => n
            .iter()
            .map(|x| attribute_name(x).unwrap_or_else(|| x.clone()))
            .collect(),
        _ => BTreeSet::new(),
    };
    let mut out = Derived {
        toml: String::new(),
        bios: Attributes::new(),
        idrac: BTreeMap::new(),
        dropped: Vec::new(),
        assumed_integers: Vec::new(),
    };
    let mut wanted_found: BTreeSet<String> = BTreeSet::new();
    for (kind, fqdd, a) in walk(doc) {
        let drop = |reason| Dropped {
            component: fqdd.to_owned(),
            name: a.name.clone(),
            reason,
        };
        let attr = match kind {
            ComponentKind::Bios if fqdd == BIOS_FQDD => a.name.clone(),
            ComponentKind::Manager(_) => match attribute_name(&a.name) {
                Some(n) => n,
                None => {
                    out.dropped.push(drop(DropReason::Unmapped));
                    continue;
                }
            },
            _ => {
                out.dropped.push(drop(DropReason::NotInProfiles));
                continue;
            }
        };
        if let Some(s) = sensitive::classify(&a.name, &a.value) {
            wanted_found.insert(attr.clone());
            out.dropped.push(drop(match s {
                Sensitive::Secret => DropReason::Secret,
                Sensitive::Identity => DropReason::Identity,
            }));
            continue;
        }
        let in_selection = match selection {
            ScpSelection::All => true,
            ScpSelection::Catalog => known.contains(&attr),
            ScpSelection::CatalogAnd(_) => known.contains(&attr) || named.contains(&attr),
        };
        if !in_selection {
            out.dropped.push(drop(DropReason::NotInCatalog));
            continue;
        }
        wanted_found.insert(attr.clone());
        if !a.set_on_import {
            out.dropped.push(drop(DropReason::NotSetOnImport));
            continue;
        }
        if a.read_only() {
            out.dropped.push(drop(DropReason::ReadOnly));
            continue;
        }
        match kind {
            ComponentKind::Manager(group) => {
                let current = typing.idrac.and_then(|i| i.get(&group)).and_then(|g| g.get(&attr));
                let value = match (current, digits(&a.value)) {
                    (Some(AttributeValue::Integer(_)), Some(i)) => AttributeValue::from(i),
                    (Some(_), _) => AttributeValue::from(a.value.as_str()),
                    (None, Some(i)) => {
                        out.assumed_integers.push(attr.clone());
                        AttributeValue::from(i)
                    }
                    (None, None) => AttributeValue::from(a.value.as_str()),
                };
                out.idrac.entry(group).or_default().insert(attr, value);
            }
            _ => {
                let entry = typing.registry.and_then(|r| r.attribute(&attr));
                let value = match (entry, typing.registry, digits(&a.value)) {
                    (Some(e), _, _) => match as_type(e.kind, &a.value) {
                        Some(v) => v,
                        None => bad_input!(
                            "{file}: {attr} = {:?} is not a value of its registry type ({:?})",
                            a.value,
                            e.kind
                        ),
                    },
                    (None, None, Some(i)) if !tokens.contains(&attr) => {
                        out.assumed_integers.push(attr.clone());
                        AttributeValue::from(i)
                    }
                    _ => AttributeValue::from(a.value.as_str()),
                };
                out.bios.insert(attr, value);
            }
        }
    }
    if let ScpSelection::CatalogAnd(_) = selection
        && let Some(missing) = named.iter().find(|n| !wanted_found.contains(*n))
    {
        bad_input!("{file} has no BIOS or iDRAC attribute {missing:?}");
    }
    if let ScpSelection::CatalogAnd(_) = selection
        && let Some(refused) = out.dropped.iter().find(|d| {
            matches!(d.reason, DropReason::Secret | DropReason::Identity)
                && named.contains(&attribute_name(&d.name).unwrap_or_else(|| d.name.clone()))
        })
    {
        bad_input!(
            "{file}: {} is {}; rftune never writes it into a profile",
            refused.name,
            refused.reason.describe()
        );
    }
    out.toml = profile_text(doc, file, name, description, &out)?;
    Ok(out)
}

fn profile_text(doc: &ScpDocument, file: &str, name: &str, description: Option<&str>, d: &Derived) -> Result<String> {
    let exported = doc
        .timestamp
        .as_deref()
        .map(|t| format!(" exported {}", t.split_whitespace().collect::<Vec<_>>().join(" ")))
        .unwrap_or_default();
    let of = doc.model.as_deref().unwrap_or("an unknown model");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Derived by rftune from the Server Configuration Profile {file} ({of}{exported})."
    );
    let _ = writeln!(
        out,
        "# Taken: {} BIOS and {} iDRAC setting(s). Left out:",
        d.bios.len(),
        d.idrac.values().map(Attributes::len).sum::<usize>()
    );
    for (reason, n) in d.dropped_counts() {
        let _ = writeln!(out, "#   {n} {}", reason.describe());
    }
    let devices: BTreeSet<&str> = d
        .dropped
        .iter()
        .filter(|x| x.reason == DropReason::NotInProfiles)
        .map(|x| x.component.as_str())
        .collect();
    if !devices.is_empty() {
        let list: Vec<&str> = devices.into_iter().collect();
        let _ = writeln!(out, "#   (components: {})", list.join(", "));
    }
    if !d.assumed_integers.is_empty() {
        let _ = writeln!(
            out,
            "# Typed as integers without a registry (check with `rftune profiles validate --registry`): {}",
            d.assumed_integers.join(", ")
        );
    }
    let _ = writeln!(out, "name = {}", toml_string(name));
    let default_description = format!("The settings of the Server Configuration Profile {file} ({of})");
    let _ = writeln!(
        out,
        "description = {}",
        toml_string(description.unwrap_or(&default_description))
    );
    if let Some(m) = &doc.model {
        let _ = writeln!(out, "models = [{}]", toml_string(m));
    }
    let why = format!("the value in the Server Configuration Profile {file}{exported}");
    for (k, v) in &d.bios {
        let _ = write!(out, "\n[bios.{}]\nvalue = {}\n", toml_key(k), toml_value(v)?);
        let _ = writeln!(
            out,
            "why = {}\nsource = \"scp\"\nconfidence = \"used\"",
            toml_string(&why)
        );
    }
    for (group, attrs) in &d.idrac {
        let group_name = serde_json::to_value(group)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        for (k, v) in attrs {
            let _ = write!(
                out,
                "\n[idrac.{}]\ngroup = {}\nvalue = {}\n",
                toml_key(k),
                toml_string(&group_name),
                toml_value(v)?
            );
            let _ = writeln!(
                out,
                "why = {}\nsource = \"scp\"\nconfidence = \"used\"",
                toml_string(&why)
            );
        }
    }
    Ok(out)
}

/// The profile `diff --scp` compares hosts with: every BIOS and iDRAC attribute `doc` would
/// apply, typed by the registry and iDRAC values of the host read first.
pub fn comparison_profile(doc: &ScpDocument, file: &str, typing: Typing<'_>) -> Result<(LoadedProfile, Derived)> {
    let derived = derive(doc, file, &profile_name(file), None, &ScpSelection::All, typing)?;
    let loaded = LoadedProfile::from_toml(&derived.toml, file)?;
    Ok((loaded, derived))
}

/// The name of the profile an SCP file stands for: `scp-<file>`, in the letters a profile name
/// may hold.
pub fn profile_name(file: &str) -> String {
    let safe: String = file
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("scp-{safe}")
}

/// One setting the fragment leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The attribute.
    pub attribute: String,
    /// Why (`not applicable here: …`, `set by a dependency`).
    pub reason: String,
}

/// The SCP fragment a profile means for one host.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The fragment.
    pub document: ScpDocument,
    /// The settings it leaves out.
    pub skipped: Vec<Skipped>,
}

/// The fragment of `assessment` (a profile judged on a host): each setting's value as the
/// host's registry chose it, the unlocks the plan adds, nothing the host lacks or a dependency
/// sets; the iDRAC settings under their components as `Group.N#Attr`.
pub fn render(bmc: &Bmc, assessment: &Assessment) -> Result<Rendered> {
    let plan = bios_profiles::plan(&assessment.profile, &assessment.state.view())
        .map_err(|e| crate::Error::from(e).context(format!("{}: planning", bmc.name)))?;
    let mut bios: Vec<ScpAttribute> = Vec::new();
    let mut idrac: BTreeMap<AttributeGroup, Vec<ScpAttribute>> = BTreeMap::new();
    let mut skipped = Vec::new();
    let text = |v: &AttributeValue| redfish_client::oem::dell::scp::value_text(&v.to_json());
    for c in &assessment.diff.changes {
        match c.status {
            bios_profiles::Status::NotApplicable => {
                skipped.push(Skipped {
                    attribute: c.attribute.clone(),
                    reason: format!(
                        "not applicable here{}",
                        c.note.as_deref().map(|n| format!(": {n}")).unwrap_or_default()
                    ),
                });
                continue;
            }
            bios_profiles::Status::Forced => {
                skipped.push(Skipped {
                    attribute: c.attribute.clone(),
                    reason: format!(
                        "set by a dependency, not written{}",
                        c.note.as_deref().map(|n| format!(": {n}")).unwrap_or_default()
                    ),
                });
                continue;
            }
            _ => {}
        }
        match c.target {
            bios_profiles::Target::Bios => bios.push(ScpAttribute::new(c.attribute.clone(), text(&c.desired))),
            bios_profiles::Target::Idrac(group) => {
                let Some(name) = scp_name(&c.attribute) else {
                    skipped.push(Skipped {
                        attribute: c.attribute.clone(),
                        reason: "no SCP name (not Group.N.Attr)".into(),
                    });
                    continue;
                };
                idrac
                    .entry(group)
                    .or_default()
                    .push(ScpAttribute::new(name, text(&c.desired)));
            }
        }
    }
    for u in &plan.unlocks {
        if !bios.iter().any(|a| a.name == u.attribute) {
            bios.push(ScpAttribute::new(u.attribute.clone(), text(&u.value)));
        }
    }
    let mut components: Vec<Component> = [
        AttributeGroup::LifecycleController,
        AttributeGroup::System,
        AttributeGroup::Idrac,
    ]
    .into_iter()
    .filter_map(|g| {
        idrac.remove(&g).map(|attributes| Component {
            fqdd: g.resource_id().to_owned(),
            attributes,
            components: Vec::new(),
        })
    })
    .collect();
    if !bios.is_empty() {
        components.push(Component {
            fqdd: BIOS_FQDD.to_owned(),
            attributes: bios,
            components: Vec::new(),
        });
    }
    let state = &assessment.state;
    Ok(Rendered {
        document: ScpDocument {
            model: state.model.clone(),
            service_tag: state.service_tag.clone(),
            timestamp: Some(host_bench::utc_now_seconds()),
            comments: vec![format!(
                "Written by rftune: profile {} as resolved for {}",
                assessment.profile.name, bmc.name
            )],
            components,
        },
        skipped,
    })
}

/// Rendering as a fleet [`Operation`](crate::lifecycle::Operation): the host read and judged
/// against the profile, then its fragment.
#[derive(Debug, Clone)]
pub struct Render {
    /// The profile.
    pub profile: std::sync::Arc<LoadedProfile>,
    /// The run's registry cache.
    pub cache: std::sync::Arc<crate::cache::RegistryCache>,
}

impl crate::lifecycle::Operation for Render {
    type Output = Rendered;

    async fn run(&self, bmc: &mut Bmc, _: &dyn crate::observe::Observer) -> Result<Rendered> {
        let options = crate::assess::AssessOptions {
            jobs: false,
            strict: false,
        };
        let a = crate::assess::assess(bmc, &self.profile, &self.cache, options).await?;
        if let Some(crate::assess::Blocked::NotApplicable(errors)) = a.blocked() {
            bad_input!(
                "{}: profile {} cannot be applied as written, so it has no SCP fragment:\n  {}",
                bmc.name,
                self.profile.name(),
                errors.join("\n  ")
            );
        }
        render(bmc, &a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> ScpDocument {
        let (d, _) = ScpDocument::parse(
            r#"{"SystemConfiguration": {"Model": "PowerEdge R7625", "ServiceTag": "SVC0001", "TimeStamp": "Wed Feb  3 06:53:31 2021", "Components": [
              {"FQDD": "BIOS.Setup.1-1", "Attributes": [
                {"Name": "LogicalProc", "Value": "Disabled", "Set On Import": "True"},
                {"Name": "NumaNodesPerSocket", "Value": "4", "Set On Import": "True"},
                {"Name": "CpuMinSevAsid", "Value": "100", "Set On Import": "True"},
                {"Name": "ProcCStates", "Value": "Disabled", "Set On Import": "False"},
                {"Name": "SerialComm", "Value": "OnConRedirCom1", "Set On Import": "True"},
                {"Name": "OldSetupPassword", "Value": "******", "Set On Import": "False"},
                {"Name": "AssetTag", "Value": "A1", "Set On Import": "True"}]},
              {"FQDD": "System.Embedded.1", "Attributes": [
                {"Name": "ServerPwr.1#PowerCapSetting", "Value": "Disabled", "Set On Import": "True"},
                {"Name": "ServerPwr.1#PowerCapValue", "Value": "176", "Set On Import": "True"}]},
              {"FQDD": "iDRAC.Embedded.1", "Attributes": [
                {"Name": "IPv4Static.1#Address", "Value": "192.168.0.120", "Set On Import": "True"},
                {"Name": "IPMILan.1#CommunityName", "Value": "public", "Set On Import": "True"},
                {"Name": "Info.1#Version", "Value": "7.00", "Set On Import": "False", "Comment": "Always Read Only"}]},
              {"FQDD": "EventFilters.SystemHealth.1", "Attributes": [
                {"Name": "HWC_1_2#Alert#SNMP", "Value": "Enabled", "Set On Import": "True"}]},
              {"FQDD": "NIC.Slot.3-1-1", "Attributes": [
                {"Name": "LegacyBootProto", "Value": "NONE", "Set On Import": "True"}]}]}}"#,
        )
        .unwrap();
        d
    }

    fn reason(d: &Derived, name: &str) -> Option<DropReason> {
        d.dropped.iter().find(|x| x.name == name).map(|x| x.reason)
    }

    #[test]
    fn a_derived_profile_takes_the_catalog_settings_and_says_why_each_other_attribute_is_left_out() {
        let d = derive(
            &doc(),
            "golden.json",
            "golden",
            None,
            &ScpSelection::Catalog,
            Typing::default(),
        )
        .unwrap();
        assert_eq!(d.bios.get("LogicalProc"), Some(&AttributeValue::from("Disabled")));
        assert_eq!(
            d.bios.get("NumaNodesPerSocket"),
            Some(&AttributeValue::from("4")),
            "the catalog saw NPS tokens: an enumeration, text"
        );
        assert_eq!(reason(&d, "ProcCStates"), Some(DropReason::NotSetOnImport));
        assert_eq!(reason(&d, "SerialComm"), Some(DropReason::NotInCatalog));
        assert_eq!(reason(&d, "OldSetupPassword"), Some(DropReason::Secret));
        assert_eq!(reason(&d, "AssetTag"), Some(DropReason::Identity));
        assert_eq!(reason(&d, "IPv4Static.1#Address"), Some(DropReason::Identity));
        assert_eq!(reason(&d, "IPMILan.1#CommunityName"), Some(DropReason::Secret));
        assert_eq!(reason(&d, "HWC_1_2#Alert#SNMP"), Some(DropReason::NotInProfiles));
        assert_eq!(reason(&d, "LegacyBootProto"), Some(DropReason::NotInProfiles));
        assert!(d.toml.contains("source = \"scp\""));
        assert!(
            d.toml
                .contains("Server Configuration Profile golden.json exported Wed Feb 3 06:53:31 2021")
        );
        assert!(
            d.toml
                .contains("(components: EventFilters.SystemHealth.1, NIC.Slot.3-1-1)"),
            "{}",
            d.toml
        );
        assert!(!d.toml.contains("192.168") && !d.toml.contains("public"), "{}", d.toml);
        LoadedProfile::from_toml(&d.toml, "derived").unwrap();
    }

    #[test]
    fn named_attributes_widen_the_selection_in_either_spelling_but_never_to_secrets() {
        let sel = ScpSelection::CatalogAnd(vec!["SerialComm".into(), "ServerPwr.1#PowerCapValue".into()]);
        let d = derive(&doc(), "golden.json", "golden", None, &sel, Typing::default()).unwrap();
        assert_eq!(d.bios.get("SerialComm"), Some(&AttributeValue::from("OnConRedirCom1")));
        assert_eq!(
            d.idrac[&AttributeGroup::System].get("ServerPwr.1.PowerCapValue"),
            Some(&AttributeValue::from(176))
        );
        assert_eq!(d.assumed_integers, ["CpuMinSevAsid", "ServerPwr.1.PowerCapValue"]);
        LoadedProfile::from_toml(&d.toml, "derived").unwrap();
        let secret = ScpSelection::CatalogAnd(vec!["IPMILan.1.CommunityName".into()]);
        let e = derive(&doc(), "golden.json", "g", None, &secret, Typing::default()).unwrap_err();
        assert!(e.to_string().contains("never writes it"), "{e}");
        let missing = ScpSelection::CatalogAnd(vec!["NoSuchThing".into()]);
        assert!(derive(&doc(), "golden.json", "g", None, &missing, Typing::default()).is_err());
    }

    #[test]
    fn every_applied_attribute_is_taken_for_a_comparison_but_identity_and_secrets_still_are_not() {
        let (loaded, d) = comparison_profile(&doc(), "golden.json", Typing::default()).unwrap();
        assert_eq!(loaded.name(), "scp-golden.json");
        assert!(d.bios.contains_key("SerialComm"));
        assert!(d.bios.contains_key("CpuMinSevAsid"));
        assert!(!d.bios.contains_key("AssetTag"));
        assert_eq!(reason(&d, "Info.1#Version"), Some(DropReason::NotSetOnImport));
    }
}
