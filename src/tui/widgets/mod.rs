//! Widgets: draw the [`ViewModel`] and nothing else (no I/O, no clock, no
//! mutation). The layout comes from [`crate::tui::columns::areas`], which the
//! scroll logic shares.

mod detail;
mod grid;
mod header;
mod help;
mod history;
mod logs;
mod picker;
mod status;
pub mod theme;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Widget};

use super::columns::areas;
use super::view_model::{Body, ViewModel};
use theme::span;

impl Widget for &ViewModel {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let areas = areas(area);
        header::render(&self.title, self.header.as_ref(), areas.header, buf);
        render_body(&self.body, areas.body, buf);
        self.status.render(areas.status, buf);
        status::render_hints(&self.hints, areas.footer, buf);
        if let Some(logs) = &self.logs {
            logs.render(areas.body, buf);
        }
        if let Some(dialog) = &self.dialog {
            dialog.render(areas.body, buf);
        }
        if let Some(help) = &self.help {
            help::render(help, areas.body, buf);
        }
        if let Some((title, lines)) = &self.confirm {
            help::render_confirm(title, lines, areas.body, buf);
        }
    }
}

fn render_body(body: &Body, area: Rect, buf: &mut Buffer) {
    match body {
        Body::Loading(lines) => {
            let lines: Vec<Line<'_>> = lines.iter().map(|c| Line::from(span(c))).collect();
            Paragraph::new(lines)
                .block(
                    Block::default()
                        .borders(Borders::TOP)
                        .title(" loading: the grid is shown once every initial list is in "),
                )
                .render(area, buf);
        }
        Body::Empty(cell) => Paragraph::new(Line::from(span(cell)))
            .block(Block::default().borders(Borders::TOP))
            .render(area, buf),
        Body::Picker(picker) => picker.render(area, buf),
        Body::Grid(grid) => grid.render(area, buf),
        Body::Detail(grid, detail) => match grid {
            Some(grid) => {
                let [left, right] = Layout::horizontal([Constraint::Percentage(50); 2]).areas(area);
                grid.render(left, buf);
                detail.render(right, buf);
            }
            None => detail.render(area, buf),
        },
        Body::History(history) => history.render(area, buf),
    }
}
