//! Round trips through the table: JSON → protobuf → JSON gives the object
//! back, and the slim types read the same values either way.

use serde_json::{Value, json};

use super::encode::encode_object;
use super::from_message;

/// A node as a cloud's kubelet reports it, trimmed.
fn node() -> Value {
    json!({
        "metadata": {
            "name": "ip-10-0-1-7", "uid": "5d7c9a8e-1111-2222-3333-444455556666",
            "resourceVersion": "812", "creationTimestamp": "2025-03-01T10:00:00Z",
            "labels": {"kubernetes.io/hostname": "ip-10-0-1-7", "topology.kubernetes.io/zone": "eu-west-1a"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                "time": "2025-03-01T10:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": {"f:conditions": {}}}}]
        },
        "spec": {"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.1.0.0/24"], "unschedulable": true,
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                       {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2025-03-01T11:00:00Z"}]},
        "status": {
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": "2025-03-01T10:05:00Z", "lastTransitionTime": "2025-03-01T10:00:00Z"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.1.7"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"kubeletVersion": "v1.32.4", "osImage": "Bottlerocket", "architecture": "amd64",
                "machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1",
                "containerRuntimeVersion": "containerd://1.7", "kubeProxyVersion": "", "operatingSystem": "linux"},
            "images": [{"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 321_520}]
        }
    })
}

/// A daemon pod mid-rollout.
fn pod() -> Value {
    json!({
        "metadata": {
            "name": "agent-x7k2p", "namespace": "kube-system", "uid": "0e0e0e0e-aaaa-bbbb-cccc-dddddddddddd",
            "resourceVersion": "913", "creationTimestamp": "2025-03-01T10:01:00Z",
            "labels": {"app": "agent", "controller-revision-hash": "6b5f9c7d4", "pod-template-generation": "3"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                "uid": "9f9f9f9f-0000-1111-2222-333333333333", "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "nodeName": "ip-10-0-1-7", "priority": 2_000_001_000, "priorityClassName": "system-node-critical",
            "containers": [{"name": "agent", "image": "agent:v3", "ports": [{"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics", "scheme": "HTTP"}, "periodSeconds": 10},
                "readinessProbe": {"tcpSocket": {"port": 9100}},
                "securityContext": {"runAsUser": 0, "privileged": true}}],
            "volumes": [{"name": "proc", "hostPath": {"path": "/proc", "type": ""}},
                        {"name": "config", "configMap": {"name": "agent-config", "defaultMode": 420}}],
            "tolerations": [{"operator": "Exists"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["ip-10-0-1-7"]}]}]}}},
            "securityContext": {"supplementalGroups": [1, 2, 3]}
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.1.7", "podIP": "10.1.0.9", "startTime": "2025-03-01T10:01:02Z",
            "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2025-03-01T10:02:00Z"}],
            "containerStatuses": [{"name": "agent", "ready": false, "restartCount": 4, "image": "agent:v3", "imageID": "",
                "started": false,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
                "lastState": {"terminated": {"exitCode": -1, "reason": "Error",
                    "startedAt": "2025-03-01T10:03:00Z", "finishedAt": "2025-03-01T10:03:05Z"}}}]
        }
    })
}

fn event() -> Value {
    json!({
        "metadata": {"name": "agent-x7k2p.181", "namespace": "kube-system", "resourceVersion": "920",
            "creationTimestamp": "2025-03-01T10:03:05Z"},
        "involvedObject": {"kind": "Pod", "namespace": "kube-system", "name": "agent-x7k2p",
            "uid": "0e0e0e0e-aaaa-bbbb-cccc-dddddddddddd", "apiVersion": "v1", "fieldPath": "spec.containers{agent}"},
        "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning", "count": 7,
        "source": {"component": "kubelet", "host": "ip-10-0-1-7"},
        "firstTimestamp": "2025-03-01T10:03:05Z", "lastTimestamp": "2025-03-01T10:09:05Z",
        "eventTime": "2025-03-01T10:03:05.123456Z", "reportingComponent": "kubelet", "reportingInstance": "ip-10-0-1-7"
    })
}

pub(super) fn encode(message: &str, object: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let encoded =
        encode_object(message, object.as_object().expect("an object"), &mut out).expect("known");
    assert_eq!(
        encoded.dropped,
        Vec::<String>::new(),
        "{message}: fields the table lacks"
    );
    out
}

#[test]
fn objects_come_back_whole() {
    for (message, object) in [("Node", node()), ("Pod", pod()), ("Event", event())] {
        let bytes = encode(message, &object);
        let back: Value = from_message(message, &bytes).expect("decodes");
        assert_eq!(back, object, "{message}");
    }
}

#[test]
fn slim_types_read_the_same_from_both() {
    let node = node();
    let from_json: crate::model::Node = serde_json::from_value(node.clone()).unwrap();
    let from_protobuf: crate::model::Node = from_message("Node", &encode("Node", &node)).unwrap();
    assert_eq!(from_protobuf, from_json);
    assert!(from_json.spec.unschedulable && from_json.is_ready());
    let pod = pod();
    let from_json: crate::model::Pod = serde_json::from_value(pod.clone()).unwrap();
    let from_protobuf: crate::model::Pod = from_message("Pod", &encode("Pod", &pod)).unwrap();
    assert_eq!(from_protobuf, from_json);
    let event = event();
    let from_json: crate::model::Event = serde_json::from_value(event.clone()).unwrap();
    let from_protobuf: crate::model::Event =
        from_message("Event", &encode("Event", &event)).unwrap();
    assert_eq!(from_protobuf, from_json);
}

#[test]
fn unknown_fields_are_counted_not_written() {
    let object =
        json!({"metadata": {"name": "a", "surprise": 1}, "spec": {"podCIDR": 7}, "extra": {}});
    let mut out = Vec::new();
    let encoded = encode_object("Node", object.as_object().unwrap(), &mut out).unwrap();
    let mut dropped = encoded.dropped;
    dropped.sort();
    assert_eq!(
        dropped,
        ["Node.extra", "NodeSpec.podCIDR", "ObjectMeta.surprise"]
    );
    let back: Value = from_message("Node", &out).unwrap();
    assert_eq!(back, json!({"metadata": {"name": "a"}, "spec": {}}));
}

#[test]
fn hostile_bytes_are_errors_not_panics() {
    let bytes = encode("Pod", &pod());
    for cut in [1, 7, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            from_message::<Value>("Pod", &bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    // A name that is not UTF-8.
    assert!(from_message::<Value>("Node", b"\x0a\x03\x0a\x01\xff").is_err());
    assert!(from_message::<Value>("NoSuchKind", b"").is_err());
}

#[test]
fn go_zero_times_read_as_absent() {
    // ObjectMeta.creationTimestamp = Time{seconds: -62135596800}: Go's zero
    // value, which Go writes into protobuf and as `null` into JSON.
    let mut time = Vec::new();
    super::wire::put_varint_field(&mut time, 1, (-62_135_596_800i64).cast_unsigned());
    let mut meta = Vec::new();
    super::wire::put_bytes_field(&mut meta, 1, b"a");
    super::wire::put_bytes_field(&mut meta, 8, &time);
    let mut node = Vec::new();
    super::wire::put_bytes_field(&mut node, 1, &meta);
    let back: Value = from_message("Node", &node).unwrap();
    assert_eq!(back, json!({"metadata": {"name": "a"}}));
}
