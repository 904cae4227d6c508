//! `rollcall fleet rehearse`: a fleet plan carried out in-process on a
//! simulated clock, against embedded clusters loaded from one dump per
//! context.

pub mod snapshots;
pub mod ready;
