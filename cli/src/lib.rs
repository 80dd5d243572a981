//! `rftune`: keeps Dell PowerEdge servers with AMD EPYC on the recommended BIOS and iDRAC
//! settings. This crate is the command line over [`rftune_engine`]: argument parsing
//! ([`args`]) turned once into the engine's plain values ([`config`]), where the password comes
//! from ([`credentials`]), signals ([`signals`]), the commands, the vocabulary of the fleet
//! documents ([`documents`]), and all output ([`render`]). Every BMC operation and domain
//! decision is the engine's.
//!
//! Exit codes: 0 success or in sync, 2 drift found or not converged, 1 error, 130/143 on
//! SIGINT/SIGTERM, and 141 when stdout was closed before the output was written (as a tool
//! killed by SIGPIPE ends: never 0, since the reader may have missed the verdict).

/// A line on stderr, like `eprintln!`, except that a closed stderr (`rftune … 2>&1 | head`)
/// drops the line instead of panicking: what rftune says there never decides how it ends.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub mod args;
pub mod commands;
pub mod config;
pub mod credentials;
pub mod documents;
pub mod logging;
pub mod render;
pub mod signals;

use clap::Parser;
use std::process::ExitCode;

/// What a command concluded, mapped to the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success, or in sync (exit 0).
    Success,
    /// Drift found, or not converged (exit 2).
    Drift,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::Drift => 2,
        }
    }
}

/// Exit code for errors.
pub const EXIT_ERROR: u8 = 1;

/// Exit code when stdout was closed before the output was all written (`rftune diff | head`):
/// 128 + SIGPIPE, what a shell reports for a tool that SIGPIPE killed. rftune ignores the
/// signal so that a closed pipe never cuts a run short, and ends with this code after it.
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// Parses the process arguments, runs the command and returns the exit code.
pub fn main() -> ExitCode {
    // clap exits with 2 on usage errors, which would read as "drift" to scripts: use 1.
    let args = match args::Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    logging::init(&args.global);
    // 8 MiB per worker (tokio's default is 2): a fleet operation nests the connect, the login,
    // the read and judge of a host and its power reading in one task, which in a debug build
    // takes more than 2 MiB of stack. The memory is only reserved; a release build uses little.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(8 << 20)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            note!("error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    let result = runtime.block_on(commands::run(args));
    if let Some(code) = rftune_engine::interrupt::exit_code() {
        if let Err(e) = &result {
            note!("error: {e:#}");
        }
        return ExitCode::from(code);
    }
    match result {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) if render::is_broken_pipe(&e) => ExitCode::from(EXIT_BROKEN_PIPE),
        Err(e) => {
            note!("error: {e:#}");
            if let Some(hint) = e.chain().find_map(|c| c.downcast_ref::<rftune_engine::Error>()?.hint()) {
                note!("hint: {hint}");
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}
