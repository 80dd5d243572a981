//! The iDRAC10 flows of Dell's current scripts (github.com/dell/iDRAC-Redfish-Scripting,
//! `Redfish Python/`, read at commit e7ba763; PyPI's copy predates iDRAC10) replayed as
//! transcripts against the 17G tree (r7725, firmware 1.30.10.50), with a session token as the
//! scripts' `-x` sends it, since 1.30.10.50 leaves HTTP Basic authentication Unadvertised:
//! boot order (`ChangeBiosBootOrderREDFISH.py` v13), one-time boot
//! (`SetNextOneTimeBootDeviceREDFISH.py`), a configuration profile exported and imported
//! (`ExportSystemConfigurationLocalREDFISH.py`, `ImportSystemConfigurationLocalFilenameREDFISH.py`),
//! users (`CreateDeleteIdracUsersREDFISH.py`, `ChangeIdracUserPasswordREDFISH.py`) and the
//! session script (`CreateXAuthTokenSessionREDFISH.py`). Each takes the scripts' iDRAC10 branch
//! (`idrac_version = 10` when the Manager's `Model` names no 12G..16G). The scripts themselves
//! were also run by hand against `rftune sim --model r7725` with `-x`, each ending with its PASS
//! lines and the requests below (idrac-sim/README.md, "Real clients against it"). Written from
//! reading the scripts; none of their code is used.

use super::dell_scp::{Ending, bios_value, edited, export, import_file, results, target_values};
use super::dell_scripts::{BIOS, PACE, SYSTEM, reboot_gracefully, wait_completed, wait_scheduled};
use super::script::{Auth, Script, passed};
use idrac_sim::{Fleet, ModelSource, SimConfig};
use serde_json::{Value, json};
use std::time::Duration;

const MANAGER: &str = "/redfish/v1/Managers/iDRAC.Embedded.1";
const SETTINGS: &str = "/redfish/v1/Systems/System.Embedded.1/Settings";
const BOOT_OPTIONS: &str = "/redfish/v1/Systems/System.Embedded.1/BootOptions";
const ACCOUNTS: &str = "/redfish/v1/AccountService/Accounts";
const IDRAC_ATTRIBUTES: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/iDRAC.Embedded.1";

/// One 17G host whose POST lasts 60 script seconds.
async fn fleet() -> Fleet {
    Fleet::start(SimConfig {
        model: ModelSource::Builtin("r7725".into()),
        boot_time: Duration::from_millis(600),
        ..SimConfig::default()
    })
    .await
    .unwrap()
}

/// A script run with `-x TOKEN` against host 0.
async fn script(fleet: &Fleet) -> Script {
    Script::with_session(&fleet.hosts()[0].url, PACE).await.unwrap()
}

/// `get_server_generation()`: `GET Manager?$select=Model`; "12"/"13" is iDRAC 8, "14"/"15"/"16"
/// iDRAC 9, anything else iDRAC 10. These flows take the iDRAC 10 branch only.
async fn require_idrac10(s: &Script) -> Result<(), String> {
    let r = s.get(&format!("{MANAGER}?$select=Model")).await?;
    r.expect(&[200])?;
    let model = r.text("/Model")?;
    let older = ["12", "13", "14", "15", "16"].iter().any(|g| model.contains(g));
    if older {
        return Err(format!("{model:?} is not iDRAC 10"));
    }
    Ok(())
}

fn stats(fleet: &Fleet) -> Value {
    fleet.hosts()[0].host.stats.to_json("x")
}

/// The host out of POST after a script's reboot (the scripts end there).
async fn settled(fleet: &Fleet) {
    let host = &fleet.hosts()[0].host;
    for _ in 0..400 {
        if host.boot_remaining().is_none() && host.snapshot().2 {
            return;
        }
        tokio::time::sleep(PACE).await;
    }
    panic!("the host never came out of POST");
}

#[tokio::test]
async fn dell_change_bios_boot_order_on_idrac10_writes_the_settings_object_with_one_job_and_one_reboot() {
    let fleet = fleet().await;
    let s = script(&fleet).await;
    let flow = async {
        // check_supported_idrac_version(): GET BootOptions (.json() before the status).
        let r = s.get(BOOT_OPTIONS).await?;
        r.json()?;
        r.expect(&[200])?;
        require_idrac10(&s).await?;
        // change_boot_order(): BootMode from GET Bios, then the PATCH at Systems/.../Settings.
        let bios = s.get(BIOS).await?;
        bios.text("/Attributes/BootMode")?;
        let wanted = json!(["Boot0001", "Boot0000", "Boot0002"]);
        let r = s.patch(SETTINGS, json!({"Boot": {"BootOrder": wanted}})).await?;
        r.expect(&[200, 202])?;
        let job = r.location_id()?;
        wait_scheduled(&s, &job).await?;
        reboot_gracefully(&s).await?;
        wait_completed(&s, &job).await?;
        // get_current_boot_order(): GET Bios, GET BootOptions?$expand=*($levels=1).
        s.get(BIOS).await?.text("/Attributes/BootMode")?;
        let options = s.get(&format!("{BOOT_OPTIONS}?$expand=*($levels=1)")).await?;
        if options.at("/Members")?.as_array().is_none_or(Vec::is_empty) {
            return Err("no boot devices detected".into());
        }
        let system = s.get(SYSTEM).await?;
        if system.at("/Boot/BootOrder")? != &wanted {
            return Err(format!("boot order after the job: {}", system.at("/Boot/BootOrder")?));
        }
        Ok(())
    };
    passed("ChangeBiosBootOrderREDFISH -x --change (iDRAC10)", &[&s], flow.await);
    let stats = stats(&fleet);
    assert_eq!(
        (stats["jobs_created"].as_u64(), stats["posts"].as_u64()),
        (Some(1), Some(1)),
        "{stats}"
    );
    assert_eq!(
        stats["requests"]["by_path"]["PATCH /redfish/v1/Systems/System.Embedded.1"],
        Value::Null,
        "nothing written to the System itself"
    );
}

#[tokio::test]
async fn dell_set_next_one_time_boot_on_idrac10_reads_and_writes_the_settings_object_without_a_job() {
    let fleet = fleet().await;
    let s = script(&fleet).await;
    let flow = async {
        // check_supported_idrac_version(): GET System.
        s.get(SYSTEM).await?.expect(&[200])?;
        require_idrac10(&s).await?;
        // --get: the allowable targets and the current one, from the settings object.
        let r = s.get(SETTINGS).await?;
        let allowed = r.at("/Boot/BootSourceOverrideTarget@Redfish.AllowableValues")?.clone();
        if !allowed.as_array().is_some_and(|a| a.contains(&json!("Pxe"))) {
            return Err(format!("Pxe not allowed: {allowed}"));
        }
        r.text("/Boot/BootSourceOverrideTarget")?;
        // --device Pxe --reboot: the target alone, 200 required (after five seconds' sleep).
        let r = s
            .patch(SETTINGS, json!({"Boot": {"BootSourceOverrideTarget": "Pxe"}}))
            .await?;
        s.sleep(5).await;
        r.expect(&[200])?;
        reboot_gracefully(&s).await
    };
    passed(
        "SetNextOneTimeBootDeviceREDFISH -x --device Pxe --reboot (iDRAC10)",
        &[&s],
        flow.await,
    );
    settled(&fleet).await;
    assert_eq!(fleet.hosts()[0].host.stats.booted(), ["Pxe (once)"]);
    assert_eq!(stats(&fleet)["jobs_created"], 0, "no BIOS job for a one-time boot");
}

#[tokio::test]
async fn dell_scp_export_and_import_on_idrac10_post_to_the_oem_manager_targets_with_listed_targets() {
    let fleet = fleet().await;
    let s = script(&fleet).await;
    let flow = async {
        let targets = target_values(&s).await?;
        if !targets.contains(&"BIOS".to_owned()) {
            return Err(format!("--get-target-values: {targets:?}"));
        }
        // --target ALL (XML), then --target IDRAC,BIOS --format-type JSON, sent as ["IDRAC,BIOS"].
        let (xml, _) = export(&s, "ALL", None).await?;
        if !xml.contains("<SystemConfiguration Model=\"PowerEdge R7725\"") {
            return Err("the XML export names another model".into());
        }
        let (json_text, _) = export(&s, "IDRAC,BIOS", Some("JSON")).await?;
        let file = edited(
            &json_text,
            &[("MemTest", "Enabled"), ("NTPConfigGroup.1#NTPEnable", "Enabled")],
        )?;
        let (ending, r) = import_file(&s, "ALL", &file, None).await?;
        if ending != Ending::Pass || r.text("/Oem/Dell/MessageId")? != "SYS053" {
            return Err(format!("the import ended {ending:?}"));
        }
        let got = results(&r);
        for name in ["MemTest", "NTPConfigGroup.1#NTPEnable"] {
            if !got.iter().any(|(n, _, _, st)| n == name && st == "Success") {
                return Err(format!("no success for {name}: {got:?}"));
            }
        }
        if bios_value(&s, "MemTest").await? != "Enabled" {
            return Err("MemTest was not applied".into());
        }
        Ok(())
    };
    passed("Export/ImportSystemConfiguration -x (iDRAC10)", &[&s], flow.await);
    let by_path = &stats(&fleet)["requests"]["by_path"];
    assert_eq!(
        by_path["POST /redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/OemManager.ExportSystemConfiguration"],
        2
    );
    assert_eq!(
        by_path["POST /redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/OemManager.ImportSystemConfiguration"],
        1
    );
}

#[tokio::test]
async fn dell_user_scripts_on_idrac10_create_by_post_change_the_password_and_delete_by_delete() {
    let fleet = fleet().await;
    let s = script(&fleet).await;
    let flow = async {
        // check_supported_idrac_version(): GET Manager; then the generation.
        let checked = || async {
            s.get(MANAGER).await?.expect(&[200])?;
            require_idrac10(&s).await
        };
        // CreateDeleteIdracUsersREDFISH.py --user-id 5 --new-user ops --new-pwd … --privilege-role 2
        // --enable y: POST the collection with the Id; an "error" key or a status other than 201
        // fails it.
        checked().await?;
        let created = s
            .post(
                ACCOUNTS,
                json!({"UserName": "ops", "Password": "Passw0rd!", "Id": "5", "RoleId": "Operator", "Enabled": true}),
            )
            .await?;
        if created.json()?.get("error").is_some() {
            return Err(format!("POST command failed: {}", created.body()));
        }
        created.expect(&[201])?;
        // The same without --user-id: the iDRAC picks the slot.
        checked().await?;
        let second = s
            .post(
                ACCOUNTS,
                json!({"UserName": "audit", "Password": "Passw0rd!", "RoleId": "ReadOnly", "Enabled": true}),
            )
            .await?;
        second.expect(&[201])?;
        // --get: the accounts, expanded.
        checked().await?;
        let all = s.get(&format!("{ACCOUNTS}?$expand=*($levels=1)")).await?;
        all.expect(&[200])?;
        let names: Vec<String> = all
            .at("/Members")?
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["UserName"].as_str().map(str::to_owned))
            .collect();
        if !names.contains(&"ops".to_owned()) || !names.contains(&"audit".to_owned()) {
            return Err(format!("the new users are not listed: {names:?}"));
        }
        // ChangeIdracUserPasswordREDFISH.py --user-id 5 --new-pwd …: PATCH the slot, 200.
        checked().await?;
        s.patch(&format!("{ACCOUNTS}/5"), json!({"Password": "N3wPassw0rd!"}))
            .await?
            .expect(&[200])?;
        // --delete 5: DELETE the slot, 204.
        checked().await?;
        s.delete(&format!("{ACCOUNTS}/5")).await?.expect(&[204])?;
        Ok(names)
    };
    passed(
        "CreateDeleteIdracUsers/ChangeIdracUserPassword -x (iDRAC10)",
        &[&s],
        flow.await,
    );
    let user = |n: usize| {
        let s = &s;
        async move {
            s.get(&format!("{ACCOUNTS}/{n}"))
                .await
                .unwrap()
                .text("/UserName")
                .unwrap()
        }
    };
    assert_eq!(user(5).await, "", "deleted");
    assert_eq!(user(3).await, "audit", "the first free slot");
}

/// CreateXAuthTokenSessionREDFISH.py `--delete ID` sends Basic credentials, which firmware
/// 1.30.10.50 refuses while Basic authentication is Unadvertised (Dell's scripts issue 371
/// reports its PowerShell twin failing so): the script prints its FAIL with the iDRAC's 401;
/// once `Redfish.1.BasicAuthState` is Enabled (the workaround the issue gives), it passes.
#[tokio::test]
async fn dell_session_script_deletes_with_basic_credentials_which_1_30_refuses_until_basic_is_enabled() {
    let fleet = fleet().await;
    let s = script(&fleet).await;
    // get_redfish_version() (GET /redfish/v1 with Basic: open), then the DELETE with Basic.
    let delete = || async {
        s.use_auth(Auth::Basic);
        s.get("/redfish/v1").await?.expect(&[200])?;
        s.delete("/redfish/v1/SessionService/Sessions/1").await
    };
    let refused = passed(
        "CreateXAuthTokenSessionREDFISH --delete, Basic Unadvertised",
        &[&s],
        delete().await,
    );
    assert_eq!(refused.status, 401, "the script's FAIL");
    assert_eq!(
        refused.text("/error/@Message.ExtendedInfo/0/MessageId").unwrap(),
        "Base.1.18.AccessDenied"
    );
    // The session lives on; with it, Basic authentication is turned back on.
    let token = Script::with_session(&fleet.hosts()[0].url, PACE).await.unwrap();
    token
        .patch(
            IDRAC_ATTRIBUTES,
            json!({"Attributes": {"Redfish.1.BasicAuthState": "Enabled"}}),
        )
        .await
        .unwrap()
        .expect(&[200])
        .unwrap();
    let deleted = passed(
        "CreateXAuthTokenSessionREDFISH --delete, Basic Enabled",
        &[&s],
        delete().await,
    );
    assert_eq!(deleted.status, 204, "the script takes 200 or 204");
}
