//! Server-side Tables for `kubectl get`: column definitions and cells per
//! kind, computed the way the upstream apiserver printers do (1.32), including
//! AGE as upstream `HumanDuration`. Pure functions of the object and `now`.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::sim::resources::ResourceKind;

/// `(name, type, priority)`; priority 1 columns show only with `-o wide`.
type Column = (&'static str, &'static str, u8);

fn columns(kind: ResourceKind) -> &'static [Column] {
    match kind {
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
    let cells = match kind {
        ResourceKind::Pod => pod_cells(object, now),
        ResourceKind::Node => node_cells(object, now),
        ResourceKind::DaemonSet => daemonset_cells(object, now),
        ResourceKind::ControllerRevision => revision_cells(object, now),
        ResourceKind::Event => event_cells(object, now),
        ResourceKind::Namespace => vec![
            json!(name(object)),
            json!(text_or(&object["status"]["phase"], "Active")),
            json!(age(object, now)),
        ],
    };
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

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn text_or<'a>(value: &'a Value, default: &'a str) -> &'a str {
    value.as_str().filter(|s| !s.is_empty()).unwrap_or(default)
}

fn age(object: &Value, now: Timestamp) -> String {
    since(&object["metadata"]["creationTimestamp"], now)
}

fn since(time: &Value, now: Timestamp) -> String {
    time.as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map_or_else(
            || "<unknown>".to_owned(),
            |t| human_duration(now.as_second() - t.as_second()),
        )
}

/// Upstream `duration.HumanDuration`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    let s = seconds.max(0);
    let (minute, hour, day, year) = (60, 3600, 86_400, 365 * 86_400);
    match s {
        s if s < 2 * minute => format!("{s}s"),
        s if s < 10 * minute => match s % minute {
            0 => format!("{}m", s / minute),
            rest => format!("{}m{rest}s", s / minute),
        },
        s if s < 3 * hour => format!("{}m", s / minute),
        s if s < 8 * hour => match (s % hour) / minute {
            0 => format!("{}h", s / hour),
            m => format!("{}h{m}m", s / hour),
        },
        s if s < 48 * hour => format!("{}h", s / hour),
        s if s < 8 * day => match (s % day) / hour {
            0 => format!("{}d", s / day),
            h => format!("{}d{h}h", s / day),
        },
        s if s < 2 * year => format!("{}d", s / day),
        s if s < 8 * year => match (s % year) / day {
            0 => format!("{}y", s / year),
            d => format!("{}y{d}d", s / year),
        },
        s => format!("{}y", s / year),
    }
}

fn pod_cells(pod: &Value, now: Timestamp) -> Vec<Value> {
    let statuses = pod["status"]["containerStatuses"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let containers = pod["spec"]["containers"].as_array().map_or(0, Vec::len);
    let ready = statuses.iter().filter(|s| s["ready"] == true).count();
    let restarts: i64 = statuses
        .iter()
        .filter_map(|s| s["restartCount"].as_i64())
        .sum();
    let mut reason = text_or(
        &pod["status"]["reason"],
        text_or(&pod["status"]["phase"], "Unknown"),
    )
    .to_owned();
    for status in statuses {
        let state = &status["state"];
        if let Some(waiting) = state["waiting"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            waiting.clone_into(&mut reason);
        } else if let Some(terminated) = state["terminated"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            terminated.clone_into(&mut reason);
        }
    }
    if pod["metadata"]["deletionTimestamp"].is_string() {
        "Terminating".clone_into(&mut reason);
    }
    let gates = pod["spec"]["readinessGates"].as_array().map_or(0, Vec::len);
    vec![
        json!(name(pod)),
        json!(format!("{ready}/{containers}")),
        json!(reason),
        json!(restarts.to_string()),
        json!(age(pod, now)),
        json!(text_or(&pod["status"]["podIP"], "<none>")),
        json!(text_or(&pod["spec"]["nodeName"], "<none>")),
        json!(text_or(&pod["status"]["nominatedNodeName"], "<none>")),
        json!(if gates == 0 {
            "<none>".to_owned()
        } else {
            format!("0/{gates}")
        }),
    ]
}

fn node_cells(node: &Value, now: Timestamp) -> Vec<Value> {
    let conditions = node["status"]["conditions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let mut status = match conditions
        .iter()
        .find(|c| c["type"] == "Ready")
        .map(|c| &c["status"])
    {
        Some(s) if s == "True" => "Ready".to_owned(),
        Some(s) if s == "False" => "NotReady".to_owned(),
        _ => "Unknown".to_owned(),
    };
    if node["spec"]["unschedulable"] == true {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<&str> = node["metadata"]["labels"]
        .as_object()
        .map(|labels| {
            labels
                .keys()
                .filter_map(|k| k.strip_prefix("node-role.kubernetes.io/"))
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    roles.sort_unstable();
    let address = |kind: &str| {
        node["status"]["addresses"]
            .as_array()
            .and_then(|a| a.iter().find(|a| a["type"] == kind))
            .and_then(|a| a["address"].as_str())
            .unwrap_or("<none>")
            .to_owned()
    };
    let info = &node["status"]["nodeInfo"];
    vec![
        json!(name(node)),
        json!(status),
        json!(if roles.is_empty() {
            "<none>".to_owned()
        } else {
            roles.join(",")
        }),
        json!(age(node, now)),
        json!(text_or(&info["kubeletVersion"], "")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(text_or(&info["osImage"], "<unknown>")),
        json!(text_or(&info["kernelVersion"], "<unknown>")),
        json!(text_or(&info["containerRuntimeVersion"], "<unknown>")),
    ]
}

fn daemonset_cells(ds: &Value, now: Timestamp) -> Vec<Value> {
    let status = &ds["status"];
    let count = |field: &str| json!(status[field].as_i64().unwrap_or(0));
    let template = &ds["spec"]["template"]["spec"];
    let node_selector = pairs(&template["nodeSelector"]);
    let containers = template["containers"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let joined = |field: &str| {
        containers
            .iter()
            .filter_map(|c| c[field].as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    vec![
        json!(name(ds)),
        count("desiredNumberScheduled"),
        count("currentNumberScheduled"),
        count("numberReady"),
        count("updatedNumberScheduled"),
        count("numberAvailable"),
        json!(if node_selector.is_empty() {
            "<none>".to_owned()
        } else {
            node_selector
        }),
        json!(age(ds, now)),
        json!(joined("name")),
        json!(joined("image")),
        json!(selector_text(&ds["spec"]["selector"])),
    ]
}

fn revision_cells(cr: &Value, now: Timestamp) -> Vec<Value> {
    let controller = cr["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
        .map_or_else(
            || "<none>".to_owned(),
            |r| {
                let group = r["apiVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .split_once('/')
                    .map(|(g, _)| g)
                    .unwrap_or_default();
                let kind = r["kind"].as_str().unwrap_or_default().to_ascii_lowercase();
                let kind = if group.is_empty() {
                    kind
                } else {
                    format!("{kind}.{group}")
                };
                format!("{kind}/{}", r["name"].as_str().unwrap_or_default())
            },
        );
    vec![
        json!(name(cr)),
        json!(controller),
        json!(cr["revision"].as_i64().unwrap_or(0)),
        json!(age(cr, now)),
    ]
}

fn event_cells(event: &Value, now: Timestamp) -> Vec<Value> {
    let involved = &event["involvedObject"];
    let last = [
        &event["lastTimestamp"],
        &event["eventTime"],
        &event["metadata"]["creationTimestamp"],
    ]
    .into_iter()
    .find(|t| t.is_string())
    .unwrap_or(&Value::Null);
    let first = if event["firstTimestamp"].is_string() {
        &event["firstTimestamp"]
    } else {
        last
    };
    let object = format!(
        "{}/{}",
        involved["kind"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase(),
        involved["name"].as_str().unwrap_or_default()
    );
    let source = [&event["source"]["component"], &event["reportingComponent"]]
        .into_iter()
        .find_map(|s| s.as_str().filter(|s| !s.is_empty()))
        .map_or_else(String::new, |c| match event["source"]["host"].as_str() {
            Some(host) if !host.is_empty() => format!("{c}, {host}"),
            _ => c.to_owned(),
        });
    vec![
        json!(since(last, now)),
        json!(text_or(&event["type"], "")),
        json!(text_or(&event["reason"], "")),
        json!(object),
        json!(text_or(&involved["fieldPath"], "")),
        json!(source),
        json!(text_or(&event["message"], "").trim()),
        json!(since(first, now)),
        json!(event["count"].as_i64().unwrap_or(1)),
        json!(name(event)),
    ]
}

fn pairs(map: &Value) -> String {
    map.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// A LabelSelector rendered as selector text (`app=x,tier in (a,b)`).
pub fn selector_text(selector: &Value) -> String {
    let mut parts: Vec<String> = pairs(&selector["matchLabels"])
        .split(',')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    for expression in selector["matchExpressions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
    {
        let key = expression["key"].as_str().unwrap_or_default();
        let values = expression["values"]
            .as_array()
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        parts.push(match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.to_owned(),
            _ => format!("!{key}"),
        });
    }
    if parts.is_empty() {
        "<none>".to_owned()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_matches_upstream_steps() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (59, "59s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (700, "11m"),
            (3 * 3600 + 60, "3h1m"),
            (8 * 3600, "8h"),
            (49 * 3600, "2d1h"),
            (9 * 86_400, "9d"),
            (3 * 365 * 86_400 + 86_400, "3y1d"),
            (9 * 365 * 86_400, "9y"),
        ];
        for (seconds, expected) in cases {
            assert_eq!(human_duration(seconds), expected, "{seconds}");
        }
    }

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
