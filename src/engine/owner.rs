//! Who owns a DaemonSet's spec: the GitOps or packaging tool that applied it,
//! read from the object itself — the well-known labels and annotations those
//! tools stamp, and the field managers recorded in `metadata.managedFields` —
//! plus which manager last set a given spec field and when (to notice a
//! GitOps controller reverting what rollcall changed).
//!
//! Keys, as the tools write them (from their own sources):
//! - Argo CD: annotation `argocd.argoproj.io/tracking-id`
//!   (`<app>:<group>/<Kind>:<namespace>/<name>`; `<app>` is `<ns>_<app>` for
//!   apps outside Argo's namespace), or label tracking with
//!   `app.kubernetes.io/instance` / `argocd.argoproj.io/instance`; field
//!   manager `argocd-controller` (its server-side-apply manager).
//! - Flux: labels `kustomize.toolkit.fluxcd.io/name|namespace` and
//!   `helm.toolkit.fluxcd.io/name|namespace`; managers `kustomize-controller`,
//!   `helm-controller`.
//! - Rancher Fleet: annotation `objectset.rio.cattle.io/id` (and the
//!   `objectset.rio.cattle.io/hash` label); manager `fleet-agent`.
//! - Helm: annotations `meta.helm.sh/release-name|namespace`, label
//!   `app.kubernetes.io/managed-by: Helm`; manager `Helm` or `helm`.
//! - `kubectl apply`: manager `kubectl-client-side-apply` or `kubectl` (apply).
//!
//! Pure: metadata in, a value out; no clock, no I/O.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::ObjectMeta;

/// Argo CD's tracking annotation.
pub const ARGO_TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
/// Argo CD's default label for label-based tracking.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// The label many Argo CD installs configure instead of the default.
pub const ARGO_INSTANCE_LABEL: &str = "argocd.argoproj.io/instance";
/// Flux kustomize-controller's labels.
pub const FLUX_KUSTOMIZE_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
/// Flux kustomize-controller's labels.
pub const FLUX_KUSTOMIZE_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
/// Flux helm-controller's labels.
pub const FLUX_HELM_NAME: &str = "helm.toolkit.fluxcd.io/name";
/// Flux helm-controller's labels.
pub const FLUX_HELM_NAMESPACE: &str = "helm.toolkit.fluxcd.io/namespace";
/// Rancher Fleet's (wrangler apply's) object-set id annotation.
pub const FLEET_OBJECTSET_ID: &str = "objectset.rio.cattle.io/id";
/// Rancher Fleet's (wrangler apply's) object-set hash label.
pub const FLEET_OBJECTSET_HASH: &str = "objectset.rio.cattle.io/hash";
/// Helm's release annotations.
pub const HELM_RELEASE_NAME: &str = "meta.helm.sh/release-name";
/// Helm's release annotations.
pub const HELM_RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
/// The recommended `managed-by` label (`Helm` for Helm).
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The tool that owns a spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Tool {
    /// Argo CD (an Application).
    ArgoCd,
    /// Flux (a Kustomization or a HelmRelease).
    Flux,
    /// Rancher Fleet (a Bundle).
    Fleet,
    /// Helm (a release), without a GitOps controller seen on top.
    Helm,
    /// `kubectl apply`.
    KubectlApply,
}

impl Tool {
    /// The product name.
    pub fn label(self) -> &'static str {
        match self {
            Tool::ArgoCd => "Argo CD",
            Tool::Flux => "Flux",
            Tool::Fleet => "Fleet",
            Tool::Helm => "Helm",
            Tool::KubectlApply => "kubectl apply",
        }
    }

    /// What the tool calls the unit that owns the object.
    fn unit(self) -> &'static str {
        match self {
            Tool::ArgoCd => "app",
            Tool::Fleet => "bundle",
            Tool::Helm => "release",
            Tool::Flux | Tool::KubectlApply => "",
        }
    }

    /// Whether the tool reconciles continuously and so puts a changed spec
    /// back by itself (Argo CD with self-heal, Flux, Fleet).
    pub fn reconciles(self) -> bool {
        matches!(self, Tool::ArgoCd | Tool::Flux | Tool::Fleet)
    }

    fn of_manager(manager: &str) -> Option<Tool> {
        match manager {
            "argocd-controller" | "argocd-application-controller" => Some(Tool::ArgoCd),
            "kustomize-controller" | "helm-controller" => Some(Tool::Flux),
            "fleet-agent" => Some(Tool::Fleet),
            "Helm" | "helm" => Some(Tool::Helm),
            "kubectl-client-side-apply" => Some(Tool::KubectlApply),
            _ => None,
        }
    }
}

/// Who owns a DaemonSet's spec, with the marks that say so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecOwner {
    /// The tool.
    pub tool: Tool,
    /// The Argo CD app, Flux Kustomization/HelmRelease (`ns/name`), Fleet
    /// object set or Helm release, when the marks name one.
    pub name: Option<String>,
    /// The field manager the tool writes as, when one was seen.
    pub manager: Option<String>,
    /// Each mark found, in words (`annotation argocd.argoproj.io/tracking-id=...`).
    pub evidence: Vec<String>,
}

impl SpecOwner {
    /// `Argo CD app guestbook`, `Flux Kustomization flux-system/apps`, `Helm release x`.
    pub fn describe(&self) -> String {
        let unit = match (self.tool, &self.name) {
            (Tool::Flux, Some(_)) if self.evidence.iter().any(|e| e.contains("helm.toolkit")) => {
                "HelmRelease"
            }
            (Tool::Flux, Some(_)) => "Kustomization",
            (tool, _) => tool.unit(),
        };
        match &self.name {
            Some(name) if !unit.is_empty() => format!("{} {unit} {name}", self.tool.label()),
            Some(name) => format!("{} {name}", self.tool.label()),
            None => self.tool.label().to_owned(),
        }
    }
}

/// Reads the owner of `meta`'s object's spec. A GitOps controller found on
/// top of Helm wins (Argo CD, Flux and Fleet often render through Helm);
/// `None` when no mark is found.
pub fn spec_owner(meta: &ObjectMeta) -> Option<SpecOwner> {
    let empty = BTreeMap::new();
    let labels = meta.labels.as_ref().unwrap_or(&empty);
    let annotations = meta.annotations.as_ref().unwrap_or(&empty);
    let mut found: Vec<SpecOwner> = Vec::new();
    let mut note = |tool: Tool, name: Option<String>, evidence: String| {
        note_mark(&mut found, tool, name, evidence);
    };
    let ann = |key: &str| annotations.get(key).filter(|v| !v.is_empty());
    let label = |key: &str| labels.get(key).filter(|v| !v.is_empty());
    if let Some(id) = ann(ARGO_TRACKING_ID) {
        let app = id.split(':').next().unwrap_or_default();
        let app = (!app.is_empty()).then(|| app.to_owned());
        note(
            Tool::ArgoCd,
            app,
            format!("annotation {ARGO_TRACKING_ID}={id}"),
        );
    }
    if let Some(app) = label(ARGO_INSTANCE_LABEL) {
        note(
            Tool::ArgoCd,
            Some(app.clone()),
            format!("label {ARGO_INSTANCE_LABEL}={app}"),
        );
    }
    for (name_key, ns_key) in [
        (FLUX_KUSTOMIZE_NAME, FLUX_KUSTOMIZE_NAMESPACE),
        (FLUX_HELM_NAME, FLUX_HELM_NAMESPACE),
    ] {
        if let Some(name) = label(name_key) {
            let qualified = label(ns_key).map_or_else(|| name.clone(), |ns| format!("{ns}/{name}"));
            note(
                Tool::Flux,
                Some(qualified),
                format!("label {name_key}={name}"),
            );
        }
    }
    if let Some(id) = ann(FLEET_OBJECTSET_ID) {
        note(
            Tool::Fleet,
            Some(id.clone()),
            format!("annotation {FLEET_OBJECTSET_ID}={id}"),
        );
    } else if let Some(hash) = label(FLEET_OBJECTSET_HASH) {
        note(
            Tool::Fleet,
            None,
            format!("label {FLEET_OBJECTSET_HASH}={hash}"),
        );
    }
    if let Some(release) = ann(HELM_RELEASE_NAME) {
        let qualified = ann(HELM_RELEASE_NAMESPACE)
            .map_or_else(|| release.clone(), |ns| format!("{ns}/{release}"));
        note(
            Tool::Helm,
            Some(qualified),
            format!("annotation {HELM_RELEASE_NAME}={release}"),
        );
    }
    if label(MANAGED_BY_LABEL).is_some_and(|v| v == "Helm") {
        note(Tool::Helm, None, format!("label {MANAGED_BY_LABEL}=Helm"));
    }
    for entry in meta.managed_fields.iter().flatten() {
        let Some(manager) = entry.manager.as_deref() else {
            continue;
        };
        if entry.subresource.as_deref().is_some_and(|s| !s.is_empty())
            || !owns(entry.fields_v1.as_ref().map(|f| &f.0), &["spec"])
        {
            continue;
        }
        if let Some(tool) = Tool::of_manager(manager) {
            note_mark(
                &mut found,
                tool,
                None,
                format!("field manager {manager} owns spec fields"),
            );
            if let Some(owner) = found.iter_mut().find(|o| o.tool == tool) {
                owner.manager.get_or_insert_with(|| manager.to_owned());
            }
        }
    }
    // Argo CD's label tracking uses the common instance label; only trust it
    // to name the app when another Argo CD mark says Argo CD is there.
    if let Some(argo) = found
        .iter_mut()
        .find(|o| o.tool == Tool::ArgoCd && o.name.is_none())
    {
        argo.name = label(INSTANCE_LABEL).cloned();
    }
    found.sort_by_key(|o| o.tool);
    found.into_iter().next()
}

/// Adds a mark to the owner entry of `tool`, creating it.
fn note_mark(found: &mut Vec<SpecOwner>, tool: Tool, name: Option<String>, evidence: String) {
    match found.iter_mut().find(|o| o.tool == tool) {
        Some(owner) => {
            if owner.name.is_none() {
                owner.name = name;
            }
            if !owner.evidence.contains(&evidence) {
                owner.evidence.push(evidence);
            }
        }
        None => found.push(SpecOwner {
            tool,
            name,
            manager: None,
            evidence: vec![evidence],
        }),
    }
}

/// Whether a `fieldsV1` set contains `path` (as `f:` keys), or a field below it.
fn owns(fields: Option<&serde_json::Value>, path: &[&str]) -> bool {
    let Some(mut node) = fields else {
        return false;
    };
    for segment in path {
        match node.get(format!("f:{segment}")) {
            Some(next) => node = next,
            None => return false,
        }
    }
    true
}

/// Who last wrote a field, as the managed fields record it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldWriter {
    /// The field manager.
    pub manager: String,
    /// When its entry was last written.
    pub at: Option<jiff::Timestamp>,
}

/// The manager that most recently wrote a field at `path` or below (by its
/// entry's time) among the main-resource entries, skipping `except` (rollcall's
/// own manager). Ownership moves to the last writer of a value, so the newest
/// entry owning the field is who set what is there now.
pub fn last_writer(meta: &ObjectMeta, path: &[&str], except: &str) -> Option<FieldWriter> {
    meta.managed_fields
        .iter()
        .flatten()
        .filter(|e| e.subresource.as_deref().is_none_or(str::is_empty))
        .filter(|e| e.manager.as_deref().is_some_and(|m| m != except))
        .filter(|e| owns(e.fields_v1.as_ref().map(|f| &f.0), path))
        .max_by_key(|e| e.time.as_ref().map(|t| t.0))
        .map(|e| FieldWriter {
            manager: e.manager.clone().unwrap_or_default(),
            at: e.time.as_ref().map(|t| t.0),
        })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};
    use serde_json::json;

    use super::*;

    fn meta(labels: &[(&str, &str)], annotations: &[(&str, &str)]) -> ObjectMeta {
        let map = |pairs: &[(&str, &str)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            )
        };
        ObjectMeta {
            labels: map(labels),
            annotations: map(annotations),
            ..ObjectMeta::default()
        }
    }

    fn entry(manager: &str, fields: serde_json::Value, second: i64) -> ManagedFieldsEntry {
        ManagedFieldsEntry {
            manager: Some(manager.to_owned()),
            operation: Some("Update".to_owned()),
            fields_type: Some("FieldsV1".to_owned()),
            fields_v1: Some(FieldsV1(fields)),
            time: Some(Time(
                jiff::Timestamp::from_second(1_700_000_000 + second).unwrap(),
            )),
            ..ManagedFieldsEntry::default()
        }
    }

    fn with_managers(mut meta: ObjectMeta, entries: Vec<ManagedFieldsEntry>) -> ObjectMeta {
        meta.managed_fields = Some(entries);
        meta
    }

    #[test]
    #[allow(clippy::too_many_lines, reason = "one table of cases")]
    fn owner_from_marks() {
        type Expected<'a> = Option<(Tool, Option<&'a str>, &'a str)>;
        let spec = json!({"f:spec": {"f:template": {}}});
        let cases: Vec<(&str, ObjectMeta, Expected)> = vec![
            ("nothing", meta(&[], &[]), None),
            (
                "argo tracking id",
                meta(
                    &[],
                    &[(
                        ARGO_TRACKING_ID,
                        "guestbook:apps/DaemonSet:kube-system/agent",
                    )],
                ),
                Some((Tool::ArgoCd, Some("guestbook"), "Argo CD app guestbook")),
            ),
            (
                "argo app in another namespace",
                meta(&[], &[(ARGO_TRACKING_ID, "team-a_web:apps/DaemonSet:a/x")]),
                Some((Tool::ArgoCd, Some("team-a_web"), "Argo CD app team-a_web")),
            ),
            (
                "instance label alone is not argo (helm sets it too)",
                meta(&[(INSTANCE_LABEL, "x")], &[]),
                None,
            ),
            (
                "argo label tracking named by the manager",
                with_managers(
                    meta(&[(INSTANCE_LABEL, "cni")], &[]),
                    vec![entry("argocd-controller", spec.clone(), 0)],
                ),
                Some((Tool::ArgoCd, Some("cni"), "Argo CD app cni")),
            ),
            (
                "flux kustomization",
                meta(
                    &[
                        (FLUX_KUSTOMIZE_NAME, "apps"),
                        (FLUX_KUSTOMIZE_NAMESPACE, "flux-system"),
                    ],
                    &[],
                ),
                Some((
                    Tool::Flux,
                    Some("flux-system/apps"),
                    "Flux Kustomization flux-system/apps",
                )),
            ),
            (
                "flux helmrelease wins over helm",
                meta(
                    &[
                        (FLUX_HELM_NAME, "cilium"),
                        (FLUX_HELM_NAMESPACE, "kube-system"),
                        (MANAGED_BY_LABEL, "Helm"),
                    ],
                    &[(HELM_RELEASE_NAME, "cilium")],
                ),
                Some((
                    Tool::Flux,
                    Some("kube-system/cilium"),
                    "Flux HelmRelease kube-system/cilium",
                )),
            ),
            (
                "fleet over helm",
                meta(
                    &[(MANAGED_BY_LABEL, "Helm")],
                    &[
                        (FLEET_OBJECTSET_ID, "default-mcc-monitoring"),
                        (HELM_RELEASE_NAME, "monitoring"),
                    ],
                ),
                Some((
                    Tool::Fleet,
                    Some("default-mcc-monitoring"),
                    "Fleet bundle default-mcc-monitoring",
                )),
            ),
            (
                "helm release",
                meta(
                    &[(MANAGED_BY_LABEL, "Helm")],
                    &[
                        (HELM_RELEASE_NAME, "fluent-bit"),
                        (HELM_RELEASE_NAMESPACE, "logging"),
                    ],
                ),
                Some((
                    Tool::Helm,
                    Some("logging/fluent-bit"),
                    "Helm release logging/fluent-bit",
                )),
            ),
            (
                "kubectl apply manager",
                with_managers(
                    meta(&[], &[]),
                    vec![entry("kubectl-client-side-apply", spec.clone(), 0)],
                ),
                Some((Tool::KubectlApply, None, "kubectl apply")),
            ),
            (
                "a manager of status only is not an owner",
                with_managers(
                    meta(&[], &[]),
                    vec![entry("helm-controller", json!({"f:status": {}}), 0)],
                ),
                None,
            ),
            (
                "kustomize-controller manager alone",
                with_managers(
                    meta(&[], &[]),
                    vec![entry("kustomize-controller", spec.clone(), 0)],
                ),
                Some((Tool::Flux, None, "Flux")),
            ),
        ];
        for (name, meta, expected) in cases {
            let got = spec_owner(&meta);
            let got = got
                .as_ref()
                .map(|o| (o.tool, o.name.as_deref(), o.describe()));
            let expected = expected.map(|(t, n, d)| (t, n, d.to_owned()));
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn evidence_and_manager_are_kept() {
        let owner = spec_owner(&with_managers(
            meta(&[], &[(ARGO_TRACKING_ID, "a:apps/DaemonSet:ns/x")]),
            vec![entry(
                "argocd-controller",
                json!({"f:spec": {"f:updateStrategy": {}}}),
                0,
            )],
        ))
        .unwrap();
        assert_eq!(owner.manager.as_deref(), Some("argocd-controller"));
        assert_eq!(owner.evidence.len(), 2, "{:?}", owner.evidence);
        assert!(owner.tool.reconciles());
        assert!(!Tool::Helm.reconciles());
    }

    #[test]
    fn last_writer_of_a_field() {
        let strategy = json!({"f:spec": {"f:updateStrategy": {"f:type": {}}}});
        let template = json!({"f:spec": {"f:template": {"f:spec": {}}}});
        let m = with_managers(
            meta(&[], &[]),
            vec![
                entry("argocd-controller", template.clone(), 0),
                entry("rollcall", strategy.clone(), 5),
                entry("kubectl-edit", strategy.clone(), 3),
            ],
        );
        let cases = [
            (
                "newest other than rollcall",
                &["spec", "updateStrategy"][..],
                "rollcall",
                Some(("kubectl-edit", 3)),
            ),
            (
                "rollcall itself when not excluded",
                &["spec", "updateStrategy"][..],
                "",
                Some(("rollcall", 5)),
            ),
            (
                "template",
                &["spec", "template"][..],
                "rollcall",
                Some(("argocd-controller", 0)),
            ),
            ("nobody", &["spec", "minReadySeconds"][..], "rollcall", None),
        ];
        for (name, path, except, expected) in cases {
            let got = last_writer(&m, path, except).map(|w| {
                (
                    w.manager,
                    w.at.map(|t| t.as_second() - 1_700_000_000).unwrap(),
                )
            });
            assert_eq!(got, expected.map(|(m, s)| (m.to_owned(), s)), "{name}");
        }
    }
}
