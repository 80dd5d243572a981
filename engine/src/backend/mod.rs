//! The vendor seam: a [`Backend`] is what the engine knows about one BMC's way of doing things,
//! as one small implementation per concern (pending values, the job queue, readiness, the
//! BMC's own settings, BIOS actions, boot, SCP request shapes, the event log; `concern.rs`)
//! plus the places and names it uses. Every operation asks its host's backend, never a vendor
//! module, so a new vendor or BMC generation is a new set of concerns — most of them shared
//! with the backend it differs from — not edits across the engine.
//!
//! A backend is chosen from what the service reports, never from a flag: the OEM block of its
//! service root first (a Dell OEM-program system may name another vendor), then its `Vendor`.
//! An operation that does not read the service root starts from the iDRAC's fixed paths (the
//! only service that serves `System.Embedded.1`) and treats the first answer there as the
//! recognition; a service that does not answer there has its service root read, and decides.
//! A service no backend recognises is read as plain Redfish and refused for writes, with the
//! reason.
//!
//! The cut follows what the newest peers converged on (bmclib's per-capability interfaces
//! tried in turn, metal-operator's BMC interface with vendor specifics kept apart, sushy's
//! per-vendor OEM extensions) rather than libredfish's one trait per vendor: a concern a
//! vendor or generation does differently is replaced alone, and everything it does like its
//! parent stays shared.

mod concern;
mod dell;
mod generic;
mod hpe;
mod idrac10;
mod job;

pub use concern::{
    BiosActions, BiosNames, BmcSettings, BootControl, BootOrder, DefaultsFlag, EventLog, JobQueue, Logged,
    PendingValues, Places, Readiness, ScpShapes, SequenceEntry,
};
pub use hpe::SettingsOutcome;
pub use job::{Job, JobKind, JobOutcome, QueueClear};
/// The groups of BMC settings a profile's `[idrac]` table names (an iDRAC's `DellAttributes`).
pub use redfish_client::oem::dell::AttributeGroup;
/// Who an event-log entry names as having acted.
pub use redfish_client::oem::dell::lclog::Actor;

use redfish_client::resources::service_root::ServiceRoot;
use std::fmt;
use std::sync::Arc;

/// Which kind of BMC a backend serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A Dell iDRAC9 (PowerEdge 14G to 16G).
    Idrac9,
    /// A Dell iDRAC10 (PowerEdge 17G), with its firmware version when read.
    Idrac10 {
        /// `FirmwareVersion` of the Manager (1.x).
        firmware: Option<String>,
    },
    /// A Dell iDRAC of a later PowerEdge generation than rftune knows: read at iDRAC10's
    /// places, never written to with paths that might be guessed.
    LaterIdrac {
        /// The PowerEdge generation (18 for 18G).
        generation: u32,
    },
    /// An HPE iLO (ProLiant): plain Redfish found by following links, a settings object that
    /// mirrors every value, no job queue; the profile bound to HPE's attribute names.
    Ilo {
        /// The iLO generation its service root names (5 for `iLO 5`).
        generation: Option<u32>,
        /// The iLO firmware its service root names (`2.72`).
        firmware: Option<String>,
    },
    /// A service no backend recognises, read as plain Redfish; `vendor` as it names itself.
    Generic {
        /// The service root's `Vendor`.
        vendor: Option<String>,
    },
}

impl Kind {
    /// The PowerEdge generation this kind of iDRAC manages, where it is Dell's.
    pub fn generation(&self) -> Option<&'static str> {
        match self {
            Self::Idrac9 => Some("14G-16G"),
            Self::Idrac10 { .. } => Some("17G"),
            Self::LaterIdrac { .. } | Self::Ilo { .. } | Self::Generic { .. } => None,
        }
    }
}

impl Kind {
    /// The MessageId this kind of BMC answers a refused user name or password with, where
    /// rftune knows it: an iDRAC's `SYS415`. An iLO's is not known from a real one.
    pub fn refused_login_answer(&self) -> Option<&'static str> {
        match self {
            Self::Idrac9 | Self::Idrac10 { .. } | Self::LaterIdrac { .. } => Some("SYS415"),
            Self::Ilo { .. } | Self::Generic { .. } => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Idrac9 => f.write_str("Dell iDRAC9"),
            Self::Idrac10 { firmware: Some(v) } => write!(f, "Dell iDRAC10 (firmware {v})"),
            Self::Idrac10 { firmware: None } => f.write_str("Dell iDRAC10"),
            Self::LaterIdrac { generation } => write!(f, "a Dell iDRAC of PowerEdge {generation}G"),
            Self::Ilo { generation, firmware } => {
                f.write_str("HPE iLO")?;
                if let Some(g) = generation {
                    write!(f, " {g}")?;
                }
                match firmware {
                    Some(v) => write!(f, " (firmware {v})"),
                    None => Ok(()),
                }
            }
            Self::Generic { vendor: Some(v) } => write!(f, "a Redfish service of {v} that rftune does not know"),
            Self::Generic { vendor: None } => f.write_str("a Redfish service that names no vendor"),
        }
    }
}

/// The PowerEdge generation a Dell model name or Manager model says: `17G Monolithic` (the
/// iDRAC's Manager `Model`, as Dell's Ansible collection reads it) or `PowerEdge R7725` (the
/// BIOS's `SystemModelName`, whose second digit is the generation: R7**6**25 is 16G, R6**7**15
/// 17G, R7**4**0 14G).
pub fn generation_of(model: &str) -> Option<u32> {
    let model = model.trim();
    if let Some(at) = model.find('G') {
        let digits = &model[..at];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return digits.parse().ok();
        }
    }
    let name = model
        .split_whitespace()
        .find(|w| w.bytes().any(|b| b.is_ascii_digit()) && w.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()))?;
    let digits: Vec<u32> = name
        .bytes()
        .skip_while(|b| b.is_ascii_alphabetic())
        .take_while(u8::is_ascii_digit)
        .map(|b| u32::from(b - b'0'))
        .collect();
    (digits.len() >= 3).then(|| 10 + digits[1])
}

/// One BMC's way of doing things: its concerns, places and names.
#[derive(Clone)]
pub struct Backend {
    kind: Kind,
    places: Option<Places>,
    names: Option<BiosNames>,
    pending: Arc<dyn PendingValues>,
    jobs: Option<Arc<dyn JobQueue>>,
    readiness: Option<Arc<dyn Readiness>>,
    settings: Option<Arc<dyn BmcSettings>>,
    actions: Option<Arc<dyn BiosActions>>,
    boot: Option<Arc<dyn BootControl>>,
    scp: Option<Arc<dyn ScpShapes>>,
    log: Option<Arc<dyn EventLog>>,
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Backend")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl Backend {
    /// A Dell iDRAC9.
    pub fn idrac9() -> Self {
        Self {
            kind: Kind::Idrac9,
            places: Some(dell::places()),
            names: Some(dell::NAMES),
            pending: Arc::new(dell::StagedOnly),
            jobs: Some(Arc::new(dell::OemJobs)),
            readiness: Some(Arc::new(dell::LifecycleController)),
            settings: Some(Arc::new(dell::DellAttributes)),
            actions: Some(Arc::new(dell::BiosAtFixedPaths)),
            boot: Some(Arc::new(dell::SystemBoot)),
            scp: Some(Arc::new(dell::JoinedTargets)),
            log: Some(Arc::new(dell::LifecycleLog)),
        }
    }

    /// Plain Redfish, for a service whose root names `vendor`.
    pub fn generic(vendor: Option<String>) -> Self {
        Self {
            kind: Kind::Generic { vendor },
            places: None,
            names: None,
            pending: Arc::new(generic::MirroredSettings { sends_apply_time: true }),
            jobs: None,
            readiness: None,
            settings: None,
            actions: None,
            boot: None,
            scp: None,
            log: None,
        }
    }

    /// A Dell iDRAC10: iDRAC9's backend with the concerns iDRAC10 does differently replaced
    /// (`idrac10.rs`: jobs from DMTF's job service, boot through the System's settings object,
    /// SCP targets as a list).
    pub fn idrac10(firmware: Option<String>) -> Self {
        Self {
            kind: Kind::Idrac10 { firmware },
            jobs: Some(Arc::new(idrac10::JobServiceJobs)),
            boot: Some(Arc::new(idrac10::SettingsObjectBoot)),
            scp: Some(Arc::new(idrac10::ListedTargets)),
            ..Self::idrac9()
        }
    }

    /// An HPE iLO of `generation` (5, 6, 7), firmware `firmware` where known: read by its
    /// links like plain Redfish, its profile bound to HPE's names; its settings object a full
    /// copy staged without a job (`hpe.rs`), the host back when the system's POST state says
    /// so; its BIOS actions where the BIOS advertises them, its boot override on the system.
    pub fn ilo(generation: Option<u32>, firmware: Option<String>) -> Self {
        Self {
            kind: Kind::Ilo { generation, firmware },
            pending: Arc::new(generic::MirroredSettings {
                sends_apply_time: false,
            }),
            readiness: Some(Arc::new(hpe::PostState)),
            names: Some(hpe::NAMES),
            actions: Some(Arc::new(hpe::AdvertisedActions)),
            boot: Some(Arc::new(hpe::SystemBoot)),
            ..Self::generic(Some("HPE".into()))
        }
    }

    /// The iDRAC of PowerEdge `generation`, its firmware `firmware` where known: iDRAC9 up to
    /// 16G, iDRAC10 at 17G; a later one is read as iDRAC10 and not written to.
    pub fn idrac(generation: Option<u32>, firmware: Option<String>) -> Self {
        match generation {
            None => Self::idrac9(),
            Some(g) if g <= 16 => Self::idrac9(),
            Some(17) => Self::idrac10(firmware),
            Some(g) => Self {
                kind: Kind::LaterIdrac { generation: g },
                ..Self::idrac10(firmware)
            },
        }
    }

    /// The backend of the service whose root this is: its OEM block first, then its vendor.
    pub fn recognise(root: &ServiceRoot) -> Self {
        if is_dell(root) {
            return Self::idrac9();
        }
        if redfish_client::oem::hpe::is_ilo(root) {
            return Self::ilo(
                redfish_client::oem::hpe::ilo_generation(root),
                redfish_client::oem::hpe::ilo_firmware(root),
            );
        }
        Self::generic(root.vendor.clone())
    }

    /// Whether this is a Dell iDRAC of any generation.
    pub fn is_idrac(&self) -> bool {
        matches!(self.kind, Kind::Idrac9 | Kind::Idrac10 { .. } | Kind::LaterIdrac { .. })
    }

    /// The vendor whose attribute names a profile is bound to on this BMC: HPE's on an iLO,
    /// the profiles' own (Dell's) everywhere else.
    pub fn vendor(&self) -> bios_profiles::Vendor {
        match self.kind {
            Kind::Ilo { .. } => bios_profiles::Vendor::Hpe,
            _ => bios_profiles::Vendor::Dell,
        }
    }

    /// Which kind of BMC this is.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Whether this backend reads its resources at fixed places (no discovery), and where.
    pub fn places(&self) -> Option<&Places> {
        self.places.as_ref()
    }

    /// What its BIOS calls passwords, their hashes and the Secure Boot policy.
    pub fn names(&self) -> Option<&BiosNames> {
        self.names.as_ref()
    }

    /// What its settings object means, and how values are staged and discarded.
    pub fn pending(&self) -> &dyn PendingValues {
        &*self.pending
    }

    /// Its job queue, if it has one rftune knows.
    pub fn jobs(&self) -> Option<&dyn JobQueue> {
        self.jobs.as_deref()
    }

    /// Whether it tells when the host is in POST.
    pub fn readiness(&self) -> Option<&dyn Readiness> {
        self.readiness.as_deref()
    }

    /// The BMC's own settings.
    pub fn settings(&self) -> Option<&dyn BmcSettings> {
        self.settings.as_deref()
    }

    /// The BIOS actions.
    pub fn actions(&self) -> Option<&dyn BiosActions> {
        self.actions.as_deref()
    }

    /// Boot settings.
    pub fn boot(&self) -> Option<&dyn BootControl> {
        self.boot.as_deref()
    }

    /// Server Configuration Profile request shapes, where the BMC takes such profiles.
    pub fn scp(&self) -> Option<&dyn ScpShapes> {
        self.scp.as_deref()
    }

    /// The BMC's event log.
    pub fn log(&self) -> Option<&dyn EventLog> {
        self.log.as_deref()
    }

    /// Why rftune does not write to this BMC, if it does not.
    pub fn refuses_writes(&self) -> Option<String> {
        match &self.kind {
            Kind::Idrac9 | Kind::Idrac10 { .. } | Kind::Ilo { .. } => None,
            kind @ Kind::LaterIdrac { .. } => Some(format!(
                "this BMC is {kind}: rftune reads it as an iDRAC10, but writes only to the generations whose paths and rules it knows (iDRAC9 on 14G-16G, iDRAC10 on 17G)"
            )),
            kind @ Kind::Generic { .. } => Some(format!(
                "this BMC is {kind}: rftune reads it as plain Redfish, but writes only to BMCs whose staging, jobs and reboots it knows (Dell iDRAC9 and iDRAC10, HPE iLO)"
            )),
        }
    }

    /// Why this BMC cannot do `what` (`a job queue`), when it cannot.
    pub fn lacks(&self, what: &str) -> String {
        format!("this BMC is {}, which has no {what} rftune knows", self.kind)
    }

    /// The service tag its service root names, where the vendor puts one there.
    pub fn service_tag(&self, root: &ServiceRoot) -> Option<String> {
        if self.is_idrac() { dell::service_tag(root) } else { None }
    }
}

/// Whether a service root is a Dell iDRAC's: its OEM block (a Dell OEM-program system may name
/// another vendor), else its `Vendor`.
fn is_dell(root: &ServiceRoot) -> bool {
    let oem_dell = root.oem.as_ref().is_some_and(|o| o.contains_key("Dell"));
    oem_dell || root.vendor.as_deref().is_some_and(|v| v.eq_ignore_ascii_case("dell"))
}

/// Whether a manager's OEM resource (`Managers/<id>/Oem/<vendor>/<rest>`) is one a backend
/// reads: what a capture keeps of a vendor's own tree. Names are compared without regard to
/// case.
pub fn reads_manager_oem(vendor: &str, rest: &[&str]) -> bool {
    vendor.eq_ignore_ascii_case("Dell") && dell::reads_manager_oem(rest)
}

/// Whether a BIOS attribute holds a secret on any backend rftune knows: the passwords and the
/// password hashes real iDRACs list in clear. Snapshots, captures and diffs never keep them.
pub fn is_secret_bios_attribute(name: &str) -> bool {
    redfish_client::oem::dell::is_secret_bios_attribute(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(json: &str) -> ServiceRoot {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_backend_is_recognised_from_the_oem_block_first_then_the_vendor() {
        let by_vendor = Backend::recognise(&root(r#"{"Vendor":"Dell"}"#));
        assert_eq!(by_vendor.kind(), &Kind::Idrac9);
        // A Dell OEM-program system may name another vendor; its OEM block is Dell's.
        let oem = Backend::recognise(&root(r#"{"Vendor":"Acme","Oem":{"Dell":{"ServiceTag":"X1"}}}"#));
        assert_eq!(oem.kind(), &Kind::Idrac9);
        assert_eq!(
            oem.service_tag(&root(r#"{"Oem":{"Dell":{"ServiceTag":"X1"}}}"#))
                .as_deref(),
            Some("X1")
        );
        let other = Backend::recognise(&root(r#"{"Vendor":"Contoso"}"#));
        assert_eq!(
            other.kind(),
            &Kind::Generic {
                vendor: Some("Contoso".into())
            }
        );
    }

    #[test]
    fn the_generation_comes_from_the_managers_model_or_the_poweredge_model_name() {
        assert_eq!(generation_of("17G Monolithic"), Some(17));
        assert_eq!(generation_of("15G Monolithic"), Some(15));
        assert_eq!(generation_of("PowerEdge R7725"), Some(17));
        assert_eq!(generation_of("PowerEdge R6715"), Some(17));
        assert_eq!(generation_of("PowerEdge R7625"), Some(16));
        assert_eq!(generation_of("PowerEdge C6615"), Some(16));
        assert_eq!(generation_of("PowerEdge R6515"), Some(15));
        assert_eq!(generation_of("PowerEdge XE8545"), Some(15));
        assert_eq!(generation_of("PowerEdge R740"), Some(14));
        assert_eq!(generation_of("PowerEdge R7725xd"), Some(17));
        assert_eq!(generation_of("PowerEdge R8825"), Some(18));
        assert_eq!(generation_of(""), None);
        assert_eq!(generation_of("Acme Server"), None);
    }

    #[test]
    fn each_generation_gets_its_idrac_and_a_later_one_is_read_but_not_written() {
        assert_eq!(Backend::idrac(Some(16), None).kind(), &Kind::Idrac9);
        let ten = Backend::idrac(Some(17), Some("1.30.10.50".into()));
        assert_eq!(ten.kind().to_string(), "Dell iDRAC10 (firmware 1.30.10.50)");
        assert!(ten.refuses_writes().is_none());
        let later = Backend::idrac(Some(18), None);
        let why = later.refuses_writes().unwrap();
        assert!(why.contains("18G") && why.contains("iDRAC10 on 17G"), "{why}");
        assert!(later.places().is_some(), "read at iDRAC10's places");
    }

    #[test]
    fn an_ilo_is_recognised_from_its_oem_block_bound_to_hpe_names_and_written_without_jobs() {
        let ilo = Backend::recognise(&root(
            r#"{"Vendor":"HPE","Oem":{"Hpe":{"Manager":[{"ManagerType":"iLO 5","ManagerFirmwareVersion":"2.72"}]}}}"#,
        ));
        assert_eq!(
            ilo.kind(),
            &Kind::Ilo {
                generation: Some(5),
                firmware: Some("2.72".into())
            }
        );
        assert_eq!(ilo.kind().to_string(), "HPE iLO 5 (firmware 2.72)");
        assert!(!ilo.is_idrac() && ilo.places().is_none() && ilo.jobs().is_none());
        assert_eq!(ilo.vendor(), bios_profiles::Vendor::Hpe);
        assert_eq!(Backend::idrac9().vendor(), bios_profiles::Vendor::Dell);
        assert!(ilo.refuses_writes().is_none() && ilo.readiness().is_some());
        assert!(ilo.actions().is_some() && ilo.boot().is_some() && ilo.scp().is_none() && ilo.log().is_none());
        assert_eq!(ilo.names().map(|n| n.setup_password), Some("Administrator"));
    }

    #[test]
    fn a_service_no_backend_recognises_is_read_and_refused_for_writes_with_the_reason() {
        let generic = Backend::recognise(&root(r#"{"Vendor":"Contoso"}"#));
        assert!(generic.jobs().is_none() && generic.places().is_none());
        let why = generic.refuses_writes().unwrap();
        assert!(why.contains("Contoso") && why.contains("writes only"), "{why}");
        assert!(Backend::idrac9().refuses_writes().is_none());
    }
}
