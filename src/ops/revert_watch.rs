//! For the console on one DaemonSet: journal a pause or rollback that a GitOps
//! controller reverted, the moment the DaemonSet shows it (the header shows it
//! from the same decision, [`owner_guard::reverted`]). One watch on that one
//! DaemonSet; each revert is journaled once ([`Executor::note_once`]).
//!
//! Thin async shell: the decision is `owner_guard`'s.

use futures::StreamExt as _;
use kube::api::Api;
use kube::runtime::{WatchStreamExt as _, watcher};

use crate::model::{DaemonSet, Target};
use crate::ops::owner_guard::{revert_record, reverted};
use crate::ops::state::RolloutState;
use crate::ops::write::Executor;

/// Starts the task; it ends with the runtime (or when the stream does).
pub fn spawn(
    client: kube::Client,
    target: &Target,
    executor: Executor,
) -> tokio::task::JoinHandle<()> {
    let api: Api<DaemonSet> = Api::namespaced(client, &target.namespace);
    let config = watcher::Config::default().fields(&format!("metadata.name={}", target.name));
    let key = target.clone();
    tokio::spawn(async move {
        let mut stream = watcher(api, config)
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(item) = stream.next().await {
            let Ok(ds) = item else {
                continue;
            };
            let Ok(state) = RolloutState::from_annotations(ds.metadata.annotations.as_ref()) else {
                continue;
            };
            let Some(revert) = reverted(&ds, &state) else {
                continue;
            };
            if let Err(err) = executor.note_once(&revert_record(&key, &revert)) {
                tracing::warn!(error = %err, "cannot journal a revert");
            }
        }
    })
}
