//! What a journal line records: one closed set of action names, written one
//! way (kebab-case) by every path — the console and the headless commands
//! alike — and read back from lines older versions wrote.
//!
//! Owns the names only; which write carries which action is decided where
//! the write is built (`ops::run`, `ops::pause`, `ops::advance`, …).

use serde::{Deserialize, Serialize};

/// The action of one journal line (and of the write it records).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JournalAction {
    /// A pod deleted by hand (`advance`, the console's `a`/`n`).
    #[default]
    Advance,
    /// A pod deleted by an auto-advance run.
    AutoAdvance,
    /// The template patched back to a revision, or a pod deleted by a rollback run.
    Rollback,
    /// The record of a rollback kept on the DaemonSet (`rollback-to`).
    RollbackState,
    /// A pause by hand.
    Pause,
    /// A pause written by a run that stopped (a failed gate, an interrupt, an error).
    AutoPause,
    /// A resume.
    Resume,
    /// A node marked or unmarked as a canary.
    Canary,
    /// A run started (auto-advance or rollback), or took an expired run over.
    AutoStart,
    /// A run renewed its lease.
    Heartbeat,
    /// A run chose its next batch.
    Batch,
    /// A run ended with every node it could move moved (complete or not).
    AutoDone,
    /// A run was stopped by its operator without a pause (the console's `A`).
    /// Lines written before 0.3 say `auto-stop` (console) or `auto-stopped`.
    #[serde(alias = "auto-stop")]
    AutoStopped,
    /// The second Ctrl-C of a run: the process exits at once.
    Interrupt,
    /// A GitOps owner put back a pause or rollback rollcall had written.
    RevertNoticed,
    /// A fleet run recorded its identity on a member DaemonSet (`fleet auto`).
    FleetRun,
    /// A name this version does not know (a line from a newer rollcall).
    #[serde(other)]
    Unknown,
}

impl JournalAction {
    /// The name as the journal writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Advance => "advance",
            Self::AutoAdvance => "auto-advance",
            Self::Rollback => "rollback",
            Self::RollbackState => "rollback-state",
            Self::Pause => "pause",
            Self::AutoPause => "auto-pause",
            Self::Resume => "resume",
            Self::Canary => "canary",
            Self::AutoStart => "auto-start",
            Self::Heartbeat => "heartbeat",
            Self::Batch => "batch",
            Self::AutoDone => "auto-done",
            Self::AutoStopped => "auto-stopped",
            Self::Interrupt => "interrupt",
            Self::RevertNoticed => "revert-noticed",
            Self::FleetRun => "fleet-run",
            Self::Unknown => "unknown",
        }
    }

    /// Writes that only record what a run is doing: their success is not news.
    pub fn is_bookkeeping(self) -> bool {
        matches!(
            self,
            Self::AutoStart
                | Self::AutoPause
                | Self::AutoDone
                | Self::AutoStopped
                | Self::Batch
                | Self::Heartbeat
                | Self::RollbackState
                | Self::FleetRun
        )
    }

    /// A pod delete that moves a node to another revision.
    pub fn moves_a_node(self) -> bool {
        matches!(self, Self::Advance | Self::AutoAdvance | Self::Rollback)
    }
}

impl std::fmt::Display for JournalAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [JournalAction; 16] = [
        JournalAction::Advance,
        JournalAction::AutoAdvance,
        JournalAction::Rollback,
        JournalAction::RollbackState,
        JournalAction::Pause,
        JournalAction::AutoPause,
        JournalAction::Resume,
        JournalAction::Canary,
        JournalAction::AutoStart,
        JournalAction::Heartbeat,
        JournalAction::Batch,
        JournalAction::AutoDone,
        JournalAction::AutoStopped,
        JournalAction::Interrupt,
        JournalAction::RevertNoticed,
        JournalAction::FleetRun,
    ];

    #[test]
    fn every_action_is_written_as_its_name_and_read_back() {
        for action in ALL {
            let text = serde_json::to_string(&action).unwrap();
            assert_eq!(text, format!("\"{}\"", action.as_str()));
            assert_eq!(
                serde_json::from_str::<JournalAction>(&text).unwrap(),
                action
            );
        }
    }

    #[test]
    fn old_and_unknown_names_still_read() {
        let cases = [
            ("\"auto-stop\"", JournalAction::AutoStopped),
            ("\"auto-stopped\"", JournalAction::AutoStopped),
            ("\"state\"", JournalAction::Unknown),
        ];
        for (text, want) in cases {
            assert_eq!(
                serde_json::from_str::<JournalAction>(text).unwrap(),
                want,
                "{text}"
            );
        }
    }
}
