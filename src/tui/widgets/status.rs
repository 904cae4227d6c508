//! The status line (stream states, message or filter input) and the footer
//! of key hints. Errors go here, never over the grid.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::theme::{span, style};
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
        Line::from(spans).render(area, buf);
    }
}

/// Draws the key hints.
pub fn render_hints(hints: &[(String, &'static str)], area: Rect, buf: &mut Buffer) {
    let mut spans = Vec::new();
    for (key, label) in hints {
        spans.push(Span::styled(key.as_str(), style(Tone::Accent)));
        spans.push(Span::styled(format!(" {label}  "), style(Tone::Dim)));
    }
    Line::from(spans).render(area, buf);
}
