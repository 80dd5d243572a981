//! Rolling hosts back to their snapshots: a directory of snapshots indexed by service tag,
//! the one each host gets (the latest, the latest before a time, or the one a given run took),
//! and the restore itself as a fleet [`Operation`]: each host's own snapshot becomes a profile
//! (every attribute writable under the snapshot's values, the iDRAC attributes rftune manages)
//! applied through the same plan/apply path, reboot slots, hooks and lock as `apply`.

use crate::assess::LoadedProfile;
use crate::cache::RegistryCache;
use crate::connect::Bmc;
use crate::converge::{ApplyOptions, ApplyRun, HostApply};
use crate::derive::{Selection, profile_toml};
use crate::error::{Context, HostError, HostErrorKind, Result, bad_input};
use crate::lifecycle::Operation;
use crate::observe::Observer;
use crate::snapshot::Snapshot;
use crate::write::Writes;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Which of a host's snapshots to restore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// The latest.
    Latest,
    /// The latest taken before this UTC time (`YYYY-MM-DDTHH:MM:SSZ`, as snapshots record it).
    Before(String),
    /// The one this run took (the audit log's `run`, e.g. `1764468000-4242`).
    Run(String),
}

impl Pick {
    /// `--before TEXT`: a UTC time (`2026-11-30T02:00:00Z`, `2026-11-30 02:00:00`,
    /// `2026-11-30`) or a duration ago (`6h`, `2d`), counted from `now`.
    pub fn before(text: &str, now: SystemTime) -> Result<Self> {
        let text = text.trim();
        let at = if let Ok(ago) = crate::duration::parse(text) {
            now.checked_sub(ago)
                .ok_or_else(|| crate::Error::bad_input(format!("--before {text}: before the epoch")))?
        } else {
            let full = if text.len() == 10 {
                format!("{text}T00:00:00Z")
            } else {
                text.to_owned()
            };
            humantime::parse_rfc3339_weak(full.trim_end_matches('Z')).map_err(|e| {
                crate::Error::bad_input(format!(
                    "--before {text:?}: {e}; give a UTC time (2026-11-30T02:00:00Z, 2026-11-30) or a time ago (6h, 2d)"
                ))
            })?
        };
        Ok(Self::Before(humantime::format_rfc3339_seconds(at).to_string()))
    }

    /// For messages: `the latest snapshot`, `the latest snapshot before T`, `the snapshot run
    /// R took`.
    pub fn describe(&self) -> String {
        match self {
            Self::Latest => "the latest snapshot".into(),
            Self::Before(t) => format!("the latest snapshot before {t}"),
            Self::Run(r) => format!("the snapshot run {r} took"),
        }
    }
}

/// One snapshot file, as much as choosing among them needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Indexed {
    /// The file.
    pub file: PathBuf,
    /// The host's name when it was taken.
    pub host: String,
    /// Its service tag.
    pub service_tag: Option<String>,
    /// When it was taken (UTC).
    pub taken_at: String,
    /// Why it was taken.
    pub reason: String,
    /// The run that took it, when the audit log says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// The snapshots restores choose from.
#[derive(Debug, Clone)]
pub struct SnapshotIndex {
    /// Where they were read from, for messages.
    pub source: String,
    entries: Vec<Indexed>,
    /// Restore the one snapshot onto whatever host is given (`--any-host`).
    any_host: bool,
}

impl SnapshotIndex {
    /// Every `rftune.snapshot/v1` file in `dir` (other files are skipped, with their count in
    /// the log), with the run that took each where `audit_log` records it.
    pub fn read_dir(dir: &Path, audit_log: Option<&Path>) -> Result<Self> {
        let listing =
            std::fs::read_dir(dir).with_context(|| format!("reading the snapshot directory {}", dir.display()))?;
        let runs = audit_log.map(snapshot_runs).transpose()?.unwrap_or_default();
        let mut entries = Vec::new();
        let mut skipped = 0;
        for item in listing {
            let path = item.with_context(|| format!("reading {}", dir.display()))?.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match Snapshot::load(&path) {
                Ok(s) => entries.push(Indexed {
                    run: runs.get(&path).cloned(),
                    file: path,
                    host: s.host,
                    service_tag: s.service_tag,
                    taken_at: s.taken_at,
                    reason: s.reason,
                }),
                Err(e) => {
                    skipped += 1;
                    tracing::debug!("{}", crate::error::report(&e));
                }
            }
        }
        if skipped > 0 {
            tracing::info!(
                "{}: {skipped} file(s) are not snapshots and were skipped",
                dir.display()
            );
        }
        if entries.is_empty() {
            bad_input!(
                "{} holds no snapshot (rftune apply takes one of each host before changing it; rftune snapshot takes one now)",
                dir.display()
            );
        }
        Ok(Self {
            source: dir.display().to_string(),
            entries,
            any_host: false,
        })
    }

    /// The one snapshot `file`; with `any_host`, restored onto whatever host is given.
    pub fn one(file: &Path, any_host: bool) -> Result<(Self, Snapshot)> {
        let s = Snapshot::load(file)?;
        let index = Self {
            source: file.display().to_string(),
            entries: vec![Indexed {
                file: file.to_owned(),
                host: s.host.clone(),
                service_tag: s.service_tag.clone(),
                taken_at: s.taken_at.clone(),
                reason: s.reason.clone(),
                run: None,
            }],
            any_host,
        };
        Ok((index, s))
    }

    /// The snapshots indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The snapshot of the host whose service tag is `tag` that `pick` chooses.
    pub fn choose(&self, tag: Option<&str>, pick: &Pick) -> Option<&Indexed> {
        self.entries
            .iter()
            .filter(|e| self.any_host || (tag.is_some() && e.service_tag.as_deref() == tag))
            .filter(|e| match pick {
                Pick::Latest => true,
                Pick::Before(t) => e.taken_at.as_str() < t.as_str(),
                Pick::Run(r) => e.run.as_deref() == Some(r.as_str()),
            })
            .max_by(|a, b| a.taken_at.cmp(&b.taken_at).then_with(|| a.file.cmp(&b.file)))
    }
}

/// The run that took each snapshot, from the audit log's `snapshot` records.
fn snapshot_runs(audit_log: &Path) -> Result<std::collections::HashMap<PathBuf, String>> {
    use std::io::BufRead;
    let mut runs = std::collections::HashMap::new();
    let file = match std::fs::File::open(audit_log) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(runs),
        Err(e) => return Err(e).with_context(|| format!("reading the audit log {}", audit_log.display())),
    };
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading the audit log {}", audit_log.display()))?;
        if !line.contains("\"snapshot\"") {
            continue;
        }
        let Ok(record) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if record["step"] == "snapshot"
            && record["outcome"] == "ok"
            && let (Some(path), Some(run)) = (record["detail"].as_str(), record["run"].as_str())
        {
            runs.insert(PathBuf::from(path), run.to_owned());
        }
    }
    Ok(runs)
}

/// A restore of a fleet, each host to the snapshot `pick` chooses among those of its service
/// tag: what every host shares.
#[derive(Debug)]
pub struct RestoreRun {
    /// The snapshots.
    pub index: SnapshotIndex,
    /// Which snapshot of a host.
    pub pick: Pick,
    /// The registry cache.
    pub cache: RegistryCache,
    /// How to apply.
    pub options: ApplyOptions,
    /// How hosts are written to: one audit log, reboot slots, hooks and lock for the run.
    pub writes: Writes,
}

impl RestoreRun {
    /// A restore from `index` with `options` and the state directories of `dirs`, at most
    /// `max_rebooting` hosts rebooting at once.
    pub fn new(
        index: SnapshotIndex,
        pick: Pick,
        dirs: &crate::state::StateDirs,
        options: ApplyOptions,
        max_rebooting: usize,
    ) -> Result<Self> {
        let (cache, writes) = crate::converge::run_parts("restore", dirs, &options, max_rebooting)?;
        Ok(Self {
            index,
            pick,
            cache,
            options,
            writes,
        })
    }

    /// The audit log.
    pub fn audit(&self) -> &crate::audit::AuditLog {
        &self.writes.audit
    }
}

/// One host restored: the snapshot it was given and the apply of it.
#[derive(Debug, Clone)]
pub struct Restored {
    /// The snapshot.
    pub from: Indexed,
    /// The apply.
    pub apply: HostApply,
}

impl Operation for RestoreRun {
    type Output = Restored;

    async fn run(&self, bmc: &mut Bmc, observer: &dyn Observer) -> Result<Restored> {
        // The registry decides what is restorable, the service tag which snapshot.
        let state = crate::read::read_state(bmc, &self.cache, &Default::default(), false).await?;
        let tag = state.service_tag.as_deref();
        let Some(from) = self.index.choose(tag, &self.pick).cloned() else {
            let why = match (tag, self.index.len()) {
                (None, _) => "the host reports no service tag to match a snapshot by".to_owned(),
                (Some(t), 1) => format!(
                    "the snapshot {} is of service tag {}, this host is {t}; pass --any-host to restore it here anyway",
                    self.index.source,
                    self.index.entries[0].service_tag.as_deref().unwrap_or("(none)")
                ),
                (Some(t), _) => format!(
                    "{} finds no snapshot of service tag {t} in {}",
                    self.pick.describe(),
                    self.index.source
                ),
            };
            return Err(HostError::new(&bmc.name, HostErrorKind::Other, format!("{why}; nothing was written")).into());
        };
        let snap = Snapshot::load(&from.file)?;
        // A boot order the backend keeps apart (an iLO's) is restorable like a BIOS value.
        let mut state = state;
        if let Some(name) = bmc.backend().boot().and_then(|b| b.order_setting())
            && snap.bios.contains_key(name)
            && let Some(order) = crate::write::order::read(bmc, None).await?
        {
            crate::boot::carry_order(bmc, &mut state, &order);
        }
        let name = format!(
            "restore-{}",
            snap.host.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
        );
        let text = profile_toml(&snap, &name, None, &Selection::Restorable(state.registry))?;
        let profile = LoadedProfile::from_toml(&text, &from.file.display().to_string())
            .context("the profile derived from the snapshot")?;
        let run = ApplyRun {
            profile,
            cache: self.cache.clone(),
            options: self.options.clone(),
            writes: self.writes.clone(),
            plan: None,
        };
        let apply = crate::converge::apply_host(&run, bmc, observer).await?;
        Ok(Restored { from, apply })
    }
}

/// How long ago `taken_at` (a snapshot's UTC time) was at `now`, when it parses.
pub fn age(taken_at: &str, now: SystemTime) -> Option<Duration> {
    let t = humantime::parse_rfc3339_weak(taken_at.trim_end_matches('Z')).ok()?;
    now.duration_since(t).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indexed(tag: &str, at: &str, run: Option<&str>) -> Indexed {
        Indexed {
            file: PathBuf::from(format!("{tag}-{at}.json")),
            host: tag.to_lowercase(),
            service_tag: Some(tag.into()),
            taken_at: at.into(),
            reason: "before apply of hpc".into(),
            run: run.map(str::to_owned),
        }
    }

    #[test]
    fn each_host_gets_its_own_tags_snapshot_by_time_or_run() {
        let index = SnapshotIndex {
            source: "snapshots".into(),
            entries: vec![
                indexed("TAG1", "2026-11-01T10:00:00Z", Some("100-1")),
                indexed("TAG1", "2026-11-02T10:00:00Z", Some("200-1")),
                indexed("TAG2", "2026-11-01T11:00:00Z", Some("100-1")),
                indexed("TAG1", "2026-11-03T10:00:00Z", None),
            ],
            any_host: false,
        };
        let at = |tag, pick| index.choose(Some(tag), &pick).map(|e| e.taken_at.clone());
        assert_eq!(at("TAG1", Pick::Latest).as_deref(), Some("2026-11-03T10:00:00Z"));
        let before = Pick::Before("2026-11-02T10:00:00Z".into());
        assert_eq!(
            at("TAG1", before.clone()).as_deref(),
            Some("2026-11-01T10:00:00Z"),
            "strictly before"
        );
        assert_eq!(at("TAG2", before).as_deref(), Some("2026-11-01T11:00:00Z"));
        assert_eq!(
            at("TAG1", Pick::Run("200-1".into())).as_deref(),
            Some("2026-11-02T10:00:00Z")
        );
        assert_eq!(
            at("TAG2", Pick::Run("200-1".into())),
            None,
            "that run did not touch TAG2"
        );
        assert_eq!(at("TAG3", Pick::Latest), None, "no snapshot of another host");
        assert!(index.choose(None, &Pick::Latest).is_none());
    }

    #[test]
    fn before_takes_a_utc_time_or_a_time_ago() {
        let now = humantime::parse_rfc3339("2026-11-30T12:00:00Z").unwrap();
        let at = |t: &str| Pick::before(t, now).unwrap();
        assert_eq!(at("2026-11-30T02:00:00Z"), Pick::Before("2026-11-30T02:00:00Z".into()));
        assert_eq!(at("2026-11-30 02:00:00"), Pick::Before("2026-11-30T02:00:00Z".into()));
        assert_eq!(at("2026-11-29"), Pick::Before("2026-11-29T00:00:00Z".into()));
        assert_eq!(at("6h"), Pick::Before("2026-11-30T06:00:00Z".into()));
        let e = Pick::before("yesterday", now).unwrap_err().to_string();
        assert!(e.contains("6h") && e.contains("2026-11-30T02:00:00Z"), "{e}");
    }
}
