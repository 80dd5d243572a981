//! HPE iLO (ProLiant Gen10 Plus to Gen12): what an iLO does unlike plain Redfish. Its BIOS
//! settings object holds a full copy of every value and takes a PATCH without checking it,
//! without a job or an apply time (plain Redfish's mirrored settings, sent without an apply
//! time: `generic.rs`); the values are processed at the next POST, and the BIOS says how in
//! `@Redfish.Settings` ([`SettingsOutcome`]); the system's `Oem.Hpe.PostState` tells when the
//! host is through POST ([`PostState`]). Its BIOS actions are POSTed where the BIOS advertises
//! them ([`AdvertisedActions`]: the recorded password action's target is `Bios.ChangePasswords`,
//! plural, and `Bios.ResetBios` targets the settings object), and take effect at that POST too;
//! its boot override is the system's standard `Boot` ([`SystemBoot`]).
//!
//! The shapes follow a real ProLiant DL385 Gen10 Plus v2 on iLO 5 2.72 (the Redfish Mockup
//! Creator capture in NVIDIA's libredfish, `tests/mockups/hpe`) and HPE's iLO Redfish
//! documentation (HPEDevCom/redfishdocs: "BIOS data model", "Error responses").

use super::concern::{BiosActions, BiosNames, BootControl, BootOrder, DefaultsFlag, Readiness, SequenceEntry};
use futures_util::future::BoxFuture;
use redfish_client::oem::hpe;
use redfish_client::resources::bios::{Bios, BiosSettings, Settings};
use redfish_client::resources::computer_system::ComputerSystem;
use redfish_client::{Client, Error, ODataId, Result, Written};
use serde_json::Value;

/// What an iLO's BIOS calls its passwords (`PasswordName` of `Bios.ChangePassword`, HPE's "BIOS
/// data model"); it lists no password hashes and no Secure Boot policy attribute.
pub(super) const NAMES: BiosNames = BiosNames {
    setup_password: "Administrator",
    system_password: "User",
    setup_password_hash: None,
    system_password_hash: None,
    secure_boot_policy: None,
};

/// The BIOS actions at the targets the BIOS resource advertises (one read of it, then the
/// POST); an action it does not advertise is refused before anything is sent.
pub(super) struct AdvertisedActions;

impl AdvertisedActions {
    /// POSTs `body` to where `bios` advertises `action`.
    async fn post(client: &Client, bios: &ODataId, action: &str, body: &Value) -> Result<Written> {
        let read = client.bios(bios).await?;
        let Some(target) = read.action_target(action) else {
            return Err(Error::Protocol {
                method: "POST".into(),
                url: client
                    .base_url()
                    .join(bios.path())
                    .map_or_else(|_| bios.path().to_owned(), String::from),
                what: format!("the BIOS does not advertise {action} in its Actions"),
            });
        };
        client.post(target.path(), body).await
    }
}

impl BiosActions for AdvertisedActions {
    /// `Bios.ResetBios` with an empty body (HPE's iLO 6 documentation sends none; iLO 5 takes
    /// `{}` as well).
    fn reset_to_defaults<'a>(&'a self, client: &'a Client, bios: &'a ODataId) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move { Self::post(client, bios, "#Bios.ResetBios", &serde_json::json!({})).await })
    }

    /// Whether the settings object was written since the BIOS last processed it: its
    /// `@odata.etag` against the BIOS's `Oem.Hpe.SettingsObject.UnmodifiedETag` (`None` when
    /// either is missing).
    fn defaults_requested<'a>(
        &'a self,
        client: &'a Client,
        bios: &'a Bios,
    ) -> BoxFuture<'a, Result<Option<DefaultsFlag>>> {
        Box::pin(async move {
            let Some(unmodified) = hpe::unmodified_etag(bios) else {
                return Ok(None);
            };
            let settings: BiosSettings = client.get(bios.settings_object().path()).await?;
            Ok(settings
                .odata_etag
                .map(|tag| DefaultsFlag::SettingsUnprocessed(!same_tag(&tag, &unmodified))))
        })
    }

    fn change_password<'a>(
        &'a self,
        client: &'a Client,
        bios: &'a ODataId,
        body: &'a Value,
    ) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move { Self::post(client, bios, "#Bios.ChangePassword", body).await })
    }
}

/// Whether two entity tags are the same, weak or strong.
fn same_tag(a: &str, b: &str) -> bool {
    let bare = |t: &str| t.trim().trim_start_matches("W/").trim_matches('"').to_owned();
    bare(a) == bare(b)
}

/// The boot override on the system's standard `Boot` (HPE's iLO documentation: a PATCH of the
/// system, applied at its next boot); the persistent boot order in HPE's boot settings, which
/// the BIOS links (`Oem.Hpe.Links.Boot`): a current resource and a settings object holding the
/// whole order, processed at the next POST like the BIOS's own (the recorded DL385's
/// `…/bios/oem/hpe/boot/` and `…/boot/settings/`; HPE's python-ilorest-library documents the
/// PATCH of `PersistentBootConfigOrder` there).
pub(super) struct SystemBoot;

impl BootControl for SystemBoot {
    fn override_targets(&self, system: &ODataId) -> Vec<ODataId> {
        vec![system.clone()]
    }

    fn sequence<'a>(&'a self, _: &'a Client) -> BoxFuture<'a, Result<Option<Vec<SequenceEntry>>>> {
        Box::pin(async { Ok(None) })
    }

    fn order_setting(&self) -> Option<&'static str> {
        Some(hpe::BOOT_ORDER)
    }

    /// Two reads, one after the other: the current order (which names its settings object),
    /// then the settings object.
    fn order<'a>(&'a self, client: &'a Client, bios: &'a Bios) -> BoxFuture<'a, Result<Option<BootOrder>>> {
        Box::pin(async move {
            let Some(link) = hpe::boot_link(bios) else {
                return Ok(None);
            };
            let current: hpe::BootSettings = client.get(link.path()).await?;
            let Some(settings_at) = current.settings_object() else {
                return Ok(None);
            };
            let staged: hpe::BootSettings = client.get(settings_at.path()).await?;
            Ok(Some(BootOrder {
                devices: bios_profiles::BootDevices::from_hpe(
                    &current.boot_sources,
                    &current.persistent_boot_config_order,
                ),
                current: current.persistent_boot_config_order,
                pending: staged.persistent_boot_config_order,
                settings_at,
                outcome: current.settings,
            }))
        })
    }

    fn stage_order<'a>(
        &'a self,
        client: &'a Client,
        at: &'a ODataId,
        order: &'a [String],
    ) -> BoxFuture<'a, Result<Written>> {
        Box::pin(async move {
            let body = serde_json::json!({ hpe::BOOT_ORDER: order });
            client.patch(at.path(), &body).await
        })
    }
}

/// The system's `Oem.Hpe.PostState`: the host is back once it reports discovery complete or
/// POST finished (HPE's schema calls discovery complete the point where the BIOS configuration
/// is safe to read and write); a system that does not say counts as in POST while it resets.
pub(super) struct PostState;

impl Readiness for PostState {
    fn in_post<'a>(&'a self, client: &'a Client, system: Option<&'a ComputerSystem>) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let read;
            let system = match system {
                Some(s) => s,
                None => {
                    let first = client.systems().await?.into_iter().next();
                    let Some(first) = first else { return Ok(false) };
                    read = client.system(&first).await?;
                    &read
                }
            };
            Ok(!matches!(redfish_client::oem::hpe::post_state(system).as_deref(), Some(s) if is_through_post(s)))
        })
    }

    /// The host counts as back at discovery complete, before POST has chosen the boot device:
    /// POST ended at `FinishedPost` (or with the host off).
    fn post_ended(&self, system: &ComputerSystem) -> Option<bool> {
        let state = redfish_client::oem::hpe::post_state(system)?;
        Some(matches!(state.as_str(), "FinishedPost" | "PowerOff"))
    }
}

/// Whether a `PostState` says the host is through POST far enough for its BIOS to be read.
fn is_through_post(state: &str) -> bool {
    matches!(state, "InPostDiscoveryComplete" | "FinishedPost")
}

/// What the BIOS made of the pending values at the POST after `before` (the settings time read
/// before the reset), from its `@Redfish.Settings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsOutcome {
    /// The settings time did not move: the pending values were not processed (yet).
    NotProcessed,
    /// Processed; these attributes were refused, each with the message that names it
    /// (`Base.1.0.PropertyValueNotInList`, and its text where the message has one), the rest
    /// applied.
    Processed(Vec<(String, String)>),
}

impl SettingsOutcome {
    /// Reads `settings` against the time `before` it had when the values were staged.
    pub fn read(before: Option<&str>, settings: Option<&Settings>) -> Self {
        let Some(settings) = settings else {
            return Self::NotProcessed;
        };
        if settings.time.is_none() || settings.time.as_deref() == before {
            return Self::NotProcessed;
        }
        let refused = settings
            .messages
            .iter()
            .filter(|m| !m.message_id.ends_with(".Success"))
            .flat_map(|m| {
                let said = match m.message.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                    Some(text) => format!("{}: {text}", m.message_id),
                    None => m.message_id.clone(),
                };
                m.related_properties
                    .iter()
                    .map(move |p| (p.trim_start_matches("#/").to_owned(), said.clone()))
            })
            .collect();
        Self::Processed(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: serde_json::Value) -> Settings {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_settings_time_and_messages_say_whether_and_what_the_bios_applied() {
        let before = Some("2024-06-10T20:01:29+00:00");
        let same = settings(serde_json::json!({
            "Time": "2024-06-10T20:01:29+00:00", "Messages": [{"MessageId": "Base.1.0.Success"}]
        }));
        assert_eq!(
            SettingsOutcome::read(before, Some(&same)),
            SettingsOutcome::NotProcessed
        );
        let all = settings(serde_json::json!({
            "Time": "2026-12-07T05:00:00+00:00", "Messages": [{"MessageId": "Base.1.0.Success"}]
        }));
        assert_eq!(
            SettingsOutcome::read(before, Some(&all)),
            SettingsOutcome::Processed(vec![])
        );
        let partial = settings(serde_json::json!({
            "Time": "2026-12-07T05:00:00+00:00",
            "Messages": [
                {"MessageId": "Base.1.0.Success"},
                {"MessageId": "Base.1.0.PropertyValueNotInList", "MessageArgs": ["Bogus", "ProcSMT"], "RelatedProperties": ["#/ProcSMT"]}
            ]
        }));
        assert_eq!(
            SettingsOutcome::read(before, Some(&partial)),
            SettingsOutcome::Processed(vec![("ProcSMT".into(), "Base.1.0.PropertyValueNotInList".into())])
        );
        assert_eq!(SettingsOutcome::read(before, None), SettingsOutcome::NotProcessed);
        let worded = settings(serde_json::json!({
            "Time": "2026-12-07T05:00:00+00:00",
            "Messages": [{"MessageId": "Base.1.0.PropertyUnknown", "Message": "No property Bogus.", "RelatedProperties": ["#/Bogus"]}]
        }));
        assert_eq!(
            SettingsOutcome::read(before, Some(&worded)),
            SettingsOutcome::Processed(vec![(
                "Bogus".into(),
                "Base.1.0.PropertyUnknown: No property Bogus.".into()
            )])
        );
    }

    #[test]
    fn tags_compare_weak_or_strong() {
        assert!(same_tag("W/\"0A1B\"", "\"0A1B\""));
        assert!(same_tag("W/\"0A1B\"", "W/\"0A1B\""));
        assert!(!same_tag("W/\"0A1B\"", "W/\"0A1C\""));
    }

    #[test]
    fn the_host_is_back_at_discovery_complete_or_finished_post() {
        assert!(is_through_post("FinishedPost") && is_through_post("InPostDiscoveryComplete"));
        assert!(!is_through_post("InPost") && !is_through_post("PowerOff") && !is_through_post("Reset"));
    }
}
