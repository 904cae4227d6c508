//! The slim owner reference of a node, pod or event.

use serde::{Deserialize, Serialize};

use super::{Interned, OwnerReference};

/// One `metadata.ownerReferences` entry, its strings shared: every pod of a
/// DaemonSet names the same owner (kind, name, UID), so a pod holds four
/// thin pointers instead of four strings of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
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
