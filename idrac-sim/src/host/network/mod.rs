//! The iDRAC's own network, as the Manager's `EthernetInterfaces/NIC.1` and `NetworkProtocol`
//! show it: rendered from the host's live iDRAC attributes (`NIC.1.*`, `IPv4.1.*`,
//! `WebServer.1.*`, `SSH.1.Enable`, `IPMILan.1.Enable`, `NTPConfigGroup.1.NTPEnable`), so a change
//! to an attribute shows there at once. Shapes are the R750's (6.00 and 7.10 captures);
//! values the attributes do not give (link speed, MTU, the ports of services with no port
//! attribute) are the capture's, and a tree that records these documents is served as it is.

pub(crate) mod state;

use super::caller::Caller;
use super::core::{Host, State};
use super::reply::Reply;
use crate::route::{Route, exact, unrecorded};
use crate::synth::{MANAGER_NICS, NETWORK_PROTOCOL};
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::resources::bios::AttributeValue;
use serde_json::{Value, json};

/// The iDRAC's dedicated NIC.
pub(crate) const MANAGER_NIC: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/EthernetInterfaces/NIC.1";

/// The Manager's NICs and `NetworkProtocol`, rendered where the tree records none.
pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::get(exact(MANAGER_NICS), |h, _| Reply::ok(h.manager_nics())).when(unrecorded),
        Route::get(exact(MANAGER_NIC), |h, _| Reply::ok(h.manager_nic())).when(unrecorded),
        Route::patch(exact(MANAGER_NIC), |h, r| {
            r.with_json(|b| h.patch_manager_nic(r.caller, b))
        })
        .when(unrecorded),
        Route::get(exact(NETWORK_PROTOCOL), |h, _| Reply::ok(h.network_protocol())).when(unrecorded),
        Route::patch(exact(NETWORK_PROTOCOL), |h, r| {
            r.with_json(|b| h.patch_network_protocol(r.caller, b))
        })
        .when(unrecorded),
    ]
}

impl Host {
    fn idrac_attribute(&self, name: &str) -> Option<AttributeValue> {
        self.lock()
            .dell_attributes
            .groups
            .get(&AttributeGroup::Idrac)?
            .get(name)
            .cloned()
    }

    fn text(&self, name: &str) -> String {
        self.idrac_attribute(name)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    fn enabled(&self, name: &str, default: bool) -> bool {
        self.idrac_attribute(name)
            .and_then(|v| v.as_str().map(|s| s == "Enabled"))
            .unwrap_or(default)
    }

    /// The Manager's network interfaces collection (one NIC).
    pub fn manager_nics(&self) -> Value {
        json!({
            "@odata.context": "/redfish/v1/$metadata#EthernetInterfaceCollection.EthernetInterfaceCollection",
            "@odata.id": MANAGER_NICS,
            "@odata.type": "#EthernetInterfaceCollection.EthernetInterfaceCollection",
            "Description": "Collection of EthernetInterfaces for this Manager",
            "Members": [{"@odata.id": MANAGER_NIC}],
            "Members@odata.count": 1,
            "Name": "Ethernet Network Interface Collection",
        })
    }

    /// `EthernetInterfaces/NIC.1` of the Manager.
    pub fn manager_nic(&self) -> Value {
        let host_name = self.text("NIC.1.DNSRacName");
        let domain = self.text("NIC.1.DNSDomainName");
        let fqdn = if domain.is_empty() || host_name.is_empty() {
            String::new()
        } else {
            format!("{host_name}.{domain}")
        };
        let mac = self.text("NIC.1.MACAddress");
        let origin = if self.enabled("IPv4.1.DHCPEnable", false) {
            "DHCP"
        } else {
            "Static"
        };
        let ipv4 = json!({
            "Address": self.text("IPv4.1.Address"),
            "AddressOrigin": origin,
            "Gateway": self.text("IPv4.1.Gateway"),
            "SubnetMask": self.text("IPv4.1.Netmask"),
        });
        let dns = self.text("IPv4.1.DNS1");
        let version = if self.is_7x() { "v1_10_0" } else { "v1_6_4" };
        json!({
            "@odata.context": "/redfish/v1/$metadata#EthernetInterface.EthernetInterface",
            "@odata.id": MANAGER_NIC,
            "@odata.type": format!("#EthernetInterface.{version}.EthernetInterface"),
            "AutoNeg": true,
            "Description": "Management Network Interface",
            "EthernetInterfaceType": "Physical",
            "FQDN": fqdn,
            "FullDuplex": true,
            "HostName": host_name,
            "IPv4Addresses": [ipv4],
            "IPv4Addresses@odata.count": 1,
            "IPv4StaticAddresses": [ipv4],
            "IPv4StaticAddresses@odata.count": 1,
            "Id": "NIC.1",
            "InterfaceEnabled": self.enabled("IPv4.1.Enable", true),
            "LinkStatus": "LinkUp",
            "DHCPv4": {"DHCPEnabled": self.enabled("IPv4.1.DHCPEnable", false)},
            "Links": {"Chassis": {"@odata.id": redfish_client::oem::dell::CHASSIS}},
            "MACAddress": mac.to_ascii_lowercase(),
            "MTUSize": 1500,
            "Name": "Manager Ethernet Interface",
            "NameServers": [dns],
            "NameServers@odata.count": 1,
            "PermanentMACAddress": mac.to_ascii_lowercase(),
            "SpeedMbps": 1000,
            "Status": {"Health": "OK", "State": "Enabled"},
            "VLAN": {"VLANEnable": false, "VLANId": 1},
        })
    }

    /// The Manager's `NetworkProtocol`.
    pub fn network_protocol(&self) -> Value {
        let https_port = self
            .idrac_attribute("WebServer.1.HttpsPort")
            .and_then(|v| v.to_json().as_u64())
            .unwrap_or(443);
        let web = self.enabled("WebServer.1.Enable", true);
        let version = if self.is_7x() { "v1_9_1" } else { "v1_7_0" };
        let ntp = self.lock().network.ntp_servers.clone();
        json!({
            "@odata.context": "/redfish/v1/$metadata#ManagerNetworkProtocol.ManagerNetworkProtocol",
            "@odata.id": NETWORK_PROTOCOL,
            "@odata.type": format!("#ManagerNetworkProtocol.{version}.ManagerNetworkProtocol"),
            "DHCP": {"ProtocolEnabled": self.enabled("IPv4.1.DHCPEnable", false)},
            "Description": "Manager Network Service Status",
            "FQDN": "",
            "HTTP": {"Port": 80, "ProtocolEnabled": web},
            "HTTPS": {"Certificates": {"@odata.id": crate::synth::HTTPS_CERTIFICATES},
                      "Port": https_port, "ProtocolEnabled": web},
            "HostName": self.text("NIC.1.DNSRacName"),
            "IPMI": {"Port": 623, "ProtocolEnabled": self.enabled("IPMILan.1.Enable", false)},
            "Id": "NetworkProtocol",
            "NTP": {"NTPServers": ntp, "NTPServers@odata.count": ntp.len(),
                    "ProtocolEnabled": self.enabled("NTPConfigGroup.1.NTPEnable", false)},
            "Name": "Manager Network Protocol",
            "SSH": {"Port": 22, "ProtocolEnabled": self.enabled("SSH.1.Enable", true)},
            "Status": {"Health": "OK", "HealthRollup": "OK", "State": "Enabled"},
        })
    }
}

/// NTP servers an iDRAC keeps (`NTPConfigGroup.1.NTP1` to `NTP3`).
const NTP_SERVERS: usize = 3;

impl Host {
    /// `PATCH NetworkProtocol`: the NTP servers (with DSP0266's array rules: `null` removes an
    /// element, `{}` keeps it, a shorter array truncates), and the services whose iDRAC
    /// attribute the host has: `NTP`, `SSH`, `IPMI` `ProtocolEnabled`, `HTTPS.Port`, `HostName`.
    pub fn patch_network_protocol(&self, caller: &Caller, body: &Value) -> Reply {
        use crate::messages;
        let Some(fields) = body.as_object().filter(|f| !f.is_empty()) else {
            return Reply::error(400, vec![messages::property_missing("NTP")]);
        };
        let mut s = self.change();
        let mut ntp = s.network.ntp_servers.clone();
        let mut attrs: Vec<(&str, AttributeValue)> = Vec::new();
        let mut problems = Vec::new();
        let bad = |name: &str| messages::property_value_format_error(name, &format!("#/{name}"));
        let flag = |v: &Value| {
            v.as_bool()
                .map(|on| AttributeValue::from(if on { "Enabled" } else { "Disabled" }))
        };
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("NTP", Value::Object(ntp_fields)) => {
                    for (k, v) in ntp_fields {
                        match (k.as_str(), v) {
                            ("NTPServers", Value::Array(items)) if items.len() <= NTP_SERVERS => {
                                let mut next = Vec::new();
                                for (i, item) in items.iter().enumerate() {
                                    match item {
                                        Value::Null => {}
                                        Value::Object(o) if o.is_empty() => next.extend(ntp.get(i).cloned()),
                                        Value::String(server) => next.push(server.clone()),
                                        _ => problems.push(bad("NTP/NTPServers")),
                                    }
                                }
                                ntp = next;
                            }
                            ("ProtocolEnabled", v) => match flag(v) {
                                Some(a) => attrs.push(("NTPConfigGroup.1.NTPEnable", a)),
                                None => problems.push(bad("NTP/ProtocolEnabled")),
                            },
                            _ => problems.push(bad(&format!("NTP/{k}"))),
                        }
                    }
                }
                ("SSH" | "IPMI", Value::Object(o)) if o.keys().all(|k| k == "ProtocolEnabled") => {
                    let attr = if key == "SSH" {
                        "SSH.1.Enable"
                    } else {
                        "IPMILan.1.Enable"
                    };
                    match o.get("ProtocolEnabled").and_then(flag) {
                        Some(a) => attrs.push((attr, a)),
                        None => problems.push(bad(&format!("{key}/ProtocolEnabled"))),
                    }
                }
                ("HTTPS", Value::Object(o)) if o.keys().all(|k| k == "Port") => {
                    match o
                        .get("Port")
                        .and_then(Value::as_i64)
                        .filter(|p| (1..=65535).contains(p))
                    {
                        Some(p) => attrs.push(("WebServer.1.HttpsPort", AttributeValue::Integer(p))),
                        None => problems.push(bad("HTTPS/Port")),
                    }
                }
                ("HostName", Value::String(name)) if !name.is_empty() && name.len() <= 63 => {
                    attrs.push(("NIC.1.DNSRacName", AttributeValue::from(name.as_str())));
                }
                _ => problems.push(messages::base(
                    "PropertyNotWritable",
                    &format!("The property {key} is a read only property and cannot be assigned a value."),
                    &[key],
                    "Remove the property from the request body and resubmit the request if the operation failed.",
                    Some(&format!("#/{key}")),
                )),
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        if ntp != s.network.ntp_servers {
            Self::audit_change(&mut s, caller, "iDRAC.Embedded.1#NTPConfigGroup.1#NTP1");
            s.network.ntp_servers = ntp;
        }
        Self::set_idrac_attributes(&mut s, caller, attrs);
        Reply::ok(messages::success_body(vec![messages::success()]))
    }
}

impl Host {
    /// `PATCH EthernetInterfaces/NIC.1` of the Manager: `HostName`, `FQDN`, `NameServers` (the
    /// first), `IPv4Addresses` or `IPv4StaticAddresses` (the first: address, mask, gateway, which
    /// turns DHCP off) and `DHCPv4.DHCPEnabled`, written to the iDRAC attributes they show.
    /// The emulator keeps listening where it was started: only the documents change.
    pub fn patch_manager_nic(&self, caller: &Caller, body: &Value) -> Reply {
        use crate::messages;
        let Some(fields) = body.as_object().filter(|f| !f.is_empty()) else {
            return Reply::error(400, vec![messages::property_missing("HostName")]);
        };
        let mut attrs: Vec<(&str, AttributeValue)> = Vec::new();
        let mut problems = Vec::new();
        let bad = |name: &str| messages::property_value_format_error(name, &format!("#/{name}"));
        let text = |v: &Value| {
            v.as_str()
                .filter(|t| !t.is_empty() && t.len() <= 63)
                .map(AttributeValue::from)
        };
        for (key, value) in fields {
            match key.as_str() {
                "HostName" => match text(value) {
                    Some(v) => attrs.push(("NIC.1.DNSRacName", v)),
                    None => problems.push(bad(key)),
                },
                "FQDN" => match value.as_str().and_then(|f| f.split_once('.')) {
                    Some((host, domain)) if !host.is_empty() && !domain.is_empty() => {
                        attrs.push(("NIC.1.DNSRacName", host.into()));
                        attrs.push(("NIC.1.DNSDomainName", domain.into()));
                    }
                    _ => problems.push(bad(key)),
                },
                "NameServers" => match value.as_array().and_then(|a| a.first()).and_then(|v| v.as_str()) {
                    Some(dns) if is_ipv4(dns) => attrs.push(("IPv4.1.DNS1", dns.into())),
                    _ => problems.push(bad(key)),
                },
                "IPv4Addresses" | "IPv4StaticAddresses" => {
                    let first = value.as_array().and_then(|a| a.first());
                    let mut ok = first.is_some_and(Value::is_object);
                    for (field, attr) in [
                        ("Address", "IPv4.1.Address"),
                        ("SubnetMask", "IPv4.1.Netmask"),
                        ("Gateway", "IPv4.1.Gateway"),
                    ] {
                        match first.and_then(|f| f.get(field)) {
                            None => {}
                            Some(Value::String(v)) if is_ipv4(v) => attrs.push((attr, v.as_str().into())),
                            Some(_) => ok = false,
                        }
                    }
                    if ok {
                        attrs.push(("IPv4.1.DHCPEnable", "Disabled".into()));
                    } else {
                        problems.push(bad(key));
                    }
                }
                "DHCPv4" => match value.get("DHCPEnabled").and_then(Value::as_bool) {
                    Some(on) => attrs.push(("IPv4.1.DHCPEnable", if on { "Enabled" } else { "Disabled" }.into())),
                    None => problems.push(bad(key)),
                },
                _ => problems.push(messages::base(
                    "PropertyNotWritable",
                    &format!("The property {key} is a read only property and cannot be assigned a value."),
                    &[key],
                    "Remove the property from the request body and resubmit the request if the operation failed.",
                    Some(&format!("#/{key}")),
                )),
            }
        }
        if !problems.is_empty() {
            return Reply::error(400, problems);
        }
        let mut s = self.change();
        if s.dell_attributes.lockdown() {
            return Reply::error(400, vec![messages::sys406()]);
        }
        Self::set_idrac_attributes(&mut s, caller, attrs);
        Reply::ok(messages::success_body(vec![messages::success()]))
    }
}

impl Host {
    /// Sets iDRAC attributes a network write maps to, each audited as the caller's change to
    /// the attribute (`IPv4.1.Address` as the registry's `Id` writes it:
    /// `iDRAC.Embedded.1#IPv4.1#Address`).
    fn set_idrac_attributes(s: &mut State, caller: &Caller, attrs: Vec<(&str, AttributeValue)>) {
        for (name, value) in attrs {
            let target = match name.split('.').collect::<Vec<_>>().as_slice() {
                [group, index, attr] => format!("iDRAC.Embedded.1#{group}.{index}#{attr}"),
                _ => name.to_owned(),
            };
            Self::audit_change(s, caller, &target);
            s.dell_attributes
                .groups
                .entry(AttributeGroup::Idrac)
                .or_default()
                .insert(name.to_owned(), value);
        }
    }
}

fn is_ipv4(text: &str) -> bool {
    text.parse::<std::net::Ipv4Addr>().is_ok()
}
