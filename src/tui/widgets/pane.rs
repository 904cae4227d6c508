//! A scrolling text pane (help, dialogs, node detail): bordered, its title on
//! top and the scroll position (`12–30/58 ↑↓`) on the bottom border.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::render_line;
use super::theme::{span, style};
use crate::tui::fit::{clamp_scroll, position};
use crate::tui::view_model::Tone;
use crate::tui::view_model::pane::{Overlay, TextPane, overlay_area};

/// Draws the pane filling `area`.
pub fn render(pane: &TextPane, area: Rect, buf: &mut Buffer) {
    let inner_height = usize::from(area.height.saturating_sub(2));
    let total = pane.lines.len();
    let scroll = clamp_scroll(pane.scroll, inner_height, total);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(pane.title.as_str(), style(Tone::Accent)));
    if let Some(marker) = position(scroll, inner_height, total) {
        block = block.title_bottom(Line::from(format!(" {marker} ")).right_aligned());
    }
    let inner = block.inner(area);
    block.render(area, buf);
    for (line, y) in pane
        .lines
        .iter()
        .skip(scroll)
        .zip(inner.y..inner.y + inner.height)
    {
        render_line(
            line.iter().map(span).collect(),
            Rect {
                y,
                height: 1,
                ..inner
            },
            buf,
        );
    }
}

/// Draws the pane as an overlay over `body`, cleared underneath.
pub fn render_overlay(kind: Overlay, pane: &TextPane, body: Rect, buf: &mut Buffer) {
    let area = overlay_area(kind, body, pane.lines.len());
    Clear.render(area, buf);
    render(pane, area, buf);
}
