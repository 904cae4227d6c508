//! One classification of a daemon pod's health — ready, progressing, failing
//! (with the reason and the container's own words), or gone — used by the grid,
//! the batch gate, `status` and the audit alike, so no two places can disagree
//! about whether a pod is failing.
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
];

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
    FAILING_REASONS.contains(&reason)
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

/// Why the pod's containers fail, in the container's own words: for the first
/// container that is not running cleanly, the last termination (`exit code 1
/// (Error): exec format error`) and the waiting message (`back-off 40s
/// restarting failed container …`). `None` when nothing says more than the reason.
/// The text is API data: callers sanitise it before drawing or printing.
pub fn failure_detail(pod: &Pod) -> Option<String> {
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
        (!parts.is_empty()).then(|| {
            let mut text = format!("container {}: {}", c.name, parts.join("; "));
            if text.chars().count() > DETAIL_MAX_CHARS {
                text = text.chars().take(DETAIL_MAX_CHARS - 1).collect();
                text.push('…');
            }
            text
        })
    })
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
