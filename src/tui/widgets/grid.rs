//! The node grid: column headings, group headings and the visible rows,
//! each cell clipped to its column.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

use super::theme::{heading_style, selected, span, style};
use crate::tui::columns::Column;
use crate::tui::fit::{Cut, fit};
use crate::tui::view_model::{GridLine, GridVm, Tone};

/// Column rectangles for one line of the grid.
fn column_areas(columns: &[Column], line: Rect) -> Vec<Rect> {
    let constraints = columns.iter().map(|c| Constraint::Length(c.width));
    Layout::horizontal(constraints)
        .spacing(1)
        .split(line)
        .to_vec()
}

impl Widget for &GridVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::TOP | Borders::BOTTOM)
            .title(Span::styled(self.title.as_str(), style(Tone::Accent)));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        let heading = Rect { height: 1, ..inner };
        let areas = column_areas(&self.columns, heading);
        for (column, at) in self.columns.iter().zip(&areas) {
            Span::styled(fit(column.title, at.width, Cut::End), heading_style()).render(*at, buf);
        }
        if let Some(empty) = &self.empty {
            let at = Rect {
                y: inner.y + 1,
                height: 1,
                ..inner
            };
            span(empty).render(at, buf);
            return;
        }
        let rows = inner.y + 1..inner.y + inner.height;
        for (line, y) in self.lines.iter().zip(rows) {
            let line_area = Rect {
                y,
                height: 1,
                ..inner
            };
            match line {
                GridLine::Heading(cell) => Line::from(span(cell)).render(line_area, buf),
                GridLine::Row {
                    cells,
                    selected: is_selected,
                } => {
                    for (cell, at) in cells.iter().zip(&areas) {
                        span(cell).render(Rect { y, ..*at }, buf);
                    }
                    if *is_selected {
                        buf.set_style(line_area, selected());
                    }
                }
            }
        }
    }
}
