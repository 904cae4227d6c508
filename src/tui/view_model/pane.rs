//! Scrolling text: the help overlay, rollout dialogs (plan, confirmations,
//! rollback) and the node detail pane share one shape — lines already wrapped
//! to the width they are drawn at, and a scroll position — and one geometry,
//! so the key handler clamps scrolling with the same numbers the widget draws
//! with. Pure.

use ratatui::layout::Rect;

use super::{Cell, ConsoleInfo, Tone};
use crate::engine::vocabulary::ELIGIBILITY_WORDS;
use crate::tui::fit::{display_width, wrap};
use crate::tui::keymap;

/// Lines of text that scroll, with a title.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextPane {
    /// Title (on the top border).
    pub title: String,
    /// Lines, each fitting the pane's inner width.
    pub lines: Vec<Vec<Cell>>,
    /// First line shown (already clamped).
    pub scroll: usize,
}

/// Which overlay: they differ only in how wide they get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    /// The `?` help.
    Help,
    /// A rollout dialog.
    Dialog,
}

/// The overlay's box inside the body area, for `total` lines of content:
/// as wide as the terminal allows (up to a readable measure), as tall as the
/// content or the body, centred.
pub fn overlay_area(kind: Overlay, body: Rect, total: usize) -> Rect {
    let width = overlay_width(kind, body.width);
    let height = u16::try_from(total.saturating_add(2))
        .unwrap_or(u16::MAX)
        .min(body.height);
    Rect {
        x: body.x + (body.width - width) / 2,
        y: body.y + (body.height - height) / 2,
        width,
        height,
    }
}

fn overlay_width(kind: Overlay, body_width: u16) -> u16 {
    let measure = match kind {
        Overlay::Help => 100,
        Overlay::Dialog => 120,
    };
    body_width.min(measure)
}

/// The width inside an overlay's border.
pub fn overlay_inner_width(kind: Overlay, body_width: u16) -> u16 {
    overlay_width(kind, body_width).saturating_sub(2).max(1)
}

/// Lines shown at once by a bordered pane of `height` rows holding `total` lines.
pub fn visible(height: u16, total: usize) -> usize {
    usize::from(height.saturating_sub(2)).min(total).max(1)
}

/// One line of cells wrapped to `width`: words stay whole where they fit,
/// continuation lines are indented by two cells; nothing is dropped.
pub fn wrap_cells(line: &[Cell], width: u16) -> Vec<Vec<Cell>> {
    wrap_hanging(line, width, 2)
}

/// [`wrap_cells`] with continuation lines indented by `indent` cells (the
/// help's entries continue under their text, not under their key).
fn wrap_hanging(line: &[Cell], width: u16, indent: u16) -> Vec<Vec<Cell>> {
    let total: u16 = line.iter().map(|c| display_width(&c.text)).sum();
    if total <= width {
        return vec![line.to_vec()];
    }
    let width = width.max(4);
    // A hanging indent that leaves too little room falls back to two cells.
    let indent = if indent.saturating_mul(2) <= width {
        indent
    } else {
        2
    };
    let margin = " ".repeat(usize::from(indent));
    let mut out: Vec<Vec<Cell>> = vec![Vec::new()];
    let mut used: u16 = 0;
    for cell in line {
        for word in cell.text.split_inclusive(' ') {
            let w = display_width(word);
            // A word that fits on a line of its own goes to the next line
            // rather than being split (paths stay whole where they can).
            if used + w > width && used > indent {
                // A word the hanging indent would split (a path) goes under
                // the key instead, whole where it can be.
                let here = if w > width - indent && w <= width - 2 {
                    2
                } else {
                    indent
                };
                out.push(vec![Cell::new(&margin[..usize::from(here)], Tone::Normal)]);
                used = here;
            }
            let room = width - used;
            if w <= room {
                push(&mut out, word, cell.tone);
                used += w;
                continue;
            }
            // A word longer than a whole line: split it by cells.
            let pieces = wrap(word, room);
            let count = pieces.len();
            for (i, piece) in pieces.into_iter().enumerate() {
                push(&mut out, &piece, cell.tone);
                used += display_width(&piece);
                if i + 1 < count {
                    out.push(vec![Cell::new(&margin, Tone::Normal)]);
                    used = indent;
                }
            }
        }
    }
    out
}

fn push(out: &mut [Vec<Cell>], text: &str, tone: Tone) {
    if let Some(line) = out.last_mut() {
        match line.last_mut() {
            Some(last) if last.tone == tone => last.text.push_str(text),
            _ => line.push(Cell {
                text: text.to_owned(),
                tone,
            }),
        }
    }
}

/// Wraps every line to `width`.
pub fn wrap_all(lines: &[Vec<Cell>], width: u16) -> Vec<Vec<Cell>> {
    lines.iter().flat_map(|l| wrap_cells(l, width)).collect()
}

/// The help: every binding by context (from the keymap), the words of the
/// ELIG column and the row marks, and the connection in full (the kubeconfig
/// path kubectl needs). Wrapped to `width`.
pub fn help_lines(info: &ConsoleInfo, width: u16) -> Vec<Vec<Cell>> {
    let mut lines: Vec<Vec<Cell>> = Vec::new();
    let section = |lines: &mut Vec<Vec<Cell>>, title: &str| {
        if !lines.is_empty() {
            lines.push(Vec::new());
        }
        lines.push(vec![Cell::new(title, Tone::Accent)]);
    };
    let entry = |keys: &str, text: &str| {
        vec![
            Cell::new(&format!("  {keys:<16}"), Tone::Warn),
            Cell::new(text, Tone::Normal),
        ]
    };
    section(&mut lines, "Connection");
    lines.push(entry("context", &info.context));
    lines.push(entry("server", &info.server));
    if let Some(note) = &info.note {
        lines.push(entry("note", note));
    }
    for (title, bindings) in keymap::help_sections() {
        section(&mut lines, title);
        for (keys, help) in bindings {
            lines.push(entry(&keys, help));
        }
    }
    section(
        &mut lines,
        "ELIG column (also in `rollcall status` and `explain`)",
    );
    for (_, word, meaning) in ELIGIBILITY_WORDS {
        lines.push(entry(word, meaning));
    }
    section(&mut lines, "Marks (first column)");
    lines.push(entry("◆", "a canary: advanced first, as its own batch"));
    lines.push(entry("!", "a problem: failing, missing or misscheduled"));
    lines.push(entry("×", "blocks the rollout"));
    // An entry's text continues under its text, not under its key.
    lines
        .iter()
        .flat_map(|line| match line.as_slice() {
            [key, _] => wrap_hanging(line, width, display_width(&key.text)),
            _ => wrap_cells(line, width),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &[Cell]) -> String {
        line.iter().map(|c| c.text.as_str()).collect()
    }

    /// Issue 33: a help entry too long for its line continues under its
    /// text, at the key column's width, not at the left edge.
    #[test]
    fn wrapped_help_lines_keep_their_indent() {
        let info = ConsoleInfo {
            context: "kind".into(),
            server: "https://127.0.0.1:6443/".into(),
            note: None,
        };
        let lines: Vec<String> = help_lines(&info, 60).iter().map(|l| text(l)).collect();
        let at = lines
            .iter()
            .position(|l| l.contains("advance the selected node"))
            .expect("the advance entry");
        assert!(lines[at].starts_with("  a "), "{lines:?}");
        let next = &lines[at + 1];
        assert!(next.starts_with(&" ".repeat(18)), "{next:?}");
        assert!(!next.starts_with(&" ".repeat(19)), "{next:?}");
        for l in &lines {
            assert!(display_width(l) <= 60, "{l:?}");
        }
    }

    #[test]
    fn wrapping_keeps_every_word_and_the_width() {
        let line = vec![
            Cell::new("taint ", Tone::Normal),
            Cell::new(
                "node-role.kubernetes.io/control-plane:NoSchedule tolerated by node-role.kubernetes.io/control-plane",
                Tone::Warn,
            ),
        ];
        let wrapped = wrap_cells(&line, 30);
        assert!(wrapped.len() > 1);
        for l in &wrapped {
            assert!(display_width(&text(l)) <= 30, "{:?}", text(l));
        }
        let joined: String = wrapped.iter().map(|l| text(l).trim().to_owned()).collect();
        assert_eq!(
            joined.replace(' ', ""),
            text(&line).replace(' ', ""),
            "nothing dropped"
        );
    }

    #[test]
    fn help_names_the_rollout_keys_and_the_kubeconfig() {
        let info = ConsoleInfo {
            context: "embedded".into(),
            server: "https://127.0.0.1:1".into(),
            note: Some(
                "kubectl --kubeconfig /tmp/a/very/long/path/rollcall-demo-4242.kubeconfig".into(),
            ),
        };
        let lines: Vec<String> = help_lines(&info, 60).iter().map(|l| text(l)).collect();
        let all = lines.join("\n");
        assert!(all.contains("rollcall-demo-4242.kubeconfig"), "{all}");
        for word in ["keep", "advance the selected node", "pause or resume"] {
            assert!(all.contains(word), "{word} missing");
        }
        assert!(lines.iter().all(|l| display_width(l) <= 60));
    }
}
