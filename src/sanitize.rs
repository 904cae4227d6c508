//! The one place API text becomes drawable: strips terminal escape sequences,
//! control characters and bidirectional overrides, and bounds the length, so a
//! hostile node name or event message cannot move the cursor, clear the
//! screen, ring the bell or reorder what is drawn. Pure string work.

use std::borrow::Cow;

/// Longest text kept from one API string, in characters (longer text ends in `…`).
/// Kubernetes names are at most 253 characters; messages can be far longer.
pub const MAX_CHARS: usize = 512;

/// Returns `text` safe to draw: ESC sequences (CSI, OSC, two-byte) removed,
/// other C0/C1 controls and DEL replaced by a space when they separate words
/// (tab, newline, carriage return) or dropped otherwise, bidi embedding,
/// override and isolate marks dropped, and at most [`MAX_CHARS`] characters.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if text.chars().count() <= MAX_CHARS && text.chars().all(is_plain) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(MAX_CHARS * 4));
    let mut chars = text.chars().peekable();
    let mut kept = 0;
    while let Some(c) = chars.next() {
        if kept == MAX_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // An 8-bit CSI introduces the same sequences as ESC [.
            '\u{9b}' => skip_csi(&mut chars),
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
/// string (up to BEL or ESC `\`), or a single following character.
fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
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
}

/// Skips CSI parameters and intermediates up to and including the final byte.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
        if !('\u{20}'..='\u{3f}').contains(&c) {
            // Not a well-formed sequence: stop swallowing text.
            return;
        }
    }
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
    fn plain_text_is_borrowed() {
        assert!(matches!(sanitize("node-7"), Cow::Borrowed(_)));
    }
}
