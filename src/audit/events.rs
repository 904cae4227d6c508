//! Adds the latest relevant Warning event to `missing_ready` explanations: the
//! DaemonSet's own (FailedCreate, FailedDaemonPod) when no pod exists, the
//! pod's (BackOff, Failed, ...) when its pod is not ready.
//!
//! Pure: events are an input, as the rest of the audit's data. Optional: the
//! report is complete without them; this only says more about why.

use super::report::{AuditReport, MissingCause};
use crate::model::Event;

/// Attaches to each explanation the newest Warning event about its cause.
pub fn annotate_with_events(report: &mut AuditReport, events: &[Event]) {
    let ds_uid = report.daemonset.uid.clone();
    let pods_by_node: Vec<(String, Vec<String>)> = report
        .explanations
        .iter()
        .filter(|(_, e)| e.cause == MissingCause::PodNotReady)
        .map(|(node, _)| {
            let uids = report.pods_on(node).iter().map(|p| p.uid.clone()).collect();
            (node.clone(), uids)
        })
        .collect();
    let ds_event = latest_warning(events, |uid| uid == ds_uid).map(event_words);
    for (node, explanation) in &mut report.explanations {
        let event = match explanation.cause {
            MissingCause::NoPod => ds_event.clone(),
            MissingCause::PodNotReady => pods_by_node
                .iter()
                .find(|(n, _)| n == node)
                .and_then(|(_, uids)| latest_warning(events, |uid| uids.iter().any(|u| u == uid)))
                .map(event_words),
            MissingCause::NodeAbsent | MissingCause::NotEligible => None,
        };
        if let Some(words) = event {
            explanation.message = format!("{}; last event: {words}", explanation.message);
            explanation.event = Some(words);
        }
    }
}

/// The newest Warning event whose involved object's UID passes `wanted`.
fn latest_warning(events: &[Event], wanted: impl Fn(&str) -> bool) -> Option<&Event> {
    events
        .iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .filter(|e| e.involved_object.uid.as_deref().is_some_and(&wanted))
        .max_by_key(|e| e.last_seen())
}

/// `FailedCreate: Error creating: ... (x3)`.
fn event_words(event: &Event) -> String {
    let reason = event.reason.as_deref().unwrap_or("Warning");
    let message = event.message.as_deref().unwrap_or_default().trim();
    let count = match event.count {
        Some(n) if n > 1 => format!(" (x{n})"),
        _ => String::new(),
    };
    format!("{reason}: {message}{count}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::owned::fixtures::{DS_UID, daemonset, node, pod, waiting};
    use crate::audit::{Roster, compare};
    use crate::model::{InvolvedObject, Time};

    fn event(uid: &str, type_: &str, reason: &str, message: &str, at: &str) -> Event {
        Event {
            involved_object: InvolvedObject {
                uid: Some(uid.into()),
                ..InvolvedObject::default()
            },
            type_: Some(type_.into()),
            reason: Some(reason.into()),
            message: Some(message.into()),
            count: Some(3),
            last_timestamp: Some(Time(at.parse().unwrap())),
            ..Event::default()
        }
    }

    #[test]
    fn newest_warning_of_the_right_object_is_attached() {
        let roster = Roster::from_entries([
            ("n1".to_owned(), "u1".to_owned()),
            ("n2".to_owned(), "u2".to_owned()),
            ("gone".to_owned(), "u3".to_owned()),
        ])
        .unwrap();
        let nodes = [node("n1", "u1", "True"), node("n2", "u2", "True")];
        let pods = [waiting(pod("a1", "p1", Some("n1")), "CrashLoopBackOff")];
        let mut report = compare(&roster, &daemonset(), &nodes, &pods).unwrap();
        let events = [
            event(
                "p1",
                "Warning",
                "BackOff",
                "Back-off restarting failed container",
                "2026-01-01T00:02:00Z",
            ),
            event(
                "p1",
                "Warning",
                "Unhealthy",
                "older",
                "2026-01-01T00:01:00Z",
            ),
            event(
                "p1",
                "Normal",
                "Pulled",
                "newest but Normal",
                "2026-01-01T00:03:00Z",
            ),
            event(
                DS_UID,
                "Warning",
                "FailedCreate",
                "Error creating: exceeded quota",
                "2026-01-01T00:00:00Z",
            ),
            event(
                "other",
                "Warning",
                "FailedCreate",
                "not ours",
                "2026-01-01T00:09:00Z",
            ),
        ];
        annotate_with_events(&mut report, &events);
        let e = &report.explanations;
        assert_eq!(
            e["n1"].event.as_deref(),
            Some("BackOff: Back-off restarting failed container (x3)")
        );
        assert!(
            e["n1"]
                .message
                .ends_with("; last event: BackOff: Back-off restarting failed container (x3)")
        );
        assert_eq!(
            e["n2"].event.as_deref(),
            Some("FailedCreate: Error creating: exceeded quota (x3)")
        );
        assert_eq!(e["gone"].event, None);
    }
}
