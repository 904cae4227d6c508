//! A rehearsal's live progress: while the run goes, one line per wave and
//! per cluster as it starts and as it ends, stamped with the simulated
//! offset and the real seconds so far, so a rehearsal of a large fleet is
//! not silent for minutes. The lines go to the caller's sink (the command:
//! stderr), never into the report (`-o json` keeps stdout to itself). Each
//! event is also handed on to the report that keeps the timeline.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use jiff::Timestamp;

use crate::fleet::run::{Event, Happening, Report};
use crate::sanitize::sanitize;

/// Where the lines go.
pub type Sink = Box<dyn Fn(&str) + Send + Sync>;

/// Says the run's progress, and passes every event on to `next`.
pub struct Progress {
    next: Arc<dyn Report>,
    say: Sink,
    start: Timestamp,
    real: Instant,
    /// The clusters already said to have started.
    started: Mutex<HashSet<String>>,
}

impl Progress {
    /// Progress from the simulated `start`, said through `say`.
    pub fn new(next: Arc<dyn Report>, start: Timestamp, say: Sink) -> Self {
        Progress {
            next,
            say,
            start,
            real: Instant::now(),
            started: Mutex::default(),
        }
    }
}

impl Report for Progress {
    fn event(&self, event: Event) {
        let first = !event.context.is_empty()
            && self
                .started
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(event.context.clone());
        if let Some(what) = line(&event, first) {
            let offset = event.step.time.duration_since(self.start).as_secs().max(0);
            (self.say)(&format!(
                "rehearsal +{}, {:.1}s real: {what}",
                humantime::format_duration(std::time::Duration::from_secs(offset.unsigned_abs())),
                self.real.elapsed().as_secs_f64()
            ));
        }
        self.next.event(event);
    }
}

/// The words for `event`, when it starts or ends a wave or a cluster
/// (`first`: the cluster's first event, its start).
fn line(event: &Event, first: bool) -> Option<String> {
    let context = sanitize(&event.context);
    match &event.happening {
        Happening::WaveStarted { wave } => Some(format!("wave {} started", sanitize(wave))),
        Happening::WavePassed { wave } => Some(format!("wave {} passed", sanitize(wave))),
        Happening::WaveStopped { wave } => Some(format!("wave {} stopped", sanitize(wave))),
        Happening::MemberEnded(outcome) => Some(format!(
            "cluster {context} ended: {}",
            sanitize(&outcome.text())
        )),
        _ if first => Some(format!("cluster {context} started")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::rehearse::timeline::Recorder;
    use crate::fleet::run::Outcome;
    use crate::ops::drive::Progress as Step;

    #[test]
    fn waves_and_clusters_are_said_as_they_start_and_end_and_kept() {
        let said = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&said);
        let recorder = Arc::new(Recorder::default());
        let start = crate::clock::now();
        let progress = Progress::new(
            Arc::clone(&recorder) as Arc<dyn Report>,
            start,
            Box::new(move |text| sink.lock().unwrap().push(text.to_owned())),
        );
        let wave = || "one".to_owned();
        progress.event(Event::fleet(
            Happening::WaveStarted { wave: wave() },
            String::new(),
        ));
        for _ in 0..2 {
            let step = Step::new("waiting", Some("n1"), "waiting for Ready");
            progress.event(Event::member("prod-\u{1b}[31m1", Happening::Step, step));
        }
        let ended = Outcome::Passed {
            moved: 3,
            left: Vec::new(),
        };
        let step = Step::new("cluster", None, ended.text());
        progress.event(Event::member(
            "prod-\u{1b}[31m1",
            Happening::MemberEnded(ended),
            step,
        ));
        progress.event(Event::fleet(
            Happening::WavePassed { wave: wave() },
            String::new(),
        ));
        let said = said.lock().unwrap().clone();
        let words: Vec<&str> = said
            .iter()
            .map(|l| l.split_once(" real: ").map_or("", |(_, w)| w))
            .collect();
        assert_eq!(words.len(), 4, "{said:?}");
        assert_eq!(words[0], "wave one started");
        assert_eq!(words[1], "cluster prod-1 started", "said once, sanitised");
        assert!(words[2].starts_with("cluster prod-1 ended: "), "{said:?}");
        assert_eq!(words[3], "wave one passed");
        assert!(said[0].starts_with("rehearsal +0s, "), "{said:?}");
        assert_eq!(recorder.take().len(), 5, "every event kept");
    }
}
