//! The Manager's log services: the Lifecycle log, which records what was changed, by whom and
//! when, the SEL and the fault list, each with live entries.
//!
//! Shapes are the real R750's (iDRAC 6.00 and 7.10 captures, `LogServices/Lclog/Entries`):
//! numbered entries, newest first, served inline in the collection 50 at a time (the page
//! Dell's GetIdracLcLogsREDFISH.py reads with `$skip`), each with `MessageId`
//! (`IDRAC.2.9.<code>`), `Message`, `MessageArgs`, `Created` (the emulator's clock), `EntryType`
//! `Oem`, `Severity`, `OemRecordFormat` Dell, `Links.OriginOfCondition` and `Oem.Dell`
//! (`DellLCLogEntry`: `Category`, `Comment`, `LastUpdatedByUser`). The message texts and
//! severities are those of the iDRAC message registry a real 7.10 serves
//! (`Registries/Messages/EEMIRegistry`): USR0030 login, USR0031 failed login, USR0032 logout,
//! RAC1195 a configuration change by a user over an interface, JCP040 a job created by a user,
//! JCP036/JCP045/JCP046 jobs deleted, JCP037 and JCP042 a job completed or failed, RAC0701-
//! RAC0706 power requests, RAC0182 an iDRAC reboot, SYS148 a BIOS reset requested, SYS149 an
//! iDRAC reset to defaults, SWC1911 a password changed, UEFI0157 a BIOS reset to defaults
//! completed at POST, SWC9007/SWC9008/SWC9009/SWC9012 a Secure Boot key reset scheduled and
//! UEFI0286 its change saved at POST. Which category each belongs to is
//! assumed beyond the captures' (Audit for USR0030).

pub(crate) mod state;

pub(crate) use state::LCLOG_ENTRIES;

use super::caller::Caller;
use super::core::{Host, State};
use super::manager::with_clock;
use super::reply::Reply;
use super::sessions::SESSIONS;
use crate::messages::IDRAC;
use crate::route::{Route, exact, prefix};
use redfish_client::oem::dell;
use serde_json::{Value, json};
use std::time::SystemTime;

/// The SEL's entries collection.
pub(crate) const SEL_ENTRIES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries";
/// The fault list's entries collection.
pub(crate) const FAULT_ENTRIES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/FaultList/Entries";
/// Where Dell's Lifecycle-log script reads the log (the iDRAC 9 path of its first firmware).
pub(crate) const LEGACY_LCLOG: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Logs/Lclog";

/// The Lifecycle log (which carries the iDRAC's clock), its entries (also at the legacy path),
/// the SEL and the fault list.
pub(crate) fn routes() -> Vec<Route> {
    let mut routes: Vec<Route> = [LCLOG_ENTRIES, LEGACY_LCLOG, SEL_ENTRIES, FAULT_ENTRIES]
        .into_iter()
        .map(|p| Route::get(exact(p), |h, r| Reply::ok(h.log_entries(r.path).unwrap_or_default())))
        .collect();
    routes.push(
        Route::get(prefix(LCLOG_ENTRIES), |h, r| {
            Reply::ok(h.log_entry(r.path).unwrap_or_default())
        })
        .when(|h, r| h.log_entry(r.path).is_some()),
    );
    routes.push(Route::get(
        exact("/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog"),
        with_clock,
    ));
    routes
}

impl Host {
    /// Records a Lifecycle-log entry now. `args` are the message's arguments in the registry's
    /// order; `origin` the resource the entry is about.
    pub(crate) fn lc_log(
        s: &mut State,
        code: &'static str,
        args: &[&str],
        category: &'static str,
        origin: Option<&str>,
    ) {
        Self::lc_log_at(s, SystemTime::now(), code, args, category, origin);
    }

    /// Records a Lifecycle-log entry for something that happened at `at` (a scheduled change
    /// replayed later).
    pub(crate) fn lc_log_at(
        s: &mut State,
        at: SystemTime,
        code: &'static str,
        args: &[&str],
        category: &'static str,
        origin: Option<&str>,
    ) {
        s.logs.record(
            at,
            code,
            args.iter().map(|a| (*a).to_owned()).collect(),
            category,
            origin,
        );
    }

    /// Records, as the caller's, a configuration change to `what` (RAC1195).
    pub(crate) fn audit_change(s: &mut State, caller: &Caller, what: &str) {
        Self::lc_log(
            s,
            "RAC1195",
            &[&caller.user, &caller.address, what, Caller::INTERFACE],
            "Audit",
            Some(dell::MANAGER),
        );
    }

    /// Records in the Lifecycle log what a request changed and who asked, from the request and
    /// its answer: logins and failed logins, logouts, BIOS values staged, iDRAC attributes set
    /// (accounts log themselves), the boot override, jobs created and deleted, power and iDRAC
    /// resets, resets to defaults. Refused requests change nothing and log nothing, except a
    /// failed login.
    pub fn audit(&self, caller: &Caller, method: &str, path: &str, body: &[u8], reply: &Reply) {
        use redfish_client::oem::dell;
        let ok = (200..300).contains(&reply.status);
        let login_refused = method == "POST" && path == SESSIONS && reply.status == 401;
        let basic_refused = reply.status == 401 && !caller.user.is_empty();
        if !ok && !login_refused && !basic_refused {
            return;
        }
        let body: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let mut s = self.lock();
        let who = [caller.user.as_str(), caller.address.as_str(), Caller::INTERFACE];
        if login_refused || basic_refused {
            let user = body["UserName"].as_str().unwrap_or(&caller.user).to_owned();
            Self::lc_log(
                &mut s,
                "USR0031",
                &[&user, &caller.address, Caller::INTERFACE],
                "Audit",
                Some(dell::MANAGER),
            );
            return;
        }
        let job_id = reply
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("Location"))
            .and_then(|(_, v)| v.rsplit('/').next())
            .map(str::to_owned);
        let created_job = |s: &mut State, name: &str| {
            if let Some(id) = job_id
                .as_deref()
                .filter(|id| id.starts_with("JID_") || id.starts_with("RID_"))
            {
                Self::lc_log(
                    s,
                    "JCP040",
                    &[who[0], who[1], id, name, who[2]],
                    "Configuration",
                    Some(dell::MANAGER),
                );
            }
        };
        let action = path.rsplit_once("/Actions/").map(|(_, a)| a.trim_start_matches("Oem/"));
        match (method, path, action) {
            ("POST", SESSIONS, _) => {
                let user = body["UserName"].as_str().unwrap_or_default();
                Self::lc_log(
                    &mut s,
                    "USR0030",
                    &[user, &caller.address, Caller::INTERFACE],
                    "Audit",
                    Some(dell::MANAGER),
                );
            }
            ("DELETE", p, _) if p.starts_with(SESSIONS) => {
                Self::lc_log(&mut s, "USR0032", &who, "Audit", Some(dell::MANAGER));
            }
            ("PATCH", dell::BIOS_SETTINGS, _) => {
                for name in body["Attributes"].as_object().into_iter().flat_map(|a| a.keys()) {
                    Self::audit_change(&mut s, caller, &format!("BIOS.Setup.1-1#{name}"));
                }
                created_job(&mut s, "Configure: BIOS.Setup.1-1");
            }
            ("PATCH", dell::SYSTEM, _) => {
                for name in body["Boot"].as_object().into_iter().flat_map(|a| a.keys()) {
                    Self::audit_change(&mut s, caller, &format!("System.Embedded.1#Boot#{name}"));
                }
            }
            ("PATCH", p, _) if p.contains("/DellAttributes/") || p.ends_with("/Attributes") => {
                let fqdd = p
                    .rsplit('/')
                    .next()
                    .filter(|f| !f.is_empty() && *f != "Attributes")
                    .unwrap_or("iDRAC.Embedded.1");
                for name in body["Attributes"].as_object().into_iter().flat_map(|a| a.keys()) {
                    if name.starts_with("Users.") {
                        continue;
                    }
                    // `IPv4.1.Address` as the registry's `Id` writes it: iDRAC.Embedded.1#IPv4.1#Address.
                    let target = match name.split('.').collect::<Vec<_>>().as_slice() {
                        [group, index, attr] => format!("{fqdd}#{group}.{index}#{attr}"),
                        _ => format!("{fqdd}#{name}"),
                    };
                    Self::audit_change(&mut s, caller, &target);
                }
            }
            ("POST", dell::JOBS | dell::OEM_JOBS, _) => created_job(&mut s, "Configure: BIOS.Setup.1-1"),
            ("DELETE", p, _) if p.contains("/Jobs/") => {
                let id = p.rsplit('/').next().unwrap_or_default();
                Self::lc_log(&mut s, "JCP036", &[id], "Configuration", Some(dell::MANAGER));
            }
            (_, _, Some("DellJobService.DeleteJobQueue")) => match body["JobID"].as_str().unwrap_or_default() {
                "JID_CLEARALL" => Self::lc_log(&mut s, "JCP045", &[], "Configuration", Some(dell::MANAGER)),
                "JID_CLEARALL_FORCE" => Self::lc_log(&mut s, "JCP046", &[], "Configuration", Some(dell::MANAGER)),
                id => Self::lc_log(&mut s, "JCP036", &[id], "Configuration", Some(dell::MANAGER)),
            },
            (_, _, Some("DellJobService.CreateRebootJob")) => created_job(&mut s, "Reboot Job"),
            (_, _, Some(a @ ("ComputerSystem.Reset" | "Chassis.Reset" | "DellOemChassis.ExtendedReset"))) => {
                let kind = body["ResetType"].as_str().unwrap_or_default();
                Self::audit_change(&mut s, caller, &format!("{a} {kind}"));
                let code = match kind {
                    "On" => "RAC0701",
                    "PowerCycle" => "RAC0702",
                    "ForceRestart" => "RAC0703",
                    "ForceOff" => "RAC0704",
                    "GracefulShutdown" | "GracefulRestart" | "PushPowerButton" => "RAC0705",
                    "Nmi" => "RAC0706",
                    _ => return,
                };
                Self::lc_log(&mut s, code, &[], "Audit", Some(dell::SYSTEM));
            }
            (_, _, Some(a @ ("Manager.Reset" | "DelliDRACCardService.iDRACReset"))) => {
                Self::audit_change(&mut s, caller, a);
                Self::lc_log(&mut s, "RAC0182", &["user initiated"], "Audit", Some(dell::MANAGER));
            }
            (_, _, Some(a @ ("Manager.ResetToDefaults" | "DelliDRACCardService.iDRACResetCfg"))) => {
                Self::audit_change(&mut s, caller, a);
                Self::lc_log(&mut s, "SYS149", &[], "Audit", Some(dell::MANAGER));
            }
            (_, _, Some("Bios.ResetBios")) => {
                Self::audit_change(&mut s, caller, "BIOS.Setup.1-1#ResetBios");
                Self::lc_log(&mut s, "SYS148", &[], "Configuration", Some(dell::SYSTEM));
            }
            (_, _, Some("Bios.ChangePassword")) => {
                let which = body["PasswordName"].as_str().unwrap_or("Password");
                Self::audit_change(&mut s, caller, &format!("BIOS.Setup.1-1#{which}"));
            }
            (_, _, Some("DellManager.ClearPending")) => {
                Self::audit_change(&mut s, caller, "BIOS.Setup.1-1#ClearPending")
            }
            ("POST", crate::synth::SUBSCRIPTIONS, _) | ("DELETE", _, None)
                if path.starts_with(crate::synth::SUBSCRIPTIONS) =>
            {
                Self::audit_change(&mut s, caller, "EventService#Subscriptions");
            }
            _ => {}
        }
    }

    /// The `@odata.type` of log entries, by the iDRAC's generation (LogEntry v1_15_0 on 7.x,
    /// v1_9_0 on 6.x, as the 7.10 and 6.00 captures show).
    fn entry_type(&self) -> &'static str {
        if self.is_7x() {
            "#LogEntry.v1_15_0.LogEntry"
        } else {
            "#LogEntry.v1_9_0.LogEntry"
        }
    }

    /// A log's entries collection, newest first with every entry inline (as real iDRACs serve
    /// it; the server pages it), or `None` for a path that is no log here.
    pub fn log_entries(&self, path: &str) -> Option<Value> {
        let (description, name) = match path {
            LCLOG_ENTRIES | LEGACY_LCLOG => ("LC Logs for this manager", "Log Entry Collection"),
            SEL_ENTRIES => ("System Event Logs for this manager", "Log Entry Collection"),
            FAULT_ENTRIES => (
                "Faults of the devices that roll up health",
                "FaultList Entries Collection",
            ),
            _ => return None,
        };
        let s = self.now();
        let entry_type = self.entry_type();
        let members: Vec<Value> = if matches!(path, LCLOG_ENTRIES | LEGACY_LCLOG) {
            s.logs.lc.iter().rev().map(|e| e.to_json(entry_type)).collect()
        } else {
            Vec::new()
        };
        let id = if path == LEGACY_LCLOG { LCLOG_ENTRIES } else { path };
        Some(json!({
            "@odata.context": "/redfish/v1/$metadata#LogEntryCollection.LogEntryCollection",
            "@odata.id": id,
            "@odata.type": "#LogEntryCollection.LogEntryCollection",
            "Description": description,
            "Members@odata.count": members.len(),
            "Members": members,
            "Name": name,
        }))
    }

    /// One Lifecycle-log entry by path.
    pub fn log_entry(&self, path: &str) -> Option<Value> {
        let id: u64 = path.strip_prefix(LCLOG_ENTRIES)?.strip_prefix('/')?.parse().ok()?;
        let s = self.now();
        let entry_type = self.entry_type();
        s.logs.lc.iter().find(|e| e.id == id).map(|e| e.to_json(entry_type))
    }

    /// The latest Lifecycle-log entries as (MessageId, arguments), newest first, for tests.
    pub fn lifecycle_log(&self) -> Vec<(String, Vec<String>)> {
        let s = self.now();
        s.logs
            .lc
            .iter()
            .rev()
            .map(|e| (format!("{IDRAC}.{}", e.code), e.args.clone()))
            .collect()
    }
}
