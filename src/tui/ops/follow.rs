//! A node advanced by hand (`a`, `n`) is followed to its end, as `rollcall
//! advance --wait` follows it: the same batch gate (no soak, the default Ready
//! timeout) judges the replacement on every change and tick, and the status
//! line says how it ended — on the new revision, Ready and available, or why
//! not. The rollout is not paused on a failure (a hand advance never pauses);
//! the line says what failed so the operator decides. Knows nothing of the
//! console: [`follow`] and [`Followed::judge`] take and give plain values.

use crate::ops::advance::{InFlight, Victim};
use crate::ops::auto::{AutoRun, Step};
use crate::ops::snapshot::Snapshot;
use crate::ops::write::{Write, WriteRequest};

/// The nodes this console advanced by hand and has not yet seen end.
#[derive(Debug)]
pub struct Followed {
    run: AutoRun,
    /// The revision they advance to (as the write recorded it).
    revision_to: Option<i64>,
}

/// Follows the node whose old pod a confirmed advance just deleted (nothing
/// when the write deleted no pod on a node).
pub fn follow(followed: &mut Option<Followed>, request: &WriteRequest, now: jiff::Timestamp) {
    let (Write::DeletePod { name, uid, .. }, Some(node)) = (&request.write, &request.record.node)
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
    let followed = followed.get_or_insert_with(|| Followed {
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

impl Followed {
    /// Judges the followed nodes on `snapshot` at `now`: `None` while they are
    /// still on their way, else the end in words — `Ok` once all passed the
    /// gate, `Err` when one failed. Either way following is over.
    pub fn judge(
        &mut self,
        snapshot: &Snapshot<'_>,
        now: jiff::Timestamp,
    ) -> Option<Result<String, String>> {
        let index = snapshot.index();
        let rows = snapshot.rows(&index, now);
        let min_ready = crate::engine::coverage::min_ready_seconds(&snapshot.ds);
        match self
            .run
            .judge_only(&|node| rows.fresh(node), min_ready, now)
        {
            None => {
                let nodes: Vec<&str> = self.run.done().iter().map(String::as_str).collect();
                let revision = self.revision_to.map_or_else(
                    || "the current revision".to_owned(),
                    |r| format!("revision {r}"),
                );
                Some(Ok(format!(
                    "advance: node {} on {revision}, Ready and available",
                    nodes.join(", ")
                )))
            }
            // The point first (what failed and why), the rest after: a
            // status line cuts the end.
            Some(Step::Pause { node, reason }) => Some(Err(format!(
                "advance: node {node} failed: {reason} (rollout not paused)"
            ))),
            Some(_) => None,
        }
    }
}
