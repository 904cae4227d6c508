//! The kinds a store serves: the typed and built-in inert kinds every
//! cluster has, plus the custom resource kinds its CustomResourceDefinitions
//! register. A CRD registers its kind when it is stored (create or update,
//! in the same commit, so a client that saw the CRD can use the kind) and
//! unregisters it when removed, after its custom resources went (see
//! `delete.rs`). The descriptors themselves come from `resources`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::history::EventType;
use super::object::StoredObject;
use super::{State, Store};
use crate::sim::resources::{InertKind, ResourceKind, crd};

/// Custom resource kinds by the name of the CRD that registered them.
#[derive(Debug, Default)]
pub(super) struct CustomKinds(BTreeMap<String, InertKind>);

impl CustomKinds {
    /// Follows a committed change to a CRD.
    pub(super) fn follow(&mut self, event_type: EventType, crd_object: &StoredObject) {
        let name = crd_object.key.name.clone();
        if event_type == EventType::Deleted {
            self.0.remove(&name);
            return;
        }
        // Stored CRDs passed validation, so they register.
        if let Ok(kind) = crd::register(&crd_object.value()) {
            self.0.insert(name, kind);
        }
    }

    /// The kind a CRD registered.
    pub(super) fn of_crd(&self, crd_name: &str) -> Option<InertKind> {
        self.0.get(crd_name).copied()
    }

    fn kinds(&self) -> impl Iterator<Item = ResourceKind> + '_ {
        self.0.values().copied().map(ResourceKind::Inert)
    }
}

impl Store {
    /// Every kind this store serves, in discovery order: typed, built-in,
    /// then custom (by CRD name).
    pub fn served_kinds(&self) -> Vec<ResourceKind> {
        let state = self.read();
        ResourceKind::built_in()
            .chain(state.custom.kinds())
            .collect()
    }

    /// The kind served at `group`/`version` under the resource name `plural`.
    pub fn resolve(&self, group: &str, version: &str, plural: &str) -> Option<ResourceKind> {
        if let Some(kind) = ResourceKind::from_group_plural(group, plural) {
            return kind.serves(version).then_some(kind);
        }
        let state = self.read();
        state
            .custom
            .kinds()
            .find(|k| k.group() == group && k.plural() == plural)
            .filter(|k| k.serves(version))
    }
}

impl State {
    /// The custom kind a stored CRD registered, if `kind` is CRD.
    pub(super) fn custom_kind_of(&self, kind: ResourceKind, name: &str) -> Option<ResourceKind> {
        kind.is_crd()
            .then(|| self.custom.of_crd(name))
            .flatten()
            .map(ResourceKind::Inert)
    }

    /// Whether `obj` of `kind` may be created: a custom resource whose CRD is
    /// being deleted may not (upstream: `create not allowed while custom
    /// resource definition is terminating`).
    pub(super) fn terminating_crd(&self, kind: ResourceKind) -> Option<String> {
        let ResourceKind::Inert(inert) = kind else {
            return None;
        };
        let (name, _) = self.custom.0.iter().find(|(_, k)| **k == inert)?;
        let crd_object = self
            .objects(ResourceKind::crd())
            .get(&super::ObjectKey::new("", name))?;
        let value: Value = crd_object.value();
        value["metadata"]["deletionTimestamp"]
            .is_string()
            .then(|| name.clone())
    }
}

#[cfg(test)]
#[path = "custom_tests.rs"]
mod tests;
