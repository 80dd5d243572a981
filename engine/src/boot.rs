//! A host's boot order and its one-time boot: the boot devices a profile's `[boot]` section is
//! resolved against (its BIOS's lists, named after its boot options), `boot show` (the order
//! with display names, FQDDs and enabled flags, and the override), `boot once` (an override for
//! the next boot only, with or without a reboot) and `boot clear`.
//!
//! A one-time override sends only `BootSourceOverrideTarget` and `BootSourceOverrideEnabled`
//! (with `UefiTargetBootSourceOverride` for a `BootNNNN`): on iDRAC9 a `BootSourceOverrideMode`
//! in the request is a staged setting that queues a BIOS job and a second reboot.

use crate::audit::Step;
use crate::backend::BootOrder;
use crate::backend::SequenceEntry;
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result, bad_input};
use crate::lifecycle::Operation;
use crate::observe::Observer;
use crate::read::HostState;
use crate::write::{Own, Writer, Writes};
use bios_profiles::{BootDevices, ResolvedProfile};
use redfish_client::request;
use redfish_client::resources::attribute_registry::{Attribute, AttributeType};
use redfish_client::resources::bios::Attributes;
use redfish_client::resources::boot::{self as model, Boot, BootOption, BootSource, OverrideEnabled};
use redfish_client::resources::computer_system::ComputerSystem;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// The host's boot options (`BootOptions`, members inline: one request), or `None` when it has
/// no such collection: at its backend's fixed place, else where the `system` as read links
/// them (read here when not given).
pub async fn boot_options(bmc: &Bmc, system: Option<&ComputerSystem>) -> Result<Option<Vec<BootOption>>> {
    let linked = |system: &ComputerSystem| {
        system
            .boot
            .as_ref()
            .and_then(|b| b.boot_options.as_ref())
            .map(|l| l.odata_id.clone())
    };
    let collection = match (bmc.backend().places(), system) {
        (Some(places), _) => Some(places.boot_options.clone()),
        (None, Some(system)) => linked(system),
        (None, None) => linked(&read_system(bmc).await?),
    };
    let Some(collection) = collection else {
        return Ok(None);
    };
    match bmc.client.expanded_members::<BootOption>(collection.path()).await {
        Ok(options) => Ok(Some(options)),
        Err(e) if e.status() == Some(404) => Ok(None),
        Err(e) => Err(bmc.explain(e, "reading the boot options")),
    }
}

/// The host's boot devices as its BIOS values `bios` list them, named after `options`
/// where the pairing is certain; `None` when the BIOS lists no `SetBootOrderEn`.
pub fn devices(bios: &Attributes, options: Option<&[BootOption]>) -> Option<BootDevices> {
    let mut devices = BootDevices::from_bios(bios)?;
    if let Some(options) = options {
        devices.label(options);
    }
    Some(devices)
}

/// `profile` with its `[boot]` section resolved for this host (its BIOS values `bios`, its boot
/// devices `devices`); the profile as it is when it has none. A reference that matches no
/// device is this host's error, naming the devices it has.
pub(crate) fn with_boot(
    bmc: &Bmc,
    profile: Arc<ResolvedProfile>,
    bios: &Attributes,
    devices: Option<&BootDevices>,
) -> Result<Arc<ResolvedProfile>> {
    if profile.boot.is_empty() {
        return Ok(profile);
    }
    let backend = bmc.backend();
    if devices.is_none() && !backend.is_idrac() {
        let message = format!(
            "profile `{}` has a [boot] section, which rftune writes through Dell's BIOS boot lists (SetBootOrderEn) or HPE's boot settings (PersistentBootConfigOrder); {} has neither: leave [boot] out of profiles for these hosts",
            profile.name,
            backend.kind()
        );
        return Err(HostError::new(&bmc.name, HostErrorKind::ProfileNotApplicable, message).into());
    }
    match profile.with_boot(bios, devices) {
        Ok(resolved) => Ok(Arc::new(resolved)),
        Err(e) => Err(HostError::new(&bmc.name, HostErrorKind::ProfileNotApplicable, e.to_string()).into()),
    }
}

/// Carries a boot order kept apart from the BIOS values into `state` as one more value under
/// the backend's name for it: the order in force among the current values, a different staged
/// one among the pending, and a registry entry that lets it validate, diff and plan like a
/// BIOS attribute (free text, writable, applied at a reset). No registry lists it: it is no
/// BIOS attribute.
pub(crate) fn carry_order(bmc: &Bmc, state: &mut HostState, order: &BootOrder) {
    let Some(name) = bmc.backend().boot().and_then(|b| b.order_setting()) else {
        return;
    };
    state.bios.insert(name.to_owned(), order.current.join(",").into());
    state.order_outcome.clone_from(&order.outcome);
    if order.pending != order.current {
        state.pending.insert(name.to_owned(), order.pending.join(",").into());
    }
    if state.registry.attribute(name).is_some() {
        return;
    }
    let mut extended = (*state.registry).clone();
    extended.registry_entries.attributes.push(Attribute {
        attribute_name: name.to_owned(),
        display_name: Some("Boot order (the BMC's boot settings, beside the BIOS)".into()),
        help_text: Some("The boot devices by name, first to last, comma-separated.".into()),
        kind: AttributeType::String,
        read_only: Some(false),
        reset_required: Some(true),
        ..Attribute::default()
    });
    state.registry = Arc::new(extended);
}

/// One entry of the boot order as `boot show` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShownOption {
    /// Its place in the order, from 1.
    pub position: usize,
    /// `Boot0000`.
    pub reference: String,
    /// The display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The device name the BMC's boot sequence gives the same position (an iDRAC's FQDD,
    /// `NIC.PxeDevice.1-1`), which a profile's `[boot.order]` can name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fqdd: Option<String>,
    /// Whether the firmware boots it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Its UEFI device path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uefi_device_path: Option<String>,
}

/// A host's boot order and override (`rftune boot show`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BootShown {
    /// The host's name.
    pub host: String,
    /// The boot order.
    pub order: Vec<ShownOption>,
    /// The override target (`None` when there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub override_target: Option<BootSource>,
    /// `Once`, `Continuous` or `Disabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub override_enabled: Option<OverrideEnabled>,
    /// The device path booted for a `UefiTarget` override.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uefi_target: Option<String>,
    /// The targets the BMC accepts for `boot once`.
    pub allowed_targets: Vec<BootSource>,
}

impl BootShown {
    /// Whether an override is set for the next boot(s).
    pub fn override_active(&self) -> bool {
        matches!(
            self.override_enabled,
            Some(OverrideEnabled::Once | OverrideEnabled::Continuous)
        ) && !matches!(self.override_target, None | Some(BootSource::None))
    }
}

async fn read_system(bmc: &Bmc) -> Result<ComputerSystem> {
    crate::control::read_system(bmc).await
}

/// The BMC's boot sequence by device name, where its backend serves one (Dell's boot
/// sources; the devices of a boot order kept apart from the BIOS, by their boot options, read
/// through the BIOS that links them); `None` otherwise.
async fn boot_sources(bmc: &Bmc) -> Result<Option<Vec<SequenceEntry>>> {
    let backend = bmc.backend();
    let Some(boot) = backend.boot() else {
        return Ok(None);
    };
    if boot.order_setting().is_none() {
        return boot
            .sequence(&bmc.client)
            .await
            .map_err(|e| bmc.explain(e, "reading Dell's boot sources"));
    }
    let order = crate::write::order::read(bmc, None).await?;
    // The host is now found (system, BIOS, settings object): the next run starts there.
    bmc.remember();
    Ok(order.map(|o| {
        o.devices
            .devices
            .into_iter()
            .map(|d| SequenceEntry {
                name: d.fqdd,
                enabled: d.enabled,
                option: d.option,
            })
            .collect()
    }))
}

/// Reads the boot order and override: the system, its boot options and the BMC's boot
/// sequence, at once (three requests). Device names are given by position, where the sequence
/// has as many entries as the order (both real iDRAC9 captures pair them so).
pub async fn show(bmc: &Bmc) -> Result<BootShown> {
    // At fixed places the three are read at once; a host read by its links has its system
    // read first, whose links find the options (and whose answer, on a host met at the
    // presumed iDRAC's places, tells which backend it is).
    let (system, options, sources) = match bmc.backend().places() {
        Some(_) => tokio::join!(read_system(bmc), boot_options(bmc, None), boot_sources(bmc)),
        None => (read_system(bmc).await, Ok(None), Ok(None)),
    };
    let (options, sources) = match &system {
        Ok(read) if bmc.backend().places().is_none() => {
            tokio::join!(boot_options(bmc, Some(read)), boot_sources(bmc))
        }
        _ => (options, sources),
    };
    let (system, options, sequence) = match (system, options, sources) {
        (Ok(s), Ok(o), Ok(q)) => (s, o.unwrap_or_default(), q.unwrap_or_default()),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            return Err(bmc.presumed_failure(e, |b| b.boot().is_some(), "boot control").await);
        }
    };
    let boot = system.boot.unwrap_or_default();
    // By boot option where the sequence names them (an iLO's boot sources, which leave some
    // options out), else by position.
    let by_option = !sequence.is_empty() && sequence.iter().all(|e| e.option.is_some());
    let paired = !by_option && sequence.len() == boot.boot_order.len();
    let order = boot
        .boot_order
        .iter()
        .enumerate()
        .map(|(i, reference)| {
            let option = options.iter().find(|o| o.is(reference));
            let entry = match (by_option, paired) {
                (true, _) => sequence
                    .iter()
                    .find(|e| e.option.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(reference))),
                (false, true) => sequence.get(i),
                (false, false) => None,
            };
            ShownOption {
                position: i + 1,
                reference: reference.clone(),
                name: option.and_then(|o| o.display_name.clone()),
                fqdd: entry.map(|e| e.name.clone()),
                enabled: option
                    .and_then(|o| o.boot_option_enabled)
                    .or_else(|| entry.map(|e| e.enabled)),
                uefi_device_path: option.and_then(|o| o.uefi_device_path.clone()),
            }
        })
        .collect();
    Ok(BootShown {
        host: bmc.name.clone(),
        order,
        override_target: boot.boot_source_override_target,
        override_enabled: boot.boot_source_override_enabled,
        // The iDRAC keeps the last path after an override ends or goes elsewhere; it is the
        // override's only while the target is `UefiTarget`.
        uefi_target: boot
            .uefi_target_boot_source_override
            .clone()
            .filter(|_| boot.boot_source_override_target == Some(BootSource::UefiTarget)),
        allowed_targets: boot.allowed_targets.clone(),
    })
}

/// `boot show` as a fleet [`Operation`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Show;

impl Operation for Show {
    type Output = BootShown;

    async fn run(&self, bmc: &mut Bmc, _: &dyn Observer) -> Result<BootShown> {
        show(bmc).await
    }
}

/// What `boot once` boots: a kind of device, or one boot option by reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnceTarget {
    /// A device kind (`Pxe`, `UefiHttp`, `Hdd`, `Cd`, `BiosSetup`, ...).
    Device(BootSource),
    /// One boot option (`Boot0001`), booted through `UefiTarget` and its UEFI device path.
    Option(String),
}

impl OnceTarget {
    /// `Pxe`, `uefihttp`, `Boot0001`, ...; `None` and `UefiTarget` are not targets (`boot
    /// clear` cancels; a boot option is named by its reference).
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        if model::is_boot_reference(text) {
            return Ok(Self::Option(format!("Boot{}", text[4..].to_ascii_uppercase())));
        }
        match BootSource::parse(text) {
            Some(BootSource::None) => bad_input!("`None` cancels an override: use `rftune boot clear`"),
            Some(BootSource::UefiTarget) => {
                bad_input!("name the boot option instead of UefiTarget (e.g. Boot0001; `rftune boot show` lists them)")
            }
            Some(source) => Ok(Self::Device(source)),
            None => bad_input!(
                "unknown boot target `{text}`: Pxe, UefiHttp, Hdd, Cd, BiosSetup, Usb, Utilities, SDCard, or a boot option such as Boot0001"
            ),
        }
    }
}

impl std::fmt::Display for OnceTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Device(d) => write!(f, "{d}"),
            Self::Option(o) => f.write_str(o),
        }
    }
}

/// What one run of `boot once` shares across its hosts.
#[derive(Debug)]
pub struct OnceRun {
    /// What to boot.
    pub target: OnceTarget,
    /// How its hosts are written to: whether and how to reboot now (`None`: at the host's
    /// next boot), pending work, hooks, the lock.
    pub writes: Writes,
}

/// What `boot once` did on one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnceDone {
    /// The host's name.
    pub host: String,
    /// The target as asked (`Pxe`, `Boot0001`).
    pub target: String,
    /// The UEFI device path booted, for a boot option.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uefi_target: Option<String>,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// After the reboot: whether the override was used up (the BMC shows none left).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumed: Option<bool>,
    /// rftune's own staged BIOS values that ran at that reboot too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staged_job_ran: Option<String>,
    /// Pending work deleted first (`--replace-pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The hooks that ran around its reboot, `before-reboot: ok` (only when hooks are set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// A sentence for people.
    pub summary: String,
}

/// The override body for `target` on a host whose boot object is `boot` and boot options are
/// `options`, with the UEFI device path of a named option; an error names what the host
/// accepts or has.
fn override_for(
    target: &OnceTarget,
    boot: &Boot,
    options: &[BootOption],
) -> std::result::Result<(BootSource, Option<String>), String> {
    let allowed = || {
        boot.allowed_targets
            .iter()
            .map(|t| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match target {
        OnceTarget::Device(source) if boot.accepts(*source) => Ok((*source, None)),
        OnceTarget::Device(source) => Err(format!(
            "the BMC does not offer {source} as a boot target; it offers {}",
            allowed()
        )),
        OnceTarget::Option(_) if !boot.accepts(BootSource::UefiTarget) => Err(format!(
            "the BMC does not offer UefiTarget, which booting one option needs; it offers {}",
            allowed()
        )),
        OnceTarget::Option(reference) => {
            let have = || {
                if options.is_empty() {
                    return "no boot options listed".to_owned();
                }
                options
                    .iter()
                    .map(|o| format!("{} ({})", o.reference(), o.display_name.as_deref().unwrap_or("no name")))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let option = options
                .iter()
                .find(|o| o.is(reference))
                .ok_or_else(|| format!("no boot option {reference}; the host has {}", have()))?;
            let path = option
                .uefi_device_path
                .clone()
                .filter(|p| !p.is_empty())
                .ok_or_else(|| format!("boot option {reference} has no UEFI device path to boot"))?;
            Ok((BootSource::UefiTarget, Some(path)))
        }
    }
}

/// Sets a one-time boot override on the host under its writer `w`, and reboots into it when
/// the run says so: the pending work rftune did not stage is refused (or deleted with
/// `--replace-pending`); rftune's own staged values ride on the reboot. After the reboot,
/// whether the override was used up.
pub async fn once(run: &OnceRun, w: &Writer<'_>) -> Result<OnceDone> {
    let bmc = w.bmc;
    let needs_options = matches!(run.target, OnceTarget::Option(_));
    // The system first: on a host not recognised yet, its answer tells where the rest is.
    let system = read_system(bmc).await?;
    let (options, staged) = tokio::join!(
        async {
            if needs_options {
                boot_options(bmc, Some(&system)).await
            } else {
                Ok(None)
            }
        },
        w.pending()
    );
    let boot = system.boot.unwrap_or_default();
    let options = options?.unwrap_or_default();
    let (source, uefi_path) = override_for(&run.target, &boot, &options)
        .map_err(|m| crate::Error::from(HostError::new(&bmc.name, HostErrorKind::Unsupported, m)))?;
    let staged = staged?;
    w.writable().await?;
    let replaced = w.settle(&staged, Own::RideAlong, "a one-time boot").await?;
    let staged_job_ran = (staged.ours && replaced.is_none()).then(|| staged.describe());
    let _slot = w.slot().await?;
    w.check("setting the boot override")?;
    w.phase(crate::observe::Phase::SettingBootOverride(run.target.to_string()));
    let body = request::boot_override_body(source, OverrideEnabled::Once, uefi_path.as_deref());
    write_override(w, Step::BootOnce, &body, |b| {
        b.boot_source_override_target == Some(source) && b.boot_source_override_enabled == Some(OverrideEnabled::Once)
    })
    .await?;
    let left = format!("the override to {} stays set for its next boot", run.target);
    let undo = || async {
        let body = request::boot_override_clear_body();
        match write_override(w, Step::Unstage, &body, |b| !b.override_active()).await {
            Ok(()) => "its one-time boot override was cancelled again".to_owned(),
            Err(e) => format!(
                "cancelling its override failed too ({}): the next boot goes to {}; cancel it with `rftune boot clear`",
                crate::error::report(&e),
                run.target
            ),
        }
    };
    w.before_reboot(undo, &left).await?;
    let why = format!("the one-time boot from {}", run.target);
    let rebooted = w.reboot(&why, None).await?.is_some();
    let consumed = if rebooted { Some(used_up(w).await?) } else { None };
    let summary = match consumed {
        Some(true) => format!("booted once from {} (rebooted; the override is used up)", run.target),
        Some(false) => format!(
            "rebooted, but the override to {} is still set: the host may not have reached the boot device",
            run.target
        ),
        None => format!("the next boot goes to {} once", run.target),
    };
    Ok(OnceDone {
        host: bmc.name.clone(),
        target: run.target.to_string(),
        uefi_target: uefi_path,
        rebooted,
        consumed,
        staged_job_ran: staged_job_ran.filter(|_| rebooted),
        replaced,
        hooks: Vec::new(),
        summary,
    })
}

/// Whether the override is used up once the host is back from its reboot. A host that counts
/// as back before its POST chose the boot device (an iLO, back at discovery complete) is read
/// again until its POST ended, within the run's boot timeout; elsewhere one read tells.
async fn used_up(w: &Writer<'_>) -> Result<bool> {
    use crate::wait::{Look, watch};
    let bmc = w.bmc;
    let backend = bmc.backend();
    let looked = watch(w.options().boot_timeout, || async {
        let system = match read_system(bmc).await {
            Ok(system) => system,
            Err(e) => return Look::Unreadable(e.to_string()),
        };
        let active = system.boot.as_ref().is_some_and(Boot::override_active);
        let ended = backend.readiness().and_then(|r| r.post_ended(&system));
        if !active || ended != Some(false) {
            Look::Done(!active)
        } else {
            Look::NotYet(None)
        }
    })
    .await;
    match looked {
        Ok(used) => Ok(used),
        // POST did not end within the boot timeout: the override is still set.
        Err(None) => Ok(false),
        Err(Some(why)) => {
            let message = format!("reading the system after the reboot: {why}");
            Err(HostError::new(&bmc.name, HostErrorKind::Timeout, message).into())
        }
    }
}

/// Sends an override `body`, recorded as `step`, where the host's backend writes boot
/// settings: the first place that takes it (a place that refuses the write with a 400 hands it
/// to the next, and the record says where it went). An answer that was lost is never resent:
/// the system is read back and `took` says whether the override is in force.
async fn write_override(w: &Writer<'_>, step: Step, body: &Value, took: impl Fn(&Boot) -> bool) -> Result<()> {
    let bmc = w.bmc;
    let backend = bmc.backend();
    let Some(boot) = backend.boot() else {
        let why = backend.lacks("boot settings");
        return Err(HostError::new(&bmc.name, HostErrorKind::Unsupported, why).into());
    };
    let targets = boot.override_targets(&bmc.system_id().await?);
    let several = targets.len() > 1;
    let mut refused: Vec<String> = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        let written_to = |what: &str| {
            if several {
                let mut d = json!({"written_to": target.path()});
                if !refused.is_empty() {
                    d["refused_by"] = json!(refused);
                }
                if !what.is_empty() {
                    d["note"] = json!(what);
                }
                d
            } else if what.is_empty() {
                Value::Null
            } else {
                json!(what)
            }
        };
        match bmc.client.patch(target.path(), body).await {
            Ok(_) => return w.audit(step, body.clone(), "ok", written_to("")),
            // This place does not take the write: the next one may.
            Err(e) if e.status() == Some(400) && i + 1 < targets.len() => {
                refused.push(format!("{}: {}", target.path(), e.last_attempt()));
            }
            Err(e) if e.write_outcome_unknown() => {
                let after = read_system(bmc).await?.boot.unwrap_or_default();
                if took(&after) {
                    return w.audit(
                        step,
                        body.clone(),
                        "ok",
                        written_to("the answer was lost; read back in force"),
                    );
                }
                w.audit(
                    step,
                    body.clone(),
                    "error",
                    written_to("the answer was lost; not in force"),
                )?;
                return Err(bmc.explain(e, "setting the boot override (read back: not in force)"));
            }
            Err(e) => {
                let e = bmc.explain(e, "setting the boot override");
                w.audit(step, body.clone(), "error", json!(crate::error::report(&e)))?;
                return Err(e);
            }
        }
    }
    // Every place returns above; a backend with no place to write boot settings to:
    let why = backend.lacks("place to write boot settings");
    Err(HostError::new(&bmc.name, HostErrorKind::Unsupported, why).into())
}

/// `boot once` as a fleet [`Operation`]: the override under the host's lock, and the hooks
/// after its reboot.
impl Operation for OnceRun {
    type Output = OnceDone;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<OnceDone> {
        let w = self.writes.begin(bmc, observer).await?;
        let done = once(self, &w).await;
        let ok = done.as_ref().is_ok_and(|d| d.consumed == Some(true));
        let why = done.as_ref().map_or_else(|_| String::new(), |d| d.summary.clone());
        w.after_reboot(&done, ok, &why).await?;
        let mut done = done?;
        done.hooks = w.hooks_ran();
        Ok(done)
    }
}

/// What `boot clear` did on one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cleared {
    /// The host's name.
    pub host: String,
    /// The override that was set (`Pxe once`), if one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
    /// A sentence for people.
    pub summary: String,
}

/// Cancels the host's boot override under its writer `w`; nothing is sent when none is set.
pub async fn clear(w: &Writer<'_>) -> Result<Cleared> {
    let bmc = w.bmc;
    let boot = read_system(bmc).await?.boot.unwrap_or_default();
    if !boot.override_active() {
        w.audit(Step::BootClear, Value::Null, "skipped", json!("no override set"))?;
        return Ok(Cleared {
            host: bmc.name.clone(),
            was: None,
            summary: "no boot override was set; nothing sent".into(),
        });
    }
    w.writable().await?;
    let was = format!(
        "{} {}",
        boot.boot_source_override_target.map_or("?", BootSource::as_str),
        boot.boot_source_override_enabled
            .map_or("?", OverrideEnabled::as_str)
            .to_lowercase()
    );
    let body = request::boot_override_clear_body();
    write_override(w, Step::BootClear, &body, |b| !b.override_active()).await?;
    Ok(Cleared {
        host: bmc.name.clone(),
        summary: format!("cancelled the boot override ({was})"),
        was: Some(was),
    })
}

/// `boot clear` as a fleet [`Operation`], under each host's lock.
#[derive(Debug)]
pub struct Clear {
    /// How its hosts are written to (the lock, the audit log).
    pub writes: Writes,
}

impl Operation for Clear {
    type Output = Cleared;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Cleared> {
        let w = self.writes.begin(bmc, observer).await?;
        clear(&w).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_targets_are_device_kinds_or_boot_options() {
        assert_eq!(OnceTarget::parse("pxe").unwrap(), OnceTarget::Device(BootSource::Pxe));
        assert_eq!(
            OnceTarget::parse("boot000a").unwrap(),
            OnceTarget::Option("Boot000A".into())
        );
        assert!(
            OnceTarget::parse("None")
                .unwrap_err()
                .to_string()
                .contains("rftune boot clear")
        );
        assert!(
            OnceTarget::parse("UefiTarget")
                .unwrap_err()
                .to_string()
                .contains("Boot0001")
        );
        assert!(
            OnceTarget::parse("network")
                .unwrap_err()
                .to_string()
                .contains("unknown boot target")
        );
    }

    #[test]
    fn an_override_is_checked_against_what_the_bmc_offers_and_has() {
        let boot: Boot = serde_json::from_value(json!({
            "BootSourceOverrideTarget@Redfish.AllowableValues": ["None", "Pxe", "Hdd", "UefiTarget", "UefiHttp"]
        }))
        .unwrap();
        let options: Vec<BootOption> = serde_json::from_value(json!([
            {"@odata.id": "/redfish/v1/Systems/System.Embedded.1/BootOptions/Boot0000", "Id": "Boot0000",
             "BootOptionReference": "Boot0000", "DisplayName": "HTTP Device 1: NIC in Slot 5 Port 1",
             "UefiDevicePath": "VenHw(986D1755-B9D0-4F8D-A0DA-D1DB18672045)"}
        ]))
        .unwrap();
        assert_eq!(
            override_for(&OnceTarget::Device(BootSource::Pxe), &boot, &options),
            Ok((BootSource::Pxe, None))
        );
        assert_eq!(
            override_for(&OnceTarget::Option("Boot0000".into()), &boot, &options),
            Ok((
                BootSource::UefiTarget,
                Some("VenHw(986D1755-B9D0-4F8D-A0DA-D1DB18672045)".into())
            ))
        );
        let err = override_for(&OnceTarget::Device(BootSource::Cd), &boot, &options).unwrap_err();
        assert_eq!(
            err,
            "the BMC does not offer Cd as a boot target; it offers None, Pxe, Hdd, UefiTarget, UefiHttp"
        );
        let err = override_for(&OnceTarget::Option("Boot0007".into()), &boot, &options).unwrap_err();
        assert_eq!(
            err,
            "no boot option Boot0007; the host has Boot0000 (HTTP Device 1: NIC in Slot 5 Port 1)"
        );
    }
}
