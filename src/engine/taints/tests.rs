//! Toleration matching (upstream `Toleration.ToleratesTaint`) and the default
//! daemon pod tolerations (`util.AddOrUpdateDaemonPodTolerations`).

use super::{
    TaintVerdict, daemon_pod_tolerations, format_taint, format_toleration, taint_verdict,
    tolerates, toleration_for,
};
use crate::engine::eligibility::fixtures::{taint, template, toleration};

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one row per case reads best as one table"
)]
fn tolerates_table() {
    // (name, toleration key, operator, value, effect, taint key, value, effect, tolerated)
    let rows: &[(&str, [&str; 4], [&str; 3], bool)] = &[
        (
            "Equal same key value effect",
            ["k", "Equal", "v", "NoSchedule"],
            ["k", "v", "NoSchedule"],
            true,
        ),
        (
            "Equal other value",
            ["k", "Equal", "v", "NoSchedule"],
            ["k", "w", "NoSchedule"],
            false,
        ),
        (
            "empty operator means Equal",
            ["k", "", "v", "NoSchedule"],
            ["k", "v", "NoSchedule"],
            true,
        ),
        (
            "empty operator, empty value matches a taint without value",
            ["k", "", "", "NoSchedule"],
            ["k", "", "NoSchedule"],
            true,
        ),
        (
            "empty operator, empty value against a valued taint",
            ["k", "", "", "NoSchedule"],
            ["k", "v", "NoSchedule"],
            false,
        ),
        (
            "Exists ignores the value",
            ["k", "Exists", "", "NoSchedule"],
            ["k", "anything", "NoSchedule"],
            true,
        ),
        (
            "Exists with another key",
            ["k", "Exists", "", ""],
            ["other", "", "NoSchedule"],
            false,
        ),
        (
            "empty effect matches every effect",
            ["k", "Exists", "", ""],
            ["k", "", "NoExecute"],
            true,
        ),
        (
            "effect must be equal when set",
            ["k", "Exists", "", "NoSchedule"],
            ["k", "", "NoExecute"],
            false,
        ),
        (
            "Exists without key matches every key",
            ["", "Exists", "", ""],
            ["any/key", "v", "NoExecute"],
            true,
        ),
        (
            "Exists without key keeps its effect filter",
            ["", "Exists", "", "NoSchedule"],
            ["any", "v", "NoExecute"],
            false,
        ),
        // Upstream skips the key check for an empty key even with Equal (validation forbids it).
        (
            "Equal without key compares only the value",
            ["", "Equal", "v", ""],
            ["any", "v", "NoSchedule"],
            true,
        ),
        (
            "unknown operator never matches",
            ["k", "Bogus", "v", ""],
            ["k", "v", "NoSchedule"],
            false,
        ),
        (
            "keys are case sensitive",
            ["K", "Exists", "", ""],
            ["k", "", "NoSchedule"],
            false,
        ),
        // Upstream numeric operators: Lt holds when the taint value is below the toleration's.
        (
            "Lt: taint value below",
            ["k", "Lt", "10", ""],
            ["k", "3", "NoSchedule"],
            true,
        ),
        (
            "Lt: taint value equal",
            ["k", "Lt", "10", ""],
            ["k", "10", "NoSchedule"],
            false,
        ),
        (
            "Gt: taint value above",
            ["k", "Gt", "10", ""],
            ["k", "11", "NoSchedule"],
            true,
        ),
        (
            "Gt: non-integer taint value",
            ["k", "Gt", "10", ""],
            ["k", "eleven", "NoSchedule"],
            false,
        ),
        (
            "Gt: non-integer toleration value",
            ["k", "Gt", "ten", ""],
            ["k", "11", "NoSchedule"],
            false,
        ),
    ];
    for (name, [tk, op, tv, te], [k, v, e], expected) in rows {
        let got = tolerates(&toleration(tk, op, tv, te), &taint(k, v, e));
        assert_eq!(got, *expected, "{name}");
    }
}

#[test]
fn toleration_for_returns_the_first_match() {
    let tolerations = [
        toleration("a", "Exists", "", "NoExecute"),
        toleration("b", "Equal", "1", ""),
        toleration("", "Exists", "", ""),
    ];
    let found = toleration_for(&taint("b", "1", "NoSchedule"), &tolerations);
    assert_eq!(found, Some(&tolerations[1]));
    let found = toleration_for(&taint("c", "", "NoSchedule"), &tolerations);
    assert_eq!(found, Some(&tolerations[2]));
    assert_eq!(
        toleration_for(&taint("c", "", "NoSchedule"), &tolerations[..2]),
        None
    );
}

fn keys_and_effects(spec: &k8s_openapi::api::core::v1::PodSpec) -> Vec<(String, String)> {
    daemon_pod_tolerations(spec)
        .into_iter()
        .map(|t| (t.key.unwrap_or_default(), t.effect.unwrap_or_default()))
        .collect()
}

#[test]
fn defaults_without_host_network() {
    let got = keys_and_effects(&template().spec());
    let want = [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(k, e)| ((*k).to_owned(), (*e).to_owned()))
        .collect();
    assert_eq!(got, want);
    for t in daemon_pod_tolerations(&template().spec()) {
        assert_eq!(t.operator.as_deref(), Some("Exists"));
        assert_eq!(
            t.toleration_seconds, None,
            "defaults never evict after a delay"
        );
    }
}

#[test]
fn host_network_adds_network_unavailable() {
    let got = keys_and_effects(&template().host_network().spec());
    assert_eq!(got.len(), 7);
    assert_eq!(
        got.last().map(|(k, e)| (k.as_str(), e.as_str())),
        Some(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    );
}

#[test]
fn template_tolerations_come_first_and_stay() {
    let spec = template()
        .toleration(toleration("dedicated", "Equal", "gpu", "NoSchedule"))
        .spec();
    let all = daemon_pod_tolerations(&spec);
    assert_eq!(all.len(), 7);
    assert_eq!(all[0].key.as_deref(), Some("dedicated"));
}

#[test]
fn a_matching_template_toleration_is_replaced_by_the_default() {
    // Upstream AddOrUpdateTolerationInPodSpec: same key/operator/value/effect is the same
    // entry, and the controller's version (no tolerationSeconds) wins in place.
    let mut with_seconds = toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute");
    with_seconds.toleration_seconds = Some(300);
    let spec = template().toleration(with_seconds).spec();
    let all = daemon_pod_tolerations(&spec);
    assert_eq!(all.len(), 6);
    assert_eq!(all[0].key.as_deref(), Some("node.kubernetes.io/not-ready"));
    assert_eq!(all[0].toleration_seconds, None);
}

#[test]
fn a_similar_but_different_template_toleration_is_kept() {
    // Operator Equal is a different entry from the default's Exists, so both stay.
    let spec = template()
        .toleration(toleration(
            "node.kubernetes.io/not-ready",
            "Equal",
            "",
            "NoExecute",
        ))
        .spec();
    assert_eq!(daemon_pod_tolerations(&spec).len(), 7);
}

#[test]
fn formatting() {
    assert_eq!(
        format_taint(&taint("dedicated", "gpu", "NoSchedule")),
        "dedicated=gpu:NoSchedule"
    );
    assert_eq!(
        format_taint(&taint("node.kubernetes.io/unschedulable", "", "NoSchedule")),
        "node.kubernetes.io/unschedulable:NoSchedule"
    );
    assert_eq!(
        format_toleration(&toleration("", "Exists", "", "")),
        "everything"
    );
    assert_eq!(
        format_toleration(&toleration("rank", "Lt", "5", "NoSchedule")),
        "rank Lt 5:NoSchedule"
    );
    assert_eq!(
        format_toleration(&toleration("k", "Exists", "", "NoExecute")),
        "k:NoExecute"
    );
    assert_eq!(format_toleration(&toleration("k", "", "v", "")), "k=v");
    let mut timed = toleration("k", "Exists", "", "NoExecute");
    timed.toleration_seconds = Some(30);
    assert_eq!(format_toleration(&timed), "k:NoExecute for 30s");
}

#[test]
fn an_identical_template_toleration_leaves_the_list_untouched() {
    // Upstream returns early on a deep-equal entry, so a second, timed copy of the
    // same toleration keeps its tolerationSeconds.
    let plain = toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute");
    let mut timed = plain.clone();
    timed.toleration_seconds = Some(60);
    let spec = template().toleration(timed).toleration(plain).spec();
    let all = daemon_pod_tolerations(&spec);
    assert_eq!(all[0].toleration_seconds, Some(60));
    assert_eq!(all[1].toleration_seconds, None);
    assert_eq!(all.len(), 7);
}

/// Upstream's DaemonSet predicates filter the node's taints to `NoSchedule`
/// and `NoExecute` before asking whether the pod tolerates them: an
/// untolerated `PreferNoSchedule` (or unknown) taint is ignored, not blocking.
#[test]
fn only_no_schedule_and_no_execute_taints_block_a_daemon_pod() {
    let tolerations = [toleration("dedicated", "Exists", "", "")];
    assert_eq!(
        taint_verdict(&taint("dedicated", "gpu", "NoSchedule"), &tolerations),
        TaintVerdict::Tolerated(&tolerations[0])
    );
    let untolerated = [
        ("NoSchedule", TaintVerdict::Blocks),
        ("NoExecute", TaintVerdict::Blocks),
        ("PreferNoSchedule", TaintVerdict::Ignored),
        ("Someday", TaintVerdict::Ignored),
    ];
    for (effect, verdict) in untolerated {
        assert_eq!(
            taint_verdict(&taint("spot", "", effect), &tolerations),
            verdict,
            "{effect}"
        );
    }
}
