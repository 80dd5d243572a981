//! Dell's Server Configuration Profile scripts (github.com/dell/iDRAC-Redfish-Scripting,
//! `Redfish Python/`, read at commit e7ba763) replayed as transcripts against the emulator:
//! ExportSystemConfigurationLocalREDFISH.py (v13), ImportSystemConfigurationPreviewLocalFilenameREDFISH.py
//! (v4), ImportSystemConfigurationLocalFilenameREDFISH.py (v22) and
//! ImportSystemConfigurationLocalREDFISH.py (v14, its built-in payload). Each makes the
//! requests the script makes, in its order, with its waits, and reads each answer as it does
//! (the substrings it looks for, the keys it indexes, the status codes it accepts). Written from
//! reading the scripts; none of their code is used.

use super::script::{Answer, Script, passed};
use idrac_sim::{Fleet, SimConfig};
use serde_json::{Value, json};
use std::time::Duration;

const MANAGER: &str = "/redfish/v1/Managers/iDRAC.Embedded.1";
const OEM_JOBS: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs";
const BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios";
const TASKS: &str = "/redfish/v1/TaskService/Tasks";
/// The filename import script's `task_uri`, with its trailing slash.
const FILENAME_TASKS: &str = "/redfish/v1/TaskService/Tasks/";

/// One script second (the POST lasts 60 of them).
const PACE: Duration = Duration::from_millis(10);

async fn fleet(model: &str) -> Fleet {
    Fleet::start(SimConfig {
        model: idrac_sim::ModelSource::Builtin(model.to_owned()),
        boot_time: Duration::from_millis(600),
        ..SimConfig::default()
    })
    .await
    .unwrap()
}

/// `check_supported_idrac_version()` and `get_server_generation()`: `GET Manager` (JSON, 200),
/// then `GET Manager?$select=Model`; "14", "15" or "16" in `Model` is iDRAC 9, whose actions
/// the scripts post to at `EID_674_Manager.*` (iDRAC 10 at `OemManager.*`).
async fn action_url(s: &Script, action: &str) -> Result<String, String> {
    let r = s.get(MANAGER).await?;
    r.json()?;
    r.expect(&[200])?;
    let r = s.get(&format!("{MANAGER}?$select=Model")).await?;
    r.expect(&[200])?;
    let model = r.text("/Model")?;
    let nine = ["14", "15", "16"].iter().any(|g| model.contains(g));
    let prefix = if nine { "EID_674_Manager" } else { "OemManager" };
    Ok(format!("{MANAGER}/Actions/Oem/{prefix}.{action}"))
}

/// `--get-target-values`: the export action's `ShareParameters.Target@Redfish.AllowableValues`,
/// under the 6.00 key or, failing that, the 7.10 one.
pub(super) async fn target_values(s: &Script) -> Result<Vec<String>, String> {
    let r = s.get(MANAGER).await?;
    r.expect(&[200])?;
    let oem = r.at("/Actions/Oem")?;
    let action = oem
        .get("#OemManager.v1_4_0.OemManager#OemManager.ExportSystemConfiguration")
        .or_else(|| oem.get("#OemManager.ExportSystemConfiguration"))
        .ok_or("KeyError #OemManager.ExportSystemConfiguration")?;
    let list = action
        .pointer("/ShareParameters/Target@Redfish.AllowableValues")
        .and_then(Value::as_array)
        .ok_or("KeyError Target@Redfish.AllowableValues")?;
    Ok(list.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

/// The export flow: POST (200 or 202, job id from `Location`), then `GET Location` until the
/// answer holds the profile (`"<SystemConfiguration Model"` for XML, `"SystemConfiguration"` for
/// JSON, looked for in the whole response as `str(response.__dict__)` shows it); each answer
/// before that must carry `Messages` and `Oem.Dell.Message` ("unable" in it fails the script).
/// Then `GET Oem/Dell/Jobs/<id>` (200 or 202). Returns the profile's text and the job.
pub(super) async fn export(s: &Script, target: &str, format: Option<&str>) -> Result<(String, Value), String> {
    let url = action_url(s, "ExportSystemConfiguration").await?;
    let format = format.unwrap_or("XML");
    let body = json!({"ExportFormat": format.to_uppercase(), "ShareParameters": {"Target": [target]}});
    let r = s.post(&url, body).await?;
    r.expect(&[200, 202])?;
    let location = r.location.clone().ok_or("no Location header")?;
    let job = r.location_id()?;
    let started = tokio::time::Instant::now();
    loop {
        let r = s.get(&location).await?;
        let whole = raw(&r);
        let done = if format == "XML" {
            whole.contains("<SystemConfiguration Model")
        } else {
            whole.contains("SystemConfiguration")
        };
        if done {
            let profile = if format == "XML" {
                let start = whole.find("<SystemConfiguration").unwrap_or(0);
                let end = whole
                    .rfind("</SystemConfiguration>")
                    .ok_or("no </SystemConfiguration>")?;
                whole[start..end + "</SystemConfiguration>".len()].to_owned()
            } else {
                r.json()?.to_string()
            };
            let j = s.get(&format!("{OEM_JOBS}/{job}")).await?;
            j.expect(&[200, 202])?;
            return Ok((profile, j.json()?.clone()));
        }
        r.at("/Messages")?;
        r.expect(&[200, 202])?;
        s.sleep(1).await;
        if started.elapsed() >= PACE * 600 {
            return Err("timeout of 10 minutes before the job was marked completed".into());
        }
        match r.at("/Oem/Dell/Message")? {
            Value::Null => s.sleep(5).await,
            Value::String(m) if m.to_lowercase().contains("unable") => {
                return Err(format!("job completed but issue detected: {m}"));
            }
            Value::String(_) => {
                r.at("/Oem/Dell/PercentComplete")?;
                s.sleep(1).await;
            }
            other => return Err(format!("Oem.Dell.Message is {other}")),
        }
    }
}

/// What `str(response.__dict__)` holds of an answer, for the scripts' substring checks: the
/// body (JSON as text, or the raw text) and the status.
fn raw(r: &Answer) -> String {
    format!("{} {}", r.status, r.body())
}

/// How an import or preview script ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// "PASS, job ID … successfully marked completed".
    Pass,
    /// Completed with "no changes".
    NoChanges,
    /// "NoReboot value detected": the changes wait for a manual reboot.
    NoReboot,
    /// Failed or CompletedWithErrors: the script prints `Messages` and stops.
    Failed(String),
}

/// The scripts' job loop: `GET <tasks>/<id>` (a status other than 200 or 202 retries, ten at
/// most; the filename import script's `tasks` ends in a slash, so it asks for
/// `TaskService/Tasks//<id>`); `Oem.Dell.Message` must be there; "no reboot" in it (the filename script; the
/// other looks for "No reboot Server"), a Failed or CompletedWithErrors JobState, or Completed
/// with a message of success or "no changes" ends the loop. Completed with "fail", "error",
/// "not", "unable", "no device configuration" or "time" in the message is the script's FAIL.
async fn job_loop(s: &Script, tasks: &str, job: &str) -> Result<(Ending, Answer), String> {
    let mut errors = 0;
    let started = tokio::time::Instant::now();
    loop {
        if errors == 10 {
            return Err("10 attempts at getting job status failed".into());
        }
        if started.elapsed() > PACE * 1800 {
            return Err("the job never ended".into());
        }
        let r = s.get(&format!("{tasks}/{job}")).await?;
        let Ok(message) = r.text("/Oem/Dell/Message") else {
            errors += 1;
            continue;
        };
        if r.status == 200 || r.status == 202 {
            s.sleep(1).await;
        } else {
            errors += 1;
            s.sleep(5).await;
            continue;
        }
        let lower = message.to_lowercase();
        let state = r.text("/Oem/Dell/JobState")?;
        if lower.contains("no reboot") {
            return Ok((Ending::NoReboot, r));
        }
        match state.as_str() {
            "Failed" | "CompletedWithErrors" => {
                r.at("/Messages")?;
                return Ok((Ending::Failed(format!("{state}: {message}")), r));
            }
            "Completed" => {
                let bad = ["fail", "error", "not", "unable", "no device configuration", "time"];
                if bad.iter().any(|b| lower.contains(b)) {
                    return Err(format!("FAIL, job marked Completed but detected issue(s): {message}"));
                }
                if lower.contains("success") {
                    r.at("/Messages")?;
                    return Ok((Ending::Pass, r));
                }
                if lower.contains("no changes") {
                    return Ok((Ending::NoChanges, r));
                }
                return Err(format!("Completed with a message the script does not judge: {message}"));
            }
            _ => {}
        }
    }
}

/// The file as the filename scripts send it: `re.sub(" \n ", "")`, `re.sub(" \n", "")`,
/// `re.sub("   ", "")`.
fn flattened(file: &str) -> String {
    file.replace(" \n ", "").replace(" \n", "").replace("   ", "")
}

/// ImportSystemConfigurationPreviewLocalFilenameREDFISH.py `-f FILE`: POST (202 required) with
/// `Target` ["ALL"], then the job loop.
async fn preview(s: &Script, file: &str) -> Result<(Ending, Answer), String> {
    let url = action_url(s, "ImportSystemConfigurationPreview").await?;
    let body = json!({"ImportBuffer": flattened(file), "ShareParameters": {"Target": ["ALL"]}});
    let r = s.post(&url, body).await?;
    r.expect(&[202])?;
    let job = r.location_id()?;
    job_loop(s, TASKS, &job).await
}

/// ImportSystemConfigurationLocalFilenameREDFISH.py `--target TARGET --filename FILE [--shutdown-type T]`:
/// POST (202 required), five seconds' wait, then the job loop.
pub(super) async fn import_file(
    s: &Script,
    target: &str,
    file: &str,
    shutdown: Option<&str>,
) -> Result<(Ending, Answer), String> {
    let url = action_url(s, "ImportSystemConfiguration").await?;
    let mut body = json!({"ImportBuffer": flattened(file), "ShareParameters": {"Target": [target]}});
    if let Some(t) = shutdown {
        body["ShutdownType"] = json!(t);
    }
    let r = s.post(&url, body).await?;
    r.expect(&[202])?;
    let job = r.location_id()?;
    s.sleep(5).await;
    job_loop(s, FILENAME_TASKS, &job).await
}

/// The per-attribute results of a finished task: (name, old, new, status).
pub(super) fn results(r: &Answer) -> Vec<(String, String, String, String)> {
    r.at("/Messages")
        .ok()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let d = m.pointer("/Oem/Dell")?;
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
            Some((text("Name"), text("OldValue"), text("NewValue"), text("Status")))
        })
        .collect()
}

/// A JSON export with `changes` (attribute name → value) made, as an editor would, pretty-printed
/// as the export script saves it.
pub(super) fn edited(json_text: &str, changes: &[(&str, &str)]) -> Result<String, String> {
    let mut v: Value = serde_json::from_str(json_text).map_err(|e| e.to_string())?;
    for c in v["SystemConfiguration"]["Components"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        for a in c["Attributes"].as_array_mut().into_iter().flatten() {
            if let Some((_, value)) = changes.iter().find(|(name, _)| a["Name"] == *name) {
                a["Value"] = json!(value);
            }
        }
    }
    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())
}

pub(super) async fn bios_value(s: &Script, name: &str) -> Result<Value, String> {
    let r = s.get(BIOS).await?;
    r.expect(&[200])?;
    Ok(r.at(&format!("/Attributes/{name}"))?.clone())
}

#[tokio::test]
async fn dell_export_script_lists_the_targets_and_exports_idrac_and_bios_as_xml_and_json() {
    let fleet = fleet("r7625").await;
    let s = Script::new(&fleet.hosts()[0].url, PACE);
    let flow = async {
        let targets = target_values(&s).await?;
        for t in ["ALL", "IDRAC", "BIOS", "NIC", "RAID", "System", "LifecycleController"] {
            if !targets.iter().any(|x| x == t) {
                return Err(format!("--get-target-values lacks {t}: {targets:?}"));
            }
        }
        let (xml, job) = export(&s, "IDRAC,BIOS", None).await?;
        if job["JobState"] != "Completed" || job["JobType"] != "ExportConfiguration" || job["MessageId"] != "SYS043" {
            return Err(format!("the export job: {job}"));
        }
        let (doc, _) = redfish_client::oem::dell::scp::ScpDocument::parse(&xml).map_err(|e| e.to_string())?;
        let fqdds: Vec<&str> = doc.components.iter().map(|c| c.fqdd.as_str()).collect();
        if fqdds != ["iDRAC.Embedded.1", "BIOS.Setup.1-1"] {
            return Err(format!("components {fqdds:?}"));
        }
        if !xml.contains("<Attribute Name=\"IPMILan.1#Enable\">") || !xml.contains("<Attribute Name=\"LogicalProc\">") {
            return Err(format!("the XML lacks iDRAC or BIOS attributes:\n{xml}"));
        }
        let (json_text, _) = export(&s, "BIOS", Some("JSON")).await?;
        let v: Value = serde_json::from_str(&json_text).map_err(|e| e.to_string())?;
        let comps = v["SystemConfiguration"]["Components"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if comps.len() != 1 || comps[0]["FQDD"] != "BIOS.Setup.1-1" {
            return Err(format!("JSON components {comps:?}"));
        }
        Ok(())
    };
    passed("dell export", &[&s], flow.await);
}

#[tokio::test]
async fn dell_preview_script_reports_the_changes_a_modified_export_would_make() {
    let fleet = fleet("r7625").await;
    let s = Script::new(&fleet.hosts()[0].url, PACE);
    let flow = async {
        let (xml, _) = export(&s, "BIOS", None).await?;
        let (ending, _) = preview(&s, &xml).await?;
        if ending != Ending::NoChanges {
            return Err(format!("an unchanged export previews as {ending:?}"));
        }
        let changed = xml.replace(
            "<Attribute Name=\"LogicalProc\">Enabled</Attribute>",
            "<Attribute Name=\"LogicalProc\">Disabled</Attribute>",
        );
        if changed == xml {
            return Err("the export does not hold LogicalProc Enabled".into());
        }
        let (ending, r) = preview(&s, &changed).await?;
        if ending != Ending::Pass || r.text("/Oem/Dell/MessageId")? != "SYS081" {
            return Err(format!("the preview ended {ending:?}"));
        }
        let got = results(&r);
        let logical = got.iter().find(|(n, ..)| n == "LogicalProc");
        if logical.map(|(_, o, n, st)| (o.as_str(), n.as_str(), st.as_str()))
            != Some(("Enabled", "Disabled", "Success"))
        {
            return Err(format!("results {got:?}"));
        }
        let notes = r.at("/Messages")?.to_string();
        if !notes.contains("SYS087") {
            return Err("no SYS087 (a reboot will occur) in the preview".into());
        }
        // A preview changes nothing.
        if bios_value(&s, "LogicalProc").await? != "Enabled" {
            return Err("the preview changed LogicalProc".into());
        }
        Ok(())
    };
    passed("dell preview", &[&s], flow.await);
}

#[tokio::test]
async fn dell_import_script_applies_an_edited_json_export_through_one_reboot() {
    let fleet = fleet("r7625").await;
    let s = Script::new(&fleet.hosts()[0].url, PACE);
    let flow = async {
        let (json_text, _) = export(&s, "IDRAC,BIOS", Some("JSON")).await?;
        let file = edited(
            &json_text,
            &[("LogicalProc", "Disabled"), ("IPMILan.1#Enable", "Enabled")],
        )?;
        let (ending, r) = import_file(&s, "ALL", &file, Some("Graceful")).await?;
        if ending != Ending::Pass || r.text("/Oem/Dell/MessageId")? != "SYS053" {
            return Err(format!("the import ended {ending:?}"));
        }
        let got = results(&r);
        for name in ["LogicalProc", "IPMILan.1#Enable"] {
            if !got.iter().any(|(n, _, _, st)| n == name && st == "Success") {
                return Err(format!("no success for {name}: {got:?}"));
            }
        }
        if bios_value(&s, "LogicalProc").await? != "Disabled" {
            return Err("LogicalProc was not applied".into());
        }
        let idrac = s
            .get("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1")
            .await?;
        if idrac.text("/Attributes/IPMILan.1.Enable")? != "Enabled" {
            return Err("IPMILan.1.Enable was not applied".into());
        }
        // The same file again: nothing left to change.
        let (ending, _) = import_file(&s, "ALL", &file, None).await?;
        if ending != Ending::NoChanges {
            return Err(format!("a second import ended {ending:?}"));
        }
        Ok(())
    };
    passed("dell import", &[&s], flow.await);
    assert_eq!(
        fleet.hosts()[0].host.stats.to_json("x")["resets"],
        0,
        "the iDRAC restarted the host itself: no client reset"
    );
}

#[tokio::test]
async fn dell_import_script_with_no_reboot_leaves_the_job_paused_until_the_host_restarts() {
    let fleet = fleet("r7625").await;
    let s = Script::new(&fleet.hosts()[0].url, PACE);
    let flow = async {
        let (xml, _) = export(&s, "BIOS", None).await?;
        let changed = xml.replace(
            "<Attribute Name=\"LogicalProc\">Enabled</Attribute>",
            "<Attribute Name=\"LogicalProc\">Disabled</Attribute>",
        );
        let (ending, r) = import_file(&s, "BIOS", &changed, Some("NoReboot")).await?;
        if ending != Ending::NoReboot || r.text("/Oem/Dell/JobState")? != "Paused" {
            return Err(format!("the NoReboot import ended {ending:?}"));
        }
        if bios_value(&s, "LogicalProc").await? != "Enabled" {
            return Err("a NoReboot import changed the BIOS before any reboot".into());
        }
        let job = r.text("/Id")?;
        // The manual reboot the script tells the user to make.
        s.post(
            "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset",
            json!({"ResetType": "ForceRestart"}),
        )
        .await?
        .expect(&[204])?;
        // The script has ended; the user looks at the job again once the host is in POST.
        while s.get(&format!("{TASKS}/{job}")).await?.text("/Oem/Dell/JobState")? == "Paused" {
            s.sleep(1).await;
        }
        let (ending, r) = job_loop(&s, FILENAME_TASKS, &job).await?;
        if ending != Ending::Pass || r.text("/Oem/Dell/MessageId")? != "SYS053" {
            return Err(format!("after the reboot the job ended {ending:?}"));
        }
        while fleet.hosts()[0].host.boot_remaining().is_some() {
            tokio::time::sleep(PACE * 10).await;
        }
        if bios_value(&s, "LogicalProc").await? != "Disabled" {
            return Err("the paused job did not apply LogicalProc at the reboot".into());
        }
        Ok(())
    };
    passed("dell import NoReboot", &[&s], flow.await);
}

#[tokio::test]
async fn dell_built_in_import_payload_sets_ipmi_and_reports_the_user_fields_the_emulator_lacks() {
    let fleet = fleet("r7525").await;
    let s = Script::new(&fleet.hosts()[0].url, PACE);
    let flow = async {
        let url = action_url(&s, "ImportSystemConfiguration").await?;
        let payload = json!({"ShareParameters": {"Target": ["ALL"]}, "ImportBuffer": "<SystemConfiguration><Component FQDD=\"iDRAC.Embedded.1\"><Attribute Name=\"Users.3#IpmiLanPrivilege\">Administrator</Attribute><Attribute Name=\"Users.3#SolEnable\">Enabled</Attribute><Attribute Name=\"IPMILan.1#Enable\">Enabled</Attribute></Component></SystemConfiguration>"});
        let r = s.post(&url, payload).await?;
        r.expect(&[202])?;
        let job = r.location_id()?;
        let (ending, r) = job_loop(&s, TASKS, &job).await?;
        let Ending::Failed(how) = ending else {
            return Err(format!("a partly failed import ended {ending:?}"));
        };
        if !how.starts_with("CompletedWithErrors") {
            return Err(how);
        }
        let got = results(&r);
        let status = |name: &str| got.iter().find(|(n, ..)| n == name).map(|(.., st)| st.clone());
        if status("IPMILan.1#Enable").as_deref() != Some("Success")
            || status("Users.3#IpmiLanPrivilege").as_deref() != Some("Failure")
        {
            return Err(format!("results {got:?}"));
        }
        Ok(())
    };
    passed("dell import built-in payload", &[&s], flow.await);
}
