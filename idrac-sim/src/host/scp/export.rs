//! Exporting the host's Server Configuration Profile: the action's parameters, then the profile
//! written from the current values of the components the targets cover, secrets masked and
//! identity skipped on import.

use super::parameters::{choice, covers, include_list, local_only, targets};
use super::state::Task;
use super::values::text_of;
use crate::clock;
use crate::host::caller::Caller;
use crate::host::core::{Host, State};
use crate::host::jobs::state::ScpKind;
use crate::host::reply::Reply;
use crate::messages;
use redfish_client::oem::dell::AttributeGroup;
use redfish_client::oem::dell::scp::{
    BIOS_FQDD, Component, ComponentKind, Format, ScpAttribute, ScpDocument, scp_name,
};
use redfish_client::resources::attribute_registry::AttributeType;
use serde_json::Value;
use std::time::SystemTime;

impl Host {
    /// `…ExportSystemConfiguration` with a local share: `ExportFormat` (XML unless JSON),
    /// `ShareParameters.Target`, `IncludeInExport` (`IncludeReadOnly` adds the read-only
    /// attributes), `ExportUse` (accepted; what Clone and Replace leave out is not emulated).
    pub fn scp_export(&self, caller: &Caller, body: &Value) -> Reply {
        let action = "ExportSystemConfiguration";
        let checked = (|| {
            local_only(action, body)?;
            let format = match choice(action, body, "ExportFormat", &["XML", "JSON"])? {
                Some("JSON") => Format::Json,
                _ => Format::Xml,
            };
            choice(action, body, "ExportUse", &["Default", "Clone", "Replace"])?;
            let include = include_list(body);
            let allowed = [
                "Default",
                "IncludeReadOnly",
                "IncludePasswordHashValues",
                "IncludeCustomTelemetry",
            ];
            if let Some(bad) = include
                .iter()
                .find(|i| !allowed.iter().any(|a| a.eq_ignore_ascii_case(i)))
            {
                return Err(messages::action_parameter(
                    action,
                    "IncludeInExport",
                    Some(bad),
                    &allowed,
                ));
            }
            Ok((format, targets(body)?, include))
        })();
        let (format, targets, include) = match checked {
            Ok(c) => c,
            Err(problem) => return Reply::error(400, vec![problem]),
        };
        let mut s = self.change();
        let mut task = self.new_task(ScpKind::Export, caller);
        task.format = format;
        task.targets = targets;
        task.include_read_only = include.iter().any(|i| i.eq_ignore_ascii_case("IncludeReadOnly"));
        self.queue_scp(
            &mut s,
            ScpKind::Export,
            task,
            ("SYS057", "Exporting Server Configuration Profile."),
        )
    }

    /// The export's profile, from the current values of the components its targets cover.
    pub(crate) fn export_text(&self, s: &mut State, task: &Task) -> String {
        let selective = !task.targets.iter().any(|t| t.eq_ignore_ascii_case("ALL"));
        let mut kind = String::from("Normal");
        if task.include_read_only {
            kind.push_str(",RO");
        }
        kind.push(',');
        kind.push_str(task.format.as_str());
        if selective {
            kind.push_str(",Selective");
        }
        let mut doc = ScpDocument {
            model: Some(self.fixture.model.clone()),
            service_tag: Some(self.service_tag.clone()),
            timestamp: Some(clock::asctime(SystemTime::now())),
            comments: vec![
                format!("Export type is {kind}"),
                "Exported configuration may contain commented attributes: an import skips them.".to_owned(),
            ],
            components: Vec::new(),
        };
        for (label, kind) in [("NIC", ComponentKind::Nic), ("RAID", ComponentKind::Storage)] {
            if covers(&task.targets, kind) {
                doc.comments.push(format!(
                    "Exported configuration does not contain {label} data as the presence of the appropriate cards could not be detected!"
                ));
            }
        }
        for group in [
            AttributeGroup::LifecycleController,
            AttributeGroup::System,
            AttributeGroup::Idrac,
        ] {
            if covers(&task.targets, ComponentKind::Manager(group)) {
                doc.components
                    .push(self.manager_component(s, group, task.include_read_only));
            }
        }
        if covers(&task.targets, ComponentKind::Bios) {
            doc.components.push(self.bios_component(s, task.include_read_only));
        }
        doc.to_text(task.format)
    }

    /// The BIOS component: every attribute the current values leave visible; those they make
    /// read-only are written but skipped on import, passwords masked, and attributes the
    /// registry always makes read-only left out unless `read_only` (IncludeReadOnly).
    fn bios_component(&self, s: &mut State, include_read_only: bool) -> Component {
        self.view(s);
        let registry = self.registry();
        let ruled: std::collections::BTreeSet<&str> = registry
            .registry_entries
            .dependencies
            .iter()
            .map(|d| d.dependency_for.as_str())
            .collect();
        let view = s.bios.view.as_ref();
        let mut attributes = Vec::new();
        for (name, value) in &s.bios.values {
            let Some(attr) = registry.attribute(name) else { continue };
            if view.is_some_and(|v| v.hidden.contains(name)) {
                continue;
            }
            let static_read_only = attr.is_read_only() && !ruled.contains(name.as_str());
            if static_read_only && !include_read_only {
                continue;
            }
            let read_only_now = static_read_only || view.is_some_and(|v| v.read_only.contains(name));
            let password = attr.kind == AttributeType::Password;
            attributes.push(ScpAttribute {
                name: name.clone(),
                value: if password { "******".to_owned() } else { text_of(value) },
                set_on_import: !read_only_now && !password,
                comment: Some(
                    if static_read_only {
                        "Read Only"
                    } else {
                        "Read and Write"
                    }
                    .to_owned(),
                ),
            });
        }
        Component {
            fqdd: BIOS_FQDD.to_owned(),
            attributes,
            components: Vec::new(),
        }
    }

    /// A `DellAttributes` group as its component (`Group.N#Attr` names): passwords masked and
    /// skipped on import, read-only attributes only with `read_only` (IncludeReadOnly), and the
    /// addresses and names that make the host itself skipped on import ("preserving server
    /// identity", as real exports do with `IPv4Static.1#Address` and `NIC.1#DNSRacName`).
    fn manager_component(&self, s: &State, group: AttributeGroup, include_read_only: bool) -> Component {
        let mut values = s.dell_attributes.groups.get(&group).cloned().unwrap_or_default();
        if group == AttributeGroup::Idrac {
            Self::users_attributes(s, &mut values);
        }
        let registry = self.fixture.manager_registry.as_ref();
        let mut attributes = Vec::new();
        for (name, value) in &values {
            let Some(scp) = scp_name(name) else { continue };
            let entry = registry.and_then(|r| r.attribute(name));
            let read_only = entry.is_some_and(|e| e.is_read_only());
            if read_only && !include_read_only {
                continue;
            }
            let password = entry.is_some_and(|e| e.kind == AttributeType::Password) || name.ends_with(".Password");
            let field = name.rsplit('.').next().unwrap_or_default();
            let identity = matches!(field, "Address" | "DNSRacName" | "HostName" | "MACAddress");
            attributes.push(ScpAttribute {
                name: scp,
                value: if password { "******".to_owned() } else { text_of(value) },
                set_on_import: !read_only && !password && !identity,
                comment: Some(if read_only { "Read Only" } else { "Read and Write" }.to_owned()),
            });
        }
        Component {
            fqdd: group.resource_id().to_owned(),
            attributes,
            components: Vec::new(),
        }
    }
}
