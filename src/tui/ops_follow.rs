//! A node advanced by hand (`a`, `n`) is followed to its end, as `rollcall
//! advance --wait` follows it: the same batch gate (no soak, the default Ready
//! timeout) judges the replacement on every change and tick, and the status
//! line says how it ended — on the new revision, Ready and available, or why
//! not. The rollout is not paused on a failure (a hand advance never pauses);
//! the line says what failed so the operator decides.

use super::app::App;
use super::ops_keys::live_snapshot;
use crate::cluster::cache::Cache;
use crate::ops::advance::{InFlight, Victim};
use crate::ops::auto::{AutoRun, Step};
use crate::ops::write::{Write, WriteRequest};

/// The nodes this console advanced by hand and has not yet seen end.
#[derive(Debug)]
pub struct Followed {
    run: AutoRun,
    /// The revision they advance to (as the write recorded it).
    revision_to: Option<i64>,
}

impl App {
    /// Follows the node whose old pod a confirmed advance just deleted.
    pub(super) fn follow_advance(&mut self, request: &WriteRequest, now: jiff::Timestamp) {
        let (Write::DeletePod { name, uid, .. }, Some(node)) =
            (&request.write, &request.record.node)
        else {
            return;
        };
        let victim = Victim {
            node: node.clone(),
            pod: name.clone(),
            uid: uid.clone(),
            revision_from: request.record.revision_from,
            canary: request.record.note.as_deref() == Some("canary"),
        };
        let followed = self.ops.followed.get_or_insert_with(|| Followed {
            run: AutoRun::new(crate::ops::drive::follow_policy(
                crate::engine::health::READY_TIMEOUT,
            )),
            revision_to: request.record.revision_to,
        });
        followed.run.adopt(vec![InFlight {
            victim,
            started: now,
            new_pod_uid: None,
        }]);
    }

    /// Judges the nodes advanced by hand at `now`; once they pass the gate or
    /// one fails, says so and stops following.
    pub(super) fn judge_advanced(&mut self, cache: &Cache, now: jiff::Timestamp) {
        let Some(followed) = self.ops.followed.as_mut() else {
            return;
        };
        let Ok(snapshot) = live_snapshot(self.ui.target.as_ref(), &self.rows, cache) else {
            return;
        };
        let index = snapshot.index();
        let rows = snapshot.rows(&index, now);
        let min_ready = crate::engine::coverage::min_ready_seconds(&snapshot.ds);
        match followed
            .run
            .judge_only(&|node| rows.fresh(node), min_ready, now)
        {
            None => {
                let nodes: Vec<&str> = followed.run.done().iter().map(String::as_str).collect();
                let revision = followed.revision_to.map_or_else(
                    || "the current revision".to_owned(),
                    |r| format!("revision {r}"),
                );
                self.ui.info(format!(
                    "advance: node {} on {revision}, Ready and available",
                    nodes.join(", ")
                ));
                self.ops.followed = None;
            }
            Some(Step::Pause { node, reason }) => {
                self.ui.error(format!(
                    "advance: node {node} failed, rollout not paused: {reason}"
                ));
                self.ops.followed = None;
            }
            Some(_) => {}
        }
    }
}
