//! One run, carried out once: the same scripted cluster history driven
//! through the console's path (keys, `ops_on_change`, write events) and
//! through the headless executor's order of work (`ops::drive`: the start,
//! then each turn's writes in order, each delete answered before the next,
//! then the end) produces the same writes with the same journal records.
//! A property test over random histories: replacements that turn Ready
//! sooner or later, never, or crash-loop; cordoned and NotReady nodes.
//! Both read a node's pods afresh before a timeout fails it: behind a stale
//! pod watch the console writes what headless writes behind a live one.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::app::App;
use super::effect::Effect;
use super::fixtures::{list, started};
use super::keymap::Action;
use super::ops::{DEFAULT_POLICY, OpsConsole, OpsEvent};
use super::view_model::ConsoleInfo;
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::engine::fixtures::{at, daemonset, node, pod, revision_of};
use crate::model::{DaemonSet, Node, Pod, Target};
use crate::ops::run::settings::RunSettings;
use crate::ops::run::{Run, RunEnd, Turn};
use crate::ops::snapshot::Snapshot;
use crate::ops::state::RolloutState;
use crate::ops::write::{Outcome, Write, WriteEvent, WriteRequest};

const ACTOR: &str = "ana@box";

/// How a node's replacement behaves once its old pod is deleted.
#[derive(Clone, Copy, Debug)]
enum Replacement {
    /// Ready this many seconds after the delete.
    ReadyAfter(i64),
    /// Never Ready (the gate times out).
    Never,
    /// Crash-loops.
    Crashes,
}

/// The cluster as the script has it: both paths write into their own copy,
/// which reacts the same way to the same writes.
#[derive(Clone)]
struct Cluster {
    ds: DaemonSet,
    nodes: Vec<Node>,
    pods: Vec<Pod>,
    replacements: BTreeMap<String, Replacement>,
    /// The writes made, in order.
    writes: Vec<WriteRequest>,
    /// A stale pod watch: the pods as the watch shows them (a replacement
    /// stays as created) until a fresh read of their node.
    watched_pods: Option<Vec<Pod>>,
}

impl Cluster {
    fn new(shapes: &[(u8, Replacement)]) -> Self {
        let mut nodes = Vec::new();
        let mut pods = Vec::new();
        let mut replacements = BTreeMap::new();
        for (i, (shape, replacement)) in shapes.iter().enumerate() {
            let name = format!("node-{i:02}");
            let mut builder = node(&name).label("node-pool", if i % 2 == 0 { "a" } else { "b" });
            if shape % 7 == 1 {
                builder = builder.cordoned();
            }
            if shape % 7 == 2 {
                builder = builder.not_ready();
            }
            nodes.push(builder.build());
            pods.push(
                pod(&format!("agent-{name}-old"), &name, "h1")
                    .created(60)
                    .ready_since(70)
                    .build(),
            );
            replacements.insert(name, *replacement);
        }
        let mut ds = daemonset("registry.example/agent:v2").on_delete().build();
        ds.metadata.resource_version = Some("1".into());
        Self {
            ds,
            nodes,
            pods,
            replacements,
            writes: Vec::new(),
            watched_pods: None,
        }
    }

    /// The same cluster seen through a pod watch that delivers no updates
    /// to a pod after its creation.
    fn behind_a_stale_watch(mut self) -> Self {
        self.watched_pods = Some(self.pods.clone());
        self
    }

    /// A fresh read of `node`'s pods: the watch's view of them is the truth.
    fn read_pods_on(&mut self, node: &str) {
        let Some(watched) = self.watched_pods.as_mut() else {
            return;
        };
        watched.retain(|p| p.node_name() != Some(node));
        watched.extend(
            self.pods
                .iter()
                .filter(|p| p.node_name() == Some(node))
                .cloned(),
        );
    }

    fn cache(&self) -> Cache {
        let mut cache = started();
        let v1 = daemonset("registry.example/agent:v1").on_delete().build();
        list(&mut cache, WatchUpdate::Node, self.nodes.clone());
        list(&mut cache, WatchUpdate::DaemonSet, vec![self.ds.clone()]);
        list(
            &mut cache,
            WatchUpdate::Revision,
            vec![revision_of(&v1, "h1", 1), revision_of(&self.ds, "h2", 2)],
        );
        let pods = self.watched_pods.as_ref().unwrap_or(&self.pods);
        list(&mut cache, WatchUpdate::Pod, pods.clone());
        list(&mut cache, WatchUpdate::PodEvent, Vec::new());
        list(&mut cache, WatchUpdate::NodeEvent, Vec::new());
        cache
    }

    /// Applies a write at `seconds` as the API server and the controller would.
    fn apply(&mut self, request: &WriteRequest, seconds: i64) -> Outcome {
        self.writes.push(request.clone());
        match &request.write {
            Write::DeletePod { name, .. } => {
                let Some(index) = self.pods.iter().position(|p| p.name() == name.as_str()) else {
                    return Outcome::PodDeleted;
                };
                let old = self.pods.remove(index);
                let node = old.node_name().unwrap_or_default().to_owned();
                let builder =
                    pod(&format!("agent-{node}-new{seconds}"), &node, "h2").created(seconds);
                if let Some(watched) = self.watched_pods.as_mut() {
                    watched.retain(|p| p.name() != name.as_str());
                    watched.push(builder.clone().phase("Pending").build());
                }
                let replacement = match self.replacements.get(&node) {
                    Some(Replacement::ReadyAfter(after)) => builder.ready_since(seconds + after),
                    Some(Replacement::Crashes) => {
                        builder.phase("Running").waiting("CrashLoopBackOff", 3)
                    }
                    _ => builder.phase("Pending"),
                };
                self.pods.push(replacement.build());
                Outcome::PodDeleted
            }
            Write::PatchState { after, .. } | Write::PatchStrategy { after, .. } => {
                self.store(after);
                Outcome::DaemonSetPatched {
                    resource_version: None,
                }
            }
            Write::PatchTemplate { .. } => Outcome::DaemonSetPatched {
                resource_version: None,
            },
        }
    }

    fn store(&mut self, state: &RolloutState) {
        let annotations = self.ds.metadata.annotations.get_or_insert_default();
        for (key, value) in state.to_annotations() {
            match value {
                Some(value) => annotations.insert(key.to_owned(), value),
                None => annotations.remove(key),
            };
        }
    }

    /// Replacements whose time to be Ready has come are Ready (their pods
    /// were built with `ready_since` in the future: nothing to do).
    fn snapshot_time(seconds: i64) -> jiff::Timestamp {
        at(seconds)
    }
}

fn target() -> Target {
    Target::from_key("kube-system/agent").unwrap_or_else(|| unreachable!())
}

/// The console's path: `A`, `y`, then every change and tick.
fn console(mut cluster: Cluster, ticks: i64) -> Vec<WriteRequest> {
    let mut cache = cluster.cache();
    let info = ConsoleInfo {
        context: "test".into(),
        server: "https://127.0.0.1/".into(),
        note: None,
    };
    let mut app = App::new(info, Some(target()), (120, 30));
    app.ops = OpsConsole::new(false, ACTOR.into());
    let start = 100;
    app.refresh(&mut cache, Cluster::snapshot_time(start));
    app.update(Action::ToggleAuto, &cache, Cluster::snapshot_time(start));
    let mut effect = app.update(Action::Confirm, &cache, Cluster::snapshot_time(start));
    for tick in 0..ticks {
        let seconds = start + tick * 5;
        let now = Cluster::snapshot_time(seconds);
        if tick > 0 {
            cache = cluster.cache();
            app.refresh(&mut cache, now);
            effect = app.ops_on_change(&cache, now);
        }
        // Every write and read answered at once, then the change it made is seen.
        while let Some(next) = effect.take() {
            match next {
                Effect::Writes(sent) => {
                    for (id, request) in sent {
                        let outcome = cluster.apply(&request, seconds);
                        let event = OpsEvent::Write(Box::new(WriteEvent {
                            id,
                            request,
                            result: Ok(outcome),
                            journal_error: None,
                        }));
                        app.ops_on_event(event, now);
                    }
                }
                Effect::ReadPodsOn { node, .. } => {
                    cluster.read_pods_on(&node);
                    let result = Ok(());
                    app.ops_on_event(OpsEvent::FreshRead { node, result }, now);
                }
                other => panic!("unexpected effect {other:?}"),
            }
            cache = cluster.cache();
            app.refresh(&mut cache, now);
            effect = app.ops_on_change(&cache, now);
        }
        if app.ops.auto.is_none() {
            break;
        }
    }
    cluster.writes
}

/// The headless executor's order of work, without I/O.
fn headless(mut cluster: Cluster, ticks: i64) -> Vec<WriteRequest> {
    let start = 100;
    let cache = cluster.cache();
    let snapshot = Snapshot::from_cache(&cache, &target()).expect("snapshot");
    let settings = RunSettings::auto(DEFAULT_POLICY);
    let now = Cluster::snapshot_time(start);
    let Ok((run, started)) = Run::start(&snapshot, settings, ACTOR, now) else {
        return cluster.writes;
    };
    let mut run = run.with_fresh_reads();
    cluster.apply(&started.write, start);
    for tick in 0..ticks {
        let seconds = start + tick * 5;
        let now = Cluster::snapshot_time(seconds);
        loop {
            let cache = cluster.cache();
            let snapshot = Snapshot::from_cache(&cache, &target()).expect("snapshot");
            let turn = run.turn(&snapshot, now).unwrap_or_else(|err| {
                Turn::Finished(RunEnd::Failed {
                    error: err.to_string(),
                })
            });
            match turn {
                Turn::Wait { .. } => break,
                Turn::Renewed(write) => {
                    cluster.apply(&write, seconds);
                }
                Turn::Verify { node } => {
                    cluster.read_pods_on(&node);
                    run.verified(&node);
                }
                Turn::BatchChosen { record, deletes } => {
                    cluster.apply(&record, seconds);
                    for (victim, request) in deletes {
                        cluster.apply(&request, seconds);
                        run.deleted(&victim.node, Ok(()), now);
                    }
                }
                Turn::Finished(end) => {
                    if let Ok(Some(write)) = run.closing(&end, &snapshot, now) {
                        cluster.apply(&write, seconds);
                    }
                    return cluster.writes;
                }
            }
        }
    }
    cluster.writes
}

fn replacement() -> impl Strategy<Value = Replacement> {
    prop_oneof![
        6 => (0..40_i64).prop_map(Replacement::ReadyAfter),
        1 => Just(Replacement::Never),
        1 => Just(Replacement::Crashes),
    ]
}

#[test]
fn a_scripted_rollout_writes_the_same_from_the_console_and_headless() {
    let shapes: Vec<(u8, Replacement)> = (0..6)
        .map(|i| (u8::from(i == 3), Replacement::ReadyAfter(10)))
        .collect();
    let cluster = Cluster::new(&shapes);
    let from_console = console(cluster.clone(), 200);
    let from_headless = headless(cluster, 200);
    let actions: Vec<&str> = from_console
        .iter()
        .map(|w| w.record.action.as_str())
        .collect();
    assert!(actions.contains(&"auto-advance"), "{actions:?}");
    assert_eq!(actions.last(), Some(&"auto-done"), "{actions:?}");
    assert_eq!(from_console, from_headless);
}

/// A pod watch that stalled after the replacements were created: the view
/// never shows them Ready, the fresh read before the timeout does, and every
/// node passes, the console writing what headless writes. (Judged on the
/// stale view, the first node would fail and the run pause.)
#[test]
fn behind_a_stale_watch_the_fresh_read_passes_ready_nodes() {
    let shapes: Vec<(u8, Replacement)> = (0..3).map(|_| (0, Replacement::ReadyAfter(10))).collect();
    let cluster = Cluster::new(&shapes).behind_a_stale_watch();
    let from_console = console(cluster.clone(), 400);
    let from_headless = headless(cluster, 400);
    let actions: Vec<&str> = from_console
        .iter()
        .map(|w| w.record.action.as_str())
        .collect();
    assert_eq!(
        actions.iter().filter(|a| **a == "auto-advance").count(),
        3,
        "{actions:?}"
    );
    assert_eq!(actions.last(), Some(&"auto-done"), "{actions:?}");
    assert!(
        from_console == from_headless,
        "the console and headless wrote differently"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_histories_write_the_same_from_the_console_and_headless(
        shapes in proptest::collection::vec((0..7_u8, replacement()), 1..7),
    ) {
        let cluster = Cluster::new(&shapes);
        let from_console = console(cluster.clone(), 150);
        let from_headless = headless(cluster, 150);
        prop_assert_eq!(from_console, from_headless);
    }
}
