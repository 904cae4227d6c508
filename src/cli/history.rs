//! `rollcall history NS/NAME [--revision R] [-o json|table]`: the revisions
//! like `kubectl rollout history`, plus each revision's images and how many
//! nodes run it; with `--revision`, that revision's template and its diff to
//! the current one. With `-o json`, the same as one camelCase document (the
//! template as an object, the diff as its changed lines and the unified text).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use clap::Args;
use serde::Serialize;

use crate::cli::act_args::{ActArgs, block_on, open};
use crate::cli::cluster_args::ClusterArgs;
use crate::cli::status::Output;
use crate::engine::revision::RevisionInfo;
use crate::model::DsRef;
use crate::ops::rollback::{live_template, normalized_template, template_diff, to_yaml};
use crate::ops::snapshot::Snapshot;

/// Arguments of `rollcall history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The DaemonSet: `NAME` (in the -n namespace), `NAMESPACE/NAME`, `ds/NAME`,
    /// `daemonset/NAME` or `daemonsets.apps/NAME`.
    #[arg(value_name = "DAEMONSET")]
    pub daemonset: DsRef,
    /// Show this revision's template and its diff to the current template.
    #[arg(long, value_name = "R")]
    pub revision: Option<i64>,
    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// The global cluster flags (filled in from [`crate::cli::cluster_args::GlobalArgs`]).
    #[arg(skip)]
    pub cluster: ClusterArgs,
}

/// Runs `rollcall history`.
pub fn run(args: &HistoryArgs) -> anyhow::Result<std::process::ExitCode> {
    block_on(async {
        let session = open(
            &args.cluster,
            &args.daemonset,
            &ActArgs {
                read_only: true,
                ..ActArgs::default()
            },
        )
        .await?;
        let snapshot = Snapshot::load_saying(
            &session.connection.client,
            &session.target,
            crate::cli::out::eline,
        )
        .await?;
        match (args.revision, args.output) {
            (None, Output::Table) => crate::cli::out::stdout(&list(&snapshot))?,
            (Some(number), Output::Table) => crate::cli::out::stdout(&detail(&snapshot, number)?)?,
            (None, Output::Json) => print_json(&HistoryList::build(&snapshot))?,
            (Some(number), Output::Json) => print_json(&RevisionDetail::build(&snapshot, number)?)?,
        }
        Ok(std::process::ExitCode::SUCCESS)
    })
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let text = crate::cli::out::json(value, false)?;
    crate::cli::out::stdout_json(&format!("{text}\n"))?;
    Ok(())
}

/// `history -o json`: the DaemonSet and its revisions, oldest first.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryList {
    /// The DaemonSet's namespace.
    pub namespace: String,
    /// The DaemonSet's name.
    pub name: String,
    /// The current revision's number, if any revision matches the template.
    pub current_revision: Option<i64>,
    /// Every revision, oldest first.
    pub revisions: Vec<RevisionEntry>,
}

/// One revision of the list.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionEntry {
    /// The revision number.
    pub revision: i64,
    /// The ControllerRevision's name.
    pub controller_revision: String,
    /// Its `controller-revision-hash`.
    pub hash: String,
    /// Whether it is the current revision.
    pub current: bool,
    /// Pods (not terminating) running it.
    pub nodes: usize,
    /// The `kubernetes.io/change-cause` annotation.
    pub change_cause: Option<String>,
    /// The images of its containers.
    pub images: Vec<String>,
}

impl HistoryList {
    /// The list from a snapshot.
    pub fn build(snapshot: &Snapshot<'_>) -> Self {
        let index = snapshot.index();
        let nodes_per_hash = nodes_per_hash(snapshot);
        let current_revision = index.current().map(|c| c.number);
        let revisions = index
            .list()
            .iter()
            .map(|info| RevisionEntry {
                revision: info.number,
                controller_revision: info.name.clone(),
                hash: info.hash.clone(),
                current: Some(info.number) == current_revision,
                nodes: nodes_per_hash.get(info.hash.as_str()).copied().unwrap_or(0),
                change_cause: change_cause(snapshot, info),
                images: images(&info.template),
            })
            .collect();
        let target = snapshot.target();
        Self {
            namespace: target.namespace,
            name: target.name,
            current_revision,
            revisions,
        }
    }
}

/// `history --revision N -o json`: one revision with its template and diff.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionDetail {
    /// The DaemonSet's namespace.
    pub namespace: String,
    /// The DaemonSet's name.
    pub name: String,
    /// The revision, as in the list.
    #[serde(flatten)]
    pub entry: RevisionEntry,
    /// Its pod template (normalised like the live one).
    pub template: serde_json::Value,
    /// From the live template to this revision's.
    pub diff: TemplateDiff,
}

/// A template diff: the changed lines of the two YAML renderings, and the unified text.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateDiff {
    /// What the diff starts from (`current`: the live template).
    pub from: &'static str,
    /// Whether the two templates are the same.
    pub identical: bool,
    /// Each removed (`-`) or added (`+`) line, in order.
    pub changes: Vec<DiffLine>,
    /// The unified diff (`--- current`, `+++ target`), empty when identical.
    pub unified: String,
}

/// One changed line of a [`TemplateDiff`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    /// `-` (only in the live template) or `+` (only in the revision).
    pub op: &'static str,
    /// The YAML line, without its line break.
    pub line: String,
}

impl RevisionDetail {
    /// The detail of revision `number`.
    pub fn build(snapshot: &Snapshot<'_>, number: i64) -> anyhow::Result<Self> {
        let list = HistoryList::build(snapshot);
        let entry = list
            .revisions
            .into_iter()
            .find(|r| r.revision == number)
            .ok_or_else(|| unknown_revision(number))?;
        let index = snapshot.index();
        let info = index
            .by_number(number)
            .ok_or_else(|| unknown_revision(number))?;
        let template = normalized_template(&info.template);
        let live = live_template(snapshot);
        let changes = similar::TextDiff::from_lines(&to_yaml(&live), &to_yaml(&template))
            .iter_all_changes()
            .filter_map(|change| {
                let op = match change.tag() {
                    similar::ChangeTag::Equal => return None,
                    similar::ChangeTag::Delete => "-",
                    similar::ChangeTag::Insert => "+",
                };
                Some(DiffLine {
                    op,
                    line: change.value().trim_end_matches('\n').to_owned(),
                })
            })
            .collect::<Vec<_>>();
        let unified = if changes.is_empty() {
            String::new()
        } else {
            template_diff(&live, &template)
        };
        Ok(Self {
            namespace: list.namespace,
            name: list.name,
            entry,
            diff: TemplateDiff {
                from: "current",
                identical: changes.is_empty(),
                changes,
                unified,
            },
            template,
        })
    }
}

fn unknown_revision(number: i64) -> anyhow::Error {
    anyhow::anyhow!("unable to find the specified revision {number}")
}

/// Pods (not terminating) per revision hash.
fn nodes_per_hash<'s>(snapshot: &'s Snapshot<'_>) -> BTreeMap<&'s str, usize> {
    let mut nodes_per_hash: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in snapshot.pods().filter(|p| !p.is_terminating()) {
        if let Some(hash) = pod.revision_hash() {
            *nodes_per_hash.entry(hash).or_default() += 1;
        }
    }
    nodes_per_hash
}

/// The revision list: number, current marker, nodes, change cause, images;
/// the change-cause column is as wide as its longest entry, so the images
/// stay aligned.
pub fn list(snapshot: &Snapshot<'_>) -> String {
    let list = HistoryList::build(snapshot);
    if list.revisions.is_empty() {
        return "No rollout history found.\n".to_owned();
    }
    let causes: Vec<String> = list
        .revisions
        .iter()
        .map(|r| {
            r.change_cause
                .clone()
                .unwrap_or_else(|| "<none>".to_owned())
        })
        .collect();
    let width = causes
        .iter()
        .map(|c| c.chars().count())
        .chain(["CHANGE-CAUSE".len()])
        .max()
        .unwrap_or_default();
    let mut out = format!("daemonset {}/{}\n", list.namespace, list.name);
    let _ = writeln!(
        out,
        "{:<9} {:<8} {:<6} {:<width$} IMAGES",
        "REVISION", "CURRENT", "NODES", "CHANGE-CAUSE"
    );
    for (revision, cause) in list.revisions.iter().zip(&causes) {
        let _ = writeln!(
            out,
            "{:<9} {:<8} {:<6} {cause:<width$} {}",
            revision.revision,
            if revision.current { "*" } else { "" },
            revision.nodes,
            revision.images.join(","),
        );
    }
    out
}

/// One revision's template and the diff from the live template to it.
pub fn detail(snapshot: &Snapshot<'_>, number: i64) -> anyhow::Result<String> {
    let index = snapshot.index();
    let info = index
        .by_number(number)
        .ok_or_else(|| unknown_revision(number))?;
    let template = normalized_template(&info.template);
    let mut out = format!(
        "daemonset {} with revision #{number}\nPod Template:\n",
        snapshot.target()
    );
    out.push_str(&to_yaml(&template));
    let diff = template_diff(&live_template(snapshot), &template);
    if diff.is_empty() {
        out.push_str("\n(identical to the current template)\n");
    } else {
        out.push_str("\nDiff from the current template:\n");
        out.push_str(&diff);
    }
    Ok(out)
}

fn change_cause(snapshot: &Snapshot<'_>, info: &RevisionInfo) -> Option<String> {
    snapshot
        .revisions
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(info.name.as_str()))?
        .metadata
        .annotations
        .as_ref()?
        .get("kubernetes.io/change-cause")
        .cloned()
}

fn images(template: &serde_json::Value) -> Vec<String> {
    template["spec"]["containers"]
        .as_array()
        .map(|containers| {
            containers
                .iter()
                .filter_map(|c| c["image"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testing::{NEW, all_old, ds, ready_pod, replace, snapshot};

    #[test]
    fn list_counts_nodes_per_revision_and_marks_current() {
        let nodes = ["n1", "n2", "n3"];
        let pods = replace(all_old(&nodes), vec![ready_pod("n1", NEW, 10)]);
        let text = list(&snapshot(ds(false, &[]), &nodes, pods));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "daemonset kube-system/agent");
        assert!(
            lines[2].starts_with("1 ") && lines[2].contains(" 2 ") && lines[2].ends_with("v1"),
            "{text}"
        );
        assert!(
            lines[3].starts_with("2 ") && lines[3].contains('*') && lines[3].ends_with("v2"),
            "{text}"
        );
    }

    #[test]
    fn a_long_change_cause_keeps_the_images_aligned() {
        let nodes = ["n1"];
        let mut snap = snapshot(ds(false, &[]), &nodes, all_old(&nodes));
        let cause =
            "kubectl set image daemonset/agent agent=v1 --record (after the incident review)";
        snap.revisions[0].metadata.annotations =
            Some([("kubernetes.io/change-cause".to_owned(), cause.to_owned())].into());
        let text = list(&snap);
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert!(lines.iter().any(|l| l.contains(cause)), "{text}");
        let images_at: Vec<Option<usize>> = lines
            .iter()
            .map(|l| l.rfind(" v").or_else(|| l.rfind(" IMAGES")))
            .collect();
        assert!(
            images_at
                .iter()
                .all(|at| at.is_some() && *at == images_at[0]),
            "{text}"
        );
    }

    #[test]
    fn detail_shows_template_and_diff_or_unknown_revision() {
        let nodes = ["n1"];
        let snap = snapshot(ds(false, &[]), &nodes, all_old(&nodes));
        let text = detail(&snap, 1).unwrap();
        assert!(
            text.starts_with("daemonset kube-system/agent with revision #1"),
            "{text}"
        );
        assert!(text.contains("+  - image: v1"), "{text}");
        assert_eq!(
            detail(&snap, 7).unwrap_err().to_string(),
            "unable to find the specified revision 7"
        );
    }

    #[test]
    fn json_list_and_detail_are_camel_case_and_structured() {
        let nodes = ["n1", "n2", "n3"];
        let pods = replace(all_old(&nodes), vec![ready_pod("n1", NEW, 10)]);
        let snap = snapshot(ds(false, &[]), &nodes, pods);
        let list = serde_json::to_value(HistoryList::build(&snap)).unwrap();
        assert_eq!(list["namespace"], "kube-system");
        assert_eq!(list["currentRevision"], 2);
        let revisions = list["revisions"].as_array().unwrap();
        assert_eq!(revisions.len(), 2);
        assert_eq!(
            (
                &revisions[0]["revision"],
                &revisions[0]["nodes"],
                &revisions[0]["current"]
            ),
            (
                &serde_json::json!(1),
                &serde_json::json!(2),
                &serde_json::json!(false)
            )
        );
        assert_eq!(revisions[1]["images"], serde_json::json!(["v2"]));
        assert!(revisions[1]["changeCause"].is_null());

        let old = serde_json::to_value(RevisionDetail::build(&snap, 1).unwrap()).unwrap();
        assert_eq!(
            (&old["revision"], &old["current"]),
            (&serde_json::json!(1), &serde_json::json!(false))
        );
        assert_eq!(old["template"]["spec"]["containers"][0]["image"], "v1");
        assert_eq!(old["diff"]["identical"], false);
        let changes = old["diff"]["changes"].as_array().unwrap();
        assert!(
            changes.contains(&serde_json::json!({"op": "-", "line": "  - image: v2"}))
                && changes.contains(&serde_json::json!({"op": "+", "line": "  - image: v1"})),
            "{changes:?}"
        );
        assert!(
            old["diff"]["unified"]
                .as_str()
                .unwrap()
                .contains("+  - image: v1")
        );
        let current = serde_json::to_value(RevisionDetail::build(&snap, 2).unwrap()).unwrap();
        assert_eq!(current["diff"]["identical"], true);
        assert_eq!(current["diff"]["changes"], serde_json::json!([]));
        assert!(RevisionDetail::build(&snap, 7).is_err());
    }
}
