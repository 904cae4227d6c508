//! One classification of a daemon pod's health — ready, progressing, failing
//! (with the reason and the container's own words), or gone — used by the grid,
//! the batch gate, `status` and the audit alike, so no two places can disagree
//! about whether a pod is failing.
//!
//! Every problem has a stable code ([`ProblemCode`]) beside the kubelet's or
//! the scheduler's reason: what `status -o json` gives each node and what the
//! console marks, so a script and the grid read the same classification.
//!
//! Pure: reads a [`PodCoverage`] (itself built from the pod by
//! [`super::coverage::pod_coverage`]); no clock.

use serde::Serialize;

use super::coverage::PodCoverage;
use crate::model::Pod;

/// Container waiting/terminated reasons (and pod-level ones) that mean the pod
/// is failing, not merely starting. kubelet's own reasons: `CrashLoopBackOff`,
/// the image pull family, the create/run container errors, `Error` and
/// `OOMKilled` for a terminated container, `Evicted` for the pod.
pub const FAILING_REASONS: &[&str] = &[
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "PreStartHookError",
    "PostStartHookError",
    "Error",
    "OOMKilled",
    "ContainerCannotRun",
    "Evicted",
    "Failed",
    UNSCHEDULABLE,
    SANDBOX_FAILED,
];

/// The reason rollcall gives a pod the scheduler cannot place: its
/// `PodScheduled` condition is `False` with this reason (upstream's
/// `v1.PodReasonUnschedulable`).
pub const UNSCHEDULABLE: &str = "Unschedulable";

/// The pod-level reason of a pod the kubelet evicted under node pressure
/// (phase `Failed`).
pub const EVICTED: &str = "Evicted";

/// The kubelet's event when it cannot create the pod's sandbox; while it
/// retries, the pod stays `Pending` with `ContainerCreating`, so only the
/// event tells.
pub const SANDBOX_FAILED: &str = "FailedCreatePodSandBox";

/// Pod-level reasons of a pod the kubelet rejected at admission (phase
/// `Failed`), besides `OutOf<resource>`: the predicate names of upstream's
/// `pkg/kubelet/lifecycle/predicate.go` and its catch-alls.
const ADMISSION_PREDICATES: &[&str] = &[
    "NodeAffinity",
    "NodeName",
    "NodePorts",
    "TaintToleration",
    "UnexpectedAdmissionError",
    "UnexpectedPredicateFailureType",
];

/// Whether a pod-level reason says the kubelet refused the pod at admission
/// (`OutOfcpu`, `OutOfmemory`, `OutOfpods`, `NodePorts`, …).
pub fn is_admission_rejection(reason: &str) -> bool {
    (reason.len() > "OutOf".len() && reason.starts_with("OutOf"))
        || ADMISSION_PREDICATES.contains(&reason)
}

/// A problem's stable code: `status -o json` gives it in each node's
/// `problem.code`, beside the reason it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ProblemCode {
    /// The scheduler cannot place the pod (`PodScheduled=False`, `Unschedulable`).
    Unschedulable,
    /// The kubelet evicted the pod (node pressure).
    Evicted,
    /// The kubelet refused the pod at admission (`OutOfcpu`, `NodePorts`, …).
    Rejected,
    /// The kubelet cannot create the pod's sandbox (`FailedCreatePodSandBox`).
    SandboxFailed,
    /// A container restarts in a loop (`CrashLoopBackOff`).
    CrashLoop,
    /// The image cannot be pulled (`ErrImagePull`, `ImagePullBackOff`, …).
    ImagePull,
    /// A container was killed for memory (`OOMKilled`).
    OomKilled,
    /// A container cannot be created or run (`CreateContainerConfigError`,
    /// `RunContainerError`, a hook error, `Error`, …).
    ContainerError,
    /// The pod failed (phase `Failed`) for another reason.
    Failed,
    /// A reason that is not a failure (yet): the pod waits (`ContainerCreating`
    /// is not one; an unknown waiting reason is).
    Waiting,
}

impl ProblemCode {
    /// The code of a reason (a container's, the pod's, or one of rollcall's
    /// [`UNSCHEDULABLE`], [`SANDBOX_FAILED`]).
    pub fn of(reason: &str) -> Self {
        match reason {
            UNSCHEDULABLE => Self::Unschedulable,
            EVICTED => Self::Evicted,
            SANDBOX_FAILED => Self::SandboxFailed,
            "CrashLoopBackOff" => Self::CrashLoop,
            "OOMKilled" => Self::OomKilled,
            "Failed" => Self::Failed,
            _ if IMAGE_PULL_REASONS.contains(&reason) => Self::ImagePull,
            _ if is_admission_rejection(reason) => Self::Rejected,
            _ if FAILING_REASONS.contains(&reason) => Self::ContainerError,
            _ => Self::Waiting,
        }
    }
}

/// The pod-level reason that outranks its containers' (see
/// [`super::coverage::pod_coverage`]): a `Failed` pod's own reason (`Evicted`,
/// `OutOfcpu`), else [`UNSCHEDULABLE`] for a pod the scheduler reported it
/// cannot place. A pod the scheduler nominated a node for (preemption made
/// room; upstream binds it once the victims are gone) is on its way, not
/// unschedulable.
pub fn pod_level_problem(pod: &Pod) -> Option<&str> {
    let phase = pod.status.phase.as_deref();
    if phase == Some("Failed")
        && let Some(reason) = pod.status.reason.as_deref().filter(|r| !r.is_empty())
    {
        return Some(reason);
    }
    let unschedulable = pod.node_name().is_none()
        && matches!(phase, None | Some("Pending"))
        && pod.status.nominated_node_name.is_none()
        && pod
            .unscheduled_condition()
            .is_some_and(|c| c.status == "False" && c.reason.as_deref() == Some(UNSCHEDULABLE));
    unschedulable.then_some(UNSCHEDULABLE)
}

/// The pod-level words behind [`pod_level_problem`]: the scheduler's message
/// of an unschedulable pod, the kubelet's of a failed one.
fn pod_level_detail(pod: &Pod) -> Option<&str> {
    let detail = match pod_level_problem(pod)? {
        UNSCHEDULABLE => pod.unscheduled_condition()?.message.as_deref(),
        _ => pod.status.message.as_deref(),
    };
    detail.map(str::trim).filter(|d| !d.is_empty())
}

/// Marks `pod` as failing to get a sandbox when its latest event (`latest`:
/// reason and message) is the kubelet's [`SANDBOX_FAILED`] and nothing worse
/// is known: the kubelet retries and the pod only says `ContainerCreating`.
pub fn note_sandbox_failure(pod: &mut PodCoverage, latest: Option<(&str, &str)>) {
    let Some((SANDBOX_FAILED, message)) = latest else {
        return;
    };
    if pod.ready || pod.terminating || pod_health(pod).is_failing() {
        return;
    }
    pod.problem = Some(SANDBOX_FAILED.into());
    pod.failure_detail = Some(bounded(message.trim().to_owned()));
}

/// Reasons of the image pull family (the gate names them apart).
pub const IMAGE_PULL_REASONS: &[&str] = &[
    "ImagePullBackOff",
    "ErrImagePull",
    "ErrImageNeverPull",
    "InvalidImageName",
];

/// How long a pod may take to become Ready before it counts as stalled, not
/// starting: the default Ready timeout of `auto`, `advance --wait` and
/// `rollback` (the batch gate's `timeout`), and the bound after which the
/// rollout blocker stops calling an unready pod holding a budget slot
/// "progressing". DaemonSets have no `progressDeadlineSeconds`; a Deployment's
/// default is 600 s.
pub const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// A daemon pod's health.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "health", rename_all = "camelCase")]
pub enum PodHealth {
    /// The Ready condition is True.
    Ready,
    /// Starting or not (yet) Ready, with nothing that says it is failing.
    Progressing,
    /// Failing: a crash loop, an image that cannot be pulled, a failed phase, …
    Failing {
        /// The kubelet's reason (`CrashLoopBackOff`, `ErrImagePull`, `Failed`).
        reason: String,
        /// The container's own words, when known (see [`failure_detail`]).
        detail: Option<String>,
    },
    /// Being deleted.
    Gone,
}

impl PodHealth {
    /// Whether the pod is failing.
    pub fn is_failing(&self) -> bool {
        matches!(self, Self::Failing { .. })
    }

    /// The failing pod's problem code.
    pub fn code(&self) -> Option<ProblemCode> {
        match self {
            Self::Failing { reason, .. } => Some(ProblemCode::of(reason)),
            _ => None,
        }
    }

    /// The reason and detail in one line (`CrashLoopBackOff: exit code 1 …`),
    /// for failing pods.
    pub fn failure_text(&self) -> Option<String> {
        match self {
            Self::Failing { reason, detail } => Some(match detail {
                Some(detail) => format!("{reason}: {detail}"),
                None => reason.clone(),
            }),
            _ => None,
        }
    }
}

/// Whether a reason (a container's or the pod's) means "failing".
pub fn is_failing_reason(reason: &str) -> bool {
    FAILING_REASONS.contains(&reason) || is_admission_rejection(reason)
}

/// The reason a pod with this problem (see [`PodCoverage::problem`]) and
/// phase counts as failing: a failing reason, else a `Failed` phase.
pub fn failing_reason<'a>(problem: Option<&'a str>, phase: Option<&str>) -> Option<&'a str> {
    problem
        .filter(|r| is_failing_reason(r))
        .or_else(|| (phase == Some("Failed")).then_some("Failed"))
}

/// Classifies one pod. Terminating wins (the pod is on its way out), then a
/// failing reason or a `Failed` phase, then the Ready condition.
pub fn pod_health(pod: &PodCoverage) -> PodHealth {
    if pod.terminating {
        return PodHealth::Gone;
    }
    if let Some(reason) = failing_reason(pod.problem.as_deref(), pod.phase.as_deref()) {
        return PodHealth::Failing {
            reason: reason.to_owned(),
            detail: pod.failure_detail.clone(),
        };
    }
    if pod.ready {
        PodHealth::Ready
    } else {
        PodHealth::Progressing
    }
}

/// The longest detail kept per pod: enough for an exit code and a message line.
const DETAIL_MAX_CHARS: usize = 240;

/// Why the pod fails, in the scheduler's or the kubelet's words for a
/// pod-level problem ([`pod_level_problem`]: `0/5 nodes are available: …`,
/// `The node was low on resource: memory. …`), else in the container's own:
/// for the first container that is not running cleanly, the last termination
/// (`exit code 1 (Error): exec format error`) and the waiting message
/// (`back-off 40s restarting failed container …`). `None` when nothing says
/// more than the reason. Bounded. The text is API data: callers sanitise it
/// before drawing or printing.
pub fn failure_detail(pod: &Pod) -> Option<String> {
    if let Some(detail) = pod_level_detail(pod) {
        return Some(bounded(detail.to_owned()));
    }
    pod.status.container_statuses.iter().find_map(|c| {
        let mut parts = Vec::new();
        let terminated = c
            .state
            .terminated
            .as_ref()
            .or(c.last_state.terminated.as_ref());
        if let Some(t) = terminated {
            let mut text = match t.exit_code {
                Some(code) => format!("exit code {code}"),
                None => "terminated".to_owned(),
            };
            if let Some(reason) = t.reason.as_deref().filter(|r| !r.is_empty()) {
                text = format!("{text} ({reason})");
            }
            if let Some(message) = t
                .message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
            {
                text.push_str(": ");
                text.push_str(message);
            }
            // A clean exit of a previous run says nothing about a failure.
            if t.exit_code != Some(0) || t.message.is_some() {
                parts.push(text);
            }
        }
        if let Some(message) = c
            .state
            .waiting
            .as_ref()
            .and_then(|w| w.message.as_deref())
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            parts.push(message.to_owned());
        }
        (!parts.is_empty()).then(|| bounded(format!("container {}: {}", c.name, parts.join("; "))))
    })
}

/// The cause in [`failure_detail`]'s words, in a few (for a grid cell):
/// `exit 1: exec format error` for a container that exited with a message,
/// `exit 137 (OOMKilled)` for one without, else the first sentence of what
/// the kubelet or the scheduler says. The detail has the rest.
pub fn short_cause(detail: &str) -> String {
    // failure_detail writes `container NAME: ` first, then the termination
    // (`exit code N (REASON): MESSAGE`), then `; ` and the waiting message.
    let text = detail
        .strip_prefix("container ")
        .and_then(|rest| rest.split_once(": "))
        .map_or(detail, |(_, rest)| rest);
    let first_line = |t: &str| t.lines().next().unwrap_or_default().trim().to_owned();
    let Some(exit) = text.strip_prefix("exit code ") else {
        let first = text.split_once("; ").map_or(text, |(first, _)| first);
        let sentence = first.split_once(". ").map_or(first, |(s, _)| s);
        return first_line(sentence);
    };
    let (code, rest) = exit
        .split_once(|c: char| !c.is_ascii_digit() && c != '-')
        .map_or((exit, ""), |(code, _)| (code, &exit[code.len()..]));
    let (reason, rest) = match rest.strip_prefix(" (") {
        Some(r) => r
            .split_once(')')
            .map_or(("", rest), |(reason, rest)| (reason, rest)),
        None => ("", rest),
    };
    match rest.strip_prefix(": ") {
        Some(message) if !message.trim().is_empty() => {
            let message = message.split_once("; ").map_or(message, |(m, _)| m);
            format!("exit {code}: {}", first_line(message))
        }
        _ if !reason.is_empty() && reason != "Error" => format!("exit {code} ({reason})"),
        _ => format!("exit {code}"),
    }
}

/// `text` cut to [`DETAIL_MAX_CHARS`] (with `…`).
fn bounded(mut text: String) -> String {
    if text.chars().count() > DETAIL_MAX_CHARS {
        text = text.chars().take(DETAIL_MAX_CHARS - 1).collect();
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixtures::pod;

    fn coverage_of(problem: Option<&str>, phase: &str, ready: bool) -> PodCoverage {
        PodCoverage {
            name: "p".into(),
            uid: "u".into(),
            hash: None,
            revision: None,
            updated: true,
            phase: Some(phase.into()),
            ready,
            available: ready,
            terminating: false,
            restarts: 0,
            problem: problem.map(Into::into),
            failure_detail: None,
            created: None,
            ready_since: None,
        }
    }

    #[test]
    fn classification_table() {
        let cases: [(&str, Option<&str>, &str, bool, &str); 8] = [
            ("ready pod", None, "Running", true, "ready"),
            (
                "pending, creating",
                Some("ContainerCreating"),
                "Pending",
                false,
                "progressing",
            ),
            (
                "crash loop",
                Some("CrashLoopBackOff"),
                "Running",
                false,
                "failing",
            ),
            (
                "image pull",
                Some("ErrImagePull"),
                "Pending",
                false,
                "failing",
            ),
            // The grid and the gate once disagreed on this one.
            (
                "config error",
                Some("CreateContainerConfigError"),
                "Pending",
                false,
                "failing",
            ),
            ("oom killed", Some("OOMKilled"), "Running", false, "failing"),
            ("failed phase", None, "Failed", false, "failing"),
            ("evicted", Some("Evicted"), "Failed", false, "failing"),
        ];
        for (name, problem, phase, ready, want) in cases {
            let got = match pod_health(&coverage_of(problem, phase, ready)) {
                PodHealth::Ready => "ready",
                PodHealth::Progressing => "progressing",
                PodHealth::Failing { .. } => "failing",
                PodHealth::Gone => "gone",
            };
            assert_eq!(got, want, "{name}");
        }
    }

    fn decoded(status: &serde_json::Value, node: Option<&str>) -> Pod {
        let mut spec = serde_json::json!({
            "containers": [{"name": "agent"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
        });
        if let Some(node) = node {
            spec["nodeName"] = node.into();
        }
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "agent-x", "namespace": "kube-system"},
            "spec": spec,
            "status": status.clone(),
        }))
        .unwrap()
    }

    /// (name, pod status, bound node, expected code, words in the detail).
    type ProblemCase = (
        &'static str,
        serde_json::Value,
        Option<&'static str>,
        Option<ProblemCode>,
        &'static str,
    );

    /// Pod-level problems, read as upstream writes them: the scheduler's
    /// `PodScheduled=False/Unschedulable` on an unbound pod (none once it is
    /// nominated: preemption made room), the kubelet's eviction
    /// (`pkg/kubelet/eviction`: phase Failed, reason Evicted) and admission
    /// rejection (`pkg/kubelet/lifecycle/predicate.go`: `OutOf<resource>`).
    #[test]
    fn pod_level_problem_table() {
        let unschedulable = serde_json::json!({"phase": "Pending", "conditions": [{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector."}]});
        let mut nominated = unschedulable.clone();
        nominated["nominatedNodeName"] = "n1".into();
        let cases: [ProblemCase; 6] = [
            (
                "unschedulable",
                unschedulable.clone(),
                None,
                Some(ProblemCode::Unschedulable),
                "1 Insufficient cpu",
            ),
            ("nominated after preemption", nominated, None, None, ""),
            (
                "bound pods are scheduled",
                unschedulable,
                Some("n1"),
                None,
                "",
            ),
            (
                "evicted",
                serde_json::json!({"phase": "Failed", "reason": "Evicted",
                    "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Mi."}),
                Some("n1"),
                Some(ProblemCode::Evicted),
                "low on resource: memory",
            ),
            (
                "rejected at admission",
                serde_json::json!({"phase": "Failed", "reason": "OutOfcpu",
                    "message": "Pod Node didn't have enough resource: cpu, requested: 500, used: 3800, capacity: 3900"}),
                Some("n1"),
                Some(ProblemCode::Rejected),
                "enough resource: cpu",
            ),
            (
                "running",
                serde_json::json!({"phase": "Running"}),
                Some("n1"),
                None,
                "",
            ),
        ];
        for (name, status, node, code, words) in cases {
            let pod = decoded(&status, node);
            assert_eq!(pod.target_node(), Some("n1"), "{name}");
            let problem = pod_level_problem(&pod);
            assert_eq!(problem.map(ProblemCode::of), code, "{name}");
            if code.is_some() {
                assert!(
                    problem.is_some_and(is_failing_reason),
                    "{name}: counts as failing"
                );
                let detail = failure_detail(&pod).unwrap_or_default();
                assert!(detail.contains(words), "{name}: {detail}");
            }
        }
    }

    #[test]
    fn codes_of_reasons() {
        let cases = [
            ("CrashLoopBackOff", ProblemCode::CrashLoop),
            ("ErrImagePull", ProblemCode::ImagePull),
            ("ImagePullBackOff", ProblemCode::ImagePull),
            ("OOMKilled", ProblemCode::OomKilled),
            ("CreateContainerConfigError", ProblemCode::ContainerError),
            ("Failed", ProblemCode::Failed),
            ("OutOfmemory", ProblemCode::Rejected),
            ("NodePorts", ProblemCode::Rejected),
            ("OutOf", ProblemCode::Waiting),
            ("FailedCreatePodSandBox", ProblemCode::SandboxFailed),
            ("SomethingNew", ProblemCode::Waiting),
        ];
        for (reason, code) in cases {
            assert_eq!(ProblemCode::of(reason), code, "{reason}");
        }
        assert_eq!(
            serde_json::to_value(ProblemCode::SandboxFailed).unwrap(),
            serde_json::json!("sandboxFailed")
        );
    }

    #[test]
    fn a_sandbox_failure_is_read_from_the_latest_event() {
        let mut pod = coverage_of(Some("ContainerCreating"), "Pending", false);
        note_sandbox_failure(&mut pod, Some(("Scheduled", "assigned")));
        assert!(!pod_health(&pod).is_failing());
        note_sandbox_failure(
            &mut pod,
            Some((
                SANDBOX_FAILED,
                "Failed to create pod sandbox: rpc error: code = Unknown",
            )),
        );
        let health = pod_health(&pod);
        assert_eq!(health.code(), Some(ProblemCode::SandboxFailed));
        assert!(
            health
                .failure_text()
                .unwrap_or_default()
                .contains("rpc error")
        );
        // A crash loop stays what it is.
        let mut crashing = coverage_of(Some("CrashLoopBackOff"), "Running", false);
        note_sandbox_failure(&mut crashing, Some((SANDBOX_FAILED, "x")));
        assert_eq!(pod_health(&crashing).code(), Some(ProblemCode::CrashLoop));
    }

    #[test]
    fn terminating_is_gone_even_when_failing() {
        let mut cov = coverage_of(Some("CrashLoopBackOff"), "Running", false);
        cov.terminating = true;
        assert_eq!(pod_health(&cov), PodHealth::Gone);
    }

    #[test]
    fn detail_names_exit_code_reason_and_message() {
        let p = pod("a", "n1", "h1")
            .running_not_ready(10)
            .waiting("CrashLoopBackOff", 3)
            .last_terminated(1, "Error", "exec format error")
            .build();
        let detail = failure_detail(&p).unwrap_or_default();
        assert!(
            detail.contains("exit code 1 (Error): exec format error"),
            "{detail}"
        );
    }

    #[test]
    fn the_cause_in_a_few_words() {
        let cases = [
            (
                "container main: exit code 1 (Error): exec format error; back-off 40s restarting failed container=main pod=a_ns(9749)",
                "exit 1: exec format error",
            ),
            (
                "container main: exit code 1 (Error): exec format error",
                "exit 1: exec format error",
            ),
            (
                "container main: exit code 137 (OOMKilled)",
                "exit 137 (OOMKilled)",
            ),
            ("container main: exit code 2 (Error)", "exit 2"),
            (
                "container main: exit code 1 (Error): panic: boom\ngoroutine 1",
                "exit 1: panic: boom",
            ),
            (
                "container main: Back-off pulling image \"agent:9\". Pull it first",
                "Back-off pulling image \"agent:9\"",
            ),
            (
                "The node was low on resource: memory. Threshold",
                "The node was low on resource: memory",
            ),
        ];
        for (detail, want) in cases {
            assert_eq!(short_cause(detail), want, "{detail}");
        }
        // What failure_detail writes, short_cause reads.
        let p = pod("a", "n1", "h1")
            .running_not_ready(10)
            .waiting("CrashLoopBackOff", 3)
            .last_terminated(1, "Error", "exec format error")
            .build();
        assert_eq!(
            short_cause(&failure_detail(&p).unwrap_or_default()),
            "exit 1: exec format error"
        );
    }

    #[test]
    fn detail_is_bounded() {
        let long = "x".repeat(10_000);
        let p = pod("a", "n1", "h1")
            .running_not_ready(10)
            .waiting("CrashLoopBackOff", 3)
            .last_terminated(1, "Error", &long)
            .build();
        assert!(failure_detail(&p).unwrap_or_default().chars().count() <= DETAIL_MAX_CHARS);
    }
}
