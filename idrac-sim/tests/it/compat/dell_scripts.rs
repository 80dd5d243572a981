//! Dell's iDRAC-Redfish-Scripting Python scripts (github.com/dell/iDRAC-Redfish-Scripting,
//! `Redfish Python/`, read at commit e7ba763) replayed as transcripts: the requests each script
//! makes — method, path, body — in its order, with its waits, and what it reads from each answer
//! (status codes it accepts, keys it indexes, values it compares). Written from reading the
//! scripts; none of their code is used. A transcript fails where the script would stop with
//! FAIL or crash.

use super::script::{Answer, Script, passed};
use idrac_sim::{Fleet, SimConfig};
use redfish_client::oem::dell;
use serde_json::{Value, json};
use std::time::Duration;

pub(super) const BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios";
pub(super) const REGISTRY: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/BiosRegistry";
pub(super) const SETTINGS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/Settings";
pub(super) const SYSTEM: &str = "/redfish/v1/Systems/System.Embedded.1";
pub(super) const RESET: &str = "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset";
pub(super) const OEM_JOBS: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs";
pub(super) const JOB_SERVICE: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellJobService";
pub(super) const LC_STATUS: &str =
    "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellLCService/Actions/DellLCService.GetRemoteServicesAPIStatus";
pub(super) const MANAGER_REGISTRY: &str =
    "/redfish/v1/Registries/ManagerAttributeRegistry/ManagerAttributeRegistry.v1_0_0.json";

/// One script second: the emulator's POST lasts 60 of them, as the scripts' loops expect a
/// POST of minutes.
pub(super) const PACE: Duration = Duration::from_millis(10);

pub(super) async fn fleet(hosts: usize) -> Fleet {
    Fleet::start(SimConfig {
        hosts,
        boot_time: Duration::from_millis(600),
        ..SimConfig::default()
    })
    .await
    .unwrap()
}

pub(super) fn scripts(fleet: &Fleet) -> Vec<Script> {
    fleet.hosts().iter().map(|h| Script::new(&h.url, PACE)).collect()
}

/// `check_supported_idrac_version()` of the BIOS scripts: `GET Bios`, whose body is read with
/// `.json()` before the status is looked at; 401 and anything but 200 stop the script.
pub(super) async fn check_bios_supported(s: &Script) -> Result<(), String> {
    let r = s.get(BIOS).await?;
    r.json()?;
    r.expect(&[200])?;
    Ok(())
}

/// GetSetBiosAttributesREDFISH.py `--get-attribute NAME`: the current value from `GET Bios`
/// (`data['Attributes']`), or the script's "unable to get attribute current value".
pub(super) async fn get_attribute(s: &Script, name: &str) -> Result<Value, String> {
    check_bios_supported(s).await?;
    let r = s.get(BIOS).await?;
    r.expect(&[200])?;
    let attributes = r.at("/Attributes")?.as_object().ok_or("Attributes is not an object")?;
    attributes
        .get(name)
        .cloned()
        .ok_or_else(|| format!("unable to get attribute current value for {name}"))
}

/// `create_bios_attribute_dict()`: `GET BiosRegistry`; an attribute whose registry entry says
/// `Type` Integer is sent as an int, everything else as the string given.
pub(super) async fn bios_payload(s: &Script, names: &[&str], values: &[&str]) -> Result<Value, String> {
    let r = s.get(REGISTRY).await?;
    r.json()?;
    r.expect(&[200])?;
    let entries = r
        .at("/RegistryEntries/Attributes")?
        .as_array()
        .ok_or("Attributes is not a list")?;
    let mut attributes = serde_json::Map::new();
    for (name, value) in names.iter().zip(values) {
        // `if i[0] in ii.values()`: the name is one of the entry's values.
        let integer = entries
            .iter()
            .any(|e| e.as_object().is_some_and(|o| o.values().any(|v| v == name)) && e["Type"] == "Integer");
        let v = if integer {
            json!(value.parse::<i64>().map_err(|e| format!("int({value}): {e}"))?)
        } else {
            json!(value)
        };
        attributes.insert((*name).to_owned(), v);
    }
    Ok(json!({ "Attributes": attributes }))
}

/// `create_next_boot_config_job()`: `PATCH Bios/Settings` with ApplyTime OnReset; 200 or 202,
/// the job id from `Location`.
pub(super) async fn stage_with_job(s: &Script, payload: &Value) -> Result<String, String> {
    let mut body = json!({"@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}});
    if let (Some(b), Some(p)) = (body.as_object_mut(), payload.as_object()) {
        b.extend(p.clone());
    }
    let r = s.patch(SETTINGS, body).await?;
    r.expect(&[200, 202])?;
    r.location_id()
}

/// `get_job_status_scheduled()`: up to 5 tries of `GET Oem/Dell/Jobs/<id>`, 5 s apart, until
/// `Message` reads "Task successfully scheduled."; a status other than 200 ends the wait.
pub(super) async fn wait_scheduled(s: &Script, job: &str) -> Result<(), String> {
    for _ in 0..5 {
        let r = s.get(&format!("{OEM_JOBS}/{job}")).await?;
        r.expect(&[200])?;
        s.sleep(5).await;
        if r.text("/Message")? == "Task successfully scheduled." {
            return Ok(());
        }
    }
    Err(format!("{job}: GET job status retry count of 5 has been reached"))
}

/// GetSetBiosAttributesREDFISH.py `reboot_server()`: `GET System` for `PowerState`. On: POST
/// GracefulShutdown (204), wait 60 s, poll `GET System` without pause until Off (after 5 min
/// ForceOff, 204, wait 60 s, Off required), then POST On (204). Off: POST On (204).
pub(super) async fn reboot_gracefully(s: &Script) -> Result<(), String> {
    let r = s.get(SYSTEM).await?;
    let state = r.text("/PowerState")?;
    if state == "On" {
        s.post(RESET, json!({"ResetType": "GracefulShutdown"}))
            .await?
            .expect(&[204])?;
        s.sleep(60).await;
        let started = tokio::time::Instant::now();
        loop {
            let r = s.get(SYSTEM).await?;
            if r.text("/PowerState")? == "Off" {
                break;
            }
            if started.elapsed() >= PACE * 300 {
                s.post(RESET, json!({"ResetType": "ForceOff"})).await?.expect(&[204])?;
                s.sleep(60).await;
                let r = s.get(SYSTEM).await?;
                if r.text("/PowerState")? != "Off" {
                    return Err("server not in OFF state".into());
                }
                break;
            }
            // The script polls with no pause at all; a millisecond keeps the replay polite.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        s.post(RESET, json!({"ResetType": "On"})).await?.expect(&[204])?;
    } else if state == "Off" {
        s.post(RESET, json!({"ResetType": "On"})).await?.expect(&[204])?;
    } else {
        return Err(format!("unable to get current server power state ({state})"));
    }
    Ok(())
}

/// `loop_job_status_final()`: up to 20 polls of `GET Oem/Dell/Jobs/<id>` 10 s apart; a status
/// other than 200, "Fail"/"fail" in `Message` or `JobState` Failed is a failure, `JobState`
/// Completed the end.
pub(super) async fn wait_completed(s: &Script, job: &str) -> Result<Answer, String> {
    for _ in 1..20 {
        let r = s.get(&format!("{OEM_JOBS}/{job}")).await?;
        r.expect(&[200])?;
        let message = r.text("/Message")?;
        let state = r.text("/JobState")?;
        if message.contains("Fail") || message.contains("fail") || state == "Failed" {
            return Err(format!("job {job} failed: {message}"));
        }
        if state == "Completed" {
            return Ok(r);
        }
        s.sleep(10).await;
    }
    Err(format!("{job}: GET command retry count of 20 has been reached"))
}

/// GetSetBiosAttributesREDFISH.py `--attribute-names A,B --attribute-values X,Y --reboot`.
pub(super) async fn set_bios_with_reboot(s: &Script, names: &[&str], values: &[&str]) -> Result<(), String> {
    check_bios_supported(s).await?;
    let payload = bios_payload(s, names, values).await?;
    let job = stage_with_job(s, &payload).await?;
    wait_scheduled(s, &job).await?;
    reboot_gracefully(s).await?;
    wait_completed(s, &job).await?;
    Ok(())
}

#[tokio::test]
async fn dell_get_set_bios_attributes_reads_sets_and_reboots_one_host() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        let before = get_attribute(s, "MemTest").await?;
        if before != json!("Disabled") {
            return Err(format!("MemTest starts {before}"));
        }
        // Enumerations and an integer, which the script sends as an int; CpuMinSevAsid is
        // writable once Sme is Enabled, in the same request.
        set_bios_with_reboot(s, &["MemTest", "Sme", "CpuMinSevAsid"], &["Enabled", "Enabled", "4"]).await?;
        let after = (
            get_attribute(s, "MemTest").await?,
            get_attribute(s, "CpuMinSevAsid").await?,
        );
        if after != (json!("Enabled"), json!(4)) {
            return Err(format!("after the job: {after:?}"));
        }
        Ok(())
    };
    passed("GetSetBiosAttributesREDFISH.py --reboot, 1 host", &[s], flow.await);
}

/// GetSetBiosAttributesREDFISH.py `--config-file` with three `idrac_ips`: the whole flow, host
/// after host.
#[tokio::test]
async fn dell_get_set_bios_attributes_with_a_config_file_sets_three_hosts_in_turn() {
    let fleet = fleet(3).await;
    let all = scripts(&fleet);
    let flow = async {
        for s in &all {
            set_bios_with_reboot(s, &["LogicalProc"], &["Disabled"]).await?;
        }
        for (i, s) in all.iter().enumerate() {
            let v = get_attribute(s, "LogicalProc").await?;
            if v != json!("Disabled") {
                return Err(format!("host {i}: LogicalProc is {v}"));
            }
        }
        Ok(())
    };
    let refs: Vec<&Script> = all.iter().collect();
    passed(
        "GetSetBiosAttributesREDFISH.py --config-file, 3 hosts",
        &refs,
        flow.await,
    );
}

/// SetMultipleBiosAttributesMultipleIdracsCsvFileREDFISH.py with three CSV rows: per host a
/// `PATCH` with ApplyTime OnReset (values as the CSV strings), the scheduled check, and
/// `reboot_server()`'s ForceRestart (On when off), 204 required; then every job is polled to
/// Completed.
#[tokio::test]
async fn dell_csv_fleet_script_sets_bios_attributes_on_three_hosts_in_parallel() {
    let fleet = fleet(3).await;
    let all = scripts(&fleet);
    let flow = async {
        let mut jobs = Vec::new();
        for s in &all {
            let job = stage_with_job(
                s,
                &json!({"Attributes": {"ProcVirtualization": "Disabled", "MemTest": "Enabled"}}),
            )
            .await?;
            wait_scheduled(s, &job).await?;
            let state = s.get(SYSTEM).await?.text("/PowerState")?;
            let reset = if state == "On" { "ForceRestart" } else { "On" };
            s.post(RESET, json!({ "ResetType": reset })).await?.expect(&[204])?;
            jobs.push(job);
        }
        for (s, job) in all.iter().zip(&jobs) {
            wait_completed(s, job).await?;
        }
        for (i, s) in all.iter().enumerate() {
            let bios = s.get(&format!("{BIOS}?$select=Attributes")).await?;
            bios.expect(&[200])?;
            if bios.at("/Attributes/ProcVirtualization")? != "Disabled" {
                return Err(format!("host {i}: not applied"));
            }
        }
        Ok(())
    };
    let refs: Vec<&Script> = all.iter().collect();
    passed(
        "SetMultipleBiosAttributesMultipleIdracsCsvFileREDFISH.py, 3 hosts",
        &refs,
        flow.await,
    );
}

/// DeleteJobQueueREDFISH.py: `check_supported_idrac_version()` is `GET Oem/Dell/DellJobService`
/// (200); `--get` reads `JobService/Jobs?$expand=*($levels=1)` and prints `Members`; `--clear`
/// posts `DeleteJobQueue {"JobID": "JID_CLEARALL"}` and wants 200; `--single-job` the same with
/// the id.
#[tokio::test]
async fn dell_job_queue_script_lists_deletes_and_clears_the_queue() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        let job = stage_with_job(s, &json!({"Attributes": {"MemTest": "Enabled"}})).await?;
        // --get
        s.get(JOB_SERVICE).await?.expect(&[200])?;
        let listed = s.get("/redfish/v1/JobService/Jobs?$expand=*($levels=1)").await?;
        let members = listed.at("/Members")?.as_array().ok_or("Members is not a list")?;
        let shown: Vec<(&str, &str)> = members
            .iter()
            .map(|m| (m["Id"].as_str().unwrap_or(""), m["JobState"].as_str().unwrap_or("")))
            .collect();
        if shown != [(job.as_str(), "Pending")] {
            return Err(format!("--get printed {shown:?}"));
        }
        // --single-job
        s.get(JOB_SERVICE).await?.expect(&[200])?;
        let action = format!("{JOB_SERVICE}/Actions/DellJobService.DeleteJobQueue");
        s.post(&action, json!({ "JobID": job })).await?.expect(&[200])?;
        // --clear, after staging another job
        let again = stage_with_job(s, &json!({"Attributes": {"MemTest": "Enabled"}})).await?;
        s.get(JOB_SERVICE).await?.expect(&[200])?;
        let cleared = s.post(&action, json!({"JobID": "JID_CLEARALL"})).await?;
        cleared.expect(&[200])?;
        // A real iDRAC's answer carries two messages, the second SUP020.
        if !cleared.text("/@Message.ExtendedInfo/1/MessageId")?.ends_with("SUP020") {
            return Err("the clear's second message is not SUP020".into());
        }
        let left = s.get(&format!("{OEM_JOBS}/{again}")).await?;
        left.expect(&[404])?;
        let listed = s.get("/redfish/v1/JobService/Jobs?$expand=*($levels=1)").await?;
        if listed.at("/Members")? != &json!([]) {
            return Err("jobs left after JID_CLEARALL".into());
        }
        Ok(())
    };
    passed("DeleteJobQueueREDFISH.py --get/--single-job/--clear", &[s], flow.await);
}

/// DeleteJobQueueREDFISH.py `--clear-restart`: `JID_CLEARALL_FORCE` (200), 10 s, 60 s, then
/// `GetRemoteServicesAPIStatus` every 20 s until `LCStatus` and `Status` read Ready (status 200
/// required each time). Meanwhile the Systems tree answers 400 SWC0700 and the collection is
/// empty, as after a real Lifecycle Controller restart.
#[tokio::test]
async fn dell_job_queue_script_clears_and_restarts_the_lifecycle_controller_then_waits_for_ready() {
    let fleet = Fleet::start(SimConfig {
        boot_time: Duration::from_secs(1),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        stage_with_job(s, &json!({"Attributes": {"MemTest": "Enabled"}})).await?;
        s.get(JOB_SERVICE).await?.expect(&[200])?;
        let action = format!("{JOB_SERVICE}/Actions/DellJobService.DeleteJobQueue");
        s.post(&action, json!({"JobID": "JID_CLEARALL_FORCE"}))
            .await?
            .expect(&[200])?;
        let during = s.get(BIOS).await?;
        during.expect(&[400])?;
        if !during
            .text("/error/@Message.ExtendedInfo/0/MessageId")?
            .ends_with("SWC0700")
        {
            return Err("not SWC0700 during the restart".into());
        }
        if s.get("/redfish/v1/Systems").await?.at("/Members")? != &json!([]) {
            return Err("Systems lists members during the restart".into());
        }
        s.sleep(10).await;
        s.sleep(60).await;
        for not_ready in 0..30 {
            let r = s.post(LC_STATUS, json!({})).await?;
            r.json()?;
            r.expect(&[200])?;
            if r.text("/LCStatus")? == "Ready" && r.text("/Status")? == "Ready" {
                s.get(BIOS).await?.expect(&[200])?;
                return Ok(not_ready);
            }
            s.sleep(20).await;
        }
        Err("the Lifecycle Controller never became ready".into())
    };
    let not_ready = passed("DeleteJobQueueREDFISH.py --clear-restart", &[s], flow.await);
    assert!(not_ready > 0, "the script saw the restart in progress at least once");
}

/// GetSetPowerStateREDFISH.py: `check_supported_idrac_version()` is `GET Managers/iDRAC.Embedded.1`
/// (200); `--get` reads `PowerState` and `Actions['#ComputerSystem.Reset']
/// ['ResetType@Redfish.AllowableValues']`; `--set X` posts the reset and wants 204.
#[tokio::test]
async fn dell_power_state_script_gets_and_sets_the_power_state() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let get = || async {
        s.get(dell::MANAGER).await?.expect(&[200])?;
        let r = s.get(SYSTEM).await?;
        r.expect(&[200])?;
        let allowed = r
            .at("/Actions/#ComputerSystem.Reset/ResetType@Redfish.AllowableValues")?
            .as_array()
            .ok_or("no allowable values")?
            .len();
        Ok::<_, String>((r.text("/PowerState")?, allowed))
    };
    let set = |kind: &'static str| async move {
        s.get(dell::MANAGER).await?.expect(&[200])?;
        s.post(RESET, json!({ "ResetType": kind })).await?.expect(&[204])?;
        Ok::<_, String>(())
    };
    let flow = async {
        if get().await? != ("On".to_owned(), 8) {
            return Err("--get before".into());
        }
        set("ForceOff").await?;
        if get().await?.0 != "Off" {
            return Err("ForceOff left the host on".into());
        }
        set("On").await?;
        // On is immediate: POST runs with the host on.
        if get().await?.0 != "On" {
            return Err("On left the host off".into());
        }
        set("ForceRestart").await?;
        set("GracefulShutdown").await?;
        for _ in 0..100 {
            if get().await?.0 == "Off" {
                return Ok(());
            }
            s.sleep(1).await;
        }
        Err("GracefulShutdown never powered the host off".into())
    };
    passed("GetSetPowerStateREDFISH.py --get/--set", &[s], flow.await);
}

/// SetIdracLcSystemAttributesREDFISH.py `--set idrac|system --attribute-names "A|B"
/// --attribute-values "x|y"`: `GET DellAttributes/iDRAC.Embedded.1` (the version check), `GET`
/// the group, per attribute `GET` the manager registry at Dell's path and, where an entry with
/// that name has `Type` Integer, send an int; `PATCH {"Attributes"}` wants 200 and a JSON body
/// (an `error` key in it is a warning); 30 s later `GET` the group and compare each value.
/// `--get-registry` prints every entry of the same registry.
#[tokio::test]
async fn dell_manager_attribute_script_sets_idrac_and_system_attributes() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let set = |group: &'static str, names: &'static [&'static str], values: &'static [&'static str]| async move {
        s.get("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1")
            .await?
            .json()?;
        let url = format!("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/{group}");
        s.get(&url).await?.json()?;
        let mut attributes = serde_json::Map::new();
        for (name, value) in names.iter().zip(values) {
            let registry = s.get(MANAGER_REGISTRY).await?;
            let entries = registry
                .at("/RegistryEntries/Attributes")?
                .as_array()
                .ok_or("registry Attributes is not a list")?;
            let integer = entries
                .iter()
                .any(|e| e.as_object().is_some_and(|o| o.values().any(|v| v == name)) && e["Type"] == "Integer");
            let v = if integer {
                json!(value.parse::<i64>().map_err(|e| e.to_string())?)
            } else {
                json!(value)
            };
            attributes.insert((*name).to_owned(), v);
        }
        let patched = s.patch(&url, json!({ "Attributes": attributes.clone() })).await?;
        patched.json()?;
        patched.expect(&[200])?;
        if patched.json()?.get("error").is_some() {
            return Err(format!("error detected for the attributes: {}", patched.at("/error")?));
        }
        s.sleep(30).await;
        let after = s.get(&url).await?;
        for (name, v) in &attributes {
            if after.at(&format!("/Attributes/{}", name.replace('/', "~1")))? != v {
                return Err(format!("{name} is not set to {v}"));
            }
        }
        Ok::<_, String>(())
    };
    let flow = async {
        set(
            "iDRAC.Embedded.1",
            &["Time.1.Timezone", "WebServer.1.SessionTimeout", "IPMILan.1.Enable"],
            &["CST6CDT", "3600", "Enabled"],
        )
        .await?;
        set(
            "System.Embedded.1",
            &["ThermalSettings.1.ThermalProfile", "ServerPwr.1.PowerCapSetting"],
            &["Maximum Performance", "Enabled"],
        )
        .await?;
        // --get-registry: every entry printed, key by key; the hardware model is there.
        let registry = s.get(MANAGER_REGISTRY).await?;
        let entries = registry
            .at("/RegistryEntries/Attributes")?
            .as_array()
            .ok_or("not a list")?;
        if !entries
            .iter()
            .any(|e| e["AttributeName"] == "Info.1.HWModel" && e["Readonly"] == true)
        {
            return Err("Info.1.HWModel is not a Readonly entry of the registry".into());
        }
        Ok(())
    };
    passed("SetIdracLcSystemAttributesREDFISH.py --set", &[s], flow.await);
}

/// CreateServerRebootJobREDFISH.py `--reboot-job-type 3 --start-time TIME_NOW`: `GET
/// Oem/Dell/DellJobService` (200), `CreateRebootJob {"RebootJobType":
/// "GracefulRebootWithoutForcedShutdown"}` (200 or 202, the id from `Location`), `SetupJobQueue
/// {"JobArray": [id], "StartTimeInterval": "TIME_NOW"}` (200 or 202); `--get` lists
/// `Oem/Dell/Jobs` and `GET`s each member whose link contains RID. A staged BIOS job runs in the
/// reboot the reboot job makes.
#[tokio::test]
async fn dell_reboot_job_script_creates_and_schedules_a_reboot_job_that_runs_the_bios_job() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        let bios_job = {
            s.patch(SETTINGS, json!({"Attributes": {"MemTest": "Enabled"}}))
                .await?
                .expect(&[200])?;
            let r = s.post(OEM_JOBS, json!({"TargetSettingsURI": SETTINGS})).await?;
            r.expect(&[200])?;
            r.location_id()?
        };
        s.get(JOB_SERVICE).await?.expect(&[200])?;
        let created = s
            .post(
                &format!("{JOB_SERVICE}/Actions/DellJobService.CreateRebootJob"),
                json!({"RebootJobType": "GracefulRebootWithoutForcedShutdown"}),
            )
            .await?;
        created.expect(&[200, 202])?;
        let reboot_job = created.location_id()?;
        if !reboot_job.starts_with("RID_") {
            return Err(format!("reboot job id {reboot_job}"));
        }
        s.post(
            &format!("{JOB_SERVICE}/Actions/DellJobService.SetupJobQueue"),
            json!({"JobArray": [reboot_job], "StartTimeInterval": "TIME_NOW"}),
        )
        .await?
        .expect(&[200, 202])?;
        // --get
        let queue = s.get(OEM_JOBS).await?;
        let members = queue.at("/Members")?.as_array().ok_or("Members is not a list")?;
        let rids: Vec<&str> = members
            .iter()
            .filter_map(|m| m["@odata.id"].as_str())
            .filter(|l| l.contains("RID"))
            .collect();
        if rids.len() != 1 {
            return Err(format!("--get found reboot jobs {rids:?}"));
        }
        s.get(rids[0]).await?.expect(&[200])?;
        wait_completed(s, &bios_job).await?;
        let reboot = s.get(&format!("{OEM_JOBS}/{reboot_job}")).await?;
        if reboot.text("/JobState")? != "RebootCompleted" {
            return Err(format!("reboot job {}", reboot.text("/JobState")?));
        }
        Ok(())
    };
    passed("CreateServerRebootJobREDFISH.py", &[s], flow.await);
}

/// BiosResetToDefaultsREDFISH.py: `GET Bios` (200), `POST Bios.ResetBios {}` (200), then
/// `reboot_server()` (GracefulShutdown, 15 s, poll to Off, On); `--get` reads
/// `LCAttributes.1.BIOSRTDRequested` with `$select`. After the POST the BIOS holds its
/// defaults again.
#[tokio::test]
async fn dell_bios_reset_to_defaults_script_restores_the_defaults_at_the_next_post() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let rtd = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/LifecycleController.Embedded.1?$select=Attributes/LCAttributes.1.BIOSRTDRequested";
    let flow = async {
        set_bios_with_reboot(s, &["MemTest"], &["Enabled"]).await?;
        check_bios_supported(s).await?;
        s.post(&format!("{BIOS}/Actions/Bios.ResetBios"), json!({}))
            .await?
            .expect(&[200])?;
        if s.get(rtd).await?.text("/Attributes/LCAttributes.1.BIOSRTDRequested")? != "True" {
            return Err("BIOSRTDRequested is not True after Bios.ResetBios".into());
        }
        reboot_gracefully(s).await?;
        for _ in 0..100 {
            s.sleep(1).await;
            let flag = s.get(rtd).await?.text("/Attributes/LCAttributes.1.BIOSRTDRequested")?;
            if flag == "False" {
                let v = get_attribute(s, "MemTest").await?;
                return if v == json!("Disabled") {
                    Ok(())
                } else {
                    Err(format!("MemTest {v}"))
                };
            }
        }
        Err("the defaults never came back".into())
    };
    passed("BiosResetToDefaultsREDFISH.py", &[s], flow.await);
}

/// BiosChangePasswordREDFISH.py `--type 2 --new P`: `GET Bios` (200), `POST
/// Bios.ChangePassword {"PasswordName": "SetupPassword", "OldPassword", "NewPassword"}` (200),
/// `POST Oem/Dell/Jobs {"TargetSettingsURI"}` (200; the job id is found by searching the
/// answer for `JID_`), the scheduled check, a reboot, then the job to "Job completed
/// successfully." A second change must give the new password as the old one.
#[tokio::test]
async fn dell_bios_change_password_script_sets_the_setup_password_through_a_job() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let change = |old: &'static str, new: &'static str| async move {
        check_bios_supported(s).await?;
        let r = s
            .post(
                &format!("{BIOS}/Actions/Bios.ChangePassword"),
                json!({"PasswordName": "SetupPassword", "OldPassword": old, "NewPassword": new}),
            )
            .await?;
        Ok::<_, String>(r.status)
    };
    let flow = async {
        if change("", "Calvin123").await? != 200 {
            return Err("the first change was refused".into());
        }
        let r = s.post(OEM_JOBS, json!({"TargetSettingsURI": SETTINGS})).await?;
        r.expect(&[200])?;
        let job = r
            .location
            .as_deref()
            .and_then(|l| l.find("JID_").map(|at| l[at..].to_owned()))
            .ok_or("no JID_ in the answer")?;
        wait_scheduled(s, &job).await?;
        reboot_gracefully(s).await?;
        let done = wait_completed(s, &job).await?;
        if done.text("/Message")? != "Job completed successfully." {
            return Err("not completed successfully".into());
        }
        if change("", "Other456").await? != 400 {
            return Err("a wrong old password was accepted".into());
        }
        if change("Calvin123", "Other456").await? != 200 {
            return Err("the new password is not the old one now".into());
        }
        Ok(())
    };
    passed("BiosChangePasswordREDFISH.py", &[s], flow.await);
}

/// ResetIdracREDFISH.py: `GET Managers/iDRAC.Embedded.1` (200), `POST Manager.Reset/
/// {"ResetType": "GracefulRestart"}` (204); with `--check`, 180 s later a ping, then
/// `GetRemoteServicesAPIStatus` at the legacy `/redfish/v1/Dell/...` path every 30 s until
/// `Status` reads Ready (200 required). While the iDRAC reboots no connection succeeds.
#[tokio::test]
async fn dell_reset_idrac_script_resets_the_idrac_and_waits_for_ready_on_the_legacy_path() {
    let fleet = Fleet::start(SimConfig {
        boot_time: Duration::from_secs(1),
        ..SimConfig::default()
    })
    .await
    .unwrap();
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        s.get(dell::MANAGER).await?.expect(&[200])?;
        s.post(
            "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Manager.Reset/",
            json!({"ResetType": "GracefulRestart"}),
        )
        .await?
        .expect(&[204])?;
        if s.get(dell::MANAGER).await.is_ok() {
            return Err("the iDRAC answered while rebooting".into());
        }
        s.sleep(180).await;
        for _ in 0..20 {
            s.sleep(15).await;
            let r = s
                .post(
                    "/redfish/v1/Dell/Managers/iDRAC.Embedded.1/DellLCService/Actions/DellLCService.GetRemoteServicesAPIStatus",
                    json!({}),
                )
                .await?;
            r.json()?;
            r.expect(&[200])?;
            if r.text("/Status")? == "Ready" {
                return Ok(());
            }
            s.sleep(30).await;
        }
        Err("the iDRAC never became ready".into())
    };
    passed("ResetIdracREDFISH.py --check", &[s], flow.await);
}
