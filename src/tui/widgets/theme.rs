//! Tones to terminal styles: the one place colours are chosen.
//!
//! Only the six basic ANSI hues and the terminal's own foreground are used:
//! every terminal theme (dark, light, Solarized) re-maps those to colours
//! readable on its own background. Grey, black, white and the "bright"
//! variants are not: Solarized maps bright black (`DarkGray`) to its dark
//! background and white to its light one, so text drawn in them vanishes.
//! `NO_COLOR` is honoured by crossterm, which then writes no colour sequences
//! (bold and reverse, which mark headings and the selection, stay).

use ratatui::style::{Color, Modifier, Style};

use crate::tui::view_model::{Cell, Tone};
use ratatui::text::Span;

/// Colours no content may be drawn in: each vanishes (or nearly) on a common
/// dark, light or Solarized theme. Checked by the theme tests.
pub const UNREADABLE: &[Color] = &[
    Color::Black,
    Color::DarkGray,
    Color::Gray,
    Color::White,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightCyan,
];

/// The style of a tone. Updated and old revisions differ in colour (green vs
/// magenta) and in text (`✓` vs `old`), so they stay apart without colour too.
/// Secondary text (`Dim`) keeps the terminal's own foreground: a dimmed or grey
/// colour is exactly what disappears on some themes.
pub fn style(tone: Tone) -> Style {
    match tone {
        Tone::Normal | Tone::Dim => Style::new(),
        Tone::Good | Tone::Updated => Style::new().fg(Color::Green),
        Tone::Old => Style::new().fg(Color::Magenta),
        Tone::Warn => Style::new().fg(Color::Yellow),
        Tone::Bad => Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        Tone::Accent => Style::new().fg(Color::Cyan),
    }
}

/// The style of column headings: the terminal's foreground, bold.
pub fn heading_style() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// The style of the selected row.
pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

/// A cell as a styled span.
pub fn span(cell: &Cell) -> Span<'_> {
    Span::styled(cell.text.as_str(), style(cell.tone))
}
