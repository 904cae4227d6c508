//! The `rollcall` binary (also the kubectl plugin `kubectl-rollcall`): parses
//! the command line and hands over to [`rollcall::cli`].

fn main() -> std::process::ExitCode {
    rollcall::cli::run(rollcall::cli::parse())
}
