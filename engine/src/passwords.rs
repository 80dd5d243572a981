//! BIOS passwords: setting, changing and clearing the setup and system passwords with
//! `Bios.ChangePassword`, which stages the change for the next BIOS job on an iDRAC (as in
//! Dell's `BiosChangePasswordREDFISH.py`: the action, then a job, then a reboot) and for the
//! next POST on an iLO, which has no jobs (the action where the BIOS advertises it, then a
//! reboot, then the BIOS's settings time proves the POST processed it). The passwords live in
//! [`Password`]s only: never in a log, an audit record, a snapshot or `Debug` output. A wrong
//! old password is said so: the iDRAC's BIOS021 ("Cannot authenticate BIOS password."), iLO's
//! `BiosPasswordMismatch`.

use crate::audit::Step;
use crate::backend::BiosNames;
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::lifecycle::Operation;
use crate::observe::{Event, Observer};
use crate::read;
use crate::write::{Own, Pending, Writer, Writes};
use redfish_client::Password;
use redfish_client::request;
use redfish_client::resources::bios::{AttributeValue, Attributes};
use serde::Serialize;
use serde_json::{Value, json};

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
    /// The action's `PasswordName` as the BIOS `names` it (`SetupPassword`, `SysPassword`).
    pub fn attribute(self, names: &BiosNames) -> &'static str {
        match self {
            Self::Setup => names.setup_password,
            Self::System => names.system_password,
        }
    }

    /// The BIOS attribute that shows the password's hash (empty while none is set), where the
    /// BIOS `names` one: the only sign, without the password, that one is set.
    pub fn hash_attribute(self, names: &BiosNames) -> Option<&'static str> {
        match self {
            Self::Setup => names.setup_password_hash,
            Self::System => names.system_password_hash,
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

    /// What the audit log records of it, the password named as the BIOS `names` it: which
    /// password and what is done, never a password.
    pub fn audited(&self, names: &BiosNames) -> Value {
        json!({"PasswordName": self.which.attribute(names), "action": self.action()})
    }

    /// Whether the BIOS values `after` show the change in force, against `before`: a hash
    /// after a set or change (another one after a change), none after a clear. `None` where
    /// the BIOS (as its `names` say) lists no hash attribute.
    pub fn in_force(&self, names: &BiosNames, before: &Attributes, after: &Attributes) -> Option<bool> {
        let attribute = self.which.hash_attribute(names)?;
        let hash = |a: &Attributes| a.get(attribute).and_then(AttributeValue::as_str).map(str::to_owned);
        let (b, a) = (hash(before), hash(after)?);
        Some(match self.action() {
            "clear" => a.is_empty(),
            "change" => !a.is_empty() && Some(&a) != b.as_ref(),
            _ => !a.is_empty(),
        })
    }
}

/// The BIOS names of the host's backend, or the host's error saying it has no BIOS passwords
/// rftune knows.
pub(crate) fn names(bmc: &Bmc) -> Result<BiosNames> {
    let backend = bmc.backend();
    bmc.require(&backend, crate::backend::Backend::names, "BIOS password names")
        .copied()
}

/// Sends `Bios.ChangePassword` for `change`, recorded without the passwords. A wrong old
/// password is said so, with the iDRAC's MessageId (BIOS021); an invalid new one (BIOS018:
/// 0-32 characters of 0-9, a-z and a few symbols) too.
pub async fn send(w: &Writer<'_>, change: &PasswordChange) -> Result<()> {
    let bmc = w.bmc;
    let names = names(bmc)?;
    let backend = bmc.backend();
    let actions = bmc.require(&backend, crate::backend::Backend::actions, "BIOS actions")?;
    let body = request::change_password_body(change.which.attribute(&names), &change.old, &change.new);
    let which = change.which.as_str();
    let bios = bmc.bios_id().await?;
    match actions.change_password(&bmc.client, &bios, &body).await {
        Ok(_) => w.audit(Step::ChangePassword, change.audited(&names), "ok", Value::Null),
        Err(e) => {
            let message = if let Some(code) = ["BIOS021", "BiosPasswordMismatch"].into_iter().find(|c| e.has_code(c)) {
                format!(
                    "changing the {which} password: the old {which} password is not the one set on this host ({code})"
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
            w.audit(
                Step::ChangePassword,
                change.audited(&names),
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
    /// How its hosts are written to: the reboot that runs the BIOS job (`None`: the job waits
    /// for the next reboot), pending work, hooks, the lock.
    pub writes: Writes,
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
    /// The BIOS job that applies it (`None` on a BMC without jobs, an HPE iLO: the next POST
    /// applies it).
    pub job: Option<String>,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// After the reboot: whether the BIOS shows the change (by its password hash, which is
    /// never kept); `None` when not rebooted or the BIOS shows no hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_force: Option<bool>,
    /// Pending work deleted first (`--replace-pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The hooks that ran around its reboot, `before-reboot: ok` (only when hooks are set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// A sentence for people.
    pub summary: String,
}

/// Changes a BIOS password on the host under its writer `w`: refused under System Lockdown and
/// on top of pending work (a job already open would refuse the change, SYS011); then the
/// action, the BIOS job (`POST Jobs`) where the BMC has jobs, the reboot and the job's end,
/// and a read-back of the password hash; on a BMC without jobs, the settings time the BIOS
/// moves when its POST processes the change.
pub async fn change(run: &PasswordRun, w: &Writer<'_>) -> Result<PasswordDone> {
    let bmc = w.bmc;
    let values = read::read_values(bmc, &Default::default(), true).await?;
    w.writable().await?;
    w.refuse_lockdown(values.lockdown)?;
    let staged = Pending::of(values.pending.clone(), &values.jobs, &w.writes.state_dir, w.name());
    let replaced = w.settle(&staged, Own::Refuse, "a BIOS password change").await?;
    let reboots = w.options().reboot != crate::control::RebootPolicy::None;
    if run.change.which == BiosPassword::System && !run.change.new.expose().is_empty() && reboots {
        w.observer.event(&Event::notice(
            &bmc.name,
            "a system password makes every POST wait for it at the console: until someone types it, the host does not boot",
        ));
    }
    let _slot = w.slot().await?;
    w.check("changing the BIOS password")?;
    w.phase(crate::observe::Phase::ChangingPassword);
    send(w, &run.change).await?;
    let which = run.change.which.as_str();
    let action = run.change.action();
    let why = format!("the {which} password change");
    if bmc.backend().jobs().is_none() {
        return change_at_post(run, w, &values, replaced).await;
    }
    let job = crate::jobs::create_bios_job(bmc).await?;
    w.audit(
        Step::Job,
        Value::Null,
        "ok",
        json!({"created_for": "password change", "job": job}),
    )?;
    let left = format!("the change stays staged with job {job} and applies at its next reboot (--keep-staged)");
    let undo = || async { unstage(w, &job).await };
    w.before_reboot(undo, &left).await?;
    let back = w.reboot(&why, Some(&job)).await?;
    let names = names(bmc)?;
    let (rebooted, in_force) = match back {
        // Read once the host was back, so after the job ran at that POST.
        Some(bios) => (true, run.change.in_force(&names, &values.bios, &bios.attributes)),
        None => (false, None),
    };
    let summary = match (rebooted, in_force) {
        (false, _) => format!("{which} password {action} staged with job {job}; it applies at the next reboot"),
        (true, Some(true)) => format!("{which} password {action}: done (rebooted once; the BIOS shows it)"),
        (true, Some(false)) => {
            let message = format!("{which} password {action}: job {job} ran, but the BIOS does not show the change");
            return Err(HostError::new(&bmc.name, HostErrorKind::JobFailed, message).into());
        }
        (true, None) => format!("{which} password {action}: job {job} completed (rebooted once)"),
    };
    let job = Some(job);
    Ok(PasswordDone {
        host: bmc.name.clone(),
        password: run.change.which,
        action,
        job,
        rebooted,
        in_force,
        replaced,
        hooks: Vec::new(),
        summary,
    })
}

/// The rest of a password change on a BMC without jobs (an HPE iLO): the action waits for the
/// next POST, which the reboot brings; the BIOS's settings time moving past the one read before
/// proves the POST processed it (the BIOS shows no password hash to check it further). A time
/// that did not move is "outcome unknown", never success. The change cannot be withdrawn once
/// sent, so a failing before-reboot hook leaves it for the host's next reboot.
async fn change_at_post(
    run: &PasswordRun,
    w: &Writer<'_>,
    before: &read::HostValues,
    replaced: Option<String>,
) -> Result<PasswordDone> {
    let bmc = w.bmc;
    let which = run.change.which.as_str();
    let action = run.change.action();
    let undo = || async {
        "the change stays requested and applies at its next reboot (a sent BIOS password change cannot be withdrawn)"
            .to_owned()
    };
    w.before_reboot(undo, "the change applies at its next reboot").await?;
    let back = w.reboot(&format!("the {which} password change"), None).await?;
    let summary = match &back {
        None => format!("{which} password {action} requested; it applies at the next reboot"),
        Some(bios) => {
            match crate::backend::SettingsOutcome::read(before.settings_time.as_deref(), bios.settings.as_ref()) {
                crate::backend::SettingsOutcome::Processed(_) => format!(
                    "{which} password {action}: done (rebooted once; the BIOS processed it at that POST, and lists no password hash to check it by)"
                ),
                crate::backend::SettingsOutcome::NotProcessed => {
                    let message = format!(
                        "{which} password {action}: the host rebooted, but the BIOS did not process the change at that POST (its settings time stayed {}); whether it applies later cannot be told",
                        before.settings_time.as_deref().unwrap_or("unset")
                    );
                    w.audit(Step::Verify, Value::Null, "unknown", json!(message))?;
                    return Err(HostError::new(&bmc.name, HostErrorKind::OutcomeUnknown, message).into());
                }
            }
        }
    };
    Ok(PasswordDone {
        host: bmc.name.clone(),
        password: run.change.which,
        action,
        job: None,
        rebooted: back.is_some(),
        in_force: None,
        replaced,
        hooks: Vec::new(),
        summary,
    })
}

/// Deletes the job that would apply a password change (its change goes with it); says what
/// was done, or what is left.
async fn unstage(w: &Writer<'_>, job: &str) -> String {
    let backend = w.bmc.backend();
    let deleted = match backend.jobs() {
        Some(queue) => queue.delete(&w.bmc.client, job).await.map(drop),
        None => Ok(()),
    };
    match deleted {
        Ok(()) => {
            let _ = w.audit(Step::Unstage, json!({"job": job}), "ok", Value::Null);
            "its password change was withdrawn (job deleted)".to_owned()
        }
        Err(e) => {
            let e = w.bmc.explain(e, "deleting the password change's job");
            let _ = w.audit(
                Step::Unstage,
                json!({"job": job}),
                "error",
                json!(crate::error::report(&e)),
            );
            format!(
                "deleting its job failed too ({}): the change stays staged with job {job}; delete it with `rftune jobs delete`",
                crate::error::report(&e)
            )
        }
    }
}

/// `bios password` as a fleet [`Operation`]: the change under the host's lock, and the hooks
/// after its reboot.
impl Operation for PasswordRun {
    type Output = PasswordDone;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<PasswordDone> {
        let w = self.writes.begin(bmc, observer).await?;
        let done = change(self, &w).await;
        let ok = done.as_ref().is_ok_and(|d| d.rebooted);
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
        let names = *crate::backend::Backend::idrac9().names().unwrap();
        let shown = format!("{c:?} {}", c.audited(&names));
        assert!(!shown.contains("Secret"), "{shown}");
        assert_eq!(
            c.audited(&names),
            json!({"PasswordName": "SetupPassword", "action": "change"})
        );
        assert_eq!(change("", "x").action(), "set");
        assert_eq!(change("x", "").action(), "clear");
    }

    #[test]
    fn the_password_hash_tells_whether_the_change_is_in_force() {
        let n = *crate::backend::Backend::idrac9().names().unwrap();
        let with =
            |hash: &str| -> Attributes { [("SHA256SetupPassword".to_owned(), hash.into())].into_iter().collect() };
        assert_eq!(change("", "n").in_force(&n, &with(""), &with("19D2")), Some(true));
        assert_eq!(change("", "n").in_force(&n, &with(""), &with("")), Some(false));
        assert_eq!(
            change("o", "n").in_force(&n, &with("19D2"), &with("19D2")),
            Some(false),
            "same hash: unchanged"
        );
        assert_eq!(change("o", "n").in_force(&n, &with("19D2"), &with("4EB3")), Some(true));
        assert_eq!(change("o", "").in_force(&n, &with("19D2"), &with("")), Some(true));
        assert_eq!(change("o", "").in_force(&n, &with("19D2"), &Attributes::new()), None);
    }
}
