//! Text to width: measuring, cutting with a visible mark, wrapping at words.
//! Every place that shortens text for the screen goes through here, so a cut
//! value always ends (or starts) with `…` and never loses a word silently.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Where a value too long for its space is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Keep the start, end with `…`.
    End,
    /// Keep the end, start with `…` (node names: `…ral-042` tells nodes apart).
    Start,
}

/// The width of `text` on a terminal, in cells.
pub fn display_width(text: &str) -> u16 {
    u16::try_from(text.width()).unwrap_or(u16::MAX)
}

/// `text` cut to `width` cells, the cut marked with `…`.
pub fn fit(text: &str, width: u16, cut: Cut) -> String {
    if display_width(text) <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let budget = usize::from(width - 1);
    let mut used = 0;
    let mut kept: Vec<char> = Vec::new();
    let mut take = |c: char| {
        let w = c.width().unwrap_or(0);
        if used + w > budget {
            return false;
        }
        used += w;
        kept.push(c);
        true
    };
    match cut {
        Cut::End => {
            for c in text.chars() {
                if !take(c) {
                    break;
                }
            }
            kept.push('…');
            kept.into_iter().collect()
        }
        Cut::Start => {
            for c in text.chars().rev() {
                if !take(c) {
                    break;
                }
            }
            std::iter::once('…').chain(kept.into_iter().rev()).collect()
        }
    }
}

/// `text` wrapped at spaces into lines of at most `width` cells; a word
/// longer than a line is split across lines (nothing is dropped).
pub fn wrap(text: &str, width: u16) -> Vec<String> {
    let width = usize::from(width.max(1));
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for word in text.split(' ') {
        let mut word = word;
        let mut w = word.width();
        if used > 0 && used + 1 + w <= width {
            line.push(' ');
            line.push_str(word);
            used += 1 + w;
            continue;
        }
        if used > 0 {
            lines.push(std::mem::take(&mut line));
        }
        // A word wider than the line: split it by cells.
        while w > width {
            let mut taken = 0;
            let mut end = 0;
            for (at, c) in word.char_indices() {
                let cw = c.width().unwrap_or(0);
                if taken + cw > width {
                    break;
                }
                taken += cw;
                end = at + c.len_utf8();
            }
            if end == 0 {
                break;
            }
            lines.push(word[..end].to_owned());
            word = &word[end..];
            w = word.width();
        }
        line.push_str(word);
        used = w;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The scroll position marker of a window of `visible` lines from `offset`
/// over `total`: `12–30/58 ↑↓`, or `None` when everything fits.
pub fn position(offset: usize, visible: usize, total: usize) -> Option<String> {
    if total <= visible {
        return None;
    }
    let last = (offset + visible).min(total);
    let up = if offset > 0 { "↑" } else { " " };
    let down = if last < total { "↓" } else { " " };
    Some(format!("{}–{last}/{total} {up}{down}", offset + 1))
}

/// The first line to show so that a window of `visible` lines over `total`
/// starts as near `scroll` as possible without running past the end.
pub fn clamp_scroll(scroll: usize, visible: usize, total: usize) -> usize {
    scroll.min(total.saturating_sub(visible))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_are_marked() {
        let cases = [
            ("fits", "general-042", 11, Cut::Start, "general-042"),
            (
                "keeps the node's tail",
                "general-042",
                8,
                Cut::Start,
                "…ral-042",
            ),
            (
                "end cut",
                "taint node.kubernetes.io/unreachable",
                12,
                Cut::End,
                "taint node.…",
            ),
            ("wide chars", "ノードの名前", 5, Cut::End, "ノー…"),
            ("nothing", "abc", 0, Cut::End, ""),
            ("one cell", "abc", 1, Cut::End, "…"),
        ];
        for (name, text, width, cut, expected) in cases {
            let got = fit(text, width, cut);
            assert_eq!(got, expected, "{name}");
            assert!(display_width(&got) <= width, "{name}");
        }
    }

    #[test]
    fn wraps_at_words_and_keeps_everything() {
        let cases: [(&str, &str, u16, &[&str]); 4] = [
            ("short", "a b", 10, &["a b"]),
            (
                "at words",
                "paused by ana: node-3 CrashLoopBackOff",
                16,
                &["paused by ana:", "node-3", "CrashLoopBackOff"],
            ),
            ("long word split", "abcdefghij", 4, &["abcd", "efgh", "ij"]),
            ("empty", "", 5, &[""]),
        ];
        for (name, text, width, expected) in cases {
            assert_eq!(wrap(text, width), expected, "{name}");
        }
    }

    #[test]
    fn position_marker() {
        assert_eq!(position(0, 10, 5), None);
        assert_eq!(position(0, 10, 58).as_deref(), Some("1–10/58  ↓"));
        assert_eq!(position(48, 10, 58).as_deref(), Some("49–58/58 ↑ "));
        assert_eq!(clamp_scroll(usize::MAX, 10, 58), 48);
        assert_eq!(clamp_scroll(3, 10, 5), 0);
    }
}
