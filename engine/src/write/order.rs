//! A boot order the host's backend keeps apart from the BIOS values (an iLO's, in HPE's boot
//! settings): read through the BIOS that links it, carried among the BIOS values under the
//! backend's name for it, so a writer splits it out of the values it stages or clears and sends
//! it to its own settings object.

use crate::backend::{Backend, BootOrder};
use crate::connect::Bmc;
use crate::error::{HostError, HostErrorKind, Result};
use redfish_client::resources::bios::{Attributes, Bios};

/// The boot order the host's backend keeps apart, read through the BIOS resource `bios` (read
/// now when not given); `None` where it keeps none. Notes where the order is staged.
pub(crate) async fn read(bmc: &Bmc, bios: Option<&Bios>) -> Result<Option<BootOrder>> {
    let backend = bmc.backend();
    let Some(boot) = backend.boot().filter(|b| b.order_setting().is_some()) else {
        return Ok(None);
    };
    let read;
    let bios = match bios {
        Some(b) => b,
        None => {
            read = bmc
                .client
                .bios(&bmc.bios_id().await?)
                .await
                .map_err(|e| bmc.explain(e, "reading BIOS values"))?;
            bmc.note_settings_at(read.settings_object());
            &read
        }
    };
    let order = boot
        .order(&bmc.client, bios)
        .await
        .map_err(|e| bmc.explain(e, "reading the boot order"))?;
    if let Some(order) = &order {
        bmc.note_order_at(order.settings_at.clone());
    }
    Ok(order)
}

/// `values` split into what the BIOS settings object takes and the boot order the host's
/// backend keeps apart (device names, first to last), where `values` carry one.
pub(crate) fn split(backend: &Backend, values: &Attributes) -> (Attributes, Option<Vec<String>>) {
    let name = backend.boot().and_then(|b| b.order_setting());
    let Some((name, order)) = name.and_then(|n| Some((n, values.get(n)?))) else {
        return (values.clone(), None);
    };
    let mut rest = values.clone();
    rest.remove(name);
    let devices = order
        .as_str()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .collect();
    (rest, Some(devices))
}

/// Stages `order` where the host's backend keeps its boot order, for the next POST.
pub(crate) async fn stage(bmc: &Bmc, order: &[String]) -> Result<()> {
    let what = "staging the boot order";
    let backend = bmc.backend();
    let (Some(boot), Some(at)) = (backend.boot(), bmc.order_at().await?) else {
        let message = format!(
            "{what}: {} links no boot settings rftune can write",
            bmc.backend().kind()
        );
        return Err(HostError::new(&bmc.name, HostErrorKind::Unsupported, message).into());
    };
    boot.stage_order(&bmc.client, &at, order)
        .await
        .map(drop)
        .map_err(|e| bmc.explain(e, what))
}
