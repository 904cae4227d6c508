//! One DaemonSet across many clusters (`rollcall fleet`): the pure parts —
//! a template identity that holds across clusters ([`template`]) and drift
//! from the fleet's reference ([`drift`]). No I/O here.

pub mod drift;
pub mod template;
