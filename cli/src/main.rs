//! The `rftune` binary: parse arguments, run, exit with the documented code.

use std::process::ExitCode;

/// mimalloc instead of glibc's malloc: a fleet run allocates and frees each host's decoded
/// documents on two threads, where glibc's arenas spent ~15% of the CPU (ARCHITECTURE.md,
/// Scaling).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    rftune::main()
}
