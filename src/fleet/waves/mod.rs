//! Rolling one DaemonSet out across a fleet in waves (`rollcall fleet
//! plan|auto|rollback -f fleet.yaml`): the pure parts — the plan file and its
//! validation ([`file`]), which contexts each wave takes ([`assign`]), the
//! fleet's failure budget shared by clusters rolling at once ([`budget`]) and
//! the wall-time estimate ([`estimate`]). No I/O here: the `fleet
//! plan` and `fleet auto` commands read each cluster through the same
//! loader as `fleet status` and run each cluster with `ops::run`/`ops::drive`
//! exactly as `rollcall auto` does.

pub mod assign;
pub mod budget;
pub mod estimate;
pub mod file;
pub mod glob;
pub mod node_class;

/// The annotation on a member DaemonSet that makes a fleet plan skip that
/// cluster, its value saying why (a cluster-side veto).
pub const VETO_ANNOTATION: &str = "rollcall.dev/fleet-veto";
