//! A fleet run's one home: a checked plan carried out wave by wave
//! ([`FleetRun`]). Inside each cluster the run is `rollcall auto`'s own (or
//! `rollcall rollback`'s, waves in reverse); a wave's clusters run
//! `parallel` at a time, and the wave passes when every one of them passed;
//! then its bake; then the next wave. A failure past the budget, or its
//! operator's stop ([`Stopper`]), stops new work everywhere at once and
//! leaves every touched cluster paused with a reason that begins `fleet run
//! DIGEST`, which a later run of the same plan resumes (nodes already moved
//! are no longer in any cluster's plan, so none is deleted twice).
//!
//! Callers (`fleet auto`, `fleet rollback`, the fleet matrix) check and
//! confirm the plan, then only build the run, show its [`report::Event`]s
//! and its [`FleetOutcome`]. Clusters are reached through a
//! [`connector::Connector`] alone, so the same run drives clusters served
//! in-process.

mod advance;
pub mod connector;
mod member;
pub mod outcome;
mod panicked;
mod ready;
pub mod report;
mod rollback;
pub mod settings;
mod shared;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

pub use connector::Connector;
pub use outcome::{FleetOutcome, MemberResult, Outcome};
pub use report::{Event, Happening, Report};
pub use settings::{FleetSettings, Kind, RollbackChoice};

use crate::fleet::waves::assign::Assignment;
use crate::fleet::waves::budget::Ledger;
use crate::fleet::waves::file::{PlanFile, Wave};
use crate::model::DsRef;
use crate::ops::drive::Progress;
use crate::ops::interrupt::Interrupt;
use crate::ops::write_gate::WriteGate;
use shared::Shared;

/// A plan file read and checked, its contexts assigned to its waves.
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// The file, as parsed.
    pub plan: PlanFile,
    /// Its digest (recorded in the reasons of the pauses a run leaves).
    pub digest: String,
    /// The DaemonSet.
    pub daemonset: DsRef,
    /// Which contexts each wave takes.
    pub assignment: Assignment,
}

impl RunPlan {
    /// `plan` with the contexts `available` assigned to its waves (every
    /// context the plan's `clusters` match in exactly one wave, or
    /// excluded); `Err` says why the plan does not hold.
    pub fn assigned(plan: PlanFile, available: &[String]) -> Result<RunPlan, String> {
        let daemonset = plan.daemonset()?;
        let assignment = crate::fleet::waves::assign::assign(&plan, available)?;
        Ok(RunPlan {
            digest: plan.digest(),
            plan,
            daemonset,
            assignment,
        })
    }
}

impl RunPlan {
    /// One wave over `contexts`, all at once, each cluster rolled with
    /// `policy` (the fleet matrix's `A`: the clusters shown); a budget of
    /// no failed node, as `fleet auto`'s default.
    pub fn one_wave(
        daemonset: &str,
        contexts: &[String],
        policy: crate::ops::auto::AutoPolicy,
    ) -> Result<RunPlan, String> {
        use crate::fleet::waves::file::{Budget, Span};
        let plan = PlanFile {
            daemonset: daemonset.to_owned(),
            clusters: contexts.to_vec(),
            exclude: Vec::new(),
            budget: Budget::default(),
            waves: vec![Wave {
                name: "matrix".to_owned(),
                clusters: contexts.to_vec(),
                canary: None,
                batch: policy.batch,
                soak: Span(policy.soak),
                timeout: Span(policy.timeout),
                bake: Span::default(),
                parallel: contexts.len().max(1),
            }],
        };
        RunPlan::assigned(plan, contexts)
    }
}

/// A fleet run, ready to be carried out once.
pub struct FleetRun {
    plan: RunPlan,
    kind: Kind,
    shared: Arc<Shared>,
    stopper: Stopper,
}

/// Stops a fleet run from elsewhere (a signal handler, a key): every member
/// stops after its current step and pauses with the reason.
#[derive(Clone)]
pub struct Stopper {
    interrupt: Interrupt,
    mark: String,
    stopped: Arc<AtomicBool>,
    gate: WriteGate,
}

impl Stopper {
    /// Stops the run because its operator asked (`why`, e.g. `interrupted
    /// (Ctrl-C or SIGTERM)`); the run then ends interrupted.
    pub fn stop(&self, why: &str) {
        self.stopped.store(true, Ordering::SeqCst);
        self.interrupt.halt(format!("{}: {why}", self.mark));
    }

    /// For a caller about to exit at once (a second Ctrl-C): sends no more
    /// writes, and waits up to `patience` for those already sent to be
    /// answered and journalled; whether they all were. (Exiting between a
    /// delete and its journal line would leave a pod deleted that no
    /// journal names.)
    pub async fn close_writes(&self, patience: std::time::Duration) -> bool {
        self.interrupt.request();
        self.gate.close_and_drain(patience).await
    }

    /// Whether [`Stopper::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
}

impl FleetRun {
    /// A run of `plan` (already checked against every cluster).
    pub fn new(
        plan: RunPlan,
        kind: Kind,
        settings: FleetSettings,
        connector: Arc<dyn Connector>,
        report: Arc<dyn Report>,
    ) -> Self {
        let interrupt = Interrupt::never();
        let shared = Arc::new(Shared {
            verb: kind.verb(),
            daemonset: plan.daemonset.clone(),
            digest: plan.digest.clone(),
            ledger: Arc::new(Mutex::new(Ledger::new(plan.plan.budget))),
            classes: Mutex::default(),
            interrupt: interrupt.clone(),
            gate: WriteGate::default(),
            report,
            connector,
            settings,
        });
        let stopper = Stopper {
            interrupt,
            mark: shared.mark(),
            stopped: Arc::new(AtomicBool::new(false)),
            gate: shared.gate.clone(),
        };
        FleetRun {
            plan,
            kind,
            shared,
            stopper,
        }
    }

    /// A handle that stops the run from another task or thread.
    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Carries the plan out wave by wave; pauses every touched member when
    /// the run stops; how it ended. The future is not `Send` (a member's
    /// run is not): drive it with `block_on`, or in a `LocalSet`, on a
    /// runtime of its own when the caller must not block.
    pub async fn carry_out(self) -> FleetOutcome {
        let shared = &self.shared;
        let would = shared.would();
        let mut results: Vec<MemberResult> = Vec::new();
        let ledger = Ledger::new(self.plan.plan.budget);
        let waves = &self.plan.assignment.waves;
        let last = waves.len().saturating_sub(1);
        let mut order: Vec<usize> = (0..waves.len()).collect();
        if matches!(self.kind, Kind::Rollback(_)) {
            order.reverse();
        }
        for (step, index) in order.into_iter().enumerate() {
            let (name, contexts) = &waves[index];
            let wave = &self.plan.plan.waves[index];
            if shared.interrupt.requested() {
                break;
            }
            let text = format!("{would}start wave {name}: {}", contexts.join(", "));
            shared.say_fleet(Happening::WaveStarted { wave: name.clone() }, text);
            let job = Job::of(self.kind, wave, &ledger);
            let outcomes = run_wave(shared, contexts, name, &job, wave.parallel).await;
            // A failure within the budget, a veto and an unreachable cluster
            // skipped on purpose let the wave pass; each is named at the end.
            let passed = outcomes.iter().all(|m| {
                m.outcome.passed()
                    || matches!(m.outcome, Outcome::Failed { .. } | Outcome::Skipped(_))
            });
            let failed_any = outcomes.iter().any(|m| !m.outcome.passed());
            results.extend(outcomes);
            if shared.interrupt.requested() {
                break;
            }
            if !passed {
                let text = format!("wave {name} did not pass: the run stops before the next wave");
                shared.say_fleet(Happening::WaveStopped { wave: name.clone() }, text);
                break;
            }
            let note = if failed_any {
                " (with clusters skipped or failed within the budget)"
            } else {
                ""
            };
            let text = format!("{would}pass wave {name}{note}");
            shared.say_fleet(Happening::WavePassed { wave: name.clone() }, text);
            if step < last && !wave.bake.0.is_zero() {
                bake(shared, name, wave.bake.0).await;
            }
        }
        if let Some(reason) = shared.interrupt.halt_reason() {
            for member in &results {
                // A member that moved nothing has nothing to stop.
                if member.touched
                    && matches!(member.outcome, Outcome::Passed { moved, .. } if moved > 0)
                {
                    member::pause_member(shared, &member.context, &reason).await;
                }
            }
        }
        self.outcome(results)
    }

    fn outcome(&self, members: Vec<MemberResult>) -> FleetOutcome {
        let not_reached = self
            .plan
            .assignment
            .contexts()
            .filter(|c| !members.iter().any(|m| &m.context == *c))
            .cloned()
            .collect();
        let stop = self
            .shared
            .ledger
            .lock()
            .ok()
            .and_then(|l| l.stopped().map(str::to_owned));
        FleetOutcome {
            members,
            not_reached,
            stop,
            interrupted: self.stopper.stopped(),
            dry_run: self.shared.dry_run(),
            waves: self.plan.assignment.waves.len(),
        }
    }
}

/// The bake after a wave: said, then waited out (not in a dry run), cut
/// short by a stop.
async fn bake(shared: &Shared, wave: &str, bake: std::time::Duration) {
    let text = format!(
        "{}bake {} after wave {wave}",
        shared.would(),
        humantime::format_duration(bake)
    );
    let happening = Happening::Baking {
        wave: wave.to_owned(),
        bake,
    };
    shared.say_fleet(happening, text);
    if !shared.dry_run() {
        tokio::select! {
            () = tokio::time::sleep(bake) => {}
            () = shared.interrupt.wait() => {}
        }
    }
}

/// What a wave's members each do.
#[derive(Clone, Debug)]
enum Job {
    /// Auto-advance with these settings.
    Advance(crate::ops::run::settings::RunSettings),
    /// Roll back, then move the nodes back within the wave's timeout per node.
    Rollback(RollbackChoice, std::time::Duration),
}

impl Job {
    fn of(kind: Kind, wave: &Wave, ledger: &Ledger) -> Job {
        match kind {
            Kind::Advance => Job::Advance(settings::wave_settings(wave, ledger)),
            Kind::Rollback(choice) => Job::Rollback(choice, wave.timeout.0),
        }
    }
}

/// Runs a wave's clusters, `parallel` at a time, in this task (a run's
/// executor is not `Send`; the clusters wait on the network, not the CPU),
/// each outcome said as it comes.
async fn run_wave(
    shared: &Arc<Shared>,
    contexts: &[String],
    wave: &str,
    job: &Job,
    parallel: usize,
) -> Vec<MemberResult> {
    let slots = Semaphore::new(parallel.max(1));
    let members = contexts.iter().map(|context| {
        let slots = &slots;
        async move {
            let (outcome, touched) = match slots.acquire().await {
                Ok(_slot) => {
                    let run = run_member(shared, context, wave, job.clone());
                    panicked::caught(shared, context, run).await
                }
                Err(_) => (Outcome::Stopped("no slot".to_owned()), false),
            };
            let step = Progress::new("cluster", None, outcome.text());
            shared.say(context, Happening::MemberEnded(outcome.clone()), step);
            MemberResult {
                context: context.clone(),
                outcome,
                touched,
            }
        }
    });
    futures::future::join_all(members).await
}

/// Does `job` on `context`; the outcome, and whether a run was started
/// there (the member was touched).
async fn run_member(shared: &Shared, context: &str, wave: &str, job: Job) -> (Outcome, bool) {
    let done = match job {
        // Boxed: a run's future is large, and a wave holds one per cluster.
        Job::Advance(settings) => Box::pin(advance::advance(shared, context, wave, settings)).await,
        Job::Rollback(choice, timeout) => {
            Box::pin(rollback::rollback_member(
                shared, context, wave, choice, timeout,
            ))
            .await
        }
    };
    match done {
        Ok(done) => done,
        Err(outcome) => (outcome, false),
    }
}
