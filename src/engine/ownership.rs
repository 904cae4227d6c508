//! Which objects a DaemonSet controls: the controller ownerReference test.
//!
//! Owns only the ownership predicate. It does not adopt or orphan (the upstream
//! `ControllerRefManager` also patches objects; we never write) and does not look at
//! labels: a pod is the DaemonSet's when its controller reference says so.

use crate::model::{DaemonSet, OwnerFields};

/// The kind a DaemonSet controller reference carries.
const DAEMONSET_KIND: &str = "DaemonSet";

/// The controller reference among `owners` (at most one may have `controller: true`;
/// like `metav1.GetControllerOf`, the first one wins if the object breaks that rule).
pub fn controller_of<R: OwnerFields>(owners: Option<&[R]>) -> Option<&R> {
    owners?.iter().find(|r| r.is_controller())
}

/// Whether an object with these owner references is controlled by `ds`: its
/// controller reference names kind DaemonSet, the DaemonSet's name and its
/// UID. The group version is not compared, as upstream's `resolveControllerRef`
/// does not: a pod made under `extensions/v1beta1` (clusters up to 1.8, and
/// dumps of them) still names the same DaemonSet. A DaemonSet without a UID
/// controls nothing.
pub fn owners_controlled_by<R: OwnerFields>(owners: Option<&[R]>, ds: &DaemonSet) -> bool {
    let Some(uid) = ds.metadata.uid.as_deref().filter(|u| !u.is_empty()) else {
        return false;
    };
    let name = ds.metadata.name.as_deref().unwrap_or_default();
    controller_of(owners)
        .is_some_and(|r| r.uid() == uid && r.kind() == DAEMONSET_KIND && r.name() == name)
}

/// Whether `pod` is controlled by `ds` (see [`owners_controlled_by`]).
pub fn is_controlled_by(pod: &crate::model::Pod, ds: &DaemonSet) -> bool {
    owners_controlled_by(Some(&pod.metadata.owner_references), ds)
}

/// Whether `revision` is controlled by `ds` (see [`owners_controlled_by`]).
pub fn revision_controlled_by(revision: &crate::model::ControllerRevision, ds: &DaemonSet) -> bool {
    owners_controlled_by(revision.metadata.owner_references.as_deref(), ds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixtures::{DS_UID, controller_ref, daemonset, pod};
    use crate::model::OwnerReference;

    fn with(edit: impl Fn(&mut OwnerReference)) -> Vec<OwnerReference> {
        let mut r = controller_ref(DS_UID);
        edit(&mut r);
        vec![r]
    }

    #[test]
    fn controller_reference_decides_ownership() {
        let ds = daemonset("agent:1").build();
        let other_owner = OwnerReference {
            controller: Some(false),
            ..controller_ref(DS_UID)
        };
        let cases: Vec<(&str, Vec<OwnerReference>, bool)> = vec![
            ("matching controller ref", with(|_| {}), true),
            (
                "other uid (a recreated DaemonSet of the same name)",
                with(|r| r.uid = "old".into()),
                false,
            ),
            ("wrong kind", with(|r| r.kind = "ReplicaSet".into()), false),
            (
                "older group version (extensions/v1beta1), same DaemonSet",
                with(|r| r.api_version = "extensions/v1beta1".into()),
                true,
            ),
            ("wrong name", with(|r| r.name = "other".into()), false),
            ("owner but not controller", vec![other_owner.clone()], false),
            (
                "controller missing flag",
                with(|r| r.controller = None),
                false,
            ),
            ("no owners", vec![], false),
            (
                "controller after a plain owner",
                vec![other_owner, controller_ref(DS_UID)],
                true,
            ),
        ];
        for (name, owners, expected) in cases {
            let p = pod("p", "n1", "h").owners(owners).build();
            assert_eq!(is_controlled_by(&p, &ds), expected, "{name}");
        }
    }

    #[test]
    fn daemonset_without_uid_controls_nothing() {
        let mut ds = daemonset("agent:1").build();
        ds.metadata.uid = None;
        assert!(!is_controlled_by(&pod("p", "n1", "h").build(), &ds));
    }
}
