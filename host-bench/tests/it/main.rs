//! Integration tests of host-bench: the real fio on small temporary files, a fake `nvme`, and
//! reports built from real runs.
#![allow(clippy::unwrap_used)]

mod fio;
mod nvme;
mod report;
mod run;

use std::path::PathBuf;

/// A temporary directory removed on drop.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Under target/ rather than /tmp: tmpfs refuses O_DIRECT, which fio's direct=1 needs.
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let p = base.join(format!("host-bench-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
