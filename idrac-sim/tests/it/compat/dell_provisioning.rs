//! Dell's provisioning scripts (github.com/dell/iDRAC-Redfish-Scripting, `Redfish Python/`, read
//! at commit e7ba763) replayed as transcripts, as `dell_scripts` does for the BIOS ones: boot
//! order (`ChangeBiosBootOrderREDFISH.py`), one-time boot (`SetNextOneTimeBootDeviceREDFISH.py`),
//! reset to defaults (`BiosResetToDefaultsREDFISH.py`), BIOS passwords
//! (`BiosChangePasswordREDFISH.py`) and Secure Boot keys (`SecureBootResetKeysREDFISH.py`).
//! Written from reading the scripts; none of their code is used.

use super::dell_scripts::{
    BIOS, OEM_JOBS, PACE, SYSTEM, check_bios_supported, fleet, reboot_gracefully, scripts, set_bios_with_reboot,
    wait_completed, wait_scheduled,
};
use super::script::{Script, passed};
use serde_json::{Value, json};
use std::time::Duration;

const MANAGER_MODEL: &str = "/redfish/v1/Managers/iDRAC.Embedded.1?$select=Model";
const BOOT_OPTIONS: &str = "/redfish/v1/Systems/System.Embedded.1/BootOptions?$expand=*($levels=1)";
const RESET_BIOS: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/Actions/Bios.ResetBios";
const CHANGE_PASSWORD: &str = "/redfish/v1/Systems/System.Embedded.1/Bios/Actions/Bios.ChangePassword";
const RTD_FLAG: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/LifecycleController.Embedded.1?$select=Attributes/LCAttributes.1.BIOSRTDRequested";
const SECURE_BOOT: &str = "/redfish/v1/Systems/System.Embedded.1/SecureBoot";
const RESET_KEYS: &str = "/redfish/v1/Systems/System.Embedded.1/SecureBoot/Actions/SecureBoot.ResetKeys";
const LCLOG: &str = "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries";

/// Lifecycle-log entries of `code`, by `$filter` as Dell's Ansible modules read them.
async fn logged(s: &Script, code: &str) -> usize {
    s.get(&format!("{LCLOG}?$filter=MessageId%20eq%20'{code}'"))
        .await
        .ok()
        .and_then(|r| r.at("/Members").ok().and_then(Value::as_array).map(Vec::len))
        .unwrap_or(0)
}

/// `get_server_generation()`: `GET Manager?$select=Model`; 12G/13G are iDRAC8, 14G-16G iDRAC9,
/// anything else iDRAC10 (which these scripts address through `Systems/…/Settings`).
async fn generation(s: &Script) -> Result<u8, String> {
    let r = s.get(MANAGER_MODEL).await?;
    r.expect(&[200])?;
    let model = r.text("/Model")?;
    Ok(if model.contains("12") || model.contains("13") {
        8
    } else if ["14", "15", "16"].iter().any(|g| model.contains(g)) {
        9
    } else {
        10
    })
}

/// The boot option references in `BootOptions?$expand=*($levels=1)` (`get_current_boot_order()`),
/// after `BootMode` from `GET Bios`.
async fn boot_options(s: &Script) -> Result<Vec<Value>, String> {
    let bios = s.get(BIOS).await?;
    bios.expect(&[200])?;
    bios.text("/Attributes/BootMode")?;
    let r = s.get(BOOT_OPTIONS).await?;
    r.expect(&[200])?;
    let members = r.at("/Members")?.as_array().cloned().unwrap_or_default();
    if members.is_empty() {
        return Err("no boot devices detected".into());
    }
    Ok(members)
}

/// The system's `Boot.BootOrder`.
async fn boot_order(s: &Script) -> Result<Vec<String>, String> {
    let r = s.get(SYSTEM).await?;
    r.expect(&[200])?;
    Ok(r.at("/Boot/BootOrder")?
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect())
}

#[tokio::test]
async fn dell_change_bios_boot_order_reorders_with_one_job_and_one_reboot() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let host = &fleet.hosts()[0].host;
    let flow = async {
        check_bios_supported(s).await?;
        if generation(s).await? != 9 {
            return Err("the 16G tree should be iDRAC9".into());
        }
        let options = boot_options(s).await?;
        let ids: Vec<String> = options
            .iter()
            .filter_map(|o| o["Id"].as_str().map(str::to_owned))
            .collect();
        // `--change Boot0001,Boot0000,Boot0002`: the disk first.
        let wanted = vec![ids[1].clone(), ids[0].clone(), ids[2].clone()];
        let bios = s.get(BIOS).await?;
        bios.text("/Attributes/BootMode")?;
        let r = s.patch(SYSTEM, json!({"Boot": {"BootOrder": wanted}})).await?;
        r.expect(&[200, 202])?;
        let job = r.location_id()?;
        wait_scheduled(s, &job).await?;
        reboot_gracefully(s).await?;
        wait_completed(s, &job).await?;
        let after = boot_order(s).await?;
        if after != wanted {
            return Err(format!("boot order after the job: {after:?}, wanted {wanted:?}"));
        }
        let en = super::dell_scripts::get_attribute(s, "SetBootOrderEn").await?;
        Ok(en)
    };
    let en = passed("ChangeBiosBootOrderREDFISH --change", &[s], flow.await);
    assert_eq!(
        en,
        json!("RAID.SL.3-1,NIC.PxeDevice.1-1,Optical.iDRACVirtual.1-1"),
        "the BIOS's list follows"
    );
    let stats = host.stats.to_json("x");
    assert_eq!(
        (stats["jobs_created"].as_u64(), stats["posts"].as_u64()),
        (Some(1), Some(1)),
        "{stats}"
    );
}

#[tokio::test]
async fn dell_change_bios_boot_order_with_an_unknown_option_fails_with_boot016() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let r = s
        .patch(SYSTEM, json!({"Boot": {"BootOrder": ["Boot0001", "Boot00FF"]}}))
        .await
        .unwrap();
    assert_eq!(r.status, 400);
    assert!(
        r.text("/error/@Message.ExtendedInfo/0/MessageId")
            .unwrap()
            .ends_with("BOOT016")
    );
}

#[tokio::test]
async fn dell_set_next_one_time_boot_device_boots_pxe_once_then_the_boot_order_again() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let host = &fleet.hosts()[0].host;
    let flow = async {
        check_bios_supported(s).await?;
        generation(s).await?;
        // `--get`: the allowable targets.
        let r = s.get(SYSTEM).await?;
        r.expect(&[200])?;
        let allowed = r.at("/Boot/BootSourceOverrideTarget@Redfish.AllowableValues")?.clone();
        if !allowed.as_array().is_some_and(|a| a.contains(&json!("Pxe"))) {
            return Err(format!("Pxe not allowed: {allowed}"));
        }
        // `--device Pxe --reboot`: the target alone, no Enabled and no Mode.
        let r = s
            .patch(SYSTEM, json!({"Boot": {"BootSourceOverrideTarget": "Pxe"}}))
            .await?;
        s.sleep(5).await;
        r.expect(&[200])?;
        reboot_gracefully(s).await?;
        // The script ends here; what the host shows after the boot:
        for _ in 0..200 {
            if host.boot_remaining().is_none() && host.snapshot().2 {
                break;
            }
            tokio::time::sleep(PACE).await;
        }
        let r = s.get(SYSTEM).await?;
        Ok((
            r.text("/Boot/BootSourceOverrideTarget")?,
            r.text("/Boot/BootSourceOverrideEnabled")?,
        ))
    };
    let after = passed(
        "SetNextOneTimeBootDeviceREDFISH --device Pxe --reboot",
        &[s],
        flow.await,
    );
    assert_eq!(after, ("None".to_owned(), "Disabled".to_owned()), "used up by one boot");
    assert_eq!(host.stats.booted(), ["Pxe (once)"]);
    assert_eq!(
        host.stats.to_json("x")["jobs_created"],
        0,
        "no BIOS job for a one-time boot"
    );
}

#[tokio::test]
async fn dell_set_next_one_time_boot_device_boots_a_uefi_target_by_its_device_path() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let host = &fleet.hosts()[0].host;
    let flow = async {
        check_bios_supported(s).await?;
        generation(s).await?;
        // `--get-uefi-target`: the options with their paths.
        let options = s.get(BOOT_OPTIONS).await?;
        options.expect(&[200])?;
        let path = options.text("/Members/1/UefiDevicePath")?;
        let r = s
            .patch(
                SYSTEM,
                json!({"Boot": {"BootSourceOverrideTarget": "UefiTarget", "UefiTargetBootSourceOverride": path}}),
            )
            .await?;
        s.sleep(5).await;
        r.expect(&[200])?;
        reboot_gracefully(s).await?;
        Ok(path)
    };
    let path = passed(
        "SetNextOneTimeBootDeviceREDFISH --device UefiTarget --uefi-target",
        &[s],
        flow.await,
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while host.stats.booted().is_empty() && std::time::Instant::now() < deadline {
        // Time moves for the host when it is asked something.
        host.boot_remaining();
        tokio::time::sleep(PACE).await;
    }
    assert_eq!(host.stats.booted(), [format!("UefiTarget {path} (once)")]);
}

#[tokio::test]
async fn dell_bios_reset_to_defaults_sets_the_flag_and_the_reboot_restores_the_defaults() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        // A value off its default first (GetSetBiosAttributesREDFISH.py, with its reboot).
        set_bios_with_reboot(s, &["MemTest"], &["Enabled"]).await?;
        check_bios_supported(s).await?;
        // `--get`: the flag, then the reset, then the flag again.
        let flag = |r: &super::script::Answer| r.text("/Attributes/LCAttributes.1.BIOSRTDRequested");
        let before = s.get(RTD_FLAG).await?;
        before.expect(&[200])?;
        let before = flag(&before)?;
        let r = s.post(RESET_BIOS, json!({})).await?;
        r.expect(&[200])?;
        let requested = flag(&s.get(RTD_FLAG).await?)?;
        reboot_gracefully(s).await?;
        let mut after = String::new();
        for _ in 0..200 {
            after = flag(&s.get(RTD_FLAG).await?)?;
            if after == "False" {
                break;
            }
            s.sleep(1).await;
        }
        let value = super::dell_scripts::get_attribute(s, "MemTest").await?;
        Ok((before, requested, after, value))
    };
    let got = passed("BiosResetToDefaultsREDFISH --reset", &[s], flow.await);
    assert_eq!(
        got,
        ("False".into(), "True".into(), "False".into(), json!("Disabled")),
        "flag False → True → False, and the default back"
    );
    assert_eq!(logged(s, "UEFI0157").await, 1, "UEFI0157 once");
}

/// `BiosChangePasswordREDFISH.py --type 2 --old "" --new X`: the action (200), a job on
/// `Oem/Dell/Jobs` (200, the id found in the response), scheduled, the reboot, completed.
async fn change_password(s: &Script, old: &str, new: &str) -> Result<(), String> {
    check_bios_supported(s).await?;
    let r = s
        .post(
            CHANGE_PASSWORD,
            json!({"PasswordName": "SetupPassword", "OldPassword": old, "NewPassword": new}),
        )
        .await?;
    r.expect(&[200])?;
    let r = s
        .post(
            OEM_JOBS,
            json!({"TargetSettingsURI": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings"}),
        )
        .await?;
    r.expect(&[200])?;
    let job = r.location_id()?;
    wait_scheduled(s, &job).await?;
    reboot_gracefully(s).await?;
    let done = wait_completed(s, &job).await?;
    if done.text("/Message")? != "Job completed successfully." {
        return Err("the job did not say it completed successfully".into());
    }
    Ok(())
}

#[tokio::test]
async fn dell_bios_change_password_sets_one_and_a_wrong_old_one_gets_bios021() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let secret = "Dell-Setup-7";
    passed(
        "BiosChangePasswordREDFISH --type 2 (set)",
        &[s],
        change_password(s, "", secret).await,
    );
    let hash = super::dell_scripts::get_attribute(s, "SHA256SetupPassword")
        .await
        .unwrap();
    assert!(
        hash.as_str().is_some_and(|h| h.len() == 64),
        "the BIOS shows a hash now: {hash}"
    );
    assert!(!hash.to_string().contains(secret));
    // A wrong old password: the script stops with FAIL on the 400.
    let r = s
        .post(
            CHANGE_PASSWORD,
            json!({"PasswordName": "SetupPassword", "OldPassword": "not-it", "NewPassword": "x"}),
        )
        .await
        .unwrap();
    assert_eq!(r.status, 400);
    assert!(
        r.text("/error/@Message.ExtendedInfo/0/MessageId")
            .unwrap()
            .ends_with("BIOS021")
    );
    // Clearing with the right old one.
    passed(
        "BiosChangePasswordREDFISH --type 2 (clear)",
        &[s],
        change_password(s, secret, "").await,
    );
    let hash = super::dell_scripts::get_attribute(s, "SHA256SetupPassword")
        .await
        .unwrap();
    assert_eq!(hash, json!(""));
}

#[tokio::test]
async fn dell_secure_boot_reset_keys_needs_the_custom_policy_then_completes_at_the_reboot() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        // `check_supported_idrac_version()`, then `--get-keytypes`.
        s.get(SECURE_BOOT).await?.expect(&[200])?;
        let r = s.get(SECURE_BOOT).await?;
        let types = r
            .at("/Actions/#SecureBoot.ResetKeys/ResetKeysType@Redfish.AllowableValues")?
            .clone();
        // `--reset ResetAllKeysToDefault` under the Standard policy: the iDRAC says why.
        let refused = s
            .post(RESET_KEYS, json!({"ResetKeysType": "ResetAllKeysToDefault"}))
            .await?;
        if refused.status != 400 {
            return Err(format!("reset under Standard answered {}", refused.status));
        }
        let why = refused.text("/error/@Message.ExtendedInfo/0/MessageId")?;
        // The script's own `--set` treats a 200 to its PATCH as a failure (its check is
        // inverted at e7ba763): the policy is set the way GetSetBiosAttributesREDFISH.py sets a
        // value, with its job and reboot.
        set_bios_with_reboot(s, &["SecureBootPolicy"], &["Custom"]).await?;
        let r = s
            .post(RESET_KEYS, json!({"ResetKeysType": "ResetAllKeysToDefault"}))
            .await?;
        r.expect(&[200, 202])?;
        // `--reboot`: the reset completes at that boot.
        reboot_gracefully(s).await?;
        Ok((types, why))
    };
    let (types, why) = passed("SecureBootResetKeysREDFISH --reset --reboot", &[s], flow.await);
    assert_eq!(types.as_array().map(Vec::len), Some(7), "{types}");
    assert!(why.ends_with("SYS439"), "{why}");
    let host = &fleet.hosts()[0].host;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut saved = false;
    while !saved && std::time::Instant::now() < deadline {
        saved = logged(s, "UEFI0286").await == 1;
        tokio::time::sleep(PACE * 10).await;
    }
    assert!(saved, "UEFI0286 once the BIOS saved the keys");
    assert_eq!(logged(s, "SWC9009").await, 1, "the reset was logged as scheduled");
    assert_eq!(
        host.stats.to_json("x")["jobs_created"],
        1,
        "only the policy's job: the reset has none"
    );
}

/// `SetHdPlaceHolderFirstBootOrderDeviceREDFISH.py`'s ordering step (lines 150-170, 380-392):
/// `SetBootOrderFqdd1 = <device>` staged with ApplyTime OnReset, the job, the reboot; then the
/// order read from Dell's boot sources (`UefiBootSeq`, `Index` 0).
#[tokio::test]
async fn dell_set_boot_order_fqdd1_puts_the_device_first_and_reads_back_empty() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let flow = async {
        check_bios_supported(s).await?;
        let job = super::dell_scripts::stage_with_job(
            s,
            &json!({"Attributes": {"SetBootOrderFqdd1": "Optical.iDRACVirtual.1-1"}}),
        )
        .await?;
        wait_scheduled(s, &job).await?;
        reboot_gracefully(s).await?;
        wait_completed(s, &job).await?;
        let sources = s
            .get("/redfish/v1/Systems/System.Embedded.1/Oem/Dell/DellBootSources")
            .await?;
        sources.expect(&[200])?;
        let seq = sources
            .at("/Attributes/UefiBootSeq")?
            .as_array()
            .cloned()
            .unwrap_or_default();
        let first = seq
            .iter()
            .find(|e| e["Index"] == 0)
            .and_then(|e| e["Id"].as_str())
            .and_then(|id| id.split('#').nth(2))
            .map(str::to_owned)
            .ok_or("no Index 0 in UefiBootSeq")?;
        let fqdd1 = super::dell_scripts::get_attribute(s, "SetBootOrderFqdd1").await?;
        let en = super::dell_scripts::get_attribute(s, "SetBootOrderEn").await?;
        Ok((first, fqdd1, en))
    };
    let (first, fqdd1, en) = passed(
        "SetHdPlaceHolderFirstBootOrderDevice (SetBootOrderFqdd1)",
        &[s],
        flow.await,
    );
    assert_eq!(first, "Optical.iDRACVirtual.1-1");
    assert_eq!(
        fqdd1,
        json!(""),
        "a one-shot input: read back empty, as every real capture shows it"
    );
    assert_eq!(en, json!("Optical.iDRACVirtual.1-1,NIC.PxeDevice.1-1,RAID.SL.3-1"));
}

/// A one-time boot that also sends `BootSourceOverrideMode` (what the clients that hit the
/// trap send) queues a BIOS job on iDRAC9, answered 200 with the job's `Location` (what Dell's
/// own clients take); the target and `Enabled` alone do not.
#[tokio::test]
async fn a_one_time_boot_with_a_mode_queues_a_bios_job_and_one_without_does_not() {
    let fleet = fleet(1).await;
    let all = scripts(&fleet);
    let s = &all[0];
    let host = &fleet.hosts()[0].host;
    let plain = s
        .patch(
            SYSTEM,
            json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        (plain.status, host.stats.to_json("x")["jobs_created"].as_u64()),
        (200, Some(0))
    );
    let with_mode = s
        .patch(
            SYSTEM,
            json!({"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}}),
        )
        .await
        .unwrap();
    assert_eq!(with_mode.status, 200);
    assert!(with_mode.location_id().unwrap().starts_with("JID_"));
    // And a second such request meets the job the first queued.
    let again = s
        .patch(SYSTEM, json!({"Boot": {"BootSourceOverrideMode": "UEFI"}}))
        .await
        .unwrap();
    assert_eq!(again.status, 400);
    assert!(
        again
            .text("/error/@Message.ExtendedInfo/0/MessageId")
            .unwrap()
            .ends_with("SYS011")
    );
}
