//! NVMe namespace sizing (trading capacity for over-provisioning): sectors from a capacity by
//! plain division or the IDEMA formula, the nvme-cli sequence that recreates namespace 1 at
//! that size, and its execution with the before-state recorded and the result verified.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Parses a capacity: `3.20TB`, `3200GB`, `2.56T` (decimal units), `1TiB`/`512GiB` (binary), or
/// plain bytes.
pub fn parse_capacity(s: &str) -> Result<u128> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u128 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" => 1_000,
        "M" | "MB" => 1_000_000,
        "G" | "GB" => 1_000_000_000,
        "T" | "TB" => 1_000_000_000_000,
        "KIB" => 1 << 10,
        "MIB" => 1 << 20,
        "GIB" => 1 << 30,
        "TIB" => 1 << 40,
        _ => {
            return Err(Error::BadInput(format!(
                "capacity {s:?}: unknown unit {unit:?} (use TB, GB, TiB, ...)"
            )));
        }
    };
    // Exact decimal arithmetic: 3.20TB must be 3,200,000,000,000 bytes, not a float's guess.
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = format!("{int}{frac}");
    let value: u128 = digits
        .parse()
        .map_err(|_| Error::BadInput(format!("capacity {s:?} is not a number")))?;
    let scale = 10u128.pow(frac.len() as u32);
    let bytes = value * mult;
    if !bytes.is_multiple_of(scale) {
        return Err(Error::BadInput(format!(
            "capacity {s:?} is not a whole number of bytes"
        )));
    }
    Ok(bytes / scale)
}

/// Plain sizing: capacity / LBA size (2.56 TB / 512 B = 5,000,000,000 sectors, as Dell's note
/// "Using NVMe Namespaces to Increase Performance in a Dell PowerEdge R7525 Server" sizes one).
pub fn plain_sectors(bytes: u128, lba: u32) -> u64 {
    (bytes / u128::from(lba)) as u64
}

/// IDEMA LBA1-03 capacity point for a capacity in bytes (decimal GB, rounded down):
/// 97,696,368 + 1,953,504 × (GB − 50) sectors of 512 B, or an eighth of that for 4096-byte
/// LBAs. Defined for capacities of at least 50 GB.
pub fn idema_sectors(bytes: u128, lba: u32) -> Result<u64> {
    let gb = bytes / 1_000_000_000;
    if gb < 50 {
        return Err(Error::BadInput("the IDEMA formula is defined from 50 GB".into()));
    }
    let s512 = 97_696_368u128 + 1_953_504u128 * (gb - 50);
    match lba {
        512 => Ok(s512 as u64),
        4096 => Ok((s512 / 8) as u64),
        _ => Err(Error::BadInput(format!(
            "IDEMA sizes are defined for 512 and 4096-byte LBAs, not {lba}"
        ))),
    }
}

/// What `nvme id-ctrl -o json` says that matters here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Controller {
    /// Serial number (`sn`), trimmed.
    pub serial: String,
    /// Model (`mn`), trimmed.
    pub model: String,
    /// Controller id (`cntlid`).
    pub cntlid: u32,
    /// Optional admin command support (`oacs`).
    pub oacs: u32,
    /// Total NVM capacity, bytes (`tnvmcap`, 128-bit).
    pub tnvmcap: Option<u128>,
    /// Unallocated NVM capacity, bytes (`unvmcap`, 128-bit).
    pub unvmcap: Option<u128>,
}

impl Controller {
    /// `oacs` bit 3: Namespace Management and Attachment.
    pub fn namespace_management(&self) -> bool {
        self.oacs & 0x8 != 0
    }
}

/// The digits of `"key": 123...` in raw JSON text, so 128-bit values survive parsers that
/// read numbers as f64.
fn raw_uint(text: &str, key: &str) -> Option<u128> {
    let pat = format!("\"{key}\"");
    let rest = &text[text.find(&pat)? + pat.len()..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn json_u32(v: &serde_json::Value) -> Option<u32> {
    v.as_u64()
        .or_else(|| {
            let s = v.as_str()?.trim();
            s.strip_prefix("0x")
                .map_or_else(|| s.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        })
        .and_then(|n| u32::try_from(n).ok())
}

/// Parses `nvme id-ctrl -o json`. Capacities may be numbers or strings of any size.
pub fn parse_id_ctrl(text: &str) -> Result<Controller> {
    let err = |detail: &str| Error::Parse {
        what: "nvme id-ctrl output".into(),
        detail: detail.into(),
    };
    let start = text.find('{').ok_or_else(|| err("no JSON document"))?;
    let body = &text[start..];
    let v: serde_json::Value = serde_json::Deserializer::from_str(body)
        .into_iter()
        .next()
        .ok_or_else(|| err("empty"))?
        .map_err(|e| err(&e.to_string()))?;
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or_default().trim().to_owned();
    Ok(Controller {
        serial: s("sn"),
        model: s("mn"),
        cntlid: v.get("cntlid").and_then(json_u32).ok_or_else(|| err("no cntlid"))?,
        oacs: v.get("oacs").and_then(json_u32).ok_or_else(|| err("no oacs"))?,
        tnvmcap: raw_uint(body, "tnvmcap"),
        unvmcap: raw_uint(body, "unvmcap"),
    })
}

/// How to size the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizing {
    /// capacity / LBA.
    Plain,
    /// The IDEMA capacity point.
    Idema,
    /// Exactly this many sectors.
    Sectors(u64),
}

/// What `rftune nvme plan` would do to a namespace: its new size and the nvme-cli commands that
/// recreate it at that size (not a BIOS plan, which is writes to a BMC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamespacePlan {
    /// Controller character device, e.g. `/dev/nvme0`.
    pub controller: String,
    /// Namespace replaced and recreated.
    pub nsid: u32,
    /// Sectors (nsze = ncap).
    pub sectors: u64,
    /// LBA size, bytes.
    pub lba: u32,
    /// sectors × LBA.
    pub bytes: u128,
    /// `plain`, `idema` or `explicit`.
    pub method: String,
    /// The controller as read; absent in a plan made without it ([`offline`]), whose commands
    /// carry `<cntlid>` where the controller's id goes.
    #[serde(default)]
    pub controller_info: Option<Controller>,
    /// nvme-cli invocations, in order (arguments after `nvme`).
    pub commands: Vec<Vec<String>>,
}

/// `/dev/nvme0n1` → `/dev/nvme0`; a controller path stays as it is.
pub fn controller_path(device: &str) -> String {
    let (dir, name) = device.rsplit_once('/').unwrap_or(("", device));
    let trimmed = match name.rfind('n') {
        Some(i) if i > 4 && name[i + 1..].chars().all(|c| c.is_ascii_digit()) && !name[i + 1..].is_empty() => {
            &name[..i]
        }
        _ => name,
    };
    if dir.is_empty() {
        trimmed.to_owned()
    } else {
        format!("{dir}/{trimmed}")
    }
}

/// Builds the plan from the controller's identity.
pub fn plan(
    device: &str,
    ctrl: &Controller,
    capacity: u128,
    lba: u32,
    sizing: Sizing,
    nsid: u32,
) -> Result<NamespacePlan> {
    if !ctrl.namespace_management() {
        return Err(Error::Refused(format!(
            "{device} ({} {}) does not support namespace management (oacs bit 3 is clear)",
            ctrl.model, ctrl.serial
        )));
    }
    let plan = build(
        &controller_path(device),
        &ctrl.cntlid.to_string(),
        capacity,
        lba,
        sizing,
        nsid,
    )?;
    if let Some(total) = ctrl.tnvmcap.filter(|t| *t > 0)
        && plan.bytes > total
    {
        return Err(Error::BadInput(format!(
            "{} sectors × {lba} B = {} B exceeds the drive's total capacity {total} B",
            plan.sectors, plan.bytes
        )));
    }
    Ok(NamespacePlan {
        controller_info: Some(ctrl.clone()),
        ..plan
    })
}

/// A plan made from the capacity alone, without reading a controller (no nvme-cli, no device
/// needed): the sizes and the sequence, with `device`'s controller or `/dev/nvmeX`, and
/// `<cntlid>` for the controller id `nvme id-ctrl` gives. What it cannot check — namespace
/// management support, the drive's total capacity — is checked by [`plan`] before anything runs.
pub fn offline(device: Option<&str>, capacity: u128, lba: u32, sizing: Sizing, nsid: u32) -> Result<NamespacePlan> {
    build(
        &device.map_or_else(|| "/dev/nvmeX".to_owned(), controller_path),
        "<cntlid>",
        capacity,
        lba,
        sizing,
        nsid,
    )
}

fn build(c: &str, cntlid: &str, capacity: u128, lba: u32, sizing: Sizing, nsid: u32) -> Result<NamespacePlan> {
    if !matches!(lba, 512 | 4096) {
        return Err(Error::BadInput(format!("LBA size {lba}: use 512 or 4096")));
    }
    let (sectors, method) = match sizing {
        Sizing::Plain => (plain_sectors(capacity, lba), "plain"),
        Sizing::Idema => (idema_sectors(capacity, lba)?, "idema"),
        Sizing::Sectors(n) => (n, "explicit"),
    };
    if sectors == 0 {
        return Err(Error::BadInput(
            "the namespace would have 0 sectors; give a larger size".into(),
        ));
    }
    let bytes = u128::from(sectors) * u128::from(lba);
    let ns = nsid.to_string();
    let cmd = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
    let n = sectors.to_string();
    let lba_s = lba.to_string();
    Ok(NamespacePlan {
        commands: vec![
            cmd(&["detach-ns", c, "-n", &ns, "-c", cntlid]),
            cmd(&["delete-ns", c, "-n", &ns]),
            cmd(&["create-ns", c, "-s", &n, "-c", &n, "-b", &lba_s]),
            cmd(&["attach-ns", c, "-n", &ns, "-c", cntlid]),
            cmd(&["ns-rescan", c]),
            cmd(&["id-ns", &format!("{c}n{ns}"), "-o", "json"]),
        ],
        controller: c.to_owned(),
        nsid,
        sectors,
        lba,
        bytes,
        method: method.into(),
        controller_info: None,
    })
}

/// The nvme-cli executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvmeCli {
    /// Program name or path (default `nvme` from PATH).
    pub program: PathBuf,
}

impl Default for NvmeCli {
    fn default() -> Self {
        Self { program: "nvme".into() }
    }
}

impl NvmeCli {
    /// Runs `nvme <args>` and returns its standard output.
    pub fn run(&self, args: &[String]) -> Result<String> {
        let out = Command::new(&self.program)
            .args(args)
            .output()
            .map_err(crate::io_err(format!(
                "running {} (is nvme-cli installed?)",
                self.program.display()
            )))?;
        if !out.status.success() {
            return Err(Error::Program {
                program: format!("{} {}", self.program.display(), args.join(" ")),
                detail: format!("{}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `nvme id-ctrl <dev> -o json`, parsed.
    pub fn id_ctrl(&self, device: &str) -> Result<(Controller, String)> {
        let text = self.run(&["id-ctrl".into(), controller_path(device), "-o".into(), "json".into()])?;
        Ok((parse_id_ctrl(&text)?, text))
    }

    /// The namespace's block device, e.g. `/dev/nvme0n1`: what the plan destroys.
    pub fn namespace_device(plan: &NamespacePlan) -> PathBuf {
        PathBuf::from(format!("{}n{}", plan.controller, plan.nsid))
    }

    /// Executes a plan: records the before-state (id-ctrl and list-ns JSON) in `state_dir`,
    /// runs the sequence (create-ns's reported nsid is used for attach and verify) and checks
    /// the new namespace with id-ns. Refuses unless `confirm_serial` matches the controller and
    /// `unused` passes for the namespace's block device ([`NvmeCli::namespace_device`]) — the
    /// CLI passes [`crate::device::ensure_unused`], the same in-use checks as the storage
    /// benchmark; nothing beyond `id-ctrl` runs before both pass.
    pub fn execute(
        &self,
        plan: &NamespacePlan,
        confirm_serial: &str,
        state_dir: &Path,
        unused: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<Executed> {
        let (ctrl, id_ctrl) = self.id_ctrl(&plan.controller)?;
        if ctrl.serial != confirm_serial.trim() {
            return Err(Error::Refused(format!(
                "--confirm-serial {confirm_serial} does not match {}'s serial {}",
                plan.controller, ctrl.serial
            )));
        }
        // The claim taken by the check ends here, before detach-ns: held through the sequence,
        // it would keep the old namespace's name in use and the new one could come back as nN+1.
        unused(&Self::namespace_device(plan))?;
        let list_ns = self.run(&[
            "list-ns".into(),
            plan.controller.clone(),
            "-a".into(),
            "-o".into(),
            "json".into(),
        ])?;
        std::fs::create_dir_all(state_dir).map_err(crate::io_err(format!("creating {}", state_dir.display())))?;
        let stamp = crate::utc_now_seconds().replace(':', "");
        let before_path = state_dir.join(format!("nvme-{}-{stamp}.json", ctrl.serial));
        let before = serde_json::json!({
            "controller": plan.controller,
            "id_ctrl": serde_json::from_str::<serde_json::Value>(&id_ctrl).unwrap_or(serde_json::Value::String(id_ctrl)),
            "list_ns": serde_json::from_str::<serde_json::Value>(&list_ns).unwrap_or(serde_json::Value::String(list_ns)),
            "plan": plan,
        });
        std::fs::write(&before_path, serde_json::to_string_pretty(&before).unwrap_or_default())
            .map_err(crate::io_err(format!("writing {}", before_path.display())))?;
        let mut nsid = plan.nsid;
        let mut ran = Vec::new();
        for cmd in &plan.commands[..plan.commands.len() - 1] {
            let mut cmd = cmd.clone();
            if cmd[0] == "attach-ns" {
                cmd[3] = nsid.to_string();
            }
            let out = self.run(&cmd)?;
            if cmd[0] == "create-ns"
                && let Some(n) = out.rsplit("nsid:").next().and_then(|s| s.trim().parse().ok())
            {
                nsid = n;
            }
            ran.push(cmd);
        }
        let verify = vec![
            "id-ns".to_owned(),
            format!("{}n{nsid}", plan.controller),
            "-o".into(),
            "json".into(),
        ];
        let text = self.run(&verify)?;
        ran.push(verify);
        let check = verify_id_ns(&text, plan)?;
        Ok(Executed {
            before_state: before_path,
            nsid,
            commands: ran,
            verified: check,
        })
    }
}

/// The outcome of [`NvmeCli::execute`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Executed {
    /// Where the before-state was saved.
    pub before_state: PathBuf,
    /// The namespace created.
    pub nsid: u32,
    /// What ran.
    pub commands: Vec<Vec<String>>,
    /// What id-ns showed.
    pub verified: Verified,
}

/// id-ns figures of the new namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verified {
    /// `nsze`.
    pub nsze: u64,
    /// LBA size selected by `flbas` in `lbafs[]`, bytes.
    pub lba: u32,
}

/// Checks id-ns JSON against the plan: nsze equals the planned sectors and the format selected
/// by `flbas` (low four bits index `lbafs`, `ds` = log2 of the LBA size) has the planned size.
pub fn verify_id_ns(text: &str, plan: &NamespacePlan) -> Result<Verified> {
    let err = |d: String| Error::Parse {
        what: "nvme id-ns output".into(),
        detail: d,
    };
    let v: serde_json::Value =
        serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).map_err(|e| err(e.to_string()))?;
    let nsze = raw_uint(text, "nsze").ok_or_else(|| err("no nsze".into()))? as u64;
    let flbas = v
        .get("flbas")
        .and_then(json_u32)
        .ok_or_else(|| err("no flbas".into()))?;
    let ds = v
        .get("lbafs")
        .and_then(|l| l.get((flbas & 0xf) as usize))
        .and_then(|f| f.get("ds"))
        .and_then(json_u32)
        .ok_or_else(|| err(format!("no lbafs[{}].ds", flbas & 0xf)))?;
    let lba = 1u32.checked_shl(ds).unwrap_or(0);
    if nsze != plan.sectors || lba != plan.lba {
        return Err(Error::BadInput(format!(
            "verification failed: id-ns shows {nsze} sectors of {lba} B, planned {} of {} B",
            plan.sectors, plan.lba
        )));
    }
    Ok(Verified { nsze, lba })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_arithmetic() {
        let tb = |s: &str| parse_capacity(s).unwrap();
        assert_eq!(plain_sectors(tb("2.56TB"), 512), 5_000_000_000);
        assert_eq!(plain_sectors(tb("3.52TB"), 512), 6_875_000_000);
        assert_eq!(idema_sectors(tb("3.84TB"), 512).unwrap(), 7_501_476_528);
        assert_eq!(idema_sectors(tb("3.20TB"), 512).unwrap(), 6_251_233_968);
        assert_eq!(idema_sectors(tb("3.84TB"), 4096).unwrap(), 7_501_476_528 / 8);
        assert_eq!(tb("3200GB"), 3_200_000_000_000);
        assert_eq!(tb("1TiB"), 1 << 40);
        assert!(parse_capacity("3.2 parsecs").is_err());
        assert!(parse_capacity("0.0000000000001B").is_err());
        assert!(idema_sectors(tb("10GB"), 512).is_err());
    }

    #[test]
    fn id_ctrl_capacities_parse_as_128_bit() {
        let c = parse_id_ctrl(
            r#"warning first
            {"sn":"  PHLN0123  ","mn":"KCM6XRUL3T84 ","cntlid":"0x41","oacs":95,
             "tnvmcap":340282366920938463463374607431768211455,"unvmcap":"0"}"#,
        )
        .unwrap();
        assert_eq!(
            (c.serial.as_str(), c.cntlid, c.namespace_management()),
            ("PHLN0123", 0x41, true)
        );
        assert_eq!(c.tnvmcap, Some(u128::MAX));
        assert_eq!(c.unvmcap, Some(0));
    }

    #[test]
    fn plan_lists_the_nvme_cli_sequence() {
        let c = Controller {
            serial: "S1".into(),
            model: "M".into(),
            cntlid: 7,
            oacs: 0x8,
            tnvmcap: Some(3_840_755_982_336),
            unvmcap: Some(0),
        };
        let p = plan(
            "/dev/nvme0n1",
            &c,
            parse_capacity("3.20TB").unwrap(),
            512,
            Sizing::Idema,
            1,
        )
        .unwrap();
        assert_eq!(p.controller, "/dev/nvme0");
        let lines: Vec<String> = p.commands.iter().map(|c| c.join(" ")).collect();
        assert_eq!(
            lines,
            [
                "detach-ns /dev/nvme0 -n 1 -c 7",
                "delete-ns /dev/nvme0 -n 1",
                "create-ns /dev/nvme0 -s 6251233968 -c 6251233968 -b 512",
                "attach-ns /dev/nvme0 -n 1 -c 7",
                "ns-rescan /dev/nvme0",
                "id-ns /dev/nvme0n1 -o json",
            ]
        );
        assert!(plan("/dev/nvme0", &c, parse_capacity("4TB").unwrap(), 512, Sizing::Plain, 1).is_err());
        let no_nsm = Controller { oacs: 0x6, ..c };
        assert!(plan("/dev/nvme0", &no_nsm, 1, 512, Sizing::Sectors(8), 1).is_err());
        assert_eq!(controller_path("/dev/nvme12"), "/dev/nvme12");
        assert_eq!(controller_path("/dev/nvme12n3"), "/dev/nvme12");
    }
}
