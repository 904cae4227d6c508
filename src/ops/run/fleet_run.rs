//! The name a fleet run gives a member's run: written on the member's
//! DaemonSet with the run's start (`rollcall.dev/fleet-run`), and the mark
//! every pause the fleet run leaves begins with, so that a later run of the
//! same plan knows which pauses are its own to resume.

/// The fleet run a member's run is part of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetRunName {
    /// The plan's digest.
    pub digest: String,
    /// The wave the member is in.
    pub wave: String,
}

impl FleetRunName {
    /// The name on the member: `plan DIGEST wave NAME`.
    pub fn identity(&self) -> String {
        format!("plan {} wave {}", self.digest, self.wave)
    }

    /// How every pause reason this fleet run writes begins.
    pub fn mark(&self) -> String {
        mark(&self.digest)
    }
}

/// How every pause reason a run of the plan with `digest` writes begins
/// (`fleet run DIGEST`).
pub fn mark(digest: &str) -> String {
    format!("fleet run {digest}")
}
