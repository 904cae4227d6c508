//! The help overlay: every key binding, grouped by where it applies, drawn
//! from the keymap (the same table that dispatches keys).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::theme::{span, style};
use crate::tui::view_model::Cell;
use crate::tui::view_model::Tone;

/// Draws the help sections in a centred box over `area`.
pub fn render(
    sections: &[(&'static str, Vec<(String, &'static str)>)],
    area: Rect,
    buf: &mut Buffer,
) {
    let mut lines = Vec::new();
    for (title, bindings) in sections {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(*title, style(Tone::Accent))));
        for (keys, help) in bindings {
            lines.push(Line::from(vec![
                Span::styled(format!("  {keys:<16}"), style(Tone::Warn)),
                Span::raw(*help),
            ]));
        }
    }
    let height = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let [vertical] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::horizontal([Constraint::Length(76.min(area.width))])
        .flex(Flex::Center)
        .areas(vertical);
    Clear.render(popup, buf);
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(" keys · ? or Esc closes "),
        )
        .render(popup, buf);
}

/// Draws a confirmation dialog in a centred box over `area`.
pub fn render_confirm(title: &Cell, lines: &[Cell], area: Rect, buf: &mut Buffer) {
    let mut text: Vec<Line<'_>> = lines.iter().map(|l| Line::from(span(l))).collect();
    text.push(Line::default());
    text.push(Line::from(vec![
        Span::styled("y", style(Tone::Accent)),
        Span::raw(" confirm   "),
        Span::styled("n", style(Tone::Accent)),
        Span::raw(" cancel"),
    ]));
    let height = u16::try_from(text.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let [vertical] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::horizontal([Constraint::Length(70.min(area.width))])
        .flex(Flex::Center)
        .areas(vertical);
    Clear.render(popup, buf);
    Paragraph::new(text)
        .block(Block::default().borders(Borders::ALL).title(span(title)))
        .render(popup, buf);
}
