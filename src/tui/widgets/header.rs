//! The header: title line, then by priority the rollout state (wrapped, never
//! cut while it fits), what the user's rights keep out of the view (wrapped,
//! when any), the DaemonSet summary, the counts with the progress gauge, and
//! a kubelet version skew (on its own lines where there is room, else short
//! on the summary line).
//! Its height comes from [`crate::tui::columns::header_height`].

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Widget};

use super::render_line;
use super::theme::{span, style};
use crate::tui::fit::{Cut, display_width, fit, wrap};
use crate::tui::view_model::{Cell, HeaderVm, Tone};

/// The header's lines below the title, by priority: the rollout state
/// (wrapped, cut with `…` only past what fits), what the user's rights keep
/// out of the view (wrapped, when any), the DaemonSet summary, the counts.
/// Drawn top to bottom as summary, state, limitations, counts, then the
/// kubelet skew in what is left (else short on the summary line).
struct Plan {
    state: Vec<String>,
    limits: Vec<String>,
    summary: bool,
    counts: bool,
    kubelets: Vec<String>,
}

/// Wraps `text` to `width` in at most `most` lines, the last cut with `…`
/// and the key that shows it whole (`…[m]`, as the status line says it).
fn wrap_within(text: &str, width: u16, most: usize) -> Vec<String> {
    const IN_FULL: &str = "[m]";
    if most == 0 {
        return Vec::new();
    }
    let mut lines = wrap(text, width);
    if lines.len() > most {
        let rest = lines.split_off(most - 1).join(" ");
        let room = width.saturating_sub(display_width(IN_FULL));
        lines.push(format!("{}{IN_FULL}", fit(&rest, room, Cut::End)));
    }
    lines
}

fn plan(header: &HeaderVm, width: u16, body_lines: usize) -> Plan {
    // The summary (with the spec's owner) and the counts keep their lines:
    // a long state (a pause reason of several lines) is cut to what is left,
    // at least one line; `m` shows it whole.
    let joined: Vec<&str> = header.limits.iter().map(|c| c.text.as_str()).collect();
    let joined = joined.join(" · ");
    let limit_lines = if joined.is_empty() {
        0
    } else {
        wrap(&joined, width).len().min(2)
    };
    let reserved = limit_lines + 2;
    let state = wrap_within(
        &format!("rollout: {}", header.state.text),
        width,
        body_lines.saturating_sub(reserved).max(1),
    );
    let mut room = body_lines.saturating_sub(state.len());
    let limits = if header.limits.is_empty() {
        Vec::new()
    } else {
        // The limitations wrap, but leave the counts a line where they can.
        let most = if room >= 3 { room - 1 } else { room.min(2) };
        wrap_within(&joined, width, most)
    };
    room -= limits.len();
    let summary = room >= 1;
    let counts = room >= 2;
    room = room.saturating_sub(2);
    let kubelets = header
        .kubelets
        .as_ref()
        .map(|notice| wrap_within(&notice.full.text, width, room))
        .unwrap_or_default();
    Plan {
        state,
        limits,
        summary,
        counts,
        kubelets,
    }
}

/// Draws the title line and, when a DaemonSet is shown, its summary.
pub fn render(title: &[Cell], header: Option<&HeaderVm>, area: Rect, buf: &mut Buffer) {
    let rows = Layout::vertical(vec![Constraint::Length(1); usize::from(area.height)]).split(area);
    let Some((first, body)) = rows.split_first() else {
        return;
    };
    render_line(title.iter().map(span).collect(), *first, buf);
    let Some(header) = header else {
        return;
    };
    let plan = plan(header, area.width, body.len());
    let mut at = body.iter();
    if plan.summary
        && let Some(row) = at.next()
    {
        let short_kubelets = header
            .kubelets
            .as_ref()
            .filter(|_| plan.kubelets.is_empty())
            .map(|notice| &notice.short);
        render_summary(header, short_kubelets, *row, buf);
    }
    for (text, row) in plan.state.iter().zip(at.by_ref()) {
        Line::from(Span::styled(text.as_str(), style(header.state.tone))).render(*row, buf);
    }
    let tone = header.limits.first().map_or(Tone::Warn, |c| c.tone);
    for (text, row) in plan.limits.iter().zip(at.by_ref()) {
        Line::from(Span::styled(text.as_str(), style(tone))).render(*row, buf);
    }
    if plan.counts
        && let Some(row) = at.next()
    {
        render_counts(header, *row, buf);
    }
    for (text, row) in plan.kubelets.iter().zip(at.by_ref()) {
        Line::from(Span::styled(text.as_str(), style(Tone::Warn))).render(*row, buf);
    }
}

/// Name · strategy · revision, and the spec's owner when a tool owns it,
/// and the kubelet skew in short when it has no line of its own (after the
/// owner; the revision's hash goes first to make room, and the skew is what
/// is cut last of all).
fn render_summary(header: &HeaderVm, kubelets: Option<&Cell>, row: Rect, buf: &mut Buffer) {
    let separator = || Span::styled(" · ", style(Tone::Dim));
    let mut spans = vec![
        span(&header.name),
        separator(),
        span(&header.strategy),
        separator(),
        span(&header.revision),
    ];
    // Who owns the spec, when a tool does: GitOps may revert a pause or
    // rollback. It matters more than the revision's hash, which goes first,
    // and than the strategy: when the line is still too long, the owner
    // comes right after the name and the strategy is what is cut.
    let fits =
        |spans: &[Span<'_>]| spans.iter().map(Span::width).sum::<usize>() <= usize::from(row.width);
    if let Some(owner) = &header.owner {
        spans.push(separator());
        spans.push(span(owner));
        if !fits(&spans)
            && let Some((short, _)) = header.revision.text.split_once(" (")
        {
            spans[4] = Span::styled(short.to_owned(), style(header.revision.tone));
        }
        if !fits(&spans) {
            // [name, ·, strategy, ·, revision, ·, owner] becomes
            // [name, ·, owner, ·, revision, ·, strategy].
            spans.swap(2, 6);
        }
    }
    if let Some(kubelets) = kubelets {
        spans.push(separator());
        spans.push(span(kubelets));
        if !fits(&spans)
            && let Some((short, _)) = header.revision.text.split_once(" (")
        {
            spans[4] = Span::styled(short.to_owned(), style(header.revision.tone));
        }
    }
    render_line(spans, row, buf);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn header(state: &str, limits: &[&str]) -> HeaderVm {
        let cell = |text: &str| Cell::new(text, Tone::Normal);
        HeaderVm {
            name: cell("kube-system/agent"),
            strategy: cell("OnDelete"),
            revision: cell("revision 2 (h2)"),
            counts: Vec::new(),
            progress: 0.0,
            progress_label: "0/3 updated".into(),
            state: cell(state),
            owner: None,
            limits: limits.iter().map(|t| Cell::new(t, Tone::Warn)).collect(),
            kubelets: None,
        }
    }

    /// What each plan keeps: (state lines, limit lines, summary, counts).
    fn kept(plan: &Plan) -> (usize, usize, bool, bool) {
        (
            plan.state.len(),
            plan.limits.len(),
            plan.summary,
            plan.counts,
        )
    }

    #[test]
    fn lines_go_by_priority_state_then_limits_then_summary_then_counts() {
        let long_limit = "view limited: cannot list nodes (forbidden) — eligibility unknown, nodes without a pod not shown";
        let cases = [
            // 80×24: three body lines.
            ("waiting", &[][..], 80, 3, (1, 0, true, true)),
            ("waiting", &[long_limit][..], 80, 3, (1, 2, false, false)),
            // A long state (a pause reason) never pushes the counts out.
            (&"x ".repeat(60), &[][..], 80, 3, (1, 0, true, true)),
            // 40 rows and more: five body lines keep summary and counts.
            ("waiting", &[long_limit][..], 80, 5, (1, 2, true, true)),
            (
                &"x ".repeat(60),
                &[long_limit][..],
                80,
                5,
                (1, 2, true, true),
            ),
            (&"x ".repeat(60), &[][..], 80, 5, (2, 0, true, true)),
            (
                "waiting",
                &[long_limit, long_limit][..],
                200,
                5,
                (1, 1, true, true),
            ),
        ];
        for (state, limits, width, body, expected) in cases {
            let plan = plan(&header(state, limits), width, body);
            assert_eq!(kept(&plan), expected, "{state:?} {limits:?} {width}×{body}");
            assert!(
                plan.state
                    .iter()
                    .chain(&plan.limits)
                    .all(|l| display_width(l) <= width),
                "every line fits {width}"
            );
        }
    }

    fn with_skew(mut header: HeaderVm) -> HeaderVm {
        header.kubelets = Some(crate::tui::view_model::KubeletNotice {
            full: Cell::new(
                "kubelets on 2 minor versions: v1.32 on 7 nodes, v1.31 on 5 nodes (general-01, general-02)",
                Tone::Warn,
            ),
            short: Cell::new("kubelets v1.31–v1.32", Tone::Warn),
        });
        header
    }

    fn drawn(header: &HeaderVm, width: u16, height: u16) -> Vec<String> {
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        render(&[], Some(header), area, &mut buf);
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    /// Summary and counts keep their lines: at 80×24 the skew is said short on
    /// the summary line (the revision's hash makes room), on a tall terminal
    /// whole on a line of its own, with the nodes behind.
    #[test]
    fn a_kubelet_skew_is_short_on_the_summary_line_or_whole_below_the_counts() {
        let header = with_skew(header("waiting", &[]));
        let small = drawn(&header, 66, 4);
        assert_eq!(
            small[1],
            "kube-system/agent · OnDelete · revision 2 · kubelets v1.31–v1.32"
        );
        assert!(
            small.iter().all(|l| !l.contains("general-01")),
            "{small:#?}"
        );
        let tall = drawn(&header, 200, 6);
        assert_eq!(tall[1], "kube-system/agent · OnDelete · revision 2 (h2)");
        assert!(
            tall[4].starts_with("kubelets on 2 minor versions: v1.32 on 7 nodes"),
            "{tall:#?}"
        );
    }
}
