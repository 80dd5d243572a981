//! Dell iDRAC9 (14G to 16G PowerEdge), concern by concern: the fixed resource paths every
//! iDRAC9 serves (read without discovery, so a warm diff costs four reads), a settings object
//! that lists only what is staged, one BIOS job per staged change in Dell's OEM job queue, the
//! Lifecycle Controller's readiness, `DellAttributes` for the iDRAC's own settings with System
//! Lockdown among them, and the Lifecycle log. Every request here is `redfish_client::oem::dell`'s.

use super::concern::{
    BiosActions, BiosNames, BmcSettings, BootControl, DefaultsFlag, EventLog, JobQueue, Logged, PendingValues, Places,
    Readiness, ScpShapes, SequenceEntry,
};
use super::job::{Job, JobKind, QueueClear};
use futures_util::future::BoxFuture;
use redfish_client::oem::dell::{self, AttributeGroup, DellBootSources, DellJob, JobQueueClear};
use redfish_client::resources::bios::{Attributes, Bios, SettingsApplyTime};
use redfish_client::resources::computer_system::ComputerSystem;
use redfish_client::{Client, ODataId, Result, Staged, Written};
use serde_json::Value;

/// Where an iDRAC9 keeps everything: the same paths on every one.
pub(super) fn places() -> Places {
    Places {
        system: ODataId::new(dell::SYSTEM),
        bios: ODataId::new(dell::BIOS),
        bios_settings: ODataId::new(dell::BIOS_SETTINGS),
        bios_registry: ODataId::new(dell::BIOS_REGISTRY),
        manager: ODataId::new(dell::MANAGER),
        chassis: ODataId::new(dell::CHASSIS),
        secure_boot: ODataId::new(dell::SECURE_BOOT),
        boot_options: ODataId::new(dell::BOOT_OPTIONS),
    }
}

/// What Dell's BIOS calls the passwords (as `Bios.ChangePassword` names them), their hashes
/// (real iDRACs list the SHA-256 hash in `GET Bios`, empty when none is set), and the Secure
/// Boot policy.
pub(super) const NAMES: BiosNames = BiosNames {
    setup_password: dell::BIOS_PASSWORDS[0],
    system_password: dell::BIOS_PASSWORDS[1],
    setup_password_hash: Some("SHA256SetupPassword"),
    system_password_hash: Some("SHA256SystemPassword"),
    secure_boot_policy: Some(dell::SECURE_BOOT_POLICY),
};

/// A Dell job as the engine sees it.
pub(super) fn job(j: DellJob) -> Job {
    let kind = match j.job_type.as_deref() {
        _ if j.is_bios_config() => JobKind::BiosConfiguration,
        Some("ImportConfiguration") => JobKind::ConfigurationImport,
        _ => JobKind::Other,
    };
    Job {
        outcome: j.outcome(),
        kind,
        job_state: j.job_state.to_string(),
        odata_id: j.odata_id,
        id: j.id,
        name: j.name,
        job_type: j.job_type,
        message: j.message,
        message_id: j.message_id,
        percent_complete: j.percent_complete,
        start_time: j.start_time,
        completion_time: j.completion_time,
        target_settings_uri: j.target_settings_uri,
    }
}

/// The settings object lists only what is staged; staging with an apply time creates the BIOS
/// job; `DellManager.ClearPending` discards.
pub(super) struct StagedOnly;

impl PendingValues for StagedOnly {
    /// A value staged equal to the current one still rides on the pending job: every entry is
    /// pending.
    fn pending(&self, _current: &Attributes, settings: Attributes) -> Attributes {
        settings
    }

    fn stage<'a>(
        &'a self,
        client: &'a Client,
        settings: &'a ODataId,
        values: &'a Attributes,
        apply_time: Option<&'a SettingsApplyTime>,
        etag: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Staged>> {
        Box::pin(client.stage_settings_if_match(settings, values, apply_time, etag))
    }

    /// `DellManager.ClearPending` on the iDRAC's settings object.
    fn clear<'a>(
        &'a self,
        client: &'a Client,
        _settings: &'a ODataId,
        _current: &'a Attributes,
        _pending: &'a Attributes,
    ) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move { client.dell().clear_pending().await })
    }
}

/// Dell's OEM job queue (`Oem/Dell/Jobs`, else the older `Jobs`) and `DellJobService`.
pub(super) struct OemJobs;

impl JobQueue for OemJobs {
    fn list<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Vec<Job>>> {
        Box::pin(async move { Ok(client.dell().jobs().await?.into_iter().map(job).collect()) })
    }

    fn get<'a>(&'a self, client: &'a Client, id: &'a str) -> BoxFuture<'a, Result<Job>> {
        Box::pin(async move { client.dell().job(id).await.map(job) })
    }

    fn create_bios_job<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<ODataId>> {
        Box::pin(async move { client.dell().create_bios_job().await })
    }

    fn delete<'a>(&'a self, client: &'a Client, id: &'a str) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move { client.dell().delete_job(id).await })
    }

    fn clear<'a>(&'a self, client: &'a Client, what: &'a QueueClear) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move {
            let what = match what {
                QueueClear::Job(id) => JobQueueClear::Job(id.clone()),
                QueueClear::All => JobQueueClear::All,
                QueueClear::AllForce => JobQueueClear::AllForce,
            };
            client.dell().clear_job_queue(&what).await
        })
    }
}

/// The Lifecycle Controller's `GetRemoteServicesAPIStatus`.
pub(super) struct LifecycleController;

impl Readiness for LifecycleController {
    fn in_post<'a>(&'a self, client: &'a Client, _: Option<&'a ComputerSystem>) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move { Ok(client.dell().lc_status().await?.in_post()) })
    }
}

/// `DellAttributes`: the iDRAC's, the system's and the Lifecycle Controller's settings.
pub(super) struct DellAttributes;

impl BmcSettings for DellAttributes {
    fn read<'a>(&'a self, client: &'a Client, group: AttributeGroup) -> BoxFuture<'a, Result<Attributes>> {
        Box::pin(async move { Ok(client.dell().attributes(group).await?.attributes) })
    }

    fn write<'a>(
        &'a self,
        client: &'a Client,
        group: AttributeGroup,
        values: &'a Attributes,
    ) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move { client.dell().set_attributes(group, values).await })
    }

    fn lockdown<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Option<bool>>> {
        Box::pin(async move { client.dell().system_lockdown().await })
    }

    fn lockdown_in(&self, group: AttributeGroup, values: &Attributes) -> Option<bool> {
        (group == AttributeGroup::Idrac)
            .then(|| values.get(dell::SYSTEM_LOCKDOWN))
            .flatten()
            .and_then(|v| v.as_str())
            .map(|v| v.eq_ignore_ascii_case("Enabled"))
    }

    fn lockdown_reason(&self) -> String {
        format!(
            "System Lockdown is on (iDRAC attribute {}): the iDRAC refuses every BIOS and iDRAC change until an administrator turns it off (e.g. `racadm set iDRAC.Lockdown.SystemLockdown Disabled`, or in the iDRAC web interface)",
            dell::SYSTEM_LOCKDOWN
        )
    }
}

/// `Bios.ResetBios` and `Bios.ChangePassword` at their iDRAC paths; the Lifecycle
/// Controller's `BIOSRTDRequested` flag.
pub(super) struct BiosAtFixedPaths;

impl BiosActions for BiosAtFixedPaths {
    fn reset_to_defaults<'a>(&'a self, client: &'a Client, _: &'a ODataId) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move { client.post(dell::RESET_BIOS, &serde_json::json!({})).await })
    }

    fn defaults_requested<'a>(
        &'a self,
        client: &'a Client,
        _: &'a Bios,
    ) -> BoxFuture<'a, Result<Option<DefaultsFlag>>> {
        Box::pin(async move {
            match client.dell().attributes(AttributeGroup::LifecycleController).await {
                Ok(a) => Ok(a
                    .attributes
                    .get(dell::BIOS_RTD_REQUESTED)
                    .and_then(|v| v.as_str())
                    .map(|v| DefaultsFlag::Requested(v.eq_ignore_ascii_case("True")))),
                Err(e) if e.status() == Some(404) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    fn change_password<'a>(
        &'a self,
        client: &'a Client,
        _: &'a ODataId,
        body: &'a Value,
    ) -> BoxFuture<'a, Result<Written>> {
        Box::pin(client.post(dell::CHANGE_PASSWORD, body))
    }
}

/// The override on the System itself; the boot sequence from Dell's boot sources.
pub(super) struct SystemBoot;

impl BootControl for SystemBoot {
    fn override_targets(&self, system: &ODataId) -> Vec<ODataId> {
        vec![system.clone()]
    }

    /// Dell's boot sources where the iDRAC serves them: at their path on real iDRAC9 captures
    /// (6.00, 7.10), else at the older one that badfish and Dell's Ansible modules read; `None`
    /// when neither exists.
    fn sequence<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Option<Vec<SequenceEntry>>>> {
        Box::pin(async move {
            for path in [dell::DELL_BOOT_SOURCES, dell::BOOT_SOURCES] {
                match client.get::<DellBootSources>(path).await {
                    Ok(b) => {
                        let seq = b
                            .sequence()
                            .into_iter()
                            .map(|e| SequenceEntry {
                                name: e.name.clone(),
                                enabled: e.enabled,
                                option: None,
                            })
                            .collect();
                        return Ok(Some(seq));
                    }
                    Err(e) if e.status() == Some(404) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(None)
        })
    }
}

/// iDRAC9 takes the components as one comma-separated string.
pub(super) struct JoinedTargets;

impl ScpShapes for JoinedTargets {
    fn targets(&self, targets: &[String]) -> Value {
        Value::String(targets.join(","))
    }
}

/// The Lifecycle log.
pub(super) struct LifecycleLog;

impl EventLog for LifecycleLog {
    fn latest<'a>(&'a self, client: &'a Client, n: usize) -> BoxFuture<'a, Result<Vec<Logged>>> {
        Box::pin(async move {
            Ok(client
                .dell()
                .lifecycle_log(n)
                .await?
                .into_iter()
                .map(|entry| Logged {
                    actor: dell::lclog::actor(&entry),
                    entry,
                })
                .collect())
        })
    }
}

/// Whether `Managers/<id>/Oem/Dell/<rest>` is a resource this backend reads: the iDRAC's
/// attribute groups, its job queue and the job and Lifecycle Controller services (names
/// compared without regard to case, as a capture compares paths).
pub(super) fn reads_manager_oem(rest: &[&str]) -> bool {
    let is = |segment: &&str, name: &str| segment.eq_ignore_ascii_case(name);
    match rest {
        [first] => ["Jobs", "DellJobService", "DellLCService"].iter().any(|n| is(first, n)),
        [first, _] => is(first, "DellAttributes") || is(first, "Jobs"),
        _ => false,
    }
}

/// The service tag an iDRAC's service root names (`Oem.Dell.ServiceTag`).
pub(super) fn service_tag(root: &redfish_client::resources::service_root::ServiceRoot) -> Option<String> {
    dell::service_tag(root).map(str::to_owned)
}
