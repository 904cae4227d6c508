//! Table cells per kind, computed as the upstream apiserver printers (1.32)
//! compute them: pod READY/STATUS/RESTARTS, node STATUS with
//! `,SchedulingDisabled` and ROLES, DaemonSet counters and selectors,
//! ControllerRevision owner, event object and source, PriorityClass value,
//! default and preemption policy, and AGE as upstream
//! `HumanDuration`. Pure functions of the object and `now`.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::sim::resources::ResourceKind;

/// The cells of one row, in the order of the kind's column definitions.
pub fn cells(kind: ResourceKind, object: &Value, now: Timestamp) -> Vec<Value> {
    match kind {
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
        ResourceKind::PriorityClass => vec![
            json!(name(object)),
            json!(object["value"].as_i64().unwrap_or_default()),
            json!(object["globalDefault"].as_bool().unwrap_or_default()),
            json!(age(object, now)),
            json!(object["preemptionPolicy"].as_str().unwrap_or_default()),
        ],
        ResourceKind::Inert(kind) => super::inert_cells::cells(kind.info(), object, now),
    }
}

pub(super) fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

pub(super) fn text_or<'a>(value: &'a Value, default: &'a str) -> &'a str {
    value.as_str().filter(|s| !s.is_empty()).unwrap_or(default)
}

pub(super) fn age(object: &Value, now: Timestamp) -> String {
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
}
