//! Local user accounts and roles, with the iDRAC 9's rules, and what each role may do.
//!
//! - 16 slots, `AccountService/Accounts/1` to `/16`, all always listed (R750 captures); slot 1
//!   is the reserved anonymous account and cannot be configured (Dell's
//!   CreateDeleteIdracUsersREDFISH.py: "Supported values are 2 to 16").
//! - An account is created by PATCHing an empty slot with `UserName`, `Password`, `RoleId` and
//!   `Enabled` (the same script, iDRAC 9 branch; also at its `Managers/iDRAC.Embedded.1/Accounts/N`
//!   path), modified and disabled by PATCH, and deleted by clearing the slot (`UserName: ""`);
//!   `DELETE` is refused with 405, so DMTF's tools fall back to that PATCH.
//! - A password needs a user name first and enabling needs a password: RAC022 and RAC023, as
//!   the iDRAC message registry words them; within one PATCH the user name is applied first.
//! - Role ↔ privilege bit mask as Dell's Ansible collection maps them (Administrator 511,
//!   Operator 499, ReadOnly 1, None 0; `Users.N.Privilege` in the iDRAC attributes), and the
//!   privileges of each role as the real `AccountService/Roles` lists them.
//! - The password policy of the iDRAC attributes, where the tree lists them
//!   (`Security.1.PasswordMinimumLength`, `PasswordRequireUpperCase`, `PasswordRequireNumbers`,
//!   `PasswordRequireSymbols`), and `MaxPasswordLength` of the AccountService (40 on 6.x, 127 on
//!   7.x); a password that breaks it gets RAC1276. User names are 1 to 16 characters (the
//!   registry's `Users.N.UserName` bound).
//! - The same accounts are the iDRAC attributes `Users.N.UserName`, `Enable`, `Privilege` and
//!   `Password`: a change made either way shows the other way.
//!
//! Assumed: the characters refused in a user name, the answer to a duplicate name
//! (ResourceAlreadyExists) and to slot 1 (PropertyNotWritable), custom bit masks showing RoleId
//! `None`, and that sessions of an account that is cleared, disabled or given a new password end.
//!
//! iDRAC10 creates an account by `POST AccountService/Accounts {"UserName", "Password",
//! "RoleId", "Enabled"[, "Id"]}` (201) and deletes one by `DELETE AccountService/Accounts/<id>`
//! (204), as Dell's `CreateDeleteIdracUsersREDFISH.py` does on iDRAC 10. Assumed: the first empty
//! slot from 2 when no `Id` is given, and the refusals (a taken or unknown slot).

pub(crate) mod state;

pub(crate) use state::{ACCOUNTS, LEGACY_ACCOUNTS};

use super::caller::Caller;
use super::core::{Host, State};
use super::reply::Reply;
use crate::messages::{self, idrac};
use crate::route::{Route, exact, not_found, prefix};
use crate::synth::ROLES;
use redfish_client::oem::dell::{self, AttributeGroup};
use redfish_client::resources::bios::AttributeValue;
use serde_json::{Value, json};
use state::{Account, ROLE_MASKS, SLOTS, slot_of, users_key};

/// The accounts collection and its slots, at either path.
pub(crate) fn routes() -> Vec<Route> {
    let mut routes = vec![
        Route::get(exact(ACCOUNTS), |h, _| Reply::ok(h.accounts())),
        Route::get(exact(LEGACY_ACCOUNTS), |h, _| Reply::ok(h.accounts())),
    ];
    for collection in [ACCOUNTS, LEGACY_ACCOUNTS] {
        routes.push(
            Route::get(prefix(collection), |h, r| {
                h.account(r.path).unwrap_or_else(|| not_found(r.path))
            })
            .when(|h, r| h.account(r.path).is_some()),
        );
        routes.push(
            Route::patch(prefix(collection), |h, r| {
                r.with_json(|b| h.patch_account(r.caller, r.path, b))
            })
            .when(|h, r| h.account(r.path).is_some()),
        );
    }
    routes
}

/// iDRAC10's account creation and deletion on the collection.
pub(crate) fn idrac10_routes() -> Vec<Route> {
    vec![
        Route::post(exact(ACCOUNTS), |h, r| r.with_json(|b| h.create_account(r.caller, b))),
        Route::delete(prefix(ACCOUNTS), |h, r| h.delete_account(r.caller, r.path))
            .when(|h, r| h.account(r.path).is_some()),
    ]
}

/// The privilege an operation needs, after DSP8011's base mapping: reads need Login; writes
/// to accounts ConfigureUsers (or ConfigureSelf for one's own password), to the Manager and
/// the services it hosts ConfigureManager, to systems, chassis, jobs and updates
/// ConfigureComponents.
fn required(method: &str, path: &str) -> &'static str {
    if matches!(method, "GET" | "HEAD") || path.starts_with("/redfish/v1/SessionService") {
        return "Login";
    }
    if path.starts_with("/redfish/v1/AccountService")
        || path.starts_with(LEGACY_ACCOUNTS)
        || path.contains("/DellAttributes/iDRAC.Embedded.1")
    {
        return "ConfigureUsers";
    }
    let components = path.starts_with("/redfish/v1/Systems")
        || path.starts_with("/redfish/v1/Chassis")
        || path.starts_with("/redfish/v1/UpdateService")
        || path.contains("/Jobs")
        || path.contains("DellJobService")
        || path.contains("DellLCService");
    if components {
        "ConfigureComponents"
    } else {
        "ConfigureManager"
    }
}

impl Host {
    /// 403 unless `caller` holds the privilege `method` on `path` needs; an account changing
    /// only its own password needs ConfigureSelf.
    pub fn authorize(&self, caller: &Caller, method: &str, path: &str, body: &[u8]) -> Option<Reply> {
        if caller.user.is_empty() {
            return None;
        }
        let s = self.lock();
        let account = s.accounts.slots.iter().find(|a| a.user == caller.user)?;
        let needed = required(method, path);
        let own_password = method == "PATCH"
            && slot_of(path)
                .and_then(|n| s.accounts.slots.get(n - 1))
                .is_some_and(|a| a.user == caller.user)
            && serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|b| b.as_object().map(|o| o.keys().all(|k| k == "Password")))
                .unwrap_or(false);
        let held = account.privileges();
        if held.contains(&needed) || (own_password && held.contains(&"ConfigureSelf")) {
            return None;
        }
        Some(Reply::error(
            403,
            vec![messages::base(
                "InsufficientPrivilege",
                "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.",
                &[],
                "Either abandon the operation or change the associated access rights and resubmit the request if the operation failed.",
                None,
            )],
        ))
    }

    fn account_template(&self, n: usize) -> Value {
        let recorded = self
            .fixture
            .doc(&format!("{ACCOUNTS}/{n}"))
            .or_else(|| self.fixture.doc(&format!("{ACCOUNTS}/2")));
        recorded.cloned().unwrap_or_else(|| {
            json!({
                "@odata.context": "/redfish/v1/$metadata#ManagerAccount.ManagerAccount",
                "@odata.type": "#ManagerAccount.v1_8_0.ManagerAccount",
                "AccountTypes": ["Redfish", "SNMP", "OEM", "HostConsole", "ManagerConsole", "IPMI", "KVMIP", "VirtualMedia", "WebUI"],
                "Description": "User Account",
                "Locked": false,
                "Name": "User Account",
                "Password": null,
                "PasswordChangeRequired": false,
            })
        })
    }

    /// `GET AccountService/Accounts/<n>`, or `None` for a slot that does not exist.
    pub fn account(&self, path: &str) -> Option<Reply> {
        let n = slot_of(path).filter(|n| (1..=SLOTS).contains(n))?;
        let s = self.lock();
        let a = s.accounts.slots.get(n - 1)?;
        let mut doc = self.account_template(n);
        let role = a.role();
        doc["@odata.id"] = json!(format!("{ACCOUNTS}/{n}"));
        doc["Id"] = json!(n.to_string());
        doc["UserName"] = json!(a.user);
        doc["Enabled"] = json!(a.enabled);
        doc["RoleId"] = json!(role);
        doc["Password"] = Value::Null;
        doc["Locked"] = json!(false);
        doc["Links"]["Role"] = json!({"@odata.id": format!("{ROLES}/{role}")});
        if let Some(o) = doc.as_object_mut() {
            o.remove("@odata.etag");
            // The slot's SSH keys collection is linked where the tree records it (each slot of
            // the 7.10 capture has one), and not otherwise.
            let keys = format!("{ACCOUNTS}/{n}/Keys");
            if self.fixture.doc(&keys).is_some() {
                o.insert("Keys".into(), json!({"@odata.id": keys}));
            } else {
                o.remove("Keys");
            }
        }
        // The tag goes into the document too (`@odata.etag`, as real accounts carry it), equal
        // to the ETag header: a hash of the document without it.
        let tag = crate::rendered::Rendered::of(&doc).etag;
        doc["@odata.etag"] = json!(tag.to_str().unwrap_or_default());
        let mut rendered = crate::rendered::Rendered::of(&doc);
        rendered.etag = tag;
        Some(Reply::ok_rendered(std::sync::Arc::new(rendered)))
    }

    /// The accounts collection: every slot.
    pub fn accounts(&self) -> Value {
        let members: Vec<Value> = (1..=SLOTS)
            .map(|n| json!({"@odata.id": format!("{ACCOUNTS}/{n}")}))
            .collect();
        let mut doc = self.fixture.doc(ACCOUNTS).cloned().unwrap_or_else(|| {
            json!({
                "@odata.context": "/redfish/v1/$metadata#ManagerAccountCollection.ManagerAccountCollection",
                "@odata.type": "#ManagerAccountCollection.ManagerAccountCollection",
                "Description": "BMC User Accounts Collection",
                "Name": "Accounts Collection",
            })
        });
        doc["@odata.id"] = json!(ACCOUNTS);
        doc["Members@odata.count"] = json!(members.len());
        doc["Members"] = Value::Array(members);
        doc
    }

    /// The password policy: `Err` with RAC1276 when `password` breaks it.
    fn check_password(&self, s: &State, password: &str) -> Result<(), Value> {
        let attrs = s.dell_attributes.groups.get(&AttributeGroup::Idrac);
        let on = |k: &str| attrs.and_then(|a| a.get(k)).and_then(AttributeValue::as_str) == Some("Enabled");
        let min = attrs
            .and_then(|a| a.get("Security.1.PasswordMinimumLength"))
            .and_then(|v| v.to_json().as_u64())
            .unwrap_or(0)
            .max(
                self.fixture
                    .doc("/redfish/v1/AccountService")
                    .and_then(|d| d["MinPasswordLength"].as_u64())
                    .unwrap_or(0),
            );
        let max = self
            .fixture
            .doc("/redfish/v1/AccountService")
            .and_then(|d| d["MaxPasswordLength"].as_u64())
            .unwrap_or(40);
        let len = password.chars().count() as u64;
        let broken = len < min.max(1)
            || len > max
            || (on("Security.1.PasswordRequireUpperCase") && !password.chars().any(|c| c.is_ascii_uppercase()))
            || (on("Security.1.PasswordRequireNumbers") && !password.chars().any(|c| c.is_ascii_digit()))
            || (on("Security.1.PasswordRequireSymbols") && password.chars().all(char::is_alphanumeric));
        if broken {
            return Err(idrac(
                "RAC1276",
                "Unable to set the password because the password entered does not fulfill the defined password policy recommendations.",
                &[],
                &format!(
                    "Enter a password of {} to {max} characters that meets the password policy, and retry the operation.",
                    min.max(1)
                ),
                Some("#/Password"),
            ));
        }
        Ok(())
    }

    /// `PATCH AccountService/Accounts/<n>` (also at Dell's legacy path): creates, modifies,
    /// disables or clears the slot. Properties that can be set are applied and those that
    /// cannot are listed: 200 when something was applied (DSP0266, a PATCH with some properties
    /// refused), 400 when nothing could be.
    pub fn patch_account(&self, caller: &Caller, path: &str, body: &Value) -> Reply {
        let Some(n) = slot_of(path).filter(|n| (1..=SLOTS).contains(n)) else {
            return Reply::error(404, vec![messages::not_found(path)]);
        };
        let Some(fields) = body.as_object() else {
            return Reply::error(400, vec![messages::property_missing("UserName")]);
        };
        let (annotations, props): (Vec<_>, Vec<_>) = fields.iter().partition(|(k, _)| k.starts_with('@'));
        if props.is_empty() {
            let code = if annotations.is_empty() {
                "EmptyJSON"
            } else {
                "NoOperation"
            };
            let text = if annotations.is_empty() {
                "The request body submitted contained an empty JSON object and the service is unable to process it."
            } else {
                "The request body submitted contain no data to act upon and no changes to the resource took place."
            };
            return Reply::error(
                400,
                vec![messages::base(
                    code,
                    text,
                    &[],
                    "Add properties in the JSON object and resubmit the request.",
                    None,
                )],
            );
        }
        let mut s = self.change();
        let mut problems = Vec::new();
        let mut applied = Vec::new();
        let not_writable = |name: &str| {
            messages::base(
                "PropertyNotWritable",
                &format!("The property {name} is a read only property and cannot be assigned a value."),
                &[name],
                "Remove the property from the request body and resubmit the request if the operation failed.",
                Some(&format!("#/{name}")),
            )
        };
        if n == 1 {
            // The anonymous account is reserved.
            let all: Vec<Value> = props.iter().map(|(k, _)| not_writable(k)).collect();
            return Reply::error(400, all);
        }
        let mut account = s.accounts.slots[n - 1].clone();
        let before = account.clone();
        // The user name first: a password or enabling needs one (RAC022).
        let order = ["UserName", "RoleId", "Password", "Enabled", "Locked"];
        let mut sorted: Vec<(&String, &Value)> = props.clone();
        sorted.sort_by_key(|(k, _)| order.iter().position(|o| o == k).unwrap_or(order.len()));
        let mut cleared = false;
        for (name, value) in sorted {
            match name.as_str() {
                "UserName" => match value.as_str() {
                    Some("") => {
                        account = Account::default();
                        cleared = true;
                        applied.push("UserName");
                    }
                    Some(u) if valid_user_name(u) => {
                        if s.accounts.slots.iter().enumerate().any(|(i, a)| i != n - 1 && a.user == u) {
                            problems.push(messages::base(
                                "ResourceAlreadyExists",
                                &format!("The requested resource of type ManagerAccount with the property UserName with the value '{u}' already exists."),
                                &["ManagerAccount", "UserName", u],
                                "Do not repeat the create operation as the resource has already been created.",
                                Some("#/UserName"),
                            ));
                        } else {
                            account.user = u.to_owned();
                            applied.push("UserName");
                        }
                    }
                    _ => problems.push(value_format(name, value)),
                },
                "Password" => match value.as_str() {
                    _ if account.user.is_empty() => problems.push(idrac(
                        "RAC022",
                        "Unable to set values for User Password, IPMILan, IPMISerial or User Admin Privilege because the User Name is not configured.",
                        &[],
                        "Configure the User Name and retry the operation.",
                        Some("#/Password"),
                    )),
                    Some(p) => match self.check_password(&s, p) {
                        Ok(()) => {
                            account.password = Some(p.to_owned());
                            applied.push("Password");
                        }
                        Err(m) => problems.push(m),
                    },
                    None => problems.push(value_format(name, value)),
                },
                "RoleId" => match value.as_str().and_then(|r| ROLE_MASKS.iter().find(|(n, _)| *n == r)) {
                    Some((_, mask)) => {
                        account.privilege = *mask;
                        applied.push("RoleId");
                    }
                    None => problems.push(messages::base(
                        "PropertyValueNotInList",
                        &format!("The value '{}' for the property RoleId is not in the list of acceptable values.", value_text(value)),
                        &[&value_text(value), "RoleId"],
                        "Choose one of Administrator, Operator, ReadOnly, None.",
                        Some("#/RoleId"),
                    )),
                },
                "Enabled" => match value.as_bool() {
                    Some(true) if account.password.is_none() => problems.push(idrac(
                        "RAC023",
                        "Unable to enable the User or set values for IPMILan, IPMISerial, or User Admin Privilege because the User Password is not configured.",
                        &[],
                        "Configure the User Password and retry the operation.",
                        Some("#/Enabled"),
                    )),
                    Some(on) => {
                        account.enabled = on;
                        applied.push("Enabled");
                    }
                    None => problems.push(value_format(name, value)),
                },
                // An account unlocks; nothing locks one here.
                "Locked" if value == &Value::Bool(false) => applied.push("Locked"),
                "Id" | "Name" | "Description" | "Links" | "PasswordChangeRequired" | "AccountTypes" | "Locked"
                | "OEMAccountTypes" | "SNMP" | "Keys" | "Oem" | "StrictAccountTypes" | "PasswordExpiration" => {
                    problems.push(not_writable(name));
                }
                _ => problems.push(messages::property_unknown(name, &format!("#/{name}"))),
            }
        }
        if applied.is_empty() {
            return Reply::error(400, problems);
        }
        self.store_account(&mut s, caller, n, &before, account, cleared);
        drop(s);
        let mut info = vec![messages::base(
            "AccountModified",
            "The account was successfully modified.",
            &[],
            "No resolution is required.",
            None,
        )];
        info.extend(problems);
        // The account as it is now, with the messages (DSP0266: a PATCH that applied some
        // properties answers the resource and lists what it could not apply).
        let mut doc = self.account(path).and_then(|r| r.json()).unwrap_or_default();
        doc["@Message.ExtendedInfo"] = Value::Array(info);
        Reply::ok(doc)
    }

    /// `POST AccountService/Accounts` (iDRAC10): the slot `Id` names, else the first empty one
    /// from 2, set as a PATCH of it would set it; 201 with the account and its `Location`.
    pub fn create_account(&self, caller: &Caller, body: &Value) -> Reply {
        let Some(fields) = body.as_object() else {
            return Reply::error(400, vec![messages::property_missing("UserName")]);
        };
        let slot = match fields.get("Id") {
            None => {
                let s = self.lock();
                (2..=SLOTS).find(|n| s.accounts.slots[n - 1].user.is_empty())
            }
            Some(id) => id
                .as_str()
                .map(str::to_owned)
                .or_else(|| id.as_u64().map(|n| n.to_string()))
                .and_then(|t| t.parse::<usize>().ok())
                .filter(|n| (2..=SLOTS).contains(n)),
        };
        let Some(n) = slot else {
            return Reply::error(
                400,
                vec![messages::base(
                    "CreateLimitReachedForResource",
                    "The create operation failed because the resource has reached the limit of possible resources.",
                    &[],
                    "Either delete resources and resubmit the request if the operation failed or do not resubmit the request.",
                    Some("#/Id"),
                )],
            );
        };
        let taken = !self.lock().accounts.slots[n - 1].user.is_empty();
        if taken {
            let shown = n.to_string();
            return Reply::error(
                400,
                vec![messages::base(
                    "ResourceAlreadyExists",
                    &format!(
                        "The requested resource of type ManagerAccount with the property Id with the value '{shown}' already exists."
                    ),
                    &["ManagerAccount", "Id", &shown],
                    "Do not repeat the create operation as the resource has already been created.",
                    Some("#/Id"),
                )],
            );
        }
        let mut properties = fields.clone();
        properties.remove("Id");
        let path = format!("{ACCOUNTS}/{n}");
        let written = self.patch_account(caller, &path, &Value::Object(properties));
        if written.status != 200 {
            return written;
        }
        Reply::with_body(201, written.json()).header("Location", path)
    }

    /// `DELETE AccountService/Accounts/<n>` (iDRAC10): the slot cleared, 204.
    pub fn delete_account(&self, caller: &Caller, path: &str) -> Reply {
        let empty = slot_of(path)
            .and_then(|n| self.lock().accounts.slots.get(n - 1).map(|a| a.user.is_empty()))
            .unwrap_or(true);
        if empty {
            return Reply::error(404, vec![messages::not_found(path)]);
        }
        let cleared = self.patch_account(caller, path, &json!({"UserName": ""}));
        if cleared.status == 200 {
            Reply::with_body(204, None)
        } else {
            cleared
        }
    }

    /// Stores a slot's new state, ends the sessions it no longer allows and logs the change.
    fn store_account(&self, s: &mut State, caller: &Caller, n: usize, before: &Account, after: Account, cleared: bool) {
        let ends = cleared || !after.enabled || after.password != before.password || after.user != before.user;
        if ends && !before.user.is_empty() {
            s.sessions.open.retain(|_, sess| sess.user != before.user);
        }
        for (what, changed) in [
            ("UserName", after.user != before.user),
            ("Enable", after.enabled != before.enabled),
            ("Privilege", after.privilege != before.privilege),
        ] {
            if changed {
                Self::audit_change(s, caller, &format!("iDRAC.Embedded.1#Users.{n}#{what}"));
            }
        }
        if after.password != before.password && after.password.is_some() {
            Self::audit_change(s, caller, &format!("iDRAC.Embedded.1#Users.{n}#Password"));
            Self::lc_log(s, "SWC1911", &[&n.to_string()], "Audit", Some(dell::MANAGER));
        }
        s.accounts.slots[n - 1] = after;
    }

    /// The `Users.N.*` iDRAC attributes, live: the accounts as the attributes show them, for
    /// the keys `listed` names.
    pub(crate) fn users_attributes(s: &State, listed: &mut redfish_client::resources::bios::Attributes) {
        for (key, value) in listed.iter_mut() {
            let Some((n, field)) = users_key(key) else { continue };
            let Some(a) = s.accounts.slots.get(n - 1) else { continue };
            *value = match field {
                "UserName" => a.user.clone().into(),
                "Enable" => if a.enabled { "Enabled" } else { "Disabled" }.into(),
                "Privilege" => AttributeValue::Integer(a.privilege),
                "Password" => AttributeValue::Null,
                _ => continue,
            };
        }
    }

    /// A `PATCH DellAttributes/iDRAC.Embedded.1` of `Users.N.*`: applied to the account slot,
    /// with the account rules; the attributes that clear a slot's keys are taken as part of
    /// clearing it (Dell's iDRAC 9 delete sends `IPMIKey`, `MD5v3Key`, `SHA1v3Key`,
    /// `SHA256PasswordSalt` as ""). `Err` with the problems when one is refused.
    pub(crate) fn patch_users_attributes(
        &self,
        s: &mut State,
        caller: &Caller,
        users: &[(String, AttributeValue)],
    ) -> Result<(), Vec<Value>> {
        let mut by_slot: std::collections::BTreeMap<usize, Vec<(&str, &AttributeValue)>> = Default::default();
        for (key, value) in users {
            if let Some((n, field)) = users_key(key) {
                by_slot.entry(n).or_default().push((field, value));
            }
        }
        let mut problems = Vec::new();
        let mut staged = Vec::new();
        for (n, fields) in by_slot {
            if n == 1 || n > SLOTS {
                problems.push(super::refusals::read_only(&format!("Users.{n}.UserName")));
                continue;
            }
            let mut a = s.accounts.slots[n - 1].clone();
            let mut cleared = false;
            let order = ["UserName", "Privilege", "Password", "Enable"];
            let mut fields = fields;
            fields.sort_by_key(|(f, _)| order.iter().position(|o| o == f).unwrap_or(order.len()));
            for (field, value) in fields {
                let name = format!("Users.{n}.{field}");
                match (field, value.as_str()) {
                    ("UserName", Some("")) => {
                        a = Account::default();
                        cleared = true;
                    }
                    ("UserName", Some(u)) if valid_user_name(u) => a.user = u.to_owned(),
                    ("Password", Some(p)) if !a.user.is_empty() => match self.check_password(s, p) {
                        Ok(()) => a.password = Some(p.to_owned()),
                        Err(m) => problems.push(vec![m]),
                    },
                    ("Enable", Some("Enabled")) if a.password.is_some() => a.enabled = true,
                    ("Enable", Some("Disabled")) => a.enabled = false,
                    ("Privilege", _) => match value.to_json().as_i64().filter(|p| (0..=511).contains(p)) {
                        Some(p) => a.privilege = p,
                        None => problems.push(vec![value_format(&name, &value.to_json())]),
                    },
                    ("IPMIKey" | "MD5v3Key" | "SHA1v3Key" | "SHA256Password" | "SHA256PasswordSalt", Some("")) => {}
                    _ => problems.push(vec![value_format(&name, &value.to_json())]),
                }
            }
            staged.push((n, a, cleared));
        }
        let problems: Vec<Value> = problems.into_iter().flatten().collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        for (n, a, cleared) in staged {
            let before = s.accounts.slots[n - 1].clone();
            self.store_account(s, caller, n, &before, a, cleared);
        }
        Ok(())
    }
}

/// 1 to 16 characters, none of them blank or one the iDRAC reserves for its own syntax.
fn valid_user_name(u: &str) -> bool {
    let len = u.chars().count();
    (1..=16).contains(&len) && !u.chars().any(|c| c.is_whitespace() || "/\\\"'@:<>&|;,".contains(c))
}

fn value_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn value_format(name: &str, value: &Value) -> Value {
    let shown = value_text(value);
    messages::base(
        "PropertyValueFormatError",
        &format!("The value '{shown}' for the property {name} is of a different format than the property can accept."),
        &[&shown, name],
        "Correct the value for the property in the request body and resubmit the request if the operation failed.",
        Some(&format!("#/{name}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_need_the_privileges_of_dsp8011() {
        assert_eq!(required("GET", "/redfish/v1/AccountService/Accounts/3"), "Login");
        assert_eq!(
            required("PATCH", "/redfish/v1/AccountService/Accounts/3"),
            "ConfigureUsers"
        );
        assert_eq!(
            required("PATCH", "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"),
            "ConfigureComponents"
        );
        assert_eq!(
            required("POST", "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Manager.Reset"),
            "ConfigureManager"
        );
        assert_eq!(required("POST", "/redfish/v1/SessionService/Sessions"), "Login");
    }

    #[test]
    fn user_names_are_short_and_plain() {
        assert!(valid_user_name("operator7"));
        assert!(!valid_user_name(""));
        assert!(!valid_user_name("seventeen-chars-x"));
        assert!(!valid_user_name("a b"));
        assert!(!valid_user_name("a@b"));
        assert_eq!(users_key("Users.12.Privilege"), Some((12, "Privilege")));
        assert_eq!(users_key("IPv4.1.Address"), None);
    }
}
