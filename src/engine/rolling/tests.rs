use super::*;
use crate::engine::fixtures::{at, daemonset, pod, revision_of};
use k8s_openapi::api::apps::v1::DaemonSetUpdateStrategy;
use proptest::prelude::*;

fn int(v: i32) -> IntOrString {
    IntOrString::Int(v)
}

fn pct(v: &str) -> IntOrString {
    IntOrString::String(v.to_owned())
}

#[test]
fn budgets_follow_updated_desired_node_counts() {
    // (name, maxUnavailable, maxSurge, desired, expected (maxUnavailable, maxSurge, fell back))
    let cases = vec![
        ("plain ints", int(2), int(0), 10, (2, 0, false)),
        (
            "percent_budget_rounds_up",
            pct("10%"),
            int(0),
            15,
            (2, 0, false),
        ),
        (
            "percent surge rounds up",
            int(0),
            pct("25%"),
            5,
            (0, 2, false),
        ),
        (
            "one percent of one node is one",
            pct("1%"),
            int(0),
            1,
            (1, 0, false),
        ),
        (
            "zero_and_zero_budget_falls_back_to_one_unavailable",
            int(0),
            int(0),
            4,
            (1, 0, true),
        ),
        (
            "zero percent and zero falls back too",
            pct("0%"),
            pct("0%"),
            4,
            (1, 0, true),
        ),
        (
            "no fallback with nothing to schedule",
            int(0),
            int(0),
            0,
            (0, 0, false),
        ),
        (
            "percent of zero desired is zero",
            pct("50%"),
            int(0),
            0,
            (0, 0, false),
        ),
        ("100 percent", pct("100%"), int(0), 7, (7, 0, false)),
    ];
    for (name, unavailable, surge, desired, (mu, ms, fell_back)) in cases {
        let ds = daemonset("a").rolling(unavailable, surge).build();
        let budget = rolling_budget(&ds, desired).expect(name).expect(name);
        assert_eq!(
            (
                budget.max_unavailable,
                budget.max_surge,
                budget.fell_back_to_one_unavailable
            ),
            (mu, ms, fell_back),
            "{name}"
        );
    }
}

#[test]
fn budget_errors_and_strategies() {
    let bad = daemonset("a").rolling(pct("1"), int(0)).build();
    assert!(matches!(
        rolling_budget(&bad, 3),
        Err(RollingError::InvalidBudget {
            field: "maxUnavailable",
            ..
        })
    ));
    let bad_surge = daemonset("a").rolling(int(1), pct("x%")).build();
    assert!(rolling_budget(&bad_surge, 3).is_err());
    assert!(
        !allows_surge(&bad_surge),
        "an invalid maxSurge allows no surge"
    );
    let huge = daemonset("a")
        .rolling(pct("9223372036854775807%"), int(0))
        .build();
    assert!(
        rolling_budget(&huge, 3).is_err(),
        "overflow is an invalid budget, not a panic"
    );
    let on_delete = daemonset("a").on_delete().build();
    assert_eq!(rolling_budget(&on_delete, 3), Ok(None));
    assert!(!allows_surge(&on_delete));
    assert!(
        allows_surge(&daemonset("a").rolling(int(0), pct("1%")).build()),
        "AllowsSurge scales against one node, rounding up"
    );
}

#[test]
fn missing_strategy_gets_apps_v1_defaults() {
    let mut ds = daemonset("a").build();
    if let Some(spec) = ds.spec.as_mut() {
        spec.update_strategy = None;
    }
    assert_eq!(
        update_strategy(&ds),
        UpdateStrategy::RollingUpdate {
            max_unavailable: int(1),
            max_surge: int(0)
        }
    );
    if let Some(spec) = ds.spec.as_mut() {
        spec.update_strategy = Some(DaemonSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: None,
        });
    }
    let budget = rolling_budget(&ds, 3).expect("valid").expect("rolling");
    assert_eq!((budget.max_unavailable, budget.max_surge), (1, 0));
}

/// Node states for step tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Empty,
    OldAvailable,
    OldUnavailable,
    NewAvailable,
    NewUnavailable,
    OldAvailableNewUnavailable,
    OldAvailableNewAvailable,
    TwoOld,
}

fn pods_for(node: &str, state: State) -> Vec<Pod> {
    let old = || pod(&format!("{node}-old"), node, "old");
    let new = || pod(&format!("{node}-new"), node, "new").created(5);
    match state {
        State::Empty => vec![],
        State::OldAvailable => vec![old().ready_since(0).build()],
        State::OldUnavailable => vec![old().running_not_ready(0).build()],
        State::NewAvailable => vec![new().ready_since(5).build()],
        State::NewUnavailable => vec![new().running_not_ready(5).build()],
        State::OldAvailableNewUnavailable => vec![
            old().ready_since(0).build(),
            new().running_not_ready(5).build(),
        ],
        State::OldAvailableNewAvailable => {
            vec![old().ready_since(0).build(), new().ready_since(5).build()]
        }
        State::TwoOld => vec![
            old().ready_since(0).build(),
            pod(&format!("{node}-old2"), node, "old")
                .ready_since(0)
                .build(),
        ],
    }
}

struct Fleet {
    pods: Vec<(String, bool, Vec<Pod>)>,
    revisions: RevisionIndex,
}

fn fleet(states: &[State]) -> Fleet {
    let ds = daemonset("agent:2").build();
    let old = daemonset("agent:1").build();
    let revisions = RevisionIndex::new(
        &ds,
        &[revision_of(&old, "old", 1), revision_of(&ds, "new", 2)],
    );
    let pods = states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = format!("n{i:02}");
            let pods = pods_for(&name, *s);
            (name, true, pods)
        })
        .collect();
    Fleet { pods, revisions }
}

fn step(
    f: &Fleet,
    max_unavailable: i32,
    max_surge: i32,
) -> (Vec<String>, Vec<String>, RollingBudget) {
    let slots: Vec<NodeSlot<'_>> = f
        .pods
        .iter()
        .map(|(node, should_run, pods)| NodeSlot {
            node: node.clone(),
            should_run: *should_run,
            pods: pods.iter().collect(),
        })
        .collect();
    let budget = RollingBudget {
        desired: i32::try_from(slots.len()).unwrap_or(0),
        max_unavailable,
        max_surge,
        ..RollingBudget::default()
    };
    let judge = Judge {
        revisions: &f.revisions,
        min_ready_seconds: 0,
        now: at(100),
    };
    let step = plan_rolling_step(&slots, budget, judge);
    let deleted = step
        .delete
        .iter()
        .map(|(p, _, _)| p.name().to_owned())
        .collect();
    let created = step.create_on.iter().map(|(n, _)| n.clone()).collect();
    (deleted, created, step.budget)
}

/// (name, node states, maxUnavailable, maxSurge, deleted pods, created-on nodes)
type StepCase = (
    &'static str,
    Vec<State>,
    i32,
    i32,
    Vec<&'static str>,
    Vec<&'static str>,
);

#[test]
fn rolling_step_tables() {
    use State::*;
    // (name, states, maxUnavailable, maxSurge, deleted pods, created-on nodes)
    let cases: Vec<StepCase> = vec![
        (
            "without surge deletes up to maxUnavailable old pods",
            vec![OldAvailable, OldAvailable, OldAvailable],
            2,
            0,
            vec!["n00-old", "n01-old"],
            vec![],
        ),
        (
            "already unavailable new pods count first",
            vec![NewUnavailable, OldAvailable, OldAvailable],
            2,
            0,
            vec!["n01-old"],
            vec![],
        ),
        (
            "missing pod counts as unavailable",
            vec![Empty, OldAvailable],
            1,
            0,
            vec![],
            vec![],
        ),
        (
            "unavailable old pod is replaced even with no room left",
            vec![NewUnavailable, OldUnavailable, OldAvailable],
            1,
            0,
            vec!["n01-old"],
            vec![],
        ),
        (
            "excess pods on a node count as unavailable",
            vec![TwoOld, OldAvailable],
            1,
            0,
            vec![],
            vec![],
        ),
        (
            "updated fleet does nothing",
            vec![NewAvailable, NewAvailable],
            1,
            0,
            vec![],
            vec![],
        ),
        (
            "surge creates new pods within maxSurge",
            vec![OldAvailable, OldAvailable, OldAvailable],
            0,
            2,
            vec![],
            vec!["n00", "n01"],
        ),
        (
            "surge_waits_for_new_pod_available_before_deleting_old",
            vec![OldAvailableNewUnavailable, OldAvailable],
            0,
            1,
            vec![],
            vec![],
        ),
        (
            "surge deletes old once new is available",
            vec![OldAvailableNewAvailable, OldAvailable],
            0,
            1,
            vec!["n00-old"],
            vec!["n01"],
        ),
        (
            "surge replaces an unavailable old pod at once, beyond maxSurge",
            vec![OldAvailableNewUnavailable, OldUnavailable],
            0,
            1,
            vec![],
            vec!["n01"],
        ),
    ];
    for (name, states, mu, ms, deleted, created) in cases {
        let f = fleet(&states);
        let (got_deleted, got_created, _) = step(&f, mu, ms);
        assert_eq!(got_deleted, deleted, "{name}: deleted");
        assert_eq!(got_created, created, "{name}: created");
    }
}

#[test]
fn surge_deletes_old_pods_on_ineligible_nodes_only_above_desired_availability() {
    let f = fleet(&[State::NewAvailable, State::OldAvailable]);
    let slots_for = |should_run_second: bool| -> Vec<NodeSlot<'_>> {
        f.pods
            .iter()
            .enumerate()
            .map(|(i, (node, _, pods))| NodeSlot {
                node: node.clone(),
                should_run: i == 0 || should_run_second,
                pods: pods.iter().collect(),
            })
            .collect()
    };
    let judge = Judge {
        revisions: &f.revisions,
        min_ready_seconds: 0,
        now: at(100),
    };
    // Desired 1 (only n00 should run), 2 available: one may go.
    let budget = RollingBudget {
        desired: 1,
        max_surge: 1,
        ..RollingBudget::default()
    };
    let step = plan_rolling_step(&slots_for(false), budget.clone(), judge);
    assert_eq!(step.delete.len(), 1);
    assert_eq!(step.delete[0].2, RollingReason::NodeNoLongerEligible);
    // Desired 2 with 2 available: nothing to spare.
    let step = plan_rolling_step(
        &slots_for(false),
        RollingBudget {
            desired: 2,
            ..budget
        },
        judge,
    );
    assert!(step.delete.is_empty());
}

fn arb_state() -> impl Strategy<Value = State> {
    prop_oneof![
        Just(State::Empty),
        Just(State::OldAvailable),
        Just(State::OldUnavailable),
        Just(State::NewAvailable),
        Just(State::NewUnavailable),
        Just(State::TwoOld),
    ]
}

fn is_unavailable(state: State) -> bool {
    !matches!(state, State::OldAvailable | State::NewAvailable)
}

proptest! {
    /// Without surge, after the step's deletions the unavailable nodes never exceed
    /// maxUnavailable, unless they already did before (then nothing available is deleted).
    #[test]
    fn rolling_step_never_exceeds_max_unavailable(states in prop::collection::vec(arb_state(), 1..25), max_unavailable in 1i32..6) {
        let f = fleet(&states);
        let (deleted, created, budget) = step(&f, max_unavailable, 0);
        prop_assert!(created.is_empty());
        let before = states.iter().filter(|s| is_unavailable(**s)).count();
        let newly = states
            .iter()
            .enumerate()
            .filter(|(i, s)| matches!(s, State::OldAvailable) && deleted.contains(&format!("n{i:02}-old")))
            .count();
        let after = i32::try_from(before + newly).unwrap_or(i32::MAX);
        prop_assert!(after <= max_unavailable.max(i32::try_from(before).unwrap_or(i32::MAX)));
        prop_assert_eq!(budget.unavailable_now, i32::try_from(before).unwrap_or(i32::MAX));
    }

    /// With surge, new pods beside available old ones never exceed maxSurge.
    #[test]
    fn surge_step_never_exceeds_max_surge(states in prop::collection::vec(arb_state(), 1..25), max_surge in 1i32..6) {
        let f = fleet(&states);
        let (deleted, created, _) = step(&f, 0, max_surge);
        prop_assert!(deleted.is_empty(), "no node has both pods, so nothing old is deleted");
        let for_available_old = created
            .iter()
            .filter(|n| n[1..].parse::<usize>().ok().and_then(|i| states.get(i)) == Some(&State::OldAvailable))
            .count();
        let in_flight = states.iter().filter(|s| matches!(s, State::TwoOld)).count();
        prop_assert!(i32::try_from(for_available_old + in_flight).unwrap_or(i32::MAX) <= max_surge.max(i32::try_from(in_flight).unwrap_or(0)));
    }
}
