//! Plan files (`rftune.plan/v1`): what an apply will do to each host, written before anything
//! is done so that it can be reviewed, and then applied exactly. Per host: its identity, each
//! attribute's current, pending and desired value with what decided it, the PATCH bodies, whether
//! it reboots, and the state the plan was made from (its [`Basis`]: the values of the profile's
//! attributes and of those their dependency rules read, pending values, open BIOS jobs, BIOS
//! version, registry and the settings' `ETag`) with a digest of it.
//!
//! An apply of a plan re-reads every host before its first write and refuses the host whose
//! basis changed ([`Basis::differences`] says how, attribute by attribute). The whole file is
//! sealed with a SHA-256 over its canonical JSON ([`PlanDocument::seal`]; `merge` reseals): an
//! integrity check against edits and damage, not a signature — anyone who can write the file
//! can reseal it. A plan made by another rftune version, from another profile, or older than
//! the allowed age is refused whole ([`PlanDocument::check`]).

use crate::assess::{Assessment, LoadedProfile};
use crate::backend::AttributeGroup;
use crate::error::{Result, bad_input};
use bios_profiles::{Plan, ResolvedProfile};
use redfish_client::resources::attribute_registry::AttributeRegistry;
use redfish_client::resources::bios::{AttributeValue, Attributes, SettingsApplyTime};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

/// The schema of a plan file.
pub const SCHEMA: &str = "rftune.plan/v1";

/// The rftune version that writes and accepts plans.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanDocument {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The rftune version that made it (an apply by another version refuses it).
    pub rftune_version: String,
    /// The profile, as it was named (a shipped name or a file).
    pub profile: String,
    /// SHA-256 of the profile's definition and those it extends ([`profile_digest`]).
    pub profile_digest: String,
    /// When it was made (RFC 3339, UTC).
    pub created: String,
    /// The apply options it was made with, which its apply uses.
    pub options: PlanOptions,
    /// `K/N` when it was made with `--shard K/N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// One entry per host, in inventory order (by name once merged).
    pub hosts: Vec<PlannedHost>,
    /// Hosts by what the plan does to them.
    pub summary: PlanSummary,
    /// `sha256:HEX` over the canonical JSON of everything else ([`PlanDocument::seal`]).
    #[serde(default)]
    pub integrity: String,
}

/// The apply options a plan was made with: they decide what it writes and whether it reboots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanOptions {
    /// How hosts are rebooted: `graceful`, `force` or `none`.
    pub reboot: String,
    /// When the BIOS values apply.
    pub apply_time: SettingsApplyTime,
    /// Pending work in the way is deleted.
    pub replace_pending: bool,
    /// Attributes the host lacks are errors.
    pub strict: bool,
}

/// What a plan does to one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Something is written.
    Change,
    /// Nothing to write.
    InSync,
    /// The host could not be planned (unreachable, refused, pending work in the way).
    Error,
}

impl PlanStatus {
    /// As the JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Change => "change",
            Self::InSync => "in_sync",
            Self::Error => "error",
        }
    }
}

/// One host's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedHost {
    /// The inventory name.
    pub host: String,
    /// The BMC's URL.
    pub url: String,
    /// What the plan does to it.
    pub status: PlanStatus,
    /// Who the host is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// Every attribute the profile names, with its current, pending and desired value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<PlannedAttribute>,
    /// The bodies that will be sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Patch>,
    /// Whether rftune will reboot the host.
    #[serde(default)]
    pub reboot: bool,
    /// Pending values staged by an earlier rftune run are adopted instead of staged again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adopts_pending: bool,
    /// Pending work that will be deleted first (`--replace-pending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// The state the plan was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// `sha256:HEX` of [`PlannedHost::basis`] ([`Basis::digest`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_digest: Option<String>,
    /// `sha256:HEX` of the profile as resolved for this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_profile: Option<String>,
    /// A sentence for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// Why the host could not be planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What kind of failure that was ([`crate::HostErrorKind`]), for scripts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<crate::HostErrorKind>,
}

/// Who a host is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// `SystemServiceTag`.
    pub service_tag: Option<String>,
    /// `SystemModelName`.
    pub model: Option<String>,
    /// `SystemBiosVersion`.
    pub bios_version: Option<String>,
    /// `Bios.AttributeRegistry`.
    pub registry_id: Option<String>,
}

/// One attribute of a host's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedAttribute {
    /// `BIOS`, or `iDRAC <group>`.
    pub target: String,
    /// The attribute.
    pub attribute: String,
    /// Its current value (`None`: the host has no such attribute).
    pub current: Option<AttributeValue>,
    /// Its pending value, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<AttributeValue>,
    /// The value the plan wants.
    pub desired: AttributeValue,
    /// `write` (in the PATCH), `unlock` (written so the profile's values can be), `keep`.
    pub action: String,
    /// How it compares now (`drift`, `in_sync`, `pending`, `forced`, ...).
    pub status: String,
    /// The profile's source for it (empty for unlocks).
    pub source: String,
    /// What decided the value: the choice made for this host, what forces it, why it unlocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// The bodies a host's apply sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    /// The one BIOS PATCH (`Bios/Settings`), with its apply time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bios: Option<Value>,
    /// The PATCH of the BMC's own boot settings, where its backend keeps the boot order apart
    /// from the BIOS (an iLO's `{"PersistentBootConfigOrder": [...]}`), sent before the BIOS
    /// PATCH for the same reboot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_order: Option<Value>,
    /// The iDRAC attribute PATCHes, by group.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub idrac: BTreeMap<AttributeGroup, Value>,
}

/// The state a host's plan was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Basis {
    /// Current BIOS values: the profile's attributes, the unlocks, and every attribute their
    /// dependency rules read.
    pub bios: Attributes,
    /// Current iDRAC values of the profile's iDRAC attributes, by group.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// Every pending BIOS value.
    pub pending: Attributes,
    /// The open BIOS jobs, `JID_… (State)`.
    pub jobs: Vec<String>,
    /// `SystemServiceTag`.
    pub service_tag: Option<String>,
    /// `SystemBiosVersion`.
    pub bios_version: Option<String>,
    /// `Bios.AttributeRegistry`.
    pub registry_id: Option<String>,
    /// The `ETag` of `Bios/Settings`, where the BMC sends one (it covers pending values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_etag: Option<String>,
}

/// Hosts by what the plan does to them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanSummary {
    /// Hosts planned.
    pub hosts: usize,
    /// Hosts something is written to.
    pub change: usize,
    /// Of those, hosts rftune reboots.
    pub reboot: usize,
    /// Hosts with nothing to write.
    pub in_sync: usize,
    /// Hosts that could not be planned.
    pub error: usize,
}

impl PlanSummary {
    /// The counts of `hosts`.
    pub fn of(hosts: &[PlannedHost]) -> Self {
        let mut s = Self {
            hosts: hosts.len(),
            ..Self::default()
        };
        for h in hosts {
            match h.status {
                PlanStatus::Change => s.change += 1,
                PlanStatus::InSync => s.in_sync += 1,
                PlanStatus::Error => s.error += 1,
            }
            s.reboot += usize::from(h.reboot && h.status == PlanStatus::Change);
        }
        s
    }
}

/// `20 hosts: 3 change, 3 reboot, 16 in sync, 1 error`.
impl std::fmt::Display for PlanSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} hosts: {} change, {} reboot, {} in sync, {} error",
            self.hosts, self.change, self.reboot, self.in_sync, self.error
        )
    }
}

/// `sha256:HEX` of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// JSON with every object's keys in order, no whitespace: the same text for the same content
/// whatever order the fields were written or read in.
pub fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `sha256:HEX` of the canonical JSON of `value`.
pub fn digest_of<T: Serialize>(value: &T) -> String {
    let v = serde_json::to_value(value).unwrap_or(Value::Null);
    sha256(canonical(&v).as_bytes())
}

/// SHA-256 of a profile's definition and of every profile it extends, as loaded: a plan made
/// from this profile is refused by an apply whose profile files say anything else.
pub fn profile_digest(loaded: &LoadedProfile) -> String {
    let mut chain = Vec::new();
    let mut next = Some(loaded.definition());
    while let Some(p) = next {
        chain.push(serde_json::to_value(p).unwrap_or(Value::Null));
        // A cycle is refused when the profile is loaded; the bound only keeps this finite.
        next = p
            .extends
            .as_deref()
            .and_then(|parent| loaded.library().get(parent))
            .filter(|_| chain.len() < 64);
    }
    digest_of(&chain)
}

/// The BIOS attributes whose values decide how the registry's dependency rules treat
/// `attributes` (forced values, read-only, hidden, allowed values): every `MapFromAttribute` of
/// a rule whose `MapToAttribute` is one of them.
pub fn dependency_inputs(registry: &AttributeRegistry, attributes: &BTreeSet<String>) -> BTreeSet<String> {
    registry
        .registry_entries
        .dependencies
        .iter()
        .filter_map(|d| d.dependency.as_ref())
        .filter(|rule| attributes.contains(&rule.map_to_attribute))
        .flat_map(|rule| rule.map_from.iter().map(|c| c.map_from_attribute.clone()))
        .filter(|a| !a.is_empty() && !attributes.contains(a))
        .collect()
}

impl Basis {
    /// The basis of a host's plan: the current values of the BIOS attributes `bios` (the
    /// profile's, the unlocks, and what their rules read) and of the profile's iDRAC
    /// attributes, and everything pending.
    pub fn of(a: &Assessment, bios: &BTreeSet<String>) -> Self {
        let state = &a.state;
        let current = |k: &String| state.bios.get(k).map(|v| (k.clone(), v.clone()));
        let mut idrac: BTreeMap<AttributeGroup, Attributes> = BTreeMap::new();
        for (group, attribute) in a.profile.idrac.keys() {
            if let Some(v) = state.idrac.get(group).and_then(|g| g.get(attribute)) {
                idrac.entry(*group).or_default().insert(attribute.clone(), v.clone());
            }
        }
        Self {
            bios: bios.iter().filter_map(current).collect(),
            idrac,
            pending: state.pending.clone(),
            jobs: state
                .open_bios_jobs()
                .map(|j| format!("{} ({})", j.id, j.job_state))
                .collect(),
            service_tag: state.service_tag.clone(),
            bios_version: state.bios_version.clone(),
            registry_id: state.registry_id.clone(),
            settings_etag: state.settings_etag.clone(),
        }
    }

    /// The BIOS attributes a plan of `a` records: the profile's that the host has, the plan's
    /// unlocks, and every attribute their dependency rules read.
    pub fn attributes_of(a: &Assessment, plan: &Plan) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = a
            .profile
            .bios
            .keys()
            .chain(plan.bios.keys())
            .filter(|k| a.state.bios.contains_key(*k))
            .cloned()
            .collect();
        let inputs = dependency_inputs(&a.state.registry, &names);
        names.extend(inputs.into_iter().filter(|k| a.state.bios.contains_key(k)));
        names
    }

    /// `sha256:HEX` of the basis.
    pub fn digest(&self) -> String {
        digest_of(self)
    }

    /// How `now` differs from this basis, one phrase each
    /// (`ProcCStates was Enabled when planned, is Disabled now`); empty when it does not.
    pub fn differences(&self, now: &Self) -> Vec<String> {
        let mut out = Vec::new();
        let shown = |v: Option<&AttributeValue>| v.map_or_else(|| "absent".to_owned(), ToString::to_string);
        for (k, was) in &self.bios {
            let is = now.bios.get(k);
            if is != Some(was) {
                out.push(format!("{k} was {was} when planned, is {} now", shown(is)));
            }
        }
        for (group, attrs) in &self.idrac {
            for (k, was) in attrs {
                let is = now.idrac.get(group).and_then(|g| g.get(k));
                if is != Some(was) {
                    out.push(format!("iDRAC {k} was {was} when planned, is {} now", shown(is)));
                }
            }
        }
        let keys: BTreeSet<&String> = self.pending.keys().chain(now.pending.keys()).collect();
        for k in keys {
            let (was, is) = (self.pending.get(k), now.pending.get(k));
            if was != is {
                let none = |v: Option<&AttributeValue>| v.map_or_else(|| "nothing".to_owned(), ToString::to_string);
                out.push(format!(
                    "pending {k} was {} when planned, is {} now",
                    none(was),
                    none(is)
                ));
            }
        }
        if self.jobs != now.jobs {
            let list = |j: &[String]| if j.is_empty() { "none".to_owned() } else { j.join(", ") };
            out.push(format!(
                "open BIOS jobs were {} when planned, are {} now",
                list(&self.jobs),
                list(&now.jobs)
            ));
        }
        let mut field = |name: &str, was: &Option<String>, is: &Option<String>| {
            if was != is {
                let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
                out.push(format!("the {name} was {} when planned, is {} now", s(was), s(is)));
            }
        };
        field("service tag", &self.service_tag, &now.service_tag);
        field("BIOS version", &self.bios_version, &now.bios_version);
        field("attribute registry", &self.registry_id, &now.registry_id);
        // The ETag covers the pending values, whose change is named above; a tag that moved
        // with nothing else named still means someone staged and withdrew something.
        if out.is_empty() && self.settings_etag.is_some() && self.settings_etag != now.settings_etag {
            out.push("the pending BIOS settings changed since they were planned (their ETag differs)".into());
        }
        out
    }
}

/// The entries of one host's plan made from `a` and `plan` (what the PATCH writes), with the
/// BIOS body sent with `apply_time`. `reboot`: whether rftune reboots it; `adopts`: pending values
/// of an earlier run are adopted; `replaces`: the pending work deleted first.
#[allow(clippy::too_many_arguments)] // one host's plan, as the apply decided it
pub fn planned_host(
    host: &str,
    url: &str,
    a: &Assessment,
    plan: &Plan,
    apply_time: &SettingsApplyTime,
    reboot: bool,
    adopts: bool,
    replaces: Option<String>,
    summary: String,
) -> PlannedHost {
    let basis = Basis::of(a, &Basis::attributes_of(a, plan));
    let mut attributes: Vec<PlannedAttribute> = a
        .diff
        .changes
        .iter()
        .map(|c| {
            let (target, written) = match &c.target {
                bios_profiles::Target::Bios => ("BIOS".to_owned(), plan.bios.contains_key(&c.attribute)),
                bios_profiles::Target::Idrac(g) => (
                    format!("iDRAC {g}"),
                    plan.idrac.get(g).is_some_and(|attrs| attrs.contains_key(&c.attribute)),
                ),
            };
            let decided_by = c.choice.as_ref().map(|ch| ch.reason.clone()).or_else(|| c.note.clone());
            PlannedAttribute {
                target,
                attribute: c.attribute.clone(),
                current: c.current.clone(),
                pending: c.pending.clone(),
                desired: c.desired.clone(),
                action: if written { "write" } else { "keep" }.to_owned(),
                status: c.status.as_str().to_owned(),
                source: c.source.clone(),
                decided_by,
            }
        })
        .collect();
    for u in &plan.unlocks {
        attributes.push(PlannedAttribute {
            target: "BIOS".into(),
            attribute: u.attribute.clone(),
            current: a.state.bios.get(&u.attribute).cloned(),
            pending: a.state.pending.get(&u.attribute).cloned(),
            desired: u.value.clone(),
            action: "unlock".into(),
            status: "drift".into(),
            source: String::new(),
            decided_by: Some(u.reason.clone()),
        });
    }
    let idrac: BTreeMap<AttributeGroup, Value> = plan
        .idrac
        .iter()
        .filter(|(_, attrs)| !attrs.is_empty())
        .map(|(g, attrs)| (*g, serde_json::json!({"Attributes": attrs})))
        .collect();
    let (values, order) = crate::write::order::split(&a.state.backend, &plan.bios);
    let bios = (!values.is_empty()).then(|| redfish_client::request::settings_body(&values, Some(apply_time)));
    let boot_order = a
        .state
        .backend
        .boot()
        .and_then(|b| b.order_setting())
        .zip(order)
        .map(|(name, order)| serde_json::json!({ name: order }));
    let changes = bios.is_some() || boot_order.is_some() || !idrac.is_empty() || adopts;
    PlannedHost {
        host: host.to_owned(),
        url: url.to_owned(),
        status: if changes {
            PlanStatus::Change
        } else {
            PlanStatus::InSync
        },
        identity: Some(Identity {
            service_tag: a.state.service_tag.clone(),
            model: a.state.model.clone(),
            bios_version: a.state.bios_version.clone(),
            registry_id: a.state.registry_id.clone(),
        }),
        attributes,
        patch: (bios.is_some() || boot_order.is_some() || !idrac.is_empty()).then_some(Patch {
            bios,
            boot_order,
            idrac,
        }),
        reboot: reboot && changes,
        adopts_pending: adopts,
        replaces,
        state_digest: Some(basis.digest()),
        basis: Some(basis),
        resolved_profile: Some(resolved_digest(&a.profile)),
        summary,
        error: None,
        error_kind: None,
    }
}

/// `sha256:HEX` of a profile as resolved for a host.
pub fn resolved_digest(profile: &ResolvedProfile) -> String {
    digest_of(profile)
}

/// The plan entry of a host that could not be planned, for `error`.
pub fn failed_host(host: &str, url: &str, error: &crate::Error) -> PlannedHost {
    PlannedHost {
        host: host.to_owned(),
        url: url.to_owned(),
        status: PlanStatus::Error,
        identity: None,
        attributes: Vec::new(),
        patch: None,
        reboot: false,
        adopts_pending: false,
        replaces: None,
        basis: None,
        state_digest: None,
        resolved_profile: None,
        summary: String::new(),
        error: Some(format!("{error:#}")),
        error_kind: Some(crate::HostErrorKind::of(error)),
    }
}

impl PlannedHost {
    /// The BIOS values the plan writes, with a boot order written apart from the BIOS among
    /// them as the engine carries it (its devices comma-separated, under the backend's name).
    pub fn bios_values(&self) -> Attributes {
        let mut values: Attributes = self
            .patch
            .as_ref()
            .and_then(|p| p.bios.as_ref())
            .and_then(|b| b.get("Attributes"))
            .and_then(|a| serde_json::from_value(a.clone()).ok())
            .unwrap_or_default();
        let order = self
            .patch
            .as_ref()
            .and_then(|p| p.boot_order.as_ref())
            .and_then(Value::as_object);
        for (name, devices) in order.into_iter().flatten() {
            let devices: Vec<&str> = devices
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            values.insert(name.clone(), devices.join(",").into());
        }
        values
    }

    /// The iDRAC values the plan writes, by group.
    pub fn idrac_values(&self) -> BTreeMap<AttributeGroup, Attributes> {
        self.patch
            .iter()
            .flat_map(|p| &p.idrac)
            .filter_map(|(g, body)| Some((*g, serde_json::from_value(body.get("Attributes")?.clone()).ok()?)))
            .collect()
    }
}

/// Why a host's plan cannot be applied now, as the one sentence an apply reports: `None` when
/// it can. `now`: the host's state re-read before the first write, over the plan's attributes.
pub fn staleness(host: &str, planned: &PlannedHost, now: &Basis, resolved_now: &str) -> Option<String> {
    let mut why = match &planned.basis {
        Some(basis) => basis.differences(now),
        None => vec!["the plan records no state for it".into()],
    };
    if why.is_empty() && planned.resolved_profile.as_deref() != Some(resolved_now) {
        why.push("the profile resolves differently for it now".into());
    }
    (!why.is_empty()).then(|| format!("plan is stale for {host}: {}; run `rftune plan` again", why.join("; ")))
}

impl PlanDocument {
    /// A document of `hosts`, sealed.
    pub fn new(
        profile: &LoadedProfile,
        profile_ref: &str,
        options: PlanOptions,
        shard: Option<String>,
        hosts: Vec<PlannedHost>,
    ) -> Self {
        let mut doc = Self {
            schema: SCHEMA.into(),
            rftune_version: VERSION.into(),
            profile: profile_ref.to_owned(),
            profile_digest: profile_digest(profile),
            created: host_bench::utc_now_seconds(),
            options,
            shard,
            summary: PlanSummary::of(&hosts),
            hosts,
            integrity: String::new(),
        };
        doc.seal();
        doc
    }

    /// The integrity of the document's content: SHA-256 of its canonical JSON without the
    /// `integrity` field.
    pub fn content_digest(&self) -> String {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.remove("integrity");
        }
        sha256(canonical(&v).as_bytes())
    }

    /// Recounts the summary and sets `integrity` for the content as it is now.
    pub fn seal(&mut self) {
        self.summary = PlanSummary::of(&self.hosts);
        self.integrity = self.content_digest();
    }

    /// Reads a plan file: its schema, then its integrity, then its fields. `file` names it in
    /// errors.
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| crate::Error::bad_input(format!("plan {file} is not JSON: {e}")))?;
        if v["schema"].as_str() != Some(SCHEMA) {
            bad_input!(
                "{file} is not a plan file (its schema is {}, a plan's is {SCHEMA}); write one with `rftune plan`",
                v["schema"]
            );
        }
        let stated = v["integrity"].as_str().unwrap_or_default().to_owned();
        let mut content = v.clone();
        if let Value::Object(map) = &mut content {
            map.remove("integrity");
        }
        let actual = sha256(canonical(&content).as_bytes());
        if stated != actual {
            bad_input!(
                "plan {file} fails its integrity check (it says {}, its content is {actual}): it was edited or damaged after it was written; make a new one with `rftune plan` (`rftune merge` reseals merged plans)",
                if stated.is_empty() { "nothing" } else { &stated }
            );
        }
        let doc: Self = serde_json::from_value(v)
            .map_err(|e| crate::Error::bad_input(format!("plan {file} does not have the fields of {SCHEMA}: {e}")))?;
        // The content digest covers what was read; one recomputed from the parsed document
        // must agree, or a field was lost in reading.
        if doc.content_digest() != actual {
            bad_input!("plan {file} holds fields this rftune does not keep; make a new one with `rftune plan`");
        }
        Ok(doc)
    }

    /// Whether the plan may be applied whole: made by this rftune, from `profile` as its files
    /// say now, and no older than `max_age` at `now` (nor made in the future).
    pub fn check(&self, file: &str, profile: &LoadedProfile, max_age: Duration, now: SystemTime) -> Result<()> {
        if self.rftune_version != VERSION {
            bad_input!(
                "plan {file} was made by rftune {}, this is rftune {VERSION}: make a new plan with this version",
                self.rftune_version
            );
        }
        let created = humantime::parse_rfc3339(&self.created)
            .map_err(|e| crate::Error::bad_input(format!("plan {file}: created {:?}: {e}", self.created)))?;
        match now.duration_since(created) {
            Ok(age) if age > max_age => bad_input!(
                "plan {file} was made {} ago ({}), more than --max-plan-age {}: hosts may have changed since it was reviewed; make a new plan",
                humantime::format_duration(Duration::from_secs(age.as_secs())),
                self.created,
                humantime::format_duration(max_age)
            ),
            Ok(_) => {}
            Err(ahead) if ahead.duration() > Duration::from_secs(300) => bad_input!(
                "plan {file} says it was made at {}, {} in the future: check this machine's clock",
                self.created,
                humantime::format_duration(Duration::from_secs(ahead.duration().as_secs()))
            ),
            Err(_) => {}
        }
        let digest = profile_digest(profile);
        if digest != self.profile_digest {
            bad_input!(
                "plan {file} was made from another version of profile {} (its definition, or one it extends, changed since): make a new plan",
                self.profile
            );
        }
        Ok(())
    }

    /// The plan of the host called `name`.
    pub fn host(&self, name: &str) -> Option<&PlannedHost> {
        self.hosts.iter().find(|h| h.host == name)
    }
}

/// Several plans (the shards of one `rftune plan --shard K/N` run) as one, resealed: one rftune
/// version, profile and options; no host twice. `files` name them in errors.
pub fn merge(plans: Vec<(String, PlanDocument)>) -> Result<PlanDocument> {
    let Some((first_file, first)) = plans.first() else {
        bad_input!("give at least one plan to merge");
    };
    let (first_file, first) = (first_file.clone(), first.clone());
    let mut hosts: BTreeMap<String, (PlannedHost, String)> = BTreeMap::new();
    let mut created = first.created.clone();
    for (file, plan) in plans {
        if plan.rftune_version != first.rftune_version
            || plan.profile_digest != first.profile_digest
            || plan.profile != first.profile
            || plan.options != first.options
        {
            bad_input!(
                "cannot merge {first_file} with {file}: they were made by different rftune versions, profiles or options; merge the plans of one run"
            );
        }
        // The oldest part decides how old the merged plan is.
        if humantime::parse_rfc3339(&plan.created).ok() < humantime::parse_rfc3339(&created).ok() {
            created.clone_from(&plan.created);
        }
        for h in plan.hosts {
            if let Some((_, other)) = hosts.get(&h.host) {
                bad_input!("host {} is in both {other} and {file}: the plans overlap", h.host);
            }
            hosts.insert(h.host.clone(), (h, file.clone()));
        }
    }
    let mut doc = PlanDocument {
        shard: None,
        created,
        hosts: hosts.into_values().map(|(h, _)| h).collect(),
        ..first
    };
    doc.seal();
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, &str)]) -> Attributes {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect()
    }

    fn basis() -> Basis {
        Basis {
            bios: attrs(&[("ProcCStates", "Enabled"), ("SysProfile", "Custom")]),
            idrac: BTreeMap::new(),
            pending: Attributes::new(),
            jobs: Vec::new(),
            service_tag: Some("ABC1234".into()),
            bios_version: Some("1.8.2".into()),
            registry_id: Some("BiosAttributeRegistry.v1_0_3".into()),
            settings_etag: Some("W/\"1\"".into()),
        }
    }

    fn host(basis: Basis) -> PlannedHost {
        PlannedHost {
            basis: Some(basis),
            resolved_profile: Some("sha256:r".into()),
            ..failed_host("r1", "https://127.0.0.1:9001", &crate::Error::bad_input(""))
        }
    }

    #[test]
    fn canonical_json_ignores_field_order_and_whitespace() {
        let a: Value = serde_json::from_str(r#"{"b": [1, {"y": 2, "x": "é"}], "a": null}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#).unwrap();
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), r#"{"a":null,"b":[1,{"x":"é","y":2}]}"#);
        assert_eq!(digest_of(&a), digest_of(&b));
        assert!(digest_of(&a).starts_with("sha256:") && digest_of(&a).len() == 71);
    }

    #[test]
    fn a_changed_value_pending_value_job_or_firmware_makes_the_plan_stale_and_says_what() {
        let planned = host(basis());
        assert_eq!(staleness("r1", &planned, &basis(), "sha256:r"), None, "the same state");
        let mut now = basis();
        now.bios.insert("ProcCStates".into(), "Disabled".into());
        assert_eq!(
            staleness("r1", &planned, &now, "sha256:r").as_deref(),
            Some(
                "plan is stale for r1: ProcCStates was Enabled when planned, is Disabled now; run `rftune plan` again"
            )
        );
        let mut now = basis();
        now.pending.insert("MemTest".into(), "Enabled".into());
        now.jobs.push("JID_1 (Scheduled)".into());
        now.bios_version = Some("1.9.0".into());
        now.settings_etag = Some("W/\"2\"".into());
        let why = basis().differences(&now);
        assert_eq!(
            why,
            [
                "pending MemTest was nothing when planned, is Enabled now",
                "open BIOS jobs were none when planned, are JID_1 (Scheduled) now",
                "the BIOS version was 1.8.2 when planned, is 1.9.0 now",
            ]
        );
        let mut now = basis();
        now.registry_id = Some("BiosAttributeRegistry.v1_1_0".into());
        assert_eq!(
            basis().differences(&now),
            [
                "the attribute registry was BiosAttributeRegistry.v1_0_3 when planned, is BiosAttributeRegistry.v1_1_0 now"
            ]
        );
        // Only the ETag moved: something was staged and withdrawn in between.
        let mut now = basis();
        now.settings_etag = Some("W/\"3\"".into());
        assert_eq!(basis().differences(&now).len(), 1);
        // The profile resolves differently (other facts, or another profile).
        let why = staleness("r1", &planned, &basis(), "sha256:other").unwrap();
        assert!(why.contains("the profile resolves differently"), "{why}");
    }

    #[test]
    fn the_basis_digest_changes_with_the_state_and_not_with_its_order() {
        let a = basis();
        let mut b = basis();
        b.bios = attrs(&[("SysProfile", "Custom"), ("ProcCStates", "Enabled")]);
        assert_eq!(a.digest(), b.digest());
        b.bios.insert("ProcCStates".into(), "Disabled".into());
        assert_ne!(a.digest(), b.digest());
    }

    fn document() -> PlanDocument {
        let mut doc = PlanDocument {
            schema: SCHEMA.into(),
            rftune_version: VERSION.into(),
            profile: "performance".into(),
            profile_digest: "sha256:p".into(),
            created: "2026-03-01T10:00:00Z".into(),
            options: PlanOptions {
                reboot: "graceful".into(),
                apply_time: SettingsApplyTime::on_reset(),
                replace_pending: false,
                strict: false,
            },
            shard: None,
            hosts: vec![host(basis())],
            summary: PlanSummary::default(),
            integrity: String::new(),
        };
        doc.seal();
        doc
    }

    #[test]
    fn a_sealed_plan_reads_back_and_an_edited_one_fails_its_integrity_check() {
        let doc = document();
        let text = serde_json::to_string_pretty(&doc).unwrap();
        assert_eq!(PlanDocument::parse(&text, "plan.json").unwrap(), doc);
        // Reformatted (keys reordered, compact): the same content, still valid.
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(PlanDocument::parse(&canonical(&v), "plan.json").is_ok());
        let edited = text.replace("\"Enabled\"", "\"Disabled\"");
        let err = PlanDocument::parse(&edited, "plan.json").unwrap_err().to_string();
        assert!(
            err.contains("fails its integrity check") && err.contains("edited or damaged"),
            "{err}"
        );
        let unsealed = text.replace(&doc.integrity, "");
        assert!(PlanDocument::parse(&unsealed, "plan.json").is_err());
        let other = text.replace(SCHEMA, "rftune.apply/v1");
        assert!(
            PlanDocument::parse(&other, "plan.json")
                .unwrap_err()
                .to_string()
                .contains("not a plan file")
        );
    }

    #[test]
    fn merged_plans_are_resealed_and_overlaps_refused() {
        let mut a = document();
        a.shard = Some("1/2".into());
        a.seal();
        let mut b = document();
        b.hosts[0].host = "r2".into();
        b.created = "2026-03-01T09:00:00Z".into();
        b.seal();
        let merged = merge(vec![("a".into(), a.clone()), ("b".into(), b)]).unwrap();
        assert_eq!(merged.hosts.len(), 2);
        assert_eq!(merged.summary.hosts, 2);
        assert_eq!(merged.created, "2026-03-01T09:00:00Z", "as old as its oldest part");
        assert_eq!(merged.integrity, merged.content_digest());
        let err = merge(vec![("a".into(), a.clone()), ("a2".into(), a.clone())]).unwrap_err();
        assert!(err.to_string().contains("host r1 is in both a and a2"), "{err}");
        let mut other = a.clone();
        other.options.reboot = "none".into();
        assert!(merge(vec![("a".into(), a), ("o".into(), other)]).is_err());
    }

    #[test]
    fn the_summary_counts_changes_reboots_syncs_and_errors() {
        let mut change = host(basis());
        change.status = PlanStatus::Change;
        change.reboot = true;
        let mut sync = host(basis());
        sync.status = PlanStatus::InSync;
        let error = failed_host("r3", "u", &crate::Error::bad_input("unreachable"));
        let s = PlanSummary::of(&[change, sync, error]);
        assert_eq!(s.to_string(), "3 hosts: 1 change, 1 reboot, 1 in sync, 1 error");
    }
}
