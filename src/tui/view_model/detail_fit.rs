//! The capacity part of a node's detail pane: what the node allocates, what
//! the pods bound there request (and the largest of them), the host ports
//! and who holds them, each daemon pod's requests, QoS class and priority,
//! and the preflight fit of the revision the rollout moves to. Pure.

use super::{Cell, Tone};
use crate::cluster::cache::Cache;
use crate::cluster::usage::NodeUsage;
use crate::model::resource_list::{CPU, display_quantity};
use crate::model::{Node, Pod, ResourceList};
use crate::rows::NodeRow;

/// How many of the node's pods are named as its largest requesters.
const TOP_PODS: usize = 3;

/// Appends the capacity section's lines for `node` (the caller writes its heading).
pub fn capacity(
    lines: &mut Vec<Vec<Cell>>,
    cache: &Cache,
    node: &Node,
    row: &NodeRow,
    pods: &[&Pod],
) {
    let allocatable = &*node.status.allocatable;
    lines.push(vec![
        Cell::new("  allocatable ", Tone::Dim),
        Cell::new(
            &or_none(amounts(allocatable, None), "not reported"),
            Tone::Normal,
        ),
    ]);
    match cache.usage_known().then(|| cache.usage_on(node.name())) {
        None => lines.push(vec![Cell::new(
            "  requested   unknown (pods of all namespaces not listed: loading, or forbidden)",
            Tone::Dim,
        )]),
        Some(usage) => used(lines, usage, allocatable),
    }
    for pod in pods {
        // The class the API server recorded at admission (status.qosClass).
        let qos = pod.status.qos_class.as_deref().unwrap_or("-");
        lines.push(vec![Cell::new(
            &format!(
                "  daemon pod {}: requests {}, QoS {}, priority {}",
                pod.name(),
                or_none(amounts(&pod.spec.requests, None), "none"),
                qos,
                pod.spec.priority.unwrap_or(0)
            ),
            Tone::Normal,
        )]);
    }
    if let Some(fit) = row.fit.as_deref() {
        let (text, tone) = if !fit.fits {
            let reasons: Vec<&str> = fit.reasons.iter().map(|r| r.message.as_str()).collect();
            (format!("won't fit: {}", reasons.join("; ")), Tone::Bad)
        } else if fit.preempts.is_empty() {
            ("fits".to_owned(), Tone::Good)
        } else {
            (
                crate::ops::run::fit::preempts_text(&fit.preempts),
                Tone::Warn,
            )
        };
        lines.push(vec![
            Cell::new("  new revision ", Tone::Dim),
            Cell::new(&text, tone),
        ]);
    }
}

/// Requested against allocatable, the largest requesters, the host ports.
fn used(lines: &mut Vec<Vec<Cell>>, usage: Option<&NodeUsage>, allocatable: &ResourceList) {
    let requested = usage.map(|u| u.requested.clone()).unwrap_or_default();
    let count = usage.map_or(0, |u| u.pods.len());
    lines.push(vec![
        Cell::new("  requested   ", Tone::Dim),
        Cell::new(
            &format!(
                "{} · {count} pod(s)",
                amounts(&requested, Some(allocatable))
            ),
            Tone::Normal,
        ),
    ]);
    let Some(usage) = usage else { return };
    let mut largest: Vec<_> = usage.pods.iter().collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.requests().get(CPU)));
    let top: Vec<String> = largest
        .iter()
        .take(TOP_PODS)
        .map(|p| {
            format!(
                "{}/{} {}",
                p.namespace(),
                p.name(),
                display_quantity(CPU, p.requests().get(CPU))
            )
        })
        .collect();
    if !top.is_empty() {
        lines.push(vec![
            Cell::new("  by cpu      ", Tone::Dim),
            Cell::new(&top.join(", "), Tone::Normal),
        ]);
    }
    for pod in &usage.pods {
        for port in pod.host_ports() {
            lines.push(vec![Cell::new(
                &format!(
                    "  host port {}/{} held by {}/{}",
                    port.port,
                    port.protocol,
                    pod.namespace(),
                    pod.name()
                ),
                Tone::Normal,
            )]);
        }
    }
}

/// `cpu 2860m of 3910m · memory …`, or the amounts alone.
fn amounts(list: &ResourceList, of: Option<&ResourceList>) -> String {
    list.iter()
        .filter(|(_, amount)| *amount > 0)
        .map(|(name, amount)| match of {
            Some(total) => format!(
                "{name} {} of {}",
                display_quantity(name, amount),
                display_quantity(name, total.get(name))
            ),
            None => format!("{name} {}", display_quantity(name, amount)),
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `text`, or `none` when it is empty.
fn or_none(text: String, none: &str) -> String {
    if text.is_empty() {
        none.to_owned()
    } else {
        text
    }
}
