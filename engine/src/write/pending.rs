//! Work already staged on a host, as every writer meets it: pending values or an open BIOS job
//! rftune did not stage are refused, or deleted on request (`--replace-pending`); values an
//! earlier `apply` staged ride on the writer's reboot only where the writer says they may (a
//! one-time boot), and are refused otherwise. An apply decides what to do with pending work
//! itself (it may adopt its own) and deletes through [`Writer::discard`] too.

use super::Writer;
use crate::audit::Step;
use crate::backend::{Job, JobOutcome, QueueClear};
use crate::error::{HostError, HostErrorKind, Result};
use crate::observe::Event;
use redfish_client::resources::bios::{Attributes, Bios, BiosSettings};
use serde_json::{Value, json};

/// What is staged on a host.
#[derive(Debug, Clone, Default)]
pub struct Pending {
    /// Pending BIOS values.
    pub values: Attributes,
    /// Open BIOS jobs (scheduled, running, stuck).
    pub jobs: Vec<Job>,
    /// Whether an earlier `apply` of rftune staged exactly these values (its marker says so).
    pub ours: bool,
    /// The BIOS resource as read, where the settings object mirrors every value (an iLO):
    /// what clearing writes back, and where the BIOS links a boot order kept apart.
    pub(crate) bios: Option<Bios>,
}

impl Pending {
    /// What is staged, from pending `values` and the job queue `jobs` as read, and whether
    /// rftune's marker for `host` under `state_dir` names exactly these values.
    pub fn of(values: Attributes, jobs: &[Job], state_dir: &std::path::Path, host: &str) -> Self {
        let ours = !values.is_empty()
            && crate::marker::files(state_dir, host)
                .iter()
                .filter_map(|f| crate::marker::read(f))
                .any(|m| m.bios == values);
        Self {
            values,
            jobs: jobs.iter().filter(|j| j.is_open_bios_job()).cloned().collect(),
            ours,
            bios: None,
        }
    }

    /// Whether anything is staged.
    pub fn any(&self) -> bool {
        !self.values.is_empty() || !self.jobs.is_empty()
    }

    /// `BIOS job JID_1 (Scheduled) with pending value(s) A=1`, for messages.
    pub fn describe(&self) -> String {
        let jobs: Vec<String> = self
            .jobs
            .iter()
            .map(|j| format!("{} ({})", j.id, j.job_state))
            .collect();
        let values: Vec<String> = crate::snapshot::without_secrets(&self.values)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        match (jobs.is_empty(), values.is_empty()) {
            (true, true) => "nothing".into(),
            (false, true) => format!("BIOS job {}", jobs.join(", ")),
            (true, false) => format!("{} pending BIOS value(s): {}", values.len(), values.join(", ")),
            (false, false) => format!(
                "BIOS job {} with pending value(s) {}",
                jobs.join(", "),
                values.join(", ")
            ),
        }
    }
}

/// Where a user sees what is pending on a host: its job queue, or on a BMC without one (an
/// iLO) the PENDING column of `diff`.
pub(crate) fn inspect_pending(backend: &crate::backend::Backend, url: &str) -> String {
    match backend.jobs() {
        Some(_) => format!("`rftune jobs list --bmc {url}`"),
        None => format!("`rftune diff --bmc {url}` with the profile (its PENDING column)"),
    }
}

/// What [`Writer::settle`] does with rftune's own staged values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// They may ride on the operation's reboot (their job runs at that POST).
    RideAlong,
    /// They are refused like anyone else's (or deleted with `--replace-pending`).
    Refuse,
}

impl Writer<'_> {
    /// Reads what is staged on the host: pending values and the job queue (two requests, at
    /// once); on a BMC without jobs whose settings object mirrors every value (an iLO), the
    /// settings object and the current values instead, what differs being pending.
    pub async fn pending(&self) -> Result<Pending> {
        let presumed = !self.bmc.recognised();
        match self.pending_at_backend().await {
            // Not the presumed iDRAC: the service root says which backend it is, and where.
            Err(e) if presumed && e.redfish().and_then(redfish_client::Error::status) == Some(404) => {
                self.bmc.recognise().await?;
                self.pending_at_backend().await
            }
            read => read,
        }
    }

    /// [`Writer::pending`] where the host's backend, as known now, keeps it.
    async fn pending_at_backend(&self) -> Result<Pending> {
        let bmc = self.bmc;
        let backend = bmc.backend();
        // A backend at fixed places lists only what is staged; one read by its links mirrors,
        // and its BIOS, read first where nothing named the settings object yet, names it.
        let (settings, read_first, bios) = match (backend.places(), bmc.noted_settings()) {
            (Some(p), _) => (p.bios_settings.clone(), None, None),
            (None, Some(noted)) => (noted, None, Some(bmc.bios_id().await?)),
            (None, None) => {
                let read = bmc
                    .client
                    .bios(&bmc.bios_id().await?)
                    .await
                    .map_err(|e| bmc.explain(e, "reading BIOS values"))?;
                let at = read.settings_object();
                bmc.note_settings_at(at.clone());
                (at, Some(read), None)
            }
        };
        let jobs = async {
            match backend.jobs() {
                Some(queue) => queue.list(&bmc.client).await,
                None => Ok(Vec::new()),
            }
        };
        let current = async {
            match (read_first, &bios) {
                (Some(read), _) => Ok(Some(read)),
                (None, Some(bios)) => bmc.client.bios(bios).await.map(Some),
                (None, None) => Ok(None),
            }
        };
        let (values, jobs, current) = tokio::join!(bmc.client.get::<BiosSettings>(settings.path()), jobs, current);
        let values = values
            .map_err(|e| bmc.explain(e, "reading pending BIOS values"))?
            .attributes;
        let jobs = jobs.map_err(|e| bmc.explain(e, "reading the job queue"))?;
        let current = current.map_err(|e| bmc.explain(e, "reading BIOS values"))?;
        // The backend's own places answered: it is recognised.
        bmc.confirm_backend();
        let values = match &current {
            Some(bios) => backend.pending().pending(&bios.attributes, values),
            None => backend.pending().pending(&Attributes::new(), values),
        };
        let mut pending = Pending::of(values, &jobs, &self.writes.state_dir, self.name());
        pending.bios = current;
        Ok(pending)
    }

    /// Deals with `pending` before `what` (`a BIOS reset to defaults`) writes to the host:
    /// nothing staged, or rftune's own values where `own` lets them ride, goes on; anything
    /// else is refused, or with `--replace-pending` deleted. Returns what was discarded.
    pub async fn settle(&self, pending: &Pending, own: Own, what: &str) -> Result<Option<String>> {
        let replace = self.options().replace_pending;
        if !pending.any() || (pending.ours && own == Own::RideAlong && !replace) {
            return Ok(None);
        }
        let desc = pending.describe();
        if !replace {
            self.audit(Step::Pending, Value::Null, "refused", json!(desc))?;
            let whose = if pending.ours {
                " (staged by an earlier rftune apply)"
            } else {
                ""
            };
            let message = format!(
                "{desc} already staged{whose}; rftune does not put {what} on top of pending work. Inspect it with {}, then rerun with --replace-pending to delete it",
                inspect_pending(&self.bmc.backend(), &self.url())
            );
            return Err(HostError::new(self.name(), HostErrorKind::PendingWork, message).into());
        }
        self.discard(&pending.jobs, &pending.values).await?;
        Ok(Some(desc))
    }

    /// Deletes the open BIOS jobs `jobs` (and with them their values: through the queue's own
    /// service when a direct delete fails), or clears the pending `values` when no job holds
    /// them; each deletion recorded and told.
    pub async fn discard(&self, jobs: &[Job], values: &Attributes) -> Result<()> {
        let bmc = self.bmc;
        let backend = bmc.backend();
        // Asked for, or rftune's own values staged again whole (part of an earlier run's).
        let why = if self.options().replace_pending {
            "--replace-pending"
        } else {
            "rftune's own, staged again whole"
        };
        for j in jobs {
            if j.outcome == JobOutcome::Running {
                let message = format!(
                    "BIOS job {} is running; wait for it to finish before replacing it",
                    j.id
                );
                return Err(HostError::new(self.name(), HostErrorKind::PendingWork, message).into());
            }
            let queue = bmc.require(&backend, crate::backend::Backend::jobs, "job queue")?;
            let deleted = match queue.delete(&bmc.client, &j.id).await {
                Ok(_) => Ok(()),
                // A stuck job some firmware will not delete directly: through the job service.
                Err(first) => queue
                    .clear(&bmc.client, &QueueClear::Job(j.id.clone()))
                    .await
                    .map(drop)
                    .map_err(|_| first),
            };
            if let Err(e) = deleted {
                self.audit(
                    Step::Replace,
                    json!({"delete_job": j.id}),
                    "error",
                    json!(e.to_string()),
                )?;
                let hint = format!(
                    "if the job will not go, `rftune jobs clear-queue --bmc {}` clears the whole queue",
                    self.url()
                );
                return Err(bmc.explain(e, &format!("deleting job {}", j.id)).context(hint));
            }
            self.audit(Step::Replace, json!({"delete_job": j.id}), "ok", Value::Null)?;
            let code = j.message_code().map(|c| format!(", {c}")).unwrap_or_default();
            let text = format!(
                "deleted BIOS job {} ({}{code}) and its pending values ({why})",
                j.id, j.job_state
            );
            self.observer.event(&Event::notice(self.name(), text));
        }
        if jobs.is_empty() && !values.is_empty() {
            self.clear_values(values).await?;
            let request = json!({"clear_pending": crate::snapshot::without_secrets(values)});
            self.audit(Step::Replace, request, "ok", Value::Null)?;
            let text = format!("cleared {} pending BIOS value(s) ({why})", values.len());
            self.observer.event(&Event::notice(self.name(), text));
        }
        Ok(())
    }

    /// Discards pending BIOS `values` the way the host's backend does; a pending boot order the
    /// backend keeps apart (an iLO's) gets the order in force back.
    pub(crate) async fn clear_values(&self, values: &Attributes) -> Result<()> {
        self.clear_against(values, None).await
    }

    /// [`Writer::clear_values`], with the BIOS resource `bios` where the caller just read it.
    pub(crate) async fn clear_against(&self, values: &Attributes, bios: Option<&Bios>) -> Result<()> {
        let bmc = self.bmc;
        let (values, order) = crate::write::order::split(&bmc.backend(), values);
        if order.is_some() {
            self.clear_order(bios).await?;
            if values.is_empty() {
                return Ok(());
            }
        }
        let values = &values;
        let backend = bmc.backend();
        let settings = bmc.settings_id().await?;
        let current = match (backend.places(), bios) {
            // A backend that lists only what is staged discards without knowing current values.
            (Some(_), _) => Attributes::new(),
            (None, Some(bios)) => bios.attributes.clone(),
            (None, None) => {
                bmc.client
                    .bios(&bmc.bios_id().await?)
                    .await
                    .map_err(|e| bmc.explain(e, "reading BIOS values"))?
                    .attributes
            }
        };
        backend
            .pending()
            .clear(&bmc.client, &settings, &current, values)
            .await
            .map(drop)
            .map_err(|e| bmc.explain(e, "clearing pending BIOS values"))
    }

    /// Stages the boot order in force again over a staged one, where the backend keeps the
    /// order apart from the BIOS (read through `bios`, or the BIOS read now); whether it did.
    pub(crate) async fn clear_order(&self, bios: Option<&Bios>) -> Result<bool> {
        let bmc = self.bmc;
        let backend = bmc.backend();
        let (Some(boot), Some(order)) = (backend.boot(), super::order::read(bmc, bios).await?) else {
            return Ok(false);
        };
        if order.pending == order.current {
            return Ok(false);
        }
        boot.stage_order(&bmc.client, &order.settings_at, &order.current)
            .await
            .map_err(|e| bmc.explain(e, "clearing the staged boot order"))?;
        Ok(true)
    }
}
