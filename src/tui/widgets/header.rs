//! The header: title line, then by priority the rollout state (wrapped, never
//! cut while it fits in three lines), what the user's rights keep out of the
//! view (one line, when any), the DaemonSet summary, and the counts with the
//! progress gauge.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Widget};

use super::render_line;
use super::theme::{span, style};
use crate::tui::fit::{Cut, display_width, fit, wrap};
use crate::tui::view_model::{Cell, HeaderVm, Tone};

/// Lines below the title.
const BODY_LINES: usize = 3;

/// The rollout state as drawn: `rollout: …`, wrapped to `width`; at most
/// [`BODY_LINES`] lines, the last cut with `…` only if even that is too few.
pub fn state_lines(header: &HeaderVm, width: u16) -> Vec<String> {
    // The limitations line takes one of the body lines when present.
    let most = BODY_LINES - usize::from(!header.limits.is_empty());
    let mut lines = wrap(&format!("rollout: {}", header.state.text), width);
    if lines.len() > most {
        let rest = lines.split_off(most - 1).join(" ");
        lines.push(fit(&rest, width, Cut::End));
    }
    lines
}

/// Draws the title line and, when a DaemonSet is shown, its summary.
pub fn render(title: &[Cell], header: Option<&HeaderVm>, area: Rect, buf: &mut Buffer) {
    let rows: [Rect; 4] = Layout::vertical([Constraint::Length(1); 4]).areas(area);
    render_line(title.iter().map(span).collect(), rows[0], buf);
    let Some(header) = header else {
        return;
    };
    let state = state_lines(header, area.width);
    let limits = &header.limits;
    let room = BODY_LINES.saturating_sub(state.len() + usize::from(!limits.is_empty()));
    let mut at = rows[1..].iter();
    if room >= 1
        && let Some(row) = at.next()
    {
        let separator = || Span::styled(" · ", style(Tone::Dim));
        let mut spans = vec![
            span(&header.name),
            separator(),
            span(&header.strategy),
            separator(),
            span(&header.revision),
        ];
        // Who owns the spec, when a tool does: GitOps may revert a pause or
        // rollback. It matters more than the revision's hash, which goes first.
        if let Some(owner) = &header.owner {
            spans.push(separator());
            spans.push(span(owner));
            let width: usize = spans.iter().map(Span::width).sum();
            if width > usize::from(row.width)
                && let Some((short, _)) = header.revision.text.split_once(" (")
            {
                spans[4] = Span::styled(short.to_owned(), style(header.revision.tone));
            }
        }
        render_line(spans, *row, buf);
    }
    for (text, row) in state.iter().zip(at.by_ref()) {
        Line::from(Span::styled(text.as_str(), style(header.state.tone))).render(*row, buf);
    }
    if let Some(first) = limits.first()
        && let Some(row) = at.next()
    {
        let joined: Vec<&str> = limits.iter().map(|c| c.text.as_str()).collect();
        let text = fit(&joined.join(" · "), row.width, Cut::End);
        Line::from(Span::styled(text, style(first.tone))).render(*row, buf);
    }
    if room >= 2
        && let Some(row) = at.next()
    {
        render_counts(header, *row, buf);
    }
}

/// Counts on the left, the progress gauge in what is left of the line.
fn render_counts(header: &HeaderVm, area: Rect, buf: &mut Buffer) {
    let mut spans = Vec::new();
    for (label, value, tone) in &header.counts {
        spans.push(Span::styled(format!("{label} "), style(Tone::Dim)));
        spans.push(Span::styled(value.as_str(), style(*tone)));
        spans.push(Span::raw("  "));
    }
    let counts = Line::from(spans);
    let used = u16::try_from(counts.width()).unwrap_or(u16::MAX);
    render_line(counts.spans, area, buf);
    let label = display_width(&header.progress_label);
    let gauge_width = area.width.saturating_sub(used);
    if gauge_width >= label + 6 {
        let gauge = Rect {
            x: area.x + used,
            width: gauge_width,
            ..area
        };
        LineGauge::default()
            .ratio(header.progress)
            .label(header.progress_label.as_str())
            .filled_style(Style::new().fg(Color::Green))
            .unfilled_style(Style::new())
            .render(gauge, buf);
    }
}
