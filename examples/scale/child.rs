//! A benchmark's child process: `rollcall ARGS` through the library's own
//! command line, then its own cost on stderr, where the parent reads it.

use super::proc_stats::{cpu_secs, peak_mb};

/// Runs `rollcall ARGS` (its report on stdout); then its CPU seconds and
/// peak RSS on stderr, as the last line (`cost: …`).
pub fn child(command: &[String]) -> anyhow::Result<()> {
    let argv = std::iter::once("rollcall".to_owned()).chain(command.iter().cloned());
    let matches = rollcall::cli::command("rollcall").try_get_matches_from(argv)?;
    let cli = rollcall::cli::from_matches(&matches)?;
    let code = rollcall::cli::run(cli);
    line(&format!(
        "cost: {:.2} CPU s, peak RSS {:.0} MB, {code:?}",
        cpu_secs(),
        peak_mb()
    ));
    Ok(())
}

/// One line on stderr, written whole.
pub fn line(text: &str) {
    let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{text}\n").as_bytes());
}
