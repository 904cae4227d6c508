//! The terminal console: app state, key handling, view model and widgets.
//! Never imports `sim`; never blocks on I/O: it reads the cluster cache and
//! turns keys into actions; the event loop runs the effects.

pub mod access;
pub mod app;
mod auto_form;
pub mod columns;
pub mod confirm;
pub mod effect;
pub mod fit;
pub mod fleet;
pub mod index;
mod index_update;
pub mod keymap;
pub mod logs;
pub mod logs_link;
pub mod logs_request;
pub mod ops;
pub mod ops_link;
pub mod roster;
pub mod run;
pub use crate::sanitize;
pub mod state;
pub mod terminal;
pub mod view_model;
pub mod widgets;

#[cfg(test)]
mod access_tests;
#[cfg(test)]
mod app_tests;
#[cfg(test)]
mod bench;
#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod glance_tests;
#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod logs_tests;
#[cfg(test)]
mod ops_fit_tests;
#[cfg(test)]
mod ops_live_tests;
#[cfg(test)]
mod ops_tests;
#[cfg(test)]
mod owner_tests;
#[cfg(test)]
mod roster_tests;
#[cfg(test)]
mod rows_tests;
#[cfg(test)]
mod run_equivalence_tests;
#[cfg(test)]
mod tests;
