//! `rollcall fleet rehearse`: a fleet plan carried out in-process on a
//! simulated clock. The members are embedded clusters loaded from one dump
//! per context ([`snapshots`]), reached by in-process clients
//! ([`connector`]); the run is [`crate::fleet::run::FleetRun`], unchanged.
//! Its events become a timeline ([`timeline`]), the stores say when each
//! new pod was Ready ([`ready`]), and the two make the report ([`report`])
//! and its table ([`table`]); [`progress`] says waves and clusters as they
//! start and end. The command wires them (`cli::fleet_rehearse`).

pub mod connector;
pub mod progress;
pub mod ready;
pub mod report;
pub mod snapshots;
pub mod table;
pub mod timeline;
