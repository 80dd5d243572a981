//! The `rftune` binary: parse arguments, run, exit with the documented code.

use std::process::ExitCode;

fn main() -> ExitCode {
    rftune::main()
}
