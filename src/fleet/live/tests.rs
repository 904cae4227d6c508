//! The live matrix's pure parts: a row observed from a watch cache is the
//! status report `rollcall status` builds from the same objects listed; the
//! link words follow the cache's streams as the console's status line does;
//! the matrix flags drift, filters, sorts and keeps stale cells.

use super::matrix::{Matrix, SortBy};
use super::row::{ClusterView, FirstList, Link, Observation, observe};
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::cluster::status::StreamKind;
use crate::engine::fixtures::{daemonset, revision_of};
use crate::fleet::connection::ConnectionState;
use crate::fleet::report::Read;
use crate::model::Target;
use crate::ops::snapshot::Snapshot;
use crate::tui::fixtures::{self, at_offset, mid_rollout, now};

fn agent() -> Target {
    Target {
        namespace: "kube-system".to_owned(),
        name: "agent".to_owned(),
    }
}

/// The first lists' bound: from `now()`, 30 s.
fn first() -> FirstList {
    FirstList {
        since: now(),
        within: std::time::Duration::from_secs(30),
    }
}

/// The same objects `mid_rollout` lists into the cache, as `status` lists them.
fn listed_view() -> ClusterView {
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let v2 = fixtures::agent_v2();
    let revisions = vec![revision_of(&v1, "h1", 1), revision_of(&v2, "h2", 2)];
    let snapshot = Snapshot::new(v2, fixtures::nodes(), fixtures::pods(), revisions);
    ClusterView::of(&Read::of(&snapshot, now()).expect("the report builds"))
}

#[test]
fn a_row_from_the_watch_cache_is_what_status_reports_for_the_same_objects() {
    let observed = observe(&mid_rollout(), &agent(), &first(), now());
    assert_eq!(observed.link, Link::Live);
    let view = observed.view.expect("a live cluster has cells");
    assert_eq!(view, listed_view());
    // The cells say what the report says: 3 of 6 updated, a crash loop.
    assert_eq!(view.row.strategy, "OnDelete");
    assert_eq!(view.row.totals.updated, 3);
    assert!(
        view.row
            .top_problem
            .as_deref()
            .is_some_and(|p| p.starts_with('1') || p.starts_with('2')),
        "{:?}",
        view.row.top_problem
    );
    assert_eq!(
        view.identities.len(),
        2,
        "two templates run: {:?}",
        view.identities
    );
}

#[test]
fn a_failed_stream_makes_the_row_stale_since_the_failure() {
    let mut cache = mid_rollout();
    cache.apply(
        WatchUpdate::Error(StreamKind::Pods, "connection refused".to_owned()),
        at_offset(3),
    );
    let observed = observe(&cache, &agent(), &first(), at_offset(15));
    assert_eq!(observed.link.text(at_offset(15)), "stale 12s");
    assert_eq!(observed.link.state(), ConnectionState::Stale);
    let Link::Stale { why, .. } = &observed.link else {
        panic!("{:?}", observed.link)
    };
    assert!(why.contains("connection refused"), "{why}");
}

#[test]
fn a_daemonset_absent_from_the_listed_cluster_is_not_found() {
    let mut cache = fixtures::started();
    fixtures::list(&mut cache, WatchUpdate::Node, fixtures::nodes());
    fixtures::list(&mut cache, WatchUpdate::DaemonSet, Vec::new());
    let observed = observe(&cache, &agent(), &first(), now());
    assert_eq!(observed.link.text(now()), "not found");
    assert_eq!(observed.link.state(), ConnectionState::NotFound);
    assert_eq!(observed.view, None);
}

#[test]
fn loading_until_the_lists_the_row_reads_are_in() {
    let mut cache = fixtures::started();
    fixtures::list(&mut cache, WatchUpdate::Node, fixtures::nodes());
    fixtures::list(
        &mut cache,
        WatchUpdate::DaemonSet,
        vec![fixtures::agent_v2()],
    );
    let observed = observe(&cache, &agent(), &first(), at_offset(4));
    assert_eq!(observed.link, Link::Loading { since: now() });
    assert_eq!(observed.link.text(at_offset(4)), "loading 4s");
    assert_eq!(observed.view, None, "no cells from half-listed pods");
}

#[test]
fn a_cluster_that_never_listed_is_loading_then_unreachable_never_stale() {
    let mut cache = fixtures::started();
    cache.apply(
        WatchUpdate::Error(
            StreamKind::Nodes,
            "error trying to connect: tcp connect error: connection refused".to_owned(),
        ),
        at_offset(1),
    );
    let early = observe(&cache, &agent(), &first(), at_offset(12));
    assert_eq!(early.link.text(at_offset(12)), "loading 12s");
    let late = observe(&cache, &agent(), &first(), at_offset(30));
    assert_eq!(late.link.state(), ConnectionState::Unreachable);
    assert_eq!(
        late.link.text(at_offset(30)),
        "unreachable: connection refused"
    );
    let Link::Failed { message, .. } = &late.link else {
        panic!("{:?}", late.link)
    };
    assert!(message.contains("within 30s"), "{message}");
    // A server that accepts and says nothing: the same, in words.
    let silent = observe(&fixtures::started(), &agent(), &first(), at_offset(31));
    assert_eq!(silent.link.text(at_offset(31)), "unreachable: no answer");
}

#[test]
fn a_cluster_once_live_goes_stale_not_unreachable() {
    let mut cache = mid_rollout();
    cache.apply(
        WatchUpdate::Error(StreamKind::Nodes, "connection refused".to_owned()),
        at_offset(40),
    );
    let observed = observe(&cache, &agent(), &first(), at_offset(100));
    assert_eq!(observed.link.text(at_offset(100)), "stale 60s");
}

#[test]
fn the_revisions_cell_leaves_out_templates_no_node_runs() {
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let v2 = fixtures::agent_v2();
    let v3 = daemonset("registry.example/agent:v3").on_delete().build();
    let revisions = vec![
        revision_of(&v1, "h1", 1),
        revision_of(&v2, "h2", 2),
        revision_of(&v3, "h3", 3),
    ];
    let snapshot = Snapshot::new(v3, fixtures::nodes(), fixtures::pods(), revisions);
    let read = Read::of(&snapshot, now()).expect("the report builds");
    assert!(
        read.status.summary.revisions.iter().any(|r| r.nodes == 0),
        "the new template runs nowhere yet: {:?}",
        read.status.summary.revisions
    );
    let view = ClusterView::of(&read);
    assert_eq!(view.identities.len(), 2, "{:?}", view.identities);
    assert!(view.identities.iter().all(|i| i.nodes > 0));
}

#[test]
fn a_forbidden_daemonset_list_says_forbidden() {
    let mut cache = Cache::new();
    cache.stream_started(StreamKind::DaemonSets);
    cache.apply(
        WatchUpdate::Forbidden(StreamKind::DaemonSets, "daemonsets is forbidden".into()),
        now(),
    );
    assert_eq!(
        observe(&cache, &agent(), &first(), now()).link.text(now()),
        "forbidden"
    );
}

#[test]
fn connection_cells_carry_the_errors_gist() {
    let cases = [
        (
            ConnectionState::Unreachable,
            "connecting to https://10.0.0.1:6443: connection refused",
            "unreachable: connection refused",
        ),
        (
            ConnectionState::Auth,
            "exec plugin timed out",
            "auth: exec plugin timed out",
        ),
    ];
    for (state, message, text) in cases {
        let link = Link::Failed {
            state,
            message: message.to_owned(),
        };
        assert_eq!(link.text(now()), text);
    }
}

/// A matrix of three clusters: two on v2, one drifted to v3.
fn three() -> Matrix {
    let mut matrix = Matrix::new(
        "kube-system/agent".to_owned(),
        vec!["prod-a".into(), "prod-b".into(), "staging".into()],
        None,
    );
    let view = listed_view();
    let mut drifted = view.clone();
    drifted.template = crate::fleet::template::TemplateIdentity::of(
        &daemonset("registry.example/agent:v3")
            .build()
            .spec
            .expect("spec")
            .template,
    );
    for (index, view) in [view.clone(), view, drifted].into_iter().enumerate() {
        matrix.observe(
            index,
            Observation {
                link: Link::Live,
                view: Some(view),
            },
        );
    }
    matrix
}

#[test]
fn the_cluster_off_the_majority_template_drifts_in_the_image() {
    let matrix = three();
    let reference = matrix.reference_identity().cloned();
    assert!(matrix.drift_of(0, reference.as_ref()).is_empty());
    let drift = matrix.drift_of(2, reference.as_ref());
    assert_eq!(
        drift.first().map(|d| d.field.as_str()),
        Some("image"),
        "{drift:?}"
    );
    let totals = matrix.totals();
    assert_eq!((totals.live, totals.drifted), (3, 1));
    assert_eq!(totals.updated, 9, "3 updated in each of three clusters");
}

#[test]
fn a_reference_context_decides_what_drifts() {
    let mut matrix = three();
    matrix.reference = Some("staging".to_owned());
    let reference = matrix.reference_identity().cloned();
    assert_eq!(matrix.drift_of(2, reference.as_ref()), Vec::new());
    assert_eq!(matrix.totals().drifted, 2);
}

#[test]
fn filter_by_context_or_digest_and_sort_by_trouble() {
    let mut matrix = three();
    matrix.filter_input = Some("PROD".to_owned());
    matrix.apply_filter();
    assert_eq!(matrix.visible(), [0, 1]);
    let digest = matrix.rows[2]
        .view
        .as_ref()
        .map(|v| v.template.digest[..6].to_owned())
        .expect("read");
    matrix.filter_input = Some(digest);
    matrix.apply_filter();
    assert_eq!(matrix.visible(), [2]);
    matrix.clear_filter();
    matrix.set_link(
        1,
        Link::Failed {
            state: ConnectionState::Unreachable,
            message: "connection refused".into(),
        },
    );
    matrix.sort = SortBy::Trouble;
    assert_eq!(matrix.visible(), [1, 2, 0], "not live, then drifted");
    matrix.move_by(5);
    assert_eq!(matrix.selected_row(), Some(0));
    matrix.cycle_sort();
    assert_eq!(matrix.sort, SortBy::Progress);
    assert_eq!(
        matrix.selected_row(),
        Some(0),
        "the selection follows the cluster"
    );
}

#[test]
fn a_stale_row_keeps_its_last_cells_and_a_failed_one_drops_them() {
    let mut matrix = three();
    matrix.observe(
        0,
        Observation {
            link: Link::Stale {
                since: now(),
                why: "pods: connection refused".into(),
            },
            view: None,
        },
    );
    assert!(matrix.rows[0].view.is_some());
    matrix.set_link(
        0,
        Link::Failed {
            state: ConnectionState::Unreachable,
            message: "gone".into(),
        },
    );
    assert!(matrix.rows[0].view.is_none());
}
