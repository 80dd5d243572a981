//! BIOS passwords: setting, changing and clearing the setup and system passwords with
//! `Bios.ChangePassword`, which stages the change for the next BIOS job (as in Dell's
//! `BiosChangePasswordREDFISH.py`: the action, then a job, then a reboot). The passwords live
//! in [`Password`]s only: never in a log, an audit record, a snapshot or `Debug` output. A
//! wrong old password is the iDRAC's BIOS021 ("Cannot authenticate BIOS password."), said so.

use crate::audit::{AuditLog, Step};
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::lifecycle::Operation;
use crate::observe::{Event, Observer};
use crate::pending::{self, Own};
use crate::read;
use crate::restart::Restart;
use redfish_client::Password;
use redfish_client::oem::dell;
use redfish_client::request;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde::Serialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which BIOS password.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BiosPassword {
    /// The setup password: asked for to enter BIOS setup or change settings at the console.
    Setup,
    /// The system password: asked for at every POST before the host boots.
    System,
}

impl BiosPassword {
    /// The action's `PasswordName` (`SetupPassword`, `SysPassword`).
    pub fn attribute(self) -> &'static str {
        match self {
            Self::Setup => dell::BIOS_PASSWORDS[0],
            Self::System => dell::BIOS_PASSWORDS[1],
        }
    }

    /// The BIOS attribute real iDRACs show the password's SHA-256 hash in (empty while none is
    /// set): the only sign, without the password, that one is set.
    pub fn hash_attribute(self) -> &'static str {
        match self {
            Self::Setup => "SHA256SetupPassword",
            Self::System => "SHA256SystemPassword",
        }
    }

    /// `setup`, `system`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Setup => "setup",
            Self::System => "system",
        }
    }
}

/// A password change: set (no old password), change, or clear (no new password).
#[derive(Debug, Clone)]
pub struct PasswordChange {
    /// Which password.
    pub which: BiosPassword,
    /// The password set now (empty while none is).
    pub old: Password,
    /// The new password (empty to clear it).
    pub new: Password,
}

impl PasswordChange {
    /// `set`, `change` or `clear`.
    pub fn action(&self) -> &'static str {
        match (self.old.expose().is_empty(), self.new.expose().is_empty()) {
            (true, _) => "set",
            (false, true) => "clear",
            (false, false) => "change",
        }
    }

    /// What the audit log records of it: which password and what is done, never a password.
    pub fn audited(&self) -> Value {
        json!({"PasswordName": self.which.attribute(), "action": self.action()})
    }

    /// Whether the BIOS values `after` show the change in force, against `before`: a hash
    /// after a set or change (another one after a change), none after a clear. `None` where
    /// the BIOS lists no hash attribute.
    pub fn in_force(&self, before: &Attributes, after: &Attributes) -> Option<bool> {
        let hash = |a: &Attributes| {
            a.get(self.which.hash_attribute())
                .and_then(AttributeValue::as_str)
                .map(str::to_owned)
        };
        let (b, a) = (hash(before), hash(after)?);
        Some(match self.action() {
            "clear" => a.is_empty(),
            "change" => !a.is_empty() && Some(&a) != b.as_ref(),
            _ => !a.is_empty(),
        })
    }
}

/// Sends `Bios.ChangePassword` for `change`, recorded without the passwords. A wrong old
/// password is said so, with the iDRAC's MessageId (BIOS021); an invalid new one (BIOS018:
/// 0-32 characters of 0-9, a-z and a few symbols) too.
pub async fn send(bmc: &Bmc, change: &PasswordChange, audit: &AuditLog) -> Result<()> {
    let body = request::change_password_body(change.which.attribute(), &change.old, &change.new);
    let which = change.which.as_str();
    match bmc.client.post(dell::CHANGE_PASSWORD, &body).await {
        Ok(_) => audit.record(&bmc.name, Step::ChangePassword, change.audited(), "ok", Value::Null),
        Err(e) => {
            let message = if e.has_code("BIOS021") {
                format!(
                    "changing the {which} password: the old {which} password is not the one set on this host (BIOS021)"
                )
            } else if e.has_code("BIOS018") {
                format!(
                    "changing the {which} password: the iDRAC refuses the new {which} password (BIOS018): use 0-32 characters of 0-9, a-z and <>|-,+./;[]'"
                )
            } else if e.has_code("BIOS025") {
                format!("changing the {which} password: the BIOS password status is Locked (BIOS025)")
            } else {
                format!("changing the {which} password")
            };
            let e = bmc.explain(e, &message);
            audit.record(
                &bmc.name,
                Step::ChangePassword,
                change.audited(),
                "error",
                json!(crate::error::report(&e)),
            )?;
            Err(e)
        }
    }
}

/// What one run of `bios password` shares across its hosts.
#[derive(Debug)]
pub struct PasswordRun {
    /// The change.
    pub change: PasswordChange,
    /// The reboot that runs the BIOS job (`None`: the job waits for the next reboot).
    pub restart: Restart,
    /// How long the BIOS job may take.
    pub job_timeout: Duration,
    /// Delete pending work instead of refusing.
    pub replace_pending: bool,
    /// The audit log.
    pub audit: AuditLog,
    /// The state directory (rftune's staging markers).
    pub state_dir: PathBuf,
}

/// What a password change did on one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PasswordDone {
    /// The host's name.
    pub host: String,
    /// Which password.
    pub password: BiosPassword,
    /// `set`, `change` or `clear`.
    pub action: &'static str,
    /// The BIOS job that applies it.
    pub job: String,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// After the reboot: whether the BIOS shows the change (by its password hash, which is
    /// never kept); `None` when not rebooted or the BIOS shows no hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_force: Option<bool>,
    /// Pending work deleted first (`--replace-pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// A sentence for people.
    pub summary: String,
}

/// Changes a BIOS password on the host: refused under System Lockdown and on top of pending
/// work (a job already open would refuse the change, SYS011); then the action, the BIOS job
/// (`POST Jobs`), the reboot and the job's end, and a read-back of the password hash.
pub async fn change(run: &PasswordRun, bmc: &Bmc, observer: &dyn Observer) -> Result<PasswordDone> {
    let values = read::read_values(bmc, &Default::default(), true).await?;
    if values.lockdown == Some(true) {
        let reason = read::lockdown_reason();
        run.audit
            .record(&bmc.name, Step::Lockdown, Value::Null, "refused", json!(reason))?;
        return Err(HostError::new(&bmc.name, HostErrorKind::Lockdown, reason).into());
    }
    let staged = pending::read(bmc, &run.state_dir).await?;
    let what = "a BIOS password change";
    let replaced = pending::settle(
        bmc,
        &staged,
        Own::Refuse,
        run.replace_pending,
        &run.audit,
        observer,
        what,
    )
    .await?;
    if run.change.which == BiosPassword::System && !run.change.new.expose().is_empty() && run.restart.reboots() {
        observer.event(&Event::notice(
            &bmc.name,
            "a system password makes every POST wait for it at the console: until someone types it, the host does not boot",
        ));
    }
    let _slot = run.restart.slot(&bmc.name).await?;
    crate::interrupt::check(&bmc.name, "changing the BIOS password")?;
    observer.event(&Event::phase(&bmc.name, crate::observe::Phase::ChangingPassword));
    send(bmc, &run.change, &run.audit).await?;
    let job = crate::jobs::create_bios_job(bmc).await?;
    run.audit.record(
        &bmc.name,
        Step::Job,
        Value::Null,
        "ok",
        json!({"created_for": "password change", "job": job}),
    )?;
    let why = format!("the {} password change", run.change.which.as_str());
    let back = run.restart.run(bmc, &run.audit, observer, &why).await?;
    let (rebooted, in_force) = match back {
        Some(bios) => {
            let done = crate::wait::wait_for_job(bmc, &job, run.job_timeout, observer).await?;
            run.audit.record(
                &bmc.name,
                Step::Job,
                Value::Null,
                "ok",
                json!({"job": done.id, "state": done.job_state.to_string()}),
            )?;
            // Read once the host was back, so after the job ran at that POST.
            (true, run.change.in_force(&values.bios, &bios.attributes))
        }
        None => (false, None),
    };
    let which = run.change.which.as_str();
    let action = run.change.action();
    let summary = match (rebooted, in_force) {
        (false, _) => format!("{which} password {action} staged with job {job}; it applies at the next reboot"),
        (true, Some(true)) => format!("{which} password {action}: done (rebooted once; the BIOS shows it)"),
        (true, Some(false)) => {
            let message = format!("{which} password {action}: job {job} ran, but the BIOS does not show the change");
            return Err(HostError::new(&bmc.name, HostErrorKind::JobFailed, message).into());
        }
        (true, None) => format!("{which} password {action}: job {job} completed (rebooted once)"),
    };
    Ok(PasswordDone {
        host: bmc.name.clone(),
        password: run.change.which,
        action,
        job,
        rebooted,
        in_force,
        replaced,
        summary,
    })
}

/// `bios password` as a fleet [`Operation`].
#[derive(Debug, Clone)]
pub struct ChangePassword(pub Arc<PasswordRun>);

impl Operation for ChangePassword {
    type Output = PasswordDone;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<PasswordDone> {
        change(&self.0, bmc, observer).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(old: &str, new: &str) -> PasswordChange {
        PasswordChange {
            which: BiosPassword::Setup,
            old: Password::new(old),
            new: Password::new(new),
        }
    }

    #[test]
    fn a_change_never_shows_its_passwords() {
        let c = change("old-Secret-1", "new-Secret-2");
        let shown = format!("{c:?} {}", c.audited());
        assert!(!shown.contains("Secret"), "{shown}");
        assert_eq!(
            c.audited(),
            json!({"PasswordName": "SetupPassword", "action": "change"})
        );
        assert_eq!(change("", "x").action(), "set");
        assert_eq!(change("x", "").action(), "clear");
    }

    #[test]
    fn the_password_hash_tells_whether_the_change_is_in_force() {
        let with =
            |hash: &str| -> Attributes { [("SHA256SetupPassword".to_owned(), hash.into())].into_iter().collect() };
        assert_eq!(change("", "n").in_force(&with(""), &with("19D2")), Some(true));
        assert_eq!(change("", "n").in_force(&with(""), &with("")), Some(false));
        assert_eq!(
            change("o", "n").in_force(&with("19D2"), &with("19D2")),
            Some(false),
            "same hash: unchanged"
        );
        assert_eq!(change("o", "n").in_force(&with("19D2"), &with("4EB3")), Some(true));
        assert_eq!(change("o", "").in_force(&with("19D2"), &with("")), Some(true));
        assert_eq!(change("o", "").in_force(&with("19D2"), &Attributes::new()), None);
    }
}
