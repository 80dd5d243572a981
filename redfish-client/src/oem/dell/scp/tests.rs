//! The SCP format: JSON and XML read and written back, commented attributes, the `#`/`.`
//! mapping, and the errors bad documents get. The documents are written here in the shapes of
//! real exports (an R7525's NIC export and an R640's iDRAC export in sushy-oem-idrac's test
//! data, a C6320's XML export and an R6515's JSON export in metal-toolbox/ironlib's fixtures),
//! with made-up values.

use super::*;
use crate::oem::dell::AttributeGroup;

const JSON: &str = r#"{
  "SystemConfiguration": {
    "Comments": [
      {"Comment": "Export type is Normal,JSON,Selective"},
      {"Comment": "Exported configuration may contain commented attributes."}
    ],
    "Model": "PowerEdge R7625",
    "ServiceTag": "SVC0001",
    "TimeStamp": "Wed Feb  3 06:53:31 2021",
    "Components": [
      {"FQDD": "BIOS.Setup.1-1", "Attributes": [
        {"Name": "LogicalProc", "Value": "Enabled", "Set On Import": "True", "Comment": "Read and Write"},
        {"Name": "ProcCStates", "Value": "Disabled", "Set On Import": "False", "Comment": "Read and Write"},
        {"Name": "CpuMinSevAsid", "Value": "1", "Set On Import": "True", "Comment": "Read and Write"}
      ]},
      {"FQDD": "iDRAC.Embedded.1", "Attributes": [
        {"Name": "IPMILan.1#Enable", "Value": "Disabled", "Set On Import": "True", "Comment": "Read and Write"},
        {"Name": "Info.1#Version", "Value": "7.00.60.00", "Set On Import": "False", "Comment": "Always Read Only"}
      ]},
      {"FQDD": "RAID.Slot.6-1", "Attributes": [
        {"Name": "RAIDrebuildRate", "Value": "30", "Set On Import": "True", "Comment": "Read and Write"}
      ], "Components": [
        {"FQDD": "Disk.Virtual.0:RAID.Slot.6-1", "Attributes": [
          {"Name": "RAIDTypes", "Value": "RAID 1", "Set On Import": "True", "Comment": "Read and Write"}
        ]}
      ]}
    ]
  }
}"#;

const XML: &str = r#"<SystemConfiguration Model="PowerEdge C6320" ServiceTag="SVC0002" TimeStamp="Mon Jun 21 19:59:51 2021">
<!--Export type is Normal-->
<!--Exported configuration may contain commented attributes. Attributes may be commented due to dependency, destructive nature, preserving server identity or for security reasons.-->
<Component FQDD="LifecycleController.Embedded.1">
 <Attribute Name="LCAttributes.1#CollectSystemInventoryOnRestart">Enabled</Attribute>
 <!--  <Attribute Name="LCAttributes.1#LifecycleControllerState">Enabled</Attribute>
-->
</Component>

<Component FQDD="System.Embedded.1">
 <Attribute Name="ServerPwr.1#PowerCapSetting">Disabled</Attribute>
 <Attribute Name="ThermalSettings.1#ThermalProfile">Default Thermal Profile Settings</Attribute>
</Component>
<Component FQDD="EventFilters.WorkNotes.1"/>
<Component FQDD="RAID.Slot.1-1">
    <Attribute Name="RAIDrebuildRate">30</Attribute>
    <Component FQDD="Enclosure.Internal.0-0:RAID.Slot.1-1">
        <Component FQDD="Disk.Bay.0:Enclosure.Internal.0-0:RAID.Slot.1-1">
            <Attribute Name="RAIDHotSpareStatus">No</Attribute>
        </Component>
    </Component>
</Component>
<Component FQDD="BIOS.Setup.1-1">
    <Attribute Name="SysProfile">PerfPerWattOptimizedDapc</Attribute>
    <!-- <Attribute Name="ProcCStates">Enabled</Attribute> -->
    <Attribute Name="SetBootOrderFqdd1"></Attribute>
    <Attribute Name="SerialRedirectionQuit">^\ &amp; &lt;esc&gt; &#65;</Attribute>
</Component>

</SystemConfiguration>"#;

fn attribute<'a>(doc: &'a ScpDocument, fqdd: &str, name: &str) -> &'a ScpAttribute {
    doc.component(fqdd)
        .and_then(|c| c.attributes.iter().find(|a| a.name == name))
        .unwrap_or_else(|| panic!("{fqdd} {name}"))
}

#[test]
fn a_json_export_reads_with_its_header_components_and_skipped_attributes() {
    let (doc, format) = ScpDocument::parse(JSON).unwrap();
    assert_eq!(format, Format::Json);
    assert_eq!(doc.model.as_deref(), Some("PowerEdge R7625"));
    assert_eq!(doc.timestamp.as_deref(), Some("Wed Feb  3 06:53:31 2021"));
    assert_eq!(doc.comments.len(), 2);
    assert_eq!(doc.components.len(), 3);
    let c = attribute(&doc, "BIOS.Setup.1-1", "ProcCStates");
    assert!(!c.set_on_import);
    assert_eq!(c.comment.as_deref(), Some("Read and Write"));
    assert!(attribute(&doc, "iDRAC.Embedded.1", "Info.1#Version").read_only());
    assert_eq!(
        attribute(&doc, "Disk.Virtual.0:RAID.Slot.6-1", "RAIDTypes").value,
        "RAID 1",
        "nested components are found"
    );
    assert_eq!(doc.all_attributes().len(), 7);
}

#[test]
fn json_written_back_reads_as_the_same_document() {
    let (doc, _) = ScpDocument::parse(JSON).unwrap();
    let text = doc.to_text(Format::Json);
    let (again, _) = ScpDocument::parse(&text).unwrap();
    assert_eq!(again, doc);
    // Every value is a string, every attribute says whether it is set on import: as exports.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let first = &v["SystemConfiguration"]["Components"][0]["Attributes"][2];
    assert_eq!(first["Value"], "1");
    assert_eq!(first["Set On Import"], "True");
}

#[test]
fn an_xml_export_reads_with_commented_attributes_nested_components_and_entities() {
    let (doc, format) = ScpDocument::parse(XML).unwrap();
    assert_eq!(format, Format::Xml);
    assert_eq!(doc.service_tag.as_deref(), Some("SVC0002"));
    assert_eq!(doc.comments[0], "Export type is Normal");
    let lc = attribute(
        &doc,
        "LifecycleController.Embedded.1",
        "LCAttributes.1#LifecycleControllerState",
    );
    assert!(!lc.set_on_import, "a commented attribute is one the import skips");
    assert_eq!(lc.value, "Enabled");
    let cstates = attribute(&doc, "BIOS.Setup.1-1", "ProcCStates");
    assert!(!cstates.set_on_import);
    assert!(attribute(&doc, "BIOS.Setup.1-1", "SysProfile").set_on_import);
    assert_eq!(attribute(&doc, "BIOS.Setup.1-1", "SetBootOrderFqdd1").value, "");
    assert_eq!(
        attribute(&doc, "BIOS.Setup.1-1", "SerialRedirectionQuit").value,
        "^\\ & <esc> A"
    );
    assert!(
        doc.component("EventFilters.WorkNotes.1").is_some(),
        "empty components are kept"
    );
    assert_eq!(
        attribute(
            &doc,
            "Disk.Bay.0:Enclosure.Internal.0-0:RAID.Slot.1-1",
            "RAIDHotSpareStatus"
        )
        .value,
        "No"
    );
}

#[test]
fn xml_written_back_reads_as_the_same_document() {
    let (doc, _) = ScpDocument::parse(XML).unwrap();
    let text = doc.to_text(Format::Xml);
    assert!(
        text.starts_with("<SystemConfiguration Model=\"PowerEdge C6320\""),
        "{text}"
    );
    assert!(
        text.contains("<!-- <Attribute Name=\"ProcCStates\">Enabled</Attribute> -->"),
        "{text}"
    );
    assert!(text.contains("&amp; &lt;esc&gt;"), "{text}");
    let (again, _) = ScpDocument::parse(&text).unwrap();
    assert_eq!(again, doc);
}

#[test]
fn a_document_survives_json_to_xml_and_back_but_for_the_json_comments() {
    let (doc, _) = ScpDocument::parse(JSON).unwrap();
    let (via_xml, _) = ScpDocument::parse(&doc.to_text(Format::Xml)).unwrap();
    let mut expected = doc.clone();
    expected.for_each_attribute_mut(&mut |_, a| a.comment = None);
    assert_eq!(via_xml, expected);
    let (back, _) = ScpDocument::parse(&via_xml.to_text(Format::Json)).unwrap();
    assert_eq!(back, expected);
}

#[test]
fn a_value_with_two_dashes_survives_being_commented_out() {
    let mut doc = ScpDocument::default();
    doc.components.push(Component {
        fqdd: "iDRAC.Embedded.1".into(),
        attributes: vec![ScpAttribute {
            set_on_import: false,
            ..ScpAttribute::new("GUI.1#SecurityPolicyMessage", "do -- not")
        }],
        components: Vec::new(),
    });
    let (back, _) = ScpDocument::parse(&doc.to_text(Format::Xml)).unwrap();
    assert_eq!(back, doc);
}

#[test]
fn hand_written_json_without_set_on_import_and_with_numbers_reads() {
    let text = r#"{"SystemConfiguration": {"Components": [{"FQDD": "BIOS.Setup.1-1",
        "Attributes": [{"Name": "CpuMinSevAsid", "Value": 100}, {"Name": "X", "Value": null},
                       {"Name": "Y", "Value": "a", "Set On Import": "false"}]}]}}"#;
    let (doc, _) = ScpDocument::parse(text).unwrap();
    let attrs = &doc.components[0].attributes;
    assert_eq!((attrs[0].value.as_str(), attrs[0].set_on_import), ("100", true));
    assert_eq!(attrs[1].value, "");
    assert!(!attrs[2].set_on_import);
}

#[test]
fn bad_documents_are_refused_with_the_line() {
    let cases = [
        ("just text", "neither JSON nor XML"),
        ("{\"SystemConfiguration\": {\"Components\": [{\"FQDD\": 5}]}}", "FQDD"),
        ("{\n\"Other\": 1\n}", "SystemConfiguration"),
        ("<Foo/>", "not <SystemConfiguration>"),
        (
            "<SystemConfiguration>\n<Component FQDD=\"BIOS.Setup.1-1\">\n<Attribute Name=\"A\">1</Attribute>\n</SystemConfiguration>",
            "line 4",
        ),
        (
            "<SystemConfiguration>\n<Component>\n</Component>\n</SystemConfiguration>",
            "without FQDD",
        ),
        (
            "<SystemConfiguration>\n<Bogus/>\n</SystemConfiguration>",
            "unexpected element <Bogus>",
        ),
        ("<SystemConfiguration><Component FQDD=\"X\">", "not closed"),
        (
            "<SystemConfiguration><Component FQDD=\"X\"><Attribute Name=\"A\">&nbsp;</Attribute></Component></SystemConfiguration>",
            "unknown entity",
        ),
    ];
    for (text, expected) in cases {
        let e = ScpDocument::parse(text).unwrap_err().to_string();
        assert!(e.contains(expected), "{text:?}: {e}");
    }
}

#[test]
fn scp_names_map_to_dell_attribute_names_and_back() {
    for (scp, dell) in [
        ("ServerPwr.1#PowerCapSetting", "ServerPwr.1.PowerCapSetting"),
        ("IPv4.1#Enable", "IPv4.1.Enable"),
        ("Users.3#IpmiLanPrivilege", "Users.3.IpmiLanPrivilege"),
        ("OS-BMC.1#AdminState", "OS-BMC.1.AdminState"),
        ("LCAttributes.1#BIOSRTDRequested", "LCAttributes.1.BIOSRTDRequested"),
        ("ADGroup.15#Domain", "ADGroup.15.Domain"),
    ] {
        assert_eq!(attribute_name(scp).as_deref(), Some(dell), "{scp}");
        assert_eq!(scp_name(dell).as_deref(), Some(scp), "{dell}");
    }
    for unmapped in [
        "LogicalProc",
        "HWC_1_2#Alert#RedfishEventing",
        "IOV_1_1#Alert#Email",
        "Group#Attr",
        "Group.x#Attr",
        "Group.1#",
        "#Attr",
    ] {
        assert_eq!(attribute_name(unmapped), None, "{unmapped}");
    }
    for unmapped in ["LogicalProc", "Group.1", "Group.x.Attr", "A.1.B.C"] {
        assert_eq!(scp_name(unmapped), None, "{unmapped}");
    }
}

#[test]
fn components_are_told_apart_by_their_fqdd() {
    for (fqdd, kind) in [
        ("BIOS.Setup.1-1", ComponentKind::Bios),
        ("iDRAC.Embedded.1", ComponentKind::Manager(AttributeGroup::Idrac)),
        ("System.Embedded.1", ComponentKind::Manager(AttributeGroup::System)),
        (
            "LifecycleController.Embedded.1",
            ComponentKind::Manager(AttributeGroup::LifecycleController),
        ),
        ("NIC.Slot.3-1-1", ComponentKind::Nic),
        ("NIC.Embedded.1-1-1", ComponentKind::Nic),
        ("FC.Slot.2-1", ComponentKind::Nic),
        ("RAID.Slot.6-1", ComponentKind::Storage),
        ("AHCI.Slot.2-1", ComponentKind::Storage),
        ("Disk.Direct.0-0:AHCI.Slot.2-1", ComponentKind::Storage),
        ("Enclosure.Internal.0-1:RAID.Slot.6-1", ComponentKind::Storage),
        ("EventFilters.SystemHealth.1", ComponentKind::EventFilters),
        ("SupportAssist.Embedded.1", ComponentKind::Other),
    ] {
        assert_eq!(ComponentKind::of(fqdd), kind, "{fqdd}");
    }
}

#[test]
fn a_task_reads_its_job_and_per_attribute_results() {
    let task: task::ScpTask = serde_json::from_value(serde_json::json!({
        "Id": "JID_1", "TaskState": "Completed", "TaskStatus": "OK", "PercentComplete": 100,
        "Messages": [
            {"Message": "Successfully Completed Request", "MessageId": "IDRAC.2.9.SYS053",
             "Oem": {"Dell": {"@odata.type": "#DellManager.v1_0_0.ServerConfigurationProfileResults",
                 "DisplayValue": "Enable LDAP", "ErrCode": "0", "Name": "LDAP.1#Enable",
                 "NewValue": "Enabled", "OldValue": "Disabled", "Severity": "OK", "Status": "Success"}}},
            {"Message": "Estimated time for applying configuration changes is 30 seconds.", "MessageId": "IDRAC.2.9.SYS088"}
        ],
        "Oem": {"Dell": {"JobState": "Completed", "JobType": "ImportConfiguration",
            "Message": "Successfully imported and applied Server Configuration Profile.",
            "MessageId": "IDRAC.2.9.SYS053", "PercentComplete": 100}}
    }))
    .unwrap();
    assert_eq!(task.job_state(), Some(crate::oem::dell::JobState::Completed));
    assert_eq!(task.message_code(), Some("SYS053"));
    let results: Vec<_> = task.results().collect();
    assert_eq!(results.len(), 1);
    assert!(results[0].succeeded());
    assert_eq!(results[0].old_value.as_deref(), Some("Disabled"));
    assert_eq!(task.notes().next().map(|(c, _)| c), Some(Some("SYS088")));
    let failed = task::ProfileResult {
        status: Some("Failure".into()),
        ..task::ProfileResult::default()
    };
    assert!(!failed.succeeded());
}

#[cfg(feature = "client")]
#[test]
fn the_actions_are_found_by_the_end_of_their_name_whatever_the_firmware_writes_before_it() {
    for key in [
        "#OemManager.v1_4_0.OemManager#OemManager.ExportSystemConfiguration",
        "#OemManager.ExportSystemConfiguration",
        "OemManager.v1_0_0#OemManager.ExportSystemConfiguration",
    ] {
        let manager = serde_json::json!({"Actions": {"Oem": {key: {
            "ShareParameters": {"Target@Redfish.AllowableValues": ["ALL", "BIOS"]},
            "target": "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.ExportSystemConfiguration"}}}});
        let a = Actions::from_manager(&manager);
        assert_eq!(
            a.export.as_deref(),
            Some("/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.ExportSystemConfiguration"),
            "{key}"
        );
        assert_eq!(a.export_targets, ["ALL", "BIOS"]);
        assert!(a.import.is_none() && a.preview.is_none());
    }
}
