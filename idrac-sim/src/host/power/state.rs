//! The host's power: on or off, POST in progress, a graceful shutdown in progress. `timeline`
//! moves the episodes on; resets, jobs and imports start them.

use std::time::Instant;

/// Whether the host is on, and what it is going through.
#[derive(Debug)]
pub(crate) struct Power {
    pub(crate) on: bool,
    pub(crate) post: Option<Post>,
    pub(crate) shutdown: Option<Shutdown>,
}

impl Power {
    /// A host that is on and running its OS.
    pub(crate) fn on() -> Self {
        Self {
            on: true,
            post: None,
            shutdown: None,
        }
    }

    /// Off at once: no POST, no shutdown in progress.
    pub(crate) fn off(&mut self) {
        self.on = false;
        self.post = None;
        self.shutdown = None;
    }
}

/// POST in progress: when it started and how far the BIOS job it runs has got.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Post {
    pub(crate) started: Instant,
    pub(crate) job_started: bool,
    pub(crate) job_done: bool,
}

/// A graceful shutdown in progress: when the host goes off, and whether it then starts again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shutdown {
    pub(crate) at: Instant,
    pub(crate) then_boot: bool,
}
