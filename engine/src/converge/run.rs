//! What an apply is made of: its options ([`ApplyOptions`]), what one run shares across its
//! hosts ([`ApplyRun`]), and what it reports per host ([`HostApply`], [`ApplyOutcome`]).

use crate::assess::LoadedProfile;
use crate::audit::AuditLog;
use crate::backend::AttributeGroup;
use crate::cache::RegistryCache;
use crate::control::RebootPolicy;
use crate::error::Result;
use crate::write::{WriteOptions, Writes};
use redfish_client::resources::bios::{Attributes, SettingsApplyTime};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How to apply.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// How to reboot.
    pub reboot: RebootPolicy,
    /// How long the OS gets to shut down before power is forced off.
    pub graceful_timeout: Duration,
    /// How long the BIOS job may take.
    pub job_timeout: Duration,
    /// How long the host may take to come back after the job.
    pub boot_timeout: Duration,
    /// Delete existing pending values and jobs instead of refusing.
    pub replace_pending: bool,
    /// Plan only.
    pub dry_run: bool,
    /// Unknown attributes are errors.
    pub strict: bool,
    /// When the BIOS values apply.
    pub apply_time: SettingsApplyTime,
    /// Commands run around each host's reboot.
    pub hooks: crate::hooks::Hooks,
    /// When a before-reboot hook fails, leave the staged values pending (they apply at the
    /// host's next reboot) instead of clearing them again.
    pub keep_staged: bool,
    /// How long to wait for another run's lock on a host before failing it.
    pub lock_wait: Duration,
    /// Reset the BIOS to its defaults first (`apply --from-defaults`): its own reboot, proven
    /// finished, before the profile is judged and staged — two reboots in all.
    pub from_defaults: bool,
    /// A BIOS password change to send before staging, applied by the same BIOS job.
    pub password: Option<crate::passwords::PasswordChange>,
}

impl ApplyOptions {
    /// How an apply writes, as every writer does.
    pub fn write_options(&self) -> WriteOptions {
        WriteOptions {
            reboot: self.reboot,
            graceful_timeout: self.graceful_timeout,
            job_timeout: self.job_timeout,
            boot_timeout: self.boot_timeout,
            replace_pending: self.replace_pending,
            hooks: self.hooks.clone(),
            keep_staged: self.keep_staged,
            lock_wait: self.lock_wait,
        }
    }

    /// The options a plan made with these records: how hosts reboot, when values apply,
    /// whether pending work is replaced, strictness.
    pub fn plan_options(&self) -> crate::plan::PlanOptions {
        crate::plan::PlanOptions {
            reboot: match self.reboot {
                RebootPolicy::Graceful => "graceful",
                RebootPolicy::Force => "force",
                RebootPolicy::None => "none",
            }
            .into(),
            apply_time: self.apply_time.clone(),
            replace_pending: self.replace_pending,
            strict: self.strict,
        }
    }

    /// These options with what `plan` decided (how hosts reboot, when values apply, whether
    /// pending work is replaced, strictness), for applying it: not a dry run.
    pub fn follow_plan(&mut self, plan: &crate::plan::PlanOptions) -> Result<()> {
        self.reboot = match plan.reboot.as_str() {
            "graceful" => RebootPolicy::Graceful,
            "force" => RebootPolicy::Force,
            "none" => RebootPolicy::None,
            other => crate::error::bad_input!("the plan's reboot policy {other:?} is none of graceful, force, none"),
        };
        self.apply_time = plan.apply_time.clone();
        self.replace_pending = plan.replace_pending;
        self.strict = plan.strict;
        self.dry_run = false;
        Ok(())
    }
}

impl Default for ApplyOptions {
    /// A graceful reboot (10 min for the OS, then forced), 30 min for the BIOS job, 20 min for
    /// the host to come back, values applied at that reboot; pending work refused.
    fn default() -> Self {
        Self {
            reboot: RebootPolicy::Graceful,
            graceful_timeout: Duration::from_secs(600),
            job_timeout: Duration::from_secs(1800),
            boot_timeout: Duration::from_secs(1200),
            replace_pending: false,
            dry_run: false,
            strict: false,
            apply_time: SettingsApplyTime::on_reset(),
            hooks: crate::hooks::Hooks::default(),
            keep_staged: false,
            lock_wait: Duration::ZERO,
            from_defaults: false,
            password: None,
        }
    }
}

/// How one host's apply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyOutcome {
    /// Already matched the profile: nothing written, no reboot.
    InSync,
    /// Changed, rebooted where needed, and verified clean.
    Converged,
    /// Changes are staged but not applied yet (`--reboot none`, maintenance window), or the
    /// verification found differences.
    NotConverged,
    /// `--dry-run`: the plan only.
    Planned,
    /// The BMC accepted the staged values, but the BIOS refused some of them at the POST that
    /// processed them (an HPE iLO takes anything at PATCH time and names what it refused in
    /// `@Redfish.Settings.Messages`): never success.
    NotApplied,
}

/// The per-host part of the `rftune.apply/v1` document.
#[derive(Debug, Clone, Serialize)]
pub struct HostApply {
    /// Outcome.
    pub outcome: ApplyOutcome,
    /// Service tag.
    pub service_tag: Option<String>,
    /// BIOS attributes written (unlocks included).
    pub bios: Attributes,
    /// iDRAC attributes written, by group.
    pub idrac: BTreeMap<AttributeGroup, Attributes>,
    /// Unlocks the plan added, one line each.
    pub unlocks: Vec<String>,
    /// How this host's values were chosen for settings its registry decides (ordered choices,
    /// accepted tokens, derived bounds), by attribute; also those it offers nothing for.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub choices: BTreeMap<String, bios_profiles::Choice>,
    /// Pending values rftune adopted from an earlier run instead of staging again.
    pub adopted: bool,
    /// Pending work that was discarded (`--replace-pending`).
    pub replaced: Option<String>,
    /// The snapshot taken before any change.
    pub snapshot: Option<PathBuf>,
    /// The BIOS job.
    pub job: Option<String>,
    /// Whether rftune rebooted the host.
    pub rebooted: bool,
    /// The diff after the change; for a host that had nothing to change, the diff that found
    /// so (its `unverified` counts the settings no evidence let rftune check).
    pub verify: Option<bios_profiles::StatusCounts>,
    /// What it means that an attribute reads back another value than the one written, where
    /// the profile knows (an NPS the BIOS replaced at POST), by attribute.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub readback: BTreeMap<String, String>,
    /// The BIOS reset to defaults that came first (`--from-defaults`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defaults: Option<crate::defaults::DefaultsDone>,
    /// The BIOS password change the job applied: which, and what was done (never a password).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<serde_json::Value>,
    /// The profile's attributes as the BIOS reports them at the end (from the last read;
    /// for callers that go on working under the profile, not part of the JSON document).
    #[serde(skip)]
    pub in_force: Attributes,
    /// A sentence for people.
    pub summary: String,
    /// The hooks that ran, `before-reboot: ok` (only when hooks are set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
    /// The host's plan as `rftune plan` writes it (for dry runs; not part of this document).
    #[serde(skip)]
    pub planned: Option<Box<crate::plan::PlannedHost>>,
}

/// What a writing run of `command` (`apply`, `restore`) shares across its hosts besides its
/// options: the registry cache (its newest copies read ahead) and the writes (audit log,
/// state directory, at most `max_rebooting` hosts rebooting at once).
pub(crate) fn run_parts(
    command: &'static str,
    dirs: &crate::state::StateDirs,
    options: &ApplyOptions,
    max_rebooting: usize,
) -> Result<(RegistryCache, Writes)> {
    let cache = dirs.registry_cache();
    cache.prefetch_newest();
    let writes = Writes::new(
        command,
        options.write_options(),
        AuditLog::open(&dirs.state)?,
        &dirs.state,
        max_rebooting,
    );
    Ok((cache, writes))
}

/// What one apply (or restore) of a profile shares across its hosts: the profile, the registry
/// cache, the options, and the writes (audit log, state directory, reboot slots, hooks).
#[derive(Debug)]
pub struct ApplyRun {
    /// The profile.
    pub profile: LoadedProfile,
    /// Registry cache.
    pub cache: RegistryCache,
    /// Options.
    pub options: ApplyOptions,
    /// How its hosts are written to.
    pub writes: Writes,
    /// The plan to apply exactly (`apply --plan`): each host is held to its entry.
    pub plan: Option<Arc<crate::plan::PlanDocument>>,
}

impl ApplyRun {
    /// A run of `profile` with the state directories of `dirs` (registry cache, audit log,
    /// snapshots and markers), letting at most `max_rebooting` hosts reboot at once.
    pub fn new(
        profile: LoadedProfile,
        dirs: &crate::state::StateDirs,
        options: ApplyOptions,
        max_rebooting: usize,
    ) -> Result<Self> {
        let (cache, writes) = run_parts("apply", dirs, &options, max_rebooting)?;
        let writes = writes.labelled(profile.name());
        Ok(Self {
            profile,
            cache,
            options,
            writes,
            plan: None,
        })
    }

    /// This run applies `plan` exactly: each host is re-read before its first write and
    /// refused when it differs from its entry.
    #[must_use]
    pub fn with_plan(mut self, plan: Arc<crate::plan::PlanDocument>) -> Self {
        self.plan = Some(plan);
        self
    }

    /// The audit log.
    pub fn audit(&self) -> &AuditLog {
        &self.writes.audit
    }

    /// This run, its hosts counted against `slots` (shared with other runs: one limit on
    /// rebooting hosts across several profiles).
    #[must_use]
    pub fn sharing(mut self, slots: &crate::write::RebootSlots) -> Self {
        self.writes = self.writes.sharing(slots);
        self
    }
}
