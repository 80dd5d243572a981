//! What the host keeps of its Lifecycle log: numbered entries (a registry code, its arguments,
//! a category, the resource it is about, when), the newest kept, each rendered as a real
//! iDRAC's `LogEntry`.

use crate::clock;
use crate::messages::IDRAC;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::time::SystemTime;

/// The Lifecycle log's entries collection.
pub(crate) const LCLOG_ENTRIES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries";
/// Entries kept per log before the oldest go (real iDRACs keep up to 500,000 and wrap).
const KEPT: usize = 10_000;

/// One Lifecycle-log entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LcEntry {
    pub(crate) id: u64,
    pub(crate) created: SystemTime,
    pub(crate) code: &'static str,
    pub(crate) args: Vec<String>,
    pub(crate) category: &'static str,
    pub(crate) origin: Option<String>,
}

/// The host's logs.
#[derive(Debug, Default)]
pub(crate) struct Logs {
    pub(crate) lc: VecDeque<LcEntry>,
    next_id: u64,
}

/// The registry's text and severity (OK or Warning) for a code the emulator logs.
fn template(code: &str) -> (&'static str, &'static str) {
    match code {
        "USR0030" => ("Successfully logged in using %1, from %2 and %3.", "OK"),
        "USR0031" => ("Unable to log in for %1 from %2 using %3.", "OK"),
        "USR0032" => ("The session for %1 from %2 using %3 is logged off.", "OK"),
        "RAC1195" => (
            "User %1 via IP %2 requested state / configuration change to %3 using %4.",
            "OK",
        ),
        "JCP040" => (
            "User %1 via IP %2 created configuration / update Job ID %3 with Job Name %4 using %5.",
            "OK",
        ),
        "JCP036" => ("The job %1 is successfully deleted.", "OK"),
        "JCP037" => (
            "The (installation or configuration) job %1 is successfully completed.",
            "OK",
        ),
        "JCP042" => ("Job %1 failed because %2.", "Warning"),
        "JCP045" => ("All jobs in the Job Queue were deleted successfully.", "OK"),
        "JCP046" => ("All jobs in the Job Queue were force deleted successfully.", "OK"),
        "RAC0701" => ("Requested system powerup.", "OK"),
        "RAC0702" => ("Requested system powercycle.", "OK"),
        "RAC0703" => ("Requested system hardreset.", "OK"),
        "RAC0704" => ("Requested system powerdown.", "OK"),
        "RAC0705" => ("Requested system graceful shutdown.", "OK"),
        "RAC0706" => ("Requested system NMI.", "OK"),
        "RAC0182" => ("The iDRAC firmware was rebooted with the following reason: %1.", "OK"),
        "SYS148" => ("BIOS is configured to reset to defaults on next system restart.", "OK"),
        "SYS149" => ("The process of resetting iDRAC to default settings is initiated.", "OK"),
        "SWC1911" => ("User ID %1 User Password has been changed.", "OK"),
        "UEFI0157" => (
            "The iDRAC request to reset BIOS to default settings is successfully completed.",
            "OK",
        ),
        "UEFI0286" => (
            "The changes to Secure Boot policy objects are successfully saved by BIOS.",
            "OK",
        ),
        "SWC9007" => (
            "The SecureBoot Certificate DeleteAll operation is successfully scheduled. Restart the host server for the changes to take effect.",
            "OK",
        ),
        "SWC9008" => (
            "The SecureBoot Certificate Reset operation is successfully scheduled. Restart the host server for the changes to take effect.",
            "OK",
        ),
        "SWC9009" => (
            "The SecureBoot Certificate ResetAll operation is successfully scheduled. Restart the host server for the changes to take effect.",
            "OK",
        ),
        "SWC9012" => (
            "The SecureBoot Certificate Delete operation is successfully scheduled. Restart the host server for the changes to take effect.",
            "OK",
        ),
        "UEFI0391" => (
            "Memory configuration does not match the enabled NUMA node Per Socket (NPS) setting.",
            "OK",
        ),
        _ => ("%1", "OK"),
    }
}

fn fill(text: &str, args: &[String]) -> String {
    let mut out = text.to_owned();
    // Highest first, so %1 does not eat the start of %10.
    for (i, a) in args.iter().enumerate().rev() {
        out = out.replace(&format!("%{}", i + 1), a);
    }
    out
}

impl LcEntry {
    pub(crate) fn path(&self) -> String {
        format!("{LCLOG_ENTRIES}/{}", self.id)
    }

    pub(crate) fn to_json(&self, entry_type: &str) -> Value {
        let (text, severity) = template(self.code);
        let links = match &self.origin {
            Some(o) => json!({"OriginOfCondition": {"@odata.id": o}}),
            None => json!({}),
        };
        json!({
            "@odata.id": self.path(),
            "@odata.type": entry_type,
            "Created": clock::with_offset(self.created),
            "Description": format!("Log Entry {}", self.id),
            "EntryType": "Oem",
            "Id": self.id.to_string(),
            "Links": links,
            "Message": fill(text, &self.args),
            "MessageArgs": self.args,
            "MessageArgs@odata.count": self.args.len(),
            "MessageId": format!("{IDRAC}.{}", self.code),
            "Name": format!("Log Entry {}", self.id),
            "Oem": {"Dell": {
                "@odata.type": "#DellLCLogEntry.v1_1_0.DellLCLogEntry",
                "Category": self.category,
                "Comment": null,
                "LastUpdatedByUser": null,
            }},
            "OemRecordFormat": "Dell",
            "Severity": severity,
        })
    }
}

impl Logs {
    pub(crate) fn record(
        &mut self,
        created: SystemTime,
        code: &'static str,
        args: Vec<String>,
        category: &'static str,
        origin: Option<&str>,
    ) {
        self.next_id += 1;
        self.lc.push_back(LcEntry {
            id: self.next_id,
            created,
            code,
            args,
            category,
            origin: origin.map(str::to_owned),
        });
        while self.lc.len() > KEPT {
            self.lc.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_fill_the_registry_text_in_order() {
        let args: Vec<String> = ["root", "127.0.0.1", "REDFISH"].map(str::to_owned).to_vec();
        assert_eq!(
            fill(template("USR0030").0, &args),
            "Successfully logged in using root, from 127.0.0.1 and REDFISH."
        );
    }

    #[test]
    fn the_log_keeps_its_newest_entries_and_numbers_them_on() {
        let mut logs = Logs::default();
        for _ in 0..KEPT + 5 {
            logs.record(SystemTime::now(), "JCP045", Vec::new(), "Configuration", None);
        }
        assert_eq!(logs.lc.len(), KEPT);
        assert_eq!(logs.lc.back().unwrap().id, (KEPT + 5) as u64);
        assert_eq!(logs.lc.front().unwrap().id, 6);
    }
}
