//! The fleet matrix's `A`, on the fleet side: builds the one-wave fleet run
//! the screen asked for ([`crate::fleet::run::RunPlan::one_wave`]) and
//! carries it out on a thread and runtime of its own, so the screen never
//! waits for it; each step goes back to the screen as a line, then the end.
//! Clusters are reached through the kubeconfig, as `fleet auto` reaches them.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::console::ConsoleOpsArgs;
use super::fleet::Reach;
use crate::cli::act_args::step_line;
use crate::fleet::run::connector::Kubeconfig;
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
            .send(FleetEvent::AutoStep(step_line(context, &event.step)));
    }
}

/// Starts the run on its own thread; its stopper, or `None` (and the end
/// said) when it could not start.
pub(super) fn start(
    reach: &Reach,
    ops: &ConsoleOpsArgs,
    daemonset: &str,
    contexts: &[String],
    policy: AutoPolicy,
    events: &UnboundedSender<FleetEvent>,
) -> Option<Stopper> {
    let refused = |why: String| {
        let _ = events.send(FleetEvent::AutoEnded(format!("not started: {why}")));
        None
    };
    let plan = match RunPlan::one_wave(daemonset, contexts, policy) {
        Ok(plan) => plan,
        Err(why) => return refused(why),
    };
    let journal = match Journal::from_flag(ops.journal.as_deref()) {
        Ok(journal) => journal,
        Err(err) => return refused(err.to_string()),
    };
    let settings = FleetSettings {
        namespace: reach.options().namespace.clone(),
        journal,
        dry_run: ops.read_only,
        skip_unreachable: false,
        patience: reach.timeout(),
        by: "rollcall fleet matrix".to_owned(),
    };
    let connector = Kubeconfig {
        options: reach.options().clone(),
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
        Ok(_) => Some(stopper),
        Err(err) => refused(format!("cannot start its thread: {err}")),
    }
}
