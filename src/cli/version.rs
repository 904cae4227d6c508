//! `rollcall version [-o json]` and `--version`: the crate version, the git
//! commit and the build date, as `build.rs` recorded them at build time (the
//! commit is `unknown` for a build outside a git checkout without cargo's
//! packaging record). Writes only to stdout; reads nothing at run time.

use std::process::ExitCode;

use serde::Serialize;

/// The crate version (`Cargo.toml`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The short git commit built, or `unknown`.
pub const COMMIT: &str = env!("ROLLCALL_GIT_COMMIT");
/// When it was built: `SOURCE_DATE_EPOCH`, else the build time, UTC, RFC 3339.
pub const BUILD_DATE: &str = env!("ROLLCALL_BUILD_DATE");

/// What `--version` prints after the program's name, and `rollcall version` after `rollcall`.
pub const LINE: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ROLLCALL_GIT_COMMIT"),
    ", built ",
    env!("ROLLCALL_BUILD_DATE"),
    ")"
);

/// Output formats of `rollcall version`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// One line: `rollcall VERSION (commit COMMIT, built DATE)`, as `--version` prints it.
    #[default]
    Table,
    /// `{"version", "commit", "buildDate"}`.
    Json,
}

/// Arguments of `rollcall version`.
#[derive(Debug, clap::Args)]
pub struct VersionArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// `rollcall version -o json`.
#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct BuildInfo {
    /// The crate version.
    pub version: &'static str,
    /// The short git commit, or `unknown`.
    pub commit: &'static str,
    /// The build date (RFC 3339, UTC).
    pub build_date: &'static str,
}

/// This binary's build facts.
pub const BUILD: BuildInfo = BuildInfo {
    version: VERSION,
    commit: COMMIT,
    build_date: BUILD_DATE,
};

/// Runs `rollcall version`.
pub fn run(args: &VersionArgs) -> anyhow::Result<ExitCode> {
    match args.output {
        Output::Table => super::out::stdout(&format!("rollcall {LINE}\n"))?,
        Output::Json => {
            let text = super::out::json(&BUILD, false)?;
            super::out::stdout_json(&format!("{text}\n"))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_version_commit_and_date() {
        assert!(LINE.starts_with(VERSION), "{LINE}");
        assert!(LINE.contains(COMMIT), "{LINE}");
        assert!(LINE.contains(BUILD_DATE), "{LINE}");
        assert!(
            COMMIT == "unknown"
                || (COMMIT.len() >= 7 && COMMIT.bytes().all(|b| b.is_ascii_hexdigit())),
            "{COMMIT}"
        );
        // YYYY-MM-DDTHH:MM:SSZ
        assert_eq!(BUILD_DATE.len(), 20, "{BUILD_DATE}");
        assert!(BUILD_DATE.ends_with('Z'), "{BUILD_DATE}");
    }
}
