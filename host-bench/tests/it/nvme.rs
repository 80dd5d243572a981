//! `nvme plan --execute` against a fake nvme-cli that records its arguments.

use super::TempDir;
use host_bench::device::{self, Findings};
use host_bench::nvme::{self, NvmeCli, Sizing};
use std::os::unix::fs::PermissionsExt;

const ID_CTRL: &str = r#"{"vid":7695,"sn":"FAKE123   ","mn":"KIOXIA KCM6XRUL3T84","cntlid":3,"oacs":30,"tnvmcap":3840755982336,"unvmcap":0}"#;

/// Writes a fake `nvme` that appends its arguments to calls.log and answers like nvme-cli.
fn fake_nvme(dir: &TempDir, nsze: u64) -> NvmeCli {
    let path = dir.0.join("nvme");
    let log = dir.0.join("calls.log");
    let script = format!(
        r#"#!/bin/sh
echo "$*" >> '{log}'
case "$1" in
  id-ctrl) echo '{ID_CTRL}' ;;
  list-ns) echo '{{"nsid_list":[{{"nsid":1}}]}}' ;;
  create-ns) echo "create-ns: Success, created nsid:1" ;;
  id-ns) echo '{{"nsze":{nsze},"ncap":{nsze},"flbas":0,"lbafs":[{{"ms":0,"ds":9,"rp":0}},{{"ms":0,"ds":12,"rp":0}}]}}' ;;
  *) echo "$1: Success" ;;
esac
"#,
        log = log.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    NvmeCli { program: path }
}

#[test]
fn execute_runs_the_sequence_records_the_before_state_and_verifies() {
    let dir = TempDir::new("nvme");
    let cli = fake_nvme(&dir, 6_251_233_968);
    let (ctrl, _) = cli.id_ctrl("/dev/nvme0n1").unwrap();
    assert_eq!(
        (ctrl.serial.as_str(), ctrl.cntlid, ctrl.namespace_management()),
        ("FAKE123", 3, true)
    );
    let plan = nvme::plan(
        "/dev/nvme0n1",
        &ctrl,
        nvme::parse_capacity("3.20TB").unwrap(),
        512,
        Sizing::Idema,
        1,
    )
    .unwrap();
    std::fs::remove_file(dir.0.join("calls.log")).unwrap();
    let unused = |dev: &std::path::Path| {
        assert_eq!(
            dev,
            std::path::Path::new("/dev/nvme0n1"),
            "the namespace to be deleted is checked"
        );
        Ok(())
    };
    assert!(cli.execute(&plan, "WRONG", &dir.0.join("state"), unused).is_err());
    let calls = std::fs::read_to_string(dir.0.join("calls.log")).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        ["id-ctrl /dev/nvme0 -o json"],
        "refusal runs nothing destructive"
    );
    std::fs::remove_file(dir.0.join("calls.log")).unwrap();

    let done = cli.execute(&plan, "FAKE123", &dir.0.join("state"), unused).unwrap();
    assert_eq!(
        (done.nsid, done.verified.nsze, done.verified.lba),
        (1, 6_251_233_968, 512)
    );
    let calls = std::fs::read_to_string(dir.0.join("calls.log")).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [
            "id-ctrl /dev/nvme0 -o json",
            "list-ns /dev/nvme0 -a -o json",
            "detach-ns /dev/nvme0 -n 1 -c 3",
            "delete-ns /dev/nvme0 -n 1",
            "create-ns /dev/nvme0 -s 6251233968 -c 6251233968 -b 512",
            "attach-ns /dev/nvme0 -n 1 -c 3",
            "ns-rescan /dev/nvme0",
            "id-ns /dev/nvme0n1 -o json",
        ]
    );
    let before: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&done.before_state).unwrap()).unwrap();
    assert_eq!(before["id_ctrl"]["sn"], "FAKE123   ");
    assert_eq!(before["list_ns"]["nsid_list"][0]["nsid"], 1);
}

#[test]
fn verification_catches_a_wrong_size() {
    let dir = TempDir::new("nvme-bad");
    let cli = fake_nvme(&dir, 5_000_000_000);
    let (ctrl, _) = cli.id_ctrl("/dev/nvme0").unwrap();
    let plan = nvme::plan("/dev/nvme0", &ctrl, 0, 512, Sizing::Sectors(6_000_000_000), 1).unwrap();
    let err = cli
        .execute(&plan, "FAKE123", &dir.0, |_| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("verification failed"), "{err}");
}

#[test]
fn a_mounted_namespace_gets_no_destructive_nvme_call_even_with_the_right_serial() {
    let dir = TempDir::new("nvme-mounted");
    let cli = fake_nvme(&dir, 6_251_233_968);
    let (ctrl, _) = cli.id_ctrl("/dev/nvme0").unwrap();
    let plan = nvme::plan("/dev/nvme0", &ctrl, 0, 512, Sizing::Sectors(6_251_233_968), 1).unwrap();
    std::fs::remove_file(dir.0.join("calls.log")).unwrap();
    // What the device checks find for a namespace mounted at /data: the same decision as bench's.
    let mounted = |dev: &std::path::Path| {
        device::in_use(&Findings {
            name: dev.file_name().unwrap().to_string_lossy().into_owned(),
            mounted: vec!["/dev/nvme0n1 on /data".into()],
            ..Findings::default()
        })
    };
    let err = cli
        .execute(&plan, "FAKE123", &dir.0.join("state"), mounted)
        .unwrap_err()
        .to_string();
    assert!(err.contains("/dev/nvme0n1 is mounted"), "{err}");
    let calls = std::fs::read_to_string(dir.0.join("calls.log")).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        ["id-ctrl /dev/nvme0 -o json"],
        "nothing but the serial check ran"
    );
    // A device the kernel reports busy (EBUSY on the exclusive open) is refused the same way.
    std::fs::remove_file(dir.0.join("calls.log")).unwrap();
    let busy = |dev: &std::path::Path| {
        device::claim_with(dev, |_| Err(std::io::Error::from_raw_os_error(libc::EBUSY))).map(drop)
    };
    let err = cli
        .execute(&plan, "FAKE123", &dir.0.join("state"), busy)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is in use"), "{err}");
    let calls = std::fs::read_to_string(dir.0.join("calls.log")).unwrap();
    assert!(!calls.contains("-ns"), "no namespace command ran: {calls}");
}
