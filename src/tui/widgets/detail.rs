//! The node detail pane: a scrolled list of lines.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use super::theme::{span, style};
use crate::tui::view_model::{DetailVm, Tone};

impl Widget for &DetailVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default().borders(Borders::ALL).title(Span::styled(
            format!(" node {} ", self.title),
            style(Tone::Accent),
        ));
        let lines: Vec<Line<'_>> = self
            .lines
            .iter()
            .skip(self.scroll)
            .map(|cells| Line::from(cells.iter().map(span).collect::<Vec<_>>()))
            .collect();
        Paragraph::new(lines).block(block).render(area, buf);
    }
}
