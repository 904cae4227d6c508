//! How the roster audit shows: the WHY-cell mark, the rows of absent roster
//! nodes, the header count and the detail pane's roster section. Pure; reads
//! only the latest report.

use super::RosterState;
use crate::audit::NodeAuditStatus;
use crate::tui::columns::{Column, ColumnId};
use crate::tui::view_model::{Body, Cell, Tone, ViewModel};

impl RosterState {
    /// The cells of an absent roster node's grid row.
    pub fn absent_cells(columns: &[Column], node: &str) -> Vec<Cell> {
        columns
            .iter()
            .map(|column| match column.id {
                ColumnId::Node => Cell::new(node, Tone::Bad),
                ColumnId::Status | ColumnId::NodeState => Cell::new("absent", Tone::Bad),
                ColumnId::Why => Cell::new("roster: absent — not in cluster", Tone::Bad),
                ColumnId::Event => Cell::empty(),
                _ => Cell::new("-", Tone::Dim),
            })
            .collect()
    }

    /// Marks a present node's cell: the WHY cell of a node with roster
    /// problems leads with them, in words.
    pub fn mark(&self, column: ColumnId, node: &str, cell: Cell) -> Cell {
        if column != ColumnId::Why {
            return cell;
        }
        let Some(status) = self.status(node).filter(NodeAuditStatus::has_problem) else {
            return cell;
        };
        let words = problem_words(status).join(", ");
        let text = if cell.text.is_empty() {
            format!("roster: {words}")
        } else {
            format!("roster: {words} · {}", cell.text)
        };
        Cell::new(&text, Tone::Bad)
    }

    /// The header count: `roster: N problems` (or why there is no number yet).
    fn header_count(&self) -> (&'static str, String, Tone) {
        match (&self.report, &self.error) {
            (_, Some(_)) => ("roster", "error".to_owned(), Tone::Bad),
            (Some(report), None) => match report.problem_count() {
                0 => ("roster", "0 problems".to_owned(), Tone::Good),
                1 => ("roster", "1 problem".to_owned(), Tone::Bad),
                n => ("roster", format!("{n} problems"), Tone::Bad),
            },
            (None, None) => ("roster", "…".to_owned(), Tone::Dim),
        }
    }

    /// The detail pane's roster section for `node`.
    pub fn detail_lines(&self, node: &str) -> Vec<Vec<Cell>> {
        let indent = || Cell::new("  ", Tone::Normal);
        let mut lines = vec![vec![Cell::new("Roster", Tone::Accent)]];
        if let Some(error) = &self.error {
            lines.push(vec![indent(), Cell::new(error, Tone::Bad)]);
            return lines;
        }
        let Some(report) = &self.report else {
            lines.push(vec![indent(), Cell::new("not compared yet", Tone::Dim)]);
            return lines;
        };
        match self.roster.uid(node) {
            Some(uid) => lines.push(vec![
                indent(),
                Cell::new(&format!("on the roster, UID {uid}"), Tone::Normal),
            ]),
            None => lines.push(vec![indent(), Cell::new("not on the roster", Tone::Dim)]),
        }
        if let Some(mismatch) = report.details.node_identity_mismatch.get(node) {
            let text = match &mismatch.cluster_uid {
                None => "absent — not in cluster".to_owned(),
                Some(found) => format!("UID differs: the cluster's node has UID {found}"),
            };
            lines.push(vec![indent(), Cell::new(&text, Tone::Bad)]);
        }
        if let Some(condition) = report.details.node_not_ready.get(node) {
            let text = format!("node not ready: {condition}");
            lines.push(vec![indent(), Cell::new(&text, Tone::Bad)]);
        }
        if let Some(explanation) = report.explanations.get(node) {
            let text = format!("no ready daemon pod: {}", explanation.message);
            lines.push(vec![indent(), Cell::new(&text, Tone::Bad)]);
        }
        let status = report.node_status(node);
        if status.unexpected {
            let text = "runs a daemon pod but is not on the roster";
            lines.push(vec![indent(), Cell::new(text, Tone::Bad)]);
        }
        if status.multiple {
            lines.push(vec![
                indent(),
                Cell::new("more than one daemon pod", Tone::Bad),
            ]);
        }
        lines
    }

    /// Adds the header count and the selected node's roster section to a built view.
    pub fn decorate(&self, view: &mut ViewModel, selected: Option<&str>) {
        if let Some(header) = &mut view.header {
            header.counts.push(self.header_count());
        }
        let (Body::Detail(_, detail), Some(node)) = (&mut view.body, selected) else {
            return;
        };
        let mut lines = self.detail_lines(node);
        if self.is_absent(node) {
            // The node is not in the cache: the roster section is all there is.
            detail.lines = lines;
        } else {
            lines.push(Vec::new());
            lines.append(&mut detail.lines);
            detail.lines = lines;
        }
    }
}

/// The problems of a node in short words, for the WHY cell.
fn problem_words(status: NodeAuditStatus) -> Vec<&'static str> {
    let flags = [
        (status.mismatched, "UID differs"),
        (status.not_ready, "node not ready"),
        (status.missing, "no ready pod"),
        (status.unexpected, "not on roster"),
        (status.multiple, "multiple pods"),
    ];
    flags
        .into_iter()
        .filter_map(|(set, word)| set.then_some(word))
        .collect()
}
