//! Desired vs current vs pending, per attribute, with a status: the report `rftune diff` prints.

use crate::choose::Choice;
use crate::host::HostView;
use crate::library::ResolvedProfile;
use crate::setting::{Confidence, Setting, Unchecked};
use crate::validate::{Checked, ValidateOptions, check_bios};
use crate::verdict::{Target, Verdict, render_conditions};
use redfish_client::dependencies::Flag;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::AttributeValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// How an attribute compares with the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The host has the desired value (and nothing pending changes it).
    InSync,
    /// The host differs and nothing pending fixes it: the plan writes it.
    Drift,
    /// The desired value is pending and applies at the next reboot.
    Pending,
    /// A pending value differs from the desired one.
    PendingConflict,
    /// The host has no such attribute, or the setting is for other CPU generations.
    NotApplicable,
    /// The host differs, but a dependency in the planned state forces the desired value, so
    /// the plan does not write it itself.
    Forced,
}

impl Status {
    /// Every status, in report order.
    pub const ALL: [Self; 6] = [
        Self::InSync,
        Self::Drift,
        Self::Pending,
        Self::PendingConflict,
        Self::NotApplicable,
        Self::Forced,
    ];

    /// The spelling used in JSON and output (`pending_conflict`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InSync => "in_sync",
            Self::Drift => "drift",
            Self::Pending => "pending",
            Self::PendingConflict => "pending_conflict",
            Self::NotApplicable => "not_applicable",
            Self::Forced => "forced",
        }
    }

    /// Whether a host with this status needs nothing more (in sync or not applicable).
    pub fn is_clean(self) -> bool {
        matches!(self, Self::InSync | Self::NotApplicable)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One attribute of the profile compared with the host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Where it lives (`"target": "bios"` or `"target": "idrac", "group": "System"`).
    #[serde(flatten)]
    pub target: Target,
    /// The attribute.
    pub attribute: String,
    /// The profile's value.
    pub desired: AttributeValue,
    /// The host's current value; `None` when it has no such attribute.
    pub current: Option<AttributeValue>,
    /// The value pending for the next reboot, if any (BIOS only).
    pub pending: Option<AttributeValue>,
    /// How they compare.
    pub status: Status,
    /// Why the profile wants it.
    pub why: String,
    /// The source id backing it.
    pub source: String,
    /// How sure we are of the value desired on this host.
    pub confidence: Confidence,
    /// Why that is less sure than the profile file says: the source does not cover this host's
    /// generation, or the host's value is a fallback of ours for a first choice ruled out here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence_note: Option<String>,
    /// Extra detail: what forces it, why it does not apply, why it cannot be written.
    pub note: Option<String>,
    /// For a `not_applicable` setting, which kind of reason `note` gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<Unchecked>,
    /// For a setting whose value the host decides (ordered choices, accepted tokens, a
    /// derived bound): what was asked, what was picked, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice: Option<Choice>,
}

/// How many changes have each status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StatusCounts {
    /// `in_sync`.
    pub in_sync: usize,
    /// `drift`.
    pub drift: usize,
    /// `pending`.
    pub pending: usize,
    /// `pending_conflict`.
    pub pending_conflict: usize,
    /// `not_applicable`.
    pub not_applicable: usize,
    /// `forced`.
    pub forced: usize,
    /// Of the `not_applicable`, those with no evidence for the host's generation: settings
    /// rftune could not check, which keep a host from being called in sync.
    pub unverified: usize,
}

impl StatusCounts {
    /// The count for `status`.
    pub fn get(&self, status: Status) -> usize {
        match status {
            Status::InSync => self.in_sync,
            Status::Drift => self.drift,
            Status::Pending => self.pending,
            Status::PendingConflict => self.pending_conflict,
            Status::NotApplicable => self.not_applicable,
            Status::Forced => self.forced,
        }
    }

    /// The settings not in sync with the profile: drift, pending, pending conflict or forced
    /// (what `diff` lists for a host).
    pub fn not_in_sync(&self) -> usize {
        self.drift + self.pending + self.pending_conflict + self.forced
    }

    /// The host's verdict from its counts: drift when anything needs writing or is pending
    /// (drift, pending, a pending conflict, a forced change), else unverified when a setting
    /// could not be checked for lack of evidence, else in sync.
    pub fn verdict(&self) -> HostVerdict {
        if self.not_in_sync() > 0 {
            HostVerdict::Drift
        } else if self.unverified > 0 {
            HostVerdict::Unverified
        } else {
            HostVerdict::InSync
        }
    }

    fn bump(&mut self, status: Status) {
        let slot = match status {
            Status::InSync => &mut self.in_sync,
            Status::Drift => &mut self.drift,
            Status::Pending => &mut self.pending,
            Status::PendingConflict => &mut self.pending_conflict,
            Status::NotApplicable => &mut self.not_applicable,
            Status::Forced => &mut self.forced,
        };
        *slot += 1;
    }
}

/// The comparison of a host with a profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// The profile's name.
    pub profile: String,
    /// BIOS attributes by name, then iDRAC attributes by group and name.
    pub changes: Vec<Change>,
}

impl Diff {
    /// No drift, pending, pending conflict or forced change: the host matches the profile.
    pub fn is_clean(&self) -> bool {
        self.changes.iter().all(|c| c.status.is_clean())
    }

    /// How many changes have each status.
    pub fn counts(&self) -> StatusCounts {
        let mut counts = StatusCounts::default();
        for c in &self.changes {
            counts.bump(c.status);
            if c.not_applicable == Some(Unchecked::NoEvidence) {
                counts.unverified += 1;
            }
        }
        counts
    }

    /// The changes with `status`.
    pub fn with_status(&self, status: Status) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(move |c| c.status == status)
    }

    /// How many settings could not be checked for lack of evidence for the host's generation.
    pub fn unverified(&self) -> usize {
        self.counts().unverified
    }

    /// The host's verdict: drift when anything needs writing or is pending, else unverified when
    /// a setting could not be checked for lack of evidence (not proven in sync), else in sync.
    pub fn verdict(&self) -> HostVerdict {
        self.counts().verdict()
    }
}

/// What a diff says of a host as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostVerdict {
    /// Every setting checked has the profile's value, and every setting was checked.
    InSync,
    /// Nothing checked differs, but some settings could not be checked on this host's
    /// generation for lack of evidence: not proven in sync.
    Unverified,
    /// Something needs writing, or something pending does.
    Drift,
}

/// Compares the `host` with `profile`: its BIOS's current and pending (`Bios/Settings`)
/// values, and its `DellAttributes` by group.
///
/// "Forced" is judged on the planned state, as for [`crate::plan::plan`]: current values
/// overlaid with the profile's values and unlocks.
pub fn diff(profile: &ResolvedProfile, host: &HostView<'_>) -> Diff {
    diff_checked(profile, host, &check_bios(profile, host, &ValidateOptions::default()))
}

/// [`diff`], from the BIOS check of `profile` on `host` made with the default options (the
/// same check for every host whose values that matter to it are the same: [`crate::memo`]).
pub(crate) fn diff_checked(profile: &ResolvedProfile, host: &HostView<'_>, checked: &Checked) -> Diff {
    let (current, pending, idrac_current) = (host.bios, host.pending, host.idrac);
    let problems: BTreeMap<&str, String> = checked
        .violations
        .iter()
        .map(|v| (v.attribute.as_str(), v.message()))
        .collect();
    let mut bios: BTreeMap<&str, Change> = BTreeMap::new();
    for (name, s) in &profile.bios {
        let now = current.get(name);
        let choice = checked.choices.get(name).cloned();
        // The value this host should have: as written, or as chosen from its registry.
        let desired = checked
            .desired
            .get(name)
            .cloned()
            .or_else(|| s.wanted.first())
            .unwrap_or(AttributeValue::Null);
        // The same verdicts decide the plan, so diff and plan always agree.
        let (status, note) = match checked.analysis.verdicts.get(name) {
            None if choice.as_ref().is_some_and(|c| c.chosen.is_none()) => (
                Status::NotApplicable,
                choice
                    .as_ref()
                    .map(|c| format!("unavailable on this host: {}", c.reason)),
            ),
            None if now.is_none() => (Status::NotApplicable, Some("not on this host".to_owned())),
            verdict => {
                let status = compare(&desired, now, pending.get(name), verdict);
                let note = match (status, verdict) {
                    (Status::Forced, Some(Verdict::Forced { because })) => {
                        Some(format!("set by the BIOS because {}", render_conditions(because)))
                    }
                    (Status::PendingConflict, _) => pending
                        .get(name)
                        .map(|p| format!("pending value {p} would replace the desired one at the next reboot")),
                    (Status::Drift, Some(Verdict::Write)) if now.is_none() => Some(
                        "hidden now; the other values of this plan make the BIOS show it, so it is written with them"
                            .to_owned(),
                    ),
                    _ => problems.get(name.as_str()).cloned(),
                };
                // Say which choice was made, unless the first one was taken as it is.
                let note = match (&choice, note) {
                    (Some(c), None) if !c.is_first_choice() => Some(format!("chose {desired}: {}", c.reason)),
                    (Some(c), Some(n)) if !c.is_first_choice() => Some(format!("{n}; chose {desired}: {}", c.reason)),
                    (_, note) => note,
                };
                (status, note)
            }
        };
        let mut c = change(Target::Bios, s, now, pending.get(name), status, note);
        c.desired = desired;
        // A fallback the host chose is as sure as our reasoning, not as the source.
        if let Some(choice) = &choice
            && choice.confidence != c.confidence
        {
            c.confidence = choice.confidence;
            if c.confidence_note.is_none()
                && let (Some(first), Some(chosen)) = (choice.candidates.first(), &choice.chosen)
            {
                c.confidence_note = Some(format!(
                    "{} for {first}, the first choice; {chosen}, taken in its place on this host, is our fallback",
                    s.confidence
                ));
            }
        }
        c.choice = choice;
        bios.insert(name, c);
    }
    for skipped in &profile.skipped {
        if skipped.target == Target::Bios && !bios.contains_key(skipped.setting.attribute.as_str()) {
            let name = skipped.setting.attribute.as_str();
            let mut c = change(
                Target::Bios,
                &skipped.setting,
                current.get(name),
                pending.get(name),
                Status::NotApplicable,
                Some(skipped.reason.clone()),
            );
            c.not_applicable = Some(skipped.kind);
            bios.insert(name, c);
        }
    }
    let mut idrac: BTreeMap<(AttributeGroup, &str), Change> = BTreeMap::new();
    for ((group, name), s) in &profile.idrac {
        let now = idrac_current.get(group).and_then(|a| a.get(name));
        let (status, note) = match (now, s.value()) {
            (None, _) => (Status::NotApplicable, Some("not on this host".to_owned())),
            (Some(_), None) => (Status::NotApplicable, Some("no fixed value to compare".to_owned())),
            (Some(now), Some(value)) if now == value => (Status::InSync, None),
            (Some(_), Some(_)) => (Status::Drift, None),
        };
        let c = change(Target::Idrac(*group), &s.setting, now, None, status, note);
        idrac.insert((*group, name.as_str()), c);
    }
    for skipped in &profile.skipped {
        if let Target::Idrac(group) = skipped.target {
            let name = skipped.setting.attribute.as_str();
            let now = idrac_current.get(&group).and_then(|a| a.get(name));
            let mut c = change(
                skipped.target,
                &skipped.setting,
                now,
                None,
                Status::NotApplicable,
                Some(skipped.reason.clone()),
            );
            c.not_applicable = Some(skipped.kind);
            idrac.entry((group, name)).or_insert(c);
        }
    }
    Diff {
        profile: profile.name.clone(),
        changes: bios.into_values().chain(idrac.into_values()).collect(),
    }
}

fn compare(
    desired: &AttributeValue,
    current: Option<&AttributeValue>,
    pending: Option<&AttributeValue>,
    verdict: Option<&Verdict>,
) -> Status {
    let hidden_for_good =
        matches!(verdict, Some(Verdict::Locked { flag: Flag::Hidden, because, .. }) if because.is_empty());
    if current.is_none() && hidden_for_good {
        // Defined by the registry, not shown by the BIOS, and nothing makes it visible.
        Status::NotApplicable
    } else if pending.is_some_and(|p| p != desired) {
        Status::PendingConflict
    } else if current == Some(desired) {
        Status::InSync
    } else if pending.is_some() {
        Status::Pending
    } else if matches!(verdict, Some(Verdict::Forced { .. })) {
        Status::Forced
    } else {
        Status::Drift
    }
}

fn change(
    target: Target,
    s: &Setting,
    current: Option<&AttributeValue>,
    pending: Option<&AttributeValue>,
    status: Status,
    note: Option<String>,
) -> Change {
    Change {
        target,
        attribute: s.attribute.clone(),
        desired: s.wanted.first().unwrap_or(AttributeValue::Null),
        current: current.cloned(),
        pending: pending.cloned(),
        status,
        why: s.why.clone(),
        source: s.source.clone(),
        confidence: s.confidence,
        confidence_note: s.confidence_note.clone(),
        note,
        not_applicable: (status == Status::NotApplicable).then_some(Unchecked::NotOnHost),
        choice: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_precedence_follows_the_contract() {
        let d: AttributeValue = "Disabled".into();
        let e: AttributeValue = "Enabled".into();
        let forced = Verdict::Forced { because: vec![] };
        let hidden = Verdict::Locked {
            flag: Flag::Hidden,
            because: vec![],
            fixes: vec![],
        };
        assert_eq!(compare(&d, Some(&d), None, None), Status::InSync);
        assert_eq!(compare(&d, Some(&d), Some(&d), None), Status::InSync);
        assert_eq!(compare(&d, Some(&d), Some(&e), None), Status::PendingConflict);
        assert_eq!(compare(&d, Some(&e), Some(&d), None), Status::Pending);
        assert_eq!(compare(&d, Some(&e), Some(&e), None), Status::PendingConflict);
        assert_eq!(compare(&d, Some(&e), None, Some(&forced)), Status::Forced);
        assert_eq!(compare(&d, Some(&e), Some(&d), Some(&forced)), Status::Pending);
        assert_eq!(compare(&d, Some(&e), None, Some(&Verdict::Write)), Status::Drift);
        // Hidden on the host: not applicable, unless the plan makes it visible and writes it.
        assert_eq!(compare(&d, None, None, Some(&hidden)), Status::NotApplicable);
        assert_eq!(compare(&d, None, None, Some(&Verdict::Write)), Status::Drift);
    }

    #[test]
    fn statuses_serialise_as_the_contract_spells_them() {
        let spelled: Vec<String> = Status::ALL
            .iter()
            .map(|s| serde_json::to_value(s).unwrap().as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            spelled,
            [
                "in_sync",
                "drift",
                "pending",
                "pending_conflict",
                "not_applicable",
                "forced"
            ]
        );
        for s in Status::ALL {
            assert_eq!(s.to_string(), s.as_str());
        }
    }
}
