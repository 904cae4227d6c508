//! The DaemonSet list.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Widget};

use super::theme::{heading_style, selected, span, style};
use crate::tui::view_model::picker::PICKER_COLUMNS;
use crate::tui::view_model::{PickerVm, Tone};

impl Widget for &PickerVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::TOP | Borders::BOTTOM)
            .title(Span::styled(self.title.as_str(), style(Tone::Accent)));
        let inner = block.inner(area);
        block.render(area, buf);
        let constraints = PICKER_COLUMNS.iter().map(|(_, w)| Constraint::Length(*w));
        let lines = (inner.y..inner.y + inner.height).map(|y| Rect {
            y,
            height: 1,
            ..inner
        });
        let mut lines = lines.peekable();
        if let Some(heading) = lines.next() {
            let areas = Layout::horizontal(constraints.clone())
                .spacing(1)
                .split(heading);
            for ((title, _), at) in PICKER_COLUMNS.iter().zip(areas.iter()) {
                Span::styled(*title, heading_style()).render(*at, buf);
            }
        }
        for ((cells, is_selected), line) in self.rows.iter().zip(lines) {
            let areas = Layout::horizontal(constraints.clone())
                .spacing(1)
                .split(line);
            for (cell, at) in cells.iter().zip(areas.iter()) {
                span(cell).render(*at, buf);
            }
            if *is_selected {
                buf.set_style(line, selected());
            }
        }
    }
}
