//! The status line (stream states, message or filter input) and the footer
//! of key hints. Errors go here, never over the grid.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::render_line;
use super::theme::{span, style};
use crate::tui::fit::display_width;
use crate::tui::view_model::{StatusVm, Tone};

impl Widget for &StatusVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let mut spans = Vec::new();
        for (i, cell) in self.streams.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw("  "));
            }
            spans.push(span(cell));
        }
        if let Some(message) = &self.message {
            if !spans.is_empty() {
                spans.push(Span::styled(" │ ", style(Tone::Dim)));
            }
            spans.push(span(message));
        }
        render_line(spans, area, buf);
    }
}

/// The hint that must always show, last.
const HELP_KEY: &str = "?";

/// Draws the key hints: as many as fit, in keymap order, and always `? help`
/// at the end (the help lists everything the footer has no room for).
pub fn render_hints(hints: &[(String, &'static str)], area: Rect, buf: &mut Buffer) {
    let width = |key: &str, label: &str| usize::from(display_width(key) + display_width(label)) + 3;
    let help = hints.iter().find(|(key, _)| key == HELP_KEY);
    let mut room = usize::from(area.width)
        .saturating_sub(help.map_or(0, |(key, label)| width(key, label) - 2));
    let mut spans = Vec::new();
    for (key, label) in hints.iter().filter(|(key, _)| key != HELP_KEY) {
        let need = width(key, label);
        if need > room {
            break;
        }
        room -= need;
        spans.push(Span::styled(key.as_str(), style(Tone::Accent)));
        spans.push(Span::styled(format!(" {label}  "), style(Tone::Dim)));
    }
    if let Some((key, label)) = help {
        spans.push(Span::styled(key.as_str(), style(Tone::Accent)));
        spans.push(Span::styled(format!(" {label}"), style(Tone::Dim)));
    }
    Line::from(spans).render(area, buf);
}
