//! The `rollcall` binary: parses the command line and hands over to [`rollcall::cli`].

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = rollcall::cli::Cli::parse();
    rollcall::cli::run(cli)
}
