//! One DaemonSet across many clusters (`rollcall fleet`): the pure parts —
//! which contexts make the fleet ([`contexts`]), a cluster's connection in
//! one word ([`connection`]), a template identity that holds across clusters
//! ([`template`]), drift from the fleet's reference ([`drift`]), `--where` questions about
//! nodes ([`query`]), preflight findings ([`preflight`]) and the fleet report ([`report`]) with its table ([`table`]). No I/O here: the `fleet`
//! command connects and reads each cluster through the same
//! code as `rollcall status`. The live matrix ([`live`]) observes each
//! cluster's watch cache with that same code. A fleet run ([`run`]: `fleet
//! auto`, `fleet rollback`, the matrix's `A`) has its one home here, and
//! reaches clusters only through the connector it is given.

pub mod connection;
pub mod contexts;
pub mod drift;
pub mod live;
pub mod preflight;
pub mod query;
pub mod rehearse;
pub mod report;
pub mod run;
pub mod table;
pub mod template;
pub mod waves;
