//! What a fleet run is given besides its plan: which way it goes ([`Kind`]),
//! how it treats an unreachable cluster, where it journals, whether it is a
//! dry run ([`FleetSettings`]); and the settings each wave's clusters run
//! with ([`wave_settings`]).

use std::time::Duration;

use crate::fleet::waves::budget::Ledger;
use crate::fleet::waves::file::Wave;
use crate::ops::auto::AutoPolicy;
use crate::ops::journal::Journal;
use crate::ops::run::settings::RunSettings;

/// What the run does in each member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Waves first to last; in each cluster the run `rollcall auto` makes.
    Advance,
    /// Waves last to first; in each cluster the rollback `rollcall rollback` makes.
    Rollback(RollbackChoice),
}

/// What a fleet rollback is asked for, the same in every cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RollbackChoice {
    /// The revision to go back to (default: each cluster's previous one).
    pub to_revision: Option<i64>,
    /// Move cordoned nodes back too (as `rollcall rollback --include-cordoned`).
    pub include_cordoned: bool,
    /// Move nodes back the old revision will not fit (as `--despite-fit`).
    pub despite_fit: bool,
}

impl Kind {
    /// `roll out` or `roll back`, in messages.
    pub fn verb(self) -> &'static str {
        match self {
            Kind::Advance => "roll out",
            Kind::Rollback(_) => "roll back",
        }
    }
}

/// How a fleet run is carried out.
#[derive(Clone, Debug)]
pub struct FleetSettings {
    /// `-n`: the namespace of a DaemonSet named without one (else each context's).
    pub namespace: Option<String>,
    /// Where every member's writes are journalled (with their context).
    pub journal: Journal,
    /// Show what would be done; send nothing (every line says `would`).
    pub dry_run: bool,
    /// Skip an unreachable cluster instead of holding its wave.
    pub skip_unreachable: bool,
    /// How long a member's first view of its DaemonSet may take.
    pub patience: Duration,
    /// Who is named as having paused a member when the run stops.
    pub by: String,
}

/// The settings a wave's cluster runs with (its batch cut to what the
/// budget lets be at risk at once).
pub fn wave_settings(wave: &Wave, ledger: &Ledger) -> RunSettings {
    RunSettings {
        canary_selector: wave.canary.clone(),
        ..RunSettings::auto(AutoPolicy {
            batch: ledger.batch_within(wave.batch),
            soak: wave.soak.0,
            timeout: wave.timeout.0,
        })
    }
}
