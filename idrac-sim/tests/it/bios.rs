//! BIOS staging, validation with iDRAC MessageIds, the job lifecycle and resets.

use super::{client, config, eventually, raw, start};
use idrac_sim::SimConfig;
use redfish_client::ODataId;
use redfish_client::oem::dell::{self, AttributeGroup, JobState};
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use redfish_client::resources::computer_system::ResetType;
use redfish_client::resources::task::JobOutcome;
use serde_json::{Value, json};

fn attrs(pairs: &[(&str, Value)]) -> Attributes {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone().into())).collect()
}

async fn patch_raw(url: &str, body: Value) -> (u16, Value) {
    let r = raw()
        .patch(format!("{url}{}", dell::BIOS_SETTINGS))
        .basic_auth("root", Some("calvin"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn ids(body: &Value) -> Vec<String> {
    body["error"]["@Message.ExtendedInfo"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| m["MessageId"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn validation_errors_carry_idrac_and_base_message_ids() {
    let fleet = start(config()).await;
    let url = &fleet.hosts()[0].url;
    let cases = [
        (
            json!({"ProcCstates": "Disabled"}),
            vec!["IDRAC.2.9.SYS429", "Base.1.12.PropertyUnknown"],
        ),
        (
            json!({"CpuMinSevAsid": "100"}),
            vec!["IDRAC.2.9.SYS424", "Base.1.12.PropertyValueTypeError"],
        ),
        (
            json!({"NumaNodesPerSocket": 1}),
            vec!["IDRAC.2.9.SYS424", "Base.1.12.PropertyValueTypeError"],
        ),
        (
            json!({"SysProfile": "Turbo"}),
            vec!["IDRAC.2.9.SYS426", "Base.1.12.PropertyValueNotInList"],
        ),
        (
            json!({"CpuAcpiCstC2Latency": 5000}),
            vec!["IDRAC.2.9.SYS417", "Base.1.12.PropertyValueOutOfRange"],
        ),
        // Read-only because the r7625 runs PerfOptimized and the request does not change that.
        (
            json!({"ProcCStates": "Enabled"}),
            vec!["IDRAC.2.9.SYS427", "Base.1.12.PropertyNotWritable"],
        ),
        (
            json!({"AgesaVersion": "x"}),
            vec!["IDRAC.2.9.SYS427", "Base.1.12.PropertyNotWritable"],
        ),
    ];
    for (attributes, expected) in cases {
        let (status, body) = patch_raw(url, json!({"Attributes": attributes})).await;
        assert_eq!(status, 400, "{attributes}");
        assert_eq!(ids(&body), expected, "{attributes}: {body}");
        assert!(
            body["error"]["@Message.ExtendedInfo"][0]["RelatedProperties"][0]
                .as_str()
                .unwrap()
                .starts_with("#/Attributes/")
        );
    }
    // Several problems are reported at once.
    let (_, body) = patch_raw(url, json!({"Attributes": {"Nope": 1, "SysProfile": "Turbo"}})).await;
    assert_eq!(ids(&body).len(), 4);
    // Nothing was staged by the failures.
    let (_, pending, _) = fleet.hosts()[0].host.snapshot();
    assert!(pending.is_empty());
}

#[tokio::test]
async fn unlocking_in_the_same_patch_is_accepted() {
    let fleet = start(config()).await;
    let (status, body) = patch_raw(
        &fleet.hosts()[0].url,
        json!({"Attributes": {"SysProfile": "Custom", "ProcCStates": "Enabled"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["@Message.ExtendedInfo"][0]["MessageId"], "IDRAC.2.9.SYS413");
    let c = client(&fleet, 0);
    let bios = c.bios(&ODataId::new(dell::BIOS)).await.unwrap();
    let pending = c.pending_bios(&bios).await.unwrap();
    assert_eq!(
        pending.attributes,
        attrs(&[("SysProfile", json!("Custom")), ("ProcCStates", json!("Enabled"))])
    );
    assert_eq!(
        bios.attributes["ProcCStates"].as_str(),
        Some("Disabled"),
        "current unchanged until the job runs"
    );
}

#[tokio::test]
async fn apply_time_creates_a_job_that_a_reset_runs() {
    let fleet = start(config()).await;
    let c = client(&fleet, 0);
    // PerfPerWattOptimizedDapc forces its sub-settings: C-states on, SysDbpm, ASPM L1 on.
    let staged = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &attrs(&[
                ("SysProfile", json!("PerfPerWattOptimizedDapc")),
                ("LogicalProc", json!("Disabled")),
            ]),
            Some(&SettingsApplyTime::on_reset()),
        )
        .await
        .unwrap();
    let job_link = staged.job.expect("a job Location");
    let job = c.dell().job(job_link.last_segment()).await.unwrap();
    assert_eq!(
        (job.job_state, job.message_code()),
        (JobState::Scheduled, Some("JCP001"))
    );
    assert!(job.is_bios_config());
    // A second commit fails, and so does staging more values.
    assert!(c.dell().create_bios_job().await.unwrap_err().has_code("SYS011"));
    let more = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &attrs(&[("MemTest", json!("Enabled"))]),
            None,
        )
        .await;
    assert!(more.unwrap_err().has_code("SYS011"));
    let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::ForceRestart).await.unwrap();
    let done = eventually("the job to finish", || async {
        let j = c.dell().job(job_link.last_segment()).await.ok()?;
        j.outcome().is_final().then_some(j)
    })
    .await;
    assert_eq!(
        (done.outcome(), done.message_code(), done.percent_complete),
        (JobOutcome::Succeeded, Some("PR19"), Some(100))
    );
    let bios = eventually("the host to be back", || async {
        c.bios(&ODataId::new(dell::BIOS)).await.ok()
    })
    .await;
    let a = &bios.attributes;
    assert_eq!(a["SysProfile"].as_str(), Some("PerfPerWattOptimizedDapc"));
    assert_eq!(a["LogicalProc"].as_str(), Some("Disabled"));
    assert_eq!(a["ProcCStates"].as_str(), Some("Enabled"), "forced by the preset");
    assert_eq!(a["ProcPwrPerf"].as_str(), Some("SysDbpm"), "forced by the preset");
    assert!(c.pending_bios(&bios).await.unwrap().attributes.is_empty());
    // The registry's flags now describe the new values: ProcCStates stays read-only (a preset).
    let reg = c.dell().bios_registry().await.unwrap();
    assert_eq!(reg.attribute("ProcCStates").unwrap().read_only, Some(true));
    let stats: Value = raw()
        .get(format!("{}/_sim/stats", fleet.hosts()[0].url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["jobs_created"], 1);
    assert_eq!(stats["resets"], 1);
}

#[tokio::test]
async fn two_step_staging_then_post_jobs() {
    let fleet = start(config()).await;
    let c = client(&fleet, 0);
    assert!(
        c.dell().create_bios_job().await.unwrap_err().has_code("SYS023"),
        "no pending data"
    );
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &attrs(&[("MemTest", json!("Enabled"))]),
        None,
    )
    .await
    .unwrap();
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &attrs(&[("NumaNodesPerSocket", json!("2"))]),
        None,
    )
    .await
    .unwrap();
    let (_, pending, _) = fleet.hosts()[0].host.snapshot();
    assert_eq!(pending.len(), 2, "stagings accumulate until a job exists");
    let job = c.dell().create_bios_job().await.unwrap();
    assert!(c.dell().create_bios_job().await.unwrap_err().has_code("SYS011"));
    // ClearPending is refused while the job exists; deleting the job discards the values.
    assert!(c.dell().clear_pending().await.unwrap_err().has_code("BIOS011"));
    c.dell().delete_job(job.last_segment()).await.unwrap();
    let (_, pending, _) = fleet.hosts()[0].host.snapshot();
    assert!(pending.is_empty());
    assert!(c.dell().jobs().await.unwrap().is_empty());
    // Without a job, ClearPending works.
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &attrs(&[("MemTest", json!("Enabled"))]),
        None,
    )
    .await
    .unwrap();
    c.dell().clear_pending().await.unwrap();
    assert!(fleet.hosts()[0].host.snapshot().1.is_empty());
}

#[tokio::test]
async fn job_queue_clear_and_listing() {
    let fleet = start(config()).await;
    let c = client(&fleet, 0);
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &attrs(&[("MemTest", json!("Enabled"))]),
        Some(&SettingsApplyTime::on_reset()),
    )
    .await
    .unwrap();
    let listed = c.dell().jobs().await.unwrap();
    assert_eq!(listed.len(), 1);
    c.dell()
        .clear_job_queue(&redfish_client::oem::dell::JobQueueClear::All)
        .await
        .unwrap();
    assert!(c.dell().jobs().await.unwrap().is_empty());
    assert!(fleet.hosts()[0].host.snapshot().1.is_empty());
    assert_eq!(
        c.dell().delete_job("JID_000000000000").await.unwrap_err().status(),
        Some(404)
    );
}

#[tokio::test]
async fn system_lockdown_refuses_changes_until_lifted() {
    let fleet = start(config()).await;
    let c = client(&fleet, 0);
    c.dell()
        .set_attributes(
            AttributeGroup::Idrac,
            &attrs(&[("Lockdown.1.SystemLockdown", json!("Enabled"))]),
        )
        .await
        .unwrap();
    let err = c
        .stage_settings(
            &ODataId::new(dell::BIOS_SETTINGS),
            &attrs(&[("MemTest", json!("Enabled"))]),
            None,
        )
        .await
        .unwrap_err();
    assert!(err.has_code("SYS406"), "{err}");
    let err = c
        .dell()
        .set_attributes(
            AttributeGroup::System,
            &attrs(&[("ThermalSettings.1.ThermalProfile", json!("Maximum Performance"))]),
        )
        .await;
    assert!(err.unwrap_err().has_code("SYS406"));
    assert!(
        c.dell()
            .clear_job_queue(&redfish_client::oem::dell::JobQueueClear::All)
            .await
            .unwrap_err()
            .has_code("SYS406")
    );
    c.dell()
        .set_attributes(
            AttributeGroup::Idrac,
            &attrs(&[("Lockdown.1.SystemLockdown", json!("Disabled"))]),
        )
        .await
        .unwrap();
    c.stage_settings(
        &ODataId::new(dell::BIOS_SETTINGS),
        &attrs(&[("MemTest", json!("Enabled"))]),
        None,
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn dell_attributes_apply_immediately_with_validation() {
    let fleet = start(config()).await;
    let c = client(&fleet, 0);
    let set = |pairs: &[(&str, Value)]| {
        let a = attrs(pairs);
        let c = c.clone();
        async move { c.dell().set_attributes(AttributeGroup::System, &a).await }
    };
    assert!(
        set(&[("ServerPwr.1.PowerCapValue", json!(600))])
            .await
            .unwrap_err()
            .has_code("SYS432")
    );
    assert!(
        set(&[("ThermalSettings.1.ThermalProfile", json!("Loud"))])
            .await
            .unwrap_err()
            .has_code("SYS426")
    );
    set(&[
        ("ServerPwr.1.PowerCapSetting", json!("Enabled")),
        ("ServerPwr.1.PowerCapValue", json!(600)),
    ])
    .await
    .unwrap();
    set(&[("ThermalSettings.1.ThermalProfile", json!("Maximum Performance"))])
        .await
        .unwrap();
    let now = c.dell().attributes(AttributeGroup::System).await.unwrap();
    assert_eq!(now.attributes["ServerPwr.1.PowerCapSetting"].as_str(), Some("Enabled"));
    assert_eq!(
        now.attributes["ThermalSettings.1.ThermalProfile"].as_str(),
        Some("Maximum Performance")
    );
}

#[tokio::test]
async fn graceful_shutdown_needs_a_cooperating_os() {
    for cooperative in [true, false] {
        let fleet = start(SimConfig {
            graceful_os: cooperative,
            ..config()
        })
        .await;
        let c = client(&fleet, 0);
        let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
        c.reset(&system, ResetType::GracefulShutdown).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let (_, _, on) = fleet.hosts()[0].host.snapshot();
        assert_eq!(on, !cooperative, "cooperative OS = {cooperative}");
        // ForceOff works on a running host and, like every redundant reset, is refused with 409
        // on one already off; On boots again.
        let forced = c.reset(&system, ResetType::ForceOff).await;
        if cooperative {
            let err = forced.unwrap_err();
            assert_eq!(err.status(), Some(409), "{err}");
            assert!(err.has_code("PSU502"), "{err}");
        } else {
            forced.unwrap();
        }
        let off = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
        assert_eq!(
            off.power_state,
            Some(redfish_client::resources::computer_system::PowerState::Off)
        );
        c.reset(&system, ResetType::On).await.unwrap();
        let on = eventually("power on", || async {
            let s = c.system(&ODataId::new(dell::SYSTEM)).await.ok()?;
            (s.power_state == Some(redfish_client::resources::computer_system::PowerState::On)).then_some(s)
        })
        .await;
        assert_eq!(on.model.as_deref(), Some("PowerEdge R7625"));
    }
}

/// Dell's guidance, and the field: during POST the iDRAC keeps answering `GET System` (On) and
/// the reset action; POST shows in `GetRemoteServicesAPIStatus`.
#[tokio::test]
async fn during_post_the_system_answers_and_the_lifecycle_controller_reports_post() {
    let fleet = start(SimConfig {
        boot_time: std::time::Duration::from_secs(30),
        ..config()
    })
    .await;
    let url = &fleet.hosts()[0].url;
    let c = client(&fleet, 0);
    let system = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    c.reset(&system, ResetType::ForceRestart).await.unwrap();
    let list: Value = raw()
        .get(format!("{url}/redfish/v1/Systems"))
        .basic_auth("root", Some("calvin"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["Members"].as_array().map(Vec::len), Some(1));
    for path in [dell::SYSTEM, dell::BIOS] {
        let r = raw()
            .get(format!("{url}{path}"))
            .basic_auth("root", Some("calvin"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
    }
    let during = c.system(&ODataId::new(dell::SYSTEM)).await.unwrap();
    assert_eq!(
        during.power_state,
        Some(redfish_client::resources::computer_system::PowerState::On)
    );
    let err = c.reset(&system, ResetType::On).await.unwrap_err();
    assert_eq!(err.status(), Some(409), "already on, in POST: {err}");
    let lc = c.dell().lc_status().await.unwrap();
    assert_eq!((lc.is_ready(), lc.server_status.as_deref()), (false, Some("InPOST")));
}
