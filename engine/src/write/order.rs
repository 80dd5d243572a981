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

/// Why staging a boot order failed, and whether the order may be staged all the same.
pub(crate) struct StageFailure {
    /// The error, for the host's report.
    pub error: crate::Error,
    /// Whether the PATCH may have been applied (its answer lost, and reading back failed):
    /// rftune's record of the staging is kept for the next run.
    pub may_be_staged: bool,
}

impl StageFailure {
    fn definite(error: crate::Error) -> Self {
        Self {
            error,
            may_be_staged: false,
        }
    }
}

/// Stages `order` where the host's backend keeps its boot order, for the next POST. A PATCH
/// whose answer was lost is never resent blindly: the order is read back, and sent once more
/// only when the settings object still holds the order in force.
pub(crate) async fn stage(bmc: &Bmc, order: &[String]) -> std::result::Result<(), StageFailure> {
    let what = "staging the boot order";
    let backend = bmc.backend();
    let at = match bmc.noted_order() {
        Some(at) => Some(at),
        None => read(bmc, None)
            .await
            .map_err(StageFailure::definite)?
            .map(|o| o.settings_at),
    };
    let (Some(boot), Some(at)) = (backend.boot(), at) else {
        let message = format!(
            "{what}: {} links no boot settings rftune can write",
            bmc.backend().kind()
        );
        let error = HostError::new(&bmc.name, HostErrorKind::Unsupported, message).into();
        return Err(StageFailure::definite(error));
    };
    for attempt in 1..=2 {
        let err = match boot.stage_order(&bmc.client, &at, order).await {
            Ok(_) => return Ok(()),
            Err(e) if !e.write_outcome_unknown() => return Err(StageFailure::definite(bmc.explain(e, what))),
            Err(e) => e,
        };
        tracing::warn!(host = %bmc.name, error = %err, "the answer to the boot order PATCH was lost; reading the boot settings back");
        let back = read(bmc, None).await;
        match back {
            Ok(Some(now)) if now.pending == order => return Ok(()),
            Ok(Some(now)) if now.pending == now.current && attempt == 1 => {}
            Ok(Some(now)) if now.pending == now.current => {
                let error = bmc
                    .explain(err, what)
                    .context("the read-back shows no boot order staged; no further attempt");
                return Err(StageFailure::definite(error));
            }
            Ok(Some(now)) => {
                let message = format!(
                    "after a lost answer to the boot order PATCH, the boot settings hold {} (in force: {}), not what rftune sent; check with `rftune diff`",
                    now.pending.join(","),
                    now.current.join(",")
                );
                let error = HostError::new(&bmc.name, HostErrorKind::OutcomeUnknown, message).into();
                return Err(StageFailure::definite(error));
            }
            Ok(None) | Err(_) => {
                let error = bmc.explain(err, what).context(
                    "the boot order may be staged, and reading it back failed; rerun `rftune apply`: it stages the whole plan again",
                );
                return Err(StageFailure {
                    error,
                    may_be_staged: true,
                });
            }
        }
    }
    // The second attempt returns on every path above.
    Ok(())
}
