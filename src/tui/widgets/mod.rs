//! Widgets: draw the [`ViewModel`] and nothing else (no I/O, no clock, no
//! mutation). The layout comes from [`crate::tui::columns::areas`], which the
//! scroll logic shares.

mod grid;
mod header;
mod history;
mod logs;
pub mod pane;
mod picker;
mod status;
pub mod theme;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Widget, Wrap};

use super::columns::areas;
use super::view_model::pane::Overlay;
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
            pane::render_overlay(Overlay::Dialog, dialog, areas.body, buf);
        }
        if let Some(help) = &self.help {
            pane::render_overlay(Overlay::Help, help, areas.body, buf);
        }
    }
}

/// Draws one line of spans; a line wider than `area` ends with `…` where it
/// is cut, so a cut is always visible.
pub fn render_line(spans: Vec<ratatui::text::Span<'_>>, area: Rect, buf: &mut Buffer) {
    let line = Line::from(spans);
    let width = line.width();
    line.render(area, buf);
    if width > usize::from(area.width) && area.width > 0 {
        buf[(area.x + area.width - 1, area.y)].set_symbol("…");
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
            .wrap(Wrap { trim: true })
            .render(area, buf),
        Body::Picker(picker) => picker.render(area, buf),
        Body::Grid(grid) => grid.render(area, buf),
        Body::Detail(grid, detail) => match grid {
            Some(grid) => {
                let [left, right] = super::columns::detail_split(area);
                grid.render(left, buf);
                pane::render(detail, right, buf);
            }
            None => pane::render(detail, area, buf),
        },
        Body::History(history) => history.render(area, buf),
    }
}
