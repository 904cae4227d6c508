//! The fleet matrix's `A`, on the fleet side: builds the one-wave fleet run
//! the screen asked for ([`crate::fleet::run::RunPlan::one_wave`]) and
//! carries it out on a thread and runtime of its own, so the screen never
//! waits for it; each step goes back to the screen as a line, then the end.
//! Clusters are reached through the matrix's own connections (one stack per
//! cluster), else through the kubeconfig, as `fleet auto` reaches them.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use crate::cli::act_args::step_now;
use crate::cluster::connect::{ConnectOptions, Connection};
use crate::fleet::run::connector::{Kubeconfig, Made};
use crate::fleet::run::{
    Event, FleetRun, FleetSettings, Happening, Kind, Report, RunPlan, Stopper,
};
use crate::ops::auto::AutoPolicy;
use crate::ops::journal::Journal;
use crate::tui::fleet::FleetEvent;

/// Sends each step of the run to the screen, as a line.
struct ToScreen(UnboundedSender<FleetEvent>);

impl Report for ToScreen {
    fn event(&self, event: Event) {
        // What a live view waits for is not a step of the run.
        if event.happening == Happening::Notice {
            return;
        }
        let context = Some(event.context.as_str()).filter(|c| !c.is_empty());
        let _ = self
            .0
            .send(FleetEvent::AutoStep(step_now(context, &event.step)));
    }
}

/// How the matrix reaches clusters and acts, as its command line said.
pub(super) struct Setup {
    /// The flags every cluster is reached with (each sets its own context).
    pub options: ConnectOptions,
    /// The matrix's connections, by context: the run reuses them.
    pub connections: std::collections::BTreeMap<String, Connection>,
    /// How long a member's first view may take (`--request-timeout`).
    pub patience: std::time::Duration,
    /// `--journal`.
    pub journal: Option<std::path::PathBuf>,
    /// `--read-only`: the run is a dry run.
    pub read_only: bool,
}

/// A fleet run started from the matrix: its stopper and its thread.
pub(super) struct MatrixRun {
    stopper: Stopper,
    thread: std::thread::JoinHandle<()>,
}

impl MatrixRun {
    /// Halts the run: no new node anywhere, every touched cluster paused.
    pub(super) fn stop(&self, why: &str) {
        self.stopper.stop(why);
    }

    /// Whether the run has ended (its clusters paused or done).
    pub(super) fn ended(&self) -> bool {
        self.thread.is_finished()
    }
}

/// Starts the run on its own thread; the run, or `None` (and the end said)
/// when it could not start.
pub(super) fn start(
    setup: Setup,
    daemonset: &str,
    contexts: &[String],
    policy: AutoPolicy,
    events: &UnboundedSender<FleetEvent>,
) -> Option<MatrixRun> {
    let refused = |why: String| {
        let _ = events.send(FleetEvent::AutoEnded(format!("not started: {why}")));
        None
    };
    let plan = match RunPlan::one_wave(daemonset, contexts, policy) {
        Ok(plan) => plan,
        Err(why) => return refused(why),
    };
    let journal = match Journal::from_flag(setup.journal.as_deref()) {
        Ok(journal) => journal,
        Err(err) => return refused(err.to_string()),
    };
    let settings = FleetSettings {
        namespace: setup.options.namespace.clone(),
        journal,
        dry_run: setup.read_only,
        skip_unreachable: false,
        patience: setup.patience,
        by: "rollcall fleet matrix".to_owned(),
    };
    let connector = Made {
        connections: setup.connections,
        fallback: Kubeconfig {
            options: setup.options,
        },
    };
    let run = FleetRun::new(
        plan,
        Kind::Advance,
        settings,
        Arc::new(connector),
        Arc::new(ToScreen(events.clone())),
    );
    let stopper = run.stopper();
    let ended = events.clone();
    let thread = std::thread::Builder::new()
        .name("fleet-run".to_owned())
        .spawn(move || {
            // The run's future is not Send: it gets a runtime to itself.
            let text = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime.block_on(run.carry_out()).summary(),
                Err(err) => format!("not started: cannot start its runtime: {err}"),
            };
            let _ = ended.send(FleetEvent::AutoEnded(text));
        });
    match thread {
        Ok(thread) => Some(MatrixRun { stopper, thread }),
        Err(err) => refused(format!("cannot start its thread: {err}")),
    }
}
