//! End to end on the `gitops` scenario (DaemonSets owned by the Argo CD app
//! `node-agents`, simulated self-heal after 3 s): the real binary acts, the
//! real kubectl observes.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use rollcall::sim::embedded::{EmbeddedCluster, EmbeddedOptions, start};
use serde_json::Value;

struct Env {
    cluster: EmbeddedCluster,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

async fn gitops() -> Env {
    let cluster = start(EmbeddedOptions {
        scenario: Some("gitops".to_owned()),
        ..EmbeddedOptions::default()
    })
    .await
    .expect("embedded cluster starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    cluster
        .server
        .write_kubeconfig(&kubeconfig)
        .expect("kubeconfig written");
    Env {
        cluster,
        dir,
        kubeconfig,
    }
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

impl Env {
    async fn run(&self, mut command: Command) -> Output {
        command
            .env("XDG_STATE_HOME", self.dir.path())
            .env("HOME", self.dir.path())
            .env("KUBECACHEDIR", self.dir.path().join("kube-cache"))
            .stdin(Stdio::null());
        tokio::task::spawn_blocking(move || command.output().expect("command runs"))
            .await
            .expect("join")
    }

    async fn rollcall(&self, args: &[&str]) -> Output {
        let mut command = Command::new(common::rollcall_bin());
        command.args(args).arg("--kubeconfig").arg(&self.kubeconfig);
        self.run(command).await
    }

    async fn kubectl(&self, args: &[&str]) -> String {
        let mut command = Command::new("kubectl");
        command.args(args).arg("--kubeconfig").arg(&self.kubeconfig);
        let output = self.run(command).await;
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            text(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    async fn daemonset(&self, name: &str) -> Value {
        let json = self
            .kubectl(&[
                "get",
                "ds",
                name,
                "-n",
                "kube-system",
                "-o",
                "json",
                "--show-managed-fields",
            ])
            .await;
        serde_json::from_str(&json).expect("daemonset json")
    }

    fn journal(&self) -> Vec<Value> {
        let path = self.dir.path().join("rollcall/journal.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("journal line"))
            .collect()
    }
}

/// `rollcall status -o json` polled until its state is `state` (at most 30 s:
/// the self-heal acts after 3 s).
async fn status_once_in(env: &Env, ds: &str, state: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = env.rollcall(&["status", ds, "-o", "json"]).await;
        assert!(status.status.success(), "{}", text(&status));
        let report: Value = serde_json::from_slice(&status.stdout).expect("status json");
        if report["state"] == state {
            return report;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "state {state} not reported within 30 s: {report}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Waits until the DaemonSet controller has written cni-agent's status for
/// its current spec (`observedGeneration` is its `generation`).
async fn cni_agent_status_observed(store: &rollcall::sim::store::Store) {
    use rollcall::sim::resources::ResourceKind;

    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let ds = store
            .get(ResourceKind::DaemonSet, "kube-system", "cni-agent")
            .expect("cni-agent");
        if ds["status"]["observedGeneration"] == ds["metadata"]["generation"] {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no status for the current spec: {}",
            ds["status"]
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A drift of cni-agent's strategy by the manager `heal-probe`: its
/// maxUnavailable 1 → 2 (still RollingUpdate; no new revision, no pod moves).
fn write_probe(store: &rollcall::sim::store::Store) {
    use rollcall::sim::resources::ResourceKind;
    use rollcall::sim::store::{Subresource, WriteOptions};

    store
        .modify_with(
            ResourceKind::DaemonSet,
            "kube-system",
            "cni-agent",
            Subresource::Main,
            WriteOptions {
                dry_run: false,
                manager: Some("heal-probe".into()),
            },
            |current| {
                let mut next = current.clone();
                next["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = 2.into();
                Ok(next)
            },
        )
        .expect("probe written");
}

/// Waits until the self-heal has handled every store change made so far:
/// writes a drift it must heal (cni-agent's maxUnavailable, no new revision)
/// and waits for the heal. The self-heal reads changes in store order and
/// heals each DaemonSet a fixed delay after its first drift, soonest first,
/// so once this probe is healed, a heal due for an earlier change has been
/// written too. Takes the self-heal's delay (3 s).
async fn self_heal_caught_up(env: &Env) {
    use rollcall::sim::resources::ResourceKind;

    let store = &env.cluster.simulation.store;
    let strategy = || {
        store
            .get(ResourceKind::DaemonSet, "kube-system", "cni-agent")
            .map(|ds| ds["spec"]["updateStrategy"].clone())
            .expect("cni-agent")
    };
    let applied = strategy();
    write_probe(store);
    assert_ne!(strategy(), applied, "the probe drifts");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while strategy() != applied {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the self-heal never healed the probe: {}",
            strategy()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn managers(ds: &Value) -> Vec<(String, String)> {
    ds["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_owned(),
                e["operation"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_is_refused_then_overridden_and_the_self_heal_revert_is_reported() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = gitops().await;
    let ds = "kube-system/cni-agent";
    let before = env.daemonset("cni-agent").await;
    assert_eq!(
        managers(&before),
        [("argocd-controller".to_owned(), "Apply".to_owned())]
    );

    let refused = env.rollcall(&["pause", ds, "--yes"]).await;
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("Argo CD app node-agents"), "{stderr}");
    assert!(stderr.contains("--despite-owner"), "{stderr}");
    let unchanged = env.daemonset("cni-agent").await;
    assert_eq!(
        unchanged["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
        "a refused pause changes nothing"
    );

    let paused = env
        .rollcall(&["pause", ds, "--yes", "--despite-owner"])
        .await;
    assert!(paused.status.success(), "{}", text(&paused));
    assert!(
        String::from_utf8_lossy(&paused.stderr).contains("will likely revert"),
        "{}",
        text(&paused)
    );

    // The self-heal (3 s) puts RollingUpdate back; status must stop saying paused.
    let report = status_once_in(&env, ds, "pause-reverted").await;
    assert_eq!(report["revert"]["by"], "argocd-controller");
    assert_eq!(report["owner"]["tool"], "argoCd");
    assert_eq!(report["strategy"], "RollingUpdate");
    let table = env.rollcall(&["status", ds]).await;
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(
        table.contains("managed by Argo CD app node-agents"),
        "{table}"
    );
    assert!(
        table.contains("state pause-reverted (pause reverted by argocd-controller at "),
        "{table}"
    );
    assert!(!table.contains("state paused"), "{table}");

    // kubectl sees who wrote what.
    let yaml = env
        .kubectl(&[
            "get",
            "ds",
            "cni-agent",
            "-n",
            "kube-system",
            "-o",
            "yaml",
            "--show-managed-fields",
        ])
        .await;
    for manager in ["manager: rollcall", "manager: argocd-controller"] {
        assert!(yaml.contains(manager), "{manager}: {yaml}");
    }
    let healed = env.daemonset("cni-agent").await;
    assert!(
        managers(&healed).contains(&("argocd-controller".to_owned(), "Update".to_owned())),
        "{:?}",
        managers(&healed)
    );

    // Pausing again says what happened instead of "already paused"; resume clears it.
    let again = env
        .rollcall(&["pause", ds, "--yes", "--despite-owner"])
        .await;
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("pause reverted by argocd-controller"),
        "{}",
        text(&again)
    );
    let resumed = env.rollcall(&["resume", ds, "--yes"]).await;
    assert!(resumed.status.success(), "{}", text(&resumed));
    let status = env.rollcall(&["status", ds, "-o", "json"]).await;
    let report: Value = serde_json::from_slice(&status.stdout).expect("status json");
    assert_eq!(report["state"], "idle", "{report}");

    let noticed: Vec<Value> = env
        .journal()
        .into_iter()
        .filter(|l| l["action"] == "revert-noticed")
        .collect();
    assert_eq!(noticed.len(), 1, "journaled once: {noticed:?}");
    assert_eq!(noticed[0]["daemonset"], ds);
    env.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advancing_the_argo_owned_ondelete_daemonset_leaves_the_spec_alone() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = gitops().await;
    let before = env.daemonset("log-agent").await;
    let advanced = env
        .rollcall(&[
            "advance",
            "kube-system/log-agent",
            "--next",
            "1",
            "--yes",
            "--wait",
            "--timeout",
            "30s",
        ])
        .await;
    assert!(advanced.status.success(), "{}", text(&advanced));
    let stderr = String::from_utf8_lossy(&advanced.stderr);
    assert!(
        stderr.contains("managed by Argo CD app node-agents")
            && stderr.contains("spec is untouched"),
        "{stderr}"
    );
    let after = env.daemonset("log-agent").await;
    assert_eq!(
        after["metadata"]["generation"],
        before["metadata"]["generation"]
    );
    assert_eq!(after["spec"], before["spec"]);
    // Evidence that the self-heal has been through every change the advance
    // made, rather than a wait for it: it must not act on log-agent.
    self_heal_caught_up(&env).await;
    let settled = env.daemonset("log-agent").await;
    assert_eq!(settled["spec"], before["spec"]);
    assert!(
        !managers(&settled).contains(&("argocd-controller".to_owned(), "Update".to_owned())),
        "no spec write, so nothing for the self-heal to do: {:?}",
        managers(&settled)
    );
    env.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_records_its_field_manager() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = gitops().await;
    // fieldManager from the query (kubectl label sends fieldManager=kubectl-label).
    env.kubectl(&[
        "label",
        "ds",
        "metrics-agent",
        "-n",
        "kube-system",
        "team=obs",
    ])
    .await;
    // No fieldManager (kubectl cordon): the User-Agent's prefix, `kubectl`.
    env.kubectl(&["cordon", "general-01"]).await;
    let ds = env.daemonset("metrics-agent").await;
    let label_entry = ds["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == "kubectl-label")
        .unwrap_or_else(|| panic!("no kubectl-label entry: {:?}", managers(&ds)));
    assert_eq!(
        label_entry["fieldsV1"],
        serde_json::json!({"f:metadata": {"f:labels": {"f:team": {}}}})
    );
    let node: Value = serde_json::from_str(
        &env.kubectl(&[
            "get",
            "node",
            "general-01",
            "-o",
            "json",
            "--show-managed-fields",
        ])
        .await,
    )
    .expect("node json");
    let cordon = node["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == "kubectl")
        .unwrap_or_else(|| panic!("no kubectl entry: {}", node["metadata"]));
    assert!(
        cordon["fieldsV1"]["f:spec"]["f:unschedulable"].is_object(),
        "{cordon}"
    );
    env.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_journals_a_revert_once_as_it_sees_it() {
    use rollcall::ops::journal::Journal;
    use rollcall::ops::write::Executor;
    use rollcall::sim::resources::ResourceKind;
    use rollcall::sim::store::{Subresource, WriteOptions};

    let env = gitops().await;
    let client = kube::Client::try_from(env.cluster.server.kube_config()).expect("client");
    let journal_path = env.dir.path().join("console-journal.jsonl");
    let executor = Executor::new(
        client.clone(),
        Journal::new(journal_path.clone()),
        false,
        "ctx".into(),
        "me".into(),
    );
    let task = rollcall::ops::revert_watch::spawn(
        client,
        &rollcall::model::Target {
            namespace: "kube-system".into(),
            name: "cni-agent".into(),
        },
        executor,
    );
    // A pause as rollcall writes it: strategy OnDelete plus the stored state.
    let patch = serde_json::json!({
        "metadata": {"annotations": {
            "rollcall.dev/paused-by": "me",
            "rollcall.dev/saved-update-strategy": "{\"type\":\"RollingUpdate\"}"}},
        "spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": null}}});
    env.cluster
        .simulation
        .store
        .modify_with(
            ResourceKind::DaemonSet,
            "kube-system",
            "cni-agent",
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
        .expect("paused");
    let lines = || {
        std::fs::read_to_string(&journal_path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("journal line"))
            .collect::<Vec<_>>()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while lines().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no revert journaled"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Later events (status updates) must not journal it again. First the
    // controller's status write for the healed spec (observedGeneration)...
    let store = &env.cluster.simulation.store;
    cni_agent_status_observed(store).await;
    // ...then evidence that the watch has been through it: the same pause
    // reverted once more, by another manager (the strategy stays
    // RollingUpdate), is a new revert. The watch delivers in order, so its
    // line comes after every event before it has been handled.
    write_probe(store);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while lines().len() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the probe's revert was never journaled: {:?}",
            lines()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let journal = lines();
    let messages: Vec<&str> = journal
        .iter()
        .map(|l| l["message"].as_str().unwrap_or_default())
        .collect();
    assert!(
        journal.iter().all(|l| l["action"] == "revert-noticed"),
        "{journal:?}"
    );
    assert!(
        messages[0].starts_with("pause reverted by argocd-controller at "),
        "{journal:?}"
    );
    assert!(
        messages[1].starts_with("pause reverted by heal-probe at "),
        "the next line is the probe's, not the first again: {journal:?}"
    );
    assert_eq!(
        messages.iter().filter(|m| **m == messages[0]).count(),
        1,
        "{journal:?}"
    );
    task.abort();
    env.cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_update_rollback_reverted_by_the_self_heal_is_reported_until_resume() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = gitops().await;
    let ds = "kube-system/cni-agent";
    let image = |ds: &Value| {
        ds["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let applied = image(&env.daemonset("cni-agent").await);
    assert!(applied.ends_with(":2.4.1"), "{applied}");

    let rolled = env
        .rollcall(&["rollback", ds, "--yes", "--despite-owner"])
        .await;
    assert!(rolled.status.success(), "{}", text(&rolled));
    let after = env.daemonset("cni-agent").await;
    let annotations = &after["metadata"]["annotations"];
    assert_eq!(
        annotations["rollcall.dev/rollback-to"], "1",
        "{annotations}"
    );
    assert!(
        annotations["rollcall.dev/updated-at"].is_string(),
        "{annotations}"
    );
    // Nothing drives a RollingUpdate rollback: no run mode is left to go stale.
    assert!(
        annotations.get("rollcall.dev/heartbeat").is_none(),
        "{annotations}"
    );

    // The self-heal (3 s) puts the 2.4.1 template back.
    let report = status_once_in(&env, ds, "rollback-reverted").await;
    assert_eq!(report["revert"]["what"], "rollback", "{report}");
    assert_eq!(report["revert"]["by"], "argocd-controller", "{report}");
    assert!(report["revert"]["at"].is_string(), "{report}");
    assert_eq!(image(&env.daemonset("cni-agent").await), applied);
    let table = env.rollcall(&["status", ds]).await;
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(
        table.contains("state rollback-reverted (rollback reverted by argocd-controller at "),
        "{table}"
    );

    // `resume` acknowledges it: the record goes, and so does the report.
    let resumed = env.rollcall(&["resume", ds, "--yes"]).await;
    assert!(resumed.status.success(), "{}", text(&resumed));
    let status = env.rollcall(&["status", ds, "-o", "json"]).await;
    let report: Value = serde_json::from_slice(&status.stdout).expect("status json");
    assert_ne!(report["state"], "rollback-reverted", "{report}");
    assert!(report["revert"].is_null(), "{report}");
    let cleared = env.daemonset("cni-agent").await;
    assert!(
        cleared["metadata"]["annotations"]
            .get("rollcall.dev/rollback-to")
            .is_none(),
        "{}",
        cleared["metadata"]["annotations"]
    );

    let noticed: Vec<Value> = env
        .journal()
        .into_iter()
        .filter(|l| l["action"] == "revert-noticed")
        .collect();
    assert_eq!(noticed.len(), 1, "journaled once: {noticed:?}");
    assert!(
        noticed[0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("rollback reverted by argocd-controller at ")),
        "{noticed:?}"
    );
    env.cluster.shutdown().await;
}
