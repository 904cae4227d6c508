//! The status line (stream states, message or filter input) and the footer
//! of key hints. Errors go here, never over the grid.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::render_line;
use super::theme::{span, style};
use crate::tui::fit::{Cut, display_width, fit};
use crate::tui::view_model::{StatusVm, Tone};

impl Widget for &StatusVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width;
        let mut spans = Vec::new();
        for (i, cell) in self.streams.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw("  "));
            }
            spans.push(span(cell));
        }
        let Some(message) = &self.message else {
            render_line(spans, area, buf);
            return;
        };
        let streams_width: usize = spans.iter().map(Span::width).sum();
        let separator = if spans.is_empty() { 0 } else { 3 };
        if streams_width + separator + usize::from(display_width(&message.text))
            > usize::from(width)
            && !spans.is_empty()
        {
            // The message goes first: the stream states are cut to a share
            // of the line (the grid's title and border say more).
            let joined: String = spans.iter().map(|s| s.content.as_ref()).collect();
            let tone = self.streams.first().map_or(Tone::Normal, |c| c.tone);
            let share = (width / STREAMS_SHARE).max(6);
            spans = vec![Span::styled(fit(&joined, share, Cut::End), style(tone))];
        }
        let streams_width: u16 = spans
            .iter()
            .map(|s| u16::try_from(s.width()).unwrap_or(u16::MAX))
            .sum();
        if !spans.is_empty() {
            spans.push(Span::styled(" │ ", style(Tone::Dim)));
        }
        let room = width.saturating_sub(streams_width + if separator > 0 { 3 } else { 0 });
        if display_width(&message.text) > room {
            // Cut, never silently: the rest is a key away.
            let keep = room.saturating_sub(display_width(IN_FULL));
            let kept = fit(&message.text, keep + 1, Cut::End);
            spans.push(Span::styled(
                kept.trim_end_matches('…').to_owned(),
                style(message.tone),
            ));
            spans.push(Span::styled(IN_FULL, style(Tone::Dim)));
        } else {
            spans.push(span(message));
        }
        render_line(spans, area, buf);
    }
}

/// What a cut message ends with: the key that shows it whole.
const IN_FULL: &str = "…[m]";

/// The stream states get at most this share of a line a message needs.
const STREAMS_SHARE: u16 = 4;

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
