//! The explain report and its table, without the binary.

use super::{ExplainError, NodeExplanation, count_line, explain, render_table};
use crate::engine::eligibility::fixtures::{node, taint, template};
use crate::model::{DaemonSet, Snapshot};

fn named(ds: DaemonSet, namespace: &str, name: &str) -> DaemonSet {
    let mut ds = ds;
    ds.metadata.namespace = Some(namespace.to_owned());
    ds.metadata.name = Some(name.to_owned());
    ds
}

fn snapshot() -> Snapshot {
    Snapshot {
        nodes: vec![
            node("b-node", &[], &[taint("dedicated", "gpu", "NoSchedule")]),
            node("a-node", &[], &[]),
        ],
        daemonsets: vec![
            named(template().daemonset(), "ops", "agent"),
            named(template().daemonset(), "infra", "agent"),
            named(template().daemonset(), "infra", "cni"),
        ],
        ..Snapshot::default()
    }
}

#[test]
fn every_node_under_every_daemonset_sorted() {
    let report = explain(&snapshot(), None).unwrap();
    let ids: Vec<String> = report
        .daemonsets
        .iter()
        .map(|d| format!("{}/{}", d.namespace, d.name))
        .collect();
    assert_eq!(ids, ["infra/agent", "infra/cni", "ops/agent"]);
    for ds in &report.daemonsets {
        let nodes: Vec<&str> = ds.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(nodes, ["a-node", "b-node"]);
    }
}

#[test]
fn selecting_a_daemonset() {
    let one = |wanted| explain(&snapshot(), Some(wanted));
    assert_eq!(one("infra/cni").unwrap().daemonsets.len(), 1);
    assert_eq!(
        one("cni").unwrap().daemonsets[0].namespace,
        "infra",
        "a unique bare name is enough"
    );
    assert!(matches!(one("agent"), Err(ExplainError::Ambiguous { .. })));
    let Err(err) = one("infra/nope") else {
        panic!("unknown name accepted");
    };
    assert_eq!(
        err.to_string(),
        "daemonset infra/nope is not in the snapshot; DaemonSets present: infra/agent, infra/cni, ops/agent"
    );
}

#[test]
fn the_table_is_coloured_only_when_asked() {
    let report = explain(&snapshot(), Some("infra/cni")).unwrap();
    let plain = render_table(&report, false);
    assert_eq!(
        plain,
        "DaemonSet infra/cni\n\
         NODE    ELIG  FIT  REASON\n\
         a-node  yes   ?\n\
         b-node  no    ?    taint dedicated=gpu:NoSchedule not tolerated\n\
         2 nodes: 1 should run, 1 excluded\n"
    );
    let coloured = render_table(&report, true);
    assert!(
        coloured.contains("\u{1b}[1mDaemonSet infra/cni\u{1b}[0m"),
        "{coloured}"
    );
    assert!(
        coloured.contains("\u{1b}[31mno\u{1b}[0m    ?    taint"),
        "{coloured}"
    );
    let stripped = coloured
        .replace("\u{1b}[1m", "")
        .replace("\u{1b}[31m", "")
        .replace("\u{1b}[32m", "")
        .replace("\u{1b}[0m", "");
    assert_eq!(stripped, plain, "colour never changes the alignment");
}

#[test]
fn api_text_cannot_drive_the_terminal() {
    let mut snapshot = snapshot();
    snapshot.nodes = vec![node(
        "evil\u{1b}[2Jnode",
        &[],
        &[taint("k\u{7}", "v\r", "NoSchedule")],
    )];
    let report = explain(&snapshot, Some("infra/cni")).unwrap();
    let table = render_table(&report, false);
    assert!(
        !table.contains('\u{1b}') && !table.contains('\u{7}') && !table.contains('\r'),
        "{table:?}"
    );
    // The whole CSI sequence goes, not just its ESC byte.
    assert!(table.contains("evilnode"), "{table:?}");
}

#[test]
fn no_daemonsets_says_so() {
    let report = explain(&Snapshot::default(), None).unwrap();
    assert_eq!(
        render_table(&report, false),
        "no DaemonSets in the snapshot\n"
    );
}

/// Issue 33: the count under the table speaks the table's words: only rows
/// ELIG marks `keep` (a pod there to keep) are counted as keeping one.
#[test]
fn the_count_line_agrees_with_elig() {
    use crate::engine::eligibility::NodeVerdict;
    let row = |name: &str, should_run: bool, keep: bool, has_pod: bool| NodeExplanation {
        name: name.to_owned(),
        verdict: NodeVerdict {
            should_run,
            should_continue_running: should_run || keep,
            reasons: Vec::new(),
        },
        has_pod,
        fit: None,
    };
    let nodes = [
        row("runs", true, true, true),
        row("noschedule-no-pod", false, true, false),
        row("noschedule-pod", false, true, true),
        row("excluded", false, false, true),
    ];
    assert_eq!(
        count_line(&nodes),
        "4 nodes: 1 should run, 3 excluded (1 keep their running pod)"
    );
}
