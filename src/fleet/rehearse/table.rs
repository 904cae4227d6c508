//! A rehearsal as text for a terminal of 80 columns: one row per cluster
//! (wave, start, end, nodes moved of planned, result), each wave's batch
//! when the budget cut it and its bake,
//! then the node moves batch by batch (the nodes deleted at one moment on
//! one line), where the plan stopped, the nodes never reached, and the
//! expected wall time. Every name from a dump is sanitised. Pure.

use std::fmt::Write as _;

use super::report::{ClusterReport, NodeReport, Rehearsal};
use crate::sanitize::sanitize;

/// The width every line keeps within.
pub const WIDTH: usize = 80;

/// The widest a wave or context name is shown.
const NAME_WIDTH: usize = 20;

/// The rehearsal as lines of at most [`WIDTH`] characters.
pub fn render(report: &Rehearsal) -> String {
    let mut out = String::new();
    let clusters = report.waves.iter().map(|w| w.clusters.len()).sum::<usize>();
    wrapped(
        &mut out,
        &format!(
            "rehearsal of {} (plan {}, scenario {}): {clusters} cluster(s) in {} wave(s), simulated time",
            sanitize(&report.daemonset),
            report.plan,
            sanitize(&report.scenario),
            report.waves.len()
        ),
    );
    line(&mut out, "");
    clusters_table(&mut out, report);
    moves(&mut out, report);
    ending(&mut out, report);
    out
}

fn clusters_table(out: &mut String, report: &Rehearsal) {
    let wave_width = column(report.waves.iter().map(|w| w.name.as_str()), "WAVE");
    let context_width = column(
        report
            .waves
            .iter()
            .flat_map(|w| &w.clusters)
            .map(|c| c.context.as_str()),
        "CLUSTER",
    );
    let row = |wave: &str, context: &str, start: &str, end: &str, moved: &str, result: &str| {
        format!(
            "{wave:<wave_width$}  {context:<context_width$}  {start:>9}  {end:>9}  {moved:>9}  {result}"
        )
    };
    line(
        out,
        &row("WAVE", "CLUSTER", "START", "END", "MOVED", "RESULT"),
    );
    for wave in &report.waves {
        for (index, cluster) in wave.clusters.iter().enumerate() {
            let name = if index == 0 {
                cut(&wave.name, wave_width)
            } else {
                String::new()
            };
            let planned = cluster.moved.len() + cluster.not_reached.len();
            line(
                out,
                &row(
                    &name,
                    &cut(&cluster.context, context_width),
                    &at(cluster.start),
                    &at(cluster.end),
                    &format!("{}/{planned}", cluster.moved.len()),
                    cluster.result,
                ),
            );
        }
        if let Some(cut) = &wave.budget_cut {
            line(out, &format!("{:wave_width$}  {cut}", ""));
        }
        if let Some(bake) = wave.bake_seconds {
            let until = wave
                .end
                .map(|end| format!(" until {}", offset(end + bake_f64(bake))));
            let text = format!(
                "{:wave_width$}  bake {}{}",
                "",
                humantime::format_duration(std::time::Duration::from_secs(bake)),
                until.unwrap_or_default()
            );
            line(out, &text);
        }
    }
    line(out, "");
}

fn moves(out: &mut String, report: &Rehearsal) {
    let any = report
        .waves
        .iter()
        .flat_map(|w| &w.clusters)
        .any(|c| !c.moved.is_empty());
    if !any {
        return;
    }
    line(out, "node moves (pod deleted; its replacement Ready):");
    let width = column(
        report
            .waves
            .iter()
            .flat_map(|w| &w.clusters)
            .map(|c| c.context.as_str()),
        "",
    );
    for cluster in report.waves.iter().flat_map(|w| &w.clusters) {
        for batch in batches(cluster) {
            let first = &batch[0];
            let ready = batch
                .iter()
                .map(|n| n.ready)
                .try_fold(f64::MIN, |latest, ready| ready.map(|r| latest.max(r)));
            let ready = ready.map_or_else(
                || "not all Ready".to_owned(),
                |r| format!("Ready {}", offset(r)),
            );
            let names: Vec<String> = batch
                .iter()
                .map(|n| sanitize(&n.node).into_owned())
                .collect();
            let text = format!(
                "  {:<width$}  {:>9}  {ready}: {}",
                cut(&cluster.context, width),
                offset(first.deleted),
                names.join(", "),
            );
            line(out, &text);
        }
    }
    line(out, "");
}

fn ending(out: &mut String, report: &Rehearsal) {
    if let Some(stop) = &report.stop {
        let node = stop
            .node
            .as_deref()
            .map(|n| format!(" node {}", sanitize(n)))
            .unwrap_or_default();
        wrapped(
            out,
            &format!(
                "stopped {} in wave {} at {}{node}: {}",
                sanitize(&stop.context),
                sanitize(&stop.wave),
                offset(stop.at),
                sanitize(&stop.reason)
            ),
        );
    }
    if report.not_reached > 0 {
        let per_cluster: Vec<String> = report
            .waves
            .iter()
            .flat_map(|w| &w.clusters)
            .filter(|c| !c.not_reached.is_empty())
            .map(|c| format!("{} ({})", sanitize(&c.context), c.not_reached.len()))
            .collect();
        wrapped(
            out,
            &format!(
                "never reached: {} node(s): {}",
                report.not_reached,
                per_cluster.join(", ")
            ),
        );
    }
    let estimate = report
        .estimate
        .as_ref()
        .map(|e| format!(" (the plan's estimate, soaks and bakes only: {})", e.text))
        .unwrap_or_default();
    wrapped(
        out,
        &format!(
            "expected wall time: {}{estimate}; rehearsed in {}",
            report.expected_wall_time.text, report.rehearsal_time.text
        ),
    );
    // The run's own last line, as `fleet auto` ends (it begins with the result).
    wrapped(out, &sanitize(&report.summary));
}

/// A cluster's moves grouped by the moment their pods were deleted.
fn batches(cluster: &ClusterReport) -> Vec<&[NodeReport]> {
    let mut batches = Vec::new();
    let mut rest = cluster.moved.as_slice();
    while let Some(first) = rest.first() {
        let same = rest
            .iter()
            .take_while(|n| (n.deleted - first.deleted).abs() < 1.0)
            .count();
        let (batch, after) = rest.split_at(same);
        batches.push(batch);
        rest = after;
    }
    batches
}

/// A column's width: its widest value (at most [`NAME_WIDTH`]) or its title.
fn column<'a>(values: impl Iterator<Item = &'a str>, title: &str) -> usize {
    values
        .map(|v| v.chars().count().min(NAME_WIDTH))
        .chain([title.len()])
        .max()
        .unwrap_or(title.len())
}

/// `text` sanitised and cut to `width` characters (`…` marks a cut).
fn cut(text: &str, width: usize) -> String {
    let clean = sanitize(text);
    if clean.chars().count() <= width {
        return clean.into_owned();
    }
    let mut short: String = clean.chars().take(width.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// Seconds from the start as `+1h02m03s`, `-` when never.
fn at(seconds: Option<f64>) -> String {
    seconds.map_or_else(|| "-".to_owned(), offset)
}

fn offset(seconds: f64) -> String {
    let whole = seconds_whole(seconds);
    let (hours, minutes, seconds) = (whole / 3600, whole / 60 % 60, whole % 60);
    if hours > 0 {
        format!("+{hours}h{minutes:02}m{seconds:02}s")
    } else if minutes > 0 {
        format!("+{minutes}m{seconds:02}s")
    } else {
        format!("+{seconds}s")
    }
}

#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "offsets are non-negative and far below u64::MAX seconds"
)]
fn seconds_whole(seconds: f64) -> u64 {
    seconds.max(0.0).round() as u64
}

#[expect(
    clippy::cast_precision_loss,
    reason = "bakes are far below 2^52 seconds"
)]
fn bake_f64(seconds: u64) -> f64 {
    seconds as f64
}

/// One line, cut to [`WIDTH`] characters.
fn line(out: &mut String, text: &str) {
    let _ = writeln!(out, "{}", cut_raw(text, WIDTH));
}

/// Words wrapped at [`WIDTH`], continuation lines indented by two.
fn wrapped(out: &mut String, text: &str) {
    let mut current = String::new();
    for word in text.split(' ') {
        let fits = current.chars().count() + 1 + word.chars().count() <= WIDTH;
        if !current.is_empty() && !fits {
            line(out, &current);
            "  ".clone_into(&mut current);
        }
        if !current.trim().is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.trim().is_empty() {
        line(out, &current);
    }
}

fn cut_raw(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(width - 1).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::rehearse::report::{Span, Stop, WaveReport};

    fn node(name: &str, deleted: f64, ready: Option<f64>) -> NodeReport {
        NodeReport {
            node: name.to_owned(),
            deleted,
            ready,
        }
    }

    fn sample() -> Rehearsal {
        let cluster =
            |context: &str, moved: Vec<NodeReport>, left: &[&str], result| ClusterReport {
                context: context.to_owned(),
                result,
                message: String::new(),
                start: moved.first().map(|n| n.deleted),
                end: moved.last().and_then(|n| n.ready),
                moved,
                not_reached: left.iter().map(|n| (*n).to_owned()).collect(),
            };
        Rehearsal {
            daemonset: "kube-system/node-agent".to_owned(),
            plan: "8c1f0a2b".to_owned(),
            scenario: "small".to_owned(),
            result: "stopped",
            summary: "stopped: prod-eu-1: node edge-1: CrashLoopBackOff; every touched cluster is paused; not reached: prod-us-1, a-context-name-much-longer-than-twenty".to_owned(),
            stop: Some(Stop {
                wave: "canary".to_owned(),
                context: "prod-eu-1".to_owned(),
                node: Some("edge-1".to_owned()),
                reason: "prod-eu-1: node edge-1: CrashLoopBackOff".to_owned(),
                at: 95.0,
            }),
            waves: vec![
                WaveReport {
                    name: "canary".to_owned(),
                    result: "stopped",
                    start: Some(0.0),
                    end: Some(95.0),
                    bake_seconds: Some(600),
                    batch: 1,
                    budget_cut: Some("batch 1 (cut from 2 by the budget)".to_owned()),
                    clusters: vec![cluster(
                        "prod-eu-1",
                        vec![
                            node("general-1", 0.2, Some(6.0)),
                            node("general-2", 0.3, Some(7.0)),
                            node("edge-1", 40.0, None),
                        ],
                        &["edge-2"],
                        "failed",
                    )],
                },
                WaveReport {
                    name: "rest".to_owned(),
                    result: "not reached",
                    start: None,
                    end: None,
                    bake_seconds: None,
                    batch: 1,
                    budget_cut: None,
                    clusters: vec![
                        cluster("prod-us-1", Vec::new(), &["a", "b"], "not reached"),
                        cluster(
                            "a-context-name-much-longer-than-twenty",
                            Vec::new(),
                            &["c"],
                            "not reached",
                        ),
                    ],
                },
            ],
            not_reached: 4,
            expected_wall_time: Span::of(std::time::Duration::from_secs(95)),
            estimate: Some(Span::of(std::time::Duration::from_secs(4000))),
            rehearsal_time: Span::of(std::time::Duration::from_millis(1200)),
        }
    }

    #[test]
    fn every_line_fits_80_columns_and_names_the_stop() {
        let text = render(&sample());
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "{line:?}");
        }
        assert!(text.contains("canary  prod-eu-1"), "{text}");
        assert!(text.contains("3/4"), "{text}");
        assert!(text.contains("bake 10m until +11m35s"), "{text}");
        assert!(
            text.contains("        batch 1 (cut from 2 by the budget)\n"),
            "{text}"
        );
        assert!(
            text.contains("+0s  Ready +7s: general-1, general-2"),
            "{text}"
        );
        assert!(text.contains("+40s  not all Ready: edge-1"), "{text}");
        assert!(
            text.contains("stopped prod-eu-1 in wave canary at +1m35s node edge-1"),
            "{text}"
        );
        assert!(
            text.contains("never reached: 4 node(s): prod-eu-1 (1), prod-us-1 (2)"),
            "{text}"
        );
        assert!(text.contains("a-context-name-much…"), "{text}");
        assert!(text.contains("expected wall time: 1m 35s"), "{text}");
    }

    #[test]
    fn offsets_read_as_hours_minutes_seconds() {
        assert_eq!(offset(0.4), "+0s");
        assert_eq!(offset(75.0), "+1m15s");
        assert_eq!(offset(3723.0), "+1h02m03s");
    }
}
