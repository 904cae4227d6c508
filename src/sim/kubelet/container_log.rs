//! Simulated container logs, as the kubelet would serve them for
//! `GET …/pods/{name}/log`: which container attempt's log is asked for
//! (current or `previous`), the refusals kubelet gives when there is none
//! (its `validateContainerLogStatus`), and the lines of an attempt, made up
//! from the pod's own status (start time, readiness, last termination's exit
//! code and message) so the log tells the same story as the status.
//!
//! Pure: a pod's JSON in, lines out. No clock, no store.

use serde_json::Value;

/// One log line: when it was written and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// RFC 3339 time the line was written (kubelet's `timestamps=true` prefix).
    pub time: String,
    /// The line, without a newline.
    pub text: String,
}

/// Why there is no log to serve (upstream answers these with 400 BadRequest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoLog(pub String);

/// One run of a container, as far as its status tells.
struct Attempt<'a> {
    started_at: Option<&'a str>,
    finished_at: Option<&'a str>,
    exit_code: Option<i64>,
    reason: Option<&'a str>,
    message: Option<&'a str>,
    ready: bool,
}

/// The log lines of `container`'s current (or, with `previous`, its last
/// terminated) run, or kubelet's refusal in its words.
pub fn container_log(pod: &Value, container: &str, previous: bool) -> Result<Vec<LogLine>, NoLog> {
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let status = pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == container)
        .ok_or_else(|| {
            NoLog(format!(
                "container \"{container}\" in pod \"{pod_name}\" is not available"
            ))
        })?;
    let attempt = choose_attempt(status, container, pod_name, previous)?;
    let image = status["image"].as_str().unwrap_or_default();
    let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    Ok(lines(&attempt, container, image, node))
}

/// kubelet's choice of container to read (`validateContainerLogStatus`):
/// `previous` needs a last termination with a container ID; otherwise the
/// running container, else the terminated one, else the last termination;
/// a container that is only waiting has no log yet.
fn choose_attempt<'a>(
    status: &'a Value,
    container: &str,
    pod_name: &str,
    previous: bool,
) -> Result<Attempt<'a>, NoLog> {
    let last = &status["lastState"]["terminated"];
    let state = &status["state"];
    let has_id = |t: &Value| t["containerID"].as_str().is_some_and(|id| !id.is_empty());
    let terminated = |t: &'a Value| Attempt {
        started_at: t["startedAt"].as_str(),
        finished_at: t["finishedAt"].as_str(),
        exit_code: t["exitCode"].as_i64(),
        reason: t["reason"].as_str(),
        message: t["message"].as_str(),
        ready: false,
    };
    let refuse = |what: &str| {
        NoLog(format!(
            "container \"{container}\" in pod \"{pod_name}\" {what}"
        ))
    };
    if previous {
        return if last.is_object() && has_id(last) {
            Ok(terminated(last))
        } else {
            Err(NoLog(format!(
                "previous terminated container \"{container}\" in pod \"{pod_name}\" not found"
            )))
        };
    }
    if state["running"].is_object() {
        return Ok(Attempt {
            started_at: state["running"]["startedAt"].as_str(),
            finished_at: None,
            exit_code: None,
            reason: None,
            message: None,
            ready: status["ready"].as_bool().unwrap_or(false),
        });
    }
    if state["terminated"].is_object() {
        let now = &state["terminated"];
        return match (has_id(now), last.is_object() && has_id(last)) {
            (true, _) => Ok(terminated(now)),
            (false, true) => Ok(terminated(last)),
            (false, false) => Err(refuse("is terminated")),
        };
    }
    if last.is_object() {
        return if has_id(last) {
            Ok(terminated(last))
        } else {
            Err(refuse("is terminated"))
        };
    }
    match state["waiting"]["reason"].as_str() {
        Some("ErrImagePull") => Err(refuse("is waiting to start: image can't be pulled")),
        Some("ImagePullBackOff") => Err(refuse(
            "is waiting to start: trying and failing to pull image",
        )),
        Some(reason) => Err(refuse(&format!("is waiting to start: {reason}"))),
        None => Err(refuse("is waiting to start - no logs yet")),
    }
}

/// The lines of one run: a few start-up lines, then either "ready" (a
/// running, ready container) or the failure and the exit (a terminated one).
fn lines(attempt: &Attempt<'_>, container: &str, image: &str, node: &str) -> Vec<LogLine> {
    let start = attempt
        .started_at
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let at = |millis: i64| -> String {
        start
            .and_then(|t| {
                t.checked_add(jiff::SignedDuration::from_millis(millis))
                    .ok()
            })
            .map(|t| t.to_string())
            .unwrap_or_default()
    };
    let version = image.rsplit_once(':').map_or("unknown", |(_, tag)| tag);
    let mut out = vec![
        line(
            at(0),
            format!("level=info msg=\"starting {container}\" version={version} node={node}"),
        ),
        line(
            at(120),
            format!("level=info msg=\"loaded configuration\" path=/etc/{container}/config.yaml"),
        ),
        line(
            at(350),
            "level=info msg=\"metrics server listening\" addr=:9100".to_owned(),
        ),
    ];
    if attempt.ready {
        out.push(line(
            at(900),
            "level=info msg=\"ready: watching the node\"".to_owned(),
        ));
    }
    if let Some(code) = attempt.exit_code {
        // finishedAt has whole seconds: never log the exit before the start-up lines.
        let startup_end =
            start.and_then(|t| t.checked_add(jiff::SignedDuration::from_millis(500)).ok());
        let finished = attempt
            .finished_at
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        let end = match (finished, startup_end) {
            (Some(f), Some(s)) if f >= s => f.to_string(),
            (Some(f), None) => f.to_string(),
            _ => at(500),
        };
        let message = attempt
            .message
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .or(attempt.reason)
            .unwrap_or("container exited");
        if code != 0 {
            out.push(line(end.clone(), format!("level=error msg=\"{message}\"")));
        }
        out.push(line(end, format!("level=info msg=\"exiting\" code={code}")));
    }
    out
}

fn line(time: String, text: String) -> LogLine {
    LogLine { time, text }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sim::kubelet::pod_status;

    fn pod() -> Value {
        json!({"metadata": {"name": "agent-x", "namespace": "ns"},
               "spec": {"nodeName": "edge-01",
                        "containers": [{"name": "agent", "image": "reg/agent:1.5.0"}]}})
    }

    fn texts(lines: &[LogLine]) -> Vec<&str> {
        lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn a_ready_agent_logs_its_start_up() {
        let mut p = pod();
        pod_status::accepted(&mut p, "10.0.0.1", "2026-01-01T00:00:01Z");
        pod_status::running(&mut p, "100.64.0.5", "c1", "2026-01-01T00:00:02Z");
        pod_status::ready(&mut p, "2026-01-01T00:00:03Z");
        let lines = container_log(&p, "agent", false).expect("running");
        assert_eq!(lines[0].time, "2026-01-01T00:00:02Z");
        assert!(
            lines[0]
                .text
                .contains("starting agent\" version=1.5.0 node=edge-01")
        );
        assert!(texts(&lines).last().is_some_and(|l| l.contains("ready")));
        assert_eq!(
            container_log(&p, "agent", true),
            Err(NoLog(
                "previous terminated container \"agent\" in pod \"agent-x\" not found".into()
            ))
        );
    }

    #[test]
    fn a_crash_loop_logs_its_failure_now_and_previously() {
        let mut p = pod();
        pod_status::accepted(&mut p, "10.0.0.1", "2026-01-01T00:00:01Z");
        pod_status::running(&mut p, "100.64.0.5", "c1", "2026-01-01T00:00:02Z");
        pod_status::crashed(
            &mut p,
            1,
            "exec format error",
            std::time::Duration::from_secs(10),
            "2026-01-01T00:00:04Z",
        );
        for previous in [false, true] {
            let lines = container_log(&p, "agent", previous).expect("terminated");
            let failure = lines
                .iter()
                .find(|l| l.text.contains("exec format error"))
                .expect("failure line");
            assert_eq!(failure.time, "2026-01-01T00:00:04Z");
            let times: Vec<jiff::Timestamp> = lines
                .iter()
                .map(|l| l.time.parse().expect("RFC 3339"))
                .collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
            assert!(texts(&lines).last().is_some_and(|l| l.ends_with("code=1")));
        }
        // Restarted: the current run has only started; the previous one failed.
        pod_status::running(&mut p, "100.64.0.5", "c2", "2026-01-01T00:00:20Z");
        let now = container_log(&p, "agent", false).expect("running");
        assert!(!texts(&now).iter().any(|l| l.contains("exec format error")));
        let before = container_log(&p, "agent", true).expect("previous");
        assert!(
            texts(&before)
                .iter()
                .any(|l| l.contains("exec format error"))
        );
    }

    #[test]
    fn a_crash_within_the_start_second_is_logged_after_the_start_up() {
        let mut p = pod();
        pod_status::accepted(&mut p, "10.0.0.1", "2026-01-01T00:00:01Z");
        pod_status::running(&mut p, "100.64.0.5", "c1", "2026-01-01T00:00:02Z");
        let backoff = std::time::Duration::from_millis(500);
        pod_status::crashed(&mut p, 2, "boom", backoff, "2026-01-01T00:00:02Z");
        let lines = container_log(&p, "agent", true).expect("previous");
        let times: Vec<jiff::Timestamp> = lines
            .iter()
            .map(|l| l.time.parse().expect("RFC 3339"))
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
        assert_eq!(lines[3].text, "level=error msg=\"boom\"");
    }

    #[test]
    fn waiting_containers_have_no_log_yet() {
        let cases = [
            (
                "ImagePullBackOff",
                "is waiting to start: trying and failing to pull image",
            ),
            ("ErrImagePull", "is waiting to start: image can't be pulled"),
            (
                "ContainerCreating",
                "is waiting to start: ContainerCreating",
            ),
        ];
        for (reason, words) in cases {
            let mut p = pod();
            pod_status::accepted(&mut p, "10.0.0.1", "2026-01-01T00:00:01Z");
            pod_status::waiting(&mut p, reason, "");
            assert_eq!(
                container_log(&p, "agent", false),
                Err(NoLog(format!(
                    "container \"agent\" in pod \"agent-x\" {words}"
                ))),
                "{reason}"
            );
        }
        assert!(
            container_log(&pod(), "agent", false).is_err(),
            "no status yet"
        );
    }
}
