//! The fleet report `rollcall fleet status` prints: per cluster its
//! connection, the same status report `rollcall --context C status` gives,
//! its template identity, its pods per identity and its drift from the
//! reference; then fleet totals. Pure: built from what each cluster's read
//! returned.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::connection::ConnectionState;
use super::drift::{Drift, drift, majority};
use super::query::{Answer, Query};
use super::template::TemplateIdentity;
use crate::ops::error::OpsError;
use crate::ops::snapshot::Snapshot;
use crate::ops::status::StatusReport;

/// What reading one cluster gave.
#[derive(Debug)]
pub struct ClusterRead {
    /// The context.
    pub context: String,
    /// The read, or why there is none.
    pub outcome: Result<Read, Failure>,
}

/// One cluster, read.
#[derive(Debug)]
pub struct Read {
    /// What `rollcall status` reports for it.
    pub status: StatusReport,
    /// Its current template's identity.
    pub template: TemplateIdentity,
    /// Each ControllerRevision's number and template identity.
    pub revisions: Vec<(i64, TemplateIdentity)>,
}

impl Read {
    /// One cluster's read from its snapshot, listed (`fleet status`) or
    /// copied from a watch cache (the live matrix): the status report
    /// `rollcall status` builds, its template's identity and each revision's.
    pub fn of(snapshot: &Snapshot<'_>, now: jiff::Timestamp) -> Result<Read, OpsError> {
        let status = StatusReport::build(snapshot, now)?;
        let template = snapshot.ds.spec.as_ref().map_or_else(
            || TemplateIdentity::of_value(&Value::Null),
            |spec| TemplateIdentity::of(&spec.template),
        );
        let revisions = snapshot
            .revisions
            .iter()
            .filter_map(|revision| {
                let template = revision.data.as_ref()?.0.pointer("/spec/template")?;
                Some((revision.revision, TemplateIdentity::of_value(template)))
            })
            .collect();
        Ok(Read {
            status,
            template,
            revisions,
        })
    }
}

/// One cluster that could not be read.
#[derive(Debug)]
pub struct Failure {
    /// Why, in one word.
    pub connection: ConnectionState,
    /// The error, in full.
    pub message: String,
}

/// The whole fleet report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetReport {
    /// The DaemonSet, as asked (`NS/NAME`, `NAME`).
    pub daemonset: String,
    /// One entry per cluster, in the order chosen.
    pub clusters: Vec<ClusterEntry>,
    /// Fleet totals.
    pub totals: FleetTotals,
    /// The answer to `--where`, when asked.
    #[serde(rename = "where", skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
}

/// What the report was asked for besides the clusters' reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Asked<'a> {
    /// The context whose template is the reference (else the majority's).
    pub reference: Option<&'a str>,
    /// Keep each status's `nodes`.
    pub all_nodes: bool,
    /// `--where`: the question as typed, and parsed.
    pub query: Option<(&'a str, &'a Query)>,
}

/// One cluster of the report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterEntry {
    /// The kubeconfig context.
    pub context: String,
    /// How it was reached.
    pub connection: ConnectionState,
    /// The error when not live; empty when live.
    pub message: String,
    /// `rollcall --context CONTEXT status DS -o json`, without `nodes` unless `--all`.
    pub status: Option<Value>,
    /// The current template's identity.
    pub template: Option<TemplateIdentity>,
    /// Nodes per template identity of the pod they run (newest revision first).
    pub revisions: Vec<IdentityNodes>,
    /// How its template differs from the reference; empty when it does not.
    pub drift: Vec<Drift>,
    /// The table's cells.
    #[serde(skip)]
    pub row: Option<Row>,
}

/// Nodes whose pod runs one template.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityNodes {
    /// The template's digest.
    pub digest: String,
    /// How many nodes.
    pub nodes: usize,
}

/// What a table row shows of a read cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// `OnDelete` or `RollingUpdate`.
    pub strategy: String,
    /// The status counts.
    pub totals: crate::engine::coverage::Totals,
    /// The state word.
    pub state: String,
    /// The most frequent problem with its node count (`3 not Ready`), if any.
    pub top_problem: Option<String>,
    /// How many kinds of problem.
    pub problems: usize,
}

/// The fleet's totals.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetTotals {
    /// Clusters asked.
    pub clusters: usize,
    /// Clusters per connection word.
    pub connections: BTreeMap<&'static str, usize>,
    /// Clusters whose template differs from the reference.
    pub drifted: usize,
    /// Live clusters whose status lists problems.
    pub with_problems: usize,
    /// The reference template's digest (the majority's, or `--reference`'s).
    pub reference: Option<String>,
    /// The DaemonSet status counts summed over the live clusters.
    pub desired: i64,
    /// Summed `currentNumberScheduled`.
    pub current: i64,
    /// Summed `updatedNumberScheduled`.
    pub updated: i64,
    /// Summed `numberReady`.
    pub ready: i64,
    /// Summed `numberAvailable`.
    pub available: i64,
    /// Each current template and the clusters that run it, most first.
    pub templates: Vec<TemplateClusters>,
}

/// A current template and how many clusters have it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateClusters {
    /// Its digest.
    pub digest: String,
    /// Its images.
    pub images: Vec<String>,
    /// How many clusters.
    pub clusters: usize,
}

impl FleetReport {
    /// Builds the report.
    pub fn build(daemonset: String, reads: Vec<ClusterRead>, asked: Asked<'_>) -> FleetReport {
        let Asked {
            reference,
            all_nodes,
            query,
        } = asked;
        let answer = query.map(|(text, query)| {
            let mut answer = Answer::new(text);
            for read in &reads {
                if let Ok(ok) = &read.outcome {
                    answer.add(query, &read.context, &ok.status.nodes, &ok.revisions);
                }
            }
            answer
        });
        let templates = reads
            .iter()
            .filter_map(|r| r.outcome.as_ref().ok().map(|read| &read.template));
        let reference_identity = match reference {
            Some(context) => reads
                .iter()
                .find(|r| r.context == context)
                .and_then(|r| r.outcome.as_ref().ok())
                .map(|read| read.template.clone()),
            None => majority(templates).cloned(),
        };
        let clusters: Vec<ClusterEntry> = reads
            .into_iter()
            .map(|read| entry(read, reference_identity.as_ref(), all_nodes))
            .collect();
        let totals = FleetTotals::of(&clusters, reference_identity.map(|r| r.digest));
        FleetReport {
            daemonset,
            clusters,
            totals,
            answer,
        }
    }

    /// Whether anything needs a look (exit 1): a cluster not live, and
    /// with `--where` a matching node, else a drifted template or a live
    /// cluster whose status lists problems.
    pub fn has_problems(&self) -> bool {
        let all_live =
            self.totals.clusters == self.totals.connections.get("live").copied().unwrap_or(0);
        match &self.answer {
            Some(answer) => !all_live || answer.nodes > 0,
            None => !all_live || self.totals.drifted > 0 || self.totals.with_problems > 0,
        }
    }
}

fn entry(read: ClusterRead, reference: Option<&TemplateIdentity>, all_nodes: bool) -> ClusterEntry {
    let context = read.context;
    match read.outcome {
        Err(failure) => ClusterEntry {
            context,
            connection: failure.connection,
            message: failure.message,
            status: None,
            template: None,
            revisions: Vec::new(),
            drift: Vec::new(),
            row: None,
        },
        Ok(read) => {
            let report = &read.status;
            let row = Row::of(report);
            let mut status = serde_json::to_value(report).unwrap_or(Value::Null);
            if !all_nodes && let Some(map) = status.as_object_mut() {
                map.remove("nodes");
            }
            ClusterEntry {
                context,
                connection: ConnectionState::Live,
                message: String::new(),
                status: Some(status),
                drift: reference
                    .map(|r| drift(&read.template, r))
                    .unwrap_or_default(),
                revisions: identity_nodes(&report.summary.revisions, &read.revisions),
                template: Some(read.template),
                row: Some(row),
            }
        }
    }
}

impl Row {
    /// The cells a status report gives a cluster's row.
    pub fn of(report: &StatusReport) -> Row {
        Row {
            strategy: report.strategy.clone(),
            totals: report.totals,
            state: report.state.clone(),
            top_problem: report
                .summary
                .problems
                .first()
                .map(|p| format!("{} {}", p.nodes.len(), p.problem)),
            problems: report.summary.problems.len(),
        }
    }
}

/// The report's nodes per revision, as nodes per template identity.
pub fn identity_nodes(
    counts: &[crate::ops::status_summary::RevisionCount],
    revisions: &[(i64, TemplateIdentity)],
) -> Vec<IdentityNodes> {
    let mut counted: Vec<IdentityNodes> = Vec::new();
    for count in counts {
        let Some(number) = count.revision else {
            continue;
        };
        let digest = revisions
            .iter()
            .find(|(n, _)| *n == number)
            .map_or_else(|| format!("revision {number}"), |(_, id)| id.digest.clone());
        match counted.iter_mut().find(|c| c.digest == digest) {
            Some(known) => known.nodes += count.nodes,
            None => counted.push(IdentityNodes {
                digest,
                nodes: count.nodes,
            }),
        }
    }
    counted
}

impl FleetTotals {
    fn of(clusters: &[ClusterEntry], reference: Option<String>) -> FleetTotals {
        let mut totals = FleetTotals {
            clusters: clusters.len(),
            reference,
            ..FleetTotals::default()
        };
        for cluster in clusters {
            *totals
                .connections
                .entry(cluster.connection.word())
                .or_default() += 1;
            totals.drifted += usize::from(!cluster.drift.is_empty());
            if let Some(row) = &cluster.row {
                totals.with_problems += usize::from(row.problems > 0);
                totals.desired += i64::from(row.totals.desired);
                totals.current += i64::from(row.totals.current);
                totals.updated += i64::from(row.totals.updated);
                totals.ready += i64::from(row.totals.ready);
                totals.available += i64::from(row.totals.available);
            }
            if let Some(template) = &cluster.template {
                match totals
                    .templates
                    .iter_mut()
                    .find(|t| t.digest == template.digest)
                {
                    Some(known) => known.clusters += 1,
                    None => totals.templates.push(TemplateClusters {
                        digest: template.digest.clone(),
                        images: template.images.clone(),
                        clusters: 1,
                    }),
                }
            }
        }
        totals
            .templates
            .sort_by_key(|t| std::cmp::Reverse(t.clusters));
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn identity(image: &str) -> TemplateIdentity {
        TemplateIdentity::of_value(
            &json!({"spec": {"containers": [{"name": "agent", "image": image}]}}),
        )
    }

    fn failed(context: &str, connection: ConnectionState) -> ClusterRead {
        ClusterRead {
            context: context.to_owned(),
            outcome: Err(Failure {
                connection,
                message: "connection refused".to_owned(),
            }),
        }
    }

    #[test]
    fn failures_are_rows_with_their_word_and_count_as_problems() {
        let report = FleetReport::build(
            "kube-system/agent".to_owned(),
            vec![
                failed("a", ConnectionState::Unreachable),
                failed("b", ConnectionState::NotFound),
            ],
            Asked::default(),
        );
        assert!(report.has_problems());
        assert_eq!(report.totals.connections.get("unreachable"), Some(&1));
        assert_eq!(report.totals.connections.get("notFound"), Some(&1));
        assert_eq!(report.totals.reference, None);
        let value = serde_json::to_value(&report).unwrap();
        assert_eq!(value["clusters"][1]["connection"], "notFound");
        assert_eq!(value["clusters"][0]["status"], Value::Null);
        let table = report.render_table();
        assert!(
            table.contains("unreachable  a: connection refused"),
            "{table}"
        );
    }

    #[test]
    fn identities_fold_revisions_that_share_a_template() {
        let a = identity("agent:1");
        let revisions = vec![(1, a.clone()), (2, identity("agent:2")), (3, a.clone())];
        let mut report_counts = crate::ops::status_summary::Summary::default();
        for (revision, nodes) in [(Some(3), 2), (Some(2), 4), (Some(1), 1), (None, 5)] {
            report_counts
                .revisions
                .push(crate::ops::status_summary::RevisionCount {
                    revision,
                    current: revision == Some(3),
                    nodes,
                });
        }
        let counted = identity_nodes(&report_counts.revisions, &revisions);
        assert_eq!(
            counted,
            [
                IdentityNodes {
                    digest: a.digest.clone(),
                    nodes: 3
                },
                IdentityNodes {
                    digest: identity("agent:2").digest,
                    nodes: 4
                }
            ]
        );
    }
}
