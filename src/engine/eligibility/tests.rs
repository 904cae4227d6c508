//! Table tests of `node_should_run_daemon_pod`, after upstream
//! `TestNodeShouldRunDaemonPod` and the DaemonSet documentation, plus properties.

use proptest::prelude::*;

use super::fixtures::{expr, node, taint, template, term, toleration};
use super::{ReasonCode, node_should_run_daemon_pod};
use crate::model::Node;
use k8s_openapi::api::apps::v1::DaemonSet;

use ReasonCode::{NodeAffinityMismatch, NodeNameMismatch, NodeSelectorMismatch, UntoleratedTaint};

struct Case {
    name: &'static str,
    node: Node,
    ds: DaemonSet,
    should_run: bool,
    should_continue_running: bool,
    codes: &'static [ReasonCode],
    message: Option<&'static str>,
}

#[expect(
    clippy::too_many_lines,
    reason = "one row per case reads best as one table"
)]
fn cases() -> Vec<Case> {
    let plain = || node("node-1", &[("disktype", "ssd"), ("zone", "a")], &[]);
    let tainted =
        |key: &str, value: &str, effect: &str| node("node-1", &[], &[taint(key, value, effect)]);
    let row = |name, node, ds, run, keep, codes, message| Case {
        name,
        node,
        ds,
        should_run: run,
        should_continue_running: keep,
        codes,
        message,
    };
    vec![
        row(
            "empty template runs everywhere",
            plain(),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "nodeName equal to the node",
            plain(),
            template().node_name("node-1").daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "nodeName pins another node: neither run nor continue",
            plain(),
            template().node_name("node-7").daemonset(),
            false,
            false,
            &[NodeNameMismatch],
            Some("template nodeName pins node-7"),
        ),
        row(
            "nodeSelector matches",
            plain(),
            template().node_selector(&[("disktype", "ssd")]).daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "nodeSelector label missing",
            node("node-1", &[], &[]),
            template().node_selector(&[("disktype", "ssd")]).daemonset(),
            false,
            false,
            &[NodeSelectorMismatch],
            Some("nodeSelector disktype=ssd: label missing"),
        ),
        row(
            "nodeSelector label has another value",
            node("node-1", &[("disktype", "hdd")], &[]),
            template().node_selector(&[("disktype", "ssd")]).daemonset(),
            false,
            false,
            &[NodeSelectorMismatch],
            Some("nodeSelector disktype=ssd: label is hdd"),
        ),
        row(
            "required affinity term does not match",
            plain(),
            template()
                .required(vec![term(&[expr("zone", "NotIn", &["a", "b"])], &[])])
                .daemonset(),
            false,
            false,
            &[NodeAffinityMismatch],
            Some("affinity term 1: zone NotIn [a,b]"),
        ),
        row(
            "untolerated NoSchedule: no new pod, the running one stays",
            tainted("dedicated", "gpu", "NoSchedule"),
            template().daemonset(),
            false,
            true,
            &[UntoleratedTaint],
            Some("taint dedicated=gpu:NoSchedule not tolerated"),
        ),
        row(
            "untolerated NoExecute: neither run nor continue",
            tainted("dedicated", "gpu", "NoExecute"),
            template().daemonset(),
            false,
            false,
            &[UntoleratedTaint],
            Some("taint dedicated=gpu:NoExecute not tolerated"),
        ),
        row(
            "PreferNoSchedule never blocks",
            tainted("dedicated", "gpu", "PreferNoSchedule"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "an unknown effect never blocks (upstream filters NoSchedule/NoExecute only)",
            tainted("dedicated", "gpu", "Sometimes"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "tolerated NoSchedule taint",
            tainted("dedicated", "gpu", "NoSchedule"),
            template()
                .toleration(toleration("dedicated", "Equal", "gpu", "NoSchedule"))
                .daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "tolerated NoExecute but untolerated NoSchedule: keeps running",
            node(
                "node-1",
                &[],
                &[taint("a", "", "NoExecute"), taint("b", "", "NoSchedule")],
            ),
            template()
                .toleration(toleration("a", "Exists", "", "NoExecute"))
                .daemonset(),
            false,
            true,
            &[UntoleratedTaint],
            Some("taint b:NoSchedule not tolerated"),
        ),
        row(
            "both NoSchedule and NoExecute untolerated: both reported",
            node(
                "node-1",
                &[],
                &[taint("a", "", "NoSchedule"), taint("b", "1", "NoExecute")],
            ),
            template().daemonset(),
            false,
            false,
            &[UntoleratedTaint, UntoleratedTaint],
            None,
        ),
        row(
            "default toleration: not-ready NoExecute",
            tainted("node.kubernetes.io/not-ready", "", "NoExecute"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "default toleration: unreachable NoExecute",
            tainted("node.kubernetes.io/unreachable", "", "NoExecute"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "default toleration: disk-pressure NoSchedule",
            tainted("node.kubernetes.io/disk-pressure", "", "NoSchedule"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "default toleration: memory-pressure NoSchedule",
            tainted("node.kubernetes.io/memory-pressure", "", "NoSchedule"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "default toleration: pid-pressure NoSchedule",
            tainted("node.kubernetes.io/pid-pressure", "", "NoSchedule"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "default toleration: unschedulable (cordon) NoSchedule",
            tainted("node.kubernetes.io/unschedulable", "", "NoSchedule"),
            template().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "not-ready NoSchedule is not a default toleration (only its NoExecute is)",
            tainted("node.kubernetes.io/not-ready", "", "NoSchedule"),
            template().daemonset(),
            false,
            true,
            &[UntoleratedTaint],
            Some("taint node.kubernetes.io/not-ready:NoSchedule not tolerated"),
        ),
        row(
            "network-unavailable blocks pods without hostNetwork",
            tainted("node.kubernetes.io/network-unavailable", "", "NoSchedule"),
            template().daemonset(),
            false,
            true,
            &[UntoleratedTaint],
            None,
        ),
        row(
            "network-unavailable is tolerated for hostNetwork pods",
            tainted("node.kubernetes.io/network-unavailable", "", "NoSchedule"),
            template().host_network().daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "operator Exists without key tolerates every taint",
            node(
                "node-1",
                &[],
                &[taint("a", "1", "NoExecute"), taint("b", "", "NoSchedule")],
            ),
            template()
                .toleration(toleration("", "Exists", "", ""))
                .daemonset(),
            true,
            true,
            &[],
            None,
        ),
        row(
            "placement failure and NoSchedule taint: neither, every reason listed",
            node("node-1", &[], &[taint("a", "", "NoSchedule")]),
            template().node_selector(&[("disktype", "ssd")]).daemonset(),
            false,
            false,
            &[NodeSelectorMismatch, UntoleratedTaint],
            None,
        ),
    ]
}

#[test]
fn node_should_run_daemon_pod_table() {
    for case in cases() {
        let verdict = node_should_run_daemon_pod(&case.node, &case.ds);
        assert_eq!(
            verdict.should_run, case.should_run,
            "{}: shouldRun",
            case.name
        );
        assert_eq!(
            verdict.should_continue_running, case.should_continue_running,
            "{}: shouldContinueRunning",
            case.name
        );
        let codes: Vec<ReasonCode> = verdict.reasons.iter().map(|r| r.code).collect();
        assert_eq!(codes, case.codes, "{}: reason codes", case.name);
        if let Some(message) = case.message {
            assert_eq!(verdict.headline(), Some(message), "{}: message", case.name);
        }
    }
}

#[test]
fn taint_reasons_carry_the_taint_and_whether_they_evict() {
    let node = node(
        "n",
        &[],
        &[taint("a", "", "NoSchedule"), taint("b", "v", "NoExecute")],
    );
    let verdict = node_should_run_daemon_pod(&node, &template().daemonset());
    let evicts: Vec<(Option<&str>, bool)> = verdict
        .reasons
        .iter()
        .map(|r| (r.taint.as_ref().map(|t| t.key.as_str()), r.evicts))
        .collect();
    assert_eq!(evicts, [(Some("a"), false), (Some("b"), true)]);
}

#[test]
fn reasons_serialize_with_the_contract_codes() {
    let node = node("n", &[], &[taint("dedicated", "gpu", "NoSchedule")]);
    let verdict = node_should_run_daemon_pod(&node, &template().node_name("x").daemonset());
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["shouldRun"], false);
    assert_eq!(json["shouldContinueRunning"], false);
    assert_eq!(json["reasons"][0]["code"], "NodeNameMismatch");
    assert_eq!(json["reasons"][1]["code"], "UntoleratedTaint");
    assert_eq!(json["reasons"][1]["taint"]["key"], "dedicated");
}

const KEYS: &[&str] = &[
    "a",
    "dedicated",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/network-unavailable",
];
const VALUES: &[&str] = &["", "1", "gpu", "7"];
const EFFECTS: &[&str] = &["NoSchedule", "NoExecute", "PreferNoSchedule"];
const OPERATORS: &[&str] = &["", "Equal", "Exists", "Lt", "Gt", "Bogus"];

fn any_taint() -> impl Strategy<Value = crate::model::Taint> {
    (
        prop::sample::select(KEYS),
        prop::sample::select(VALUES),
        prop::sample::select(EFFECTS),
    )
        .prop_map(|(k, v, e)| taint(k, v, e))
}

fn any_toleration() -> impl Strategy<Value = k8s_openapi::api::core::v1::Toleration> {
    (
        prop::sample::select([&[""], KEYS].concat()),
        prop::sample::select(OPERATORS),
        prop::sample::select(VALUES),
        prop::sample::select([&[""], EFFECTS].concat()),
    )
        .prop_map(|(k, o, v, e)| toleration(k, o, v, e))
}

fn any_template() -> impl Strategy<Value = super::fixtures::Template> {
    (
        prop::collection::vec(any_toleration(), 0..4),
        any::<bool>(),
        prop::option::of(prop::sample::select(&["a", "b"][..])),
        prop::option::of(prop::sample::select(
            &["In", "NotIn", "Exists", "DoesNotExist", "Gt"][..],
        )),
    )
        .prop_map(|(tolerations, host_network, zone, operator)| {
            let mut t = template();
            for tol in tolerations {
                t = t.toleration(tol);
            }
            if host_network {
                t = t.host_network();
            }
            if let Some(zone) = zone {
                t = t.node_selector(&[("zone", zone)]);
            }
            if let Some(operator) = operator {
                let values: &[&str] = match operator {
                    "In" | "NotIn" => &["a"],
                    "Gt" => &["3"],
                    _ => &[],
                };
                t = t.required(vec![term(&[expr("zone", operator, values)], &[])]);
            }
            t
        })
}

fn any_node() -> impl Strategy<Value = Node> {
    (
        prop::collection::vec(any_taint(), 0..4),
        prop::option::of(prop::sample::select(&["a", "b", "5"][..])),
    )
        .prop_map(|(taints, zone)| match zone {
            Some(zone) => node("n", &[("zone", zone)], &taints),
            None => node("n", &[], &taints),
        })
}

proptest! {
    #[test]
    fn should_run_implies_should_continue_running(node in any_node(), template in any_template()) {
        let verdict = node_should_run_daemon_pod(&node, &template.daemonset());
        prop_assert!(!verdict.should_run || verdict.should_continue_running);
        prop_assert_eq!(verdict.should_run, verdict.reasons.is_empty());
    }

    #[test]
    fn adding_a_toleration_never_turns_yes_into_no(
        node in any_node(),
        template in any_template(),
        extra in any_toleration(),
    ) {
        let before = node_should_run_daemon_pod(&node, &template.clone().daemonset());
        let after = node_should_run_daemon_pod(&node, &template.toleration(extra).daemonset());
        prop_assert!(!before.should_run || after.should_run);
        prop_assert!(!before.should_continue_running || after.should_continue_running);
    }

    #[test]
    fn exists_without_key_tolerates_every_taint(taints in prop::collection::vec(any_taint(), 0..6)) {
        let node = node("n", &[], &taints);
        let ds = template().toleration(toleration("", "Exists", "", "")).daemonset();
        let verdict = node_should_run_daemon_pod(&node, &ds);
        prop_assert!(verdict.should_run && verdict.should_continue_running);
    }
}
