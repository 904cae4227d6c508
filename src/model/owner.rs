//! The slim owner reference of a node, pod or event.

use serde::{Deserialize, Serialize};

use super::{Interned, OwnerReference};

/// One `metadata.ownerReferences` entry, its strings shared: every pod of a
/// DaemonSet names the same owner (kind, name, UID), so a pod holds four
/// thin pointers instead of four strings of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    /// `apiVersion` of the owner (`apps/v1`).
    #[serde(default)]
    pub api_version: Interned,
    /// `kind` of the owner (`DaemonSet`).
    #[serde(default)]
    pub kind: Interned,
    /// The owner's name.
    #[serde(default)]
    pub name: Interned,
    /// The owner's UID.
    #[serde(default)]
    pub uid: Interned,
    /// Whether this owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Whether the owner cannot be deleted before this object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

impl From<OwnerReference> for Owner {
    fn from(owner: OwnerReference) -> Self {
        Owner {
            api_version: owner.api_version.into(),
            kind: owner.kind.into(),
            name: owner.name.into(),
            uid: owner.uid.into(),
            controller: owner.controller,
            block_owner_deletion: owner.block_owner_deletion,
        }
    }
}

/// What the ownership test reads of an owner reference, slim or upstream
/// (ControllerRevisions keep the upstream type).
pub trait OwnerFields {
    /// `kind`.
    fn kind(&self) -> &str;
    /// `name`.
    fn name(&self) -> &str;
    /// `uid`.
    fn uid(&self) -> &str;
    /// `controller: true`.
    fn is_controller(&self) -> bool;
}

impl OwnerFields for Owner {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn uid(&self) -> &str {
        &self.uid
    }
    fn is_controller(&self) -> bool {
        self.controller == Some(true)
    }
}

impl OwnerFields for OwnerReference {
    fn kind(&self) -> &str {
        &self.kind
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn uid(&self) -> &str {
        &self.uid
    }
    fn is_controller(&self) -> bool {
        self.controller == Some(true)
    }
}

/// An object's owner references, one shared list for every object that
/// names the same owners (the pods of a DaemonSet): a pointer in the object
/// instead of the owner held inline (16 bytes where one inline owner took
/// 48, which put a pod's block in the next size class up).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owners(Option<std::sync::Arc<[Owner]>>);

impl Owners {
    /// The shared list equal to `owners`.
    pub fn new(owners: Vec<Owner>) -> Self {
        if owners.is_empty() {
            return Owners(None);
        }
        Owners(Some(super::interned::lock().owners(owners)))
    }
}

impl std::ops::Deref for Owners {
    type Target = [Owner];
    fn deref(&self) -> &[Owner] {
        self.0.as_deref().unwrap_or_default()
    }
}

impl From<Vec<Owner>> for Owners {
    fn from(owners: Vec<Owner>) -> Self {
        Owners::new(owners)
    }
}

impl FromIterator<Owner> for Owners {
    fn from_iter<I: IntoIterator<Item = Owner>>(owners: I) -> Self {
        Owners::new(owners.into_iter().collect())
    }
}

impl Serialize for Owners {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Owners {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Owners::new(Vec::deserialize(deserializer)?))
    }
}
