//! The grid's columns and the terminal widths at which they appear, as const
//! data; and the screen layout shared by the renderer and the scroll logic.

use ratatui::layout::{Constraint, Layout, Rect};

use super::fit::{Cut, display_width};

/// A grid column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnId {
    /// Marks: `◆` canary, `!` a problem or a node that blocks the rollout.
    Mark,
    /// Node name.
    Node,
    /// Eligibility in one word.
    Eligible,
    /// Daemon pod name.
    Pod,
    /// Revision number, updated or old.
    Revision,
    /// Phase / readiness / waiting reason.
    Status,
    /// Container restarts.
    Restarts,
    /// Pod age.
    Age,
    /// Node Ready/NotReady and cordoned.
    NodeState,
    /// Node taints, short.
    Taints,
    /// Pool and zone labels.
    PoolZone,
    /// Why: the eligibility reason, or the latest event when there is no event column.
    Why,
    /// Latest event of the node or its pod.
    Event,
}

/// How a column is laid out. Widths are decided per frame by [`layout`]
/// from what the visible rows hold; `width` is the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// Which column.
    pub id: ColumnId,
    /// Heading.
    pub title: &'static str,
    /// Narrowest useful width.
    pub min: u16,
    /// Widest it ever gets.
    pub max: u16,
    /// Shown while the terminal allows; lower ranks are kept longest (0: always).
    pub keep: u8,
    /// Takes spare width in this order (lower first).
    pub grow: u8,
    /// How a long value is cut.
    pub cut: Cut,
    /// The width given (set by [`layout`]).
    pub width: u16,
}

const fn column(
    id: ColumnId,
    title: &'static str,
    min: u16,
    max: u16,
    keep: u8,
    grow: u8,
) -> Column {
    Column {
        id,
        title,
        min,
        max,
        keep,
        grow,
        cut: Cut::End,
        width: 0,
    }
}

/// All columns, in display order. `keep`: which go last on a narrow
/// terminal; `grow`: which get spare width first (WHY, then whole node names,
/// then TAINTS, before the rest).
#[rustfmt::skip]
pub const COLUMNS: &[Column] = &[
    column(ColumnId::Mark, "", 2, 2, 0, 0),
    Column { cut: Cut::Start, ..column(ColumnId::Node, "NODE", 16, 48, 0, 4) },
    column(ColumnId::Eligible, "ELIG", 4, 7, 0, 0),
    column(ColumnId::Pod, "POD", 10, 48, 7, 8),
    column(ColumnId::Revision, "REV", 6, 10, 0, 1),
    column(ColumnId::Status, "STATUS", 8, 32, 0, 2),
    column(ColumnId::Restarts, "RST", 3, 4, 3, 10),
    column(ColumnId::Age, "AGE", 3, 4, 2, 10),
    column(ColumnId::NodeState, "NODE STATE", 10, 16, 4, 6),
    column(ColumnId::Taints, "TAINTS", 12, 72, 5, 5),
    column(ColumnId::PoolZone, "POOL/ZONE", 10, 48, 6, 7),
    column(ColumnId::Why, "WHY", 12, u16::MAX, 0, 3),
    column(ColumnId::Event, "LATEST EVENT", 16, u16::MAX, 8, 9),
];

/// Columns of free text: what no other column wants goes to them.
fn is_text(id: ColumnId) -> bool {
    matches!(id, ColumnId::Why | ColumnId::Event)
}

/// How wide a text column counts when deciding which other columns fit:
/// a long reason must not push every other column off the screen.
const TEXT_SHARE: u16 = 50;

/// Columns at most this wide (RST, AGE, NODE STATE) count whole when
/// deciding which columns show; wider optional ones at most [`WIDE_SHARE`].
const SMALL: u16 = 16;

/// How wide a wide optional column (POD, TAINTS, POOL/ZONE) counts when
/// deciding which columns show; it grows toward its whole content after WHY.
const WIDE_SHARE: u16 = 24;

/// Lays the grid out in `width` cells (columns are one cell apart).
/// `wanted(id)` is the widest value the visible rows hold for a column.
///
/// Degrades by priority, not by truncation, and which columns show does not
/// depend on how long the free text is (a long WHY never pushes POD, TAINTS
/// or POOL/ZONE off; scrolling onto a long reason never makes columns come
/// and go):
/// 1. the columns that always show (`keep` 0) are taken, WHY counted at
///    [`TEXT_SHARE`] whatever it holds, the others at the width their
///    content wants; then, in `keep` order, every other column that still
///    fits with what it holds (wide ones counted at most [`WIDE_SHARE`],
///    LATEST EVENT at most [`TEXT_SHARE`]);
/// 2. then, in `keep` order, the rest that still fit at their minimum
///    (free text is not worth showing cut to a sliver);
/// 3. each starts at its minimum; the columns of step 1 get the width they
///    were counted at (free text: what it holds, up to [`TEXT_SHARE`]);
///    then spare width goes in `grow` order (WHY, node names, TAINTS, before
///    the rest) up to what the content wants; what is left widens the last
///    text column.
///
/// An optional column with nothing to show in the visible rows is left out.
///
/// A column narrower than its value cuts it with `…` (see [`super::fit::fit`]).
pub fn layout(width: u16, wanted: impl Fn(ColumnId) -> u16) -> Vec<Column> {
    let want = |c: &Column| wanted(c.id).max(display_width(c.title)).clamp(c.min, c.max);
    let text_share = |c: &Column| TEXT_SHARE.max(c.min);
    let counted = |c: &Column| {
        if is_text(c.id) {
            want(c).min(text_share(c))
        } else {
            want(c)
        }
    };
    // What a column takes when deciding which columns show: WHY (always
    // shown) its fixed share, so the choice does not follow its content; a
    // wide optional column (POD, TAINTS, POOL/ZONE) at most [`WIDE_SHARE`],
    // so one long taint does not push POOL/ZONE off.
    let deciding = |c: &Column| {
        if is_text(c.id) && c.keep == 0 {
            text_share(c)
        } else if c.keep > 0 && c.max > SMALL && !is_text(c.id) {
            want(c).min(WIDE_SHARE.max(c.min))
        } else {
            counted(c)
        }
    };
    let mut by_keep: Vec<&Column> = COLUMNS.iter().collect();
    by_keep.sort_by_key(|c| c.keep);
    let mut chosen: Vec<(ColumnId, bool)> = Vec::new();
    let mut used: u16 = 0;
    for whole in [true, false] {
        for c in &by_keep {
            // An optional column with nothing to show on screen is left out.
            if chosen.iter().any(|(id, _)| *id == c.id) || (c.keep > 0 && wanted(c.id) == 0) {
                continue;
            }
            if !whole && is_text(c.id) {
                continue;
            }
            let need = if whole { deciding(c) } else { c.min };
            let spacing = u16::from(!chosen.is_empty());
            if c.keep == 0 || used.saturating_add(spacing + need) <= width {
                used = used.saturating_add(spacing + need);
                chosen.push((c.id, whole));
            }
        }
    }
    let whole = |id: ColumnId| chosen.iter().any(|&(c, w)| c == id && w);
    let mut columns: Vec<Column> = COLUMNS
        .iter()
        .filter(|c| chosen.iter().any(|(id, _)| *id == c.id))
        .map(|c| Column { width: c.min, ..*c })
        .collect();
    let gaps = u16::try_from(columns.len().saturating_sub(1)).unwrap_or(u16::MAX);
    let mut spare = width.saturating_sub(columns.iter().map(|c| c.width).sum::<u16>() + gaps);
    let mut order: Vec<usize> = (0..columns.len()).collect();
    order.sort_by_key(|&i| columns[i].grow);
    // First the columns taken whole get the width they were counted at,
    // then every column grows toward its whole content, in `grow` order.
    for phase in [true, false] {
        for &i in &order {
            let target = if phase {
                if !whole(columns[i].id) {
                    continue;
                }
                if is_text(columns[i].id) {
                    counted(&columns[i])
                } else {
                    deciding(&columns[i])
                }
            } else {
                want(&columns[i])
            };
            let more = target.saturating_sub(columns[i].width).min(spare);
            columns[i].width += more;
            spare -= more;
        }
    }
    if let Some(text) = columns.iter_mut().rev().find(|c| is_text(c.id)) {
        text.width += spare;
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(columns: &[Column]) -> Vec<ColumnId> {
        columns.iter().map(|c| c.id).collect()
    }

    #[test]
    fn narrow_terminals_keep_the_columns_that_matter() {
        let wanted = |id: ColumnId| match id {
            ColumnId::Node => 26,
            ColumnId::Why => 70,
            ColumnId::Taints => 40,
            ColumnId::PoolZone => 30,
            ColumnId::Event => 60,
            ColumnId::Status => 16,
            _ => 4,
        };
        let at80 = layout(80, wanted);
        assert!(!ids(&at80).contains(&ColumnId::Taints));
        for id in [
            ColumnId::Node,
            ColumnId::Eligible,
            ColumnId::Revision,
            ColumnId::Status,
            ColumnId::Why,
        ] {
            assert!(ids(&at80).contains(&id), "{id:?} at 80");
        }
        assert!(!ids(&at80).contains(&ColumnId::Event));
        let at200 = layout(200, wanted);
        let width = |id| at200.iter().find(|c| c.id == id).map_or(0, |c| c.width);
        assert!(width(ColumnId::Why) >= TEXT_SHARE, "{at200:?}");
        // TAINTS gets its share; what WHY leaves would widen it.
        assert_eq!(
            width(ColumnId::Taints),
            WIDE_SHARE,
            "TAINTS at its share at 200: {at200:?}"
        );
        assert_eq!(
            width(ColumnId::Node),
            26,
            "node names whole at 200: {at200:?}"
        );
        // With room for everything, everything is whole.
        for c in &layout(300, wanted) {
            assert!(c.width >= wanted(c.id).clamp(c.min, c.max), "{c:?}");
        }
        for (w, columns) in [(80, &at80), (200, &at200)] {
            let total: u16 = columns.iter().map(|c| c.width + 1).sum::<u16>() - 1;
            assert!(total <= w, "{w}: {total}");
        }
    }

    /// Issue 33: a crash loop's long WHY pushed POD, TAINTS and POOL/ZONE
    /// off a 200-column grid. Which columns show, and how wide every column
    /// but the free text is, never follows WHY's length.
    #[test]
    fn a_long_why_moves_no_other_column() {
        let with_why = |why: u16| {
            move |id: ColumnId| match id {
                ColumnId::Node => 10,
                ColumnId::Pod | ColumnId::Status => 16,
                ColumnId::NodeState => 12,
                ColumnId::Taints | ColumnId::PoolZone => 24,
                ColumnId::Why => why,
                ColumnId::Event => 0,
                _ => 4,
            }
        };
        for total in [80, 120, 160, 200, 260] {
            let short = layout(total, with_why(0));
            for why in [12, 40, 60, 150, 400] {
                let long = layout(total, with_why(why));
                assert_eq!(ids(&short), ids(&long), "{total} cols, WHY {why}");
                // A column shown whole stays as wide; one cut to fit may
                // grow into the room a short WHY leaves.
                let wants = with_why(why);
                for (a, b) in short.iter().zip(&long).filter(|(_, b)| !is_text(b.id)) {
                    if b.width < wants(b.id).max(display_width(b.title)).clamp(b.min, b.max) {
                        assert!(a.width >= b.width, "{:?} at {total}, WHY {why}", a.id);
                    } else {
                        assert_eq!(a.width, b.width, "{:?} at {total} cols, WHY {why}", a.id);
                    }
                }
            }
        }
        let at200 = layout(200, with_why(150));
        for id in [ColumnId::Pod, ColumnId::Taints, ColumnId::PoolZone] {
            assert!(ids(&at200).contains(&id), "{id:?} at 200: {at200:?}");
        }
    }

    #[test]
    fn spare_width_goes_to_why_before_taints() {
        let wanted = |id: ColumnId| {
            if matches!(id, ColumnId::Why | ColumnId::Taints) {
                60
            } else {
                4
            }
        };
        for total in [120, 150, 180, 230] {
            let columns = layout(total, wanted);
            let width = |id| columns.iter().find(|c| c.id == id).map_or(0, |c| c.width);
            assert!(width(ColumnId::Why) >= TEXT_SHARE, "{total}: {columns:?}");
            // A TAINTS column cut to fit grows past its share only once
            // WHY is whole.
            if width(ColumnId::Taints) > WIDE_SHARE && width(ColumnId::Taints) < 60 {
                assert_eq!(width(ColumnId::Why), 60, "{total}: {columns:?}");
            }
        }
    }
}

/// Narrowest width at which the detail pane sits beside the grid instead of replacing it.
pub const SPLIT_DETAIL_WIDTH: u16 = 160;

/// The grid and the detail pane side by side in the body (wide terminals).
pub fn detail_split(body: Rect) -> [Rect; 2] {
    Layout::horizontal([Constraint::Percentage(50); 2]).areas(body)
}

/// Lines of the DaemonSet header (title included): four on terminals of
/// fewer than [`TALL_ROWS`] rows, where the grid needs every line, six on
/// taller ones, so a wrapped state and the view's limitations never push the
/// summary and counts out.
pub fn header_height(rows: u16) -> u16 {
    if rows >= TALL_ROWS { 6 } else { 4 }
}

/// Rows from which the header grows to six lines.
pub const TALL_ROWS: u16 = 40;

/// The screen's regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    /// Title and DaemonSet summary.
    pub header: Rect,
    /// The grid, picker, detail or history.
    pub body: Rect,
    /// Stream states and the message.
    pub status: Rect,
    /// Key hints.
    pub footer: Rect,
}

/// Splits the screen: header, body, status line, footer.
pub fn areas(screen: Rect) -> Areas {
    let [header, body, status, footer] = Layout::vertical([
        Constraint::Length(header_height(screen.height)),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(screen);
    Areas {
        header,
        body,
        status,
        footer,
    }
}

/// How many list lines fit in the body of a screen of this size (one line
/// goes to the column headings and two to the border).
pub fn list_height(size: (u16, u16)) -> usize {
    let body = areas(Rect::new(0, 0, size.0, size.1)).body;
    usize::from(body.height.saturating_sub(3)).max(1)
}
