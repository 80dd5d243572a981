//! The decisions of an apply, as pure functions of what was read: what to do about work
//! already staged on the host ([`decide`]), how the BIOS job gets to run ([`reboot_step`]),
//! and whether a reset is needed at all ([`already_rebooting`]). No IO here, so every case has
//! a row in a table test.

use crate::marker::Marker;
use redfish_client::resources::bios::{ApplyTime, Attributes};

/// What the host has staged already, as read before the apply.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingWork<'a> {
    /// Pending BIOS values (`Bios/Settings`).
    pub values: &'a Attributes,
    /// The open BIOS job, if any.
    pub open_job: Option<&'a str>,
    /// Whether an open BIOS job is stuck and will never run (PR30).
    pub stuck: bool,
}

impl PendingWork<'_> {
    /// Whether any pending work exists: values, or an open BIOS job.
    pub(crate) fn any(&self) -> bool {
        !self.values.is_empty() || self.open_job.is_some()
    }
}

/// What to do about pending work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PendingAction {
    /// Nothing is pending.
    None,
    /// rftune's own values from an earlier run, exactly as planned now: adopt them and their
    /// job (`None`: the job was never created and must be).
    Adopt {
        /// The open job.
        job: Option<String>,
    },
    /// Delete the pending work (`--replace-pending`), then go on with the plan.
    Replace,
    /// Refuse to stack changes on it.
    Refuse(Refusal),
}

/// Why pending work is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Someone else staged it.
    NotOurs,
    /// rftune staged it, but its job is stuck and will never run.
    OursButStuck,
    /// rftune staged it, but for other values or another profile than this plan.
    OursButDifferent,
}

impl Refusal {
    /// The words that follow "already staged" in the refusal.
    pub(crate) fn why(self) -> &'static str {
        match self {
            Self::NotOurs => "",
            Self::OursButStuck => " (it is rftune's own, but its job is stuck and will never run)",
            Self::OursButDifferent => " (it is rftune's own, but differs from this plan)",
        }
    }
}

/// The course an apply takes on one host, decided before anything is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Course {
    /// What to do about pending work.
    pub pending: PendingAction,
    /// Nothing is left to write once the pending work is dealt with: no snapshot, no reboot.
    pub in_sync: bool,
}

/// Decides what to do about pending work and whether anything is left to do.
///
/// `planned` is the BIOS part of the plan (what differs from the current values) and
/// `plan_empty` whether the whole plan (BIOS and iDRAC) is empty; `marker` is rftune's record
/// of what an earlier run of `profile` staged on this host.
pub(crate) fn decide(
    staged: &PendingWork<'_>,
    planned: &Attributes,
    plan_empty: bool,
    marker: Option<&Marker>,
    profile: &str,
    replace_pending: bool,
) -> Course {
    let pending = if staged.any() {
        let ours = marker.is_some_and(|m| m.bios == *staged.values && m.profile == profile);
        // Part of what an earlier run of this plan staged (a run cut between its two PATCHes,
        // the boot order and the BIOS values of an iLO): rftune's own, so it is staged again
        // whole without --replace-pending.
        let part_of_ours = marker.is_some_and(|m| {
            m.profile == profile
                && m.bios == *planned
                && !staged.values.is_empty()
                && staged.values.iter().all(|(k, v)| m.bios.get(k) == Some(v))
        });
        if ours && !staged.stuck && planned == staged.values && !replace_pending {
            PendingAction::Adopt {
                job: staged.open_job.map(str::to_owned),
            }
        } else if replace_pending || (part_of_ours && !ours && !staged.stuck) {
            PendingAction::Replace
        } else if ours && staged.stuck {
            PendingAction::Refuse(Refusal::OursButStuck)
        } else if ours {
            PendingAction::Refuse(Refusal::OursButDifferent)
        } else {
            PendingAction::Refuse(Refusal::NotOurs)
        }
    } else {
        PendingAction::None
    };
    let in_sync = plan_empty && !matches!(pending, PendingAction::Adopt { .. });
    Course { pending, in_sync }
}

/// How the BIOS job gets to run once values are staged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RebootStep {
    /// Leave it: the job runs in the maintenance window.
    LeaveForWindow,
    /// Leave it: the job runs at the host's next reboot (`--reboot none`).
    LeaveForNextReboot,
    /// Reboot the host (unless it is [`already_rebooting`] into an adopted job).
    Reboot,
}

/// Decides how the BIOS job runs: from the `apply_time` of the staged values and whether
/// rftune may reboot. Known before anything is read or written, so one decision serves the
/// dry run, the reboot slot and the reboot itself.
pub(crate) fn reboot_step(apply_time: ApplyTime, may_reboot: bool) -> RebootStep {
    if apply_time != ApplyTime::OnReset {
        RebootStep::LeaveForWindow
    } else if !may_reboot {
        RebootStep::LeaveForNextReboot
    } else {
        RebootStep::Reboot
    }
}

/// Whether the reset can be skipped: values adopted from an earlier run whose host is already
/// in POST or running the job (that run's reset went through).
pub(crate) fn already_rebooting(adopted: bool, in_post: bool, job_running: bool) -> bool {
    adopted && (in_post || job_running)
}

#[cfg(test)]
#[rustfmt::skip]
mod tests {
    use super::*;
    use redfish_client::resources::bios::AttributeValue;

    fn attrs(pairs: &[(&str, &str)]) -> Attributes {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), AttributeValue::from(*v)))
            .collect()
    }

    fn marker(profile: &str, bios: &Attributes) -> Marker {
        Marker {
            profile: profile.into(),
            run: "run-1".into(),
            bios: bios.clone(),
            job: Some("JID_1".into()),
            rebooting: false,
        }
    }

    #[test]
    fn pending_work_is_adopted_replaced_or_refused() {
        let ours = attrs(&[("SysProfile", "PerfOptimized")]);
        let other = attrs(&[("SysProfile", "Custom")]);
        let none = Attributes::new();
        let mine = marker("performance", &ours);
        let staged = |values, job, stuck| PendingWork {
            values,
            open_job: job,
            stuck,
        };
        let nothing = PendingWork {
            values: &none,
            open_job: None,
            stuck: false,
        };
        // (case, what is staged, planned, plan empty, marker, replace) -> (pending, in sync)
        let adopt = |job: Option<&str>| PendingAction::Adopt {
            job: job.map(str::to_owned),
        };
        let check = |case: &str, staged: PendingWork<'_>, planned: &Attributes, empty: bool, marker: Option<&Marker>, replace: bool, want: PendingAction, in_sync: bool| {
            let d = decide(&staged, planned, empty, marker, "performance", replace);
            assert_eq!((d.pending, d.in_sync), (want, in_sync), "{case}");
        };
        let (replace, keep) = (true, false);
        check("clean host, nothing to do", nothing, &none, true, None, keep, PendingAction::None, true);
        check("clean host, values to write", nothing, &ours, false, None, keep, PendingAction::None, false);
        check("a stale marker changes nothing", nothing, &ours, false, Some(&mine), keep, PendingAction::None, false);
        check("our values with their job", staged(&ours, Some("JID_1"), false), &ours, false, Some(&mine), keep, adopt(Some("JID_1")), false);
        check("our values, job never created", staged(&ours, None, false), &ours, false, Some(&mine), keep, adopt(None), false);
        check("our values, job stuck", staged(&ours, Some("JID_1"), true), &ours, false, Some(&mine), keep, PendingAction::Refuse(Refusal::OursButStuck), false);
        check("our values, plan changed", staged(&ours, Some("JID_1"), false), &other, false, Some(&mine), keep, PendingAction::Refuse(Refusal::OursButDifferent), false);
        check("someone else's values", staged(&other, Some("JID_9"), false), &ours, false, None, keep, PendingAction::Refuse(Refusal::NotOurs), false);
        check("someone else's, replaced", staged(&other, Some("JID_9"), false), &ours, false, None, replace, PendingAction::Replace, false);
        check("replaced, nothing left to write", staged(&other, None, false), &none, true, None, replace, PendingAction::Replace, true);
        check("ours, but replace asked", staged(&ours, Some("JID_1"), false), &ours, false, Some(&mine), replace, PendingAction::Replace, false);
        let both = attrs(&[("PersistentBootConfigOrder", "NVMe.Slot.1.1"), ("SysProfile", "PerfOptimized")]);
        let order = attrs(&[("PersistentBootConfigOrder", "NVMe.Slot.1.1")]);
        let whole = marker("performance", &both);
        check("part of ours (a run cut between its PATCHes), staged again whole", staged(&order, None, false), &both, false, Some(&whole), keep, PendingAction::Replace, false);
        check("part of ours, but the plan changed", staged(&order, None, false), &ours, false, Some(&whole), keep, PendingAction::Refuse(Refusal::NotOurs), false);
        let changed = attrs(&[("PersistentBootConfigOrder", "Generic.USB.1.1")]);
        check("a value of ours changed by someone", staged(&changed, None, false), &both, false, Some(&whole), keep, PendingAction::Refuse(Refusal::NotOurs), false);
        // A marker of another profile is not ours.
        let theirs = marker("hpc", &ours);
        let d = decide(
            &staged(&ours, Some("JID_1"), false),
            &ours,
            false,
            Some(&theirs),
            "performance",
            false,
        );
        assert_eq!(d.pending, PendingAction::Refuse(Refusal::NotOurs));
    }

    #[test]
    fn the_reboot_is_left_skipped_or_done() {
        use ApplyTime::{AtMaintenanceWindowStart, InMaintenanceWindowOnReset, OnReset};
        let rows = [
            (AtMaintenanceWindowStart, true, RebootStep::LeaveForWindow),
            (InMaintenanceWindowOnReset, true, RebootStep::LeaveForWindow),
            (AtMaintenanceWindowStart, false, RebootStep::LeaveForWindow),
            (OnReset, false, RebootStep::LeaveForNextReboot),
            (OnReset, true, RebootStep::Reboot),
        ];
        for (time, may, want) in rows {
            assert_eq!(reboot_step(time, may), want, "{time:?} {may}");
        }
        // (adopted, in POST, job running) -> skip the reset
        let rows = [
            (true, true, false, true),
            (true, false, true, true),
            (true, true, true, true),
            (true, false, false, false),
            (false, true, true, false),
            (false, false, false, false),
        ];
        for (adopted, in_post, running, want) in rows {
            assert_eq!(already_rebooting(adopted, in_post, running), want, "{adopted} {in_post} {running}");
        }
    }
}
