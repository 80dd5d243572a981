//! What the host keeps of its local accounts: the 16 slots (user, password, privilege bit mask,
//! enabled), each slot's role by Dell's masks, and the names that reach them.

use crate::config::SimConfig;
use crate::fixture::Fixture;
use crate::synth::ROLE_PRIVILEGES;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::AttributeValue;

/// The accounts collection.
pub(crate) const ACCOUNTS: &str = "/redfish/v1/AccountService/Accounts";
/// Where Dell's iDRAC 9 user scripts reach the same accounts.
pub(crate) const LEGACY_ACCOUNTS: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Accounts";
/// Slots on an iDRAC 9.
pub(crate) const SLOTS: usize = 16;

/// Role names and their iDRAC privilege bit masks.
pub(crate) const ROLE_MASKS: [(&str, i64); 4] =
    [("Administrator", 511), ("Operator", 499), ("ReadOnly", 1), ("None", 0)];

/// The account slots (index 0 is slot 1).
#[derive(Debug)]
pub(crate) struct Accounts {
    pub(crate) slots: Vec<Account>,
}

impl Accounts {
    /// The slots a host starts with: the tree's `Users.N` attributes, and slot 2 with the
    /// configured user name and password.
    pub(crate) fn new(fixture: &Fixture, config: &SimConfig) -> Self {
        let attrs = fixture.dell_attributes.get(&AttributeGroup::Idrac);
        let attr = |n: usize, k: &str| attrs.and_then(|a| a.get(&format!("Users.{n}.{k}")));
        let slots = (1..=SLOTS)
            .map(|n| {
                let mut a = Account {
                    user: attr(n, "UserName")
                        .and_then(AttributeValue::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    password: None,
                    privilege: attr(n, "Privilege").and_then(|v| v.to_json().as_i64()).unwrap_or(0),
                    enabled: attr(n, "Enable").and_then(AttributeValue::as_str) == Some("Enabled"),
                };
                if n == 2 {
                    a.user.clone_from(&config.username);
                    a.password = Some(config.password.clone());
                    a.privilege = 511;
                    a.enabled = true;
                }
                a
            })
            .collect();
        Self { slots }
    }

    /// The enabled account with this user name and password that may log in.
    pub(crate) fn may_log_in(&self, user: &str, password: &str) -> Option<usize> {
        self.slots.iter().position(|a| {
            a.enabled
                && !a.user.is_empty()
                && a.user == user
                && a.password.as_deref() == Some(password)
                && a.privilege & 1 == 1
        })
    }
}

/// One account slot.
#[derive(Clone, PartialEq, Eq, Default)]
pub(crate) struct Account {
    pub(crate) user: String,
    pub(crate) password: Option<String>,
    pub(crate) privilege: i64,
    pub(crate) enabled: bool,
}

impl std::fmt::Debug for Account {
    // The password never shows.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<set>"))
            .field("privilege", &self.privilege)
            .field("enabled", &self.enabled)
            .finish()
    }
}

impl Account {
    pub(crate) fn role(&self) -> &'static str {
        ROLE_MASKS
            .iter()
            .find(|(_, m)| *m == self.privilege)
            .map_or("None", |(r, _)| r)
    }

    pub(crate) fn privileges(&self) -> &'static [&'static str] {
        let role = self.role();
        ROLE_PRIVILEGES.iter().find(|(r, _)| *r == role).map_or(&[], |(_, p)| p)
    }
}

/// The slot number of an account path (either path), 1-based.
pub(crate) fn slot_of(path: &str) -> Option<usize> {
    let n = path
        .strip_prefix(ACCOUNTS)
        .or_else(|| path.strip_prefix(LEGACY_ACCOUNTS))?
        .strip_prefix('/')?;
    n.parse().ok()
}

/// `Users.N.Field` → (N, Field).
pub(crate) fn users_key(key: &str) -> Option<(usize, &str)> {
    let rest = key.strip_prefix("Users.")?;
    let (n, field) = rest.split_once('.')?;
    Some((n.parse().ok()?, field))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_follow_dells_privilege_masks() {
        let a = |privilege| Account {
            privilege,
            ..Account::default()
        };
        assert_eq!(a(511).role(), "Administrator");
        assert_eq!(a(499).role(), "Operator");
        assert_eq!(a(1).role(), "ReadOnly");
        assert_eq!(a(0).role(), "None");
        assert_eq!(a(3).role(), "None", "a custom mask");
        assert!(a(1).privileges().contains(&"ConfigureSelf"));
        assert!(!a(499).privileges().contains(&"ConfigureUsers"));
    }

    #[test]
    fn an_account_never_shows_its_password() {
        let a = Account {
            user: "x".into(),
            password: Some("secret-pw".into()),
            privilege: 1,
            enabled: true,
        };
        assert!(!format!("{a:?}").contains("secret-pw"));
    }
}
