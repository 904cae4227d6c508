//! The detail pane of one node: eligibility with every reason, each taint with
//! the toleration that matches it (or whether it keeps the pod off), the
//! daemon pods and their containers, conditions, labels and recent events.
//! Pure.

use std::fmt::Write as _;

use super::{Cell, Inputs, Tone, format};
use crate::cluster::cache::Cache;
use crate::engine::taints::{
    TaintVerdict, daemon_pod_tolerations, format_taint, format_toleration, taint_verdict,
};
use crate::engine::vocabulary::Eligibility;
use crate::model::{ContainerStatus, DaemonSet, Event, Node, Pod, Stamp};
use crate::rows::NodeRow;

/// The detail pane's content: a title and lines of cells (wrapped to the
/// pane and the scroll clamped by the app, which knows the pane's size).
pub type DetailVm = super::pane::TextPane;

/// Builds the pane for the selected node.
pub fn build(input: &Inputs<'_>, ds: &DaemonSet) -> DetailVm {
    let node_name = input.ui.selected_node.as_deref().unwrap_or_default();
    let title = super::super::sanitize::sanitize(node_name).into_owned();
    let node = input.cache.node(node_name);
    // A node the user may not read has a row (from its pod) but no object.
    let Some(row) = input
        .rows
        .get(node_name)
        .filter(|row| node.is_some() || row.coverage.verdict.is_unknown())
    else {
        return DetailVm {
            title: format!(" node {title} "),
            lines: vec![vec![Cell::new("node is gone", Tone::Dim)]],
            scroll: 0,
        };
    };
    let mut lines = Vec::new();
    eligibility(&mut lines, row);
    if let Some(node) = node {
        taints(&mut lines, node, ds);
    }
    pods(&mut lines, row, &input.cache.pods_on(node_name), input.now);
    failures(
        &mut lines,
        input.cache,
        &input.cache.pods_on(node_name),
        input.now,
    );
    if let Some(node) = node {
        let pods = input.cache.pods_on(node_name);
        heading(&mut lines, "Capacity");
        super::detail_fit::capacity(&mut lines, input.cache, node, row, &pods);
        conditions(&mut lines, node, input.now);
        labels(&mut lines, node);
    }
    let mut events: Vec<&Event> = input
        .cache
        .pods_on(node_name)
        .iter()
        .flat_map(|p| {
            input
                .cache
                .pod_events(&format!("{}/{}", p.namespace(), p.name()))
        })
        .chain(input.cache.node_events(node_name))
        .collect();
    events.sort_by_key(|e| std::cmp::Reverse(e.last_seen()));
    recent_events(&mut lines, &events, input.now);
    DetailVm {
        title: format!(" node {title} "),
        scroll: input.ui.detail().scroll,
        lines,
    }
}

pub(super) fn heading(lines: &mut Vec<Vec<Cell>>, text: &str) {
    if !lines.is_empty() {
        lines.push(Vec::new());
    }
    lines.push(vec![Cell::new(text, Tone::Accent)]);
}

fn eligibility(lines: &mut Vec<Vec<Cell>>, row: &NodeRow) {
    let verdict = &row.coverage.verdict;
    heading(lines, "Eligibility");
    // The ELIG word and its meaning, from the one vocabulary.
    let eligibility = Eligibility::of(verdict, row.pod().is_some());
    let tone = match eligibility {
        Eligibility::Yes => Tone::Normal,
        Eligibility::Keep | Eligibility::Unknown => Tone::Warn,
        Eligibility::No => Tone::Dim,
    };
    lines.push(vec![
        Cell::new("  ", Tone::Normal),
        Cell::new(&format!("{eligibility}: {}", eligibility.meaning()), tone),
    ]);
    for reason in &verdict.reasons {
        lines.push(vec![
            Cell::new("  · ", Tone::Dim),
            Cell::new(&reason.message, Tone::Warn),
        ]);
    }
}

fn taints(lines: &mut Vec<Vec<Cell>>, node: &Node, ds: &DaemonSet) {
    heading(lines, "Taints");
    if node.spec.taints.is_empty() {
        lines.push(vec![Cell::new("  none", Tone::Dim)]);
        return;
    }
    let template = ds
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.clone())
        .unwrap_or_default();
    let tolerations = daemon_pod_tolerations(&template);
    for taint in &node.spec.taints {
        let verdict = match taint_verdict(taint, &tolerations) {
            TaintVerdict::Tolerated(toleration) => Cell::new(
                &format!("tolerated by {}", format_toleration(toleration)),
                Tone::Good,
            ),
            TaintVerdict::Blocks => Cell::new("not tolerated", Tone::Bad),
            TaintVerdict::Ignored => Cell::new(
                &format!("ignored: {} never keeps a daemon pod off", taint.effect),
                Tone::Dim,
            ),
        };
        lines.push(vec![
            Cell::new(&format!("  {}  ", format_taint(taint)), Tone::Normal),
            verdict,
        ]);
    }
}

fn pods(lines: &mut Vec<Vec<Cell>>, row: &NodeRow, pods: &[&Pod], now: jiff::Timestamp) {
    heading(lines, "Daemon pods");
    if pods.is_empty() {
        lines.push(vec![Cell::new("  none", Tone::Dim)]);
        return;
    }
    for pod in pods {
        let coverage = row.coverage.pods.iter().find(|p| p.name == pod.name());
        let revision = match coverage.map(|c| (c.revision, c.updated)) {
            Some((Some(n), true)) => Cell::new(&format!("r{n} ✓ current"), Tone::Updated),
            Some((Some(n), false)) => Cell::new(&format!("r{n} old"), Tone::Old),
            _ => Cell::new("revision ?", Tone::Dim),
        };
        let phase = pod.status.phase.as_deref().unwrap_or("Pending");
        let ready = if pod.is_ready() {
            Cell::new("ready", Tone::Good)
        } else {
            Cell::new("not ready", Tone::Warn)
        };
        let created = pod.metadata.creation_timestamp.map(Stamp::timestamp);
        lines.push(vec![
            Cell::new(&format!("  {}  ", pod.name()), Tone::Normal),
            revision,
            Cell::new(&format!("  {phase}  "), Tone::Normal),
            ready,
            Cell::new(
                &format!(
                    "  restarts {}  age {}",
                    pod.restarts(),
                    format::age(created, now)
                ),
                Tone::Dim,
            ),
        ]);
        for container in &pod.status.container_statuses {
            lines.push(container_line(container, now));
        }
    }
}

fn container_line(container: &ContainerStatus, now: jiff::Timestamp) -> Vec<Cell> {
    let state = &container.state;
    let (text, tone) = if let Some(waiting) = &state.waiting {
        (
            format!("waiting {}", waiting.reason.as_deref().unwrap_or_default()),
            Tone::Warn,
        )
    } else if let Some(terminated) = &state.terminated {
        let code = terminated
            .exit_code
            .map(|c| format!(" exit {c}"))
            .unwrap_or_default();
        (
            format!(
                "terminated {}{code}",
                terminated.reason.as_deref().unwrap_or_default()
            ),
            Tone::Bad,
        )
    } else if let Some(running) = &state.running {
        (
            format!(
                "running {}",
                format::age(running.started_at.map(Stamp::timestamp), now)
            ),
            Tone::Good,
        )
    } else {
        ("unknown".to_owned(), Tone::Dim)
    };
    let last = container
        .last_state
        .terminated
        .as_ref()
        .and_then(|t| t.reason.as_deref())
        .map(|r| format!("  last: {r}"))
        .unwrap_or_default();
    vec![
        Cell::new(&format!("    {} ", container.name), Tone::Normal),
        Cell::new(container.image.as_deref().unwrap_or_default(), Tone::Dim),
        Cell::new("  ", Tone::Normal),
        Cell::new(&text, tone),
        Cell::new(
            &format!("  restarts {}{last}", container.restart_count),
            Tone::Dim,
        ),
    ]
}

/// "Why it fails": per container, the last termination (exit code, reason,
/// message) and the waiting message; per pod, its newest Warning event. Only
/// pods with something to say; no section when none has.
fn failures(lines: &mut Vec<Vec<Cell>>, cache: &Cache, pods: &[&Pod], now: jiff::Timestamp) {
    let mut section = Vec::new();
    for pod in pods {
        let mut said = Vec::new();
        for container in &pod.status.container_statuses {
            let terminated = container
                .state
                .terminated
                .as_ref()
                .or(container.last_state.terminated.as_ref())
                .filter(|t| t.exit_code != Some(0) || t.message.is_some());
            if let Some(t) = terminated {
                let mut text = t
                    .exit_code
                    .map_or_else(|| "terminated".to_owned(), |c| format!("exit code {c}"));
                if let Some(reason) = t.reason.as_deref().filter(|r| !r.is_empty()) {
                    let _ = write!(text, " ({reason})");
                }
                said.push(labelled(
                    &container.name,
                    "last termination",
                    &text,
                    Tone::Bad,
                ));
                if let Some(message) = t
                    .message
                    .as_deref()
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                {
                    said.push(labelled("", "message", message, Tone::Bad));
                }
            }
            if let Some(waiting) = &container.state.waiting
                && let Some(message) = waiting.message.as_deref().filter(|m| !m.trim().is_empty())
            {
                let reason = waiting.reason.as_deref().unwrap_or("waiting");
                said.push(labelled(
                    &container.name,
                    "waiting",
                    &format!("{reason}: {message}"),
                    Tone::Warn,
                ));
            }
        }
        let key = format!("{}/{}", pod.namespace(), pod.name());
        if let Some(event) = cache
            .pod_events(&key)
            .into_iter()
            .find(|e| e.type_.as_deref() == Some("Warning"))
        {
            let text = format!(
                "{} {} ago: {}",
                event.reason.as_deref().unwrap_or_default(),
                format::age(event.last_seen(), now),
                event.message.as_deref().unwrap_or_default()
            );
            said.push(labelled("", "newest warning", &text, Tone::Warn));
        }
        if !said.is_empty() {
            section.push(vec![Cell::new(&format!("  {}", pod.name()), Tone::Normal)]);
            section.extend(said);
        }
    }
    if !section.is_empty() {
        heading(lines, "Why it fails");
        lines.extend(section);
    }
}

/// `    container  label  text`, the label padded so the texts line up.
fn labelled(container: &str, label: &str, text: &str, tone: Tone) -> Vec<Cell> {
    vec![
        Cell::new(&format!("    {container:<12} {label:<17} "), Tone::Dim),
        Cell::new(text, tone),
    ]
}

fn conditions(lines: &mut Vec<Vec<Cell>>, node: &Node, now: jiff::Timestamp) {
    heading(lines, "Conditions");
    for condition in &node.status.conditions {
        // Ready should be True; the pressure and network conditions should be False.
        let healthy = (condition.type_ == "Ready") == (condition.status == "True");
        let mut text = String::new();
        for part in [condition.reason.as_deref(), condition.message.as_deref()]
            .into_iter()
            .flatten()
        {
            text.push_str("  ");
            text.push_str(part);
        }
        if let Some(since) = condition.last_transition_time {
            let _ = write!(
                text,
                "  since {}",
                format::age(Some(since.timestamp()), now)
            );
        }
        let tone = if healthy { Tone::Good } else { Tone::Bad };
        lines.push(vec![
            Cell::new(&format!("  {}={}", condition.type_, condition.status), tone),
            Cell::new(&text, Tone::Dim),
        ]);
    }
}

fn labels(lines: &mut Vec<Vec<Cell>>, node: &Node) {
    heading(lines, "Labels");
    for (key, value) in node.labels.iter() {
        lines.push(vec![Cell::new(&format!("  {key}={value}"), Tone::Normal)]);
    }
}

fn recent_events(lines: &mut Vec<Vec<Cell>>, events: &[&Event], now: jiff::Timestamp) {
    heading(lines, "Recent events");
    if events.is_empty() {
        lines.push(vec![Cell::new("  none", Tone::Dim)]);
    }
    for event in events {
        let warning = event.type_.as_deref() == Some("Warning");
        let object = format!(
            "{}/{}",
            event
                .involved_object
                .kind
                .as_deref()
                .unwrap_or_default()
                .to_lowercase(),
            event.involved_object.name.as_deref().unwrap_or_default()
        );
        lines.push(vec![
            Cell::new(
                &format!("  {:>4} ", format::age(event.last_seen(), now)),
                Tone::Dim,
            ),
            Cell::new(
                event.reason.as_deref().unwrap_or_default(),
                if warning { Tone::Warn } else { Tone::Normal },
            ),
            Cell::new(&format!(" {object}: "), Tone::Dim),
            Cell::new(event.message.as_deref().unwrap_or_default(), Tone::Normal),
        ]);
    }
}
