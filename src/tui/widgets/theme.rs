//! Tones to terminal styles: the one place colours are chosen.

use ratatui::style::{Color, Modifier, Style};

use crate::tui::view_model::{Cell, Tone};
use ratatui::text::Span;

/// The style of a tone. Updated and old revisions differ in colour (green vs
/// magenta) and in text (`✓` vs `old`), so they stay apart without colour too.
pub fn style(tone: Tone) -> Style {
    match tone {
        Tone::Normal => Style::new(),
        Tone::Dim => Style::new().fg(Color::DarkGray),
        Tone::Good => Style::new().fg(Color::Green),
        Tone::Updated => Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
        Tone::Old => Style::new().fg(Color::Magenta),
        Tone::Warn => Style::new().fg(Color::Yellow),
        Tone::Bad => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        Tone::Accent => Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
    }
}

/// The style of the selected row.
pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

/// A cell as a styled span.
pub fn span(cell: &Cell) -> Span<'_> {
    Span::styled(cell.text.as_str(), style(cell.tone))
}
