//! The provisioning steps an apply can take besides the profile: a BIOS reset to defaults
//! first (`--from-defaults`), and a BIOS password change staged with the profile's values so
//! that one job and one reboot apply both (`Bios.ChangePassword` first, then the PATCH that
//! creates the job).

use super::run::HostApply;
use super::steps::{Host, Judged};
use crate::audit::Step;
use crate::control::RebootPolicy;
use crate::defaults::DefaultsDone;
use crate::error::{Result, bad_input};
use redfish_client::resources::bios::{ApplyTime, Bios};
use serde_json::{Value, json};

impl Host<'_> {
    /// With `--from-defaults`, resets the BIOS to its defaults and proves it finished, before
    /// anything of the profile is read: its own reboot, in one of the run's reboot slots. It
    /// needs rftune to reboot the host now: a profile staged while the reset still waits for a
    /// POST would meet it in the same POST, an order no public evidence shows the iDRAC keeps.
    pub(super) async fn defaults(&self) -> Result<Option<DefaultsDone>> {
        let opts = &self.run.options;
        if !opts.from_defaults || opts.dry_run {
            return Ok(None);
        }
        if opts.reboot == RebootPolicy::None || opts.apply_time.apply_time != ApplyTime::OnReset {
            bad_input!(
                "--from-defaults needs rftune to reboot the host (the reset must finish before the profile is staged): drop --reboot none and the maintenance window"
            );
        }
        crate::defaults::reset(opts.job_timeout, self.w).await.map(Some)
    }

    /// Sends the run's BIOS password change, if any, before the stage: the PATCH that follows
    /// creates the job that applies it with the profile's values. When the plan has no BIOS
    /// value, nothing will be PATCHed, so the job is created here (`POST Jobs`) and returned.
    /// A password change cannot join values adopted from an earlier run (their job is open, and
    /// the iDRAC refuses the change: SYS011).
    pub(super) async fn password(&self, judged: &Judged, result: &mut HostApply) -> Result<Option<String>> {
        let Some(change) = &self.run.options.password else {
            return Ok(None);
        };
        if result.adopted {
            bad_input!(
                "{}: a BIOS password change cannot join the BIOS job an earlier run staged; rerun with --replace-pending",
                self.bmc.name
            );
        }
        crate::interrupt::check(&self.bmc.name, "changing the BIOS password")?;
        crate::passwords::send(self.w, change).await?;
        let mut record = change.audited(&crate::passwords::names(self.bmc)?);
        let job = if judged.plan.bios.is_empty() {
            let id = crate::jobs::create_bios_job(self.bmc).await?;
            let detail = json!({"created_for": "password change", "job": id});
            self.w.audit(Step::Job, Value::Null, "ok", detail)?;
            Some(id)
        } else {
            None
        };
        if let Some(map) = record.as_object_mut() {
            map.insert("job".into(), json!(job));
        }
        result.password = Some(record);
        Ok(job)
    }

    /// After the reboot, whether the BIOS (`bios`, read once the host was back) shows the
    /// password change in force, by the password hash real iDRACs list; the hash is compared
    /// in memory and never kept.
    pub(super) fn password_in_force(&self, judged: &Judged, bios: Option<&Bios>, result: &mut HostApply) {
        let (Some(change), Some(bios), Some(record)) = (&self.run.options.password, bios, result.password.as_mut())
        else {
            return;
        };
        let Ok(names) = crate::passwords::names(self.bmc) else {
            return;
        };
        let in_force = change.in_force(&names, &judged.assessment.state.bios, &bios.attributes);
        if let Some(map) = record.as_object_mut() {
            map.insert("in_force".into(), json!(in_force));
        }
    }
}

/// Says in the summary what the provisioning steps did: the reset to defaults that came first,
/// and the password change the job applied.
pub(super) fn summarize(options: &super::run::ApplyOptions, result: &mut HostApply) {
    let mut done = Vec::new();
    if options.from_defaults && options.dry_run {
        done.push(
            "would reset the BIOS to defaults first (one more reboot; this plan is against today's values, the one after the reset may differ)"
                .to_owned(),
        );
    }
    if let Some(d) = &result.defaults {
        done.push(format!(
            "BIOS reset to defaults first ({} value(s) changed, one reboot)",
            d.changed.len()
        ));
    }
    if let Some(p) = &result.password {
        let field = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let which = if field("PasswordName") == "SysPassword" {
            "system"
        } else {
            "setup"
        };
        let did = match field("action").as_str() {
            "change" => "changed",
            "clear" => "cleared",
            _ => "set",
        };
        done.push(format!("{which} password {did}"));
    }
    if done.is_empty() {
        return;
    }
    let rest = result.summary.trim_start_matches("; ");
    result.summary = if rest.is_empty() {
        done.join("; ")
    } else {
        format!("{}; {rest}", done.join("; "))
    };
}
