//! Who may call the embedded API and what they may do: the users the
//! simulator knows ([`Identity`]), the RBAC-like [`Authorizer`] policy (rules
//! granting verbs on resources to users and groups, plus denials tests add),
//! and the upstream Forbidden wording. Used for requests, impersonation and
//! both access reviews. Pure checks, no I/O; authentication lives in
//! `sim::authn`.

use std::sync::Arc;

/// The user behind the admin bearer token.
pub const SIM_USER: &str = "rollcall-sim-admin";
/// The user of the client certificate (its CN).
pub const CERT_USER: &str = "rollcall-sim-cert";
/// The user of the exec credential plugin's tokens.
pub const EXEC_USER: &str = "rollcall-sim-exec";
/// The namespace-scoped read-only user.
pub const VIEWER_USER: &str = "rollcall-sim-viewer";
/// The group with every right (as on a real cluster).
pub const MASTERS_GROUP: &str = "system:masters";
/// The group of operators: every right on every resource, no impersonation.
pub const OPERATORS_GROUP: &str = "rollcall:operators";
/// The group of the read-only viewers.
pub const VIEWERS_GROUP: &str = "rollcall:viewers";
/// Every authenticated user is in this group.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// An authenticated user: name and groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The user name.
    pub user: String,
    /// The groups (without `system:authenticated`, which every user has).
    pub groups: Vec<String>,
}

impl Identity {
    /// A user in some groups.
    pub fn new(user: &str, groups: &[&str]) -> Identity {
        Identity {
            user: user.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        }
    }

    /// The admin (the bearer token's user).
    pub fn admin() -> Identity {
        Identity::new(SIM_USER, &[MASTERS_GROUP])
    }

    fn in_group(&self, group: &str) -> bool {
        group == AUTHENTICATED_GROUP || self.groups.iter().any(|g| g == group)
    }
}

/// What a request (or an access review) asks to do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, …
    pub verb: String,
    /// The API group (`""` core, `apps`).
    pub group: String,
    /// The resource (`pods`).
    pub resource: String,
    /// The subresource (`status`), or empty.
    pub subresource: String,
    /// The namespace, or empty for cluster scope.
    pub namespace: String,
    /// The object name, or empty for collections.
    pub name: String,
}

impl Attributes {
    fn full_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

/// One grant, as an RBAC (Cluster)Role bound to users and groups. An empty
/// `namespaces` grants in every namespace and at the cluster scope.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    /// Users the rule applies to.
    pub users: Vec<String>,
    /// Groups the rule applies to.
    pub groups: Vec<String>,
    /// Verbs granted (`*` for all).
    pub verbs: Vec<String>,
    /// API groups (`""` core, `*` all).
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/status`, `*`).
    pub resources: Vec<String>,
    /// Namespaces; empty for all and cluster scope.
    pub namespaces: Vec<String>,
}

fn owned(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn listed(items: &[String], value: &str) -> bool {
    items.iter().any(|i| i == "*" || i == value)
}

impl Rule {
    /// A rule for `groups` granting `verbs` on `resources` of `api_groups` in `namespaces`.
    pub fn for_groups(
        groups: &[&str],
        verbs: &[&str],
        api_groups: &[&str],
        resources: &[&str],
        namespaces: &[&str],
    ) -> Rule {
        Rule {
            users: Vec::new(),
            groups: owned(groups),
            verbs: owned(verbs),
            api_groups: owned(api_groups),
            resources: owned(resources),
            namespaces: owned(namespaces),
        }
    }

    /// Whether the rule applies to this identity.
    pub fn applies_to(&self, who: &Identity) -> bool {
        self.users.contains(&who.user) || self.groups.iter().any(|g| who.in_group(g))
    }

    fn grants(&self, attributes: &Attributes) -> bool {
        let resource_ok = listed(&self.resources, &attributes.full_resource())
            || (attributes.subresource.is_empty() && listed(&self.resources, &attributes.resource));
        listed(&self.verbs, &attributes.verb)
            && listed(&self.api_groups, &attributes.group)
            && resource_ok
            && (self.namespaces.is_empty()
                || (!attributes.namespace.is_empty()
                    && listed(&self.namespaces, &attributes.namespace)))
    }

    /// Whether the rule covers `namespace` (for the rules review).
    pub fn covers_namespace(&self, namespace: &str) -> bool {
        self.namespaces.is_empty() || listed(&self.namespaces, namespace)
    }
}

/// One denial for every user: each field matches anything when `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DenyRule {
    /// The verb denied.
    pub verb: Option<String>,
    /// The resource denied (`pods`, or `pods/status` for a subresource).
    pub resource: Option<String>,
    /// The namespace denied.
    pub namespace: Option<String>,
}

impl DenyRule {
    fn matches(&self, attributes: &Attributes) -> bool {
        let full_resource = attributes.full_resource();
        self.verb
            .as_deref()
            .is_none_or(|v| v == "*" || v == attributes.verb)
            && self
                .resource
                .as_deref()
                .is_none_or(|r| r == "*" || r == full_resource || r == attributes.resource)
            && self
                .namespace
                .as_deref()
                .is_none_or(|n| n == attributes.namespace)
    }
}

/// The authorization policy: grants by rule, minus denials. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Authorizer {
    rules: Arc<Vec<Rule>>,
    denied: Arc<Vec<DenyRule>>,
}

impl Default for Authorizer {
    fn default() -> Authorizer {
        Authorizer::allow_all()
    }
}

impl Authorizer {
    /// The standard policy: `system:masters` may do anything (impersonation
    /// included), `rollcall:operators` anything but impersonate, and
    /// `rollcall:viewers` read pods, DaemonSets, ControllerRevisions and
    /// events in `kube-system` (see [`Authorizer::with_viewer_namespace`]).
    pub fn allow_all() -> Authorizer {
        Authorizer::from_rules(standard_rules("kube-system"))
    }

    /// A policy from explicit rules (nothing else is allowed).
    pub fn from_rules(rules: Vec<Rule>) -> Authorizer {
        Authorizer {
            rules: Arc::new(rules),
            denied: Arc::new(Vec::new()),
        }
    }

    /// The standard policy with the viewers' namespace set to `namespace`.
    #[must_use]
    pub fn with_viewer_namespace(self, namespace: &str) -> Authorizer {
        Authorizer {
            rules: Arc::new(standard_rules(namespace)),
            denied: self.denied,
        }
    }

    /// Adds a denial of `verb` on `resource` (`"*"` for any), in `namespace`
    /// (`None` for every namespace and cluster scope), for every user.
    #[must_use]
    pub fn deny(self, verb: &str, resource: &str, namespace: Option<&str>) -> Authorizer {
        let mut denied = (*self.denied).clone();
        denied.push(DenyRule {
            verb: Some(verb.to_owned()),
            resource: Some(resource.to_owned()),
            namespace: namespace.map(str::to_owned),
        });
        Authorizer {
            rules: self.rules,
            denied: Arc::new(denied),
        }
    }

    /// `Ok` when `who` may, otherwise the reason a review reports (empty when
    /// simply no rule grants it, as upstream RBAC answers).
    pub fn check(&self, who: &Identity, attributes: &Attributes) -> Result<(), String> {
        if self.denied.iter().any(|rule| rule.matches(attributes)) {
            return Err(format!("denied by the simulator's policy for {}", who.user));
        }
        if self
            .rules
            .iter()
            .any(|rule| rule.applies_to(who) && rule.grants(attributes))
        {
            return Ok(());
        }
        Err(String::new())
    }

    /// The rules that apply to `who` in `namespace` (SelfSubjectRulesReview).
    pub fn rules_for(&self, who: &Identity, namespace: &str) -> Vec<Rule> {
        self.rules
            .iter()
            .filter(|rule| rule.applies_to(who) && rule.covers_namespace(namespace))
            .cloned()
            .collect()
    }
}

fn standard_rules(viewer_namespace: &str) -> Vec<Rule> {
    vec![
        Rule::for_groups(&[MASTERS_GROUP], &["*"], &["*"], &["*"], &[]),
        Rule::for_groups(
            &[OPERATORS_GROUP],
            &[
                "get",
                "list",
                "watch",
                "create",
                "update",
                "patch",
                "delete",
                "deletecollection",
            ],
            &["*"],
            &["*"],
            &[],
        ),
        Rule::for_groups(
            &[VIEWERS_GROUP],
            &["get", "list", "watch"],
            &[""],
            &["pods", "events"],
            &[viewer_namespace],
        ),
        Rule::for_groups(
            &[VIEWERS_GROUP],
            &["get", "list", "watch"],
            &["apps"],
            &["daemonsets", "controllerrevisions"],
            &[viewer_namespace],
        ),
        Rule::for_groups(
            &[VIEWERS_GROUP],
            &["get", "list", "watch"],
            &["events.k8s.io"],
            &["events"],
            &[viewer_namespace],
        ),
        // Every user may ask what it may do, as upstream's basic-user role.
        Rule::for_groups(
            &[AUTHENTICATED_GROUP],
            &["create"],
            &["authorization.k8s.io"],
            &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
            &[],
        ),
    ]
}

/// The upstream Forbidden message, e.g. `pods "x" is forbidden: User "u"
/// cannot delete resource "pods" in API group "" in the namespace "default"`.
pub fn forbidden_message(who: &Identity, attributes: &Attributes) -> String {
    let resource = attributes.full_resource();
    let qualified = if attributes.group.is_empty() {
        attributes.resource.clone()
    } else {
        format!("{}.{}", attributes.resource, attributes.group)
    };
    let subject = if attributes.name.is_empty() {
        qualified
    } else {
        format!("{qualified} \"{}\"", attributes.name)
    };
    let scope = if attributes.namespace.is_empty() {
        "at the cluster scope".to_owned()
    } else {
        format!("in the namespace \"{}\"", attributes.namespace)
    };
    format!(
        "{subject} is forbidden: User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
        who.user, attributes.verb, attributes.group
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(verb: &str, resource: &str, namespace: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    fn viewer() -> Identity {
        Identity::new(VIEWER_USER, &[VIEWERS_GROUP])
    }

    #[test]
    fn deny_rules_match_verb_resource_and_namespace() {
        let admin = Identity::admin();
        let policy = Authorizer::allow_all().deny("delete", "pods", Some("prod"));
        assert!(
            policy
                .check(&admin, &attrs("delete", "pods", "prod", "x"))
                .is_err()
        );
        assert!(
            policy
                .check(&admin, &attrs("delete", "pods", "dev", "x"))
                .is_ok()
        );
        assert!(
            policy
                .check(&admin, &attrs("get", "pods", "prod", "x"))
                .is_ok()
        );
        let everything = Authorizer::allow_all().deny("*", "*", None);
        assert!(
            everything
                .check(&admin, &attrs("list", "nodes", "", ""))
                .is_err()
        );
    }

    #[test]
    fn viewer_reads_its_namespace_only() {
        let policy = Authorizer::allow_all().with_viewer_namespace("kube-system");
        let who = viewer();
        assert!(
            policy
                .check(&who, &attrs("list", "pods", "kube-system", ""))
                .is_ok()
        );
        assert!(
            policy
                .check(&who, &attrs("watch", "events", "kube-system", ""))
                .is_ok()
        );
        let mut ds = attrs("get", "daemonsets", "kube-system", "agent");
        ds.group = "apps".into();
        assert!(policy.check(&who, &ds).is_ok());
        ds.verb = "patch".into();
        assert!(policy.check(&who, &ds).is_err());
        assert!(
            policy
                .check(&who, &attrs("list", "pods", "default", ""))
                .is_err()
        );
        assert!(policy.check(&who, &attrs("list", "pods", "", "")).is_err());
        assert!(policy.check(&who, &attrs("list", "nodes", "", "")).is_err());
        assert!(
            policy
                .check(&who, &attrs("delete", "pods", "kube-system", "x"))
                .is_err()
        );
        let mut status = attrs("get", "pods", "kube-system", "x");
        status.subresource = "status".into();
        assert!(policy.check(&who, &status).is_err());
    }

    #[test]
    fn operators_cannot_impersonate_but_masters_can() {
        let policy = Authorizer::allow_all();
        let impersonate = attrs("impersonate", "users", "", "bob");
        assert!(policy.check(&Identity::admin(), &impersonate).is_ok());
        let operator = Identity::new(CERT_USER, &[OPERATORS_GROUP]);
        assert!(policy.check(&operator, &impersonate).is_err());
        assert!(
            policy
                .check(&operator, &attrs("delete", "pods", "x", "y"))
                .is_ok()
        );
        let stranger = Identity::new("stranger", &[]);
        assert!(
            policy
                .check(&stranger, &attrs("get", "pods", "x", "y"))
                .is_err()
        );
        assert_eq!(policy.rules_for(&stranger, "x").len(), 1);
    }

    #[test]
    fn forbidden_message_matches_upstream_wording() {
        assert_eq!(
            forbidden_message(&viewer(), &attrs("delete", "pods", "default", "x")),
            format!(
                "pods \"x\" is forbidden: User \"{VIEWER_USER}\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\""
            )
        );
        let mut list = attrs("list", "daemonsets", "", "");
        list.group = "apps".into();
        assert_eq!(
            forbidden_message(&Identity::admin(), &list),
            format!(
                "daemonsets.apps is forbidden: User \"{SIM_USER}\" cannot list resource \"daemonsets\" in API group \"apps\" at the cluster scope"
            )
        );
    }
}
