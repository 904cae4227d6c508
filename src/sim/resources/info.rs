//! What an inert kind is: [`KindInfo`], the descriptor discovery, routing,
//! storage and tables read for a kind the embedded cluster stores and serves
//! but never acts on, and [`BUILT_IN`], the table of the built-in ones a
//! manifest or chart carries (ServiceAccount, ConfigMap, RBAC, Service,
//! Deployment, webhooks, CustomResourceDefinition, …). Custom resources get
//! theirs from their CRD (`crd.rs`). Descriptors are interned process-wide
//! (one shared copy per distinct descriptor, never freed: there are as many
//! as distinct CRD definitions a process sees), so a kind stays a `Copy`
//! handle; which of them a cluster serves is the store's business.

use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{LazyLock, Mutex, PoisonError};

/// Everything that defines a kind to clients: names, group, served
/// versions, scope, discovery extras.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KindInfo {
    /// The API group (`""` for core).
    pub group: String,
    /// The served versions, the preferred (storage) one first.
    pub versions: Vec<String>,
    /// The object `kind` (`ConfigMap`).
    pub kind: String,
    /// The URL resource name (`configmaps`).
    pub plural: String,
    /// The singular resource name (`configmap`).
    pub singular: String,
    /// The list kind (`ConfigMapList`).
    pub list_kind: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether the kind has a `/status` subresource.
    pub has_status: bool,
    /// kubectl short names.
    pub short_names: Vec<String>,
    /// Discovery categories (`all`).
    pub categories: Vec<String>,
    /// `group/version` of the preferred version (`v1` for core).
    pub api_version: String,
}

impl KindInfo {
    /// A descriptor; the singular and list kind follow the upstream defaults.
    pub fn new(group: &str, versions: &[&str], kind: &str, plural: &str, namespaced: bool) -> Self {
        let preferred = versions.first().copied().unwrap_or("v1");
        KindInfo {
            group: group.to_owned(),
            versions: versions.iter().map(|v| (*v).to_owned()).collect(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: kind.to_ascii_lowercase(),
            list_kind: format!("{kind}List"),
            namespaced,
            has_status: false,
            short_names: Vec::new(),
            categories: Vec::new(),
            api_version: if group.is_empty() {
                preferred.to_owned()
            } else {
                format!("{group}/{preferred}")
            },
        }
    }

    /// The preferred version.
    pub fn version(&self) -> &str {
        self.versions.first().map_or("v1", String::as_str)
    }

    /// Whether `version` is served.
    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }

    /// `apiVersion` values objects of this kind may carry (one per served version).
    pub fn accepts_api_version(&self, api_version: &str) -> bool {
        match api_version.split_once('/') {
            None => self.group.is_empty() && self.serves(api_version),
            Some((group, version)) => group == self.group && self.serves(version),
        }
    }

    /// The shared copy of this descriptor.
    pub fn intern(self) -> InertKind {
        let mut interned = INTERNED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = interned.get(&self) {
            return InertKind(existing);
        }
        let leaked: &'static KindInfo = Box::leak(Box::new(self));
        interned.insert(leaked);
        InertKind(leaked)
    }

    fn with(mut self, short_names: &[&str], categories: &[&str], has_status: bool) -> Self {
        self.short_names = short_names.iter().map(|s| (*s).to_owned()).collect();
        self.categories = categories.iter().map(|s| (*s).to_owned()).collect();
        self.has_status = has_status;
        self
    }
}

static INTERNED: LazyLock<Mutex<HashSet<&'static KindInfo>>> =
    LazyLock::new(|| Mutex::new(HashSet::new()));

/// A kind the sim stores and serves without acting on it: a `Copy` handle
/// to an interned [`KindInfo`]. Two handles are the same kind when they name
/// the same group and resource, whatever else their descriptors say (a CRD
/// updated with a new short name still holds the same objects).
#[derive(Clone, Copy)]
pub struct InertKind(&'static KindInfo);

impl InertKind {
    /// The descriptor.
    pub fn info(self) -> &'static KindInfo {
        self.0
    }

    fn identity(self) -> (&'static str, &'static str) {
        (&self.0.group, &self.0.plural)
    }
}

impl PartialEq for InertKind {
    fn eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for InertKind {}

impl Hash for InertKind {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.identity().hash(state);
    }
}

impl PartialOrd for InertKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for InertKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.identity().cmp(&other.identity())
    }
}

impl fmt::Debug for InertKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.0.api_version, self.0.kind)
    }
}

/// The group of [`CustomResourceDefinition`](crd_kind).
pub const APIEXTENSIONS: &str = "apiextensions.k8s.io";

/// The built-in kinds the sim stores but does not act on, in discovery
/// order, as the upstream API server (1.32) names and scopes them.
pub static BUILT_IN: LazyLock<Vec<InertKind>> = LazyLock::new(|| {
    let v1 = ["v1"];
    let core = |kind, plural| KindInfo::new("", &v1, kind, plural, true);
    let apps = |kind, plural| KindInfo::new("apps", &v1, kind, plural, true);
    let rbac = |kind, plural, namespaced| {
        KindInfo::new("rbac.authorization.k8s.io", &v1, kind, plural, namespaced)
    };
    let webhooks =
        |kind, plural| KindInfo::new("admissionregistration.k8s.io", &v1, kind, plural, false);
    [
        core("ServiceAccount", "serviceaccounts").with(&["sa"], &[], false),
        core("ConfigMap", "configmaps").with(&["cm"], &[], false),
        core("Secret", "secrets"),
        core("Service", "services").with(&["svc"], &["all"], true),
        core("Endpoints", "endpoints").with(&["ep"], &[], false),
        core("PersistentVolumeClaim", "persistentvolumeclaims").with(&["pvc"], &[], true),
        core("ResourceQuota", "resourcequotas").with(&["quota"], &[], true),
        core("LimitRange", "limitranges").with(&["limits"], &[], false),
        apps("Deployment", "deployments").with(&["deploy"], &["all"], true),
        apps("ReplicaSet", "replicasets").with(&["rs"], &["all"], true),
        apps("StatefulSet", "statefulsets").with(&["sts"], &["all"], true),
        KindInfo::new("batch", &v1, "Job", "jobs", true).with(&[], &["all"], true),
        KindInfo::new("batch", &v1, "CronJob", "cronjobs", true).with(&["cj"], &["all"], true),
        KindInfo::new(
            "policy",
            &v1,
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
        )
        .with(&["pdb"], &[], true),
        rbac("ClusterRole", "clusterroles", false),
        rbac("ClusterRoleBinding", "clusterrolebindings", false),
        rbac("Role", "roles", true),
        rbac("RoleBinding", "rolebindings", true),
        KindInfo::new(
            "networking.k8s.io",
            &v1,
            "NetworkPolicy",
            "networkpolicies",
            true,
        )
        .with(&["netpol"], &[], false),
        KindInfo::new("networking.k8s.io", &v1, "Ingress", "ingresses", true).with(
            &["ing"],
            &[],
            true,
        ),
        KindInfo::new("coordination.k8s.io", &v1, "Lease", "leases", true),
        webhooks(
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
        ),
        webhooks(
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
        ),
        KindInfo::new(
            APIEXTENSIONS,
            &v1,
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        )
        .with(&["crd", "crds"], &["api-extensions"], true),
    ]
    .into_iter()
    .map(KindInfo::intern)
    .collect()
});

/// The `CustomResourceDefinition` kind.
pub fn crd_kind() -> InertKind {
    *BUILT_IN
        .iter()
        .find(|k| k.info().group == APIEXTENSIONS)
        .unwrap_or(&BUILT_IN[0])
}

/// The built-in inert kind named by group and resource.
pub fn built_in(group: &str, plural: &str) -> Option<InertKind> {
    BUILT_IN
        .iter()
        .copied()
        .find(|k| k.info().group == group && k.info().plural == plural)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_shares_one_copy_and_identity_is_group_and_resource() {
        let a = KindInfo::new("example.com", &["v1"], "Widget", "widgets", true).intern();
        let b = KindInfo::new("example.com", &["v1"], "Widget", "widgets", true).intern();
        assert!(std::ptr::eq(a.info(), b.info()));
        let renamed = KindInfo::new("example.com", &["v1"], "Widget", "widgets", true)
            .with(&["wd"], &[], false)
            .intern();
        assert!(!std::ptr::eq(a.info(), renamed.info()));
        assert_eq!(a, renamed, "same group and resource: the same objects");
        let other = KindInfo::new("example.org", &["v1"], "Widget", "widgets", true).intern();
        assert_ne!(a, other);
    }

    #[test]
    fn built_ins_carry_upstream_groups_scopes_and_names() {
        let cases = [
            ("", "serviceaccounts", "v1", "ServiceAccount", true),
            ("", "services", "v1", "Service", true),
            (
                "rbac.authorization.k8s.io",
                "clusterrolebindings",
                "rbac.authorization.k8s.io/v1",
                "ClusterRoleBinding",
                false,
            ),
            (
                "policy",
                "poddisruptionbudgets",
                "policy/v1",
                "PodDisruptionBudget",
                true,
            ),
            (
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                false,
            ),
            (
                APIEXTENSIONS,
                "customresourcedefinitions",
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                false,
            ),
        ];
        for (group, plural, api_version, kind, namespaced) in cases {
            let info = built_in(group, plural).expect(plural).info();
            assert_eq!(info.api_version, api_version, "{plural}");
            assert_eq!(info.kind, kind, "{plural}");
            assert_eq!(info.namespaced, namespaced, "{plural}");
            assert!(info.accepts_api_version(api_version), "{plural}");
        }
        assert_eq!(crd_kind().info().short_names, ["crd", "crds"]);
        assert!(built_in("", "daemonsets").is_none());
        let svc = built_in("", "services").unwrap().info();
        assert!(svc.categories.contains(&"all".to_owned()));
        assert!(!svc.accepts_api_version("apps/v1"));
    }
}
