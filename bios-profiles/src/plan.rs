//! The plan: the minimal BIOS and iDRAC writes that bring a host to a profile.
//!
//! Also the automatic unlocks those writes need, and a simulation of what the BIOS shows after
//! the job.

use crate::analysis::overlaid;
use crate::choose::Choice;
use crate::error::{Error, Result};
use crate::host::HostView;
use crate::library::ResolvedProfile;
use crate::validate::{ValidateOptions, check_bios};
use crate::verdict::{Severity, Unlock, Verdict};
use redfish_client::dependencies::DependencyEvaluator;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::Attributes;
use serde::Serialize;
use std::collections::BTreeMap;

/// What to write: BIOS attributes (one PATCH of `Bios/Settings`, then a job and a reboot)
/// and iDRAC attributes (one PATCH per `DellAttributes` group, applied at once).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    /// BIOS attributes to PATCH, unlocks included.
    pub bios: Attributes,
    /// iDRAC attributes to PATCH, by group.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// The BIOS entries that are unlocks rather than profile settings.
    pub unlocks: Vec<Unlock>,
    /// How this host's values were chosen for settings that are not fixed, by attribute
    /// (also those the host offers nothing for, which the plan leaves out).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub choices: BTreeMap<String, Choice>,
}

impl Plan {
    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        self.bios.is_empty() && self.idrac.values().all(Attributes::is_empty)
    }

    /// Whether the BIOS entry `attribute` is an unlock.
    pub fn is_unlock(&self, attribute: &str) -> bool {
        self.unlocks.iter().any(|u| u.attribute == attribute)
    }
}

/// Plans the writes that bring the `host` to `profile`.
///
/// BIOS: an attribute is written when its current value differs from the value the profile
/// wants on this host (as written, or chosen from the registry — see [`crate::choose`]) and
/// no dependency in the planned state forces that value, plus the automatic unlocks. Settings
/// whose choices the host offers none of are left out, as are attributes it lacks. After the job (current
/// values overlaid with the plan, then every forced value applied — see [`simulate`]), the
/// diff is clean. iDRAC: attributes whose current value differs; attributes the host lacks
/// are left out. Fails with [`Error::Invalid`] when validation finds errors (warnings, such as
/// attributes absent on this host, do not block).
pub fn plan(profile: &ResolvedProfile, host: &HostView<'_>) -> Result<Plan> {
    let checked = check_bios(profile, host, &ValidateOptions::default());
    if checked.violations.iter().any(|v| v.severity == Severity::Error) {
        return Err(Error::Invalid {
            profile: profile.name.clone(),
            violations: checked.violations,
        });
    }
    let analysis = checked.analysis;
    let desired = checked.desired;
    let mut bios: Attributes = analysis
        .unlocks
        .iter()
        .map(|u| (u.attribute.clone(), u.value.clone()))
        .collect();
    for (name, verdict) in &analysis.verdicts {
        if *verdict == Verdict::Write
            && let Some(value) = desired.get(name)
        {
            bios.insert(name.clone(), value.clone());
        }
    }
    let mut idrac: BTreeMap<AttributeGroup, Attributes> = BTreeMap::new();
    for ((group, name), s) in &profile.idrac {
        let now = host.idrac.get(group).and_then(|a| a.get(name));
        if let Some(value) = s.value()
            && now.is_some_and(|v| v != value)
        {
            idrac.entry(*group).or_default().insert(name.clone(), value.clone());
        }
    }
    Ok(Plan {
        bios,
        idrac,
        unlocks: analysis.unlocks,
        choices: checked.choices,
    })
}

/// What the BIOS shows after the plan's job: the `host`'s current values overlaid with the
/// plan's BIOS values, then every `CurrentValue` dependency of its registry applied (pending
/// values play no part: the plan's job replaces them). Entries the registry does not define, or that
/// are read-only or hidden in that state, are dropped first, as firmware that refuses or
/// ignores writes to locked attributes would. Attributes hidden afterwards are left out, as a
/// real iDRAC's `GET …/Bios` leaves them out.
pub fn simulate(host: &HostView<'_>, plan: &Plan) -> Attributes {
    let (registry, current) = (host.registry, host.bios);
    let mut evaluator = DependencyEvaluator::new(registry);
    if !current.is_empty() {
        evaluator = evaluator.with_listing(current.keys());
    }
    let evaluation = evaluator.evaluate(&overlaid(current, &plan.bios));
    let accepted: Attributes = plan
        .bios
        .iter()
        .filter(|(name, _)| {
            evaluator.attribute(name).is_some() && !evaluation.is_read_only(name) && !evaluation.is_hidden(name)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let evaluation = if accepted.len() == plan.bios.len() {
        evaluation
    } else {
        evaluator.evaluate(&overlaid(current, &accepted))
    };
    evaluation
        .values()
        .iter()
        .filter(|(name, _)| !evaluation.is_hidden(name))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What the `host`'s `DellAttributes` show after the plan's iDRAC PATCHes (applied
/// immediately).
pub fn simulate_idrac(host: &HostView<'_>, plan: &Plan) -> BTreeMap<AttributeGroup, Attributes> {
    let mut out = host.idrac.clone();
    for (group, values) in &plan.idrac {
        let attributes = out.entry(*group).or_default();
        for (k, v) in values {
            attributes.insert(k.clone(), v.clone());
        }
    }
    out
}
