//! The grid's columns and the terminal widths at which they appear, as const
//! data; and the screen layout shared by the renderer and the scroll logic.

use ratatui::layout::{Constraint, Layout, Rect};

/// A grid column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnId {
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

/// How a column is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// Which column.
    pub id: ColumnId,
    /// Heading.
    pub title: &'static str,
    /// Width in cells; 0 means "share the remaining width".
    pub width: u16,
    /// Narrowest terminal that shows it.
    pub min_terminal_width: u16,
}

/// All columns, in display order.
#[rustfmt::skip]
pub const COLUMNS: &[Column] = &[
    Column { id: ColumnId::Node, title: "NODE", width: 16, min_terminal_width: 0 },
    Column { id: ColumnId::Eligible, title: "ELIG", width: 5, min_terminal_width: 0 },
    Column { id: ColumnId::Pod, title: "POD", width: 22, min_terminal_width: 150 },
    Column { id: ColumnId::Revision, title: "REV", width: 8, min_terminal_width: 0 },
    Column { id: ColumnId::Status, title: "STATUS", width: 17, min_terminal_width: 0 },
    Column { id: ColumnId::Restarts, title: "RST", width: 3, min_terminal_width: 0 },
    Column { id: ColumnId::Age, title: "AGE", width: 4, min_terminal_width: 0 },
    Column { id: ColumnId::NodeState, title: "NODE STATE", width: 12, min_terminal_width: 100 },
    Column { id: ColumnId::Taints, title: "TAINTS", width: 24, min_terminal_width: 190 },
    Column { id: ColumnId::PoolZone, title: "POOL/ZONE", width: 18, min_terminal_width: 120 },
    Column { id: ColumnId::Why, title: "WHY", width: 0, min_terminal_width: 0 },
    Column { id: ColumnId::Event, title: "LATEST EVENT", width: 0, min_terminal_width: 170 },
];

/// The columns shown at a terminal width.
pub fn visible_columns(terminal_width: u16) -> Vec<Column> {
    COLUMNS
        .iter()
        .filter(|c| terminal_width >= c.min_terminal_width)
        .copied()
        .collect()
}

/// Narrowest width at which the detail pane sits beside the grid instead of replacing it.
pub const SPLIT_DETAIL_WIDTH: u16 = 160;

/// Lines of the DaemonSet header.
pub const HEADER_HEIGHT: u16 = 4;

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
        Constraint::Length(HEADER_HEIGHT),
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
