use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DaemonSetSpec;
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};

use super::*;
use crate::model::ObjectMeta;

fn ds(image: &str, limit: Option<i32>) -> DaemonSet {
    DaemonSet {
        metadata: ObjectMeta {
            name: Some("agent".into()),
            namespace: Some("kube-system".into()),
            uid: Some("ds-uid".into()),
            ..ObjectMeta::default()
        },
        spec: Some(DaemonSetSpec {
            revision_history_limit: limit,
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(BTreeMap::from([("app".to_owned(), "agent".to_owned())])),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "agent".into(),
                        image: Some(image.into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DaemonSetSpec::default()
        }),
        status: None,
    }
}

/// The revision `number` of `image`, as the controller would have written it.
fn revision(image: &str, number: i64) -> ControllerRevision {
    let ds = ds(image, None);
    let template = ds
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let hash = template_hash(&template, None);
    let mut value = revision_object(&ds, &format!("agent-{hash}"), &hash, number);
    value["metadata"]["uid"] = json!(format!("uid-{number}"));
    serde_json::from_value(value).expect("revision decodes")
}

fn applied(plan: HistoryPlan) -> (String, Vec<HistoryAction>) {
    match plan {
        HistoryPlan::Apply {
            current_hash,
            actions,
        } => (current_hash, actions),
        HistoryPlan::Collision => panic!("unexpected collision"),
    }
}

#[test]
fn first_sync_creates_revision_one() {
    let (hash, actions) = applied(plan_history(&ds("a:1", None), &[], &BTreeSet::new(), None));
    let [HistoryAction::Create(cr)] = actions.as_slice() else {
        panic!("{actions:?}");
    };
    assert_eq!(cr["revision"], 1);
    assert_eq!(cr["metadata"]["name"], format!("agent-{hash}"));
    assert_eq!(
        cr["metadata"]["labels"]["controller-revision-hash"],
        hash.as_str()
    );
    assert_eq!(cr["metadata"]["ownerReferences"][0]["uid"], "ds-uid");
    assert_eq!(cr["data"]["spec"]["template"]["$patch"], "replace");
}

#[test]
fn unchanged_template_plans_nothing() {
    let revisions = [revision("a:1", 1)];
    let (_, actions) = applied(plan_history(
        &ds("a:1", None),
        &revisions,
        &BTreeSet::new(),
        None,
    ));
    assert!(actions.is_empty(), "{actions:?}");
}

#[test]
fn new_template_gets_max_plus_one() {
    let revisions = [revision("a:1", 1), revision("a:2", 2)];
    let (_, actions) = applied(plan_history(
        &ds("a:3", None),
        &revisions,
        &BTreeSet::new(),
        None,
    ));
    assert!(
        matches!(&actions[..], [HistoryAction::Create(cr)] if cr["revision"] == 3),
        "{actions:?}"
    );
}

#[test]
fn undo_renumbers_the_old_revision_to_max_plus_one() {
    // upstream constructHistory: after undo from 2 to 1, history lists 2, 3.
    let revisions = [revision("a:1", 1), revision("a:2", 2)];
    let (hash, actions) = applied(plan_history(
        &ds("a:1", None),
        &revisions,
        &BTreeSet::new(),
        None,
    ));
    assert_eq!(
        actions,
        vec![HistoryAction::Renumber {
            name: format!("agent-{hash}"),
            revision: 3
        }]
    );
}

#[test]
fn trims_oldest_unused_revisions_beyond_the_limit() {
    let revisions = [
        revision("a:1", 1),
        revision("a:2", 2),
        revision("a:3", 3),
        revision("a:4", 4),
    ];
    let live: BTreeSet<String> = [revision("a:1", 1)]
        .iter()
        .filter_map(|r| {
            r.metadata
                .labels
                .as_ref()?
                .get(REVISION_HASH_LABEL)
                .cloned()
        })
        .collect();
    let (_, actions) = applied(plan_history(&ds("a:4", Some(1)), &revisions, &live, None));
    // upstream cleanupHistory: 3 old revisions, limit 1, so 2 must go; the
    // live one (1) is skipped, so 2 and 3 are deleted.
    let deleted: Vec<_> = actions
        .iter()
        .filter_map(|a| match a {
            HistoryAction::Delete { uid, .. } => Some(uid.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deleted, ["uid-2", "uid-3"]);
}

#[test]
fn a_taken_name_with_other_data_is_a_collision() {
    let mut clash = revision("a:1", 1);
    let template = ds("a:2", None).spec.map(|s| s.template).unwrap_or_default();
    clash.metadata.name = Some(format!("agent-{}", template_hash(&template, None)));
    assert_eq!(
        plan_history(&ds("a:2", None), &[clash], &BTreeSet::new(), None),
        HistoryPlan::Collision
    );
}

/// A daemon pod of `ds` made from template generation `generation` with `hash`.
fn dump_pod(name: &str, generation: &str, hash: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "namespace": "kube-system",
            "labels": {"pod-template-generation": generation, "controller-revision-hash": hash},
            "ownerReferences": [{"apiVersion": "extensions/v1beta1", "kind": "DaemonSet",
                "name": "agent", "uid": "ds-uid", "controller": true}],
        },
    }))
    .expect("pod decodes")
}

fn at_generation(mut ds: DaemonSet, generation: &str) -> DaemonSet {
    ds.metadata.annotations = Some(BTreeMap::from([(
        "deprecated.daemonset.template.generation".to_owned(),
        generation.to_owned(),
    )]));
    ds
}

/// (case, pods, revisions, expected adopted hash)
type AdoptCase<'a> = (&'a str, Vec<Pod>, Vec<ControllerRevision>, Option<&'a str>);

#[test]
fn a_dump_without_revisions_adopts_the_hash_its_up_to_date_pods_carry() {
    let ds = at_generation(ds("a:2", None), "3");
    let cases: Vec<AdoptCase> = vec![
        (
            "up-to-date pods agree; an old pod's hash is ignored",
            vec![
                dump_pod("p1", "3", "7c9f8d"),
                dump_pod("p2", "3", "7c9f8d"),
                dump_pod("p3", "2", "55aa11"),
            ],
            vec![],
            Some("7c9f8d"),
        ),
        (
            "up-to-date pods disagree",
            vec![dump_pod("p1", "3", "7c9f8d"), dump_pod("p2", "3", "0000aa")],
            vec![],
            None,
        ),
        (
            "no up-to-date pod",
            vec![dump_pod("p3", "2", "55aa11")],
            vec![],
            None,
        ),
        (
            "revisions exist: nothing to adopt",
            vec![dump_pod("p1", "3", "7c9f8d")],
            vec![revision("a:1", 1)],
            None,
        ),
    ];
    for (name, pods, revisions, expected) in cases {
        assert_eq!(
            adoptable_hash(&ds, &revisions, &pods).as_deref(),
            expected,
            "{name}"
        );
    }
    let (hash, actions) = applied(plan_history(&ds, &[], &BTreeSet::new(), Some("7c9f8d")));
    assert_eq!(hash, "7c9f8d");
    let [HistoryAction::Create(created)] = actions.as_slice() else {
        panic!("{actions:?}");
    };
    assert_eq!(created["metadata"]["name"], "agent-7c9f8d");
    assert_eq!(
        created["metadata"]["labels"]["controller-revision-hash"],
        "7c9f8d"
    );
    assert_eq!(created["revision"], 1);
}
