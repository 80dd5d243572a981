//! The managed set: every knob the shipped workload profiles set, per CPU generation
//! (`profiles/dell/managed.toml`), and which of them a resolved profile leaves unmanaged.
//!
//! rftune keeps no record of what it last applied to a host, so a knob the new profile does not
//! set keeps the value the old one wrote. The shipped workload profiles therefore each set
//! every knob of this set (or leave it alone on purpose, saying why), and a host reaches the
//! same state whichever of them it had before. Overlays (iDRAC cooling) set knobs outside it,
//! which no workload switch undoes. A vendor binding maps these knobs, named as Dell names
//! them, to its own attributes.

use crate::error::{Error, Result};
use crate::host::Generation;
use crate::library::ResolvedProfile;
use crate::setting::Unchecked;
use crate::verdict::Target;
use redfish_client::oem::dell::AttributeGroup;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The shipped managed set.
pub const SHIPPED_MANAGED: &str = include_str!("../profiles/dell/managed.toml");

/// One knob the shipped workload profiles manage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Knob {
    /// Where the attribute lives.
    #[serde(flatten)]
    pub target: Target,
    /// The attribute, as Dell names it (`ApbDis`, `ServerPwr.1.PowerCapSetting`).
    pub attribute: String,
    /// What the knob's group is, in a few words.
    pub why: String,
    /// The generations on which the shipped workload profiles set it.
    pub generations: Vec<Generation>,
    /// Only on hosts with this many sockets (the xGMI links).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sockets: Option<u32>,
    /// Only while another knob holds one of these values (the BIOS hides it otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matters_while: Option<Gate>,
}

/// A knob that matters only while another holds one of some values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// The other knob.
    pub attribute: String,
    /// Its values under which this knob matters.
    pub values: Vec<String>,
}

/// The managed set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ManagedSet {
    /// Every knob, in file order.
    pub knobs: Vec<Knob>,
    /// The profile every workload profile's chain reaches (`base`).
    pub workloads_extend: String,
    /// The shipped overlays: profiles applied beside a workload profile, whose knobs no
    /// workload profile sets.
    pub overlays: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSet {
    workloads_extend: String,
    #[serde(default)]
    overlays: Vec<String>,
    knobs: Vec<RawGroup>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroup {
    why: String,
    generations: Vec<Generation>,
    #[serde(default)]
    sockets: Option<u32>,
    #[serde(default)]
    matters_while: Option<Gate>,
    #[serde(default)]
    bios: Vec<String>,
    #[serde(default)]
    idrac: Vec<String>,
    #[serde(default)]
    group: Option<AttributeGroup>,
}

impl ManagedSet {
    /// The shipped managed set, parsed once.
    pub fn shipped() -> Result<&'static Self> {
        static SET: OnceLock<ManagedSet> = OnceLock::new();
        if let Some(set) = SET.get() {
            return Ok(set);
        }
        let parsed = Self::from_toml(SHIPPED_MANAGED, "profiles/dell/managed.toml")?;
        Ok(SET.get_or_init(|| parsed))
    }

    /// Parses a managed-set file: `workloads_extend`, `overlays` and `[[knobs]]` groups.
    pub fn from_toml(text: &str, file: &str) -> Result<Self> {
        let raw: RawSet = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
        let mut knobs = Vec::new();
        for g in raw.knobs {
            if !g.idrac.is_empty() && g.group.is_none() {
                return Err(Error::Format {
                    file: file.to_owned(),
                    position: None,
                    message: format!("knobs {} are iDRAC attributes: give their `group`", g.idrac.join(", ")),
                });
            }
            let targets = g.bios.iter().map(|a| (Target::Bios, a)).chain(
                g.idrac
                    .iter()
                    .map(|a| (Target::Idrac(g.group.unwrap_or(AttributeGroup::System)), a)),
            );
            for (target, attribute) in targets {
                knobs.push(Knob {
                    target,
                    attribute: attribute.clone(),
                    why: g.why.clone(),
                    generations: g.generations.clone(),
                    sockets: g.sockets,
                    matters_while: g.matters_while.clone(),
                });
            }
        }
        Ok(Self {
            knobs,
            workloads_extend: raw.workloads_extend,
            overlays: raw.overlays,
        })
    }

    /// The knobs managed on a host of `generation` with `sockets` (unknown: every socket count).
    pub fn on(&self, generation: Generation, sockets: Option<u32>) -> impl Iterator<Item = &Knob> {
        self.knobs.iter().filter(move |k| {
            k.generations.contains(&generation) && (k.sockets.is_none() || sockets.is_none() || k.sockets == sockets)
        })
    }

    /// The first group's knob for `target` and `attribute`, if it is managed on any generation
    /// (a knob can sit in one group per set of generations: DfCState on Genoa and on Turin).
    pub fn knob(&self, target: Target, attribute: &str) -> Option<&Knob> {
        self.knobs
            .iter()
            .find(|k| k.target == target && k.attribute == attribute)
    }

    /// The knobs `profile` (resolved for a host of known generation) leaves unmanaged: it
    /// neither sets them nor leaves them alone on purpose, they apply to its host, and no knob
    /// they depend on is set to a value that hides them. A setting the host's facts leave
    /// unresolved (the SEV ASID split without the CPU's maximum) counts as set: the profile
    /// says why it is left; so does one without evidence for the host's generation, which
    /// stays as the host has it (and makes the host unverified). Empty for a shipped workload profile: the tests check it.
    pub fn unmanaged_by<'a>(&'a self, profile: &ResolvedProfile) -> Vec<&'a Knob> {
        let Some(generation) = profile.host.generation else {
            return Vec::new();
        };
        let set = |k: &Knob| match k.target {
            Target::Bios => profile.bios.contains_key(&k.attribute),
            Target::Idrac(group) => profile.idrac.contains_key(&(group, k.attribute.clone())),
        };
        let left = |k: &Knob| {
            profile
                .left
                .iter()
                .any(|l| l.target == k.target && l.attribute == k.attribute)
                || profile.skipped.iter().any(|s| {
                    s.target == k.target
                        && s.setting.attribute == k.attribute
                        && (matches!(s.setting.wanted, crate::setting::Wanted::SevAsids { .. })
                            || s.kind == Unchecked::NoEvidence)
                })
        };
        let gated_off = |k: &Knob| {
            k.matters_while.as_ref().is_some_and(|gate| {
                profile.bios.get(&gate.attribute).is_some_and(|s| {
                    s.wanted.candidates().is_some_and(|values| {
                        !values
                            .iter()
                            .any(|v| v.as_str().is_some_and(|t| gate.values.iter().any(|g| g == t)))
                    })
                })
            })
        };
        self.on(generation, profile.host.sockets)
            .filter(|k| !set(k) && !left(k) && !gated_off(k))
            .collect()
    }
}

/// The value `gate` asks for, for messages: `ApbDis = Enabled`.
impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}", self.attribute, self.values.join(" or "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn groups_become_knobs_with_their_conditions() {
        let set = ManagedSet::from_toml(SHIPPED_MANAGED, "managed.toml").unwrap();
        let width = set.knob(Target::Bios, "DlwmForcedWidth").unwrap();
        assert_eq!(width.sockets, Some(2));
        assert_eq!(
            width.matters_while.as_ref().unwrap().to_string(),
            "DynamicLinkWidthManagement = Force or Forced"
        );
        let cap = set.knob(Target::Idrac(AttributeGroup::System), "ServerPwr.1.PowerCapSetting");
        assert!(cap.is_some());
        let turin: BTreeSet<&str> = set
            .on(Generation::Turin, Some(2))
            .map(|k| k.attribute.as_str())
            .collect();
        assert_eq!(
            turin,
            BTreeSet::from(["SysProfile", "DfCState", "IommuSupport", "ServerPwr.1.PowerCapSetting"]),
            "Turin: the preset, AMD's two Instinct knobs and the power cap"
        );
        let one_socket: Vec<&str> = set
            .on(Generation::Genoa, Some(1))
            .map(|k| k.attribute.as_str())
            .collect();
        assert!(one_socket.contains(&"DfCState") && !one_socket.contains(&"DynamicLinkWidthManagement"));
        let err = ManagedSet::from_toml(
            "workloads_extend = \"base\"\n[[knobs]]\nwhy = \"w\"\ngenerations = [\"rome\"]\nidrac = [\"X.1.Y\"]\n",
            "m.toml",
        )
        .unwrap_err();
        assert!(err.to_string().contains("give their `group`"), "{err}");
    }
}
