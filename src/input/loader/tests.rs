//! Snapshot loading from kubectl-shaped JSON and YAML text.

use super::SnapshotLoader;
use crate::input::{LoadedSnapshot, SnapshotError};
use crate::model::Snapshot;

fn load(sources: &[(&str, &str)]) -> Result<LoadedSnapshot, SnapshotError> {
    let mut loader = SnapshotLoader::default();
    for (name, text) in sources {
        loader.add_text(name, text)?;
    }
    Ok(loader.finish())
}

fn names<T>(items: &[T], name: impl Fn(&T) -> Option<&str>) -> Vec<String> {
    items
        .iter()
        .map(|i| name(i).unwrap_or_default().to_owned())
        .collect()
}

const NODE_LIST_WITHOUT_ITEM_KINDS: &str = r#"{
  "apiVersion": "v1",
  "kind": "NodeList",
  "items": [
    {"metadata": {"name": "a", "managedFields": [{"manager": "kubelet"}]}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
    {"metadata": {"name": "b"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
  ],
  "metadata": {"resourceVersion": "12"}
}"#;

#[test]
fn typed_list_items_without_kind_load() {
    let loaded = load(&[("nodes.json", NODE_LIST_WITHOUT_ITEM_KINDS)]).unwrap();
    let nodes = &loaded.snapshot.nodes;
    assert_eq!(names(nodes, |n| n.metadata.name.as_deref()), ["a", "b"]);
    assert_eq!(nodes[0].spec.taints[0].key, "k");
    assert!(nodes[1].is_ready());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

const MIXED_LIST: &str = r#"{
  "apiVersion": "v1", "kind": "List",
  "items": [
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
     "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "kube-system"}, "data": {"a": "b"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent-x", "namespace": "kube-system"}, "spec": {"nodeName": "a", "containers": [{"name": "agent"}]}},
    {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "agent-5d8f", "namespace": "kube-system"}, "revision": 2, "data": {}},
    {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "kube-system"}, "involvedObject": {"kind": "Pod", "name": "agent-x"}, "reason": "BackOff"},
    {"metadata": {"name": "no-kind"}}
  ]
}"#;

#[test]
fn a_list_mixing_kinds_loads_known_kinds_and_warns_about_the_rest() {
    let loaded = load(&[("all.json", MIXED_LIST)]).unwrap();
    let snapshot = &loaded.snapshot;
    assert_eq!(snapshot.daemonsets.len(), 1);
    let target = |key: &str| crate::model::Target::from_key(key).expect("ns/name");
    assert!(snapshot.daemonset(&target("kube-system/agent")).is_some());
    assert!(snapshot.daemonset(&target("default/agent")).is_none());
    assert!(!snapshot.is_empty());
    assert_eq!(snapshot.pods[0].node_name(), Some("a"));
    assert_eq!(snapshot.revisions[0].revision, 2);
    assert_eq!(snapshot.events[0].reason.as_deref(), Some("BackOff"));
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    // Skipped kinds are counted for the summary, not warned about one by one.
    assert_eq!(
        warnings,
        ["all.json: skipped an object without a kind (no-kind)"]
    );
    assert_eq!(loaded.summary.skipped_kinds.get("ConfigMap"), Some(&1));
}

const MULTI_DOC_YAML: &str = "\
apiVersion: v1
kind: Node
metadata:
  name: yaml-a
---
# an empty document, as editors leave them
---
apiVersion: v1
kind: PodList
items:
- metadata:
    name: p1
    namespace: default
  spec:
    nodeName: yaml-a
...
---
apiVersion: extensions/v1beta1
kind: DaemonSet
metadata:
  name: old-api
  namespace: default
spec:
  selector: {}
  template: {}
";

#[test]
fn multi_document_yaml_loads_every_document() {
    let loaded = load(&[("docs.yaml", MULTI_DOC_YAML)]).unwrap();
    let snapshot = &loaded.snapshot;
    assert_eq!(
        names(&snapshot.nodes, |n| n.metadata.name.as_deref()),
        ["yaml-a"]
    );
    assert_eq!(
        names(&snapshot.pods, |p| p.metadata.name.as_deref()),
        ["p1"]
    );
    assert_eq!(
        names(&snapshot.daemonsets, |d| d.metadata.name.as_deref()),
        ["old-api"],
        "the kind decides, not the apiVersion"
    );
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn concatenated_json_documents_load() {
    let text = r#"{"kind":"Node","metadata":{"name":"a"}} {"kind":"Node","metadata":{"name":"b"}}"#;
    let loaded = load(&[("two.json", text)]).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 2);
}

#[test]
fn duplicates_across_files_last_wins_with_a_warning() {
    let first = r#"{"kind":"Node","metadata":{"name":"a","labels":{"v":"1"}}}"#;
    let second = "kind: Node\nmetadata:\n  name: a\n  labels:\n    v: \"2\"\n";
    let loaded = load(&[("one.json", first), ("two.yaml", second)]).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 1);
    assert_eq!(loaded.snapshot.nodes[0].label("v"), Some("2"));
    assert_eq!(loaded.warnings.len(), 1);
    assert_eq!(
        loaded.warnings[0].to_string(),
        "two.yaml: Node a appears more than once, differently (also in one.json); the last one wins"
    );
}

#[test]
fn same_name_in_other_namespaces_or_kinds_is_not_a_duplicate() {
    let text = r#"{"kind":"List","items":[
      {"kind":"Pod","metadata":{"name":"x","namespace":"a"}},
      {"kind":"Pod","metadata":{"name":"x","namespace":"b"}},
      {"kind":"Node","metadata":{"name":"x"}}]}"#;
    let loaded = load(&[("l.json", text)]).unwrap();
    assert_eq!(loaded.snapshot.pods.len(), 2);
    assert_eq!(loaded.snapshot.nodes.len(), 1);
    assert!(loaded.warnings.is_empty());
}

#[test]
fn truncated_json_names_file_line_and_column() {
    let text = "{\n  \"kind\": \"Node\",\n  \"metadata\": {\"name\": \"a\"";
    let err = load(&[("cut.json", text)]).unwrap_err();
    let SnapshotError::Syntax {
        line,
        column,
        format,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!((*format, *line), ("JSON", Some(3)));
    assert!(column.is_some());
    let message = err.to_string();
    assert!(
        message.starts_with("cut.json: line 3, column "),
        "{message}"
    );
}

#[test]
fn bad_yaml_indentation_names_file_and_line() {
    let text = "kind: Node\nmetadata:\n  name: a\n labels:\n    x: y\n";
    let err = load(&[("bad.yaml", text)]).unwrap_err();
    let SnapshotError::Syntax { line, format, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(*format, "YAML");
    assert_eq!(*line, Some(4), "{err}");
    assert!(
        err.to_string().starts_with("bad.yaml: line 4, column "),
        "{err}"
    );
}

#[test]
fn yaml_errors_in_a_later_document_count_lines_from_the_file_start() {
    let text = "kind: Node\nmetadata:\n  name: a\n---\nkind: Node\nmetadata: [\n";
    let err = load(&[("later.yaml", text)]).unwrap_err();
    let SnapshotError::Syntax {
        line: Some(line), ..
    } = err
    else {
        panic!("{err}");
    };
    assert!(
        line >= 6,
        "line {line} should point into the second document"
    );
}

#[test]
fn an_object_with_a_malformed_needed_field_is_excluded_alone() {
    let text = r#"{"kind":"Node","metadata":{"name":"a"},"spec":{"taints":"none"}}
{"kind":"Node","metadata":{"name":"b"}}"#;
    let loaded = load(&[("shape.json", text)]).unwrap();
    assert_eq!(
        names(&loaded.snapshot.nodes, |n| n.metadata.name.as_deref()),
        ["b"]
    );
    assert_eq!(loaded.summary.excluded, 1);
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("shape.json: excluded Node a: field spec.taints: invalid type"),
        "{warnings:?}"
    );
}

#[test]
fn a_malformed_field_rollcall_does_not_need_reads_as_unknown() {
    // A support bundle's template: `creationTimestamp: "null"`, a string.
    let text = r#"{"apiVersion":"apps/v1","kind":"DaemonSet",
      "metadata":{"name":"kube-multus-ds","namespace":"kube-system","creationTimestamp":"2024-01-02T03:04:05Z",
        "managedFields":[{"manager":"m","time":"yesterday"}]},
      "spec":{"selector":{"matchLabels":{"app":"multus"}},
        "template":{"metadata":{"creationTimestamp":"null","labels":{"app":"multus"}},
          "spec":{"containers":[{"name":"m","image":"multus:4"}]}}}}"#;
    let loaded = load(&[("ds.json", text)]).unwrap();
    let ds = &loaded.snapshot.daemonsets[0];
    let template = &ds.spec.as_ref().unwrap().template;
    assert_eq!(template.metadata.as_ref().unwrap().creation_timestamp, None);
    assert!(
        ds.metadata.creation_timestamp.is_some(),
        "the good one stays"
    );
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains(
            "DaemonSet kube-system/kube-multus-ds: ignored malformed field spec.template.metadata.creationTimestamp"
        )),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("metadata.managedFields")),
        "{warnings:?}"
    );
}

#[test]
fn identical_duplicates_merge_silently_and_null_items_are_an_empty_list() {
    let node = r#"{"kind":"Node","metadata":{"name":"a","labels":{"v":"1"}}}"#;
    let list = r#"{"kind":"NodeList","items":[{"metadata":{"name":"a","labels":{"v":"1"}}}]}
{"kind":"DaemonSetList","apiVersion":"apps/v1","items":null}"#;
    let loaded = load(&[("a.json", node), ("nodes.json", list)]).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 1);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.summary.duplicates_merged, 1);
}

#[test]
fn scalar_documents_are_skipped_with_a_warning() {
    let loaded = load(&[("s.yaml", "just a string\n")]).unwrap();
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.snapshot.nodes.is_empty());
}

#[test]
fn events_k8s_io_events_are_converted() {
    let text = r#"{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","namespace":"d"},
      "regarding":{"kind":"Pod","name":"p"},"note":"Back-off restarting","reason":"BackOff","deprecatedCount":4}"#;
    let loaded = load(&[("ev.json", text)]).unwrap();
    let event = &loaded.snapshot.events[0];
    assert_eq!(event.involved_object.name.as_deref(), Some("p"));
    assert_eq!(event.message.as_deref(), Some("Back-off restarting"));
    assert_eq!(event.count, Some(4));
}

#[test]
fn an_empty_source_is_an_empty_snapshot() {
    let loaded = load(&[("empty.yaml", ""), ("blank.json", "  \n")]).unwrap();
    assert_eq!(loaded.snapshot, Snapshot::default());
    assert!(loaded.snapshot.is_empty());
}

#[test]
fn hostile_input_never_panics() {
    let inputs = [
        "{\"kind\": 5}",
        "[1, [2, [3]]]",
        "{\"kind\":\"List\",\"items\":[null, 3, \"x\"]}",
        "{\"kind\":\"NodeList\",\"items\":{}}",
        "- - - -",
        "kind: [unterminated",
        "\u{0}\u{1}\u{2}",
        "{\"kind\":\"Node\",\"metadata\":{\"name\":\"\u{1b}[31mred\"}}",
    ];
    for input in inputs {
        let _ = load(&[("h", input)]);
    }
}

#[test]
fn a_reader_streams_json_and_keeps_line_numbers_after_a_bom() {
    let text = "\u{feff}\n\n{\"kind\": \"NodeList\", \"items\": [{\"metadata\": {\"name\": \"a\"}},\n {\"metadata\": ";
    let mut loader = SnapshotLoader::default();
    let err = loader.add_reader("piped", text.as_bytes()).unwrap_err();
    assert!(
        err.to_string().starts_with("piped: line 4, column "),
        "{err}"
    );

    let good =
        "\u{feff}  {\"kind\": \"NodeList\", \"items\": [{\"metadata\": {\"name\": \"a\"}}]}\n";
    let mut loader = SnapshotLoader::default();
    loader.add_reader("piped", good.as_bytes()).unwrap();
    assert_eq!(loader.finish().snapshot.nodes.len(), 1);
}

#[test]
fn a_reader_reads_yaml_whole() {
    let text = "\u{feff}# kubectl get node a -o yaml\nkind: Node\nmetadata:\n  name: a\n";
    let mut loader = SnapshotLoader::default();
    loader.add_reader("a.yaml", text.as_bytes()).unwrap();
    assert_eq!(loader.finish().snapshot.nodes.len(), 1);
}

#[test]
fn list_items_are_loaded_whatever_the_key_order() {
    // kubectl prints keys alphabetically: items come before kind.
    let late_kind = r#"{"apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":"NodeList"}"#;
    let early_kind = r#"{"kind":"PodList","items":[{"metadata":{"name":"p","namespace":"d"}}]}"#;
    let loaded = load(&[("late.json", late_kind), ("early.json", early_kind)]).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 1);
    assert_eq!(loaded.snapshot.pods.len(), 1);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn nested_lists_are_flattened() {
    let text =
        r#"{"kind":"List","items":[{"kind":"NodeList","items":[{"metadata":{"name":"a"}}]}]}"#;
    let loaded = load(&[("nested.json", text)]).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 1);
}

const KUBECTL_1_13_NODES: &str = r#"{
  "selfLink": "/api/v1/nodes", "resourceVersion": "4711",
  "Items": [{"name": "n1", "uid": "u1", "labels": {"kubernetes.io/os": "linux"},
    "Spec": {"PodCIDR": "10.0.0.0/24", "Taints": null},
    "Status": {"Conditions": [{"Type": "Ready", "Status": "True"}]}}]
}"#;

#[test]
fn what_is_not_read_is_counted_and_said_once() {
    let service = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"d"}}"#;
    let config =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"d"}}"#;
    let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}"#;
    let cases: [(&str, Vec<&str>, &str); 3] = [
        (
            "kinds not read, most first",
            vec![service, config, service, node],
            "skipped 2 Service, 1 ConfigMap (kinds rollcall does not read)",
        ),
        (
            // kubectl 1.13's `cluster-info dump` wrote Go's internal types
            // (issue 30 item 6): not "documents that are not API objects".
            "internal types",
            vec![KUBECTL_1_13_NODES, KUBECTL_1_13_NODES, node],
            "objects: 2 documents in Kubernetes' internal form (not read)",
        ),
        (
            "not objects",
            vec![r#"{"settings":{"a":1}}"#, node],
            "objects: 1 document that is not an API object",
        ),
    ];
    for (name, sources, expected) in cases {
        let named: Vec<(String, &str)> = sources
            .iter()
            .enumerate()
            .map(|(i, text)| (format!("f{i}.json"), *text))
            .collect();
        let named: Vec<(&str, &str)> = named.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        let loaded = load(&named).unwrap();
        let lines = loaded.summary.lines(&loaded.snapshot);
        assert!(lines.iter().any(|l| l == expected), "{name}: {lines:?}");
        assert!(loaded.warnings.is_empty(), "{name}: {:?}", loaded.warnings);
    }
}

#[test]
fn kubectl_1_13_dumps_are_named_with_what_to_do() {
    let loaded = load(&[("nodes.json", KUBECTL_1_13_NODES)]).unwrap();
    assert!(loaded.snapshot.is_empty());
    let found = loaded.summary.found_instead();
    assert_eq!(
        found,
        "read 1 file, 1 document looks like Kubernetes internal types (capitalised Items/Spec/Status, no kind), as kubectl before 1.14 wrote them in `cluster-info dump`: re-dump with a newer kubectl, or use `kubectl get nodes,pods,daemonsets,controllerrevisions -A -o json`"
    );
}

#[test]
fn objects_past_the_api_limits_are_excluded_with_the_limit() {
    let long = "x".repeat(10 << 20);
    let text = format!(
        r#"{{"kind":"NodeList","items":[{{"metadata":{{"name":"ok"}}}},{{"metadata":{{"name":"{long}"}}}}]}}"#
    );
    let loaded = load(&[("big.json", &text)]).unwrap();
    assert_eq!(loaded.snapshot.nodes.len(), 1);
    assert_eq!(loaded.summary.excluded, 1);
    let warning = loaded.warnings[0].to_string();
    assert!(
        warning.starts_with("big.json: excluded Node xxxxxxxx"),
        "{}",
        &warning[..200]
    );
    assert!(
        warning.ends_with(
            "…: metadata.name is 10485760 bytes long, more than the 253 Kubernetes allows"
        ),
        "{}",
        &warning[..200]
    );
    assert!(warning.len() < 300);
}

/// Items decoded straight from their text (the default loader) and through
/// the object path (a loader that keeps objects whole) must be the same
/// objects with the same warnings: the fast path is only a shortcut.
#[test]
fn items_decode_the_same_by_the_fast_path_and_the_object_path() {
    let fixtures = [
        "tests/fixtures/snapshots/nodes.json",
        "tests/fixtures/snapshots/kube-system-list.json",
        "tests/fixtures/audit/healthy.json",
        "tests/fixtures/audit/incident-events.json",
        "tests/fixtures/audit/incident-nodes-ds.json",
    ];
    let mut texts: Vec<(String, String)> = fixtures
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect(path);
            ((*path).to_owned(), text)
        })
        .collect();
    // What the fast path must hand back: a malformed timestamp (dropped with
    // a warning), a malformed needed field (excluded), events.k8s.io events,
    // kind-less items of a typed List, Go's internal form.
    let odd = r#"{"kind": "List", "items": [
      {"kind": "Node", "metadata": {"name": "n1", "creationTimestamp": "yesterday"}},
      {"kind": "Pod", "metadata": {"name": "p1", "namespace": "x"}, "spec": {"nodeName": 7}},
      {"kind": "Event", "apiVersion": "events.k8s.io/v1", "metadata": {"name": "e1", "namespace": "x"}, "regarding": {"kind": "Pod", "name": "p"}, "note": "n"},
      {"kind": "Pod", "metadata": {"name": "p2", "namespace": "x"}, "spec": {"nodeName": "n1"}}
    ]}"#;
    texts.push(("odd".to_owned(), odd.to_owned()));
    texts.push((
        "kindless".to_owned(),
        NODE_LIST_WITHOUT_ITEM_KINDS.to_owned(),
    ));
    let go = r#"{"kind": "NodeList", "items": [{"metadata": {"name": "g"}, "Spec": {}}]}"#;
    texts.push(("go".to_owned(), go.to_owned()));
    for (name, text) in &texts {
        let mut fast = SnapshotLoader::default();
        let mut whole = SnapshotLoader::keep_whole();
        let fast_result = fast.add_text(name, text).map_err(|e| e.to_string());
        let whole_result = whole.add_text(name, text).map_err(|e| e.to_string());
        assert_eq!(fast_result, whole_result, "{name}");
        let (fast, whole) = (fast.finish(), whole.finish());
        assert_eq!(fast.snapshot, whole.snapshot, "{name}");
        let messages = |l: &LoadedSnapshot| -> Vec<String> {
            l.warnings.iter().map(|w| w.message.clone()).collect()
        };
        assert_eq!(messages(&fast), messages(&whole), "{name}");
        assert!(
            name == "go"
                || !fast.snapshot.nodes.is_empty()
                || !fast.snapshot.pods.is_empty()
                || !fast.snapshot.events.is_empty(),
            "{name} loaded nothing"
        );
    }
}
