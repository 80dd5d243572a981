//! Vendor bindings: the managed set's knobs, named as Dell names them, written as another
//! vendor's attributes and tokens (`profiles/hpe/binding.toml`), and a resolved profile bound
//! to a vendor.
//!
//! Profiles are written once, in Dell's names (the canonical vocabulary). A binding maps each
//! knob of the managed set to the vendor's attribute(s) and tokens, with the writes that
//! enable them (HPE's Custom Workload Profile, manual determinism control), or says why the
//! vendor has no equivalent; a bound profile then validates, diffs and plans against the
//! vendor's registry like any other. A name the binding does not know passes through as it
//! is, so a profile can still name a vendor's attribute directly, and that naming wins over a
//! bound knob writing the same attribute.

use crate::error::{Error, Result};
use crate::library::{ResolvedProfile, Skipped};
use crate::managed::ManagedSet;
use crate::setting::{Confidence, Setting, Unchecked, Wanted, When};
use crate::sources::{Source, Sources};
use crate::verdict::{Severity, Target};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::attribute_registry::{AttributeProperty, AttributeRegistry, AttributeType};
use redfish_client::resources::bios::AttributeValue;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// The shipped HPE binding.
pub const SHIPPED_HPE: &str = include_str!("../profiles/hpe/binding.toml");

/// A BIOS vendor a profile can be bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// Dell PowerEdge (iDRAC): the profiles' own names.
    Dell,
    /// HPE ProLiant (iLO 5/6/7).
    Hpe,
}

impl Vendor {
    /// Every vendor.
    pub const ALL: [Self; 2] = [Self::Dell, Self::Hpe];

    /// The name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dell => "dell",
            Self::Hpe => "hpe",
        }
    }

    /// The name in prose (`HPE`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Dell => "Dell",
            Self::Hpe => "HPE",
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Vendor {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown vendor `{s}`: use dell or hpe"))
    }
}

/// What one managed knob is on a vendor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KnobBinding {
    /// The vendor's attribute(s) and tokens.
    Bound(Bound),
    /// The vendor has no equivalent.
    Unbound {
        /// Why, in one line.
        reason: String,
        /// The source that shows it.
        source: String,
    },
}

/// A knob written as the vendor's attribute(s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bound {
    /// The vendor's attributes, each written with the same value (HPE's per-NBIO link clocks).
    pub attributes: Vec<String>,
    /// Dell token → vendor token. Empty: the value is written as it is (integers).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, String>,
    /// The vendor's switch means the opposite of Dell's (`ApbDis` against
    /// `ApplicationPowerBoost`); the value map swaps Enabled and Disabled.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inverted: bool,
    /// Values another knob writes instead (Dell's `Force` of the xGMI links is the width
    /// `DlwmForcedWidth` gives).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carried_by: Option<Carried>,
    /// The enabling writes it needs, by id.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enable: Vec<String>,
    /// The source that shows the vendor's attribute.
    pub source: String,
    /// What that source shows.
    pub evidence: String,
    /// The vendor tokens a real host was seen running with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<String>,
    /// Why the binding is our reading rather than the same option under another name; a bound
    /// setting is then `inferred`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred: Option<String>,
    /// Only the vendor's document lists the attribute; the recorded host's registry lacks it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub documented_only: bool,
}

/// Values of a knob that another knob writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Carried {
    /// The other knob (bound to the same attribute).
    pub knob: String,
    /// This knob's values it carries.
    pub when: Vec<String>,
}

/// Writes that make bound values take effect, in the same PATCH.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Enabling {
    /// The id knobs name in `enable`.
    pub id: String,
    /// Attribute → value.
    pub writes: BTreeMap<String, String>,
    /// Why they are needed, in one line.
    pub why: String,
    /// The source that shows it.
    pub source: String,
    /// What that source shows.
    pub evidence: String,
}

/// A vendor's binding of the managed set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Binding {
    /// The vendor.
    pub vendor: Vendor,
    knobs: BTreeMap<(Target, String), KnobBinding>,
    enabling: BTreeMap<String, Enabling>,
    sources: Sources,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBinding {
    vendor: Vendor,
    #[serde(default)]
    sources: BTreeMap<String, Source>,
    #[serde(default)]
    enabling: BTreeMap<String, RawEnabling>,
    #[serde(default)]
    bios: BTreeMap<String, RawKnob>,
    #[serde(default)]
    idrac: BTreeMap<String, RawKnob>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnabling {
    writes: BTreeMap<String, String>,
    why: String,
    source: String,
    evidence: String,
}

#[derive(Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Polarity {
    Inverted,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKnob {
    #[serde(default)]
    attribute: Option<String>,
    #[serde(default)]
    attributes: Vec<String>,
    #[serde(default)]
    values: BTreeMap<String, String>,
    #[serde(default)]
    polarity: Option<Polarity>,
    #[serde(default)]
    carried_by: Option<Carried>,
    #[serde(default)]
    enable: Vec<String>,
    #[serde(default)]
    group: Option<AttributeGroup>,
    #[serde(default)]
    unbound: Option<String>,
    source: String,
    #[serde(default)]
    evidence: Option<String>,
    #[serde(default)]
    seen: Vec<String>,
    #[serde(default)]
    inferred: Option<String>,
    #[serde(default)]
    documented_only: bool,
}

impl RawKnob {
    /// The knob as the binding keeps it, or what is wrong with its entry.
    fn into_binding(self, label: &str, problems: &mut Vec<String>) -> Option<KnobBinding> {
        let mut problem = |m: String| problems.push(format!("{label}: {m}"));
        if let Some(reason) = self.unbound {
            let bound_fields = self.attribute.is_some()
                || !self.attributes.is_empty()
                || !self.values.is_empty()
                || self.polarity.is_some()
                || self.carried_by.is_some()
                || !self.enable.is_empty()
                || self.evidence.is_some()
                || !self.seen.is_empty()
                || self.inferred.is_some()
                || self.documented_only;
            if bound_fields {
                problem("an unbound knob takes only `unbound` and `source` (and `group` for an iDRAC knob)".into());
                return None;
            }
            return Some(KnobBinding::Unbound {
                reason,
                source: self.source,
            });
        }
        let attributes: Vec<String> = self.attribute.into_iter().chain(self.attributes).collect();
        if attributes.is_empty() {
            problem("give the vendor's `attribute` (or `attributes`), or say why it is `unbound`".into());
            return None;
        }
        let Some(evidence) = self.evidence else {
            problem("a bound knob needs its `evidence`: what its source shows".into());
            return None;
        };
        let inverted = self.polarity == Some(Polarity::Inverted);
        let swapped: BTreeMap<String, String> = [("Enabled", "Disabled"), ("Disabled", "Enabled")]
            .into_iter()
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect();
        if inverted && self.values != swapped {
            problem(
                "`polarity = \"inverted\"` needs values = { Enabled = \"Disabled\", Disabled = \"Enabled\" }".into(),
            );
        }
        let produced: BTreeSet<&String> = self.values.values().collect();
        for token in &self.seen {
            if !self.values.is_empty() && !produced.contains(token) {
                problem(format!("`seen` lists {token}, which none of its values writes"));
            }
        }
        if let Some(carried) = &self.carried_by
            && let Some(both) = carried.when.iter().find(|t| self.values.contains_key(*t))
        {
            problem(format!("{both} is both in `values` and carried by {}", carried.knob));
        }
        Some(KnobBinding::Bound(Bound {
            attributes,
            values: self.values,
            inverted,
            carried_by: self.carried_by,
            enable: self.enable,
            source: self.source,
            evidence,
            seen: self.seen,
            inferred: self.inferred,
            documented_only: self.documented_only,
        }))
    }
}

impl Binding {
    /// The shipped binding of `vendor`, checked against the shipped managed set and parsed
    /// once; `None` for Dell, whose names the profiles already use.
    pub fn shipped(vendor: Vendor) -> Result<Option<&'static Self>> {
        static HPE: OnceLock<Binding> = OnceLock::new();
        match vendor {
            Vendor::Dell => Ok(None),
            Vendor::Hpe => {
                if let Some(b) = HPE.get() {
                    return Ok(Some(b));
                }
                let parsed = Self::from_toml(SHIPPED_HPE, "profiles/hpe/binding.toml", ManagedSet::shipped()?)?;
                Ok(Some(HPE.get_or_init(|| parsed)))
            }
        }
    }

    /// Whether a shipped vendor binding writes `attribute`: a real attribute of that vendor,
    /// absent on some of its hosts (validation calls it not applicable there, not unknown).
    /// Whether this binding writes `attribute` of the vendor's BIOS (a knob's or an enabling
    /// write's target).
    fn writes(&self, attribute: &str) -> bool {
        self.enabling.values().any(|e| e.writes.contains_key(attribute))
            || self.knobs.values().any(|k| match k {
                KnobBinding::Bound(bound) => bound.attributes.iter().any(|a| a == attribute),
                KnobBinding::Unbound { .. } => false,
            })
    }

    pub(crate) fn shipped_writes(attribute: &str) -> bool {
        Vendor::ALL
            .into_iter()
            .any(|v| Self::shipped(v).ok().flatten().is_some_and(|b| b.writes(attribute)))
    }

    /// Parses a binding file and checks it: every knob of `managed` bound or unbound, no other
    /// knob, every enabling write, carrying knob and source it names defined, an inverted
    /// polarity a swap of Enabled and Disabled, and every token seen one its values write.
    pub fn from_toml(text: &str, file: &str, managed: &ManagedSet) -> Result<Self> {
        let raw: RawBinding = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        let mut problems = Vec::new();
        let sources = Sources::default().with(raw.sources.into_iter().map(|(id, mut s)| {
            s.id = id;
            s
        }));
        let enabling: BTreeMap<String, Enabling> = raw
            .enabling
            .into_iter()
            .map(|(id, e)| {
                let enabling = Enabling {
                    id: id.clone(),
                    writes: e.writes,
                    why: e.why,
                    source: e.source,
                    evidence: e.evidence,
                };
                (id, enabling)
            })
            .collect();
        let mut knobs = BTreeMap::new();
        for (name, knob) in raw.bios {
            if knob.group.is_some() {
                problems.push(format!("bios.{name}: `group` is for iDRAC knobs"));
            }
            if let Some(b) = knob.into_binding(&format!("bios.{name}"), &mut problems) {
                knobs.insert((Target::Bios, name), b);
            }
        }
        for (name, knob) in raw.idrac {
            let Some(group) = knob.group else {
                problems.push(format!("idrac.{name}: give its `group`"));
                continue;
            };
            if let Some(b) = knob.into_binding(&format!("idrac.{name}"), &mut problems) {
                knobs.insert((Target::Idrac(group), name), b);
            }
        }
        let binding = Self {
            vendor: raw.vendor,
            knobs,
            enabling,
            sources,
        };
        problems.extend(binding.reference_problems());
        problems.extend(binding.coverage_problems(managed));
        if problems.is_empty() {
            Ok(binding)
        } else {
            Err(Error::problems(file, problems.into_iter().map(|m| (None, m)).collect()))
        }
    }

    /// Names the file uses that it does not define.
    fn reference_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut source = |label: &str, id: &str| {
            if !self.sources.contains(id) {
                problems.push(format!("{label}: source `{id}` is not among the file's [sources]"));
            }
        };
        for e in self.enabling.values() {
            source(&format!("enabling.{}", e.id), &e.source);
        }
        for ((target, name), knob) in &self.knobs {
            match knob {
                KnobBinding::Unbound { source: id, .. } => source(&label(*target, name), id),
                KnobBinding::Bound(b) => source(&label(*target, name), &b.source),
            }
        }
        for ((target, name), knob) in &self.knobs {
            let KnobBinding::Bound(b) = knob else { continue };
            for id in &b.enable {
                if !self.enabling.contains_key(id) {
                    problems.push(format!(
                        "{}: enabling write `{id}` is not defined",
                        label(*target, name)
                    ));
                }
            }
            if b.documented_only && self.sources.get(&b.source).is_none_or(|s| s.generations.is_empty()) {
                problems.push(format!(
                    "{}: a documented-only attribute needs a source naming the generations it documents",
                    label(*target, name)
                ));
            }
            if let Some(carried) = &b.carried_by {
                match self.knobs.get(&(*target, carried.knob.clone())) {
                    Some(KnobBinding::Bound(other)) if other.attributes == b.attributes => {}
                    _ => problems.push(format!(
                        "{}: carried by {}, which must be bound to the same attribute(s)",
                        label(*target, name),
                        carried.knob
                    )),
                }
            }
        }
        problems
    }

    /// Managed knobs the binding does not mention, and knobs it mentions that are not managed.
    fn coverage_problems(&self, managed: &ManagedSet) -> Vec<String> {
        let mut problems: Vec<String> = managed
            .knobs
            .iter()
            .filter(|k| !self.knobs.contains_key(&(k.target, k.attribute.clone())))
            .map(|k| {
                format!(
                    "{}: a managed knob with no entry; bind it, or say why it is `unbound`",
                    label(k.target, &k.attribute)
                )
            })
            .collect();
        for (target, name) in self.knobs.keys() {
            if managed.knob(*target, name).is_none() {
                problems.push(format!("{}: not a knob of the managed set", label(*target, name)));
            }
        }
        problems
    }

    /// What `target`/`knob` is on this vendor, if the binding knows it.
    pub fn knob(&self, target: Target, knob: &str) -> Option<&KnobBinding> {
        self.knobs.get(&(target, knob.to_owned()))
    }

    /// Every knob, by target and Dell name.
    pub fn knobs(&self) -> impl Iterator<Item = (Target, &str, &KnobBinding)> {
        self.knobs.iter().map(|((t, n), b)| (*t, n.as_str(), b))
    }

    /// The enabling writes, by id.
    pub fn enabling(&self) -> impl Iterator<Item = &Enabling> {
        self.enabling.values()
    }

    /// The documents the binding cites.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// The binding checked against a vendor registry: every attribute it writes exists there,
    /// every token it writes (and every token seen) is in the attribute's list, an enumeration
    /// has a value map, an attribute written unmapped is an integer, and every attribute an
    /// enabling write's attributes lock or force names that enabling write. An attribute only
    /// the vendor's document lists is a warning when the registry lacks it.
    pub fn check_registry(&self, registry: &AttributeRegistry) -> Vec<RegistryProblem> {
        let index = registry.index();
        let mut problems = Vec::new();
        for e in self.enabling.values() {
            for (attribute, value) in &e.writes {
                let problem = match index.get(attribute.as_str()) {
                    None => Some("the registry has no such attribute".to_owned()),
                    Some(a) => a
                        .check(&AttributeValue::from(value.as_str()))
                        .err()
                        .map(|p| format!("{value}: {p}")),
                };
                if let Some(message) = problem {
                    problems.push(RegistryProblem::error(format!("enabling.{}", e.id), attribute, message));
                }
            }
        }
        for ((target, name), knob) in &self.knobs {
            let KnobBinding::Bound(b) = knob else { continue };
            let knob_label = label(*target, name);
            for attribute in &b.attributes {
                let Some(a) = index.get(attribute.as_str()) else {
                    let mut p = RegistryProblem::error(
                        knob_label.clone(),
                        attribute,
                        "the registry has no such attribute".into(),
                    );
                    if b.documented_only {
                        p.severity = Severity::Warning;
                        p.message.push_str(" (only the vendor's document lists it)");
                    }
                    problems.push(p);
                    continue;
                };
                let mut problem = |message: String| {
                    problems.push(RegistryProblem::error(knob_label.clone(), attribute, message));
                };
                match (a.kind, b.values.is_empty()) {
                    (AttributeType::Enumeration, true) => {
                        problem("an enumeration: list its tokens in `values`, the same ones included".into());
                    }
                    (AttributeType::Integer, true) => {}
                    (kind, true) => problem(format!("a {kind} written unmapped; only integers may be")),
                    (_, false) => {}
                }
                for token in b.values.values().chain(&b.seen) {
                    // A token seen on an integer attribute is its number.
                    let value = match (a.kind, token.parse::<i64>()) {
                        (AttributeType::Integer, Ok(n)) => AttributeValue::Integer(n),
                        _ => AttributeValue::from(token.as_str()),
                    };
                    if let Err(p) = a.check(&value) {
                        problem(format!("{token}: {p}"));
                    }
                }
            }
        }
        problems.extend(self.lock_problems(registry));
        problems
    }

    /// Bound attributes that an enabling write's attributes lock or force, by a knob that does
    /// not name that enabling write.
    fn lock_problems(&self, registry: &AttributeRegistry) -> Vec<RegistryProblem> {
        let mut problems = Vec::new();
        for e in self.enabling.values() {
            let locked: BTreeSet<&str> = registry
                .registry_entries
                .dependencies
                .iter()
                .filter_map(|d| d.dependency.as_ref())
                .filter(|rule| {
                    matches!(
                        rule.map_to_property,
                        AttributeProperty::CurrentValue | AttributeProperty::ReadOnly | AttributeProperty::GrayOut
                    ) && !rule.map_from.is_empty()
                        && rule
                            .map_from
                            .iter()
                            .all(|c| e.writes.contains_key(&c.map_from_attribute))
                })
                .map(|rule| rule.map_to_attribute.as_str())
                .collect();
            for ((target, name), knob) in &self.knobs {
                let KnobBinding::Bound(b) = knob else { continue };
                if b.enable.contains(&e.id) {
                    continue;
                }
                for attribute in b.attributes.iter().filter(|a| locked.contains(a.as_str())) {
                    problems.push(RegistryProblem::error(
                        label(*target, name),
                        attribute,
                        format!(
                            "the registry's rules on {} lock or force it: add `{}` to its `enable`",
                            e.writes.keys().cloned().collect::<Vec<_>>().join(" and "),
                            e.id
                        ),
                    ));
                }
            }
        }
        problems
    }

    /// `profile` (resolved in Dell's names) bound to this vendor: each managed knob written as
    /// the vendor's attribute(s) with its value mapped, the enabling writes the bound knobs
    /// need added, and a knob the vendor has no equivalent for (or a value with no vendor
    /// token) kept as a skipped setting with the reason, which diff reports `not_applicable`.
    /// Names the binding does not know pass through; a vendor attribute the profile names
    /// itself wins over a bound knob or an enabling write that would write it.
    pub fn bind(&self, profile: &ResolvedProfile) -> Result<BoundProfile> {
        let mut out = profile.clone();
        out.bios.clear();
        out.idrac.clear();
        let mut knobs = Vec::new();
        let mut settings: Vec<(Target, Setting)> = Vec::new();
        // A name with no knob is the vendor's own; so is a name this vendor's BIOS uses itself
        // (one its bindings write) when its value is no Dell token the knob maps: HPE's
        // `WorkloadProfile = Custom` is HPE's preset selector, not Dell's workload profile, as
        // a profile derived from an HPE host's snapshot names it.
        let direct: BTreeSet<&str> = profile
            .bios
            .iter()
            .filter(|(name, s)| match self.knob(Target::Bios, name) {
                None => true,
                Some(KnobBinding::Bound(b)) => self.writes(name) && b.map_wanted(&s.wanted).is_none(),
                Some(KnobBinding::Unbound { .. }) => self.writes(name),
            })
            .map(|(name, _)| name.as_str())
            .collect();
        for (name, s) in &profile.bios {
            if direct.contains(name.as_str()) {
                out.bios.insert(name.clone(), s.clone());
            } else {
                settings.push((Target::Bios, s.clone()));
            }
        }
        for ((group, name), s) in &profile.idrac {
            match self.knob(Target::Idrac(*group), name) {
                None => {
                    out.idrac.insert((*group, name.clone()), s.clone());
                }
                Some(_) => settings.push((Target::Idrac(*group), s.setting.clone())),
            }
        }
        let mut needed: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (target, s) in settings {
            let Some(knob) = self.knob(target, &s.attribute) else {
                continue;
            };
            let outcome = self.bind_one(target, &s, knob, &direct, &mut out, &mut needed)?;
            knobs.push(BoundKnob {
                target,
                knob: s.attribute.clone(),
                outcome,
            });
        }
        let mut enabled = Vec::new();
        for (id, for_knobs) in needed {
            let Some(e) = self.enabling.get(&id) else { continue };
            for (attribute, value) in &e.writes {
                let wanted = AttributeValue::from(value.as_str());
                let added = match out.bios.get(attribute) {
                    Some(_) if direct.contains(attribute.as_str()) => false,
                    // A bound knob asking for the same single value already writes it.
                    Some(existing) if existing.wanted.candidates() == Some(vec![wanted.clone()]) => false,
                    Some(existing) => {
                        return Err(conflict(
                            &profile.name,
                            self.vendor,
                            attribute,
                            &existing.wanted.to_string(),
                            &format!("{value} (enabling write {id})"),
                        ));
                    }
                    None => {
                        out.bios
                            .insert(attribute.clone(), enabling_setting(e, attribute, &wanted, &for_knobs));
                        true
                    }
                };
                enabled.push(EnabledWrite {
                    id: id.clone(),
                    attribute: attribute.clone(),
                    value: value.clone(),
                    for_knobs: for_knobs.clone(),
                    added,
                });
            }
        }
        // Platform limits already took their values out of the settings; keep those the vendor
        // has, in its names.
        out.limits = profile
            .limits
            .iter()
            .filter_map(|l| {
                let Some(KnobBinding::Bound(b)) = self.knob(Target::Bios, &l.attribute) else {
                    return None;
                };
                let mut l = l.clone();
                l.values = l.values.iter().filter_map(|v| b.map_value(v)).collect();
                l.attribute = b.attributes.first()?.clone();
                (!l.values.is_empty()).then_some(l)
            })
            .collect();
        for l in &mut out.left {
            if let Some(KnobBinding::Bound(b)) = self.knob(l.target, &l.attribute)
                && let Some(first) = b.attributes.first()
            {
                l.target = Target::Bios;
                l.attribute.clone_from(first);
            }
        }
        Ok(BoundProfile {
            vendor: self.vendor,
            profile: out,
            knobs,
            enabled,
        })
    }

    /// Binds one Dell-named setting of a known knob into `out`, recording the enabling writes
    /// it needs.
    fn bind_one(
        &self,
        target: Target,
        s: &Setting,
        knob: &KnobBinding,
        direct: &BTreeSet<&str>,
        out: &mut ResolvedProfile,
        needed: &mut BTreeMap<String, Vec<String>>,
    ) -> Result<KnobOutcome> {
        let vendor = self.vendor.name();
        let skip = |out: &mut ResolvedProfile, reason: String| {
            out.skipped.push(Skipped {
                target,
                setting: s.clone(),
                reason: reason.clone(),
                // The vendor has no such setting: left out on purpose, not for lack of evidence.
                kind: Unchecked::Excluded,
            });
            KnobOutcome::NotApplicable { reason }
        };
        let b = match knob {
            KnobBinding::Unbound { reason, .. } => {
                return Ok(skip(out, format!("no {vendor} equivalent: {reason}")));
            }
            KnobBinding::Bound(b) => b,
        };
        if let Some(carried) = &b.carried_by
            && s.wanted.candidates().is_some_and(|values| {
                !values.is_empty()
                    && values
                        .iter()
                        .all(|v| v.as_str().is_some_and(|t| carried.when.iter().any(|w| w == t)))
            })
        {
            return Ok(KnobOutcome::Carried {
                by: carried.knob.clone(),
                attributes: b.attributes.clone(),
            });
        }
        let Some(wanted) = b.map_wanted(&s.wanted) else {
            let mapped: Vec<&str> = b.values.keys().map(String::as_str).collect();
            return Ok(skip(
                out,
                format!(
                    "{vendor} has no counterpart of {} for {}; it binds {}",
                    s.wanted,
                    b.attributes.join(", "),
                    if mapped.is_empty() {
                        "integers only".to_owned()
                    } else {
                        mapped.join(", ")
                    }
                ),
            ));
        };
        let mut written = Vec::new();
        let mut overridden = Vec::new();
        for attribute in &b.attributes {
            if direct.contains(attribute.as_str()) {
                overridden.push(attribute.clone());
                continue;
            }
            let mut bound = s.clone();
            bound.attribute.clone_from(attribute);
            bound.bound_from = Some(s.attribute.clone());
            bound.wanted = wanted.clone();
            bound.excluded = s
                .excluded
                .iter()
                .filter_map(|e| {
                    let mut e = e.clone();
                    e.value = b.map_value(&e.value)?;
                    Some(e)
                })
                .collect();
            for d in &mut bound.decisions {
                d.rules_out = d.rules_out.iter().filter_map(|v| b.map_value(v)).collect();
                d.fallback = d.fallback.as_ref().and_then(|v| b.map_value(v));
            }
            if let Some(why) = &b.inferred {
                bound.infer_here(format!("{} on Dell; {why}", s.confidence));
            }
            if b.documented_only {
                // Only the vendor's document lists it, for the generations that document
                // covers: elsewhere a host lacking it is not applicable, not a typo.
                bound.generations = self
                    .sources
                    .get(&b.source)
                    .map(|source| source.generations.clone())
                    .unwrap_or_default();
            }
            match out.bios.get(attribute) {
                Some(existing) if existing.wanted != bound.wanted => {
                    return Err(conflict(
                        &out.name,
                        self.vendor,
                        attribute,
                        &existing.wanted.to_string(),
                        &format!("{} (from {})", bound.wanted, s.attribute),
                    ));
                }
                Some(_) => {}
                None => {
                    out.bios.insert(attribute.clone(), bound);
                }
            }
            written.push(attribute.clone());
        }
        if written.is_empty() {
            return Ok(KnobOutcome::Overridden { attributes: overridden });
        }
        for id in &b.enable {
            needed.entry(id.clone()).or_default().push(s.attribute.clone());
        }
        Ok(KnobOutcome::Bound {
            attributes: written,
            wanted: wanted.to_string(),
            inverted: b.inverted,
            enable: b.enable.clone(),
            source: b.source.clone(),
            evidence: b.evidence.clone(),
            seen: b.seen.clone(),
            overridden,
        })
    }
}

impl Bound {
    /// A Dell value as the vendor's token: mapped, or as it is when the binding has no map.
    fn map_value(&self, value: &AttributeValue) -> Option<AttributeValue> {
        if self.values.is_empty() {
            return Some(value.clone());
        }
        let token = value.as_str()?;
        self.values.get(token).map(|t| AttributeValue::from(t.as_str()))
    }

    /// What the setting asks for, in the vendor's tokens (a value with no counterpart dropped
    /// from a list of choices); `None` when nothing is left.
    fn map_wanted(&self, wanted: &Wanted) -> Option<Wanted> {
        let mapped = |values: &[AttributeValue]| -> Vec<AttributeValue> {
            let mut out: Vec<AttributeValue> = Vec::new();
            for v in values.iter().filter_map(|v| self.map_value(v)) {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            out
        };
        match wanted {
            Wanted::Value(v) => self.map_value(v).map(Wanted::Value),
            Wanted::Prefer(values) => {
                Some(Wanted::Prefer(mapped(values))).filter(|w| w.candidates().is_some_and(|c| !c.is_empty()))
            }
            Wanted::Accept { intent, tokens } => {
                let values: Vec<AttributeValue> = tokens.iter().map(|t| AttributeValue::from(t.as_str())).collect();
                let tokens: Vec<String> = mapped(&values)
                    .into_iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect();
                (!tokens.is_empty()).then(|| Wanted::Accept {
                    intent: intent.clone(),
                    tokens,
                })
            }
            Wanted::Derive(_) | Wanted::SevAsids { .. } => self.values.is_empty().then(|| wanted.clone()),
        }
    }
}

/// The setting an enabling write adds.
fn enabling_setting(e: &Enabling, attribute: &str, value: &AttributeValue, for_knobs: &[String]) -> Setting {
    Setting {
        attribute: attribute.to_owned(),
        wanted: Wanted::Value(value.clone()),
        why: e.why.clone(),
        source: e.source.clone(),
        confidence: Confidence::Inferred,
        confidence_note: None,
        quote: None,
        generations: Vec::new(),
        when: When::default(),
        origin: format!("binding ({}) for {}", e.id, for_knobs.join(", ")),
        excluded: Vec::new(),
        decisions: Vec::new(),
        asid_split: None,
        bound_from: None,
    }
}

fn conflict(profile: &str, vendor: Vendor, attribute: &str, one: &str, other: &str) -> Error {
    Error::Binding {
        profile: profile.to_owned(),
        vendor: vendor.name().to_owned(),
        message: format!("{attribute} would be written twice, as {one} and as {other}; name it once"),
    }
}

/// `bios.ApbDis`, `idrac.ServerPwr.1.PowerCapSetting`: a knob as the binding file names it.
fn label(target: Target, name: &str) -> String {
    match target {
        Target::Bios => format!("bios.{name}"),
        Target::Idrac(_) => format!("idrac.{name}"),
    }
}

/// A problem of a binding against a vendor registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegistryProblem {
    /// The knob or enabling write (`bios.ApbDis`, `enabling.determinism-manual`).
    pub entry: String,
    /// The vendor attribute.
    pub attribute: String,
    /// What is wrong.
    pub message: String,
    /// An error, or a warning for an attribute only the vendor's document lists.
    pub severity: Severity,
}

impl RegistryProblem {
    fn error(entry: String, attribute: &str, message: String) -> Self {
        Self {
            entry,
            attribute: attribute.to_owned(),
            message,
            severity: Severity::Error,
        }
    }
}

impl fmt::Display for RegistryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.entry, self.attribute, self.message)
    }
}

/// A resolved profile in a vendor's names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundProfile {
    /// The vendor.
    pub vendor: Vendor,
    /// The profile in the vendor's attribute names and tokens; what the vendor has no
    /// equivalent for is among its skipped settings, in Dell's names, with the reason.
    pub profile: ResolvedProfile,
    /// What became of each managed knob the profile sets.
    pub knobs: Vec<BoundKnob>,
    /// The enabling writes the bound knobs asked for.
    pub enabled: Vec<EnabledWrite>,
}

impl BoundProfile {
    /// `profile` as it is, for the vendor whose names it already uses.
    pub fn unbound(vendor: Vendor, profile: &ResolvedProfile) -> Self {
        Self {
            vendor,
            profile: profile.clone(),
            knobs: Vec::new(),
            enabled: Vec::new(),
        }
    }
}

/// What became of one managed knob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BoundKnob {
    /// Where the Dell attribute lives.
    #[serde(flatten)]
    pub target: Target,
    /// The knob, as Dell names it.
    pub knob: String,
    /// What it became.
    #[serde(flatten)]
    pub outcome: KnobOutcome,
}

/// What a knob became on the vendor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum KnobOutcome {
    /// Written as the vendor's attribute(s).
    Bound {
        /// The vendor attributes written.
        attributes: Vec<String>,
        /// The value, in the vendor's tokens.
        wanted: String,
        /// The vendor's switch means the opposite of Dell's.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        inverted: bool,
        /// The enabling writes it asked for.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        enable: Vec<String>,
        /// The source that shows the vendor's attribute.
        source: String,
        /// What that source shows.
        evidence: String,
        /// The vendor tokens a real host was seen running with.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        seen: Vec<String>,
        /// Its attributes the profile names itself, which it leaves to that naming.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        overridden: Vec<String>,
    },
    /// Its value is written by another knob bound to the same attribute(s).
    Carried {
        /// The other knob.
        by: String,
        /// The attribute(s).
        attributes: Vec<String>,
    },
    /// The profile names the vendor's attribute(s) itself, which wins.
    Overridden {
        /// The attribute(s).
        attributes: Vec<String>,
    },
    /// The vendor has no equivalent, or no token for the value: diff reports it so.
    NotApplicable {
        /// Why.
        reason: String,
    },
}

/// One enabling write and whether the binding added it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnabledWrite {
    /// The enabling write's id.
    pub id: String,
    /// The attribute.
    pub attribute: String,
    /// The value.
    pub value: String,
    /// The knobs that asked for it.
    pub for_knobs: Vec<String>,
    /// False when the profile already writes the attribute (the same value, or its own
    /// naming, which wins).
    pub added: bool,
}

/// `profile` bound to `vendor` with the shipped binding (Dell: as it is).
pub fn bind(profile: &ResolvedProfile, vendor: Vendor) -> Result<BoundProfile> {
    match Binding::shipped(vendor)? {
        None => Ok(BoundProfile::unbound(vendor, profile)),
        Some(binding) => binding.bind(profile),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn managed() -> ManagedSet {
        ManagedSet::from_toml(
            "workloads_extend = \"base\"\n[[knobs]]\nwhy = \"w\"\ngenerations = [\"milan\"]\nbios = [\"ApbDis\", \"Snp\"]\n",
            "m.toml",
        )
        .unwrap()
    }

    const HEAD: &str = "vendor = \"hpe\"\n[sources.s]\ntitle = \"T\"\npublisher = \"P\"\n[enabling.e]\nwrites = { A = \"B\" }\nwhy = \"w\"\nsource = \"s\"\nevidence = \"e\"\n";

    #[test]
    fn a_binding_must_cover_the_managed_set_and_name_only_what_it_defines() {
        let text = format!(
            "{HEAD}[bios.ApbDis]\nattribute = \"ApplicationPowerBoost\"\nvalues = {{ Enabled = \"Enabled\", Disabled = \"Disabled\" }}\npolarity = \"inverted\"\nenable = [\"nope\"]\nsource = \"gone\"\nevidence = \"e\"\n[bios.Extra]\nunbound = \"r\"\nsource = \"s\"\n"
        );
        let err = Binding::from_toml(&text, "b.toml", &managed()).unwrap_err().to_string();
        for expected in [
            "bios.ApbDis: `polarity = \"inverted\"` needs values",
            "bios.ApbDis: source `gone` is not among the file's [sources]",
            "bios.ApbDis: enabling write `nope` is not defined",
            "bios.Snp: a managed knob with no entry",
            "bios.Extra: not a knob of the managed set",
        ] {
            assert!(err.contains(expected), "{expected} in:\n{err}");
        }
    }

    #[test]
    fn vendors_parse_from_their_names() {
        assert_eq!("HPE".parse::<Vendor>(), Ok(Vendor::Hpe));
        assert_eq!(" dell ".parse::<Vendor>(), Ok(Vendor::Dell));
        assert!("lenovo".parse::<Vendor>().unwrap_err().contains("use dell or hpe"));
    }

    #[test]
    fn values_map_through_choices_and_drop_what_has_no_counterpart() {
        let b = Bound {
            attributes: vec!["NumaMemoryDomainsPerSocket".into()],
            values: [("1", "One"), ("4", "Four")]
                .into_iter()
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .collect(),
            inverted: false,
            carried_by: None,
            enable: Vec::new(),
            source: "s".into(),
            evidence: "e".into(),
            seen: Vec::new(),
            inferred: None,
            documented_only: false,
        };
        let prefer = Wanted::Prefer(vec!["4".into(), "2".into(), "1".into()]);
        assert_eq!(
            b.map_wanted(&prefer),
            Some(Wanted::Prefer(vec!["Four".into(), "One".into()]))
        );
        assert_eq!(b.map_wanted(&Wanted::Value("0".into())), None);
        assert_eq!(b.map_wanted(&Wanted::Value(AttributeValue::Integer(1))), None);
        let accept = Wanted::Accept {
            intent: "i".into(),
            tokens: vec!["2".into()],
        };
        assert_eq!(b.map_wanted(&accept), None);
    }
}
