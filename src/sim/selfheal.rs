//! A simulated GitOps self-heal (Argo CD's `selfHeal: true`): for every
//! DaemonSet the scenario says its manager applied, it remembers the update
//! strategy and template as of start, and a configured delay after anyone
//! changes them, writes them back as that field manager (so managedFields
//! show who reverted, and when).
//!
//! Owns only that loop. The decision — does this DaemonSet's spec differ
//! from what was applied, and what is the restoring object — is the pure
//! [`drifted`] / [`restored`] pair; the task reads store events, keeps a
//! deadline per DaemonSet and writes through the store like any client.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::sim::resources::ResourceKind;
use crate::sim::scenario::{Scenario, SelfHeal};
use crate::sim::store::{ObjectKey, Store, Subresource, Subscription, WriteOptions};
use crate::sim::wake::sleep_until;

/// The spec fields a GitOps controller puts back.
const HEALED: [&str; 2] = ["updateStrategy", "template"];

/// The desired spec of one DaemonSet: the healed fields as applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Desired(BTreeMap<&'static str, Value>);

impl Desired {
    /// Reads the healed fields of a DaemonSet.
    pub fn of(daemon_set: &Value) -> Desired {
        Desired(
            HEALED
                .iter()
                .map(|f| (*f, daemon_set["spec"][*f].clone()))
                .collect(),
        )
    }
}

/// Whether `current` no longer has the desired strategy or template.
pub fn drifted(desired: &Desired, current: &Value) -> bool {
    Desired::of(current) != *desired
}

/// `current` with the desired strategy and template written back.
pub fn restored(desired: &Desired, current: &Value) -> Value {
    let mut next = current.clone();
    for (field, value) in &desired.0 {
        next["spec"][*field] = value.clone();
    }
    next
}

/// The running self-heal.
#[derive(Debug)]
pub struct SelfHealHandle {
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl SelfHealHandle {
    /// Stops the task and waits for it.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Starts the self-heal if the scenario has one, for the DaemonSets now in
/// `store` that the scenario marks `appliedBy` its manager.
pub fn spawn(store: &Store, scenario: &Arc<Scenario>) -> Option<SelfHealHandle> {
    let config = scenario.self_heal.clone()?;
    let mut desired = BTreeMap::new();
    for ds in &scenario.daemon_sets {
        if ds.applied_by.as_deref() != Some(config.manager.as_str()) {
            continue;
        }
        if let Some(object) = store.get_object(ResourceKind::DaemonSet, &ds.namespace, &ds.name) {
            desired.insert(
                ObjectKey::new(&ds.namespace, &ds.name),
                Desired::of(&object.value()),
            );
        }
    }
    let (stop, stopped) = watch::channel(false);
    // Subscribe before returning, so no change made after start is missed.
    let changes = store.subscribe();
    let task = tokio::spawn(run(store.clone(), changes, config, desired, stopped));
    Some(SelfHealHandle { stop, task })
}

async fn run(
    store: Store,
    mut changes: Subscription,
    config: SelfHeal,
    desired: BTreeMap<ObjectKey, Desired>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut due: BTreeMap<ObjectKey, Instant> = BTreeMap::new();
    loop {
        let next = due.values().min().copied();
        tokio::select! {
            _ = stopped.changed() => return,
            () = sleep_until(next) => {
                let now = Instant::now();
                let ready: Vec<ObjectKey> =
                    due.iter().filter(|(_, at)| **at <= now).map(|(k, _)| k.clone()).collect();
                for key in ready {
                    due.remove(&key);
                    if let Some(want) = desired.get(&key) {
                        heal(&store, &config.manager, &key, want);
                    }
                }
            }
            batch = changes.next_batch() => {
                let Ok(batch) = batch else {
                    // Fell behind the history: look at every DaemonSet again.
                    changes = store.subscribe();
                    for key in desired.keys() {
                        due.entry(key.clone()).or_insert_with(|| Instant::now() + config.delay);
                    }
                    continue;
                };
                for event in batch {
                    if event.kind != ResourceKind::DaemonSet {
                        continue;
                    }
                    let key = &event.object.key;
                    if desired.get(key).is_some_and(|want| drifted(want, &event.object.value())) {
                        due.entry(key.clone()).or_insert_with(|| Instant::now() + config.delay);
                    }
                }
            }
        }
    }
}

/// Writes the desired strategy and template back if they still differ.
fn heal(store: &Store, manager: &str, key: &ObjectKey, want: &Desired) {
    let options = WriteOptions {
        dry_run: false,
        manager: Some(manager.into()),
    };
    let result = store.modify_with(
        ResourceKind::DaemonSet,
        &key.namespace,
        &key.name,
        Subresource::Main,
        options,
        |current| {
            let mut next = restored(want, current);
            // An unconditional write, like a forced apply.
            if let Some(meta) = next["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
            }
            Ok(next)
        },
    );
    match result {
        Ok(_) => tracing::info!(daemonset = %key.name, %manager, "self-heal restored the spec"),
        Err(error) => tracing::warn!(daemonset = %key.name, %error, "self-heal failed"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ds(strategy: &str, image: &str) -> Value {
        json!({"metadata": {"name": "a", "annotations": {"rollcall.dev/paused-by": "me"}},
            "spec": {"updateStrategy": {"type": strategy},
                "template": {"spec": {"containers": [{"name": "c", "image": image}]}}}})
    }

    #[test]
    fn drift_is_the_strategy_or_the_template() {
        let want = Desired::of(&ds("RollingUpdate", "v2"));
        let cases = [
            ("same", ds("RollingUpdate", "v2"), false),
            ("paused", ds("OnDelete", "v2"), true),
            ("rolled back", ds("RollingUpdate", "v1"), true),
        ];
        for (name, current, expected) in cases {
            assert_eq!(drifted(&want, &current), expected, "{name}");
            let healed = restored(&want, &current);
            assert!(!drifted(&want, &healed), "{name}: healed");
            assert_eq!(
                healed["metadata"], current["metadata"],
                "{name}: metadata (rollcall's annotations) untouched"
            );
        }
    }

    #[tokio::test]
    async fn heals_after_the_delay_as_its_manager() {
        let text = "name: t\npools: [{name: p, count: 1}]\nselfHeal: {delay: 100ms}\n\
            daemonSets:\n  - name: a\n    appliedBy: argocd-controller\n    revisions: [{image: a:1}]\n";
        let scenario = Arc::new(Scenario::parse("t.yaml", text).unwrap());
        let store = Store::default();
        crate::sim::embedded::load::load_scenario(&store, &scenario, jiff::Timestamp::now(), 1)
            .unwrap();
        let handle = spawn(&store, &scenario).unwrap();
        let patch =
            json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": null}}});
        store
            .modify_with(
                ResourceKind::DaemonSet,
                "kube-system",
                "a",
                Subresource::Main,
                WriteOptions {
                    dry_run: false,
                    manager: Some("rollcall".into()),
                },
                |current| {
                    let mut next = current.clone();
                    json_patch::merge(&mut next, &patch);
                    Ok(next)
                },
            )
            .unwrap();
        let strategy = |store: &Store| {
            store
                .get_object(ResourceKind::DaemonSet, "kube-system", "a")
                .unwrap()
                .value()["spec"]["updateStrategy"]["type"]
                .clone()
        };
        assert_eq!(strategy(&store), "OnDelete");
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        while strategy(&store) != "RollingUpdate" && Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(strategy(&store), "RollingUpdate", "healed");
        let value = store
            .get_object(ResourceKind::DaemonSet, "kube-system", "a")
            .unwrap()
            .value();
        let managers: Vec<&str> = value["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(
            managers,
            ["argocd-controller", "argocd-controller"],
            "apply + update; rollcall's entry emptied"
        );
        handle.shutdown().await;
    }
}
