//! Server-side Tables for `kubectl get`: column definitions and cells per
//! kind, computed the way the upstream apiserver printers do (1.32), including
//! AGE as upstream `HumanDuration`. Pure functions of the object and `now`.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::cells;
use crate::sim::resources::ResourceKind;

/// `(name, type, priority)`; priority 1 columns show only with `-o wide`.
type Column = (&'static str, &'static str, u8);

fn columns(kind: ResourceKind) -> &'static [Column] {
    match kind {
        ResourceKind::Inert(kind) => super::inert_cells::columns(kind.info()),
        ResourceKind::Pod => &[
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            ("Age", "string", 0),
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ],
        ResourceKind::Node => &[
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Roles", "string", 0),
            ("Age", "string", 0),
            ("Version", "string", 0),
            ("Internal-IP", "string", 1),
            ("External-IP", "string", 1),
            ("OS-Image", "string", 1),
            ("Kernel-Version", "string", 1),
            ("Container-Runtime", "string", 1),
        ],
        ResourceKind::DaemonSet => &[
            ("Name", "string", 0),
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            ("Node Selector", "string", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ],
        ResourceKind::ControllerRevision => &[
            ("Name", "string", 0),
            ("Controller", "string", 0),
            ("Revision", "integer", 0),
            ("Age", "string", 0),
        ],
        ResourceKind::Event => &[
            ("Last Seen", "string", 0),
            ("Type", "string", 0),
            ("Reason", "string", 0),
            ("Object", "string", 0),
            ("Subobject", "string", 1),
            ("Source", "string", 1),
            ("Message", "string", 0),
            ("First Seen", "string", 1),
            ("Count", "integer", 1),
            ("Name", "string", 1),
        ],
        ResourceKind::Namespace => &[
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Age", "string", 0),
        ],
        // Upstream's printers list PreemptionPolicy without a priority, so
        // `kubectl get priorityclasses` shows it by default.
        ResourceKind::PriorityClass => &[
            ("Name", "string", 0),
            ("Value", "integer", 0),
            ("Global-Default", "boolean", 0),
            ("Age", "string", 0),
            ("PreemptionPolicy", "string", 0),
        ],
    }
}

/// The `columnDefinitions` array for a kind.
pub fn column_definitions(kind: ResourceKind) -> Value {
    columns(kind)
        .iter()
        .map(|(name, type_, priority)| {
            let format = if *name == "Name" { "name" } else { "" };
            json!({"name": name, "type": type_, "format": format, "description": name, "priority": priority})
        })
        .collect()
}

/// What `rows[].object` carries (`includeObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncludeObject {
    /// Nothing.
    None,
    /// A PartialObjectMetadata (the default).
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Parses the query value (default Metadata).
    pub fn parse(value: Option<&str>) -> IncludeObject {
        match value {
            Some("None") => IncludeObject::None,
            Some("Object") => IncludeObject::Object,
            _ => IncludeObject::Metadata,
        }
    }
}

/// One table row for an object.
pub fn row(kind: ResourceKind, object: &Value, include: IncludeObject, now: Timestamp) -> Value {
    let cells = cells::cells(kind, object, now);
    let mut row = json!({"cells": cells});
    match include {
        IncludeObject::None => {}
        IncludeObject::Object => row["object"] = object.clone(),
        IncludeObject::Metadata => row["object"] = partial_metadata(object),
    }
    row
}

/// A Table with the given rows.
#[allow(
    clippy::needless_pass_by_value,
    reason = "callers build rows and metadata just for this table"
)]
pub fn table(kind: ResourceKind, rows: Vec<Value>, with_columns: bool, metadata: Value) -> Value {
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": if with_columns { column_definitions(kind) } else { json!([]) },
        "rows": rows,
    })
}

fn partial_metadata(object: &Value) -> Value {
    let mut meta = object["metadata"].clone();
    if let Some(meta) = meta.as_object_mut() {
        meta.remove("managedFields");
    }
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_status_shows_cordon_and_roles() {
        let node = json!({"metadata":{"name":"n","creationTimestamp":"2026-01-01T00:00:00Z",
            "labels":{"node-role.kubernetes.io/control-plane":""}},
            "spec":{"unschedulable":true},
            "status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.32.4"}}});
        let now: Timestamp = "2026-01-01T00:05:00Z".parse().unwrap();
        let row = row(ResourceKind::Node, &node, IncludeObject::Metadata, now);
        assert_eq!(row["cells"][1], "Ready,SchedulingDisabled");
        assert_eq!(row["cells"][2], "control-plane");
        assert_eq!(row["cells"][3], "5m");
        assert_eq!(row["cells"][4], "v1.32.4");
        assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    }

    #[test]
    fn pod_status_prefers_waiting_reason_and_terminating() {
        let mut pod = json!({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c"}],"nodeName":"n1"},
            "status":{"phase":"Pending","containerStatuses":[{"ready":false,"restartCount":2,
                "state":{"waiting":{"reason":"ImagePullBackOff"}}}]}});
        let now = Timestamp::UNIX_EPOCH;
        let cells = &row(ResourceKind::Pod, &pod, IncludeObject::None, now)["cells"];
        assert_eq!(cells[1], "0/1");
        assert_eq!(cells[2], "ImagePullBackOff");
        assert_eq!(cells[3], "2");
        assert_eq!(cells[6], "n1");
        pod["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(
            row(ResourceKind::Pod, &pod, IncludeObject::None, now)["cells"][2],
            "Terminating"
        );
    }

    #[test]
    fn daemonset_and_revision_cells() {
        let ds = json!({"metadata":{"name":"agent"},"spec":{"selector":{"matchLabels":{"app":"a"}},
            "template":{"spec":{"nodeSelector":{"disk":"ssd"},"containers":[{"name":"c","image":"i:1"}]}}},
            "status":{"desiredNumberScheduled":3,"numberReady":2}});
        let cells = &row(
            ResourceKind::DaemonSet,
            &ds,
            IncludeObject::None,
            Timestamp::UNIX_EPOCH,
        )["cells"];
        assert_eq!(cells[1], 3);
        assert_eq!(cells[3], 2);
        assert_eq!(cells[6], "disk=ssd");
        assert_eq!(cells[10], "app=a");
        let cr = json!({"metadata":{"name":"agent-1","ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"agent","controller":true}]},"revision":4});
        let cells = &row(
            ResourceKind::ControllerRevision,
            &cr,
            IncludeObject::None,
            Timestamp::UNIX_EPOCH,
        )["cells"];
        assert_eq!(cells[1], "daemonset.apps/agent");
        assert_eq!(cells[2], 4);
    }
}
