//! The concerns a BMC backend answers for, one small trait each: what is pending and how values
//! are staged and discarded ([`PendingValues`]), the job queue ([`JobQueue`]), whether the host
//! is in POST ([`Readiness`]), the BMC's own settings ([`BmcSettings`]), the BIOS actions
//! ([`BiosActions`]), where boot settings are written and the firmware's boot sequence
//! ([`BootControl`]), the shapes of Server Configuration Profile requests ([`ScpShapes`]), and
//! the event log ([`EventLog`]). Each method does one thing on one [`Client`] and answers in
//! redfish-client's terms (the caller says which host and what was attempted); none of them
//! decides anything an operation decides.
//!
//! The data a backend carries beside its behaviour — where its resources are ([`Places`]) and
//! the names its BIOS gives to the attributes rftune reads ([`BiosNames`]) — are plain values.

use super::job::{Job, QueueClear};
use futures_util::future::BoxFuture;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::oem::dell::lclog::Actor;
use redfish_client::resources::bios::{Attributes, Bios, Settings, SettingsApplyTime};
use redfish_client::resources::computer_system::ComputerSystem;
use redfish_client::resources::log_entry::LogEntry;
use redfish_client::{Client, ODataId, Result};
use redfish_client::{Staged, Written};
use serde_json::Value;

/// Where a BMC keeps what rftune reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// The computer system.
    pub system: ODataId,
    /// Its BIOS resource (current values).
    pub bios: ODataId,
    /// The BIOS settings object (pending values).
    pub bios_settings: ODataId,
    /// The BIOS attribute registry, served directly.
    pub bios_registry: ODataId,
    /// The BMC (manager).
    pub manager: ODataId,
    /// The chassis that carries power readings.
    pub chassis: ODataId,
    /// UEFI Secure Boot.
    pub secure_boot: ODataId,
    /// The boot options collection.
    pub boot_options: ODataId,
}

/// What a BIOS calls the attributes rftune reads or writes besides a profile's: passwords and
/// their hashes, and the Secure Boot policy where the BIOS keeps one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BiosNames {
    /// The setup (administrator) password, as `Bios.ChangePassword` names it.
    pub setup_password: &'static str,
    /// The system (power-on) password.
    pub system_password: &'static str,
    /// The attribute listing the setup password's hash (empty when none is set), if any.
    pub setup_password_hash: Option<&'static str>,
    /// The attribute listing the system password's hash, if any.
    pub system_password_hash: Option<&'static str>,
    /// The attribute holding the Secure Boot policy (`Standard`, `Custom`), if the BIOS has one.
    pub secure_boot_policy: Option<&'static str>,
}

/// Pending BIOS values: what the settings object means, how values are staged in it and how
/// they are discarded.
pub trait PendingValues: Send + Sync {
    /// What is pending, given the settings object's values and the current ones: the object
    /// itself where it lists only what is staged, the entries that differ where it mirrors
    /// every value.
    fn pending(&self, current: &Attributes, settings: Attributes) -> Attributes;

    /// Stages `values` in the settings object `settings`, to apply at `apply_time`, carrying
    /// `etag` as `If-Match` when given; the answer names the job it created, if any.
    fn stage<'a>(
        &'a self,
        client: &'a Client,
        settings: &'a ODataId,
        values: &'a Attributes,
        apply_time: Option<&'a SettingsApplyTime>,
        etag: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Staged>>;

    /// Discards the `pending` values of the settings object `settings`, whose current values
    /// are `current` (refused by some BMCs while a job holds them).
    fn clear<'a>(
        &'a self,
        client: &'a Client,
        settings: &'a ODataId,
        current: &'a Attributes,
        pending: &'a Attributes,
    ) -> BoxFuture<'a, Result<Written>>;
}

/// The BMC's job queue.
pub trait JobQueue: Send + Sync {
    /// Every job, finished ones included.
    fn list<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Vec<Job>>>;

    /// One job, by id or link.
    fn get<'a>(&'a self, client: &'a Client, id: &'a str) -> BoxFuture<'a, Result<Job>>;

    /// Creates the BIOS configuration job for values staged without one; its link.
    fn create_bios_job<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<ODataId>>;

    /// Deletes one job (a BIOS job's pending values go with it).
    fn delete<'a>(&'a self, client: &'a Client, id: &'a str) -> BoxFuture<'a, Result<Written>>;

    /// Clears one job or the whole queue through the queue's own service.
    fn clear<'a>(&'a self, client: &'a Client, what: &'a QueueClear) -> BoxFuture<'a, Result<Written>>;
}

/// Whether the host is in POST, where the BMC tells.
pub trait Readiness: Send + Sync {
    /// `Ok(true)` while the host is in POST; `Ok(false)` when it is not, or when this BMC does
    /// not tell (the host is then judged by its power state and a readable BIOS alone).
    /// `system`: the system as just read, where the caller has it (a BMC that tells in the
    /// system saves a request).
    fn in_post<'a>(&'a self, client: &'a Client, system: Option<&'a ComputerSystem>) -> BoxFuture<'a, Result<bool>>;

    /// Whether the host's POST has run to its end (the boot device chosen, a one-time boot
    /// override used up), as the system just read says; `None` where it does not say, or where
    /// the host counts as back only once POST ended anyway.
    fn post_ended(&self, _system: &ComputerSystem) -> Option<bool> {
        None
    }
}

/// The BMC's own settings, in the groups a profile's `[idrac]` table names.
pub trait BmcSettings: Send + Sync {
    /// The attributes of `group`.
    fn read<'a>(&'a self, client: &'a Client, group: AttributeGroup) -> BoxFuture<'a, Result<Attributes>>;

    /// Sets attributes of `group`; they apply at once.
    fn write<'a>(
        &'a self,
        client: &'a Client,
        group: AttributeGroup,
        values: &'a Attributes,
    ) -> BoxFuture<'a, Result<Written>>;

    /// Whether the BMC refuses configuration changes (`None`: it does not say).
    fn lockdown<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Option<bool>>>;

    /// Where the lockdown is read from `group`'s values, when that group is read anyway.
    fn lockdown_in(&self, group: AttributeGroup, values: &Attributes) -> Option<bool>;

    /// Why nothing can be changed while the lockdown is on, and how to end it.
    fn lockdown_reason(&self) -> String;
}

/// What a BMC's own flag says of a reset to defaults waiting for the next POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultsFlag {
    /// A flag that names the reset itself (an iDRAC's `BIOSRTDRequested`).
    Requested(bool),
    /// Whether the BIOS settings object holds writes the BIOS has not processed yet (an iLO's
    /// settings tag against the unmodified one): the reset is among them until the next POST.
    SettingsUnprocessed(bool),
}

/// The BIOS's actions, on the BIOS resource `bios`.
pub trait BiosActions: Send + Sync {
    /// Asks for a reset to defaults at the next POST.
    fn reset_to_defaults<'a>(&'a self, client: &'a Client, bios: &'a ODataId) -> BoxFuture<'a, Result<Written>>;

    /// Whether the BMC's own flag says a reset to defaults waits for the next POST (`None`: it
    /// has no such flag), given the BIOS resource `bios` as just read (its own
    /// `ResetBiosToDefaultsPending` is the caller's to read).
    fn defaults_requested<'a>(
        &'a self,
        client: &'a Client,
        bios: &'a Bios,
    ) -> BoxFuture<'a, Result<Option<DefaultsFlag>>>;

    /// Sends a BIOS password change (`body` as `Bios.ChangePassword` takes it).
    fn change_password<'a>(
        &'a self,
        client: &'a Client,
        bios: &'a ODataId,
        body: &'a Value,
    ) -> BoxFuture<'a, Result<Written>>;
}

/// One device of the firmware's boot sequence, by the BMC's own device name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceEntry {
    /// The device's name (an iDRAC's FQDD, `NIC.PxeDevice.1-1`).
    pub name: String,
    /// Whether it boots.
    pub enabled: bool,
    /// The boot option it is (`Boot0011`), where the BMC names it: entries are then paired
    /// with the boot order by option, not by position.
    pub option: Option<String>,
}

/// A boot order the BMC keeps in a settings object of its own, beside the BIOS values (an
/// iLO's `PersistentBootConfigOrder`), as read.
#[derive(Debug, Clone, PartialEq)]
pub struct BootOrder {
    /// The order in force, by device name.
    pub current: Vec<String>,
    /// The order its settings object holds (the next POST's): the same list when nothing is
    /// staged.
    pub pending: Vec<String>,
    /// The devices, in the order in force, named after their boot options.
    pub devices: bios_profiles::BootDevices,
    /// Where an order is staged.
    pub settings_at: ODataId,
    /// What the last POST made of a staged order (`@Redfish.Settings`: time and messages).
    pub outcome: Option<Settings>,
}

/// Boot settings.
pub trait BootControl: Send + Sync {
    /// Where the boot override and order of the computer system `system` are written, in the
    /// order to try them: the next is tried only when one refuses the write (an HTTP 400).
    fn override_targets(&self, system: &ODataId) -> Vec<ODataId>;

    /// The firmware's boot sequence by device name, in boot order, where the BMC serves one.
    fn sequence<'a>(&'a self, client: &'a Client) -> BoxFuture<'a, Result<Option<Vec<SequenceEntry>>>>;

    /// The name a boot order kept apart from the BIOS values is carried under beside them
    /// (diffed, planned and verified as one more value), where the BMC keeps one so; `None`
    /// where the BIOS values hold the order (an iDRAC's `SetBootOrderEn`).
    fn order_setting(&self) -> Option<&'static str> {
        None
    }

    /// That boot order, found through the BIOS resource `bios` as just read; `None` where the
    /// BMC keeps none apart (or this BIOS links none).
    fn order<'a>(&'a self, _client: &'a Client, _bios: &'a Bios) -> BoxFuture<'a, Result<Option<BootOrder>>> {
        Box::pin(async { Ok(None) })
    }

    /// Stages `order` (device names, first to last) in the settings object `at` for the next
    /// POST. Only a backend with an [`order_setting`](Self::order_setting) is asked.
    fn stage_order<'a>(
        &'a self,
        _client: &'a Client,
        at: &'a ODataId,
        _order: &'a [String],
    ) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move {
            Err(redfish_client::Error::Protocol {
                method: "PATCH".into(),
                url: at.path().to_owned(),
                what: "this BMC keeps no boot order apart from its BIOS values".into(),
            })
        })
    }
}

/// How Server Configuration Profile requests are shaped.
pub trait ScpShapes: Send + Sync {
    /// `ShareParameters.Target` for these components.
    fn targets(&self, targets: &[String]) -> Value;
}

/// One entry of the BMC's event log, with who acted where the entry names them.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    /// The entry.
    pub entry: LogEntry,
    /// Who acted (a user, from an address, through an interface), when the entry says.
    pub actor: Option<Actor>,
}

/// The BMC's event log.
pub trait EventLog: Send + Sync {
    /// The latest `n` entries, newest first.
    fn latest<'a>(&'a self, client: &'a Client, n: usize) -> BoxFuture<'a, Result<Vec<Logged>>>;
}
