//! A fleet run's waves without clusters: a connector that reaches none
//! shows what the run decides around its members — the wave order, the
//! skip of an unreachable cluster, a stop before anything started — and
//! what it reports.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;

use super::*;
use crate::cluster::connect::Connection;
use crate::fleet::waves::file::PlanFile;

/// Reaches no cluster.
struct Nowhere;

impl Connector for Nowhere {
    fn connect<'a>(&'a self, context: &'a str) -> BoxFuture<'a, Result<Connection, String>> {
        Box::pin(async move { Err(format!("{context} is switched off")) })
    }
}

/// Keeps every event.
#[derive(Default)]
struct Kept(Mutex<Vec<Event>>);

impl Report for Kept {
    fn event(&self, event: Event) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event);
        }
    }
}

impl Kept {
    fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|events| {
                events
                    .iter()
                    .map(|e| format!("{}|{}", e.context, e.step.message))
                    .collect()
            })
            .unwrap_or_default()
    }
}

const PLAN: &str = "daemonset: kube-system/node-agent\nclusters: [\"prod-*\"]\nwaves:\n  \
    - name: canary\n    clusters: [prod-eu-1]\n    bake: 1h\n  \
    - name: rest\n    clusters: [\"prod-*\"]\n";

fn run(kind: Kind, skip_unreachable: bool, report: &Arc<Kept>) -> FleetRun {
    let plan = PlanFile::parse(PLAN, "fleet.yaml").expect("a plan");
    let contexts = ["prod-eu-1", "prod-us-1"].map(str::to_owned);
    let plan = RunPlan::assigned(plan, &contexts).expect("assigned");
    let settings = FleetSettings {
        namespace: None,
        journal: crate::ops::journal::Journal::new("/nonexistent/journal.jsonl".into()),
        dry_run: false,
        skip_unreachable,
        patience: Duration::from_secs(1),
        by: "test".to_owned(),
    };
    let report: Arc<dyn Report> = Arc::clone(report) as Arc<dyn Report>;
    FleetRun::new(plan, kind, settings, Arc::new(Nowhere), report)
}

#[tokio::test(start_paused = true)]
async fn unreachable_clusters_skipped_on_purpose_let_each_wave_pass_but_the_run_is_not_done() {
    let report = Arc::new(Kept::default());
    let outcome = run(Kind::Advance, true, &report).carry_out().await;
    assert_eq!(outcome.exit_code(), 1);
    assert_eq!(
        outcome.summary(),
        "incomplete: 0 node(s) moved in the clusters that passed; not passed: \
         prod-eu-1 (skipped: unreachable: prod-eu-1 is switched off), \
         prod-us-1 (skipped: unreachable: prod-us-1 is switched off)"
    );
    assert_eq!(
        report.lines(),
        [
            "|start wave canary: prod-eu-1",
            "prod-eu-1|skipped: unreachable: prod-eu-1 is switched off",
            "|pass wave canary (with clusters skipped or failed within the budget)",
            "|bake 1h after wave canary",
            "|start wave rest: prod-us-1",
            "prod-us-1|skipped: unreachable: prod-us-1 is switched off",
            "|pass wave rest (with clusters skipped or failed within the budget)",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_rollback_walks_the_waves_last_first() {
    let report = Arc::new(Kept::default());
    let kind = Kind::Rollback(RollbackChoice::default());
    let outcome = run(kind, true, &report).carry_out().await;
    let order: Vec<&str> = outcome.members.iter().map(|m| m.context.as_str()).collect();
    assert_eq!(order, ["prod-us-1", "prod-eu-1"]);
    assert!(
        !report.lines().iter().any(|l| l.contains("bake")),
        "no bake after the last wave"
    );
}

#[tokio::test(start_paused = true)]
async fn a_held_wave_waits_for_its_cluster_until_its_operator_stops_the_run() {
    let report = Arc::new(Kept::default());
    let fleet = run(Kind::Advance, false, &report);
    let stopper = fleet.stopper();
    // The wave holds for its unreachable cluster, retrying, for as long as it takes.
    let stopping = async {
        tokio::time::sleep(Duration::from_secs(600)).await;
        stopper.stop("stopped from the matrix");
    };
    let (outcome, ()) = tokio::join!(fleet.carry_out(), stopping);
    assert!(outcome.interrupted);
    assert_eq!(outcome.exit_code(), crate::ops::interrupt::EXIT_INTERRUPTED);
    assert_eq!(outcome.not_reached, ["prod-us-1"]);
    let held = report
        .lines()
        .iter()
        .filter(|l| l.starts_with("prod-eu-1|unreachable, the wave holds"))
        .count();
    assert_eq!(
        held,
        1,
        "said once, not at every retry: {:?}",
        report.lines()
    );
    assert!(
        report
            .lines()
            .contains(&"prod-eu-1|stopped: stopped while unreachable".to_owned()),
        "{:?}",
        report.lines()
    );
}

/// A fleet auto-advance of `plan` through `connector` that holds for an
/// unreachable cluster, journalling to `journal`, and what it reports.
fn advance(
    plan: RunPlan,
    journal: std::path::PathBuf,
    connector: impl Connector + 'static,
) -> (FleetRun, Arc<Kept>) {
    let settings = FleetSettings {
        namespace: None,
        journal: crate::ops::journal::Journal::new(journal),
        dry_run: false,
        skip_unreachable: false,
        patience: Duration::from_secs(5),
        by: "test".to_owned(),
    };
    let report = Arc::new(Kept::default());
    let fleet = FleetRun::new(
        plan,
        Kind::Advance,
        settings,
        Arc::new(connector),
        Arc::clone(&report) as Arc<dyn Report>,
    );
    (fleet, report)
}

/// Serves members in-process; the first connect to `panics_on` panics, as
/// a bug in a member's run would.
struct PanicsOnce {
    served: crate::fleet::rehearse::connector::InProcess,
    panics_on: &'static str,
    panicked: std::sync::atomic::AtomicBool,
}

impl Connector for PanicsOnce {
    fn connect<'a>(&'a self, context: &'a str) -> BoxFuture<'a, Result<Connection, String>> {
        let first = !self
            .panicked
            .swap(true, std::sync::atomic::Ordering::SeqCst);
        assert!(
            context != self.panics_on || !first,
            "index out of bounds: the len is 0 but the index is 3"
        );
        self.served.connect(context)
    }
}

/// A panic inside one member's run stops the fleet as a failure would and
/// leaves that member paused, naming the panic, never in `auto` with
/// nobody driving it.
#[tokio::test(start_paused = true)]
async fn a_member_whose_run_panics_is_paused_and_the_fleet_stops() {
    let options = crate::sim::embedded::EmbeddedOptions {
        scenario: Some("small".to_owned()),
        ..crate::sim::embedded::EmbeddedOptions::default()
    };
    let simulation = crate::sim::embedded::Simulation::start(&options).expect("simulated");
    let client = crate::sim::in_process::client(&simulation.store, "default");
    let mut served = crate::fleet::rehearse::connector::InProcess::default();
    served.add("prod-eu-1", client.clone());
    let connector = PanicsOnce {
        served,
        panics_on: "prod-eu-1",
        panicked: std::sync::atomic::AtomicBool::new(false),
    };
    let plan = PlanFile::parse(PLAN, "fleet.yaml").expect("a plan");
    let contexts = ["prod-eu-1", "prod-us-1"].map(str::to_owned);
    let plan = RunPlan::assigned(plan, &contexts).expect("assigned");
    let dir = tempfile::tempdir().expect("temp dir");
    let (fleet, report) = advance(plan, dir.path().join("journal.jsonl"), connector);
    let outcome = fleet.carry_out().await;
    assert_eq!(outcome.exit_code(), 1, "{}", outcome.summary());
    assert!(
        outcome
            .summary()
            .contains("prod-eu-1: rollcall failed inside this cluster's run (index out of bounds"),
        "{}",
        outcome.summary()
    );
    let ds: k8s_openapi::api::apps::v1::DaemonSet = kube::Api::namespaced(client, "kube-system")
        .get("node-agent")
        .await
        .expect("the DaemonSet");
    let annotations = ds.metadata.annotations.unwrap_or_default();
    let reason = annotations
        .get(crate::ops::state::annotations::PAUSE_REASON)
        .cloned()
        .unwrap_or_default();
    assert!(
        reason.starts_with("fleet run ") && reason.contains("index out of bounds"),
        "{annotations:?}"
    );
    assert!(
        !report.lines().iter().any(|l| l.starts_with("prod-us-1|")),
        "the next wave never started: {:?}",
        report.lines()
    );
}

/// An in-process member whose pod deletes answer 503 while `failing` is set,
/// as an API server under strain does; everything else is served.
fn failing_deletes(
    store: &crate::sim::store::Store,
    failing: Arc<std::sync::atomic::AtomicBool>,
) -> kube::Client {
    let served = crate::sim::in_process::client(store, "default");
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let served = served.clone();
        let failing = Arc::clone(&failing);
        async move {
            let refused = failing.load(std::sync::atomic::Ordering::SeqCst)
                && request.method() == http::Method::DELETE
                && request.uri().path().contains("/pods/");
            if refused {
                let status = serde_json::json!({
                    "kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": "the server is currently unable to handle the request",
                    "reason": "ServiceUnavailable", "code": 503
                });
                let response = http::Response::builder()
                    .status(503)
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(status.to_string().into_bytes()))
                    .expect("a response");
                return Ok::<_, kube::Error>(response);
            }
            served.send(request).await
        }
    });
    kube::Client::new(service, "default")
}

/// A member paused because its cluster could not carry out a delete (503
/// after the retries) is not a failed node: its pause carries the fleet
/// run's mark, and a run of the same plan resumes it and finishes, deleting
/// no pod twice (issue 36: a second `fleet auto` resumes where it stopped).
/// On the real clock (a paused one would need the process-wide simulated
/// wall clock): five nodes with the small scenario's short delays, ~3 s.
#[tokio::test]
async fn a_member_paused_by_its_cluster_is_resumed_by_a_run_of_the_same_plan() {
    // The small scenario without its crash-looping rule: every node can move.
    let dir = tempfile::tempdir().expect("temp dir");
    let small = include_str!("../../../assets/scenarios/small.yaml");
    let rules = small.find("images:").expect("the scenario has image rules");
    let healthy = dir.path().join("healthy.yaml");
    std::fs::write(&healthy, &small[..rules]).expect("scenario written");
    let options = crate::sim::embedded::EmbeddedOptions {
        scenario: Some(healthy.display().to_string()),
        ..crate::sim::embedded::EmbeddedOptions::default()
    };
    let simulation = crate::sim::embedded::Simulation::start(&options).expect("simulated");
    let failing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let client = failing_deletes(&simulation.store, Arc::clone(&failing));
    let plan = "daemonset: kube-system/node-agent\nclusters: [\"prod-*\"]\nwaves:\n  \
        - name: all\n    clusters: [prod-eu-1]\n    batch: 5\n    soak: 1s\n";
    let journal = dir.path().join("journal.jsonl");
    let carry_out = |client: kube::Client| {
        let mut served = crate::fleet::rehearse::connector::InProcess::default();
        served.add("prod-eu-1", client);
        let plan = PlanFile::parse(plan, "fleet.yaml").expect("a plan");
        let plan = RunPlan::assigned(plan, &["prod-eu-1".to_owned()]).expect("assigned");
        advance(plan, journal.clone(), served)
    };
    let pause_reason = |client: kube::Client| async move {
        let ds: k8s_openapi::api::apps::v1::DaemonSet =
            kube::Api::namespaced(client, "kube-system")
                .get("node-agent")
                .await
                .expect("the DaemonSet");
        ds.metadata
            .annotations
            .unwrap_or_default()
            .get(crate::ops::state::annotations::PAUSE_REASON)
            .cloned()
    };

    let (fleet, report) = carry_out(client.clone());
    let outcome = fleet.carry_out().await;
    assert_eq!(outcome.exit_code(), 1, "{}", outcome.summary());
    let reason = pause_reason(client.clone()).await.unwrap_or_default();
    assert!(
        reason.starts_with("fleet run ") && reason.contains("could not carry out the delete"),
        "{reason} {:?}",
        report.lines()
    );

    failing.store(false, std::sync::atomic::Ordering::SeqCst);
    let (fleet, report) = carry_out(client.clone());
    let outcome = fleet.carry_out().await;
    assert_eq!(
        outcome.exit_code(),
        0,
        "{} {:?}",
        outcome.summary(),
        report.lines()
    );
    assert!(
        report
            .lines()
            .iter()
            .any(|l| l.starts_with("prod-eu-1|resumed")),
        "{:?}",
        report.lines()
    );
    assert_eq!(pause_reason(client).await, None);
    let journal = std::fs::read_to_string(&journal).unwrap_or_default();
    let mut deleted = std::collections::BTreeSet::new();
    for line in journal.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).expect("a journal line");
        if entry["pod"].is_string() && entry["result"] == "ok" {
            let pod = entry["pod"].as_str().unwrap_or_default().to_owned();
            assert!(deleted.insert(pod), "deleted twice: {journal}");
        }
    }
    assert!(!deleted.is_empty(), "{journal}");
}
