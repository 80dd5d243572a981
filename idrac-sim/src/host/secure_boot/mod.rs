//! UEFI Secure Boot: the `SecureBoot` resource with live state, and `SecureBoot.ResetKeys`.
//!
//! From the real R750 captures (iDRAC 6.00, 7.10): the resource's shape and its seven key
//! resets. From Dell's `SecureBootResetKeysREDFISH.py`: the reset needs the Custom Secure Boot
//! policy, answers 200 or 202 and creates no job; it completes at the next reboot. The messages
//! are the real EEMI registry's: SYS439 under the Standard policy; SWC9007/SWC9008/SWC9009/
//! SWC9012 logged when a delete-all, reset, reset-all or delete is scheduled, and UEFI0286 when
//! the BIOS saved the change at POST (what Dell's Ansible `idrac_secure_boot` looks for).
//! Assumed: that `SecureBootEnable` follows the BIOS attribute `SecureBoot` once a POST applied
//! it, and that deleted keys leave the resource in `SetupMode` and the boot unverified.
//!
//! iDRAC10 takes a `PATCH` of `SecureBootEnable` on the resource and creates a BIOS job for it
//! at once, which no later BIOS write may join (bmclib PR 471, an A/B test on one R6715: "no
//! @Redfish.SettingsApplyTime needed or even accepted on that resource"). Assumed: the 202 with
//! the job's `Location`, and SYS011 when a BIOS job is already open.

pub(crate) mod state;

use super::core::{Host, State};
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Route, exact, recorded};
use redfish_client::oem::dell::{self, SECURE_BOOT};
use redfish_client::resources::bios::AttributeValue;
use serde_json::{Value, json};

/// The key resets a real iDRAC offers.
const RESETS: [&str; 7] = [
    "ResetAllKeysToDefault",
    "DeleteAllKeys",
    "DeletePK",
    "ResetPK",
    "ResetKEK",
    "ResetDB",
    "ResetDBX",
];

/// iDRAC10's `PATCH` of the `SecureBoot` resource.
pub(crate) fn idrac10_routes() -> Vec<Route> {
    vec![
        Route::patch(exact(SECURE_BOOT), |h, r| r.with_json(|b| h.patch_secure_boot(b)))
            .when(|h, _| h.fixture.doc(SECURE_BOOT).is_some()),
    ]
}

/// The `SecureBoot` resource and its key resets, where the tree records it.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(exact(SECURE_BOOT), |h, r| {
            h.cached(r.path, || Reply::ok(h.secure_boot(r.recorded_or_null(h))))
        })
        .when(recorded),
        Route::post(exact(format!("{SECURE_BOOT}/Actions/SecureBoot.ResetKeys")), |h, r| {
            r.with_json(|b| h.reset_keys(b))
        })
        .when(|h, _| h.fixture.doc(SECURE_BOOT).is_some()),
    ]
}

impl Host {
    /// The `SecureBoot` resource: enabled as the BIOS's `SecureBoot` value last applied at POST
    /// says, the current boot verified when it was on with keys in place.
    pub fn secure_boot(&self, doc: &Value) -> Value {
        let s = self.now();
        let enabled = Self::secure_boot_on(&s);
        let mut doc = doc.clone();
        doc["SecureBootEnable"] = json!(enabled);
        doc["SecureBootCurrentBoot"] = json!(if s.secure_boot.verified { "Enabled" } else { "Disabled" });
        let mode = if s.secure_boot.keys_deleted {
            "SetupMode".to_owned()
        } else {
            s.bios
                .values
                .get("SecureBootMode")
                .and_then(AttributeValue::as_str)
                .unwrap_or("DeployedMode")
                .to_owned()
        };
        doc["SecureBootMode"] = json!(mode);
        doc
    }

    /// `PATCH SecureBoot {"SecureBootEnable": true|false}` (iDRAC10): the BIOS's `SecureBoot`
    /// value, pending, with a BIOS job of its own that no other write joins.
    pub fn patch_secure_boot(&self, body: &Value) -> Reply {
        let Some(fields) = body.as_object() else {
            return Reply::error(400, vec![messages::property_missing("SecureBootEnable")]);
        };
        let mut enable = None;
        let mut problems = Vec::new();
        for (name, value) in fields {
            match (name.as_str(), value.as_bool()) {
                ("SecureBootEnable", Some(on)) => enable = Some(on),
                ("SecureBootEnable", None) => {
                    problems.push(messages::property_value_format_error(name, "#/SecureBootEnable"))
                }
                _ => problems.push(messages::property_unknown(name, &format!("#/{name}"))),
            }
        }
        let Some(on) = enable.filter(|_| problems.is_empty()) else {
            if problems.is_empty() {
                problems.push(messages::property_missing("SecureBootEnable"));
            }
            return Reply::error(400, problems);
        };
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.jobs.has_open_bios() {
            return Reply::with_body(400, Some(messages::idrac10::sys011(dell::SECURE_BOOT_ATTRIBUTE)));
        }
        s.bios.pending.insert(
            dell::SECURE_BOOT_ATTRIBUTE.to_owned(),
            (if on { "Enabled" } else { "Disabled" }).into(),
        );
        let location = self.create_exclusive_bios_job(&mut s);
        Reply::with_body(202, Some(messages::success_body(vec![messages::success()]))).header("Location", location)
    }

    fn secure_boot_on(s: &State) -> bool {
        s.bios.values.get("SecureBoot").and_then(AttributeValue::as_str) == Some("Enabled")
    }

    /// `SecureBoot.ResetKeys {"ResetKeysType"}`: the type exactly as listed (case matters, as in
    /// Dell's script), the Custom policy, no System Lockdown; then scheduled for the next POST.
    pub fn reset_keys(&self, body: &Value) -> Reply {
        let kind = body.get("ResetKeysType").and_then(Value::as_str);
        let Some(kind) = kind.filter(|k| RESETS.contains(k)) else {
            return Reply::error(
                400,
                vec![messages::action_parameter(
                    "SecureBoot.ResetKeys",
                    "ResetKeysType",
                    kind,
                    &RESETS,
                )],
            );
        };
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if s.bios.values.get("SecureBootPolicy").and_then(AttributeValue::as_str) != Some("Custom") {
            return Reply::error(
                400,
                vec![idrac(
                    "SYS439",
                    "Unable to complete the operation because the Secure Boot policy is set to Standard.",
                    &[],
                    "Reset the Secure Boot policy to Custom by performing the PATCH operation for the SecureBootPolicy attribute on the Redfish Bios URL and retry the operation.",
                    Some("#/ResetKeysType"),
                )],
            );
        }
        let logged = match kind {
            "DeleteAllKeys" => "SWC9007",
            "ResetAllKeysToDefault" => "SWC9009",
            "DeletePK" => "SWC9012",
            _ => "SWC9008",
        };
        s.secure_boot.keys_pending = Some(kind.to_owned());
        Self::lc_log(&mut s, logged, &[], "Configuration", Some(dell::MANAGER));
        Reply::ok(messages::success_body(vec![messages::success()]))
    }

    /// At the end of POST, after any BIOS job: a scheduled key reset takes effect (UEFI0286),
    /// and the boot is verified when Secure Boot is on with keys in place.
    pub(crate) fn apply_secure_boot(s: &mut State, at: std::time::SystemTime) {
        if let Some(kind) = s.secure_boot.keys_pending.take() {
            s.secure_boot.keys_deleted = matches!(kind.as_str(), "DeleteAllKeys" | "DeletePK");
            Self::lc_log_at(s, at, "UEFI0286", &[], "Configuration", None);
        }
        s.secure_boot.verified = Self::secure_boot_on(s) && !s.secure_boot.keys_deleted;
    }
}
