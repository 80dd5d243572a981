//! iDRAC (Dell) specifics: the fixed resource paths, configuration jobs and their states,
//! `DellAttributes` (iDRAC, system and Lifecycle Controller settings), Lifecycle Controller
//! readiness, who the Lifecycle log names ([`lclog`]), and Server Configuration Profiles
//! ([`scp`]). Models here are IO-free; the actions need the `client` feature.

use crate::odata::ODataId;
use crate::resources::bios::Attributes;
use crate::resources::message::message_code;
use crate::resources::service_root::ServiceRoot;
use crate::resources::task::JobOutcome;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

#[cfg(feature = "client")]
mod actions;
pub mod lclog;
pub mod scp;
#[cfg(feature = "client")]
pub use actions::{Dell, JobQueueClear};

/// `/redfish/v1/Systems/System.Embedded.1`.
pub const SYSTEM: &str = "/redfish/v1/Systems/System.Embedded.1";
/// The BIOS resource.
pub const BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios";
/// The BIOS settings object (pending values).
pub const BIOS_SETTINGS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/Settings";
/// The BIOS attribute registry, served directly.
pub const BIOS_REGISTRY: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry";
/// `DellManager.ClearPending` on the BIOS settings object.
pub const CLEAR_PENDING: &str =
    "/redfish/v1/Systems/System.Embedded.1/Bios/Settings/Actions/Oem/DellManager.ClearPending";
/// The iDRAC manager.
pub const MANAGER: &str = "/redfish/v1/Managers/iDRAC.Embedded.1";
/// The job queue at the path real iDRACs advertise (`Manager.Links.Oem.Dell.Jobs` on the R750
/// captures of iDRAC 6.00 and 7.10); read first.
pub const OEM_JOBS: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs";
/// The job queue at its older path, which also takes `POST` to create a job; read when the
/// advertised one is missing.
pub const JOBS: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs";
/// The iDRAC attribute that puts the server in System Lockdown.
pub const SYSTEM_LOCKDOWN: &str = "Lockdown.1.SystemLockdown";
/// `DellJobService.DeleteJobQueue`.
pub const DELETE_JOB_QUEUE: &str =
    "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellJobService/Actions/DellJobService.DeleteJobQueue";
/// `DellLCService.GetRemoteServicesAPIStatus`.
pub const LC_STATUS: &str =
    "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellLCService/Actions/DellLCService.GetRemoteServicesAPIStatus";
/// The system's boot options (`Boot0000`, ...).
pub const BOOT_OPTIONS: &str = "/redfish/v1/Systems/System.Embedded.1/BootOptions";
/// The system's UEFI Secure Boot resource.
pub const SECURE_BOOT: &str = "/redfish/v1/Systems/System.Embedded.1/SecureBoot";
/// Dell's boot sources (`UefiBootSeq`: the boot order by FQDD) where real iDRAC9 captures
/// (6.00, 7.10) serve them.
pub const DELL_BOOT_SOURCES: &str = "/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellBootSources";
/// The older path of the same resource, which badfish and Dell's Ansible modules read.
pub const BOOT_SOURCES: &str = "/redfish/v1/Systems/System.Embedded.1/BootSources";
/// `Bios.ResetBios`: the BIOS returns to its defaults at the next POST.
pub const RESET_BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/Actions/Bios.ResetBios";
/// `Bios.ChangePassword`: a BIOS password change, applied by the next BIOS job.
pub const CHANGE_PASSWORD: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/Actions/Bios.ChangePassword";
/// The Lifecycle Controller attribute that is `"True"` while a BIOS reset to defaults waits
/// for the next POST (a string, as real iDRACs report it).
pub const BIOS_RTD_REQUESTED: &str = "LCAttributes.1.BIOSRTDRequested";
/// The BIOS attribute of the boot mode (`Uefi`, `Bios`).
pub const BOOT_MODE: &str = "BootMode";
/// The BIOS attribute listing the enabled boot devices by FQDD, comma-separated, in boot
/// order (real R750 and R7615 captures); written, it sets the order and the enabled devices.
pub const SET_BOOT_ORDER_ENABLED: &str = "SetBootOrderEn";
/// The BIOS attribute listing the disabled boot devices by FQDD.
pub const SET_BOOT_ORDER_DISABLED: &str = "SetBootOrderDis";
/// The BIOS attribute that turns UEFI Secure Boot on at the next POST (`Enabled`, `Disabled`).
pub const SECURE_BOOT_ATTRIBUTE: &str = "SecureBoot";
/// The BIOS attribute of the Secure Boot policy: key resets need `Custom`.
pub const SECURE_BOOT_POLICY: &str = "SecureBootPolicy";
/// The BIOS passwords `Bios.ChangePassword` changes, by `PasswordName`.
pub const BIOS_PASSWORDS: [&str; 2] = ["SetupPassword", "SysPassword"];

/// Whether a BIOS attribute holds a secret: real iDRACs list the SHA-256 hash and salt of the
/// setup and system passwords (`SHA256SetupPassword`, `SHA256SetupPasswordSalt`,
/// `SHA256SystemPassword`, `SHA256SystemPasswordSalt`) in `GET Bios` in clear, and the
/// password attributes themselves are write-only. Snapshots, captures and diffs never keep
/// them.
pub fn is_secret_bios_attribute(name: &str) -> bool {
    let sha = name.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("SHA256")) && name.contains("Password");
    sha || BIOS_PASSWORDS.contains(&name)
}

/// The chassis that carries power readings.
pub const CHASSIS: &str = "/redfish/v1/Chassis/System.Embedded.1";

/// The service tag from `ServiceRoot.Oem.Dell.ServiceTag`.
pub fn service_tag(root: &ServiceRoot) -> Option<&str> {
    super::vendor_section(root.oem.as_ref(), "Dell")?
        .get("ServiceTag")?
        .as_str()
}

/// Which `DellAttributes` resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum AttributeGroup {
    /// `System.Embedded.1`: thermal and server power (caps).
    System,
    /// `iDRAC.Embedded.1`: the iDRAC's own settings, including System Lockdown.
    #[serde(rename = "iDRAC")]
    Idrac,
    /// `LifecycleController.Embedded.1`.
    LifecycleController,
}

impl AttributeGroup {
    /// Every group.
    pub const ALL: [Self; 3] = [Self::System, Self::Idrac, Self::LifecycleController];

    /// The resource id, e.g. `System.Embedded.1`.
    pub fn resource_id(self) -> &'static str {
        match self {
            Self::System => "System.Embedded.1",
            Self::Idrac => "iDRAC.Embedded.1",
            Self::LifecycleController => "LifecycleController.Embedded.1",
        }
    }

    /// The resource path.
    pub fn path(self) -> String {
        format!("{MANAGER}/Oem/Dell/DellAttributes/{}", self.resource_id())
    }
}

impl fmt::Display for AttributeGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.resource_id())
    }
}

/// A `DellAttributes` resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DellAttributes {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// e.g. `System.Embedded.1`.
    #[serde(default)]
    pub id: String,
    /// The registry defining these attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute_registry: Option<String>,
    /// `Group.Index.Name` → value; enumerations are display strings. Required, as in `Bios`.
    pub attributes: Attributes,
}

/// A Dell job (`Managers/iDRAC.Embedded.1/Jobs/<JID>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DellJob {
    /// Where it lives.
    #[serde(rename = "@odata.id")]
    pub odata_id: ODataId,
    /// `JID_xxxxxxxxxxxx`.
    #[serde(default)]
    pub id: String,
    /// e.g. `Configure: BIOS.Setup.1-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// e.g. `BIOSConfiguration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_type: Option<String>,
    /// Where it is.
    #[serde(default = "JobState::unknown")]
    pub job_state: JobState,
    /// Latest message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Latest MessageId (`PR19`, `JCP001`, `PR30`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_complete: Option<u8>,
    /// Start time as iDRAC reports it (`TIME_NOW` or ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// Completion time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<String>,
    /// The settings object the job applies, when reported.
    #[serde(rename = "TargetSettingsURI", default, skip_serializing_if = "Option::is_none")]
    pub target_settings_uri: Option<String>,
}

/// `DellJob.JobState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum JobState {
    New,
    Scheduled,
    Running,
    Completed,
    Downloading,
    Downloaded,
    Scheduling,
    ReadyForExecution,
    Waiting,
    Paused,
    Failed,
    CompletedWithErrors,
    RebootPending,
    RebootFailed,
    RebootCompleted,
    PendingActivation,
    /// A state this client does not know (also iDRAC's own `Unknown`).
    #[serde(other)]
    Unknown,
}

impl JobState {
    fn unknown() -> Self {
        Self::Unknown
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl DellJob {
    /// The trailing code of the MessageId, e.g. `PR19`.
    pub fn message_code(&self) -> Option<&str> {
        self.message_id.as_deref().map(message_code)
    }

    /// Classifies the job for a waiter.
    pub fn outcome(&self) -> JobOutcome {
        match self.job_state {
            JobState::Completed | JobState::RebootCompleted => JobOutcome::Succeeded,
            JobState::CompletedWithErrors => JobOutcome::SucceededWithErrors,
            JobState::Failed | JobState::RebootFailed => JobOutcome::Failed,
            _ if self.message_code() == Some("PR30") => JobOutcome::Stuck,
            JobState::Running | JobState::Downloading | JobState::Scheduling | JobState::ReadyForExecution => {
                JobOutcome::Running
            }
            _ => JobOutcome::Waiting,
        }
    }

    /// Whether the job still occupies the queue: waiting, running, or stuck at PR30. A stuck
    /// job never runs but blocks new configuration jobs (SYS011) and clearing pending values
    /// (BIOS011) until it is deleted, so it counts as open.
    pub fn holds_queue(&self) -> bool {
        matches!(
            self.outcome(),
            JobOutcome::Waiting | JobOutcome::Running | JobOutcome::Stuck
        )
    }

    /// Whether this is a BIOS configuration job.
    pub fn is_bios_config(&self) -> bool {
        self.job_type.as_deref() == Some("BIOSConfiguration")
    }

    /// A BIOS configuration job that still holds the queue: scheduled, running, or stuck at
    /// PR30 (an apply must not stack on it).
    pub fn is_open_bios_job(&self) -> bool {
        self.is_bios_config() && self.holds_queue()
    }

    /// Converts a bad outcome into an error naming the job, its state and MessageId.
    pub fn failure(&self) -> Option<crate::Error> {
        let state = match self.outcome() {
            JobOutcome::Failed => self.job_state.to_string(),
            JobOutcome::Stuck => format!("{} (stuck: will never run)", self.job_state),
            _ => return None,
        };
        Some(crate::Error::JobFailed {
            job_id: self.id.clone(),
            state,
            message_id: self.message_id.clone(),
            message: self.message.clone(),
        })
    }
}

/// `DellBootSources`: the boot order by FQDD (`UefiBootSeq` in UEFI mode, `BootSeq` in BIOS
/// mode), as real iDRAC9 captures (6.00, 7.10) serve it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DellBootSources {
    /// The sequences.
    #[serde(default)]
    pub attributes: BootSequences,
}

/// `DellBootSources.Attributes`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BootSequences {
    /// The UEFI boot sequence.
    #[serde(rename = "UefiBootSeq", default)]
    pub uefi: Vec<BootSeqEntry>,
    /// The legacy BIOS boot sequence.
    #[serde(rename = "BootSeq", default)]
    pub legacy: Vec<BootSeqEntry>,
}

/// One device of a boot sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BootSeqEntry {
    /// Whether it boots.
    #[serde(default)]
    pub enabled: bool,
    /// `BIOS.Setup.1-1#UefiBootSeq#NIC.HttpDevice.1-1#<hash>`.
    #[serde(default)]
    pub id: String,
    /// Its place in the sequence, from 0.
    #[serde(default)]
    pub index: u32,
    /// Its FQDD (`NIC.HttpDevice.1-1`; `Unknown.Unknown.2-1` for an entry an OS created).
    #[serde(default)]
    pub name: String,
}

impl DellBootSources {
    /// The UEFI sequence, else the legacy one, in boot order (by `Index`).
    pub fn sequence(&self) -> Vec<&BootSeqEntry> {
        let seq = if self.attributes.uefi.is_empty() {
            &self.attributes.legacy
        } else {
            &self.attributes.uefi
        };
        let mut out: Vec<&BootSeqEntry> = seq.iter().collect();
        out.sort_by_key(|e| e.index);
        out
    }
}

/// The answer of `GetRemoteServicesAPIStatus`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LcStatus {
    /// `Ready` when the Lifecycle Controller accepts work.
    #[serde(rename = "LCStatus", default, skip_serializing_if = "Option::is_none")]
    pub lc_status: Option<String>,
    /// `Ready` when remote services are up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Server state (`OutOfPOST`, `InPOST`, `PoweredOff`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_status: Option<String>,
    /// Real-time services state.
    #[serde(rename = "RTStatus", default, skip_serializing_if = "Option::is_none")]
    pub rt_status: Option<String>,
}

impl LcStatus {
    /// Both `LCStatus` and `Status` are `Ready`.
    pub fn is_ready(&self) -> bool {
        self.lc_status.as_deref() == Some("Ready") && self.status.as_deref() == Some("Ready")
    }

    /// The host is in POST (`ServerStatus: InPOST`).
    pub fn in_post(&self) -> bool {
        self.server_status.as_deref() == Some("InPOST")
    }
}

/// `{"TargetSettingsURI": ...}` for creating a configuration job.
pub fn job_body(target_settings_uri: &str) -> Value {
    serde_json::json!({ "TargetSettingsURI": target_settings_uri })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(state: &str, id: &str) -> DellJob {
        serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_1", "Id": "JID_1",
            "JobState": state, "MessageId": id, "JobType": "BIOSConfiguration"
        }))
        .unwrap()
    }

    #[test]
    fn job_outcomes() {
        assert_eq!(job("Completed", "PR19").outcome(), JobOutcome::Succeeded);
        assert_eq!(job("Scheduled", "JCP001").outcome(), JobOutcome::Waiting);
        assert_eq!(job("Scheduled", "IDRAC.2.9.PR30").outcome(), JobOutcome::Stuck);
        assert_eq!(job("Running", "PR20").outcome(), JobOutcome::Running);
        assert_eq!(job("Failed", "SYS051").outcome(), JobOutcome::Failed);
        assert_eq!(
            job("CompletedWithErrors", "PR19").outcome(),
            JobOutcome::SucceededWithErrors
        );
        assert_eq!(job("SomethingNew", "X").outcome(), JobOutcome::Waiting);
        assert!(
            job("Scheduled", "PR30")
                .failure()
                .unwrap()
                .to_string()
                .contains("[PR30]")
        );
        assert!(job("Completed", "PR19").failure().is_none());
        assert!(job("Completed", "PR19").is_bios_config());
    }

    /// A BIOS job as a real R750 (iDRAC 7.x) reports it after its configuration partly failed:
    /// the fields of the public Redfish Mockup Creator capture, including `TIME_NA` and a null
    /// `TargetSettingsURI`. It decodes, counts as finished, and no longer holds the job queue
    /// (so `apply` does not wait on it and the exporter counts it neither open nor stuck).
    #[test]
    fn a_real_bios_job_completed_with_errors_is_done_and_holds_no_queue() {
        let job: DellJob = serde_json::from_value(serde_json::json!({
            "@odata.context": "/redfish/v1/$metadata#DellJob.DellJob",
            "@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs/JID_229700026199",
            "@odata.type": "#DellJob.v1_5_0.DellJob",
            "ActualRunningStartTime": "2024-08-06T13:48:09",
            "ActualRunningStopTime": "2024-08-06T13:52:29",
            "CompletionTime": "2024-08-06T13:52:29",
            "Description": "Job Instance",
            "EndTime": "TIME_NA",
            "Id": "JID_229700026199",
            "JobState": "CompletedWithErrors",
            "JobType": "BIOSConfiguration",
            "Message": "Job completed with errors.",
            "MessageArgs": [],
            "MessageArgs@odata.count": 0,
            "MessageId": "PR31",
            "Name": "Configure: BIOS.Setup.1-1",
            "PercentComplete": 100,
            "StartTime": "2024-08-06T13:46:42",
            "TargetSettingsURI": null
        }))
        .unwrap();
        assert_eq!(job.outcome(), JobOutcome::SucceededWithErrors);
        assert!(!job.holds_queue());
        assert!(job.is_bios_config());
        assert_eq!(job.percent_complete, Some(100));
        assert_eq!(job.message_code(), Some("PR31"));
    }

    #[test]
    fn password_hashes_and_passwords_are_secrets_and_their_settings_are_not() {
        for secret in [
            "SHA256SetupPassword",
            "SHA256SetupPasswordSalt",
            "SHA256SystemPassword",
            "SHA256SystemPasswordSalt",
            "SetupPassword",
            "SysPassword",
        ] {
            assert!(is_secret_bios_attribute(secret), "{secret}");
        }
        for setting in [
            "PasswordStatus",
            "StrongPassword",
            "StrongPasswordMinLength",
            "SHA256",
            "BootMode",
        ] {
            assert!(!is_secret_bios_attribute(setting), "{setting}");
        }
    }

    /// The `DellBootSources` of a real R750 on iDRAC 6.00 (public Mockup Creator capture),
    /// trimmed: the sequence comes back in `Index` order.
    #[test]
    fn a_real_boot_sequence_decodes_in_index_order() {
        let b: DellBootSources = serde_json::from_value(serde_json::json!({
            "Attributes": {"UefiBootSeq": [
                {"Enabled": true, "Id": "BIOS.Setup.1-1#UefiBootSeq#Disk.Bay.2:Enclosure.Internal.0-1#07", "Index": 4, "Name": "Disk.Bay.2:Enclosure.Internal.0-1"},
                {"Enabled": true, "Id": "BIOS.Setup.1-1#UefiBootSeq#NIC.HttpDevice.1-1#84", "Index": 0, "Name": "NIC.HttpDevice.1-1"},
                {"Enabled": true, "Id": "BIOS.Setup.1-1#UefiBootSeq#Unknown.Unknown.2-1#b6", "Index": 1, "Name": "Unknown.Unknown.2-1"}
            ]}
        }))
        .unwrap();
        let names: Vec<&str> = b.sequence().iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "NIC.HttpDevice.1-1",
                "Unknown.Unknown.2-1",
                "Disk.Bay.2:Enclosure.Internal.0-1"
            ]
        );
    }

    #[test]
    fn attribute_groups_have_idrac_paths() {
        assert_eq!(
            AttributeGroup::System.path(),
            "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/System.Embedded.1"
        );
    }

    #[test]
    fn service_tag_from_root() {
        let root: ServiceRoot =
            serde_json::from_str(r#"{"Vendor":"Dell","Oem":{"Dell":{"ServiceTag":"R7625A1"}}}"#).unwrap();
        assert_eq!(service_tag(&root), Some("R7625A1"));
        assert_eq!(root.vendor.as_deref(), Some("Dell"));
    }
}
