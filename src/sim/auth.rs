//! Who may call the embedded API: the bearer-token check (authentication)
//! and the [`Authorizer`] policy value (authorization), used both for requests
//! and for SelfSubjectAccessReview answers. Pure checks, no I/O.

use std::sync::Arc;

/// The user name the simulated cluster reports in Forbidden messages.
pub const SIM_USER: &str = "rollcall-sim-admin";

/// Whether an `Authorization` header value carries `token`.
pub fn bearer_matches(header: Option<&str>, token: &str) -> bool {
    header
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|sent| constant_time_eq(sent.trim().as_bytes(), token.as_bytes()))
}

/// Compares without an early exit, so response time says nothing about the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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

/// One denial: each field matches anything when `None`.
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
        let full_resource = if attributes.subresource.is_empty() {
            attributes.resource.clone()
        } else {
            format!("{}/{}", attributes.resource, attributes.subresource)
        };
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

/// The authorization policy: everything is allowed except what a rule denies.
/// Cheap to clone. Tests build one with [`Authorizer::deny`] to exercise 403s.
#[derive(Clone, Debug, Default)]
pub struct Authorizer {
    denied: Arc<Vec<DenyRule>>,
}

impl Authorizer {
    /// Allows everything.
    pub fn allow_all() -> Authorizer {
        Authorizer::default()
    }

    /// Adds a denial of `verb` on `resource` (`"*"` for any), in `namespace`
    /// (`None` for every namespace and cluster scope).
    #[must_use]
    pub fn deny(self, verb: &str, resource: &str, namespace: Option<&str>) -> Authorizer {
        let mut denied = (*self.denied).clone();
        denied.push(DenyRule {
            verb: Some(verb.to_owned()),
            resource: Some(resource.to_owned()),
            namespace: namespace.map(str::to_owned),
        });
        Authorizer {
            denied: Arc::new(denied),
        }
    }

    /// `Ok` when allowed, otherwise the upstream Forbidden message's reason part.
    pub fn check(&self, attributes: &Attributes) -> Result<(), String> {
        if self.denied.iter().any(|rule| rule.matches(attributes)) {
            return Err(format!("denied by the simulator's policy for {SIM_USER}"));
        }
        Ok(())
    }
}

/// The upstream Forbidden message, e.g. `pods "x" is forbidden: User "u"
/// cannot delete resource "pods" in API group "" in the namespace "default"`.
pub fn forbidden_message(attributes: &Attributes) -> String {
    let resource = if attributes.subresource.is_empty() {
        attributes.resource.clone()
    } else {
        format!("{}/{}", attributes.resource, attributes.subresource)
    };
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
        "{subject} is forbidden: User \"{SIM_USER}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
        attributes.verb, attributes.group
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

    #[test]
    fn deny_rules_match_verb_resource_and_namespace() {
        let policy = Authorizer::allow_all().deny("delete", "pods", Some("prod"));
        assert!(policy.check(&attrs("delete", "pods", "prod", "x")).is_err());
        assert!(policy.check(&attrs("delete", "pods", "dev", "x")).is_ok());
        assert!(policy.check(&attrs("get", "pods", "prod", "x")).is_ok());
        let everything = Authorizer::allow_all().deny("*", "*", None);
        assert!(everything.check(&attrs("list", "nodes", "", "")).is_err());
    }

    #[test]
    fn forbidden_message_matches_upstream_wording() {
        assert_eq!(
            forbidden_message(&attrs("delete", "pods", "default", "x")),
            format!(
                "pods \"x\" is forbidden: User \"{SIM_USER}\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\""
            )
        );
        let mut list = attrs("list", "daemonsets", "", "");
        list.group = "apps".into();
        assert_eq!(
            forbidden_message(&list),
            format!(
                "daemonsets.apps is forbidden: User \"{SIM_USER}\" cannot list resource \"daemonsets\" in API group \"apps\" at the cluster scope"
            )
        );
    }

    #[test]
    fn bearer_token_must_match_exactly() {
        assert!(bearer_matches(Some("Bearer abc"), "abc"));
        assert!(!bearer_matches(Some("Bearer abd"), "abc"));
        assert!(!bearer_matches(Some("abc"), "abc"));
        assert!(!bearer_matches(None, "abc"));
    }
}
