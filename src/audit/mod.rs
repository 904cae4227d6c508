//! Coverage audit of a DaemonSet against an independently kept node roster.
//!
//! A DaemonSet's status only counts the nodes its own selector chose, so a wrong
//! selector or a new tainted pool shrinks "desired" and hides the gap. The audit
//! compares the DaemonSet's owned pods with a roster kept apart from it
//! ([`roster`]) and reports each kind of gap as a sorted list ([`report`]).
//! Everything here except [`live`] is pure: the console calls [`compare`] on its
//! stores; the CLI (`rollcall audit`) feeds it from a cluster or a snapshot.
//! Must not decide eligibility itself: that is the engine's.

pub mod compare;
pub mod events;
pub mod explain;
pub mod incremental;
pub mod live;
pub mod owned;
pub mod report;
pub mod roster;
pub mod table;

pub use compare::{InputError, compare};
pub use events::annotate_with_events;
pub use owned::{OwnedPod, is_owned_by};
pub use report::{AuditReport, Explanation, Issues, MissingCause, NodeAuditStatus};
pub use roster::{Roster, RosterError, RosterProblem};
