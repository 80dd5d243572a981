//! UEFI Secure Boot: its state as the `SecureBoot` resource reports it (for `inventory`), and
//! `secure-boot reset-keys`. Turning Secure Boot on or off is a profile's job, through the BIOS
//! attribute `SecureBoot` staged with the other values (Dell's own Ansible module changes it
//! only that way). A key reset needs the `Custom` Secure Boot policy (SYS439 otherwise) and no
//! job: Dell's `SecureBootResetKeysREDFISH.py` sends the action and says the reset completes at
//! the next reboot.

use crate::audit::Step;
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use crate::lifecycle::Operation;
use crate::observe::Observer;
use crate::write::{Own, Writer, Writes};
use redfish_client::request;
use redfish_client::resources::bios::AttributeValue;
use redfish_client::resources::secure_boot::{CurrentBoot, ResetKeysType, SecureBoot};
use serde::Serialize;
use serde_json::{Value, json};

/// Secure Boot as a host reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SecureBootState {
    /// Enabled for the next boot (`SecureBootEnable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Whether the running system was booted with it enforced (`SecureBootCurrentBoot`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_boot: Option<CurrentBoot>,
    /// `DeployedMode`, `UserMode`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The key resets the host offers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub key_resets: Vec<ResetKeysType>,
}

impl From<&SecureBoot> for SecureBootState {
    fn from(sb: &SecureBoot) -> Self {
        Self {
            enabled: sb.secure_boot_enable,
            current_boot: sb.secure_boot_current_boot,
            mode: sb.secure_boot_mode.clone(),
            key_resets: sb.allowed_resets(),
        }
    }
}

/// The `SecureBoot` resource at `path`, or `None` when the host has none (404).
pub async fn read(bmc: &Bmc, path: &str) -> Result<Option<SecureBoot>> {
    match bmc.client.get::<SecureBoot>(path).await {
        Ok(sb) => Ok(Some(sb)),
        Err(e) if e.status() == Some(404) => Ok(None),
        Err(e) => Err(bmc.explain(e, "reading Secure Boot")),
    }
}

/// Where the host keeps Secure Boot: its backend's fixed place, else where its system links
/// (`None`: the system links none).
async fn place(bmc: &Bmc) -> Result<Option<redfish_client::ODataId>> {
    if let Some(places) = bmc.backend().places() {
        return Ok(Some(places.secure_boot.clone()));
    }
    Ok(crate::control::read_system(bmc).await?.secure_boot.map(|l| l.odata_id))
}

/// What one run of `secure-boot reset-keys` shares across its hosts.
#[derive(Debug)]
pub struct KeysRun {
    /// The reset.
    pub kind: ResetKeysType,
    /// How its hosts are written to: the reboot that completes the reset (`None`: it completes
    /// at the next reboot), pending work, hooks, the lock.
    pub writes: Writes,
}

/// What a key reset did on one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeysReset {
    /// The host's name.
    pub host: String,
    /// The reset.
    pub kind: ResetKeysType,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// Secure Boot after the reboot (or right after the action).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<SecureBootState>,
    /// Pending work deleted first (`--replace-pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The hooks that ran around its reboot, `before-reboot: ok` (only when hooks are set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// A sentence for people.
    pub summary: String,
}

/// Resets the host's Secure Boot keys under its writer `w`: the reset must be one the host
/// offers, and its Secure Boot policy `Custom` (checked first, so the iDRAC's SYS439 never has
/// to say it); the pending work rftune did not stage is refused; then the action and, by the
/// run's policy, the reboot that completes it.
pub async fn reset_keys(run: &KeysRun, w: &Writer<'_>) -> Result<KeysReset> {
    let bmc = w.bmc;
    let refuse = |m: String| crate::Error::from(HostError::new(&bmc.name, HostErrorKind::Unsupported, m));
    // The policy the reset needs is checked before anything is sent: a BIOS that names no
    // policy attribute cannot have it checked, and is not sent the reset.
    let backend = w.writable().await?;
    let Some(policy_attribute) = crate::passwords::names(bmc)?.secure_boot_policy else {
        return Err(refuse(format!(
            "{}: its BIOS names no Secure Boot policy attribute, so rftune cannot check the Custom policy a key reset needs (reset the keys with the vendor's own tools)",
            backend.lacks("Secure Boot key reset")
        )));
    };
    let Some(secure_boot) = place(bmc).await? else {
        return Err(refuse("the host has no Secure Boot resource".into()));
    };
    let bios_id = bmc.bios_id().await?;
    let (sb, bios, staged) = tokio::join!(read(bmc, secure_boot.path()), bmc.client.bios(&bios_id), w.pending());
    let Some(sb) = sb? else {
        return Err(refuse("the host has no Secure Boot resource".into()));
    };
    let offered = sb.allowed_resets();
    if !offered.is_empty() && !offered.contains(&run.kind) {
        let names: Vec<&str> = offered.iter().map(|k| k.as_str()).collect();
        return Err(refuse(format!(
            "the host does not offer {}; it offers {}",
            run.kind,
            names.join(", ")
        )));
    }
    let bios = bios.map_err(|e| bmc.explain(e, "reading the BIOS"))?;
    let staged = staged?;
    let policy = bios
        .attributes
        .get(policy_attribute)
        .and_then(AttributeValue::as_str)
        .map(str::to_owned);
    if policy.as_deref().is_some_and(|p| !p.eq_ignore_ascii_case("Custom")) {
        return Err(HostError::new(
            &bmc.name,
            HostErrorKind::ProfileNotApplicable,
            format!(
                "Secure Boot keys can be reset only under the Custom policy; {policy_attribute} is {} (set it in a profile, `[bios.{policy_attribute}] value = \"Custom\"`, and apply it first: one BIOS job and a reboot)",
                policy.unwrap_or_default(),
            ),
        )
        .into());
    }
    let replaced = w.settle(&staged, Own::RideAlong, "a Secure Boot key reset").await?;
    let _slot = w.slot().await?;
    w.check("resetting Secure Boot keys")?;
    let body = request::reset_keys_body(run.kind);
    if let Err(e) = bmc.client.post(sb.reset_keys_target().path(), &body).await {
        let message = if e.has_code("SYS439") || e.has_code("RAC1212") {
            format!(
                "resetting Secure Boot keys ({}): the Secure Boot policy is not Custom",
                run.kind
            )
        } else {
            format!("resetting Secure Boot keys ({})", run.kind)
        };
        let e = bmc.explain(e, &message);
        w.audit(Step::ResetKeys, body, "error", json!(crate::error::report(&e)))?;
        return Err(e);
    }
    w.audit(Step::ResetKeys, body, "ok", Value::Null)?;
    let left = "the key reset stays requested and completes at its next reboot";
    let undo = || async { left.to_owned() };
    w.before_reboot(undo, left).await?;
    let why = format!("the Secure Boot key reset ({})", run.kind);
    let rebooted = w.reboot(&why, None).await?.is_some();
    let after = read(bmc, sb.odata_id.path()).await?.as_ref().map(SecureBootState::from);
    let summary = if rebooted {
        format!("{}: done (rebooted once)", run.kind)
    } else {
        format!("{}: sent; it completes at the next reboot", run.kind)
    };
    Ok(KeysReset {
        host: bmc.name.clone(),
        kind: run.kind,
        rebooted,
        after,
        replaced,
        hooks: Vec::new(),
        summary,
    })
}

/// `secure-boot reset-keys` as a fleet [`Operation`]: the reset under the host's lock, and the
/// hooks after its reboot.
impl Operation for KeysRun {
    type Output = KeysReset;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<KeysReset> {
        let w = self.writes.begin(bmc, observer).await?;
        let done = reset_keys(self, &w).await;
        let ok = done.as_ref().is_ok_and(|d| d.rebooted);
        let why = done.as_ref().map_or_else(|_| String::new(), |d| d.summary.clone());
        w.after_reboot(&done, ok, &why).await?;
        let mut done = done?;
        done.hooks = w.hooks_ran();
        Ok(done)
    }
}
