//! Pod status as the kubelet reports it at each step of a container's life:
//! the phase, the four pod conditions with lastTransitionTime, per-container
//! state (waiting / running / terminated with reasons), restart counts,
//! hostIP, podIP and startTime. Pure edits of a pod's JSON; the timing and
//! the choice of step are [`super::lifecycle`]'s.

use std::time::Duration;

use serde_json::{Value, json};

/// The container names of a pod's spec.
pub fn container_names(pod: &Value) -> Vec<String> {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect()
}

fn container_image<'a>(pod: &'a Value, name: &str) -> &'a str {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == name)
        .and_then(|c| c["image"].as_str())
        .unwrap_or_default()
}

/// Sets a pod condition, changing lastTransitionTime only when the status changes.
pub fn set_condition(
    pod: &mut Value,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    now: &str,
) {
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else {
        return;
    };
    let mut condition =
        json!({"type": type_, "status": status, "lastProbeTime": null, "lastTransitionTime": now});
    if let Some(reason) = reason {
        condition["reason"] = json!(reason);
    }
    if let Some(message) = message {
        condition["message"] = json!(message);
    }
    match conditions.iter_mut().find(|c| c["type"] == type_) {
        Some(existing) => {
            if existing["status"] == status {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}

/// The pod is bound to a node: PodScheduled True.
pub fn scheduled(pod: &mut Value, node: &str, now: &str) {
    pod["spec"]["nodeName"] = json!(node);
    set_condition(pod, "PodScheduled", "True", None, None, now);
}

/// The kubelet accepted the pod: Pending, Initialized, containers waiting
/// in ContainerCreating, hostIP and startTime set (the QoS class is
/// admission's, never the kubelet's).
pub fn accepted(pod: &mut Value, host_ip: &str, now: &str) {
    pod["status"]["phase"] = json!("Pending");
    pod["status"]["hostIP"] = json!(host_ip);
    pod["status"]["hostIPs"] = json!([{"ip": host_ip}]);
    pod["status"]["startTime"] = json!(now);
    set_condition(pod, "PodReadyToStartContainers", "False", None, None, now);
    set_condition(pod, "Initialized", "True", None, None, now);
    set_condition(pod, "PodScheduled", "True", None, None, now);
    not_ready(pod, now);
    let statuses: Vec<Value> = container_names(pod)
        .iter()
        .map(|name| {
            json!({
                "name": name, "image": container_image(pod, name), "imageID": "",
                "ready": false, "restartCount": 0, "started": false,
                "state": {"waiting": {"reason": "ContainerCreating"}},
                "lastState": {},
            })
        })
        .collect();
    pod["status"]["containerStatuses"] = Value::Array(statuses);
}

/// Ready and ContainersReady False because containers are not ready.
pub fn not_ready(pod: &mut Value, now: &str) {
    let names = container_names(pod).join(" ");
    let message = format!("containers with unready status: [{names}]");
    set_condition(
        pod,
        "Ready",
        "False",
        Some("ContainersNotReady"),
        Some(&message),
        now,
    );
    set_condition(
        pod,
        "ContainersReady",
        "False",
        Some("ContainersNotReady"),
        Some(&message),
        now,
    );
}

fn each_container(pod: &mut Value, mut edit: impl FnMut(&mut Value)) {
    if let Some(statuses) = pod["status"]["containerStatuses"].as_array_mut() {
        statuses.iter_mut().for_each(&mut edit);
    }
}

/// Containers wait with `reason` (ErrImagePull, ImagePullBackOff, CrashLoopBackOff, ...).
pub fn waiting(pod: &mut Value, reason: &str, message: &str) {
    each_container(pod, |c| {
        c["state"] = json!({"waiting": {"reason": reason, "message": message}});
        c["ready"] = json!(false);
        c["started"] = json!(false);
    });
}

/// Containers record the pulled image's digest (written with the status
/// that shows them running, as the kubelet reads `imageID` from the
/// runtime's container).
pub fn pulled(pod: &mut Value, digest: &str) {
    each_container(pod, |c| {
        let image = c["image"].as_str().unwrap_or_default();
        let repository = image.rsplit_once(':').map_or(image, |(repo, _)| repo);
        c["imageID"] = json!(format!("{repository}@{digest}"));
    });
}

/// Containers started: phase Running, containers running since `now`, podIP set.
pub fn running(pod: &mut Value, pod_ip: &str, container_id: &str, now: &str) {
    pod["status"]["phase"] = json!("Running");
    pod["status"]["podIP"] = json!(pod_ip);
    pod["status"]["podIPs"] = json!([{"ip": pod_ip}]);
    set_condition(pod, "PodReadyToStartContainers", "True", None, None, now);
    each_container(pod, |c| {
        c["state"] = json!({"running": {"startedAt": now}});
        c["containerID"] = json!(format!("containerd://{container_id}"));
        c["started"] = json!(true);
        c["ready"] = json!(false);
    });
}

/// The readiness probe passed: Ready and ContainersReady True.
pub fn ready(pod: &mut Value, now: &str) {
    set_condition(pod, "ContainersReady", "True", None, None, now);
    set_condition(pod, "Ready", "True", None, None, now);
    each_container(pod, |c| c["ready"] = json!(true));
}

/// Containers exited with `exit_code`: lastState terminated (reason `Error`,
/// the message), restartCount + 1, waiting in CrashLoopBackOff for `backoff`
/// with kubelet's waiting message.
pub fn crashed(pod: &mut Value, exit_code: i32, message: &str, backoff: Duration, now: &str) {
    let pod_name = pod["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let namespace = pod["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    not_ready(pod, now);
    each_container(pod, |c| {
        let started = c["state"]["running"]["startedAt"].clone();
        let name = c["name"].as_str().unwrap_or_default().to_owned();
        c["lastState"] = json!({"terminated": {
            "exitCode": exit_code, "reason": "Error", "message": message,
            "startedAt": started, "finishedAt": now,
            "containerID": c["containerID"].clone(),
        }});
        c["restartCount"] = json!(c["restartCount"].as_i64().unwrap_or(0) + 1);
        let wait = format!(
            "back-off {} restarting failed container={name} pod={pod_name}_{namespace}",
            go_duration(backoff)
        );
        c["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": wait}});
        c["ready"] = json!(false);
        c["started"] = json!(false);
    });
}

/// Marks `pod` evicted by the kubelet at `now` (upstream eviction manager
/// `evictPod`): phase Failed, reason `Evicted` with the eviction message, the
/// `DisruptionTarget` condition (`TerminationByKubelet`), not ready, and every
/// container terminated (a running one killed, exit 137; one never started
/// `ContainerStatusUnknown`, as the kubelet reports it).
pub fn evicted(pod: &mut Value, message: &str, now: &str) {
    not_ready(pod, now);
    set_condition(
        pod,
        "DisruptionTarget",
        "True",
        Some("TerminationByKubelet"),
        Some(message),
        now,
    );
    pod["status"]["phase"] = json!("Failed");
    pod["status"]["reason"] = json!("Evicted");
    pod["status"]["message"] = json!(message);
    each_container(pod, |c| {
        let terminated = match c["state"]["running"]["startedAt"].as_str() {
            Some(started) => json!({
                "exitCode": 137, "reason": "Error", "startedAt": started, "finishedAt": now,
                "containerID": c["containerID"].clone(),
            }),
            None => json!({
                "exitCode": 137, "reason": "ContainerStatusUnknown", "finishedAt": now,
                "message": "The container could not be located when the pod was terminated",
            }),
        };
        c["state"] = json!({"terminated": terminated});
        c["ready"] = json!(false);
        c["started"] = json!(false);
    });
}

/// A duration as Go prints it (`500ms`, `40s`, `1m20s`, `5m0s`, `1h0m0s`),
/// the way kubelet's messages show back-offs.
pub fn go_duration(duration: Duration) -> String {
    let total = duration.as_secs();
    if total == 0 {
        return format!("{}ms", duration.as_millis());
    }
    let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60);
    let millis = duration.subsec_millis();
    let seconds = if millis == 0 {
        format!("{seconds}s")
    } else {
        format!(
            "{seconds}.{}s",
            format!("{millis:03}").trim_end_matches('0')
        )
    };
    match (hours, minutes) {
        (0, 0) => seconds,
        (0, m) => format!("{m}m{seconds}"),
        (h, m) => format!("{h}h{m}m{seconds}"),
    }
}

/// Whether every container is ready and the pod Running.
pub fn is_ready(pod: &Value) -> bool {
    pod["status"]["phase"] == "Running"
        && pod["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({"metadata": {"name": "agent-x", "namespace": "ns"},
               "spec": {"containers": [{"name": "agent", "image": "reg/agent:1"}]}})
    }

    #[test]
    fn a_pod_walks_to_ready() {
        let mut p = pod();
        scheduled(&mut p, "n1", "2026-01-01T00:00:00Z");
        accepted(&mut p, "10.0.0.1", "2026-01-01T00:00:01Z");
        assert_eq!(
            p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating"
        );
        pulled(&mut p, "sha256:ab");
        assert_eq!(
            p["status"]["containerStatuses"][0]["imageID"],
            "reg/agent@sha256:ab"
        );
        running(&mut p, "100.64.0.5", "c0ffee", "2026-01-01T00:00:02Z");
        assert!(!is_ready(&p));
        ready(&mut p, "2026-01-01T00:00:03Z");
        assert!(is_ready(&p));
        let typed: crate::model::Pod = serde_json::from_value(p.clone()).expect("decodes");
        assert!(typed.is_ready());
        let ready_since = typed.ready_condition().and_then(|c| c.last_transition_time);
        assert_eq!(
            ready_since.map(|t| t.to_string()).as_deref(),
            Some("2026-01-01T00:00:03Z")
        );
    }

    #[test]
    fn durations_print_like_go() {
        let cases = [
            (Duration::from_millis(500), "500ms"),
            (Duration::from_secs(10), "10s"),
            (Duration::from_millis(2500), "2.5s"),
            (Duration::from_secs(80), "1m20s"),
            (Duration::from_secs(300), "5m0s"),
            (Duration::from_secs(3600), "1h0m0s"),
        ];
        for (duration, text) in cases {
            assert_eq!(go_duration(duration), text);
        }
    }

    #[test]
    fn crashes_count_restarts_and_keep_transition_times() {
        let mut p = pod();
        accepted(&mut p, "10.0.0.1", "2026-01-01T00:00:01Z");
        running(&mut p, "100.64.0.5", "c1", "2026-01-01T00:00:02Z");
        crashed(
            &mut p,
            1,
            "boom",
            Duration::from_secs(10),
            "2026-01-01T00:00:03Z",
        );
        crashed(
            &mut p,
            1,
            "boom",
            Duration::from_secs(80),
            "2026-01-01T00:00:04Z",
        );
        let c = &p["status"]["containerStatuses"][0];
        assert_eq!(c["restartCount"], 2);
        assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(c["lastState"]["terminated"]["exitCode"], 1);
        assert_eq!(c["lastState"]["terminated"]["reason"], "Error");
        assert_eq!(c["lastState"]["terminated"]["message"], "boom");
        assert_eq!(
            c["state"]["waiting"]["message"],
            "back-off 1m20s restarting failed container=agent pod=agent-x_ns"
        );
        let ready = p["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .cloned();
        assert_eq!(
            ready.map(|r| r["lastTransitionTime"].clone()),
            Some(json!("2026-01-01T00:00:01Z")),
            "still False since t1"
        );
    }
}
