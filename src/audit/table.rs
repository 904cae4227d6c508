//! The audit report as text for a person on call: the verdict first, then each
//! non-empty issue list under a heading in words, one aligned line per entry
//! with what is known about it.
//!
//! Pure: takes the report and whether to color, returns the text. Deciding
//! whether the terminal wants color (TTY, `NO_COLOR`) is the caller's job. Text
//! from the API goes through `crate::sanitize` before it is printed.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::OwnedPod;
use super::report::AuditReport;

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[1;31m";
const GREEN: &str = "\x1b[1;32m";
const YELLOW: &str = "\x1b[33m";

/// Renders `report`; `color` adds ANSI colors to the verdict and headings.
pub fn render_table(report: &AuditReport, color: bool) -> String {
    let paint = |code: &str, text: &str| {
        if color {
            format!("{code}{text}{RESET}")
        } else {
            text.to_owned()
        }
    };
    let mut out = String::new();
    let ds = &report.daemonset;
    let target = format!("{}/{}", clean(&ds.namespace), clean(&ds.name));
    let problems = report.problem_count();
    if problems == 0 {
        let _ = writeln!(
            out,
            "{} {target} has a ready pod on every roster node ({}) and none outside it",
            paint(GREEN, "OK:"),
            count_nodes(report.roster.len())
        );
        return out;
    }
    let noun = if problems == 1 { "problem" } else { "problems" };
    let _ = writeln!(
        out,
        "{} for {target} (roster: {}, owned pods: {})",
        paint(RED, &format!("{problems} {noun}")),
        count_nodes(report.roster.len()),
        report.pods.len()
    );
    for (heading, lines) in sections(report) {
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{}",
            paint(BOLD, &format!("{heading} ({}):", lines.len()))
        );
        let width = lines
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (key, text) in lines {
            let _ = writeln!(
                out,
                "  {}  {text}",
                paint(YELLOW, &format!("{key:<width$}"))
            );
        }
    }
    out
}

type Section = (&'static str, Vec<(String, String)>);

fn sections(report: &AuditReport) -> [Section; 7] {
    let issues = &report.issues;
    let by_uid: HashMap<&str, &OwnedPod> =
        report.pods.iter().map(|p| (p.uid.as_str(), p)).collect();
    [
        (
            "Roster nodes missing from the cluster or replaced",
            lines(&issues.node_identity_mismatch, |n| {
                identity_words(report, n)
            }),
        ),
        (
            "Roster nodes that are not Ready",
            lines(&issues.node_not_ready, |n| {
                report
                    .details
                    .node_not_ready
                    .get(n)
                    .cloned()
                    .unwrap_or_default()
            }),
        ),
        (
            "Roster nodes without a ready pod",
            lines(&issues.missing_ready, |n| {
                report
                    .explanations
                    .get(n)
                    .map(|e| e.message.clone())
                    .unwrap_or_default()
            }),
        ),
        (
            "Nodes outside the roster that run this DaemonSet's pods",
            lines(&issues.unexpected_owned_nodes, |n| pods_on_words(report, n)),
        ),
        (
            "Nodes with more than one pod",
            lines(&issues.multiple_pods, |n| pods_on_words(report, n)),
        ),
        (
            "Pods not bound to any node",
            lines(&issues.unassigned, |uid| {
                pod_words(by_uid.get(uid).copied())
            }),
        ),
        (
            "Pods not ready",
            lines(&issues.unready_pods, |uid| {
                pod_words(by_uid.get(uid).copied())
            }),
        ),
    ]
}

fn lines(keys: &[String], describe: impl Fn(&str) -> String) -> Vec<(String, String)> {
    keys.iter()
        .map(|k| (clean(k), clean(&describe(k))))
        .collect()
}

fn identity_words(report: &AuditReport, node: &str) -> String {
    match report.details.node_identity_mismatch.get(node) {
        Some(m) => match &m.cluster_uid {
            None => format!("not in the cluster (roster UID {})", m.roster_uid),
            Some(found) => format!(
                "replaced under the same name: roster UID {}, cluster UID {found}",
                m.roster_uid
            ),
        },
        None => String::new(),
    }
}

fn pods_on_words(report: &AuditReport, node: &str) -> String {
    let pods: Vec<String> = report
        .pods_on(node)
        .iter()
        .map(|p| {
            let state = if p.terminating {
                "terminating"
            } else if p.ready {
                "ready"
            } else {
                "not ready"
            };
            format!("{} ({state})", p.name)
        })
        .collect();
    format!("pods {}", pods.join(", "))
}

fn pod_words(pod: Option<&OwnedPod>) -> String {
    let Some(pod) = pod else {
        return String::new();
    };
    let place = pod
        .node
        .as_deref()
        .map_or_else(|| "(no node)".to_owned(), |n| format!("on {n}"));
    match &pod.not_ready_reason {
        Some(why) => format!("pod {} {place}: {why}", pod.name),
        None => format!("pod {} {place}", pod.name),
    }
}

fn count_nodes(n: usize) -> String {
    if n == 1 {
        "1 node".to_owned()
    } else {
        format!("{n} nodes")
    }
}

/// API text made safe to print (the one sanitizer the console uses too).
fn clean(text: &str) -> String {
    crate::sanitize::sanitize(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::Roster;
    use crate::audit::compare;
    use crate::audit::owned::fixtures::{daemonset, node, pod, waiting};

    fn report() -> AuditReport {
        let roster = Roster::from_entries([
            ("n1".to_owned(), "u1".to_owned()),
            ("n2".to_owned(), "u2".to_owned()),
            ("n3".to_owned(), "u3".to_owned()),
        ])
        .unwrap();
        let nodes = [
            node("n1", "u1", "True"),
            node("n2", "u2-new", "True"),
            node("n3", "u3", "False"),
        ];
        let pods = [
            pod("agent-1", "p1", Some("n1")),
            waiting(pod("agent-3", "p3", Some("n3")), "ImagePullBackOff"),
            pod("agent-9", "p9", Some("n9")),
        ];
        compare(&roster, &daemonset(), &nodes, &pods).unwrap()
    }

    #[test]
    fn verdict_first_then_sections_in_words() {
        let text = render_table(&report(), false);
        let expected = "\
6 problems for kube-system/agent (roster: 3 nodes, owned pods: 3)

Roster nodes missing from the cluster or replaced (1):
  n2  replaced under the same name: roster UID u2, cluster UID u2-new

Roster nodes that are not Ready (1):
  n3  Ready=False

Roster nodes without a ready pod (2):
  n2  no pod because the DaemonSet controller has not created one although the node is eligible (look for FailedCreate events on the DaemonSet)
  n3  pod agent-3 not ready because phase Pending, container agent waiting: ImagePullBackOff, Ready condition False

Nodes outside the roster that run this DaemonSet's pods (1):
  n9  pods agent-9 (ready)

Pods not ready (1):
  p3  pod agent-3 on n3: phase Pending, container agent waiting: ImagePullBackOff, Ready condition False
";
        assert_eq!(text, expected);
    }

    #[test]
    fn ok_verdict_is_one_line() {
        let roster = Roster::from_entries([("n1".to_owned(), "u1".to_owned())]).unwrap();
        let report = compare(
            &roster,
            &daemonset(),
            &[node("n1", "u1", "True")],
            &[pod("a", "p", Some("n1"))],
        )
        .unwrap();
        let text = render_table(&report, false);
        assert_eq!(
            text,
            "OK: kube-system/agent has a ready pod on every roster node (1 node) and none outside it\n"
        );
        assert_eq!(text.lines().count(), 1);
    }

    #[test]
    fn color_only_when_asked() {
        assert!(!render_table(&report(), false).contains('\x1b'));
        assert!(render_table(&report(), true).starts_with(RED));
    }

    #[test]
    fn escape_sequences_from_the_api_are_dropped_whole() {
        let mut r = report();
        r.issues.multiple_pods = vec!["evil\x1b[2Jnode".to_owned()];
        let text = render_table(&r, false);
        assert!(text.contains("evilnode"), "{text}");
        assert!(!text.contains('\x1b'));
    }
}
