//! What happened in a rehearsal, as it happened: the fleet run's events
//! kept in order ([`Recorder`], the run's [`Report`]), each stamped by the
//! run itself with the simulated clock, then folded ([`fold`]) into a
//! timeline per wave, per cluster, per node delete. Pure but for the
//! recorder's lock; deciding what the timeline means (ready times, the
//! stop, the nodes never reached) belongs to the report.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;

use crate::fleet::run::{Event, Happening, Outcome, Report};

/// Keeps every event of a fleet run, in the order they came.
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<Event>>,
}

impl Report for Recorder {
    fn event(&self, event: Event) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }
}

impl Recorder {
    /// The events so far, taken out.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// One pod delete of a member's run: the node starts moving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeDelete {
    /// The node.
    pub node: String,
    /// When its pod was deleted.
    pub at: Timestamp,
}

/// One cluster's part, as it went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterTimeline {
    /// The context.
    pub context: String,
    /// Its first event.
    pub started: Option<Timestamp>,
    /// When its part ended, and how (`None`: never reached).
    pub ended: Option<(Timestamp, Outcome)>,
    /// Its pod deletes, in order.
    pub deletes: Vec<NodeDelete>,
}

/// How a wave ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveEnd {
    /// Every cluster passed (or failed within the budget).
    Passed,
    /// It did not pass: the run stopped there.
    Stopped,
    /// It started, and the run was stopped while it ran.
    Cut,
    /// The run stopped before it.
    NotReached,
}

/// One wave, as it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveTimeline {
    /// The wave's name.
    pub name: String,
    /// When it started.
    pub started: Option<Timestamp>,
    /// When it passed or stopped.
    pub ended: Option<Timestamp>,
    /// How.
    pub end: WaveEnd,
    /// The bake that followed it.
    pub bake: Option<Duration>,
    /// Its clusters, in the plan's order.
    pub clusters: Vec<ClusterTimeline>,
}

/// The whole run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// The waves in the plan's order.
    pub waves: Vec<WaveTimeline>,
    /// The last event's time.
    pub last: Option<Timestamp>,
}

/// Folds a run's events into its timeline; `waves` are the plan's waves
/// with their contexts, in order.
pub fn fold(events: &[Event], waves: &[(String, Vec<String>)]) -> Timeline {
    let mut timeline = Timeline {
        waves: waves
            .iter()
            .map(|(name, contexts)| WaveTimeline {
                name: name.clone(),
                started: None,
                ended: None,
                end: WaveEnd::NotReached,
                bake: None,
                clusters: contexts
                    .iter()
                    .map(|context| ClusterTimeline {
                        context: context.clone(),
                        ..ClusterTimeline::default()
                    })
                    .collect(),
            })
            .collect(),
        last: None,
    };
    for event in events {
        let at = event.step.time;
        timeline.last = Some(timeline.last.map_or(at, |last| last.max(at)));
        if event.context.is_empty() {
            wave_event(&mut timeline, &event.happening, at);
        } else if let Some(cluster) = timeline
            .waves
            .iter_mut()
            .flat_map(|w| &mut w.clusters)
            .find(|c| c.context == event.context)
        {
            cluster_event(cluster, event, at);
        }
    }
    for wave in &mut timeline.waves {
        if wave.end == WaveEnd::NotReached && wave.started.is_some() {
            wave.end = WaveEnd::Cut;
        }
    }
    timeline
}

fn wave_event(timeline: &mut Timeline, happening: &Happening, at: Timestamp) {
    let (Happening::WaveStarted { wave: name }
    | Happening::WavePassed { wave: name }
    | Happening::WaveStopped { wave: name }
    | Happening::Baking { wave: name, .. }) = happening
    else {
        return;
    };
    let Some(wave) = timeline.waves.iter_mut().find(|w| &w.name == name) else {
        return;
    };
    match happening {
        Happening::WaveStarted { .. } => wave.started = Some(at),
        Happening::WavePassed { .. } => (wave.ended, wave.end) = (Some(at), WaveEnd::Passed),
        Happening::WaveStopped { .. } => (wave.ended, wave.end) = (Some(at), WaveEnd::Stopped),
        Happening::Baking { bake, .. } => wave.bake = Some(*bake),
        _ => {}
    }
}

fn cluster_event(cluster: &mut ClusterTimeline, event: &Event, at: Timestamp) {
    cluster.started.get_or_insert(at);
    match &event.happening {
        Happening::MemberEnded(outcome) => cluster.ended = Some((at, outcome.clone())),
        Happening::Step if event.step.event == "delete" => {
            if let Some(node) = &event.step.node {
                cluster.deletes.push(NodeDelete {
                    node: node.clone(),
                    at,
                });
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::drive::Progress;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(second).unwrap()
    }

    fn stamped(mut event: Event, second: i64) -> Event {
        event.step.time = at(second);
        event
    }

    fn delete(context: &str, node: &str, second: i64) -> Event {
        let step = Progress::new("delete", Some(node), "advancing: deleted pod x");
        stamped(Event::member(context, Happening::Step, step), second)
    }

    fn fleet(happening: Happening, second: i64) -> Event {
        stamped(Event::fleet(happening, String::new()), second)
    }

    fn ended(context: &str, outcome: Outcome, second: i64) -> Event {
        let step = Progress::new("cluster", None, outcome.text());
        stamped(
            Event::member(context, Happening::MemberEnded(outcome), step),
            second,
        )
    }

    #[test]
    fn events_fold_into_waves_clusters_and_deletes() {
        let waves = vec![
            ("one".to_owned(), vec!["a".to_owned()]),
            ("two".to_owned(), vec!["b".to_owned(), "c".to_owned()]),
            ("three".to_owned(), vec!["d".to_owned()]),
        ];
        let wave = |name: &str| name.to_owned();
        let passed = Outcome::Passed {
            moved: 2,
            left: Vec::new(),
        };
        let failed = Outcome::Failed {
            node: "b2".to_owned(),
            reason: "CrashLoopBackOff".to_owned(),
        };
        let events = vec![
            fleet(Happening::WaveStarted { wave: wave("one") }, 0),
            delete("a", "a1", 1),
            delete("a", "a2", 40),
            ended("a", passed.clone(), 80),
            fleet(Happening::WavePassed { wave: wave("one") }, 80),
            fleet(
                Happening::Baking {
                    wave: wave("one"),
                    bake: Duration::from_secs(600),
                },
                80,
            ),
            fleet(Happening::WaveStarted { wave: wave("two") }, 680),
            delete("b", "b1", 681),
            delete("c", "c1", 681),
            ended("b", failed.clone(), 760),
            ended("c", Outcome::Stopped("halted".to_owned()), 761),
            fleet(Happening::WaveStopped { wave: wave("two") }, 761),
        ];
        let timeline = fold(&events, &waves);
        let one = &timeline.waves[0];
        assert_eq!((one.started, one.ended), (Some(at(0)), Some(at(80))));
        assert_eq!(one.end, WaveEnd::Passed);
        assert_eq!(one.bake, Some(Duration::from_secs(600)));
        let a = &one.clusters[0];
        let nodes: Vec<(&str, Timestamp)> =
            a.deletes.iter().map(|d| (d.node.as_str(), d.at)).collect();
        assert_eq!(nodes, [("a1", at(1)), ("a2", at(40))]);
        assert_eq!(a.ended, Some((at(80), passed)));
        let two = &timeline.waves[1];
        assert_eq!(two.end, WaveEnd::Stopped);
        assert_eq!(two.clusters[0].ended, Some((at(760), failed)));
        assert_eq!(two.clusters[1].started, Some(at(681)));
        let three = &timeline.waves[2];
        assert_eq!(three.end, WaveEnd::NotReached);
        assert_eq!(three.clusters[0].started, None);
        assert_eq!(timeline.last, Some(at(761)));
    }
}
