//! A small cluster at steady state as whole, realistic API objects (status,
//! managedFields, annotations), and writers for the layouts real dumps arrive
//! in: a `kubectl get -o json` List, a must-gather tree, a Sonobuoy tree, a
//! support-bundle tree, a `kubectl cluster-info dump` stream, and archives.
#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

const CREATED: &str = "2025-06-01T10:00:00Z";
const STARTED: &str = "2025-06-02T08:00:00Z";

/// `(name, uid, taint)` of the three nodes; the GPU node is tainted.
const NODES: [(&str, &str, Option<&str>); 3] = [
    ("ip-10-0-1-11", "4a0d7f2e-1111-4c1e-9d55-0f6b2c1a0001", None),
    ("ip-10-0-1-12", "4a0d7f2e-2222-4c1e-9d55-0f6b2c1a0002", None),
    (
        "ip-10-0-9-31",
        "4a0d7f2e-3333-4c1e-9d55-0f6b2c1a0003",
        Some("gpu"),
    ),
];

/// One DaemonSet of the fixture and what its dump says about it.
pub struct Daemon {
    pub namespace: &'static str,
    pub name: &'static str,
    pub uid: &'static str,
    pub hash: &'static str,
    pub generation: i64,
    pub on_delete: bool,
    /// The group version its pods' owner references carry (a 1.8 cluster's
    /// pods say extensions/v1beta1).
    pub owner_api: &'static str,
    /// Whether it tolerates the GPU taint.
    pub everywhere: bool,
}

pub const DAEMONS: [Daemon; 2] = [
    Daemon {
        namespace: "kube-system",
        name: "node-agent",
        uid: "0026e89d-5a1b-4d2c-8e3f-7a9b0c1d2e3f",
        hash: "6d5f7b9c8d",
        generation: 3,
        on_delete: false,
        owner_api: "apps/v1",
        everywhere: false,
    },
    Daemon {
        namespace: "logging",
        name: "log-agent",
        uid: "91b2c3d4-0e1f-4a5b-8c7d-6e5f4a3b2c1d",
        hash: "7c9f8d6b54",
        generation: 1,
        on_delete: true,
        owner_api: "extensions/v1beta1",
        everywhere: true,
    },
];

fn managed_fields(manager: &str) -> Value {
    json!([{"manager": manager, "operation": "Update", "apiVersion": "v1", "time": CREATED,
        "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}])
}

pub fn node(index: usize) -> Value {
    let (name, uid, taint) = NODES[index];
    let taints = match taint {
        Some(value) => json!([{"key": "dedicated", "value": value, "effect": "NoSchedule"}]),
        None => json!([]),
    };
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name, "uid": uid, "resourceVersion": format!("{}", 1000 + index),
            "creationTimestamp": CREATED,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": "eu-west-1a",
                "node.kubernetes.io/instance-type": if taint.is_some() { "g5.xlarge" } else { "m5.large" }},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "managedFields": managed_fields("kubelet"),
        },
        "spec": {"providerID": format!("aws:///eu-west-1a/i-0{index}"), "taints": taints},
        "status": {
            "addresses": [{"type": "InternalIP", "address": format!("10.0.1.{}", 11 + index)},
                {"type": "Hostname", "address": name}],
            "allocatable": {"cpu": "1930m", "memory": "7220564Ki", "pods": "29"},
            "capacity": {"cpu": "2", "memory": "7934292Ki", "pods": "29"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
                 "lastHeartbeatTime": STARTED, "lastTransitionTime": CREATED},
                {"type": "Ready", "status": "True", "reason": "KubeletReady",
                 "message": "kubelet is posting ready status",
                 "lastHeartbeatTime": STARTED, "lastTransitionTime": CREATED}],
            "nodeInfo": {"kubeletVersion": "v1.29.3", "containerRuntimeVersion": "containerd://1.7.11",
                "architecture": "amd64", "operatingSystem": "linux"},
        },
    })
}

fn template(d: &Daemon) -> Value {
    let mut tolerations = vec![json!({"key": "CriticalAddonsOnly", "operator": "Exists"})];
    if d.everywhere {
        tolerations.push(json!({"operator": "Exists"}));
    }
    json!({
        "metadata": {"creationTimestamp": null, "labels": {"app": d.name},
            "annotations": {"prometheus.io/scrape": "true"}},
        "spec": {
            "containers": [{"name": d.name, "image": format!("registry.example/{}:2.4.1", d.name),
                "imagePullPolicy": "IfNotPresent",
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"}],
            "dnsPolicy": "ClusterFirst", "restartPolicy": "Always",
            "schedulerName": "default-scheduler", "securityContext": {},
            "terminationGracePeriodSeconds": 30,
            "tolerations": tolerations,
        },
    })
}

/// The nodes `d` runs on.
pub fn nodes_of(d: &Daemon) -> Vec<usize> {
    if d.everywhere {
        vec![0, 1, 2]
    } else {
        vec![0, 1]
    }
}

pub fn daemonset(d: &Daemon) -> Value {
    let count = nodes_of(d).len();
    let strategy = if d.on_delete {
        json!({"type": "OnDelete"})
    } else {
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    };
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {
            "name": d.name, "namespace": d.namespace, "uid": d.uid, "generation": d.generation,
            "resourceVersion": "52001", "creationTimestamp": CREATED,
            "labels": {"app": d.name},
            "annotations": {"deprecated.daemonset.template.generation": d.generation.to_string(),
                "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"apps/v1\"}"},
            "managedFields": managed_fields("kubectl-client-side-apply"),
        },
        "spec": {
            "selector": {"matchLabels": {"app": d.name}},
            "template": template(d),
            "updateStrategy": strategy,
            "revisionHistoryLimit": 10,
        },
        "status": {
            "currentNumberScheduled": count, "desiredNumberScheduled": count,
            "numberAvailable": count, "numberMisscheduled": 0, "numberReady": count,
            "observedGeneration": d.generation, "updatedNumberScheduled": count,
        },
    })
}

pub fn revision(d: &Daemon) -> Value {
    let mut template = template(d);
    template["$patch"] = json!("replace");
    json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {
            "name": format!("{}-{}", d.name, d.hash), "namespace": d.namespace,
            "uid": format!("cr-{}", d.uid), "resourceVersion": "51990", "creationTimestamp": CREATED,
            "labels": {"app": d.name, "controller-revision-hash": d.hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": d.name,
                "uid": d.uid, "controller": true, "blockOwnerDeletion": true}],
        },
        "data": {"spec": {"template": template}},
        "revision": d.generation,
    })
}

pub fn pod(d: &Daemon, node_index: usize) -> Value {
    let (node, _, _) = NODES[node_index];
    let name = format!("{}-{}", d.name, ["x7k2p", "q9m4t", "h3v8c"][node_index]);
    let mut value = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": name, "namespace": d.namespace, "generateName": format!("{}-", d.name),
            "uid": format!("pod-{}-{node_index}", d.uid), "resourceVersion": "51000",
            "creationTimestamp": STARTED,
            "labels": {"app": d.name, "controller-revision-hash": d.hash,
                "pod-template-generation": d.generation.to_string()},
            "annotations": {"prometheus.io/scrape": "true"},
            "ownerReferences": [{"apiVersion": d.owner_api, "kind": "DaemonSet", "name": d.name,
                "uid": d.uid, "controller": true, "blockOwnerDeletion": true}],
            "managedFields": managed_fields("kube-controller-manager"),
        },
        "spec": template(d)["spec"].clone(),
        "status": {
            "phase": "Running", "hostIP": format!("10.0.1.{}", 11 + node_index),
            "podIP": format!("10.244.{node_index}.7"), "qosClass": "Burstable", "startTime": STARTED,
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": STARTED},
                {"type": "Ready", "status": "True", "lastTransitionTime": STARTED},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": STARTED},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": STARTED}],
            "containerStatuses": [{"name": d.name, "ready": true, "restartCount": 0, "started": true,
                "image": format!("registry.example/{}:2.4.1", d.name),
                "imageID": "registry.example/sha256:0f3e", "containerID": "containerd://9a8b",
                "state": {"running": {"startedAt": STARTED}}}],
        },
    });
    let spec = &mut value["spec"];
    spec["nodeName"] = json!(node);
    spec["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}});
    value
}

pub fn event() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "node-agent-x7k2p.17d2", "namespace": "kube-system", "creationTimestamp": STARTED},
        "involvedObject": {"kind": "Pod", "namespace": "kube-system", "name": "node-agent-x7k2p"},
        "reason": "Pulled", "message": "Container image already present on machine", "type": "Normal",
        "count": 1, "firstTimestamp": STARTED, "lastTimestamp": STARTED,
    })
}

pub fn all_nodes() -> Vec<Value> {
    (0..NODES.len()).map(node).collect()
}

pub fn pods_in(namespace: &str) -> Vec<Value> {
    DAEMONS
        .iter()
        .filter(|d| d.namespace == namespace)
        .flat_map(|d| nodes_of(d).into_iter().map(move |i| pod(d, i)))
        .collect()
}

pub fn daemonsets_in(namespace: &str) -> Vec<Value> {
    DAEMONS
        .iter()
        .filter(|d| d.namespace == namespace)
        .map(daemonset)
        .collect()
}

pub fn revisions_in(namespace: &str) -> Vec<Value> {
    DAEMONS
        .iter()
        .filter(|d| d.namespace == namespace)
        .map(revision)
        .collect()
}

pub const NAMESPACES: [&str; 2] = ["kube-system", "logging"];

/// What `kubectl get nodes,ds,pods,controllerrevisions,events -A -o json` prints.
pub fn kubectl_list(with_revisions: bool) -> Value {
    let mut items = all_nodes();
    for ns in NAMESPACES {
        items.extend(daemonsets_in(ns));
        items.extend(pods_in(ns));
        if with_revisions {
            items.extend(revisions_in(ns));
        }
    }
    items.push(event());
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

/// Items as a typed List of the API: `kind` and `apiVersion` left off the items.
pub fn typed_list(kind: &str, items: Vec<Value>) -> Value {
    let items: Vec<Value> = items.into_iter().map(strip_kind).collect();
    json!({"apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": "52100"}, "items": items})
}

pub fn strip_kind(mut item: Value) -> Value {
    if let Some(map) = item.as_object_mut() {
        map.remove("kind");
        map.remove("apiVersion");
    }
    item
}

pub fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

pub fn yaml(value: &Value) -> String {
    serde_norway::to_string(value).expect("yaml")
}

pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("json")
}

/// An OpenShift must-gather: per-namespace YAML Lists with kinds, every pod
/// also in a file of its own, nodes one file each, logs and other kinds beside.
pub fn must_gather(root: &Path) {
    let base = "must-gather.local.5829/quay-io-openshift-release-dev-sha256-1f2e";
    for (index, node) in all_nodes().into_iter().enumerate() {
        let name = NODES[index].0;
        write(
            root,
            &format!("{base}/cluster-scoped-resources/core/nodes/{name}.yaml"),
            &yaml(&node),
        );
    }
    for ns in NAMESPACES {
        let dir = format!("{base}/namespaces/{ns}");
        write(
            root,
            &format!("{dir}/apps/daemonsets.yaml"),
            &yaml(&json!({
            "apiVersion": "v1", "kind": "DaemonSetList", "items": daemonsets_in(ns)})),
        );
        write(
            root,
            &format!("{dir}/core/pods.yaml"),
            &yaml(&json!({
            "apiVersion": "v1", "kind": "PodList", "items": pods_in(ns)})),
        );
        for pod in pods_in(ns) {
            let name = pod["metadata"]["name"].as_str().expect("name").to_owned();
            write(root, &format!("{dir}/pods/{name}/{name}.yaml"), &yaml(&pod));
            write(
                root,
                &format!("{dir}/pods/{name}/{name}/{name}/logs/current.log"),
                "2025-06-02T08:00:01Z started\n",
            );
        }
        write(
            root,
            &format!("{dir}/core/configmaps.yaml"),
            &yaml(&json!({
            "apiVersion": "v1", "kind": "ConfigMapList", "items": [
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "namespace": ns}, "data": {"ca.crt": "x"}}]})),
        );
    }
    write(
        root,
        &format!("{base}/timestamp"),
        "2025-06-02 09:00:00 +0000 UTC\n",
    );
}

/// Sonobuoy results: bare JSON arrays of kind-less objects, named by kind.
pub fn sonobuoy(root: &Path) {
    let items =
        |values: Vec<Value>| pretty(&Value::Array(values.into_iter().map(strip_kind).collect()));
    write(root, "resources/cluster/Nodes.json", &items(all_nodes()));
    for ns in NAMESPACES {
        write(
            root,
            &format!("resources/ns/{ns}/DaemonSets.json"),
            &items(daemonsets_in(ns)),
        );
        write(
            root,
            &format!("resources/ns/{ns}/Pods.json"),
            &items(pods_in(ns)),
        );
        write(
            root,
            &format!("resources/ns/{ns}/ControllerRevisions.json"),
            &items(revisions_in(ns)),
        );
        write(root, &format!("resources/ns/{ns}/ConfigMaps.json"), "[]");
    }
    write(root, "meta/config.json", "{\"UUID\": \"d3f1\"}");
    write(root, "plugins/e2e/results/global/e2e.log", "ok\n");
}

/// A Rancher/Harvester support bundle: kind-less items in `items:` Lists, and
/// pod templates whose `creationTimestamp` is the string "null".
pub fn support_bundle(root: &Path) {
    let with_null_timestamp = |mut value: Value| {
        if let Some(meta) = value.pointer_mut("/spec/template/metadata") {
            meta["creationTimestamp"] = json!("null");
        }
        if let Some(meta) = value.pointer_mut("/data/spec/template/metadata") {
            meta["creationTimestamp"] = json!("null");
        }
        strip_kind(value)
    };
    let list = |values: Vec<Value>| {
        yaml(&json!({"items": values.into_iter().map(with_null_timestamp).collect::<Vec<_>>()}))
    };
    write(
        root,
        "bundle/yamls/cluster/v1/nodes.yaml",
        &list(all_nodes()),
    );
    for ns in NAMESPACES {
        write(
            root,
            &format!("bundle/yamls/namespaced/{ns}/apps/v1/daemonsets.yaml"),
            &list(daemonsets_in(ns)),
        );
        write(
            root,
            &format!("bundle/yamls/namespaced/{ns}/v1/pods.yaml"),
            &list(pods_in(ns)),
        );
        write(
            root,
            &format!("bundle/yamls/namespaced/{ns}/apps/v1/controllerrevisions.yaml"),
            &list(revisions_in(ns)),
        );
    }
    write(
        root,
        "bundle/logs/kube-system/node-agent-x7k2p/node-agent.log",
        "started\n",
    );
}

/// `kubectl cluster-info dump` on stdout: typed Lists with kind-less items,
/// one after another, with container-log sections between them.
pub fn cluster_info_dump() -> String {
    let mut out = pretty(&typed_list("NodeList", all_nodes()));
    out.push('\n');
    for ns in NAMESPACES {
        for (kind, items) in [
            (
                "EventList",
                if ns == "kube-system" {
                    vec![event()]
                } else {
                    vec![]
                },
            ),
            ("ReplicationControllerList", vec![]),
            ("DaemonSetList", daemonsets_in(ns)),
            ("PodList", pods_in(ns)),
        ] {
            let mut list = typed_list(kind, items);
            if kind == "ReplicationControllerList" {
                list["items"] = Value::Null;
            }
            out.push_str(&pretty(&list));
            out.push('\n');
        }
        for pod in pods_in(ns) {
            let name = pod["metadata"]["name"].as_str().expect("name").to_owned();
            let _ = write!(
                out,
                "==== START logs for container agent of pod {ns}/{name} ====\n{{\"level\":\"info\",\"msg\":\"started\"}}\nplain text line\n==== END logs for container agent of pod {ns}/{name} ====\n"
            );
        }
    }
    out
}

/// A tar archive of every file under `root`, names relative to it.
pub fn tar_of(root: &Path) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.append_dir_all(".", root).expect("tar");
    builder.into_inner().expect("tar")
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

pub fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut writer =
        lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1)).expect("xz");
    writer.write_all(bytes).expect("xz");
    writer.finish().expect("xz")
}

/// A zip of every file under `root`.
pub fn zip_of(root: &Path) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            writer.start_file(name, options).expect("zip entry");
            writer
                .write_all(&std::fs::read(&path).expect("read"))
                .expect("zip data");
        }
    }
    writer.finish().expect("zip").into_inner()
}
