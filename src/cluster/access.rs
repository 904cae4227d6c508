//! What this user's rights keep out of the view, in the words the console
//! header, `status` and its JSON use: one limitation per kind the server
//! forbids (403), naming what is missing because of it. Pure; the watch
//! streams and the one-shot lists find out, this only words it.

use super::status::StreamKind;

/// The reason on every row built without its node: the eligibility word is
/// "unknown" (see [`crate::engine::vocabulary::Eligibility::Unknown`]).
pub const NODES_UNREADABLE: &str = "cannot read nodes (forbidden)";

/// What is missing from the view when `kind` is forbidden, in words.
pub fn limitation(kind: StreamKind) -> &'static str {
    match kind {
        StreamKind::Nodes => {
            "cannot list nodes (forbidden) — eligibility unknown, nodes without a pod not shown"
        }
        StreamKind::DaemonSets => "cannot list daemonsets (forbidden) — the daemonset is not shown",
        StreamKind::Pods => "cannot list pods (forbidden) — no pod shown",
        StreamKind::Revisions => {
            "cannot list controllerrevisions (forbidden) — revision numbers unknown"
        }
        StreamKind::PodEvents => "cannot watch pod events (forbidden)",
        StreamKind::NodeEvents => "cannot watch node events (forbidden)",
        StreamKind::NodeUsage => "cannot list pods in all namespaces (forbidden) — fit unknown",
    }
}

/// The limitations for the forbidden `kinds`, in the console's order.
pub fn limitations(kinds: impl IntoIterator<Item = StreamKind>) -> Vec<String> {
    let mut kinds: Vec<StreamKind> = kinds.into_iter().collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .map(|k| limitation(k).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limitations_name_what_is_missing_once_each_in_order() {
        let said = limitations([
            StreamKind::NodeEvents,
            StreamKind::Nodes,
            StreamKind::NodeEvents,
        ]);
        assert_eq!(
            said,
            [
                "cannot list nodes (forbidden) — eligibility unknown, nodes without a pod not shown",
                "cannot watch node events (forbidden)",
            ]
        );
    }
}
