//! The fleet report as a table for people: one row per cluster, then each
//! drift and failure, the totals and the `--where` answer. Pure text.

use std::fmt::Write as _;

use super::query::Answer;
use super::report::{FleetReport, FleetTotals, IdentityNodes};

impl FleetReport {
    /// The report for people: one line per cluster, then the drift, the
    /// failures and the totals.
    pub fn render_table(&self) -> String {
        // Cells hold API and kubeconfig text: sanitised before they are measured.
        let rows: Vec<[String; 11]> = self
            .cluster_rows()
            .into_iter()
            .map(|row| row.map(|cell| crate::sanitize::sanitize(&cell).into_owned()))
            .collect();
        let mut out = aligned(&rows);
        self.write_notes(&mut out);
        self.totals.write(&mut out);
        if let Some(answer) = &self.answer {
            write_answer(&mut out, answer);
        }
        out
    }

    /// The header and one row per cluster.
    fn cluster_rows(&self) -> Vec<[String; 11]> {
        let header = [
            "CONTEXT",
            "CONNECTION",
            "STRATEGY",
            "DESIRED",
            "UPDATED",
            "READY",
            "AVAILABLE",
            "TEMPLATE",
            "REVISIONS",
            "STATE",
            "PROBLEM",
        ];
        let mut rows: Vec<[String; 11]> = vec![header.map(str::to_owned)];
        for cluster in &self.clusters {
            let dash = || "-".to_owned();
            let row = cluster.row.as_ref();
            let count = |pick: fn(&crate::engine::coverage::Totals) -> i32| {
                row.map_or_else(dash, |r| pick(&r.totals).to_string())
            };
            rows.push([
                cluster.context.clone(),
                cluster.connection.word().to_owned(),
                row.map_or_else(dash, |r| r.strategy.clone()),
                count(|t| t.desired),
                count(|t| t.updated),
                count(|t| t.ready),
                count(|t| t.available),
                cluster.template.as_ref().map_or_else(dash, |t| {
                    let drifted = if cluster.drift.is_empty() {
                        ""
                    } else {
                        " drift"
                    };
                    format!("{}{drifted}", t.digest)
                }),
                revision_mix(&cluster.revisions),
                row.map_or_else(dash, |r| r.state.clone()),
                row.and_then(|r| r.top_problem.clone()).unwrap_or_default(),
            ]);
        }
        rows
    }

    /// Each drift and each failure, one line each.
    fn write_notes(&self, out: &mut String) {
        for cluster in &self.clusters {
            for drift in &cluster.drift {
                let _ = writeln!(
                    out,
                    "drift  {}  {}: {}",
                    cluster.context, drift.field, drift.message
                );
            }
            if !cluster.message.is_empty() {
                let _ = writeln!(
                    out,
                    "{}  {}: {}",
                    cluster.connection.word(),
                    cluster.context,
                    cluster.message
                );
            }
        }
    }
}

impl FleetTotals {
    /// The totals line and the templates line.
    fn write(&self, out: &mut String) {
        let t = self;
        let connections: Vec<String> = t
            .connections
            .iter()
            .map(|(word, n)| format!("{n} {word}"))
            .collect();
        let templates: Vec<String> = t
            .templates
            .iter()
            .map(|tpl| {
                let plural = if tpl.clusters == 1 { "" } else { "s" };
                format!(
                    "{} {} ({} cluster{plural})",
                    tpl.digest,
                    tpl.images.join(","),
                    tpl.clusters
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "fleet: {} cluster{} ({}) · desired {} updated {} ready {} available {} · {} drifted · {} with problems",
            t.clusters,
            if t.clusters == 1 { "" } else { "s" },
            connections.join(", "),
            t.desired,
            t.updated,
            t.ready,
            t.available,
            t.drifted,
            t.with_problems
        );
        let templates = if templates.is_empty() {
            "none read".to_owned()
        } else {
            templates.join(" · ")
        };
        let _ = writeln!(out, "templates: {templates}");
    }
}

/// How many node names a `--where` group lists in the table (JSON has them all).
const WHERE_NAMES_SHOWN: usize = 10;

fn write_answer(out: &mut String, answer: &Answer) {
    let _ = writeln!(out, "where {}: {} nodes", answer.query, answer.nodes);
    for group in &answer.groups {
        let names: Vec<String> = group
            .nodes
            .iter()
            .take(WHERE_NAMES_SHOWN)
            .map(|n| format!("{}/{}", n.context, n.node))
            .collect();
        let more = group.nodes.len().saturating_sub(WHERE_NAMES_SHOWN);
        let more = if more > 0 {
            format!(" +{more} more")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {} ({}): {}{more}",
            group.reason,
            group.nodes.len(),
            names.join(", ")
        );
    }
}

/// `c69834 12 · 39db57 0`: nodes per template, by short digest; `-` when unknown.
fn revision_mix(revisions: &[IdentityNodes]) -> String {
    if revisions.is_empty() {
        return "-".to_owned();
    }
    let shown: Vec<String> = revisions
        .iter()
        .map(|r| format!("{} {}", r.digest.get(..6).unwrap_or(&r.digest), r.nodes))
        .collect();
    shown.join(" · ")
}

/// Rows as columns padded to their widest cell.
fn aligned<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(unicode_width::UnicodeWidthStr::width(cell.as_str()));
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                let pad = width - unicode_width::UnicodeWidthStr::width(cell.as_str());
                let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
