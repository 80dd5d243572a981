//! Integration tests of host-bench: the real fio on small temporary files, a fake `nvme`, and
//! reports built from real runs.
#![allow(clippy::unwrap_used)]

mod filesystem;
mod fio;
mod nvme;
mod report;
mod run;

use std::path::PathBuf;

/// A temporary directory (tempfile's) under target/ rather than /tmp, removed on drop: tmpfs
/// refuses O_DIRECT, which fio's direct=1 needs.
pub(crate) struct TempDir(pub(crate) PathBuf, #[allow(dead_code)] tempfile::TempDir);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("host-bench-{tag}-"))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        Self(dir.path().to_owned(), dir)
    }
}
