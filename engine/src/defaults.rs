//! A BIOS reset to defaults seen through to the end: every current value saved first, then
//! `Bios.ResetBios`, the reboot it needs (no job: Dell's own script creates none and the
//! iDRAC applies the reset at the next POST; an iLO has no jobs and does the same), then a
//! read-back that proves it finished — the reset no longer pending (`ResetBiosToDefaultsPending`
//! where the firmware has it, `LCAttributes.1.BIOSRTDRequested` back to `False` on an iDRAC, the
//! settings object processed on an iLO) — and the values that changed, as a diff against the
//! snapshot. Dell's registries carry no default values, so what the defaults are is measured,
//! never predicted.

use crate::audit::Step;
use crate::backend::{AttributeGroup, DefaultsFlag};
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::lifecycle::Operation;
use crate::observe::{Event, Observer, Phase};
use crate::read;
use crate::snapshot::{Snapshot, without_secrets};
use crate::write::{Own, Pending, Writer, Writes};
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde::Serialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What one run of `bios reset-defaults` shares across its hosts.
#[derive(Debug)]
pub struct DefaultsRun {
    /// How its hosts are written to: the reboot the reset needs (`None`: it waits for the
    /// host's next reboot), pending work, hooks, the lock.
    pub writes: Writes,
    /// How long the reset may take to show as finished once the host is back.
    pub finish_timeout: Duration,
}

/// One value the reset changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changed {
    /// The attribute.
    pub attribute: String,
    /// Before the reset (`None`: not listed then, e.g. hidden by another value).
    pub before: Option<AttributeValue>,
    /// After it (`None`: no longer listed).
    pub after: Option<AttributeValue>,
}

/// Whether the BIOS shows a reset to defaults waiting for the next POST, by what the firmware
/// reports (`None` where it reports neither flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ResetFlags {
    /// `Bios.ResetBiosToDefaultsPending` (iDRAC 7.x; absent on 6.x).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bios_pending: Option<bool>,
    /// `LCAttributes.1.BIOSRTDRequested` (a `"True"`/`"False"` string on real iDRACs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtd_requested: Option<bool>,
    /// Whether the BIOS settings object holds writes its POST has not processed (an iLO: the
    /// settings object's tag differs from `Oem.Hpe.SettingsObject.UnmodifiedETag`); a reset
    /// requested there is among them until the next POST.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_unprocessed: Option<bool>,
}

impl ResetFlags {
    /// Whether a flag the firmware has says the reset is waiting.
    pub fn pending(self) -> Option<bool> {
        let flags = [self.bios_pending, self.rtd_requested, self.settings_unprocessed];
        flags.iter().any(Option::is_some).then(|| flags.contains(&Some(true)))
    }
}

/// What a reset to defaults did on one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DefaultsDone {
    /// The host's name.
    pub host: String,
    /// Service tag.
    pub service_tag: Option<String>,
    /// The snapshot of every value before the reset.
    pub snapshot: PathBuf,
    /// The flags right after `Bios.ResetBios`.
    pub requested: ResetFlags,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// After the reboot: whether the reset is no longer pending (`None`: not rebooted, or the
    /// firmware reports no flag to tell).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<bool>,
    /// The values that changed against the snapshot (passwords and their hashes never listed).
    pub changed: Vec<Changed>,
    /// Pending work deleted first (`--replace-pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The hooks that ran around its reboot, `before-reboot: ok` (only when hooks are set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// A sentence for people.
    pub summary: String,
}

/// The reset flags as the host reports them: `Bios.ResetBiosToDefaultsPending` and the BMC's
/// own flag where its backend has one (an iDRAC's `BIOSRTDRequested`, an iLO's unprocessed
/// settings object): the BIOS, then the flag (two requests).
pub async fn flags(bmc: &Bmc) -> Result<ResetFlags> {
    let backend = bmc.backend();
    let bios_id = bmc.bios_id().await?;
    let bios = bmc
        .client
        .bios(&bios_id)
        .await
        .map_err(|e| bmc.explain(e, "reading the BIOS"))?;
    let flag = match backend.actions() {
        Some(actions) => actions
            .defaults_requested(&bmc.client, &bios)
            .await
            .map_err(|e| bmc.explain(e, "reading whether a BIOS reset to defaults is pending"))?,
        None => None,
    };
    Ok(ResetFlags {
        bios_pending: bios.reset_bios_to_defaults_pending,
        rtd_requested: match flag {
            Some(DefaultsFlag::Requested(r)) => Some(r),
            _ => None,
        },
        settings_unprocessed: match flag {
            Some(DefaultsFlag::SettingsUnprocessed(u)) => Some(u),
            _ => None,
        },
    })
}

/// The values that differ between `before` and `after`, secrets left out.
pub fn changes(before: &Attributes, after: &Attributes) -> Vec<Changed> {
    let (before, after) = (without_secrets(before), without_secrets(after));
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| before.get(*n) != after.get(*n))
        .map(|n| Changed {
            attribute: n.clone(),
            before: before.get(n).cloned(),
            after: after.get(n).cloned(),
        })
        .collect()
}

/// Resets the host's BIOS to its defaults and proves it, under the host's writer `w`: see the
/// module docs. Refused under System Lockdown and on top of pending work (rftune's own
/// included: what a job staged before the reset would do at that POST is not known), unless
/// `--replace-pending`. The hooks' before-reboot point is reached here; the caller runs what
/// comes after the reboot (an apply, once its profile is verified too).
pub async fn reset(finish_timeout: Duration, w: &Writer<'_>) -> Result<DefaultsDone> {
    let bmc = w.bmc;
    let groups = [AttributeGroup::LifecycleController].into_iter().collect();
    let values = read::read_values(bmc, &groups, true).await?;
    w.writable().await?;
    w.refuse_lockdown(values.lockdown)?;
    let pending = Pending::of(values.pending.clone(), &values.jobs, &w.writes.state_dir, w.name());
    let replaced = w.settle(&pending, Own::Refuse, "a BIOS reset to defaults").await?;
    let _slot = w.slot().await?;
    let url = w.url();
    let snap = Snapshot::of_values(&bmc.name, &url, &values, "before a BIOS reset to defaults");
    w.set_service_tag(snap.service_tag.as_deref());
    let path = w.snapshot(&snap)?;
    w.check("resetting the BIOS to defaults")?;
    w.phase(Phase::ResettingBios);
    let requested = send_reset(w).await?;
    let undo = || async {
        "the reset stays requested and happens at its next reboot (a BIOS reset to defaults cannot be withdrawn)"
            .to_owned()
    };
    w.before_reboot(undo, "the reset happens at its next reboot").await?;
    let back = w.reboot("the BIOS reset to defaults", None).await?;
    let rebooted = back.is_some();
    let finished = if rebooted {
        wait_finished(bmc, finish_timeout, w.observer).await?
    } else {
        None
    };
    let after = if rebooted {
        read::read_values(bmc, &Default::default(), false).await?.bios
    } else {
        values.bios.clone()
    };
    let changed = if rebooted {
        changes(&snap.bios, &after)
    } else {
        Vec::new()
    };
    let detail = json!({"finished": finished, "changed": changed.len(), "requested": requested});
    let outcome = match finished {
        Some(false) => "error",
        _ => "ok",
    };
    w.audit(Step::Defaults, Value::Null, outcome, detail)?;
    let summary = match finished {
        _ if !rebooted => "the BIOS returns to its defaults at the next reboot".to_owned(),
        Some(true) => format!(
            "reset to defaults (rebooted once; the reset is no longer pending); {} value(s) changed",
            changed.len()
        ),
        Some(false) => format!(
            "rebooted, but the BIOS still shows the reset pending after {:?}; {} value(s) changed",
            finish_timeout,
            changed.len()
        ),
        None => format!(
            "reset to defaults (rebooted once; this firmware reports no flag to prove it finished); {} value(s) changed",
            changed.len()
        ),
    };
    if finished == Some(false) {
        let message = format!("{summary}: the reset did not finish");
        return Err(HostError::new(&bmc.name, HostErrorKind::Timeout, message).into());
    }
    Ok(DefaultsDone {
        host: bmc.name.clone(),
        service_tag: snap.service_tag.clone(),
        snapshot: path,
        requested,
        rebooted,
        finished,
        changed,
        replaced,
        hooks: Vec::new(),
        summary,
    })
}

/// `POST Bios.ResetBios {}` (the body Dell's current script sends), then the flags read back. An
/// answer that was lost is never resent blindly: the flags show whether it took.
async fn send_reset(w: &Writer<'_>) -> Result<ResetFlags> {
    let bmc = w.bmc;
    let body = json!({});
    let backend = bmc.backend();
    let actions = bmc.require(&backend, crate::backend::Backend::actions, "BIOS actions")?;
    let bios = bmc.bios_id().await?;
    match actions.reset_to_defaults(&bmc.client, &bios).await {
        Ok(_) => {
            let flags = flags(bmc).await?;
            w.audit(Step::ResetBios, body, "ok", json!(flags))?;
            Ok(flags)
        }
        Err(e) if e.write_outcome_unknown() => {
            let flags = flags(bmc).await?;
            if flags.pending() == Some(true) {
                w.audit(
                    Step::ResetBios,
                    body,
                    "ok",
                    json!("the answer was lost; the reset shows pending"),
                )?;
                Ok(flags)
            } else {
                w.audit(
                    Step::ResetBios,
                    body,
                    "error",
                    json!("the answer was lost; no reset shows pending"),
                )?;
                Err(bmc.explain(e, "requesting the BIOS reset to defaults (read back: not pending)"))
            }
        }
        Err(e) => {
            let e = bmc.explain(e, "requesting the BIOS reset to defaults");
            w.audit(Step::ResetBios, body, "error", json!(crate::error::report(&e)))?;
            Err(e)
        }
    }
}

/// Waits until the reset no longer shows pending: `Some(true)` when it cleared, `Some(false)`
/// when it still shows after `timeout`, `None` when the firmware reports no flag.
async fn wait_finished(bmc: &Bmc, timeout: Duration, observer: &dyn Observer) -> Result<Option<bool>> {
    let deadline = Instant::now() + timeout;
    loop {
        match flags(bmc).await?.pending() {
            None => return Ok(None),
            Some(false) => return Ok(Some(true)),
            Some(true) if Instant::now() >= deadline => return Ok(Some(false)),
            Some(true) => {
                observer.event(&Event::phase(&bmc.name, Phase::WaitingForDefaults));
                tokio::time::sleep(crate::wait::poll_interval(timeout)).await;
            }
        }
    }
}

/// `bios reset-defaults` as a fleet [`Operation`]: the reset under the host's lock, and the
/// hooks after its reboot.
impl Operation for DefaultsRun {
    type Output = DefaultsDone;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<DefaultsDone> {
        let w = self.writes.begin(bmc, observer).await?;
        let done = reset(self.finish_timeout, &w).await;
        let finished = done.as_ref().map(|d| d.finished != Some(false));
        let ok = matches!(finished, Ok(true));
        let why = done.as_ref().map_or_else(|_| String::new(), |d| d.summary.clone());
        w.after_reboot(&done, ok, &why).await?;
        let mut done = done?;
        done.hooks = w.hooks_ran();
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_changes_are_the_values_that_differ_secrets_left_out() {
        let before: Attributes = [
            ("SysProfile".to_owned(), "Custom".into()),
            ("MemTest".to_owned(), "Disabled".into()),
            ("FixedSocPstate".to_owned(), "P0".into()),
            ("SHA256SetupPassword".to_owned(), "19D2".into()),
        ]
        .into_iter()
        .collect();
        let after: Attributes = [
            ("SysProfile".to_owned(), "PerfOptimized".into()),
            ("MemTest".to_owned(), "Disabled".into()),
            ("SHA256SetupPassword".to_owned(), String::new().into()),
        ]
        .into_iter()
        .collect();
        let c = changes(&before, &after);
        let names: Vec<&str> = c.iter().map(|c| c.attribute.as_str()).collect();
        assert_eq!(names, ["FixedSocPstate", "SysProfile"]);
        assert_eq!(c[0].after, None, "hidden after the reset");
        assert_eq!(c[1].after, Some("PerfOptimized".into()));
    }

    #[test]
    fn a_reset_is_pending_while_any_flag_the_firmware_has_says_so() {
        let f = |bios_pending, rtd_requested| {
            ResetFlags {
                bios_pending,
                rtd_requested,
                settings_unprocessed: None,
            }
            .pending()
        };
        assert_eq!(f(None, None), None);
        assert_eq!(f(Some(true), Some(false)), Some(true));
        assert_eq!(f(None, Some(true)), Some(true), "iDRAC 6.x has only the LC flag");
        assert_eq!(f(Some(false), Some(false)), Some(false));
        let ilo = |unprocessed| {
            ResetFlags {
                settings_unprocessed: Some(unprocessed),
                ..ResetFlags::default()
            }
            .pending()
        };
        assert_eq!(
            ilo(true),
            Some(true),
            "an iLO's reset waits in its unprocessed settings"
        );
        assert_eq!(ilo(false), Some(false));
    }
}
