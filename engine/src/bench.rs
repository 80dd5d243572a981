//! What a benchmark run records from the server's BMC: the model, service tag, firmware, the
//! BIOS attributes in force, the DIMM inventory (for STREAM's theoretical peak) and the identity
//! of the machine it manages (to check that it is the machine the benchmark runs on), read once
//! before the run; then the power sensor and the idle baseline, from the run's [`Meter`].

use crate::connect::Bmc;
use crate::error::Result;
use crate::meter::Meter;
use crate::observe::Silent;
use host_bench::host::MachineId;
use host_bench::report::BmcInfo;
use host_bench::run::BmcFacts;
use host_bench::{power, stream};
use redfish_client::resources::computer_system::Memory;
use std::time::Duration;

/// Reads what a benchmark document records about the BMC's server (the power sensor and the
/// idle baseline come later, from the run's meter: [`record_idle_power`]).
pub async fn bmc_facts(bmc: &mut Bmc) -> Result<BmcFacts> {
    let root = bmc.service_root().await?;
    let backend = bmc.recognise().await?;
    let t = &*bmc;
    let c = &t.client;
    let system = match backend.places() {
        Some(places) => c
            .system(&places.system)
            .await
            .map_err(|e| t.explain(e, "reading the system"))?,
        None => t.first_system().await?,
    };
    let bios_link = system.bios_link();
    let (bios, memory) = tokio::join!(c.bios(&bios_link), c.memory(&system));
    let bios = bios.map_err(|e| t.explain(e, "reading BIOS attributes"))?;
    let memory = memory.map_err(|e| t.explain(e, "reading the DIMM inventory"))?;
    let idrac_firmware = match backend.places() {
        Some(places) => {
            c.get::<redfish_client::resources::manager::Manager>(places.manager.path())
                .await
                .map_err(|e| t.explain(e, "reading the iDRAC"))?
                .firmware_version
        }
        None => None,
    };
    let info = BmcInfo {
        host: t.name.clone(),
        model: system.model.clone(),
        service_tag: match backend.places() {
            Some(_) => backend.service_tag(&root),
            None => system.sku.clone(),
        },
        bios_version: system.bios_version.clone(),
        idrac_firmware,
        power_sensor: None,
        idle_power: None,
        bios_attributes: bios
            .attributes
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
            .collect(),
    };
    let machine = MachineId {
        serial: info.service_tag.clone(),
        uuid: system.uuid.clone(),
    };
    Ok(BmcFacts {
        info,
        dimms: memory.iter().map(dimm).collect(),
        machine,
    })
}

/// A DIMM as STREAM's peak counts it. The socket is [`Memory::socket`]'s: its
/// `MemoryLocation.Socket` where the BMC gives one, else the processor the DIMM links (what real
/// iDRACs give), else the letter of Dell's id.
fn dimm(m: &Memory) -> stream::Dimm {
    stream::Dimm {
        id: m.id.clone(),
        socket: m.socket(),
        channel: m.memory_location.as_ref().and_then(|l| l.channel),
        speed_mts: m.operating_speed_mhz,
        populated: m.capacity_mib.unwrap_or(0) > 0
            && m.status.as_ref().and_then(|s| s.state.as_deref()) != Some("Absent"),
    }
}

/// Records the meter's sensor in `info`, and with a non-zero `idle`, the idle baseline sampled
/// for that long (one sample a second at most).
pub async fn record_idle_power(meter: &Meter<'_>, idle: Duration, info: &mut BmcInfo) -> Result<()> {
    info.power_sensor = Some(meter.sensor.as_str().to_owned());
    if !idle.is_zero() {
        let samples = meter
            .sample_for(Duration::from_secs(1).min(idle), idle, &Silent)
            .await?;
        info.idle_power = power::stats(&samples);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real iDRACs (both R750 captures) give no `MemoryLocation`: the socket is the processor
    /// the DIMM links, and an absent slot does not count.
    #[test]
    fn a_dimm_takes_its_socket_from_the_processor_it_links() {
        let m: Memory = serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/Systems/System.Embedded.1/Memory/DIMM.Socket.B3",
            "Id": "DIMM.Socket.B3", "CapacityMiB": 65536, "OperatingSpeedMhz": 4800,
            "Status": {"State": "Enabled"},
            "Links": {"Processors": [{"@odata.id": "/redfish/v1/Systems/System.Embedded.1/Processors/CPU.Socket.2"}]}
        }))
        .unwrap();
        let d = dimm(&m);
        assert_eq!(
            (d.socket, d.channel, d.speed_mts, d.populated),
            (Some(2), None, Some(4800), true)
        );
        let empty: Memory = serde_json::from_value(serde_json::json!({
            "@odata.id": "/redfish/v1/Systems/System.Embedded.1/Memory/DIMM.Socket.A2",
            "Id": "DIMM.Socket.A2", "CapacityMiB": 0, "Status": {"State": "Absent"}
        }))
        .unwrap();
        assert!(!dimm(&empty).populated);
    }
}
