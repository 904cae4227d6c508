//! Same truth every way: random nodes, pods and events, written as JSON and
//! as protobuf by the embedded cluster's encoder, decode to identical slim
//! values, and the protobuf reads back as the same JSON object.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::from_message;
use super::tests::encode;

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9-]{0,14}"
}

/// Text with what hostile or unusual names carry: spaces, quotes, non-ASCII.
fn text() -> impl Strategy<Value = String> {
    "[ -~é漢\u{1F600}]{0,24}"
}

/// A time to the second (metav1.Time), within upstream's range.
fn time() -> impl Strategy<Value = String> {
    (0i64..4_102_444_800).prop_map(|s| {
        jiff::Timestamp::from_second(s)
            .expect("in range")
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    })
}

fn micro_time() -> impl Strategy<Value = String> {
    (0i64..4_102_444_800, 0u32..1_000_000).prop_map(|(s, micros)| {
        let at = jiff::Timestamp::from_second(s).expect("in range");
        format!("{}.{micros:06}Z", at.strftime("%Y-%m-%dT%H:%M:%S"))
    })
}

fn quantity() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..64).prop_map(|n| n.to_string()),
        (1u32..4000).prop_map(|n| format!("{n}m")),
        (1u32..512).prop_map(|n| format!("{n}Gi")),
        (1u32..100_000).prop_map(|n| format!("{n}Ki")),
    ]
}

fn string_map(size: std::ops::Range<usize>) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[a-z./-]{1,20}", text(), size)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
}

fn resources() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(
        prop::sample::select(vec![
            "cpu",
            "memory",
            "pods",
            "ephemeral-storage",
            "nvidia.com/gpu",
        ]),
        quantity(),
        1..4,
    )
    .prop_map(|m| {
        m.into_iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v)))
            .collect()
    })
}

/// Inserts `value` under `key` when present (absent fields stay absent).
fn put(map: &mut Value, key: &str, value: Option<Value>) {
    if let (Some(value), Some(map)) = (value, map.as_object_mut()) {
        map.insert(key.to_owned(), value);
    }
}

fn metadata(namespaced: bool) -> impl Strategy<Value = Value> {
    (
        name(),
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        1u64..u64::MAX / 2,
        proptest::option::of(time()),
        proptest::option::of(time()),
        string_map(0..4),
        string_map(0..3),
        proptest::option::of((name(), any::<bool>())),
    )
        .prop_map(
            move |(name, uid, rv, created, deleted, labels, annotations, owner)| {
                let mut meta = json!({"name": name, "uid": uid, "resourceVersion": rv.to_string()});
                if namespaced {
                    meta["namespace"] = json!("kube-system");
                }
                put(&mut meta, "creationTimestamp", created.map(Value::from));
                put(&mut meta, "deletionTimestamp", deleted.map(Value::from));
                put(
                    &mut meta,
                    "labels",
                    (!labels.is_empty()).then_some(Value::Object(labels)),
                );
                put(
                    &mut meta,
                    "annotations",
                    (!annotations.is_empty()).then_some(Value::Object(annotations)),
                );
                put(
                    &mut meta,
                    "ownerReferences",
                    owner.map(|(name, controller)| {
                        json!([{
                "apiVersion": "apps/v1", "kind": "DaemonSet", "name": name,
                "uid": "9f9f9f9f-0000-1111-2222-333333333333", "controller": controller}])
                    }),
                );
                meta
            },
        )
}

fn condition() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec![
            "Ready",
            "MemoryPressure",
            "DiskPressure",
            "NetworkUnavailable",
            "PodScheduled",
        ]),
        prop::sample::select(vec!["True", "False", "Unknown"]),
        proptest::option::of(text()),
        proptest::option::of(time()),
    )
        .prop_map(|(type_, status, reason, at)| {
            let mut c = json!({"type": type_, "status": status});
            put(&mut c, "reason", reason.map(Value::from));
            put(&mut c, "lastTransitionTime", at.map(Value::from));
            c
        })
}

fn node() -> impl Strategy<Value = Value> {
    (
        metadata(false),
        any::<bool>(),
        prop::collection::vec(
            (
                name(),
                proptest::option::of(text()),
                prop::sample::select(vec!["NoSchedule", "PreferNoSchedule", "NoExecute"]),
                proptest::option::of(time()),
            ),
            0..3,
        ),
        prop::collection::vec(condition(), 0..4),
        proptest::option::of(resources()),
        proptest::option::of(("v1\\.[0-9]{2}\\.[0-9]", node_build())),
        prop::collection::vec((name(), 0i64..1 << 40), 0..4),
    )
        .prop_map(
            |(metadata, cordoned, taints, conditions, allocatable, kubelet, images)| {
                let mut spec = json!({"podCIDR": "10.0.0.0/24"});
                put(
                    &mut spec,
                    "unschedulable",
                    cordoned.then_some(Value::Bool(true)),
                );
                let taints: Vec<Value> = taints
                    .into_iter()
                    .map(|(key, value, effect, at)| {
                        let mut t = json!({"key": key, "effect": effect});
                        put(&mut t, "value", value.map(Value::from));
                        put(&mut t, "timeAdded", at.map(Value::from));
                        t
                    })
                    .collect();
                put(
                    &mut spec,
                    "taints",
                    (!taints.is_empty()).then_some(Value::from(taints)),
                );
                let mut status = json!({});
                put(
                    &mut status,
                    "conditions",
                    (!conditions.is_empty()).then_some(Value::from(conditions)),
                );
                put(
                    &mut status,
                    "allocatable",
                    allocatable.clone().map(Value::Object),
                );
                put(&mut status, "capacity", allocatable.map(Value::Object));
                put(
                    &mut status,
                    "nodeInfo",
                    kubelet.map(|(version, mut info)| {
                        info["kubeletVersion"] = Value::from(version);
                        info
                    }),
                );
                let images: Vec<Value> = images
                    .into_iter()
                    .map(|(n, size)| json!({"names": [n], "sizeBytes": size}))
                    .collect();
                put(
                    &mut status,
                    "images",
                    (!images.is_empty()).then_some(Value::from(images)),
                );
                json!({"metadata": metadata, "spec": spec, "status": status})
            },
        )
}

/// The build fields of `nodeInfo` a node class is made of, each there or
/// not, beside one rollcall never reads.
fn node_build() -> impl Strategy<Value = Value> {
    (
        proptest::option::of("(Bottlerocket|Ubuntu) [0-9]\\.[0-9]{1,2}"),
        proptest::option::of("[56]\\.[0-9]{1,2}\\.[0-9]{1,3}-[a-z0-9.]{1,12}"),
        proptest::option::of("(containerd|cri-o)://1\\.[0-9]{1,2}\\.[0-9]"),
        proptest::option::of("(amd64|arm64)"),
    )
        .prop_map(|(os, kernel, runtime, arch)| {
            let mut info = json!({"machineID": "ec2a1b"});
            put(&mut info, "osImage", os.map(Value::from));
            put(&mut info, "kernelVersion", kernel.map(Value::from));
            put(
                &mut info,
                "containerRuntimeVersion",
                runtime.map(Value::from),
            );
            put(&mut info, "architecture", arch.map(Value::from));
            info
        })
}

fn container() -> impl Strategy<Value = Value> {
    (name(), name(), proptest::option::of(resources()), proptest::option::of(resources()), proptest::option::of((1i64..65536, any::<bool>())))
        .prop_map(|(name, image, requests, limits, port)| {
            let mut c = json!({"name": name, "image": format!("{image}:v1")});
            let mut resources = json!({});
            put(&mut resources, "requests", requests.map(Value::Object));
            put(&mut resources, "limits", limits.map(Value::Object));
            c["resources"] = resources;
            put(&mut c, "ports", port.map(|(p, host)| {
                let mut port = json!({"containerPort": p, "protocol": "TCP"});
                put(&mut port, "hostPort", host.then_some(Value::from(p)));
                json!([port])
            }));
            put(&mut c, "readinessProbe", port.map(|(p, named)| json!({"httpGet": {"path": "/", "port": if named { json!("http") } else { json!(p) }}})));
            c
        })
}

fn container_status() -> impl Strategy<Value = Value> {
    let state = prop_oneof![
        (text(), text()).prop_map(|(reason, message)| json!({"waiting": {"reason": reason, "message": message}})),
        time().prop_map(|at| json!({"running": {"startedAt": at}})),
        (-255i64..256, text(), time()).prop_map(|(code, reason, at)| json!({"terminated": {"exitCode": code, "reason": reason, "finishedAt": at}})),
    ];
    (name(), any::<bool>(), 0i64..1_000_000, state, proptest::option::of(any::<bool>()))
        .prop_map(|(name, ready, restarts, state, started)| {
            let mut s = json!({"name": name, "ready": ready, "restartCount": restarts, "image": "x:1", "imageID": "", "state": state});
            put(&mut s, "started", started.map(Value::Bool));
            s
        })
}

fn pod() -> impl Strategy<Value = Value> {
    (
        metadata(true),
        proptest::option::of(name()),
        prop::collection::vec(container(), 1..3),
        proptest::option::of(-2_000_000_000i64..2_000_000_000),
        prop::sample::select(vec!["Pending", "Running", "Succeeded", "Failed", "Unknown"]),
        prop::collection::vec(condition(), 0..3),
        prop::collection::vec(container_status(), 0..3),
        proptest::option::of(time()),
        string_map(0..2),
    )
        .prop_map(
            |(
                metadata,
                node,
                containers,
                priority,
                phase,
                conditions,
                statuses,
                start,
                selector,
            )| {
                let mut spec =
                    json!({"containers": containers, "tolerations": [{"operator": "Exists"}]});
                put(&mut spec, "nodeName", node.map(Value::from));
                put(&mut spec, "priority", priority.map(Value::from));
                put(
                    &mut spec,
                    "nodeSelector",
                    (!selector.is_empty()).then_some(Value::Object(selector)),
                );
                let mut status = json!({"phase": phase});
                put(
                    &mut status,
                    "conditions",
                    (!conditions.is_empty()).then_some(Value::from(conditions)),
                );
                put(
                    &mut status,
                    "containerStatuses",
                    (!statuses.is_empty()).then_some(Value::from(statuses)),
                );
                put(&mut status, "startTime", start.map(Value::from));
                json!({"metadata": metadata, "spec": spec, "status": status})
            },
        )
}

fn event() -> impl Strategy<Value = Value> {
    (
        metadata(true),
        (prop::sample::select(vec!["Pod", "Node", "DaemonSet"]), name()),
        text(),
        text(),
        prop::sample::select(vec!["Normal", "Warning"]),
        proptest::option::of(1i64..100_000),
        proptest::option::of(time()),
        proptest::option::of(micro_time()),
    )
        .prop_map(|(metadata, (kind, object), reason, message, type_, count, last, at)| {
            let mut e = json!({"metadata": metadata, "involvedObject": {"kind": kind, "name": object, "namespace": "kube-system"},
                "reason": reason, "message": message, "type": type_, "source": {"component": "kubelet"}});
            put(&mut e, "count", count.map(Value::from));
            put(&mut e, "firstTimestamp", last.clone().map(Value::from));
            put(&mut e, "lastTimestamp", last.map(Value::from));
            put(&mut e, "eventTime", at.map(Value::from));
            e
        })
}

/// Both ways to the same slim value, and protobuf back to the same JSON.
fn same_every_way<T>(message: &str, object: &Value) -> Result<(), TestCaseError>
where
    T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let bytes = encode(message, object);
    let from_json: T =
        serde_json::from_value(object.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let from_protobuf: T =
        from_message(message, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(from_protobuf, from_json);
    let back: Value =
        from_message(message, &bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back, object);
    Ok(())
}

proptest! {
    #[test]
    fn nodes_decode_the_same_from_json_and_protobuf(node in node()) {
        same_every_way::<crate::model::Node>("Node", &node)?;
    }

    #[test]
    fn pods_decode_the_same_from_json_and_protobuf(pod in pod()) {
        same_every_way::<crate::model::Pod>("Pod", &pod)?;
    }

    #[test]
    fn events_decode_the_same_from_json_and_protobuf(event in event()) {
        same_every_way::<crate::model::Event>("Event", &event)?;
    }
}
