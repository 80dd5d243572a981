//! The power model: watts from power state, load and the BIOS/iDRAC settings in force, with
//! deterministic noise. The shape follows how these settings act on EPYC servers (C-states and
//! power profiles move idle draw, cTDP and turbo move the loaded ceiling, a power cap clips it);
//! the figures are plausible, not measured.

use redfish_client::resources::bios::Attributes;

/// What the model needs to know about a host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Platform {
    /// CPU sockets.
    pub sockets: u32,
    /// Thermal design power per socket, watts.
    pub tdp: f64,
}

impl Platform {
    /// From the fixture's socket count and CPU model string.
    pub fn new(sockets: u32, cpu_model: &str) -> Self {
        Self {
            sockets: sockets.max(1),
            tdp: tdp_watts(cpu_model),
        }
    }
}

/// Default TDP of the fixture CPUs; others get a middle value.
fn tdp_watts(cpu_model: &str) -> f64 {
    const KNOWN: [(&str, f64); 5] = [
        ("9654", 360.0),
        ("7763", 280.0),
        ("8534P", 200.0),
        ("9754", 360.0),
        ("7713", 225.0),
    ];
    KNOWN
        .iter()
        .find(|(m, _)| cpu_model.contains(m))
        .map_or(250.0, |(_, w)| *w)
}

/// Where the host is in its power cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Off (standby power only).
    Off,
    /// In POST after a reset.
    Booting,
    /// Running the OS.
    On,
}

/// Instantaneous draw, before noise. `utilization` is 0..=1; `bios` and `system` are the values
/// in force (BIOS attributes and DellAttributes System.Embedded.1).
pub fn watts(platform: Platform, phase: Phase, utilization: f64, bios: &Attributes, system: &Attributes) -> f64 {
    let is = |name: &str, value: &str| bios.get(name).and_then(|v| v.as_str()) == Some(value);
    let sockets = f64::from(platform.sockets);
    let platform_base = 70.0 + 25.0 * sockets; // fans, DIMMs, drives, NICs, BMC
    let watts = match phase {
        Phase::Off => return 12.0,
        Phase::Booting => platform_base + sockets * platform.tdp * 0.45,
        Phase::On => {
            let mut idle = platform.tdp * 0.22;
            if is("ProcCStates", "Disabled") {
                idle += platform.tdp * 0.12;
            }
            if is("ProcPwrPerf", "MaxPerf") {
                idle += platform.tdp * 0.03;
            }
            if is("PowerProfileSelect", "HighPerformanceMode") || is("PowerProfileSelect", "MaxIOPerformanceMode") {
                idle += platform.tdp * 0.02;
            }
            if is("ApbDis", "Enabled") {
                idle += platform.tdp * 0.04;
            }
            let mut ceiling = platform.tdp;
            if is("ProcConfigTdp", "Minimum") {
                ceiling *= 0.8;
            }
            if is("ProcTurboMode", "Disabled") {
                ceiling *= 0.88;
            }
            if is("DeterminismSlider", "PerformanceDeterminism") {
                ceiling *= 0.97;
            }
            let per_socket = idle + utilization.clamp(0.0, 1.0) * (ceiling - idle).max(0.0);
            platform_base + sockets * per_socket
        }
    };
    let capped = system.get("ServerPwr.1.PowerCapSetting").and_then(|v| v.as_str()) == Some("Enabled");
    match system.get("ServerPwr.1.PowerCapValue").and_then(|v| v.as_number()) {
        Some(cap) if capped && cap > 0.0 => watts.min(cap),
        _ => watts,
    }
}

/// Applies ±1.5 % noise from a sample in `[0, 1)`, rounded to whole watts as iDRAC reports.
pub fn with_noise(watts: f64, sample: f64) -> f64 {
    (watts * (1.0 + 0.03 * (sample - 0.5))).round()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(pairs: &[(&str, &str)]) -> Attributes {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect()
    }

    #[test]
    fn settings_and_load_move_the_reading() {
        let p = Platform::new(2, "AMD EPYC 9654 96-Core Processor");
        let none = Attributes::new();
        let idle_c = watts(p, Phase::On, 0.0, &attrs(&[("ProcCStates", "Enabled")]), &none);
        let idle_noc = watts(p, Phase::On, 0.0, &attrs(&[("ProcCStates", "Disabled")]), &none);
        let busy = watts(p, Phase::On, 1.0, &attrs(&[("ProcCStates", "Enabled")]), &none);
        assert!(idle_c < idle_noc && idle_noc < busy, "{idle_c} {idle_noc} {busy}");
        assert_eq!(watts(p, Phase::Off, 1.0, &none, &none), 12.0);
        let low_tdp = watts(p, Phase::On, 1.0, &attrs(&[("ProcConfigTdp", "Minimum")]), &none);
        assert!(low_tdp < busy);
    }

    #[test]
    fn an_enabled_cap_clips_and_a_disabled_one_does_not() {
        let p = Platform::new(2, "AMD EPYC 9654");
        let cap = |setting: &str| {
            let mut s = Attributes::new();
            s.insert("ServerPwr.1.PowerCapSetting".into(), setting.into());
            s.insert("ServerPwr.1.PowerCapValue".into(), 500.into());
            watts(p, Phase::On, 1.0, &Attributes::new(), &s)
        };
        assert_eq!(cap("Enabled"), 500.0);
        assert!(cap("Disabled") > 500.0);
    }

    #[test]
    fn noise_is_small_and_deterministic() {
        assert_eq!(with_noise(400.0, 0.5), 400.0);
        assert_eq!(with_noise(400.0, 0.0), 394.0);
        assert_eq!(with_noise(400.0, 0.999), 406.0);
    }
}
