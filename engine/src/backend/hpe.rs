//! HPE iLO (ProLiant Gen10 Plus to Gen12): what an iLO does unlike plain Redfish. Its BIOS
//! settings object holds a full copy of every value and takes a PATCH without checking it,
//! without a job or an apply time (plain Redfish's mirrored settings, sent without an apply
//! time: `generic.rs`); the values are processed at the next POST, and the BIOS says how in
//! `@Redfish.Settings` ([`SettingsOutcome`]); the system's `Oem.Hpe.PostState` tells when the
//! host is through POST ([`PostState`]).
//!
//! The shapes follow a real ProLiant DL385 Gen10 Plus v2 on iLO 5 2.72 (the Redfish Mockup
//! Creator capture in NVIDIA's libredfish, `tests/mockups/hpe`) and HPE's iLO Redfish
//! documentation (HPEDevCom/redfishdocs: "BIOS data model", "Error responses").

use super::concern::Readiness;
use futures_util::future::BoxFuture;
use redfish_client::resources::bios::Settings;
use redfish_client::resources::computer_system::ComputerSystem;
use redfish_client::{Client, Result};

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
    /// (`Base.1.0.PropertyValueNotInList`), the rest applied.
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
                m.related_properties
                    .iter()
                    .map(move |p| (p.trim_start_matches("#/").to_owned(), m.message_id.clone()))
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
    }

    #[test]
    fn the_host_is_back_at_discovery_complete_or_finished_post() {
        assert!(is_through_post("FinishedPost") && is_through_post("InPostDiscoveryComplete"));
        assert!(!is_through_post("InPost") && !is_through_post("PowerOff") && !is_through_post("Reset"));
    }
}
