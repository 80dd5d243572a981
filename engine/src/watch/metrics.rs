//! The [`Board`] as Prometheus metrics: every family's name, help, type and labels are defined
//! here, once, in the order they are served. Names follow Prometheus's conventions (the
//! `rftune_` prefix, base units as suffixes, `_total` for counters, `_info` for labels worth 1)
//! and are a contract: dashboards and alerts query them (`contrib/grafana`).
//!
//! A host's value series (drift, pending values, jobs, lockdown, BIOS info, power) come from
//! its latest check and are absent while that check failed, as an exporter should do with
//! values it could not read: `rftune_check_success` is then 0 and `rftune_check_failed` says
//! why. Families are always announced (`# HELP`, `# TYPE`), even when empty, so a dashboard can
//! tell "no host drifts" from "no such metric".

use super::{Board, HostRecord};
use bios_profiles::Status;
use host_bench::exposition::{Exposition, MetricType};
use std::time::{SystemTime, UNIX_EPOCH};

/// Every metric family served, in order: the contract `contrib/grafana` and the tests check
/// dashboards against.
pub const FAMILIES: &[&str] = &[
    "rftune_exporter_build_info",
    "rftune_exporter_check_interval_seconds",
    "rftune_exporter_checks_in_flight",
    "rftune_hosts",
    "rftune_check_success",
    "rftune_check_failed",
    "rftune_check_last_timestamp_seconds",
    "rftune_check_last_success_timestamp_seconds",
    "rftune_check_duration_seconds",
    "rftune_checks_total",
    "rftune_bios_drift_attributes",
    "rftune_bios_unverified_attributes",
    "rftune_bios_attributes",
    "rftune_bios_pending_attributes",
    "rftune_profile_violations",
    "rftune_idrac_jobs",
    "rftune_idrac_system_lockdown",
    "rftune_bios_info",
    "rftune_power_watts",
];

fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

fn flag(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

#[allow(clippy::cast_precision_loss)]
fn count(n: impl TryInto<u32>) -> f64 {
    // Counts of attributes, jobs and hosts fit u32; f64 holds every u32 exactly.
    n.try_into().map_or(f64::from(u32::MAX), f64::from)
}

#[allow(clippy::cast_precision_loss)]
fn counter(n: u64) -> f64 {
    n as f64
}

/// The board in the text exposition format (see [`host_bench::exposition`]).
pub fn render(board: &Board) -> String {
    let mut e = Exposition::default();
    let profile = board.profile.as_str();
    e.family(
        "rftune_exporter_build_info",
        MetricType::Gauge,
        "The rftune exporter's version, as a label; always 1.",
    )
    .sample(&[("version", env!("CARGO_PKG_VERSION"))], 1.0);
    e.family(
        "rftune_exporter_check_interval_seconds",
        MetricType::Gauge,
        "Time between two checks of a host (--interval).",
    )
    .sample(&[], board.schedule.interval.as_secs_f64());
    e.family(
        "rftune_exporter_checks_in_flight",
        MetricType::Gauge,
        "Host checks running now (at most --concurrency).",
    )
    .sample(&[], count(board.hosts.iter().filter(|h| h.running).count()));
    {
        let mut f = e.family(
            "rftune_hosts",
            MetricType::Gauge,
            "Hosts by status after their latest check against the profile: in_sync, unverified (nothing checked differs, but some settings have no evidence for the host's CPU generation), drift (or the profile's values only pending), error (check failed, or the profile cannot be applied as written), unknown (not checked yet).",
        );
        for (status, n) in board.by_status() {
            f.sample(&[("profile", profile), ("state", status.as_str())], count(n));
        }
    }
    host_families(&mut e, profile, &board.hosts);
    e.finish()
}

/// One probed host as Prometheus metrics (`rftune exporter --probe`'s `/probe`): the families
/// of [`HOST_FAMILIES`], for that host alone.
pub fn render_probe(profile: &str, host: &HostRecord) -> String {
    let mut e = Exposition::default();
    host_families(&mut e, profile, std::slice::from_ref(host));
    e.finish()
}

/// The families about each host (every family of [`FAMILIES`] from `rftune_check_success`
/// on): what `/probe` serves of the host it checked.
pub const HOST_FAMILIES: &[&str] = FAMILIES.split_at(4).1;

/// The families about each of `hosts`, in [`FAMILIES`] order.
fn host_families(e: &mut Exposition, profile: &str, hosts: &[HostRecord]) {
    let checked = || hosts.iter().filter_map(|h| Some((h, h.last.as_ref()?)));
    {
        let mut f = e.family(
            "rftune_check_success",
            MetricType::Gauge,
            "1 if the host's latest check read and judged it, 0 if it failed.",
        );
        for (h, last) in checked() {
            f.sample(&[("host", &h.name)], flag(last.outcome.is_ok()));
        }
    }
    {
        let mut f = e.family(
            "rftune_check_failed",
            MetricType::Gauge,
            "1 for a host whose latest check failed, with the reason: timeout (no answer in time), connection (unreachable, untrusted certificate, credentials refused), redfish (an error answer), unsupported, profile, other.",
        );
        for (h, last) in checked() {
            if let Err(failure) = &last.outcome {
                f.sample(&[("host", &h.name), ("reason", failure.reason.as_str())], 1.0);
            }
        }
    }
    {
        let mut f = e.family(
            "rftune_check_last_timestamp_seconds",
            MetricType::Gauge,
            "When the host's latest check ended, successful or not (Unix time).",
        );
        for (h, last) in checked() {
            f.sample(&[("host", &h.name)], unix_seconds(last.finished));
        }
    }
    {
        let mut f = e.family(
            "rftune_check_last_success_timestamp_seconds",
            MetricType::Gauge,
            "When the host's latest successful check ended (Unix time).",
        );
        for h in hosts {
            if let Some(t) = h.last_success {
                f.sample(&[("host", &h.name)], unix_seconds(t));
            }
        }
    }
    {
        let mut f = e.family(
            "rftune_check_duration_seconds",
            MetricType::Gauge,
            "How long the host's latest check took.",
        );
        for (h, last) in checked() {
            f.sample(&[("host", &h.name)], last.duration.as_secs_f64());
        }
    }
    {
        let mut f = e.family(
            "rftune_checks_total",
            MetricType::Counter,
            "Checks of the host since the exporter started, by result (success, failure).",
        );
        for h in hosts {
            f.sample(&[("host", &h.name), ("result", "success")], counter(h.successes));
            f.sample(&[("host", &h.name), ("result", "failure")], counter(h.failures));
        }
    }
    let found = || hosts.iter().filter_map(|h| Some((h, h.checked()?)));
    {
        let mut f = e.family(
            "rftune_bios_drift_attributes",
            MetricType::Gauge,
            "Attributes of the profile (BIOS and iDRAC) not as it wants them: drift, pending, pending_conflict or forced; 0 when the host is in sync.",
        );
        for (h, c) in found() {
            let n = c.finding.counts.not_in_sync();
            f.sample(&[("host", &h.name), ("profile", profile)], count(n));
        }
    }
    {
        let mut f = e.family(
            "rftune_bios_unverified_attributes",
            MetricType::Gauge,
            "Settings of the profile rftune could not check for lack of evidence for the host's CPU generation (EPYC 9005 today); a host with none drifting and some here is unverified, not in sync.",
        );
        for (h, c) in found() {
            f.sample(
                &[("host", &h.name), ("profile", profile)],
                count(c.finding.counts.unverified),
            );
        }
    }
    {
        let mut f = e.family(
            "rftune_bios_attributes",
            MetricType::Gauge,
            "Attributes of the profile by status, as rftune diff spells it (in_sync, drift, pending, pending_conflict, not_applicable, forced).",
        );
        for (h, c) in found() {
            for status in Status::ALL {
                f.sample(
                    &[("host", &h.name), ("profile", profile), ("status", status.as_str())],
                    count(c.finding.counts.get(status)),
                );
            }
        }
    }
    {
        let mut f = e.family(
            "rftune_bios_pending_attributes",
            MetricType::Gauge,
            "BIOS values staged on the BMC (Bios/Settings), by anyone; they apply at the next reboot.",
        );
        for (h, c) in found() {
            f.sample(&[("host", &h.name)], count(c.finding.pending_values));
        }
    }
    {
        let mut f = e.family(
            "rftune_profile_violations",
            MetricType::Gauge,
            "Validation findings of the profile against the host's registry, by severity; errors mean apply would refuse the host.",
        );
        for (h, c) in found() {
            f.sample(
                &[("host", &h.name), ("profile", profile), ("severity", "error")],
                count(c.finding.profile_errors),
            );
            f.sample(
                &[("host", &h.name), ("profile", profile), ("severity", "warning")],
                count(c.finding.profile_warnings),
            );
        }
    }
    {
        let mut f = e.family(
            "rftune_idrac_jobs",
            MetricType::Gauge,
            "Jobs holding the iDRAC's queue, by state: waiting (scheduled, or waiting for a reboot), running, stuck (PR30: will never run; or running without progress for longer than --job-stuck-after). A stuck job blocks new BIOS jobs until deleted.",
        );
        for (h, c) in found() {
            for (state, n) in [
                ("waiting", c.jobs.waiting),
                ("running", c.jobs.running),
                ("stuck", c.jobs.stuck),
            ] {
                f.sample(&[("host", &h.name), ("state", state)], count(n));
            }
        }
    }
    {
        let mut f = e.family(
            "rftune_idrac_system_lockdown",
            MetricType::Gauge,
            "1 if System Lockdown is on (the iDRAC refuses every change; apply refuses the host), else 0.",
        );
        for (h, c) in found() {
            if let Some(on) = c.finding.lockdown {
                f.sample(&[("host", &h.name)], flag(on));
            }
        }
    }
    {
        let mut f = e.family(
            "rftune_bios_info",
            MetricType::Gauge,
            "The host's model, BIOS version and service tag, as labels; always 1.",
        );
        for (h, c) in found() {
            let d = &c.finding;
            f.sample(
                &[
                    ("host", &h.name),
                    ("model", d.model.as_deref().unwrap_or("")),
                    ("bios_version", d.bios_version.as_deref().unwrap_or("")),
                    ("service_tag", d.service_tag.as_deref().unwrap_or("")),
                ],
                1.0,
            );
        }
    }
    {
        let mut f = e.family(
            "rftune_power_watts",
            MetricType::Gauge,
            "Power draw the BMC reported at the host's latest check, in watts (the same metric as rftune power --format prometheus).",
        );
        for (h, c) in found() {
            if let Some(p) = c.finding.power {
                f.sample(&[("host", &h.name), ("sensor", p.sensor.as_str())], p.watts);
            }
        }
    }
}
