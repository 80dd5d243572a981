//! The iDRAC's Lifecycle log: where it is served, and who its entries name as having acted.
//!
//! The log is iDRAC's audit trail: logins, configuration changes, jobs, power requests. Which
//! message arguments hold the user, the address and the interface is fixed per message by the
//! iDRAC's message registry (`Registries/Messages/EEMIRegistry` as an iDRAC 7.x serves it): the
//! login messages USR0030/31/32/34 read "… %1, from %2 … %3", RAC1195 "User %1 via IP %2
//! requested state / configuration change to %3 using %4", JCP040 "User %1 via IP %2 created …
//! Job ID %3 with Job Name %4 using %5". Entries a user annotated carry the user in
//! `Oem.Dell.LastUpdatedByUser`.

use crate::resources::log_entry::LogEntry;
use serde::Serialize;

/// The Lifecycle log's entries, newest first, 50 to a page (`Members@odata.nextLink`).
pub const LCLOG_ENTRIES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries";

/// Who a Lifecycle-log entry says acted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Actor {
    /// The iDRAC user name.
    pub user: String,
    /// The client's address, when the message records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// `REDFISH`, `GUI`, `RACADM`, `IPMI`, …, when the message records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
}

/// The argument positions (user, address, interface) of the messages that name who acted.
fn positions(code: &str) -> Option<(usize, usize, usize)> {
    match code {
        "USR0030" | "USR0031" | "USR0032" | "USR0034" => Some((0, 1, 2)),
        "RAC1195" => Some((0, 1, 3)),
        "JCP040" => Some((0, 1, 4)),
        _ => None,
    }
}

/// Who `entry` names as having acted, if it names anyone.
pub fn actor(entry: &LogEntry) -> Option<Actor> {
    if let Some((user, address, interface)) = entry.code().and_then(positions)
        && let Some(name) = entry.arg(user)
    {
        return Some(Actor {
            user: name.to_owned(),
            address: entry.arg(address).map(str::to_owned),
            interface: entry.arg(interface).map(str::to_owned),
        });
    }
    let annotated = entry.oem.as_ref()?.pointer("/Dell/LastUpdatedByUser")?.as_str()?.trim();
    (!annotated.is_empty()).then(|| Actor {
        user: annotated.to_owned(),
        address: None,
        interface: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, args: &[&str]) -> LogEntry {
        serde_json::from_value(serde_json::json!({
            "@odata.id": format!("{LCLOG_ENTRIES}/1"),
            "MessageId": format!("IDRAC.2.7.{id}"),
            "MessageArgs": args,
        }))
        .unwrap()
    }

    #[test]
    fn the_user_address_and_interface_come_from_the_arguments_the_registry_gives_them() {
        // The real entry of an R750's log (iDRAC 7.x): a Redfish login.
        let login = entry("USR0030", &["root", "192.0.2.29", "REDFISH"]);
        assert_eq!(
            actor(&login),
            Some(Actor {
                user: "root".into(),
                address: Some("192.0.2.29".into()),
                interface: Some("REDFISH".into())
            })
        );
        let change = entry("RAC1195", &["admin", "192.0.2.7", "BIOS.Setup.1-1", "REDFISH"]);
        assert_eq!(actor(&change).unwrap().interface.as_deref(), Some("REDFISH"));
        let job = entry(
            "JCP040",
            &["admin", "192.0.2.7", "JID_1", "ConfigBIOS:BIOS.Setup.1-1", "RACADM"],
        );
        let who = actor(&job).unwrap();
        assert_eq!((who.user.as_str(), who.interface.as_deref()), ("admin", Some("RACADM")));
    }

    #[test]
    fn entries_that_name_nobody_have_no_actor() {
        assert_eq!(actor(&entry("LOG007", &["5"])), None);
        assert_eq!(
            actor(&entry("USR0030", &[])),
            None,
            "a login without arguments names nobody"
        );
        let mut annotated = entry("LOG007", &["1"]);
        annotated.oem = Some(serde_json::json!({"Dell": {"LastUpdatedByUser": "ops"}}));
        assert_eq!(actor(&annotated).unwrap().user, "ops");
    }
}
