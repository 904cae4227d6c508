//! The RBAC pre-check: before offering an action, ask the server
//! (SelfSubjectAccessReview) whether this user may make the writes it needs, so
//! the console can disable the key and say why instead of failing half-way.
//!
//! Owns the action → permission table; the server stays the authority (a write
//! that the check allowed can still get 403, and is reported as such).

use std::collections::BTreeMap;

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use serde::Serialize;

/// An operation the user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// Delete an old pod so the controller recreates it.
    Advance,
    /// Auto-advance (deletes pods, records state).
    Auto,
    /// Pause or resume (patches the DaemonSet).
    Pause,
    /// Roll the template back (patches the DaemonSet, then deletes pods).
    Rollback,
    /// Mark canaries and plan settings (patches the DaemonSet's annotations).
    EditPlan,
}

impl Operation {
    /// Every operation, for checking them all at once.
    pub const ALL: [Self; 5] = [
        Self::Advance,
        Self::Auto,
        Self::Pause,
        Self::Rollback,
        Self::EditPlan,
    ];

    /// The operation in a word, as the keys and messages name it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Advance => "advance",
            Self::Auto => "auto-advance",
            Self::Pause => "pause/resume",
            Self::Rollback => "rollback",
            Self::EditPlan => "plan edits",
        }
    }

    /// The API permissions the operation needs.
    pub fn needs(self) -> &'static [Permission] {
        const DELETE_PODS: Permission = Permission {
            verb: "delete",
            group: "",
            resource: "pods",
        };
        const PATCH_DS: Permission = Permission {
            verb: "patch",
            group: "apps",
            resource: "daemonsets",
        };
        match self {
            Self::Advance => &[DELETE_PODS],
            Self::Auto | Self::Rollback => &[DELETE_PODS, PATCH_DS],
            Self::Pause | Self::EditPlan => &[PATCH_DS],
        }
    }
}

/// One (verb, group, resource) triple in a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Permission {
    /// The verb.
    pub verb: &'static str,
    /// The API group (`""` for core).
    pub group: &'static str,
    /// The resource (plural).
    pub resource: &'static str,
}

impl Permission {
    /// `delete pods` / `patch daemonsets.apps`.
    pub fn describe(&self) -> String {
        if self.group.is_empty() {
            format!("{} {}", self.verb, self.resource)
        } else {
            format!("{} {}.{}", self.verb, self.resource, self.group)
        }
    }
}

/// The answer for one permission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// The server says yes.
    Allowed,
    /// The server says no, with its reason if it gave one.
    Denied(String),
    /// The check itself failed (old server, network); the action stays offered
    /// and the server decides when it is tried.
    Unknown(String),
}

/// The answers for every permission the operations need, in one namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Permissions {
    answers: BTreeMap<Permission, Access>,
    namespace: String,
}

impl Permissions {
    /// Builds the table from answers (the async [`check`] fills it from the server).
    pub fn from_answers(namespace: &str, answers: BTreeMap<Permission, Access>) -> Self {
        Self {
            answers,
            namespace: namespace.to_owned(),
        }
    }

    /// The namespace the answers are for.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// `Ok` when the operation may be offered, else why not (names the missing
    /// permission and the namespace).
    pub fn allows(&self, operation: Operation) -> Result<(), String> {
        for permission in operation.needs() {
            if let Some(Access::Denied(reason)) = self.answers.get(permission) {
                let mut text = format!(
                    "not allowed to {} in namespace {}",
                    permission.describe(),
                    self.namespace
                );
                if !reason.is_empty() {
                    text.push_str(": ");
                    text.push_str(reason);
                }
                return Err(text);
            }
        }
        Ok(())
    }
}

impl Permissions {
    /// What the server denies and which operations that disables, in one
    /// line (`you may not delete pods in namespace kube-system — advance,
    /// auto-advance, rollback disabled`); `None` when nothing is denied.
    pub fn denied_summary(&self) -> Option<String> {
        let denied: Vec<String> = self
            .answers
            .iter()
            .filter(|(_, access)| matches!(access, Access::Denied(_)))
            .map(|(permission, _)| permission.describe())
            .collect();
        if denied.is_empty() {
            return None;
        }
        let disabled: Vec<&str> = Operation::ALL
            .iter()
            .filter(|op| self.allows(**op).is_err())
            .map(|op| op.word())
            .collect();
        Some(format!(
            "you may not {} in namespace {} — {} disabled",
            denied.join(" or "),
            self.namespace,
            disabled.join(", ")
        ))
    }
}

/// Asks the server about every permission the operations need.
pub async fn check(client: &kube::Client, namespace: &str) -> Permissions {
    let mut wanted: Vec<Permission> = Operation::ALL
        .iter()
        .flat_map(|op| op.needs().iter().copied())
        .collect();
    wanted.sort();
    wanted.dedup();
    let mut answers = BTreeMap::new();
    for permission in wanted {
        answers.insert(permission, ask(client, Some(namespace), permission).await);
    }
    Permissions::from_answers(namespace, answers)
}

/// Whether the server says this user may list DaemonSets in every namespace
/// (`false` only when it says no: a review that fails answers `true`, and
/// the list itself will say what it meets).
pub async fn may_list_daemonsets_everywhere(client: &kube::Client) -> bool {
    let list = Permission {
        verb: "list",
        group: "apps",
        resource: "daemonsets",
    };
    !matches!(ask(client, None, list).await, Access::Denied(_))
}

async fn ask(client: &kube::Client, namespace: Option<&str>, permission: Permission) -> Access {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: namespace.map(str::to_owned),
                verb: Some(permission.verb.to_owned()),
                group: Some(permission.group.to_owned()),
                resource: Some(permission.resource.to_owned()),
                ..ResourceAttributes::default()
            }),
            non_resource_attributes: None,
        },
        ..SelfSubjectAccessReview::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    match api.create(&PostParams::default(), &review).await {
        Ok(answer) => match answer.status {
            Some(status) if status.allowed => Access::Allowed,
            Some(status) => Access::Denied(
                status
                    .reason
                    .or(status.evaluation_error)
                    .unwrap_or_default(),
            ),
            None => Access::Unknown("the access review came back without a status".to_owned()),
        },
        Err(err) => Access::Unknown(err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DELETE_PODS: Permission = Permission {
        verb: "delete",
        group: "",
        resource: "pods",
    };
    const PATCH_DS: Permission = Permission {
        verb: "patch",
        group: "apps",
        resource: "daemonsets",
    };

    #[test]
    fn denied_permission_disables_the_operations_that_need_it() {
        let answers = [
            (DELETE_PODS, Access::Denied("no RBAC policy matched".into())),
            (PATCH_DS, Access::Allowed),
        ]
        .into();
        let permissions = Permissions::from_answers("kube-system", answers);
        let cases = [
            (Operation::Advance, false),
            (Operation::Auto, false),
            (Operation::Rollback, false),
            (Operation::Pause, true),
            (Operation::EditPlan, true),
        ];
        for (op, allowed) in cases {
            assert_eq!(permissions.allows(op).is_ok(), allowed, "{op:?}");
        }
        assert_eq!(
            permissions.allows(Operation::Advance).unwrap_err(),
            "not allowed to delete pods in namespace kube-system: no RBAC policy matched"
        );
        assert_eq!(
            permissions.denied_summary().as_deref(),
            Some(
                "you may not delete pods in namespace kube-system — advance, auto-advance, rollback disabled"
            )
        );
    }

    #[test]
    fn unknown_answers_keep_the_operation_offered() {
        let answers = [(DELETE_PODS, Access::Unknown("timeout".into()))].into();
        let permissions = Permissions::from_answers("ns", answers);
        assert!(permissions.allows(Operation::Advance).is_ok());
        assert_eq!(permissions.denied_summary(), None);
        assert_eq!(PATCH_DS.describe(), "patch daemonsets.apps");
    }
}
