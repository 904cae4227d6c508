//! The header: title line, DaemonSet summary, counts and progress gauge.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Widget};

use super::theme::{span, style};
use crate::tui::view_model::{Cell, HeaderVm, Tone};

/// Draws the title line and, when a DaemonSet is shown, its summary.
pub fn render(title: &[Cell], header: Option<&HeaderVm>, area: Rect, buf: &mut Buffer) {
    let [title_area, summary, counts, gauge] =
        Layout::vertical([Constraint::Length(1); 4]).areas(area);
    Line::from(title.iter().map(span).collect::<Vec<_>>()).render(title_area, buf);
    let Some(header) = header else {
        return;
    };
    let separator = || Span::styled(" · ", style(Tone::Dim));
    Line::from(vec![
        span(&header.name),
        separator(),
        span(&header.strategy),
        separator(),
        span(&header.revision),
        separator(),
        span(&header.state),
    ])
    .render(summary, buf);
    let mut spans = Vec::new();
    for (label, value, tone) in &header.counts {
        spans.push(Span::styled(format!("{label} "), style(Tone::Dim)));
        spans.push(Span::styled(value.as_str(), style(*tone)));
        spans.push(Span::raw("  "));
    }
    Line::from(spans).render(counts, buf);
    // Who owns the spec shares the gauge's line, right-aligned.
    let gauge = match &header.owner {
        Some(owner) => {
            let width = u16::try_from(owner.text.chars().count() + 1).unwrap_or(u16::MAX);
            let [gauge, right] =
                Layout::horizontal([Constraint::Min(10), Constraint::Length(width)]).areas(gauge);
            Line::from(span(owner)).right_aligned().render(right, buf);
            gauge
        }
        None => gauge,
    };
    LineGauge::default()
        .ratio(header.progress)
        .label(header.progress_label.as_str())
        .filled_style(Style::new().fg(Color::Green))
        .unfilled_style(Style::new().fg(Color::DarkGray))
        .render(gauge, buf);
}
