//! `rollcall history NS/NAME [--revision R]`: the revisions like `kubectl
//! rollout history`, plus each revision's images and how many nodes run it;
//! with `--revision`, that revision's template and its diff to the current one.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use clap::Args;

use crate::cli::act_args::{ActArgs, block_on, open};
use crate::cli::cluster_args::ClusterArgs;
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
        let snapshot = Snapshot::load(&session.connection.client, &session.target).await?;
        let text = match args.revision {
            None => list(&snapshot),
            Some(number) => detail(&snapshot, number)?,
        };
        crate::cli::out::stdout(&text)?;
        Ok(std::process::ExitCode::SUCCESS)
    })
}

/// The revision list: number, current marker, change cause, images, nodes.
pub fn list(snapshot: &Snapshot) -> String {
    let index = snapshot.index();
    if index.list().is_empty() {
        return "No rollout history found.\n".to_owned();
    }
    let mut nodes_per_hash: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in snapshot.pods.iter().filter(|p| !p.is_terminating()) {
        if let Some(hash) = pod.revision_hash() {
            *nodes_per_hash.entry(hash).or_default() += 1;
        }
    }
    let current = index.current().map(|c| c.number);
    let mut out = format!("daemonset {}\n", snapshot.target());
    let _ = writeln!(
        out,
        "{:<9} {:<8} {:<6} {:<24} IMAGES",
        "REVISION", "CURRENT", "NODES", "CHANGE-CAUSE"
    );
    for info in index.list() {
        let cause = change_cause(snapshot, info).unwrap_or_else(|| "<none>".to_owned());
        let _ = writeln!(
            out,
            "{:<9} {:<8} {:<6} {:<24} {}",
            info.number,
            if Some(info.number) == current {
                "*"
            } else {
                ""
            },
            nodes_per_hash.get(info.hash.as_str()).copied().unwrap_or(0),
            cause,
            images(&info.template).join(","),
        );
    }
    out
}

/// One revision's template and the diff from the live template to it.
pub fn detail(snapshot: &Snapshot, number: i64) -> anyhow::Result<String> {
    let index = snapshot.index();
    let info = index
        .by_number(number)
        .ok_or_else(|| anyhow::anyhow!("unable to find the specified revision {number}"))?;
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

fn change_cause(snapshot: &Snapshot, info: &RevisionInfo) -> Option<String> {
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
}
