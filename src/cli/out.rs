//! The one way the headless commands write to the terminal. Every table, line,
//! warning, prompt and error goes through [`crate::sanitize::sanitize_lines`],
//! so text from the API, a snapshot, a roster or a scenario (a change-cause
//! holding OSC 52, a node name holding a bidi override) cannot drive the
//! terminal. JSON output stays exact: [`json`] only adds JSON escapes.
//!
//! The library denies `print!`/`println!`/`eprint!`/`eprintln!`
//! (`clippy::print_stdout`, `clippy::print_stderr` in `lib.rs`), so a new
//! print path has to come through here.

use std::fmt::Write as _;
use std::io::Write as _;

use serde::Serialize;

use crate::input::limits::shorten;
use crate::sanitize::sanitize_lines;

/// Writes a table or message to stdout, sanitised line by line. A reader that
/// stopped early (`| head`) is not an error.
pub fn stdout(text: &str) -> std::io::Result<()> {
    write_stdout(&sanitize_lines(text, false))
}

/// As [`stdout`], keeping only the few color sequences rollcall's own tables
/// paint with (their API text is sanitised before painting).
pub fn stdout_colored(text: &str) -> std::io::Result<()> {
    write_stdout(&sanitize_lines(text, true))
}

/// Writes exact JSON (from [`json`]) to stdout; no other change is needed
/// since [`json`] already escaped every control and bidi character.
pub fn stdout_json(json: &str) -> std::io::Result<()> {
    write_stdout(json)
}

/// Writes one line (a newline is added) to stdout, sanitised; write errors
/// are ignored like `println!` would not (there is nowhere left to report them).
pub fn line(text: &str) {
    let _ = stdout(&format!("{text}\n"));
}

/// Writes `text` to stderr, sanitised, without adding a newline (prompts, diffs).
pub fn stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(sanitize_lines(text, false).as_bytes());
    let _ = err.flush();
}

/// Writes one line (a newline is added) to stderr, sanitised.
pub fn eline(text: &str) {
    stderr(&format!("{text}\n"));
}

/// Writes `warning: ...` to stderr, sanitised.
pub fn warning(text: &impl std::fmt::Display) {
    eline(&format!("warning: {text}"));
}

/// Longest error printed, in characters (before sanitising): an error that
/// echoes a 10 MB value, even one full of line breaks, prints a few KB.
pub const MAX_ERROR_CHARS: usize = 8192;

/// Writes `error: ...` with its causes to stderr, sanitised and bounded.
pub fn error(err: &anyhow::Error) {
    stderr(&error_text(err));
}

/// The `error: ...` line(s) for `err`, bounded and sanitised.
fn error_text(err: &anyhow::Error) -> String {
    let text = format!("error: {}", super::error_text(err));
    let mut text = sanitize_lines(&shorten(&text, MAX_ERROR_CHARS), false).into_owned();
    text.push('\n');
    text
}

/// `value` as JSON (pretty or compact) with every character that could
/// drive a terminal escaped: C0 controls (serde already does), DEL, C1
/// controls and bidi formatting characters become `\u` escapes (`\u001b`,
/// `\u202e`). A JSON reader
/// gets exactly the original strings back.
pub fn json(value: &impl Serialize, pretty: bool) -> serde_json::Result<String> {
    let text = if pretty {
        serde_json::to_string_pretty(value)?
    } else {
        serde_json::to_string(value)?
    };
    Ok(escape_terminal_chars(text))
}

/// Replaces each character a terminal could act on with its JSON `\u`
/// escape (four hex digits). Valid anywhere in serialized JSON: outside strings there is only
/// ASCII punctuation, digits and literals, so every hit is inside a string.
fn escape_terminal_chars(text: String) -> String {
    if !text.chars().any(needs_escape) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            // Every such character is in the Basic Multilingual Plane.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `c` is escaped; the newlines of pretty JSON are structure (serde
/// escapes those inside strings), so they stay.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_terminal_characters_and_round_trips() {
        let hostile = "a\u{1b}]52;c;ZXZpbA==\u{07}b\u{9b}2J\u{202e}c\u{7f}\u{2028}ノ";
        let value = serde_json::json!({ "cause": hostile });
        for pretty in [false, true] {
            let text = json(&value, pretty).unwrap();
            assert!(text.chars().all(|c| !needs_escape(c)), "{text:?}");
            assert!(
                text.contains("\\u001b") && text.contains("\\u202e"),
                "{text}"
            );
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back["cause"], hostile);
        }
    }

    #[test]
    fn a_huge_hostile_error_prints_a_few_clean_kilobytes() {
        let value = "\u{1b}]52;c;eA==\u{07}line\n".repeat(1 << 20);
        let err = anyhow::anyhow!("bad value {value:?}").context("cannot load x");
        let text = error_text(&err);
        assert!(text.len() < 4 * MAX_ERROR_CHARS, "{} bytes", text.len());
        assert!(
            text.starts_with("error: cannot load x: bad value \""),
            "{text}"
        );
        assert!(!text.contains('\u{1b}') && !text.contains('\u{07}'));
        let multi = anyhow::anyhow!("{}", "\u{1b}[2Jx\n".repeat(1 << 20));
        let text = error_text(&multi);
        assert!(text.lines().count() <= MAX_ERROR_CHARS, "{}", text.len());
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn plain_json_is_unchanged() {
        let value = serde_json::json!({ "name": "node-ü", "n": [1, 2] });
        assert_eq!(
            json(&value, false).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
    }
}
