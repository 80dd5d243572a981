//! What a run creates in its target, and how it is removed again without touching anything
//! else. The target must be an empty directory; the run creates exactly two things in it:
//! [`MANIFEST`] (first, exclusively: it says who created what, so `--cleanup` can finish the
//! job of a run that was killed) and the directory [`ROOT`] (exclusively too). Below the root
//! every name follows one grammar:
//!
//! ```text
//! n-to-n/c<client>.<job>      n-to-1/shared      random/c<client>.<job>
//! metadata/t<thread>/d<dir>/f<file>
//! ```
//!
//! Cleanup walks what is really there (never following a symbolic link), removes only the
//! files and directories whose names the grammar produces, removes a directory only when it
//! is empty (`rmdir`), and removes the manifest last, once the root is gone. Whatever else
//! appeared meanwhile stays, with the directories holding it, and is reported.

use super::Test;
use crate::exec::{EntryKind, Exec};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

/// The manifest's file name in the target.
pub const MANIFEST: &str = "rftune-fs-manifest.json";

/// The directory in the target that holds everything else the run creates.
pub const ROOT: &str = "rftune-fs";

/// The `schema` of the manifest.
const MANIFEST_SCHEMA: &str = "rftune.bench-fs-manifest/v1";

/// The N-to-1 test's one file.
pub(crate) const SHARED: &str = "shared";

/// The manifest: who created the run's files, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// Always [`MANIFEST_SCHEMA`].
    pub schema: String,
    /// The root's name in the target (always [`ROOT`]).
    pub root: String,
    /// UTC, when the run started.
    pub created_at: String,
    /// rftune's version, the host and the process.
    pub created_by: String,
    /// For whoever finds it.
    pub note: String,
}

impl Manifest {
    /// The manifest of a run starting now on `host`.
    pub(crate) fn new(host: &str) -> Self {
        Self {
            schema: MANIFEST_SCHEMA.into(),
            root: ROOT.into(),
            created_at: crate::utc_now(),
            created_by: format!(
                "rftune {} on {host}, process {}",
                crate::report::TOOL_VERSION,
                std::process::id()
            ),
            note: format!(
                "`rftune bench fs` created {ROOT}/ beside this file and removes both when it ends. If they are \
                 still here, that run was killed: `rftune bench fs --target DIR --cleanup` removes what it \
                 created, and nothing else."
            ),
        }
    }
}

/// A test's directory under the root.
pub(crate) fn test_dir(test: Test) -> &'static str {
    test.name()
}

/// fio's `filename_format` for the per-thread files of client `client` (`$jobnum` is fio's clone
/// number there).
pub(crate) fn per_thread_pattern(client: usize) -> String {
    format!("c{client}.$jobnum")
}

/// A metadata thread's directory under `metadata/`.
pub(crate) fn thread_dir(thread: u32) -> String {
    format!("t{thread}")
}

/// A metadata directory under its thread's directory.
pub(crate) fn md_dir(dir: u64) -> String {
    format!("d{dir}")
}

/// A metadata file under its thread's directory.
pub(crate) fn md_file(dir: u64, file: u64) -> String {
    format!("{}/f{file}", md_dir(dir))
}

/// The step's thread numbers that run on client `client` ([`super::round_robin`]: thread `i` on
/// client `i mod clients`).
pub(crate) fn threads_of(client: usize, per_client: &[u32]) -> impl Iterator<Item = u32> {
    let clients = per_client.len().max(1) as u32;
    let n = per_client.get(client).copied().unwrap_or(0);
    (0..n).map(move |j| client as u32 + j * clients)
}

/// `prefix` followed by a decimal number.
fn numbered(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `rel`, a path under the root, names something a run creates.
pub(crate) fn ours(rel: &Path, kind: EntryKind) -> bool {
    let parts: Option<Vec<&str>> = rel
        .components()
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let Some(parts) = parts else { return false };
    let per_thread = |n: &str| {
        n.split_once('.')
            .is_some_and(|(c, j)| numbered(c, "c") && numbered(j, ""))
    };
    match (kind, parts.as_slice()) {
        (EntryKind::Dir, [test]) => Test::ALL.iter().any(|t| test_dir(*t) == *test),
        (EntryKind::File, ["n-to-n" | "random", name]) => per_thread(name),
        (EntryKind::File, ["n-to-1", name]) => *name == SHARED,
        (EntryKind::Dir, ["metadata", t]) => numbered(t, "t"),
        (EntryKind::Dir, ["metadata", t, d]) => numbered(t, "t") && numbered(d, "d"),
        (EntryKind::File, ["metadata", t, d, f]) => numbered(t, "t") && numbered(d, "d") && numbered(f, "f"),
        _ => false,
    }
}

/// What a cleanup removed and what it left.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Cleanup {
    /// Files removed.
    pub removed_files: u64,
    /// Directories removed.
    pub removed_dirs: u64,
    /// Entries kept because rftune did not create them (paths in the target).
    pub left: Vec<String>,
    /// Whether the root and the manifest are gone, leaving the target as the run found it.
    pub complete: bool,
}

/// Removes what rftune created under `root/within` (the whole root when `within` is empty),
/// the directory `within` itself included, and nothing else.
pub(crate) async fn remove_ours(exec: &dyn Exec, root: &Path, within: &Path) -> Result<Cleanup> {
    let mut done = Cleanup::default();
    let base = root.join(within);
    let Some(entries) = exec.entries(&base, true).await? else {
        done.complete = true;
        return Ok(done);
    };
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if !within.as_os_str().is_empty() {
        dirs.push(within.to_owned());
    }
    for e in entries {
        let rel = within.join(&e.path);
        match e.kind {
            EntryKind::File if ours(&rel, e.kind) => files.push(root.join(&rel)),
            EntryKind::Dir if ours(&rel, e.kind) => dirs.push(rel),
            _ => done.left.push(root.join(&rel).display().to_string()),
        }
    }
    exec.remove_files(&files).await?;
    done.removed_files = files.len() as u64;
    // Deepest first: a directory is empty once what it held is gone, unless something that is
    // not rftune's is in it, which keeps it.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    done.removed_dirs = exec.remove_dirs(&dirs).await?;
    done.left.sort();
    done.complete = done.left.is_empty();
    Ok(done)
}

/// Removes what a run left in `target`, as its manifest declares it: the files and directories
/// under the root that the run's names describe, the root once empty, then the manifest.
/// Without a manifest nothing is touched (a root without one is refused: nothing says rftune
/// created it).
pub async fn cleanup(exec: &dyn Exec, target: &Path) -> Result<Cleanup> {
    let manifest_path = target.join(MANIFEST);
    let root = target.join(ROOT);
    let Some(text) = exec.read(&manifest_path).await? else {
        if exec.entries(&root, false).await?.is_some() {
            return Err(Error::Refused(format!(
                "{} on {} has no {MANIFEST} beside it: nothing says rftune created it, so nothing was removed",
                root.display(),
                exec.describe()
            )));
        }
        return Ok(Cleanup {
            complete: true,
            ..Cleanup::default()
        });
    };
    let valid = serde_json::from_str::<Manifest>(&text).is_ok_and(|m| m.schema == MANIFEST_SCHEMA && m.root == ROOT);
    if !valid {
        return Err(Error::Refused(format!(
            "{} on {} is not a manifest rftune {} wrote ({MANIFEST_SCHEMA}, root {ROOT}): nothing was removed",
            manifest_path.display(),
            exec.describe(),
            crate::report::TOOL_VERSION
        )));
    }
    let mut done = remove_ours(exec, &root, Path::new("")).await?;
    let root_gone = exec.remove_dir(&root).await?;
    if root_gone {
        exec.remove(&manifest_path).await?;
    } else if done.left.is_empty() {
        done.left.push(root.display().to_string());
    }
    done.complete = root_gone && done.left.is_empty();
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_the_run_creates_are_its_own() {
        let yes = [
            ("n-to-n", EntryKind::Dir),
            ("metadata", EntryKind::Dir),
            ("n-to-n/c0.12", EntryKind::File),
            ("random/c3.0", EntryKind::File),
            ("n-to-1/shared", EntryKind::File),
            ("metadata/t7", EntryKind::Dir),
            ("metadata/t7/d0", EntryKind::Dir),
            ("metadata/t7/d0/f1023", EntryKind::File),
        ];
        for (p, k) in yes {
            assert!(ours(Path::new(p), k), "{p}");
        }
        let no = [
            ("n-to-n", EntryKind::File),
            ("n-to-n", EntryKind::Other),
            ("notes", EntryKind::Dir),
            ("n-to-n/c0.12", EntryKind::Dir),
            ("n-to-n/c0.12", EntryKind::Other),
            ("n-to-n/c.1", EntryKind::File),
            ("n-to-n/c0.1.bak", EntryKind::File),
            ("n-to-n/results.txt", EntryKind::File),
            ("n-to-1/c0.0", EntryKind::File),
            ("metadata/t7/d0/f1023x", EntryKind::File),
            ("metadata/t7/d0/f-1", EntryKind::File),
            ("metadata/t7/f1", EntryKind::File),
            ("metadata/t7/d0/f1/x", EntryKind::File),
            ("../n-to-n/c0.1", EntryKind::File),
        ];
        for (p, k) in no {
            assert!(!ours(Path::new(p), k), "{p} {k:?}");
        }
        assert_eq!(threads_of(1, &[3, 2, 2]).collect::<Vec<_>>(), [1, 4]);
        assert_eq!(threads_of(0, &[3, 2, 2]).collect::<Vec<_>>(), [0, 3, 6]);
    }
}
