//! What a fleet run tells its caller as it goes ([`Report`]): one [`Event`]
//! per step — a wave started, passed or baking, a member held, resumed,
//! paused, ended (skipped, vetoed, failed …), a step of a member's own run —
//! each with its line already in words, so the headless command prints it
//! and the console shows it without deciding anything.

use std::time::Duration;

use super::outcome::Outcome;
use crate::ops::drive::Progress;

/// What a step was, for a caller that wants more than its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Happening {
    /// A wave started on its clusters.
    WaveStarted {
        /// The wave.
        wave: String,
    },
    /// A wave passed (every cluster passed, or failed within the budget).
    WavePassed {
        /// The wave.
        wave: String,
    },
    /// A wave did not pass: the run stops before the next.
    WaveStopped {
        /// The wave.
        wave: String,
    },
    /// The bake after a wave began.
    Baking {
        /// The wave just passed.
        wave: String,
        /// How long.
        bake: Duration,
    },
    /// A member is unreachable and its wave holds for it.
    Held,
    /// A pause this plan's own run left on a member was resumed.
    Resumed,
    /// A member this run touched was paused as the run stopped (or could not be).
    Paused,
    /// A member's part ended (passed, failed, skipped, vetoed, stopped …).
    MemberEnded(Outcome),
    /// A step of a member's own run (a delete, a gate, a rollback patch).
    Step,
    /// What a member's live view waits for, or a state write's retry: a
    /// plain line, not a step.
    Notice,
}

/// One thing that happened in a fleet run.
#[derive(Clone, Debug)]
pub struct Event {
    /// The member's context; empty for the fleet's own steps.
    pub context: String,
    /// What it was.
    pub happening: Happening,
    /// Its line (time, event word, node, revisions, message).
    pub step: Progress,
}

impl Event {
    /// A fleet-wide step (no context).
    pub fn fleet(happening: Happening, message: String) -> Self {
        Event {
            context: String::new(),
            happening,
            step: Progress::new("fleet", None, message),
        }
    }

    /// A member's step.
    pub fn member(context: &str, happening: Happening, step: Progress) -> Self {
        Event {
            context: context.to_owned(),
            happening,
            step,
        }
    }
}

/// Receives a fleet run's events, from any of its members at once.
pub trait Report: Send + Sync {
    /// One event, as it happens.
    fn event(&self, event: Event);
}

/// A report that keeps nothing (a caller that only wants the outcome).
pub struct Silent;

impl Report for Silent {
    fn event(&self, _event: Event) {}
}
