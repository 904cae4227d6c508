//! Draws the matrix's and the DaemonSet list's view models. Render from
//! the view model only: no state, no clock.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::picker::PickerVm;
use super::view::MatrixVm;
use crate::tui::view_model::Cell;
use crate::tui::widgets::theme::{heading_style, selected, span};

fn line(cells: &[Cell]) -> Line<'_> {
    Line::from(cells.iter().map(span).collect::<Vec<_>>())
}

/// Draws one line at row `y` of `area`, if it is inside.
fn put(buf: &mut Buffer, area: Rect, y: u16, content: &Line<'_>) {
    if y < area.height {
        buf.set_line(area.x, area.y + y, content, area.width);
    }
}

impl Widget for &MatrixVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        put(buf, area, 0, &line(&self.title));
        put(buf, area, 1, &line(&self.totals));
        put(buf, area, 2, &line(&self.context));
        let headings: Vec<Span<'_>> = self
            .headings
            .iter()
            .flat_map(|(title, width)| {
                [
                    Span::styled(pad(title, *width), heading_style()),
                    Span::raw(" "),
                ]
            })
            .collect();
        put(buf, area, 3, &Line::from(headings));
        let detail = detail_lines(&self.detail.text, area.width);
        let below = 1 + u16::try_from(detail.len()).unwrap_or(1);
        for (at, row) in self.rows.iter().enumerate() {
            let y = 4 + u16::try_from(at).unwrap_or(u16::MAX);
            if y + below >= area.height {
                break;
            }
            let spans: Vec<Span<'_>> = row
                .iter()
                .zip(&self.headings)
                .flat_map(|(cell, (_, width))| {
                    [
                        Span::styled(pad(&cell.text, *width), span(cell).style),
                        Span::raw(" "),
                    ]
                })
                .collect();
            let mut content = Line::from(spans);
            if self.selected == Some(at) {
                content = content.patch_style(selected());
            }
            put(buf, area, y, &content);
        }
        let footer_y = area.height.saturating_sub(1);
        let style = span(&self.detail).style;
        for (at, text) in detail.into_iter().enumerate() {
            let y = footer_y.saturating_sub(below - 1) + u16::try_from(at).unwrap_or(0);
            put(buf, area, y, &Line::from(Span::styled(text, style)));
        }
        put(
            buf,
            area,
            footer_y,
            &line(std::slice::from_ref(&self.footer)),
        );
    }
}

impl Widget for &PickerVm {
    fn render(self, area: Rect, buf: &mut Buffer) {
        put(buf, area, 0, &line(&self.title));
        put(buf, area, 1, &line(std::slice::from_ref(&self.progress)));
        put(
            buf,
            area,
            2,
            &Line::from(Span::styled(self.heading.as_str(), heading_style())),
        );
        for (at, entry) in self.rows.iter().enumerate() {
            let y = 3 + u16::try_from(at).unwrap_or(u16::MAX);
            if y + 1 >= area.height {
                break;
            }
            let mut content = line(std::slice::from_ref(entry));
            if self.selected == Some(at) {
                content = content.patch_style(selected());
            }
            put(buf, area, y, &content);
        }
        put(
            buf,
            area,
            area.height.saturating_sub(1),
            &line(std::slice::from_ref(&self.footer)),
        );
    }
}

/// The most lines the selected cluster's detail (or a fleet run's end)
/// takes above the footer: a stop names a cluster, a node and a reason,
/// which an 80-column line cuts.
const DETAIL_LINES: usize = 3;

/// The detail wrapped to `width`, at most [`DETAIL_LINES`] lines, the last
/// one cut with `…` when more was left.
fn detail_lines(text: &str, width: u16) -> Vec<String> {
    let mut lines = crate::tui::fit::wrap(text, width);
    if lines.len() > DETAIL_LINES {
        let rest = lines[DETAIL_LINES - 1..].join(" ");
        lines.truncate(DETAIL_LINES - 1);
        lines.push(crate::tui::fit::fit(
            &rest,
            width,
            crate::tui::fit::Cut::End,
        ));
    }
    lines
}

/// `text` padded with spaces to `width` cells (already fitted).
fn pad(text: &str, width: u16) -> String {
    let used = crate::tui::fit::display_width(text);
    let mut padded = text.to_owned();
    padded.extend(std::iter::repeat_n(
        ' ',
        usize::from(width.saturating_sub(used)),
    ));
    padded
}

#[cfg(test)]
mod tests {
    use super::detail_lines;

    #[test]
    fn a_long_detail_wraps_to_three_lines_and_says_when_it_was_cut() {
        let stop = "fleet run ended: stopped: rollcall-sim-2: node edge-01: 3 node(s) already on the new revision are failing (CrashLoopBackOff); every touched cluster is paused";
        let lines = detail_lines(stop, 40);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[2].ends_with('…'), "{lines:?}");
        assert!(
            lines
                .iter()
                .all(|l| crate::tui::fit::display_width(l) <= 40)
        );
        assert_eq!(detail_lines(stop, 200), [stop]);
        assert_eq!(detail_lines("", 80).len(), 1);
    }
}
