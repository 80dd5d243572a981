//! The tables of `rftune inventory`: one host's details, or a line per host of a fleet; the
//! Lifecycle-log entries when they were asked for.

use super::Table;
use rftune_engine::fleet::HostResult;
use rftune_engine::inventory::{Inventory, LifecycleEntry, MemoryInventory};
use std::fmt::Write;

/// One line per host, then the errors of the hosts that could not be read.
pub fn fleet_table(results: &[HostResult<Inventory>]) -> String {
    let mut t = Table::new([
        "HOST",
        "MODEL",
        "SERVICE TAG",
        "BIOS",
        "BMC",
        "POWER",
        "PENDING",
        "OPEN JOBS",
    ]);
    let mut errors = String::new();
    for r in results {
        match &r.result {
            Ok(i) => t.row([
                i.host.clone(),
                i.model.clone().unwrap_or_default(),
                i.service_tag.clone().unwrap_or_default(),
                i.bios_version.clone().unwrap_or_default(),
                i.bmc_firmware.clone().unwrap_or_default(),
                i.power_state.clone().unwrap_or_default(),
                i.pending_bios.len().to_string(),
                i.open_jobs.len().to_string(),
            ]),
            Err(e) => {
                t.row([r.entry.name.clone(), "error".to_owned()]);
                let _ = writeln!(errors, "{}: {e:#}", r.entry.name);
            }
        }
    }
    let mut out = t.render();
    let logged: Vec<(&str, &[LifecycleEntry])> = results
        .iter()
        .filter_map(|r| r.result.as_ref().ok())
        .filter_map(|i| Some((i.host.as_str(), i.lifecycle.as_deref()?)))
        .collect();
    if !logged.is_empty() {
        out.push_str("\nLifecycle log (newest first):\n");
        out.push_str(&lifecycle_table(&logged));
    }
    if !errors.is_empty() {
        out.push('\n');
        out.push_str(&errors);
    }
    out
}

/// The entries of one or more hosts (the HOST column only for a fleet).
fn lifecycle_table(hosts: &[(&str, &[LifecycleEntry])]) -> String {
    let fleet = hosts.len() > 1;
    let mut header = vec!["WHEN", "SEVERITY", "MESSAGE ID", "WHO", "MESSAGE"];
    if fleet {
        header.insert(0, "HOST");
    }
    let mut t = Table::new(header);
    for (host, entries) in hosts {
        for e in *entries {
            let who = e.who.as_ref().map_or_else(String::new, |a| {
                let mut w = a.user.clone();
                if let Some(address) = &a.address {
                    let _ = write!(w, " from {address}");
                }
                if let Some(interface) = &a.interface {
                    let _ = write!(w, " via {interface}");
                }
                w
            });
            let mut row = vec![
                e.created.clone().unwrap_or_default(),
                e.severity.clone().unwrap_or_default(),
                e.message_id.clone().unwrap_or_default(),
                who,
                e.message.clone().unwrap_or_default(),
            ];
            if fleet {
                row.insert(0, (*host).to_owned());
            }
            t.row(row);
        }
    }
    t.render()
}

/// The single-host table.
pub fn table(inv: &Inventory) -> String {
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
    let num = |v: Option<u32>| v.map_or_else(|| "-".to_owned(), |n| n.to_string());
    let mut t = Table::new(["", ""]);
    t.row(["Host".to_owned(), inv.host.clone()]);
    t.row(["Model".to_owned(), show(&inv.model)]);
    t.row(["Generation".to_owned(), show(&inv.generation)]);
    t.row(["Service tag".to_owned(), show(&inv.service_tag)]);
    t.row(["BIOS".to_owned(), show(&inv.bios_version)]);
    t.row(["BMC".to_owned(), show(&inv.bmc)]);
    t.row(["BMC firmware".to_owned(), show(&inv.bmc_firmware)]);
    t.row(["Power".to_owned(), show(&inv.power_state)]);
    t.row([
        "CPUs".to_owned(),
        format!(
            "{} × {} ({} cores, {} threads)",
            num(inv.processors.count),
            show(&inv.processors.model),
            num(inv.processors.cores),
            num(inv.processors.threads)
        ),
    ]);
    t.row(["Memory".to_owned(), memory_line(&inv.memory)]);
    if let Some(sb) = &inv.secure_boot {
        let on = |v: Option<bool>| match v {
            Some(true) => "enabled",
            Some(false) => "disabled",
            None => "-",
        };
        let current = match sb.current_boot {
            Some(redfish_client::resources::secure_boot::CurrentBoot::Enabled) => "this boot verified",
            Some(redfish_client::resources::secure_boot::CurrentBoot::Disabled) => "this boot not verified",
            _ => "this boot: unknown",
        };
        t.row([
            "Secure Boot".to_owned(),
            format!("{} ({current}, {})", on(sb.enabled), sb.mode.as_deref().unwrap_or("-")),
        ]);
    }
    let mut out = t.render().lines().skip(1).map(|l| format!("{l}\n")).collect::<String>();
    if inv.pending_bios.is_empty() {
        out.push_str("\nPending BIOS values: none\n");
    } else {
        let _ = writeln!(out, "\nPending BIOS values (apply at next reboot):");
        let mut p = Table::new(["ATTRIBUTE", "VALUE"]);
        for (k, v) in &inv.pending_bios {
            p.row([k.clone(), v.to_string()]);
        }
        out.push_str(&p.render());
    }
    if inv.open_jobs.is_empty() {
        out.push_str("Open jobs: none\n");
    } else {
        out.push_str("\nOpen jobs:\n");
        let mut j = Table::new(["JOB", "TYPE", "STATE", "MESSAGE"]);
        for job in &inv.open_jobs {
            j.row([
                job.id.clone(),
                show(&job.job_type),
                job.state.clone(),
                match (&job.message_id, &job.message) {
                    (Some(id), Some(m)) => format!("[{id}] {m}"),
                    (None, Some(m)) => m.clone(),
                    (Some(id), None) => format!("[{id}]"),
                    (None, None) => String::new(),
                },
            ]);
        }
        out.push_str(&j.render());
    }
    match inv.lifecycle.as_deref() {
        Some([]) => out.push_str("Lifecycle log: no entries\n"),
        Some(entries) => {
            let _ = writeln!(out, "\nLifecycle log, latest {} (newest first):", entries.len());
            out.push_str(&lifecycle_table(&[(inv.host.as_str(), entries)]));
        }
        None => {}
    }
    for u in &inv.unread {
        let _ = writeln!(out, "Not read: {} ({})", u.what, u.error);
    }
    out
}

/// `24 × 64 GiB DDR5 @ 4800 MT/s (1536 GiB)`; mixed populations are listed per size.
fn memory_line(mem: &MemoryInventory) -> String {
    let mut groups: std::collections::BTreeMap<(u64, String, u32), usize> = std::collections::BTreeMap::new();
    for d in &mem.dimms {
        let key = (
            d.capacity_mib.unwrap_or(0) / 1024,
            d.device_type.clone().unwrap_or_default(),
            d.speed_mts.unwrap_or(0),
        );
        *groups.entry(key).or_default() += 1;
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|((gib, kind, speed), n)| format!("{n} × {gib} GiB {kind} @ {speed} MT/s"))
        .collect();
    let total = mem.total_gib.map(|t| format!(" ({t} GiB)")).unwrap_or_default();
    if parts.is_empty() {
        format!("no DIMMs listed{total}")
    } else {
        format!("{}{total}", parts.join(", "))
    }
}
