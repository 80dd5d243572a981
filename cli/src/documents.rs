//! The vocabulary of rftune's fleet documents, in one place: the kinds of output and their
//! schema names (`rftune.diff/v1`, `rftune.apply.host/v1`, …), the per-host statuses, the
//! summaries that count them, the fleet exit rule, and the documents of `diff` and `apply`.
//! Commands and `merge` build and read documents through this module; none imports another.

use crate::Exit;
use anyhow::Result;
use bios_profiles::{Change, HostVerdict, StatusCounts};
use rftune_engine::HostErrorKind;
use rftune_engine::assess::Assessment;
use rftune_engine::audit::AuditLog;
use rftune_engine::converge::{ApplyOutcome, HostApply};
use rftune_engine::fleet::HostResult;
use serde::Serialize;
use serde_json::Value;

/// The schema of `rftune scp export -o json`.
pub const SCP_EXPORT_SCHEMA: &str = "rftune.scp-export/v1";
/// The schema of `rftune scp import --preview -o json`.
pub const SCP_PREVIEW_SCHEMA: &str = "rftune.scp-preview/v1";
/// The schema of `rftune scp import -o json`.
pub const SCP_IMPORT_SCHEMA: &str = "rftune.scp-import/v1";
/// The schema of `rftune scp render -o json`.
pub const SCP_RENDER_SCHEMA: &str = "rftune.scp-render/v1";
/// The schema of `rftune profiles derive --from-scp -o json`.
pub const SCP_DERIVE_SCHEMA: &str = "rftune.scp-derive/v1";

/// Which command wrote an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// `rftune diff`.
    Diff,
    /// `rftune apply` (and `restore`).
    Apply,
}

impl DocumentKind {
    /// Every kind.
    pub const ALL: [Self; 2] = [Self::Diff, Self::Apply];

    /// The command's name (`diff`, `apply`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Diff => "diff",
            Self::Apply => "apply",
        }
    }

    /// The schema of the command's `-o json` document.
    pub const fn schema(self) -> &'static str {
        match self {
            Self::Diff => "rftune.diff/v1",
            Self::Apply => "rftune.apply/v1",
        }
    }

    /// The schema of an `-o jsonl` host line.
    pub const fn host_schema(self) -> &'static str {
        match self {
            Self::Diff => "rftune.diff.host/v1",
            Self::Apply => "rftune.apply.host/v1",
        }
    }

    /// The schema of the last `-o jsonl` line.
    pub const fn summary_schema(self) -> &'static str {
        match self {
            Self::Diff => "rftune.diff.summary/v1",
            Self::Apply => "rftune.apply.summary/v1",
        }
    }

    /// The field of a host entry that says how it ended.
    pub fn status_field(self) -> &'static str {
        match self {
            Self::Diff => "status",
            Self::Apply => "outcome",
        }
    }

    /// The statuses this kind writes, as spelled.
    pub fn statuses(self) -> Vec<&'static str> {
        match self {
            Self::Diff => DiffStatus::ALL.map(DiffStatus::as_str).to_vec(),
            Self::Apply => ApplyStatus::ALL.map(ApplyStatus::as_str).to_vec(),
        }
    }

    /// The kind whose `which` schema (e.g. [`DocumentKind::schema`]) is `schema`.
    pub fn of(schema: &str, which: fn(Self) -> &'static str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| which(*k) == schema)
    }
}

/// The `rftune.diff/v1` document.
#[derive(Debug, Serialize)]
pub struct DiffReport {
    /// Always `rftune.diff/v1`.
    pub schema: &'static str,
    /// The profile compared against.
    pub profile: String,
    /// `K/N` when the run was given `--shard K/N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// One entry per host, in inventory order.
    pub hosts: Vec<HostDiff>,
    /// Counts of hosts by status.
    pub summary: DiffSummary,
}

impl DiffReport {
    /// The document of `hosts` compared against `profile`, counted.
    pub fn of(profile: &str, shard: Option<String>, hosts: Vec<HostDiff>) -> Self {
        let mut summary = DiffSummary {
            hosts: hosts.len(),
            ..DiffSummary::default()
        };
        hosts.iter().for_each(|h| summary.count(h.status));
        Self {
            schema: DocumentKind::Diff.schema(),
            profile: profile.to_owned(),
            shard,
            hosts,
            summary,
        }
    }
}

/// One host's diff.
#[derive(Debug, Serialize)]
pub struct HostDiff {
    /// The host's name.
    pub host: String,
    /// `in_sync`, `drift` or `error`.
    pub status: DiffStatus,
    /// Service tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tag: Option<String>,
    /// Model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// BIOS version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bios_version: Option<String>,
    /// Per attribute, in stable order.
    pub changes: Vec<Change>,
    /// Attributes per status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<StatusCounts>,
    /// Whether System Lockdown is on: the host cannot be changed until it is turned off.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lockdown: bool,
    /// Validation findings, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    /// Why the host could not be compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What kind of failure that was, for scripts (`unreachable`, `credentials`, …; see
    /// [`HostErrorKind::ALL`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<HostErrorKind>,
    /// The MessageIds the BMC gave for it, when it gave some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub message_ids: Vec<String>,
}

/// How a host compares: a `status` of `rftune.diff/v1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffStatus {
    /// Every attribute as the profile wants it.
    InSync,
    /// Nothing checked differs, but some settings could not be checked for lack of evidence
    /// for the host's CPU generation (EPYC 9005 today): not proven in sync.
    Unverified,
    /// Drift, or pending changes.
    Drift,
    /// Not compared, or the profile is invalid for it.
    Error,
}

impl DiffStatus {
    /// Every status, in the order the summary counts them.
    pub const ALL: [Self; 4] = [Self::InSync, Self::Unverified, Self::Drift, Self::Error];

    /// As the JSON output spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InSync => "in_sync",
            Self::Unverified => "unverified",
            Self::Drift => "drift",
            Self::Error => "error",
        }
    }

    /// The status spelled `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl Serialize for DiffStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Hosts by outcome.
#[derive(Debug, Default, Serialize)]
pub struct DiffSummary {
    /// Hosts compared.
    pub hosts: usize,
    /// In sync.
    pub in_sync: usize,
    /// Not proven in sync: nothing checked differs, but some settings have no evidence for
    /// the host's CPU generation.
    pub unverified: usize,
    /// With drift (or pending changes).
    pub drift: usize,
    /// Not compared, or the profile is invalid for them.
    pub error: usize,
}

/// The counts line of the text output, e.g. `3 hosts: 1 in sync, 2 drift, 0 error`, with
/// `N unverified` after the in-sync count when there are such hosts.
impl std::fmt::Display for DiffSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} hosts: {} in sync, ", self.hosts, self.in_sync)?;
        if self.unverified > 0 {
            write!(f, "{} unverified, ", self.unverified)?;
        }
        write!(f, "{} drift, {} error", self.drift, self.error)
    }
}

impl DiffSummary {
    /// Counts one host of `status`.
    pub fn count(&mut self, status: DiffStatus) {
        match status {
            DiffStatus::InSync => self.in_sync += 1,
            DiffStatus::Unverified => self.unverified += 1,
            DiffStatus::Drift => self.drift += 1,
            DiffStatus::Error => self.error += 1,
        }
    }

    /// The fleet exit rule: error beats drift and unverified (exit 2: not proven in sync, with
    /// or without `--strict`) beat in sync.
    pub fn exit(&self) -> Result<Exit> {
        if self.error > 0 {
            anyhow::bail!(
                "{} of {} host(s) failed: unreadable, or the profile cannot be applied to them as written (see each host above)",
                self.error,
                self.hosts
            );
        }
        Ok(if self.drift + self.unverified > 0 {
            Exit::Drift
        } else {
            Exit::Success
        })
    }
}

/// One host's entry of the report.
pub fn host_diff(profile: &str, r: &HostResult<Assessment>) -> HostDiff {
    match &r.result {
        Ok(a) => {
            let invalid = a.errors().next().is_some();
            let status = if invalid {
                DiffStatus::Error
            } else {
                match a.diff.verdict() {
                    HostVerdict::InSync => DiffStatus::InSync,
                    HostVerdict::Unverified => DiffStatus::Unverified,
                    HostVerdict::Drift => DiffStatus::Drift,
                }
            };
            HostDiff {
                host: r.entry.name.clone(),
                status,
                service_tag: a.state.service_tag.clone(),
                model: a.state.model.clone(),
                bios_version: a.state.bios_version.clone(),
                changes: a.diff.changes.clone(),
                counts: Some(a.diff.counts()),
                lockdown: a.state.in_lockdown(),
                violations: a
                    .state
                    .in_lockdown()
                    .then(|| {
                        format!(
                            "warning: {}; apply will refuse it",
                            rftune_engine::read::lockdown_reason(&a.state.backend)
                        )
                    })
                    .into_iter()
                    .chain(a.violations.iter().map(|v| {
                        let level = if v.severity == bios_profiles::Severity::Error {
                            "error"
                        } else {
                            "warning"
                        };
                        format!("{level}: {v}")
                    }))
                    .collect(),
                error: invalid.then(|| format!("profile {profile} cannot be applied to this host as written")),
                error_kind: invalid.then_some(HostErrorKind::ProfileNotApplicable),
                message_ids: Vec::new(),
            }
        }
        Err(e) => {
            let failure = Failure::of(e, false);
            HostDiff {
                host: r.entry.name.clone(),
                status: DiffStatus::Error,
                service_tag: None,
                model: None,
                bios_version: None,
                changes: Vec::new(),
                counts: None,
                lockdown: false,
                violations: Vec::new(),
                error: Some(failure.error),
                error_kind: Some(failure.error_kind),
                message_ids: failure.message_ids,
            }
        }
    }
}

/// What a failed host's entry says in every fleet document, beside the host's name: `error`,
/// the text (what was being done, down to the BMC's answer), `error_kind`, one of
/// [`HostErrorKind::ALL`] for scripts to branch on, and `message_ids` when the BMC gave some.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// The error and its chain on one line.
    pub error: String,
    /// Its kind.
    pub error_kind: HostErrorKind,
    /// The MessageIds of the BMC's answer (`IDRAC.2.9.SYS011`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub message_ids: Vec<String>,
}

impl Failure {
    /// The failure `e` of a host to which something was `written` (a staged PATCH, a reboot)
    /// or not: a stop requested before anything was written leaves the host untouched, so it
    /// counts as [`HostErrorKind::NotStarted`], not as a failure of its own.
    pub fn of(e: &rftune_engine::Error, written: bool) -> Self {
        let kind = match HostErrorKind::of(e) {
            HostErrorKind::Interrupted if !written => HostErrorKind::NotStarted,
            kind => kind,
        };
        let message_ids = e
            .redfish()
            .and_then(redfish_client::Error::redfish)
            .map(|body| body.extended_info.iter().map(|m| m.message_id.clone()).collect())
            .unwrap_or_default();
        Self {
            error: format!("{e:#}"),
            error_kind: kind,
            message_ids,
        }
    }

    /// The entry `{"host", "error", "error_kind", …}` of `host`.
    pub fn entry(self, host: &str) -> Value {
        let mut v = serde_json::json!({ "host": host });
        self.add_to(&mut v);
        v
    }

    /// Adds these fields to an entry (a JSON object).
    pub fn add_to(self, entry: &mut Value) {
        if let (Some(map), Ok(Value::Object(fields))) = (entry.as_object_mut(), serde_json::to_value(self)) {
            map.extend(fields);
        }
    }
}

/// The `rftune.apply/v1` document.
#[derive(Debug, Serialize)]
pub struct ApplyReport {
    /// Always `rftune.apply/v1`.
    pub schema: &'static str,
    /// The profile applied.
    pub profile: String,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// `K/N` when the run was given `--shard K/N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// One entry per host, in inventory order.
    pub hosts: Vec<Value>,
    /// Hosts by outcome.
    pub summary: ApplySummary,
    /// The audit log of this run.
    pub audit_log: String,
    /// The plan file applied (`apply --plan`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
}

/// How a host's apply ended: an `outcome` of `rftune.apply/v1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyStatus {
    /// It ran to its end.
    Done(ApplyOutcome),
    /// It failed.
    Error,
    /// It was left untouched: a canary failed, `--max-failures` hosts had failed, its
    /// credentials had been rejected `--max-login-rejections` times, or SIGINT/SIGTERM came
    /// before anything was written to it.
    NotStarted,
    /// Refused before its first write: it changed since its plan was made (`apply --plan`), or
    /// the BMC refused the conditional PATCH (412). Counts as an error.
    Stale,
}

impl ApplyStatus {
    /// Every status, in the order the summary counts them.
    pub const ALL: [Self; 8] = [
        Self::Done(ApplyOutcome::InSync),
        Self::Done(ApplyOutcome::Converged),
        Self::Done(ApplyOutcome::NotConverged),
        Self::Done(ApplyOutcome::NotApplied),
        Self::Done(ApplyOutcome::Planned),
        Self::Error,
        Self::NotStarted,
        Self::Stale,
    ];

    /// As the JSON output spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done(ApplyOutcome::InSync) => "in_sync",
            Self::Done(ApplyOutcome::Converged) => "converged",
            Self::Done(ApplyOutcome::NotConverged) => "not_converged",
            Self::Done(ApplyOutcome::NotApplied) => "not_applied",
            Self::Done(ApplyOutcome::Planned) => "planned",
            Self::Error => "error",
            Self::NotStarted => "not_started",
            Self::Stale => "stale",
        }
    }

    /// The status spelled `text`, if any.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The status of a host whose apply failed with a [`Failure`] of `kind`.
    pub fn of_failure(kind: HostErrorKind) -> Self {
        match kind {
            HostErrorKind::NotStarted => Self::NotStarted,
            HostErrorKind::Stale => Self::Stale,
            _ => Self::Error,
        }
    }
}

impl Serialize for ApplyStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Hosts by outcome.
#[derive(Debug, Default, Serialize)]
pub struct ApplySummary {
    /// Hosts addressed.
    pub hosts: usize,
    /// Already in sync.
    pub in_sync: usize,
    /// Changed and verified.
    pub converged: usize,
    /// Staged but not applied, or not clean after the change.
    pub not_converged: usize,
    /// Accepted by the BMC, but values refused by the BIOS at the POST that processed them.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_applied: usize,
    /// Dry run plans.
    pub planned: usize,
    /// Failed.
    pub error: usize,
    /// Left untouched: a canary failed, `--max-failures` hosts had failed, their credentials had
    /// been rejected too often, or a stop came before anything was written to them.
    pub not_started: usize,
    /// Refused as stale against their plan (or by a 412); errors too.
    #[serde(skip_serializing_if = "is_zero")]
    pub stale: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The counts of the text output: one line, and a second for hosts left untouched if any.
impl std::fmt::Display for ApplySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} hosts: {} converged, {} in sync, {} not converged, {} planned, {} failed",
            self.hosts, self.converged, self.in_sync, self.not_converged, self.planned, self.error
        )?;
        if self.not_applied > 0 {
            write!(f, ", {} not applied", self.not_applied)?;
        }
        if self.stale > 0 {
            write!(f, ", {} stale", self.stale)?;
        }
        if self.not_started > 0 {
            write!(f, "\n{} not started (left untouched)", self.not_started)?;
        }
        Ok(())
    }
}

impl ApplySummary {
    /// Counts one host of `status`.
    pub fn count(&mut self, status: ApplyStatus) {
        match status {
            ApplyStatus::Done(ApplyOutcome::InSync) => self.in_sync += 1,
            ApplyStatus::Done(ApplyOutcome::Converged) => self.converged += 1,
            ApplyStatus::Done(ApplyOutcome::NotConverged) => self.not_converged += 1,
            ApplyStatus::Done(ApplyOutcome::NotApplied) => self.not_applied += 1,
            ApplyStatus::Done(ApplyOutcome::Planned) => self.planned += 1,
            ApplyStatus::NotStarted => self.not_started += 1,
            ApplyStatus::Error => self.error += 1,
            ApplyStatus::Stale => self.stale += 1,
        }
    }

    /// The fleet exit rule: any failure is an error (`audit_log` names where every step is);
    /// else hosts not converged, or changes planned by a dry run, are drift (exit 2).
    pub fn exit(&self, audit_log: &str) -> Result<Exit> {
        if self.stale > 0 {
            anyhow::bail!(
                "{} of {} host(s) were refused as stale{}; nothing was written to them; every step is in {audit_log}",
                self.stale,
                self.hosts,
                if self.error > 0 {
                    format!(" and {} failed", self.error)
                } else {
                    String::new()
                }
            );
        }
        if self.error > 0 {
            anyhow::bail!(
                "{} of {} host(s) failed; every step is in {audit_log}",
                self.error,
                self.hosts
            );
        }
        // A dry run that plans changes found drift: exit 2, as diff does.
        Ok(if self.not_converged > 0 || self.not_applied > 0 || self.planned > 0 {
            Exit::Drift
        } else {
            Exit::Success
        })
    }
}

/// A host's error as its entry says it: a stale host's sentence names the host itself.
pub fn error_text(status: ApplyStatus, host: &str, e: &rftune_engine::Error) -> String {
    let text = format!("{e:#}");
    match status {
        ApplyStatus::Stale => text
            .strip_prefix(host)
            .and_then(|t| t.strip_prefix(": "))
            .map_or_else(|| text.clone(), str::to_owned),
        _ => text,
    }
}

/// One host's entry of the report, counted in `summary`.
pub fn apply_entry(audit: &AuditLog, r: &HostResult<HostApply>, summary: &mut ApplySummary) -> Value {
    let (status, entry) = match &r.result {
        Ok(h) => {
            let mut v = serde_json::to_value(h).unwrap_or_default();
            v["host"] = Value::String(r.entry.name.clone());
            (ApplyStatus::Done(h.outcome), v)
        }
        Err(e) => {
            // Whether anything was written before the failure (a staged PATCH, a reboot, ...):
            // the host changed even though the apply failed.
            let written = audit.wrote(&r.entry.name);
            let mut failure = Failure::of(e, written);
            let status = ApplyStatus::of_failure(failure.error_kind);
            failure.error = error_text(status, &r.entry.name, e);
            let mut v = serde_json::json!({"host": r.entry.name, "outcome": status, "written": written});
            failure.add_to(&mut v);
            (status, v)
        }
    };
    summary.count(status);
    entry
}

/// The schema of `rftune boot show -o json`.
pub const BOOT_SCHEMA: &str = "rftune.boot/v1";
/// The schema of `rftune boot once -o json`.
pub const BOOT_ONCE_SCHEMA: &str = "rftune.boot-once/v1";
/// The schema of `rftune boot clear -o json`.
pub const BOOT_CLEAR_SCHEMA: &str = "rftune.boot-clear/v1";
/// The schema of `rftune bios reset-defaults -o json`.
pub const DEFAULTS_SCHEMA: &str = "rftune.bios-defaults/v1";
/// The schema of `rftune bios password ... -o json`.
pub const PASSWORD_SCHEMA: &str = "rftune.bios-password/v1";
/// The schema of `rftune secure-boot reset-keys -o json`.
pub const RESET_KEYS_SCHEMA: &str = "rftune.secure-boot-keys/v1";

/// The document of a provisioning command (`boot`, `bios reset-defaults`, `bios password`,
/// `secure-boot reset-keys`): every host's result in inventory order (a failed one as
/// `{"host", "error", "error_kind", "written"}`), a summary of hosts done and failed, and the audit log when
/// the command writes. Returns it with the number of hosts that failed.
pub fn action_document<T: Serialize>(
    schema: &'static str,
    results: &[HostResult<T>],
    audit: Option<&AuditLog>,
) -> (Value, usize) {
    let mut failed = 0;
    let hosts: Vec<Value> = results
        .iter()
        .map(|r| match &r.result {
            Ok(done) => serde_json::to_value(done).unwrap_or_default(),
            Err(e) => {
                failed += 1;
                let written = audit.map(|a| a.wrote(&r.entry.name));
                let mut v = Failure::of(e, written.unwrap_or(false)).entry(&r.entry.name);
                if let Some(written) = written {
                    v["written"] = Value::Bool(written);
                }
                v
            }
        })
        .collect();
    let mut doc = serde_json::json!({
        "schema": schema,
        "hosts": hosts,
        "summary": {"hosts": results.len(), "done": results.len() - failed, "error": failed},
    });
    if let Some(audit) = audit {
        doc["audit_log"] = Value::String(audit.path().display().to_string());
    }
    (doc, failed)
}

/// The exit rule of a provisioning command: any failure is an error (naming the audit log when
/// there is one); else `pending` hosts (a change left for the next reboot) are exit 2.
pub fn action_exit(failed: usize, hosts: usize, pending: usize, audit: Option<&AuditLog>) -> Result<Exit> {
    if failed > 0 {
        let log = audit
            .map(|a| format!("; every step is in {}", a.path().display()))
            .unwrap_or_default();
        anyhow::bail!("{failed} of {hosts} host(s) failed{log}");
    }
    Ok(if pending > 0 { Exit::Drift } else { Exit::Success })
}
