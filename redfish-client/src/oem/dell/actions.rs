//! iDRAC actions over a [`Client`]: `client.dell().create_bios_job()` and friends.

use super::{
    AttributeGroup, BIOS_REGISTRY, BIOS_SETTINGS, CLEAR_PENDING, DELETE_JOB_QUEUE, DellAttributes, DellJob, JOBS,
    LC_STATUS, LcStatus, OEM_JOBS, SYSTEM_LOCKDOWN, job_body,
};
use crate::client::{Client, Written};
use crate::error::Result;
use crate::odata::ODataId;
use crate::resources::attribute_registry::AttributeRegistry;
use crate::resources::bios::Attributes;
use crate::resources::log_entry::LogEntry;
use serde_json::json;

/// A borrowed handle for iDRAC-only operations.
#[derive(Debug, Clone, Copy)]
pub struct Dell<'a> {
    client: &'a Client,
}

/// What `DeleteJobQueue` removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobQueueClear {
    /// One job.
    Job(String),
    /// Every job (`JID_CLEARALL`).
    All,
    /// Every job, restarting Lifecycle Controller services (`JID_CLEARALL_FORCE`): last resort.
    AllForce,
}

impl Client {
    /// iDRAC-specific operations.
    pub fn dell(&self) -> Dell<'_> {
        Dell { client: self }
    }
}

impl Dell<'_> {
    /// The BIOS attribute registry at its iDRAC location (one request, no pointer lookup).
    pub async fn bios_registry(&self) -> Result<AttributeRegistry> {
        self.client.get(BIOS_REGISTRY).await
    }

    /// Creates a BIOS configuration job for values staged without an apply time
    /// (`POST Jobs {"TargetSettingsURI": ".../Bios/Settings"}`); returns the job link.
    pub async fn create_bios_job(&self) -> Result<ODataId> {
        let written = self.client.post(JOBS, &job_body(BIOS_SETTINGS)).await?;
        written.location.ok_or_else(|| {
            self.client.protocol_error(
                "POST",
                JOBS,
                format!("job created (HTTP {}) without a Location header", written.status),
            )
        })
    }

    /// One job, by id (`JID_...`) or link: at the advertised `Oem/Dell/Jobs` path, or the
    /// older `Jobs` path where the first is missing.
    pub async fn job(&self, id: &str) -> Result<DellJob> {
        if id.starts_with('/') {
            return self.client.get(ODataId::new(id).path()).await;
        }
        match self.client.get(&format!("{OEM_JOBS}/{id}")).await {
            Err(e) if e.status() == Some(404) => self.client.get(&format!("{JOBS}/{id}")).await,
            other => other,
        }
    }

    /// Every job in the queue, expanded: from the advertised `Oem/Dell/Jobs` collection, or
    /// the older `Jobs` collection where the first is missing.
    pub async fn jobs(&self) -> Result<Vec<DellJob>> {
        match self.client.expanded_members(OEM_JOBS).await {
            Err(e) if e.status() == Some(404) => self.client.expanded_members(JOBS).await,
            other => other,
        }
    }

    /// The latest `n` Lifecycle-log entries, newest first: one request for up to a page (50).
    pub async fn lifecycle_log(&self, n: usize) -> Result<Vec<LogEntry>> {
        self.client.first_members(super::lclog::LCLOG_ENTRIES, n).await
    }

    /// Deletes one job; for a BIOS job this also discards its pending values.
    pub async fn delete_job(&self, id: &str) -> Result<Written> {
        if id.starts_with('/') {
            return self.client.delete(ODataId::new(id).path()).await;
        }
        match self.client.delete(&format!("{OEM_JOBS}/{id}")).await {
            Err(e) if e.status() == Some(404) => self.client.delete(&format!("{JOBS}/{id}")).await,
            other => other,
        }
    }

    /// Whether System Lockdown is on (`Lockdown.1.SystemLockdown = Enabled`), which makes the
    /// BIOS and iDRAC settings read-only. Asks for that one attribute with `$select`; a service
    /// that refuses the query is read whole. `None` when the iDRAC does not report it (older
    /// firmware has no lockdown).
    pub async fn system_lockdown(&self) -> Result<Option<bool>> {
        let path = AttributeGroup::Idrac.path();
        let selected = crate::request::select(&path, &[&format!("Attributes/{SYSTEM_LOCKDOWN}")]);
        let attrs: DellAttributes = match self.client.get(&selected).await {
            Err(e) if matches!(e.status(), Some(400 | 405 | 501)) => self.client.get(&path).await?,
            other => other?,
        };
        Ok(attrs
            .attributes
            .get(SYSTEM_LOCKDOWN)
            .and_then(|v| v.as_str())
            .map(|v| v.eq_ignore_ascii_case("Enabled")))
    }

    /// `DellJobService.DeleteJobQueue`.
    pub async fn clear_job_queue(&self, what: &JobQueueClear) -> Result<Written> {
        let id = match what {
            JobQueueClear::Job(id) => id.as_str(),
            JobQueueClear::All => "JID_CLEARALL",
            JobQueueClear::AllForce => "JID_CLEARALL_FORCE",
        };
        self.client.post(DELETE_JOB_QUEUE, &json!({ "JobID": id })).await
    }

    /// `DellManager.ClearPending`: discards staged BIOS values (refused while a job exists).
    pub async fn clear_pending(&self) -> Result<Written> {
        self.client.post(CLEAR_PENDING, &json!({})).await
    }

    /// A `DellAttributes` resource.
    pub async fn attributes(&self, group: AttributeGroup) -> Result<DellAttributes> {
        self.client.get(&group.path()).await
    }

    /// Sets iDRAC attributes; they apply immediately. Enumerations take display strings.
    pub async fn set_attributes(&self, group: AttributeGroup, attributes: &Attributes) -> Result<Written> {
        let body = crate::request::settings_body(attributes, None);
        self.client.patch(&group.path(), &body).await
    }

    /// Lifecycle Controller readiness.
    pub async fn lc_status(&self) -> Result<LcStatus> {
        let written = self.client.post(LC_STATUS, &json!({})).await?;
        serde_json::from_value(written.body).map_err(|e| {
            self.client.protocol_error(
                "POST",
                LC_STATUS,
                format!("unexpected GetRemoteServicesAPIStatus answer: {e}"),
            )
        })
    }
}
