//! Which SCP attributes hold a host's identity or a secret, by their name and value, so that
//! neither ever reaches a derived profile and a shared export carries no secret: passwords and
//! their hashes and salts, keys, SNMP communities, tokens (secrets; rules about passwords, such
//! as a minimum length, are settings); addresses, host, domain and user names, MACs, IQNs and
//! WWNs, certificates, asset and service tags, contacts and locations (identity). The names are those real exports use (an R6515's, an R640's and an
//! R7525's: `Users.2#Password`, `IPMILan.1#EncryptionKey`, `IPMILan.1#CommunityName`,
//! `LDAP.1#BindPassword`, `IPv4Static.1#Address`, `NIC.1#DNSRacName`, `VirtMacAddr`,
//! `IscsiInitiatorName`, ...); a value that looks like an address, a MAC, an IQN or a masked
//! secret is caught whatever its name.

use std::net::{Ipv4Addr, Ipv6Addr};

/// What an attribute holds that must not travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sensitive {
    /// A password, hash, salt, key, community string or token.
    Secret,
    /// What makes the host itself: an address, a name, an account, a certificate.
    Identity,
}

impl Sensitive {
    /// As reports say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Secret => "secret",
            Self::Identity => "identity",
        }
    }
}

/// Words in an attribute's name that mark a secret.
const SECRET_WORDS: [&str; 12] = [
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "hash",
    "salt",
    "community",
    "token",
    "credential",
    "registrationdetails",
    "privatekey",
];

/// Words that make a password-named attribute a rule about passwords rather than one.
const POLICY_WORDS: [&str; 9] = [
    "minimumlength",
    "minlength",
    "maxlength",
    "score",
    "strong",
    "status",
    "policy",
    "complexity",
    "expir",
];

/// Words whose presence anywhere in an attribute's name marks the host's identity.
const IDENTITY_WORDS: [&str; 27] = [
    "address",
    "ipaddr",
    "gateway",
    "netmask",
    "prefixlength",
    "hostname",
    "dnsracname",
    "domainname",
    "username",
    "macaddr",
    "iqn",
    "initiatorname",
    "chapid",
    "tgtname",
    "wwpn",
    "wwnn",
    "certificate",
    "assettag",
    "servicetag",
    "serialnumber",
    "phone",
    "contact",
    "owner",
    "issuer",
    "sharename",
    "datacentername",
    "rack",
];

/// Endings of an attribute's name that mark the host's identity (`RFS.1#User`,
/// `SMTPServer`, `DiscoveryURL`, `SenderEmail`).
const IDENTITY_ENDINGS: [&str; 6] = ["user", "server", "url", "uri", "email", "wwn"];

/// Whether the attribute `name` (SCP or Dell spelling) with `value` holds a secret or the
/// host's identity.
pub fn classify(name: &str, value: &str) -> Option<Sensitive> {
    // The attribute itself, without its group (`Users.2#Password` → `password`).
    let field = name.rsplit(['#', '.']).next().unwrap_or(name).to_ascii_lowercase();
    let masked = !value.is_empty() && value.chars().all(|c| c == '*');
    let is_key = field.ends_with("key") && !matches!(field.as_str(), "quitkey" | "hotkey");
    // Rules about passwords, not passwords: `Security.1#PasswordMinimumLength`,
    // `Security.1#MinimumPasswordScore`, `StrongPassword`, the BIOS's `PasswordStatus`.
    let policy = POLICY_WORDS.iter().any(|w| field.contains(w));
    if masked || is_key || (!policy && SECRET_WORDS.iter().any(|w| field.contains(w))) {
        return Some(Sensitive::Secret);
    }
    // DNS1, NTP2, Server1: numbered servers.
    let numbered = |prefix: &str| {
        field
            .strip_prefix(prefix)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    };
    // Settings that merely sound like it: a serial port's I/O address, the switch that
    // turns certificate checks off, an account's "use e-mail" switch.
    let setting = field.ends_with("portaddress")
        || field.ends_with("addressmanagement")
        || field.starts_with("ignorecert")
        || field == "useemail";
    let by_name = IDENTITY_WORDS.iter().any(|w| field.contains(w))
        || IDENTITY_ENDINGS.iter().any(|w| field.ends_with(w))
        || ["dns", "ntp", "server"].iter().any(|p| numbered(p))
        || field == "domain"
        || field == "name" && is_named_entry(name);
    if (by_name && !setting) || identifying_value(value) {
        return Some(Sensitive::Identity);
    }
    None
}

/// `ADGroup.N#Name`, `UserDomain.N#Name`, `SNMPAlert.N#...`: entries whose `Name` names
/// someone's group or domain.
fn is_named_entry(name: &str) -> bool {
    let group = name.split(['.', '#']).next().unwrap_or_default().to_ascii_lowercase();
    [
        "adgroup",
        "userdomain",
        "ldaprolegroup",
        "delegatedauth",
        "openidconnectserver",
    ]
    .contains(&group.as_str())
}

/// A value that is an IP address (not the unspecified ones), a MAC, an IQN or an e-mail address.
fn identifying_value(value: &str) -> bool {
    let v = value.trim();
    if let Ok(ip) = v.parse::<Ipv4Addr>() {
        return !ip.is_unspecified();
    }
    if v.contains(':')
        && let Ok(ip) = v.parse::<Ipv6Addr>()
    {
        return !ip.is_unspecified();
    }
    let mac = v.len() == 17
        && v.split([':', '-'])
            .filter(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
            .count()
            == 6;
    let iqn = v.to_ascii_lowercase().starts_with("iqn.");
    let email = v.contains('@') && v.contains('.') && !v.contains(' ');
    mac || iqn || email
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_of_real_exports_are_found_by_name_or_by_their_mask() {
        for (name, value) in [
            ("Users.2#Password", ""),
            ("Users.2#SHA256Password", "ABCDEF"),
            ("Users.2#SHA256PasswordSalt", "1234"),
            ("Users.2#SHA1v3Key", "00"),
            ("IPMILan.1#EncryptionKey", "0000000000000000000000000000000000000000"),
            ("IPMILan.1#CommunityName", "public"),
            ("LDAP.1#BindPassword", "**********"),
            ("OldSetupPassword", "************"),
            ("RAIDrebuildRate", "*****"),
            ("FirstTgtChapPwd", ""),
            ("OpenIDConnectServer.9#RegistrationDetails", "x"),
        ] {
            assert_eq!(classify(name, value), Some(Sensitive::Secret), "{name}");
        }
    }

    #[test]
    fn identity_of_real_exports_is_found_by_name_or_by_value() {
        for (name, value) in [
            ("IPv4Static.1#Address", "192.168.0.120"),
            ("IPv4Static.1#Gateway", "192.168.0.1"),
            ("IPv4Static.1#DNS1", "147.75.207.207"),
            ("NIC.1#DNSRacName", "iDRAC-H9Q7N83"),
            ("NICStatic.1#DNSDomainName", ""),
            ("ServerOS.1#HostName", "node1"),
            ("Users.2#UserName", "root"),
            ("RFS.1#User", ""),
            ("SysLog.1#Server1", ""),
            ("NTPConfigGroup.1#NTP1", ""),
            ("VirtMacAddr", "F4:02:70:B8:A6:7A"),
            ("IscsiInitiatorName", "iqn.1995-05.com.broadcom.iscsiboot"),
            ("ADGroup.1#Name", ""),
            ("ServerTopology.1#RackSlot", "1"),
            ("AssetTag", ""),
            ("OpenIDConnectServer.9#HttpsCertificate", ""),
            ("SomethingElse", "10.1.2.3"),
            ("Other", "ops@example.invalid"),
        ] {
            assert_eq!(classify(name, value), Some(Sensitive::Identity), "{name}");
        }
    }

    #[test]
    fn settings_stay_settings() {
        for (name, value) in [
            ("LogicalProc", "Enabled"),
            ("NumaNodesPerSocket", "1"),
            ("ServerPwr.1#PowerCapSetting", "Disabled"),
            ("ThermalSettings.1#ThermalProfile", "Default Thermal Profile Settings"),
            ("IPMILan.1#Enable", "Enabled"),
            ("SerialRedirection.1#QuitKey", "^\\"),
            ("LDAP.1#CertValidationEnable", "Enabled"),
            ("DramRefreshDelay", "Minimum"),
            ("IommuSupport", "Enabled"),
            ("Update.1#FwUpdateIPAddr", "0.0.0.0"),
            ("CcxAsNumaDomain", "Disabled"),
            ("SecurityFreezeLock", "Enabled"),
            ("SerialComm", "OnConRedirCom1"),
            ("SerialPortAddress", "Serial1Com1Serial2Com2"),
            ("ProcMachineCheck", "Enabled"),
            ("Users.2#UseEmail", "Disabled"),
            ("RFS.1#IgnoreCertWarning", "Yes"),
            ("Security.1#PasswordMinimumLength", "8"),
            ("Security.1#MinimumPasswordScore", "Weak Protection"),
            ("StrongPassword", "Disabled"),
            ("PasswordStatus", "Unlocked"),
            ("LCAttributes.1#VirtualAddressManagement", "Console"),
        ] {
            let got = classify(name, value);
            // FwUpdateIPAddr is an address field whatever it holds: identity by its name.
            if name.ends_with("FwUpdateIPAddr") {
                assert_eq!(got, Some(Sensitive::Identity));
            } else {
                assert_eq!(got, None, "{name}");
            }
        }
    }
}
