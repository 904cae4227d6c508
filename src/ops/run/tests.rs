//! The run state machine, step by step: what it writes at its start, per
//! batch and at its end, and what it says — the same for every executor.

use k8s_openapi::api::apps::v1::{DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::*;
use crate::engine::fixtures::{node, pod};
use crate::model::DaemonSet;
use crate::ops::auto::AutoPolicy;
use crate::ops::run::fleet_run::FleetRunName;
use crate::ops::state::Pause;
use crate::ops::testing::{NEW, OLD, all_old, ds, ready_pod, replace, snapshot, t};

fn nodes(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("n{i:02}")).collect()
}

fn names(nodes: &[String]) -> Vec<&str> {
    nodes.iter().map(String::as_str).collect()
}

fn settings(batch: usize) -> RunSettings {
    RunSettings::auto(AutoPolicy {
        batch,
        soak: std::time::Duration::ZERO,
        timeout: std::time::Duration::from_secs(60),
    })
}

/// A RollingUpdate DaemonSet with this `maxUnavailable` (and no surge).
fn rolling(max_unavailable: IntOrString) -> DaemonSet {
    let mut ds = ds(true, &[]);
    if let Some(spec) = ds.spec.as_mut() {
        spec.update_strategy = Some(DaemonSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDaemonSet {
                max_unavailable: Some(max_unavailable),
                max_surge: Some(IntOrString::Int(0)),
            }),
        });
    }
    ds
}

/// The DaemonSet as it is once a run took it over: OnDelete, its own
/// strategy saved in the state.
fn taken_over(original: &DaemonSet, start: &WriteRequest) -> DaemonSet {
    let Write::PatchStrategy { after, .. } = &start.write else {
        panic!("a takeover switches the strategy: {start:?}")
    };
    let mut ds = original.clone();
    if let Some(spec) = ds.spec.as_mut() {
        spec.update_strategy = Some(DaemonSetUpdateStrategy {
            type_: Some("OnDelete".into()),
            rolling_update: None,
        });
    }
    let annotations = annotations_of(after);
    ds.metadata.annotations = Some(annotations);
    ds
}

/// The annotations that store `state`.
fn annotations_of(state: &RolloutState) -> std::collections::BTreeMap<String, String> {
    state
        .to_annotations()
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
        .collect()
}

/// The run's next turn past any heartbeat that fell due.
fn next_turn(run: &mut Run, snapshot: &Snapshot<'_>, now: jiff::Timestamp) -> Turn {
    loop {
        match run.turn(snapshot, now).expect("decides") {
            Turn::Renewed(_) => {}
            turn => return turn,
        }
    }
}

fn deleted_nodes(turn: &Turn) -> Vec<String> {
    match turn {
        Turn::BatchChosen { deletes, .. } => deletes.iter().map(|(v, _)| v.node.clone()).collect(),
        other => panic!("expected a batch, got {other:?}"),
    }
}

/// A RollingUpdate DaemonSet's `maxUnavailable` (upstream
/// `updatedDesiredNodeCounts`, percentages of desired rounded up) bounds a
/// run that takes it over, counting the nodes already down: `auto --batch 3`
/// on `maxUnavailable: 2` took 5 nodes down at once before.
#[test]
fn a_run_never_takes_more_nodes_down_than_max_unavailable() {
    let all = nodes(10);
    let original = rolling(IntOrString::Int(2));
    let snap = snapshot(original.clone(), &names(&all), all_old(&names(&all)));
    let (mut run, started) = Run::start(&snap, settings(3), "ana@box", t(0)).expect("starts");
    let Write::PatchStrategy {
        strategy, after, ..
    } = &started.write.write
    else {
        panic!("{:?}", started.write)
    };
    assert_eq!(strategy["type"], "OnDelete");
    assert!(after.saved_strategy.is_some(), "the strategy is saved");
    assert!(
        started
            .notes
            .iter()
            .any(|n| n.contains("takes the rollout over")),
        "{:?}",
        started.notes
    );
    let ds = taken_over(&original, &started.write);
    let cases: [(&str, usize, usize); 3] = [
        ("nothing down: 2 of the batch of 3", 0, 2),
        ("one node already down: 1", 1, 1),
        ("two down: the budget is spent", 2, 0),
    ];
    for (name, down, want) in cases {
        let unready: Vec<_> = all[..down]
            .iter()
            .map(|n| {
                pod(&format!("agent-{n}-x"), n, OLD)
                    .running_not_ready(0)
                    .build()
            })
            .collect();
        let pods = replace(all_old(&names(&all)), unready);
        let snap = snapshot(ds.clone(), &names(&all), pods);
        let mut fresh = run.clone();
        let turn = next_turn(&mut fresh, &snap, t(1));
        if want == 0 {
            let Turn::Wait { waiting, .. } = &turn else {
                panic!("{name}: {turn:?}")
            };
            assert!(
                waiting[0].1.contains("maxUnavailable"),
                "{name}: {waiting:?}"
            );
        } else {
            assert_eq!(deleted_nodes(&turn).len(), want, "{name}");
        }
    }
    // The end writes the strategy back.
    let snap = snapshot(ds, &names(&all), replace(Vec::new(), Vec::new()));
    let end = RunEnd::Completed {
        advanced: 10,
        left: Vec::new(),
    };
    let closing = run
        .closing(&end, &snap, t(2))
        .expect("decides")
        .expect("writes");
    let Write::PatchStrategy {
        strategy, after, ..
    } = &closing.write
    else {
        panic!("{closing:?}")
    };
    assert_eq!(strategy["type"], "RollingUpdate");
    assert_eq!(strategy["rollingUpdate"]["maxUnavailable"], 2);
    assert_eq!(after.saved_strategy, None);
    assert_eq!(after.mode, Mode::Idle);
    assert_eq!(closing.record.action, JournalAction::AutoDone);
    run.deleted("n01", Ok(()), t(3));
}

/// A run that takes over an expired run which had taken a RollingUpdate
/// DaemonSet from its controller inherits its budget and writes the saved
/// strategy back at its end (else the DaemonSet would stay OnDelete).
#[test]
fn a_run_taking_over_an_expired_takeover_inherits_and_restores_the_strategy() {
    let all = nodes(4);
    let original = rolling(IntOrString::Int(1));
    let snap = snapshot(original.clone(), &names(&all), all_old(&names(&all)));
    let (_, started) = Run::start(&snap, settings(2), "ana", t(0)).expect("starts");
    // ana's process died: OnDelete, strategy saved, mode auto, heartbeat old.
    let crashed = taken_over(&original, &started.write);
    let snap = snapshot(crashed, &names(&all), all_old(&names(&all)));
    let (mut run, started) = Run::start(&snap, settings(2), "bo", t(600)).expect("takes over");
    assert!(
        matches!(started.write.write, Write::PatchState { .. }),
        "nothing to switch: {started:?}"
    );
    assert!(run.taken_over().is_some(), "the budget is inherited");
    assert_eq!(
        deleted_nodes(&next_turn(&mut run, &snap, t(601))).len(),
        1,
        "maxUnavailable 1"
    );
    let end = RunEnd::Completed {
        advanced: 4,
        left: Vec::new(),
    };
    let closing = run
        .closing(&end, &snap, t(700))
        .expect("ok")
        .expect("a write");
    let Write::PatchStrategy { strategy, .. } = &closing.write else {
        panic!("the strategy is written back: {closing:?}")
    };
    assert_eq!(strategy["type"], "RollingUpdate");
}

/// A RollingUpdate DaemonSet with every node already on the current
/// revision: the run has nothing to roll, so it takes nothing over — no
/// switch to OnDelete and back, only its start and its end.
#[test]
fn a_takeover_with_nothing_to_roll_writes_no_strategy() {
    let all = nodes(3);
    let original = rolling(IntOrString::Int(1));
    let pods: Vec<_> = all.iter().map(|n| ready_pod(n, NEW, 1)).collect();
    let snap = snapshot(original, &names(&all), pods);
    let (mut run, started) = Run::start(&snap, settings(1), "ana", t(0)).expect("starts");
    assert!(
        matches!(started.write.write, Write::PatchState { .. }),
        "{:?}",
        started.write
    );
    assert!(run.taken_over().is_none());
    assert!(
        !started
            .notes
            .iter()
            .any(|n| n.contains("takes the rollout over")),
        "{:?}",
        started.notes
    );
    let Turn::Finished(end) = next_turn(&mut run, &snap, t(1)) else {
        panic!("nothing to roll ends the run")
    };
    assert_eq!(end.exit_code(), 0, "{end:?}");
    let closing = run.closing(&end, &snap, t(1)).expect("decides");
    assert!(
        closing
            .as_ref()
            .is_some_and(|w| matches!(w.write, Write::PatchState { .. })),
        "{closing:?}"
    );
}

/// A spent budget holds back only nodes still to move: with every node on
/// the new revision and one NotReady (its pod spends maxUnavailable 1), the
/// run ends instead of waiting for ever.
#[test]
fn a_spent_budget_with_nothing_left_to_move_ends_the_run() {
    let all = nodes(3);
    let original = rolling(IntOrString::Int(1));
    let snap = snapshot(original.clone(), &names(&all), all_old(&names(&all)));
    let (mut run, started) = Run::start(&snap, settings(1), "ana", t(0)).expect("starts");
    let ds = taken_over(&original, &started.write);
    let mut pods: Vec<_> = all[..2].iter().map(|n| ready_pod(n, NEW, 1)).collect();
    pods.push(pod("agent-n03-x", "n03", NEW).running_not_ready(0).build());
    let snap = snapshot(ds, &names(&all), pods);
    match next_turn(&mut run, &snap, t(5)) {
        Turn::Finished(end) => assert_eq!(end.exit_code(), 0, "{end:?}"),
        other => panic!("expected the end, got {other:?}"),
    }
}

#[test]
fn a_surge_only_strategy_and_hand_advances_on_rolling_update_are_refused() {
    let all = nodes(3);
    let snap = snapshot(
        rolling(IntOrString::Int(0)),
        &names(&all),
        all_old(&names(&all)),
    );
    // maxUnavailable 0 with maxSurge 1: replacing by delete would take nodes down.
    let mut surge = rolling(IntOrString::Int(0));
    if let Some(rolling) = surge
        .spec
        .as_mut()
        .and_then(|s| s.update_strategy.as_mut())
        .and_then(|u| u.rolling_update.as_mut())
    {
        rolling.max_surge = Some(IntOrString::Int(1));
    }
    let surge = snapshot(surge, &names(&all), all_old(&names(&all)));
    let Err(StartRefusal::Invalid(err)) = Run::start(&surge, settings(1), "ana", t(0)) else {
        panic!("a surge-only strategy is refused")
    };
    assert!(err.to_string().contains("let the controller roll"), "{err}");
    let state = snap.state().expect("state");
    let err = crate::ops::run::settings::ensure_advance_by_hand(&snap, &state)
        .expect_err("a hand advance would race the controller");
    assert!(err.to_string().contains("rollcall auto"), "{err}");
}

/// A run that skipped a cordoned and a NotReady node on the old revision is
/// not "completed": it ends incomplete, naming them, exit 1.
#[test]
fn a_run_that_leaves_nodes_behind_ends_incomplete() {
    let all = nodes(3);
    let old = ds(false, &[]);
    let mut base = snapshot(old.clone(), &names(&all), all_old(&names(&all)));
    let node_list = vec![
        node("n01").build(),
        node("n02").cordoned().build(),
        node("n03").not_ready().build(),
    ];
    let pods: Vec<_> = base.pods().cloned().collect();
    base = Snapshot::new(old.clone(), node_list.clone(), pods, base.revisions.clone());
    let (mut run, _) = Run::start(&base, settings(1), "ana", t(0)).expect("starts");
    assert_eq!(deleted_nodes(&next_turn(&mut run, &base, t(1))), ["n01"]);
    run.deleted("n01", Ok(()), t(1));
    let moved = replace(all_old(&names(&all)), vec![ready_pod("n01", NEW, 2)]);
    let after = Snapshot::new(old, node_list, moved, base.revisions.clone());
    let turn = next_turn(&mut run, &after, t(10));
    let Turn::Finished(end) = turn else {
        panic!("{turn:?}")
    };
    assert_eq!(end.exit_code(), 1);
    let text = end.text("auto-advance", Some(2));
    assert!(text.starts_with("incomplete: 1 node(s) advanced"), "{text}");
    assert!(text.contains("n02: cordoned"), "{text}");
    assert!(text.contains("n03: node not Ready"), "{text}");
    assert!(text.contains("--include-cordoned"), "{text}");
}

#[test]
fn a_dry_run_says_would() {
    let victim = crate::ops::advance::Victim {
        node: "n1".into(),
        pod: "agent-x".into(),
        uid: "u".into(),
        revision_from: Some(1),
        canary: false,
    };
    assert_eq!(
        words::delete_text("auto-advance", &victim, Ok(()), true),
        "advancing: would delete pod agent-x"
    );
    assert_eq!(
        words::delete_text("rollback", &victim, Ok(()), false),
        "moving back: deleted pod agent-x"
    );
}

/// One choice for every executor: a run that stops pauses as `rollcall auto
/// (who)` with the reason, journalled `auto-pause`; stopped by its operator it
/// goes idle as `auto-stopped`; someone else's pause stands untouched; every
/// end clears the run's canary selector.
#[test]
fn every_end_writes_one_way() {
    let all = nodes(2);
    let snap = snapshot(ds(false, &[]), &names(&all), all_old(&names(&all)));
    let (run, started) = Run::start(&snap, settings(1), "ana@box", t(0)).expect("starts");
    let Write::PatchState { after: running, .. } = &started.write.write else {
        panic!("{started:?}")
    };
    // As `auto --canary` leaves it mid-run.
    let running = &RolloutState {
        canary_selector: Some("pool=edge".into()),
        ..running.clone()
    };
    let mut during = ds(false, &[]);
    during.metadata.annotations = Some(annotations_of(running));
    let during = snapshot(during, &names(&all), all_old(&names(&all)));
    let paused = RunEnd::Paused {
        node: "n01".into(),
        reason: "replacement pod not Ready after 60s".into(),
        by_cluster: false,
    };
    let write = run
        .closing(&paused, &during, t(5))
        .expect("ok")
        .expect("a pause");
    let Write::PatchState { after, .. } = &write.write else {
        panic!("{write:?}")
    };
    let pause = after.pause.as_ref().expect("paused");
    assert_eq!(pause.by, "rollcall auto (ana@box)");
    assert_eq!(
        pause.reason.as_deref(),
        Some("node n01: replacement pod not Ready after 60s")
    );
    assert_eq!(write.record.action, JournalAction::AutoPause);
    assert_eq!(after.canary_selector, None);

    // Halted by a larger run (a fleet's stop for a failure elsewhere): paused
    // with that run's reason as it is, exit 1.
    let halted = RunEnd::Halted {
        reason: "fleet run 0d76: stopped: prod-eu-1: node n7: CrashLoopBackOff".into(),
    };
    let write = run
        .closing(&halted, &during, t(5))
        .expect("ok")
        .expect("a pause");
    let Write::PatchState { after, .. } = &write.write else {
        panic!("{write:?}")
    };
    let pause = after.pause.as_ref().expect("paused");
    assert_eq!(
        pause.reason.as_deref(),
        Some("fleet run 0d76: stopped: prod-eu-1: node n7: CrashLoopBackOff")
    );
    assert_eq!(write.record.action, JournalAction::AutoPause);
    assert_eq!(halted.exit_code(), 1);
    assert!(
        halted
            .text("auto-advance", None)
            .starts_with("halted: fleet run 0d76")
    );

    let cancelled = RunEnd::Cancelled {
        by: "ana@box".into(),
        moved: 1,
    };
    let write = run
        .closing(&cancelled, &during, t(5))
        .expect("ok")
        .expect("idle");
    let Write::PatchState { after, .. } = &write.write else {
        panic!("{write:?}")
    };
    assert_eq!(write.record.action, JournalAction::AutoStopped);
    assert_eq!((after.mode, after.heartbeat), (Mode::Idle, None));
    assert_eq!(after.canary_selector, None);
    assert!(
        cancelled
            .text("auto-advance", None)
            .contains("1 node(s) advanced")
    );

    let mut someone = ds(false, &[]);
    let theirs = RolloutState {
        pause: Some(Pause {
            by: "bo".into(),
            ..Pause::default()
        }),
        ..running.clone()
    };
    someone.metadata.annotations = Some(annotations_of(&theirs));
    let someone = snapshot(someone, &names(&all), all_old(&names(&all)));
    for end in [
        paused,
        RunEnd::Interrupted {
            by: "ana".into(),
            how: "console closed",
        },
        RunEnd::Stopped {
            by: "a pause by bo".into(),
        },
    ] {
        assert_eq!(
            run.closing(&end, &someone, t(6)).expect("ok"),
            None,
            "{end:?}"
        );
    }
}

/// A run's start writes which fleet run it belongs to, in the same patch as
/// its mode: a fleet member's run is named by it; a run of its own (`rollcall
/// auto`, the console's `A`) clears the name an earlier fleet run left, so a
/// console never credits a fleet with someone else's run.
#[test]
fn a_run_start_names_its_fleet_run_or_clears_an_earlier_one() {
    let all = nodes(2);
    let started_state = |settings: RunSettings, before: &RolloutState| {
        let mut ds = ds(false, &[]);
        ds.metadata.annotations = Some(annotations_of(before));
        let snap = snapshot(ds, &names(&all), all_old(&names(&all)));
        let (_, started) = Run::start(&snap, settings, "ana@box", t(0)).expect("starts");
        let Write::PatchState { after, .. } = &started.write.write else {
            panic!("{started:?}")
        };
        after.clone()
    };
    let fleet = RunSettings {
        fleet_run: Some(FleetRunName {
            digest: "3f2a".into(),
            wave: "canary".into(),
        }),
        ..settings(1)
    };
    let member = started_state(fleet, &RolloutState::default());
    assert_eq!(member.fleet_run.as_deref(), Some("plan 3f2a wave canary"));
    let own = started_state(
        settings(1),
        &RolloutState {
            fleet_run: Some("plan 3f2a wave canary".into()),
            ..RolloutState::default()
        },
    );
    assert_eq!(own.fleet_run, None);
}

/// A fleet member's pause that nothing known against a node caused — its
/// cluster could not carry out a delete, or an error stopped the run —
/// carries the fleet run's mark, so a run of the same plan resumes it; a
/// node's own failure does not (it waits for a person), and a run of its
/// own words its pauses as before.
#[test]
fn a_fleet_members_pause_by_its_cluster_is_the_fleet_runs_to_resume() {
    let all = nodes(2);
    let snap = snapshot(ds(false, &[]), &names(&all), all_old(&names(&all)));
    let fleet = RunSettings {
        fleet_run: Some(FleetRunName {
            digest: "3f2a".into(),
            wave: "canary".into(),
        }),
        ..settings(1)
    };
    let reason_of = |settings: RunSettings, end: RunEnd| {
        let (run, started) = Run::start(&snap, settings, "ana@box", t(0)).expect("starts");
        let Write::PatchState { after: running, .. } = &started.write.write else {
            panic!("{started:?}")
        };
        let mut during = ds(false, &[]);
        during.metadata.annotations = Some(annotations_of(running));
        let during = snapshot(during, &names(&all), all_old(&names(&all)));
        let write = run
            .closing(&end, &during, t(5))
            .expect("ok")
            .expect("a pause");
        let Write::PatchState { after, .. } = &write.write else {
            panic!("{write:?}")
        };
        after
            .pause
            .clone()
            .expect("paused")
            .reason
            .unwrap_or_default()
    };
    let unreachable = |by_cluster| RunEnd::Paused {
        node: "n01".into(),
        reason: "delete failed: 503 Service Unavailable".into(),
        by_cluster,
    };
    assert_eq!(
        reason_of(fleet.clone(), unreachable(true)),
        "fleet run 3f2a: stopped: node n01: delete failed: 503 Service Unavailable \
         (the cluster could not carry out the delete; a run of the same plan resumes here)"
    );
    assert_eq!(
        reason_of(fleet.clone(), unreachable(false)),
        "node n01: delete failed: 503 Service Unavailable"
    );
    assert_eq!(
        reason_of(settings(1), unreachable(true)),
        "node n01: delete failed: 503 Service Unavailable"
    );
    let failed = RunEnd::Failed {
        error: "the DaemonSet was deleted".into(),
    };
    assert_eq!(
        reason_of(fleet, failed.clone()),
        "fleet run 3f2a: stopped by an error: the DaemonSet was deleted"
    );
    assert_eq!(
        reason_of(settings(1), failed),
        "stopped by an error: the DaemonSet was deleted"
    );
}
