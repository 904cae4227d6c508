//! The revision history: the revision list above the template diff.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use super::theme::{heading_style, selected, span, style};
use crate::tui::fit::{Cut, fit};
use crate::tui::view_model::{HistoryVm, Tone};

/// Column widths: number, hash, age, nodes, change-cause, images.
const WIDTHS: [Constraint; 6] = [
    Constraint::Length(7),
    Constraint::Length(17),
    Constraint::Length(5),
    Constraint::Length(10),
    Constraint::Fill(1),
    Constraint::Fill(1),
];
const HEADINGS: [&str; 6] = ["REV", "HASH", "AGE", "NODES", "CHANGE-CAUSE", "IMAGES"];

impl Widget for &HistoryVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let list_height = u16::try_from(self.rows.len())
            .unwrap_or(u16::MAX)
            .saturating_add(3);
        let [list, diff] = Layout::vertical([
            Constraint::Max(list_height.min(area.height / 2)),
            Constraint::Fill(1),
        ])
        .areas(area);
        let block = Block::default()
            .borders(Borders::TOP | Borders::BOTTOM)
            .title(Span::styled(
                "revisions · Space marks the diff base",
                style(Tone::Accent),
            ));
        let inner = block.inner(list);
        block.render(list, buf);
        let lines = (inner.y..inner.y + inner.height).map(|y| Rect {
            y,
            height: 1,
            ..inner
        });
        // Scroll the revision list so the selected revision stays visible.
        let visible = usize::from(inner.height.saturating_sub(1)).max(1);
        let chosen = self.rows.iter().position(|r| r.selected).unwrap_or(0);
        let offset = chosen.saturating_sub(visible - 1);
        let heading = std::iter::once(None).chain(self.rows.iter().skip(offset).map(Some));
        for (row, line) in heading.zip(lines) {
            let areas = Layout::horizontal(WIDTHS).spacing(1).split(line);
            match row {
                None => {
                    for (text, at) in HEADINGS.iter().zip(areas.iter()) {
                        Span::styled(fit(text, at.width, Cut::End), heading_style())
                            .render(*at, buf);
                    }
                }
                Some(row) => {
                    for (cell, at) in row.cells.iter().zip(areas.iter()) {
                        Span::styled(fit(&cell.text, at.width, Cut::End), style(cell.tone))
                            .render(*at, buf);
                    }
                    if row.selected {
                        buf.set_style(line, selected());
                    }
                }
            }
        }
        let lines: Vec<Line<'_>> = self
            .diff
            .iter()
            .skip(self.diff_scroll)
            .map(|c| Line::from(span(c)))
            .collect();
        Paragraph::new(lines)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(Span::styled(self.diff_title.as_str(), style(Tone::Accent))),
            )
            .render(diff, buf);
    }
}
