//! The one place API text becomes drawable: strips terminal escape sequences,
//! control characters and bidirectional overrides, and bounds the length, so a
//! hostile node name or event message cannot move the cursor, clear the
//! screen, ring the bell or reorder what is drawn. Pure string work.

use std::borrow::Cow;

/// Longest text kept from one API string, in characters (longer text ends in `…`).
/// Kubernetes names are at most 253 characters; messages can be far longer.
pub const MAX_CHARS: usize = 512;

/// Longest printed line of a headless command's output, in characters. Wider
/// than [`MAX_CHARS`] because one table line holds several API strings; it still
/// bounds what a huge value (an annotation, an error echoing a 10 MB value) prints.
pub const MAX_LINE_CHARS: usize = 4096;

/// Returns `text` safe to draw: ESC sequences (CSI, OSC, two-byte) removed,
/// other C0/C1 controls and DEL replaced by a space when they separate words
/// (tab, newline, carriage return) or dropped otherwise, bidi embedding,
/// override and isolate marks dropped, and at most [`MAX_CHARS`] characters.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    clean(
        text,
        Rules {
            max_chars: MAX_CHARS,
            keep_newlines: false,
            keep_sgr: false,
        },
    )
}

/// Returns multi-line `text` safe to print: as [`sanitize`], but line breaks
/// are kept and each line is bounded to [`MAX_LINE_CHARS`] separately. With
/// `keep_colors`, the few SGR color sequences rollcall's own tables use (reset,
/// bold, red, green, yellow) survive; every other sequence is removed.
pub fn sanitize_lines(text: &str, keep_colors: bool) -> Cow<'_, str> {
    clean(
        text,
        Rules {
            max_chars: MAX_LINE_CHARS,
            keep_newlines: true,
            keep_sgr: keep_colors,
        },
    )
}

/// What [`clean`] keeps.
#[derive(Clone, Copy)]
struct Rules {
    /// Characters kept per line (per text without `keep_newlines`).
    max_chars: usize,
    /// `\n` stays a line break instead of becoming a space.
    keep_newlines: bool,
    /// rollcall's own color sequences stay.
    keep_sgr: bool,
}

fn clean(text: &str, rules: Rules) -> Cow<'_, str> {
    let fits = |line: &str| line.chars().count() <= rules.max_chars;
    let already_clean = if rules.keep_newlines {
        text.split('\n')
            .all(|line| fits(line) && line.chars().all(is_plain))
    } else {
        fits(text) && text.chars().all(is_plain)
    };
    if already_clean {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(rules.max_chars * 4));
    let mut chars = text.chars().peekable();
    let mut kept = 0;
    while let Some(c) = chars.next() {
        if c == '\n' && rules.keep_newlines {
            out.push('\n');
            kept = 0;
            continue;
        }
        if kept == rules.max_chars {
            out.push('…');
            if !rules.keep_newlines {
                break;
            }
            // Drop the rest of this line; the next one starts afresh.
            kept += 1;
            continue;
        }
        if kept > rules.max_chars {
            continue;
        }
        match c {
            '\u{1b}' => {
                let sequence = skip_escape(&mut chars);
                if rules.keep_sgr && is_own_color(&sequence) {
                    out.push('\u{1b}');
                    out.push_str(&sequence);
                }
            }
            // An 8-bit CSI introduces the same sequences as ESC [.
            '\u{9b}' => {
                skip_csi(&mut chars, &mut String::new());
            }
            '\t' | '\n' | '\r' if !out.ends_with(' ') => {
                out.push(' ');
                kept += 1;
            }
            c if is_plain(c) => {
                out.push(c);
                kept += 1;
            }
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// Whether an escape sequence (without its ESC) is one of the SGR sequences
/// rollcall's tables paint with: `[` then parameters 0, 1, 31, 32 or 33, then `m`.
fn is_own_color(sequence: &str) -> bool {
    sequence
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix('m'))
        .is_some_and(|params| {
            params
                .split(';')
                .all(|p| matches!(p, "" | "0" | "1" | "31" | "32" | "33"))
        })
}

/// Whether a character may be drawn as is.
fn is_plain(c: char) -> bool {
    !(c.is_control() || is_bidi_control(c))
}

/// Unicode bidirectional formatting characters (embeddings, overrides,
/// isolates and marks): drawn text must keep its logical order.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// Skips what follows an ESC: a CSI (`[` ... final byte), an OSC/DCS/APC/PM/SOS
/// string (up to BEL or ESC `\`), or a single following character. Returns a
/// CSI as skipped (`[` parameters final byte) so a caller may keep its own
/// colors; other sequences come back as an empty string.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut csi = String::new();
    match chars.peek() {
        Some('[') => {
            chars.next();
            csi.push('[');
            skip_csi(chars, &mut csi);
        }
        Some(']' | 'P' | '_' | '^' | 'X') => {
            chars.next();
            skip_string(chars);
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
    csi
}

/// Skips CSI parameters and intermediates up to and including the final byte,
/// appending what it skipped to `seen`.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, seen: &mut String) {
    for c in chars.by_ref() {
        seen.push(c);
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
        if !('\u{20}'..='\u{3f}').contains(&c) {
            // Not a well-formed sequence: stop swallowing text.
            seen.clear();
            return;
        }
    }
    // Unterminated: nothing to keep.
    seen.clear();
}

/// Skips a control string up to its terminator (BEL, ST, or ESC `\`).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{07}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_neutralised() {
        let cases = [
            ("plain", "node-1", "node-1"),
            ("clear screen", "evil\u{1b}[2Jnode", "evilnode"),
            ("colour", "\u{1b}[31mred\u{1b}[0m", "red"),
            ("cursor move", "a\u{1b}[10;20Hb", "ab"),
            ("carriage return", "fake\rreal", "fake real"),
            ("bell", "ding\u{07}dong", "dingdong"),
            ("osc title", "\u{1b}]0;pwned\u{07}name", "name"),
            ("osc with st", "\u{1b}]8;;http://x\u{1b}\\link", "link"),
            ("8-bit csi", "a\u{9b}2Jb", "ab"),
            ("bidi override", "abc\u{202e}fed", "abcfed"),
            ("bidi isolate", "\u{2066}x\u{2069}", "x"),
            ("newlines collapse", "line1\n\nline2", "line1 line2"),
            ("del", "a\u{7f}b", "ab"),
            ("trailing esc", "tail\u{1b}", "tail"),
            ("unicode kept", "ノード-ü", "ノード-ü"),
        ];
        for (name, input, expected) in cases {
            assert_eq!(sanitize(input), expected, "{name}");
        }
    }

    #[test]
    fn very_long_text_is_bounded() {
        let long = "x".repeat(10_000);
        let out = sanitize(&long);
        assert_eq!(out.chars().count(), MAX_CHARS + 1);
        assert!(out.ends_with('…'));
    }

    #[test]
    fn lines_keep_breaks_and_bound_each_line() {
        let text = format!(
            "a\u{1b}]52;c;ZXZpbA==\u{07}b\n{}\nc\u{202e}d\n",
            "y".repeat(5000)
        );
        let out = sanitize_lines(&text, false);
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], "ab");
        assert_eq!(lines[1].chars().count(), MAX_LINE_CHARS + 1);
        assert_eq!(lines[2], "cd");
        assert_eq!(lines[3], "");
    }

    #[test]
    fn only_own_colors_survive_when_asked() {
        let text = "\u{1b}[1;31mbad\u{1b}[0m \u{1b}[8mhidden\u{1b}[2J\u{1b}[38;5;1mx";
        assert_eq!(
            sanitize_lines(text, true),
            "\u{1b}[1;31mbad\u{1b}[0m hiddenx"
        );
        assert_eq!(sanitize_lines(text, false), "bad hiddenx");
        assert!(matches!(sanitize_lines("a\nb\n", false), Cow::Borrowed(_)));
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(sanitize("node-7"), Cow::Borrowed(_)));
    }
}
