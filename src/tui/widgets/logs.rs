//! The logs overlay: a pod's log over the body, one line per row (cut at the
//! right edge, never wrapped, so scrolling stays line by line), its title and
//! where the view is in the log.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

use super::theme::{span, style};
use crate::tui::logs::LogsVm;
use crate::tui::view_model::Tone;

impl Widget for &LogsVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .title(Span::styled(
                format!(" log {} ", self.title),
                style(Tone::Accent),
            ))
            .title_bottom(Line::from(Span::styled(
                format!(" {} · Esc closes ", self.position),
                style(Tone::Dim),
            )));
        let lines: Vec<Line<'_>> = self.lines.iter().map(|c| Line::from(span(c))).collect();
        let paragraph = Paragraph::new(lines).block(block);
        if self.wrap {
            paragraph.wrap(Wrap { trim: false }).render(area, buf);
        } else {
            paragraph.render(area, buf);
        }
    }
}
