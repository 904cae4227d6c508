//! rollcall: a terminal rollout console for Kubernetes DaemonSets.
//!
//! Data flows one way: watch streams ([`cluster`]) fill slim typed state
//! ([`model`]); the pure [`engine`] decides, its per-node results kept up to
//! date in [`rows`]; the [`tui`] builds a view model and draws it; keys become commands that [`ops`] turns into API calls, whose effects
//! come back through the watch. [`sim`] is the embedded cluster that speaks the
//! Kubernetes API on loopback. [`input`] reads files, directories, archives
//! and stdin (snapshots and dumps) into [`model`] values, bounded.
//! [`cli`] holds the headless commands; only
//! `main.rs` and [`cli`] wire the parts together.

// Headless output goes through `cli::out` (sanitised); the console draws
// through ratatui. No stray print may reach the terminal raw.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod audit;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod engine;
pub mod fleet;
pub mod input;
pub mod model;
pub mod ops;
pub mod rows;
pub mod sanitize;
pub mod sim;
pub mod tui;
