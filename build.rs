//! Build facts for `rollcall version` and `--version`: the git commit and the
//! build date, handed to the crate as `ROLLCALL_GIT_COMMIT` and
//! `ROLLCALL_BUILD_DATE`.
//!
//! - The commit is `git rev-parse --short HEAD` when the crate is built from its
//!   own git checkout (a `.git` beside `Cargo.toml`: never a repository that
//!   merely encloses an unpacked crate); else the commit cargo recorded when the
//!   package was made (`.cargo_vcs_info.json`); else `unknown`.
//! - The date is `SOURCE_DATE_EPOCH` when set (reproducible builds), else now,
//!   in UTC, RFC 3339 to the second.
//!
//! The script reruns only when this file, `SOURCE_DATE_EPOCH`, the checkout's
//! `HEAD` or the ref it points to change, so an ordinary build does not rebuild
//! the crate; "now" is therefore the time the script last ran. Uses only std.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = git_commit(&dir)
        .or_else(|| packaged_commit(&dir))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=ROLLCALL_GIT_COMMIT={commit}");
    println!(
        "cargo:rustc-env=ROLLCALL_BUILD_DATE={}",
        rfc3339(build_time())
    );
}

/// The short commit of the checkout at `dir`, watching the files that change
/// with it (`HEAD`, and the branch's ref or `packed-refs`).
fn git_commit(dir: &Path) -> Option<String> {
    if !dir.join(".git").exists() {
        return None;
    }
    let commit = git(dir, &["rev-parse", "--short", "HEAD"])?;
    watch(dir, "HEAD");
    if let Some(reference) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        // A loose ref file, or the packed one when the ref is packed. Only
        // existing paths: cargo reruns every time for a missing one.
        if !watch(dir, &reference) {
            watch(dir, "packed-refs");
        }
    }
    Some(commit)
}

/// Tells cargo to rerun when the git file `name` changes (resolved with `git
/// rev-parse --git-path`, so worktrees work); false when it does not exist.
fn watch(dir: &Path, name: &str) -> bool {
    let Some(path) = git(dir, &["rev-parse", "--git-path", name]) else {
        return false;
    };
    let path = dir.join(path);
    if !path.is_file() {
        return false;
    }
    println!("cargo:rerun-if-changed={}", path.display());
    true
}

/// A git command's trimmed stdout, or None when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The commit `cargo package` recorded in `.cargo_vcs_info.json`
/// (`{"git": {"sha1": "<40 hex>"}, ...}`), shortened as git does.
fn packaged_commit(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let after = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let start = after.find('"')? + 1;
    let sha: String = after[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (sha.len() == 40).then(|| sha[..7].to_owned())
}

/// Seconds since the epoch: `SOURCE_DATE_EPOCH`, else now.
fn build_time() -> u64 {
    if let Ok(value) = std::env::var("SOURCE_DATE_EPOCH") {
        match value.trim().parse() {
            Ok(seconds) => return seconds,
            Err(_) => println!(
                "cargo:warning=SOURCE_DATE_EPOCH={value:?} is not a number of seconds; using now"
            ),
        }
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// `seconds` since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(seconds: u64) -> String {
    let days = seconds / 86_400;
    let rest = seconds % 86_400;
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01: counted in 400-year
/// eras of 146,097 days whose years start on 1 March, so the leap day is the
/// last day of a year and needs no special case.
fn civil_date(days: u64) -> (u64, u64, u64) {
    // 1970-01-01 is day 719,468 counted from 0000-03-01.
    let from_march_0000 = days + 719_468;
    let era = from_march_0000 / 146_097;
    let day_of_era = from_march_0000 % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March: 31,30,31,30,31 repeat as 153 days per 5 months.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}
